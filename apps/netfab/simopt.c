/* SPDX-License-Identifier: MIT */
/* The simulator's knobs as options (simopt.h). */
#include "simopt.h"

#include "cmd.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum {
    K_CYC = NF_SIMOPT_BASE,
    K_WARM,
    K_DRAIN,
    K_VCS,
    K_BUF,
    K_PKT,
    K_MSG,
    K_RD,
    K_CD,
    K_LH,
    K_LL,
    K_LG,
    K_SPD,
    K_ITERS,
    K_OBUF,
    K_SHARED,
    K_ADAPT,
    K_BURST,
    K_BIAS,
    K_WHOP,
    K_THRESH,
    K_PROXY,
    K_EXCL
};

static const struct option knobs[] = {
    {"cycles", 1, NULL, K_CYC},       {"warmup", 1, NULL, K_WARM},
    {"drain", 1, NULL, K_DRAIN},      {"vcs", 1, NULL, K_VCS},
    {"buf", 1, NULL, K_BUF},          {"pkt", 1, NULL, K_PKT},
    {"msg", 1, NULL, K_MSG},          {"router-delay", 1, NULL, K_RD},
    {"credit-delay", 1, NULL, K_CD},  {"lat-host", 1, NULL, K_LH},
    {"lat-local", 1, NULL, K_LL},     {"lat-global", 1, NULL, K_LG},
    {"speedup", 1, NULL, K_SPD},      {"alloc-iters", 1, NULL, K_ITERS},
    {"out-buf", 1, NULL, K_OBUF},     {"shared", 1, NULL, K_SHARED},
    {"adaptive", 0, NULL, K_ADAPT},   {"bursty", 0, NULL, K_BURST},
    {"bias", 1, NULL, K_BIAS},        {"w-hop", 1, NULL, K_WHOP},
    {"threshold", 1, NULL, K_THRESH}, {"proxy", 1, NULL, K_PROXY},
    {"exclude-unroutable", 0, NULL, K_EXCL},
};
enum { N_KNOBS = sizeof knobs / sizeof knobs[0] };

void nf_app_sim_knobs_init(nf_app_sim_knobs *k) {
    memset(k, 0, sizeof *k);
    nf_sim_config_defaults(&k->c);
    k->ph = (nf_sim_phase){.warmup = NF_SIM_DEFAULT_WARMUP,
                           .window = NF_SIM_DEFAULT_WINDOW,
                           .drain_max = NF_SIM_DEFAULT_DRAIN};
}

struct option *nf_app_sim_options(const struct option *base, size_t n) {
    struct option *o = calloc(n + N_KNOBS + 1, sizeof *o);
    if (!o) return NULL;
    memcpy(o, base, n * sizeof *o);
    memcpy(o + n, knobs, sizeof knobs);
    return o;
}

int nf_app_number(const char *opt, const char *s, double lo, double hi, double *out) {
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (!*s || *end || errno || !isfinite(v) || v < lo || v > hi) {
        fprintf(stderr, "netfab: %s wants a number from %g to %g, not '%s'\n", opt, lo, hi, s);
        return -1;
    }
    *out = v;
    return 0;
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
        if (nf_app_number(lab[0], buf[0], 0, 1, &a) || nf_app_number(lab[1], buf[1], a, 1, &b) ||
            nf_app_number(lab[2], buf[2], 0, 1, &step))
            return NF_EXIT_USAGE;
        if (step <= 0) {
            fprintf(stderr, "netfab %s: %s wants A:B:STEP with STEP > 0, not '%s'\n", cmd, opt,
                    item);
            return NF_EXIT_USAGE;
        }
    } else {
        if (nf_app_number(opt, item, 0, 1, &a)) return NF_EXIT_USAGE;
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

int nf_app_sim_knob(int code, const char *arg, nf_app_sim_knobs *k) {
    nf_sim_config *c = &k->c;
    double v;
    switch (code) {
#define KNOB(id, name, lo, hi, dst)                                                                \
    case id:                                                                                       \
        if (nf_app_number(name, arg, lo, hi, &v)) return NF_EXIT_USAGE;                            \
        dst = v;                                                                                   \
        return 0;
        KNOB(K_CYC, "--cycles", 1, 1e9, k->ph.window)
        KNOB(K_WARM, "--warmup", 0, 1e9, k->ph.warmup)
        KNOB(K_DRAIN, "--drain", 0, 1e9, k->ph.drain_max)
        KNOB(K_VCS, "--vcs", 1, NF_SIM_MAX_VCS, c->vcs)
        KNOB(K_BUF, "--buf", 1, 65535, c->buf_flits)
        KNOB(K_PKT, "--pkt", 1, 65535, c->pkt_flits)
        KNOB(K_MSG, "--msg", 1, 65535, k->inj.msg_pkts)
        KNOB(K_RD, "--router-delay", 1, 1000, c->router_delay)
        KNOB(K_CD, "--credit-delay", 1, 1000, c->credit_delay)
        KNOB(K_LH, "--lat-host", 1, 255, c->lat_host)
        KNOB(K_LL, "--lat-local", 1, 255, c->lat_local)
        KNOB(K_LG, "--lat-global", 1, 255, c->lat_global)
        KNOB(K_SPD, "--speedup", 0.1, 64, c->speedup)
        KNOB(K_ITERS, "--alloc-iters", 1, 64, c->alloc_iters)
        KNOB(K_OBUF, "--out-buf", 1, 65535, c->out_buf)
        KNOB(K_SHARED, "--shared", 0, 65535, c->shared_flits)
        KNOB(K_BIAS, "--bias", 0.001, 1e12, c->bias)
        KNOB(K_THRESH, "--threshold", 0.001, 1e9, c->threshold)
        KNOB(K_WHOP, "--w-hop", 0, 1e9, c->w_hop)
#undef KNOB
    case K_PROXY:
        if (strcmp(arg, "all") && strcmp(arg, "restricted")) {
            fprintf(stderr, "netfab: --proxy wants all or restricted, not '%s'\n", arg);
            return NF_EXIT_USAGE;
        }
        c->proxy_restricted = !strcmp(arg, "restricted");
        return 0;
    case K_ADAPT: c->adaptive = true; return 0;
    case K_BURST: k->inj.bursty = true; return 0;
    case K_EXCL: c->exclude_unroutable = true; return 0;
    default: return NF_EXIT_USAGE;
    }
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
                               bool exclude) {
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
    if (res->deadlock) json_object_set_new(o, "stuck", json_string(res->stuck));
    return o;
}
