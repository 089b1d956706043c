/* SPDX-License-Identifier: MIT */
/* The ibsim net reader and writer: Debian's ibsim-utils example files, a hand-written fixture with
 * bare ids, w=/s= options and a console command, malformed input, write/parse round trips, an
 * allocation-failure sweep, and ibsim itself reading what we write (when /usr/bin/ibsim exists). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "netfab/ibsim.h"
#include "netfab/io.h"
#include "testutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define IBSIM_EXAMPLES "/usr/share/doc/ibsim-utils/net-examples"
#define IBSIM_BIN "/usr/bin/ibsim"
#define AUTO_GUID 0x0200000000000000ULL /* the first GUID given to a bare id */

typedef struct warns {
    int count;
    int lines[16];
    char first[256]; /* "file:line: message" of the first warning */
} warns;

static void count_warn(void *ud, const char *file, int line, const char *msg) {
    warns *w = ud;
    if (!w->count) snprintf(w->first, sizeof w->first, "%s:%d: %s", file, line, msg);
    if (w->count < 16) w->lines[w->count] = line;
    w->count++;
}

static int load(const char *dir, const char *name, nf_format fmt, warns *w, nf_fabric **f,
                nf_diag *d) {
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    nf_load_opts opts = {.warn = count_warn, .warn_ud = w};
    return nf_io_load(path, fmt, &opts, f, d);
}

static nf_fabric *must_load(const char *dir, const char *name, nf_format fmt, warns *w) {
    nf_fabric *f = NULL;
    nf_diag d = {0};
    if (load(dir, name, fmt, w, &f, &d)) fail_msg("%s: %s:%d: %s", name, d.file, d.line, d.msg);
    return f;
}

static int parse_str(const char *text, warns *w, nf_fabric **f, nf_diag *d) {
    nf_load_opts opts = {.warn = count_warn, .warn_ud = w};
    return nf_ibsim_parse(text, strlen(text), "inline.net", &opts, f, d);
}

/* parse_str with nf_load_opts.partial set. */
static int parse_partial(const char *text, warns *w, nf_fabric **f, nf_diag *d) {
    nf_load_opts opts = {.warn = count_warn, .warn_ud = w, .partial = true};
    return nf_ibsim_parse(text, strlen(text), "inline.net", &opts, f, d);
}

static char *write_str(const nf_fabric *f, size_t *len) {
    char *buf = NULL;
    FILE *m = open_memstream(&buf, len);
    assert_non_null(m);
    assert_int_equal(nf_ibsim_write(f, m), 0);
    fclose(m);
    return buf;
}

static nf_node by_guid(const nf_fabric *f, uint64_t guid) {
    nf_node n = nf_fabric_find_guid(f, guid);
    if (n == NF_NONE) fail_msg("no node with GUID 0x%llx", (unsigned long long)guid);
    return n;
}

static nf_node by_name(const nf_fabric *f, const char *name) {
    for (nf_node n = 0; n < f->n_nodes; n++)
        if (strcmp(nf_node_name(f, n), name) == 0) return n;
    fail_msg("no node named %s", name);
    return NF_NONE;
}

static nf_link expect_link(const nf_fabric *f, nf_node a, unsigned pa, nf_node z, unsigned pz) {
    nf_gport g = nf_port_index(f, a, pa);
    assert_int_equal(f->peer[g], z);
    assert_int_equal(f->peer_port[g], pz);
    return f->port_link[g];
}

/* ---- Debian's examples --------------------------------------------------------------------- */

static const struct example {
    const char *file;
    uint32_t switches, cas, links;
} examples[] = {
    {"net", 2, 2, 4},
    {"net.1", 1, 2, 2},
    {"net.2sw2path", 2, 2, 4},
    {"net.2sw2path4hca", 2, 4, 6},
    {"net.2sw2path4hca2port", 2, 2, 6},
};

