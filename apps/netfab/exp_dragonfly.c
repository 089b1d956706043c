/* SPDX-License-Identifier: MIT */
/* `netfab exp q-adaptive` and `netfab exp proxies`: the Dragonfly routings of the UGAL note's
 * two papers at their authors' scale and knobs.
 *
 * q-adaptive: Kang, Wang and Lan's runs as their SST/Merlin script sets them: 1,056 nodes (4
 * endpoints a router, 8 routers a group, 33 groups, one global link a pair of groups; --quick:
 * the 72-node Dragonfly), 128-byte flits of one-flit packets on 4 GB/s links (a cycle is a
 * flit's 32 ns), host, local and global latencies of 10, 30 and 300 ns (1, 1 and 9 cycles) and
 * the routers' 20 ns (1 cycle), 2,560-byte buffers (20 flits) a VC in and out, a crossbar faster
 * than the links (40 GB/s), 5 VCs for every routing;
 * their patterns Uniform, Tornado (shift 1: worstcase), Stencil_3D and FFT3D_all2all
 * (RandomNeighbors draws every packet's target uniformly: uniform); minimal, Valiant, UGAL-L,
 * UGAL-G, PAR and Q-adaptive (qadapt, theirs; qadapt --q-src global, ours) over loads 0.1 to
 * 0.9 (--quick: 0.1, 0.5, 0.9), then the learning curve of qadapt from an empty network (worst case
 * at 0.2, windows of 500 cycles). Without --quick also the 2,550-node Dragonfly of their script (5
 * endpoints, 10 routers, 51 groups) under Uniform and Tornado.
 *
 * proxies: Navaridas and Pascual's restrictive proxies (val --proxy qvl, qvr, qvd, qvp, qvq;
 * restricted, netfab's first reading; all, plain Valiant), and ugal-l beside them, on the same
 * fabric, knobs and patterns. */
#include "cmd.h"
#include "exp.h"
#include "netfab/sim.h"

#include <stdio.h>
#include <string.h>

typedef struct df_way {
    const char *label, *routing; /* the row's name, the routing's */
    bool src_global;             /* qadapt --q-src global */
    nf_sim_proxy proxy;
} df_way;

typedef struct df_scale {
    const char *topo, *name;
    const char *const *traffics;
} df_scale;

static const char *const all_traffics[] = {"uniform", "worstcase", "stencil3d", "fft3d", NULL};
static const char *const two_traffics[] = {"uniform", "worstcase", NULL};

/* The authors' knobs in cycles of a flit (32 ns); their router's crossbar is 10 times a link
 * (40 GB/s) with output buffers as large as the input ones: a crossbar speedup of 4 (more
 * changes nothing measurable here) and 20-flit output queues. */
static void df_config(const exp_opts *o, nf_sim_config *c) {
    nf_sim_config_defaults(c);
    c->vcs = 5, c->buf_flits = 20, c->pkt_flits = 1, c->speedup = 4, c->out_buf = 20;
    c->lat_host = 1, c->lat_local = 1, c->lat_global = 9, c->router_delay = 1;
    c->seed = o->seed;
    c->threads = o->threads > 0 ? (unsigned)o->threads : 0;
}

/* One (fabric, traffic, way) curve over the loads, a row a load. */
static int df_curve(const exp_opts *o, const df_scale *sc, nf_fabric *f, nf_hops *h,
                    const char *traffic, const df_way *w, double done, double share, json_t *rows) {
    nf_sim_config c;
    df_config(o, &c);
    c.q_src_global = w->src_global, c.proxy = w->proxy;
    nf_sim *s;
    nf_diag d = {{0}, 0, {0}};
    int rc =
        nf_sim_new(f, h, &c, nf_sim_routing_find(w->routing), nf_sim_traffic_find(traffic), &s, &d);
    if (rc) return nf_app_report(rc, &d);
    nf_sim_phase ph = o->quick ? (nf_sim_phase){.warmup = 500, .window = 1500, .drain_max = 1500}
                               : (nf_sim_phase){.warmup = 2000, .window = 4000, .drain_max = 4000};
    double step = o->quick ? 0.4 : 0.1;
    unsigned n = o->quick ? 3 : 9;
    for (unsigned i = 0; i < n && rc == NF_EXIT_OK; i++) {
        double load = 0.1 + step * i;
        exp_progress(done + share * i / n, "%s: %s, %s, load %.1f", sc->name, traffic, w->label,
                     load);
        nf_sim_injection inj = {.load = load};
        nf_sim_result r;
        int e = nf_sim_run(s, &inj, &ph, NULL, NULL, &r);
        if (e) {
            rc = nf_app_report(e, NULL);
            break;
        }
        json_t *row = json_pack("{s:s, s:s, s:s, s:s, s:f}", "kind", "curve", "fabric", sc->name,
                                "traffic", traffic, "routing", w->label, "load", load);
        json_object_set_new(row, "accepted", json_real(r.accepted));
        json_object_set_new(row, "lat_mean", json_real(r.lat_mean));
        json_object_set_new(row, "lat_p99", json_real(r.lat_p99));
        json_object_set_new(row, "minimal_frac", json_real(r.minimal_frac));
        json_object_set_new(row, "hops_mean", json_real(r.hops_mean));
        json_object_set_new(row, "saturated", json_boolean(r.saturated));
        if (r.state_bytes) {
            json_object_set_new(row, "state_bytes", json_integer((json_int_t)r.state_bytes));
            json_object_set_new(row, "state_bytes_flat",
                                json_integer((json_int_t)r.state_bytes_flat));
        }
        json_array_append_new(rows, row);
    }
    nf_sim_free(s);
    return rc;
}

