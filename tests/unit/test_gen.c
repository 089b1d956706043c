/* SPDX-License-Identifier: MIT */
/* Topology generators and --topo specs: counts, hand-checked port wiring, shortest-path counts with
 * the reference BFS, Dragonfly global-link matrices, torus diameters, gft siblings and rails,
 * max-flow path counts on the BlueLight/TaihuLight shapes, spec errors and allocation failures. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>

#include "netfab/gen.h"
#include "netfab/io.h"
#include "testutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ---- helpers -------------------------------------------------------------------------------- */

static nf_fabric *build(const char *spec) {
    nf_fabric *f = NULL;
    nf_diag d = {0};
    int rc = nf_topo_build(spec, NULL, &f, &d);
    if (rc) fail_msg("%s: %s (%s)", spec, d.msg, nf_strerror(rc));
    nf_diag c = {0};
    if (nf_fabric_check(f, &c)) fail_msg("%s: check: %s", spec, c.msg);
    return f;
}

static nf_node find(const nf_fabric *f, const char *name) {
    for (nf_node n = 0; n < f->n_nodes; n++)
        if (strcmp(nf_node_name(f, n), name) == 0) return n;
    fail_msg("no node named '%s'", name);
    return NF_NONE;
}

/* Asserts that (name a, port pa) is cabled to (name z, port pz) in both directions. */
static void assert_wire(const nf_fabric *f, const char *a, unsigned pa, const char *z,
                        unsigned pz) {
    nf_node na = find(f, a), nz = find(f, z);
    nf_gport g = nf_port_index(f, na, pa);
    if (f->peer[g] != nz || f->peer_port[g] != pz)
        fail_msg("%s port %u: expected %s port %u, got %s port %u", a, pa, z, pz,
                 f->peer[g] == NF_NONE ? "(none)" : nf_node_name(f, f->peer[g]), f->peer_port[g]);
    nf_gport h = nf_port_index(f, nz, pz);
    assert_int_equal(f->peer[h], na);
    assert_int_equal(f->peer_port[h], pa);
}

static bool connected(const nf_fabric *f, nf_node n, unsigned p) {
    return f->peer[nf_port_index(f, n, p)] != NF_NONE;
}

/* Largest switch distance from src; fails when some switch is unreachable. */
static int ecc(const nf_fabric *f, nf_node src) {
    int *dist = malloc(sizeof(int) * f->n_switches);
    ref_bfs(f, src, dist, NULL);
    int mx = 0;
    for (nf_node s = 0; s < f->n_switches; s++) {
        if (dist[s] < 0) fail_msg("switch %u unreachable from %u", s, src);
        if (dist[s] > mx) mx = dist[s];
    }
    free(dist);
    return mx;
}

static void assert_all_links_edr(const nf_fabric *f) {
    for (nf_link l = 0; l < f->n_links; l++) {
        assert_int_equal(f->link_width[l], 4);
        assert_int_equal(f->link_speed[l], NF_SPEED_EDR);
        bool host = f->link_a[l] >= f->n_switches || f->link_z[l] >= f->n_switches;
        assert_int_equal(host, f->link_cls[l] == NF_LINK_HOST);
    }
}

static void assert_lids(const nf_fabric *f) {
    unsigned next = 1;
    for (nf_node n = 0; n < f->n_nodes; n++) {
        assert_int_equal(f->lid[n], next);
        next += nf_is_switch(f, n) ? 1 : f->nports[n];
    }
}

/* Edge-disjoint paths from switch src up to the top level, honestly: a unit-capacity max flow
 * (Edmonds-Karp) over the upward arcs (level l to level l+1, one per link), with every top-level
 * switch joined to a super-sink by an arc of unbounded capacity. Upward paths from a leaf to the
 * top are exactly its shortest paths to the top level. */
static int maxflow_up(const nf_fabric *f, nf_node src, unsigned top) {
    uint32_t S = f->n_switches, sink = S, m = 0;
    uint32_t cap_arcs = 2 * (f->n_links + S);
    uint32_t *to = malloc(sizeof(uint32_t) * cap_arcs), *nxt = malloc(sizeof(uint32_t) * cap_arcs);
    int *cap = malloc(sizeof(int) * cap_arcs);
    uint32_t *head = malloc(sizeof(uint32_t) * (S + 1)), *via = malloc(sizeof(uint32_t) * (S + 1));
    uint32_t *queue = malloc(sizeof(uint32_t) * (S + 1));
    for (uint32_t i = 0; i <= S; i++)
        head[i] = UINT32_MAX;
#define ARC(u, v, c)                                                                               \
    do {                                                                                           \
        to[m] = (v), cap[m] = (c), nxt[m] = head[u], head[u] = m++;                                \
        to[m] = (u), cap[m] = 0, nxt[m] = head[v], head[v] = m++;                                  \
    } while (0)
    for (nf_link l = 0; l < f->n_links; l++) {
        nf_node a = f->link_a[l], z = f->link_z[l];
        if (a >= S || z >= S) continue;
        if (f->level[z] == f->level[a] + 1)
            ARC(a, z, 1);
        else if (f->level[a] == f->level[z] + 1)
            ARC(z, a, 1);
    }
    for (nf_node s = 0; s < S; s++)
        if (f->level[s] == top) ARC(s, sink, 1 << 20);
#undef ARC
    int flow = 0;
    for (;;) {
        for (uint32_t i = 0; i <= S; i++)
            via[i] = UINT32_MAX;
        size_t qh = 0, qt = 0;
        queue[qt++] = src;
        via[src] = UINT32_MAX - 1;
        while (qh < qt && via[sink] == UINT32_MAX) {
            uint32_t u = queue[qh++];
            for (uint32_t e = head[u]; e != UINT32_MAX; e = nxt[e])
                if (cap[e] > 0 && via[to[e]] == UINT32_MAX) {
                    via[to[e]] = e;
                    queue[qt++] = to[e];
                }
        }
        if (via[sink] == UINT32_MAX) break;
        for (uint32_t v = sink; v != src; v = to[via[v] ^ 1]) {
            cap[via[v]] -= 1;
            cap[via[v] ^ 1] += 1;
        }
        flow++;
    }
    free(to), free(nxt), free(cap), free(head), free(via), free(queue);
    return flow;
}

/* ---- fat tree ------------------------------------------------------------------------------- */

