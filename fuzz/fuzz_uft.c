/* SPDX-License-Identifier: MIT */
/* libFuzzer target: the forwarding-table reader (uft.h) on arbitrary bytes, against the fabric the
 * captured tables of tests/data/real belong to (xgft:h=2,m=12.2,w=1.2, as netfab builds it). A
 * table that reads must survive nf_uft_check and be written and read back unchanged. */
#include "netfab/gen.h"
#include "netfab/uft.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    static nf_fabric *f; /* built once: the fuzzer calls this millions of times */
    if (!f && nf_topo_build("xgft:h=2,m=12.2,w=1.2", NULL, &f, NULL)) abort();
    nf_uft *t = NULL;
    nf_diag d;
    if (nf_uft_parse(f, (const char *)data, size, "fuzz", NULL, NULL, &t, &d) != NF_OK) {
        if (t) abort(); /* a failed parse must leave *out NULL */
        return 0;
    }
    for (unsigned flags = 0; flags <= NF_UFT_CHECK_SWITCH_LIDS; flags++) {
        nf_uft_report r;
        if (nf_uft_check(t, flags, &r, &d) != NF_OK) abort();
        if (r.delivered + r.holes + r.dead_ports + r.loops + r.misrouted != r.routes) abort();
        nf_uft_report_fini(&r);
    }
    char *text = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&text, &len);
    if (!m || nf_uft_write(t, m) != NF_OK) abort();
    fclose(m);
    nf_uft *u = NULL;
    if (nf_uft_parse(f, text, len, "fuzz-rewritten", NULL, NULL, &u, &d) != NF_OK) abort();
    for (nf_node s = 0; s < f->n_switches; s++)
        for (unsigned l = 0; l <= nf_uft_top_lid(t); l++)
            if (nf_uft_get(t, s, (uint16_t)l) != nf_uft_get(u, s, (uint16_t)l)) abort();
    free(text);
    nf_uft_free(u);
    nf_uft_free(t);
    return 0;
}
