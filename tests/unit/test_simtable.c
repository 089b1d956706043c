/* SPDX-License-Identifier: MIT */
/* Routings and forwarding tables both ways (sim.h: nf_sim_routing_from_uft, nf_sim_routing_to_uft,
 * nf_sim_trace_path): OpenSM's real tables traced hop for hop against ibtracert's output and
 * simulated with every packet delivered; tables broken by hand (a loop, a hole, a dead port)
 * traced, refused by deliverable and counted lost by the simulator, which still ends; the tables
 * of ftable simulated as a second implementation that must agree to the last figure; minhop's
 * tables against minhop held to its first candidate; dfmin's paths against its tables'. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "real.h"

#include "netfab/gen.h"
#include "netfab/io.h"
#include "netfab/sim.h"
#include "netfab/uft.h"
#include "sim/sim_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static nf_fabric *gen(const char *topo) {
    nf_fabric *f = NULL;
    nf_diag d = {{0}, 0, {0}};
    if (nf_topo_build(topo, NULL, &f, &d)) fail_msg("%s: %s", topo, d.msg);
    return f;
}

static nf_hops *hops_of(const nf_fabric *f) {
    nf_hops *h = NULL;
    assert_int_equal(nf_hops_compute(f, 1, &h), 0);
    return h;
}

static nf_uft *load_tables(const nf_fabric *f, const char *path) {
    nf_uft *t = NULL;
    nf_diag d = {{0}, 0, {0}};
    if (nf_uft_load(f, path, NULL, NULL, &t, &d))
        fail_msg("%s: %s:%d: %s", path, d.file, d.line, d.msg);
    return t;
}

static nf_sim_routing *lft(const nf_uft *t) {
    nf_sim_routing *r = NULL;
    assert_int_equal(nf_sim_routing_from_uft(t, &r, NULL), 0);
    return r;
}

static nf_uft *dump(const nf_fabric *f, const nf_hops *h, const char *routing) {
    nf_uft *t = NULL;
    nf_diag d = {{0}, 0, {0}};
    if (nf_sim_routing_to_uft(f, h, nf_sim_routing_find(routing), NULL, &t, &d))
        fail_msg("%s: %s", routing, d.msg);
    return t;
}

static nf_node named(const nf_fabric *f, const char *name) {
    for (nf_node n = 0; n < f->n_nodes; n++)
        if (strcmp(nf_node_name(f, n), name) == 0) return n;
    fail_msg("no node '%s'", name);
    return NF_NONE;
}

static nf_sim_trace trace(const nf_fabric *f, const nf_hops *h, const nf_sim_routing *r,
                          nf_node src, nf_node dst) {
    nf_sim_trace t;
    nf_diag d = {{0}, 0, {0}};
    if (nf_sim_trace_path(f, h, r, NULL, src, 0, dst, 0, &t, &d))
        fail_msg("trace %s -> %s: %s", nf_node_name(f, src), nf_node_name(f, dst), d.msg);
    return t;
}

/* The switch port of s that leads to node w (its first). */
static unsigned port_to(const nf_fabric *f, nf_node s, nf_node w) {
    for (unsigned p = 1; p <= f->nports[s]; p++)
        if (f->peer[nf_port_index(f, s, p)] == w) return p;
    fail_msg("%s has no port to %s", nf_node_name(f, s), nf_node_name(f, w));
    return 0;
}

static nf_node ca_switch(const nf_fabric *f, nf_node ca) {
    return f->peer[nf_port_index(f, ca, 1)];
}

/* ---- real tables -------------------------------------------------------------------------- */

/* The ibtracert fixture (xgft-updn.ibtracert-5-28), from LID 5 ("xgft node 0") to LID 28
 * ("xgft node 23") through the tables OpenSM's updn engine installed: out of port 1 into
 * "xgft L1 0" port 1, out of 14 into "xgft L2 1" port 1, out of 2 into "xgft L1 1" port 14,
 * out of 12 into the CA. */