static bool have_examples(void) { return access(IBSIM_EXAMPLES "/net", R_OK) == 0; }

static void test_debian_examples(void **state) {
    (void)state;
    if (!have_examples()) skip();
    for (size_t i = 0; i < sizeof examples / sizeof examples[0]; i++) {
        const struct example *e = &examples[i];
        warns w = {0};
        nf_fabric *f = must_load(IBSIM_EXAMPLES, e->file, NF_FMT_IBSIM, &w);
        assert_int_equal(nf_fabric_check(f, NULL), 0);
        assert_int_equal(f->n_switches, e->switches);
        assert_int_equal(f->n_cas, e->cas);
        assert_int_equal(f->n_links, e->links);
        assert_int_equal(w.count, 0);
        /* detection picks the ibsim reader for bare ids */
        nf_fabric *g = must_load(IBSIM_EXAMPLES, e->file, NF_FMT_AUTO, &w);
        assert_true(nf_fabric_equal(f, g, true, true, NULL));
        nf_fabric_free(g);
        nf_fabric_free(f);
    }
}

static void test_debian_net_details(void **state) {
    (void)state;
    if (!have_examples()) skip();
    warns w = {0};
    nf_fabric *f = must_load(IBSIM_EXAMPLES, "net", NF_FMT_IBSIM, &w);
    /* ids become names; GUIDs are handed out in order of appearance, one per CA port (Hca1 has
     * two ports: AUTO_GUID + 2 and + 3, so Hca2 starts at + 4) */
    nf_node s1 = by_name(f, "Switch1"), s2 = by_name(f, "Switch2"), h1 = by_name(f, "Hca1"),
            h2 = by_name(f, "Hca2");
    assert_int_equal(f->guid[s1], AUTO_GUID);
    assert_int_equal(f->guid[s2], AUTO_GUID + 1);
    assert_int_equal(f->guid[h1], AUTO_GUID + 2);
    assert_int_equal(f->guid[h2], AUTO_GUID + 4);
    assert_int_equal(f->port_guid[nf_port_index(f, h1, 2)], AUTO_GUID + 3);
    assert_int_equal(f->nports[s1], 8);
    assert_int_equal(f->nports[h1], 2);
    expect_link(f, s1, 1, h1, 1);
    expect_link(f, s1, 2, h2, 2);
    nf_link a = expect_link(f, s1, 3, s2, 3), b = expect_link(f, s1, 4, s2, 4);
    assert_true(a != b);
    assert_int_equal(f->link_cls[a], NF_LINK_LOCAL);
    assert_int_equal(f->link_width[a], 0); /* the example gives no widths */
    assert_int_equal(f->peer[nf_port_index(f, h2, 1)], NF_NONE);
    nf_fabric_free(f);
}

/* ---- the hand-written fixture -------------------------------------------------------------- */

static void test_fixture(void **state) {
    (void)state;
    warns w = {0};
    nf_fabric *f = must_load(NF_TEST_DATA, "small.net", NF_FMT_IBSIM, &w);
    assert_int_equal(nf_fabric_check(f, NULL), 0);
    assert_int_equal(f->n_switches, 2);
    assert_int_equal(f->n_cas, 2);
    assert_int_equal(f->n_links, 4);
    assert_int_equal(w.count, 1);
    assert_int_equal(w.lines[0], 2); /* the "do" line */
    /* a bare id: first fresh GUID, id as name; an S-<hex> id: its GUID (the key line above does
     * not override an id that spells a GUID), name from the comment; a bare id under caguid=:
     * that GUID, and the comment's name rather than the id */
    nf_node a = by_guid(f, AUTO_GUID), b = by_guid(f, 0xb0), h1 = by_guid(f, AUTO_GUID + 1),
            h2 = by_guid(f, 0x1234);
    assert_string_equal(nf_node_name(f, a), "sw-a");
    assert_string_equal(nf_node_name(f, b), "spine b");
    assert_string_equal(nf_node_name(f, h1), "hca-1");
    assert_string_equal(nf_node_name(f, h2), "second host");
    assert_int_equal(f->nports[b], 4);
    /* options as ibsim reads them: w=2 (4x) on one side, w=12 (12x) on both, s=2 (DDR) */
    assert_int_equal(f->link_width[expect_link(f, a, 1, h1, 1)], 4);
    assert_int_equal(f->link_width[expect_link(f, a, 2, h2, 1)], 12);
    nf_link ddr = expect_link(f, a, 3, b, 1);
    assert_int_equal(f->link_speed[ddr], NF_SPEED_DDR);
    assert_int_equal(f->link_width[ddr], 0);
    expect_link(f, a, 4, b, 2);
    nf_fabric_free(f);
}

