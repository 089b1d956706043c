/* SPDX-License-Identifier: MIT */
/* The ibnetdiscover reader and writer: every real dump in the shared fabrics directory with the
 * counts and facts its README gives, the format variants of a hand-written fixture, malformed
 * input with exact line numbers, write/parse round trips and an allocation-failure sweep. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "netfab/gen.h"
#include "netfab/ibnet.h"
#include "netfab/io.h"
#include "testutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- helpers ------------------------------------------------------------------------------- */

typedef struct warns {
    int count;
    int lines[64];
    char last[512];
} warns;

static void count_warn(void *ud, const char *file, int line, const char *msg) {
    warns *w = ud;
    (void)file;
    if (w->count < 64) w->lines[w->count] = line;
    w->count++;
    snprintf(w->last, sizeof w->last, "%s", msg);
}

static int load(const char *dir, const char *name, warns *w, nf_fabric **f, nf_diag *d) {
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    nf_load_opts opts = {.warn = count_warn, .warn_ud = w};
    return nf_io_load(path, NF_FMT_IBNET, &opts, f, d);
}

static nf_fabric *must_load(const char *dir, const char *name, warns *w) {
    nf_fabric *f = NULL;
    nf_diag d = {0};
    int rc = load(dir, name, w, &f, &d);
    if (rc) fail_msg("%s: %s:%d: %s", name, d.file, d.line, d.msg);
    return f;
}

static int parse_str(const char *text, warns *w, nf_fabric **f, nf_diag *d) {
    nf_load_opts opts = {.warn = count_warn, .warn_ud = w};
    return nf_ibnet_parse(text, strlen(text), "inline.ibnet", &opts, f, d);
}

/* The same with the partial option set: an incomplete file is read anyway. */
static int parse_partial(const char *text, warns *w, nf_fabric **f, nf_diag *d) {
    nf_load_opts opts = {.warn = count_warn, .warn_ud = w, .partial = true};
    return nf_ibnet_parse(text, strlen(text), "inline.ibnet", &opts, f, d);
}

/* The text nf_ibnet_write produces for f (caller frees). Not inlined: gcc then takes pointers into
 * the text for pointers to the local that open_memstream was given (-Wdangling-pointer). */
__attribute__((noinline)) static char *write_str(const nf_fabric *f, size_t *len) {
    char *buf = NULL;
    FILE *m = open_memstream(&buf, len);
    assert_non_null(m);
    assert_int_equal(nf_ibnet_write(f, m), 0);
    fclose(m);
    return buf;
}

static nf_node by_guid(const nf_fabric *f, uint64_t guid) {
    nf_node n = nf_fabric_find_guid(f, guid);
    if (n == NF_NONE) fail_msg("no node with GUID 0x%llx", (unsigned long long)guid);
    return n;
}

static nf_gport gport(const nf_fabric *f, uint64_t guid, unsigned p) {
    return nf_port_index(f, by_guid(f, guid), p);
}

/* Asserts (guid_a, pa) is cabled to (guid_z, pz) and returns the link. */
static nf_link expect_link(const nf_fabric *f, uint64_t ga, unsigned pa, uint64_t gz, unsigned pz) {
    nf_gport g = gport(f, ga, pa);
    assert_int_equal(f->peer[g], by_guid(f, gz));
    assert_int_equal(f->peer_port[g], pz);
    return f->port_link[g];
}

static void roundtrip(nf_fabric *f, const char *what);

/* ---- the real dumps ------------------------------------------------------------------------ */

static const struct real_dump {
    const char *file;
    uint32_t switches, cas, links, loopbacks, host_links;
    int warnings;
} real_dumps[] = {
    {"nvidia-topograph-ndr-superpod.ibnet", 40, 582, 1114, 0, 582, 0},
    {"switchib-edr-6sw-96hca.ibnet", 6, 96, 144, 0, 96, 0},
    {"stage-sx6036-fdr10.ibnet", 8, 144, 192, 0, 145, 0},
    {"psmn-x5-voltaire-qdr.ibnet", 11, 89, 159, 0, 89, 0},
    {"nvidia-kb-ufm-lab-edr-fdr.ibnet", 2, 6, 10, 3, 6, 1},      /* line 1: stderr */
    {"rdma-core-manpage-voltaire-2007.ibnet", 2, 4, 7, 0, 5, 2}, /* two sides disagree on width */
    {"fattree-k4-n3.synthetic.ibnet", 80, 128, 384, 0, 128, 0},
};

static void test_real_dump_counts(void **state) {
    (void)state;
    for (size_t i = 0; i < sizeof real_dumps / sizeof real_dumps[0]; i++) {
        const struct real_dump *r = &real_dumps[i];
        warns w = {0};
        nf_fabric *f = must_load(NF_FABRICS_DIR, r->file, &w);
        nf_diag d = {0};
        if (nf_fabric_check(f, &d)) fail_msg("%s: check: %s", r->file, d.msg);
        nf_fabric_counts c;
        nf_fabric_count(f, &c);
        assert_int_equal(f->n_switches, r->switches);
        assert_int_equal(f->n_cas, r->cas);
        assert_int_equal(f->n_links, r->links);
        assert_int_equal(c.loopback_links, r->loopbacks);
        assert_int_equal(c.links_by_class[NF_LINK_HOST], r->host_links);
        assert_int_equal(c.links_by_class[NF_LINK_LOCAL], r->links - r->host_links);
        assert_int_equal(w.count, r->warnings);
        nf_fabric_free(f);
    }
}

