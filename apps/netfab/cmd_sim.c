/* SPDX-License-Identifier: MIT */
/* `netfab sim`: the packet-level simulator on a fabric, one load point or a sweep; and
 * `netfab route --check`: the deadlock checker of a routing function. */
#define _GNU_SOURCE
#include "cmd.h"
#include "progress.h"
#include "simopt.h"
#include "netfab/gen.h"
#include "netfab/hops.h"
#include "netfab/sim.h"

#include <errno.h>
#include <getopt.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void sim_usage(FILE *out) {
    fprintf(out,
            "usage: netfab sim --topo SPEC --routing NAME --traffic NAME (--load X | --sweep "
            "A:B:STEP)\n"
            "                  [--cycles N] [--warmup N] [--drain N] [--vcs V] [--buf FLITS]\n"
            "                  [--pkt FLITS] [--msg PKTS] [--router-delay C] [--credit-delay C]\n"
            "                  [--lat-host C] [--lat-local C] [--lat-global C] [--speedup S]\n"
            "                  [--alloc-iters N] [--out-buf FLITS] [--shared FLITS] [--adaptive]\n"
            "                  [--bursty] [--seed S] [--threads N] [--links FILE]\n"
            "                  [--fail-links N|FILE [--fail-at CYCLE]]\n"
            "                  [--bias B] [--w-hop FLITS] [--threshold FLITS]\n"
            "                  [--proxy all|restricted] [--exclude-unroutable] [--json]\n\n"
            "Simulates flits through input-queued routers (virtual channels, credits, virtual\n"
            "cut-through, separable allocation) and prints, per load point: offered and accepted\n"
            "load (flits per endpoint per cycle; 1.0 = full injection bandwidth), mean and p99\n"
            "packet latency (cycles), mean hops, the share of minimal routes, saturation.\n\n"
            "routings:");
    for (size_t i = 0; i < nf_sim_routing_count(); i++)
        fprintf(out, "\n  %-10s %s", nf_sim_routing_name(nf_sim_routing_at(i)),
                nf_sim_routing_summary(nf_sim_routing_at(i)));
    fprintf(out, "\ntraffic:");
    for (size_t i = 0; i < nf_sim_traffic_count(); i++)
        fprintf(out, " %s", nf_sim_traffic_name(nf_sim_traffic_at(i)));
    nf_sim_config d; /* the defaults are the library's */
    nf_sim_config_defaults(&d);
    fprintf(out,
            "\n\noptions (defaults): --cycles " NF_STR(NF_SIM_DEFAULT_WINDOW)
            " measured cycles after --warmup " NF_STR(NF_SIM_DEFAULT_WARMUP) ", then at\n"
            "most --drain " NF_STR(NF_SIM_DEFAULT_DRAIN)
            " for the measured packets; --vcs %u, --buf %u flits per VC,\n"
            "--pkt %u flit, --msg 1 packet, --router-delay %u, --credit-delay %u, link latencies "
            "%u,\n",
            d.vcs, d.buf_flits, d.pkt_flits, d.router_delay, d.credit_delay, d.lat_local);
    fprintf(
        out,
        "--speedup %.1f, --alloc-iters %u, --out-buf as --buf, --shared %u (a pool per input\n"
        "port its VCs share when their own buffers are full); --adaptive takes the candidate\n"
        "port with most credits; --threads: every processor for fabrics of 64 switches or\n"
        "more, else 1 (the results are the same for any number). --links FILE writes every\n"
        "switch-to-switch channel's flits and utilisation in the window, per load point, as\n"
        "CSV (load,switch,port,peer,peer_port,class,flits,util). ugal-l: minimal when\n"
        "q_min + h_min * w_hop <= bias * (q_val + h_val * w_hop), queues in flits (--bias 2.5,\n"
        "for ugal-g 1; --w-hop %g flit, 0: hops cost nothing); ugal-lt: minimal when\n"
        "cost_min <= cost_val + threshold (--threshold one VC buffer); --proxy restricted\n"
        "draws intermediate groups among those the source router's own global links reach;\n"
        "val and ugal-* need 3 VCs, par 4. --fail-links N sets N random switch-to-switch\n"
        "links down (--seed), or FILE the links of its 'NODE PORT' lines (a name or 0xGUID),\n"
        "after the routing has made its tables: every routing skips failed ports (the next\n"
        "candidate); ftable's packets with no way left are lost at the source (lost_frac).\n"
        "--fail-at CYCLE: the links fail at that cycle of each run instead; ftable's packets\n"
        "caught behind them are discarded where they stand (dropped_pkts).\n"
        "Source/destination pairs with no path (a fabric not connected, or parted by the\n"
        "failed links, from the start or at --fail-at) are refused (exit 2); with\n"
        "--exclude-unroutable their messages are skipped (counted: excluded), from the\n"
        "--fail-at cycle on for the pairs the failure parts; packets already on their way\n"
        "then wait. ftable drops its lost packets instead (lost_frac), so for it only a\n"
        "fabric not connected to begin with is refused.\n\n"
        "examples:\n"
        "  netfab sim --topo dragonfly:a=4,p=2,h=2 --routing dfmin --traffic uniform --sweep "
        "0.1:0.9:0.1\n"
        "  netfab sim --topo torus:8x8,c=1 --routing dor --traffic tornado --load 0.3 --json\n",
        d.speedup, d.alloc_iters, d.shared_flits, d.w_hop);
}

