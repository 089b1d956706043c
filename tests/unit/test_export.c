/* SPDX-License-Identifier: MIT */
/* The write-only exports: Graphviz dot (shapes, port labels, colours by link class, escaping)
 * and netfab JSON (read back with jansson and checked field by field). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "netfab/export.h"
#include "netfab/io.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static nf_fabric *load_kb(void) {
    nf_fabric *f = NULL;
    nf_diag d = {0};
    if (nf_io_load(NF_FABRICS_DIR "/nvidia-kb-ufm-lab-edr-fdr.ibnet", NF_FMT_IBNET, NULL, &f, &d))
        fail_msg("%s:%d: %s", d.file, d.line, d.msg);
    return f;
}

typedef int (*writer_fn)(const nf_fabric *, FILE *);

static char *write_str(const nf_fabric *f, writer_fn fn, size_t *len) {
    char *buf = NULL;
    FILE *m = open_memstream(&buf, len);
    assert_non_null(m);
    assert_int_equal(fn(f, m), 0);
    fclose(m);
    return buf;
}

static unsigned count(const char *text, const char *needle) {
    unsigned n = 0;
    for (const char *p = text; (p = strstr(p, needle)); p += strlen(needle))
        n++;
    return n;
}

/* A switch with a quote and a backslash in its name, a nameless CA, one host link (down) and one
 * global link to a second switch with an unknown speed. */
static nf_fabric *build_odd(void) {
    nf_builder *b = nf_builder_new(0, 0);
    nf_node s, t, c;
    assert_int_equal(
        nf_builder_add_node(
            b, NF_NODE_SWITCH, 4,
            &(nf_node_attr){
                .guid = 0x10, .name = "a\"b\\c", .supernode = 3, .level = 2, .plane = 1},
            &s),
        0);
    assert_int_equal(
        nf_builder_add_node(b, NF_NODE_SWITCH, 4,
                            &(nf_node_attr){.guid = 0x11, .name = "caf\xe9", .supernode = -1}, &t),
        0);
    assert_int_equal(
        nf_builder_add_node(b, NF_NODE_CA, 2, &(nf_node_attr){.guid = 0x20, .supernode = -1}, &c),
        0);
    assert_int_equal(
        nf_builder_connect(b, c, 2, s, 1,
                           &(nf_link_attr){.cls = NF_LINK_HOST, .width = 4, .speed = NF_SPEED_HDR}),
        0);
    assert_int_equal(
        nf_builder_connect(b, s, 2, t, 3, &(nf_link_attr){.cls = NF_LINK_GLOBAL, .plane = 1}), 0);
    nf_fabric *f;
    assert_int_equal(nf_builder_freeze(b, true, &f), 0);
    nf_builder_free(b);
    nf_fabric_set_link_state(f, f->port_link[nf_port_index(f, 2, 2)], NF_LINK_DOWN);
    return f;
}

static void test_dot_kb(void **state) {
    (void)state;
    nf_fabric *f = load_kb();
    size_t len;
    char *text = write_str(f, nf_dot_write, &len);
    assert_int_equal(strncmp(text, "graph fabric {\n", 15), 0);
    assert_int_equal(strcmp(text + len - 2, "}\n"), 0);
    assert_int_equal(count(text, " -- "), 10);
    assert_int_equal(count(text, "shape=box"), 2);
    assert_int_equal(count(text, "shape=ellipse"), 6);
    assert_int_equal(count(text, "color=\"gray50\""), 6); /* host links */
    assert_int_equal(count(text, "color=\"black\""), 4);  /* the ISL and three loop-backs */
    assert_int_equal(count(text, "style=dashed"), 0);
    /* switch 0 is the SwitchIB (first in the file): its loop-back 1-2 */
    assert_string_equal(nf_node_name(f, 0), "SwitchIB Mellanox Technologies");
    assert_non_null(strstr(text, "  n0 [shape=box label=\"SwitchIB Mellanox Technologies\" "
                                 "tooltip=\"0xe41d2d030003e470 lid 268\"];\n"));
    assert_non_null(
        strstr(text, "  n0 -- n0 [taillabel=\"1\" headlabel=\"2\" color=\"black\"];\n"));
    assert_non_null(
        strstr(text, "  n0 -- n1 [taillabel=\"3\" headlabel=\"1\" color=\"black\"];\n"));
    free(text);
    nf_fabric_free(f);
}