static void test_nvidia_kb_lab(void **state) {
    (void)state;
    warns w = {0};
    nf_fabric *f = must_load(NF_FABRICS_DIR, "nvidia-kb-ufm-lab-edr-fdr.ibnet", &w);
    assert_int_equal(w.count, 1);
    assert_int_equal(w.lines[0], 1); /* the stderr line */
    const uint64_t sib = 0xe41d2d030003e470ULL, sx = 0xf4521403005764b0ULL;
    nf_node s = by_guid(f, sib);
    assert_true(nf_is_switch(f, s));
    assert_int_equal(f->nports[s], 36);
    assert_int_equal(f->lid[s], 268);
    assert_string_equal(nf_node_name(f, s), "SwitchIB Mellanox Technologies");
    assert_int_equal(f->vendid[s], 0x2c9);
    assert_int_equal(f->devid[s], 0xcb20);
    assert_int_equal(f->sysimgguid[s], sib);
    assert_string_equal(nf_node_name(f, by_guid(f, sx)), "MF0;switch-de779e:SX6012/U1");
    assert_int_equal(f->lid[by_guid(f, sx)], 174);
    /* the three loop-back cables, each one link */
    nf_link l1 = expect_link(f, sib, 1, sib, 2), l2 = expect_link(f, sib, 19, sib, 21);
    nf_link l3 = expect_link(f, sib, 29, sib, 30);
    assert_true(l1 != l2 && l2 != l3 && l1 != l3);
    assert_int_equal(f->link_cls[l1], NF_LINK_LOCAL);
    assert_int_equal(f->link_speed[l1], NF_SPEED_EDR);
    /* the ISL between the two switches runs at FDR */
    nf_link isl = expect_link(f, sib, 3, sx, 1);
    assert_int_equal(f->link_width[isl], 4);
    assert_int_equal(f->link_speed[isl], NF_SPEED_FDR);
    assert_int_equal(f->link_speed[expect_link(f, sx, 8, 0xe41d2d03005cf1f8ULL, 1)], NF_SPEED_SDR);
    /* a two-port CA cabled on port 2 only: port GUID and LID from its line */
    nf_node ca = by_guid(f, 0x2c903003421b0ULL);
    assert_int_equal(f->nports[ca], 2);
    assert_string_equal(nf_node_name(f, ca), "r-ufm111 HCA-1");
    assert_int_equal(f->peer[nf_port_index(f, ca, 1)], NF_NONE);
    assert_int_equal(f->port_guid[nf_port_index(f, ca, 2)], 0x2c903003421b2ULL);
    assert_int_equal(f->port_lid[nf_port_index(f, ca, 2)], 3);
    assert_int_equal(f->sysimgguid[ca], 0x2c903003421b3ULL);
    expect_link(f, 0x2c903003421b0ULL, 2, sib, 35);
    nf_fabric_free(f);
}

static void test_switchib_ddr_isl(void **state) {
    (void)state;
    warns w = {0};
    nf_fabric *f = must_load(NF_FABRICS_DIR, "switchib-edr-6sw-96hca.ibnet", &w);
    const uint64_t leaf = 0xec0d9a0300ec8480ULL, spine = 0xec0d9a0300ec8200ULL;
    nf_link ddr = expect_link(f, leaf, 11, spine, 11);
    assert_int_equal(f->link_width[ddr], 4);
    assert_int_equal(f->link_speed[ddr], NF_SPEED_DDR);
    unsigned edr = 0;
    for (nf_link l = 0; l < f->n_links; l++)
        edr += f->link_speed[l] == NF_SPEED_EDR && f->link_width[l] == 4;
    assert_int_equal(edr, 143);
    /* a switch LID from its header, a CA port LID from its own line */
    assert_int_equal(f->lid[by_guid(f, 0xec0d9a0300ec8240ULL)], 48);
    nf_node ca = by_guid(f, 0x506b4b03003fa98aULL);
    assert_string_equal(nf_node_name(f, ca), "node019 HCA-1");
    assert_int_equal(f->port_lid[nf_port_index(f, ca, 1)], 83);
    assert_int_equal(f->lid[ca], 83);
    assert_int_equal(f->devid[ca], 0x1017);
    expect_link(f, 0x506b4b03003fa98aULL, 1, 0xec0d9a0300ec8240ULL, 36);
    /* leading zeros stripped in "(8c0eb0300ddc0f6)" */
    assert_int_equal(f->port_guid[gport(f, 0x08c0eb0300ddc0f6ULL, 1)], 0x08c0eb0300ddc0f6ULL);
    nf_fabric_free(f);
}

static void test_manpage_example(void **state) {
    (void)state;
    warns w = {0};
    nf_fabric *f = must_load(NF_FABRICS_DIR, "rdma-core-manpage-voltaire-2007.ibnet", &w);
    /* the width disagreements on lines 26 and 52 are reported, and the slower side wins */
    assert_int_equal(w.count, 2);
    assert_int_equal(w.lines[0], 26);
    assert_int_equal(w.lines[1], 52);
    const uint64_t isr = 0x005442ba00003080ULL, sw6 = 0x0008f10400410015ULL,
                   ca558 = 0x0008f10403960558ULL;
    nf_link a = expect_link(f, isr, 10, sw6, 1), b = expect_link(f, isr, 12, ca558, 1);
    assert_int_equal(f->link_width[a], 1);
    assert_int_equal(f->link_width[b], 1);
    assert_int_equal(f->link_speed[a], NF_SPEED_SDR);
    assert_int_equal(f->link_width[expect_link(f, isr, 6, sw6, 3)], 4);
    /* a node without a sysimgguid= line, and a CA whose port GUID is not its node GUID */
    assert_int_equal(f->sysimgguid[by_guid(f, sw6)], 0);
    assert_int_equal(f->vendid[by_guid(f, sw6)], 0x8f1);
    assert_int_equal(f->lid[by_guid(f, sw6)], 3);
    nf_node ca = by_guid(f, 0x0008f10403960984ULL);
    assert_int_equal(f->port_guid[nf_port_index(f, ca, 1)], 0x8f10403960985ULL);
    assert_int_equal(f->port_lid[nf_port_index(f, ca, 1)], 16);
    assert_int_equal(f->port_lmc[nf_port_index(f, ca, 1)], 1);
    /* a CA listing port 2 before port 1 */
    nf_node c2 = by_guid(f, ca558);
    assert_int_equal(f->port_lid[nf_port_index(f, c2, 2)], 14);
    assert_int_equal(f->port_lid[nf_port_index(f, c2, 1)], 10);
    assert_int_equal(f->lid[c2], 10);
    assert_string_equal(nf_node_name(f, c2), "MT23108 InfiniHost Mellanox Technologies");
    nf_fabric_free(f);
}