/* One CSV row per switch-to-switch channel (each direction) for load point x. */
static void write_links(FILE *out, const nf_fabric *f, const nf_sim *s, uint32_t *flits, double x,
                        uint64_t window) {
    nf_sim_link_flits(s, flits);
    for (nf_node n = 0; n < f->n_switches; n++)
        for (unsigned p = 1; p <= f->nports[n]; p++) {
            nf_gport g = nf_port_index(f, n, p);
            nf_node peer = f->peer[g];
            if (peer == NF_NONE || peer >= f->n_switches) continue;
            fprintf(out, "%.4f,%s,%u,%s,%u,%s,%u,%.6f\n", x, nf_node_name(f, n), p,
                    nf_node_name(f, peer), f->peer_port[g],
                    nf_link_class_name(f->link_cls[f->port_link[g]]), flits[g],
                    (double)flits[g] / (double)window);
        }
}

static void on_progress(void *ud, double f) { nf_progress_set(ud, f); }

int nf_cmd_sim(int argc, char **argv) {
    enum {
        O_TOPO = 256,
        O_ROUT,
        O_TRAF,
        O_LOAD,
        O_SWEEP,
        O_SEED,
        O_THR,
        O_LINKS,
        O_FAIL,
        O_FAILAT,
        O_JSON
    };
    static const struct option own[] = {
        {"topo", 1, NULL, O_TOPO},       {"routing", 1, NULL, O_ROUT},
        {"traffic", 1, NULL, O_TRAF},    {"load", 1, NULL, O_LOAD},
        {"sweep", 1, NULL, O_SWEEP},     {"seed", 1, NULL, O_SEED},
        {"threads", 1, NULL, O_THR},     {"links", 1, NULL, O_LINKS},
        {"fail-links", 1, NULL, O_FAIL}, {"fail-at", 1, NULL, O_FAILAT},
        {"json", 0, NULL, O_JSON},       {"help", 0, NULL, 'h'}};
    struct option *lo = nf_app_sim_options(own, sizeof own / sizeof own[0]);
    if (!lo) return nf_app_report(NF_ENOMEM, NULL);
    const char *topo = NULL, *rname = NULL, *tname = NULL, *sweep = NULL;
    double load = -1, v;
    nf_app_sim_knobs k;
    nf_app_sim_knobs_init(&k);
    nf_sim_config c;
    nf_sim_phase ph;
    nf_sim_injection inj;
    bool json = false;
    int threads = 0, bad = NF_EXIT_OK;
    const char *links_path = NULL, *fail_arg = NULL;
    uint64_t fail_at = UINT64_MAX;
    optind = 1;
    opterr = 0;
    int ch;
    while (!bad && (ch = getopt_long(argc, argv, "h", lo, NULL)) != -1) {
        switch (ch) {
        case O_TOPO: topo = optarg; break;
        case O_ROUT: rname = optarg; break;
        case O_TRAF: tname = optarg; break;
        case O_LOAD:
            if (nf_app_number("--load", optarg, 0, 1, &load)) bad = NF_EXIT_USAGE;
            break;
        case O_SWEEP: sweep = optarg; break;
        case O_SEED:
            if (nf_app_seed("--seed", optarg, &k.c.seed)) bad = NF_EXIT_USAGE;
            break;
        case O_THR:
            if (nf_app_threads(optarg, &threads)) bad = NF_EXIT_USAGE;
            break;
        case O_JSON: json = true; break;
        case O_LINKS: links_path = optarg; break;
        case O_FAIL: fail_arg = optarg; break;
        case O_FAILAT:
            if (nf_app_number("--fail-at", optarg, 0, 1e15, &v)) bad = NF_EXIT_USAGE;
            fail_at = (uint64_t)v;
            break;
        case 'h':
            sim_usage(stdout);
            free(lo);
            return NF_EXIT_OK;
        default:
            if (ch >= NF_SIMOPT_BASE) {
                bad = nf_app_sim_knob(ch, optarg, &k);
                break;
            }
            fprintf(stderr, "netfab sim: unknown or incomplete option '%s'\n", argv[optind - 1]);
            sim_usage(stderr);
            bad = NF_EXIT_USAGE;
        }
    }
    free(lo);
    if (bad) return bad;
    c = k.c;
    bool exclude = c.exclude_unroutable;
    ph = k.ph;
    inj = k.inj;
    c.threads = (unsigned)threads;
    if (optind < argc) {
        fprintf(stderr, "netfab sim: unexpected argument '%s'\n", argv[optind]);
        return NF_EXIT_USAGE;
    }
    if (!topo || !rname || !tname || ((load < 0) == !sweep)) {
        fprintf(stderr, "netfab sim: --topo, --routing, --traffic and one of --load, --sweep are "
                        "required\n");
        return NF_EXIT_USAGE;
    }
    const nf_sim_routing *r = nf_sim_routing_find(rname);
    const nf_sim_traffic *t = nf_sim_traffic_find(tname);
    if (!r || !t) {
        fprintf(stderr, "netfab sim: unknown %s '%s' (see netfab sim --help)\n",
                r ? "traffic" : "routing", r ? tname : rname);
        return NF_EXIT_USAGE;
    }
    /* the load points: --load, or --sweep's A + j STEP, as netfab sweep makes them */
    double points[NF_APP_MAX_LOAD_POINTS], *pts = NULL;
    size_t n_points = 0;
    int pex = sweep ? nf_app_load_points("sim", "--sweep", sweep, true, &pts, &n_points) : NF_EXIT_OK;
    if (pex) {
        free(pts);
        return pex;
    }
    if (sweep)
        memcpy(points, pts, n_points * sizeof *points);
    else
        points[n_points++] = load;
    free(pts);
    nf_diag d = {{0}, 0, {0}};
    nf_fabric *f;
    nf_hops *h;
    nf_sim *s = NULL;
    int rc = nf_app_fabric(topo, threads, &f, &h);
    if (rc) return rc;
    if ((rc = nf_sim_new(f, h, &c, r, t, &s, &d))) {
        int ex = nf_app_report(rc, &d);
        nf_hops_free(h);
        nf_fabric_free(f);
        return ex;
    }
    if (fail_at != UINT64_MAX && !fail_arg) {
        fprintf(stderr, "netfab sim: --fail-at needs --fail-links\n");
        nf_sim_free(s);
        nf_hops_free(h);
        nf_fabric_free(f);
        return NF_EXIT_USAGE;
    }
    unsigned failed = 0; /* after the routing's tables are made, as before an SM reroutes */
    uint8_t *was = fail_arg ? malloc((size_t)f->n_links + 1) : NULL;
    if (fail_arg && was) memcpy(was, f->link_state, f->n_links);
    if (fail_arg && (!was || (rc = nf_app_fail_links(f, fail_arg, c.seed ? c.seed : 1, &failed)))) {
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
        printf("%8s %8s %9s %9s %6s %7s %9s %5s %9s%s\n", "offered", "accepted", "lat_mean",
               "lat_p99", "hops", "minimal", "util_max", "sat", "wall_s",
               exclude ? "  excluded" : "");
    int ex = NF_EXIT_OK;
    for (size_t pi = 0; pi < n_points; pi++) {
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
        if (json) {
            json_t *o = nf_app_sim_result_json(x, &res, failed, exclude);
            if (!o) {
                ex = nf_app_report(NF_ENOMEM, NULL);
                break;
            }
            json_array_append_new(arr, o);
        } else {
            printf("%8.4f %8.4f %9.2f %9.0f %6.2f %7.3f %9.3f %5s %9.3f", res.offered, res.accepted,
                   res.lat_mean, res.lat_p99, res.hops_mean, res.minimal_frac, res.link_util_max,
                   res.deadlock    ? "DEAD"
                   : res.saturated ? "yes"
                                   : "no",
                   res.wall_s);
            if (exclude) printf(" %9llu", (unsigned long long)res.excluded_msgs);
            putchar('\n');
            fflush(stdout);
        }
        if (res.deadlock)
            fprintf(stderr, "netfab sim: deadlock at load %.3f: no flit moved; stuck: %s\n", x,
                    res.stuck);
        if (links) write_links(links, f, s, lflits, x, ph.window);
    }
    if (links && ex) /* a failed run leaves the previous file */
        nf__afile_abort(&links_af);
    else if (links && nf_app_out_close(&links_af, "netfab sim", links_path, 0))
        ex = NF_EXIT_FAIL;
    free(lflits);
    free(was);
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

static void route_usage(FILE *out) {
    fprintf(out,
            "usage: netfab route --topo SPEC --routing NAME --check [--vcs V] [--json]\n\n"
            "Builds the channel dependency graph of the routing on the fabric (every channel\n"
            "and VC a vertex; an edge for each channel a packet holding one may request next,\n"
            "over every destination and every reachable state) and looks for a cycle. Exit 0\n"
            "when it is deadlock-free, 1 when a cycle exists (one is printed).\n\n"
            "example:\n  netfab route --topo torus:4x4,c=1 --routing dor --check\n");
}

int nf_cmd_route(int argc, char **argv) {
    enum { O_TOPO = 256, O_ROUT, O_CHECK, O_VCS, O_JSON };
    static const struct option lo[] = {{"topo", 1, NULL, O_TOPO},   {"routing", 1, NULL, O_ROUT},
                                       {"check", 0, NULL, O_CHECK}, {"vcs", 1, NULL, O_VCS},
                                       {"json", 0, NULL, O_JSON},   {"help", 0, NULL, 'h'},
                                       {NULL, 0, NULL, 0}};
    const char *topo = NULL, *rname = NULL;
    bool check = false, json = false;
    nf_sim_config c;
    nf_sim_config_defaults(&c);
    double v;
    optind = 1;
    opterr = 0;
    int ch;
    while ((ch = getopt_long(argc, argv, "h", lo, NULL)) != -1) {
        switch (ch) {
        case O_TOPO: topo = optarg; break;
        case O_ROUT: rname = optarg; break;
        case O_CHECK: check = true; break;
        case O_VCS:
            if (nf_app_number("--vcs", optarg, 1, NF_SIM_MAX_VCS, &v)) return NF_EXIT_USAGE;
            c.vcs = (unsigned)v;
            break;
        case O_JSON: json = true; break;
        case 'h': route_usage(stdout); return NF_EXIT_OK;
        default:
            fprintf(stderr, "netfab route: unknown or incomplete option '%s'\n", argv[optind - 1]);
            return NF_EXIT_USAGE;
        }
    }
    if (!topo || !rname || !check) {
        fprintf(stderr, "netfab route: --topo, --routing and --check are required\n");
        return NF_EXIT_USAGE;
    }
    const nf_sim_routing *r = nf_sim_routing_find(rname);
    if (!r) {
        fprintf(stderr, "netfab route: unknown routing '%s'\n", rname);
        return NF_EXIT_USAGE;
    }
    nf_diag d = {{0}, 0, {0}};
    nf_fabric *f;
    nf_hops *h;
    int rc = nf_app_fabric(topo, 0, &f, &h);
    if (rc) return rc;
    uint32_t cyc;
    uint64_t nv, ne;
    nf_progress bar;
    nf_progress_begin(&bar, "netfab route: checking");
    rc = nf_sim_check_deadlock_progress(f, h, r, &c, on_progress, &bar, &cyc, &nv, &ne, &d);
    nf_progress_end(&bar);
    int ex = NF_EXIT_OK;
    if (rc) {
        ex = nf_app_report(rc, &d);
    } else if (json) {
        printf("{\"routing\": \"%s\", \"vertices\": %llu, \"edges\": %llu, \"deadlock_free\": %s, "
               "\"cycle_length\": %u}\n",
               rname, (unsigned long long)nv, (unsigned long long)ne, cyc ? "false" : "true", cyc);
        ex = cyc ? NF_EXIT_FAIL : NF_EXIT_OK;
    } else {
        printf("%s on %s: %llu channel-VC vertices, %llu dependencies: %s\n", rname, topo,
               (unsigned long long)nv, (unsigned long long)ne,
               cyc ? "a cycle (can deadlock)" : "no cycle (deadlock-free)");
        if (cyc) printf("%s (length %u)\n", d.msg, cyc);
        ex = cyc ? NF_EXIT_FAIL : NF_EXIT_OK;
    }
    nf_hops_free(h);
    nf_fabric_free(f);
    return ex;
}
