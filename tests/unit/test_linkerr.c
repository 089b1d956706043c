/* SPDX-License-Identifier: MIT */
/* Link errors and the data link layer's switching (nf_sim_config.ber, switching): the cost of
 * store-and-forward and of a link-level retry worked out by hand on one packet, cut-through's
 * wasted links, flit conservation with replays and discards, the corrupt share against
 * 1 - (1 - BER)^bits, the dynamic mode, determinism, multicast's retries (by hand, and every
 * member one good copy under errors everywhere), refusals. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "netfab/gen.h"
#include "netfab/mcast.h"
#include "netfab/sim.h"
#include "simrig.h"
#include "testutil.h"

#include <math.h>
#include <string.h>

/* The link between switches a and b. */
static nf_link link_between(const nf_fabric *f, nf_node a, nf_node b) {
    for (nf_link l = 0; l < f->n_links; l++)
        if ((f->link_a[l] == a && f->link_z[l] == b) || (f->link_a[l] == b && f->link_z[l] == a))
            return l;
    fail_msg("no link between switches %u and %u", (unsigned)a, (unsigned)b);
    return NF_NONE;
}

/* One packet of F flits from endpoint 0 (switch 0 of the 8-ring) to endpoint 3 (switch 3), on
 * an empty network: the cycle its data is all in, the run's flit hops and counts. */
typedef struct one_pkt {
    uint64_t data_in, flit_hops;
    nf_sim_counts k;
} one_pkt;

enum { F = 8 };

static one_pkt send_one(nf_sim_switching sw, uint64_t seed, double ber01) {
    nf_sim_config c = rig_defaults();
    c.pkt_flits = F;
    c.switching = sw;
    c.seed = seed;
    rig r = rig_make("torus:8,c=1", "dor", "uniform", c);
    if (ber01 > 0) {
        nf_diag d = {{0}, 0, {0}};
        assert_int_equal(nf_sim_set_link_ber(r.s, link_between(r.f, 0, 1), ber01, &d), 0);
    }
    nf_sim_msg m = {.src = 0, .dst = 3, .bytes = 32 * F, .kind = NF_SIM_PUT_REPLY};
    uint32_t id;
    assert_int_equal(nf_sim_post(r.s, &m, &id), 0);
    nf_sim_script_result sr;
    assert_int_equal(nf_sim_run_script(r.s, 100000, &sr), 0);
    assert_int_equal(sr.done, 1);
    nf_sim_msg_times t;
    assert_int_equal(nf_sim_msg_times_of(r.s, id, &t), 0);
    one_pkt o = {.data_in = t.data_in, .flit_hops = sr.flit_hops};
    nf_sim_get_counts(r.s, &o.k);
    assert_int_equal(o.k.in_flight, 0);
    assert_int_equal(o.k.injected + o.k.replayed, o.k.delivered + o.k.discarded);
    assert_int_equal(o.k.injected, F); /* once: nothing lost, nothing twice */
    assert_int_equal(o.k.delivered, F);
    rig_unmake(&r);
    return o;
}

/* Store-and-forward holds a packet at each router it reaches over a switch-to-switch link until
 * its tail is in: the head flit leaves F - 1 cycles later than under cut-through, at each of the
 * three routers after the first (switches 1, 2, 3; the first gets it from the NIC, which is not
 * subject to the mode), so the packet arrives 3 (F - 1) = 21 cycles later. */
static void test_saf_serialisation(void **state) {
    (void)state;
    one_pkt v = send_one(NF_SIM_VCT, 1, 0), s = send_one(NF_SIM_SAF, 1, 0);
    assert_int_equal(s.data_in - v.data_in, 3 * (F - 1));
    assert_int_equal(s.flit_hops, v.flit_hops);
    assert_int_equal(v.k.replayed, 0);
}

/* A link-level retry, by hand. Link 0->1 corrupts half the packets (BER 1 - 0.5^(1/2048)); a
 * seed is looked for under which the packet is corrupt on its first crossing only. The tail is
 * in at switch 1 at cycle t; the NAK reaches switch 0 at t + lat; the copy's flits leave at once
 * (replay first) and its tail is in at t + 2 lat + F - 1, from where all goes as in a clean run:
 * 2 lat + F - 1 = 9 cycles late, in either mode. The corrupt copy costs F flits over the link
 * again in both; under cut-through its head had gone on, so its flits also crossed the three
 * links after (1->2, 2->3, 3->NIC) before the NIC threw it away: 3 F more flit hops. */