static void test_other_dump_facts(void **state) {
    (void)state;
    warns w = {0};
    /* Quantum-2: 65-port switches, names with runs of spaces */
    nf_fabric *f = must_load(NF_FABRICS_DIR, "nvidia-topograph-ndr-superpod.ibnet", &w);
    nf_fabric_counts c;
    nf_fabric_count(f, &c);
    assert_int_equal(c.max_radix, 65);
    unsigned cx7 = 0, agg = 0;
    for (nf_node n = f->n_switches; n < f->n_nodes; n++) {
        cx7 += strcmp(nf_node_name(f, n), "MT4129 ConnectX7   Mellanox Technologies") == 0;
        agg += strcmp(nf_node_name(f, n), "Mellanox Technologies Aggregation Node") == 0;
    }
    assert_int_equal(cx7, 69);
    assert_int_equal(agg, 40);
    nf_node leaf = by_guid(f, 0x2c5eab0300b87b40ULL);
    assert_string_equal(nf_node_name(f, leaf), "MF0;A09-P1-IBLEAF-04-04:MQM9701/U1");
    assert_int_equal(f->lid[leaf], 73);
    expect_link(f, 0x2c5eab0300b87b40ULL, 65, 0x2c5eab0300b87b50ULL, 1);
    nf_fabric_free(f);

    /* X5: every CA has the same description, nodes are told apart by GUID; '#' inside names */
    f = must_load(NF_FABRICS_DIR, "psmn-x5-voltaire-qdr.ibnet", &w);
    unsigned same = 0;
    for (nf_node n = f->n_switches; n < f->n_nodes; n++)
        same += strcmp(nf_node_name(f, n), "MT25408 ConnectX Mellanox Technologies") == 0;
    assert_int_equal(same, 89);
    assert_string_equal(nf_node_name(f, by_guid(f, 0x0008f105002036b4ULL)),
                        "Voltaire 4036 # hoibp0013");
    assert_int_equal(f->lid[by_guid(f, 0x0008f105002036b4ULL)], 10);
    unsigned ddr = 0;
    for (nf_link l = 0; l < f->n_links; l++)
        ddr += f->link_speed[l] == NF_SPEED_DDR;
    assert_int_equal(ddr, 23);
    nf_fabric_free(f);

    /* SX6036: ';' and ':' in names, FDR10 ISLs */
    f = must_load(NF_FABRICS_DIR, "stage-sx6036-fdr10.ibnet", &w);
    assert_string_equal(nf_node_name(f, by_guid(f, 0xf4521403001165a0ULL)), "MF0;ib5:SX6036/U1");
    assert_int_equal(f->lid[by_guid(f, 0xf4521403001165a0ULL)], 128);
    unsigned fdr10 = 0;
    for (nf_link l = 0; l < f->n_links; l++)
        fdr10 += f->link_speed[l] == NF_SPEED_FDR10;
    assert_int_equal(fdr10, 47);
    assert_string_equal(nf_node_name(f, by_guid(f, 0xf452140300081a20ULL)), "tank1 mlx4_0");
    nf_fabric_free(f);

    /* synthetic: LIDs 0, no lid/lmc in switch headers, port GUID = node GUID + 1 */
    f = must_load(NF_FABRICS_DIR, "fattree-k4-n3.synthetic.ibnet", &w);
    nf_node s0 = by_guid(f, 0x2000000);
    assert_string_equal(nf_node_name(f, s0), "Switch0");
    assert_int_equal(f->lid[s0], 0);
    assert_int_equal(f->port_guid[gport(f, 0x1000000, 1)], 0x1000001);
    expect_link(f, 0x2000000, 5, 0x1000000, 1);
    nf_fabric_free(f);
    assert_int_equal(w.count, 0);
}

/* The LLNL excerpt was spliced from several blocks, so its switch lists ports 23 and 21 twice.
 * We refuse it at the first repeated port, after one warning about its mismatched switchguid=. */
static void test_partial_dump_is_refused(void **state) {
    (void)state;
    warns w = {0};
    nf_fabric *f = (nf_fabric *)1;
    nf_diag d = {0};
    assert_int_equal(load(NF_FABRICS_DIR, "llnl-atlas-2006-voltaire.partial.ibnet", &w, &f, &d),
                     NF_EPARSE);
    assert_null(f);
    assert_int_equal(d.line, 16);
    assert_non_null(strstr(d.file, "llnl-atlas-2006-voltaire.partial.ibnet"));
    assert_string_equal(d.msg,
                        "port 23 of \"S-0008f104003f1e29\" is listed twice (first on line 13)");
    assert_int_equal(w.count, 1);
    assert_int_equal(w.lines[0], 11);
}

/* ---- the hand-written fixture -------------------------------------------------------------- */

