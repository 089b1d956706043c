/* SPDX-License-Identifier: MIT */
/* Min-hop distances: hand-checked small fabrics, faults, the one-byte limit, and agreement with the
 * plain reference BFS of testutil.h on generated and real fabrics, for 1 and 2 threads. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "netfab/gen.h"
#include "netfab/hops.h"
#include "testutil.h"

#include <stdio.h>
#include <string.h>

/* A chain of n switches s0 - s1 - ... with one CA on each; ports: 1 = CA, 2 = right, 3 = left.
 * Switch i is node i after freeze; CA i is node n + i. */
static nf_fabric *chain(unsigned n, bool ring) {
    nf_builder *b = nf_builder_new(0, 0);
    nf_node sw[400], ca[400];
    for (unsigned i = 0; i < n; i++) {
        assert_int_equal(nf_builder_add_node(b, NF_NODE_SWITCH, 3, NULL, &sw[i]), 0);
        assert_int_equal(nf_builder_add_node(b, NF_NODE_CA, 1, NULL, &ca[i]), 0);
        assert_int_equal(
            nf_builder_connect(b, sw[i], 1, ca[i], 1, &(nf_link_attr){.cls = NF_LINK_HOST}), 0);
        if (i)
            assert_int_equal(nf_builder_connect(b, sw[i - 1], 2, sw[i], 3,
                                                &(nf_link_attr){.cls = NF_LINK_LOCAL}),
                             0);
    }
    if (ring) assert_int_equal(nf_builder_connect(b, sw[n - 1], 2, sw[0], 3, NULL), 0);
    nf_fabric *f;
    assert_int_equal(nf_builder_freeze(b, true, &f), 0);
    nf_builder_free(b);
    assert_int_equal(nf_fabric_check(f, NULL), 0);
    return f;
}

static void test_chain_by_hand(void **state) {
    (void)state;
    nf_fabric *f = chain(5, false);
    nf_hops *h;
    assert_int_equal(nf_hops_compute(f, 2, &h), 0);
    for (unsigned i = 0; i < 5; i++)
        for (unsigned j = 0; j < 5; j++)
            assert_int_equal(nf_hops_sw(h, i, j), i > j ? i - j : j - i);
    int conn = 0;
    assert_int_equal(nf_hops_diameter(h, &conn), 4);
    assert_true(conn);
    /* switch 1 to the CA on switch 3 (node 5+3): right port = 1 + d(2,3) + 1 = 3, left = 1+3+1 */
    assert_int_equal(nf_hops_via(f, h, 1, 2, 8, 1), 3);
    assert_int_equal(nf_hops_via(f, h, 1, 3, 8, 1), 5);
    assert_int_equal(nf_hops_via(f, h, 1, 1, 8, 1), NF_HOPS_INF); /* port 1 leads to another CA */
    assert_int_equal(nf_hops_to_ca(f, h, 1, 8, 1), 3);
    assert_int_equal(nf_hops_via(f, h, 3, 1, 8, 1), 1); /* cabled straight to it */
    assert_int_equal(nf_hops_to_ca(f, h, 3, 8, 1), 1);
    nf_hops_free(h);
    nf_fabric_free(f);
}

static void test_ring_and_fault(void **state) {
    (void)state;
    nf_fabric *f = chain(6, true);
    nf_hops *h;
    assert_int_equal(nf_hops_compute(f, 1, &h), 0);
    assert_int_equal(nf_hops_sw(h, 0, 3), 3);
    assert_int_equal(nf_hops_sw(h, 0, 5), 1);
    assert_int_equal(nf_hops_diameter(h, NULL), 3);
    nf_hops_free(h);
    /* cut the wraparound link (0 - 5): the ring becomes a chain */
    nf_gport g = nf_port_index(f, 0, 3);
    nf_fabric_set_link_state(f, f->port_link[g], NF_LINK_DOWN);
    assert_int_equal(nf_hops_compute(f, 2, &h), 0);
    assert_int_equal(nf_hops_sw(h, 0, 5), 5);
    assert_int_equal(nf_hops_via(f, h, 0, 3, 6 + 5, 1), NF_HOPS_INF); /* the down port */
    /* cut 2 - 3 too: two islands */
    nf_fabric_set_link_state(f, f->port_link[nf_port_index(f, 2, 2)], NF_LINK_DOWN);
    nf_hops_free(h);
    assert_int_equal(nf_hops_compute(f, 2, &h), 0);
    int conn = 1;
    assert_int_equal(nf_hops_diameter(h, &conn), 2);
    assert_false(conn);
    assert_int_equal(nf_hops_sw(h, 0, 4), NF_HOPS_INF);
    assert_int_equal(nf_hops_to_ca(f, h, 0, 6 + 4, 1), NF_HOPS_INF);
    nf_hops_free(h);
    nf_fabric_free(f);
}

