/* SPDX-License-Identifier: MIT */
/* The packet list of `netfab sim --packets` and its log (pktlist.h). */
#include "pktlist.h"

#include "cmd.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The next whole number of *p (after blanks) into *v, within lo..hi; false when there is none
 * or it is out of range. */
static bool field(char **p, long long lo, unsigned long long hi, long long *v) {
    char *end;
    while (**p == ' ' || **p == '\t')
        (*p)++;
    if (!**p) return false;
    errno = 0;
    long long x = strtoll(*p, &end, 10);
    if (end == *p || errno || (*end && *end != ' ' && *end != '\t') || x < lo ||
        (x > 0 && (unsigned long long)x > hi))
        return false;
    *p = end;
    *v = x;
    return true;
}

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
        char *p = line;
        while (*p == ' ' || *p == '\t')
            p++;
        if (!*p) continue; /* blank, or a comment */
        long long at, src, dst, vc = -1;
        bool ok = field(&p, 0, UINT64_MAX >> 2, &at) && field(&p, 0, UINT32_MAX, &src) &&
                  field(&p, 0, UINT32_MAX, &dst);
        if (ok) {
            char *q = p;
            while (*q == ' ' || *q == '\t')
                q++;
            if (*q) ok = field(&p, -1, NF_SIM_MAX_VCS - 1, &vc);
            while (ok && (*p == ' ' || *p == '\t'))
                p++;
            ok = ok && !*p;
        }
        if (!ok) {
            fprintf(stderr,
                    "netfab %s: %s:%lu: want 'CYCLE SRC DST [VC]' (whole numbers; VC -1 to %d)\n",
                    cmd, path, ln, NF_SIM_MAX_VCS - 1);
            ex = NF_EXIT_USAGE;
        } else if (k && (uint64_t)at < v[k - 1].at) {
            fprintf(stderr, "netfab %s: %s:%lu: cycle %lld before the line above's (%" PRIu64 ")\n",
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
            v[k++] = (nf_sim_packet){
                .at = (uint64_t)at, .src = (uint32_t)src, .dst = (uint32_t)dst, .vc = (int)vc};
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
