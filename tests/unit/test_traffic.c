/* SPDX-License-Identifier: MIT */
/* BookSim2's traffic patterns (bs-*) against destinations worked out by hand from its
 * traffic.cpp definitions, on BookSim2's node numbers: on a generated torus with one endpoint
 * per switch, netfab's endpoint e = row-major coordinates (a0, a1), last fastest, is BookSim2's
 * node a0 + k0 * a1; then a simulation whose pattern sends some nodes to themselves. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "netfab/gen.h"
#include "netfab/sim.h"
#include "simrig.h"
#include "sim/sim_internal.h"

#include <stdlib.h>
#include <string.h>

/* a fixed "random" source for dest(): the same word every call */
static uint64_t fixed_word(void *ud) { return *(uint64_t *)ud; }

typedef struct pat {
    rig r;
    const nf_sim_traffic *t;
    void *ctx;
    nf_node *ep;
    uint32_t E;
} pat;

static pat pat_make(const char *topo, const char *name) {
    pat p;
    p.r = rig_make(topo, "minhop", "uniform", rig_defaults());
    p.t = nf_sim_traffic_find(name);
    assert_non_null(p.t);
    p.E = nf_sim_endpoints(p.r.s);
    p.ep = malloc(p.E * sizeof *p.ep);
    assert_non_null(p.ep);
    for (uint32_t e = 0; e < p.E; e++)
        p.ep[e] = nf_sim_endpoint_ca(p.r.s, e);
    nf_diag d = {{0}, 0, {0}};
    assert_int_equal(p.t->init(&p.ctx, p.r.f, p.E, p.ep, 7, &d), 0);
    return p;
}

static uint32_t dest(pat *p, uint32_t src) {
    uint64_t w = 0;
    return p->t->dest(p->ctx, src, fixed_word, &w);
}

static void pat_unmake(pat *p) {
    p->t->fini(p->ctx);
    free(p->ep);
    rig_unmake(&p->r);
}

/* 8x4: node number n = a0 + 8 a1; tornado adds 3 (ceil(8/2) - 1) to a0 and 1 to a1 */
static void test_digits(void **state) {
    (void)state;
    pat p = pat_make("torus:8x4,c=1", "bs-tornado");
    assert_int_equal(dest(&p, 0), 13); /* (0,0) -> (3,1) */
    assert_int_equal(dest(&p, 31), 8); /* (7,3) -> (2,0) */
    assert_int_equal(dest(&p, 6), 19); /* (1,2) -> (4,3) */
    assert_int_equal(dest(&p, 20), 1); /* (5,0) -> (0,1) */
    pat_unmake(&p);
    p = pat_make("torus:8x4,c=1", "bs-neighbor");
    assert_int_equal(dest(&p, 0), 5);  /* (0,0) -> (1,1) */
    assert_int_equal(dest(&p, 31), 0); /* (7,3) -> (0,0) */
    assert_int_equal(dest(&p, 6), 11); /* (1,2) -> (2,3) */
    pat_unmake(&p);
    /* a 1-D ring of 8 (and any fabric not a one-per-switch torus): the index, radix E */
    p = pat_make("torus:8,c=1", "bs-tornado");
    assert_int_equal(dest(&p, 6), 1);
    pat_unmake(&p);
    /* a k-ary n-tree: n digits of radix k (4-ary 3-tree: tornado adds 1 to each) */
    p = pat_make("xgft:h=3,m=4.4.4,w=1.4.4", "bs-tornado");
    assert_int_equal(dest(&p, 0), 21); /* 000 -> 111 in base 4 */
    assert_int_equal(dest(&p, 63), 0); /* 333 -> 000 */
    assert_int_equal(dest(&p, 6), 27); /* 012 -> 123 */
    pat_unmake(&p);
    p = pat_make("dragonfly:a=4,p=2,h=2", "bs-neighbor"); /* else the index, radix E */
    assert_int_equal(dest(&p, 3), 4);
    assert_int_equal(dest(&p, p.E - 1), 0);
    pat_unmake(&p);
}

/* 8x4 has 32 nodes, 5 bits: bitcomp, bitrev and shuffle on n; transpose needs an even count */
static void test_bits(void **state) {
    (void)state;
    pat p = pat_make("torus:8x4,c=1", "bs-bitcomp");
    assert_int_equal(dest(&p, 0), 31); /* n 0 -> 31 = (7,3) */
    assert_int_equal(dest(&p, 1), 30); /* (0,1): n 8 -> 23 = (7,2) */
    pat_unmake(&p);
    p = pat_make("torus:8x4,c=1", "bs-bitrev");
    assert_int_equal(dest(&p, 1), 8); /* n 01000 -> 00010 = (2,0) */
    assert_int_equal(dest(&p, 4), 2); /* (1,0): n 00001 -> 10000 = 16 = (0,2) */
    pat_unmake(&p);
    p = pat_make("torus:8x4,c=1", "bs-shuffle");
    assert_int_equal(dest(&p, 1), 2); /* n 01000 -> 10000 = (0,2) */
    assert_int_equal(dest(&p, 4), 8); /* (1,0): n 1 -> 2 = (2,0) */
    assert_int_equal(dest(&p, 3), 6); /* (0,3): n 11000 -> 10001 = 17 = (1,2) */
    pat_unmake(&p);
    p = pat_make("torus:8x4,c=1", "bs-transpose");
    assert_int_equal(dest(&p, 1), UINT32_MAX);
    pat_unmake(&p);
    p = pat_make("torus:4x4,c=1", "bs-transpose"); /* (a0,a1) -> (a1,a0), itself on the diagonal */
    assert_int_equal(dest(&p, 1), 4);
    assert_int_equal(dest(&p, 7), 13);
    assert_int_equal(dest(&p, 5), 5);
    pat_unmake(&p);
}

