/* SPDX-License-Identifier: MIT */
/* The NIC's message engines (nf_sim_config.nic_engines; the Sunway paper's SWHNI): cases worked
 * by hand (a short message overtaking a long one of the same queue, the descriptor unit's pace,
 * round-robin arbitration among send queues, the in-flight limit), then the invariants of a
 * random run on a two-rail fabric (every message completes once, no engine over its limit, the
 * same on 1 and 2 threads) and DESDP's port sharing against an engine per port. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "netfab/sim.h"
#include "simrig.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static nf_sim_msg_times times(nf_sim *s, uint32_t id) {
    nf_sim_msg_times t;
    assert_int_equal(nf_sim_msg_times_of(s, id, &t), 0);
    return t;
}

static nf_sim_config engines_config(unsigned engines) {
    nf_sim_config c;
    nf_sim_config_defaults(&c);
    c.vcs = 2, c.seed = 1, c.nic_engines = engines, c.nic_engine_flits = 1.0, c.threads = 1;
    return c;
}

static nf_sim_script_result run(nf_sim *s) {
    nf_sim_script_result res;
    assert_int_equal(nf_sim_run_script(s, 1000000, &res), 0);
    assert_false(res.deadlock);
    assert_false(res.unfinished);
    return res;
}

/* One switch with 8 endpoints, 1-flit packets of 32 bytes, an engine reading a flit a cycle:
 * endpoint 1 posts a 32-packet put and a 1-packet put to endpoint 0, both due at 0, on queue 0.
 * The engine takes the first at 0 and, its descriptor unit busy 8 cycles (nic_short_cycles),
 * the second at 8; their first packets are ready 40 cycles later (nic_msg_cycles): 40 and 48.
 * The long one's packets go one a cycle from 40 (its port never holds more than the one being
 * sent); at 48 the short one is ready with fewer packets left and goes first, so its data is in
 * at 48 + 5 (host link, router 3, host link) = 53, and the long one's last packet leaves at 72:
 * in at 77. Without engines both are queued at their port at 40, the long one first: 76, 77. */
static void test_overtake_by_hand(void **state) {
    (void)state;
    for (unsigned eng = 0; eng <= 1; eng++) {
        rig r = rig_make("torus:1,c=8", "minhop", "uniform", engines_config(eng));
        nf_sim_msg big = {.src = 1, .dst = 0, .bytes = 32 * 32, .kind = NF_SIM_PUT_REPLY};
        nf_sim_msg small = big;
        small.bytes = 32;
        uint32_t a, b;
        assert_int_equal(nf_sim_post(r.s, &big, &a), 0);
        assert_int_equal(nf_sim_post(r.s, &small, &b), 0);
        nf_sim_script_result res = run(r.s);
        nf_sim_msg_times ta = times(r.s, a), tb = times(r.s, b);
        uint64_t want_b_rel = eng ? 8 : 0, want_a_in = 76 + eng, want_b_in = eng ? 53 : 77;
        if (ta.released != 0 || tb.released != want_b_rel || ta.data_in != want_a_in ||
            tb.data_in != want_b_in || ta.done != ta.data_in || tb.done != tb.data_in ||
            res.done != 2)
            fail_msg("engines %u: released %llu, %llu; in %llu, %llu", eng,
                     (unsigned long long)ta.released, (unsigned long long)tb.released,
                     (unsigned long long)ta.data_in, (unsigned long long)tb.data_in);
        assert_int_equal(res.max_in_flight, eng ? 2 : 0);
        rig_unmake(&r);
    }
}

/* Three send queues on one engine, four 1-packet puts each, all due at 0 and posted queue by
 * queue: the arbiter takes the queues in turn (0, 1, 2, 0, ...), one message every 8 cycles,
 * each queue in its order, so message q * 4 + j is released at 8 (3 j + q). A fast message
 * posted last to queue 0 is still taken in its queue's turn (the flag orders packets, not the
 * arbiter), but then goes on the short overhead. */
