/* All-pairs switch-to-switch hop distances, one byte each, by one breadth-first search per switch
 * spread over OpenMP threads; and the O(1) min-hop queries OpenSM answers from hops[lid][port]. */
#include "netfab/hops.h"
#include "util/mem.h"

#include <omp.h>
#include <string.h>

/* The adjacency BFS walks: the fabric's CSR restricted to links that are up, with parallel links
 * and loop-backs collapsed, so each neighbour is seen once per search. */
typedef struct up_csr {
    uint32_t *off;
    nf_node *adj;
} up_csr;

static int build_up_csr(const nf_fabric *f, up_csr *g) {
    uint32_t S = f->n_switches;
    g->off = nf__malloc(((size_t)S + 1) * sizeof *g->off);
    g->adj = nf__malloc(((size_t)f->sw_adj_off[S] + 1) * sizeof *g->adj);
    if (!g->off || !g->adj) return NF_ENOMEM;
    uint32_t m = 0;
    for (nf_node s = 0; s < S; s++) {
        g->off[s] = m;
        for (uint32_t e = f->sw_adj_off[s]; e < f->sw_adj_off[s + 1]; e++) {
            if (f->link_state[f->sw_adj_link[e]] != NF_LINK_UP) continue;
            nf_node t = f->sw_adj[e];
            bool dup = false; /* parallel links are rare and short runs: a linear look back */
            for (uint32_t k = g->off[s]; k < m && !dup; k++) dup = g->adj[k] == t;
            if (!dup) g->adj[m++] = t;
        }
    }
    g->off[S] = m;
    return NF_OK;
}

/* BFS from src writing distances into row (S bytes, preset to NF_HOPS_INF). Level-synchronous
 * over a FIFO queue: when a vertex at distance 254 would have to extend the search, the fabric is
 * too deep for one-byte distances and NF_ERANGE is returned. */
static int bfs_row(const up_csr *g, nf_node src, uint8_t *row, nf_node *queue) {
    size_t head = 0, tail = 0;
    row[src] = 0;
    queue[tail++] = src;
    while (head < tail) {
        nf_node u = queue[head++];
        uint8_t du = row[u];
        for (uint32_t e = g->off[u], end = g->off[u + 1]; e < end; e++) {
            nf_node v = g->adj[e];
            if (row[v] != NF_HOPS_INF) continue;
            if (du + 1 >= NF_HOPS_INF) return NF_ERANGE;
            row[v] = (uint8_t)(du + 1);
            queue[tail++] = v;
        }
    }
    return NF_OK;
}

int nf_hops_compute(const nf_fabric *f, int threads, nf_hops **out) {
    *out = NULL;
    uint32_t S = f->n_switches;
    nf_hops *h = nf__calloc(1, sizeof *h);
    up_csr g = {0};
    int rc = NF_ENOMEM;
    if (!h) goto done;
    h->n = S;
    if (!(h->d = nf__malloc((size_t)S * S))) goto done;
    if ((rc = build_up_csr(f, &g))) goto done;
    memset(h->d, NF_HOPS_INF, (size_t)S * S);
    int nthr = threads > 0 ? threads : omp_get_max_threads();
    int err = NF_OK;
    nf_node **queues = nf__calloc((size_t)nthr, sizeof *queues);
    if (!queues) goto done;
    for (int t = 0; t < nthr; t++)
        if (!(queues[t] = nf__malloc(((size_t)S + 1) * sizeof(nf_node)))) err = NF_ENOMEM;
    if (!err) {
#pragma omp parallel for num_threads(nthr) schedule(dynamic, 8)
        for (int64_t s = 0; s < (int64_t)S; s++) {
            int r = bfs_row(&g, (nf_node)s, h->d + (size_t)s * S, queues[omp_get_thread_num()]);
            if (r) {
#pragma omp atomic write
                err = r;
            }
        }
    }
    for (int t = 0; t < nthr; t++) nf__free(queues[t]);
    nf__free(queues);
    rc = err;
done:
    nf__free(g.off);
    nf__free(g.adj);
    if (rc) {
        nf_hops_free(h);
        return rc;
    }
    *out = h;
    return NF_OK;
}

void nf_hops_free(nf_hops *h) {
    if (!h) return;
    nf__free(h->d);
    nf__free(h);
}

/* The switch a CA port is cabled to over an up link, or NF_NONE. */
static nf_node ca_switch(const nf_fabric *f, nf_node ca, unsigned cp) {
    if (ca < f->n_switches || ca >= f->n_nodes || cp < 1 || cp > f->nports[ca]) return NF_NONE;
    nf_gport g = nf_port_index(f, ca, cp);
    nf_node t = f->peer[g];
    if (t == NF_NONE || t >= f->n_switches || f->link_state[f->port_link[g]] != NF_LINK_UP)
        return NF_NONE;
    return t;
}

uint8_t nf_hops_via(const nf_fabric *f, const nf_hops *h, nf_node s, unsigned p, nf_node ca,
                    unsigned cp) {
    if (s >= f->n_switches || p < 1 || p > f->nports[s]) return NF_HOPS_INF;
    nf_gport g = nf_port_index(f, s, p);
    nf_node q = f->peer[g];
    if (q == NF_NONE || f->link_state[f->port_link[g]] != NF_LINK_UP) return NF_HOPS_INF;
    if (q >= f->n_switches) return q == ca && f->peer_port[g] == cp ? 1 : NF_HOPS_INF;
    nf_node t = ca_switch(f, ca, cp);
    if (t == NF_NONE) return NF_HOPS_INF;
    uint8_t d = nf_hops_sw(h, q, t);
    return d >= NF_HOPS_INF - 2 ? NF_HOPS_INF : (uint8_t)(d + 2);
}

uint8_t nf_hops_to_ca(const nf_fabric *f, const nf_hops *h, nf_node s, nf_node ca, unsigned cp) {
    nf_node t = ca_switch(f, ca, cp);
    if (t == NF_NONE || s >= f->n_switches) return NF_HOPS_INF;
    uint8_t d = nf_hops_sw(h, s, t);
    return d >= NF_HOPS_INF - 1 ? NF_HOPS_INF : (uint8_t)(d + 1);
}

uint8_t nf_hops_diameter(const nf_hops *h, int *connected) {
    uint8_t best = 0;
    int conn = 1;
    size_t n = (size_t)h->n * h->n;
    for (size_t i = 0; i < n; i++) {
        uint8_t d = h->d[i];
        if (d == NF_HOPS_INF)
            conn = 0;
        else if (d > best)
            best = d;
    }
    if (connected) *connected = conn;
    return best;
}
