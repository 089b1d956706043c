/* SPDX-License-Identifier: MIT */
/* `netfab sim`: the packet-level simulator on a fabric, one load point or a sweep. */
#define _GNU_SOURCE
#include "cmd.h"
#include "opts.h"
#include "pktlist.h"
#include "progress.h"
#include "rows.h"
#include "simopt.h"
#include "netfab/gen.h"
#include "netfab/hops.h"
#include "netfab/sim.h"

#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The routings and traffic patterns the library has, for --help. */
static void sim_lists(FILE *out) {
    fprintf(out, "routings:");
    for (size_t i = 0; i < nf_sim_routing_count(); i++)
        fprintf(out, "\n  %-10s %s", nf_sim_routing_name(nf_sim_routing_at(i)),
                nf_sim_routing_summary(nf_sim_routing_at(i)));
    fprintf(out, "\ntraffic:");
    for (size_t i = 0; i < nf_sim_traffic_count(); i++)
        fprintf(out, "\n  %-12s %s", nf_sim_traffic_name(nf_sim_traffic_at(i)),
                nf_sim_traffic_summary(nf_sim_traffic_at(i)));
    fprintf(out, "\n"
                 "  With --router-model booksim, --traffic X is bs-X where there is one\n"
                 "  (permutation: bs-randperm). netfab's own patterns differ: they never send\n"
                 "  to the source, their permutation has no fixed point, and tornado shifts the\n"
                 "  endpoint index round one ring of all endpoints, where BookSim2's shifts\n"
                 "  every digit of the node's k-ary n-cube address (numbered dimension 0\n"
                 "  fastest; netfab numbers endpoints row-major).\n\n");
}

/* One CSV row per switch-to-switch channel (each direction) for load point x; node names
 * quoted as CSV wants when they hold a comma or a quote. */
static void write_links(FILE *out, const nf_fabric *f, const nf_sim *s, uint32_t *flits, double x,
                        uint64_t window) {
    nf_sim_link_flits(s, flits);
    for (nf_node n = 0; n < f->n_switches; n++)
        for (unsigned p = 1; p <= f->nports[n]; p++) {
            nf_gport g = nf_port_index(f, n, p);
            nf_node peer = f->peer[g];
            if (peer == NF_NONE || peer >= f->n_switches) continue;
            fprintf(out, "%.4f,", x);
            nf_app_csv_field(out, nf_node_name(f, n));
            fprintf(out, ",%u,", p);
            nf_app_csv_field(out, nf_node_name(f, peer));
            fprintf(out, ",%u,%s,%u,%.6f\n", f->peer_port[g],
                    nf_link_class_name(f->link_cls[f->port_link[g]]), flits[g],
                    (double)flits[g] / (double)window);
        }
}

static void on_progress(void *ud, double f) { nf_progress_set(ud, f); }

/* What netfab sim runs, once its options are checked. */
typedef struct sim_plan {
    const char *topo, *links_path;
    int threads;
    nf_sim_config c;
    nf_sim_phase ph;
    nf_sim_injection inj;
    nf_app_routing *r; /* resolved here, against the fabric, for lft:FILE */
    const nf_sim_traffic *t;
    const nf_app_fail *fail; /* --fail-links, or NULL */
    uint64_t fail_at;        /* --fail-at, or UINT64_MAX */
    uint64_t timeline;       /* --timeline: a window's cycles, or 0 */
    bool json;
    const double *points;
    size_t n_points;
    const nf_sim_packet *pkts; /* --packets: the list, or NULL */
    size_t n_pkts;
    const char *pkt_log; /* --packet-log, or NULL */
} sim_plan;

/* A load point's timeline, kept for the table printed after the results. */
typedef struct sim_tline {
    double load;
    nf_sim_window *w;
    size_t n;
} sim_tline;

/* The windows of a timeline as a JSON array of objects, or NULL when out of memory. */
static json_t *timeline_json(const nf_sim_window *w, size_t n) {
    json_t *arr = json_array();
    for (size_t i = 0; arr && i < n; i++) {
        json_t *o = json_pack(
            "{s:I, s:I, s:f, s:f, s:f, s:f, s:I}", "cycle", (json_int_t)w[i].cycle, "length",
            (json_int_t)w[i].cycles, "offered", w[i].offered, "accepted", w[i].accepted, "lat_mean",
            w[i].lat_mean, "minimal_frac", w[i].minimal_frac, "packets", (json_int_t)w[i].packets);
        if (!o || json_array_append_new(arr, o)) {
            json_decref(arr);
            return NULL;
        }
    }
    return arr;
}

