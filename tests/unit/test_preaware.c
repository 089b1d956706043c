/* SPDX-License-Identifier: MIT */
/* Congestion pre-awareness (nf_sim_config.preaware_cycles) against answers worked by hand: the
 * credit-rate average of a port sent a credit every k cycles, the adaptive choice it changes,
 * the NIC throttle's gaps; and in the engine: a NIC port's rate is the rate it injects at, the
 * measure alone changes no result, the same figures on 1 and 2 threads, bad knobs refused. */
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

static void near(double got, double want, double tol, const char *what) {
    if (fabs(got - want) > tol) fail_msg("%s: got %.12g, want %.12g", what, got, want);
}

/* A credit every k cycles, from cycle 0. By hand, with a = 1/T and b = 1 - a: just after the
 * n-th credit r_n = b^k r_(n-1) + a, so r_n -> a / (1 - b^k), and j cycles later it reads
 * b^j times that; the mean over a period is a (1 - b^k) / ((1 - b^k)(1 - b) k) = 1/k.
 * T = 2, k = 2: a = 1/2, b^2 = 1/4: r = 0.5, 0.625, 0.65625, ... -> (1/2) / (3/4) = 2/3, and
 * one cycle later 1/3: mean 1/2 = 1/k.
 * T = 4, k = 3: a = 1/4, b^3 = 27/64: r -> (1/4) / (37/64) = 16/37, then 12/37, 9/37: mean
 * (16 + 12 + 9) / 37 / 3 = 1/3 = 1/k. */
static void test_rate_hand(void **state) {
    (void)state;
    double r = 0;
    uint64_t at = 0;
    nf__sim_rate_credit(&r, &at, 0, 2, 1);
    near(r, 0.5, 1e-15, "T 2, first credit");
    nf__sim_rate_credit(&r, &at, 2, 2, 1);
    near(r, 0.625, 1e-15, "T 2, second credit");
    nf__sim_rate_credit(&r, &at, 4, 2, 1);
    near(r, 0.65625, 1e-15, "T 2, third credit");
    for (uint64_t t = 6; t <= 200; t += 2)
        nf__sim_rate_credit(&r, &at, t, 2, 1);
    near(r, 2.0 / 3, 1e-12, "T 2, k 2, settled");
    near(nf__sim_rate_read(r, at, 201, 2), 1.0 / 3, 1e-12, "T 2, k 2, a cycle later");
    near(nf__sim_rate_read(r, at, 200, 2), r, 0, "read at the credit's cycle");
    r = 0, at = 0;
    for (uint64_t t = 0; t <= 600; t += 3)
        nf__sim_rate_credit(&r, &at, t, 4, 1);
    near(r, 16.0 / 37, 1e-12, "T 4, k 3, settled");
    double mean = (r + nf__sim_rate_read(r, at, 601, 4) + nf__sim_rate_read(r, at, 602, 4)) / 3;
    near(mean, 1.0 / 3, 1e-12, "T 4, k 3, mean over a period");
    /* two credits in one cycle count twice */
    r = 0, at = 0;
    nf__sim_rate_credit(&r, &at, 5, 4, 1);
    nf__sim_rate_credit(&r, &at, 5, 4, 1);
    near(r, 0.5, 1e-15, "two credits at once");
}

/* Two candidate VCs: A has room 20 on a port owed 12 credits coming back at 0.05 a cycle, B room
 * 18 on a port owed 14 coming back at 0.9. Plain adaptive takes A (20 > 18). With T = 32, A
 * expects min(12, 0.05 x 32) = 1.6 credits back, B min(14, 0.9 x 32) = 14: 21.6 < 32, so B. An
 * idle port (owed 0) expects none: room 20 idle beats room 18 owed 14 at rate 0.05 (18 + 1.6 =
 * 19.6), not at rate 0.1 (18 + 3.2 = 21.2). */
