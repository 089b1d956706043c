/* SPDX-License-Identifier: MIT */
/* Multicast workloads (nf_groups_build) checked by hand on small generated fabrics: grids, random
 * groups, hierarchical communicators and group files under both mappings, every error, an
 * allocation-failure sweep; and the internal RNG against published values and for uniformity. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "testutil.h"

#include "netfab/gen.h"
#include "netfab/groups.h"
#include "netfab/io.h"
#include "util/rng.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ---- helpers --------------------------------------------------------------------------------- */

static nf_fabric *topo(const char *spec) {
    nf_fabric *f = NULL;
    nf_diag d;
    int rc = nf_topo_build(spec, NULL, &f, &d);
    if (rc) fail_msg("%s: %s", spec, d.msg);
    return f;
}

static nf_groups *build(const nf_fabric *f, const char *spec, unsigned ppn, nf_mapping map,
                        uint64_t seed) {
    nf_workload_opts o = {.procs_per_node = ppn, .mapping = map, .seed = seed};
    nf_groups *g = NULL;
    nf_diag d;
    int rc = nf_groups_build(f, spec, &o, &g, &d);
    if (rc) fail_msg("%s: %d %s", spec, rc, d.msg);
    assert_non_null(g);
    return g;
}

static uint32_t gsize(const nf_groups *g, uint32_t i) { return g->off[i + 1] - g->off[i]; }

/* Group i's members must be exactly want[0..n). */
static void assert_members(const nf_groups *g, uint32_t i, const nf_node *want, uint32_t n) {
    assert_true(i < g->n);
    if (gsize(g, i) != n) fail_msg("group %u has %u members, want %u", i, gsize(g, i), n);
    for (uint32_t k = 0; k < n; k++)
        if (g->member[g->off[i] + k] != want[k])
            fail_msg("group %u member %u is %u, want %u", i, k, g->member[g->off[i] + k], want[k]);
}
#define MEMBERS(g, i, ...)                                                                         \
    do {                                                                                           \
        const nf_node want_[] = {__VA_ARGS__};                                                     \
        assert_members((g), (i), want_, sizeof want_ / sizeof want_[0]);                           \
    } while (0)

/* The structural contract: offsets ascend, members are endpoint CAs, strictly ascending. */
static void check_groups(const nf_fabric *f, const nf_groups *g) {
    assert_int_equal(g->off[0], 0);
    for (uint32_t i = 0; i < g->n; i++) {
        assert_true(g->off[i + 1] > g->off[i]);
        for (uint32_t k = g->off[i]; k < g->off[i + 1]; k++) {
            nf_node m = g->member[k];
            assert_true(m >= f->n_switches && m < f->n_nodes);
            assert_true(f->peer[nf_port_index(f, m, 1)] < f->n_switches);
            if (k > g->off[i]) assert_true(g->member[k - 1] < m);
        }
    }
}

static bool groups_equal(const nf_groups *a, const nf_groups *b) {
    return a->n == b->n && memcmp(a->off, b->off, (a->n + 1) * sizeof *a->off) == 0 &&
           memcmp(a->member, b->member, a->off[a->n] * sizeof *a->member) == 0;
}

/* Builds spec and expects failure rc with msg containing want. */
static void expect_err(const nf_fabric *f, const char *spec, const nf_workload_opts *o, int rc,
                       const char *want) {
    nf_groups *g = (nf_groups *)&g;
    nf_diag d;
    memset(&d, 0x55, sizeof d);
    int got = nf_groups_build(f, spec, o, &g, &d);
    if (got != rc) fail_msg("%s: got %d (%s), want %d", spec ? spec : "(null)", got, d.msg, rc);
    assert_null(g);
    if (!strstr(d.msg, want)) fail_msg("%s: message '%s' lacks '%s'", spec, d.msg, want);
}

static char *write_temp(const char *text) {
    char *path = malloc(64);
    strcpy(path, "/tmp/nf_groups_XXXXXX");
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    size_t len = strlen(text);
    assert_int_equal(write(fd, text, len), (ssize_t)len);
    close(fd);
    return path;
}

static void remove_temp(char *path) {
    unlink(path);
    free(path);
}

/* fattree:k=4: 20 switches, 16 endpoints with CA ids 20..35, two per edge switch. */
#define FT4 20u

/* ---- grids ----------------------------------------------------------------------------------- */