static void test_too_deep(void **state) {
    (void)state;
    nf_fabric *f = chain(300, false); /* distance 299 does not fit a byte */
    nf_hops *h = NULL;
    assert_int_equal(nf_hops_compute(f, 2, &h), NF_ERANGE);
    assert_null(h);
    nf_fabric_free(f);
    f = chain(255, false); /* 254 still fits */
    assert_int_equal(nf_hops_compute(f, 2, &h), 0);
    assert_int_equal(nf_hops_diameter(h, NULL), 254);
    nf_hops_free(h);
    nf_fabric_free(f);
}

/* Every row against the reference BFS, and nf_hops_via against a direct reading of the port table
 * plus the reference distances. Rows s = 0, stride, 2*stride, ... are checked. */
static void compare_with_reference(const nf_fabric *f, int threads, unsigned stride) {
    nf_hops *h;
    assert_int_equal(nf_hops_compute(f, threads, &h), 0);
    size_t S = f->n_switches;
    int *ref = malloc(sizeof(int) * S * S);
    for (nf_node s = 0; s < S; s++)
        ref_bfs(f, s, ref + s * S, NULL);
    for (nf_node s = 0; s < S; s += stride) {
        for (nf_node t = 0; t < S; t++) {
            int want = ref[s * S + t] < 0 ? NF_HOPS_INF : ref[s * S + t];
            if (nf_hops_sw(h, s, t) != want)
                fail_msg("d(%u,%u) = %u, reference %d", s, t, nf_hops_sw(h, s, t), want);
        }
        /* hops via each port of s to the first port of a sample of CAs */
        for (nf_node c = f->n_switches; c < f->n_nodes; c += 1 + f->n_cas / 7) {
            nf_node leaf = f->peer[nf_port_index(f, c, 1)];
            if (leaf == NF_NONE || leaf >= f->n_switches) continue;
            for (unsigned p = 1; p <= f->nports[s]; p++) {
                nf_gport g = nf_port_index(f, s, p);
                nf_node q = f->peer[g];
                int want = NF_HOPS_INF;
                if (q != NF_NONE && q >= f->n_switches)
                    want = (q == c && f->peer_port[g] == 1) ? 1 : NF_HOPS_INF;
                else if (q != NF_NONE && ref[q * S + leaf] >= 0)
                    want = ref[q * S + leaf] + 2;
                assert_int_equal(nf_hops_via(f, h, s, p, c, 1), want);
            }
            int w0 = ref[s * S + leaf] < 0 ? NF_HOPS_INF : ref[s * S + leaf] + 1;
            assert_int_equal(nf_hops_to_ca(f, h, s, c, 1), w0);
        }
    }
    free(ref);
    nf_hops_free(h);
}

static void test_generated_against_reference(void **state) {
    (void)state;
    const char *specs[] = {"fattree:k=8",
                           "torus:5x4x3,c=1",
                           "dragonfly:a=4,p=2,h=2",
                           "dragonfly:a=6,p=3,h=3,arr=consecutive",
                           "gft:preset=sunway-proto",
                           "xgft:h=3,m=4.4.6,w=1.2.2"};
    for (size_t i = 0; i < sizeof specs / sizeof specs[0]; i++) {
        nf_fabric *f;
        nf_diag d;
        int rc = nf_topo_build(specs[i], NULL, &f, &d);
        if (rc) fail_msg("%s: %s", specs[i], d.msg);
        compare_with_reference(f, 1, 3);
        compare_with_reference(f, 2, 1);
        nf_fabric_free(f);
    }
}

