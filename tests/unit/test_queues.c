/* SPDX-License-Identifier: MIT */
/* Asynchronous queue messages (the Sunway paper's reliable and unreliable kinds) against cases
 * worked by hand: a ring that fills and drops, a host that frees an entry just in time, NAKs
 * and sendings again; then the invariants of a many-to-one run (every unreliable message
 * written or dropped, every reliable one written exactly once, never more entries held than a
 * ring has), the same on 1, 2 and 3 threads, and the refusals. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "netfab/gen.h"
#include "netfab/sim.h"
#include "simrig.h"

#include <stdlib.h>
#include <string.h>

static nf_sim_msg_times times(nf_sim *s, uint32_t id) {
    nf_sim_msg_times t;
    assert_int_equal(nf_sim_msg_times_of(s, id, &t), 0);
    return t;
}

/* One switch with 8 endpoints (torus:1,c=8), 1-flit packets: a queue message of 8 bytes is one
 * packet, its NIC's message work 40 cycles, then 5 on the wire (host link 1, router 3, host
 * link 1). Messages k = 0..3 from endpoint k + 1 to endpoint 0, released at cycle k: their data
 * is in at 45 + k (45, 46, 47, 48), one at a time, so the ring sees them in that order.
 * Unreliable, ring of 2 entries:
 * - host 100 cycles an entry: 45 written (free again at 145), 46 written (free at
 *   max(145, 46) + 100 = 245), 47 and 48 find both entries held: dropped. A short message
 *   from 5 to 6 after the last one is released at its drop, 48: done 48 + 8 + 5 = 61.
 * - host 2 cycles: 45 written (free at 47), 46 written (free at 49), 47: the first entry is
 *   free that very cycle, written (free at max(49, 47) + 2 = 51); 48: entries free at 49 and
 *   51, dropped: one drop, of message 3. */
static void test_unreliable_by_hand(void **state) {
    (void)state;
    static const struct {
        unsigned host;
        uint32_t dropped;
        uint64_t done[4]; /* UINT64_MAX: dropped */
    } want[] = {{100, 2, {45, 46, UINT64_MAX, UINT64_MAX}}, {2, 1, {45, 46, 47, UINT64_MAX}}};
    for (size_t w = 0; w < 2; w++) {
        nf_sim_config c;
        nf_sim_config_defaults(&c);
        c.vcs = 2, c.seed = 1, c.queue_host_cycles = want[w].host;
        rig r = rig_make("torus:1,c=8", "minhop", "uniform", c);
        assert_int_equal(nf_sim_set_queue_ring(r.s, 0, 2), 0);
        uint32_t id[5];
        for (uint32_t k = 0; k < 4; k++) {
            nf_sim_msg m = {
                .src = k + 1, .dst = 0, .bytes = 8, .kind = NF_SIM_QUEUE_UNRELIABLE, .at = k};
            assert_int_equal(nf_sim_post(r.s, &m, &id[k]), 0);
        }
        nf_sim_msg sh = {.src = 5, .dst = 6, .bytes = 8, .kind = NF_SIM_SHORT};
        assert_int_equal(nf_sim_post(r.s, &sh, &id[4]), 0);
        assert_int_equal(nf_sim_after(r.s, id[3], id[4]), 0);
        nf_sim_script_result res;
        assert_int_equal(nf_sim_run_script(r.s, 100000, &res), 0);
        for (uint32_t k = 0; k < 4; k++) {
            nf_sim_msg_times t = times(r.s, id[k]);
            bool drop = want[w].done[k] == UINT64_MAX;
            if (t.released != k || t.data_in != 45 + k || t.done != want[w].done[k] ||
                t.dropped != drop || t.retries != 0 || t.packets != 1)
                fail_msg("host %u, message %u: released %llu, in %llu, done %llu, dropped %d",
                         want[w].host, k, (unsigned long long)t.released,
                         (unsigned long long)t.data_in, (unsigned long long)t.done, t.dropped);
        }
        nf_sim_msg_times ts = times(r.s, id[4]);
        /* 5 messages: the queue ones written or dropped (none left), the short one done */
        if (res.dropped != want[w].dropped || res.done != 5 - want[w].dropped ||
            res.ring_writes != 4 - want[w].dropped || res.retries != 0 || res.unfinished ||
            res.deadlock || ts.released != 48 || ts.done != 61 || res.cycles != 61)
            fail_msg("host %u: dropped %u, done %u, writes %llu, short released %llu done %llu",
                     want[w].host, res.dropped, res.done, (unsigned long long)res.ring_writes,
                     (unsigned long long)ts.released, (unsigned long long)ts.done);
        rig_unmake(&r);
    }
}

