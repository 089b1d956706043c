/* SPDX-License-Identifier: MIT */
/* `netfab exp link-errors`: the Sunway paper's data link layer (section 2.2), which switches
 * between virtual cut-through and store-and-forward so that corrupt packets waste no bandwidth
 * and the links adapt to their quality. On the Sunway prototype (gft, two rails), uniform
 * traffic, 256-byte packets (--quick: a gft of 64 endpoints, two rates, shorter windows): for
 * each bit error rate from clean to 1e-5 (and 1e-4, past the range asked), each switching mode
 * (vct, saf, dynamic) and two cases (every switch-to-switch link at that rate; 4 bad links at it
 * and the rest clean), the latency at a moderate load and the accepted load at full offered load,
 * with the errors counted, and every packet of the window counted in once. Then a multicast
 * under the same errors in each mode (mcast_row). */
#include "cmd.h"
#include "exp.h"
#include "netfab/hops.h"
#include "netfab/mcast.h"
#include "netfab/sim.h"

#include <stdio.h>
#include <stdlib.h>

#define LINKS_LOAD 0.3 /* the latency point: well below saturation */
#define BAD_LINKS 4

static const char *const mode_names[] = {"vct", "saf", "dynamic"};

/* The switch-to-switch links of f spread evenly over its link list: BAD_LINKS of them. */
static void pick_bad(const nf_fabric *f, nf_link *bad) {
    uint32_t n = 0;
    for (nf_link l = 0; l < f->n_links; l++)
        n += f->link_a[l] < f->n_switches && f->link_z[l] < f->n_switches;
    uint32_t k = 0, i = 0;
    for (nf_link l = 0; l < f->n_links && k < BAD_LINKS; l++) {
        if (f->link_a[l] >= f->n_switches || f->link_z[l] >= f->n_switches) continue;
        if ((uint64_t)i * BAD_LINKS >= (uint64_t)k * n) bad[k++] = l;
        i++;
    }
}

/* One (case, mode, BER) row: a run at LINKS_LOAD and one at full offered load. */
static int row(const nf_fabric *f, const nf_hops *h, const exp_opts *o, bool all, nf_link *bad,
               unsigned mode, double ber, json_t *rows) {
    nf_sim_config c;
    nf_sim_config_defaults(&c);
    /* 256-byte packets (8 flits of 32 bytes), 4 VCs of 64 flits, as exp dual-rail */
    c.vcs = 4, c.buf_flits = 64, c.pkt_flits = 8, c.seed = o->seed;
    c.threads = o->threads > 0 ? (unsigned)o->threads : 0;
    c.switching = (nf_sim_switching)mode;
    c.ber = all ? ber : 0;
    nf_sim *s;
    nf_diag d = {{0}, 0, {0}};
    int rc =
        nf_sim_new(f, h, &c, nf_sim_routing_find("minhop"), nf_sim_traffic_find("uniform"), &s, &d);
    for (unsigned i = 0; rc == NF_OK && !all && i < BAD_LINKS; i++)
        rc = nf_sim_set_link_ber(s, bad[i], ber, &d);
    if (rc) {
        nf_sim_free(s);
        return nf_app_report(rc, &d);
    }
    uint64_t window = o->quick ? 1000 : 5000;
    nf_sim_phase ph = {.warmup = o->quick ? 300 : 1000, .window = window, .drain_max = 20000};
    nf_sim_injection lo = {.load = LINKS_LOAD}, full = {.load = 1.0};
    nf_sim_result r, sat;
    nf_sim_phase ph_sat = ph; /* only the window's accepted load counts: no drain */
    ph_sat.drain_max = 0;
    if ((rc = nf_sim_run(s, &lo, &ph, NULL, NULL, &r)) ||
        (rc = nf_sim_run(s, &full, &ph_sat, NULL, NULL, &sat))) {
        nf_sim_free(s);
        return nf_app_report(rc, NULL);
    }
    /* the window's packets: generated, and delivered (each counts once, when its tail is in) */
    double gen = r.offered * (double)nf_sim_endpoints(s) * (double)window / c.pkt_flits;
    nf_sim_free(s);
    json_t *x = json_pack(
        "{s:s, s:s, s:f, s:f, s:f, s:f, s:f, s:f, s:I, s:I, s:f, s:I, s:I, s:b}", "case",
        all ? "all links" : "4 bad links", "mode", mode_names[mode], "ber", ber, "lat_mean",
        r.lat_mean, "lat_p99", r.lat_p99, "accepted", r.accepted, "saturation", sat.accepted,
        "saf_frac", r.saf_frac, "corrupt_pkts", (json_int_t)r.corrupt_pkts, "wasted_flits",
        (json_int_t)r.wasted_flits, "wasted_frac",
        r.flit_hops ? (double)r.wasted_flits / (double)r.flit_hops : 0.0, "pkts_generated",
        (json_int_t)(gen + 0.5), "pkts_delivered", (json_int_t)r.packets, "saturated", r.saturated);
    if (!x) return nf_app_report(NF_ENOMEM, NULL);
    json_array_append_new(rows, x);
    return NF_EXIT_OK;
}

/* A multicast under link errors (case "multicast"): a group of n endpoints spread evenly over
 * the fabric (endpoint 0 first), its tree by minihop; one multicast of b bytes from endpoint 0 on
 * an idle fabric, every switch-to-switch link at the BER: the cycles until every member has it,
 * the flits sent again and thrown away, and the members' flits against the clean count. */
