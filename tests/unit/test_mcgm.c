/* SPDX-License-Identifier: MIT */
/* The multicast group manager's state machine: joins in order, shuffled and repeated, timeouts,
 * leaves, errors, MLIDs, loads against a recount, and journal replay. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "netfab/gen.h"
#include "netfab/mcgm.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- fixtures ------------------------------------------------------------------------------- */

typedef struct fixture {
    nf_fabric *f;
    nf_hops *h;
} fixture;

static fixture fx(const char *spec) {
    fixture x;
    nf_diag d;
    assert_int_equal(nf_topo_build(spec, NULL, &x.f, &d), 0);
    assert_int_equal(nf_hops_compute(x.f, 1, &x.h), 0);
    return x;
}

static void fx_free(fixture *x) {
    nf_hops_free(x->h);
    nf_fabric_free(x->f);
}

/* Port GUID of endpoint i (the i-th CA, port 1). */
static uint64_t port(const nf_fabric *f, uint32_t i) {
    return f->port_guid[nf_port_index(f, f->n_switches + i, 1)];
}

static nf_gid mgid(uint32_t k) { return nf_gid_make(0xff12401bffff0000ULL, 0x1000 + k); }

/* A journal in memory: the records the log callback gave, in order. */
typedef struct memlog {
    uint8_t **rec;
    uint32_t *len;
    size_t n, cap;
} memlog;

static void memlog_fn(void *ud, const uint8_t *rec, uint32_t len) {
    memlog *l = ud;
    if (l->n == l->cap) {
        l->cap = l->cap ? 2 * l->cap : 64;
        l->rec = realloc(l->rec, l->cap * sizeof *l->rec);
        l->len = realloc(l->len, l->cap * sizeof *l->len);
    }
    l->rec[l->n] = malloc(len);
    memcpy(l->rec[l->n], rec, len);
    l->len[l->n++] = len;
}

static int memlog_emit(void *ud, const uint8_t *rec, uint32_t len) {
    memlog_fn(ud, rec, len);
    return 0;
}

static void memlog_free(memlog *l) {
    for (size_t i = 0; i < l->n; i++)
        free(l->rec[i]);
    free(l->rec);
    free(l->len);
    memset(l, 0, sizeof *l);
}

static nf_mcgm *mgr(const fixture *x, const nf_mcgm_opts *o, memlog *log) {
    nf_mcgm *m;
    assert_int_equal(nf_mcgm_new(x->f, x->h, o, log ? memlog_fn : NULL, log, &m), 0);
    return m;
}

/* The routed groups verify (trees, minimal heights, EFI recount equal to the live loads). */
static void assert_verified(const fixture *x, const nf_mcgm *m) {
    nf_groups *g;
    nf_mcast *mc;
    uint16_t *ml;
    assert_int_equal(nf_mcgm_export(m, &g, &mc, &ml), 0);
    nf_diag d = {{0}, 0, {0}};
    if (nf_mcast_verify(x->f, x->h, g, mc, &d)) fail_msg("verify: %s", d.msg);
    /* and the loads recounted from the exported trees */
    uint32_t *re = calloc(x->f->n_links, sizeof *re);
    for (uint32_t i = 0; i < mc->tree_off[mc->n_groups]; i++)
        re[mc->tree_link[i]]++;
    assert_memory_equal(re, nf_mcgm_efi(m), x->f->n_links * sizeof *re);
    free(re);
    nf_groups_free(g);
    nf_mcast_free(mc);
    nf_free(ml);
}

static uint64_t efi_sum(const fixture *x, const nf_mcgm *m) {
    uint64_t s = 0;
    for (nf_link l = 0; l < x->f->n_links; l++)
        s += nf_mcgm_efi(m)[l];
    return s;
}

/* ---- joins ---------------------------------------------------------------------------------- */

static void test_joins_in_order(void **state) {
    (void)state;
    fixture x = fx("fattree:k=4");
    nf_mcgm *m = mgr(&x, NULL, NULL);
    nf_gid g = mgid(0);
    nf_mcgstate_rec r;
    static const uint32_t ep[] = {0, 5, 9, 14}; /* endpoints in the four pods */
    for (int i = 0; i < 3; i++) {
        assert_int_equal(nf_mcgm_join(m, &g, port(x.f, ep[i]), 4, 100 + i, &r), 0);
        assert_int_equal(r.state, NF_MCG_RECEIVING_JOIN);
        assert_int_equal(r.joined, i + 1);
        assert_int_equal(r.member_count, 4);
        assert_int_equal(r.mlid, NF_MLID_BASE);
        assert_int_equal(efi_sum(&x, m), 0); /* no route before the last join */
    }
    nf_mcgm_counters c;
    nf_mcgm_get_counters(m, &c);
    assert_int_equal(c.routes, 0);
    assert_int_equal(nf_mcgm_join(m, &g, port(x.f, ep[3]), 4, 104, &r), 0);
    assert_int_equal(r.state, NF_MCG_READY);
    assert_int_equal(r.joined, 4);
    nf_mcgm_get_counters(m, &c);
    assert_int_equal(c.routes, 1);
    assert_int_equal(c.ready, 1);
    /* one member in each pod of a k=4 fat tree: a core root, 4 core-agg links, 4 agg-edge
     * links, 4 host links */
    assert_int_equal(efi_sum(&x, m), 4 + 4 + 4);
    assert_int_equal(nf_mcgm_query(m, &g, &r), 0);
    assert_int_equal(r.state, NF_MCG_READY);
    assert_verified(&x, m);
    /* nothing pending: no deadline */
    assert_int_equal(nf_mcgm_next_deadline(m), UINT64_MAX);
    nf_mcgm_free(m);
    fx_free(&x);
}