static void test_dot_escaping_and_classes(void **state) {
    (void)state;
    nf_fabric *f = build_odd();
    size_t len;
    char *text = write_str(f, nf_dot_write, &len);
    assert_non_null(strstr(text, "label=\"a\\\"b\\\\c\""));
    /* a name that is not UTF-8 (Latin-1 e-acute): its byte above ASCII as '?' */
    assert_non_null(strstr(text, "n1 [shape=box label=\"caf?\""));
    assert_non_null(
        strstr(text, "n2 [shape=ellipse label=\"0x0000000000000020\"")); /* unnamed: GUID */
    assert_non_null(strstr(
        text, "n2 -- n0 [taillabel=\"2\" headlabel=\"1\" color=\"gray50\" style=dashed];\n"));
    assert_non_null(strstr(text, "n0 -- n1 [taillabel=\"2\" headlabel=\"3\" color=\"red\"];\n"));
    FILE *ro = fopen("/dev/null", "r");
    assert_int_equal(nf_dot_write(f, ro), NF_EIO);
    assert_int_equal(nf_json_write(f, ro), NF_EIO);
    fclose(ro);
    free(text);
    nf_fabric_free(f);
}

static json_t *load_json(const char *text, size_t len) {
    json_error_t err;
    json_t *root = json_loadb(text, len, 0, &err);
    if (!root) fail_msg("JSON does not parse: line %d: %s", err.line, err.text);
    return root;
}

static void test_json_kb(void **state) {
    (void)state;
    nf_fabric *f = load_kb();
    size_t len;
    char *text = write_str(f, nf_json_write, &len);
    json_t *root = load_json(text, len);
    assert_string_equal(json_string_value(json_object_get(root, "format")), "netfab-fabric");
    assert_int_equal(json_integer_value(json_object_get(root, "version")), 1);
    assert_int_equal(json_integer_value(json_object_get(root, "switches")), 2);
    assert_int_equal(json_integer_value(json_object_get(root, "cas")), 6);
    json_t *nodes = json_object_get(root, "nodes"), *links = json_object_get(root, "links");
    assert_int_equal(json_array_size(nodes), 8);
    assert_int_equal(json_array_size(links), 10);
    /* every node's id is its index; the SwitchIB is node 0 */
    for (size_t i = 0; i < json_array_size(nodes); i++)
        assert_int_equal(json_integer_value(json_object_get(json_array_get(nodes, i), "id")), i);
    json_t *n0 = json_array_get(nodes, 0);
    assert_string_equal(json_string_value(json_object_get(n0, "kind")), "switch");
    assert_string_equal(json_string_value(json_object_get(n0, "guid")), "0xe41d2d030003e470");
    assert_string_equal(json_string_value(json_object_get(n0, "name")),
                        "SwitchIB Mellanox Technologies");
    assert_int_equal(json_integer_value(json_object_get(n0, "lid")), 268);
    assert_int_equal(json_integer_value(json_object_get(n0, "ports")), 36);
    assert_int_equal(json_integer_value(json_object_get(n0, "supernode")), -1);
    assert_int_equal(json_integer_value(json_object_get(n0, "level")), 0);
    assert_int_equal(json_integer_value(json_object_get(n0, "plane")), 0);
    nf_node ca = nf_fabric_find_guid(f, 0x2c903003421b0ULL);
    json_t *nc = json_array_get(nodes, ca);
    assert_string_equal(json_string_value(json_object_get(nc, "kind")), "ca");
    assert_string_equal(json_string_value(json_object_get(nc, "name")), "r-ufm111 HCA-1");
    assert_int_equal(json_integer_value(json_object_get(nc, "ports")), 2);
    /* link 0 is the first loop-back, as listed first in the file */
    json_t *l0 = json_array_get(links, 0);
    assert_int_equal(json_integer_value(json_object_get(l0, "a")), 0);
    assert_int_equal(json_integer_value(json_object_get(l0, "pa")), 1);
    assert_int_equal(json_integer_value(json_object_get(l0, "z")), 0);
    assert_int_equal(json_integer_value(json_object_get(l0, "pz")), 2);
    assert_string_equal(json_string_value(json_object_get(l0, "class")), "local");
    assert_int_equal(json_integer_value(json_object_get(l0, "width")), 4);
    assert_string_equal(json_string_value(json_object_get(l0, "speed")), "EDR");
    assert_int_equal(json_integer_value(json_object_get(l0, "plane")), 0);
    assert_string_equal(json_string_value(json_object_get(l0, "state")), "up");
    unsigned host = 0, sdr = 0;
    for (size_t i = 0; i < json_array_size(links); i++) {
        json_t *l = json_array_get(links, i);
        host += strcmp(json_string_value(json_object_get(l, "class")), "host") == 0;
        sdr += strcmp(json_string_value(json_object_get(l, "speed")), "SDR") == 0;
    }
    assert_int_equal(host, 6);
    assert_int_equal(sdr, 1);
    json_decref(root);
    free(text);
    nf_fabric_free(f);
}