static void test_fattree_k4_by_hand(void **state) {
    (void)state;
    nf_fabric *f = build("fattree:k=4");
    assert_int_equal(f->n_switches, 20);
    assert_int_equal(f->n_cas, 16);
    assert_int_equal(f->n_links, 48);
    nf_fabric_counts c;
    nf_fabric_count(f, &c);
    assert_int_equal(c.links_by_class[NF_LINK_HOST], 16);
    assert_int_equal(c.links_by_class[NF_LINK_LOCAL], 32);
    assert_int_equal(c.ports_used, 80);
    assert_int_equal(c.ports_total, 80);
    /* ids: edges pod-major, then aggregations, then cores, then CAs */
    assert_int_equal(find(f, "ft pod1 edge0"), 2);
    assert_int_equal(find(f, "ft pod1 agg0"), 10);
    assert_int_equal(find(f, "ft core3"), 19);
    assert_int_equal(find(f, "ft pod1 edge0 n1"), 25);
    assert_wire(f, "ft pod1 edge0", 3, "ft pod1 agg0", 1);
    assert_wire(f, "ft pod1 edge0", 4, "ft pod1 agg1", 1);
    assert_wire(f, "ft pod1 edge1", 3, "ft pod1 agg0", 2);
    assert_wire(f, "ft pod1 edge0", 1, "ft pod1 edge0 n0", 1);
    assert_wire(f, "ft pod1 edge0", 2, "ft pod1 edge0 n1", 1);
    assert_wire(f, "ft pod2 agg1", 3, "ft core2", 3);
    assert_wire(f, "ft pod2 agg1", 4, "ft core3", 3);
    assert_wire(f, "ft pod0 agg0", 3, "ft core0", 1);
    assert_wire(f, "ft pod3 agg0", 4, "ft core1", 4);
    nf_node e = find(f, "ft pod3 edge1"), a = find(f, "ft pod3 agg1"), k = find(f, "ft core1");
    nf_node h = find(f, "ft pod3 edge1 n0");
    assert_int_equal(f->level[e], 1);
    assert_int_equal(f->level[a], 2);
    assert_int_equal(f->level[k], 3);
    assert_int_equal(f->level[h], 0);
    assert_int_equal(f->supernode[e], 3);
    assert_int_equal(f->supernode[a], 3);
    assert_int_equal(f->supernode[k], -1);
    assert_int_equal(f->supernode[h], 3);
    assert_int_equal(f->plane[e], 0);
    assert_lids(f);
    assert_int_equal(f->lid[h], 21 + (h - 20));
    assert_all_links_edr(f);
    assert_int_equal(ecc(f, 0), 4);
    nf_fabric_free(f);
}

/* From every edge switch: every core switch at distance 2 by exactly one shortest path; edges of
 * the same pod at 2 by k/2 paths; edges of other pods at 4 by (k/2)^2 paths. */
static void check_fattree_paths(const nf_fabric *f, unsigned k, nf_node edge) {
    unsigned h = k / 2, nedge = k * h, ncore = h * h;
    int *dist = malloc(sizeof(int) * f->n_switches);
    uint64_t *np = malloc(sizeof(uint64_t) * f->n_switches);
    ref_bfs(f, edge, dist, np);
    for (unsigned c = 0; c < ncore; c++) {
        nf_node core = 2 * nedge + c;
        assert_int_equal(f->level[core], 3);
        assert_int_equal(dist[core], 2);
        assert_int_equal(np[core], 1);
    }
    for (nf_node e = 0; e < nedge; e++) {
        if (e == edge) continue;
        bool same = e / h == edge / h;
        assert_int_equal(dist[e], same ? 2 : 4);
        assert_int_equal(np[e], same ? h : h * h);
    }
    free(dist);
    free(np);
}

static void test_fattree_k8_paths(void **state) {
    (void)state;
    nf_fabric *f = build("fattree:k=8");
    assert_int_equal(f->n_switches, 80);
    assert_int_equal(f->n_cas, 128);
    for (nf_node e = 0; e < 32; e++)
        check_fattree_paths(f, 8, e);
    nf_fabric_free(f);
}

static void test_fattree_k40(void **state) {
    (void)state;
    nf_fabric *f = build("fattree:k=40");
    assert_int_equal(f->n_switches, 2000);
    assert_int_equal(f->n_cas, 16000);
    assert_int_equal(f->n_links, 16000 + 16000 + 16000);
    nf_fabric_counts c;
    nf_fabric_count(f, &c);
    assert_int_equal(c.ports_total, 80000);
    assert_int_equal(c.ports_used, 80000);
    assert_int_equal(c.max_radix, 40);
    for (nf_node s = 0; s < f->n_switches; s++)
        assert_int_equal(f->nports[s], 40);
    static const nf_node sample[] = {0, 1, 19, 20, 399, 413, 777, 799};
    for (size_t i = 0; i < sizeof sample / sizeof sample[0]; i++)
        check_fattree_paths(f, 40, sample[i]);
    assert_int_equal(ecc(f, 413), 4);
    assert_lids(f);
    nf_fabric_free(f);
}

/* ---- XGFT ----------------------------------------------------------------------------------- */

static void test_xgft_by_hand(void **state) {
    (void)state;
    /* XGFT(2; 2,3; 1,2): 6 endpoints, 3 leaves of 2 down + 2 up ports, 2 tops of 3 down ports */
    nf_fabric *f = build("xgft:h=2,m=2.3,w=1.2");
    assert_int_equal(f->n_switches, 5);
    assert_int_equal(f->n_cas, 6);
    assert_int_equal(f->n_links, 6 + 6);
    assert_int_equal(f->nports[find(f, "xgft L1 0")], 4);
    assert_int_equal(f->nports[find(f, "xgft L2 1")], 3);
    assert_wire(f, "xgft node 4", 1, "xgft L1 2", 1);
    assert_wire(f, "xgft node 5", 1, "xgft L1 2", 2);
    assert_wire(f, "xgft L1 1", 3, "xgft L2 0", 2);
    assert_wire(f, "xgft L1 2", 4, "xgft L2 1", 3);
    assert_wire(f, "xgft L1 0", 4, "xgft L2 1", 1);
    assert_int_equal(ecc(f, 0), 2);
    nf_fabric_free(f);

    /* XGFT(3; 2,2,2; 1,2,2): the level-2 node (A=a3, B=b2) and level-3 node (B=b2+2*b3) */
    f = build("xgft:h=3,m=2.2.2,w=1.2.2");
    assert_int_equal(f->n_switches, 4 + 4 + 4);
    assert_int_equal(f->n_cas, 8);
    /* L2 node 3 = (a3=1, b2=1): up port t=1 goes to L3 B = 1 + 2 = 3, down port a3+1 = 2 */
    assert_wire(f, "xgft L2 3", 4, "xgft L3 3", 2);
    assert_wire(f, "xgft L2 3", 3, "xgft L3 1", 2);
    assert_int_equal(f->supernode[find(f, "xgft L2 3")], 1);
    assert_int_equal(f->supernode[find(f, "xgft L1 3")], 1);
    assert_int_equal(f->supernode[find(f, "xgft node 5")], 1);
    assert_int_equal(f->supernode[find(f, "xgft L3 0")], -1);
    assert_int_equal(f->level[find(f, "xgft L3 0")], 3);
    nf_fabric_free(f);
}

/* fattree:k=K against xgft:h=3,m=K/2.K/2.K,w=1.K/2.K/2: same counts, degree distribution and
 * diameter, and in fact the same graph port for port once the core switches are renumbered
 * (fattree core j*(K/2)+t is XGFT top switch j + (K/2)*t). */
