/* SPDX-License-Identifier: MIT */
/* Q-adaptive as its authors built it (src/sim/qadapt.c, "qadapt") against answers worked out by
 * hand from the rules read in their SST/Merlin code: the threshold at the source router and at
 * the intermediate group's first router, the two learning rates, what a router tells back, the
 * five VC classes by hops taken and the deadlock freedom they give, the table's size, and the
 * same figures for any number of threads. The routing's own functions are called directly on a
 * 72-node Dragonfly, with hops of 2 (local) and 10 (global) cycles in an empty network. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "netfab/gen.h"
#include "netfab/sim.h"
#include "simrig.h"
#include "sim/sim_internal.h"

#include <math.h>
#include <string.h>

static nf_sim_config config(void) {
    nf_sim_config c;
    nf_sim_config_defaults(&c);
    c.vcs = 5, c.router_delay = 1, c.lat_local = 1, c.lat_global = 9; /* hops of 2 and 10 */
    c.q_explore = 0;
    c.seed = 7;
    return c;
}

typedef struct bench {
    nf_fabric *f;
    nf_hops *h;
    void *ctx;
} bench;

static bench open_bench(const char *topo, const nf_sim_config *c) {
    bench b = {0};
    nf_diag d = {{0}, 0, {0}};
    assert_int_equal(nf_topo_build(topo, NULL, &b.f, &d), 0);
    assert_int_equal(nf_hops_compute(b.f, 1, &b.h), 0);
    assert_int_equal(nf__sim_qadapt.init(&b.ctx, NULL, b.f, b.f->link_state, b.h, c, &d), 0);
    return b;
}

static void close_bench(bench *b) {
    nf__sim_qadapt.fini(b->ctx);
    nf_hops_free(b->h);
    nf_fabric_free(b->f);
}

/* The port of switch s whose link goes to switch w (global or not as asked); 0 when none. */
static unsigned port_to(const nf_fabric *f, nf_node s, nf_node w) {
    for (uint32_t e = f->sw_adj_off[s]; e < f->sw_adj_off[s + 1]; e++)
        if (f->sw_adj[e] == w) return f->sw_adj_port[e];
    return 0;
}

/* A switch of group g other than skip with (want) or without a global link to group to. */
static nf_node switch_in(const nf_fabric *f, int32_t g, int32_t to, bool want, nf_node skip) {
    for (nf_node s = 0; s < f->n_switches; s++) {
        if (f->supernode[s] != g || s == skip) continue;
        bool has = false;
        for (uint32_t e = f->sw_adj_off[s]; e < f->sw_adj_off[s + 1]; e++)
            has |= f->link_cls[f->sw_adj_link[e]] == NF_LINK_GLOBAL &&
                   f->supernode[f->sw_adj[e]] == to;
        if (has == want) return s;
    }
    return NF_NONE;
}

/* Switch x has a global link to group g. */
static bool df_has_link(const nf_fabric *f, nf_node x, int32_t g) {
    for (uint32_t e = f->sw_adj_off[x]; e < f->sw_adj_off[x + 1]; e++)
        if (f->link_cls[f->sw_adj_link[e]] == NF_LINK_GLOBAL && f->supernode[f->sw_adj[e]] == g)
            return true;
    return false;
}

/* The first host port of switch s. */
static unsigned host_port(const nf_fabric *f, nf_node s) {
    for (unsigned p = 1; p <= f->port_off[s + 1] - f->port_off[s]; p++) {
        nf_node w = f->peer[nf_port_index(f, s, p)];
        if (w != NF_NONE && w >= f->n_switches) return p;
    }
    return 0;
}

static unsigned route1(bench *b, nf_node sw, unsigned in_port, unsigned hops, nf_node dst_sw,
                       uint32_t salt, uint32_t *rs, nf_sim_cand *c) {
    nf__sim_pkt p = {.dst_ca = NF_NONE, .dst_sw = dst_sw, .salt = salt, .rs = rs};
    return nf__sim_qadapt.route(b->ctx, sw, in_port, 0, hops, &p, c, 8);
}

/* The source router. In an empty network its direct global link to the destination group is 10
 * cycles, every other port 12: minimal. Worse news moves an entry by 0.04 of the error, better
 * news by 0.2. Raised to 14.9 the minimal port is 19.5% worse than the best (12): still minimal;
 * at 15.1, 20.5%: the best, the first port of 12. Two returns of 0 then bring it to 12.08, by
 * 0.2 each (0.04 would leave it at 13.9): minimal again. What the router tells back: the least
 * entry of the row. On class 0 (no hop taken). */