static void test_real_ibtracert(void **state) {
    (void)state;
    nf_fabric *f = real_fabric(REAL "xgft.ibnet");
    nf_hops *h = hops_of(f);
    nf_uft *t = load_tables(f, REAL "xgft-updn.opensm-lfts.dump");
    nf_sim_routing *r = lft(t);
    nf_sim_trace tr = trace(f, h, r, named(f, "xgft node 0"), named(f, "xgft node 23"));
    static const struct {
        const char *node;
        uint64_t guid;
        unsigned in, out;
    } want[] = {{"xgft node 0", 0x0002c90000000050ull, 0, 1},
                {"xgft L1 0", 0x0002c90000000010ull, 1, 14},
                {"xgft L2 1", 0x0002c90000000040ull, 1, 2},
                {"xgft L1 1", 0x0002c90000000020ull, 14, 12},
                {"xgft node 23", 0x0002c900000001c0ull, 1, 0}};
    assert_int_equal(tr.end, NF_SIM_TRACE_REACHED);
    assert_int_equal(tr.n, 5);
    for (size_t k = 0; k < tr.n; k++) {
        assert_string_equal(nf_node_name(f, tr.hop[k].node), want[k].node);
        assert_int_equal(f->guid[tr.hop[k].node], want[k].guid);
        assert_int_equal(tr.hop[k].in_port, want[k].in);
        assert_int_equal(tr.hop[k].out_port, want[k].out);
    }
    nf_sim_trace_fini(&tr);
    nf_sim_routing_free(r);
    nf_uft_free(t);
    nf_hops_free(h);
    nf_fabric_free(f);
}

/* OpenSM's tables of both fabrics and engines: every CA reaches every other CA and every switch
 * (trace), and a simulation at a low load delivers every packet: none lost, none dropped, not
 * saturated, no deadlock. */
static void test_real_tables_deliver(void **state) {
    (void)state;
    static const struct {
        const char *fabric, *tables;
    } cases[] = {{"xgft.ibnet", "xgft-updn.opensm-lfts.dump"},
                 {"xgft.ibnet", "xgft-minhop.opensm-lfts.dump"},
                 {"xgft.ibnet", "xgft-updn.dump_fts"},
                 {"torus3x3.ibnet", "torus3x3-minhop.opensm-lfts.dump"},
                 {"torus3x3.ibnet", "torus3x3-updn.dump_fts"}};
    char path[512];
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        snprintf(path, sizeof path, REAL "%s", cases[i].fabric);
        nf_fabric *f = real_fabric(path);
        nf_hops *h = hops_of(f);
        snprintf(path, sizeof path, REAL "%s", cases[i].tables);
        nf_uft *t = load_tables(f, path);
        nf_sim_routing *r = lft(t);
        unsigned traced = 0;
        for (nf_node a = f->n_switches; a < f->n_nodes; a++)
            for (nf_node b = 0; b < f->n_nodes; b++) {
                if (a == b) continue;
                nf_sim_trace tr = trace(f, h, r, a, b);
                if (tr.end != NF_SIM_TRACE_REACHED)
                    fail_msg("%s: %s -> %s: %s", cases[i].tables, nf_node_name(f, a),
                             nf_node_name(f, b), nf_sim_trace_end_name(tr.end));
                assert_int_equal(tr.hop[tr.n - 1].node, b);
                nf_sim_trace_fini(&tr);
                traced++;
            }
        assert_int_equal(traced, f->n_cas * (f->n_nodes - 1));
        nf_sim_config c;
        nf_sim_config_defaults(&c);
        nf_sim *s;
        nf_diag d = {{0}, 0, {0}};
        if (nf_sim_new(f, h, &c, r, nf_sim_traffic_find("uniform"), &s, &d))
            fail_msg("%s: %s", cases[i].tables, d.msg);
        nf_sim_injection inj = {.load = 0.05};
        nf_sim_phase ph = {.warmup = 200, .window = 2000, .drain_max = 20000};
        nf_sim_result res;
        assert_int_equal(nf_sim_run(s, &inj, &ph, NULL, NULL, &res), 0);
        assert_true(res.packets > 100);
        assert_true(res.lost_frac == 0.0);
        assert_int_equal(res.dropped_pkts, 0);
        assert_int_equal(res.unroutable, 0);
        assert_false(res.saturated);
        assert_false(res.deadlock);
        nf_sim_free(s);
        nf_sim_routing_free(r);
        nf_uft_free(t);
        nf_hops_free(h);
        nf_fabric_free(f);
    }
}