static void check_fattree_xgft(unsigned k) {
    char spec[80];
    unsigned h = k / 2;
    snprintf(spec, sizeof spec, "fattree:k=%u", k);
    nf_fabric *a = build(spec);
    snprintf(spec, sizeof spec, "xgft:h=3,m=%u.%u.%u,w=1.%u.%u", h, h, k, h, h);
    nf_fabric *b = build(spec);
    assert_int_equal(a->n_switches, b->n_switches);
    assert_int_equal(a->n_cas, b->n_cas);
    assert_int_equal(a->n_links, b->n_links);
    unsigned hist_a[256] = {0}, hist_b[256] = {0};
    for (nf_node s = 0; s < a->n_switches; s++) {
        unsigned da = 0, db = 0;
        for (unsigned p = 1; p <= a->nports[s]; p++)
            da += connected(a, s, p);
        for (unsigned p = 1; p <= b->nports[s]; p++)
            db += connected(b, s, p);
        hist_a[da]++;
        hist_b[db]++;
    }
    assert_memory_equal(hist_a, hist_b, sizeof hist_a);
    int da = 0, db = 0;
    for (nf_node s = 0; s < a->n_switches; s++) {
        int x = ecc(a, s), y = ecc(b, s);
        da = x > da ? x : da;
        db = y > db ? y : db;
    }
    assert_int_equal(da, 4);
    assert_int_equal(db, 4);
    unsigned ncore = h * h, core0 = 2 * k * h;
    for (nf_node n = 0; n < a->n_nodes; n++) {
        nf_node m = n;
        if (n >= core0 && n < core0 + ncore) m = core0 + (n - core0) / h + h * ((n - core0) % h);
        assert_int_equal(a->level[n], b->level[m]);
        assert_int_equal(a->supernode[n], b->supernode[m]);
        assert_int_equal(a->nports[n], b->nports[m]);
        for (unsigned p = 1; p <= a->nports[n]; p++) {
            nf_node pa = a->peer[nf_port_index(a, n, p)], pb = b->peer[nf_port_index(b, m, p)];
            nf_node ma = pa;
            if (pa >= core0 && pa < core0 + ncore)
                ma = core0 + (pa - core0) / h + h * ((pa - core0) % h);
            assert_int_equal(ma, pb);
            assert_int_equal(a->peer_port[nf_port_index(a, n, p)],
                             b->peer_port[nf_port_index(b, m, p)]);
        }
    }
    nf_fabric_free(a);
    nf_fabric_free(b);
}

static void test_xgft_equals_fattree(void **state) {
    (void)state;
    check_fattree_xgft(2);
    check_fattree_xgft(4);
    check_fattree_xgft(8);
    check_fattree_xgft(12);
}

/* Every leaf among `leaves` reaches every top-level switch by exactly `want` shortest paths
 * (counted by a plain BFS over the port table), and those are its only shortest paths upward:
 * the unit-capacity max flow to the top level is the same number. */
static void assert_paths_to_every_top(const nf_fabric *f, const nf_node *leaves, size_t n,
                                      unsigned top, int top_dist, uint64_t want) {
    int *dist = malloc(sizeof(int) * f->n_switches);
    uint64_t *np = malloc(sizeof(uint64_t) * f->n_switches);
    for (size_t i = 0; i < n; i++) {
        assert_int_equal(f->level[leaves[i]], 1);
        ref_bfs(f, leaves[i], dist, np);
        unsigned tops = 0;
        for (nf_node s = 0; s < f->n_switches; s++) {
            if (f->level[s] != top) continue;
            tops++;
            assert_int_equal(dist[s], top_dist);
            if (np[s] != want)
                fail_msg("leaf %u -> top %u: %llu shortest paths, want %llu", leaves[i], s,
                         (unsigned long long)np[s], (unsigned long long)want);
        }
        assert_true(tops > 0);
        assert_int_equal(maxflow_up(f, leaves[i], top), want);
    }
    free(dist);
    free(np);
}

static void test_bluelight(void **state) {
    (void)state;
    nf_fabric *f = build("bluelight");
    assert_int_equal(f->n_cas, 8704);
    assert_int_equal(f->n_switches, 544 + 136 + 4);
    unsigned per_level[5] = {0};
    for (nf_node s = 0; s < f->n_switches; s++)
        per_level[f->level[s]]++;
    assert_int_equal(per_level[1], 544);
    assert_int_equal(per_level[2], 136);
    assert_int_equal(per_level[3], 4);
    assert_int_equal(per_level[4], 0);
    assert_int_equal(f->nports[0], 16 + 8);
    assert_int_equal(f->nports[544], 32 + 4);
    assert_int_equal(f->nports[544 + 136], 136);
    /* supernodes of 512 endpoints: 32 leaves and 8 level-2 switches each */
    assert_int_equal(f->supernode[f->n_switches + 511], 0);
    assert_int_equal(f->supernode[f->n_switches + 512], 1);
    assert_int_equal(f->supernode[f->n_nodes - 1], 16);
    assert_int_equal(f->supernode[31], 0);
    assert_int_equal(f->supernode[32], 1);
    assert_int_equal(f->supernode[544 + 135], 16);
    assert_int_equal(f->supernode[544 + 136], -1);
    assert_wire(f, "bluelight L1 33", 17, "bluelight L2 8", 2);
    assert_wire(f, "bluelight L1 33", 24, "bluelight L2 15", 2);
    assert_wire(f, "bluelight L2 9", 36, "bluelight L3 3", 10);
    assert_wire(f, "bluelight L1 33", 1, "bluelight node 528", 1);
    static const nf_node leaves[] = {0, 1, 17, 255, 300, 543};
    assert_paths_to_every_top(f, leaves, sizeof leaves / sizeof leaves[0], 3, 2, 8);
    assert_int_equal(ecc(f, 0), 4);
    assert_all_links_edr(f);
    assert_lids(f);
    nf_fabric_free(f);
}

