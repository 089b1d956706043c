/* SPDX-License-Identifier: MIT */
/* `netfab exp faults`: the Sunway paper's siblings under link failures. For a two-level fat tree,
 * the same tree with sibling links (gft, one rail) and the dual-rail Sunway prototype (gft, two
 * rails), Monte-Carlo over random sets of 1 .. 64 failed switch-to-switch links: the share of
 * ordered endpoint pairs that still deliver when the switches keep the deterministic tables they
 * had before the failures (nf_ftable: first usable candidate, sibling detours last). Then the
 * seed's extreme case: every up link of one leaf down. */
#include "cmd.h"
#include "exp.h"
#include "netfab/gen.h"
#include "netfab/hops.h"
#include "netfab/lft.h"
#include "netfab/sim.h"
#include "util/rng.h"

#include <stdio.h>
#include <stdlib.h>

/* 32 leaves of 16 endpoints, 18 spines, one link from every leaf to every spine (the Sunway
 * prototype's counts, README: gft); with sib=4 four links join the two routers of a pair.
 * --quick: 8 leaves of 8 endpoints, 8 spines, 2 sibling links. */
static const struct {
    const char *name, *topo, *quick;
} fabrics[] = {
    {"fat tree", "gft:leaves=32,nodes=16,spines=18,sib=0,rails=1",
     "gft:leaves=8,nodes=8,spines=8,sib=0,rails=1"},
    {"gft, 1 rail", "gft:leaves=32,nodes=16,spines=18,sib=4,rails=1",
     "gft:leaves=8,nodes=8,spines=8,sib=2,rails=1"},
    {"gft, 2 rails", "gft:preset=sunway-proto", "gft:leaves=8,nodes=8,spines=8,sib=2,rails=2"},
};

/* Uniform traffic's saturation throughput under the links' current states: bisection on the
 * run's saturated flag over [0, 1] in `steps` steps; the most accepted by the unsaturated runs
 * and the lowest saturated one. */
static int saturation(nf_sim *s, unsigned steps, double *out) {
    double lo = 0, hi = 1, best = 0, sat_acc = -1;
    nf_sim_phase ph = {.warmup = 500, .window = 1500, .drain_max = 2000};
    for (unsigned i = 0; i < steps; i++) {
        nf_sim_injection inj = {.load = (lo + hi) / 2};
        nf_sim_result r;
        int rc = nf_sim_run(s, &inj, &ph, NULL, NULL, &r);
        if (rc) return nf_app_report(rc, NULL);
        if (r.saturated) {
            hi = inj.load;
            sat_acc = r.accepted;
        } else {
            lo = inj.load;
            if (r.accepted > best) best = r.accepted;
        }
    }
    *out = sat_acc > best ? sat_acc : best;
    return NF_EXIT_OK;
}

static int reach(const nf_ftable *t, const exp_opts *o, double *frac) {
    uint64_t pairs, got;
    int rc = nf_ftable_reach(t, o->threads, &pairs, &got);
    if (rc) return nf_app_report(rc, NULL);
    *frac = pairs ? (double)got / (double)pairs : 1.0;
    return NF_EXIT_OK;
}

/* One row: the fabric's current link states measured; sat < 0: saturation not measured. */
static void add_row(json_t *rows, const char *fabric, const char *what, unsigned k, unsigned trials,
                    double reach_mean, double reach_min, unsigned sat_trials, double sat) {
    json_t *o = json_pack("{s:s, s:s, s:I, s:I, s:f, s:f}", "fabric", fabric, "case", what,
                          "failed_links", (json_int_t)k, "trials", (json_int_t)trials,
                          "reachability", reach_mean, "reachability_min", reach_min);
    json_object_set_new(o, "saturation_trials", json_integer((json_int_t)sat_trials));
    json_object_set_new(o, "saturation", sat_trials ? json_real(sat) : json_null());
    json_array_append_new(rows, o);
}