static const struct bad_input {
    const char *text;
    int line;
    const char *msg;
} bad_inputs[] = {
    {"# net\ninclude \"other.net\"\n", 2, "'include' is not supported"},
    {"Switch 8 \"a\"\n@[1] \"x\"\n", 2, "aliases"},
    {"Switch 8 \"a\"\n[1] \"b\"[1] w=32\nSwitch 8 \"b\"\n", 2, "bad link width option 'w=32'"},
    {"Switch 8 \"a\"\n[1] \"b\"[1] w=0\nSwitch 8 \"b\"\n", 2, "bad link width option 'w=0'"},
    {"Switch 8 \"a\"\n[1] \"b\"[1] s=9\nSwitch 8 \"b\"\n", 2, "bad link speed option 's=9'"},
    {"Switch 8 \"a\"\n[1] \"b\"[1] q=1\nSwitch 8 \"b\"\n", 2, "unexpected text 'q=1'"},
    {"Switch 8 \"a\"\n\nHca 2 \"a\"\n", 3, "node id \"a\" is defined twice (first on line 1)"},
    {"Switch 8 \"S-10\"\n\nHca 2 \"H-10\"\n", 3,
     "GUID 0x0000000000000010 of \"H-10\" is defined twice"},
    {"Switch 8 \"\"\n", 1, "empty node id"},
    {"Switch 8 \"a\"\n[1] \"b\"[1]\n\nSwitch 8 \"b\"\n[1] \"a\"[2]\n", 5, "contradicts line 2"},
    {"Hca 2 \"h\"\n[3] \"a\"[1]\n", 2, "port 3 is out of range"},
    {"Switch 256 \"a\"\n", 1, "a node has 1 to 255 ports, not 256"},
    {"Switch 255 \"a\"\n[256] \"b\"[1]\n", 2, "port 256 is beyond the limit of 255 ports"},
    {"Switch 255 \"a\"\n[255] \"b\"[256]\n", 2, "peer port 256 is beyond the limit of 255"},
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
        assert_string_equal(d.file, "inline.net");
    }
}

static void roundtrip(const nf_fabric *f, const char *what);

/* A switch of 255 ports (the most a node has: port numbers are 8 bits) cabled by its last port
 * to one of 144 ports, read and written back alike. */
static void test_big_switches(void **state) {
    (void)state;
    const char *text = "Switch 255 \"big\"\n[255] \"mid\"[144]\n[1] \"h\"[1]\n\n"
                       "Switch 144 \"mid\"\n[144] \"big\"[255]\n\n"
                       "Hca 1 \"h\"\n[1] \"big\"[1]\n";
    warns w = {0};
    nf_fabric *f = NULL;
    nf_diag d = {0};
    if (parse_str(text, &w, &f, &d)) fail_msg("line %d: %s", d.line, d.msg);
    nf_node big = by_name(f, "big"), mid = by_name(f, "mid");
    assert_int_equal(f->nports[big], 255);
    assert_int_equal(f->nports[mid], 144);
    expect_link(f, big, 255, mid, 144);
    roundtrip(f, "big switches");
    nf_fabric_free(f);
}