/* The same members joining shuffled and with every join sent twice give the same group state and
 * the same tree as joins in order. */
static void test_joins_shuffled_duplicated(void **state) {
    (void)state;
    fixture x = fx("torus:4x4x2,c=2");
    nf_mcgm *a = mgr(&x, NULL, NULL), *b = mgr(&x, NULL, NULL);
    static const uint32_t ep[] = {3, 17, 22, 40, 41, 63, 8, 30};
    static const int order[] = {5, 2, 7, 0, 6, 1, 4, 3};
    nf_gid g = mgid(7);
    nf_mcgstate_rec r;
    for (int i = 0; i < 8; i++)
        assert_int_equal(nf_mcgm_join(a, &g, port(x.f, ep[i]), 8, 1, &r), 0);
    assert_int_equal(r.state, NF_MCG_READY);
    for (int i = 0; i < 8; i++) {
        assert_int_equal(nf_mcgm_join(b, &g, port(x.f, ep[order[i]]), 8, 1, &r), 0);
        assert_int_equal(r.joined, i + 1);
        assert_int_equal(nf_mcgm_join(b, &g, port(x.f, ep[order[i]]), 8, 2, &r), 0);
        assert_int_equal(r.joined, i + 1);
    }
    assert_int_equal(r.state, NF_MCG_READY);
    /* a join repeated after Ready is harmless too */
    assert_int_equal(nf_mcgm_join(b, &g, port(x.f, ep[0]), 8, 3, &r), 0);
    assert_int_equal(r.state, NF_MCG_READY);
    nf_mcgm_counters c;
    nf_mcgm_get_counters(b, &c);
    assert_int_equal(c.routes, 1);
    assert_memory_equal(nf_mcgm_efi(a), nf_mcgm_efi(b), x.f->n_links * sizeof(uint32_t));
    assert_verified(&x, b);
    nf_mcgm_free(a);
    nf_mcgm_free(b);
    fx_free(&x);
}

static void test_join_errors(void **state) {
    (void)state;
    fixture x = fx("fattree:k=4");
    nf_mcgm *m = mgr(&x, NULL, NULL);
    nf_gid g = mgid(1);
    nf_mcgstate_rec r;
    assert_int_equal(nf_mcgm_join(m, &g, port(x.f, 0), 0, 1, &r), NF_SA_STATUS_REQ_INVALID);
    assert_int_equal(nf_mcgm_join(m, &g, port(x.f, 0), NF_MEMBER_COUNT_MAX + 1, 1, &r),
                     NF_SA_STATUS_REQ_INVALID);
    /* an unknown GUID is no port */
    assert_int_equal(nf_mcgm_join(m, &g, 0x1234, 2, 1, &r), NF_SA_STATUS_INVALID_GID);
    /* a switch by its own GUID (its port 0) is a member: with an endpoint, Ready */
    nf_gid gs = mgid(7);
    assert_int_equal(nf_mcgm_join(m, &gs, x.f->guid[0], 2, 1, &r), 0);
    assert_int_equal(nf_mcgm_join(m, &gs, port(x.f, 3), 2, 1, &r), 0);
    assert_int_equal(r.state, NF_MCG_READY);
    assert_int_equal(nf_mcgm_leave(m, &gs, x.f->guid[0], 2, &r), 0);
    assert_int_equal(nf_mcgm_leave(m, &gs, port(x.f, 3), 2, &r), 0);
    assert_int_equal(nf_mcgm_query(m, &g, &r), NF_SA_STATUS_NO_RECORDS); /* none created */
    assert_int_equal(nf_mcgm_join(m, &g, port(x.f, 0), 2, 1, &r), 0);
    assert_int_equal(nf_mcgm_join(m, &g, port(x.f, 1), 3, 1, &r), NF_SA_STATUS_REQ_INVALID);
    assert_int_equal(r.joined, 1);
    assert_int_equal(nf_mcgm_join(m, &g, port(x.f, 1), 2, 1, &r), 0);
    assert_int_equal(r.state, NF_MCG_READY);
    /* a third distinct port for a group of two */
    assert_int_equal(nf_mcgm_join(m, &g, port(x.f, 2), 2, 1, &r), NF_SA_STATUS_REQ_INVALID);
    assert_int_equal(r.joined, 2);
    /* leaves: unknown group, non-member */
    nf_gid other = mgid(2);
    assert_int_equal(nf_mcgm_leave(m, &other, port(x.f, 0), 1, &r), NF_SA_STATUS_NO_RECORDS);
    assert_int_equal(nf_mcgm_leave(m, &g, port(x.f, 3), 1, &r), NF_SA_STATUS_REQ_INVALID);
    assert_verified(&x, m);
    nf_mcgm_free(m);
    fx_free(&x);
}

/* A lost join: the group waits its join timeout, goes to Destroying (late joins are denied,
 * queries say Destroying), then after the linger it is gone and its MLID is free again. */
