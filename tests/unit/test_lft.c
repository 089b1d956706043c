/* SPDX-License-Identifier: MIT */
/* Two-level forwarding tables against hand-checked lookups, a brute-force comparison with the
 * flat table over every (switch, endpoint) pair, memory arithmetic worked by hand, a fabric
 * where the two layouts must differ (gft: a spine reaches a sibling pair through either leaf),
 * failed links, bad input and allocation failures. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "netfab/gen.h"
#include "netfab/lft.h"

#include <stdlib.h>
#include <string.h>

static void build(const char *spec, nf_fabric **f, nf_hops **h, nf_lft **t) {
    nf_diag d = {{0}, 0, {0}};
    if (nf_topo_build(spec, NULL, f, &d)) fail_msg("%s: %s", spec, d.msg);
    assert_int_equal(nf_hops_compute(*f, 2, h), 0);
    if (nf_lft_build(*f, *h, 2, t, &d)) fail_msg("%s: tables: %s", spec, d.msg);
}

static void unbuild(nf_fabric *f, nf_hops *h, nf_lft *t) {
    nf_lft_free(t);
    nf_hops_free(h);
    nf_fabric_free(f);
}

static void expect_ports(const nf_lft *t, nf_node s, nf_node ca, const uint8_t *want, unsigned n) {
    const uint8_t *got;
    unsigned k = nf_lft_lookup(t, s, ca, &got);
    if (k != n || memcmp(got, want, n))
        fail_msg("switch %u to endpoint %u: %u ports (first %u), want %u (first %u)", s, ca, k,
                 k ? got[0] : 0, n, n ? want[0] : 0);
}

/* taihulight:sn=2: two supernodes of 16 leaves x 16 endpoints and 2 level-2 switches; one group
 * of 16 level-3 switches; 4 top switches per level-3 plane (README, generators). Leaf i has
 * endpoint ports 1..16 and level-2 ports 17, 18; a level-2 switch has leaf ports 1..16 and
 * level-3 ports 17..32. */
static void test_hand_checked(void **state) {
    (void)state;
    nf_fabric *f;
    nf_hops *h;
    nf_lft *t;
    build("taihulight:sn=2", &f, &h, &t);
    nf_node S = f->n_switches, ca0 = S, leaf0 = 0, l2_0 = 32; /* L2 switches after 32 leaves */
    expect_ports(t, leaf0, ca0, (const uint8_t[]){1}, 1);     /* its own endpoint */
    expect_ports(t, leaf0, ca0 + 5, (const uint8_t[]){6}, 1); /* port 6 */
    expect_ports(t, leaf0, ca0 + 16, (const uint8_t[]){17, 18}, 2);  /* leaf 1: via both L2 */
    expect_ports(t, leaf0, ca0 + 300, (const uint8_t[]){17, 18}, 2); /* supernode 1 */
    expect_ports(t, l2_0, ca0 + 16, (const uint8_t[]){2}, 1);        /* down to leaf 1 */
    uint8_t up[16];
    for (int i = 0; i < 16; i++)
        up[i] = (uint8_t)(17 + i);
    expect_ports(t, l2_0, ca0 + 300, up, 16); /* up to every level-3 switch */
    nf_lft_memory m;
    nf_lft_memory_of(t, &m);
    assert_int_equal(m.endpoints, 512);
    assert_int_equal(m.supernodes, 2);
    assert_int_equal(m.intra_max, 256);
    assert_int_equal(m.entry_ports, 16);
    assert_int_equal(m.table_ports, 896); /* netfab topo --stats: 896 switch ports used */
    assert_int_equal(m.flat_table_bytes, 512 * 16);
    assert_int_equal(m.two_level_table_bytes, (256 + 2) * 16);
    assert_int_equal(m.two_level_bytes, (uint64_t)(256 + 2) * 16 * 896);
    /* every pair, brute force, against the flat entries */
    uint8_t flat[NF_MAX_PORTS];
    uint64_t pairs = 0;
    for (nf_node s = 0; s < S; s++)
        for (nf_node c = S; c < f->n_nodes; c++) {
            unsigned k = nf_lft_flat_entry(f, h, s, c, flat, NF_MAX_PORTS);
            assert_true(k >= 1);
            expect_ports(t, s, c, flat, k);
            pairs++;
        }
    uint64_t looked = 0, bad = 1;
    nf_diag d = {{0}, 0, {0}};
    assert_int_equal(nf_lft_check(t, 2, &looked, &bad, &d), 0);
    assert_int_equal(bad, 0);
    /* the check skips only repeats: at a switch outside an endpoint's supernode, the other
     * endpoints of its leaf; 116 switches, 2 x 18 of them inside a supernode of 256 endpoints
     * (and 16 leaves in the other), 80 outside both (32 leaves) */
    assert_int_equal(looked, 36 * (256 + 16) + (116 - 36) * 32);
    assert_true(looked < pairs);
    /* not endpoints, not switches */
    const uint8_t *p;
    assert_int_equal(nf_lft_lookup(t, 0, 1, &p), 0);
    assert_int_equal(nf_lft_lookup(t, f->n_nodes, ca0, &p), 0);
    assert_int_equal(nf_lft_flat_entry(f, h, ca0, ca0 + 1, flat, 4), 0);
    unbuild(f, h, t);
}

