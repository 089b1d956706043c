/* `netfab exp faults`: seed 001's siblings under link failures. For a two-level fat tree, the
 * same tree with sibling links (gft, one rail) and the dual-rail Sunway prototype (gft, two
 * rails), Monte-Carlo over random sets of 1 .. 64 failed switch-to-switch links: the share of
 * ordered endpoint pairs that still deliver when the switches keep the deterministic tables they
 * had before the failures (nf_ftable: first usable candidate, sibling detours last). Then the
 * seed's extreme case: every up link of one leaf down. */
#include "cmd.h"
#include "exp.h"
#include "netfab/gen.h"
#include "netfab/hops.h"
#include "netfab/lft.h"
#include "util/rng.h"

#include <stdio.h>
#include <stdlib.h>

/* 32 leaves of 16 endpoints, 18 spines, one link from every leaf to every spine (the Sunway
 * prototype's counts, README: gft); with sib=4 four links join the two routers of a pair. */
static const struct {
    const char *name, *topo;
} fabrics[] = {
    {"fat tree", "gft:leaves=32,nodes=16,spines=18,sib=0,rails=1"},
    {"gft, 1 rail", "gft:leaves=32,nodes=16,spines=18,sib=4,rails=1"},
    {"gft, 2 rails", "gft:preset=sunway-proto"},
};

static int reach(const nf_ftable *t, const exp_opts *o, double *frac) {
    uint64_t pairs, got;
    int rc = nf_ftable_reach(t, o->threads, &pairs, &got);
    if (rc) return nf_app_report(rc, NULL);
    *frac = pairs ? (double)got / (double)pairs : 1.0;
    return NF_EXIT_OK;
}

int exp_faults(const exp_opts *o, json_t *rows) {
    static const unsigned counts[] = {1, 2, 4, 8, 16, 32, 64};
    unsigned trials = o->quick ? 20 : 200;
    for (size_t fi = 0; fi < sizeof fabrics / sizeof fabrics[0]; fi++) {
        nf_fabric *f;
        nf_hops *h;
        int rc = nf_app_fabric(fabrics[fi].topo, o->threads, &f, &h);
        if (rc) return rc;
        nf_ftable *t = NULL;
        uint32_t *pool = malloc(((size_t)f->n_links + 1) * sizeof *pool), np = 0;
        if (!pool || (rc = nf_ftable_build(f, h, o->threads, &t))) {
            free(pool);
            nf_hops_free(h);
            nf_fabric_free(f);
            return nf_app_report(rc ? rc : NF_ENOMEM, NULL);
        }
        for (nf_link l = 0; l < f->n_links; l++)
            if (f->link_cls[l] != NF_LINK_HOST) pool[np++] = l;
        nf__rng rng;
        nf__rng_seed(&rng, o->seed * 1000003u + fi);
        for (size_t ci = 0; ci < sizeof counts / sizeof counts[0] && rc == NF_EXIT_OK; ci++) {
            unsigned k = counts[ci] < np ? counts[ci] : np;
            exp_progress("faults: %s, %u failed links", fabrics[fi].name, k);
            double sum = 0, lo = 1;
            for (unsigned tr = 0; tr < trials && rc == NF_EXIT_OK; tr++) {
                nf__rng_sample_u32(&rng, pool, np, k); /* the first k of pool */
                for (unsigned i = 0; i < k; i++)
                    f->link_state[pool[i]] = NF_LINK_DOWN;
                double fr = 0;
                rc = reach(t, o, &fr);
                for (unsigned i = 0; i < k; i++)
                    f->link_state[pool[i]] = NF_LINK_UP;
                sum += fr;
                if (fr < lo) lo = fr;
            }
            json_array_append_new(
                rows, json_pack("{s:s, s:s, s:I, s:I, s:f, s:f}", "fabric", fabrics[fi].name,
                                "case", "random", "failed_links", (json_int_t)k, "trials",
                                (json_int_t)trials, "reachability", sum / trials,
                                "reachability_min", lo));
        }
        /* every up link of leaf 0 (rail 0) down */
        unsigned k = 0;
        double fr = 0;
        for (unsigned p = 1; p <= f->nports[0]; p++) {
            nf_gport g = nf_port_index(f, 0, p);
            nf_node w = f->peer[g];
            if (w < f->n_switches && f->level[w] > f->level[0]) {
                f->link_state[f->port_link[g]] = NF_LINK_DOWN;
                k++;
            }
        }
        if (rc == NF_EXIT_OK) rc = reach(t, o, &fr);
        for (nf_link l = 0; l < f->n_links; l++)
            f->link_state[l] = NF_LINK_UP;
        if (rc == NF_EXIT_OK)
            json_array_append_new(
                rows, json_pack("{s:s, s:s, s:I, s:I, s:f, s:f}", "fabric", fabrics[fi].name,
                                "case", "leaf 0 up links", "failed_links", (json_int_t)k,
                                "trials", (json_int_t)1, "reachability", fr,
                                "reachability_min", fr));
        free(pool);
        nf_ftable_free(t);
        nf_hops_free(h);
        nf_fabric_free(f);
        if (rc) return rc;
    }
    return NF_EXIT_OK;
}