static void test_lost_join(void **state) {
    (void)state;
    fixture x = fx("fattree:k=4");
    nf_mcgm_opts o = {.join_timeout_ms = 1000, .linger_ms = 500};
    nf_mcgm *m = mgr(&x, &o, NULL);
    nf_gid g = mgid(3), h2 = mgid(4);
    nf_mcgstate_rec r;
    assert_int_equal(nf_mcgm_join(m, &g, port(x.f, 0), 3, 10, &r), 0);
    assert_int_equal(nf_mcgm_join(m, &g, port(x.f, 7), 3, 20, &r), 0);
    assert_int_equal(nf_mcgm_join(m, &h2, port(x.f, 2), 1, 30, &r), 0); /* Ready at once */
    assert_int_equal(r.state, NF_MCG_READY);
    assert_int_equal(r.mlid, NF_MLID_BASE + 1);
    assert_int_equal(nf_mcgm_next_deadline(m), 1010);
    assert_int_equal(nf_mcgm_tick(m, 1009), 0);
    assert_int_equal(nf_mcgm_query(m, &g, &r), 0);
    assert_int_equal(r.state, NF_MCG_RECEIVING_JOIN);
    assert_int_equal(nf_mcgm_tick(m, 1010), 1);
    assert_int_equal(nf_mcgm_query(m, &g, &r), 0);
    assert_int_equal(r.state, NF_MCG_DESTROYING);
    assert_int_equal(nf_mcgm_join(m, &g, port(x.f, 9), 3, 1100, &r), NF_SA_STATUS_DENIED);
    assert_int_equal(nf_mcgm_next_deadline(m), 1510);
    assert_int_equal(nf_mcgm_tick(m, 1510), 0);
    assert_int_equal(nf_mcgm_query(m, &g, &r), NF_SA_STATUS_NO_RECORDS);
    /* the MLID comes back: the next group gets the lowest free one */
    nf_gid g3 = mgid(5);
    assert_int_equal(nf_mcgm_join(m, &g3, port(x.f, 1), 2, 1600, &r), 0);
    assert_int_equal(r.mlid, NF_MLID_BASE);
    /* the Ready group never timed out */
    assert_int_equal(nf_mcgm_query(m, &h2, &r), 0);
    assert_int_equal(r.state, NF_MCG_READY);
    assert_verified(&x, m);
    nf_mcgm_counters c;
    nf_mcgm_get_counters(m, &c);
    assert_int_equal(c.destroyed, 1);
    nf_mcgm_free(m);
    fx_free(&x);
}

/* ---- leaves --------------------------------------------------------------------------------- */

static void test_leaves(void **state) {
    (void)state;
    fixture x = fx("dragonfly:a=4,p=2,h=2");
    nf_mcgm_opts o = {.leave_timeout_ms = 400, .linger_ms = 100};
    nf_mcgm *m = mgr(&x, &o, NULL);
    nf_gid g = mgid(9);
    nf_mcgstate_rec r;
    static const uint32_t ep[] = {0, 11, 30, 51, 70};
    for (int i = 0; i < 5; i++)
        assert_int_equal(nf_mcgm_join(m, &g, port(x.f, ep[i]), 5, 0, &r), 0);
    assert_int_equal(r.state, NF_MCG_READY);
    uint64_t loaded = efi_sum(&x, m);
    assert_true(loaded > 0);
    /* a leave before... no: leaves of a Ready group never recompute */
    assert_int_equal(nf_mcgm_leave(m, &g, port(x.f, 11), 50, &r), 0);
    assert_int_equal(r.state, NF_MCG_RECEIVING_LEAVE);
    assert_int_equal(r.left, 1);
    assert_int_equal(r.joined, 4);
    assert_int_equal(nf_mcgm_leave(m, &g, port(x.f, 11), 60, &r), 0); /* repeated */
    assert_int_equal(r.left, 1);
    assert_int_equal(efi_sum(&x, m), loaded);
    nf_mcgm_counters c;
    nf_mcgm_get_counters(m, &c);
    assert_int_equal(c.routes, 1);
    /* a port that left cannot join again */
    assert_int_equal(nf_mcgm_join(m, &g, port(x.f, 11), 5, 70, &r), NF_SA_STATUS_DENIED);
    for (int i = 0; i < 5; i++)
        if (ep[i] != 11) assert_int_equal(nf_mcgm_leave(m, &g, port(x.f, ep[i]), 80, &r), 0);
    assert_int_equal(r.state, NF_MCG_DESTROYING);
    assert_int_equal(efi_sum(&x, m), 0);
    nf_mcgm_tick(m, 180);
    assert_int_equal(nf_mcgm_query(m, &g, &r), NF_SA_STATUS_NO_RECORDS);
    /* a crashed member: it never leaves, the leave timeout destroys the group */
    nf_gid g2 = mgid(10);
    for (int i = 0; i < 3; i++)
        assert_int_equal(nf_mcgm_join(m, &g2, port(x.f, ep[i]), 3, 1000, &r), 0);
    assert_int_equal(r.state, NF_MCG_READY);
    assert_int_equal(nf_mcgm_leave(m, &g2, port(x.f, ep[0]), 1100, &r), 0);
    assert_int_equal(nf_mcgm_leave(m, &g2, port(x.f, ep[1]), 1200, &r), 0);
    assert_int_equal(nf_mcgm_tick(m, 1499), 0);
    assert_int_equal(nf_mcgm_tick(m, 1500), 1);
    assert_int_equal(nf_mcgm_query(m, &g2, &r), 0);
    assert_int_equal(r.state, NF_MCG_DESTROYING);
    assert_int_equal(efi_sum(&x, m), 0);
    /* a leave before Ready takes the join back; the last one out destroys the group */
    nf_gid g3 = mgid(11);
    assert_int_equal(nf_mcgm_join(m, &g3, port(x.f, 1), 3, 2000, &r), 0);
    assert_int_equal(nf_mcgm_join(m, &g3, port(x.f, 2), 3, 2000, &r), 0);
    assert_int_equal(nf_mcgm_leave(m, &g3, port(x.f, 1), 2001, &r), 0);
    assert_int_equal(r.joined, 1);
    assert_int_equal(r.state, NF_MCG_RECEIVING_JOIN);
    assert_int_equal(nf_mcgm_join(m, &g3, port(x.f, 1), 3, 2002, &r), 0); /* may join again */
    assert_int_equal(r.joined, 2);
    assert_int_equal(nf_mcgm_leave(m, &g3, port(x.f, 1), 2003, &r), 0);
    assert_int_equal(r.joined, 1);
    assert_int_equal(nf_mcgm_leave(m, &g3, port(x.f, 2), 2003, &r), 0);
    assert_int_equal(r.state, NF_MCG_DESTROYING);
    nf_mcgm_free(m);
    fx_free(&x);
}

