/* SPDX-License-Identifier: MIT */
/* Installed multicast forwarding tables (mft.h) against what the real tools wrote (dump_fts -M,
 * ibroute -M and OpenSM's opensm.mcfdbs of one run on the xgft fabric, tests/data/real), masks
 * counted by hand from the files, the views checked equal, OpenSM's file written again byte for
 * byte, bad tables refused with their line, and the analysis on trees built by hand. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "real.h"

#include "testutil.h"

#include "netfab/io.h"
#include "netfab/mft.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static nf_mft *must_load(const nf_fabric *f, const char *path, warns *w) {
    nf_mft *t = NULL;
    nf_diag d = {0};
    if (nf_mft_load(f, path, on_warn, w, &t, &d))
        fail_msg("%s: %s:%d: %s", path, d.file, d.line, d.msg);
    return t;
}

static nf_node by_guid(const nf_fabric *f, uint64_t guid) {
    nf_node s = nf_fabric_find_guid(f, guid);
    assert_true(s < f->n_switches);
    return s;
}

/* The ports of (s, mlid) as a bit list "2,12,13". */
static void ports_of(const nf_mft *t, nf_node s, uint16_t mlid, char *buf, size_t cap) {
    size_t n = 0;
    buf[0] = '\0';
    for (unsigned p = 0; p < 256; p++)
        if (nf_mft_get(t, s, mlid, p)) n += (size_t)snprintf(buf + n, cap - n, n ? ",%u" : "%u", p);
}

static void expect_ports(const nf_mft *t, nf_node s, uint16_t mlid, const char *want) {
    char got[512];
    ports_of(t, s, mlid, got, sizeof got);
    if (strcmp(got, want))
        fail_msg("MLID 0x%04X switch %u: ports '%s', want '%s'", mlid, s, got, want);
}

/* Counted by eye from xgft-minhop.dump_fts-M (an 'x' under a port's units digit; the tens line
 * above): 'xgft L1 1' (GUID ...20) has 0xc001 on ports 2, 12, 13 and 0xc004 on 1-9 and 13; 'xgft
 * L2 0' (...30) 0xc001 and 0xc004 on 1 and 2; 'xgft L2 1' (...40) nothing; 'xgft L1 0' (...10)
 * 0xc001 on 1, 2, 12, 13, 0xc003 on 1, 2, 10, 0xc004 on 11 and 13. */
static void check_xgft_tables(const nf_fabric *f, const nf_mft *t) {
    nf_node l10 = by_guid(f, 0x2c90000000010), l11 = by_guid(f, 0x2c90000000020),
            l20 = by_guid(f, 0x2c90000000030), l21 = by_guid(f, 0x2c90000000040);
    expect_ports(t, l11, 0xC001, "2,12,13");
    expect_ports(t, l11, 0xC004, "1,2,3,4,5,6,7,8,9,13");
    expect_ports(t, l11, 0xC003, "");
    expect_ports(t, l20, 0xC001, "1,2");
    expect_ports(t, l20, 0xC004, "1,2");
    expect_ports(t, l10, 0xC001, "1,2,12,13");
    expect_ports(t, l10, 0xC003, "1,2,10");
    expect_ports(t, l10, 0xC004, "11,13");
    for (unsigned m = 0xC000; m < 0xC010; m++)
        expect_ports(t, l21, (uint16_t)m, "");
    uint16_t *ml;
    size_t n;
    assert_int_equal(nf_mft_mlids(t, &ml, &n), 0);
    assert_int_equal(n, 3);
    assert_int_equal(ml[0], 0xC001);
    assert_int_equal(ml[1], 0xC003);
    assert_int_equal(ml[2], 0xC004);
    nf_free(ml);
}