static void test_retry_by_hand(void **state) {
    (void)state;
    double ber = -expm1(log(0.5) / (8.0 * 32 * F));
    one_pkt cv = send_one(NF_SIM_VCT, 1, 0), cs = send_one(NF_SIM_SAF, 1, 0);
    uint64_t seed = 0;
    one_pkt v = {0};
    for (uint64_t sd = 1; sd <= 200 && !seed; sd++) {
        v = send_one(NF_SIM_VCT, sd, ber);
        if (v.k.replayed == F) seed = sd;
    }
    assert_true(seed != 0);
    one_pkt s = send_one(NF_SIM_SAF, seed, ber); /* the same tail cycles at switch 1: one error */
    assert_int_equal(s.k.replayed, F);
    unsigned lat = 1;
    assert_int_equal(v.data_in - cv.data_in, 2 * lat + F - 1);
    assert_int_equal(s.data_in - cs.data_in, 2 * lat + F - 1);
    assert_int_equal(s.flit_hops - cs.flit_hops, F);
    assert_int_equal(v.flit_hops - cv.flit_hops, F + 3 * F);
    assert_int_equal(v.k.discarded, F);
    assert_int_equal(s.k.discarded, F);
}

/* Under load with errors on every link: injected + replayed = delivered + in flight + dropped +
 * discarded at every cycle; once drained every flit injected is delivered, once (the copies sent
 * again make up exactly for the ones thrown away). */
static void test_conservation(void **state) {
    (void)state;
    nf_sim_switching modes[] = {NF_SIM_VCT, NF_SIM_SAF, NF_SIM_SWITCH_DYNAMIC};
    for (int m = 0; m < 3; m++) {
        nf_sim_config c = rig_defaults();
        c.pkt_flits = 4;
        c.ber = 1e-4; /* 1 - (1 - 1e-4)^1024: 9.7% of the packets */
        c.switching = modes[m];
        rig r = rig_make("torus:4x4,c=2", "dor", "uniform", c);
        nf_sim_injection inj = {.load = 0.3};
        assert_int_equal(nf_sim_set_injection(r.s, &inj), 0);
        nf_sim_counts k = {0};
        for (int i = 0; i < 1500; i++) {
            assert_int_equal(nf_sim_step(r.s, 1), 0);
            nf_sim_get_counts(r.s, &k);
            assert_int_equal(k.injected + k.replayed,
                             k.delivered + k.in_flight + k.dropped + k.discarded);
        }
        nf_sim_injection none = {0};
        assert_int_equal(nf_sim_set_injection(r.s, &none), 0);
        for (int i = 0; i < 3000 && k.in_flight; i++) {
            assert_int_equal(nf_sim_step(r.s, 1), 0);
            nf_sim_get_counts(r.s, &k);
        }
        assert_int_equal(k.in_flight, 0);
        assert_true(k.replayed > 100);
        assert_int_equal(k.replayed, k.discarded);
        assert_int_equal(k.delivered, k.injected);
        rig_unmake(&r);
    }
}

/* The share of corrupt receptions is 1 - (1 - BER)^bits: under store-and-forward every packet
 * received over a switch-to-switch link is drawn once (no corrupt copy goes on), and those
 * receptions are the flits those links carried in the window over F. 64 channels on the 4x4
 * torus. Within 5 standard deviations. A measured run also delivers every packet it generated. */
static void test_corrupt_share(void **state) {
    (void)state;
    nf_sim_config c = rig_defaults();
    c.pkt_flits = 4;
    c.ber = 1e-4;
    c.switching = NF_SIM_SAF;
    rig r = rig_make("torus:4x4,c=2", "dor", "uniform", c);
    nf_sim_injection inj = {.load = 0.3};
    nf_sim_phase ph = {.warmup = 300, .window = 3000, .drain_max = 20000};
    nf_sim_result res;
    assert_int_equal(nf_sim_run(r.s, &inj, &ph, NULL, NULL, &res), 0);
    double p = 1 - pow(1 - 1e-4, 8.0 * 32 * 4);
    double rx = res.link_util_mean * 64 * 3000 / 4;
    double sd = sqrt(rx * p * (1 - p));
    assert_true(rx > 5000);
    assert_true(fabs((double)res.corrupt_pkts - p * rx) < 5 * sd);
    assert_true(res.saf_frac == 1.0);
    assert_int_equal(res.wasted_flits, 0);
    assert_false(res.saturated);
    double gen_pkts = res.offered * 32 * 3000 / 4; /* 32 endpoints */
    assert_true(fabs((double)res.packets - gen_pkts) < 0.5);
    rig_unmake(&r);
}