/* ---- MLIDs ---------------------------------------------------------------------------------- */

static void test_mlids_run_out(void **state) {
    (void)state;
    fixture x = fx("fattree:k=4");
    nf_mcgm *m = mgr(&x, NULL, NULL);
    nf_mcgstate_rec r;
    uint32_t n = NF_MLID_MAX - NF_MLID_BASE + 1;
    for (uint32_t k = 0; k < n; k++) {
        nf_gid g = mgid(k);
        assert_int_equal(nf_mcgm_join(m, &g, port(x.f, 0), 2, 0, &r), 0);
        assert_int_equal(r.mlid, NF_MLID_BASE + k);
    }
    nf_gid g = mgid(n);
    assert_int_equal(nf_mcgm_join(m, &g, port(x.f, 0), 2, 0, &r), NF_SA_STATUS_NO_RESOURCES);
    assert_int_equal(nf_mcgm_query(m, &g, &r), NF_SA_STATUS_NO_RECORDS);
    size_t listed = nf_mcgm_list(m, NULL, 0);
    assert_int_equal(listed, n);
    nf_mcgm_free(m);
    fx_free(&x);
}

/* ---- random churn, loads against a recount -------------------------------------------------- */

static uint64_t rng_state;
static uint32_t rnd(uint32_t bound) {
    rng_state = rng_state * 6364136223846793005ULL + 1442695040888963407ULL;
    return (uint32_t)((rng_state >> 33) % bound);
}

/* Drives a manager with random joins, leaves and clock ticks over 12 groups of 2..9 members:
 * after every step the live loads equal a recount of the routed trees and those trees verify.
 * Every request's status is the one a model of the memberships predicts: per group, which of
 * its ports are members (joined, not taken back) and which have left; from the group's state
 * before the request (no record, Destroying, joining or past it). Returns the manager; the log
 * (optional) receives the journal. */
static nf_mcgm *churn(const fixture *x, const nf_mcgm_opts *o, memlog *log, int steps,
                      uint64_t seed, uint64_t *now_out) {
    nf_mcgm *m = mgr(x, o, log);
    uint32_t E = x->f->n_cas;
    uint32_t size[12], mem[12][9];
    bool in[12][9], gone[12][9]; /* member of the current group; has left it */
    for (int k = 0; k < 12; k++) {
        size[k] = 0;
    }
    rng_state = seed;
    uint64_t now = 0;
    nf_mcgstate_rec r;
    for (int step = 0; step < steps; step++) {
        int k = (int)rnd(12);
        nf_gid g = mgid((uint32_t)k);
        bool none = nf_mcgm_query(m, &g, &r) == NF_SA_STATUS_NO_RECORDS;
        int before = r.state;
        if (none) size[k] = 0;
        if (size[k] == 0) { /* a fresh membership for this MGID */
            size[k] = 2 + rnd(8);
            memset(in[k], 0, sizeof in[k]);
            memset(gone[k], 0, sizeof gone[k]);
            for (uint32_t i = 0; i < size[k]; i++)
                mem[k][i] = rnd(E);
            for (uint32_t i = 0; i < size[k]; i++) /* distinct */
                for (uint32_t j = 0; j < i; j++)
                    if (mem[k][i] == mem[k][j])
                        mem[k][i] = (mem[k][i] + 1 + i) % E, j = (uint32_t)-1;
        }
        uint32_t i = rnd(size[k]), who = mem[k][i];
        uint16_t want;
        switch (rnd(6)) {
        case 0:
        case 1:
        case 2:
            if (!none && before == NF_MCG_DESTROYING) want = NF_SA_STATUS_DENIED;
            else if (gone[k][i]) want = NF_SA_STATUS_DENIED; /* no coming back once left */
            else if (in[k][i] || none || before == NF_MCG_RECEIVING_JOIN) want = 0, in[k][i] = 1;
            else want = NF_SA_STATUS_REQ_INVALID; /* a port too many: not reached here */
            assert_int_equal(nf_mcgm_join(m, &g, port(x->f, who), size[k], now, &r), want);
            break;
        case 3:
            if (none) want = NF_SA_STATUS_NO_RECORDS;
            else if (before == NF_MCG_DESTROYING) want = 0;
            else if (!in[k][i]) want = NF_SA_STATUS_REQ_INVALID;
            else if (before == NF_MCG_RECEIVING_JOIN) want = 0, in[k][i] = 0; /* taken back */
            else want = 0, gone[k][i] = 1;
            assert_int_equal(nf_mcgm_leave(m, &g, port(x->f, who), now, &r), want);
            break;
        default: now += rnd(300); nf_mcgm_tick(m, now);
        }
        assert_verified(x, m);
    }
    *now_out = now;
    return m;
}

