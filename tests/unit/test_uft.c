/* SPDX-License-Identifier: MIT */
/* Installed unicast forwarding tables (uft.h) against what the real tools wrote: OpenSM's
 * opensm-lfts.dump and the switches' tables read back by dump_fts and ibroute (captured in
 * tests/data/real by capture.sh, on the xgft fabric netfab wrote), entries checked by hand, the
 * two views of the same tables checked equal, and bad tables refused with their line. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "netfab/io.h"
#include "netfab/uft.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define REAL NF_TEST_DATA "/real/"

typedef struct warns {
    int n, line;
    char last[256];
} warns;

static void on_warn(void *ud, const char *file, int line, const char *msg) {
    (void)file;
    warns *w = ud;
    w->n++;
    w->line = line;
    snprintf(w->last, sizeof w->last, "%s", msg);
}

static nf_fabric *xgft(void) {
    nf_fabric *f = NULL;
    nf_diag d = {0};
    if (nf_io_load(REAL "xgft.ibnet", NF_FMT_AUTO, NULL, &f, &d))
        fail_msg("xgft.ibnet: %s:%d: %s", d.file, d.line, d.msg);
    return f;
}

static nf_uft *must_load(const nf_fabric *f, const char *path, warns *w) {
    nf_uft *t = NULL;
    nf_diag d = {0};
    if (nf_uft_load(f, path, on_warn, w, &t, &d))
        fail_msg("%s: %s:%d: %s", path, d.file, d.line, d.msg);
    return t;
}

static nf_node switch_named(const nf_fabric *f, const char *name) {
    for (nf_node s = 0; s < f->n_switches; s++)
        if (strcmp(nf_node_name(f, s), name) == 0) return s;
    fail_msg("no switch '%s'", name);
    return NF_NONE;
}

/* Every entry of every switch; the number of differences. */
static unsigned differences(const nf_fabric *f, const nf_uft *a, const nf_uft *b) {
    unsigned n = 0;
    for (nf_node s = 0; s < f->n_switches; s++)
        for (unsigned l = 0; l <= nf_uft_top_lid(a); l++)
            n += nf_uft_get(a, s, (uint16_t)l) != nf_uft_get(b, s, (uint16_t)l);
    return n;
}

static unsigned entries(const nf_fabric *f, const nf_uft *t) {
    unsigned n = 0;
    for (nf_node s = 0; s < f->n_switches; s++)
        for (unsigned l = 0; l <= nf_uft_top_lid(t); l++)
            n += nf_uft_get(t, s, (uint16_t)l) != NF_UFT_NONE;
    return n;
}

/* Lines of the fixtures, read by eye: 'xgft L1 0' (LID 1) sends LID 1 to itself, LID 2 out of
 * port 13, LID 4 out of 14, LID 5 (node 0's port) out of 1; 'xgft L1 1' sends LID 1 out of 13. */
static void test_read_opensm_by_hand(void **state) {
    (void)state;
    nf_fabric *f = xgft();
    warns w = {0};
    nf_uft *t = must_load(f, REAL "xgft-minhop.opensm-lfts.dump", &w);
    assert_int_equal(w.n, 0);
    assert_int_equal(nf_uft_top_lid(t), 28);
    nf_node l10 = switch_named(f, "xgft L1 0"), l11 = switch_named(f, "xgft L1 1");
    assert_int_equal(nf_uft_get(t, l10, 1), 0);
    assert_int_equal(nf_uft_get(t, l10, 2), 13);
    assert_int_equal(nf_uft_get(t, l10, 4), 14);
    assert_int_equal(nf_uft_get(t, l10, 5), 1);
    assert_int_equal(nf_uft_get(t, l11, 1), 13);
    unsigned port;
    assert_int_equal(nf_uft_lid_owner(t, 1, &port), l10);
    assert_int_equal(port, 0);
    assert_true(nf_uft_lid_owner(t, 5, &port) >= f->n_switches);
    assert_int_equal(port, 1);
    assert_int_equal(nf_uft_lid_owner(t, 29, NULL), NF_NONE);
    nf_uft_free(t);
    nf_fabric_free(f);
}