static void test_read_fixtures_by_hand(void **state) {
    (void)state;
    nf_fabric *f = xgft();
    warns w = {0};
    nf_mft *d = must_load(f, REAL "xgft-minhop.dump_fts-M", &w);
    nf_mft *o = must_load(f, REAL "xgft-minhop.opensm.mcfdbs", &w);
    assert_int_equal(w.n, 0);
    check_xgft_tables(f, d);
    check_xgft_tables(f, o);
    nf_diag dg = {0};
    assert_true(nf_mft_equal(d, o, &dg));
    /* ibroute -M of one switch: that switch's block of dump_fts -M, nothing else */
    nf_mft *one = must_load(f, REAL "xgft-minhop.ibroute-M-lid1", &w);
    nf_node l10 = by_guid(f, 0x2c90000000010);
    expect_ports(one, l10, 0xC001, "1,2,12,13");
    expect_ports(one, l10, 0xC003, "1,2,10");
    expect_ports(one, l10, 0xC004, "11,13");
    assert_false(nf_mft_equal(one, d, &dg));
    assert_non_null(strstr(dg.msg, "MLID 0xC001 on switch xgft L1 1"));
    assert_non_null(strstr(dg.msg, "port 2 only in the second"));
    /* take one port out: no longer equal, and the difference is named */
    assert_int_equal(nf_mft_set(o, by_guid(f, 0x2c90000000030), 0xC004, 2, false), 0);
    assert_false(nf_mft_equal(d, o, &dg));
    assert_non_null(strstr(dg.msg, "MLID 0xC004 on switch xgft L2 0"));
    nf_mft_free(one);
    nf_mft_free(d);
    nf_mft_free(o);
    nf_fabric_free(f);
}

static char *slurp(const char *path, size_t *len) {
    FILE *in = fopen(path, "rb");
    assert_non_null(in);
    static char buf[65536];
    *len = fread(buf, 1, sizeof buf, in);
    fclose(in);
    return buf;
}

/* Read from dump_fts -M and written in OpenSM's layout: OpenSM's own file, byte for byte; read
 * back: the same tables. */
static void test_write_is_opensm(void **state) {
    (void)state;
    nf_fabric *f = xgft();
    warns w = {0};
    nf_mft *t = must_load(f, REAL "xgft-minhop.dump_fts-M", &w);
    char *buf = NULL;
    size_t len = 0;
    FILE *o = open_memstream(&buf, &len);
    assert_int_equal(nf_mft_write(t, o), 0);
    fclose(o);
    size_t rlen;
    const char *ref = slurp(REAL "xgft-minhop.opensm.mcfdbs", &rlen);
    assert_int_equal(len, rlen);
    assert_memory_equal(buf, ref, rlen);
    nf_mft *back = NULL;
    nf_diag d = {0};
    assert_int_equal(nf_mft_parse(f, buf, len, "mem", on_warn, &w, &back, &d), 0);
    assert_true(nf_mft_equal(t, back, &d));
    free(buf);
    nf_mft_free(back);
    nf_mft_free(t);
    nf_fabric_free(f);
}

static int parse(const nf_fabric *f, const char *text, warns *w, nf_diag *d) {
    nf_mft *t = NULL;
    int rc = nf_mft_parse(f, text, strlen(text), "bad.mft", on_warn, w, &t, d);
    nf_mft_free(t);
    return rc;
}

#define DHDR                                                                                       \
    "Multicast mlids [0xc000-0xc3ff] of switch Lid 1 guid 0x0002c90000000010 (xgft L1 0):\n"       \
    "            0                   1         \n"                                                 \
    "     Ports: 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 \n"                                                 \
    " MLid\n"
#define SHDR                                                                                       \
    "Multicast mlids [0xc000-0xc3ff] of switch Lid 3 guid 0x0002c90000000030 (xgft L2 0):\n"       \
    "     Ports: 0 1 2 \n"                                                                         \
    " MLid\n"
#define OHDR "\nSwitch 0x0002c90000000010\nLID    : Out Port(s)\n"