/* The timelines of the load points as tables, after the results (window of `cycles`). */
static void timeline_tables(const sim_tline *tl, size_t n, uint64_t cycles) {
    for (size_t k = 0; k < n; k++) {
        printf("\n# timeline at load %.4f, windows of %llu cycles\n", tl[k].load,
               (unsigned long long)cycles);
        printf("%10s %7s %8s %8s %9s %7s %9s\n", "cycle", "length", "offered", "accepted",
               "lat_mean", "minimal", "packets");
        for (size_t i = 0; i < tl[k].n; i++) {
            const nf_sim_window *w = &tl[k].w[i];
            printf("%10llu %7llu %8.4f %8.4f ", (unsigned long long)w->cycle,
                   (unsigned long long)w->cycles, w->offered, w->accepted);
            if (w->packets)
                printf("%9.2f %7.3f", w->lat_mean, w->minimal_frac);
            else
                printf("%9s %7s", "-", "-");
            printf(" %9llu\n", (unsigned long long)w->packets);
        }
    }
}

/* Builds the fabric and the simulator, runs every load point and prints the results. */
static int sim_run(sim_plan *p) {
    const char *topo = p->topo, *links_path = p->links_path;
    int threads = p->threads;
    const nf_sim_config c = p->c;
    const nf_sim_phase ph = p->ph;
    nf_sim_injection inj = p->inj;
    const nf_app_fail *fail_arg = p->fail;
    uint64_t fail_at = p->fail_at;
    bool json = p->json, exclude = c.exclude_unroutable;
    bool errors = c.ber > 0 || c.switching != NF_SIM_VCT; /* link errors, store-and-forward */
    const double *points = p->points;
    size_t n_points = p->n_points;
    nf_diag d = {{0}, 0, {0}};
    nf_fabric *f;
    nf_hops *h;
    nf_sim *s = NULL;
    int rc = nf_app_fabric(topo, threads, &f, &h);
    if (rc) return rc;
    if ((rc = nf_app_routing_resolve(p->r, f))) {
        nf_hops_free(h);
        nf_fabric_free(f);
        return rc;
    }
    if ((rc = nf_sim_new(f, h, &c, p->r->r, p->t, &s, &d)) ||
        (rc = nf_sim_set_timeline(s, p->timeline)) ||
        (p->pkts && (rc = nf_sim_set_packets(s, p->pkts, p->n_pkts, &d)))) {
        int ex = nf_app_report(rc, &d);
        nf_sim_free(s);
        nf_hops_free(h);
        nf_fabric_free(f);
        return ex;
    }
    unsigned failed = 0; /* after the routing's tables are made, as before an SM reroutes */
    uint8_t *was = fail_arg ? malloc((size_t)f->n_links + 1) : NULL;
    if (fail_arg && was) memcpy(was, f->link_state, f->n_links);
    if (fail_arg &&
        (!was || (rc = nf_app_fail_links("sim", f, fail_arg, c.seed ? c.seed : 1, &failed)))) {
        free(was);
        nf_sim_free(s);
        nf_hops_free(h);
        nf_fabric_free(f);
        return was ? rc : nf_app_report(NF_ENOMEM, NULL);
    }
    /* --fail-at: up again in the fabric, and down in the simulator's copy when that cycle of
     * each run comes (every run starts from the fabric's states, which it never writes) */
    for (nf_link l = 0; fail_at != UINT64_MAX && l < f->n_links; l++)
        if (was[l] != f->link_state[l]) {
            f->link_state[l] = was[l];
            if ((rc = nf_sim_link_at(s, l, fail_at, false))) {
                free(was);
                nf_sim_free(s);
                nf_hops_free(h);
                nf_fabric_free(f);
                return nf_app_report(rc, NULL);
            }
        }
    /* a pair no path joins, from the start or once the links above are down, would wait for
     * ever and end the run as a deadlock */
    uint64_t n_unr;
    char why[512];
    if ((rc = nf_app_sim_unroutable(f, s, exclude, failed > 0, &n_unr, why, sizeof why))) {
        fprintf(stderr, "netfab sim: %s\n", why);
        free(was);
        nf_sim_free(s);
        nf_hops_free(h);
        nf_fabric_free(f);
        return rc;
    }
    if (n_unr && !json)
        printf("# %llu unroutable source/destination pairs excluded\n", (unsigned long long)n_unr);
    FILE *links = NULL;
    uint32_t *lflits = NULL;
    nf__afile links_af;
    if (links_path) {
        links = nf_app_out_open(&links_af, "netfab sim", links_path);
        lflits = malloc(((size_t)f->port_off[f->n_nodes] + 1) * sizeof *lflits);
        if (!links || !lflits) {
            if (links) fprintf(stderr, "netfab sim: cannot write %s: out of memory\n", links_path);
            if (links) nf__afile_abort(&links_af);
            free(lflits);
            free(was);
            nf_sim_free(s);
            nf_hops_free(h);
            nf_fabric_free(f);
            return NF_EXIT_FAIL;
        }
        fprintf(links, "load,switch,port,peer,peer_port,class,flits,util\n");
    }
    json_t *arr = json ? json_array() : NULL;
    if (!json)
        printf("%8s %8s %9s %9s %6s %7s %9s %5s %9s%s%s\n", "offered", "accepted", "lat_mean",
               "lat_p99", "hops", "minimal", "util_max", "sat", "wall_s",
               exclude ? "  excluded" : "", errors ? "   corrupt    wasted    saf" : "");
    int ex = NF_EXIT_OK;
    sim_tline *tls = p->timeline && !json ? calloc(n_points, sizeof *tls) : NULL;
    size_t n_tls = 0;
    if (p->timeline && !json && !tls) ex = nf_app_report(NF_ENOMEM, NULL);
    for (size_t pi = 0; !ex && pi < n_points; pi++) {
        double x = points[pi];
        inj.load = x;
        nf_sim_result res;
        char what[64];
        snprintf(what, sizeof what, "netfab sim: load %.3f", x);
        nf_progress bar;
        nf_progress_begin(&bar, what);
        rc = nf_sim_run(s, &inj, &ph, on_progress, &bar, &res);
        nf_progress_end(&bar);
        if (rc) {
            ex = nf_app_report(rc, NULL);
            break;
        }
        const nf_sim_window *tw;
        size_t n_tw = nf_sim_timeline(s, &tw);
        if (json) {
            /* the classes with a new pattern or pre-awareness, so other runs' keys stay */
            bool classes =
                strcmp(nf_sim_traffic_name(p->t), "hotspot-set") == 0 ||
                (p->c.preaware_cycles && strcmp(nf_sim_traffic_name(p->t), "hotspot") == 0);
            json_t *o = nf_app_sim_result_json(x, &res, failed, exclude, errors, classes);
            json_t *ta = o && p->timeline ? timeline_json(tw, n_tw) : NULL;
            if (!o || (p->timeline && !ta)) {
                json_decref(o);
                ex = nf_app_report(NF_ENOMEM, NULL);
                break;
            }
            if (ta) json_object_set_new(o, "timeline", ta);
            json_array_append_new(arr, o);
        } else {
            if (tls) { /* a copy: the next run replaces the simulator's */
                tls[n_tls] = (sim_tline){.load = x, .w = malloc((n_tw + 1) * sizeof *tw)};
                if (!tls[n_tls].w) {
                    ex = nf_app_report(NF_ENOMEM, NULL);
                    break;
                }
                if (n_tw) memcpy(tls[n_tls].w, tw, n_tw * sizeof *tw);
                tls[n_tls++].n = n_tw;
            }
            printf("%8.4f %8.4f ", res.offered, res.accepted);
            if (res.packets) /* no packet measured (load 0): no latency, hops or share */
                printf("%9.2f %9.0f %6.2f %7.3f", res.lat_mean, res.lat_p99, res.hops_mean,
                       res.minimal_frac);
            else
                printf("%9s %9s %6s %7s", "-", "-", "-", "-");
            printf(" %9.3f %5s %9.3f", res.link_util_max,
                   res.deadlock    ? "DEAD"
                   : res.saturated ? "yes"
                                   : "no",
                   res.wall_s);
            if (exclude) printf(" %9llu", (unsigned long long)res.excluded_msgs);
            if (errors)
                printf(" %9llu %9llu %6.3f", (unsigned long long)res.corrupt_pkts,
                       (unsigned long long)res.wasted_flits, res.saf_frac);
            putchar('\n');
            if (res.state_bytes && pi + 1 == n_points)
                printf("# learned tables: %llu bytes at the router that keeps the most (a row "
                       "per destination router would take %llu)\n",
                       (unsigned long long)res.state_bytes,
                       (unsigned long long)res.state_bytes_flat);
            fflush(stdout);
        }
        if (res.deadlock)
            fprintf(stderr, "netfab sim: deadlock at load %.3f: no flit moved; stuck: %s\n", x,
                    res.stuck);
        if (links) write_links(links, f, s, lflits, x, ph.window);
        if (p->pkt_log && nf_app_packets_log("sim", p->pkt_log, s, p->pkts, p->n_pkts))
            ex = NF_EXIT_FAIL;
    }
    if (links && ex) /* a failed run leaves the previous file */
        nf__afile_abort(&links_af);
    else if (links && nf_app_out_close(&links_af, "netfab sim", links_path, 0))
        ex = NF_EXIT_FAIL;
    free(lflits);
    free(was);
    if (tls) timeline_tables(tls, n_tls, p->timeline); /* of the points whose rows are out */
    for (size_t k = 0; k < n_tls; k++)
        free(tls[k].w);
    free(tls);
    if (json) {
        json_dumpf(arr, stdout, JSON_INDENT(2));
        putchar('\n');
        json_decref(arr);
    }
    nf_sim_free(s);
    nf_hops_free(h);
    nf_fabric_free(f);
    return ex;
}