static void test_real_dumps_against_reference(void **state) {
    (void)state;
    const char *files[] = {"psmn-x5-voltaire-qdr.ibnet", "nvidia-kb-ufm-lab-edr-fdr.ibnet",
                           "stage-sx6036-fdr10.ibnet", "nvidia-topograph-ndr-superpod.ibnet"};
    for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
        char spec[1024];
        snprintf(spec, sizeof spec, "file:%s/%s", NF_FABRICS_DIR, files[i]);
        nf_fabric *f;
        nf_diag d;
        int rc = nf_topo_build(spec, NULL, &f, &d);
        if (rc) fail_msg("%s: %s:%d: %s", files[i], d.file, d.line, d.msg);
        compare_with_reference(f, 2, 1);
        nf_fabric_free(f);
    }
}

/* Same distances whatever the thread count. */
static void test_thread_count_invariance(void **state) {
    (void)state;
    nf_fabric *f;
    nf_diag d;
    assert_int_equal(nf_topo_build("dragonfly:a=8,p=4,h=4", NULL, &f, &d), 0);
    nf_hops *h1, *h2;
    assert_int_equal(nf_hops_compute(f, 1, &h1), 0);
    assert_int_equal(nf_hops_compute(f, 2, &h2), 0);
    assert_memory_equal(h1->d, h2->d, (size_t)f->n_switches * f->n_switches);
    assert_int_equal(nf_hops_diameter(h1, NULL), 3);
    nf_hops_free(h1);
    nf_hops_free(h2);
    nf_fabric_free(f);
}

/* The paper fabrics' switch diameters over all pairs: fat tree 4 (edge-agg-core-agg-edge), torus
 * 15 + 10 + 10, Dragonfly local-global-local, the XGFT shapes 2(h-1). */
static void test_paper_diameters(void **state) {
    (void)state;
    static const struct {
        const char *spec;
        int diameter;
    } cases[] = {{"fattree:k=40", 4},
                 {"torus:30x20x20,c=2", 35},
                 {"dragonfly:a=18,p=9,h=9", 3},
                 {"dragonfly:a=18,p=9,h=9,arr=consecutive", 3},
                 {"bluelight", 4},
                 {"taihulight", 6},
                 {"gft:preset=sunway-proto", 2}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        nf_fabric *f;
        nf_hops *h;
        nf_diag d;
        assert_int_equal(nf_topo_build(cases[i].spec, NULL, &f, &d), 0);
        assert_int_equal(nf_hops_compute(f, 2, &h), 0);
        int conn = -1;
        int got = nf_hops_diameter(h, &conn);
        /* sunway-proto's two planes are joined only through the dual-port CAs */
        int want_conn = strncmp(cases[i].spec, "gft", 3) != 0;
        if (got != cases[i].diameter || conn != want_conn)
            fail_msg("%s: diameter %d connected %d, want %d %d", cases[i].spec, got, conn,
                     cases[i].diameter, want_conn);
        nf_hops_free(h);
        nf_fabric_free(f);
    }
}

/* ---- the large-fabric representations against the dense matrix ---- */

/* nf_hops_components of h against the dense matrix: equal labels exactly for the pairs at a
 * finite distance, and each label the smallest switch of its component. */
static void check_components(const nf_hops *h, const nf_hops *dense) {
    uint32_t S = dense->n, *label = malloc(((size_t)S + 1) * sizeof *label);
    nf_hops_components(h, label);
    for (nf_node s = 0; s < S; s++) {
        nf_node least = s;
        for (nf_node t = 0; t < S; t++) {
            bool joined = nf_hops_sw(dense, s, t) != NF_HOPS_INF;
            if (joined != (label[s] == label[t]))
                fail_msg("labels %u, %u of switches %u, %u at distance %u", label[s], label[t], s,
                         t, nf_hops_sw(dense, s, t));
            if (joined && t < least) least = t;
        }
        if (label[s] != least) fail_msg("switch %u labelled %u, not %u", s, label[s], least);
    }
    free(label);
}

/* Every pair and every row of the representation o picks must equal the dense matrix, and so must
 * connectivity and the diameter (or its bounds). Rows are asked twice, in two orders, so that a
 * small row cache evicts and refills. */