static void test_bad_tables(void **state) {
    (void)state;
    nf_fabric *f = xgft();
    warns w = {0};
    nf_diag d = {0};
    /* the column: an 'x' one column right of port 1's digit */
    assert_int_equal(parse(f, DHDR "0xc001        x x  \n0xc002         x\n", &w, &d), NF_EPARSE);
    assert_int_equal(d.line, 6);
    assert_non_null(strstr(d.msg, "column 16"));
    assert_int_equal(parse(f, DHDR "0xc001        x y\n", &w, &d), NF_EPARSE);
    assert_int_equal(d.line, 5);
    /* an 'x' past the last port of the header ('xgft L2 0' has ports 0-2) */
    assert_int_equal(parse(f, DHDR SHDR "0xc001              x\n", &w, &d), NF_EPARSE);
    assert_int_equal(d.line, 8);
    /* unknown GUID, in both layouts */
    assert_int_equal(parse(f,
                           "Multicast mlids [0xc000-0xc3ff] of switch Lid 1 guid "
                           "0x0002c900000000ff (x):\n",
                           &w, &d),
                     NF_EPARSE);
    assert_int_equal(d.line, 1);
    assert_non_null(strstr(d.msg, "no switch of the fabric"));
    assert_int_equal(parse(f, OHDR "0xC001 : 0x001 \n\nSwitch 0x0002c90000000051\n", &w, &d),
                     NF_EPARSE);
    assert_int_equal(d.line, 6);
    assert_non_null(strstr(d.msg, "0x0002c90000000051 is no switch"));
    /* a port beyond the radix (15 on a 14-port switch) */
    assert_int_equal(parse(f, OHDR "0xC001 : 0x001  0x00F \n", &w, &d), NF_EPARSE);
    assert_int_equal(d.line, 4);
    assert_non_null(strstr(d.msg, "port 15 of switch xgft L1 0, which has 14 ports"));
    /* the MLID range */
    assert_int_equal(parse(f, OHDR "0xBFFF : 0x001 \n", &w, &d), NF_EPARSE);
    assert_int_equal(d.line, 4);
    assert_non_null(strstr(d.msg, "outside the multicast range"));
    assert_int_equal(parse(f, DHDR "0xffff    x\n", &w, &d), NF_EPARSE);
    assert_int_equal(d.line, 5);
    /* lines of no layout, of the other layout, before a switch, twice the same switch */
    assert_int_equal(parse(f, "hello\n", &w, &d), NF_EPARSE);
    assert_int_equal(d.line, 1);
    assert_int_equal(parse(f, OHDR "0xC001 : 0x001 \n" DHDR, &w, &d), NF_EPARSE);
    assert_int_equal(d.line, 5);
    assert_int_equal(parse(f, OHDR "0xC001 :\n", &w, &d), NF_EPARSE);
    assert_int_equal(parse(f, OHDR "0xC001 : 0x01g\n", &w, &d), NF_EPARSE);
    assert_int_equal(parse(f, OHDR OHDR, &w, &d), NF_EPARSE);
    assert_int_equal(d.line, 5);
    assert_non_null(strstr(d.msg, "twice"));
    assert_int_equal(parse(f,
                           "Multicast mlids [0xc000-0xc3ff] of switch Lid 1 guid "
                           "0x0002c90000000010 (xgft L1 0):\n0xc001   x\n",
                           &w, &d),
                     NF_EPARSE);
    assert_non_null(strstr(d.msg, "before the \"Ports:\" header"));
    assert_int_equal(parse(f, DHDR "0xc001        x\n3 valid mlids dumped \n", &w, &d), NF_OK);
    nf_mft *z = NULL;
    assert_int_equal(nf_mft_load(f, "/dev/zero", on_warn, &w, &z, &d), NF_EPARSE);
    assert_null(z);
    assert_int_equal(nf_mft_load(f, "/nonexistent/t.mft", on_warn, &w, &z, &d), NF_EIO);
    assert_int_equal(w.n, 0);
    nf_fabric_free(f);
}

/* A triangle of switches s0 (GUID 0x10), s1 (0x20), s2 (0x30): s0:1-s1:1, s1:2-s2:1, s2:2-s0:2;
 * CA k on port 3 of sk; s0's port 4 has no cable. */