static void test_source_rule(void **state) {
    (void)state;
    nf_sim_config c = config();
    bench b = open_bench("dragonfly:a=4,p=2,h=2", &c);
    const nf_fabric *f = b.f;
    nf_node s = 0;
    int32_t gd = -1; /* a group s reaches by its own global link */
    unsigned pmin = 0;
    for (uint32_t e = f->sw_adj_off[s]; e < f->sw_adj_off[s + 1] && gd < 0; e++)
        if (f->link_cls[f->sw_adj_link[e]] == NF_LINK_GLOBAL)
            gd = f->supernode[f->sw_adj[e]], pmin = f->sw_adj_port[e];
    nf_node t = switch_in(f, gd, -1, false, NF_NONE); /* a switch of gd */
    unsigned hp = host_port(f, s);
    assert_true(gd >= 0 && t != NF_NONE && hp);
    nf_sim_cand cand[8];
    uint32_t rs = 0;
    assert_int_equal(route1(&b, s, hp, 0, t, 1, &rs, cand), 1);
    assert_int_equal(cand[0].port, pmin);
    assert_int_equal(cand[0].vc_lo, 0);
    assert_int_equal(cand[0].vc_hi, 0);
    assert_false(rs & NF__RS_NONMIN);
    uint32_t row;
    nf__sim_pkt p = {.dst_ca = NF_NONE, .dst_sw = t, .rs = &rs};
    float est = nf__sim_qadapt.estimate(b.ctx, s, hp, 0, 0, &p, &row);
    assert_true(fabsf(est - 10.0f) < 1e-4f);
    /* the first port other than pmin: its entry is 12, the best when the minimal is worse */
    unsigned pbest = 0;
    for (uint32_t e = f->sw_adj_off[s]; e < f->sw_adj_off[s + 1] && !pbest; e++)
        if (f->sw_adj_port[e] != pmin) pbest = f->sw_adj_port[e];
    const struct {
        float value, least; /* the return, and the row's least entry after it */
        bool minimal;
    } steps[] = {{132.5f, 12.0f, true}, /* 10 + 0.04 x 122.5 = 14.9 */
                 {19.9f, 12.0f, false}, /* 14.9 + 0.04 x 5 = 15.1 */
                 {0.0f, 12.0f, true},   /* 15.1 - 0.2 x 15.1 = 12.08 */
                 {0.0f, 9.664f, true}}; /* 12.08 - 0.2 x 12.08 = 9.664 (0.04: 13.9) */
    for (size_t i = 0; i < sizeof steps / sizeof *steps; i++) {
        nf__sim_qadapt.learn(b.ctx, s, pmin, row, steps[i].value);
        rs = 0;
        assert_int_equal(route1(&b, s, hp, 0, t, 1, &rs, cand), 1);
        if (steps[i].minimal != (cand[0].port == pmin))
            fail_msg("step %zu: port %u (minimal %u, best %u)", i, cand[0].port, pmin, pbest);
        if (!steps[i].minimal) {
            assert_int_equal(cand[0].port, pbest);
            assert_true(rs & NF__RS_NONMIN);
        }
        est = nf__sim_qadapt.estimate(b.ctx, s, hp, 0, 0, &p, &row);
        if (fabsf(est - steps[i].least) > 1e-3f)
            fail_msg("step %zu: told back %.4f, want %.4f", i, est, steps[i].least);
    }
    close_bench(&b);
}

/* The intermediate group's first router m (arrived over a global link, one hop taken, no global
 * link of its own to the destination group): a local port to a router drawn for the packet,
 * against the minimal (local) port. Both 12 in an empty network: minimal for every draw. The
 * minimal entry raised to 18 is 33% worse: still minimal (threshold 0.35); to 20, 40%: every
 * draw that is not the minimal router goes there, by a local port, on class 1. A router of the
 * group reached by a local hop routes minimally whatever its table says. */
