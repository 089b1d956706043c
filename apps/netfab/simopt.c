/* SPDX-License-Identifier: MIT */
/* The simulator's knobs as options (simopt.h). */
#include "simopt.h"

#include "cmd.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void nf_app_sim_knobs_init(nf_app_sim_knobs *k) {
    memset(k, 0, sizeof *k);
    nf_sim_config_defaults(&k->c);
    k->ph = (nf_sim_phase){.warmup = NF_SIM_DEFAULT_WARMUP,
                           .window = NF_SIM_DEFAULT_WINDOW,
                           .drain_max = NF_SIM_DEFAULT_DRAIN};
}

/* Reads a load-point number from lo to hi for lab into *out: 0, or NF_EXIT_USAGE after saying
 * why. */
static int load_number(const char *cmd, const char *lab, const char *s, double lo, double hi,
                       double *out) {
    char want[96];
    if (nf_app_real(s, false, out) == 0 && *out >= lo && *out <= hi) return 0;
    nf_opt_real_want(lo, hi, 0, want, sizeof want);
    return nf_opt_bad(cmd, lab, want, s);
}

int nf_app_load_points(const char *cmd, const char *opt, const char *item, bool range,
                       double **loads, size_t *n) {
    double a, b, step = 1;
    const char *c1 = strchr(item, ':'), *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
    char buf[3][64];
    if (c1 || range) {
        size_t l0 = c1 ? (size_t)(c1 - item) : 0, l1 = c2 ? (size_t)(c2 - c1 - 1) : 0;
        if (!c1 || !c2 || strchr(c2 + 1, ':') || l0 >= sizeof buf[0] || l1 >= sizeof buf[1] ||
            strlen(c2 + 1) >= sizeof buf[2]) {
            fprintf(stderr, "netfab %s: %s wants A:B:STEP, not '%s'\n", cmd, opt, item);
            return NF_EXIT_USAGE;
        }
        memcpy(buf[0], item, l0);
        buf[0][l0] = '\0';
        memcpy(buf[1], c1 + 1, l1);
        buf[1][l1] = '\0';
        strcpy(buf[2], c2 + 1);
        char lab[3][80];
        snprintf(lab[0], sizeof lab[0], "%s (range start)", opt);
        snprintf(lab[1], sizeof lab[1], "%s (range end)", opt);
        snprintf(lab[2], sizeof lab[2], "%s (range step)", opt);
        if (load_number(cmd, lab[0], buf[0], 0, 1, &a) ||
            load_number(cmd, lab[1], buf[1], a, 1, &b) ||
            load_number(cmd, lab[2], buf[2], 0, 1, &step))
            return NF_EXIT_USAGE;
        if (step <= 0) {
            fprintf(stderr, "netfab %s: %s wants A:B:STEP with STEP > 0, not '%s'\n", cmd, opt,
                    item);
            return NF_EXIT_USAGE;
        }
    } else {
        if (load_number(cmd, opt, item, 0, 1, &a)) return NF_EXIT_USAGE;
        b = a;
    }
    double n_points = floor((b - a) / step + 1e-9) + 1;
    if (n_points + (double)*n > NF_APP_MAX_LOAD_POINTS) {
        fprintf(stderr, "netfab %s: %s %s is %.0f load points, more than %d\n", cmd, opt, item,
                n_points + (double)*n, NF_APP_MAX_LOAD_POINTS);
        return NF_EXIT_USAGE;
    }
    for (size_t j = 0; j < (size_t)n_points; j++) {
        double *v = realloc(*loads, (*n + 1) * sizeof *v);
        if (!v) {
            fprintf(stderr, "netfab %s: out of memory\n", cmd);
            return NF_EXIT_FAIL;
        }
        *loads = v;
        char text[32];
        snprintf(text, sizeof text, "%.12g", a + (double)j * step);
        double x = strtod(text, NULL);
        (*loads)[(*n)++] = x > b ? b : x; /* never past B, whatever the rounding did */
    }
    return NF_EXIT_OK;
}

