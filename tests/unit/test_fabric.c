/* SPDX-License-Identifier: MIT */
/* The fabric model: builder errors, the freeze layout (switches first, CSR, O(1) peers), GUID
 * lookup, self-check, equality, counts, speed tokens, and an allocation-failure sweep. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "netfab/fabric.h"
#include "netfab/gen.h"
#include "testutil.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

/* CA "h0" (guid 0x100), switch "sw" (guid 0x200, 4 ports), CA "h1" (0x300, 2 ports):
 * h0[1] - sw[1], sw[2] - h1[2], sw[3] - sw[4] (a loop-back cable). Added CA first on purpose. */
static int build_small(nf_fabric **out) {
    *out = NULL;
    nf_builder *b = nf_builder_new(0, 0);
    if (!b) return NF_ENOMEM;
    nf_node h0, sw, h1;
    int rc;
    if ((rc = nf_builder_add_node(b, NF_NODE_CA, 1,
                                  &(nf_node_attr){.guid = 0x100, .name = "h0", .supernode = -1},
                                  &h0)) ||
        (rc = nf_builder_add_node(b, NF_NODE_SWITCH, 4,
                                  &(nf_node_attr){.guid = 0x200, .name = "sw", .lid = 7}, &sw)) ||
        (rc = nf_builder_add_node(b, NF_NODE_CA, 2, &(nf_node_attr){.guid = 0x300, .name = "h1"},
                                  &h1)) ||
        (rc = nf_builder_connect(
             b, h0, 1, sw, 1,
             &(nf_link_attr){.cls = NF_LINK_HOST, .width = 4, .speed = NF_SPEED_EDR})) ||
        (rc = nf_builder_connect(
             b, sw, 2, h1, 2,
             &(nf_link_attr){.cls = NF_LINK_HOST, .width = 1, .speed = NF_SPEED_SDR})) ||
        (rc = nf_builder_connect(b, sw, 3, sw, 4, &(nf_link_attr){.cls = NF_LINK_LOCAL})) ||
        (rc = nf_builder_set_port(b, h1, 2, 0x302, 12, 1))) {
        nf_builder_free(b);
        return rc;
    }
    rc = nf_builder_freeze(b, false, out);
    nf_builder_free(b);
    return rc;
}

static void test_builder_errors(void **state) {
    (void)state;
    nf_builder *b = nf_builder_new(0, 0);
    nf_node a, z;
    assert_int_equal(nf_builder_add_node(b, NF_NODE_SWITCH, 0, NULL, &a), NF_EINVAL);
    assert_int_equal(nf_builder_add_node(b, NF_NODE_SWITCH, 256, NULL, &a), NF_EINVAL);
    assert_int_equal(nf_builder_add_node(b, NF_NODE_SWITCH, 2, NULL, &a), 0);
    assert_int_equal(nf_builder_add_node(b, NF_NODE_CA, 1, NULL, &z), 0);
    assert_int_equal(nf_builder_connect(b, a, 3, z, 1, NULL), NF_ERANGE);
    assert_int_equal(nf_builder_connect(b, a, 0, z, 1, NULL), NF_ERANGE);
    assert_int_equal(nf_builder_connect(b, a, 1, a, 1, NULL), NF_EINVAL);
    assert_int_equal(nf_builder_connect(b, a, 1, 99, 1, NULL), NF_EINVAL);
    assert_int_equal(nf_builder_connect(b, a, 1, z, 1, NULL), 0);
    assert_int_equal(nf_builder_connect(b, a, 2, z, 1, NULL), NF_EBUSY);
    unsigned pp = 0;
    assert_int_equal(nf_builder_peer(b, z, 1, &pp), a);
    assert_int_equal(pp, 1);
    assert_int_equal(nf_builder_peer(b, a, 2, NULL), NF_NONE);
    nf_builder_free(b);
    nf_builder_free(NULL);
}