int exp_faults(const exp_opts *o, json_t *rows) {
    static const unsigned counts[] = {0, 1, 2, 4, 8, 16, 32, 64};
    unsigned trials = o->quick ? 20 : 200, sat_trials = o->quick ? 1 : 5;
    unsigned steps = o->quick ? 5 : 6;
    for (size_t fi = 0; fi < sizeof fabrics / sizeof fabrics[0]; fi++) {
        const char *topo = o->quick ? fabrics[fi].quick : fabrics[fi].topo;
        nf_fabric *f;
        nf_hops *h;
        int rc = nf_app_fabric(topo, o->threads, &f, &h);
        if (rc) return rc;
        nf_ftable *t = NULL;
        nf_sim *sim = NULL;
        nf_diag d = {{0}, 0, {0}};
        /* 8 VCs: VC = hops taken stays below them on every detour here */
        nf_sim_config sc;
        nf_sim_config_defaults(&sc);
        sc.vcs = 8, sc.threads = 1, sc.seed = o->seed;
        uint32_t *pool = malloc(((size_t)f->n_links + 1) * sizeof *pool), np = 0;
        if (!pool || (rc = nf_ftable_build(f, h, o->threads, &t)) ||
            (rc = nf_sim_new(f, h, &sc, nf_sim_routing_find("ftable"),
                             nf_sim_traffic_find("uniform"), &sim, &d))) {
            free(pool);
            nf_ftable_free(t);
            nf_hops_free(h);
            nf_fabric_free(f);
            return nf_app_report(rc ? rc : NF_ENOMEM, &d);
        }
        for (nf_link l = 0; l < f->n_links; l++)
            if (f->link_cls[l] != NF_LINK_HOST) pool[np++] = l;
        nf__rng rng;
        nf__rng_seed(&rng, o->seed * 1000003u + fi);
        for (size_t ci = 0; ci < sizeof counts / sizeof counts[0] && rc == NF_EXIT_OK; ci++) {
            unsigned k = counts[ci] < np ? counts[ci] : np;
            unsigned tn = k ? trials : 1, sn = k ? sat_trials : 1;
            double sum = 0, lo = 1, ssum = 0;
            for (unsigned tr = 0; tr < tn && rc == NF_EXIT_OK; tr++) {
                exp_progress(((double)fi +
                              ((double)ci + (double)tr / tn) / (sizeof counts / sizeof counts[0])) /
                                 (sizeof fabrics / sizeof fabrics[0]),
                             "faults: %s, %u failed links, trial %u", fabrics[fi].name, k, tr + 1);
                nf__rng_sample_u32(&rng, pool, np, k); /* the first k of pool */
                for (unsigned i = 0; i < k; i++)
                    f->link_state[pool[i]] = NF_LINK_DOWN;
                double fr = 0, sat = 0;
                rc = reach(t, o, &fr);
                if (rc == NF_EXIT_OK && tr < sn) rc = saturation(sim, steps, &sat);
                for (unsigned i = 0; i < k; i++)
                    f->link_state[pool[i]] = NF_LINK_UP;
                sum += fr;
                ssum += sat;
                if (fr < lo) lo = fr;
            }
            if (rc == NF_EXIT_OK)
                add_row(rows, fabrics[fi].name, "random", k, tn, sum / tn, lo, sn, ssum / sn);
        }
        /* every up link of leaf 0 (rail 0) down */
        unsigned k = 0;
        double fr = 0, sat = 0;
        for (unsigned p = 1; p <= f->nports[0]; p++) {
            nf_gport g = nf_port_index(f, 0, p);
            nf_node w = f->peer[g];
            if (w < f->n_switches && f->level[w] > f->level[0]) {
                f->link_state[f->port_link[g]] = NF_LINK_DOWN;
                k++;
            }
        }
        if (rc == NF_EXIT_OK) rc = reach(t, o, &fr);
        if (rc == NF_EXIT_OK) rc = saturation(sim, steps, &sat);
        for (nf_link l = 0; l < f->n_links; l++)
            f->link_state[l] = NF_LINK_UP;
        if (rc == NF_EXIT_OK)
            add_row(rows, fabrics[fi].name, "leaf 0 up links", k, 1, fr, fr, 1, sat);
        free(pool);
        nf_sim_free(sim);
        nf_ftable_free(t);
        nf_hops_free(h);
        nf_fabric_free(f);
        if (rc) return rc;
    }
    return NF_EXIT_OK;
}