static void test_fixture_variants(void **state) {
    (void)state;
    warns w = {0};
    nf_fabric *f = must_load(NF_TEST_DATA, "small.ibnet", &w);
    assert_int_equal(nf_fabric_check(f, NULL), 0);
    assert_int_equal(f->n_switches, 2);
    assert_int_equal(f->n_cas, 2);
    assert_int_equal(f->n_links, 6);
    /* the stray line; "Non-Chassis Nodes" passes silently */
    assert_int_equal(w.count, 1);
    assert_int_equal(w.lines[0], 1);
    const uint64_t leaf = 0xa00, spine = 0xb00, h1 = 0xa01, h2 = 0xa02;
    assert_string_equal(nf_node_name(f, by_guid(f, leaf)), "leaf #1 [0-3]; rack:A   x");
    assert_int_equal(f->lid[by_guid(f, leaf)], 5);
    assert_int_equal(f->lid[by_guid(f, spine)], 6);
    assert_int_equal(f->sysimgguid[by_guid(f, spine)], 0);
    /* parallel links, a loop-back, and a link whose speed is given on one side only */
    nf_link p3 = expect_link(f, leaf, 3, spine, 3), p4 = expect_link(f, leaf, 4, spine, 4);
    assert_true(p3 != p4);
    assert_int_equal(f->link_speed[p3], NF_SPEED_EDR);
    expect_link(f, leaf, 5, leaf, 6);
    assert_int_equal(f->peer[gport(f, leaf, 8)], NF_NONE);
    nf_link hdr = expect_link(f, leaf, 2, h2, 2);
    assert_int_equal(f->link_speed[hdr], NF_SPEED_HDR);
    nf_link sdr = expect_link(f, spine, 7, h2, 1);
    assert_int_equal(f->link_width[sdr], 1);
    assert_int_equal(f->link_cls[sdr], NF_LINK_HOST);
    /* CA ports: GUID, LID, LMC from the CA lines */
    assert_int_equal(f->port_guid[gport(f, h2, 1)], 0xa03);
    assert_int_equal(f->port_guid[gport(f, h2, 2)], 0xa04);
    assert_int_equal(f->port_lid[gport(f, h2, 1)], 8);
    assert_int_equal(f->port_lid[gport(f, h2, 2)], 9);
    assert_int_equal(f->port_lmc[gport(f, h2, 2)], 1);
    assert_int_equal(f->lid[by_guid(f, h2)], 8);
    assert_int_equal(f->port_lid[gport(f, h1, 1)], 7);
    assert_int_equal(f->devid[by_guid(f, h1)], 0x1017);
    nf_fabric_free(f);
}

static void test_one_sided_and_router(void **state) {
    (void)state;
    const char *text = "Switch 4 \"S-1\" # \"a\" lid 1\n"
                       "[1] \"S-2\"[1] # \"b\" lid 2 4xQDR\n"
                       "\n"
                       "Switch 4 \"S-2\" # \"b\" lid 2\n"
                       "[2] \"R-3\"[1]\n"
                       "\n"
                       "Rt 1 \"R-3\" # \"router\"\n"
                       "[1] \"S-2\"[2]\n";
    warns w = {0};
    nf_fabric *f = NULL;
    nf_diag d = {0};
    /* S-1[1] - S-2[1] is listed on S-1's side only: the file is incomplete */
    assert_int_equal(parse_str(text, &w, &f, &d), NF_EPARSE);
    assert_null(f);
    assert_int_equal(d.line, 2);
    assert_string_equal(d.msg,
                        "link \"S-1\"[1] - \"S-2\"[1] is not listed by its other end; 1 link "
                        "is listed by one end only and 0 to nodes with no block: the file "
                        "is truncated or incomplete (the partial option reads it anyway)");
    /* read anyway: the link is kept, and counted */
    w = (warns){0};
    assert_int_equal(parse_partial(text, &w, &f, &d), 0);
    assert_int_equal(f->n_links, 2);
    assert_int_equal(f->n_cas, 1);
    assert_int_equal(w.count, 2);
    assert_int_equal(w.lines[0], 7); /* router read as a CA */
    assert_int_equal(w.lines[1], 2);
    assert_string_equal(w.last,
                        "partial file: 1 link listed by one end only, kept (the first here)");
    nf_link l = expect_link(f, 1, 1, 2, 1);
    assert_int_equal(f->link_speed[l], NF_SPEED_QDR);
    assert_string_equal(nf_node_name(f, by_guid(f, 3)), "router");
    nf_fabric_free(f);
}

/* Switches of 144 and 255 ports (the most a node has: port numbers are 8 bits), cabled by
 * their last ports, read and written back alike. */
static void test_big_switches(void **state) {
    (void)state;
    const char *text = "Switch 255 \"S-1\" # \"big\" lid 1\n"
                       "[255] \"S-2\"[144] # \"mid\" lid 2 4xNDR\n"
                       "[254] \"H-3\"[1](3) # \"host\" lid 3 4xNDR\n"
                       "\n"
                       "Switch 144 \"S-2\" # \"mid\" lid 2\n"
                       "[144] \"S-1\"[255] # \"big\" lid 1 4xNDR\n"
                       "\n"
                       "Ca 1 \"H-3\" # \"host\"\n"
                       "[1](3) \"S-1\"[254] # lid 3 lmc 0 \"big\" lid 1 4xNDR\n";
    warns w = {0};
    nf_fabric *f = NULL;
    nf_diag d = {0};
    if (parse_str(text, &w, &f, &d)) fail_msg("line %d: %s", d.line, d.msg);
    assert_int_equal(w.count, 0);
    assert_int_equal(f->nports[by_guid(f, 1)], 255);
    assert_int_equal(f->nports[by_guid(f, 2)], 144);
    expect_link(f, 1, 255, 2, 144);
    expect_link(f, 3, 1, 1, 254);
    roundtrip(f, "big switches");
    nf_fabric_free(f);
}

/* A CA port whose peer has no block: the link is skipped, and so is what its line says about the
 * port (it would not survive writing; found by fuzzing). */