static void test_freeze_layout(void **state) {
    (void)state;
    nf_fabric *f;
    assert_int_equal(build_small(&f), 0);
    assert_int_equal(nf_fabric_check(f, NULL), 0);
    assert_int_equal(f->n_switches, 1);
    assert_int_equal(f->n_cas, 2);
    assert_int_equal(f->n_ports, 7);
    assert_int_equal(f->n_links, 3);
    /* switch first, then CAs in insertion order */
    assert_int_equal(f->guid[0], 0x200);
    assert_int_equal(f->guid[1], 0x100);
    assert_int_equal(f->guid[2], 0x300);
    assert_string_equal(nf_node_name(f, 2), "h1");
    assert_int_equal(nf_fabric_find_guid(f, 0x300), 2);
    assert_int_equal(nf_fabric_find_guid(f, 0x301), NF_NONE);
    /* O(1) peers */
    nf_gport g = nf_port_index(f, 0, 2);
    assert_int_equal(f->peer[g], 2);
    assert_int_equal(f->peer_port[g], 2);
    assert_int_equal(f->link_width[f->port_link[g]], 1);
    assert_int_equal(f->peer[nf_port_index(f, 2, 1)], NF_NONE);
    assert_int_equal(f->port_lid[nf_port_index(f, 2, 2)], 12);
    assert_int_equal(f->port_lmc[nf_port_index(f, 2, 2)], 1);
    assert_int_equal(f->port_guid[nf_port_index(f, 2, 2)], 0x302);
    assert_int_equal(f->lid[0], 7);
    /* the loop-back cable is a link but not a CSR neighbour */
    assert_int_equal(f->peer[nf_port_index(f, 0, 3)], 0);
    assert_int_equal(f->sw_adj_off[1] - f->sw_adj_off[0], 0);
    nf_fabric_counts c;
    nf_fabric_count(f, &c);
    assert_int_equal(c.links_by_class[NF_LINK_HOST], 2);
    assert_int_equal(c.links_by_class[NF_LINK_LOCAL], 1);
    assert_int_equal(c.loopback_links, 1);
    assert_int_equal(c.ports_used, 4);
    assert_int_equal(c.ports_total, 4);
    assert_int_equal(c.endpoint_ports, 2);
    nf_fabric_free(f);
}

static void test_assign_lids(void **state) {
    (void)state;
    nf_builder *b = nf_builder_new(0, 0);
    nf_node c, s1, s2;
    assert_int_equal(nf_builder_add_node(b, NF_NODE_CA, 2, NULL, &c), 0);
    assert_int_equal(nf_builder_add_node(b, NF_NODE_SWITCH, 2, NULL, &s1), 0);
    assert_int_equal(nf_builder_add_node(b, NF_NODE_SWITCH, 2, NULL, &s2), 0);
    assert_int_equal(nf_builder_connect(b, c, 1, s1, 1, NULL), 0);
    assert_int_equal(nf_builder_connect(b, c, 2, s2, 1, NULL), 0);
    nf_fabric *f;
    assert_int_equal(nf_builder_freeze(b, true, &f), 0);
    nf_builder_free(b);
    assert_int_equal(nf_fabric_check(f, NULL), 0);
    assert_int_equal(f->lid[0], 1);
    assert_int_equal(f->lid[1], 2);
    assert_int_equal(f->port_lid[nf_port_index(f, 2, 1)], 3);
    assert_int_equal(f->port_lid[nf_port_index(f, 2, 2)], 4);
    assert_int_equal(f->lid[2], 3);
    /* unique automatic GUIDs, port GUIDs distinct on a two-port CA */
    assert_int_not_equal(f->guid[0], f->guid[1]);
    assert_int_not_equal(f->port_guid[nf_port_index(f, 2, 1)],
                         f->port_guid[nf_port_index(f, 2, 2)]);
    nf_fabric_free(f);
}

static void test_check_catches_corruption(void **state) {
    (void)state;
    nf_fabric *f;
    assert_int_equal(build_small(&f), 0);
    nf_diag d;
    nf_gport g = nf_port_index(f, 0, 1);
    f->peer_port[g] = 1; /* still fine: h0 port 1 */
    assert_int_equal(nf_fabric_check(f, &d), 0);
    f->peer[g] = 2; /* now points at h1[1], which does not point back */
    assert_int_equal(nf_fabric_check(f, &d), NF_EINVAL);
    assert_non_null(strstr(d.msg, "does not point back"));
    f->peer[g] = 1;
    f->guid[2] = 0x100; /* duplicate GUID */
    assert_int_equal(nf_fabric_check(f, &d), NF_EINVAL);
    nf_fabric_free(f);
}

static void test_equal(void **state) {
    (void)state;
    nf_fabric *a, *b;
    assert_int_equal(build_small(&a), 0);
    assert_int_equal(build_small(&b), 0);
    nf_diag d;
    assert_true(nf_fabric_equal(a, b, true, true, &d));
    b->link_speed[b->port_link[nf_port_index(b, 0, 1)]] = NF_SPEED_FDR;
    assert_true(nf_fabric_equal(a, b, true, false, &d));
    assert_false(nf_fabric_equal(a, b, true, true, &d));
    assert_non_null(strstr(d.msg, "speed"));
    b->port_lid[nf_port_index(b, 2, 2)] = 13;
    assert_true(nf_fabric_equal(a, b, false, false, &d));
    assert_false(nf_fabric_equal(a, b, true, false, &d));
    nf_fabric_free(b);
    assert_int_equal(build_small(&b), 0);
    b->names[b->name_off[1]] = 'X'; /* rename h0 */
    assert_false(nf_fabric_equal(a, b, false, false, &d));
    assert_non_null(strstr(d.msg, "name"));
    nf_fabric_free(a);
    nf_fabric_free(b);
}