static void test_churn_loads_exact(void **state) {
    (void)state;
    fixture x = fx("torus:4x3x3,c=2");
    nf_mcgm_opts o = {.join_timeout_ms = 800, .leave_timeout_ms = 600, .linger_ms = 200};
    uint64_t now;
    nf_mcgm *m = churn(&x, &o, NULL, 3000, 11, &now);
    nf_mcgm_counters c;
    nf_mcgm_get_counters(m, &c);
    assert_true(c.ready > 20); /* the walk reaches every state, many times */
    assert_true(c.destroyed > 20);
    /* time passes: everything not Ready times out or leaves; then all loads are zero once
     * every Ready group's members leave */
    nf_mcgm_tick(m, now + 100000);
    nf_mcgm_tick(m, now + 200000); /* and the destroyed ones stop lingering */
    nf_mcgstate_rec *list = calloc(64, sizeof *list);
    size_t n = nf_mcgm_list(m, list, 64);
    for (size_t i = 0; i < n; i++)
        assert_true(list[i].state == NF_MCG_READY);
    free(list);
    nf_mcgm_free(m);
    /* the same with the old way: every join and leave recomputes */
    o.recompute_each_join = true;
    m = churn(&x, &o, NULL, 1500, 12, &now);
    nf_mcgm_get_counters(m, &c);
    assert_true(c.routes > c.ready);
    nf_mcgm_free(m);
    fx_free(&x);
}

/* ---- journal replay ------------------------------------------------------------------------- */

/* Two managers agree: same groups, states, counts, MLIDs, trees and loads. */
static size_t live_list(const nf_mcgm *m, nf_mcgstate_rec *out) {
    size_t n = nf_mcgm_list(m, out, 64), w = 0;
    assert_true(n <= 64);
    for (size_t i = 0; i < n; i++) /* destroyed groups do not survive a restart */
        if (out[i].state != NF_MCG_DESTROYING) out[w++] = out[i];
    return w;
}

static void assert_same_state(const fixture *x, const nf_mcgm *a, const nf_mcgm *b) {
    nf_mcgstate_rec la[64], lb[64];
    size_t na = live_list(a, la), nb = live_list(b, lb);
    assert_int_equal(na, nb);
    for (size_t i = 0; i < na; i++) {
        assert_memory_equal(la[i].mgid.raw, lb[i].mgid.raw, 16);
        assert_int_equal(la[i].mlid, lb[i].mlid);
        assert_int_equal(la[i].state, lb[i].state);
        assert_int_equal(la[i].joined, lb[i].joined);
        assert_int_equal(la[i].left, lb[i].left);
        assert_int_equal(la[i].member_count, lb[i].member_count);
    }
    assert_memory_equal(nf_mcgm_efi(a), nf_mcgm_efi(b), x->f->n_links * sizeof(uint32_t));
    nf_groups *ga, *gb;
    nf_mcast *ma, *mb;
    uint16_t *mla, *mlb;
    assert_int_equal(nf_mcgm_export(a, &ga, &ma, &mla), 0);
    assert_int_equal(nf_mcgm_export(b, &gb, &mb, &mlb), 0);
    assert_int_equal(ma->n_groups, mb->n_groups);
    assert_memory_equal(mla, mlb, ma->n_groups * sizeof *mla);
    assert_memory_equal(ma->root, mb->root, ma->n_groups * sizeof *ma->root);
    assert_memory_equal(ma->tree_off, mb->tree_off, (ma->n_groups + 1) * sizeof *ma->tree_off);
    assert_memory_equal(ma->tree_link, mb->tree_link,
                        ma->tree_off[ma->n_groups] * sizeof *ma->tree_link);
    assert_memory_equal(ga->off, gb->off, (ga->n + 1) * sizeof *ga->off);
    assert_memory_equal(ga->member, gb->member, ga->off[ga->n] * sizeof *ga->member);
    nf_groups_free(ga);
    nf_groups_free(gb);
    nf_mcast_free(ma);
    nf_mcast_free(mb);
    nf_free(mla);
    nf_free(mlb);
}

static nf_mcgm *replayed(const fixture *x, const nf_mcgm_opts *o, const memlog *log, size_t n,
                         uint64_t now) {
    nf_mcgm *m = mgr(x, o, NULL);
    for (size_t i = 0; i < n; i++)
        if (nf_mcgm_replay(m, log->rec[i], log->len[i]))
            fail_msg("record %zu (type %u, %u bytes) refused", i, log->rec[i][0], log->len[i]);
    assert_int_equal(nf_mcgm_replay_done(m, now), 0);
    return m;
}