static void test_skipped_link_drops_port_info(void **state) {
    (void)state;
    const char *text = "Ca 2 \"H-10\" # \"h\"\n"
                       "[1](11) \"S-99\"[3] # lid 448 lmc 0 \"gone\" lid 37 4xSDR\n"
                       "[2](12) \"S-20\"[1] # lid 449 lmc 0 \"s\" lid 5 4xSDR\n"
                       "Switch 4 \"S-20\" # \"s\" lid 5\n"
                       "[1] \"H-10\"[2](12) # \"h\" lid 449 4xSDR\n";
    warns w = {0};
    nf_fabric *f = NULL;
    nf_diag d = {0};
    assert_int_equal(parse_str(text, &w, &f, &d), NF_EPARSE);
    assert_int_equal(d.line, 2);
    assert_non_null(strstr(d.msg, "the peer of \"H-10\"[1], \"S-99\", has no node block; 0 links "
                                  "are listed by one end only and 1 to nodes with no block"));
    assert_int_equal(parse_partial(text, &w, &f, &d), 0);
    assert_int_equal(w.count, 1);
    assert_int_equal(w.lines[0], 2);
    assert_string_equal(w.last,
                        "partial file: 1 link to nodes with no block, skipped (the first here)");
    nf_node ca = by_guid(f, 0x10);
    assert_int_equal(f->port_lid[nf_port_index(f, ca, 1)], 0);
    assert_int_equal(f->port_lid[nf_port_index(f, ca, 2)], 449);
    assert_int_equal(f->lid[ca], 0);
    roundtrip(f, "skipped link");
    nf_fabric_free(f);
}

/* ---- malformed input ----------------------------------------------------------------------- */

static const struct bad_input {
    const char *text;
    int line;
    const char *msg; /* a part of diag.msg */
} bad_inputs[] = {
    {"[1] \"S-1\"[1]\n", 1, "port line outside a node block"},
    {"Switch 8 \"S-1\"\nvendid=0x2c9\n[1] \"S-2\"[1]\n", 3, "port line outside a node block"},
    {"#\n\nSwitch x \"S-1\"\n", 3, "bad port count"},
    {"Switch 0 \"S-1\"\n", 1, "1 to 255 ports"},
    {"Switch 256 \"S-1\"\n", 1, "1 to 255 ports"},
    {"Switch 8 S-1\n", 1, "expected the quoted node id"},
    {"Switch 8 \"S-1\n", 1, "unterminated quote in node id"},
    {"Switch 8 \"S-1\" # \"desc\n", 1, "unterminated quote in node description"},
    {"Switch 8 \"Switch1\"\n", 1, "is not S-, H- or R-"},
    {"Switch 8 \"S-00000000000000000\"\n", 1, "is not S-, H- or R-"},
    {"Switch 8 \"S-0\"\n", 1, "GUID 0"},
    {"Switch 8 \"S-1\" lid 3\n", 1, "unexpected text after the node header"},
    {"Switch 8 \"S-1\" # \"d\" lid abc\n", 1, "bad LID 'abc'"},
    {"Switch 8 \"S-1\" # \"d\" lid 65536\n", 1, "bad LID"},
    {"Switch 8 \"S-1\" # \"d\" lid 1 lmc 8\n", 1, "bad LMC"},
    {"Swich 8 \"S-1\"\n", 1, "unknown node type 'Swich'"},
    {"Switch 8 \"S-1\"\n[9] \"S-2\"[1]\n", 2, "port 9 is out of range: \"S-1\" has 8 ports"},
    {"Switch 8 \"S-1\"\n[0] \"S-2\"[1]\n", 2, "port 0"},
    {"Switch 8 \"S-1\"\n[x] \"S-2\"[1]\n", 2, "bad port number"},
    {"Switch 255 \"S-1\"\n[256] \"S-2\"[1]\n", 2, "port 256 is beyond the limit of 255 ports"},
    {"Switch 255 \"S-1\"\n[1] \"S-2\"[256]\n", 2, "peer port 256 is beyond the limit of 255 ports"},
    {"Switch 8 \"S-1\"\n[1 \"S-2\"[1]\n", 2, "expected ']'"},
    {"Switch 8 \"S-1\"\n[1] \"S-2[1]\n", 2, "unterminated quote in peer id"},
    {"Switch 8 \"S-1\"\n[1] \"S-2\" 1\n", 2, "expected '['"},
    {"Switch 8 \"S-1\"\n[1] \"S-2\"[1x]\n", 2, "bad peer port number"},
    {"Switch 8 \"S-1\"\n[1] \"S-2\"[1](xyz)\n", 2, "bad peer port GUID"},
    {"Switch 8 \"S-1\"\n[1](12 \"S-2\"[1]\n", 2, "bad port GUID"},
    {"Switch 8 \"S-1\"\n[1] \"S-2\"[1] # \"d lid 3\n", 2, "unterminated quote in port comment"},
    {"Switch 8 \"S-1\"\n[1] \"S-2\"[1] # \"d\" lid x\n", 2, "bad LID 'x'"},
    {"Switch 8 \"S-1\"\n[1] \"S-2\"[1] junk\n", 2, "unexpected text 'junk'"},
    {"Switch 8 \"S-1\"\n[1] \"peer\"[1]\n", 2, "peer id \"peer\" is not S-, H- or R-"},
    {"vendid=0xzz\n", 1, "bad value for vendid"},
    {"switchguid=0x10(zz)\n", 1, "bad port GUID in parentheses after switchguid"},
    {"Switch 8 \"S-1\"\n\nSwitch 4 \"S-1\"\n", 3,
     "GUID 0x0000000000000001 of \"S-1\" is defined twice (first on line 1)"},
    {"Switch 8 \"S-1\"\n[1] \"S-2\"[1]\n[1] \"S-2\"[2]\n\nSwitch 8 \"S-2\"\n", 3,
     "port 1 of \"S-1\" is listed twice"},
    {"Switch 8 \"S-1\"\n[1] \"S-2\"[9]\nSwitch 8 \"S-2\"\n", 2,
     "peer port 9 is out of range: \"S-2\" has 8 ports"},
    {"Switch 8 \"S-1\"\n[1] \"S-1\"[1]\n", 2, "linked to itself"},
    {"Switch 8 \"S-1\"\n[1] \"S-2\"[1]\nSwitch 8 \"S-2\"\n[1] \"S-1\"[2]\n", 4,
     "contradicts line 2"},
    {"Switch 8 \"S-1\"\n[1] \"S-2\"[1]\n[2] \"S-3\"[1]\nSwitch 8 \"S-2\"\nSwitch 8 \"S-3\"\n[1] "
     "\"S-2\"[1]\n",
     6, "contradicts"},
    {"Ca 1 \"H-1\"\n[1] \"H-2\"[1]\nCa 1 \"H-2\"\n[1] \"H-1\"[1]\n", 2,
     "CA cabled straight to a CA"},
    {"Switch 8 \"S-1\"\n[1] \"H-2\"[1](a)\nCa 1 \"H-2\"\n[1](b) \"S-1\"[1]\n", 2,
     "port GUID a of \"H-2\"[1] disagrees"},
    {"", 0, "no node headers"},
    {"# only comments\n\nvendid=0x2c9\n", 3, "key lines with no node header after them"},
    {"# only comments\n\n", 0, "no node headers"},
    /* incomplete files */
    {"Switch 8 \"S-1\"\n[1] \"S-2\"[1]\nSwitch 8 \"S-2\"\n[1] \"S-1\"[1]\nswitchguid=0x3\n", 5,
     "key lines with no node header after them: the file is truncated"},
    {"Switch 8 \"S-1\"\n[1] \"S-2\"[1]\nSwitch 8 \"S-2\"\n[1] \"S-1\"[1]\nSwitch 8 \"S-3\"\n", 5,
     "node \"S-3\" lists no ports: the file is truncated"},
    {"Switch 8 \"S-1\"\n[2] \"S-3\"[1]\n[1] \"S-2\"[1]\nSwitch 8 \"S-2\"\n", 2,
     "the peer of \"S-1\"[2], \"S-3\", has no node block; 1 link is listed by one end only and 1 "
     "to nodes with no block"},
    /* the LID a line gives its peer is the one the peer gives itself (a number cut short) */
    {"Switch 8 \"S-1\" # \"a\" lid 17\n[1] \"S-2\"[1] # \"b\" lid 2\nSwitch 8 \"S-2\" # \"b\" lid "
     "2\n"
     "[1] \"S-1\"[1] # \"a\" lid 1\n",
     4, "LID 1 of \"S-1\" disagrees with line 1 (17)"},
    {"Switch 8 \"S-1\" # \"a\" lid 1\n[1] \"H-2\"[1] # \"b\" lid 36\nCa 1 \"H-2\"\n"
     "[1] \"S-1\"[1] # lid 3 lmc 0 \"a\" lid 1\n",
     2, "LID 36 of \"H-2\"[1] disagrees with its own line 4 (3)"},
    /* GUIDs: a port GUID used twice, or also a node's */
    {"Switch 8 \"S-1\"\n[1] \"H-2\"[1]\n[2] \"H-3\"[1]\nCa 1 \"H-2\"\n[1](7) \"S-1\"[1]\nCa 1 "
     "\"H-3\"\n"
     "[1](7) \"S-1\"[2]\n",
     7, "GUID 0x0000000000000007 of \"H-3\"[1] is also the GUID of \"H-2\"[1] (line 5)"},
    {"Switch 8 \"S-1\"\n[1] \"H-2\"[1]\n[2] \"H-2\"[2]\nCa 2 \"H-2\"\n[1](2) \"S-1\"[1]\n"
     "[2](2) \"S-1\"[2]\n",
     6, "GUID 0x0000000000000002 of \"H-2\"[2] is also the GUID of \"H-2\"[1] (line 5)"},
    {"Switch 8 \"S-1\"\n[1] \"H-2\"[1](1)\nCa 1 \"H-2\"\n[1] \"S-1\"[1]\n", 2,
     "GUID 0x0000000000000001 of \"H-2\"[1] is also the GUID of \"S-1\" (line 1)"},
};

