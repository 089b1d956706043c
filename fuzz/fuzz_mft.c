/* SPDX-License-Identifier: MIT */
/* libFuzzer target: the multicast table reader (netfab/mft.h) and the SA group reader
 * (nf_groups_parse_sa) on arbitrary bytes, against the xgft fabric of tests/data/real (so its
 * captured files are seeds, which fuzz/run.sh takes, with tests/data/mft/). Tables that parse must
 * analyse, write in OpenSM's layout and read back equal; groups that parse must hold ascending CA
 * members under ascending MLIDs. Anything else aborts. */
#include "netfab/gen.h"
#include "netfab/groups.h"
#include "netfab/mft.h"

#include <stdio.h>
#include <stdlib.h>

static void count_warn(void *ud, const char *file, int line, const char *msg) {
    (void)file;
    (void)line;
    *(size_t *)ud += msg[0] != '\0';
}

static const nf_fabric *fabric(void) {
    static nf_fabric *f;
    nf_diag d;
    if (!f && nf_topo_build("xgft:h=2,m=12.2,w=1.2", NULL, &f, &d) != NF_OK) abort();
    return f;
}

static void tables(const nf_fabric *f, const char *text, size_t size) {
    size_t warnings = 0;
    nf_mft *t = NULL;
    nf_diag d;
    if (nf_mft_parse(f, text, size, "fuzz", count_warn, &warnings, &t, &d) != NF_OK) {
        if (t) abort(); /* a failed parse leaves *out NULL */
        return;
    }
    nf_mft_report *r = NULL;
    if (nf_mft_analyze(t, &r) != NF_OK) abort();
    for (uint32_t i = 0; i < r->n_groups; i++)
        if (r->group[i].n_roots == 0 || r->group[i].reached > r->group[i].members) abort();
    nf_mft_report_free(r);
    char *out = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&out, &len);
    if (!m || nf_mft_write(t, m) != NF_OK) abort();
    fclose(m);
    nf_mft *back = NULL;
    if (nf_mft_parse(f, out, len, "fuzz-rewritten", NULL, NULL, &back, &d) != NF_OK) abort();
    if (!nf_mft_equal(t, back, &d)) abort();
    free(out);
    nf_mft_free(back);
    nf_mft_free(t);
}

static void sa_groups(const nf_fabric *f, const char *text, size_t size) {
    size_t warnings = 0;
    nf_groups *g = NULL;
    uint16_t *mlid = NULL;
    nf_diag d;
    if (nf_groups_parse_sa(f, text, size, "fuzz", count_warn, &warnings, &g, &mlid, &d) != NF_OK) {
        if (g || mlid) abort();
        return;
    }
    for (uint32_t k = 0; k < g->n; k++) {
        if (g->off[k + 1] <= g->off[k] || (k && mlid[k] <= mlid[k - 1]) || mlid[k] < 0xC000)
            abort();
        for (uint32_t i = g->off[k]; i < g->off[k + 1]; i++)
            if (g->member[i] < f->n_switches || g->member[i] >= f->n_nodes ||
                (i > g->off[k] && g->member[i] <= g->member[i - 1]))
                abort();
    }
    nf_free(mlid);
    nf_groups_free(g);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    const nf_fabric *f = fabric();
    tables(f, (const char *)data, size);
    sa_groups(f, (const char *)data, size);
    return 0;
}