/* The knobs' help texts that quote a default, made from the library's defaults
 * (nf_sim_config_defaults) the first time they are asked for. */
static struct {
    char vcs[96], buf[64], pkt[48], rd[96], cd[96], lh[64], ll[64], lg[64], spd[96], iters[64],
        shared[128], whop[96];
} help;

static void help_texts(void) {
    nf_sim_config d;
    nf_sim_config_defaults(&d);
#define H(f, ...) snprintf(help.f, sizeof help.f, __VA_ARGS__)
    H(vcs, "virtual channels per port (default %u); val and ugal-* need 3, par 4", d.vcs);
    H(buf, "input buffer per VC (default %u flits)", d.buf_flits);
    H(pkt, "flits per packet (default %u)", d.pkt_flits);
    H(rd, "cycles from a head flit's arrival to its switch traversal (default %u)", d.router_delay);
    H(cd, "cycles before a freed slot's credit leaves for upstream (default %u)", d.credit_delay);
    H(lh, "latency of host links, cycles (default %u)", d.lat_host);
    H(ll, "latency of local links, cycles (default %u)", d.lat_local);
    H(lg, "latency of global links, cycles (default %u)", d.lat_global);
    H(spd, "internal speedup: crossbar flits per cycle per port (default %.1f)", d.speedup);
    H(iters, "switch allocator iterations (default %u)", d.alloc_iters);
    H(shared, "a pool per input port its VCs share when their own buffers are full (default %u)",
      d.shared_flits);
    H(whop, "UGAL: the cost of a hop in flits of queue (default %g; 0: hops cost nothing)",
      d.w_hop);
#undef H
}

static const char *const proxies[] = {"all", "restricted", NULL};
static const char *const switchings[] = {"vct", "saf", "dynamic", NULL};
static const char *const vc_allocs[] = {"combined", "separate", NULL};
static const char *const inject_vcs[] = {"room", "random", "rr", "routing", NULL};
static const char *const eject_vcs[] = {"any", "arrival", "routing", NULL};
static const char *const router_models[] = {"netfab", "booksim", NULL};

void nf_app_sim_knobs_finish(nf_app_sim_knobs *k) {
    const bool *g = k->model_given;
    for (unsigned i = 0; i < NF_APP_MG_N; i++)
        k->given |= g[i];
    if (k->model != NF_APP_MODEL_BOOKSIM) return;
    /* BookSim2's input-queued router without speculation, at routing_delay 0 (lookahead),
     * vc_alloc_delay 1, sw_alloc_delay 1, st_final_delay 1, credit_delay 2; its injected flits
     * reach the router a cycle later than a link's (nic-delay 1) */
    if (!g[NF_APP_MG_VC_ALLOC]) k->c.vc_alloc = NF_SIM_VA_SEPARATE;
    if (!g[NF_APP_MG_INJECT_VC]) k->c.inject_vc = NF_SIM_INJ_ROUTING;
    if (!g[NF_APP_MG_EJECT_VC]) k->c.eject_vc = NF_SIM_EJ_ROUTING;
    if (!g[NF_APP_MG_ALLOC_ITERS]) k->c.alloc_iters = 1;
    if (!g[NF_APP_MG_ROUTER_DELAY]) k->c.router_delay = 2;
    if (!g[NF_APP_MG_CREDIT_DELAY]) k->c.credit_delay = 2;
    if (!g[NF_APP_MG_NIC_DELAY]) k->c.nic_delay = 1;
}

const nf_sim_traffic *nf_app_sim_traffic(const nf_app_sim_knobs *k, const char *name) {
    if (k->model == NF_APP_MODEL_BOOKSIM && name && strncmp(name, "bs-", 3) != 0) {
        char bs[64];
        snprintf(bs, sizeof bs, "bs-%s", strcmp(name, "permutation") == 0 ? "randperm" : name);
        const nf_sim_traffic *t = nf_sim_traffic_find(bs);
        if (t) return t;
    }
    return nf_sim_traffic_find(name);
}