static nf_fabric *triangle(void) {
    nf_builder *b = nf_builder_new(6, 6);
    nf_node s[3], c[3];
    for (int i = 0; i < 3; i++) {
        nf_node_attr a = {.guid = 0x10u * (unsigned)(i + 1)};
        assert_int_equal(nf_builder_add_node(b, NF_NODE_SWITCH, i == 0 ? 4 : 3, &a, &s[i]), 0);
    }
    for (int i = 0; i < 3; i++) {
        nf_node_attr a = {.guid = 0x100u * (unsigned)(i + 1)};
        assert_int_equal(nf_builder_add_node(b, NF_NODE_CA, 1, &a, &c[i]), 0);
        nf_link_attr h = {.cls = NF_LINK_HOST};
        assert_int_equal(nf_builder_connect(b, s[i], 3, c[i], 1, &h), 0);
    }
    nf_link_attr l = {.cls = NF_LINK_LOCAL};
    assert_int_equal(nf_builder_connect(b, s[0], 1, s[1], 1, &l), 0);
    assert_int_equal(nf_builder_connect(b, s[1], 2, s[2], 1, &l), 0);
    assert_int_equal(nf_builder_connect(b, s[2], 2, s[0], 2, &l), 0);
    nf_fabric *f = NULL;
    assert_int_equal(nf_builder_freeze(b, true, &f), 0);
    nf_builder_free(b);
    return f;
}

static void set_ports(nf_mft *t, nf_node s, uint16_t mlid, const char *ports) {
    for (const char *p = ports; *p; p++)
        if (*p >= '0' && *p <= '9')
            assert_int_equal(nf_mft_set(t, s, mlid, (unsigned)(*p - '0'), true), 0);
}

static nf_link link_between(const nf_fabric *f, nf_node a, unsigned pa) {
    return f->port_link[nf_port_index(f, a, pa)];
}

/* Faults, each in a tree of its own: a loop (every triangle link), two members with nothing
 * between them (unreached), a port with no cable, a link one end lists. */
static void test_analyze_faults(void **state) {
    (void)state;
    nf_fabric *f = triangle();
    nf_node s0 = nf_fabric_find_guid(f, 0x10), s1 = nf_fabric_find_guid(f, 0x20),
            s2 = nf_fabric_find_guid(f, 0x30);
    nf_mft *t = nf_mft_new(f);
    set_ports(t, s0, 0xC001, "123");
    set_ports(t, s1, 0xC001, "123");
    set_ports(t, s2, 0xC001, "123");
    set_ports(t, s0, 0xC002, "3");
    set_ports(t, s2, 0xC002, "3");
    set_ports(t, s0, 0xC003, "34");
    set_ports(t, s0, 0xC004, "13");
    set_ports(t, s1, 0xC004, "3");
    set_ports(t, s1, 0xC005, "3"); /* a clean one: one switch, one member */
    nf_mft_report *r = NULL;
    assert_int_equal(nf_mft_analyze(t, &r), 0);
    assert_int_equal(r->n_groups, 5);
    const nf_mft_group *g = r->group;
    assert_int_equal(g[0].mlid, 0xC001);
    assert_int_equal(g[0].problems, NF_MFT_LOOP);
    assert_int_equal(g[0].links, 3);
    assert_int_equal(g[0].members, 3);
    assert_int_equal(g[0].reached, 3);
    assert_int_equal(g[0].height, 2);
    assert_int_equal(g[0].n_roots, 3);
    assert_int_equal(g[1].problems, NF_MFT_UNREACHED);
    assert_int_equal(g[1].members, 2);
    assert_int_equal(g[1].reached, 1);
    assert_int_equal(g[1].n_roots, 2); /* both halves reach one member */
    assert_int_equal(r->roots[g[1].root_off], s0);
    assert_int_equal(r->roots[g[1].root_off + 1], s2);
    assert_int_equal(g[2].problems, NF_MFT_NO_LINK);
    assert_int_equal(g[2].members, 1);
    assert_int_equal(g[3].problems, NF_MFT_ASYMMETRIC);
    assert_int_equal(g[3].links, 1);
    assert_int_equal(g[3].reached, 2); /* from s0, the first root: s1 still forwards to its CA */
    assert_int_equal(g[4].problems, 0);
    assert_int_equal(g[4].height, 1);
    assert_int_equal(g[4].n_roots, 1);
    assert_int_equal(r->roots[g[4].root_off], s1);
    assert_int_equal(r->bad_groups, 4);
    nf_mft_report_free(r);
    nf_mft_free(t);
    nf_fabric_free(f);
}