static void test_round_robin_by_hand(void **state) {
    (void)state;
    rig r = rig_make("torus:1,c=8", "minhop", "uniform", engines_config(1));
    uint32_t id[13];
    for (uint32_t q = 0; q < 3; q++)
        for (uint32_t j = 0; j < 4; j++) {
            nf_sim_msg m = {.src = 1,
                            .dst = 2 + j,
                            .bytes = 32,
                            .kind = NF_SIM_PUT_REPLY,
                            .queue = (uint16_t)q};
            assert_int_equal(nf_sim_post(r.s, &m, &id[q * 4 + j]), 0);
        }
    nf_sim_msg f = {.src = 1, .dst = 7, .bytes = 32, .kind = NF_SIM_PUT_REPLY, .fast = true};
    assert_int_equal(nf_sim_post(r.s, &f, &id[12]), 0);
    nf_sim_script_result res = run(r.s);
    assert_int_equal(res.done, 13);
    for (uint32_t q = 0; q < 3; q++)
        for (uint32_t j = 0; j < 4; j++) {
            nf_sim_msg_times t = times(r.s, id[q * 4 + j]);
            if (t.released != 8 * (3 * j + q))
                fail_msg("queue %u, message %u: released %llu, want %u", q, j,
                         (unsigned long long)t.released, 8 * (3 * j + q));
        }
    /* the fast one: queue 0's fifth, taken after the twelve (cycle 96), ready 8 cycles later */
    nf_sim_msg_times t = times(r.s, id[12]);
    if (t.released != 96 || t.data_in != 96 + 8 + 5)
        fail_msg("fast: released %llu, in %llu", (unsigned long long)t.released,
                 (unsigned long long)t.data_in);
    rig_unmake(&r);
}

/* Two CPUs on one NIC (two engines): a host's 100 cycles a message are the CPU's. Four puts
 * from endpoint 1 due at 0, two on queue 0 (CPU 0) and two on queue 1 (CPU 1): each CPU's
 * first is released at 100, its second at 200; one engine (one CPU) releases them at 100, 200,
 * 300 and 400. */
static void test_two_cpus_by_hand(void **state) {
    (void)state;
    for (unsigned eng = 1; eng <= 2; eng++) {
        nf_sim_config c = engines_config(eng);
        c.host_msg_cycles = 100;
        rig r = rig_make("torus:1,c=8", "minhop", "uniform", c);
        uint32_t id[4];
        for (uint32_t j = 0; j < 4; j++) {
            nf_sim_msg m = {.src = 1,
                            .dst = 2 + j,
                            .bytes = 32,
                            .kind = NF_SIM_PUT_REPLY,
                            .queue = (uint16_t)(j / 2)};
            assert_int_equal(nf_sim_post(r.s, &m, &id[j]), 0);
        }
        assert_int_equal(run(r.s).done, 4);
        for (uint32_t j = 0; j < 4; j++) {
            uint64_t want = eng == 2 ? 100 * (j % 2 + 1) : 100 * (j + 1);
            if (times(r.s, id[j]).released != want)
                fail_msg("%u engines, message %u: released %llu, want %llu", eng, j,
                         (unsigned long long)times(r.s, id[j]).released, (unsigned long long)want);
        }
        rig_unmake(&r);
    }
}

/* The in-flight limit: 40 puts from one endpoint, at most 3 in flight: never more than 3 at once,
 * and the fourth taken only once the first is complete; without the limit more are in flight. */
static void test_inflight_limit(void **state) {
    (void)state;
    for (unsigned lim = 3; lim <= 256; lim += 253) {
        nf_sim_config c = engines_config(1);
        c.nic_inflight = lim;
        rig r = rig_make("torus:1,c=8", "minhop", "uniform", c);
        uint32_t id[40];
        for (uint32_t k = 0; k < 40; k++) {
            nf_sim_msg m = {.src = 1, .dst = 2 + k % 6, .bytes = 64, .kind = NF_SIM_PUT_REPLY};
            assert_int_equal(nf_sim_post(r.s, &m, &id[k]), 0);
        }
        nf_sim_script_result res = run(r.s);
        assert_int_equal(res.done, 40);
        if (lim == 3) {
            assert_int_equal(res.max_in_flight, 3);
            for (uint32_t k = 3; k < 40; k++) /* FIFO: the k-th waits for the (k-3)-th */
                assert_true(times(r.s, id[k]).released >= times(r.s, id[k - 3]).done);
        } else {
            assert_true(res.max_in_flight > 3);
        }
        rig_unmake(&r);
    }
}