static void test_intermediate_rule(void **state) {
    (void)state;
    nf_sim_config c = config();
    bench b = open_bench("dragonfly:a=4,p=2,h=2", &c);
    const nf_fabric *f = b.f;
    int32_t gd = 5; /* the destination group; m in a group without a link of its own there */
    nf_node t = switch_in(f, gd, -1, false, NF_NONE), m = NF_NONE, gate = NF_NONE;
    unsigned in_port = 0;
    for (nf_node x = 0; x < f->n_switches && !in_port; x++) {
        if (f->supernode[x] == gd || switch_in(f, f->supernode[x], gd, false, NF_NONE) != x)
            continue;
        for (uint32_t e = f->sw_adj_off[x]; e < f->sw_adj_off[x + 1] && !in_port; e++)
            if (f->link_cls[f->sw_adj_link[e]] == NF_LINK_GLOBAL &&
                f->supernode[f->sw_adj[e]] != gd)
                m = x, in_port = f->sw_adj_port[e];
    }
    assert_true(m != NF_NONE && t != NF_NONE);
    gate = switch_in(f, f->supernode[m], gd, true, NF_NONE);
    unsigned pmin = port_to(f, m, gate);
    assert_true(pmin);
    nf_sim_cand cand[8];
    uint32_t row;
    uint32_t rs = 1u << 16; /* from the first endpoint of its router */
    nf__sim_pkt p = {.dst_ca = NF_NONE, .dst_sw = t, .rs = &rs};
    (void)nf__sim_qadapt.estimate(b.ctx, m, in_port, 0, 1, &p, &row);
    const struct {
        float value;
        bool detours;
    } steps[] = {{12.0f, false}, {162.0f, false}, {68.0f, true}}; /* 12, 18, 20 */
    for (size_t i = 0; i < sizeof steps / sizeof *steps; i++) {
        nf__sim_qadapt.learn(b.ctx, m, pmin, row, steps[i].value);
        unsigned detours = 0, draws = 64;
        for (uint32_t salt = 0; salt < draws; salt++) {
            uint32_t w = rs;
            assert_int_equal(route1(&b, m, in_port, 1, t, salt, &w, cand), 1);
            assert_int_equal(cand[0].vc_lo, 1);
            assert_int_equal(cand[0].vc_hi, 1);
            nf_node to = f->peer[nf_port_index(f, m, cand[0].port)];
            assert_int_equal(f->supernode[to], f->supernode[m]); /* a local port either way */
            detours += cand[0].port != pmin;
        }
        if (steps[i].detours ? detours < draws / 2 || detours == draws : detours)
            fail_msg("step %zu: %u of %u draws detoured", i, detours, draws);
    }
    /* a local hop into the same router: minimal, whatever the table */
    nf_node other = switch_in(f, f->supernode[m], gd, false, m);
    assert_true(other != NF_NONE);
    for (uint32_t salt = 0; salt < 16; salt++) { /* (one hop taken, as in a source group) */
        uint32_t w = rs;
        assert_int_equal(route1(&b, m, port_to(f, m, other), 1, t, salt, &w, cand), 1);
        assert_int_equal(cand[0].port, pmin);
        assert_int_equal(cand[0].vc_lo, 1);
    }
    close_bench(&b);
}

/* The checker is given every minimal port, not only the one the table would pick: on a
 * Dragonfly of 5 groups, with more than one global link between a pair of groups, a packet past
 * its decisions (two hops, over a local link) may leave by any of the router's global links to
 * the destination's group, or when it has none, by the local link to any router that has one;
 * the checker's candidates are all of them, and some routers have several. */
static void test_checker_minimal(void **state) {
    (void)state;
    nf_sim_config c = config();
    bench b = open_bench("dragonfly:a=4,p=2,h=2,g=5", &c);
    const nf_fabric *f = b.f;
    unsigned several = 0;
    for (nf_node sw = 0; sw < f->n_switches; sw++)
        for (nf_node t = 0; t < f->n_switches; t++) {
            if (f->supernode[t] == f->supernode[sw]) continue;
            unsigned want = 0, lp = 0;
            bool direct = false;
            for (uint32_t e = f->sw_adj_off[sw]; e < f->sw_adj_off[sw + 1]; e++)
                direct |= f->link_cls[f->sw_adj_link[e]] == NF_LINK_GLOBAL &&
                          f->supernode[f->sw_adj[e]] == f->supernode[t];
            for (uint32_t e = f->sw_adj_off[sw]; e < f->sw_adj_off[sw + 1]; e++) {
                nf_node w = f->sw_adj[e];
                bool global = f->link_cls[f->sw_adj_link[e]] == NF_LINK_GLOBAL;
                if (!global) lp = f->sw_adj_port[e];
                if (direct)
                    want += global && f->supernode[w] == f->supernode[t];
                else
                    want += !global && df_has_link(f, w, f->supernode[t]);
            }
            nf_sim_cand cand[16];
            nf__sim_pkt p = {.dst_ca = NF_NONE, .dst_sw = t};
            unsigned n = nf__sim_qadapt.route(b.ctx, sw, lp, 2, 2, &p, cand, 16);
            if (n != want) fail_msg("switch %u to %u: %u candidates, want %u", sw, t, n, want);
            several += want > 1;
        }
    assert_true(several > 0);
    close_bench(&b);
}