static void test_taihulight(void **state) {
    (void)state;
    nf_fabric *f = build("taihulight");
    assert_int_equal(f->n_cas, 40960);
    assert_int_equal(f->n_switches, 2560 + 320 + 160 + 64);
    unsigned per_level[5] = {0};
    for (nf_node s = 0; s < f->n_switches; s++)
        per_level[f->level[s]]++;
    assert_int_equal(per_level[1], 2560);
    assert_int_equal(per_level[2], 320);
    assert_int_equal(per_level[3], 160);
    assert_int_equal(per_level[4], 64);
    nf_fabric_counts c;
    nf_fabric_count(f, &c);
    assert_int_equal(c.max_radix, 36);
    assert_int_equal(f->nports[0], 18);
    assert_int_equal(f->nports[2560], 32);
    assert_int_equal(f->nports[2560 + 320], 36);
    assert_int_equal(f->nports[2560 + 320 + 160], 10);
    /* level-2 switch 33 is switch 1 of supernode 16, the first of group 1: local index 1 */
    assert_wire(f, "taihulight L2 33", 17, "taihulight L3 16", 2);
    assert_wire(f, "taihulight L2 33", 32, "taihulight L3 31", 2);
    /* level-3 switch 17 is switch 1 of group 1: its tops are plane 1, 4 to 7 */
    assert_wire(f, "taihulight L3 17", 33, "taihulight L4 4", 2);
    assert_wire(f, "taihulight L3 17", 36, "taihulight L4 7", 2);
    static const nf_node leaves[] = {0, 5, 16, 1000, 2559};
    assert_paths_to_every_top(f, leaves, sizeof leaves / sizeof leaves[0], 4, 3, 2);
    assert_int_equal(f->supernode[f->n_switches + 40959], 159);
    assert_int_equal(ecc(f, 0), 6);
    assert_all_links_edr(f);
    assert_lids(f);
    nf_fabric_free(f);
    /* 1,024 processors as the Sunway paper's TaihuLight joins them: 4 supernodes of one group
     * each, so two supernodes meet at the top level only: leaf to leaf of another supernode 6
     * switch hops (L1 L2 L3 L4 L3 L2 L1); in one group of 4 (the default) 4, through level 3 */
    f = build("taihulight:sn=4,group=1");
    assert_int_equal(f->n_cas, 1024);
    assert_int_equal(f->n_switches, 64 + 8 + 64 + 64);
    assert_int_equal(ecc(f, 0), 6);
    assert_int_equal(f->nports[64 + 8 + 64], 4); /* a top switch: one port a group */
    nf_fabric_free(f);
    f = build("taihulight:sn=4");
    assert_int_equal(f->n_switches, 64 + 8 + 16 + 64);
    assert_int_equal(ecc(f, 0), 4);
    nf_fabric_free(f);
}

/* ---- Dragonfly ------------------------------------------------------------------------------ */

/* Global links per pair of groups, counted from the links' end nodes' groups (supernode). */
static unsigned *df_matrix(const nf_fabric *f, unsigned g) {
    unsigned *mx = calloc((size_t)g * g, sizeof(unsigned));
    for (nf_link l = 0; l < f->n_links; l++) {
        if (f->link_cls[l] != NF_LINK_GLOBAL) continue;
        int32_t x = f->supernode[f->link_a[l]], y = f->supernode[f->link_z[l]];
        mx[(size_t)x * g + y]++;
        mx[(size_t)y * g + x]++;
    }
    return mx;
}

/* Every global port of every group, checked from its own side against the documented formulas
 * (README.md, "Generators: exact wiring"), so both directions of every pairing are exercised; ports
 * past the last whole copy must be unconnected. */
static void check_df_ports(const nf_fabric *f, unsigned a, unsigned p, unsigned h, unsigned g,
                           bool consecutive) {
    unsigned n = g - 1, used = a * h / n * n;
    for (unsigned i = 0; i < g; i++)
        for (unsigned k = 0; k < a * h; k++) {
            nf_node r = i * a + k / h;
            unsigned port = p + a + k % h;
            nf_gport gp = nf_port_index(f, r, port);
            if (k >= used) {
                assert_int_equal(f->peer[gp], NF_NONE);
                continue;
            }
            unsigned o = k % n, c = k / n, j, o2;
            if (consecutive) {
                j = o < i ? o : o + 1;
                o2 = i < j ? i : i - 1;
            } else {
                j = ((int)i - (int)o - 1 + (int)g) % (int)g;
                o2 = g - o - 2;
            }
            unsigned k2 = c * n + o2;
            if (f->peer[gp] != j * a + k2 / h || f->peer_port[gp] != p + a + k2 % h)
                fail_msg("group %u global port %u: expected group %u port %u", i, k, j, k2);
            assert_int_equal(f->link_cls[f->port_link[gp]], NF_LINK_GLOBAL);
        }
}

static void check_df_matrix(const nf_fabric *f, unsigned g, unsigned per_pair) {
    unsigned *mx = df_matrix(f, g);
    for (unsigned i = 0; i < g; i++)
        for (unsigned j = 0; j < g; j++)
            if (mx[(size_t)i * g + j] != (i == j ? 0 : per_pair))
                fail_msg("groups %u and %u: %u global links, expected %u", i, j,
                         mx[(size_t)i * g + j], i == j ? 0 : per_pair);
    free(mx);
}

static void test_dragonfly_paper(void **state) {
    (void)state;
    static const char *specs[] = {"dragonfly:a=18,p=9,h=9",
                                  "dragonfly:a=18,p=9,h=9,arr=consecutive"};
    for (int v = 0; v < 2; v++) {
        nf_fabric *f = build(specs[v]);
        assert_int_equal(f->n_switches, 2934);
        assert_int_equal(f->n_cas, 26406);
        nf_fabric_counts c;
        nf_fabric_count(f, &c);
        assert_int_equal(c.links_by_class[NF_LINK_GLOBAL], 163 * 162 / 2);
        assert_int_equal(c.links_by_class[NF_LINK_LOCAL], 163 * 18 * 17 / 2);
        assert_int_equal(c.links_by_class[NF_LINK_HOST], 26406);
        assert_int_equal(c.max_radix, 35);
        assert_int_equal(c.ports_used, 2934 * 35);
        check_df_matrix(f, 163, 1);
        check_df_ports(f, 18, 9, 9, 163, v == 1);
        /* local ports: router r reaches q through p+1+q (q < r) or p+q (q > r) */
        assert_wire(f, "df g3 r2", 10, "df g3 r0", 11);
        assert_wire(f, "df g3 r17", 26, "df g3 r16", 26);
        assert_wire(f, "df g7 r4", 3, "df g7 r4 n2", 1);
        if (v == 0) { /* palmtree: offset o of group i -> group i-o-1 at offset g-o-2 */
            assert_wire(f, "df g0 r0", 27, "df g162 r17", 35);
            assert_wire(f, "df g5 r1", 28, "df g157 r16", 34);
        } else { /* consecutive: offset o -> group o (o < i) or o+1, arriving at i or i-1 */
            assert_wire(f, "df g0 r0", 27, "df g1 r0", 27);
            assert_wire(f, "df g5 r0", 32, "df g6 r0", 32);
            assert_wire(f, "df g5 r0", 31, "df g4 r0", 31);
            assert_wire(f, "df g162 r17", 35, "df g161 r17", 35);
        }
        assert_int_equal(f->supernode[find(f, "df g57 r3")], 57);
        assert_int_equal(f->supernode[find(f, "df g57 r3 n8")], 57);
        assert_int_equal(f->level[0], 0);
        /* switch diameter 3: every router of two groups and a stride over the rest */
        int mx = 0;
        for (nf_node s = 0; s < f->n_switches; s++) {
            if (s / 18 != 0 && s / 18 != 81 && s % 97 != 0) continue;
            int e = ecc(f, s);
            mx = e > mx ? e : mx;
        }
        assert_int_equal(mx, 3);
        assert_all_links_edr(f);
        nf_fabric_free(f);
    }
}