/* Dynamic switching: with no errors every link cuts through; with errors everywhere and a
 * threshold of one error, nearly every reception is stored; with one bad link, only the traffic
 * over it is (its share of the receptions, far below a half). Cut-through wastes links, store-
 * and-forward none. Results are the same for 1 and 2 threads. */
static void test_dynamic(void **state) {
    (void)state;
    nf_sim_config c = rig_defaults();
    c.pkt_flits = 4;
    c.switching = NF_SIM_SWITCH_DYNAMIC;
    nf_sim_injection inj = {.load = 0.3};
    nf_sim_phase ph = {.warmup = 300, .window = 2000, .drain_max = 20000};
    nf_sim_result res;
    rig r = rig_make("torus:4x4,c=2", "dor", "uniform", c);
    assert_int_equal(nf_sim_run(r.s, &inj, &ph, NULL, NULL, &res), 0);
    assert_true(res.saf_frac == 0.0);
    assert_int_equal(res.corrupt_pkts, 0);
    rig_unmake(&r);

    c.ber = 1e-4;
    c.saf_errors = 1;
    r = rig_make("torus:4x4,c=2", "dor", "uniform", c);
    assert_int_equal(nf_sim_run(r.s, &inj, &ph, NULL, NULL, &res), 0);
    assert_true(res.saf_frac > 0.9);
    rig_unmake(&r);

    c.ber = 0;
    c.threads = 1;
    nf_sim_result one[2];
    for (unsigned th = 1; th <= 2; th++) {
        c.threads = th;
        r = rig_make("torus:4x4,c=2", "dor", "uniform", c);
        nf_diag d = {{0}, 0, {0}};
        assert_int_equal(nf_sim_set_link_ber(r.s, link_between(r.f, 5, 6), 1e-3, &d), 0);
        assert_int_equal(nf_sim_run(r.s, &inj, &ph, NULL, NULL, &one[th - 1]), 0);
        one[th - 1].wall_s = 0;
        rig_unmake(&r);
    }
    assert_memory_equal(&one[0], &one[1], sizeof one[0]);
    assert_true(one[0].corrupt_pkts > 10);
    assert_true(one[0].saf_frac > 0 && one[0].saf_frac < 0.2);
}

/* Routes groups (CA or switch ids) with minihop and installs them. */
static nf_mcast *install_groups(rig *r, const nf_groups *g) {
    nf_mcast *m;
    nf_diag d = {{0}, 0, {0}};
    assert_int_equal(nf_mcast_route(r->f, r->h, g, nf_mcast_engine_find("minihop"), &m, &d), 0);
    assert_int_equal(nf_mcast_verify(r->f, r->h, g, m, &d), 0);
    assert_int_equal(nf_sim_set_mcast(r->s, g, m), 0);
    return m;
}

/* One multicast of one packet from endpoint 0 of the 8-ring to endpoints 2 and 6 and to switch
 * 1 itself (its port 0): the tree leaves switch 0 both ways (0->1->2, 0->7->6), each branch 2
 * switch links and a NIC link. */
static one_pkt mcast_one(nf_sim_switching sw, uint64_t seed, double ber01) {
    nf_sim_config c = rig_defaults();
    c.pkt_flits = F;
    c.switching = sw;
    c.seed = seed;
    rig r = rig_make("torus:8,c=1", "dor", "uniform", c);
    nf_node S = r.f->n_switches;
    nf_node mem[] = {S + 0, S + 2, S + 6, 1};
    uint32_t off[] = {0, 4};
    nf_groups g = {.n = 1, .off = off, .member = mem};
    nf_mcast *m = install_groups(&r, &g);
    if (ber01 > 0) {
        nf_diag d = {{0}, 0, {0}};
        assert_int_equal(nf_sim_set_link_ber(r.s, link_between(r.f, 0, 1), ber01, &d), 0);
    }
    nf_sim_msg msg = {.src = 0, .bytes = 32 * F, .kind = NF_SIM_MCAST, .group = 0};
    uint32_t id;
    assert_int_equal(nf_sim_post(r.s, &msg, &id), 0);
    nf_sim_script_result sr;
    assert_int_equal(nf_sim_run_script(r.s, 100000, &sr), 0);
    assert_int_equal(sr.done, 1);
    nf_sim_msg_times t;
    assert_int_equal(nf_sim_msg_times_of(r.s, id, &t), 0);
    one_pkt o = {.data_in = t.data_in, .flit_hops = sr.flit_hops};
    nf_sim_get_counts(r.s, &o.k);
    assert_int_equal(o.k.in_flight, 0);
    assert_int_equal(o.k.injected + o.k.replayed, o.k.delivered + o.k.discarded);
    assert_int_equal(o.k.delivered, 2 * F); /* one good copy at each member, none twice */
    nf_mcast_free(m);
    rig_unmake(&r);
    return o;
}