/* ---- broken tables -------------------------------------------------------------------------- */

/* A fat tree (k=4: 16 CAs, 2 on each edge switch) routed by minhop's tables, then broken for one
 * destination d: its own edge switch E sends it up to an aggregation switch A, which sends it
 * back down to E. Every packet for d ends in E and A's loop. */
typedef struct broken {
    nf_fabric *f;
    nf_hops *h;
    nf_uft *t;
    nf_node d, e, a;
    uint16_t lid;
} broken;

static broken make_broken(void) {
    broken b;
    b.f = gen("fattree:k=4");
    b.h = hops_of(b.f);
    b.t = dump(b.f, b.h, "minhop");
    b.d = b.f->n_switches + 5;
    b.e = ca_switch(b.f, b.d);
    b.a = NF_NONE;
    for (unsigned p = 1; p <= b.f->nports[b.e] && b.a == NF_NONE; p++) {
        nf_node w = b.f->peer[nf_port_index(b.f, b.e, p)];
        if (nf_is_switch(b.f, w)) b.a = w;
    }
    assert_int_not_equal(b.a, NF_NONE);
    b.lid = b.f->port_lid[nf_port_index(b.f, b.d, 1)];
    assert_int_equal(nf_uft_set(b.t, b.e, b.lid, port_to(b.f, b.e, b.a)), 0);
    assert_int_equal(nf_uft_set(b.t, b.a, b.lid, port_to(b.f, b.a, b.e)), 0);
    return b;
}

static void free_broken(broken *b) {
    nf_uft_free(b->t);
    nf_hops_free(b->h);
    nf_fabric_free(b->f);
}

/* Uniform traffic over 16 CAs: each source picks one of the 15 others, so d receives 1/16 of
 * the packets; those are lost at their source (never sent), the rest delivered, nothing left in
 * the network, and the run ends. */
static nf_sim_result run_broken(const broken *b, const nf_sim_routing *r, nf_sim_counts *after) {
    nf_sim_config c;
    nf_sim_config_defaults(&c);
    nf_sim *s;
    nf_diag d = {{0}, 0, {0}};
    if (nf_sim_new(b->f, b->h, &c, r, nf_sim_traffic_find("uniform"), &s, &d))
        fail_msg("%s", d.msg);
    nf_sim_injection inj = {.load = 0.2};
    nf_sim_phase ph = {.warmup = 500, .window = 20000, .drain_max = 20000};
    nf_sim_result res;
    assert_int_equal(nf_sim_run(s, &inj, &ph, NULL, NULL, &res), 0);
    /* then no more traffic: whatever is in the network must leave it (none circles) */
    nf_sim_injection none = {0};
    assert_int_equal(nf_sim_set_injection(s, &none), 0);
    assert_int_equal(nf_sim_step(s, 2000), 0);
    nf_sim_get_counts(s, after);
    nf_sim_free(s);
    return res;
}