static int mcast_row(const nf_fabric *f, const nf_hops *h, const exp_opts *o, unsigned mode,
                     double ber, json_t *rows) {
    unsigned n = o->quick ? 16 : 64;
    uint64_t b = o->quick ? (uint64_t)16 << 10 : (uint64_t)64 << 10;
    nf_sim_config c;
    nf_sim_config_defaults(&c);
    c.vcs = 4, c.buf_flits = 64, c.pkt_flits = 8, c.seed = o->seed, c.threads = 1;
    c.switching = (nf_sim_switching)mode;
    c.ber = ber;
    nf_sim *s = NULL;
    nf_mcast *m = NULL;
    nf_diag d = {{0}, 0, {0}};
    int rc =
        nf_sim_new(f, h, &c, nf_sim_routing_find("minhop"), nf_sim_traffic_find("uniform"), &s, &d);
    uint32_t E = rc ? 0 : nf_sim_endpoints(s);
    nf_node mem[64];
    uint32_t off[2] = {0, n};
    for (unsigned i = 0; i < n; i++) /* endpoint e is CA node n_switches + e in a generated gft */
        mem[i] = f->n_switches + (nf_node)((uint64_t)i * E / n);
    nf_groups g = {.n = 1, .off = off, .member = mem};
    if (!rc) rc = nf_mcast_route(f, h, &g, nf_mcast_engine_find("minihop"), &m, &d);
    if (!rc) rc = nf_sim_set_mcast(s, &g, m);
    nf_sim_msg msg = {.src = 0, .bytes = b, .kind = NF_SIM_MCAST, .group = 0};
    uint32_t id;
    nf_sim_script_result r;
    if (!rc) rc = nf_sim_post(s, &msg, &id);
    if (!rc) rc = nf_sim_run_script(s, UINT64_MAX, &r);
    if (rc) {
        nf_mcast_free(m);
        nf_sim_free(s);
        return nf_app_report(rc, &d);
    }
    nf_sim_msg_times t;
    nf_sim_msg_times_of(s, id, &t);
    nf_sim_counts k;
    nf_sim_get_counts(s, &k);
    nf_mcast_free(m);
    nf_sim_free(s);
    if (r.done != 1 || r.deadlock || r.unfinished) {
        fprintf(stderr, "netfab exp: link-errors: the multicast did not complete\n");
        return NF_EXIT_FAIL;
    }
    uint64_t payload = (uint64_t)c.flit_bytes * c.pkt_flits, pkts = (b + payload - 1) / payload;
    uint64_t clean = pkts * c.pkt_flits * (n - 1);
    json_t *x =
        json_pack("{s:s, s:s, s:f, s:I, s:I, s:I, s:I, s:I, s:I, s:I}", "case", "multicast", "mode",
                  mode_names[mode], "ber", ber, "members", (json_int_t)n, "msg_bytes",
                  (json_int_t)b, "cycles", (json_int_t)(t.done - t.released), "replayed_flits",
                  (json_int_t)k.replayed, "discarded_flits", (json_int_t)k.discarded,
                  "member_flits", (json_int_t)k.delivered, "clean_flits", (json_int_t)clean);
    if (!x) return nf_app_report(NF_ENOMEM, NULL);
    json_array_append_new(rows, x);
    return NF_EXIT_OK;
}

int exp_link_errors(const exp_opts *o, json_t *rows) {
    nf_fabric *f;
    nf_hops *h;
    /* --quick: 8 leaves of 8 endpoints, 8 spines, 2 sibling links, two rails (exp faults') */
    int rc = nf_app_fabric(o->quick ? "gft:leaves=8,nodes=8,spines=8,sib=2,rails=2"
                                    : "gft:preset=sunway-proto",
                           o->threads, &f, &h);
    if (rc) return rc;
    nf_link bad[BAD_LINKS];
    pick_bad(f, bad);
    static const double full_bers[] = {0, 1e-8, 1e-7, 1e-6, 1e-5, 1e-4};
    static const double quick_bers[] = {0, 1e-5};
    const double *bers = o->quick ? quick_bers : full_bers;
    size_t nb = o->quick ? 2 : 6, total = nb * 3 * 2, done = 0;
    for (int all = 1; all >= 0 && rc == NF_EXIT_OK; all--)
        for (unsigned m = 0; m < 3 && rc == NF_EXIT_OK; m++)
            for (size_t b = 0; b < nb && rc == NF_EXIT_OK; b++, done++) {
                exp_progress((double)done / (double)total, "link-errors: %s, %s, BER %g",
                             all ? "all links" : "4 bad links", mode_names[m], bers[b]);
                rc = row(f, h, o, all, bad, m, bers[b], rows);
            }
    for (unsigned m = 0; m < 3 && rc == NF_EXIT_OK; m++)
        for (size_t b = 0; b < nb && rc == NF_EXIT_OK; b++) {
            exp_progress(0.99, "link-errors: multicast, %s, BER %g", mode_names[m], bers[b]);
            rc = mcast_row(f, h, o, m, bers[b], rows);
        }
    nf_hops_free(h);
    nf_fabric_free(f);
    return rc;
}