static void check_sparse(const nf_fabric *f, const nf_hops_opts *o, int want_kind) {
    nf_hops *dense, *h;
    assert_int_equal(nf_hops_compute(f, 1, &dense), 0);
    assert_int_equal(dense->kind, NF_HOPS_DENSE);
    assert_int_equal(nf_hops_compute_ex(f, 2, o, &h), 0);
    assert_null(h->d);
    if (h->kind != want_kind) fail_msg("kind %d, want %d", h->kind, want_kind);
    uint32_t S = f->n_switches;
    uint8_t *buf = malloc(S);
    for (int pass = 0; pass < 2; pass++)
        for (nf_node i = 0; i < S; i++) {
            nf_node s = pass ? S - 1 - i : i;
            const uint8_t *row = nf_hops_row(h, s, buf);
            for (nf_node t = 0; t < S; t++) {
                uint8_t want = nf_hops_sw(dense, s, t);
                if (row[t] != want || nf_hops_sw(h, s, t) != want || nf_hops_sw(h, t, s) != want)
                    fail_msg("d(%u,%u): row %u, sw %u, want %u", s, t, row[t], nf_hops_sw(h, s, t),
                             want);
            }
        }
    int c1 = -1, c2 = -2;
    int want_diam = nf_hops_diameter(dense, &c1), got = nf_hops_diameter(h, &c2);
    assert_int_equal(c1, c2);
    assert_int_equal(h->connected, dense->connected);
    if (h->diameter_exact) {
        assert_int_equal(got, want_diam);
        assert_int_equal(h->diameter_lo, want_diam);
    } else {
        assert_true(h->diameter_lo <= want_diam);
        if (h->connected) assert_true(h->diameter >= want_diam);
    }
    assert_true(nf_hops_bytes(h) > 0);
    check_components(h, dense);
    check_components(dense, dense);
    free(buf);
    nf_hops_free(h);
    nf_hops_free(dense);
}

static void test_torus_form(void **state) {
    (void)state;
    /* odd and even rings, a ring of 2 (parallel links), a dimension of 1, c > 1, 1 and 4 dims */
    const char *specs[] = {"torus:5x4x3,c=1", "torus:2x3,c=2",     "torus:1x4x5,c=3",
                           "torus:7,c=1",     "torus:3x2x4x2,c=1", "torus:6x6,c=4"};
    nf_hops_opts o = {.force_sparse = true};
    for (size_t i = 0; i < sizeof specs / sizeof specs[0]; i++) {
        nf_fabric *f;
        nf_diag d;
        assert_int_equal(nf_topo_build(specs[i], NULL, &f, &d), 0);
        check_sparse(f, &o, NF_HOPS_TORUS);
        nf_fabric_free(f);
    }
    /* the paper torus by formula: 15 + 10 + 10 */
    nf_fabric *f;
    nf_hops *h;
    nf_diag d;
    assert_int_equal(nf_topo_build("torus:30x20x20,c=2", NULL, &f, &d), 0);
    assert_int_equal(nf_hops_compute_ex(f, 1, &o, &h), 0);
    assert_int_equal(h->kind, NF_HOPS_TORUS);
    assert_int_equal(nf_hops_diameter(h, NULL), 35);
    assert_int_equal(nf_hops_sw(h, 0, 15 * 400 + 10 * 20 + 10), 35);
    assert_int_equal(nf_hops_sw(h, 0, 29 * 400 + 19 * 20 + 19), 3); /* -1 in every ring */
    nf_hops_free(h);
    nf_fabric_free(f);
}

/* A torus whose links no longer match its geometry falls back to rows. */
static void test_torus_fault_falls_back(void **state) {
    (void)state;
    nf_fabric *f;
    nf_diag d;
    assert_int_equal(nf_topo_build("torus:5x4,c=1", NULL, &f, &d), 0);
    nf_node s = 7;
    nf_link l = f->sw_adj_link[f->sw_adj_off[s]];
    nf_fabric_set_link_state(f, l, NF_LINK_DOWN);
    nf_hops_opts o = {.force_sparse = true, .cache_bytes = 3 * f->n_switches};
    check_sparse(f, &o, NF_HOPS_ROWS);
    nf_fabric_free(f);
}

/* nf_hops_torus: a generated torus's dimensions in the dense and the torus form, none with
 * no_torus, with a link down, or on a fabric that is not a torus. */
