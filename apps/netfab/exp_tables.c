/* SPDX-License-Identifier: MIT */
/* `netfab exp tables`: the Sunway paper's two-level routing tables. For TaihuLight-shaped fabrics
 * of 512, 40,960 and 262,144 endpoints (taihulight:sn=2, 160, 1024: supernodes of 256), the table
 * memory of one router port and of the whole fabric, flat vs two-level, and every lookup the
 * two-level tables answer compared with the flat table's entry (nf_lft_check; at 262,144
 * endpoints only without --quick). */
#include "cmd.h"
#include "exp.h"
#include "netfab/gen.h"
#include "netfab/hops.h"
#include "netfab/lft.h"

#include <stdio.h>

int exp_tables(const exp_opts *o, json_t *rows) {
    static const struct {
        const char *topo;
        bool check_quick;
    } fabrics[] = {{"taihulight:sn=2", true}, {"taihulight", true}, {"taihulight:sn=1024", false}};
    for (size_t i = 0; i < sizeof fabrics / sizeof fabrics[0]; i++) {
        exp_progress((double)i / 3, "tables: %s", fabrics[i].topo);
        double t0 = nf_app_now();
        nf_fabric *f;
        nf_hops *h;
        int rc = nf_app_fabric(fabrics[i].topo, o->threads, &f, &h);
        if (rc) return rc;
        nf_lft *t;
        nf_diag d = {{0}, 0, {0}};
        if ((rc = nf_lft_build(f, h, o->threads, &t, &d))) {
            nf_hops_free(h);
            nf_fabric_free(f);
            return nf_app_report(rc, &d);
        }
        double t1 = nf_app_now();
        nf_lft_memory m;
        nf_lft_memory_of(t, &m);
        json_t *row =
            json_pack("{s:s, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:f}", "fabric",
                      fabrics[i].topo, "endpoints", (json_int_t)m.endpoints, "supernodes",
                      (json_int_t)m.supernodes, "supernode_endpoints", (json_int_t)m.intra_max,
                      "entry_bytes", (json_int_t)m.entry_ports, "port_tables",
                      (json_int_t)m.table_ports, "flat_table_bytes", (json_int_t)m.flat_table_bytes,
                      "two_level_table_bytes", (json_int_t)m.two_level_table_bytes, "flat_bytes",
                      (json_int_t)m.flat_bytes, "two_level_bytes", (json_int_t)m.two_level_bytes,
                      "saved", 1.0 - (double)m.two_level_bytes / (double)m.flat_bytes);
        json_object_set_new(row, "build_s", json_real(t1 - t0));
        if (!o->quick || fabrics[i].check_quick) {
            exp_progress((i + 0.5) / 3, "tables: %s: checking every lookup", fabrics[i].topo);
            uint64_t looked, bad;
            if ((rc = nf_lft_check(t, o->threads, &looked, &bad, &d))) {
                nf_lft_free(t);
                nf_hops_free(h);
                nf_fabric_free(f);
                return nf_app_report(rc, &d);
            }
            if (bad) fprintf(stderr, "netfab exp: tables: %s: %s\n", fabrics[i].topo, d.msg);
            json_object_set_new(row, "lookups_checked", json_integer((json_int_t)looked));
            json_object_set_new(row, "mismatches", json_integer((json_int_t)bad));
            json_object_set_new(row, "check_s", json_real(nf_app_now() - t1));
        } else {
            json_object_set_new(row, "lookups_checked", json_integer(0));
            json_object_set_new(row, "mismatches", json_null());
            json_object_set_new(row, "check_s", json_null());
        }
        json_array_append_new(rows, row);
        nf_lft_free(t);
        nf_hops_free(h);
        nf_fabric_free(f);
    }
    return NF_EXIT_OK;
}
