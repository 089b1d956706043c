/* SPDX-License-Identifier: MIT */
/* Q-adaptive as netfab first read it (src/sim/qroute.c, "qadapt-nf") against answers known without
 * it: deadlock freedom by its VC classes (and a cycle once the classes are taken away), the channel
 * bound of the worst case (one global channel carries a group's minimal traffic: 1/(a p) of the
 * injection), minimal routing's own figures in an empty network, its learned tables' size by hand,
 * and the same figures for any number of threads and for every run of one simulator. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "netfab/gen.h"
#include "netfab/sim.h"
#include "simrig.h"
#include "sim/sim_internal.h"

#include <string.h>

static nf_sim_config config(void) {
    nf_sim_config c;
    nf_sim_config_defaults(&c);
    c.q_explore = 0;
    c.seed = 7;
    return c;
}

static nf_sim_result point(rig *r, double load) {
    nf_sim_injection inj = {.load = load};
    nf_sim_phase ph = {.warmup = 1000, .window = 3000, .drain_max = 3000};
    nf_sim_result res;
    assert_int_equal(nf_sim_run(r->s, &inj, &ph, NULL, NULL, &res), 0);
    res.wall_s = 0;
    return res;
}

/* qadapt with its VC classes taken away: every candidate may use every VC. */
static unsigned classless_route(void *ctx, nf_node sw, unsigned in_port, unsigned in_vc,
                                unsigned hops, const nf__sim_pkt *p, nf_sim_cand *out,
                                unsigned max) {
    unsigned n = nf__sim_qadapt_nf.route(ctx, sw, in_port, in_vc, hops, p, out, max);
    for (unsigned i = 0; i < n; i++)
        out[i].vc_lo = 0, out[i].vc_hi = 2;
    return n;
}

static uint32_t cycle_of(const char *topo, const nf_sim_routing *r, unsigned vcs) {
    nf_fabric *f;
    nf_hops *h;
    nf_diag d = {{0}, 0, {0}};
    assert_int_equal(nf_topo_build(topo, NULL, &f, &d), 0);
    assert_int_equal(nf_hops_compute(f, 1, &h), 0);
    nf_sim_config c = config();
    c.vcs = vcs;
    uint32_t cyc = 1;
    assert_int_equal(nf_sim_check_deadlock(f, h, r, &c, &cyc, NULL, NULL, &d), 0);
    nf_hops_free(h);
    nf_fabric_free(f);
    return cyc;
}

/* Deadlock freedom comes from the classes: with them no cycle on five Dragonflies (both global
 * arrangements, 1 to 3 global links a router), 3 and 4 VCs; without them a cycle. */
static void test_deadlock_free(void **state) {
    (void)state;
    const char *topos[] = {"dragonfly:a=4,p=2,h=2", "dragonfly:a=4,p=2,h=2,arr=consecutive",
                           "dragonfly:a=6,p=3,h=3", "dragonfly:a=6,p=3,h=3,arr=consecutive",
                           "dragonfly:a=4,p=2,h=1"};
    for (size_t i = 0; i < sizeof topos / sizeof *topos; i++)
        for (unsigned v = 3; v <= 4; v++)
            if (cycle_of(topos[i], &nf__sim_qadapt_nf, v))
                fail_msg("qadapt-nf on %s, %u VCs: a cycle", topos[i], v);
    nf_sim_routing classless = nf__sim_qadapt_nf;
    classless.route = classless_route;
    assert_true(cycle_of("dragonfly:a=4,p=2,h=2", &classless, 3) > 0);
}

/* In an empty network the learned estimates are the pipeline's own times, so the minimal way
 * stays the best: every packet minimal, and the latency of dfmin (whose ways are the same). */
static void test_empty_network_is_minimal(void **state) {
    (void)state;
    nf_sim_config c = config();
    c.vcs = 4;
    rig q = rig_make("dragonfly:a=4,p=2,h=2", "qadapt-nf", "uniform", c);
    rig m = rig_make("dragonfly:a=4,p=2,h=2", "dfmin", "uniform", c);
    nf_sim_result rq = point(&q, 0.01), rm = point(&m, 0.01);
    if (rq.minimal_frac != 1.0) fail_msg("qadapt minimal share %.4f at 0.01", rq.minimal_frac);
    if (rq.hops_mean != rm.hops_mean || rq.lat_mean > rm.lat_mean * 1.01 ||
        rq.lat_mean < rm.lat_mean * 0.99)
        fail_msg("qadapt %.3f hops, %.3f cycles; dfmin %.3f, %.3f", rq.hops_mean, rq.lat_mean,
                 rm.hops_mean, rm.lat_mean);
    rig_unmake(&q);
    rig_unmake(&m);
}

/* The worst case (every endpoint of group i to group i + 1): the minimal way has one global
 * channel for a group's a p endpoints, 1/(a p) = 0.125 of the injection on the 72-node
 * Dragonfly. dfmin saturates there; qadapt learns the long ways and carries 0.3, sending at most
 * 0.125 / 0.3 of it minimally, with its routers' own queues in the choice (the default) and on
 * the learned estimates alone; with those alone and learning all but off (rate 1e-6) its routers
 * keep about their empty-network estimates, stay mostly minimal and saturate like dfmin. */