/* The same switch, 3 reliable messages (k = 0..2, from k + 1 to 0, released at k) into a ring
 * of 1 entry, host 100 cycles an entry, back-off auto (one host period, 100), NAK after the
 * target NIC's short work (8) and 5 on the wire:
 * - m0 in at 45: written (free at 145). done 45.
 * - m1 in at 46: refused; NAK leaves at 54, in at 59; sent again after 100 + 40: into the NIC
 *   at 199, in at 204; the entry is free since 145: written (free at 304). done 204, 1 retry.
 * - m2 in at 47: refused; NAK at 55, in at 60, into the NIC at 200, in at 205: the entry is
 *   held (free at 304), refused again; NAK at 213, in at 218, into the NIC at 358, in at 363:
 *   written. done 363, 2 retries.
 * Then the same with an unreliable m1: dropped at 46, m2 then takes the entry at 204's place:
 * refused at 47, sent again, in at 205 (free since 145): done 205, 1 retry. */
static void test_reliable_by_hand(void **state) {
    (void)state;
    nf_sim_config c;
    nf_sim_config_defaults(&c);
    c.vcs = 2, c.seed = 1, c.queue_host_cycles = 100;
    rig r = rig_make("torus:1,c=8", "minhop", "uniform", c);
    assert_int_equal(nf_sim_set_queue_ring(r.s, 0, 1), 0);
    static const struct {
        nf_sim_msg_kind kind[3];
        uint64_t data_in[3], done[3];
        uint32_t retries[3];
    } want[] = {{{NF_SIM_QUEUE_RELIABLE, NF_SIM_QUEUE_RELIABLE, NF_SIM_QUEUE_RELIABLE},
                 {45, 204, 363},
                 {45, 204, 363},
                 {0, 1, 2}},
                {{NF_SIM_QUEUE_RELIABLE, NF_SIM_QUEUE_UNRELIABLE, NF_SIM_QUEUE_RELIABLE},
                 {45, 46, 205},
                 {45, UINT64_MAX, 205},
                 {0, 0, 1}}};
    for (size_t w = 0; w < 2; w++) {
        nf_sim_script_clear(r.s);
        uint32_t id[3];
        for (uint32_t k = 0; k < 3; k++) {
            nf_sim_msg m = {.src = k + 1, .dst = 0, .bytes = 8, .kind = want[w].kind[k], .at = k};
            assert_int_equal(nf_sim_post(r.s, &m, &id[k]), 0);
        }
        nf_sim_script_result res;
        assert_int_equal(nf_sim_run_script(r.s, 100000, &res), 0);
        uint64_t retries = 0;
        for (uint32_t k = 0; k < 3; k++) {
            nf_sim_msg_times t = times(r.s, id[k]);
            retries += t.retries;
            if (t.released != k || t.data_in != want[w].data_in[k] || t.done != want[w].done[k] ||
                t.retries != want[w].retries[k])
                fail_msg("case %zu, message %u: released %llu, in %llu, done %llu, retries %u", w,
                         k, (unsigned long long)t.released, (unsigned long long)t.data_in,
                         (unsigned long long)t.done, t.retries);
        }
        uint32_t drops = w == 1;
        if (res.retries != retries || res.dropped != drops || res.done != 3 - drops ||
            res.ring_writes != 3 - drops || res.cycles != want[w].done[2] || res.unfinished)
            fail_msg("case %zu: retries %llu, dropped %u, done %u, writes %llu, cycles %llu", w,
                     (unsigned long long)res.retries, res.dropped, res.done,
                     (unsigned long long)res.ring_writes, (unsigned long long)res.cycles);
    }
    /* every flit the NAKs and the sendings again put in was delivered */
    nf_sim_counts k;
    nf_sim_get_counts(r.s, &k);
    assert_true(k.in_flight == 0 && k.injected == k.delivered);
    rig_unmake(&r);
}