int nf_cmd_sim(int argc, char **argv) {
    const char *topo = NULL, *rname = NULL, *tname = NULL, *sweep = NULL, *links_path = NULL;
    const char *pkts_path = NULL, *pkt_log = NULL;
    double load = 0;
    bool json = false, load_given = false, fail_at_given = false;
    uint64_t timeline = 0;
    int threads = 0;
    uint64_t fail_at = 0;
    nf_app_fail fail = {0};
    bool fail_given = false;
    nf_app_sim_knobs k;
    nf_app_sim_knobs_init(&k, "sim");
    nf_opt knobs[NF_APP_SIM_KNOBS];
    size_t n_knobs = nf_app_sim_knob_opts(&k, knobs);
    const nf_opt rows[] = {
        {NF_OPT_TOPO(topo)},
        {.name = "routing",
         .arg = "NAME",
         .kind = NF_OPT_STR,
         NF_OPT_TO(rname),
         .help = "the routing function (routings above)" NF_APP_LFT_HELP},
        {.name = "traffic",
         .arg = "NAME",
         .kind = NF_OPT_STR,
         NF_OPT_TO(tname),
         .help = "the traffic pattern (above)"},
        {.name = "load",
         .arg = "X",
         .kind = NF_OPT_REAL,
         NF_OPT_TO(load),
         .rlo = 0,
         .rhi = 1,
         .given = &load_given,
         .help = "one load point: offered flits per endpoint per cycle, 0 to 1"},
        {.name = "sweep",
         .arg = "A:B:STEP",
         .kind = NF_OPT_STR,
         NF_OPT_TO(sweep),
         .help = "the load points A, A + STEP, ... up to B"},
        {.name = "seed",
         .arg = "S",
         .kind = NF_OPT_SEED,
         NF_OPT_TO(k.c.seed),
         .help = "the seed of the traffic and of --fail-links N (default 0)"},
        {NF_OPT_THREADS(threads, "every processor for fabrics of 64 switches or more, else 1 "
                                 "(the results are the same for any number)")},
        {.name = "links",
         .arg = "FILE",
         .kind = NF_OPT_STR,
         NF_OPT_TO(links_path),
         .help = "write every switch-to-switch channel's flits and utilisation in the window, "
                 "per load point, as CSV (load,switch,port,peer,peer_port,class,flits,util)"},
        {.name = "fail-links",
         .arg = "N|FILE",
         .kind = NF_OPT_CUSTOM,
         NF_OPT_TO(fail),
         .parse = nf_app_fail_arg,
         .given = &fail_given,
         .help = "set N random switch-to-switch links down (--seed), or FILE the links of its "
                 "'NODE PORT' lines (a name or 0xGUID), after the routing has made its tables: "
                 "every routing skips failed ports (the next candidate); ftable's packets with "
                 "no way left are lost at the source (lost_frac)"},
        {.name = "fail-at",
         .arg = "CYCLE",
         .kind = NF_OPT_UINT,
         NF_OPT_TO(fail_at),
         .lo = 0,
         .hi = 1000000000000000ull,
         .given = &fail_at_given,
         .help = "the links fail at that cycle of each run instead; ftable's packets caught "
                 "behind them are discarded where they stand (dropped_pkts)"},
        {.name = "timeline",
         .arg = "CYCLES",
         .kind = NF_OPT_UINT,
         NF_OPT_TO(timeline),
         .lo = 1,
         .hi = 1000000000,
         .help = "after the results, each load point's timeline: per window of CYCLES cycles "
                 "over the whole run (warm-up, window, drain), its length (the last one ends "
                 "with the run, so it may be shorter; rates are over its length), the offered "
                 "and accepted load, the mean latency, the minimal share and the count of the "
                 "packets delivered in it (--json: a \"timeline\" array in each point's "
                 "object)"},
        {.name = "packets",
         .arg = "FILE",
         .kind = NF_OPT_STR,
         NF_OPT_TO(pkts_path),
         .help = "run the packets of FILE instead of --traffic and --load: a line 'CYCLE SRC "
                 "DST [VC]' each (endpoints from 0; the VC its NIC starts it on, -1 or none: "
                 "--inject-vc's), in order of CYCLE, '#' a comment; one packet each, measured "
                 "when CYCLE is in the window (--warmup 0 --cycles past the last one: all)"},
        {.name = "packet-log",
         .arg = "FILE",
         .kind = NF_OPT_STR,
         NF_OPT_TO(pkt_log),
         .help = "with --packets: write 'CYCLE SRC DST ARRIVED LATENCY' for each of them, in "
                 "its order (-1 -1: it did not arrive in the run)"},
        {.name = "json",
         .kind = NF_OPT_FLAG,
         NF_OPT_TO(json),
         .help = "an array of one object per load point"},
    };
    const nf_cmd_spec spec = {
        .name = "sim",
        .synopsis =
            "netfab sim --topo SPEC --routing NAME|lft:FILE --traffic NAME\n"
            "                  (--load X | --sweep A:B:STEP)\n"
            "                  [--cycles N] [--warmup N] [--drain N] [--vcs V] [--buf FLITS]\n"
            "                  [--pkt FLITS] [--msg PKTS] [--router-delay C] [--credit-delay C]\n"
            "                  [--lat-host C] [--lat-local C] [--lat-global C] [--speedup S]\n"
            "                  [--alloc-iters N] [--out-buf FLITS] [--shared FLITS] [--adaptive]\n"
            "                  [--bursty] [--seed S] [--threads N] [--links FILE]\n"
            "                  [--fail-links N|FILE [--fail-at CYCLE]]\n"
            "                  [--bias B] [--w-hop FLITS] [--threshold FLITS]\n"
            "                  [--proxy all|restricted|qvl|qvr|qvd|qvp|qvq] [--exclude-unroutable]\n"
            "                  [--ber RATE] [--switching vct|saf|dynamic] [--saf-errors N]\n"
            "                  [--saf-window C] [--timeline CYCLES] [--json]\n"
            "                  [--router-model netfab|booksim] [--nic-delay C]\n"
            "       netfab sim --topo SPEC --routing NAME --packets FILE [--packet-log FILE] ...\n",
        .description =
            "Simulates flits through input-queued routers (virtual channels, credits, virtual\n"
            "cut-through, separable allocation) and prints, per load point: offered and accepted\n"
            "load (flits per endpoint per cycle; 1.0 = full injection bandwidth), mean and p99\n"
            "packet latency (cycles), mean hops, the share of minimal routes, saturation.\n",
        .more = sim_lists,
        .group = {{"options", rows, sizeof rows / sizeof rows[0]},
                  {"simulator options", knobs, n_knobs}},
        .notes =
            "Source/destination pairs with no path (a fabric not connected, or parted by the\n"
            "failed links, from the start or at --fail-at) are refused (exit 2); with\n"
            "--exclude-unroutable their messages are skipped (counted: excluded), from the\n"
            "--fail-at cycle on for the pairs the failure parts; packets already on their way\n"
            "then wait. ftable drops its lost packets instead (lost_frac), so for it only a\n"
            "fabric not connected to begin with is refused.\n"
            "With --ber, a packet corrupt on a switch-to-switch link is discarded by its\n"
            "receiver and sent again over that link (link-level retry); with --ber or\n"
            "--switching the output adds corrupt_pkts, wasted_flits (corrupt copies carried\n"
            "on by cut-through) and saf_frac (packets stored whole before going on).\n",
        .examples = "  netfab sim --topo dragonfly:a=4,p=2,h=2 --routing dfmin --traffic uniform "
                    "--sweep 0.1:0.9:0.1\n"
                    "  netfab sim --topo torus:8x8,c=1 --routing dor --traffic tornado --load 0.3 "
                    "--json\n"};
    int argi, ex = nf_opt_parse(&spec, argc, argv, &argi);
    nf_app_sim_knobs_finish(&k);
    if (threads) /* --threads, else a --settings file's (the most a command takes) */
        k.c.threads = (unsigned)threads;
    else
        threads = k.c.threads > NF_APP_MAX_THREADS ? NF_APP_MAX_THREADS : (int)k.c.threads;
    if (!ex && k.show) ex = nf_app_sim_settings_print(&k, json);
    if (ex || k.show) {
        nf_app_fail_fini(&fail);
        return ex == NF_OPT_HELP ? NF_EXIT_OK : ex;
    }
    /* validation, all before the fabric is built */
    nf_app_routing r = {0};
    const nf_sim_traffic *t = NULL;
    const char *need[] = {"--topo SPEC", "--routing NAME", "--traffic NAME",
                          "--load L (or --sweep A:B:STEP)"};
    bool have[] = {topo, rname, tname || pkts_path, load_given || sweep || pkts_path};
    if ((ex = nf_app_require("sim", 4, need, have)))
        ;
    else if (load_given && sweep)
        ex = nf_opt_usage("sim", "--load or --sweep, not both");
    else if (pkts_path && (tname || load_given || sweep))
        ex = nf_opt_usage("sim", "--packets replaces --traffic, --load and --sweep");
    else if (pkt_log && !pkts_path)
        ex = nf_opt_usage("sim", "--packet-log needs --packets");
    else if ((ex = nf_app_routing_parse("sim", rname, &r)))
        ;
    else if (!(t = nf_app_sim_traffic(&k, tname ? tname : "uniform"))) {
        char known[512];
        ex = nf_opt_usage("sim", "unknown traffic '%s' (%s)", tname,
                          nf_app_known(NF_APP_TRAFFICS, known, sizeof known));
    } else if (fail_at_given && !fail_given)
        ex = nf_opt_usage("sim", "--fail-at needs --fail-links");
    /* the load points: --load, or --sweep's A + j STEP, as netfab sweep makes them */
    double points[NF_APP_MAX_LOAD_POINTS], *pts = NULL;
    size_t n_points = 0;
    if (!ex && sweep) ex = nf_app_load_points("sim", "--sweep", sweep, true, &pts, &n_points);
    nf_sim_packet *list = NULL;
    size_t n_list = 0;
    if (!ex && pkts_path) ex = nf_app_packets_read("sim", pkts_path, &list, &n_list);
    if (ex) {
        free(pts);
        nf_app_fail_fini(&fail);
        return ex;
    }
    if (sweep)
        memcpy(points, pts, n_points * sizeof *points);
    else
        points[n_points++] = load;
    free(pts);
    sim_plan plan = {.topo = topo,
                     .links_path = links_path,
                     .threads = threads,
                     .c = k.c,
                     .ph = k.ph,
                     .inj = k.inj,
                     .r = &r,
                     .t = t,
                     .fail = fail_given ? &fail : NULL,
                     .fail_at = fail_at_given ? fail_at : UINT64_MAX,
                     .timeline = timeline,
                     .json = json,
                     .points = points,
                     .n_points = n_points,
                     .pkts = list,
                     .n_pkts = n_list,
                     .pkt_log = pkt_log};
    plan.c.threads = (unsigned)threads;
    ex = sim_run(&plan);
    free(list);
    nf_app_routing_fini(&r);
    nf_app_fail_fini(&fail);
    return ex;
}