size_t nf_app_sim_knob_opts(nf_app_sim_knobs *k, nf_opt *rows) {
    nf_sim_config *c = &k->c;
    help_texts();
#define UINT_ROW(nm, a, var, l, h, text)                                                           \
    {                                                                                              \
        .name = nm, .arg = a, .kind = NF_OPT_UINT, NF_OPT_TO(var), .lo = l, .hi = h,               \
        .given = &k->given, .help = text                                                           \
    }
#define REAL_ROW(nm, a, var, l, h, text)                                                           \
    {                                                                                              \
        .name = nm, .arg = a, .kind = NF_OPT_REAL, NF_OPT_TO(var), .rlo = l, .rhi = h,             \
        .given = &k->given, .help = text                                                           \
    }
#define FLAG_ROW(nm, var, text)                                                                    \
    { .name = nm, .kind = NF_OPT_FLAG, NF_OPT_TO(var), .given = &k->given, .help = text }
    const nf_opt knobs[] = {
        UINT_ROW("cycles", "N", k->ph.window, 1, 1000000000,
                 "cycles measured, after the warm-up (default " NF_STR(NF_SIM_DEFAULT_WINDOW) ")"),
        UINT_ROW("warmup", "N", k->ph.warmup, 0, 1000000000,
                 "cycles before the measurement (default " NF_STR(NF_SIM_DEFAULT_WARMUP) ")"),
        UINT_ROW("drain", "N", k->ph.drain_max, 0, 1000000000,
                 "then at most N cycles for the measured packets to arrive (default " NF_STR(
                     NF_SIM_DEFAULT_DRAIN) ")"),
        UINT_ROW("vcs", "V", c->vcs, 1, NF_SIM_MAX_VCS, help.vcs),
        UINT_ROW("buf", "FLITS", c->buf_flits, 1, NF_SIM_MAX_BUF_FLITS, help.buf),
        UINT_ROW("pkt", "FLITS", c->pkt_flits, 1, 65535, help.pkt),
        UINT_ROW("msg", "PKTS", k->inj.msg_pkts, 1, 65535, "packets per message (default 1)"),
        {.name = "router-delay",
         .arg = "C",
         .kind = NF_OPT_UINT,
         NF_OPT_TO(c->router_delay),
         .lo = 0,
         .hi = 1000,
         .given = &k->model_given[NF_APP_MG_ROUTER_DELAY],
         .help = help.rd},
        {.name = "credit-delay",
         .arg = "C",
         .kind = NF_OPT_UINT,
         NF_OPT_TO(c->credit_delay),
         .lo = 1,
         .hi = 1000,
         .given = &k->model_given[NF_APP_MG_CREDIT_DELAY],
         .help = help.cd},
        {.name = "nic-delay",
         .arg = "C",
         .kind = NF_OPT_UINT,
         NF_OPT_TO(c->nic_delay),
         .lo = 0,
         .hi = 255,
         .given = &k->model_given[NF_APP_MG_NIC_DELAY],
         .help = "cycles a flit spends in its NIC before the host link (default 0)"},
        UINT_ROW("lat-host", "C", c->lat_host, 1, 255, help.lh),
        UINT_ROW("lat-local", "C", c->lat_local, 1, 255, help.ll),
        UINT_ROW("lat-global", "C", c->lat_global, 1, 255, help.lg),
        REAL_ROW("speedup", "S", c->speedup, 0.1, 64, help.spd),
        {.name = "alloc-iters",
         .arg = "N",
         .kind = NF_OPT_UINT,
         NF_OPT_TO(c->alloc_iters),
         .lo = 1,
         .hi = 64,
         .given = &k->model_given[NF_APP_MG_ALLOC_ITERS],
         .help = help.iters},
        UINT_ROW("out-buf", "FLITS", c->out_buf, 1, NF_SIM_MAX_BUF_FLITS * NF_SIM_MAX_VCS,
                 "output queue per port behind the crossbar (default: as --buf)"),
        UINT_ROW("shared", "FLITS", c->shared_flits, 0, NF_SIM_MAX_BUF_FLITS, help.shared),
        FLAG_ROW("adaptive", c->adaptive,
                 "table routings take the candidate port with most credits"),
        FLAG_ROW("bursty", k->inj.bursty,
                 "on/off injection: bursts of 8 packets on average at full rate"),
        REAL_ROW("bias", "B", c->bias, 0.001, 1e12,
                 "ugal-l: minimal when q_min + h_min * w_hop <= bias * (q_val + h_val * w_hop), "
                 "queues in flits (default 2.5, for ugal-g 1)"),
        REAL_ROW("w-hop", "FLITS", c->w_hop, 0, 1e9, help.whop),
        REAL_ROW("threshold", "FLITS", c->threshold, 0.001, 1e9,
                 "ugal-lt: minimal when cost_min <= B * cost_val + threshold, B --bias or 1 "
                 "(default: one VC "
                 "buffer)"),
        {.name = "proxy",
         .kind = NF_OPT_CHOICE,
         NF_OPT_TO(c->proxy_restricted),
         .choices = proxies,
         .given = &k->given,
         .help = "restricted draws the intermediate groups of val and ugal-* among those the "
                 "source router's own global links reach (default all)"},
        REAL_ROW("q-alpha", "A", c->q_alpha, 1e-6, 1,
                 "qadapt: learning rate, the share of an estimate's error corrected at each "
                 "return (default 0.2)"),
        REAL_ROW("q-explore", "P", c->q_explore, 0, 1,
                 "qadapt: the chance a router sends a packet by a random candidate rather than "
                 "its best (default 0.001)"),
        REAL_ROW("q-threshold", "C", c->q_threshold, 0.001, 1e9,
                 "qadapt: the long way only when expected sooner than the minimal one by more "
                 "than C cycles (default: a local hop's, router delay + local latency)"),
        UINT_ROW("q-sample", "K", c->q_sample, 0, 255,
                 "qadapt: the long ways weighed against the minimal one, K drawn at random per "
                 "packet, 0 all (default 1)"),
        REAL_ROW("q-bias", "B", c->q_bias, 1, 100,
                 "qadapt: the long way only when B x its estimate + the threshold is below the "
                 "minimal way's (default 1)"),
        REAL_ROW("q-local", "W", c->q_local, 0, 1000,
                 "qadapt: add W cycles per flit waiting at a candidate's port now to its "
                 "estimate; 0 the estimate alone (default 1)"),
        REAL_ROW("ber", "RATE", c->ber, 0, 1,
                 "bit error rate of every switch-to-switch link: a corrupt packet is sent again "
                 "over its link (default 0)"),
        {.name = "router-model",
         .kind = NF_OPT_CHOICE,
         NF_OPT_TO(k->model),
         .choices = router_models,
         .given = &k->given,
         .help = "netfab (the default router) or booksim: BookSim2's iq_router without "
                 "speculation, which sets what is not given of " NF_APP_BOOKSIM_MODEL
                 " (and --routing dor-bs is its torus routing)"},
        {.name = "vc-alloc",
         .kind = NF_OPT_CHOICE,
         NF_OPT_TO(c->vc_alloc),
         .choices = vc_allocs,
         .given = &k->model_given[NF_APP_MG_VC_ALLOC],
         .help = "combined: a head gets its output VC in the pass it asks for the switch; "
                 "separate (BookSim2's router): VC allocation is a pass of its own, and a VC "
                 "starts its next packet no earlier than the pass after a tail left (default "
                 "combined)"},
        {.name = "inject-vc",
         .kind = NF_OPT_CHOICE,
         NF_OPT_TO(c->inject_vc),
         .choices = inject_vcs,
         .given = &k->model_given[NF_APP_MG_INJECT_VC],
         .help = "the VC a NIC starts a packet on: room (the routing's injection VC with most "
                 "room), random (any VC, drawn at each try), or rr (BookSim2's: from the one after "
                 "the last, the first free VC with a slot), or routing (BookSim2's: random for the "
                 "Dragonfly routings, rr for the others; default room)"},
        {.name = "eject-vc",
         .kind = NF_OPT_CHOICE,
         NF_OPT_TO(c->eject_vc),
         .choices = eject_vcs,
         .given = &k->model_given[NF_APP_MG_EJECT_VC],
         .help = "the VC a packet leaves its last switch on: any, or arrival (BookSim2's "
                 "Dragonfly routings: the VC it came in on), or routing (BookSim2's: arrival for "
                 "the Dragonfly routings, any for the others; default any)"},
        {.name = "switching",
         .kind = NF_OPT_CHOICE,
         NF_OPT_TO(c->switching),
         .choices = switchings,
         .given = &k->given,
         .help = "how routers forward packets from other routers: vct (cut-through), saf "
                 "(store-and-forward), dynamic (per link, saf while its recent errors are many; "
                 "default vct)"},
        REAL_ROW("saf-errors", "N", c->saf_errors, 0.001, 1e9,
                 "dynamic switching: a link stores and forwards from N recent errors, cuts "
                 "through again below N/2 (default 2)"),
        UINT_ROW("saf-window", "C", c->saf_window, 1, 1000000000,
                 "dynamic switching: an error weighs e^(-age/C) (default 1000 cycles)"),
        FLAG_ROW("exclude-unroutable", c->exclude_unroutable,
                 "skip the messages of source/destination pairs that no path joins, and count "
                 "them (excluded_msgs)"),
        /* congestion pre-awareness (the Sunway router) */
        UINT_ROW("preaware", "T", c->preaware_cycles, 0, 100000,
                 "congestion pre-awareness: each output port averages the credits it gets back "
                 "per cycle over about T cycles; --adaptive adds the credits expected back within "
                 "T cycles to a candidate's room, two-rail NICs take the rail expected to be "
                 "emptier, and NICs throttle a rail whose rate has collapsed (default 0: off)"),
        REAL_ROW("preaware-throttle", "F", c->preaware_throttle, 0, 1,
                 "with --preaware: a NIC rail getting credits back at under F per cycle while "
                 "its switch holds half a VC buffer of its flits sends at r x r / F; 0: no "
                 "throttle (default 0.5)"),
    };
#undef UINT_ROW
#undef REAL_ROW
#undef FLAG_ROW
    _Static_assert(sizeof knobs / sizeof knobs[0] == NF_APP_SIM_KNOBS, "the knobs' count");
    memcpy(rows, knobs, sizeof knobs);
    return NF_APP_SIM_KNOBS;
}