/* uniform draws among all E endpoints, the source too; randperm is a permutation */
static void test_random(void **state) {
    (void)state;
    pat p = pat_make("torus:4x4,c=1", "bs-uniform");
    uint64_t w = 0;
    assert_int_equal(p.t->dest(p.ctx, 3, fixed_word, &w), 0);
    w = UINT64_MAX;
    assert_int_equal(p.t->dest(p.ctx, 3, fixed_word, &w), 15);
    w = (uint64_t)3 << 60; /* 3/16 of the way */
    assert_int_equal(p.t->dest(p.ctx, 3, fixed_word, &w), 3);
    assert_true(p.t->self);
    pat_unmake(&p);
    assert_false(nf_sim_traffic_find("uniform")->self);
    p = pat_make("torus:8x8,c=1", "bs-randperm");
    unsigned seen[64] = {0};
    for (uint32_t e = 0; e < p.E; e++) {
        uint32_t d = dest(&p, e);
        assert_true(d < p.E);
        seen[d]++;
    }
    for (uint32_t e = 0; e < p.E; e++)
        assert_int_equal(seen[e], 1);
    pat_unmake(&p);
}

/* a pattern that sends a quarter of the nodes to themselves: with bs-transpose on 4x4 they send
 * too (accepted = offered); netfab's transpose skips them (three quarters) */
static void test_self_sends(void **state) {
    (void)state;
    nf_sim_phase ph = {.warmup = 1000, .window = 5000, .drain_max = 5000};
    nf_sim_injection inj = {.load = 0.2, .msg_pkts = 1};
    double acc[2];
    const char *names[2] = {"bs-transpose", "transpose"};
    for (int i = 0; i < 2; i++) {
        nf_sim_config c = rig_defaults();
        c.seed = 5;
        rig r = rig_make("torus:4x4,c=1", "dor", names[i], c);
        nf_sim_result res;
        assert_int_equal(nf_sim_run(r.s, &inj, &ph, NULL, NULL, &res), 0);
        assert_false(res.saturated);
        acc[i] = res.accepted;
        if (i == 0) assert_true(res.accepted > 0.95 * res.offered);
        rig_unmake(&r);
    }
    assert_true(acc[1] > 0.7 * 0.2 && acc[1] < 0.8 * 0.2);
    assert_true(acc[0] > 0.19);
}

/* The Q-adaptive authors' grid patterns on dragonfly:a=4,p=2,h=2, a grid of 2 (endpoints a
 * switch) x 4 (switches a group) x 9 (groups): endpoint 0 at (0, 0, 0); stencil3d sends to -x 1,
 * +x 1, -y (0, 3, 0) = 6, +y (0, 1, 0) = 2, -z (0, 0, 8) = 64, +z (0, 0, 1) = 8, then again;
 * endpoint 13 = (1, 2, 1) to 12, 12, 11, 15, 5, 21. fft3d: endpoint 13 to 21, 29, ..., 69, then
 * 5 (every other group at (1, 2)), and again. A fabric of one group (a torus) is refused by
 * fft3d; on it stencil3d is 2-D. */
static void test_grid(void **state) {
    (void)state;
    pat p = pat_make("dragonfly:a=4,p=2,h=2", "stencil3d");
    const uint32_t want0[] = {1, 1, 6, 2, 64, 8, 1}, want13[] = {12, 12, 11, 15, 5, 21};
    for (size_t i = 0; i < 7; i++)
        assert_int_equal(dest(&p, 0), want0[i]);
    for (size_t i = 0; i < 6; i++)
        assert_int_equal(dest(&p, 13), want13[i]);
    pat_unmake(&p);
    p = pat_make("dragonfly:a=4,p=2,h=2", "fft3d");
    for (uint32_t k = 0; k < 2 * 8; k++) {
        uint32_t z = (1 + 1 + k % 8) % 9;
        assert_int_equal(dest(&p, 13), 5 + 8 * z);
    }
    pat_unmake(&p);
    rig r = rig_make("torus:4x4,c=2", "dor", "uniform", rig_defaults());
    uint32_t E = nf_sim_endpoints(r.s);
    nf_node *ep = malloc(E * sizeof *ep);
    assert_non_null(ep);
    for (uint32_t e = 0; e < E; e++)
        ep[e] = nf_sim_endpoint_ca(r.s, e);
    void *ctx = NULL;
    nf_diag d = {{0}, 0, {0}};
    assert_int_equal(nf_sim_traffic_find("fft3d")->init(&ctx, r.f, E, ep, 7, &d), NF_EINVAL);
    assert_non_null(strstr(d.msg, "one group"));
    const nf_sim_traffic *st = nf_sim_traffic_find("stencil3d");
    assert_int_equal(st->init(&ctx, r.f, E, ep, 7, &d), 0); /* 2 x 16 x 1: no z neighbour */
    uint64_t w = 0;
    const uint32_t want[] = {1, 1, 30, 2, 1};
    for (size_t i = 0; i < 5; i++)
        assert_int_equal(st->dest(ctx, 0, fixed_word, &w), want[i]);
    st->fini(ctx);
    free(ep);
    rig_unmake(&r);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_digits), cmocka_unit_test(test_bits),
        cmocka_unit_test(test_random), cmocka_unit_test(test_self_sends),
        cmocka_unit_test(test_grid),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