static void test_torus_geometry(void **state) {
    (void)state;
    nf_fabric *f;
    nf_hops *h;
    nf_diag d;
    uint32_t dims[NF_FABRIC_TORUS_MAX_D];
    assert_int_equal(nf_topo_build("torus:5x4x3,c=2", NULL, &f, &d), 0);
    nf_hops_opts forms[] = {{0}, {.force_sparse = true}, {.no_torus = true}};
    for (int i = 0; i < 3; i++) {
        assert_int_equal(nf_hops_compute_ex(f, 1, &forms[i], &h), 0);
        memset(dims, 0, sizeof dims);
        unsigned nd = nf_hops_torus(h, dims);
        if (i == 2) {
            assert_int_equal(nd, 0);
        } else {
            assert_int_equal(nd, 3);
            assert_int_equal(dims[0], 5);
            assert_int_equal(dims[1], 4);
            assert_int_equal(dims[2], 3);
        }
        nf_hops_free(h);
    }
    nf_fabric_set_link_state(f, f->sw_adj_link[f->sw_adj_off[7]], NF_LINK_DOWN);
    assert_int_equal(nf_hops_compute(f, 1, &h), 0);
    assert_int_equal(nf_hops_torus(h, dims), 0);
    nf_hops_free(h);
    nf_fabric_free(f);
    assert_int_equal(nf_topo_build("fattree:k=4", NULL, &f, &d), 0);
    assert_int_equal(nf_hops_compute(f, 1, &h), 0);
    assert_int_equal(nf_hops_torus(h, dims), 0);
    nf_hops_free(h);
    nf_fabric_free(f);
}

/* Rows on demand, on fabrics without coordinates: exact diameter and bounds, a cache of three rows,
 * a disconnected fabric. */
static void test_rows_form(void **state) {
    (void)state;
    const char *specs[] = {"torus:5x4x3,c=1", "fattree:k=8", "dragonfly:a=4,p=2,h=2",
                           "gft:preset=sunway-proto", "xgft:h=3,m=4.4.6,w=1.2.2"};
    for (size_t i = 0; i < sizeof specs / sizeof specs[0]; i++) {
        nf_fabric *f;
        nf_diag d;
        assert_int_equal(nf_topo_build(specs[i], NULL, &f, &d), 0);
        nf_hops_opts o = {.force_sparse = true, .no_torus = true, .cache_bytes = 3 * f->n_switches};
        check_sparse(f, &o, NF_HOPS_ROWS);
        o.exact_diam_max = 1; /* bounds only */
        check_sparse(f, &o, NF_HOPS_ROWS);
        nf_fabric_free(f);
    }
    /* a chain cut in two: 0-1-2 and 3..9 */
    nf_fabric *f = chain(10, false);
    nf_link l = f->sw_adj_link[f->sw_adj_off[2] + (f->sw_adj[f->sw_adj_off[2]] == 3 ? 0 : 1)];
    nf_fabric_set_link_state(f, l, NF_LINK_DOWN);
    nf_hops_opts o = {.force_sparse = true};
    check_sparse(f, &o, NF_HOPS_ROWS);
    o.exact_diam_max = 1;
    check_sparse(f, &o, NF_HOPS_ROWS);
    nf_hops *h;
    assert_int_equal(nf_hops_compute_ex(f, 1, &o, &h), 0);
    assert_false(h->connected);
    assert_int_equal(h->diameter_lo, 6); /* the longer piece, 3..9, searched from its end */
    nf_hops_free(h);
    /* a chain of 300 switches: 299 hops do not fit a byte */
    nf_fabric_free(f);
    f = chain(300, false);
    assert_int_equal(nf_hops_compute_ex(f, 1, &o, &h), NF_ERANGE);
    nf_fabric_free(f);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_chain_by_hand),
        cmocka_unit_test(test_ring_and_fault),
        cmocka_unit_test(test_too_deep),
        cmocka_unit_test(test_generated_against_reference),
        cmocka_unit_test(test_real_dumps_against_reference),
        cmocka_unit_test(test_thread_count_invariance),
        cmocka_unit_test(test_paper_diameters),
        cmocka_unit_test(test_torus_form),
        cmocka_unit_test(test_torus_fault_falls_back),
        cmocka_unit_test(test_torus_geometry),
        cmocka_unit_test(test_rows_form),
    };
    /* NF_TEST_FILTER=NAME runs one test (a cmocka glob): scripts/tsan.sh picks the threaded one */
    cmocka_set_test_filter(getenv("NF_TEST_FILTER"));
    return cmocka_run_group_tests(tests, NULL, NULL);
}
