/* SPDX-License-Identifier: MIT */
/* --fail-links N|FILE for the commands that simulate failures: N switch-to-switch links drawn at
 * random (seeded), or the links named in a file, set down in the fabric. The argument is read
 * and checked when the options are parsed; only the names wait for the fabric. */
#include "cmd.h"
#include "opts.h"
#include "netfab/fabric.h"
#include "util/rng.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Appends the file's lines "NODE PORT" to fl: NODE a node's name (spaces allowed) or its GUID
 * as 0x..., PORT its port; '#' starts a comment. */
static int fail_file(const char *cmd, nf_app_fail *fl, const char *path) {
    FILE *in = fopen(path, "r");
    if (!in) {
        fprintf(stderr, "netfab %s: --fail-links: cannot read %s: %s\n", cmd, path,
                strerror(errno));
        return NF_EXIT_FAIL;
    }
    char line[1024];
    int ln = 0, ex = NF_EXIT_OK;
    while (ex == NF_EXIT_OK && fgets(line, sizeof line, in)) {
        ln++;
        char *hash = strchr(line, '#');
        if (hash) *hash = 0;
        size_t len = strlen(line);
        while (len && isspace((unsigned char)line[len - 1]))
            line[--len] = 0;
        char *b = line;
        while (isspace((unsigned char)*b))
            b++;
        if (!*b) continue;
        char *sp = strrchr(b, ' '), *tab = strrchr(b, '\t');
        if (tab > sp) sp = tab;
        uint64_t port;
        if (!sp || nf_app_u64(sp + 1, 1, NF_MAX_PORTS, &port)) {
            fprintf(stderr,
                    "netfab %s: %s:%d: want 'NODE PORT' (a name or 0xGUID, a port number)\n", cmd,
                    path, ln);
            ex = NF_EXIT_USAGE;
            break;
        }
        while (sp > b && isspace((unsigned char)sp[-1]))
            sp--;
        *sp = 0;
        nf_app_fail_line *v = realloc(fl->v, (fl->n + 1) * sizeof *v);
        char *node = strdup(b);
        if (!v || !node) {
            free(node);
            if (v) fl->v = v;
            ex = nf_app_report(NF_ENOMEM, NULL);
            break;
        }
        fl->v = v;
        fl->v[fl->n++] = (nf_app_fail_line){node, (unsigned)port, ln};
    }
    fclose(in);
    return ex;
}

int nf_app_fail_arg(const char *cmd, const nf_opt *o, const char *arg) {
    nf_app_fail *fl = o->dst;
    nf_app_fail_fini(fl);
    if (nf_app_u64(arg, 0, UINT64_MAX, &fl->count) == 0) return NF_EXIT_OK;
    fl->path = arg;
    return fail_file(cmd, fl, arg);
}

void nf_app_fail_fini(nf_app_fail *fl) {
    for (size_t i = 0; i < fl->n; i++)
        free(fl->v[i].node);
    free(fl->v);
    *fl = (nf_app_fail){0};
}

/* The links of fl's file lines, down. */
static int fail_named(const char *cmd, nf_fabric *f, const nf_app_fail *fl, unsigned *n) {
    for (size_t i = 0; i < fl->n; i++) {
        const char *b = fl->v[i].node;
        unsigned port = fl->v[i].port;
        nf_node node = NF_NONE;
        uint64_t g;
        if (b[0] == '0' && (b[1] == 'x' || b[1] == 'X') && nf_app_u64(b, 0, UINT64_MAX, &g) == 0)
            node = nf_fabric_find_guid(f, g);
        for (nf_node x = 0; x < f->n_nodes && node == NF_NONE; x++)
            if (strcmp(nf_node_name(f, x), b) == 0) node = x;
        if (node == NF_NONE || port > f->nports[node] ||
            f->port_link[nf_port_index(f, node, port)] == NF_NONE) {
            fprintf(stderr, "netfab %s: %s:%d: no cabled port %u on a node '%s'\n", cmd, fl->path,
                    fl->v[i].line, port, b);
            return NF_EXIT_USAGE;
        }
        nf_link l = f->port_link[nf_port_index(f, node, port)];
        if (f->link_state[l] == NF_LINK_UP) (*n)++;
        f->link_state[l] = NF_LINK_DOWN;
    }
    return NF_EXIT_OK;
}

int nf_app_fail_links(const char *cmd, nf_fabric *f, const nf_app_fail *fl, uint64_t seed,
                      unsigned *n) {
    *n = 0;
    if (fl->path) return fail_named(cmd, f, fl, n);
    uint32_t *pool = malloc(((size_t)f->n_links + 1) * sizeof *pool), np = 0;
    if (!pool) return nf_app_report(NF_ENOMEM, NULL);
    for (nf_link l = 0; l < f->n_links; l++)
        if (f->link_cls[l] != NF_LINK_HOST && f->link_state[l] == NF_LINK_UP) pool[np++] = l;
    if (fl->count > np) {
        fprintf(stderr,
                "netfab %s: --fail-links %llu: the fabric has %u switch-to-switch links up\n", cmd,
                (unsigned long long)fl->count, np);
        free(pool);
        return NF_EXIT_USAGE;
    }
    nf__rng r;
    nf__rng_seed(&r, seed ^ 0x6661696cull);
    nf__rng_sample_u32(&r, pool, np, (size_t)fl->count);
    for (uint64_t i = 0; i < fl->count; i++)
        f->link_state[pool[i]] = NF_LINK_DOWN;
    *n = (unsigned)fl->count;
    free(pool);
    return NF_EXIT_OK;
}