static void test_adaptive_choice(void **state) {
    (void)state;
    double back_a = nf__sim_rate_back(0.05, 12, 32), back_b = nf__sim_rate_back(0.9, 14, 32);
    near(back_a, 1.6, 1e-12, "A's credits back");
    near(back_b, 14, 0, "B's credits back (all it is owed)");
    assert_true(nf__sim_preaware_better(18, back_b, 20, back_a));  /* B beats A */
    assert_false(nf__sim_preaware_better(20, back_a, 18, back_b)); /* A does not beat B */
    near(nf__sim_rate_back(0.7, 0, 32), 0, 0, "an idle port");
    assert_false(nf__sim_preaware_better(18, nf__sim_rate_back(0.05, 14, 32), 20, 0));
    assert_true(nf__sim_preaware_better(18, nf__sim_rate_back(0.1, 14, 32), 20, 0));
    /* equal scores: the more room now (20 + 0 against 16 + 4) */
    assert_true(nf__sim_preaware_better(20, 0, 16, 4));
    assert_false(nf__sim_preaware_better(16, 4, 20, 0));
}

/* The throttle: F = 0.5, buffers of 32 (half: 16 owed), T = 32. Rate 0.25, 1-flit packets, 16
 * owed: ceil(0.5 / 0.0625 - 1) = 7 cycles after each packet, a packet per 8 cycles = 0.25 x 0.25
 * / 0.5. 15 owed, or rate 0.5: none. Rate 0.3, 2-flit packets: 2 (0.5 / 0.09 - 1) = 9.11 -> 10.
 * Rate 0.1, 4 flits: 4 (50 - 1) = 196 -> T = 32; rate 0 -> T; F = 0: never. */
static void test_throttle_hand(void **state) {
    (void)state;
    assert_int_equal(nf__sim_throttle_gap(0.25, 16, 1, 32, 0.5, 32), 7);
    assert_int_equal(nf__sim_throttle_gap(0.25, 15, 1, 32, 0.5, 32), 0);
    assert_int_equal(nf__sim_throttle_gap(0.5, 100, 1, 32, 0.5, 32), 0);
    assert_int_equal(nf__sim_throttle_gap(0.3, 16, 2, 32, 0.5, 32), 10);
    assert_int_equal(nf__sim_throttle_gap(0.1, 16, 4, 32, 0.5, 32), 32);
    assert_int_equal(nf__sim_throttle_gap(0, 16, 1, 32, 0.5, 32), 32);
    assert_int_equal(nf__sim_throttle_gap(0.01, 32, 1, 32, 0, 32), 0);
}

/* In the engine: every credit a NIC port gets back is a flit it sent, so in steady state its
 * average rate is the load it injects at. Uniform 0.4 on a 16-endpoint fat tree, T = 64: the
 * mean over the NIC ports is 0.4 within 0.05 (each port's average has a standard deviation of
 * about sqrt(a / (2 - a) 0.4 x 0.6) = 0.04, a = 1/64; 16 of them: 0.01). */
static void test_nic_rate(void **state) {
    (void)state;
    nf_sim_config c;
    nf_sim_config_defaults(&c);
    c.preaware_cycles = 64, c.seed = 5, c.threads = 1;
    rig r = rig_make("fattree:k=4", "updown", "uniform", c);
    nf_sim_injection inj = {.load = 0.4};
    assert_int_equal(nf_sim_set_injection(r.s, &inj), 0);
    assert_int_equal(nf_sim_step(r.s, 1000), 0);
    double sum = 0;
    uint32_t E = nf_sim_endpoints(r.s);
    for (uint32_t e = 0; e < E; e++)
        sum += nf__sim_port_rate(r.s, nf_port_index(r.f, nf_sim_endpoint_ca(r.s, e), 1));
    near(sum / E, 0.4, 0.05, "NIC ports' mean rate");
    rig_unmake(&r);
}

/* The measure alone changes nothing: without --adaptive and on one rail nothing reads it but
 * the throttle, which never acts at a light load (no NIC port is owed half a buffer); the
 * results equal those without pre-awareness, bit for bit. */
static void test_measure_only(void **state) {
    (void)state;
    nf_sim_config c;
    nf_sim_config_defaults(&c);
    c.seed = 3, c.threads = 1;
    nf_sim_config cp = c;
    cp.preaware_cycles = 16;
    rig a = rig_make("fattree:k=4", "updown", "uniform", c);
    rig b = rig_make("fattree:k=4", "updown", "uniform", cp);
    nf_sim_injection inj = {.load = 0.3};
    nf_sim_phase ph = {.warmup = 200, .window = 800, .drain_max = 3000};
    nf_sim_result ra, rb;
    assert_int_equal(nf_sim_run(a.s, &inj, &ph, NULL, NULL, &ra), 0);
    assert_int_equal(nf_sim_run(b.s, &inj, &ph, NULL, NULL, &rb), 0);
    assert_true(ra.packets > 2000); /* 16 endpoints x 0.3 x 800 = 3,840 */
    ra.wall_s = rb.wall_s = 0;
    assert_memory_equal(&ra, &rb, sizeof ra);
    rig_unmake(&a);
    rig_unmake(&b);
}