/* A ring of `cap` entries whose host takes host cycles an entry, replayed from the messages'
 * times alone (written at done, in the order (done, id)): no entry is written while cap are
 * held, and every drop finds cap held. Returns the entries written. */
static uint32_t check_ring(nf_sim *s, const uint32_t *ids, uint32_t n, uint32_t cap,
                           unsigned host) {
    uint64_t *w = calloc(n + 1, sizeof *w), *f = calloc(n + 1, sizeof *f);
    uint32_t nw = 0;
    for (uint32_t i = 0; i < n; i++) { /* the writes, sorted by (done, id): insertion */
        nf_sim_msg_times t = times(s, ids[i]);
        if (t.done == UINT64_MAX) continue;
        uint32_t j = nw++;
        while (j && w[j - 1] > t.done)
            w[j] = w[j - 1], j--;
        w[j] = t.done;
    }
    for (uint32_t j = 0; j < nw; j++) {
        f[j] = (j && f[j - 1] > w[j] ? f[j - 1] : w[j]) + host;
        uint32_t held = 0;
        for (uint32_t k = 0; k < j; k++)
            held += f[k] > w[j];
        if (held >= cap)
            fail_msg("written at %llu with %u of %u entries held", (unsigned long long)w[j], held,
                     cap);
    }
    for (uint32_t i = 0; i < n; i++) {
        nf_sim_msg_times t = times(s, ids[i]);
        if (!t.dropped) continue;
        uint32_t held = 0;
        for (uint32_t k = 0; k < nw; k++)
            held += w[k] <= t.data_in && f[k] > t.data_in;
        if (held != cap)
            fail_msg("dropped at %llu with %u of %u entries held", (unsigned long long)t.data_in,
                     held, cap);
    }
    free(w);
    free(f);
    return nw;
}

/* Many to one on gft:leaves=4,nodes=4,spines=2 (16 endpoints): 15 senders, 12 messages each of
 * 8 to 1,000 bytes, half reliable and half unreliable, released over 400 cycles into endpoint
 * 0's ring of 4 entries (host 40 cycles an entry). Every unreliable message is written or
 * dropped, every reliable one written once and never dropped; the entries written are the
 * messages done; the ring never holds more than 4; some drops and some retries (the ring does
 * fill); the same times on 1, 2 and 3 threads, and every flit delivered. */
static void test_many_to_one(void **state) {
    (void)state;
    enum { SENDERS = 15, EACH = 12, N = SENDERS * EACH };
    nf_sim_msg_times first[N];
    for (unsigned th = 1; th <= 3; th++) {
        nf_sim_config c;
        nf_sim_config_defaults(&c);
        c.vcs = 4, c.pkt_flits = 4, c.seed = 7, c.threads = th;
        rig r = rig_make("gft:leaves=4,nodes=4,spines=2,sib=0", "minhop", "uniform", c);
        assert_int_equal(nf_sim_endpoints(r.s), 16);
        assert_int_equal(nf_sim_set_queue_ring(r.s, 0, 4), 0);
        uint32_t ids[N], n_rel = 0, n_unrel = 0;
        for (uint32_t i = 0; i < N; i++) {
            nf_sim_msg m = {.src = 1 + i % SENDERS,
                            .dst = 0,
                            .bytes = 8 + (i * 97) % 993,
                            .kind = i % 2 ? NF_SIM_QUEUE_RELIABLE : NF_SIM_QUEUE_UNRELIABLE,
                            .rail = NF_SIM_RAIL0,
                            .at = (i * 37) % 400};
            assert_int_equal(nf_sim_post(r.s, &m, &ids[i]), 0);
            n_rel += i % 2, n_unrel += !(i % 2);
        }
        nf_sim_script_result res;
        assert_int_equal(nf_sim_run_script(r.s, 10000000, &res), 0);
        assert_false(res.deadlock || res.unfinished);
        uint32_t rel_done = 0, unrel_done = 0, unrel_dropped = 0;
        uint64_t retries = 0;
        for (uint32_t i = 0; i < N; i++) {
            nf_sim_msg_times t = times(r.s, ids[i]);
            bool done = t.done != UINT64_MAX;
            if (done == t.dropped)
                fail_msg("message %u: done %d and dropped %d", i, done, t.dropped);
            if (i % 2) {
                if (!done || t.dropped) fail_msg("reliable message %u not written", i);
                rel_done++;
                retries += t.retries;
            } else {
                if (t.retries) fail_msg("unreliable message %u sent again", i);
                unrel_done += done, unrel_dropped += t.dropped;
            }
            if (done && t.done != t.data_in) fail_msg("message %u done after its data", i);
            if (th == 1)
                first[i] = t;
            else if (t.released != first[i].released || t.data_in != first[i].data_in ||
                     t.done != first[i].done || t.retries != first[i].retries ||
                     t.dropped != first[i].dropped)
                fail_msg("message %u differs on %u threads", i, th);
        }
        /* the invariants: delivered + dropped = posted (unreliable), delivered = posted
         * (reliable), each written once */
        assert_int_equal(unrel_done + unrel_dropped, n_unrel);
        assert_int_equal(rel_done, n_rel);
        assert_int_equal(res.dropped, unrel_dropped);
        assert_int_equal(res.done, rel_done + unrel_done);
        assert_int_equal(res.ring_writes, rel_done + unrel_done);
        assert_int_equal(res.retries, retries);
        assert_int_equal(check_ring(r.s, ids, N, 4, c.queue_host_cycles), res.ring_writes);
        if (!(unrel_dropped > 0 && retries > 0))
            fail_msg("the ring never filled: %u dropped, %llu retries", unrel_dropped,
                     (unsigned long long)retries);
        nf_sim_counts k;
        nf_sim_get_counts(r.s, &k);
        assert_true(k.in_flight == 0 && k.injected == k.delivered);
        rig_unmake(&r);
    }
}