/* A random run on a two-rail fabric: 600 messages of every kind but queue ones from random
 * sources on random queues, some fast, fixed and dynamic rails, some after others; with 2
 * engines and a limit of 16: every message completes exactly once (done counts them, their
 * times are ordered), no engine is over its limit, and 1 and 2 threads give the same times. */
static void test_random_invariants(void **state) {
    (void)state;
    nf_sim_msg_times *t1 = NULL;
    for (unsigned th = 1; th <= 2; th++) {
        nf_sim_config c;
        nf_sim_config_defaults(&c);
        c.vcs = 4, c.pkt_flits = 4, c.buf_flits = 16, c.seed = 3, c.threads = th;
        c.nic_engines = 2, c.nic_inflight = 16;
        rig r = rig_make("gft:leaves=8,nodes=8,spines=8,sib=2,rails=2", "minhop", "uniform", c);
        uint32_t E = nf_sim_endpoints(r.s), n = 600;
        srand(7);
        for (uint32_t k = 0; k < n; k++) {
            static const nf_sim_msg_kind kinds[] = {NF_SIM_WRITE, NF_SIM_READ, NF_SIM_PUT_REPLY,
                                                    NF_SIM_SHORT};
            nf_sim_msg m = {.src = (uint32_t)rand() % 8,
                            .kind = kinds[rand() % 4],
                            .rail = (nf_sim_rail_mode)(rand() % 3),
                            .at = (uint64_t)(rand() % 2000),
                            .queue = (uint16_t)(rand() % 6),
                            .fast = rand() % 5 == 0};
            do
                m.dst = (uint32_t)rand() % E;
            while (m.dst == m.src);
            m.bytes = m.kind == NF_SIM_SHORT ? 64 : (uint64_t)(rand() % 20000);
            uint32_t id;
            assert_int_equal(nf_sim_post(r.s, &m, &id), 0);
            if (k > 10 && rand() % 4 == 0)
                assert_int_equal(nf_sim_after(r.s, k - 1 - (uint32_t)rand() % 10, id), 0);
        }
        nf_sim_script_result res = run(r.s);
        assert_int_equal(res.done, n);
        assert_true(res.max_in_flight <= 16);
        assert_true(res.max_in_flight >= 8);
        if (!t1) t1 = calloc(n, sizeof *t1);
        assert_non_null(t1);
        for (uint32_t k = 0; k < n; k++) {
            nf_sim_msg_times t = times(r.s, k);
            assert_true(t.due <= t.released && t.released <= t.data_in && t.data_in <= t.done &&
                        t.done != UINT64_MAX);
            if (th == 1)
                t1[k] = t;
            else if (memcmp(&t1[k], &t, sizeof t) != 0)
                fail_msg("message %u differs on 2 threads", k);
        }
        rig_unmake(&r);
    }
    free(t1);
}

/* DESDP: one process (queue 0) putting 256 KiB with the port chosen per packet. Its engine
 * reads `rate` flits a cycle: sharing the ports it sends at that rate over both (at most 2),
 * an engine on port 0 alone at the port's 1 flit a cycle; two processes (queues 0 and 1, one
 * per engine) fill both ports either way. Bandwidth in flits a cycle from the first release to
 * the last data in. */
static double put_bw(bool share, unsigned procs, double rate) {
    nf_sim_config c;
    nf_sim_config_defaults(&c);
    c.vcs = 4, c.pkt_flits = 8, c.buf_flits = 64, c.seed = 1, c.threads = 1;
    c.nic_engines = 2, c.nic_share_ports = share, c.nic_engine_flits = rate;
    rig r = rig_make("gft:leaves=8,nodes=8,spines=8,sib=2,rails=2", "minhop", "uniform", c);
    uint32_t E = nf_sim_endpoints(r.s), id[2];
    uint64_t bytes = 256 << 10;
    for (unsigned p = 0; p < procs; p++) {
        nf_sim_msg m = {.src = 0,
                        .dst = E - 1 - p,
                        .bytes = bytes,
                        .kind = NF_SIM_PUT_REPLY,
                        .rail = NF_SIM_RAIL_DYNAMIC,
                        .queue = (uint16_t)p};
        assert_int_equal(nf_sim_post(r.s, &m, &id[p]), 0);
    }
    run(r.s);
    uint64_t last = 0;
    for (unsigned p = 0; p < procs; p++) {
        nf_sim_msg_times t = times(r.s, id[p]);
        if (t.data_in > last) last = t.data_in;
    }
    rig_unmake(&r);
    return (double)procs * (double)bytes / 32.0 / (double)last;
}

