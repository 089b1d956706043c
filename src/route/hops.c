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

/* Bit-parallel breadth-first search (one search per source, 64 sources at once).
 *
 * A batch owns sources base..base+nb-1, lane k standing for source base+k. Per switch v it keeps
 * three 64-bit masks: seen (lanes that have reached v), frontier (lanes that reached v at the
 * previous level) and next. One level is next[v] = OR of frontier[u] over neighbours u, minus
 * seen[v]; the lanes set in next[v] reach v at this level. Links are symmetric, so d(s, v) =
 * d(v, s) and the lanes of v are written into row v at columns base..base+nb-1: 64 consecutive
 * bytes, and different batches write disjoint bytes, so threads never write the same byte.
 * Each level costs one pass over the adjacency, whatever the number of sources, so a fabric is
 * done in (S/64) * (diameter+1) passes instead of S searches. A lane still in the frontier at
 * level 254 would need a distance of 255: NF_ERANGE. */
typedef struct bfs_scratch {
    uint64_t *seen, *frontier, *next;
    uint8_t *local; /* S x 64 distances of this batch, copied into the rows at the end */
} bfs_scratch;

/* expand[m]: byte i is 0xFF when bit i of m is set (a constant table, built by the preprocessor). */
#define NF_E1(m, i) ((uint64_t)(((m) >> (i)) & 1) * ((uint64_t)0xFF << (8 * (i))))
#define NF_E(m) (NF_E1(m, 0) | NF_E1(m, 1) | NF_E1(m, 2) | NF_E1(m, 3) | NF_E1(m, 4) | NF_E1(m, 5) | NF_E1(m, 6) | NF_E1(m, 7))
#define NF_R4(m) NF_E(m), NF_E(m + 1), NF_E(m + 2), NF_E(m + 3)
#define NF_R16(m) NF_R4(m), NF_R4(m + 4), NF_R4(m + 8), NF_R4(m + 12)
#define NF_R64(m) NF_R16(m), NF_R16(m + 16), NF_R16(m + 32), NF_R16(m + 48)
static const uint64_t expand[256] = {NF_R64(0), NF_R64(64), NF_R64(128), NF_R64(192)};

/* Writes level into row[k] for every lane k set in bits (k < nb). */
static void write_lanes(uint8_t *row, uint64_t bits, unsigned nb, uint8_t level) {
    uint64_t lv = 0x0101010101010101ULL * level;
    for (unsigned c = 0; c < 8 && bits; c++, bits >>= 8) {
        unsigned m = bits & 0xFF;
        if (!m) continue;
        if (8 * c + 8 <= nb) {
            uint64_t w, mask = expand[m];
            memcpy(&w, row + 8 * c, 8);
            w = (w & ~mask) | (lv & mask);
            memcpy(row + 8 * c, &w, 8);
        } else {
            for (unsigned i = 0; i < 8; i++)
                if (m >> i & 1) row[8 * c + i] = level;
        }
    }
}

/* Runs one batch; returns its largest distance in *ecc (NF_HOPS_INF if some pair is unreachable). */
static int bfs_batch(const up_csr *g, uint32_t S, uint32_t base, uint8_t *d, bfs_scratch *w,
                     unsigned *ecc) {
    unsigned nb = S - base < 64 ? S - base : 64;
    uint64_t full = nb == 64 ? ~(uint64_t)0 : (((uint64_t)1 << nb) - 1);
    memset(w->seen, 0, (size_t)S * sizeof(uint64_t));
    memset(w->frontier, 0, (size_t)S * sizeof(uint64_t));
    memset(w->local, NF_HOPS_INF, (size_t)S * 64);
    for (unsigned k = 0; k < nb; k++) {
        w->seen[base + k] = w->frontier[base + k] = (uint64_t)1 << k;
        w->local[(size_t)(base + k) * 64 + k] = 0;
    }
    for (unsigned level = 1;; level++) {
        bool any = false;
        for (uint32_t v = 0; v < S; v++) {
            uint64_t acc = 0;
            if (w->seen[v] != full)
                for (uint32_t e = g->off[v], end = g->off[v + 1]; e < end; e++) acc |= w->frontier[g->adj[e]];
            acc &= ~w->seen[v];
            w->next[v] = acc;
            any |= acc != 0;
        }
        if (!any) {
            bool all = true;
            for (uint32_t v = 0; v < S && all; v++) all = w->seen[v] == full;
            *ecc = all ? level - 1 : NF_HOPS_INF;
            for (uint32_t v = 0; v < S; v++) memcpy(d + (size_t)v * S + base, w->local + (size_t)v * 64, nb);
            return NF_OK;
        }
        if (level >= NF_HOPS_INF) return NF_ERANGE;
        for (uint32_t v = 0; v < S; v++) {
            uint64_t bits = w->next[v];
            if (!bits) continue;
            w->seen[v] |= bits;
            write_lanes(w->local + (size_t)v * 64, bits, 64, (uint8_t)level);
        }
        uint64_t *t = w->frontier;
        w->frontier = w->next;
        w->next = t;
    }
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
    bfs_scratch *scr = nf__calloc((size_t)nthr, sizeof *scr);
    if (!scr) {
        rc = NF_ENOMEM;
        goto done;
    }
    for (int t = 0; t < nthr; t++) {
        size_t n = ((size_t)S + 1) * sizeof(uint64_t);
        if (!(scr[t].seen = nf__malloc(n)) || !(scr[t].frontier = nf__malloc(n)) ||
            !(scr[t].next = nf__malloc(n)) || !(scr[t].local = nf__malloc(n * 8)))
            err = NF_ENOMEM;
    }
    if (!err) {
        int64_t batches = ((int64_t)S + 63) / 64;
        unsigned diam = 0;
#pragma omp parallel for num_threads(nthr) schedule(dynamic, 1) reduction(max : diam)
        for (int64_t b = 0; b < batches; b++) {
            unsigned ecc = 0;
            int r = bfs_batch(&g, S, (uint32_t)(b * 64), h->d, &scr[omp_get_thread_num()], &ecc);
            if (r) {
#pragma omp atomic write
                err = r;
            }
            if (ecc > diam) diam = ecc;
        }
        h->connected = diam != NF_HOPS_INF;
        h->diameter = 0;
        if (h->connected) h->diameter = (uint8_t)diam;
    }
    for (int t = 0; t < nthr; t++) {
        nf__free(scr[t].seen);
        nf__free(scr[t].frontier);
        nf__free(scr[t].next);
        nf__free(scr[t].local);
    }
    nf__free(scr);
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
    if (connected) *connected = h->connected;
    if (h->connected) return h->diameter;
    /* not connected: the largest finite distance needs a scan */
    uint8_t best = 0;
    size_t n = (size_t)h->n * h->n;
    for (size_t i = 0; i < n; i++)
        if (h->d[i] != NF_HOPS_INF && h->d[i] > best) best = h->d[i];
    return best;
}