static void test_loop(void **state) {
    (void)state;
    broken b = make_broken();
    nf_sim_routing *r = lft(b.t);
    /* from d's neighbour on E: E -> A -> E, the loop from E's first visit */
    nf_node src = b.d ^ 1; /* CAs come in pairs per edge switch */
    assert_int_equal(ca_switch(b.f, src), b.e);
    nf_sim_trace tr = trace(b.f, b.h, r, src, b.d);
    assert_int_equal(tr.end, NF_SIM_TRACE_LOOP);
    assert_int_equal(tr.n, 4);
    assert_int_equal(tr.hop[1].node, b.e);
    assert_int_equal(tr.hop[2].node, b.a);
    assert_int_equal(tr.hop[3].node, b.e);
    assert_int_equal(tr.loop_at, 1);
    nf_sim_trace_fini(&tr);
    /* from a CA in another pod: down into E's pod by either aggregation switch, then round the
     * same two switches, the repeated one closing it */
    src = b.f->n_switches + 12;
    assert_int_not_equal(ca_switch(b.f, src), b.e);
    tr = trace(b.f, b.h, r, src, b.d);
    assert_int_equal(tr.end, NF_SIM_TRACE_LOOP);
    nf_node last = tr.hop[tr.n - 1].node;
    assert_true(last == b.e || last == b.a);
    assert_int_equal(tr.hop[tr.n - 2].node, last == b.e ? b.a : b.e);
    assert_int_equal(tr.hop[tr.loop_at].node, last);
    assert_int_equal(tr.loop_at, tr.n - 3);
    nf_sim_trace_fini(&tr);
    /* deliverable: no from every switch; another destination is untouched */
    void *ctx;
    nf_sim_config c;
    nf_sim_config_defaults(&c);
    assert_int_equal(r->init(&ctx, r->data, b.f, b.f->link_state, b.h, &c, NULL), 0);
    for (nf_node s = 0; s < b.f->n_switches; s++) {
        assert_false(r->deliverable(ctx, s, b.d, b.e));
        assert_true(r->deliverable(ctx, s, src, ca_switch(b.f, src)));
    }
    r->fini(ctx);
    nf_sim_counts k;
    nf_sim_result res = run_broken(&b, r, &k);
    if (res.lost_frac < 0.05 || res.lost_frac > 0.075)
        fail_msg("lost_frac %.4f, want about 1/16", res.lost_frac);
    assert_false(res.deadlock);
    assert_false(res.saturated);
    assert_int_equal(res.dropped_pkts, 0);
    assert_int_equal(k.in_flight, 0);
    assert_int_equal(k.injected, k.delivered + k.dropped);
    /* The deadlock checker, like the engine, takes a packet at E as ejected, so this loop
     * makes no dependency; one between A and a core switch C above it does: a packet for d
     * climbs the VCs round it up to the top one, whose channels then wait on each other. The
     * checker sees that cycle, and ends. */
    uint32_t cyc = 0;
    nf_diag d = {{0}, 0, {0}};
    assert_int_equal(nf_sim_check_deadlock(b.f, b.h, r, &c, &cyc, NULL, NULL, &d), 0);
    assert_int_equal(cyc, 0);
    nf_sim_routing_free(r);
    nf_uft_free(b.t);
    b.t = dump(b.f, b.h, "minhop");
    nf_node core = NF_NONE;
    for (unsigned p = 1; p <= b.f->nports[b.a] && core == NF_NONE; p++) {
        nf_node w = b.f->peer[nf_port_index(b.f, b.a, p)];
        if (nf_is_switch(b.f, w) && w != b.e && b.f->level[w] > b.f->level[b.a]) core = w;
    }
    assert_int_not_equal(core, NF_NONE);
    assert_int_equal(nf_uft_set(b.t, b.a, b.lid, port_to(b.f, b.a, core)), 0);
    assert_int_equal(nf_uft_set(b.t, core, b.lid, port_to(b.f, core, b.a)), 0);
    r = lft(b.t);
    assert_int_equal(nf_sim_check_deadlock(b.f, b.h, r, &c, &cyc, NULL, NULL, &d), 0);
    assert_true(cyc > 0);
    nf_sim_routing_free(r);
    free_broken(&b);
}

/* The same tables with A's entry for d removed instead: a hole at A, the packet never back at
 * E; and with A's link to E down: a port with no link. */