static void test_grid2d_aware(void **state) {
    (void)state;
    nf_fabric *f = topo("fattree:k=4");
    assert_int_equal(f->n_switches, FT4);
    nf_groups *g = build(f, "grid2d:4x4", 1, NF_MAP_AWARE, 0);
    check_groups(f, g);
    assert_int_equal(g->n, 8);
    MEMBERS(g, 0, 20, 21, 22, 23);     /* row 0: ranks 0..3 */
    MEMBERS(g, 3, 32, 33, 34, 35);     /* row 3 */
    MEMBERS(g, 4 + 1, 21, 25, 29, 33); /* column 1: ranks 1, 5, 9, 13 */
    assert_int_equal(g->off[8], 32);
    nf_groups_free(g);

    /* 2 procs per node: rank r on endpoint r / 2 */
    g = build(f, "grid2d:4x4", 2, NF_MAP_AWARE, 0);
    check_groups(f, g);
    assert_int_equal(g->n, 8);
    MEMBERS(g, 0, 20, 21);             /* ranks 0..3 on endpoints 0, 1 */
    MEMBERS(g, 3, 26, 27);             /* ranks 12..15 */
    MEMBERS(g, 4 + 1, 20, 22, 24, 26); /* ranks 1, 5, 9, 13 on endpoints 0, 2, 4, 6 */
    MEMBERS(g, 4 + 2, 21, 23, 25, 27); /* ranks 2, 6, 10, 14 */
    nf_groups_free(g);

    /* 4 procs per node: a row of 4 collapses onto one endpoint, and is kept */
    g = build(f, "grid2d:2x4", 4, NF_MAP_AWARE, 0);
    check_groups(f, g);
    assert_int_equal(g->n, 6);
    MEMBERS(g, 0, 20);
    MEMBERS(g, 1, 21);
    for (uint32_t c = 0; c < 4; c++)
        MEMBERS(g, 2 + c, 20, 21); /* ranks c and 4 + c */
    assert_int_equal(g->off[6], 10);
    nf_groups_free(g);

    /* dimension 1: groups of one rank */
    g = build(f, "grid2d:1x3", 1, NF_MAP_AWARE, 0);
    assert_int_equal(g->n, 4);
    MEMBERS(g, 0, 20, 21, 22);
    MEMBERS(g, 1, 20);
    MEMBERS(g, 3, 22);
    nf_groups_free(g);

    /* opts NULL: ppn 1, aware */
    nf_diag d;
    assert_int_equal(nf_groups_build(f, "grid2d:16x1", NULL, &g, &d), 0);
    assert_int_equal(g->n, 17);
    MEMBERS(g, 15, 35);
    assert_int_equal(gsize(g, 16), 16);
    nf_groups_free(g);
    nf_fabric_free(f);
}

static void test_grid3d(void **state) {
    (void)state;
    nf_fabric *f = topo("fattree:k=6"); /* 45 switches, 54 endpoints: CA ids 45..98 */
    assert_int_equal(f->n_switches, 45);
    nf_groups *g = build(f, "grid3d:2x3x4", 1, NF_MAP_AWARE, 0);
    check_groups(f, g);
    assert_int_equal(g->n, 2 * 3 + 2 * 4 + 3 * 4);
    for (uint32_t i = 0; i < g->n; i++)
        assert_int_equal(gsize(g, i), i < 6 ? 4 : i < 14 ? 3 : 2);
    MEMBERS(g, 0, 45, 46, 47, 48);         /* along Z at (0,0): ranks 0..3 */
    MEMBERS(g, 5, 65, 66, 67, 68);         /* along Z at (1,2): ranks 20..23 */
    MEMBERS(g, 6 + 1 * 4 + 2, 59, 63, 67); /* along Y at (x=1,z=2): ranks 14, 18, 22 */
    MEMBERS(g, 14 + 2 * 4 + 3, 56, 68);    /* along X at (y=2,z=3): ranks 11, 23 */
    nf_groups_free(g);

    /* 4 procs per node: the Z lines collapse to one endpoint */
    g = build(f, "grid3d:2x3x4", 4, NF_MAP_AWARE, 0);
    check_groups(f, g);
    MEMBERS(g, 5, 50);                     /* ranks 20..23 on endpoint 5 */
    MEMBERS(g, 6 + 1 * 4 + 2, 48, 49, 50); /* ranks 14, 18, 22 on endpoints 3, 4, 5 */
    nf_groups_free(g);
    nf_fabric_free(f);
}

/* The paper's 3D workload on the paper's Dragonfly: sizes, and that both mappings fill it. */
static void test_grid3d_dragonfly(void **state) {
    (void)state;
    nf_fabric *f = topo("dragonfly:a=18,p=9,h=9");
    assert_int_equal(f->n_cas, 26406);
    for (int map = 0; map < 2; map++) {
        nf_groups *g = build(f, "grid3d:81x27x12", 1, (nf_mapping)map, 42);
        check_groups(f, g);
        assert_int_equal(g->n, 81 * 27 + 81 * 12 + 27 * 12); /* 3,483 */
        assert_int_equal(g->off[g->n], 3 * 26244);
        nf_groups_free(g);
    }
    nf_fabric_free(f);
}