static void test_replay(void **state) {
    (void)state;
    fixture x = fx("torus:4x3x3,c=2");
    nf_mcgm_opts o = {.join_timeout_ms = 800, .leave_timeout_ms = 600, .linger_ms = 200};
    for (int recompute = 0; recompute < 2; recompute++) {
        o.recompute_each_join = recompute;
        memlog log = {0};
        uint64_t now;
        nf_mcgm *a = churn(&x, &o, &log, 1500, 21 + (uint64_t)recompute, &now);
        nf_mcgm *b = replayed(&x, &o, &log, log.n, now);
        /* groups mid-join in a got a fresh timeout in b; apart from deadlines they agree */
        assert_same_state(&x, a, b);
        /* the snapshot replays to the same state too, and is shorter */
        memlog snap = {0};
        assert_int_equal(nf_mcgm_snapshot(a, memlog_emit, &snap), 0);
        assert_true(snap.n < log.n);
        nf_mcgm *c = replayed(&x, &o, &snap, snap.n, now);
        assert_same_state(&x, a, c);
        nf_mcgm_free(a);
        nf_mcgm_free(b);
        nf_mcgm_free(c);
        memlog_free(&log);
        memlog_free(&snap);
    }
    fx_free(&x);
}

/* A crash between the last join's record and its routes: replay routes the group. A crash in the
 * middle of joins: the group collects again under a fresh timeout. */
static void test_replay_mid_join(void **state) {
    (void)state;
    fixture x = fx("fattree:k=4");
    nf_mcgm_opts o = {.join_timeout_ms = 1000};
    memlog log = {0};
    nf_mcgm *a = mgr(&x, &o, &log);
    nf_gid g = mgid(0), h2 = mgid(1);
    nf_mcgstate_rec r;
    assert_int_equal(nf_mcgm_join(a, &g, port(x.f, 0), 3, 0, &r), 0);
    assert_int_equal(nf_mcgm_join(a, &g, port(x.f, 6), 3, 0, &r), 0);
    assert_int_equal(nf_mcgm_join(a, &h2, port(x.f, 1), 2, 0, &r), 0);
    assert_int_equal(nf_mcgm_join(a, &h2, port(x.f, 9), 2, 0, &r), 0);
    assert_int_equal(r.state, NF_MCG_READY);
    size_t before_tree = log.n - 1; /* the last record is h2's TREE */
    assert_int_equal(log.rec[before_tree][0], 4);
    nf_mcgm *b = replayed(&x, &o, &log, before_tree, 5000);
    assert_int_equal(nf_mcgm_query(b, &h2, &r), 0);
    assert_int_equal(r.state, NF_MCG_READY); /* routed at replay_done */
    assert_int_equal(nf_mcgm_query(b, &g, &r), 0);
    assert_int_equal(r.state, NF_MCG_RECEIVING_JOIN);
    assert_int_equal(r.joined, 2);
    assert_int_equal(nf_mcgm_next_deadline(b), 6000); /* a fresh join timeout */
    assert_memory_equal(nf_mcgm_efi(a), nf_mcgm_efi(b), x.f->n_links * sizeof(uint32_t));
    assert_int_equal(nf_mcgm_join(b, &g, port(x.f, 12), 3, 5500, &r), 0);
    assert_int_equal(r.state, NF_MCG_READY);
    assert_verified(&x, b);
    /* a journal of another fabric is refused at its first record */
    memlog snap = {0};
    assert_int_equal(nf_mcgm_snapshot(a, memlog_emit, &snap), 0);
    fixture y = fx("fattree:k=6");
    nf_mcgm *c = mgr(&y, &o, NULL);
    assert_int_equal(nf_mcgm_replay(c, snap.rec[0], snap.len[0]), NF_EINVAL);
    /* and garbage is no record */
    static const uint8_t junk[] = {9, 1, 2};
    assert_int_equal(nf_mcgm_replay(c, junk, sizeof junk), NF_EPARSE);
    assert_int_equal(nf_mcgm_replay(c, junk, 0), NF_EPARSE);
    nf_mcgm_free(c);
    fx_free(&y);
    nf_mcgm_free(a);
    nf_mcgm_free(b);
    memlog_free(&log);
    memlog_free(&snap);
    fx_free(&x);
}

/* ---- dumps ---------------------------------------------------------------------------------- */

static void test_dump(void **state) {
    (void)state;
    fixture x = fx("fattree:k=4");
    nf_mcgm *m = mgr(&x, NULL, NULL);
    nf_gid g = mgid(0), h2 = mgid(1);
    nf_mcgstate_rec r;
    assert_int_equal(nf_mcgm_join(m, &h2, port(x.f, 3), 2, 0, &r), 0); /* MLID 0xC000, joining */
    assert_int_equal(r.mlid, 0xC000);
    assert_int_equal(nf_mcgm_join(m, &g, port(x.f, 0), 2, 0, &r), 0); /* MLID 0xC001 */
    assert_int_equal(r.mlid, 0xC001);
    assert_int_equal(nf_mcgm_join(m, &g, port(x.f, 15), 2, 0, &r), 0);
    assert_int_equal(r.state, NF_MCG_READY);
    char *mft = NULL, *tab = NULL;
    size_t mft_n = 0, tab_n = 0;
    FILE *a = open_memstream(&mft, &mft_n), *b = open_memstream(&tab, &tab_n);
    assert_int_equal(nf_mcgm_write_dump(m, a, b), 0);
    fclose(a);
    fclose(b);
    /* only the Ready group has forwarding entries, under its MLID */
    assert_non_null(strstr(mft, "0xC001 :"));
    assert_null(strstr(mft, "0xC000 :"));
    assert_non_null(strstr(tab, "0xC000 ff12:401b:ffff:0000:0000:0000:0000:1001 "
                                "ReceivingJoinReq 2 1 0 -"));
    assert_non_null(strstr(tab, "0xC001 ff12:401b:ffff:0000:0000:0000:0000:1000 Ready 2 2 0 0x"));
    free(mft);
    free(tab);
    nf_mcgm_free(m);
    fx_free(&x);
}

