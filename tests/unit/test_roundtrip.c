/* SPDX-License-Identifier: MIT */
/* Every generator's output written as ibnetdiscover text and as an ibsim net file, read back, and
 * compared with the original: the same nodes (by GUID), names, ports, links, and for ibnet the
 * same LIDs, widths and speeds. Also checks format detection on what we write. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "netfab/gen.h"
#include "netfab/io.h"

#include <stdio.h>
#include <stdlib.h>

static const char *const specs[] = {
    "fattree:k=4",
    "fattree:k=8",
    "xgft:h=3,m=4.4.6,w=1.2.2",
    "torus:4x3x2,c=2",
    "torus:5,c=1",
    "dragonfly:a=4,p=2,h=2",
    "dragonfly:a=6,p=3,h=3,arr=consecutive",
    "dragonfly:a=4,p=2,h=2,g=5",
    "gft:preset=sunway-proto",
    "gft:leaves=4,nodes=3,spines=2,links=2,sib=2,rails=1,radix=16",
    "bluelight",
    "taihulight",
    "dragonfly:a=18,p=9,h=9",
    "torus:30x20x20,c=2",
};

static char *write_to_memory(const nf_fabric *f, nf_format fmt, size_t *len) {
    char *buf = NULL;
    FILE *mem = open_memstream(&buf, len);
    assert_non_null(mem);
    assert_int_equal(nf_io_write(f, fmt, mem), 0);
    assert_int_equal(fclose(mem), 0);
    return buf;
}

static void round_trip(nf_format fmt, bool lids_and_attrs) {
    for (size_t i = 0; i < sizeof specs / sizeof specs[0]; i++) {
        nf_fabric *f, *g;
        nf_diag d;
        int rc = nf_topo_build(specs[i], NULL, &f, &d);
        if (rc) fail_msg("%s: %s", specs[i], d.msg);
        size_t len;
        char *text = write_to_memory(f, fmt, &len);
        assert_int_equal(nf_io_detect(text, len), fmt);
        rc = nf_io_parse(text, len, NF_FMT_AUTO, specs[i], NULL, &g, &d);
        if (rc) fail_msg("%s as %s: line %d: %s", specs[i], nf_format_name(fmt), d.line, d.msg);
        assert_int_equal(nf_fabric_check(g, NULL), 0);
        /* link classes are not part of either file format; compare widths and speeds by hand */
        if (!nf_fabric_equal(f, g, lids_and_attrs, false, &d))
            fail_msg("%s as %s: %s", specs[i], nf_format_name(fmt), d.msg);
        if (lids_and_attrs)
            for (nf_link l = 0; l < f->n_links; l++) {
                nf_node m = nf_fabric_find_guid(g, f->guid[f->link_a[l]]);
                nf_link k = g->port_link[nf_port_index(g, m, f->link_pa[l])];
                assert_int_equal(f->link_width[l], g->link_width[k]);
                assert_int_equal(f->link_speed[l], g->link_speed[k]);
            }
        /* and once more: writing the re-read fabric gives the same bytes */
        size_t len2;
        char *text2 = write_to_memory(g, fmt, &len2);
        if (fmt == NF_FMT_IBSIM || lids_and_attrs) {
            assert_int_equal(len, len2);
            assert_memory_equal(text, text2, len);
        }
        free(text);
        free(text2);
        nf_fabric_free(f);
        nf_fabric_free(g);
    }
}

static void test_ibnet_round_trip(void **state) {
    (void)state;
    round_trip(NF_FMT_IBNET, true);
}

static void test_ibsim_round_trip(void **state) {
    (void)state;
    round_trip(NF_FMT_IBSIM, false);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_ibnet_round_trip),
        cmocka_unit_test(test_ibsim_round_trip),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
