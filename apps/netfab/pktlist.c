/* SPDX-License-Identifier: MIT */
/* The packet list of `netfab sim --packets` and its log (pktlist.h). */
#include "pktlist.h"

#include "cmd.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int nf_app_packets_read(const char *cmd, const char *path, nf_sim_packet **out, size_t *n) {
    *out = NULL;
    *n = 0;
    FILE *in = fopen(path, "r");
    if (!in) {
        fprintf(stderr, "netfab %s: --packets: cannot read %s: %s\n", cmd, path, strerror(errno));
        return NF_EXIT_FAIL;
    }
    nf_sim_packet *v = NULL;
    size_t cap = 0, k = 0;
    char line[256];
    int ex = NF_EXIT_OK;
    for (unsigned long ln = 1; ex == NF_EXIT_OK && fgets(line, sizeof line, in); ln++) {
        size_t len = strlen(line);
        if (len == sizeof line - 1 && line[len - 1] != '\n' && !feof(in)) {
            fprintf(stderr, "netfab %s: %s:%lu: a line of over %zu characters\n", cmd, path, ln,
                    sizeof line - 2);
            ex = NF_EXIT_USAGE;
            break;
        }
        char *hash = strchr(line, '#');
        if (hash) *hash = 0;
        line[strcspn(line, "\r\n")] = 0;
        char *tok[5], *save = NULL;
        unsigned nt = 0;
        for (char *t = strtok_r(line, " \t", &save); t && nt < 5; t = strtok_r(NULL, " \t", &save))
            tok[nt++] = t;
        if (!nt) continue;                      /* blank, or a comment */
        uint64_t at, src, dst, vc = UINT64_MAX; /* (-1: the NIC's rule) */
        bool ok = (nt == 3 || nt == 4) && !nf_app_u64(tok[0], 0, UINT64_MAX >> 2, &at) &&
                  !nf_app_u64(tok[1], 0, UINT32_MAX, &src) &&
                  !nf_app_u64(tok[2], 0, UINT32_MAX, &dst) &&
                  (nt == 3 || strcmp(tok[3], "-1") == 0 ||
                   !nf_app_u64(tok[3], 0, NF_SIM_MAX_VCS - 1, &vc));
        if (!ok) {
            fprintf(stderr,
                    "netfab %s: %s:%lu: want 'CYCLE SRC DST [VC]' (whole numbers; VC -1 to %d)\n",
                    cmd, path, ln, NF_SIM_MAX_VCS - 1);
            ex = NF_EXIT_USAGE;
        } else if (k && at < v[k - 1].at) {
            fprintf(stderr,
                    "netfab %s: %s:%lu: cycle %" PRIu64 " before the line above's (%" PRIu64 ")\n",
                    cmd, path, ln, at, v[k - 1].at);
            ex = NF_EXIT_USAGE;
        } else {
            if (k == cap) {
                size_t nc = cap ? 2 * cap : 1024;
                nf_sim_packet *nv = realloc(v, nc * sizeof *nv);
                if (!nv) {
                    ex = nf_app_report(NF_ENOMEM, NULL);
                    break;
                }
                v = nv, cap = nc;
            }
            v[k++] = (nf_sim_packet){.at = at,
                                     .src = (uint32_t)src,
                                     .dst = (uint32_t)dst,
                                     .vc = vc == UINT64_MAX ? -1 : (int)vc};
        }
    }
    if (ex == NF_EXIT_OK && ferror(in)) {
        fprintf(stderr, "netfab %s: --packets: cannot read %s: %s\n", cmd, path, strerror(errno));
        ex = NF_EXIT_FAIL;
    }
    fclose(in);
    if (ex) {
        free(v);
        return ex;
    }
    *out = v;
    *n = k;
    return NF_EXIT_OK;
}

int nf_app_packets_log(const char *cmd, const char *path, const nf_sim *s,
                       const nf_sim_packet *list, size_t n) {
    char who[64];
    snprintf(who, sizeof who, "netfab %s", cmd);
    nf__afile af;
    FILE *o = nf_app_out_open(&af, who, path);
    if (!o) return NF_EXIT_FAIL;
    fprintf(o, "# cycle src dst arrived latency (-1: not arrived)\n");
    for (size_t i = 0; i < n; i++) {
        uint64_t a = nf_sim_packet_arrival(s, i);
        if (a == UINT64_MAX)
            fprintf(o, "%" PRIu64 " %u %u -1 -1\n", list[i].at, list[i].src, list[i].dst);
        else
            fprintf(o, "%" PRIu64 " %u %u %" PRIu64 " %" PRIu64 "\n", list[i].at, list[i].src,
                    list[i].dst, a, a - list[i].at);
    }
    return nf_app_out_close(&af, who, path, 0);
}