/* ---- hostile requesters --------------------------------------------------------------------- */

/* MGIDs that are not multicast GIDs, and MemberCounts above the fabric's endpoints and
 * switches (a switch may join by its port 0). */
static void test_invalid_mgid_count(void **state) {
    (void)state;
    fixture x = fx("torus:4x4x2,c=2"); /* 64 endpoints, 32 switches */
    nf_mcgm *m = mgr(&x, NULL, NULL);
    nf_mcgstate_rec r;
    nf_gid zero = {{0}}, ll = nf_gid_make(0xfe80000000000000ULL, 1),
           flags = nf_gid_make(0xff32000000000000ULL, 1); /* reserved flag bit set */
    assert_false(nf_mcgm_mgid_valid(&zero));
    assert_false(nf_mcgm_mgid_valid(&ll));
    assert_false(nf_mcgm_mgid_valid(&flags));
    assert_true(nf_mcgm_mgid_valid(&(nf_gid){{0xff, 0x12}}));
    assert_int_equal(nf_mcgm_join(m, &zero, port(x.f, 0), 2, 1, &r), NF_SA_STATUS_INVALID_GID);
    assert_int_equal(nf_mcgm_join(m, &ll, port(x.f, 0), 2, 1, &r), NF_SA_STATUS_INVALID_GID);
    assert_int_equal(nf_mcgm_leave(m, &ll, port(x.f, 0), 1, &r), NF_SA_STATUS_INVALID_GID);
    assert_int_equal(nf_mcgm_query(m, &flags, &r), NF_SA_STATUS_INVALID_GID);
    nf_gid g = mgid(1);
    assert_int_equal(nf_mcgm_join(m, &g, port(x.f, 0), 97, 1, &r), NF_SA_STATUS_REQ_INVALID);
    assert_int_equal(nf_mcgm_join(m, &g, port(x.f, 0), NF_MEMBER_COUNT_MAX, 1, &r),
                     NF_SA_STATUS_REQ_INVALID);
    assert_int_equal(nf_mcgm_query(m, &g, &r), NF_SA_STATUS_NO_RECORDS); /* nothing created */
    assert_int_equal(nf_mcgm_join(m, &g, port(x.f, 0), 96, 1, &r), 0);
    nf_mcgm_free(m);
    fx_free(&x);
}

/* Per-owner limits: pending groups (not yet Ready) and groups holding an MLID (lingering
 * destroyed ones too); other owners and the manager (owner 0) are not held back; a Ready group
 * frees a pending place, a forgotten one an MLID place. */
static void test_owner_limits(void **state) {
    (void)state;
    fixture x = fx("torus:4x4x2,c=2");
    nf_mcgm_opts o = {.max_groups_per_owner = 4, .max_pending_per_owner = 2, .linger_ms = 100};
    nf_mcgm *m = mgr(&x, &o, NULL);
    nf_mcgstate_rec r;
    uint64_t a = port(x.f, 0), b = port(x.f, 1);
    nf_gid g1 = mgid(1), g2 = mgid(2), g3 = mgid(3), g4 = mgid(4), g5 = mgid(5), g6 = mgid(6);
    assert_int_equal(nf_mcgm_join_as(m, a, &g1, a, 2, 1, &r), 0);
    assert_int_equal(nf_mcgm_join_as(m, a, &g2, a, 2, 1, &r), 0);
    assert_int_equal(nf_mcgm_join_as(m, a, &g3, a, 2, 1, &r), NF_SA_STATUS_NO_RESOURCES);
    assert_int_equal(nf_mcgm_query(m, &g3, &r), NF_SA_STATUS_NO_RECORDS);
    assert_int_equal(nf_mcgm_join_as(m, b, &g3, b, 2, 1, &r), 0); /* another owner */
    assert_int_equal(nf_mcgm_join_as(m, 0, &g4, a, 1, 1, &r), 0); /* the manager */
    /* joining groups a did not create is not limited */
    assert_int_equal(nf_mcgm_join_as(m, a, &g3, a, 2, 1, &r), 0);
    assert_int_equal(r.state, NF_MCG_READY);
    /* g1 Ready: a has one pending place again */
    assert_int_equal(nf_mcgm_join_as(m, b, &g1, b, 2, 2, &r), 0);
    assert_int_equal(r.state, NF_MCG_READY);
    assert_int_equal(nf_mcgm_join_as(m, a, &g5, a, 1, 3, &r), 0); /* Ready at once */
    assert_int_equal(nf_mcgm_join_as(m, a, &g6, a, 1, 3, &r), 0);
    /* a holds g1, g2, g5, g6: four MLIDs, the limit */
    nf_gid g7 = mgid(7);
    assert_int_equal(nf_mcgm_join_as(m, a, &g7, a, 1, 4, &r), NF_SA_STATUS_NO_RESOURCES);
    nf_mcgm_counters c;
    nf_mcgm_get_counters(m, &c);
    assert_int_equal(c.refused_limit, 2);
    /* g5 destroyed: it still holds its MLID while it lingers, then a may create again */
    assert_int_equal(nf_mcgm_leave(m, &g5, a, 5, &r), 0);
    assert_int_equal(r.state, NF_MCG_DESTROYING);
    assert_int_equal(nf_mcgm_join_as(m, a, &g7, a, 1, 6, &r), NF_SA_STATUS_NO_RESOURCES);
    nf_mcgm_tick(m, 200);
    assert_int_equal(nf_mcgm_join_as(m, a, &g7, a, 1, 201, &r), 0);
    nf_mcgm_free(m);
    fx_free(&x);
}