static void test_malformed(void **state) {
    (void)state;
    for (size_t i = 0; i < sizeof bad_inputs / sizeof bad_inputs[0]; i++) {
        const struct bad_input *b = &bad_inputs[i];
        warns w = {0};
        nf_fabric *f = (nf_fabric *)1;
        nf_diag d = {0};
        int rc = parse_str(b->text, &w, &f, &d);
        if (rc != NF_EPARSE || d.line != b->line || !strstr(d.msg, b->msg))
            fail_msg("case %zu: rc %d line %d msg '%s'; wanted line %d and '%s'", i, rc, d.line,
                     d.msg, b->line, b->msg);
        assert_null(f);
        assert_string_equal(d.file, "inline.ibnet");
    }
}

/* Text that is not NUL-terminated, and NUL bytes inside it, are handled by length. */
static void test_length_bounded(void **state) {
    (void)state;
    const char text[] =
        "Switch 2 \"S-1\" # \"a\"\n[1] \"S-1\"[2]\n[2] \"S-1\"[1]\nSwitch 2 \"S-9\"";
    nf_fabric *f = NULL;
    nf_diag d = {0};
    /* cut before the last header: 1 switch */
    size_t len = strlen(text) - strlen("Switch 2 \"S-9\"");
    assert_int_equal(nf_ibnet_parse(text, len, "x", NULL, &f, &d), 0);
    assert_int_equal(f->n_nodes, 1);
    assert_int_equal(f->n_links, 1);
    nf_fabric_free(f);
    /* cut inside the quote of the last header */
    assert_int_equal(nf_ibnet_parse(text, strlen(text) - 3, "x", NULL, &f, &d), NF_EPARSE);
    assert_int_equal(d.line, 4);
    /* a NUL byte is binary data, refused at its line */
    const char nul[] = "Switch 2 \"S-1\" # \"a\"\n[1] \"S-1\"[2]\n[2] \"S-1\"[1] # \"a\0b\"\n";
    assert_int_equal(nf_ibnet_parse(nul, sizeof nul - 1, "x", NULL, &f, &d), NF_EPARSE);
    assert_int_equal(d.line, 3);
    assert_string_equal(d.msg, "NUL byte at column 18: binary data, not a fabric file");
    /* a line of more than NF_IO_MAX_LINE bytes */
    size_t n = NF_IO_MAX_LINE + 40;
    char *big = malloc(n);
    assert_non_null(big);
    memcpy(big, nul, 21);
    memset(big + 21, '#', n - 21);
    assert_int_equal(nf_ibnet_parse(big, n, "x", NULL, &f, &d), NF_EPARSE);
    assert_int_equal(d.line, 2);
    assert_string_equal(d.msg, "line longer than 65536 bytes: not a fabric file");
    /* a line of exactly NF_IO_MAX_LINE bytes is fine */
    big[21 + NF_IO_MAX_LINE] = '\n';
    assert_int_equal(nf_ibnet_parse(big, 22 + NF_IO_MAX_LINE, "x", NULL, &f, &d), NF_EPARSE);
    assert_string_equal(d.msg, "node \"S-1\" lists no ports: the file is truncated (the partial "
                               "option reads it anyway)");
    free(big);
}