/* Loads and heights worked by hand: 0xC005 and 0xC007 take s0-s1-s2 (members on s0 and s2; root
 * s1, the middle, height 1 + 1 = 2), 0xC006 the direct link s0-s2 (roots s0 and s2, height 2).
 * EFI: s0-s1 2, s1-s2 2, s2-s0 1: max 2, mean 5/3, histogram {0: 0, 1: 1, 2: 2}. */
static void test_analyze_loads(void **state) {
    (void)state;
    nf_fabric *f = triangle();
    nf_node s0 = nf_fabric_find_guid(f, 0x10), s1 = nf_fabric_find_guid(f, 0x20),
            s2 = nf_fabric_find_guid(f, 0x30);
    nf_mft *t = nf_mft_new(f);
    for (uint16_t m = 0xC005; m <= 0xC007; m += 2) {
        set_ports(t, s0, m, "13");
        set_ports(t, s1, m, "12");
        set_ports(t, s2, m, "13");
    }
    set_ports(t, s0, 0xC006, "23");
    set_ports(t, s2, 0xC006, "23");
    nf_mft_report *r = NULL;
    assert_int_equal(nf_mft_analyze(t, &r), 0);
    assert_int_equal(r->n_groups, 3);
    assert_int_equal(r->bad_groups, 0);
    const nf_mft_group *g = r->group;
    assert_int_equal(g[0].n_roots, 1);
    assert_int_equal(r->roots[g[0].root_off], s1);
    assert_int_equal(g[0].height, 2);
    assert_int_equal(g[0].switches, 3);
    assert_int_equal(g[0].links, 2);
    assert_int_equal(g[0].members, 2);
    assert_int_equal(g[0].reached, 2);
    assert_int_equal(g[1].n_roots, 2);
    assert_int_equal(g[1].height, 2);
    assert_int_equal(r->efi[link_between(f, s0, 1)], 2);
    assert_int_equal(r->efi[link_between(f, s1, 2)], 2);
    assert_int_equal(r->efi[link_between(f, s0, 2)], 1);
    assert_int_equal(r->efi[link_between(f, s0, 3)], 0); /* host links are not counted */
    assert_int_equal(r->max_efi, 2);
    assert_int_equal(r->links_used, 3);
    assert_float_equal(r->mean_efi, 5.0 / 3.0, 1e-12);
    assert_int_equal(r->hist[0], 0);
    assert_int_equal(r->hist[1], 1);
    assert_int_equal(r->hist[2], 2);
    assert_int_equal(r->max_height, 2);
    /* the groups the tables imply: the CAs of s0 and s2 in each */
    nf_groups *gr = NULL;
    uint16_t *ml = NULL;
    nf_diag d = {0};
    assert_int_equal(nf_mft_groups(t, &gr, &ml, &d), 0);
    assert_int_equal(gr->n, 3);
    assert_int_equal(ml[1], 0xC006);
    assert_int_equal(gr->off[1] - gr->off[0], 2);
    assert_int_equal(gr->member[0], f->peer[nf_port_index(f, s0, 3)]);
    assert_int_equal(gr->member[1], f->peer[nf_port_index(f, s2, 3)]);
    nf_free(ml);
    nf_groups_free(gr);
    nf_mft_report_free(r);
    nf_mft_free(t);
    nf_fabric_free(f);
}

/* The fixture's trees by hand: 0xc001 (CAs 0, 1, 11 on 'xgft L1 0', 13 and 23 on 'xgft L1 1')
 * and 0xc004 (CA 10; CAs 12-20) go over 'xgft L2 0', the root (1 hop to each leaf, + 1 for the
 * CA: height 2); 0xc003 stays on 'xgft L1 0' (height 1). Both leaf-to-'xgft L2 0' links carry
 * two groups, the links to 'xgft L2 1' none. */