static void test_random_mapping(void **state) {
    (void)state;
    nf_fabric *f = topo("fattree:k=4");
    /* ppn 1 and a full grid: the rows are disjoint and cover every endpoint */
    nf_groups *g = build(f, "grid2d:4x4", 1, NF_MAP_RANDOM, 7);
    check_groups(f, g);
    int seen[16] = {0};
    for (uint32_t r = 0; r < 4; r++) {
        assert_int_equal(gsize(g, r), 4);
        for (uint32_t k = g->off[r]; k < g->off[r + 1]; k++)
            seen[g->member[k] - FT4]++;
    }
    for (int e = 0; e < 16; e++)
        assert_int_equal(seen[e], 1);
    for (uint32_t c = 4; c < 8; c++)
        assert_int_equal(gsize(g, c), 4);

    nf_groups *same = build(f, "grid2d:4x4", 1, NF_MAP_RANDOM, 7);
    assert_true(groups_equal(g, same));
    nf_groups *other = build(f, "grid2d:4x4", 1, NF_MAP_RANDOM, 8);
    assert_false(groups_equal(g, other));
    nf_groups *aware = build(f, "grid2d:4x4", 1, NF_MAP_AWARE, 7);
    assert_false(groups_equal(g, aware));
    nf_groups_free(same);
    nf_groups_free(other);
    nf_groups_free(aware);
    nf_groups_free(g);

    /* fewer ranks than slots: the 8 ranks still land on 8 distinct slots (ppn 1) */
    g = build(f, "grid2d:2x4", 1, NF_MAP_RANDOM, 3);
    memset(seen, 0, sizeof seen);
    for (uint32_t k = 0; k < g->off[2]; k++)
        seen[g->member[k] - FT4]++;
    int used = 0;
    for (int e = 0; e < 16; e++) {
        assert_true(seen[e] <= 1);
        used += seen[e];
    }
    assert_int_equal(used, 8);
    nf_groups_free(g);

    /* ppn 2, 32 ranks on 32 slots: every endpoint holds exactly two ranks */
    g = build(f, "grid2d:8x4", 2, NF_MAP_RANDOM, 3);
    memset(seen, 0, sizeof seen);
    for (uint32_t r = 0; r < 8; r++)
        for (uint32_t k = g->off[r]; k < g->off[r + 1]; k++)
            seen[g->member[k] - FT4]++;
    /* an endpoint's two ranks are in one row (counted once) or in two */
    for (int e = 0; e < 16; e++)
        assert_true(seen[e] >= 1 && seen[e] <= 2);
    nf_groups_free(g);
    nf_fabric_free(f);
}

/* ---- random groups --------------------------------------------------------------------------- */

static void test_random_groups(void **state) {
    (void)state;
    nf_fabric *f = topo("fattree:k=4");
    nf_groups *g = build(f, "random:n=50,size=5", 1, NF_MAP_AWARE, 1);
    check_groups(f, g);
    assert_int_equal(g->n, 50);
    for (uint32_t i = 0; i < g->n; i++)
        assert_int_equal(gsize(g, i), 5); /* distinct ranks on distinct endpoints */
    nf_groups *same = build(f, "random:n=50,size=5", 1, NF_MAP_AWARE, 1);
    assert_true(groups_equal(g, same));
    nf_groups *other = build(f, "random:n=50,size=5", 1, NF_MAP_AWARE, 2);
    assert_false(groups_equal(g, other));
    nf_groups_free(same);
    nf_groups_free(other);
    /* the mapping has its own stream: random mapping with ppn 1 relabels endpoints only */
    nf_groups *rm = build(f, "random:n=50,size=5", 1, NF_MAP_RANDOM, 1);
    for (uint32_t i = 0; i < g->n; i++)
        assert_int_equal(gsize(rm, i), 5);
    nf_groups_free(rm);
    nf_groups_free(g);

    /* 4 procs per node: 5 distinct ranks on 2 to 5 endpoints */
    g = build(f, "random:n=200,size=5", 4, NF_MAP_AWARE, 9);
    check_groups(f, g);
    bool fewer = false;
    for (uint32_t i = 0; i < g->n; i++) {
        assert_true(gsize(g, i) >= 2 && gsize(g, i) <= 5);
        fewer |= gsize(g, i) < 5;
    }
    assert_true(fewer);
    nf_groups_free(g);

    /* size = all slots: every group is every endpoint */
    g = build(f, "random:n=3,size=16", 1, NF_MAP_RANDOM, 5);
    for (uint32_t i = 0; i < 3; i++)
        assert_int_equal(gsize(g, i), 16);
    nf_groups_free(g);

    /* every endpoint about equally often: 4000 groups of 4 from 16, expect 1000 each */
    g = build(f, "random:n=4000,size=4", 1, NF_MAP_AWARE, 11);
    double cnt[16] = {0}, chi = 0;
    for (uint32_t k = 0; k < g->off[g->n]; k++)
        cnt[g->member[k] - FT4]++;
    for (int e = 0; e < 16; e++)
        chi += (cnt[e] - 1000) * (cnt[e] - 1000) / 1000;
    if (chi > 45) fail_msg("chi-square %.1f over 15 degrees of freedom", chi);
    nf_groups_free(g);
    nf_fabric_free(f);
}

/* ---- hierarchical communicators -------------------------------------------------------------- */