/* Links written on one side only. ibsim itself refuses such a net file (its connect step fails:
 * "remote port 3 in node "b" is not connected to node "a" port 1", or "can't find remote node"),
 * so the reader does too, naming the first such line and the counts; with partial it keeps the
 * one-sided links, skips those to nodes with no block, and warns once per kind with the line of
 * the first. Ends that name different peers are an error either way. */
static void expect_refused(const char *text, int line, const char *want) {
    warns w = {0};
    nf_fabric *f = (nf_fabric *)1;
    nf_diag d = {0};
    int rc = parse_str(text, &w, &f, &d);
    if (rc != NF_EPARSE || d.line != line || !strstr(d.msg, want))
        fail_msg("rc %d line %d msg '%s'; wanted line %d and '%s'", rc, d.line, d.msg, line, want);
    assert_null(f);
    assert_string_equal(d.file, "inline.net");
    assert_int_equal(w.count, 0);
}

static nf_fabric *expect_partial(const char *text, uint32_t links, int warnings,
                                 const char *first) {
    warns w = {0};
    nf_fabric *f = NULL;
    nf_diag d = {0};
    if (parse_partial(text, &w, &f, &d)) fail_msg("partial read: line %d: %s", d.line, d.msg);
    assert_int_equal(nf_fabric_check(f, NULL), 0);
    assert_int_equal(f->n_links, links);
    assert_int_equal(w.count, warnings);
    if (!strstr(w.first, first)) fail_msg("first warning '%s' lacks '%s'", w.first, first);
    return f;
}

static void test_one_sided(void **state) {
    (void)state;
    /* b's port 3 has no line: a[1] - b[3] is written by a only */
    const char *absent = "Switch 4 \"a\"\n[1] \"b\"[3]\n\n"
                         "Switch 4 \"b\"\n[1] \"c\"[1]\n\n"
                         "Switch 4 \"c\"\n[1] \"b\"[1]\n";
    expect_refused(absent, 2,
                   "link \"a\"[1] - \"b\"[3] is not listed by its other end; 1 link is listed by "
                   "one end only and 0 to nodes with no block: ibsim would refuse this net file");
    nf_fabric *f = expect_partial(
        absent, 2, 1, "inline.net:2: partial file: 1 link listed by one end only, kept");
    nf_node a = by_name(f, "a"), b = by_name(f, "b"), c = by_name(f, "c");
    expect_link(f, a, 1, b, 3);
    expect_link(f, b, 1, c, 1);
    nf_fabric_free(f);

    /* two of them, the first on line 3: counted in one warning */
    const char *two = "Switch 4 \"a\"\n[2] \"c\"[2]\n[1] \"b\"[3]\n\n"
                      "Switch 4 \"b\"\n[1] \"c\"[1]\n\n"
                      "Switch 4 \"c\"\n[1] \"b\"[1]\n[2] \"a\"[2]\n[4] \"b\"[4]\n";
    expect_refused(two, 3, "2 links are listed by one end only");
    f = expect_partial(two, 4, 1, "inline.net:3: partial file: 2 links listed by one end only");
    expect_link(f, by_name(f, "c"), 4, by_name(f, "b"), 4);
    nf_fabric_free(f);

    /* b's port 3 names another peer (c, which names it back): contradicting ends, line 5 against
     * line 2, partial or not */
    const char *other = "Switch 4 \"a\"\n[1] \"b\"[3]\n\n"
                        "Switch 4 \"b\"\n[3] \"c\"[1]\n\n"
                        "Switch 4 \"c\"\n[1] \"b\"[3]\n";
    const char *contra = "link \"b\"[3] - \"c\"[1] contradicts line 2: \"a\"[1] - \"b\"[3]";
    expect_refused(other, 5, contra);
    warns w = {0};
    nf_diag d = {0};
    f = (nf_fabric *)1;
    assert_int_equal(parse_partial(other, &w, &f, &d), NF_EPARSE);
    assert_null(f);
    assert_int_equal(d.line, 5);
    assert_non_null(strstr(d.msg, contra));

    /* a peer without a block of its own */
    const char *gone =
        "Switch 8 \"a\"\n[1] \"gone\"[1]\n[2] \"h\"[1]\n\nHca 1 \"h\"\n[1] \"a\"[2]\n";
    expect_refused(gone, 2,
                   "the peer of \"a\"[1], \"gone\", has no node block; 0 links are "
                   "listed by one end only and 1 to nodes with no block");
    f = expect_partial(gone, 1, 1, "inline.net:2: partial file: 1 link to nodes with no block");
    nf_fabric_free(f);
}