/* What OpenSM says it set (opensm-lfts.dump) and what the switches hold (dump_fts over SMPs)
 * are the same tables; ibroute of one switch agrees with dump_fts's block for it. */
static void test_two_views_agree(void **state) {
    (void)state;
    nf_fabric *f = xgft();
    const char *eng[] = {"minhop", "updn"};
    for (int i = 0; i < 2; i++) {
        char a[256], b[256];
        snprintf(a, sizeof a, REAL "xgft-%s.opensm-lfts.dump", eng[i]);
        snprintf(b, sizeof b, REAL "xgft-%s.dump_fts", eng[i]);
        warns w = {0};
        nf_uft *ta = must_load(f, a, &w), *tb = must_load(f, b, &w);
        assert_int_equal(w.n, 0);
        assert_true(entries(f, ta) > 20 * f->n_switches);
        assert_int_equal(differences(f, ta, tb), 0);
        nf_uft_free(ta);
        nf_uft_free(tb);
    }
    warns w = {0};
    nf_uft *one = must_load(f, REAL "xgft-updn.ibroute-lid1", &w);
    nf_uft *all = must_load(f, REAL "xgft-updn.dump_fts", &w);
    nf_node s = switch_named(f, "xgft L1 0");
    unsigned same = 0;
    for (unsigned l = 0; l <= nf_uft_top_lid(all); l++)
        same += nf_uft_get(one, s, (uint16_t)l) == nf_uft_get(all, s, (uint16_t)l);
    assert_int_equal(same, nf_uft_top_lid(all) + 1);
    nf_uft_free(one);
    nf_uft_free(all);
    /* the minhop and updn tables differ somewhere (else the comparisons above prove little) */
    nf_uft *m = must_load(f, REAL "xgft-minhop.dump_fts", &w),
           *u = must_load(f, REAL "xgft-updn.dump_fts", &w);
    assert_true(differences(f, m, u) > 0);
    nf_uft_free(m);
    nf_uft_free(u);
    nf_fabric_free(f);
}

/* Written in OpenSM's layout and read back: the same tables; and every entry line of OpenSM's
 * own file appears, up to its comment, in ours. */
static void test_write_round_trip(void **state) {
    (void)state;
    nf_fabric *f = xgft();
    warns w = {0};
    nf_uft *t = must_load(f, REAL "xgft-updn.opensm-lfts.dump", &w);
    char *buf = NULL;
    size_t len = 0;
    FILE *o = open_memstream(&buf, &len);
    assert_int_equal(nf_uft_write(t, o), 0);
    fclose(o);
    nf_uft *back = NULL;
    nf_diag d = {0};
    assert_int_equal(nf_uft_parse(f, buf, len, "mem", on_warn, &w, &back, &d), 0);
    assert_int_equal(differences(f, t, back), 0);
    FILE *in = fopen(REAL "xgft-updn.opensm-lfts.dump", "r");
    assert_non_null(in);
    char line[512];
    unsigned checked = 0;
    while (fgets(line, sizeof line, in)) {
        if (strncmp(line, "0x", 2) != 0 && strncmp(line, "Unicast", 7) != 0) continue;
        char *cut = strstr(line, " #");
        if (!cut) cut = strchr(line, '\n');
        *cut = '\0';
        if (!strstr(buf, line)) fail_msg("'%s' is not in what netfab wrote", line);
        checked++;
    }
    fclose(in);
    assert_int_equal(checked, entries(f, t) + f->n_switches);
    free(buf);
    nf_uft_free(back);
    nf_uft_free(t);
    nf_fabric_free(f);
}

static int parse(const nf_fabric *f, const char *text, warns *w, nf_diag *d) {
    nf_uft *t = NULL;
    int rc = nf_uft_parse(f, text, strlen(text), "bad.dump", on_warn, w, &t, d);
    nf_uft_free(t);
    return rc;
}

#define HDR "Unicast lids [0-28] of switch Lid 1 guid 0x0002c90000000010 ('xgft L1 0'):\n"