/* gft: a supernode is a sibling pair of leaves; a spine is one hop from both, so its inter
 * entry for the pair lists both leaves' ports, where the flat entry of an endpoint lists only
 * its own leaf's: the check must report it, at a spine. */
static void test_gft_differs(void **state) {
    (void)state;
    nf_fabric *f;
    nf_hops *h;
    nf_lft *t;
    build("gft:leaves=4,nodes=2,spines=2", &f, &h, &t);
    uint64_t looked = 0, bad = 0;
    nf_diag d = {{0}, 0, {0}};
    assert_int_equal(nf_lft_check(t, 1, &looked, &bad, &d), 0);
    assert_true(bad > 0);
    if (!strstr(d.msg, "spine")) fail_msg("first mismatch: %s", d.msg);
    unbuild(f, h, t);
}

/* A failed link is in neither table: leaf 0's level-2 link to L2 0 down, its entries towards
 * the other leaves keep only port 18, and the two layouts still agree. */
static void test_failed_link(void **state) {
    (void)state;
    nf_fabric *f;
    nf_hops *h;
    nf_lft *t;
    nf_diag d = {{0}, 0, {0}};
    assert_int_equal(nf_topo_build("taihulight:sn=2", NULL, &f, &d), 0);
    f->link_state[f->port_link[nf_port_index(f, 0, 17)]] = NF_LINK_DOWN;
    assert_int_equal(nf_hops_compute(f, 1, &h), 0);
    assert_int_equal(nf_lft_build(f, h, 1, &t, &d), 0);
    nf_node ca0 = f->n_switches;
    expect_ports(t, 0, ca0 + 16, (const uint8_t[]){18}, 1);
    expect_ports(t, 0, ca0 + 300, (const uint8_t[]){18}, 1);
    /* L2 0 to leaf 0 is 3 hops now: down to any other leaf (ports 2..16) or up to any level-3
     * switch (17..32), then L2 1, then leaf 0 */
    uint8_t flat[40], want[31];
    for (int i = 0; i < 31; i++)
        want[i] = (uint8_t)(2 + i);
    assert_int_equal(nf_lft_flat_entry(f, h, 32, ca0 + 1, flat, 40), 31);
    assert_memory_equal(flat, want, 31);
    expect_ports(t, 32, ca0 + 1, want, 31);
    uint64_t looked, bad;
    assert_int_equal(nf_lft_check(t, 1, &looked, &bad, &d), 0);
    /* intra rows are flat rows; but a level-3 switch's one entry for supernode 0 still lists
     * both level-2 switches, where the flat entries of leaf 0's endpoints now list only L2 1:
     * one mismatch per level-3 switch (16), the precision a table per supernode gives up */
    if (bad != 16 || !strstr(d.msg, "taihulight L3 0 to taihulight node 0"))
        fail_msg("%llu mismatches, first: %s", (unsigned long long)bad, d.msg);
    unbuild(f, h, t);
}

/* The fault-tolerant table on gft:leaves=4,nodes=2,spines=3 (leaf q: endpoint ports 1, 2, spine
 * j on port 3 + j; endpoints 2q and 2q + 1 on leaf q), without and with sibling links. */