/* ---- writing ------------------------------------------------------------------------------- */

static void roundtrip(const nf_fabric *f, const char *what) {
    size_t len;
    char *text = write_str(f, &len);
    warns w = {0};
    nf_fabric *g = NULL;
    nf_diag d = {0};
    if (parse_str(text, &w, &g, &d)) fail_msg("%s: re-parse: line %d: %s", what, d.line, d.msg);
    assert_int_equal(w.count, 0);
    assert_int_equal(nf_fabric_check(g, NULL), 0);
    /* what the format promises: nodes, GUIDs, names, ports, links; and in fact LIDs, widths and
     * speeds too */
    if (!nf_fabric_equal(f, g, false, false, &d)) fail_msg("%s: %s", what, d.msg);
    if (!nf_fabric_equal(f, g, true, true, &d)) fail_msg("%s: %s", what, d.msg);
    free(text);
    nf_fabric_free(g);
}

static const char *const real_dumps[] = {
    "nvidia-topograph-ndr-superpod.ibnet",
    "switchib-edr-6sw-96hca.ibnet",
    "stage-sx6036-fdr10.ibnet",
    "psmn-x5-voltaire-qdr.ibnet",
    "nvidia-kb-ufm-lab-edr-fdr.ibnet",
    "rdma-core-manpage-voltaire-2007.ibnet",
    "fattree-k4-n3.synthetic.ibnet",
};

static void test_roundtrip(void **state) {
    (void)state;
    for (size_t i = 0; i < sizeof real_dumps / sizeof real_dumps[0]; i++) {
        warns w = {0};
        nf_fabric *f = must_load(NF_FABRICS_DIR, real_dumps[i], NF_FMT_IBNET, &w);
        roundtrip(f, real_dumps[i]);
        nf_fabric_free(f);
    }
    warns w = {0};
    nf_fabric *f = must_load(NF_TEST_DATA, "small.net", NF_FMT_IBSIM, &w);
    roundtrip(f, "small.net");
    nf_fabric_free(f);
    if (have_examples())
        for (size_t i = 0; i < sizeof examples / sizeof examples[0]; i++) {
            f = must_load(IBSIM_EXAMPLES, examples[i].file, NF_FMT_IBSIM, &w);
            roundtrip(f, examples[i].file);
            nf_fabric_free(f);
        }
}

