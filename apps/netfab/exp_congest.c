/* SPDX-License-Identifier: MIT */
/* `netfab exp congestion`: the Sunway router's congestion pre-awareness (the Sunway paper,
 * section 2.2: upstream senses downstream congestion from the rate credits come back). On the
 * Sunway prototype (gft, two rails), every eighth endpoint sends all its packets to one endpoint
 * (hotspot-set) while the others send uniformly, at a few loads; table routing with --adaptive,
 * without pre-awareness, with it but no NIC throttle, and with both: the background packets'
 * latency (the victims of the hot spot's saturated tree) and the hot endpoint's throughput. */
#include "cmd.h"
#include "exp.h"
#include "netfab/sim.h"

#include <stdio.h>

/* Pre-awareness's time constant in the runs (cycles): about ten credit round trips. */
#define CONGEST_T 32

int exp_congestion(const exp_opts *o, json_t *rows) {
    /* --quick: 8 leaves of 8 endpoints, 8 spines, two rails */
    const char *topo =
        o->quick ? "gft:leaves=8,nodes=8,spines=8,sib=2,rails=2" : "gft:preset=sunway-proto";
    /* the hot endpoint takes 2 flits a cycle (two rails); its senders offer E / 8 x load */
    static const double loads_full[] = {0.03, 0.06}, loads_quick[] = {0.2, 0.4};
    const double *loads = o->quick ? loads_quick : loads_full;
    size_t n_loads = 2;
    static const struct {
        const char *mode;
        unsigned T;
        double throttle;
    } modes[] = {{"off", 0, 0}, {"routing+rails", CONGEST_T, 0}, {"+throttle", CONGEST_T, 0.5}};
    enum { N_MODES = sizeof modes / sizeof modes[0] };
    nf_fabric *f;
    nf_hops *h;
    int rc = nf_app_fabric(topo, o->threads, &f, &h);
    if (rc) return rc;
    nf_sim_phase ph = o->quick ? (nf_sim_phase){.warmup = 1500, .window = 1000, .drain_max = 500}
                               : (nf_sim_phase){.warmup = 2000, .window = 2000, .drain_max = 1000};
    for (size_t m = 0; m < N_MODES && rc == NF_EXIT_OK; m++) {
        nf_sim_config c;
        nf_sim_config_defaults(&c);
        c.adaptive = true, c.threads = o->threads > 0 ? (unsigned)o->threads : 0;
        c.seed = o->seed, c.preaware_cycles = modes[m].T, c.preaware_throttle = modes[m].throttle;
        nf_sim *s;
        nf_diag d = {{0}, 0, {0}};
        if ((rc = nf_sim_new(f, h, &c, nf_sim_routing_find("minhop"),
                             nf_sim_traffic_find("hotspot-set"), &s, &d))) {
            rc = nf_app_report(rc, &d);
            break;
        }
        for (size_t li = 0; li < n_loads && rc == NF_EXIT_OK; li++) {
            exp_progress(((double)m * (double)n_loads + (double)li) / (N_MODES * (double)n_loads),
                         "congestion: %s, load %g", modes[m].mode, loads[li]);
            nf_sim_injection inj = {.load = loads[li]};
            nf_sim_result r;
            int e = nf_sim_run(s, &inj, &ph, NULL, NULL, &r);
            if (e) {
                rc = nf_app_report(e, NULL);
                break;
            }
            json_t *row = json_pack("{s:s, s:f, s:s, s:I, s:f}", "fabric",
                                    o->quick ? "gft 8x8, 2 rails" : "Sunway prototype", "load",
                                    loads[li], "preaware", modes[m].mode, "T",
                                    (json_int_t)modes[m].T, "throttle", modes[m].throttle);
            json_object_set_new(row, "bg_lat_mean", json_real(r.bg_lat_mean));
            json_object_set_new(row, "bg_lat_p99", json_real(r.bg_lat_p99));
            json_object_set_new(row, "hot_accepted", json_real(r.hot_accepted));
            json_object_set_new(row, "accepted", json_real(r.accepted));
            json_object_set_new(row, "lat_mean", json_real(r.lat_mean));
            json_object_set_new(row, "saturated", json_boolean(r.saturated));
            json_array_append_new(rows, row);
        }
        nf_sim_free(s);
    }
    nf_hops_free(h);
    nf_fabric_free(f);
    return rc;
}