static void test_speed_tokens(void **state) {
    (void)state;
    uint8_t w;
    nf_speed s;
    assert_int_equal(nf_speed_parse("4xEDR", 5, &w, &s), 0);
    assert_int_equal(w, 4);
    assert_int_equal(s, NF_SPEED_EDR);
    assert_int_equal(nf_speed_parse("1xSDR", 5, &w, &s), 0);
    assert_int_equal(s, NF_SPEED_SDR);
    assert_int_equal(nf_speed_parse("4xFDR10", 7, &w, &s), 0);
    assert_int_equal(s, NF_SPEED_FDR10);
    assert_int_equal(nf_speed_parse("4xFDR10", 5, &w, &s), 0); /* length-bounded: "4xFDR" */
    assert_int_equal(s, NF_SPEED_FDR);
    assert_int_equal(nf_speed_parse("12xNDR", 6, &w, &s), 0);
    assert_int_equal(w, 12);
    assert_int_equal(nf_speed_parse("3xEDR", 5, &w, &s), NF_EPARSE);
    assert_int_equal(nf_speed_parse("4xZDR", 5, &w, &s), NF_EPARSE);
    assert_int_equal(nf_speed_parse("xEDR", 4, &w, &s), NF_EPARSE);
    assert_string_equal(nf_speed_name(NF_SPEED_HDR), "HDR");
    assert_string_equal(nf_link_class_name(NF_LINK_SIBLING), "sibling");
    assert_string_equal(nf_strerror(NF_EBUSY), "port already connected");
}

static int attempt_small(void *ctx, nf_fabric **out, nf_diag *d) {
    (void)ctx;
    (void)d;
    return build_small(out);
}

static void test_allocation_failures(void **state) {
    (void)state;
    long failures;
    nf_fabric *f = alloc_sweep(attempt_small, NULL, NULL, &failures);
    assert_int_equal(nf_fabric_check(f, NULL), 0);
    assert_int_equal(f->n_links, 3);
    nf_fabric_free(f);
    assert_true(failures > 20); /* the sweep really went through the builder and the freeze */
}


/* Two fabrics built at once from two threads: the builder keeps no state outside its arguments
 * (its GUID order used to be sorted through a file-static pointer, so two builds at once could
 * sort one fabric by the other's GUIDs). Each build's guid_order must be its own GUIDs ascending. */
typedef struct build_job {
    int torus; /* 0: fat trees, 1: tori */
    int bad;   /* builds whose order was wrong, or that failed */
} build_job;

static void *build_many(void *arg) {
    build_job *j = arg;
    for (int it = 0; it < 40; it++) {
        nf_fabric *f = NULL;
        unsigned dims[3] = {32, 32, 4};
        int rc = j->torus ? nf_gen_torus(3, dims, 1, &f, NULL) : nf_gen_fattree(24, &f, NULL);
        if (rc) {
            j->bad++;
            continue;
        }
        for (nf_node i = 1; i < f->n_nodes; i++)
            if (f->guid[f->guid_order[i - 1]] >= f->guid[f->guid_order[i]]) {
                j->bad++;
                break;
            }
        nf_fabric_free(f);
    }
    return NULL;
}

static void test_two_threads_build(void **state) {
    (void)state;
    build_job a = {.torus = 0}, b = {.torus = 1};
    pthread_t ta, tb;
    assert_int_equal(pthread_create(&ta, NULL, build_many, &a), 0);
    assert_int_equal(pthread_create(&tb, NULL, build_many, &b), 0);
    pthread_join(ta, NULL);
    pthread_join(tb, NULL);
    assert_int_equal(a.bad, 0);
    assert_int_equal(b.bad, 0);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_builder_errors),
        cmocka_unit_test(test_freeze_layout),
        cmocka_unit_test(test_assign_lids),
        cmocka_unit_test(test_check_catches_corruption),
        cmocka_unit_test(test_equal),
        cmocka_unit_test(test_speed_tokens),
        cmocka_unit_test(test_allocation_failures),
        cmocka_unit_test(test_two_threads_build),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