/* The owner of every group survives a restart (CREATE records carry it), so a restart does not
 * give a flooding port a fresh quota; a 23-byte CREATE of an older journal is the manager's. */
static void test_owner_replayed(void **state) {
    (void)state;
    fixture x = fx("torus:4x4x2,c=2");
    nf_mcgm_opts o = {.max_pending_per_owner = 2};
    memlog log = {0};
    nf_mcgm *m = mgr(&x, &o, &log);
    nf_mcgstate_rec r;
    uint64_t a = port(x.f, 0);
    nf_gid g1 = mgid(1), g2 = mgid(2), g3 = mgid(3);
    assert_int_equal(nf_mcgm_join_as(m, a, &g1, a, 2, 1, &r), 0);
    assert_int_equal(nf_mcgm_join_as(m, a, &g2, a, 2, 1, &r), 0);
    nf_mcgm_free(m);
    nf_mcgm *n = mgr(&x, &o, NULL);
    for (size_t i = 0; i < log.n; i++)
        assert_int_equal(nf_mcgm_replay(n, log.rec[i], log.len[i]), 0);
    assert_int_equal(nf_mcgm_replay_done(n, 10), 0);
    assert_int_equal(nf_mcgm_join_as(n, a, &g3, a, 2, 11, &r), NF_SA_STATUS_NO_RESOURCES);
    nf_mcgm_free(n);
    /* the same CREATEs cut to the old 23 bytes: groups of the manager, a is not limited */
    nf_mcgm *old = mgr(&x, &o, NULL);
    for (size_t i = 0; i < log.n; i++) {
        uint32_t len = log.rec[i][0] == 1 ? 23 : log.len[i];
        assert_int_equal(nf_mcgm_replay(old, log.rec[i], len), 0);
    }
    assert_int_equal(nf_mcgm_replay_done(old, 10), 0);
    assert_int_equal(nf_mcgm_join_as(old, a, &g3, a, 2, 11, &r), 0);
    nf_mcgm_free(old);
    memlog_free(&log);
    fx_free(&x);
}


/* What the library hands over is released through the allocator hook: nf_mcgm_export's three
 * results, freed with nf_groups_free, nf_mcast_free and nf_free, give back every block the hook
 * gave (a libc free of the MLID array would leave the count one short, and with a hook of its
 * own pool it would crash). */
static long live_blocks;
static void *count_malloc(size_t n, void *ud) {
    (void)ud;
    void *p = malloc(n);
    if (p) live_blocks++;
    return p;
}
static void *count_realloc(void *p, size_t n, void *ud) {
    (void)ud;
    void *q = realloc(p, n);
    if (q && !p) live_blocks++;
    return q;
}
static void count_free(void *p, void *ud) {
    (void)ud;
    if (p) live_blocks--;
    free(p);
}

static void test_export_released_by_the_hook(void **state) {
    (void)state;
    fixture x = fx("fattree:k=4");
    nf_mcgm *m = mgr(&x, NULL, NULL);
    nf_mcgstate_rec r;
    nf_gid g = mgid(0);
    assert_int_equal(nf_mcgm_join(m, &g, port(x.f, 0), 2, 1, &r), 0);
    assert_int_equal(nf_mcgm_join(m, &g, port(x.f, 5), 2, 1, &r), 0);
    assert_int_equal(r.state, NF_MCG_READY);
    nf_set_allocator(&(nf_allocator){count_malloc, count_realloc, count_free, NULL});
    live_blocks = 0;
    nf_groups *gr;
    nf_mcast *mc;
    uint16_t *ml;
    assert_int_equal(nf_mcgm_export(m, &gr, &mc, &ml), 0);
    assert_true(live_blocks > 0);
    nf_groups_free(gr);
    nf_mcast_free(mc);
    nf_free(ml);
    assert_int_equal(live_blocks, 0);
    nf_set_allocator(NULL);
    nf_mcgm_free(m);
    fx_free(&x);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_joins_in_order),
        cmocka_unit_test(test_joins_shuffled_duplicated),
        cmocka_unit_test(test_join_errors),
        cmocka_unit_test(test_lost_join),
        cmocka_unit_test(test_leaves),
        cmocka_unit_test(test_mlids_run_out),
        cmocka_unit_test(test_churn_loads_exact),
        cmocka_unit_test(test_replay),
        cmocka_unit_test(test_replay_mid_join),
        cmocka_unit_test(test_dump),
        cmocka_unit_test(test_invalid_mgid_count),
        cmocka_unit_test(test_owner_limits),
        cmocka_unit_test(test_owner_replayed),
        cmocka_unit_test(test_export_released_by_the_hook),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