static void test_json_odd(void **state) {
    (void)state;
    nf_fabric *f = build_odd();
    size_t len;
    char *text = write_str(f, nf_json_write, &len);
    json_t *root = load_json(text, len);
    json_t *nodes = json_object_get(root, "nodes"), *links = json_object_get(root, "links");
    json_t *s = json_array_get(nodes, 0), *t = json_array_get(nodes, 1),
           *c = json_array_get(nodes, 2);
    assert_string_equal(json_string_value(json_object_get(s, "name")), "a\"b\\c");
    assert_int_equal(json_integer_value(json_object_get(s, "supernode")), 3);
    assert_int_equal(json_integer_value(json_object_get(s, "level")), 2);
    assert_int_equal(json_integer_value(json_object_get(s, "plane")), 1);
    assert_int_equal(json_integer_value(json_object_get(s, "lid")), 1);
    assert_string_equal(json_string_value(json_object_get(t, "name")), "caf?"); /* not UTF-8 */
    assert_string_equal(json_string_value(json_object_get(c, "name")), "");
    assert_int_equal(json_integer_value(json_object_get(c, "lid")), 3); /* port 1 of the CA */
    json_t *host = json_array_get(links, 0), *global = json_array_get(links, 1);
    assert_string_equal(json_string_value(json_object_get(host, "state")), "down");
    assert_string_equal(json_string_value(json_object_get(host, "speed")), "HDR");
    assert_int_equal(json_integer_value(json_object_get(host, "a")), 2);
    assert_int_equal(json_integer_value(json_object_get(host, "pa")), 2);
    assert_string_equal(json_string_value(json_object_get(global, "class")), "global");
    assert_true(json_is_null(json_object_get(global, "speed")));
    assert_int_equal(json_integer_value(json_object_get(global, "width")), 0);
    assert_int_equal(json_integer_value(json_object_get(global, "plane")), 1);
    json_decref(root);
    free(text);
    nf_fabric_free(f);
}

/* nf_io_write dispatches to the exporters. */
static void test_io_write_dispatch(void **state) {
    (void)state;
    nf_fabric *f = build_odd();
    size_t a_len, b_len;
    char *a = write_str(f, nf_json_write, &a_len), *b = NULL;
    FILE *m = open_memstream(&b, &b_len);
    assert_int_equal(nf_io_write(f, NF_FMT_JSON, m), 0);
    fclose(m);
    assert_int_equal(a_len, b_len);
    assert_memory_equal(a, b, a_len);
    free(a);
    free(b);
    nf_fabric_free(f);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_dot_kb),
        cmocka_unit_test(test_dot_escaping_and_classes),
        cmocka_unit_test(test_json_kb),
        cmocka_unit_test(test_json_odd),
        cmocka_unit_test(test_io_write_dispatch),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