static void test_hole_and_dead_port(void **state) {
    (void)state;
    broken b = make_broken();
    assert_int_equal(nf_uft_set(b.t, b.a, b.lid, NF_UFT_NONE), 0);
    nf_sim_routing *r = lft(b.t);
    nf_node src = b.d ^ 1;
    nf_sim_trace tr = trace(b.f, b.h, r, src, b.d);
    assert_int_equal(tr.end, NF_SIM_TRACE_HOLE);
    assert_int_equal(tr.n, 3);
    assert_int_equal(tr.hop[1].node, b.e);
    assert_int_equal(tr.hop[2].node, b.a);
    assert_int_equal(tr.hop[2].out_port, 0);
    assert_int_equal(tr.hop[2].candidates, 0);
    nf_sim_trace_fini(&tr);
    nf_sim_counts k;
    nf_sim_result res = run_broken(&b, r, &k);
    if (res.lost_frac < 0.05 || res.lost_frac > 0.075)
        fail_msg("lost_frac %.4f, want about 1/16", res.lost_frac);
    assert_int_equal(k.in_flight, 0);
    nf_sim_routing_free(r);
    /* minhop's tables but E's entry for d toward A, whose link is then down: from d's
     * neighbour on E, out of a port with no link up */
    nf_uft_free(b.t);
    b.t = dump(b.f, b.h, "minhop");
    unsigned pa = port_to(b.f, b.e, b.a);
    assert_int_equal(nf_uft_set(b.t, b.e, b.lid, pa), 0);
    b.f->link_state[b.f->port_link[nf_port_index(b.f, b.e, pa)]] = NF_LINK_DOWN;
    r = lft(b.t);
    tr = trace(b.f, b.h, r, src, b.d);
    assert_int_equal(tr.end, NF_SIM_TRACE_NO_LINK);
    assert_int_equal(tr.hop[tr.n - 1].node, b.e);
    assert_int_equal(tr.hop[tr.n - 1].out_port, pa);
    nf_sim_trace_fini(&tr);
    void *ctx;
    nf_sim_config c;
    nf_sim_config_defaults(&c);
    assert_int_equal(r->init(&ctx, r->data, b.f, b.f->link_state, b.h, &c, NULL), 0);
    assert_false(r->deliverable(ctx, ca_switch(b.f, src), b.d, b.e));
    r->fini(ctx);
    nf_sim_routing_free(r);
    free_broken(&b);
}

/* ---- a routing's tables against the routing -------------------------------------------------- */

