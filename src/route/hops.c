/* SPDX-License-Identifier: MIT */
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
            for (uint32_t k = g->off[s]; k < m && !dup; k++)
                dup = g->adj[k] == t;
            if (!dup) g->adj[m++] = t;
        }
    }
    g->off[S] = m;
    return NF_OK;
}

/* Bit-parallel breadth-first search: one search per source, NF_LANES sources at once.
 *
 * A batch owns sources base..base+nb-1, lane k standing for source base+k. Per switch v it keeps
 * three lane masks: seen (lanes that have reached v), frontier (lanes that reached v at the
 * previous level) and next. One level is next[v] = OR of frontier[u] over neighbours u, minus
 * seen[v]; the lanes set in next[v] reach v at this level, and their distance is written into a
 * batch-local S x NF_LANES byte block (contiguous, so the writes stay in cache). Links are
 * symmetric, so d(s, v) = d(v, s): at the end row v of the matrix receives the batch's nb
 * consecutive columns base..base+nb-1. Batches write disjoint bytes, so threads never share one.
 * Each level costs one pass over the adjacency for all lanes, so the fabric takes
 * (S / NF_LANES) * (diameter + 1) passes instead of S searches. A lane still advancing at level
 * 255 would need a distance that does not fit a byte: NF_ERANGE. */
#if defined(__GNUC__)
/* lanes are passed by value only between static functions of this file, never across an ABI */
#pragma GCC diagnostic ignored "-Wpsabi"
#endif
#define NF_LANE_WORDS 4
#define NF_LANES (64 * NF_LANE_WORDS)
typedef uint64_t lanes __attribute__((vector_size(8 * NF_LANE_WORDS), aligned(8)));

static inline uint64_t lanes_or(lanes x) {
    uint64_t r = 0;
    for (int q = 0; q < NF_LANE_WORDS; q++)
        r |= x[q];
    return r;
}

typedef struct bfs_scratch {
    lanes *seen, *frontier, *next;
    uint8_t *local; /* S x NF_LANES distances of this batch */
} bfs_scratch;

/* expand[m]: byte i is 0xFF when bit i of m is set (a constant table, built by the preprocessor).
 */
#define NF_E1(m, i) ((uint64_t)(((m) >> (i)) & 1) * ((uint64_t)0xFF << (8 * (i))))
#define NF_E(m)                                                                                    \
    (NF_E1(m, 0) | NF_E1(m, 1) | NF_E1(m, 2) | NF_E1(m, 3) | NF_E1(m, 4) | NF_E1(m, 5) |           \
     NF_E1(m, 6) | NF_E1(m, 7))
#define NF_R4(m) NF_E(m), NF_E(m + 1), NF_E(m + 2), NF_E(m + 3)
#define NF_R16(m) NF_R4(m), NF_R4(m + 4), NF_R4(m + 8), NF_R4(m + 12)
#define NF_R64(m) NF_R16(m), NF_R16(m + 16), NF_R16(m + 32), NF_R16(m + 48)
static const uint64_t expand[256] = {NF_R64(0), NF_R64(64), NF_R64(128), NF_R64(192)};

/* Writes level into the 64 bytes row[k] for every bit k set in bits. */
static inline void write_word(uint8_t *row, uint64_t bits, uint8_t level) {
    uint64_t lv = 0x0101010101010101ULL * level;
    for (unsigned c = 0; bits; c++, bits >>= 8) {
        unsigned m = bits & 0xFF;
        if (!m) continue;
        uint64_t w, mask = expand[m];
        memcpy(&w, row + 8 * c, 8);
        w = (w & ~mask) | (lv & mask);
        memcpy(row + 8 * c, &w, 8);
    }
}

/* The level loop, compiled twice on x86-64 (AVX2 and baseline) and picked at load time. */
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) &&                             \
    !defined(__SANITIZE_ADDRESS__)