/* What a router of the destination group tells back: 0 for a packet that came over a global
 * link, nothing (NAN) for one that came over a local link; with router rows, 0 at the
 * destination switch only. */
static void test_estimates(void **state) {
    (void)state;
    nf_sim_config c = config();
    bench b = open_bench("dragonfly:a=4,p=2,h=2", &c);
    const nf_fabric *f = b.f;
    nf_node t = 0, gate = switch_in(f, 0, 3, true, NF_NONE), peer = NF_NONE;
    unsigned gport = 0, lport = port_to(f, t, 1);
    for (nf_node x = 0; x < f->n_switches && !gport; x++)
        if (f->supernode[x] == 0)
            for (uint32_t e = f->sw_adj_off[x]; e < f->sw_adj_off[x + 1]; e++)
                if (f->link_cls[f->sw_adj_link[e]] == NF_LINK_GLOBAL)
                    t = x, gport = f->sw_adj_port[e], peer = f->sw_adj[e];
    (void)gate, (void)peer;
    lport = port_to(f, t, t == 0 ? 1 : 0);
    uint32_t rs = 0, row;
    nf__sim_pkt p = {.dst_ca = NF_NONE, .dst_sw = t, .rs = &rs};
    assert_true(nf__sim_qadapt.estimate(b.ctx, t, gport, 0, 1, &p, &row) == 0.0f);
    assert_true(isnan(nf__sim_qadapt.estimate(b.ctx, t, lport, 0, 2, &p, &row)));
    close_bench(&b);
    c.q_row = NF_SIM_Q_ROW_ROUTER;
    b = open_bench("dragonfly:a=4,p=2,h=2", &c);
    assert_true(nf__sim_qadapt.estimate(b.ctx, t, lport, 0, 2, &p, &row) == 0.0f);
    assert_int_equal(row, t);
    nf_node u = t == 0 ? 1 : 0; /* another switch of the group: its table's least entry */
    p.dst_sw = u;
    float e = nf__sim_qadapt.estimate(b.ctx, t, gport, 0, 1, &p, &row);
    assert_true(fabsf(e - 2.0f) < 1e-4f); /* one local hop, by the link to it */
    close_bench(&b);
}

static uint32_t cycle_of(const char *topo, const nf_sim_routing *r, nf_sim_config c) {
    nf_fabric *f;
    nf_hops *h;
    nf_diag d = {{0}, 0, {0}};
    assert_int_equal(nf_topo_build(topo, NULL, &f, &d), 0);
    assert_int_equal(nf_hops_compute(f, 1, &h), 0);
    uint32_t cyc = 1;
    assert_int_equal(nf_sim_check_deadlock(f, h, r, &c, &cyc, NULL, NULL, &d), 0);
    nf_hops_free(h);
    nf_fabric_free(f);
    return cyc;
}

/* qadapt with its classes taken away: every hop may use every VC. */
static unsigned classless_route(void *ctx, nf_node sw, unsigned in_port, unsigned in_vc,
                                unsigned hops, const nf__sim_pkt *p, nf_sim_cand *out,
                                unsigned max) {
    unsigned n = nf__sim_qadapt.route(ctx, sw, in_port, in_vc, hops, p, out, max);
    for (unsigned i = 0; i < n; i++)
        out[i].vc_lo = 0, out[i].vc_hi = 4;
    return n;
}

/* No cycle with the classes on four Dragonflies, 5 and 10 VCs, each row kind and source rule
 * (the 342-node one with the defaults only); a cycle without them. */
static void test_deadlock_free(void **state) {
    (void)state;
    const char *topos[] = {"dragonfly:a=4,p=2,h=2", "dragonfly:a=4,p=2,h=2,arr=consecutive",
                           "dragonfly:a=6,p=3,h=3", "dragonfly:a=4,p=2,h=1"};
    for (size_t i = 0; i < sizeof topos / sizeof *topos; i++)
        for (unsigned k = 0; k < (i == 2 ? 1u : 4u); k++) { /* (the largest: the default) */
            nf_sim_config c = config();
            c.vcs = k == 1 ? 10 : 5;
            c.q_row = k == 2 ? NF_SIM_Q_ROW_ROUTER : NF_SIM_Q_ROW_GROUP_HOST;
            c.q_src_global = k == 3;
            if (cycle_of(topos[i], &nf__sim_qadapt, c))
                fail_msg("qadapt on %s, case %u: a cycle", topos[i], k);
        }
    nf_sim_routing classless = nf__sim_qadapt;
    classless.route = classless_route;
    assert_true(cycle_of("dragonfly:a=4,p=2,h=2", &classless, config()) > 0);
}