static void test_writer_format(void **state) {
    (void)state;
    warns w = {0};
    nf_fabric *f = must_load(NF_TEST_DATA, "small.net", NF_FMT_IBSIM, &w);
    size_t len;
    char *text = write_str(f, &len);
    assert_non_null(
        strstr(text, "\nSwitch\t8 \"S-0200000000000000\"\t\t# \"sw-a\" base port 0 lid 0 lmc 0\n"
                     "[1]\t\"H-0200000000000001\"[1](200000000000001)  w=2\t\t# \"hca-1\" lid 0\n"
                     "[2]\t\"H-0000000000001234\"[1](1234)  w=8\t\t# \"second host\" lid 0\n"
                     "[3]\t\"S-00000000000000b0\"[1] s=2\t\t# \"spine b\" lid 0\n"));
    assert_non_null(strstr(
        text, "\nHca\t1 \"H-0000000000001234\"\t\t# \"second host\"\n"
              "[1](1234) \t\"S-0200000000000000\"[2] w=8\t\t# lid 0 lmc 0 \"sw-a\" lid 0\n"));
    /* the GUIDs in key lines, which ibsim reads (else it numbers the nodes itself) */
    assert_non_null(
        strstr(text, "\n\nswitchguid=0x0200000000000000\nSwitch\t8 \"S-0200000000000000\""));
    assert_non_null(strstr(text, "\n\ncaguid=0x0000000000001234\nHca\t1 \"H-0000000000001234\""));
    assert_non_null(strstr(text, "\n\nswitchguid=0x00000000000000b0\nSwitch\t"));
    assert_null(strstr(text, "vendid="));
    assert_int_equal(nf_io_detect(text, len), NF_FMT_IBSIM);
    free(text);
    FILE *ro = fopen("/dev/null", "r");
    assert_non_null(ro);
    assert_int_equal(nf_ibsim_write(f, ro), NF_EIO);
    fclose(ro);
    nf_fabric_free(f);
}

/* ibsim reads lines of at most 255 bytes; a cut header line would end the block. Long names are
 * trimmed (to 190 bytes in headers, 64 in port comments), and '=' is kept out of port lines. */
static void test_writer_line_limits(void **state) {
    (void)state;
    char name[301];
    memset(name, 'n', 300);
    name[300] = '\0';
    name[10] = '=';
    nf_builder *b = nf_builder_new(0, 0);
    nf_node s, c;
    assert_int_equal(nf_builder_add_node(b, NF_NODE_SWITCH, 255,
                                         &(nf_node_attr){.guid = ~0ULL, .name = name, .lid = 65535},
                                         &s),
                     0);
    assert_int_equal(nf_builder_add_node(b, NF_NODE_CA, 255, &(nf_node_attr){.name = name}, &c), 0);
    assert_int_equal(nf_builder_connect(b, s, 255, c, 255,
                                        &(nf_link_attr){.width = 12, .speed = NF_SPEED_FDR10}),
                     0);
    nf_fabric *f;
    assert_int_equal(nf_builder_freeze(b, false, &f), 0);
    nf_builder_free(b);
    size_t len;
    char *text = write_str(f, &len);
    size_t longest = 0, start = 0;
    for (size_t i = 0; i < len; i++) {
        if (text[i] != '\n') continue;
        if (i - start > longest) longest = i - start;
        if (text[start] == '[') assert_null(memchr(text + start, '=', i - start));
        start = i + 1;
    }
    assert_true(longest < 256);
    nf_fabric *g;
    nf_diag d;
    assert_int_equal(nf_ibsim_parse(text, len, "long", NULL, &g, &d), 0);
    assert_int_equal(strlen(nf_node_name(g, 0)), 190);
    assert_int_equal(memcmp(nf_node_name(g, 0), name, 190), 0);
    assert_int_equal(g->link_speed[0], NF_SPEED_FDR10);
    assert_int_equal(g->link_width[0], 12);
    free(text);
    nf_fabric_free(g);
    nf_fabric_free(f);
}

/* GUID key lines: "switchguid=G" / "caguid=G" give the next node, if its id is bare, GUID G. Our
 * written files read back with every GUID from the key lines alone (ids made bare). */