static void test_hier(void **state) {
    (void)state;
    nf_fabric *f = topo("fattree:k=4");
    /* {0..3} {4..7} {8..11} {12..15}; leaders {0,4} {8,12}; top {0,8} */
    nf_groups *g = build(f, "hier:n=16,s=4.2", 1, NF_MAP_AWARE, 0);
    check_groups(f, g);
    assert_int_equal(g->n, 7);
    MEMBERS(g, 0, 20, 21, 22, 23);
    MEMBERS(g, 3, 32, 33, 34, 35);
    MEMBERS(g, 4, 20, 24);
    MEMBERS(g, 5, 28, 32);
    MEMBERS(g, 6, 20, 28);
    nf_groups_free(g);

    /* {0..3} {4..7} {8,9}; {0,4} {8}; {0,8} */
    g = build(f, "hier:n=10,s=4.2", 1, NF_MAP_AWARE, 0);
    assert_int_equal(g->n, 6);
    MEMBERS(g, 2, 28, 29);
    MEMBERS(g, 3, 20, 24);
    MEMBERS(g, 4, 28);
    MEMBERS(g, 5, 20, 28);
    nf_groups_free(g);

    /* two levels end with one leader: no top group */
    g = build(f, "hier:n=8,s=4.2", 1, NF_MAP_AWARE, 0);
    assert_int_equal(g->n, 3);
    MEMBERS(g, 2, 20, 24);
    nf_groups_free(g);
    /* one group at level 1: nothing more */
    g = build(f, "hier:n=4,s=4.2.2", 1, NF_MAP_AWARE, 0);
    assert_int_equal(g->n, 1);
    nf_groups_free(g);
    /* one level, then the top group of the 8 leaders */
    g = build(f, "hier:n=16,s=2", 1, NF_MAP_AWARE, 0);
    assert_int_equal(g->n, 9);
    MEMBERS(g, 8, 20, 22, 24, 26, 28, 30, 32, 34);
    nf_groups_free(g);
    /* 2 procs per node: the level-1 pairs collapse to one endpoint */
    g = build(f, "hier:n=8,s=2.2", 2, NF_MAP_AWARE, 0);
    assert_int_equal(g->n, 4 + 2 + 1);
    MEMBERS(g, 0, 20);
    MEMBERS(g, 4, 20, 21); /* ranks 0, 2 */
    MEMBERS(g, 6, 20, 22); /* ranks 0, 4 */
    nf_groups_free(g);
    nf_fabric_free(f);
}

/* ---- group files ----------------------------------------------------------------------------- */

static void test_file(void **state) {
    (void)state;
    nf_fabric *f = topo("fattree:k=4");
    char *path = write_temp("# three groups\n"
                            "0 1 2   # a trailing comment\n"
                            "   \n"
                            "\t3\t4\r\n"
                            "#\n"
                            "15 5 5 007");
    char spec[128];
    snprintf(spec, sizeof spec, "file:%s", path);
    nf_groups *g = build(f, spec, 1, NF_MAP_AWARE, 0);
    check_groups(f, g);
    assert_int_equal(g->n, 3);
    MEMBERS(g, 0, 20, 21, 22);
    MEMBERS(g, 1, 23, 24);
    MEMBERS(g, 2, 25, 27, 35);
    nf_groups_free(g);
    /* random mapping over the 16 ranks the file names */
    g = build(f, spec, 1, NF_MAP_RANDOM, 1);
    check_groups(f, g);
    assert_int_equal(gsize(g, 2), 3);
    nf_groups_free(g);
    remove_temp(path);
    nf_fabric_free(f);
}

static void expect_file_err(const nf_fabric *f, const char *text, int line, const char *want) {
    char *path = write_temp(text);
    char spec[128];
    snprintf(spec, sizeof spec, "file:%s", path);
    nf_groups *g = (nf_groups *)&g;
    nf_diag d;
    int rc = nf_groups_build(f, spec, NULL, &g, &d);
    if (rc != NF_EPARSE) fail_msg("'%s': got %d (%s)", text, rc, d.msg);
    assert_null(g);
    assert_string_equal(d.file, path);
    assert_int_equal(d.line, line);
    if (!strstr(d.msg, want)) fail_msg("'%s': message '%s' lacks '%s'", text, d.msg, want);
    remove_temp(path);
}

static void test_file_errors(void **state) {
    (void)state;
    nf_fabric *f = topo("fattree:k=4");
    expect_file_err(f, "0 1\nfoo 2\n", 2, "'foo' is not a rank");
    expect_file_err(f, "1\n\n# x\n3 16\n", 4,
                    "rank 16 is beyond the 16 rank slots (16 endpoints x 1");
    expect_file_err(f, "0 -1\n", 1, "'-1' is not a rank");
    expect_file_err(f, "0 2x\n", 1, "'2x' is not a rank");
    expect_file_err(f, "99999999999999999999999\n", 1, "rank 99999999999999999999999 is beyond");
    expect_file_err(f, "# only comments\n\n   \n", 0, "no groups");
    expect_file_err(f, "", 0, "no groups");
    nf_groups *g = (nf_groups *)&g;
    nf_diag d;
    assert_int_equal(nf_groups_build(f, "file:/nonexistent/groups.txt", NULL, &g, &d), NF_EIO);
    assert_null(g);
    assert_string_equal(d.file, "/nonexistent/groups.txt");
    assert_non_null(strstr(d.msg, "cannot read"));
    expect_err(f, "file:", NULL, NF_EINVAL, "file: missing path");
    expect_err(f, "file", NULL, NF_EINVAL, "file: missing path");
    nf_fabric_free(f);
}

/* ---- errors ---------------------------------------------------------------------------------- */