/* The table's size by hand. dragonfly:a=4,p=2,h=2: 9 groups x 2 endpoints a router = 18 rows
 * of 3 local + 2 global ports, 360 bytes (a row per destination group: 180; per destination
 * router, 36 rows: 720). a=8,p=4,h=4: 33 x 4 = 132 rows of 7 + 4 ports, 5,808 bytes, half of a
 * row per router's 11,616: the paper's "50% less". */
static void test_memory(void **state) {
    (void)state;
    const struct {
        const char *topo;
        nf_sim_q_row kind;
        uint64_t bytes, flat;
    } k[] = {{"dragonfly:a=4,p=2,h=2", NF_SIM_Q_ROW_GROUP_HOST, 360, 720},
             {"dragonfly:a=4,p=2,h=2", NF_SIM_Q_ROW_GROUP, 180, 720},
             {"dragonfly:a=4,p=2,h=2", NF_SIM_Q_ROW_ROUTER, 720, 720},
             {"dragonfly:a=8,p=4,h=4", NF_SIM_Q_ROW_GROUP_HOST, 5808, 11616}};
    for (size_t i = 0; i < sizeof k / sizeof *k; i++) {
        nf_sim_config c = config();
        c.q_row = k[i].kind;
        rig r = rig_make(k[i].topo, "qadapt", "uniform", c);
        nf_sim_injection inj = {.load = 0.01};
        nf_sim_phase ph = {.warmup = 0, .window = 10, .drain_max = 100};
        nf_sim_result res;
        assert_int_equal(nf_sim_run(r.s, &inj, &ph, NULL, NULL, &res), 0);
        assert_int_equal(res.state_bytes, k[i].bytes);
        assert_int_equal(res.state_bytes_flat, k[i].flat);
        rig_unmake(&r);
    }
}

/* The same figures on 1, 2 and 3 threads, and for two runs of one simulator (each starts from
 * the empty network's tables); under the worst case it takes long ways. */
static void test_threads_and_runs(void **state) {
    (void)state;
    nf_sim_result first = {0};
    for (unsigned th = 1; th <= 3; th++) {
        nf_sim_config c = config();
        c.threads = th, c.q_explore = 0.01;
        rig r = rig_make("dragonfly:a=4,p=2,h=2", "qadapt", "worstcase", c);
        nf_sim_injection inj = {.load = 0.2};
        nf_sim_phase ph = {.warmup = 500, .window = 1500, .drain_max = 3000};
        nf_sim_result res;
        assert_int_equal(nf_sim_run(r.s, &inj, &ph, NULL, NULL, &res), 0);
        res.wall_s = 0;
        if (th == 1) {
            first = res;
            assert_true(first.minimal_frac < 0.5);
            nf_sim_result again;
            assert_int_equal(nf_sim_run(r.s, &inj, &ph, NULL, NULL, &again), 0);
            again.wall_s = 0;
            assert_memory_equal(&first, &again, sizeof again);
        } else {
            assert_memory_equal(&first, &res, sizeof res);
        }
        rig_unmake(&r);
    }
}

/* Fewer than five VCs, a fabric without groups, a rate out of range. */
static void test_refusals(void **state) {
    (void)state;
    struct {
        const char *topo;
        unsigned vcs;
        double alpha2;
        const char *why;
    } k[] = {{"dragonfly:a=4,p=2,h=2", 4, 0.04, "needs at least 5 VCs"},
             {"fattree:k=4", 5, 0.04, "routes Dragonflies"},
             {"dragonfly:a=4,p=2,h=2", 5, 0, "q_alpha2 0: a number from 1e-06 to 1"}};
    for (size_t i = 0; i < sizeof k / sizeof *k; i++) {
        nf_sim_config c = config();
        c.vcs = k[i].vcs, c.q_alpha2 = k[i].alpha2;
        rig r;
        nf_diag d = {{0}, 0, {0}};
        assert_int_equal(rig_try(k[i].topo, "qadapt", "uniform", &c, &r, &d), NF_EINVAL);
        if (!strstr(d.msg, k[i].why)) fail_msg("case %zu: \"%s\"", i, d.msg);
        assert_null(r.s);
        nf_hops_free(r.h);
        nf_fabric_free(r.f);
    }
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_source_rule),      cmocka_unit_test(test_intermediate_rule),
        cmocka_unit_test(test_checker_minimal),  cmocka_unit_test(test_estimates),
        cmocka_unit_test(test_deadlock_free),    cmocka_unit_test(test_memory),
        cmocka_unit_test(test_threads_and_runs), cmocka_unit_test(test_refusals),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