static void test_dragonfly_small_g(void **state) {
    (void)state;
    static const struct {
        unsigned g, per_pair, unused; /* unused global ports per group */
        int diam;
    } cases[] = {{9, 1, 0, 3}, {5, 2, 0, 3}, {3, 4, 0, 2},
                 {6, 1, 3, 3}, {4, 2, 2, 3}, {2, 8, 0, 2}};
    /* with g = 3 or 2, copy c of every group's ports sits on router c, so router r of a group is
     * cabled to router r of every other group and any router is 2 links from any other */
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        for (int arr = 0; arr < 2; arr++) {
            nf_fabric *f = NULL;
            nf_diag d = {0};
            assert_int_equal(nf_gen_dragonfly(4, 2, 2, cases[i].g, (nf_df_arrangement)arr, &f, &d),
                             0);
            assert_int_equal(nf_fabric_check(f, NULL), 0);
            unsigned g = cases[i].g;
            assert_int_equal(f->n_switches, 4 * g);
            assert_int_equal(f->n_cas, 8 * g);
            check_df_matrix(f, g, cases[i].per_pair);
            check_df_ports(f, 4, 2, 2, g, arr == NF_DF_CONSECUTIVE);
            for (unsigned grp = 0; grp < g; grp++) {
                unsigned unused = 0;
                for (unsigned r = 0; r < 4; r++)
                    for (unsigned p = 6; p <= 7; p++)
                        unused += !connected(f, grp * 4 + r, p);
                assert_int_equal(unused, cases[i].unused);
                /* unused ports are the highest-numbered ones k >= floor(a*h/n)*n */
                if (cases[i].unused) assert_false(connected(f, grp * 4 + 3, 7));
            }
            int mx = 0;
            for (nf_node s = 0; s < f->n_switches; s++) {
                int e = ecc(f, s);
                mx = e > mx ? e : mx;
            }
            assert_int_equal(mx, cases[i].diam);
            nf_fabric_free(f);
        }
    /* a = 1: one router per group, no local ports */
    nf_fabric *f = build("dragonfly:a=1,p=1,h=2");
    assert_int_equal(f->n_switches, 3);
    assert_int_equal(f->nports[0], 3);
    check_df_matrix(f, 3, 1);
    nf_fabric_free(f);
}

/* ---- torus ---------------------------------------------------------------------------------- */

static void test_torus_paper(void **state) {
    (void)state;
    nf_fabric *f = build("torus:30x20x20,c=2");
    assert_int_equal(f->n_switches, 12000);
    assert_int_equal(f->n_cas, 24000);
    nf_fabric_counts c;
    nf_fabric_count(f, &c);
    assert_int_equal(c.links_by_class[NF_LINK_LOCAL], 36000);
    assert_int_equal(c.links_by_class[NF_LINK_HOST], 24000);
    assert_int_equal(c.ports_used, 12000 * 8);
    assert_int_equal(find(f, "torus 0,0,0"), 0);
    assert_int_equal(find(f, "torus 1,2,3"), 1 * 400 + 2 * 20 + 3);
    assert_int_equal(find(f, "torus 29,19,19"), 11999);
    assert_wire(f, "torus 29,19,19", 3, "torus 0,19,19", 4);
    assert_wire(f, "torus 29,19,19", 8, "torus 29,19,18", 7);
    assert_wire(f, "torus 1,2,3", 2, "torus 1,2,3 n1", 1);
    static const nf_node src[] = {0, 11999, 15 * 400 + 10 * 20 + 10, 4321};
    for (size_t i = 0; i < sizeof src / sizeof src[0]; i++)
        assert_int_equal(ecc(f, src[i]), 35);
    int *dist = malloc(sizeof(int) * f->n_switches);
    ref_bfs(f, 0, dist, NULL);
    assert_int_equal(dist[15 * 400 + 10 * 20 + 10], 35);
    assert_int_equal(dist[29 * 400 + 19 * 20 + 19], 3);
    free(dist);
    assert_lids(f);
    nf_fabric_free(f);
}

static void test_torus_small(void **state) {
    (void)state;
    /* 4x3, c=1: port 1 endpoint, 2/3 = dim 0 +/-, 4/5 = dim 1 +/- */
    nf_fabric *f = build("torus:4x3,c=1");
    assert_int_equal(f->n_switches, 12);
    assert_int_equal(f->n_links, 12 + 24);
    assert_wire(f, "torus 1,2", 2, "torus 2,2", 3);
    assert_wire(f, "torus 1,2", 3, "torus 0,2", 2);
    assert_wire(f, "torus 1,2", 4, "torus 1,0", 5);
    assert_wire(f, "torus 1,2", 5, "torus 1,1", 4);
    assert_wire(f, "torus 3,0", 2, "torus 0,0", 3);
    assert_int_equal(ecc(f, 5), 3);
    nf_fabric_free(f);

    /* 4-D 2x3x1x4: size 2 gives two parallel links, size 1 leaves ports 6 and 7 unconnected */
    f = build("torus:2x3x1x4");
    assert_int_equal(f->n_switches, 24);
    assert_int_equal(f->n_cas, 24);
    assert_int_equal(f->nports[0], 9);
    nf_fabric_counts c;
    nf_fabric_count(f, &c);
    assert_int_equal(c.links_by_class[NF_LINK_LOCAL], 72);
    assert_wire(f, "torus 0,1,0,2", 2, "torus 1,1,0,2", 3);
    assert_wire(f, "torus 0,1,0,2", 3, "torus 1,1,0,2", 2);
    assert_wire(f, "torus 0,1,0,3", 8, "torus 0,1,0,0", 9);
    for (nf_node s = 0; s < 24; s++) {
        assert_false(connected(f, s, 6));
        assert_false(connected(f, s, 7));
    }
    int *dist = malloc(sizeof(int) * f->n_switches);
    uint64_t *np = malloc(sizeof(uint64_t) * f->n_switches);
    ref_bfs(f, 0, dist, np);
    nf_node far = find(f, "torus 1,0,0,0");
    assert_int_equal(dist[far], 1);
    assert_int_equal(np[far], 2); /* the two parallel links */
    free(dist);
    free(np);
    assert_int_equal(ecc(f, 0), 1 + 1 + 0 + 2);
    nf_fabric_free(f);

    f = build("torus:5");
    assert_int_equal(f->n_switches, 5);
    assert_int_equal(ecc(f, 0), 2);
    nf_fabric_free(f);
}

/* ---- gft ------------------------------------------------------------------------------------ */

/* Router 2i and 2i+1 of the same level and plane are joined by exactly sib links, all SIBLING,
 * and no other link is SIBLING. */