static void test_worst_case_learned(void **state) {
    (void)state;
    for (int k = 0; k < 3; k++) {
        nf_sim_config c = config();
        c.vcs = 4;
        if (k) c.q_local = 0;
        if (k == 2) c.q_alpha = 1e-6;
        rig q = rig_make("dragonfly:a=4,p=2,h=2", "qadapt-nf", "worstcase", c);
        nf_sim_result r = point(&q, 0.3);
        bool carried = !r.saturated && r.accepted > 0.29 && r.minimal_frac <= 0.125 / 0.3;
        bool stuck = r.saturated && r.accepted < 0.14 && r.minimal_frac > 0.8;
        if (k < 2 ? !carried : !stuck)
            fail_msg("qadapt worst case 0.3, case %d: accepted %.3f, minimal %.3f, saturated %d", k,
                     r.accepted, r.minimal_frac, r.saturated);
        rig_unmake(&q);
    }
}

/* The estimates travel as events and each router learns on its own thread: 1, 2 and 3 threads
 * give the same figures; and every run starts from the same tables, so two runs of one
 * simulator give the same figures too. */
static void test_threads_and_runs(void **state) {
    (void)state;
    nf_sim_result first = {0};
    for (unsigned th = 1; th <= 3; th++) {
        nf_sim_config c = config();
        c.vcs = 3, c.pkt_flits = 2, c.threads = th, c.q_explore = 0.01;
        rig r = rig_make("dragonfly:a=6,p=3,h=3", "qadapt-nf", "worstcase", c);
        nf_sim_result res = point(&r, 0.3);
        if (th == 1) {
            first = res;
            assert_true(first.minimal_frac < 0.5); /* it learned the long ways */
            nf_sim_result again = point(&r, 0.3);
            assert_memory_equal(&first, &again, sizeof again);
        } else {
            assert_memory_equal(&first, &res, sizeof res);
        }
        rig_unmake(&r);
    }
}

/* The tables' size by hand: dragonfly:a=4,p=2,h=2 has 9 groups of 4 routers, each router 3 local
 * and 2 global ports: 9 + 4 rows of 5 floats, 260 bytes; a row per destination router, 36 of
 * them, 720. a=8,p=4,h=4: 33 + 8 rows of 7 + 4 ports, 1,804 bytes; 264 routers, 11,616. Other
 * routings keep nothing. */
static void test_memory(void **state) {
    (void)state;
    const struct {
        const char *topo;
        uint64_t bytes, flat;
    } k[] = {{"dragonfly:a=4,p=2,h=2", 260, 720}, {"dragonfly:a=8,p=4,h=4", 1804, 11616}};
    for (size_t i = 0; i < 2; i++) {
        nf_sim_config c = config();
        rig r = rig_make(k[i].topo, "qadapt-nf", "uniform", c);
        nf_sim_injection inj = {.load = 0.01};
        nf_sim_phase ph = {.warmup = 0, .window = 10, .drain_max = 100};
        nf_sim_result res;
        assert_int_equal(nf_sim_run(r.s, &inj, &ph, NULL, NULL, &res), 0);
        assert_int_equal(res.state_bytes, k[i].bytes);
        assert_int_equal(res.state_bytes_flat, k[i].flat);
        rig_unmake(&r);
    }
    rig r = rig_make("dragonfly:a=4,p=2,h=2", "dfmin", "uniform", config());
    nf_sim_result res = point(&r, 0.01);
    assert_int_equal(res.state_bytes, 0);
    rig_unmake(&r);
}

/* What it refuses: a fabric without groups, too few VCs, rates outside their range. */
static void test_refusals(void **state) {
    (void)state;
    struct {
        const char *topo;
        unsigned vcs;
        double alpha, explore, bias;
        const char *why;
    } k[] = {{"fattree:k=4", 3, 0.2, 0, 1, "routes Dragonflies"},
             {"dragonfly:a=4,p=2,h=2", 2, 0.2, 0, 1, "at least 3 VCs"},
             {"dragonfly:a=4,p=2,h=2", 3, 0, 0, 1, "q_alpha 0: a number from 1e-06 to 1"},
             {"dragonfly:a=4,p=2,h=2", 3, 1.5, 0, 1, "q_alpha 1.5: a number from 1e-06 to 1"},
             {"dragonfly:a=4,p=2,h=2", 3, 0.2, -0.1, 1, "q_explore -0.1"},
             {"dragonfly:a=4,p=2,h=2", 3, 0.2, 0, 0.5, "q_bias 0.5: a number from 1 to 100"}};
    for (size_t i = 0; i < sizeof k / sizeof *k; i++) {
        nf_sim_config c = config();
        c.vcs = k[i].vcs, c.q_alpha = k[i].alpha, c.q_explore = k[i].explore, c.q_bias = k[i].bias;
        rig r;
        nf_diag d = {{0}, 0, {0}};
        assert_int_equal(rig_try(k[i].topo, "qadapt-nf", "uniform", &c, &r, &d), NF_EINVAL);
        if (!strstr(d.msg, k[i].why)) fail_msg("case %zu: \"%s\"", i, d.msg);
        assert_null(r.s);
        nf_hops_free(r.h);
        nf_fabric_free(r.f);
    }
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_deadlock_free),
        cmocka_unit_test(test_empty_network_is_minimal),
        cmocka_unit_test(test_worst_case_learned),
        cmocka_unit_test(test_threads_and_runs),
        cmocka_unit_test(test_memory),
        cmocka_unit_test(test_refusals),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