/* A fat tree written out and cut at every byte: each cut is refused with a line number, or reads
 * back as the whole fabric (the cut took only the final newline, or a tail of the last comment
 * that the other end of the link repeats). */
static void test_truncation_sweep(void **state) {
    (void)state;
    nf_fabric *g = NULL;
    nf_diag d = {0};
    assert_int_equal(nf_gen_fattree(4, &g, &d), 0);
    size_t len;
    char *text = write_str(g, &len);
    nf_fabric_free(g);
    const char *hdr = strstr(text, "\nSwitch");
    assert_non_null(hdr);
    size_t first_header = (size_t)(hdr - text);
    size_t refused = 0, whole = 0;
    for (size_t cut = 0; cut <= len; cut++) {
        nf_fabric *f = NULL;
        int rc = nf_ibnet_parse(text, cut, "cut.ibnet", NULL, &f, &d);
        if (rc == 0) {
            size_t len2;
            char *text2 = write_str(f, &len2);
            if (len2 != len || memcmp(text, text2, len) != 0)
                fail_msg("cut at %zu of %zu: read as a different fabric", cut, len);
            free(text2);
            nf_fabric_free(f);
            whole++;
        } else if (rc != NF_EPARSE || (d.line <= 0 && cut > first_header)) {
            fail_msg("cut at %zu of %zu: rc %d line %d: %s", cut, len, rc, d.line, d.msg);
        } else {
            refused++;
        }
    }
    assert_true(whole >= 2); /* the whole text, and the text without its final newline */
    assert_true(refused > len - 100);
    free(text);
}

/* The partial option keeps what both ends agree on and counts the rest. */
static void test_partial_counts(void **state) {
    (void)state;
    const char *text = "Switch 4 \"S-1\" # \"a\" lid 1\n"
                       "[1] \"S-2\"[1] # \"b\" lid 2\n"
                       "[2] \"S-2\"[2] # \"b\" lid 2\n"
                       "[3] \"S-7\"[1]\n"
                       "[4] \"S-8\"[1]\n"
                       "\n"
                       "Switch 4 \"S-2\" # \"b\" lid 2\n"
                       "[1] \"S-1\"[1] # \"a\" lid 1\n"
                       "\n"
                       "switchguid=0x9\n";
    warns w = {0};
    nf_fabric *f = NULL;
    nf_diag d = {0};
    assert_int_equal(parse_str(text, &w, &f, &d), NF_EPARSE);
    assert_int_equal(d.line, 10); /* the key lines come first: they are checked as lines are read */
    assert_int_equal(parse_str("Switch 4 \"S-1\"\n[3] \"S-7\"[1]\n[1] \"S-2\"[1]\n[2] \"S-2\"[2]\n"
                               "Switch 4 \"S-2\"\n[1] \"S-1\"[1]\n",
                               &w, &f, &d),
                     NF_EPARSE);
    assert_int_equal(d.line, 2); /* the first of the two kinds */
    assert_non_null(strstr(d.msg, "1 link is listed by one end only and 1 to nodes with no block"));
    w = (warns){0};
    assert_int_equal(parse_partial(text, &w, &f, &d), 0);
    assert_int_equal(f->n_nodes, 2);
    assert_int_equal(f->n_links, 2); /* S-1[2] - S-2[2] is kept, the links to S-7 and S-8 not */
    assert_int_equal(w.count, 3);
    assert_int_equal(w.lines[0], 10); /* the trailing key line */
    assert_int_equal(w.lines[1], 3);
    assert_int_equal(w.lines[2], 4);
    assert_string_equal(w.last,
                        "partial file: 2 links to nodes with no block, skipped (the first here)");
    nf_fabric_free(f);
}

/* ---- writing ------------------------------------------------------------------------------- */

static void roundtrip(nf_fabric *f, const char *what) {
    size_t len;
    char *text = write_str(f, &len);
    warns w = {0};
    nf_fabric *g = NULL;
    nf_diag d = {0};
    if (parse_str(text, &w, &g, &d)) fail_msg("%s: re-parse: line %d: %s", what, d.line, d.msg);
    assert_int_equal(w.count, 0);
    assert_int_equal(nf_fabric_check(g, NULL), 0);
    if (!nf_fabric_equal(f, g, true, true, &d)) fail_msg("%s: %s", what, d.msg);
    for (nf_node n = 0; n < f->n_nodes; n++) {
        nf_node m = by_guid(g, f->guid[n]);
        assert_int_equal(f->vendid[n], g->vendid[m]);
        assert_int_equal(f->devid[n], g->devid[m]);
        assert_int_equal(f->sysimgguid[n], g->sysimgguid[m]);
        assert_int_equal(f->lmc[n], g->lmc[m]);
        for (unsigned p = 1; p <= f->nports[n]; p++)
            if (f->peer[nf_port_index(f, n, p)] != NF_NONE)
                assert_int_equal(f->port_lmc[nf_port_index(f, n, p)],
                                 g->port_lmc[nf_port_index(g, m, p)]);
    }
    /* writing the re-read fabric gives the same bytes */
    size_t len2;
    char *text2 = write_str(g, &len2);
    assert_int_equal(len, len2);
    assert_memory_equal(text, text2, len);
    free(text2);
    free(text);
    nf_fabric_free(g);
}