static void test_desdp(void **state) {
    (void)state;
    double s1 = put_bw(true, 1, 2), n1 = put_bw(false, 1, 2), s2 = put_bw(true, 2, 2),
           n2 = put_bw(false, 2, 2), h1 = put_bw(true, 1, 1.5), h2 = put_bw(false, 2, 0.75);
    if (fabs(s1 - 2.0) > 0.04 || fabs(n1 - 1.0) > 0.02 || fabs(s2 - 2.0) > 0.04 ||
        fabs(n2 - 2.0) > 0.04 || fabs(h1 - 1.5) > 0.03 || fabs(h2 - 1.5) > 0.03)
        fail_msg("1 process: shared %.3f, own port %.3f; 2: %.3f, %.3f; 1.5: %.3f; 2 x 0.75: %.3f",
                 s1, n1, s2, n2, h1, h2);
}

/* FSW (fast short messages) against ordinary ones, by hand, on one switch with 1-flit packets
 * of 32 bytes and PCIe reads of 110 cycles: a put of 8 bytes waits for the NIC's 40 cycles and
 * two reads (its descriptor, its data), 260, then 5 on the wire: in at 265; as an FSW, 8 cycles
 * and the PIO writes of 32 + 8 bytes at 16 a cycle (3): in at 16; 32 bytes: 4 writes, 17. A read
 * of 8 bytes: its request in at 265, the target's NIC then works 40 cycles and reads its memory
 * (110), the data in at 265 + 150 + 5 = 420. Without PCIe time the put is in at 45, as before.
 * An FSW over one packet, or a multicast one, is refused. */
static void test_fsw_by_hand(void **state) {
    (void)state;
    static const struct {
        unsigned pcie;
        nf_sim_msg_kind kind;
        uint64_t bytes;
        bool fsw;
        uint64_t done;
    } cases[] = {{110, NF_SIM_PUT_REPLY, 8, false, 265}, {110, NF_SIM_PUT_REPLY, 8, true, 16},
                 {110, NF_SIM_PUT_REPLY, 32, true, 17},  {110, NF_SIM_READ, 8, false, 420},
                 {0, NF_SIM_PUT_REPLY, 8, false, 45},    {0, NF_SIM_PUT_REPLY, 8, true, 16}};
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        nf_sim_config c = engines_config(0);
        c.nic_pcie_cycles = cases[k].pcie;
        rig r = rig_make("torus:1,c=8", "minhop", "uniform", c);
        nf_sim_msg m = {.src = 1,
                        .dst = 0,
                        .bytes = cases[k].bytes,
                        .kind = cases[k].kind,
                        .fsw = cases[k].fsw};
        uint32_t id;
        assert_int_equal(nf_sim_post(r.s, &m, &id), 0);
        nf_sim_script_result res = run(r.s);
        nf_sim_msg_times tm = times(r.s, id);
        if (res.done != 1 || tm.done != cases[k].done)
            fail_msg("case %zu: done at %llu, want %llu", k, (unsigned long long)tm.done,
                     (unsigned long long)cases[k].done);
        m.bytes = 33; /* over a packet */
        assert_int_equal(nf_sim_post(r.s, &m, &id), m.fsw ? NF_EINVAL : NF_OK);
        rig_unmake(&r);
    }
}

/* Source routing, by hand, on a ring of 6 switches with one endpoint each and 1-flit packets:
 * endpoint 0 to endpoint 2 is 2 switch links the short way, 45 + 2 x 4 = 53 cycles, by the
 * routing or by a source route alike. With the link between switches 0 and 1 down from cycle 0,
 * minhop still has only the short way (its distances are the fabric's) and the message waits; a
 * source route found when it is sent goes the long way, 4 links: 45 + 16 = 61. A multicast is
 * not source routed. */