static void test_key_line_guids(void **state) {
    (void)state;
    static const char text[] = "switchguid=0x0002c90000000a01\n"
                               "Switch\t2 \"sw\"\n"
                               "[1]\t\"h1\"[1]\n"
                               "[2]\t\"h2\"[1]\n"
                               "\n"
                               "caguid=0x0002c90000000b00\n"
                               "Hca\t1 \"h1\"\n"
                               "[1]\t\"sw\"[1]\n"
                               "\n"
                               "caguid=0x0002c90000000c00\n"
                               "Hca\t1 \"h2\"\n"
                               "[1]\t\"sw\"[2]\n";
    warns w = {0};
    nf_fabric *f = NULL;
    nf_diag d = {0};
    if (parse_str(text, &w, &f, &d)) fail_msg("line %d: %s", d.line, d.msg);
    assert_int_equal(w.count, 0);
    assert_int_equal(f->n_nodes, 3);
    nf_node sw = nf_fabric_find_guid(f, 0x0002c90000000a01ULL),
            h1 = nf_fabric_find_guid(f, 0x0002c90000000b00ULL),
            h2 = nf_fabric_find_guid(f, 0x0002c90000000c00ULL);
    assert_true(sw != NF_NONE && h1 != NF_NONE && h2 != NF_NONE);
    assert_int_equal(f->peer[nf_port_index(f, sw, 1)], h1);
    assert_int_equal(f->peer[nf_port_index(f, sw, 2)], h2);
    nf_fabric_free(f);

    /* a real dump written, its ids made bare ("S-0002..." -> "Sx0002..."): the key lines
     * alone bring every GUID back, and the links with them */
    f = must_load(NF_FABRICS_DIR, "switchib-edr-6sw-96hca.ibnet", NF_FMT_IBNET, &w);
    size_t len;
    char *out = write_str(f, &len);
    for (char *p = out; (p = strstr(p, "\"S-")) != NULL;)
        p[2] = 'x';
    for (char *p = out; (p = strstr(p, "\"H-")) != NULL;)
        p[2] = 'x';
    nf_fabric *g = NULL;
    if (parse_str(out, &w, &g, &d)) fail_msg("re-parse: line %d: %s", d.line, d.msg);
    assert_int_equal(w.count, 0);
    assert_int_equal(g->n_nodes, f->n_nodes);
    for (nf_node n = 0; n < f->n_nodes; n++) {
        nf_node m = nf_fabric_find_guid(g, f->guid[n]);
        assert_int_not_equal(m, NF_NONE);
        for (unsigned p = 1; p <= f->nports[n]; p++) {
            nf_node q = f->peer[nf_port_index(f, n, p)];
            nf_node r = g->peer[nf_port_index(g, m, p)];
            assert_int_equal(q == NF_NONE ? 0 : f->guid[q], r == NF_NONE ? 0 : g->guid[r]);
        }
    }
    free(out);
    nf_fabric_free(g);
    nf_fabric_free(f);
}

/* ---- ibsim reads what we write ------------------------------------------------------------- */

/* Runs ibsim on our file with the console commands "Dump" and "quit" (no kernel, no umad: the
 * network is not started), then checks every node header and port line of its dump against f. */