int nf_app_sim_unroutable(const nf_fabric *f, const nf_sim *s, bool exclude, bool failed,
                          uint64_t *pairs, char *msg, size_t cap) {
    nf_node src, dst;
    int rc = nf_sim_unroutable_pairs(s, pairs, &src, &dst);
    if (rc) {
        snprintf(msg, cap, "%s", nf_strerror(rc));
        return NF_EXIT_FAIL;
    }
    if (!*pairs || exclude) return NF_EXIT_OK;
    snprintf(msg, cap,
             "%llu source/destination pairs have no path between them (the fabric is not "
             "connected%s), e.g. \"%s\" -> \"%s\"; --exclude-unroutable skips them",
             (unsigned long long)*pairs, failed ? " once the failed links are down" : "",
             nf_node_name(f, src), nf_node_name(f, dst));
    return NF_EXIT_USAGE;
}

json_t *nf_app_sim_result_json(double load, const nf_sim_result *res, unsigned failed_links,
                               bool exclude, bool errors, bool classes) {
    json_t *o = json_pack(
        "{s:f, s:f, s:f, s:f, s:f, s:f, s:f, s:f, s:f, s:f, s:f, s:b, s:b, s:I, "
        "s:I, s:I, s:f}",
        "load", load, "offered", res->offered, "accepted", res->accepted, "lat_mean", res->lat_mean,
        "lat_p99", res->lat_p99, "msg_lat_mean", res->msg_lat_mean, "net_lat_mean",
        res->net_lat_mean, "hops_mean", res->hops_mean, "minimal_frac", res->minimal_frac,
        "link_util_mean", res->link_util_mean, "link_util_max", res->link_util_max, "saturated",
        res->saturated, "deadlock", res->deadlock, "packets", (json_int_t)res->packets, "cycles",
        (json_int_t)res->cycles, "flit_hops", (json_int_t)res->flit_hops, "wall_s", res->wall_s);
    if (!o) return NULL;
    json_object_set_new(o, "unroutable", json_integer((json_int_t)res->unroutable));
    json_object_set_new(o, "failed_links", json_integer((json_int_t)failed_links));
    json_object_set_new(o, "lost_frac", json_real(res->lost_frac));
    json_object_set_new(o, "dropped_pkts", json_integer((json_int_t)res->dropped_pkts));
    /* only with the option: netfab sweep's CSV columns are these keys */
    if (exclude)
        json_object_set_new(o, "excluded_msgs", json_integer((json_int_t)res->excluded_msgs));
    if (errors) { /* link errors or store-and-forward */
        json_object_set_new(o, "corrupt_pkts", json_integer((json_int_t)res->corrupt_pkts));
        json_object_set_new(o, "wasted_flits", json_integer((json_int_t)res->wasted_flits));
        json_object_set_new(o, "saf_frac", json_real(res->saf_frac));
    }
    if (classes) { /* traffic with a hot endpoint: the background and the hot endpoint apart */
        json_object_set_new(o, "bg_lat_mean", json_real(res->bg_lat_mean));
        json_object_set_new(o, "bg_lat_p99", json_real(res->bg_lat_p99));
        json_object_set_new(o, "hot_accepted", json_real(res->hot_accepted));
    }
    if (res->deadlock) json_object_set_new(o, "stuck", json_string(res->stuck));
    if (res->state_bytes) { /* a learning routing's tables */
        json_object_set_new(o, "state_bytes", json_integer((json_int_t)res->state_bytes));
        json_object_set_new(o, "state_bytes_flat", json_integer((json_int_t)res->state_bytes_flat));
    }
    return o;
}