static void test_errors(void **state) {
    (void)state;
    nf_fabric *f = topo("fattree:k=4");
    struct {
        const char *spec, *want;
    } cases[] = {
        {"foo:1", "unknown groups pattern 'foo' (known: grid2d, grid3d, random, hier, file, sa)"},
        {"", "unknown groups pattern ''"},
        {"grid2d", "grid2d: expected RxC"},
        {"grid2d:", "grid2d: expected RxC, got ''"},
        {"grid2d:4", "grid2d: expected RxC, got '4'"},
        {"grid2d:4x", "grid2d: expected RxC"},
        {"grid2d:x4", "grid2d: expected RxC"},
        {"grid2d:4x4x1", "grid2d: expected RxC"},
        {"grid2d:0x4", "grid2d: dimension must be at least 1"},
        {"grid2d:ax4", "grid2d: dimension 'a' is not a number"},
        {"grid2d:4x-4", "is not a number"},
        {"grid2d:4x10000000000", "grid2d: dimension 10000000000 is too large"},
        {"grid2d:5x4",
         "grid2d:5x4 needs 20 ranks but the fabric has 16 endpoints x 1 procs per node"},
        {"grid2d:240x100",
         "grid2d:240x100 needs 24000 ranks but the fabric has 16 endpoints x 1 procs per node"},
        {"grid2d:1000000000x1000000000", "too many ranks (more than 2^31)"},
        {"grid3d:2x2", "grid3d: expected XxYxZ"},
        {"grid3d:2x2x2x2", "grid3d: expected XxYxZ"},
        {"grid3d:2x0x2", "must be at least 1"},
        {"grid3d:1000000000x1000000000x1000000000", "too many ranks"},
        {"grid3d:2x3x3", "needs 18 ranks"},
        {"random", "random: missing n"},
        {"random:n=1", "random: missing size"},
        {"random:size=1", "random: missing n"},
        {"random:n=1,size=2,q=3", "random: unknown key 'q' (known: n, size)"},
        {"random:n=1,n=2,size=1", "random: key 'n' given twice"},
        {"random:n=0,size=1", "random: n must be at least 1"},
        {"random:n=1,size=0", "random: size must be at least 1"},
        {"random:n=1,size=", "random: size has no value"},
        {"random:n=1,size=x", "random: size 'x' is not a number"},
        {"random:n=1,size=17", "random:n=1,size=17 needs 17 ranks"},
        {"random:n=1,,size=1", "random: empty item"},
        {"random:n=1,size=1,", "random: empty item"},
        {"random:n=1,size", "random: expected key=value, got 'size'"},
        {"random:n=1000000000,size=16", "too many group members"},
        {"hier:n=16", "hier: missing s"},
        {"hier:s=2", "hier: missing n"},
        {"hier:n=17,s=4", "hier:n=17,s=4 needs 17 ranks"},
        {"hier:n=16,s=", "hier: expected s=A.B..."},
        {"hier:n=16,s=4..2", "hier: expected s=A.B..."},
        {"hier:n=16,s=4.", "hier: expected s=A.B..."},
        {"hier:n=16,s=4.0", "hier: s must be at least 1"},
        {"hier:n=16,s=2.2.2.2.2.2.2.2.2.2.2.2.2.2.2.2.2", "hier: expected s=A.B... (1 to 16"},
        {"hier:n=0,s=2", "hier: n must be at least 1"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        expect_err(f, cases[i].spec, NULL, NF_EINVAL, cases[i].want);
    /* 16 levels are allowed */
    nf_groups *g = build(f, "hier:n=16,s=2.2.2.2.2.2.2.2.2.2.2.2.2.2.2.2", 1, NF_MAP_AWARE, 0);
    assert_int_equal(g->n, 8 + 4 + 2 + 1);
    nf_groups_free(g);

    nf_workload_opts o = {.procs_per_node = 200000000};
    expect_err(f, "grid2d:1x1", &o, NF_EINVAL,
               "16 endpoints x 200000000 procs per node make more than 2^31 rank slots");
    o = (nf_workload_opts){.procs_per_node = 2};
    expect_err(f, "grid2d:240x100", &o, NF_EINVAL,
               "needs 24000 ranks but the fabric has 16 endpoints x 2 procs per node");
    o = (nf_workload_opts){.mapping = (nf_mapping)7};
    expect_err(f, "grid2d:1x1", &o, NF_EINVAL, "unknown mapping 7");
    expect_err(f, NULL, NULL, NF_EINVAL, "no groups spec");
    expect_err(NULL, "grid2d:1x1", NULL, NF_EINVAL, "no fabric");
    /* a NULL diag is allowed */
    assert_int_equal(nf_groups_build(f, "grid2d:9x9", NULL, &g, NULL), NF_EINVAL);
    assert_null(g);
    nf_groups_free(NULL);
    nf_fabric_free(f);
}

/* CAs whose port 1 is not cabled to a switch are not endpoints. */
static void test_skipped_endpoints(void **state) {
    (void)state;
    nf_builder *b = nf_builder_new(0, 0);
    nf_node sw, a, lone, p2, c1, c2, e;
    assert_int_equal(nf_builder_add_node(b, NF_NODE_SWITCH, 4, NULL, &sw), 0);
    assert_int_equal(nf_builder_add_node(b, NF_NODE_CA, 1, NULL, &a), 0);
    assert_int_equal(nf_builder_add_node(b, NF_NODE_CA, 1, NULL, &lone), 0); /* uncabled */
    assert_int_equal(nf_builder_add_node(b, NF_NODE_CA, 2, NULL, &p2), 0);   /* port 2 only */
    assert_int_equal(nf_builder_add_node(b, NF_NODE_CA, 1, NULL, &c1), 0);   /* CA to CA */
    assert_int_equal(nf_builder_add_node(b, NF_NODE_CA, 1, NULL, &c2), 0);
    assert_int_equal(nf_builder_add_node(b, NF_NODE_CA, 1, NULL, &e), 0);
    assert_int_equal(nf_builder_connect(b, a, 1, sw, 1, NULL), 0);
    assert_int_equal(nf_builder_connect(b, p2, 2, sw, 2, NULL), 0);
    assert_int_equal(nf_builder_connect(b, c1, 1, c2, 1, NULL), 0);
    assert_int_equal(nf_builder_connect(b, e, 1, sw, 3, NULL), 0);
    nf_fabric *f = NULL;
    assert_int_equal(nf_builder_freeze(b, true, &f), 0);
    nf_builder_free(b);
    assert_int_equal(f->n_cas, 6); /* CAs are ids 1..6 in insertion order */
    nf_groups *g = build(f, "grid2d:1x2", 1, NF_MAP_AWARE, 0);
    MEMBERS(g, 0, 1, 6);
    nf_groups_free(g);
    expect_err(f, "grid2d:1x3", NULL, NF_EINVAL, "the fabric has 2 endpoints");
    nf_fabric_free(f);
}

/* ---- allocation failures --------------------------------------------------------------------- */

typedef struct sweep_ctx {
    nf_fabric *f;
    const char *spec;
    nf_workload_opts o;
    nf_groups *g;
} sweep_ctx;

/* alloc_sweep speaks of fabrics: hand it the (borrowed) fabric on success, NULL on failure. */
static int sweep_groups(void *ctx, nf_fabric **out, nf_diag *d) {
    sweep_ctx *c = ctx;
    c->g = (nf_groups *)c;
    int rc = nf_groups_build(c->f, c->spec, &c->o, &c->g, d);
    if (rc) assert_null(c->g);
    *out = rc ? NULL : c->f;
    return rc;
}

static void test_alloc_failures(void **state) {
    (void)state;
    nf_fabric *f = topo("fattree:k=4");
    char *path = write_temp("0 1 2\n3 4 5 6 7 8 9 10 11 12 13 14 15 0 1 2 3 4\n# c\n5\n");
    char fspec[128];
    snprintf(fspec, sizeof fspec, "file:%s", path);
    struct {
        const char *spec;
        unsigned ppn;
        nf_mapping map;
    } cases[] = {
        {"grid2d:4x4", 1, NF_MAP_AWARE},      {"grid2d:4x4", 2, NF_MAP_RANDOM},
        {"grid3d:2x2x4", 1, NF_MAP_RANDOM},   {"random:n=5,size=3", 2, NF_MAP_RANDOM},
        {"hier:n=16,s=2.2", 1, NF_MAP_AWARE}, {fspec, 1, NF_MAP_RANDOM},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        sweep_ctx c = {.f = f, .spec = cases[i].spec, .o = {cases[i].ppn, cases[i].map, 99}};
        long failures = 0;
        nf_fabric *got = alloc_sweep(sweep_groups, &c, "out of memory", &failures);
        assert_ptr_equal(got, f);
        assert_true(failures >= 3);
        nf_groups *ref = build(f, cases[i].spec, cases[i].ppn, cases[i].map, 99);
        assert_true(groups_equal(c.g, ref));
        nf_groups_free(ref);
        nf_groups_free(c.g);
    }
    remove_temp(path);
    nf_fabric_free(f);
}

/* ---- the RNG --------------------------------------------------------------------------------- */

static void test_rng_known(void **state) {
    (void)state;
    /* splitmix64 from 0 (the published first outputs) */
    uint64_t x = 0;
    assert_int_equal(nf__splitmix64(&x), 0xe220a8397b1dcdafu);
    assert_int_equal(nf__splitmix64(&x), 0x6e789e6aa1b965f4u);
    assert_int_equal(nf__splitmix64(&x), 0x06c45d188009454fu);
    /* xoshiro256** from the state {1, 2, 3, 4} */
    nf__rng r = {{1, 2, 3, 4}};
    assert_int_equal(nf__rng_next(&r), 11520u);
    assert_int_equal(nf__rng_next(&r), 0u);
    assert_int_equal(nf__rng_next(&r), 1509978240u);
    assert_int_equal(nf__rng_next(&r), 1215971899390074240u);
    /* seeding is splitmix64 from the seed */
    nf__rng_seed(&r, 0);
    assert_int_equal(r.s[0], 0xe220a8397b1dcdafu);
    assert_int_equal(r.s[1], 0x6e789e6aa1b965f4u);
    /* determinism */
    nf__rng a, b, c;
    nf__rng_seed(&a, 12345);
    nf__rng_seed(&b, 12345);
    nf__rng_seed(&c, 12346);
    int differ = 0;
    for (int i = 0; i < 1000; i++) {
        uint64_t va = nf__rng_next(&a);
        assert_int_equal(va, nf__rng_next(&b));
        differ += va != nf__rng_next(&c);
    }
    assert_true(differ > 990);
}

static void test_rng_below(void **state) {
    (void)state;
    nf__rng r;
    nf__rng_seed(&r, 2024);
    for (int i = 0; i < 1000; i++)
        assert_int_equal(nf__rng_below(&r, 1), 0);
    for (int i = 0; i < 100000; i++)
        assert_true(nf__rng_below(&r, UINT32_MAX) < UINT32_MAX);
    /* uniform over 10 values: chi-square with 9 degrees of freedom, 40 is p < 1e-5 */
    double cnt[10] = {0}, chi = 0;
    for (int i = 0; i < 100000; i++) {
        uint32_t v = nf__rng_below(&r, 10);
        assert_true(v < 10);
        cnt[v]++;
    }
    for (int k = 0; k < 10; k++)
        chi += (cnt[k] - 10000) * (cnt[k] - 10000) / 10000;
    if (chi > 40) fail_msg("chi-square %.1f over 9 degrees of freedom", chi);
    /* n = 3 * 2^30: a modulo-biased draw would put 1/4 of the values in the top third, not 1/3 */
    uint32_t n = 3u << 30;
    int top = 0;
    for (int i = 0; i < 100000; i++) {
        uint32_t v = nf__rng_below(&r, n);
        assert_true(v < n);
        top += v >= (2u << 30);
    }
    if (top < 32300 || top > 34400) fail_msg("%d of 100000 in the top third", top);
}

static void test_rng_shuffle(void **state) {
    (void)state;
    nf__rng r, r2;
    nf__rng_seed(&r, 5);
    nf__rng_seed(&r2, 5);
    uint32_t a[1000], b[1000];
    for (uint32_t i = 0; i < 1000; i++)
        a[i] = b[i] = i;
    nf__rng_shuffle_u32(&r, a, 1000);
    nf__rng_sample_u32(&r2, b, 1000, 100);
    /* a sample is the prefix of the full shuffle */
    assert_memory_equal(a, b, 100 * sizeof a[0]);
    int seen[1000] = {0}, moved = 0;
    for (uint32_t i = 0; i < 1000; i++) {
        seen[a[i]]++;
        moved += a[i] != i;
    }
    for (int i = 0; i < 1000; i++)
        assert_int_equal(seen[i], 1);
    assert_true(moved > 900);
    memset(seen, 0, sizeof seen);
    for (uint32_t i = 0; i < 1000; i++)
        seen[b[i]]++;
    for (int i = 0; i < 1000; i++)
        assert_int_equal(seen[i], 1);
    /* empty and single arrays are fine */
    nf__rng_shuffle_u32(&r, a, 0);
    nf__rng_shuffle_u32(&r, a, 1);
    /* all 6 orders of 3 elements equally often: chi-square, 5 degrees of freedom */
    double cnt[6] = {0}, chi = 0;
    for (int i = 0; i < 60000; i++) {
        uint32_t p[3] = {0, 1, 2};
        nf__rng_shuffle_u32(&r, p, 3);
        cnt[p[0] * 2 + (p[1] > p[2])]++;
    }
    for (int k = 0; k < 6; k++)
        chi += (cnt[k] - 10000) * (cnt[k] - 10000) / 10000;
    if (chi > 30) fail_msg("chi-square %.1f over 5 degrees of freedom", chi);
}

/* ---- groups from the SA ------------------------------------------------------------------------
 */

#define REAL NF_TEST_DATA "/real/"

typedef struct sawarns {
    int n, line;
    char last[256];
} sawarns;

static void sa_warn(void *ud, const char *file, int line, const char *msg) {
    (void)file;
    sawarns *w = ud;
    w->n++;
    w->line = line;
    snprintf(w->last, sizeof w->last, "%s", msg);
}

/* CA n of the xgft fixture (capture.sh): node GUID 0x2c90000000050 + 0x10 n; ibsim gives its
 * port GUID + 1. */
static nf_node xgft_ca(const nf_fabric *f, unsigned n) {
    nf_node c = nf_fabric_find_guid(f, 0x2c90000000050ull + 16u * n);
    assert_true(c != NF_NONE && c >= f->n_switches);
    return c;
}

/* The groups capture.sh joined, read from OpenSM's SA dump by hand: 0xc001 CAs 0 1 11 13 23
 * (23 send-only: scope_state 0x04), 0xc002 CA 17, 0xc003 CAs 0 1 9 (9 a non-member), 0xc004 CAs
 * 10 and 12-20; IPoIB's 0xc000 has no member and is left out. saquery -m (taken earlier, 3
 * records): 0xc001 CAs 0 and 13, 0xc002 CA 17. */
static void test_sa_fixtures(void **state) {
    (void)state;
    nf_fabric *f = NULL;
    nf_diag d = {0};
    assert_int_equal(nf_io_load(REAL "xgft.ibnet", NF_FMT_AUTO, NULL, &f, &d), 0);
    nf_groups *g = NULL;
    uint16_t *ml = NULL;
    sawarns w = {0};
    assert_int_equal(
        nf_groups_load_sa(f, REAL "xgft-minhop.opensm-sa.dump", sa_warn, &w, &g, &ml, &d), 0);
    assert_int_equal(w.n, 0);
    assert_int_equal(g->n, 4);
    for (unsigned i = 0; i < 4; i++)
        assert_int_equal(ml[i], 0xC001 + i);
    check_groups(f, g);
    MEMBERS(g, 0, xgft_ca(f, 0), xgft_ca(f, 1), xgft_ca(f, 11), xgft_ca(f, 13), xgft_ca(f, 23));
    MEMBERS(g, 1, xgft_ca(f, 17));
    MEMBERS(g, 2, xgft_ca(f, 0), xgft_ca(f, 1), xgft_ca(f, 9));
    MEMBERS(g, 3, xgft_ca(f, 10), xgft_ca(f, 12), xgft_ca(f, 13), xgft_ca(f, 14), xgft_ca(f, 15),
            xgft_ca(f, 16), xgft_ca(f, 17), xgft_ca(f, 18), xgft_ca(f, 19), xgft_ca(f, 20));
    nf_groups_free(g);
    nf_free(ml);
    assert_int_equal(nf_groups_load_sa(f, REAL "xgft.saquery-m", sa_warn, &w, &g, &ml, &d), 0);
    assert_int_equal(g->n, 2);
    assert_int_equal(ml[0], 0xC001);
    assert_int_equal(ml[1], 0xC002);
    MEMBERS(g, 0, xgft_ca(f, 0), xgft_ca(f, 13));
    MEMBERS(g, 1, xgft_ca(f, 17));
    nf_groups_free(g);
    nf_free(ml);
    /* as a --groups pattern, the same groups */
    g = build(f, "sa:" REAL "xgft.saquery-m", 1, NF_MAP_AWARE, 0);
    assert_int_equal(g->n, 2);
    MEMBERS(g, 0, xgft_ca(f, 0), xgft_ca(f, 13));
    nf_groups_free(g);
    nf_fabric_free(f);
}

static int sa_parse(const nf_fabric *f, const char *text, sawarns *w, nf_diag *d, uint32_t *n) {
    nf_groups *g = NULL;
    uint16_t *ml = NULL;
    int rc = nf_groups_parse_sa(f, text, strlen(text), "t.sa", sa_warn, w, &g, &ml, d);
    if (n) *n = g ? g->n : 0;
    nf_groups_free(g);
    nf_free(ml);
    return rc;
}

#define REC(mlid, gid)                                                                             \
    "MCMemberRecord member dump:\n\t\tMGID....................ff12:601b:ffff::1\n"                 \
    "\t\tMlid...................." mlid "\n\t\tPortGid................." gid "\n"                  \
    "\t\tScopeState..............0x1\n"

static void test_sa_errors(void **state) {
    (void)state;
    nf_fabric *f = NULL;
    nf_diag d = {0};
    assert_int_equal(nf_io_load(REAL "xgft.ibnet", NF_FMT_AUTO, NULL, &f, &d), 0);
    sawarns w = {0};
    uint32_t n;
    /* the fabric's own port GUID (...50) and ibsim's (...51) are the same CA; ::1 is no port */
    assert_int_equal(sa_parse(f,
                              REC("0xC001", "fe80::2:c900:0:50") REC("0xC001", "fe80::2:c900:0:51")
                                  REC("0xC001", "fe80::1"),
                              &w, &d, &n),
                     0);
    assert_int_equal(n, 1);
    assert_int_equal(w.n, 1);
    assert_int_equal(w.line, 14);
    assert_non_null(strstr(w.last, "1 members"));
    /* saquery without the SM key: members hidden */
    assert_int_equal(
        sa_parse(f, REC("0xC001", "fe80::2:c900:0:51") REC("0xC002", "::"), &w, &d, NULL),
        NF_EPARSE);
    assert_int_equal(d.line, 9);
    assert_non_null(strstr(d.msg, "--smkey 1"));
    assert_int_equal(sa_parse(f, REC("0xBFFF", "fe80::2:c900:0:51"), &w, &d, NULL), NF_EPARSE);
    assert_non_null(strstr(d.msg, "multicast range"));
    assert_int_equal(sa_parse(f, REC("0xC001", "fe80::2:c900:0:51:1:2:3"), &w, &d, NULL),
                     NF_EPARSE);
    assert_int_equal(d.line, 4);
    assert_int_equal(sa_parse(f, "hello\n", &w, &d, NULL), NF_EPARSE);
    assert_int_equal(
        sa_parse(f, "mcm_port: port_gid=0xfe80000000000000:0x0002c90000000051\n", &w, &d, NULL),
        NF_EPARSE);
    assert_non_null(strstr(d.msg, "before any MC Group"));
    assert_int_equal(sa_parse(f,
                              "MC Group 0xc005 : mgid=0xff12601bffff0000:0x0000000000000001\n"
                              "mcm_port: port_gid=0xfe80000000000000:0x0002c90000000zz1\n",
                              &w, &d, NULL),
                     NF_EPARSE);
    assert_int_equal(d.line, 2);
    w = (sawarns){0};
    assert_int_equal(sa_parse(f, REC("0xC001", "fe80::7"), &w, &d, NULL), NF_EINVAL);
    assert_int_equal(w.n, 0);
    assert_non_null(strstr(d.msg, "no group has a member"));
    nf_fabric_free(f);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_grid2d_aware),
        cmocka_unit_test(test_grid3d),
        cmocka_unit_test(test_grid3d_dragonfly),
        cmocka_unit_test(test_random_mapping),
        cmocka_unit_test(test_random_groups),
        cmocka_unit_test(test_hier),
        cmocka_unit_test(test_file),
        cmocka_unit_test(test_file_errors),
        cmocka_unit_test(test_errors),
        cmocka_unit_test(test_skipped_endpoints),
        cmocka_unit_test(test_alloc_failures),
        cmocka_unit_test(test_rng_known),
        cmocka_unit_test(test_rng_below),
        cmocka_unit_test(test_rng_shuffle),
        cmocka_unit_test(test_sa_fixtures),
        cmocka_unit_test(test_sa_errors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