static void check_siblings(const nf_fabric *f, unsigned sib) {
    unsigned total = 0;
    for (nf_node s = 0; s < f->n_switches; s++) {
        unsigned n = 0;
        for (unsigned p = 1; p <= f->nports[s]; p++) {
            nf_gport g = nf_port_index(f, s, p);
            if (f->peer[g] == NF_NONE) continue;
            bool is_sib = f->link_cls[f->port_link[g]] == NF_LINK_SIBLING;
            if (is_sib) {
                nf_node q = f->peer[g];
                assert_int_equal(f->level[q], f->level[s]);
                assert_int_equal(f->plane[q], f->plane[s]);
                n++;
                total++;
            }
        }
        assert_int_equal(n, sib);
    }
    nf_fabric_counts c;
    nf_fabric_count(f, &c);
    assert_int_equal(c.links_by_class[NF_LINK_SIBLING] * 2, total);
}

static void test_gft_sunway(void **state) {
    (void)state;
    nf_fabric *f = build("gft:preset=sunway-proto");
    assert_int_equal(f->n_switches, 2 * (32 + 18));
    assert_int_equal(f->n_cas, 512);
    nf_fabric_counts c;
    nf_fabric_count(f, &c);
    assert_int_equal(c.links_by_class[NF_LINK_HOST], 1024);
    assert_int_equal(c.links_by_class[NF_LINK_LOCAL], 2 * 32 * 18);
    assert_int_equal(c.links_by_class[NF_LINK_SIBLING], 2 * (16 + 9) * 4);
    assert_int_equal(c.max_radix, 40);
    assert_int_equal(c.endpoint_ports, 1024);
    check_siblings(f, 4);
    for (unsigned r = 0; r < 2; r++)
        for (unsigned q = 0; q < 32; q += 2) {
            char a[64], b[64];
            snprintf(a, sizeof a, "gft rail%u leaf%u", r, q);
            snprintf(b, sizeof b, "gft rail%u leaf%u", r, q + 1);
            for (unsigned p = 35; p <= 38; p++)
                assert_wire(f, a, p, b, p);
        }
    assert_wire(f, "gft rail1 spine4", 33, "gft rail1 spine5", 33);
    assert_wire(f, "gft rail1 spine4", 36, "gft rail1 spine5", 36);
    assert_wire(f, "gft rail0 leaf7", 17, "gft rail0 spine0", 8);
    assert_wire(f, "gft rail1 leaf31", 34, "gft rail1 spine17", 32);
    assert_wire(f, "gft rail1 leaf7", 3, "gft leaf7 n2", 2);
    assert_wire(f, "gft rail0 leaf7", 3, "gft leaf7 n2", 1);
    nf_node leaf = find(f, "gft rail0 leaf7"), spine = find(f, "gft rail0 spine3");
    assert_false(connected(f, leaf, 39));
    assert_false(connected(f, leaf, 40));
    assert_false(connected(f, spine, 37));
    assert_int_equal(f->supernode[leaf], 3);
    assert_int_equal(f->level[leaf], 1);
    assert_int_equal(f->level[spine], 2);
    assert_int_equal(f->plane[find(f, "gft rail1 spine3")], 1);
    /* every node: one dual-port CA, port r+1 on a leaf of plane r, link plane r, same leaf index */
    for (nf_node n = f->n_switches; n < f->n_nodes; n++) {
        assert_int_equal(f->nports[n], 2);
        nf_node l0 = f->peer[nf_port_index(f, n, 1)], l1 = f->peer[nf_port_index(f, n, 2)];
        assert_int_equal(f->plane[l0], 0);
        assert_int_equal(f->plane[l1], 1);
        assert_int_equal(f->level[l0], 1);
        assert_int_equal(f->link_plane[f->port_link[nf_port_index(f, n, 1)]], 0);
        assert_int_equal(f->link_plane[f->port_link[nf_port_index(f, n, 2)]], 1);
        assert_int_equal(l1 - l0, 50);
        assert_int_equal(f->supernode[n], f->supernode[l0]);
    }
    assert_lids(f);
    assert_int_equal(f->lid[f->n_nodes - 1], 100 + 2 * 511 + 1);
    /* the planes are separate switch graphs: within one, leaves are 2 apart */
    int *dist = malloc(sizeof(int) * f->n_switches);
    ref_bfs(f, leaf, dist, NULL);
    for (nf_node s = 0; s < f->n_switches; s++) {
        int want = f->plane[s] ? -1 : s == leaf ? 0 : s == leaf - 1 ? 1 : f->level[s] == 2 ? 1 : 2;
        assert_int_equal(dist[s], want);
    }
    free(dist);
    nf_fabric_free(f);

    f = build("gft:preset=sunway-proto,rails=1");
    assert_int_equal(f->n_switches, 50);
    assert_int_equal(f->nports[f->n_switches], 1);
    nf_fabric_free(f);
}

static void test_gft_custom(void **state) {
    (void)state;
    nf_fabric *f = build("gft:leaves=4,nodes=2,spines=2,links=2,sib=1,radix=9");
    assert_int_equal(f->n_switches, 6);
    assert_int_equal(f->n_cas, 8);
    assert_int_equal(f->n_links, 8 + 16 + 3);
    assert_wire(f, "gft rail0 leaf1", 6, "gft rail0 spine1", 4);
    assert_wire(f, "gft rail0 leaf1", 3, "gft rail0 spine0", 3);
    assert_wire(f, "gft rail0 leaf2", 7, "gft rail0 leaf3", 7);
    assert_wire(f, "gft rail0 spine0", 9, "gft rail0 spine1", 9);
    assert_false(connected(f, find(f, "gft rail0 leaf0"), 8));
    check_siblings(f, 1);
    nf_fabric_free(f);

    f = build("gft:leaves=3,nodes=4,spines=1,sib=0,radix=8");
    check_siblings(f, 0);
    assert_int_equal(f->n_switches, 4);
    nf_fabric_free(f);
}

/* ---- specs ---------------------------------------------------------------------------------- */

static void test_spec_matches_api(void **state) {
    (void)state;
    nf_fabric *a, *b;
    nf_diag d;
    unsigned m[] = {4, 4, 8}, w[] = {1, 4, 2}, dims[] = {3, 4};
    a = build("xgft:h=3,m=4.4.8,w=1.4.2");
    assert_int_equal(nf_gen_xgft(3, m, w, &b, &d), 0);
    assert_true(nf_fabric_equal(a, b, true, true, &d));
    nf_fabric_free(a), nf_fabric_free(b);
    a = build("torus:3x4,c=2");
    assert_int_equal(nf_gen_torus(2, dims, 2, &b, &d), 0);
    assert_true(nf_fabric_equal(a, b, true, true, &d));
    nf_fabric_free(a), nf_fabric_free(b);
    a = build("dragonfly:a=4,p=2,h=2,g=5,arr=consecutive");
    assert_int_equal(nf_gen_dragonfly(4, 2, 2, 5, NF_DF_CONSECUTIVE, &b, &d), 0);
    assert_true(nf_fabric_equal(a, b, true, true, &d));
    nf_fabric_free(a), nf_fabric_free(b);
    a = build("dragonfly:a=4,p=2,h=2,arr=palmtree");
    assert_int_equal(nf_gen_dragonfly(4, 2, 2, 0, NF_DF_PALMTREE, &b, &d), 0);
    assert_true(nf_fabric_equal(a, b, true, true, &d));
    assert_int_equal(a->n_switches, 36);
    nf_fabric_free(a), nf_fabric_free(b);
    a = build("gft:preset=sunway-proto");
    nf_gft_params prm = {
        .leaves = 32, .nodes = 16, .spines = 18, .links = 1, .sib = 4, .rails = 2, .radix = 40};
    assert_int_equal(nf_gen_gft(&prm, &b, &d), 0);
    assert_true(nf_fabric_equal(a, b, true, true, &d));
    nf_fabric_free(a), nf_fabric_free(b);
    /* two builds of one spec are identical, LIDs and GUIDs included */
    a = build("dragonfly:a=6,p=3,h=3");
    b = build("dragonfly:a=6,p=3,h=3");
    assert_true(nf_fabric_equal(a, b, true, true, &d));
    nf_fabric_free(a), nf_fabric_free(b);
}