int nf_app_routing_parse(const char *cmd, const char *name, nf_app_routing *out) {
    *out = (nf_app_routing){0};
    size_t n = strlen(NF_APP_LFT_PREFIX);
    if (strncmp(name, NF_APP_LFT_PREFIX, n) == 0) {
        if (!name[n]) return nf_opt_usage(cmd, "--routing lft:FILE wants a file name");
        out->lft_path = name + n;
        return NF_EXIT_OK;
    }
    if (!(out->r = nf_sim_routing_find(name))) {
        char known[512];
        return nf_opt_usage(cmd, "unknown routing '%s' (%s; or lft:FILE)", name,
                            nf_app_known(NF_APP_ROUTINGS, known, sizeof known));
    }
    return NF_EXIT_OK;
}

int nf_app_routing_resolve(nf_app_routing *ar, const nf_fabric *f) {
    if (!ar->lft_path) return NF_EXIT_OK;
    nf_diag d = {{0}, 0, {0}};
    int rc = nf_uft_load(f, ar->lft_path, nf_app_warn, NULL, &ar->t, &d);
    nf_app_warn_summary();
    if (!rc) rc = nf_sim_routing_from_uft(ar->t, &ar->own, &d);
    if (rc) {
        if (rc == NF_EINVAL || rc == NF_EPARSE || rc == NF_EIO) {
            if (!d.file[0]) snprintf(d.file, sizeof d.file, "%s", ar->lft_path);
            int ex = nf_app_report(rc == NF_EIO ? NF_EINVAL : rc, &d);
            nf_app_routing_fini(ar);
            return ex;
        }
        nf_app_routing_fini(ar);
        return nf_app_report(rc, &d);
    }
    ar->r = ar->own;
    return NF_EXIT_OK;
}

void nf_app_routing_fini(nf_app_routing *ar) {
    nf_sim_routing_free(ar->own);
    nf_uft_free(ar->t);
    ar->own = NULL;
    ar->t = NULL;
    if (ar->lft_path) ar->r = NULL;
}