/* The knobs' defaults, and the refusals: a ring of 0 entries (configuration or endpoint), an
 * endpoint out of range, a kind past the last. */
static void test_refusals(void **state) {
    (void)state;
    nf_sim_config c;
    memset(&c, 0x5A, sizeof c);
    nf_sim_config_defaults(&c);
    assert_true(c.queue_entries == 256 && c.queue_host_cycles == 40 && c.queue_backoff == 0);
    c.queue_entries = 0;
    nf_fabric *f;
    nf_hops *h;
    nf_sim *s = NULL;
    nf_diag d = {{0}, 0, {0}};
    assert_int_equal(nf_topo_build("torus:1,c=8", NULL, &f, &d), 0);
    assert_int_equal(nf_hops_compute(f, 1, &h), 0);
    assert_int_equal(
        nf_sim_new(f, h, &c, nf_sim_routing_find("minhop"), nf_sim_traffic_find("uniform"), &s, &d),
        NF_EINVAL);
    assert_non_null(strstr(d.msg, "queue_entries 0: a whole number from 1"));
    c.queue_entries = 1;
    assert_int_equal(
        nf_sim_new(f, h, &c, nf_sim_routing_find("minhop"), nf_sim_traffic_find("uniform"), &s, &d),
        0);
    assert_int_equal(nf_sim_set_queue_ring(s, 8, 4), NF_EINVAL);
    assert_int_equal(nf_sim_set_queue_ring(s, 0, 0), NF_EINVAL);
    assert_int_equal(nf_sim_set_queue_ring(NULL, 0, 4), NF_EINVAL);
    assert_int_equal(nf_sim_set_queue_ring(s, 7, 4), 0);
    uint32_t id;
    nf_sim_msg bad[] = {{.src = 0, .dst = 0, .bytes = 8, .kind = NF_SIM_QUEUE_RELIABLE},
                        {.src = 0, .dst = 8, .bytes = 8, .kind = NF_SIM_QUEUE_UNRELIABLE},
                        {.src = 0, .dst = 1, .bytes = 8, .kind = (nf_sim_msg_kind)7}};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        assert_int_equal(nf_sim_post(s, &bad[i], &id), NF_EINVAL);
    nf_sim_free(s);
    nf_hops_free(h);
    nf_fabric_free(f);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_unreliable_by_hand),
        cmocka_unit_test(test_reliable_by_hand),
        cmocka_unit_test(test_many_to_one),
        cmocka_unit_test(test_refusals),
    };
    cmocka_set_test_filter(getenv("NF_TEST_FILTER"));
    return cmocka_run_group_tests(tests, NULL, NULL);
}