/* The latency and minimal share window by window from an empty network (kind "learning"). */
static int df_learning(const exp_opts *o, const df_scale *sc, nf_fabric *f, nf_hops *h,
                       const df_way *w, json_t *rows) {
    nf_sim_config c;
    df_config(o, &c);
    c.q_src_global = w->src_global;
    nf_sim *s;
    nf_diag d = {{0}, 0, {0}};
    int rc = nf_sim_new(f, h, &c, nf_sim_routing_find(w->routing), nf_sim_traffic_find("worstcase"),
                        &s, &d);
    if (rc) return nf_app_report(rc, &d);
    nf_sim_phase ph = {.warmup = 0, .window = o->quick ? 2000 : 6000, .drain_max = 4000};
    nf_sim_injection inj = {.load = 0.2};
    nf_sim_result r;
    if ((rc = nf_sim_set_timeline(s, 500)) || (rc = nf_sim_run(s, &inj, &ph, NULL, NULL, &r))) {
        nf_sim_free(s);
        return nf_app_report(rc, NULL);
    }
    const nf_sim_window *win;
    size_t n = nf_sim_timeline(s, &win);
    for (size_t i = 0; i < n; i++) {
        json_t *row = json_pack("{s:s, s:s, s:s, s:I}", "kind", "learning", "fabric", sc->name,
                                "routing", w->label, "window_at", (json_int_t)win[i].cycle);
        json_object_set_new(row, "accepted", json_real(win[i].accepted));
        json_object_set_new(row, "lat_mean", json_real(win[i].lat_mean));
        json_object_set_new(row, "minimal_frac", json_real(win[i].minimal_frac));
        json_array_append_new(rows, row);
    }
    nf_sim_free(s);
    return NF_EXIT_OK;
}

static int df_run(const exp_opts *o, const df_way *ways, size_t n_ways, bool learning,
                  json_t *rows) {
    const df_scale quick[] = {{"dragonfly:a=4,p=2,h=2", "72 nodes", all_traffics}};
    const df_scale full[] = {{"dragonfly:a=8,p=4,h=4", "1,056 nodes", all_traffics},
                             {"dragonfly:a=10,p=5,h=5", "2,550 nodes", two_traffics}};
    const df_scale *sc = o->quick ? quick : full;
    size_t n_sc = o->quick ? 1 : 2, total = 0, at = 0;
    for (size_t k = 0; k < n_sc; k++)
        for (const char *const *t = sc[k].traffics; *t; t++)
            total += n_ways;
    int rc = NF_EXIT_OK;
    for (size_t k = 0; k < n_sc && rc == NF_EXIT_OK; k++) {
        nf_fabric *f;
        nf_hops *h;
        if ((rc = nf_app_fabric(sc[k].topo, o->threads, &f, &h))) return rc;
        for (const char *const *t = sc[k].traffics; *t && rc == NF_EXIT_OK; t++)
            for (size_t w = 0; w < n_ways && rc == NF_EXIT_OK; w++, at++)
                rc = df_curve(o, &sc[k], f, h, *t, &ways[w], (double)at / (double)total,
                              1.0 / (double)total, rows);
        if (learning && k == 0)
            for (size_t w = 0; w < n_ways && rc == NF_EXIT_OK; w++)
                if (!strncmp(ways[w].routing, "qadapt", 6) || !strcmp(ways[w].routing, "val"))
                    rc = df_learning(o, &sc[k], f, h, &ways[w], rows);
        nf_hops_free(h);
        nf_fabric_free(f);
    }
    return rc;
}

int exp_q_adaptive(const exp_opts *o, json_t *rows) {
    static const df_way ways[] = {
        {"dfmin", "dfmin", false, NF_SIM_PROXY_ALL},
        {"val", "val", false, NF_SIM_PROXY_ALL},
        {"ugal-l", "ugal-l", false, NF_SIM_PROXY_ALL},
        {"ugal-g", "ugal-g", false, NF_SIM_PROXY_ALL},
        {"par", "par", false, NF_SIM_PROXY_ALL},
        {"qadapt", "qadapt", false, NF_SIM_PROXY_ALL},
        {"qadapt --q-src global", "qadapt", true, NF_SIM_PROXY_ALL},
    };
    return df_run(o, ways, sizeof ways / sizeof *ways, true, rows);
}

int exp_proxies(const exp_opts *o, json_t *rows) {
    static const df_way ways[] = {
        {"val", "val", false, NF_SIM_PROXY_ALL},
        {"val restricted", "val", false, NF_SIM_PROXY_RESTRICTED},
        {"val qvl", "val", false, NF_SIM_PROXY_QVL},
        {"val qvr", "val", false, NF_SIM_PROXY_QVR},
        {"val qvd", "val", false, NF_SIM_PROXY_QVD},
        {"val qvp", "val", false, NF_SIM_PROXY_QVP},
        {"val qvq", "val", false, NF_SIM_PROXY_QVQ},
        {"ugal-l", "ugal-l", false, NF_SIM_PROXY_ALL},
    };
    return df_run(o, ways, sizeof ways / sizeof *ways, false, rows);
}