static void check_ibsim_reads(const nf_fabric *f, const char *what, bool expect_no_warnings) {
    char path[] = "/tmp/netfab-ibsim-XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    FILE *fp = fdopen(fd, "w");
    assert_non_null(fp);
    assert_int_equal(nf_ibsim_write(f, fp), 0);
    fclose(fp);
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "printf 'Dump\\nquit\\n' | timeout 60 " IBSIM_BIN " %s 2>&1", path);
    FILE *p = popen(cmd, "r");
    assert_non_null(p);
    char line[1024];
    unsigned nodes = 0, linked = 0, warnings = 0, dumped = 0;
    nf_node cur = NF_NONE;
    while (fgets(line, sizeof line, p)) {
        char kind[16];
        unsigned nports, port, pport;
        unsigned long long guid, pguid;
        if (strstr(line, "ibwarn") || strstr(line, "ibpanic")) warnings++;
        const char *dn = strstr(line, "#  dumped ");
        if (dn && sscanf(dn, "#  dumped %u nodes", &dumped) == 1) continue;
        /* ibsim's node GUID (nodeguid) is ours, from the key line; the id spells it too */
        unsigned long long nodeguid;
        if (sscanf(line, "%15s %u \"%*[SH]-%llx\"\tnodeguid %llx", kind, &nports, &guid,
                   &nodeguid) == 4) {
            cur = nf_fabric_find_guid(f, guid);
            if (cur == NF_NONE)
                fail_msg("%s: ibsim has a node with unknown id GUID %llx", what, guid);
            if (nodeguid != guid)
                fail_msg("%s: ibsim gave node %llx the GUID %llx", what, guid, nodeguid);
            assert_int_equal(nports, f->nports[cur]);
            assert_int_equal(strcmp(kind, "Switch") == 0, nf_is_switch(f, cur));
            nodes++;
        } else if (sscanf(line, "%llx\t[%u]\t\"%*[SH]-%llx\"[%u]", &guid, &port, &pguid, &pport) ==
                       4 &&
                   cur != NF_NONE) {
            nf_gport g = nf_port_index(f, cur, port);
            assert_int_equal(f->peer[g], nf_fabric_find_guid(f, pguid));
            assert_int_equal(f->peer_port[g], pport);
            linked++;
        }
    }
    int status = pclose(p);
    unlink(path);
    assert_int_equal(status, 0);
    assert_int_equal(dumped, f->n_nodes);
    assert_int_equal(nodes, f->n_nodes);
    nf_fabric_counts c;
    nf_fabric_count(f, &c);
    assert_int_equal(linked, c.ports_used + c.endpoint_ports);
    if (expect_no_warnings) assert_int_equal(warnings, 0);
}

static void test_ibsim_reads_our_output(void **state) {
    (void)state;
    if (access(IBSIM_BIN, X_OK) != 0) skip();
    warns w = {0};
    /* EDR fabrics with self-loops, a DDR link and 2-port CAs wired on port 2 */
    nf_fabric *f = must_load(NF_FABRICS_DIR, "nvidia-kb-ufm-lab-edr-fdr.ibnet", NF_FMT_IBNET, &w);
    check_ibsim_reads(f, "kb", true);
    nf_fabric_free(f);
    f = must_load(NF_FABRICS_DIR, "switchib-edr-6sw-96hca.ibnet", NF_FMT_IBNET, &w);
    check_ibsim_reads(f, "switchib", true);
    nf_fabric_free(f);
    /* ibsim 0.10 warns about the NDR speed token but reads the fabric */
    f = must_load(NF_FABRICS_DIR, "nvidia-topograph-ndr-superpod.ibnet", NF_FMT_IBNET, &w);
    check_ibsim_reads(f, "superpod", false);
    nf_fabric_free(f);
    f = must_load(NF_TEST_DATA, "small.net", NF_FMT_IBSIM, &w);
    check_ibsim_reads(f, "small.net", false); /* no speeds known: ibsim says so */
    nf_fabric_free(f);
}

/* ---- allocation failures ------------------------------------------------------------------- */

static void test_allocation_failures(void **state) {
    (void)state;
    long failures;
    nf_fabric *f = alloc_sweep(sweep_load_file, NF_TEST_DATA "/small.net", NULL, &failures);
    assert_int_equal(f->n_links, 4);
    assert_int_equal(nf_fabric_check(f, NULL), 0);
    nf_fabric_free(f);
    assert_true(failures > 30);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_debian_examples),
        cmocka_unit_test(test_debian_net_details),
        cmocka_unit_test(test_fixture),
        cmocka_unit_test(test_malformed),
        cmocka_unit_test(test_big_switches),
        cmocka_unit_test(test_one_sided),
        cmocka_unit_test(test_roundtrip),
        cmocka_unit_test(test_writer_format),
        cmocka_unit_test(test_writer_line_limits),
        cmocka_unit_test(test_key_line_guids),
        cmocka_unit_test(test_ibsim_reads_our_output),
        cmocka_unit_test(test_allocation_failures),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