/* A multicast's link-level retry, by hand, as test_retry_by_hand for a unicast: link 0->1
 * corrupts the copy on branch 0->1->2 once. That branch's member has its data 2 lat + F - 1 = 9
 * cycles late in either mode, the other branch is untouched (the message ends when the late
 * member has it; switch 1, a member on the way, takes the good copy only: were the bad one
 * counted there, the message would end before endpoint 2 had its data). The copy is sent again over
 * link 0->1 alone (F flit hops; switch 0 does not replicate it again); under cut-through the bad
 * copy also crossed 1->2 and 2->NIC (2 F more) before the NIC threw it away. */
static void test_mcast_retry_by_hand(void **state) {
    (void)state;
    double ber = -expm1(log(0.5) / (8.0 * 32 * F));
    one_pkt cv = mcast_one(NF_SIM_VCT, 1, 0), cs = mcast_one(NF_SIM_SAF, 1, 0);
    assert_int_equal(cs.data_in - cv.data_in, 2 * (F - 1)); /* SAF: held at switches 1 and 2 */
    uint64_t seed = 0;
    one_pkt v = {0};
    for (uint64_t sd = 1; sd <= 200 && !seed; sd++) {
        v = mcast_one(NF_SIM_VCT, sd, ber);
        if (v.k.replayed == F) seed = sd;
    }
    assert_true(seed != 0);
    one_pkt s = mcast_one(NF_SIM_SAF, seed, ber);
    assert_int_equal(s.k.replayed, F);
    assert_int_equal(v.data_in - cv.data_in, 2 + F - 1);
    assert_int_equal(s.data_in - cs.data_in, 2 + F - 1);
    assert_int_equal(s.flit_hops - cs.flit_hops, F);
    assert_int_equal(v.flit_hops - cv.flit_hops, F + 2 * F);
    assert_int_equal(v.k.discarded, F);
    assert_int_equal(s.k.discarded, F);
}

/* Multicast under errors on every link of a two-level tree: 8 groups of 5 endpoints and one
 * switch member each (a spine, or a leaf where the tree may end), 10 multicasts a group of 4
 * four-flit packets, in each mode. Every message
 * completes, nothing is stuck, and the members take exactly the flits of the clean run: every
 * corrupt copy (and every copy made of it downstream) is discarded, every member gets one good
 * copy of each packet. The same times on 1 and 3 threads. */