static void test_analyze_fixture(void **state) {
    (void)state;
    nf_fabric *f = xgft();
    warns w = {0};
    nf_mft *t = must_load(f, REAL "xgft-minhop.opensm.mcfdbs", &w);
    nf_mft_report *r = NULL;
    assert_int_equal(nf_mft_analyze(t, &r), 0);
    assert_int_equal(r->n_groups, 3);
    assert_int_equal(r->bad_groups, 0);
    nf_node l10 = by_guid(f, 0x2c90000000010), l20 = by_guid(f, 0x2c90000000030);
    const nf_mft_group *g = r->group;
    uint32_t members[] = {5, 3, 10}, switches[] = {3, 1, 3}, links[] = {2, 0, 2},
             height[] = {2, 1, 2};
    nf_node root[] = {l20, l10, l20};
    for (int i = 0; i < 3; i++) {
        assert_int_equal(g[i].members, members[i]);
        assert_int_equal(g[i].reached, members[i]);
        assert_int_equal(g[i].switches, switches[i]);
        assert_int_equal(g[i].links, links[i]);
        assert_int_equal(g[i].height, height[i]);
        assert_int_equal(g[i].n_roots, 1);
        assert_int_equal(r->roots[g[i].root_off], root[i]);
    }
    assert_int_equal(r->max_efi, 2);
    assert_int_equal(r->links_used, 2);
    assert_int_equal(r->hist[0], 2);
    assert_int_equal(r->hist[2], 2);
    assert_int_equal(r->max_height, 2);
    assert_float_equal(r->mean_height, 5.0 / 3.0, 1e-12);
    nf_mft_report_free(r);
    nf_mft_free(t);
    nf_fabric_free(f);
}

/* ---- allocation failures ----------------------------------------------------------------------
 */

typedef struct sweep_ctx {
    nf_fabric *f;
    const char *text;
    size_t len;
    bool sa;
    uint32_t groups; /* what the successful run found */
} sweep_ctx;

/* Parse, analyse and take the groups of the tables (or parse the SA's groups) with the k-th
 * allocation failing: NF_ENOMEM and nothing left behind, or all of it. alloc_sweep speaks of
 * fabrics: it gets the borrowed fabric on success. */
static int sweep_mft(void *ctx, nf_fabric **out, nf_diag *d) {
    sweep_ctx *c = ctx;
    *out = NULL;
    nf_groups *g = NULL;
    uint16_t *ml = NULL;
    int rc;
    if (c->sa) {
        rc = nf_groups_parse_sa(c->f, c->text, c->len, "s", NULL, NULL, &g, &ml, d);
        if (rc) {
            assert_null(g);
            assert_null(ml);
            return rc;
        }
        c->groups = g->n;
    } else {
        nf_mft *t = NULL;
        nf_mft_report *r = NULL;
        rc = nf_mft_parse(c->f, c->text, c->len, "t", NULL, NULL, &t, d);
        if (rc) {
            assert_null(t);
            return rc;
        }
        if (!(rc = nf_mft_analyze(t, &r))) {
            c->groups = r->n_groups;
            rc = nf_mft_groups(t, &g, &ml, d);
        }
        nf_mft_report_free(r);
        nf_mft_free(t);
        if (rc) return rc;
    }
    nf_groups_free(g);
    nf_free(ml);
    *out = c->f;
    return NF_OK;
}

static void test_alloc_failures(void **state) {
    (void)state;
    const char *files[] = {"xgft-minhop.dump_fts-M", "xgft-minhop.opensm.mcfdbs",
                           "xgft-minhop.opensm-sa.dump", "xgft.saquery-m"};
    uint32_t want[] = {3, 3, 4, 2};
    nf_fabric *f = xgft();
    for (int i = 0; i < 4; i++) {
        char path[256];
        snprintf(path, sizeof path, REAL "%s", files[i]);
        sweep_ctx c = {.f = f, .sa = i >= 2};
        c.text = slurp(path, &c.len);
        long failures = 0;
        assert_ptr_equal(alloc_sweep(sweep_mft, &c, NULL, &failures), f);
        assert_true(failures >= 3);
        assert_int_equal(c.groups, want[i]);
    }
    nf_fabric_free(f);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_read_fixtures_by_hand),
        cmocka_unit_test(test_write_is_opensm),
        cmocka_unit_test(test_bad_tables),
        cmocka_unit_test(test_analyze_faults),
        cmocka_unit_test(test_analyze_loads),
        cmocka_unit_test(test_analyze_fixture),
        cmocka_unit_test(test_alloc_failures),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