/* Bad tables: fatal ones with their line, the rest counted. */
static void test_bad_tables(void **state) {
    (void)state;
    nf_fabric *f = xgft();
    warns w = {0};
    nf_diag d = {0};
    assert_int_equal(parse(f, HDR "0x0002 013\nhello\n", &w, &d), NF_EPARSE);
    assert_int_equal(d.line, 3);
    assert_int_equal(parse(f, "0x0002 013\n", &w, &d), NF_EPARSE);
    assert_int_equal(d.line, 1);
    assert_non_null(strstr(d.msg, "before any switch"));
    assert_int_equal(
        parse(f, "Unicast lids [0-28] of switch Lid 1 guid 0x0002c900000000ff ('x'):\n", &w, &d),
        NF_EPARSE);
    assert_non_null(strstr(d.msg, "no switch"));
    assert_int_equal(parse(f, HDR "0x0002 099\n", &w, &d), NF_EPARSE);
    assert_int_equal(d.line, 2);
    assert_non_null(strstr(d.msg, "port 99"));
    assert_int_equal(parse(f, HDR "0x0002 013\n" HDR, &w, &d), NF_EPARSE);
    assert_int_equal(d.line, 3);
    assert_non_null(strstr(d.msg, "twice"));
    assert_int_equal(parse(f, HDR "0x0002 01x\n", &w, &d), NF_EPARSE);
    assert_int_equal(parse(f, HDR "0x10002 013\n", &w, &d), NF_EPARSE);
    assert_int_equal(parse(f, "\0x", &w, &d), NF_OK); /* strlen: empty text, no tables */
    /* a file that is not text stops the reading at its first chunk */
    nf_uft *z = NULL;
    assert_int_equal(nf_uft_load(f, "/dev/zero", on_warn, &w, &z, &d), NF_EPARSE);
    assert_null(z);
    assert_string_equal(d.msg, "NUL byte at column 1: binary data, not a table file");
    assert_int_equal(nf_uft_load(f, "/nonexistent/t.dump", on_warn, &w, &z, &d), NF_EIO);
    nf_fabric_free(f);
    /* LIDs no port has (two, the first on line 3) and a port with no link: counted. The fabric
     * without node 0 (its block taken out of xgft.ibnet): 'xgft L1 0' port 1 has no link, and
     * LID 5 (node 0's) no port. */
    FILE *in = fopen(REAL "xgft.ibnet", "rb");
    assert_non_null(in);
    static char net[16384];
    size_t n = fread(net, 1, sizeof net - 1, in);
    fclose(in);
    net[n] = '\0';
    char *ca = strstr(net, "caguid=0x2c90000000050\n");
    assert_non_null(ca);
    char *blk = ca;
    while (blk > net && !(blk[-1] == '\n' && blk[-2] == '\n'))
        blk--; /* its vendid= line */
    char *after = strstr(ca, "\n\n");
    assert_non_null(after);
    memmove(blk, after + 2, strlen(after + 2) + 1);
    nf_load_opts lo = {.partial = true};
    assert_int_equal(nf_io_parse(net, strlen(net), NF_FMT_AUTO, "cut.ibnet", &lo, &f, &d), 0);
    nf_node l10 = switch_named(f, "xgft L1 0");
    assert_int_equal(f->peer[nf_port_index(f, l10, 1)], NF_NONE);
    w = (warns){0};
    nf_uft *t = NULL;
    const char *text = HDR "0x0002 013\n0x0005 002\n0x0030 001\n0x0003 001\n28 lids dumped\n";
    assert_int_equal(nf_uft_parse(f, text, strlen(text), "warn.dump", on_warn, &w, &t, &d), 0);
    assert_int_equal(w.n, 2);
    assert_int_equal(nf_uft_get(t, l10, 3), 1); /* kept: it is what the switch holds */
    assert_int_equal(nf_uft_get(t, l10, 2), 13);
    assert_int_equal(nf_uft_get(t, l10, 5), NF_UFT_NONE);
    nf_uft_free(t);
    nf_fabric_free(f);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_read_opensm_by_hand),
        cmocka_unit_test(test_two_views_agree),
        cmocka_unit_test(test_write_round_trip),
        cmocka_unit_test(test_bad_tables),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
