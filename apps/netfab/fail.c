/* SPDX-License-Identifier: MIT */
/* --fail-links N|FILE for the commands that simulate failures: N switch-to-switch links drawn at
 * random (seeded), or the links named in a file, set down in the fabric. */
#include "cmd.h"
#include "netfab/fabric.h"
#include "util/rng.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A line "NODE PORT": NODE a node's name (spaces allowed) or its GUID as 0x..., PORT its port;
 * '#' starts a comment. */
static int fail_file(nf_fabric *f, const char *path, unsigned *n) {
    FILE *in = fopen(path, "r");
    if (!in) {
        fprintf(stderr, "netfab: --fail-links: cannot read %s: %s\n", path, strerror(errno));
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
        char *end;
        long port = sp ? strtol(sp + 1, &end, 10) : 0;
        if (!sp || *end || port < 1 || port > NF_MAX_PORTS) {
            fprintf(stderr, "netfab: %s:%d: want 'NODE PORT' (a name or 0xGUID, a port number)\n",
                    path, ln);
            ex = NF_EXIT_USAGE;
            break;
        }
        while (sp > b && isspace((unsigned char)sp[-1]))
            sp--;
        *sp = 0;
        nf_node node = NF_NONE;
        if (b[0] == '0' && (b[1] == 'x' || b[1] == 'X')) {
            errno = 0;
            unsigned long long g = strtoull(b + 2, &end, 16);
            if (!errno && !*end && end != b + 2) node = nf_fabric_find_guid(f, g);
        }
        for (nf_node x = 0; x < f->n_nodes && node == NF_NONE; x++)
            if (strcmp(nf_node_name(f, x), b) == 0) node = x;
        if (node == NF_NONE || (unsigned)port > f->nports[node] ||
            f->port_link[nf_port_index(f, node, (unsigned)port)] == NF_NONE) {
            fprintf(stderr, "netfab: %s:%d: no cabled port %ld on a node '%s'\n", path, ln, port,
                    b);
            ex = NF_EXIT_USAGE;
            break;
        }
        nf_link l = f->port_link[nf_port_index(f, node, (unsigned)port)];
        if (f->link_state[l] == NF_LINK_UP) (*n)++;
        f->link_state[l] = NF_LINK_DOWN;
    }
    fclose(in);
    return ex;
}

int nf_app_fail_links(nf_fabric *f, const char *arg, uint64_t seed, unsigned *n) {
    *n = 0;
    char *end;
    errno = 0;
    unsigned long k = strtoul(arg, &end, 10);
    if (!*arg || *end || errno || arg[0] == '-') return fail_file(f, arg, n);
    uint32_t *pool = malloc(((size_t)f->n_links + 1) * sizeof *pool), np = 0;
    if (!pool) return nf_app_report(NF_ENOMEM, NULL);
    for (nf_link l = 0; l < f->n_links; l++)
        if (f->link_cls[l] != NF_LINK_HOST && f->link_state[l] == NF_LINK_UP) pool[np++] = l;
    if (k > np) {
        fprintf(stderr, "netfab: --fail-links %lu: the fabric has %u switch-to-switch links up\n",
                k, np);
        free(pool);
        return NF_EXIT_USAGE;
    }
    nf__rng r;
    nf__rng_seed(&r, seed ^ 0x6661696cull);
    nf__rng_sample_u32(&r, pool, np, k);
    for (unsigned long i = 0; i < k; i++)
        f->link_state[pool[i]] = NF_LINK_DOWN;
    *n = (unsigned)k;
    free(pool);
    return NF_EXIT_OK;
}