static void test_roundtrip_real_dumps(void **state) {
    (void)state;
    for (size_t i = 0; i < sizeof real_dumps / sizeof real_dumps[0]; i++) {
        warns w = {0};
        nf_fabric *f = must_load(NF_FABRICS_DIR, real_dumps[i].file, &w);
        roundtrip(f, real_dumps[i].file);
        nf_fabric_free(f);
    }
    warns w = {0};
    nf_fabric *f = must_load(NF_TEST_DATA, "small.ibnet", &w);
    roundtrip(f, "small.ibnet");
    nf_fabric_free(f);
}

static void test_writer_format(void **state) {
    (void)state;
    warns w = {0};
    nf_fabric *f = must_load(NF_FABRICS_DIR, "nvidia-kb-ufm-lab-edr-fdr.ibnet", &w);
    size_t len;
    char *text = write_str(f, &len);
    assert_non_null(strstr(
        text,
        "\n\nvendid=0x2c9\ndevid=0xcb20\nsysimgguid=0xe41d2d030003e470\n"
        "switchguid=0xe41d2d030003e470(e41d2d030003e470)\n"
        "Switch\t36 \"S-e41d2d030003e470\"\t\t# \"SwitchIB Mellanox Technologies\" "
        "base port 0 lid 268 lmc 0\n"
        "[1]\t\"S-e41d2d030003e470\"[2]\t\t# \"SwitchIB Mellanox Technologies\" lid 268 4xEDR\n"));
    assert_non_null(strstr(
        text,
        "[35]\t\"H-0002c903003421b0\"[2](2c903003421b2) \t\t# \"r-ufm111 HCA-1\" lid 3 4xFDR\n"));
    assert_non_null(strstr(
        text, "caguid=0x2c903003421b0\nCa\t2 \"H-0002c903003421b0\"\t\t# \"r-ufm111 HCA-1\"\n"
              "[2](2c903003421b2) \t\"S-e41d2d030003e470\"[35]\t\t# lid 3 lmc 0 "
              "\"SwitchIB Mellanox Technologies\" lid 268 4xFDR\n"));
    assert_int_equal(nf_io_detect(text, len), NF_FMT_IBNET);
    free(text);
    nf_fabric_free(f);
}

/* Quotes in names become apostrophes; a write error is NF_EIO. */
static void test_writer_names_and_errors(void **state) {
    (void)state;
    nf_builder *b = nf_builder_new(0, 0);
    nf_node s, c;
    assert_int_equal(
        nf_builder_add_node(b, NF_NODE_SWITCH, 4,
                            &(nf_node_attr){.guid = 0x10, .name = "say \"hi\"", .lid = 1}, &s),
        0);
    assert_int_equal(
        nf_builder_add_node(b, NF_NODE_CA, 1, &(nf_node_attr){.guid = 0x20, .name = "h"}, &c), 0);
    assert_int_equal(
        nf_builder_connect(b, s, 1, c, 1, &(nf_link_attr){.cls = NF_LINK_HOST, .width = 4}), 0);
    nf_fabric *f;
    assert_int_equal(nf_builder_freeze(b, true, &f), 0);
    nf_builder_free(b);
    size_t len;
    char *text = write_str(f, &len);
    assert_non_null(strstr(text, "# \"say 'hi'\" base port 0 lid 1 lmc 0\n"));
    if (!strstr(text, "# lid 2 lmc 0 \"say 'hi'\" lid 1\n"))
        fail_msg("%s", text); /* width alone is not written */
    nf_fabric *g;
    nf_diag d;
    assert_int_equal(nf_ibnet_parse(text, len, "w", NULL, &g, &d), 0);
    assert_string_equal(nf_node_name(g, by_guid(g, 0x10)), "say 'hi'");
    assert_false(nf_fabric_equal(f, g, true, false, NULL)); /* only the name differs */
    assert_int_equal(g->n_links, 1);
    expect_link(g, 0x10, 1, 0x20, 1);
    nf_fabric_free(g);
    free(text);
    FILE *ro = fopen("/dev/null", "r");
    assert_non_null(ro);
    assert_int_equal(nf_ibnet_write(f, ro), NF_EIO);
    fclose(ro);
    nf_fabric_free(f);
}

/* ---- allocation failures ------------------------------------------------------------------- */

static void test_allocation_failures(void **state) {
    (void)state;
    long failures;
    nf_fabric *f = alloc_sweep(sweep_load_file, NF_TEST_DATA "/small.ibnet", NULL, &failures);
    assert_int_equal(f->n_links, 6);
    assert_int_equal(nf_fabric_check(f, NULL), 0);
    nf_fabric_free(f);
    assert_true(failures > 30);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_real_dump_counts),
        cmocka_unit_test(test_nvidia_kb_lab),
        cmocka_unit_test(test_switchib_ddr_isl),
        cmocka_unit_test(test_manpage_example),
        cmocka_unit_test(test_other_dump_facts),
        cmocka_unit_test(test_partial_dump_is_refused),
        cmocka_unit_test(test_fixture_variants),
        cmocka_unit_test(test_one_sided_and_router),
        cmocka_unit_test(test_skipped_link_drops_port_info),
        cmocka_unit_test(test_big_switches),
        cmocka_unit_test(test_malformed),
        cmocka_unit_test(test_length_bounded),
        cmocka_unit_test(test_truncation_sweep),
        cmocka_unit_test(test_partial_counts),
        cmocka_unit_test(test_roundtrip_real_dumps),
        cmocka_unit_test(test_writer_format),
        cmocka_unit_test(test_writer_names_and_errors),
        cmocka_unit_test(test_allocation_failures),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
