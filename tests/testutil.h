/* SPDX-License-Identifier: MIT */
/* Shared helpers for the unit tests: a deliberately plain reference BFS over the port table (not
 * the CSR the library uses), shortest-path counting, and the allocation-failure sweep.
 * Header-only; include it after cmocka.h. */
#ifndef NF_TESTUTIL_H
#define NF_TESTUTIL_H

#include "netfab/fabric.h"
#include "netfab/io.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* Distances in links from switch src to every switch over up links, -1 when unreachable.
 * npaths (optional) receives the number of shortest paths (saturating at UINT32_MAX). */
static inline void ref_bfs(const nf_fabric *f, nf_node src, int *dist, uint64_t *npaths) {
    nf_node *queue = malloc(sizeof(nf_node) * (f->n_switches + 1));
    for (uint32_t i = 0; i < f->n_switches; i++)
        dist[i] = -1;
    if (npaths) memset(npaths, 0, sizeof(uint64_t) * f->n_switches);
    size_t head = 0, tail = 0;
    dist[src] = 0;
    if (npaths) npaths[src] = 1;
    queue[tail++] = src;
    while (head < tail) {
        nf_node u = queue[head++];
        for (unsigned p = 1; p <= f->nports[u]; p++) {
            nf_gport g = nf_port_index(f, u, p);
            nf_node v = f->peer[g];
            if (v == NF_NONE || v >= f->n_switches || v == u) continue;
            if (f->link_state[f->port_link[g]] != NF_LINK_UP) continue;
            if (dist[v] < 0) {
                dist[v] = dist[u] + 1;
                queue[tail++] = v;
            }
            if (npaths && dist[v] == dist[u] + 1) npaths[v] += npaths[u];
        }
    }
    free(queue);
}

/* Allocation-failure sweep. attempt(ctx, &f, &d) runs with the library's k-th allocation failing,
 * for k = 0, 1, 2, ... until it succeeds; every failed run must return NF_ENOMEM and leave f NULL
 * (the sanitizer build checks that nothing leaks) and, when want_msg is given, say so in its diag.
 * Returns the successful fabric (the caller frees it) and the number of failed runs in *failures.
 */
typedef int (*sweep_attempt)(void *ctx, nf_fabric **out, nf_diag *d);

static long sweep_budget;
static inline void *sweep_malloc(size_t n, void *ud) {
    (void)ud;
    return sweep_budget-- > 0 ? malloc(n) : NULL;
}
static inline void *sweep_realloc(void *p, size_t n, void *ud) {
    (void)ud;
    return sweep_budget-- > 0 ? realloc(p, n) : NULL;
}
static inline void sweep_free(void *p, void *ud) {
    (void)ud;
    free(p);
}

static inline nf_fabric *alloc_sweep(sweep_attempt attempt, void *ctx, const char *want_msg,
                                     long *failures) {
    nf_allocator failing = {sweep_malloc, sweep_realloc, sweep_free, NULL};
    for (long k = 0;; k++) {
        sweep_budget = k;
        nf_set_allocator(&failing);
        nf_fabric *f = (nf_fabric *)&failing; /* must be overwritten */
        nf_diag d = {{0}, 0, {0}};
        int rc = attempt(ctx, &f, &d);
        nf_set_allocator(NULL);
        if (rc == NF_OK) {
            *failures = k;
            return f;
        }
        if (rc != NF_ENOMEM) fail_msg("allocation %ld failing gave %d (%s)", k, rc, d.msg);
        assert_null(f);
        if (want_msg && !strstr(d.msg, want_msg))
            fail_msg("allocation %ld: message '%s' lacks '%s'", k, d.msg, want_msg);
        assert_true(k < 100000);
    }
}

/* An attempt for alloc_sweep: loads the file at path (a char *) with format detection. */
static inline int sweep_load_file(void *path, nf_fabric **out, nf_diag *d) {
    return nf_io_load(path, NF_FMT_AUTO, NULL, out, d);
}

#endif