static void test_ftable(void **state) {
    (void)state;
    nf_fabric *f;
    nf_hops *h;
    nf_ftable *t;
    nf_diag d = {{0}, 0, {0}};
    assert_int_equal(nf_topo_build("gft:leaves=4,nodes=2,spines=3,sib=0", NULL, &f, &d), 0);
    assert_int_equal(nf_hops_compute(f, 1, &h), 0);
    assert_int_equal(nf_ftable_build(f, h, 2, &t), 0);
    nf_node S = f->n_switches;
    const uint8_t *p;
    /* leaf 0 to endpoint 3 (leaf 1): the three up ports rotated by 3 mod 3 = 0; to endpoint 2 by
     * 2; nothing one hop longer in a plain tree */
    assert_int_equal(nf_ftable_entry(t, 0, S + 3, &p), 3);
    assert_memory_equal(p, ((const uint8_t[]){3, 4, 5}), 3);
    assert_int_equal(nf_ftable_entry(t, 0, S + 2, &p), 3);
    assert_memory_equal(p, ((const uint8_t[]){5, 3, 4}), 3);
    assert_int_equal(nf_ftable_entry(t, 0, S + 1, &p), 1);
    assert_int_equal(p[0], 2);
    uint64_t pairs, got;
    assert_int_equal(nf_ftable_reach(t, 1, &pairs, &got), 0);
    assert_int_equal(pairs, 56);
    assert_int_equal(got, 56);
    /* leaf 1 to spine 0 down: endpoint 3's traffic from the 6 endpoints off leaf 1 goes up to
     * spine 0 first (rotation 0) and dies there; endpoint 2's starts at spine 2 */
    nf_link l = f->port_link[nf_port_index(f, 1, 3)];
    f->link_state[l] = NF_LINK_DOWN;
    assert_int_equal(nf_ftable_next(t, f->link_state, 1, S + 7),
                     4); /* leaf 1 skips its dead port */
    assert_int_equal(nf_ftable_reach(t, 2, &pairs, &got), 0);
    assert_int_equal(got, 50);
    /* every up link of leaf 0 down: its 2 endpoints neither send nor receive: 2 x 2 x 6 lost */
    f->link_state[l] = NF_LINK_UP;
    for (unsigned j = 0; j < 3; j++)
        f->link_state[f->port_link[nf_port_index(f, 0, 3 + j)]] = NF_LINK_DOWN;
    assert_int_equal(nf_ftable_reach(t, 1, &pairs, &got), 0);
    assert_int_equal(got, 56 - 24);
    nf_ftable_free(t);
    nf_hops_free(h);
    nf_fabric_free(f);
    /* with one sibling link per pair (leaf ports 6, spine ports 5): the spine's way to a leaf
     * it lost goes down to the leaf's sibling, then across; the leaf's sends go across first */
    assert_int_equal(nf_topo_build("gft:leaves=4,nodes=2,spines=4,sib=1", NULL, &f, &d), 0);
    assert_int_equal(nf_hops_compute(f, 1, &h), 0);
    assert_int_equal(nf_ftable_build(f, h, 1, &t), 0);
    S = f->n_switches;
    nf_node spine0 = 4;
    assert_int_equal(nf_ftable_entry(t, spine0, S + 0, &p), 3); /* leaf 0, leaf 1, spine 1 */
    assert_memory_equal(p, ((const uint8_t[]){1, 2, 5}), 3);
    assert_int_equal(nf_ftable_entry(t, 0, S + 4, &p), 5); /* 4 up ports, then the sibling */
    assert_int_equal(p[4], 7);
    for (unsigned j = 0; j < 4; j++)
        f->link_state[f->port_link[nf_port_index(f, 0, 3 + j)]] = NF_LINK_DOWN;
    assert_int_equal(nf_ftable_reach(t, 1, &pairs, &got), 0);
    assert_int_equal(pairs, 56);  /* 8 endpoints */
    assert_int_equal(got, pairs); /* through the sibling, everything still arrives */
    f->link_state[f->port_link[nf_port_index(f, 0, 7)]] = NF_LINK_DOWN; /* and the sibling */
    assert_int_equal(nf_ftable_reach(t, 1, &pairs, &got), 0);
    assert_int_equal(got, 56 - 24);
    nf_ftable_free(t);
    nf_ftable_free(NULL);
    nf_hops_free(h);
    nf_fabric_free(f);
}

/* Endpoints without a supernode, and every allocation failing in turn. */
static long budget;
static void *fail_malloc(size_t n, void *ud) {
    (void)ud;
    return budget-- > 0 ? malloc(n) : NULL;
}
static void *fail_realloc(void *p, size_t n, void *ud) {
    (void)ud;
    return budget-- > 0 ? realloc(p, n) : NULL;
}
static void plain_free(void *p, void *ud) {
    (void)ud;
    free(p);
}

static void test_bad_input(void **state) {
    (void)state;
    nf_fabric *f;
    nf_hops *h;
    nf_lft *t = (nf_lft *)1;
    nf_diag d = {{0}, 0, {0}};
    assert_int_equal(nf_topo_build("torus:4x4", NULL, &f, &d), 0);
    assert_int_equal(nf_hops_compute(f, 1, &h), 0);
    assert_int_equal(nf_lft_build(f, h, 1, &t, &d), NF_EINVAL);
    assert_null(t);
    if (!strstr(d.msg, "belongs to no supernode")) fail_msg("%s", d.msg);
    nf_hops_free(h);
    nf_fabric_free(f);
    nf_lft_free(NULL);
    assert_int_equal(nf_topo_build("gft:leaves=4,nodes=2,spines=2", NULL, &f, &d), 0);
    assert_int_equal(nf_hops_compute(f, 1, &h), 0);
    nf_allocator failing = {fail_malloc, fail_realloc, plain_free, NULL};
    for (long k = 0;; k++) {
        budget = k;
        nf_set_allocator(&failing);
        int rc = nf_lft_build(f, h, 1, &t, &d);
        uint64_t looked, bad;
        int rc2 = rc ? NF_ENOMEM : nf_lft_check(t, 1, &looked, &bad, &d);
        nf_set_allocator(NULL);
        if (rc == NF_OK) nf_lft_free(t);
        if (rc == NF_OK && rc2 == NF_OK) break;
        assert_int_equal(rc ? rc : rc2, NF_ENOMEM);
        if (rc) assert_null(t);
        assert_true(k < 1000);
    }
    nf_hops_free(h);
    nf_fabric_free(f);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_hand_checked), cmocka_unit_test(test_gft_differs),
        cmocka_unit_test(test_failed_link),  cmocka_unit_test(test_ftable),
        cmocka_unit_test(test_bad_input),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
