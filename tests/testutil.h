/* Shared helpers for the unit tests: a deliberately plain reference BFS over the port table (not
 * the CSR the library uses), shortest-path counting, and fixture paths. Header-only. */
#ifndef NF_TESTUTIL_H
#define NF_TESTUTIL_H

#include "netfab/fabric.h"

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

#endif