static void test_source_route_by_hand(void **state) {
    (void)state;
    for (int cut = 0; cut <= 1; cut++)
        for (int sr = 0; sr <= 1; sr++) {
            rig r = rig_make("torus:6,c=1", "minhop", "uniform", engines_config(0));
            if (cut) {
                nf_link l = NF_NONE;
                for (nf_gport g = r.f->port_off[0]; g < r.f->port_off[1]; g++)
                    if (r.f->peer[g] == 1) l = r.f->port_link[g];
                assert_int_not_equal(l, NF_NONE);
                assert_int_equal(nf_sim_link_at(r.s, l, 0, false), 0);
            }
            nf_sim_msg m = {
                .src = 0, .dst = 2, .bytes = 8, .kind = NF_SIM_PUT_REPLY, .source_routed = sr};
            uint32_t id;
            assert_int_equal(nf_sim_post(r.s, &m, &id), 0);
            nf_sim_script_result res;
            assert_int_equal(nf_sim_run_script(r.s, 20000, &res), 0);
            nf_sim_msg_times tm = times(r.s, id);
            uint64_t want = cut ? (sr ? 61 : UINT64_MAX) : 53;
            if (tm.done != want)
                fail_msg("cut %d, source routed %d: done %llu", cut, sr,
                         (unsigned long long)tm.done);
            m.kind = NF_SIM_MCAST;
            assert_int_equal(nf_sim_post(r.s, &m, &id), NF_EINVAL);
            rig_unmake(&r);
        }
    /* routes are remembered only while the links stay: one message at 0 takes the short way
     * (53), the link 0-1 fails at 100, a second at 200 takes the long way (200 + 61) */
    rig r = rig_make("torus:6,c=1", "minhop", "uniform", engines_config(0));
    nf_link l = NF_NONE;
    for (nf_gport g = r.f->port_off[0]; g < r.f->port_off[1]; g++)
        if (r.f->peer[g] == 1) l = r.f->port_link[g];
    assert_int_equal(nf_sim_link_at(r.s, l, 100, false), 0);
    uint32_t a, b;
    nf_sim_msg m = {.src = 0, .dst = 2, .bytes = 8, .kind = NF_SIM_PUT_REPLY, .source_routed = 1};
    assert_int_equal(nf_sim_post(r.s, &m, &a), 0);
    m.at = 200;
    assert_int_equal(nf_sim_post(r.s, &m, &b), 0);
    nf_sim_script_result res;
    assert_int_equal(nf_sim_run_script(r.s, 20000, &res), 0);
    assert_int_equal(times(r.s, a).done, 53);
    assert_int_equal(times(r.s, b).done, 261);
    rig_unmake(&r);
}

/* A queue past the limit is refused; the engine settings are checked at nf_sim_new. */
static void test_refusals(void **state) {
    (void)state;
    rig r = rig_make("torus:1,c=8", "minhop", "uniform", engines_config(2));
    uint32_t id;
    nf_sim_msg m = {.src = 1, .dst = 0, .bytes = 8, .queue = NF_SIM_MAX_QUEUES};
    assert_int_equal(nf_sim_post(r.s, &m, &id), NF_EINVAL);
    m.queue = NF_SIM_MAX_QUEUES - 1;
    assert_int_equal(nf_sim_post(r.s, &m, &id), NF_OK);
    rig_unmake(&r);
    nf_diag d = {{0}, 0, {0}};
    nf_sim_config c = engines_config(3);
    assert_int_equal(rig_try("torus:1,c=8", "minhop", "uniform", &c, &r, &d), NF_EINVAL);
    rig_unmake(&r);
    c = engines_config(1);
    c.nic_inflight = 0;
    assert_int_equal(rig_try("torus:1,c=8", "minhop", "uniform", &c, &r, &d), NF_EINVAL);
    rig_unmake(&r);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_overtake_by_hand),  cmocka_unit_test(test_round_robin_by_hand),
        cmocka_unit_test(test_two_cpus_by_hand),  cmocka_unit_test(test_inflight_limit),
        cmocka_unit_test(test_random_invariants), cmocka_unit_test(test_desdp),
        cmocka_unit_test(test_fsw_by_hand),       cmocka_unit_test(test_source_route_by_hand),
        cmocka_unit_test(test_refusals),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