__attribute__((target_clones("avx2", "default")))
#endif
static int
bfs_levels(const up_csr *g, uint32_t S, const lanes *fullp, bfs_scratch *w, unsigned *ecc) {
    lanes full = *fullp;
    for (unsigned level = 1;; level++) {
        uint64_t any = 0;
        for (uint32_t v = 0; v < S; v++) {
            lanes sv = w->seen[v], acc = {0};
            if (lanes_or(sv ^ full))
                for (uint32_t e = g->off[v], end = g->off[v + 1]; e < end; e++)
                    acc |= w->frontier[g->adj[e]];
            acc &= ~sv;
            w->next[v] = acc;
            any |= lanes_or(acc);
        }
        if (!any) {
            uint64_t missing = 0;
            for (uint32_t v = 0; v < S && !missing; v++)
                missing = lanes_or(w->seen[v] ^ full);
            *ecc = missing ? NF_HOPS_INF : level - 1;
            return NF_OK;
        }
        if (level >= NF_HOPS_INF) return NF_ERANGE;
        for (uint32_t v = 0; v < S; v++) {
            lanes bits = w->next[v];
            if (!lanes_or(bits)) continue;
            w->seen[v] |= bits;
            for (int q = 0; q < NF_LANE_WORDS; q++)
                if (bits[q])
                    write_word(w->local + (size_t)v * NF_LANES + 64 * q, bits[q], (uint8_t)level);
        }
        lanes *t = w->frontier;
        w->frontier = w->next;
        w->next = t;
    }
}

/* Runs one batch; returns its largest distance in *ecc (NF_HOPS_INF if some pair is unreachable).
 */
static int bfs_batch(const up_csr *g, uint32_t S, uint32_t base, uint8_t *d, bfs_scratch *w,
                     unsigned *ecc) {
    unsigned nb = S - base < NF_LANES ? S - base : NF_LANES;
    lanes full = {0};
    for (unsigned q = 0; q < NF_LANE_WORDS; q++)
        full[q] = nb >= 64 * (q + 1) ? ~(uint64_t)0
                  : nb > 64 * q      ? ((uint64_t)1 << (nb - 64 * q)) - 1
                                     : 0;
    memset(w->seen, 0, (size_t)S * sizeof(lanes));
    memset(w->frontier, 0, (size_t)S * sizeof(lanes));
    memset(w->local, NF_HOPS_INF, (size_t)S * NF_LANES);
    for (unsigned k = 0; k < nb; k++) {
        w->seen[base + k][k / 64] = w->frontier[base + k][k / 64] = (uint64_t)1 << (k % 64);
        w->local[(size_t)(base + k) * NF_LANES + k] = 0;
    }
    int rc = bfs_levels(g, S, &full, w, ecc);
    if (rc == NF_OK)
        for (uint32_t v = 0; v < S; v++)
            memcpy(d + (size_t)v * S + base, w->local + (size_t)v * NF_LANES, nb);
    return rc;
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
    int nthr = threads > 0 ? threads : omp_get_max_threads();
    int err = NF_OK;
    bfs_scratch *scr = nf__calloc((size_t)nthr, sizeof *scr);
    if (!scr) {
        rc = NF_ENOMEM;
        goto done;
    }
    for (int t = 0; t < nthr; t++) {
        size_t n = ((size_t)S + 1) * sizeof(lanes);
        if (!(scr[t].seen = nf__malloc(n)) || !(scr[t].frontier = nf__malloc(n)) ||
            !(scr[t].next = nf__malloc(n)) ||
            !(scr[t].local = nf__malloc(((size_t)S + 1) * NF_LANES)))
            err = NF_ENOMEM;
    }
    if (!err) {
        int64_t batches = ((int64_t)S + NF_LANES - 1) / NF_LANES;
        unsigned diam = 0;
#pragma omp parallel for num_threads(nthr) schedule(dynamic, 1) reduction(max : diam)
        for (int64_t b = 0; b < batches; b++) {
            unsigned ecc = 0;
            int r =
                bfs_batch(&g, S, (uint32_t)(b * NF_LANES), h->d, &scr[omp_get_thread_num()], &ecc);
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