/* Pre-awareness everywhere (adaptive choice, the rails, the throttle) under a hot spot that
 * saturates: the same figures on 1 and 2 threads; the figures differ from those without it (it
 * acts), and the class split adds up: the hot endpoint takes its two rails' 2 flits a cycle. */
static void test_threads(void **state) {
    (void)state;
    const char *topo = "gft:leaves=4,nodes=8,spines=4,sib=2,rails=2";
    nf_sim_config c;
    nf_sim_config_defaults(&c);
    c.adaptive = true, c.seed = 13, c.threads = 1, c.preaware_cycles = 32;
    nf_sim_config c2 = c;
    c2.threads = 2;
    nf_sim_config c0 = c;
    c0.preaware_cycles = 0;
    rig a = rig_make(topo, "minhop", "hotspot-set", c);
    rig b = rig_make(topo, "minhop", "hotspot-set", c2);
    rig z = rig_make(topo, "minhop", "hotspot-set", c0);
    nf_sim_injection inj = {.load = 0.6};
    nf_sim_phase ph = {.warmup = 400, .window = 500, .drain_max = 100};
    nf_sim_result ra, rb, rz;
    assert_int_equal(nf_sim_run(a.s, &inj, &ph, NULL, NULL, &ra), 0);
    assert_int_equal(nf_sim_run(b.s, &inj, &ph, NULL, NULL, &rb), 0);
    assert_int_equal(nf_sim_run(z.s, &inj, &ph, NULL, NULL, &rz), 0);
    ra.wall_s = rb.wall_s = rz.wall_s = 0;
    assert_memory_equal(&ra, &rb, sizeof ra);
    assert_true(memcmp(&ra, &rz, sizeof ra) != 0);
    /* 4 senders (7, 15, 23, 31) x 0.6 + the others' share: more than 2, so the hot endpoint's
     * two links are busy throughout the window */
    near(ra.hot_accepted, 2.0, 0.02, "hot endpoint's throughput");
    assert_true(ra.bg_lat_mean > 0 && ra.bg_lat_p99 >= ra.bg_lat_mean);
    rig_unmake(&a);
    rig_unmake(&b);
    rig_unmake(&z);
}

/* Knobs out of range are refused. */
static void test_refusals(void **state) {
    (void)state;
    nf_fabric *f;
    nf_hops *h;
    nf_diag d = {{0}, 0, {0}};
    assert_int_equal(nf_topo_build("fattree:k=4", NULL, &f, &d), 0);
    assert_int_equal(nf_hops_compute(f, 1, &h), 0);
    const nf_sim_routing *rt = nf_sim_routing_find("updown");
    const nf_sim_traffic *tr = nf_sim_traffic_find("uniform");
    nf_sim *s = NULL;
    nf_sim_config c;
    nf_sim_config_defaults(&c);
    c.preaware_cycles = 100001;
    assert_int_equal(nf_sim_new(f, h, &c, rt, tr, &s, &d), NF_EINVAL);
    nf_sim_config_defaults(&c);
    c.preaware_cycles = 8, c.preaware_throttle = 1.5;
    assert_int_equal(nf_sim_new(f, h, &c, rt, tr, &s, &d), NF_EINVAL);
    c.preaware_throttle = NAN;
    assert_int_equal(nf_sim_new(f, h, &c, rt, tr, &s, &d), NF_EINVAL);
    c.preaware_throttle = -0.1;
    assert_int_equal(nf_sim_new(f, h, &c, rt, tr, &s, &d), NF_EINVAL);
    c.preaware_cycles = 100000, c.preaware_throttle = 1;
    assert_int_equal(nf_sim_new(f, h, &c, rt, tr, &s, &d), NF_OK);
    nf_sim_free(s);
    nf_hops_free(h);
    nf_fabric_free(f);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_rate_hand),     cmocka_unit_test(test_adaptive_choice),
        cmocka_unit_test(test_throttle_hand), cmocka_unit_test(test_nic_rate),
        cmocka_unit_test(test_measure_only),  cmocka_unit_test(test_threads),
        cmocka_unit_test(test_refusals),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
