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
#define NF_LANE_WORDS 4
#define NF_LANES (64 * NF_LANE_WORDS)
typedef uint64_t lanes __attribute__((vector_size(8 * NF_LANE_WORDS), aligned(8)));

/* Taken by address: GCC notes an ABI change for 32-byte vectors passed by value, a note no
 * -Wno-psabi or pragma silences (GCC 12). Inlined, it compiles as the by-value form did. */
static inline uint64_t lanes_or(const lanes *x) {
    uint64_t r = 0;
    for (int q = 0; q < NF_LANE_WORDS; q++)
        r |= (*x)[q];
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
bfs_levels(const up_csr *g, uint32_t S, const lanes *fullp, bfs_scratch *w, unsigned *ecc,
           unsigned *far) {
    lanes full = *fullp;
    for (unsigned level = 1;; level++) {
        uint64_t any = 0;
        for (uint32_t v = 0; v < S; v++) {
            lanes sv = w->seen[v], acc = {0}, left = sv ^ full;
            if (lanes_or(&left))
                for (uint32_t e = g->off[v], end = g->off[v + 1]; e < end; e++)
                    acc |= w->frontier[g->adj[e]];
            acc &= ~sv;
            w->next[v] = acc;
            any |= lanes_or(&acc);
        }
        if (!any) {
            uint64_t missing = 0;
            for (uint32_t v = 0; v < S && !missing; v++) {
                lanes left = w->seen[v] ^ full;
                missing = lanes_or(&left);
            }
            *ecc = missing ? NF_HOPS_INF : level - 1;
            *far = level - 1;
            return NF_OK;
        }
        if (level >= NF_HOPS_INF) return NF_ERANGE;
        for (uint32_t v = 0; v < S; v++) {
            lanes bits = w->next[v];
            if (!lanes_or(&bits)) continue;
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

/* Runs one batch; returns its largest distance in *ecc (NF_HOPS_INF if some pair is unreachable)
 * and its largest finite distance in *far. With d NULL the distances are not kept. */
static int bfs_batch(const up_csr *g, uint32_t S, uint32_t base, uint8_t *d, bfs_scratch *w,
                     unsigned *ecc, unsigned *far) {
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
    int rc = bfs_levels(g, S, &full, w, ecc, far);
    if (rc == NF_OK && d)
        for (uint32_t v = 0; v < S; v++)
            memcpy(d + (size_t)v * S + base, w->local + (size_t)v * NF_LANES, nb);
    return rc;
}

/* Runs every batch over nthr threads: distances into d (S x S, or NULL to keep none), the
 * largest distance into *diam (NF_HOPS_INF when some pair is unreachable) and the largest finite
 * one into *far. */
static int sweep_all(const up_csr *g, uint32_t S, int nthr, uint8_t *d, unsigned *diam_out,
                     unsigned *far_out) {
    int err = NF_OK;
    bfs_scratch *scr = nf__calloc((size_t)nthr, sizeof *scr);
    if (!scr) return NF_ENOMEM;
    for (int t = 0; t < nthr; t++) {
        size_t n = ((size_t)S + 1) * sizeof(lanes);
        if (!(scr[t].seen = nf__malloc(n)) || !(scr[t].frontier = nf__malloc(n)) ||
            !(scr[t].next = nf__malloc(n)) ||
            !(scr[t].local = nf__malloc(((size_t)S + 1) * NF_LANES)))
            err = NF_ENOMEM;
    }
    if (!err) {
        int64_t batches = ((int64_t)S + NF_LANES - 1) / NF_LANES;
        unsigned diam = 0, far = 0;
#pragma omp parallel for num_threads(nthr) schedule(dynamic, 1) reduction(max : diam, far)
        for (int64_t b = 0; b < batches; b++) {
            unsigned ecc = 0, fr = 0;
            int r =
                bfs_batch(g, S, (uint32_t)(b * NF_LANES), d, &scr[omp_get_thread_num()], &ecc, &fr);
            if (r) {
#pragma omp atomic write
                err = r;
            }
            if (ecc > diam) diam = ecc;
            if (fr > far) far = fr;
        }
        *diam_out = diam;
        *far_out = far;
    }
    for (int t = 0; t < nthr; t++) {
        nf__free(scr[t].seen);
        nf__free(scr[t].frontier);
        nf__free(scr[t].next);
        nf__free(scr[t].local);
    }
    nf__free(scr);
    return err;
}

/* ---- representations for large fabrics ------------------------------------------------------ */

/* TORUS keeps each switch's coordinates; a DENSE matrix of a torus keeps the torus's dimensions
 * only (nd, dims), for nf_hops_torus; ROWS keeps the up adjacency and a direct-mapped cache of
 * rows (slot s % nslots holds row key[slot] or NF_NONE), filled by breadth-first search under
 * one lock, so that concurrent queries never see a row being replaced. */
struct nf__hops_big {
    unsigned nd;
    uint32_t dims[NF_FABRIC_TORUS_MAX_D];
    uint32_t *coord; /* TORUS: n * nd coordinates */
    up_csr g;        /* ROWS */
    uint32_t nslots;
    nf_node *key;
    uint8_t *rows;  /* nslots * n */
    nf_node *queue; /* n entries of BFS queue */
    omp_lock_t lock;
    bool locked_init;
};

static void big_free(struct nf__hops_big *b) {
    if (!b) return;
    nf__free(b->coord);
    nf__free(b->g.off);
    nf__free(b->g.adj);
    nf__free(b->key);
    nf__free(b->rows);
    nf__free(b->queue);
    if (b->locked_init) omp_destroy_lock(&b->lock);
    nf__free(b);
}

/* Plain breadth-first search from s over g, filling dist for the switches of s's component
 * (the others keep what they held, which must not be a distance yet: NF_HOPS_INF). Returns the
 * eccentricity of s within its component and the farthest switch in *farthest, or NF_HOPS_INF
 * (the search cut short) when some distance would exceed 254. */
static unsigned bfs_from(const up_csr *g, nf_node s, uint8_t *dist, nf_node *queue,
                         nf_node *farthest) {
    dist[s] = 0;
    queue[0] = s;
    uint32_t head = 0, tail = 1;
    while (head < tail) {
        nf_node u = queue[head++];
        uint8_t du = dist[u];
        if (du >= NF_HOPS_INF - 1) return NF_HOPS_INF; /* a distance would not fit its byte */
        for (uint32_t e = g->off[u]; e < g->off[u + 1]; e++) {
            nf_node v = g->adj[e];
            if (dist[v] != NF_HOPS_INF) continue;
            dist[v] = (uint8_t)(du + 1);
            queue[tail++] = v;
        }
    }
    *farthest = queue[tail - 1];
    return dist[queue[tail - 1]];
}

/* Row s of the distances (NF_HOPS_INF when unreachable); returns the eccentricity of s within
 * its component and the farthest switch. */
static unsigned bfs_row(const up_csr *g, uint32_t S, nf_node s, uint8_t *row, nf_node *queue,
                        nf_node *farthest) {
    memset(row, NF_HOPS_INF, S);
    return bfs_from(g, s, row, queue, farthest);
}

/* The torus geometry of f, checked against the links: every ring link present and up, nothing
 * else between switches. false when f has none or it does not hold. */
static bool torus_holds(const nf_fabric *f) {
    unsigned nd = f->torus_nd, c = f->torus_c, deg = 0;
    if (nd == 0 || nd > NF_FABRIC_TORUS_MAX_D) return false;
    uint64_t n = 1;
    uint32_t stride[NF_FABRIC_TORUS_MAX_D];
    for (unsigned d = nd; d-- > 0;) {
        stride[d] = (uint32_t)n;
        n *= f->torus_dims[d];
        deg += f->torus_dims[d] >= 2 ? 2 : 0;
    }
    if (n != f->n_switches) return false;
    for (nf_node s = 0; s < f->n_switches; s++) {
        if (f->nports[s] < c + 2 * nd || f->sw_adj_off[s + 1] - f->sw_adj_off[s] != deg)
            return false;
        for (unsigned d = 0; d < nd; d++) {
            uint32_t D = f->torus_dims[d], x = s / stride[d] % D;
            if (D < 2) continue;
            nf_node plus = x + 1 < D ? s + stride[d] : s - x * stride[d];
            nf_node minus = x > 0 ? s - stride[d] : s + (D - 1) * stride[d];
            nf_gport gp = nf_port_index(f, s, c + 2 * d + 1), gm = gp + 1;
            if (f->peer[gp] != plus || f->peer[gm] != minus ||
                f->link_state[f->port_link[gp]] != NF_LINK_UP ||
                f->link_state[f->port_link[gm]] != NF_LINK_UP)
                return false;
        }
    }
    return true;
}

static int torus_init(const nf_fabric *f, nf_hops *h) {
    struct nf__hops_big *b = h->big;
    uint32_t S = f->n_switches;
    unsigned nd = b->nd = f->torus_nd, diam = 0;
    for (unsigned d = 0; d < nd; d++) {
        b->dims[d] = f->torus_dims[d];
        diam += b->dims[d] / 2;
    }
    if (diam > NF_HOPS_INF - 1) return NF_ERANGE;
    if (!(b->coord = nf__malloc(((size_t)S * nd + 1) * sizeof *b->coord))) return NF_ENOMEM;
    uint32_t x[NF_FABRIC_TORUS_MAX_D] = {0};
    for (nf_node s = 0; s < S; s++) {
        memcpy(b->coord + (size_t)s * nd, x, nd * sizeof *x);
        for (unsigned d = nd; d-- > 0;) { /* odometer, last dimension fastest */
            if (++x[d] < b->dims[d]) break;
            x[d] = 0;
        }
    }
    h->kind = NF_HOPS_TORUS;
    h->connected = true;
    h->diameter = h->diameter_lo = (uint8_t)diam;
    h->diameter_exact = true;
    return NF_OK;
}

/* Connectivity and diameter of a ROWS fabric. One search from the first switch of every component
 * gives connectivity and, per component, an eccentricity e with e <= its diameter <= 2e. A
 * connected fabric gets two more searches from the farthest switch found so far (the double
 * sweep, whose lower bound is often the diameter itself), the upper bound being twice the
 * smallest eccentricity seen. Up to exact_max switches the bit-parallel sweep of the dense
 * matrix runs without keeping the matrix and the diameter is exact. */
static int rows_init(const nf_fabric *f, int nthr, const nf_hops_opts *o, nf_hops *h) {
    struct nf__hops_big *b = h->big;
    uint32_t S = f->n_switches;
    int rc = build_up_csr(f, &b->g);
    if (rc) return rc;
    size_t cache = o && o->cache_bytes ? o->cache_bytes : NF_HOPS_CACHE_BYTES;
    uint32_t exact_max = o && o->exact_diam_max ? o->exact_diam_max : NF_HOPS_EXACT_DIAM_MAX;
    size_t slots = S ? cache / S : 1;
    b->nslots = (uint32_t)(slots < 1 ? 1 : slots > S ? (S ? S : 1) : slots);
    if (!(b->key = nf__malloc((size_t)b->nslots * sizeof *b->key)) ||
        !(b->rows = nf__malloc((size_t)b->nslots * S + 1)) ||
        !(b->queue = nf__malloc(((size_t)S + 1) * sizeof *b->queue)))
        return NF_ENOMEM;
    for (uint32_t i = 0; i < b->nslots; i++)
        b->key[i] = NF_NONE;
    h->kind = NF_HOPS_ROWS;
    h->connected = true;
    h->diameter = h->diameter_lo = 0;
    h->diameter_exact = true;
    if (S == 0) return NF_OK;
    /* components: the first cache slot holds the distances from each component's first switch */
    unsigned lo = 0, hi = 0, ncomp = 0, ecc0 = 0;
    nf_node far0 = 0;
    memset(b->rows, NF_HOPS_INF, S);
    for (nf_node s = 0; s < S; s++) {
        if (b->rows[s] != NF_HOPS_INF) continue;
        nf_node far;
        unsigned e = bfs_from(&b->g, s, b->rows, b->queue, &far);
        if (e == NF_HOPS_INF) return NF_ERANGE;
        if (ncomp++ == 0) {
            ecc0 = e;
            far0 = far;
        }
        if (e > lo) lo = e;
        if (2 * e > hi) hi = 2 * e;
    }
    h->connected = ncomp == 1;
    if (h->connected) { /* the double sweep */
        hi = 2 * ecc0;
        nf_node u = far0;
        for (int k = 0; k < 2; k++) {
            nf_node far;
            unsigned e = bfs_row(&b->g, S, u, b->rows, b->queue, &far);
            if (e == NF_HOPS_INF) return NF_ERANGE;
            if (e > lo) lo = e;
            if (2 * e < hi) hi = 2 * e;
            u = far;
        }
    }
    if (S <= exact_max) {
        unsigned diam = 0, far = 0;
        if ((rc = sweep_all(&b->g, S, nthr, NULL, &diam, &far))) return rc;
        h->diameter_lo = (uint8_t)far;
        h->diameter = h->connected ? (uint8_t)far : 0;
        return NF_OK;
    }
    if (hi > NF_HOPS_INF - 1) return NF_ERANGE; /* a row might not fit its bytes */
    h->diameter_exact = lo == hi;
    h->diameter_lo = (uint8_t)lo;
    h->diameter = h->connected ? (uint8_t)hi : 0;
    return NF_OK;
}

/* The cache slot holding row s, computing it if absent. Call with the lock held. */
static const uint8_t *rows_get(const nf_hops *h, nf_node s) {
    struct nf__hops_big *b = h->big;
    uint32_t slot = s % b->nslots;
    uint8_t *row = b->rows + (size_t)slot * h->n;
    if (b->key[slot] != s) {
        nf_node far;
        bfs_row(&b->g, h->n, s, row, b->queue, &far);
        b->key[slot] = s;
    }
    return row;
}

uint8_t nf_hops_sw_far(const nf_hops *h, nf_node s, nf_node t) {
    struct nf__hops_big *b = h->big;
    if (h->kind == NF_HOPS_TORUS) {
        const uint32_t *xs = b->coord + (size_t)s * b->nd, *xt = b->coord + (size_t)t * b->nd;
        unsigned d = 0;
        for (unsigned k = 0; k < b->nd; k++)
            d += nf_hops_ring(xs[k], xt[k], b->dims[k]);
        return (uint8_t)d;
    }
    omp_set_lock(&b->lock);
    uint8_t d;
    if (b->key[t % b->nslots] == t) /* distances are symmetric: a cached row of t serves too */
        d = b->rows[(size_t)(t % b->nslots) * h->n + s];
    else
        d = rows_get(h, s)[t];
    omp_unset_lock(&b->lock);
    return d;
}

void nf_hops_torus_row(const uint32_t *dims, unsigned lo, unsigned nd, uint32_t pos, uint8_t *out) {
    /* the innermost ring first; then each outer dimension d makes dims[d] copies of what is
     * there, copy y raised by its ring distance (copy 0 last, in place, as the others read it) */
    uint32_t c[NF_FABRIC_TORUS_MAX_D];
    for (unsigned d = nd; d-- > lo;) {
        c[d] = pos % dims[d];
        pos /= dims[d];
    }
    size_t len = 1;
    out[0] = 0;
    for (unsigned d = nd; d-- > lo;) {
        unsigned D = dims[d];
        for (unsigned y = D; y-- > 0;) {
            uint8_t add = (uint8_t)nf_hops_ring(c[d], y, D);
            uint8_t *restrict dst = out + (size_t)y * len;
            const uint8_t *restrict src = out;
            if (y == 0) { /* in place */
                for (size_t k = 0; k < len; k++)
                    out[k] = (uint8_t)(out[k] + add);
                continue;
            }
            for (size_t k = 0; k < len; k++)
                dst[k] = (uint8_t)(src[k] + add);
        }
        len *= D;
    }
}

const uint8_t *nf_hops_row_far(const nf_hops *h, nf_node s, uint8_t *buf) {
    struct nf__hops_big *b = h->big;
    if (h->kind == NF_HOPS_TORUS) { /* a switch's number is its row-major position */
        nf_hops_torus_row(b->dims, 0, b->nd, s, buf);
        return buf;
    }
    omp_set_lock(&b->lock);
    memcpy(buf, rows_get(h, s), h->n);
    omp_unset_lock(&b->lock);
    return buf;
}

int nf_hops_compute(const nf_fabric *f, int threads, nf_hops **out) {
    return nf_hops_compute_ex(f, threads, NULL, out);
}

int nf_hops_compute_ex(const nf_fabric *f, int threads, const nf_hops_opts *o, nf_hops **out) {
    *out = NULL;
    uint32_t S = f->n_switches;
    uint32_t dense_max = o && o->dense_max ? o->dense_max : NF_HOPS_DENSE_MAX;
    bool dense = S <= dense_max && !(o && o->force_sparse);
    int nthr = threads > 0 ? threads : omp_get_max_threads();
    nf_hops *h = nf__calloc(1, sizeof *h);
    up_csr g = {0};
    int rc = NF_ENOMEM;
    if (!h) goto done;
    h->n = S;
    if (!dense) {
        if (!(h->big = nf__calloc(1, sizeof *h->big))) goto done;
        omp_init_lock(&h->big->lock);
        h->big->locked_init = true;
        rc = !(o && o->no_torus) && torus_holds(f) ? torus_init(f, h) : rows_init(f, nthr, o, h);
        goto done;
    }
    if (!(h->d = nf__malloc((size_t)S * S))) goto done;
    if (!(o && o->no_torus) && torus_holds(f)) { /* the geometry, for nf_hops_torus */
        if (!(h->big = nf__calloc(1, sizeof *h->big))) goto done;
        h->big->nd = f->torus_nd;
        memcpy(h->big->dims, f->torus_dims, sizeof h->big->dims);
    }
    if ((rc = build_up_csr(f, &g))) goto done;
    unsigned diam = 0, far = 0;
    rc = sweep_all(&g, S, nthr, h->d, &diam, &far);
    if (rc == NF_OK) {
        h->connected = diam != NF_HOPS_INF;
        h->diameter = 0;
        if (h->connected) h->diameter = (uint8_t)diam;
        h->kind = NF_HOPS_DENSE;
        h->diameter_exact = true;
        h->diameter_lo = h->diameter;
    }
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
    big_free(h->big);
    nf__free(h);
}

size_t nf_hops_bytes(const nf_hops *h) {
    const struct nf__hops_big *b = h->big;
    if (h->d) return (size_t)h->n * h->n;
    if (h->kind == NF_HOPS_TORUS) return (size_t)h->n * b->nd * sizeof *b->coord;
    return (size_t)b->nslots * (h->n + sizeof *b->key) + (size_t)h->n * sizeof *b->queue +
           ((size_t)h->n + 1) * sizeof *b->g.off + (size_t)b->g.off[h->n] * sizeof *b->g.adj;
}

unsigned nf_hops_torus(const nf_hops *h, uint32_t *dims) {
    const struct nf__hops_big *b = h->big;
    if (!b || b->nd == 0) return 0; /* ROWS keeps no geometry */
    memcpy(dims, b->dims, b->nd * sizeof *dims);
    return b->nd;
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

static uint32_t label_root(uint32_t *label, uint32_t x) {
    while (label[x] != x)
        x = label[x] = label[label[x]];
    return x;
}

void nf_hops_components(const nf_hops *h, uint32_t *label) {
    uint32_t S = h->n;
    if (h->connected) { /* every torus form is connected */
        memset(label, 0, (size_t)S * sizeof *label);
        return;
    }
    if (h->d) { /* each component's smallest switch labels its row's finite entries */
        for (uint32_t s = 0; s < S; s++)
            label[s] = NF_NONE;
        for (uint32_t s = 0; s < S; s++) {
            if (label[s] != NF_NONE) continue;
            const uint8_t *row = h->d + (size_t)s * S;
            for (uint32_t t = s; t < S; t++)
                if (row[t] != NF_HOPS_INF) label[t] = s;
        }
        return;
    }
    const up_csr *g = &h->big->g; /* ROWS: union-find over the up links, the smaller root kept */
    for (uint32_t s = 0; s < S; s++)
        label[s] = s;
    for (uint32_t u = 0; u < S; u++)
        for (uint32_t e = g->off[u]; e < g->off[u + 1]; e++) {
            uint32_t a = label_root(label, u), z = label_root(label, g->adj[e]);
            if (a != z) label[a > z ? a : z] = a < z ? a : z;
        }
    for (uint32_t s = 0; s < S; s++)
        label[s] = label_root(label, s);
}

uint8_t nf_hops_diameter(const nf_hops *h, int *connected) {
    if (connected) *connected = h->connected;
    if (h->connected) return h->diameter;
    if (!h->d) return h->diameter_lo; /* ROWS: the largest finite distance, or a lower bound */
    /* not connected: the largest finite distance needs a scan */
    uint8_t best = 0;
    size_t n = (size_t)h->n * h->n;
    for (size_t i = 0; i < n; i++)
        if (h->d[i] != NF_HOPS_INF && h->d[i] > best) best = h->d[i];
    return best;
}