static void test_spec_errors(void **state) {
    (void)state;
    static const struct {
        const char *spec, *msg;
    } bad[] = {
        {"", "unknown topology '' (known: fattree, xgft, torus, dragonfly, gft, bluelight, "
             "taihulight, file)"},
        {"foo", "unknown topology 'foo' (known: fattree, xgft, torus, dragonfly, gft, bluelight, "
                "taihulight, file)"},
        {"foo:k=4", "unknown topology 'foo'"},
        {"Fattree:k=4", "unknown topology 'Fattree'"},
        {"fattree", "fattree: missing k"},
        {"fattree:", "fattree: missing k"},
        {"fattree:k=3", "fattree: k must be even"},
        {"fattree:k=0", "fattree: k must be even"},
        {"fattree:k=256", "fattree: k must be even and in 2..254"},
        {"fattree:k=", "fattree: k has no value"},
        {"fattree:k=4x", "fattree: k='4x' is not a number"},
        {"fattree:k=-4", "not a number"},
        {"fattree:k= 4", "not a number"},
        {"fattree:k=99999999999999999999999", "fattree: k=99999999999999999999999 is too large"},
        {"fattree:k=4,k=4", "fattree: key 'k' given twice"},
        {"fattree:k=4,z=1", "fattree: unknown key 'z' (known: k)"},
        {"fattree:k=4,", "fattree: empty item"},
        {"fattree:,k=4", "fattree: empty item"},
        {"fattree:k", "fattree: expected key=value, got 'k'"},
        {"fattree:=4", "fattree: missing key before '='"},
        {"xgft:h=3,m=4.4,w=1.2.2", "xgft: m has 2 values but h=3"},
        {"xgft:h=2,m=4.4,w=2.2", "xgft: w1 must be 1"},
        {"xgft:h=9,m=1.1.1.1.1.1.1.1.1,w=1.1.1.1.1.1.1.1.1", "xgft: h must be in 1..8"},
        {"xgft:h=0,m=1,w=1", "xgft: h must be in 1..8"},
        {"xgft:h=2,m=4..4,w=1.2", "xgft: m='4..4' has an empty value"},
        {"xgft:h=2,m=4.4.,w=1.2", "empty value"},
        {"xgft:h=2,m=4.0,w=1.2", "xgft: m2 must be at least 1"},
        {"xgft:h=2,m=4.4,w=1.0", "xgft: w2 must be at least 1"},
        {"xgft:h=2,m=4.4", "xgft: missing w"},
        {"xgft:m=4.4,w=1.1", "xgft: missing h"},
        {"xgft:h=2,m=250.4,w=1.10", "xgft: level-1 switches would need 260 ports (max 255)"},
        {"xgft:h=8,m=200.200.200.200.200.200.200.200,w=1.2.2.2.2.2.2.2", "xgft: too large"},
        {"xgft:h=1,m=1,w=1,x=2", "xgft: unknown key 'x' (known: h, m, w)"},
        {"torus", "torus: missing dimensions"},
        {"torus:c=2", "torus: missing dimensions"},
        {"torus:0x4", "torus: dimension 1 has size 0"},
        {"torus:4x4x", "torus: dimensions='4x4x' has an empty value"},
        {"torus:4xx4", "empty value"},
        {"torus:4x4,c=0", "torus: c must be at least 1"},
        {"torus:4x4,c=300", "torus: c + 2*dims = 304 ports, more than 255"},
        {"torus:1x2x3x4x5x6x7x8x9", "torus: dimensions has more than 8 values"},
        {"torus:1000x1000x1000", "torus: too large"},
        {"torus:4x4,5x5", "torus: expected key=value, got '5x5'"},
        {"torus:c=1,4x4", "torus: expected key=value, got '4x4'"},
        {"torus:4a4", "not a number"},
        {"dragonfly:a=0,p=1,h=1", "dragonfly: a must be at least 1"},
        {"dragonfly:a=4,p=0,h=1", "dragonfly: p must be at least 1"},
        {"dragonfly:a=4,p=1,h=0", "dragonfly: h must be at least 1"},
        {"dragonfly:p=2,h=2", "dragonfly: missing a"},
        {"dragonfly:a=4,h=2", "dragonfly: missing p"},
        {"dragonfly:a=4,p=2,h=2,g=10", "dragonfly: g must be in 2..9 (a*h+1), got 10"},
        {"dragonfly:a=4,p=2,h=2,g=1", "dragonfly: g must be in 2..9"},
        {"dragonfly:a=4,p=2,h=2,g=0", "dragonfly: g must be at least 2"},
        {"dragonfly:a=4,p=2,h=2,arr=foo",
         "dragonfly: arr must be palmtree or consecutive, got 'foo'"},
        {"dragonfly:a=4,p=2,h=2,arr=", "dragonfly: arr must be palmtree or consecutive"},
        {"dragonfly:a=200,p=50,h=10", "dragonfly: p + a - 1 + h = 259 router ports, more than 255"},
        {"dragonfly:a=1000000000,p=1000000000,h=1000000000", "router ports, more than 255"},
        {"dragonfly:a=64,p=32,h=32", "dragonfly: too large"},
        {"gft:leaves=4,nodes=2", "gft: missing spines"},
        {"gft:leaves=3,nodes=2,spines=2", "gft: leaves and spines must be even"},
        {"gft:leaves=4,nodes=2,spines=3", "gft: leaves and spines must be even"},
        {"gft:leaves=4,nodes=30,spines=10",
         "gft: leaf routers need nodes + spines*links + sib = 44 ports, radix is 40"},
        {"gft:leaves=40,nodes=2,spines=2",
         "gft: spine routers need leaves*links + sib = 44 ports, radix is 40"},
        {"gft:leaves=4,nodes=2,spines=2,rails=3", "gft: rails must be 1 or 2"},
        {"gft:leaves=4,nodes=2,spines=2,radix=300", "gft: radix must be in 1..255"},
        {"gft:leaves=4,nodes=2,spines=2,links=0", "gft: links must be at least 1"},
        {"gft:leaves=0,nodes=2,spines=2", "gft: leaves must be at least 1"},
        {"gft:preset=bogus", "gft: unknown preset 'bogus' (known: sunway-proto)"},
        {"gft:preset=sunway-proto,radix=30", "gft: leaf routers need"},
        {"gft:preset=sunway-proto,foo=1", "gft: unknown key 'foo'"},
        {"bluelight:x=1", "bluelight: takes no parameters"},
        {"taihulight:h=4", "taihulight: unknown key 'h' (known: sn, group)"},
        {"taihulight:sn=4,group=0", "taihulight: group must be 1..min(64, sn) (got 0)"},
        {"taihulight:sn=4,group=8", "taihulight: group must be 1..min(64, sn) (got 8)"},
        {"taihulight:sn=0", "taihulight: sn must be 1..4096 (got 0)"},
        {"taihulight:sn=24", "taihulight: sn must be a multiple of 16, supernodes per group"},
        {"taihulight:sn=4096", "taihulight: sn=4096 needs top switches of 256 ports (most 255)"},
        {"file:", "file: missing path"},
        {"file", "file: missing path"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        nf_fabric *f = (nf_fabric *)(uintptr_t)1;
        nf_diag d;
        memset(&d, 0x55, sizeof d);
        int rc = nf_topo_build(bad[i].spec, NULL, &f, &d);
        if (rc != NF_EINVAL || f != NULL || !strstr(d.msg, bad[i].msg))
            fail_msg("'%s': rc %d, out %p, msg '%.200s', expected '%s'", bad[i].spec, rc, (void *)f,
                     d.msg, bad[i].msg);
        assert_string_equal(d.file, "");
        assert_int_equal(d.line, 0);
        /* and without a diag */
        assert_int_equal(nf_topo_build(bad[i].spec, NULL, &f, NULL), NF_EINVAL);
        assert_null(f);
    }
    nf_fabric *f;
    nf_diag d;
    assert_int_equal(nf_topo_build(NULL, NULL, &f, &d), NF_EINVAL);
    assert_int_equal(nf_topo_build("file:/nonexistent/netfab/none.txt", NULL, &f, &d), NF_EIO);
    assert_null(f);
    /* the largest fat tree that fits the LID space has LIDs up to 47,824; the next one has none
     * (every LID 0); and the API's own checks */
    assert_int_equal(nf_gen_fattree(56, &f, &d), 0);
    assert_int_equal(f->n_cas, 43904);
    assert_int_equal(f->lid[0], 1);
    assert_int_equal(f->port_lid[nf_port_index(f, f->n_nodes - 1, 1)], 47824);
    nf_fabric_free(f);
    assert_int_equal(nf_gen_fattree(58, &f, &d), 0);
    assert_int_equal(f->n_cas, 48778);
    for (nf_node n = 0; n < f->n_nodes; n++)
        if (f->lid[n] || f->port_lid[f->port_off[n]]) fail_msg("node %u has a LID", n);
    nf_fabric_free(f);
    unsigned m[] = {4, 4}, w[] = {1, 2}, dims[] = {3, 3};
    assert_int_equal(nf_gen_xgft(0, m, w, &f, &d), NF_EINVAL);
    assert_int_equal(nf_gen_torus(0, dims, 1, &f, &d), NF_EINVAL);
    assert_int_equal(nf_gen_torus(9, dims, 1, &f, &d), NF_EINVAL);
    assert_int_equal(nf_gen_dragonfly(4, 2, 2, 0, (nf_df_arrangement)7, &f, &d), NF_EINVAL);
    assert_int_equal(
        nf_gen_dragonfly(UINT32_MAX, UINT32_MAX, UINT32_MAX, 0, NF_DF_PALMTREE, &f, &d), NF_EINVAL);
    assert_int_equal(nf_gen_gft(NULL, &f, &d), NF_EINVAL);
    assert_null(f);
}

/* file:PATH goes to nf_io_load with the warn callback: a fabric written in ibnetdiscover format
 * comes back equal. Skipped while the ibnet writer/parser is not in place. */
static void test_file_spec(void **state) {
    (void)state;
    nf_fabric *a = build("fattree:k=4");
    char path[] = "/tmp/netfab_test_gen_XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    FILE *fp = fdopen(fd, "w");
    int wrc = nf_io_write(a, NF_FMT_IBNET, fp);
    fclose(fp);
    if (wrc) {
        unlink(path);
        nf_fabric_free(a);
        skip();
    }
    char spec[64];
    snprintf(spec, sizeof spec, "file:%s", path);
    nf_fabric *b = NULL;
    nf_diag d = {0};
    nf_topo_opts opts = {0};
    int rc = nf_topo_build(spec, &opts, &b, &d);
    unlink(path);
    if (rc == NF_EUNSUPPORTED || rc == NF_EPARSE) {
        nf_fabric_free(a);
        skip();
    }
    if (rc) fail_msg("%s: %s", spec, d.msg);
    assert_true(nf_fabric_equal(a, b, false, false, &d));
    nf_fabric_free(a);
    nf_fabric_free(b);
}

/* ---- allocation failures -------------------------------------------------------------------- */

static int attempt_spec(void *ctx, nf_fabric **out, nf_diag *d) {
    return nf_topo_build(ctx, NULL, out, d);
}

static void test_allocation_failures(void **state) {
    (void)state;
    static const char *specs[] = {"fattree:k=4", "xgft:h=2,m=2.3,w=1.2", "torus:3x2,c=2",
                                  "dragonfly:a=2,p=1,h=1",
                                  "gft:leaves=2,nodes=2,spines=2,sib=1,rails=2,radix=8"};
    for (size_t i = 0; i < sizeof specs / sizeof specs[0]; i++) {
        long failures;
        nf_fabric *f = alloc_sweep(attempt_spec, (void *)specs[i], "out of memory", &failures);
        assert_int_equal(nf_fabric_check(f, NULL), 0);
        nf_fabric_free(f);
        assert_true(failures > 3);
    }
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fattree_k4_by_hand),  cmocka_unit_test(test_fattree_k8_paths),
        cmocka_unit_test(test_fattree_k40),         cmocka_unit_test(test_xgft_by_hand),
        cmocka_unit_test(test_xgft_equals_fattree), cmocka_unit_test(test_bluelight),
        cmocka_unit_test(test_taihulight),          cmocka_unit_test(test_dragonfly_paper),
        cmocka_unit_test(test_dragonfly_small_g),   cmocka_unit_test(test_torus_paper),
        cmocka_unit_test(test_torus_small),         cmocka_unit_test(test_gft_sunway),
        cmocka_unit_test(test_gft_custom),          cmocka_unit_test(test_spec_matches_api),
        cmocka_unit_test(test_spec_errors),         cmocka_unit_test(test_file_spec),
        cmocka_unit_test(test_allocation_failures),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