static void test_mcast_under_errors(void **state) {
    (void)state;
    enum { G = 8, K = 6 };
    nf_sim_switching modes[] = {NF_SIM_VCT, NF_SIM_VCT, NF_SIM_SAF, NF_SIM_SWITCH_DYNAMIC};
    double bers[] = {0, 1e-4, 1e-4, 1e-4};
    uint64_t clean = 0, sum1 = 0;
    for (int run = 0; run < 5; run++) {
        int mode = run < 4 ? run : 1; /* the last: VCT with errors again, on 3 threads */
        nf_sim_config c = rig_defaults();
        c.vcs = 8, c.pkt_flits = 8, c.seed = 7, c.threads = run < 4 ? 1 : 3;
        c.ber = bers[mode]; /* 1 - (1 - 1e-4)^2048: 18.5% of the packets a link */
        c.switching = modes[mode];
        rig r = rig_make("gft:leaves=8,nodes=4,spines=4,sib=0", "minhop", "uniform", c);
        nf_node S = r.f->n_switches;
        nf_node mem[G * K];
        uint32_t off[G + 1];
        for (uint32_t k = 0; k < G; k++) {
            off[k] = k * K;
            for (uint32_t i = 0; i + 1 < K; i++)
                mem[k * K + i] = S + (k * 3 + i * 7) % 32;
            /* a switch member: a spine (even groups) or a leaf none of whose endpoints is a
             * member (odd), where the tree may end */
            nf_node swm = S - 1 - k / 2;
            for (nf_node leaf = 0; k % 2 && leaf < 8; leaf++) {
                bool used = false;
                for (uint32_t i = 0; i + 1 < K; i++)
                    used |= (mem[k * K + i] - S) / 4 == leaf;
                if (!used) {
                    swm = leaf;
                    break;
                }
            }
            mem[k * K + K - 1] = swm;
        }
        off[G] = G * K;
        nf_groups g = {.n = G, .off = off, .member = mem};
        nf_mcast *m = install_groups(&r, &g);
        uint32_t id;
        for (uint32_t k = 0; k < G; k++)
            for (uint32_t rep = 0; rep < 10; rep++) {
                nf_sim_msg mc = {.src = mem[k * K + rep % (K - 1)] - S,
                                 .bytes = 1024,
                                 .kind = NF_SIM_MCAST,
                                 .group = k};
                assert_int_equal(nf_sim_post(r.s, &mc, &id), 0);
            }
        nf_sim_script_result res;
        assert_int_equal(nf_sim_run_script(r.s, 1000000, &res), 0);
        if (res.done != G * 10 || res.deadlock || res.unfinished)
            fail_msg("run %d: %u done, deadlock %d", run, res.done, res.deadlock);
        nf_sim_counts k;
        nf_sim_get_counts(r.s, &k);
        assert_int_equal(k.in_flight, 0);
        assert_int_equal(k.dropped, 0);
        assert_int_equal(k.injected + k.replayed, k.delivered + k.discarded);
        if (run == 0) {
            clean = k.delivered;
            assert_int_equal(k.replayed, 0);
        } else {
            assert_int_equal(k.delivered, clean);
            if (k.replayed < 100)
                fail_msg("run %d: %llu replayed", run, (unsigned long long)k.replayed);
        }
        uint64_t sum = 0;
        for (uint32_t i = 0; i < G * 10; i++) {
            nf_sim_msg_times t;
            nf_sim_msg_times_of(r.s, i, &t);
            sum = sum * 1000003u + t.done;
        }
        if (run == 1) sum1 = sum;
        if (run == 4) assert_true(sum == sum1);
        nf_mcast_free(m);
        rig_unmake(&r);
    }
}

/* Bad knobs and calls are refused with a reason. */
static void test_refusals(void **state) {
    (void)state;
    struct {
        double ber, saf_errors;
        unsigned switching, window;
        const char *why;
    } bad[] = {{-1e-9, 2, 0, 1000, "ber -1e-09: a number from 0 to 1"},
               {1.5, 2, 0, 1000, "ber 1.5: a number from 0 to 1"},
               {NAN, 2, 0, 1000, "ber nan"},
               {0, 2, 3, 1000, "switching 3: one of vct, saf, dynamic"},
               {0, 0, 2, 1000, "saf_errors 0: a number from 0.001"},
               {0, 2, 2, 0, "saf_window 0: a whole number from 1"}};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        nf_sim_config c = rig_defaults();
        c.ber = bad[i].ber;
        c.saf_errors = bad[i].saf_errors;
        c.switching = (nf_sim_switching)bad[i].switching;
        c.saf_window = bad[i].window;
        rig r;
        nf_diag d = {{0}, 0, {0}};
        assert_int_equal(rig_try("torus:4,c=1", "dor", "uniform", &c, &r, &d), NF_EINVAL);
        if (!strstr(d.msg, bad[i].why)) fail_msg("case %zu: \"%s\"", i, d.msg);
        nf_hops_free(r.h);
        nf_fabric_free(r.f);
    }
    rig r = rig_make("torus:4,c=1", "dor", "uniform", rig_defaults());
    nf_diag d = {{0}, 0, {0}};
    nf_link host = r.f->port_link[nf_port_index(r.f, r.f->n_switches, 1)];
    assert_int_equal(nf_sim_set_link_ber(r.s, host, 1e-6, &d), NF_EINVAL);
    assert_non_null(strstr(d.msg, "between two switches"));
    assert_int_equal(nf_sim_set_link_ber(r.s, r.f->n_links, 1e-6, &d), NF_EINVAL);
    assert_int_equal(nf_sim_set_link_ber(r.s, link_between(r.f, 0, 1), 2, &d), NF_EINVAL);
    assert_int_equal(nf_sim_set_link_ber(r.s, link_between(r.f, 0, 1), 1e-6, &d), NF_OK);
    rig_unmake(&r);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_saf_serialisation),
        cmocka_unit_test(test_retry_by_hand),
        cmocka_unit_test(test_conservation),
        cmocka_unit_test(test_corrupt_share),
        cmocka_unit_test(test_dynamic),
        cmocka_unit_test(test_mcast_retry_by_hand),
        cmocka_unit_test(test_mcast_under_errors),
        cmocka_unit_test(test_refusals),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