static void same_results(const nf_sim_result *a, const nf_sim_result *b, const char *what) {
#define SAME(x)                                                                                    \
    if (a->x != b->x) fail_msg("%s: " #x " %g vs %g", what, (double)a->x, (double)b->x)
    SAME(offered);
    SAME(accepted);
    SAME(lat_mean);
    SAME(lat_p99);
    SAME(msg_lat_mean);
    SAME(net_lat_mean);
    SAME(hops_mean);
    SAME(minimal_frac);
    SAME(link_util_mean);
    SAME(link_util_max);
    SAME(saturated);
    SAME(deadlock);
    SAME(packets);
    SAME(cycles);
    SAME(flit_hops);
    SAME(unroutable);
    SAME(lost_frac);
    SAME(dropped_pkts);
#undef SAME
}

static nf_sim_result sim_once(const nf_fabric *f, const nf_hops *h, const nf_sim_routing *r,
                              double load) {
    nf_sim_config c;
    nf_sim_config_defaults(&c);
    c.seed = 7;
    nf_sim *s;
    nf_diag d = {{0}, 0, {0}};
    if (nf_sim_new(f, h, &c, r, nf_sim_traffic_find("uniform"), &s, &d)) fail_msg("%s", d.msg);
    nf_sim_injection inj = {.load = load};
    nf_sim_phase ph = {.warmup = 300, .window = 3000, .drain_max = 20000};
    nf_sim_result res;
    assert_int_equal(nf_sim_run(s, &inj, &ph, NULL, NULL, &res), 0);
    nf_sim_free(s);
    return res;
}

/* ftable gives one port per switch and destination and VC = hops taken, as lft: its tables,
 * simulated, must give the same figures to the last bit, below and above saturation. */
static void test_ftable_tables_agree(void **state) {
    (void)state;
    static const char *const topos[] = {"fattree:k=4", "torus:4x4,c=2"};
    for (size_t i = 0; i < 2; i++) {
        nf_fabric *f = gen(topos[i]);
        nf_hops *h = hops_of(f);
        nf_uft *t = dump(f, h, "ftable");
        nf_sim_routing *r = lft(t);
        static const double loads[] = {0.1, 0.5, 0.9};
        for (size_t k = 0; k < 3; k++) {
            nf_sim_result a = sim_once(f, h, nf_sim_routing_find("ftable"), loads[k]);
            nf_sim_result b = sim_once(f, h, r, loads[k]);
            assert_true(a.packets > 0);
            same_results(&a, &b, topos[i]);
        }
        nf_sim_routing_free(r);
        nf_uft_free(t);
        nf_hops_free(h);
        nf_fabric_free(f);
    }
}

/* minhop held to its first candidate: the same routing as its tables. Unheld it offers every
 * min-hop port and takes the next when the first is busy, which tables cannot say. */
static unsigned mh_first_route(void *ctx, nf_node sw, unsigned in_port, unsigned in_vc,
                               unsigned hops, const nf__sim_pkt *p, nf_sim_cand *out,
                               unsigned max) {
    (void)max;
    return nf_sim_routing_find("minhop")->route(ctx, sw, in_port, in_vc, hops, p, out, 1);
}

static void test_minhop_first_candidate(void **state) {
    (void)state;
    nf_fabric *f = gen("fattree:k=4");
    nf_hops *h = hops_of(f);
    nf_uft *t = dump(f, h, "minhop");
    nf_sim_routing *r = lft(t);
    nf_sim_routing first = *nf_sim_routing_find("minhop");
    first.route = mh_first_route;
    for (double load = 0.2; load < 1; load += 0.3) {
        nf_sim_result a = sim_once(f, h, &first, load);
        nf_sim_result b = sim_once(f, h, r, load);
        same_results(&a, &b, "minhop, first candidate");
    }
    /* and the unheld minhop does differ above a light load: the test can tell */
    nf_sim_result a = sim_once(f, h, nf_sim_routing_find("minhop"), 0.7);
    nf_sim_result b = sim_once(f, h, r, 0.7);
    assert_true(a.accepted != b.accepted || a.lat_mean != b.lat_mean);
    nf_sim_routing_free(r);
    nf_uft_free(t);
    nf_hops_free(h);
    nf_fabric_free(f);
}

/* dfmin's VCs are classes (before and after the global hop), not hops taken, so its tables do
 * not simulate to the same latencies; its paths must be the same, pair by pair. */
static void test_dfmin_paths(void **state) {
    (void)state;
    nf_fabric *f = gen("dragonfly:a=4,p=2,h=2");
    nf_hops *h = hops_of(f);
    nf_uft *t = dump(f, h, "dfmin");
    nf_sim_routing *r = lft(t);
    const nf_sim_routing *dm = nf_sim_routing_find("dfmin");
    for (nf_node a = f->n_switches; a < f->n_nodes; a++)
        for (nf_node b = f->n_switches; b < f->n_nodes; b++) {
            if (a == b) continue;
            nf_sim_trace x = trace(f, h, dm, a, b), y = trace(f, h, r, a, b);
            assert_int_equal(x.end, NF_SIM_TRACE_REACHED);
            assert_int_equal(y.end, NF_SIM_TRACE_REACHED);
            assert_int_equal(x.n, y.n);
            assert_true(x.n <= 6); /* CA, at most 4 switches (local, global, local), CA */
            for (size_t k = 0; k < x.n; k++) {
                assert_int_equal(x.hop[k].node, y.hop[k].node);
                assert_int_equal(x.hop[k].out_port, y.hop[k].out_port);
            }
            nf_sim_trace_fini(&x);
            nf_sim_trace_fini(&y);
        }
    nf_sim_result a = sim_once(f, h, dm, 0.1), b = sim_once(f, h, r, 0.1);
    assert_true(a.hops_mean == b.hops_mean);
    assert_true(a.offered == b.offered);
    assert_true(b.lost_frac == 0.0);
    nf_sim_routing_free(r);
    nf_uft_free(t);
    nf_hops_free(h);
    nf_fabric_free(f);
}

/* What the dump rests on: a routing marked fixed_ports gives the same first usable port at a
 * switch whatever the input port, input VC and hops. Checked for every marked routing of the
 * registry on a fabric it takes, every switch, CA destination, cabled input port, VC and hops
 * 0..3. */
static void test_fixed_ports_hold(void **state) {
    (void)state;
    static const char *const topos[] = {"fattree:k=4", "torus:4x4,c=2", "dragonfly:a=4,p=2,h=2"};
    unsigned tried = 0;
    for (size_t i = 0; i < 3; i++) {
        nf_fabric *f = gen(topos[i]);
        nf_hops *h = hops_of(f);
        nf_sim_config c;
        nf_sim_config_defaults(&c);
        for (size_t k = 0; k < nf_sim_routing_count(); k++) {
            const nf_sim_routing *r = nf_sim_routing_at(k);
            void *ctx;
            if (!r->fixed_ports || r->init(&ctx, r->data, f, f->link_state, h, &c, NULL)) continue;
            tried++;
            for (nf_node s = 0; s < f->n_switches; s++)
                for (nf_node ca = f->n_switches; ca < f->n_nodes; ca++) {
                    nf_node dsw = ca_switch(f, ca);
                    if (dsw == s) continue;
                    uint32_t rs = 0;
                    nf__sim_pkt pk = {.dst_ca = ca, .dst_sw = dsw, .rs = &rs};
                    int first = -1;
                    for (unsigned in = 1; in <= f->nports[s]; in++)
                        for (unsigned v = 0; v < c.vcs; v++)
                            for (unsigned hp = 0; hp < 4; hp++) {
                                nf_sim_cand cand[NF_SIM_MAX_RADIX];
                                rs = 0;
                                unsigned n =
                                    r->route(ctx, s, in, v, hp, &pk, cand, NF_SIM_MAX_RADIX);
                                int port = n ? cand[0].port : 0;
                                if (first < 0) first = port;
                                if (port != first)
                                    fail_msg("%s on %s: switch %u to %u: port %d, then %d "
                                             "(in %u vc %u hops %u)",
                                             r->name, topos[i], s, ca, first, port, in, v, hp);
                            }
                }
            r->fini(ctx);
        }
        nf_hops_free(h);
        nf_fabric_free(f);
    }
    assert_true(tried >= 7); /* minhop, updown, table2, ftable; dor, dor-plain; dfmin */
}

/* Refusals: a routing that chooses per packet has no tables; tables of one fabric do not route
 * another. */
static void test_refusals(void **state) {
    (void)state;
    nf_fabric *f = gen("dragonfly:a=4,p=2,h=2"), *g = gen("fattree:k=4");
    nf_hops *h = hops_of(f), *hg = hops_of(g);
    static const char *const adaptive[] = {"val", "ugal-l", "ugal-g", "ugal-lt", "par", "qadapt"};
    for (size_t i = 0; i < 6; i++) {
        nf_uft *t = (nf_uft *)1;
        nf_diag d = {{0}, 0, {0}};
        assert_int_equal(
            nf_sim_routing_to_uft(f, h, nf_sim_routing_find(adaptive[i]), NULL, &t, &d), NF_EINVAL);
        assert_null(t);
        assert_non_null(strstr(d.msg, "per packet"));
    }
    nf_uft *t = dump(f, h, "dfmin");
    nf_sim_routing *r = lft(t);
    nf_sim *s = NULL;
    nf_diag d = {{0}, 0, {0}};
    assert_int_equal(nf_sim_new(g, hg, NULL, r, nf_sim_traffic_find("uniform"), &s, &d), NF_EINVAL);
    assert_non_null(strstr(d.msg, "another fabric"));
    nf_sim_routing_free(r);
    nf_sim_routing_free((nf_sim_routing *)nf_sim_routing_find("minhop")); /* a no-op */
    assert_non_null(nf_sim_routing_find("minhop")->name);
    nf_uft_free(t);
    nf_hops_free(h);
    nf_hops_free(hg);
    nf_fabric_free(f);
    nf_fabric_free(g);
}

/* Tables written in OpenSM's layout and read back are the same, entry for entry, and the lft
 * routing over them dumps them unchanged. */
static void test_write_read_back(void **state) {
    (void)state;
    nf_fabric *f = gen("torus:4x4,c=2");
    nf_hops *h = hops_of(f);
    nf_uft *t = dump(f, h, "dor");
    char *buf = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&buf, &len);
    assert_int_equal(nf_uft_write(t, m), 0);
    fclose(m);
    nf_uft *u = NULL;
    nf_diag d = {{0}, 0, {0}};
    if (nf_uft_parse(f, buf, len, "mem", NULL, NULL, &u, &d)) fail_msg("%d: %s", d.line, d.msg);
    nf_sim_routing *r = lft(u);
    nf_uft *v = NULL;
    assert_int_equal(nf_sim_routing_to_uft(f, h, r, NULL, &v, NULL), 0);
    unsigned entries = 0;
    for (nf_node s = 0; s < f->n_switches; s++)
        for (unsigned l = 1; l <= nf_uft_top_lid(t); l++) {
            unsigned p = nf_uft_get(t, s, (uint16_t)l);
            assert_int_equal(nf_uft_get(u, s, (uint16_t)l), p);
            assert_int_equal(nf_uft_get(v, s, (uint16_t)l), p);
            entries += p != NF_UFT_NONE;
        }
    /* every switch holds every LID: 16 switches x (16 switch LIDs + 32 CA LIDs) */
    assert_int_equal(entries, 16 * 48);
    free(buf);
    nf_sim_routing_free(r);
    nf_uft_free(v);
    nf_uft_free(u);
    nf_uft_free(t);
    nf_hops_free(h);
    nf_fabric_free(f);
}

/* Two implementations of one question: does a set of tables have a credit loop between CAs on
 * one VL? nf_uft_check walks the tables' routes; the simulator's deadlock checker explores the
 * lft routing's states with one VC. They must agree on every table here: OpenSM's (a loop-free
 * fat tree, and a 3x3 torus whose CA routes have none), and netfab's minhop and dor-plain tables
 * of the 4x4 and 5x5 tori (min-hop routes of a torus close loops), a fat tree's and a ring's. */
static void test_credit_loop_two_ways(void **state) {
    (void)state;
    const struct {
        const char *fabric, *tables; /* tables: a file of REAL, or a routing to dump */
        bool loop;                   /* known: OpenSM's fat tree and the tori's min-hop routes */
    } cases[] = {
        {REAL "xgft.ibnet", REAL "xgft-minhop.dump_fts", false},
        {REAL "xgft.ibnet", REAL "xgft-updn.dump_fts", false},
        {REAL "torus3x3.ibnet", REAL "torus3x3-minhop.dump_fts", false},
        {REAL "torus3x3.ibnet", REAL "torus3x3-updn.dump_fts", false},
        {"fattree:k=4", "minhop", false},
        {"fattree:k=4", "updown", false},
        {"torus:4x4,c=1", "minhop", true},
        {"torus:5x5,c=1", "minhop", true},
        {"torus:5x5,c=1", "dor-plain", true},
        {"torus:6,c=1", "minhop", true},
        {"torus:3,c=1", "minhop", false},
    };
    nf_sim_config c;
    nf_sim_config_defaults(&c);
    c.vcs = 1;
    c.threads = 1;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        bool file = strchr(cases[i].fabric, '/') != NULL;
        nf_fabric *f = file ? real_fabric(cases[i].fabric) : gen(cases[i].fabric);
        nf_hops *h = hops_of(f);
        nf_uft *t = file ? load_tables(f, cases[i].tables) : dump(f, h, cases[i].tables);
        nf_uft_report rep;
        assert_int_equal(nf_uft_check(t, 0, &rep, NULL), NF_OK);
        assert_int_equal(rep.delivered, rep.routes);
        nf_sim_routing *r = lft(t);
        uint32_t cyc;
        uint64_t nv, ne;
        nf_diag d = {{0}, 0, {0}};
        assert_int_equal(nf_sim_check_deadlock(f, h, r, &c, &cyc, &nv, &ne, &d), NF_OK);
        if ((rep.cycle_len > 0) != cases[i].loop || (cyc > 0) != cases[i].loop)
            fail_msg("%s %s: tables' check %u, simulator's checker %u, want a loop: %d",
                     cases[i].fabric, cases[i].tables, rep.cycle_len, cyc, cases[i].loop);
        nf_sim_routing_free(r);
        nf_uft_report_fini(&rep);
        nf_uft_free(t);
        nf_hops_free(h);
        nf_fabric_free(f);
    }
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_real_ibtracert),
        cmocka_unit_test(test_real_tables_deliver),
        cmocka_unit_test(test_loop),
        cmocka_unit_test(test_hole_and_dead_port),
        cmocka_unit_test(test_ftable_tables_agree),
        cmocka_unit_test(test_minhop_first_candidate),
        cmocka_unit_test(test_dfmin_paths),
        cmocka_unit_test(test_fixed_ports_hold),
        cmocka_unit_test(test_refusals),
        cmocka_unit_test(test_write_read_back),
        cmocka_unit_test(test_credit_loop_two_ways),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
