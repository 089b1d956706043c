/* SPDX-License-Identifier: MIT */
/* Multicast routing driver: the engine registry, root candidates found from the members outwards,
 * the loop that routes groups one after another while keeping link loads (EFI) exact, and the
 * statistics of the result. Verification and exports live in mcast_check.c. */
#include "route/mcast_engine.h"
#include "util/mem.h"
#include "util/sort.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

/* ---- registry ------------------------------------------------------------------------------ */

#define NF_MCAST_ENGINES(X)                                                                        \
    X(minihop)                                                                                     \
    X(minihop_new)                                                                                 \
    X(minihop_new_high)                                                                            \
    X(sssp)                                                                                        \
    X(sssp_new) X(fulb_paper) X(fulb_paper_look) X(fulb_paper_global) X(fulb_paper_trials) X(fulb) \
        X(fulb_plus)

static const nf_mcast_engine *const engines[] = {
#define NF_X_ENGINE(id) &nf__mc_##id,
    NF_MCAST_ENGINES(NF_X_ENGINE)
#undef NF_X_ENGINE
};

size_t nf_mcast_engine_count(void) { return sizeof engines / sizeof engines[0]; }

const nf_mcast_engine *nf_mcast_engine_at(size_t i) {
    return i < nf_mcast_engine_count() ? engines[i] : NULL;
}

const nf_mcast_engine *nf_mcast_engine_find(const char *name) {
    for (size_t i = 0; i < nf_mcast_engine_count(); i++)
        if (strcmp(engines[i]->name, name) == 0) return engines[i];
    return NULL;
}

const char *nf_mcast_engine_name(const nf_mcast_engine *e) { return e->name; }
const char *nf_mcast_engine_summary(const nf_mcast_engine *e) { return e->summary; }

/* ---- root candidates ----------------------------------------------------------------------- */

static uint32_t next_stamp(nf__mc_scratch *s, uint32_t n_switches) {
    if (++s->stamp_now == 0) {
        memset(s->stamp, 0, n_switches * sizeof *s->stamp);
        s->stamp_now = 1;
    }
    return s->stamp_now;
}

static int cmp_node(const void *a, const void *b) {
    nf_node x = *(const nf_node *)a, y = *(const nf_node *)b;
    return x < y ? -1 : x > y;
}

uint32_t nf__mc_new_stamp(const nf__mc_view *v) { return next_stamp(v->scr, v->f->n_switches); }

/* The root candidates are the switches s minimising max_i d(leaf_i, s); r* is that minimum.
 * Two far-apart leaves steer the search: a, the leaf farthest from leaf 0, and b, the leaf
 * farthest from a, at distance D. No switch is closer than D/2 to both, and a itself is within D
 * of every leaf, so ceil(D/2) <= r* <= D. For a radius r, every switch with max distance <= r lies
 * within r of both a and b; probe(r) finds them all with a breadth-first search from a that keeps
 * a switch u at depth k only if d(b, u) <= 2r - k: a switch u on a shortest path from a to such a
 * switch s (at depth k) has d(b, u) <= d(b, s) + d(s, u) <= r + (r - k), so none is lost, while the
 * search stays in the region around the shortest paths between a and b. Each switch found within
 * r of b is tested against the leaves, the one that last ruled a switch out first (neighbouring
 * switches tend to fail on the same leaf). Whether probe(r) finds any switch is monotone in r, so
 * r* comes from a search over [ceil(D/2), D] (binary while the range is wide, then upwards), and
 * the candidates from probe(r*). At the fabric's diameter every switch qualifies and no search is
 * needed. The search runs on a work budget; past it the members' rows are scanned instead. */
#define PROBE_OVER UINT32_MAX /* probe() ran out of its work budget */

static uint32_t probe(const nf__mc_view *v, const uint8_t *da, const uint8_t *db, nf_node a,
                      nf_node *order, uint32_t n, unsigned r, uint64_t *budget) {
    const nf_fabric *f = v->f;
    const nf_hops *h = v->h;
    nf__mc_scratch *s = v->scr;
    if (r >= h->diameter && h->connected) {
        for (nf_node c = 0; c < f->n_switches; c++)
            s->cand[c] = c;
        return f->n_switches;
    }
    uint32_t stamp = next_stamp(s, f->n_switches), nc = 0;
    nf_node *q = s->layer;
    uint32_t head = 0, tail = 0;
    q[tail++] = a;
    s->stamp[a] = stamp;
    while (head < tail) {
        nf_node u = q[head++];
        unsigned k = da[u];
        /* work in the scan's unit (one 16-byte vector of a row): a link followed or a leaf looked
         * at counts one */
        uint64_t cost = f->sw_adj_off[u + 1] - f->sw_adj_off[u];
        if (db[u] <= r) {
            uint32_t i = 0;
            while (i < n && nf_hops_sw(h, u, order[i]) <= r)
                i++;
            cost += i + 1;
            if (i == n) {
                s->cand[nc++] = u;
            } else if (i > 0) { /* move the leaf that ruled u out to the front */
                nf_node t = order[i];
                order[i] = order[0];
                order[0] = t;
            }
        }
        if (cost >= *budget) return PROBE_OVER;
        *budget -= cost;
        if (k == r) continue;
        for (uint32_t e = f->sw_adj_off[u]; e < f->sw_adj_off[u + 1]; e++) {
            nf_node w = f->sw_adj[e];
            if (s->stamp[w] == stamp || da[w] != k + 1 || db[w] + k + 1 > 2 * r) continue;
            s->stamp[w] = stamp;
            q[tail++] = w;
        }
    }
    return nc;
}

/* The same candidates by looking at every switch: the running max of the leaves' distance rows
 * (nf__mc_max_rows), then the switches at the least max. Used when the search above would cost
 * more than this scan (groups spread over much of the fabric, where the region between two far
 * members is most of it): the work is the leaves' rows, read in order. */
/* The loops over whole rows are written plainly for the compiler to vectorise, compiled for AVX2
 * and for baseline x86-64 and picked at load time with GCC. */
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) &&                             \
    !defined(__SANITIZE_ADDRESS__)
#define ROW_LOOP                                                                                   \
    __attribute__((target_clones("avx2", "default"), optimize("vect-cost-model=dynamic")))
#else
#define ROW_LOOP
#endif

/* mx[u] = max(mx[u], row[u]) (pmaxub); returns the least of the new mx (pminub) */
ROW_LOOP static uint8_t max_into(uint8_t *restrict mx, const uint8_t *restrict row, uint32_t S) {
    uint8_t least = 255;
    for (uint32_t u = 0; u < S; u++) {
        uint8_t x = row[u] > mx[u] ? row[u] : mx[u];
        mx[u] = x;
        least = x < least ? x : least;
    }
    return least;
}

/* out[u] = u for every switch u < S; returns S. */
ROW_LOOP static uint32_t every_switch(nf_node *restrict out, uint32_t S) {
    for (uint32_t u = 0; u < S; u++)
        out[u] = u;
    return S;
}

/* The least of a[0..S) (pminub), 255 when S is 0. */
ROW_LOOP static uint8_t min_of(const uint8_t *restrict a, uint32_t S) {
    uint8_t best = 255;
    for (uint32_t u = 0; u < S; u++)
        best = a[u] < best ? a[u] : best;
    return best;
}

/* Writes base + u for every u with a[u] == x to out, ascending, and returns their number. Eight
 * bytes at a time: a word of a ^ x with no zero byte (the usual test: (w - 0x01..01) & ~w &
 * 0x80..80 is zero exactly then) holds no match and is skipped. */
static uint32_t find_eq(const uint8_t *a, uint32_t S, uint8_t x, nf_node base, nf_node *out) {
    const uint64_t ones = 0x0101010101010101ull, highs = ones << 7, xx = ones * x;
    uint32_t n = 0, u = 0;
    for (; u + 8 <= S; u += 8) {
        uint64_t w;
        memcpy(&w, a + u, 8);
        w ^= xx;
        if (!((w - ones) & ~w & highs)) continue;
        if (w == 0) { /* all eight match (a group over the whole fabric: every switch) */
            for (uint32_t j = 0; j < 8; j++)
                out[n + j] = base + u + j;
            n += 8;
            continue;
        }
        for (uint32_t j = 0; j < 8; j++)
            if (a[u + j] == x) out[n++] = base + u + j;
    }
    for (; u < S; u++)
        if (a[u] == x) out[n++] = base + u;
    return n;
}

/* dst[k] = src[k] + add (first) or max(dst[k], src[k] + add) over k < n; no sum exceeds 254 */
ROW_LOOP static void set_add(uint8_t *restrict dst, const uint8_t *restrict src, uint8_t add,
                             uint32_t n) {
    for (uint32_t k = 0; k < n; k++)
        dst[k] = (uint8_t)(src[k] + add);
}
ROW_LOOP static void max_add(uint8_t *restrict dst, const uint8_t *restrict src, uint8_t add,
                             uint32_t n) {
    for (uint32_t k = 0; k < n; k++) {
        uint8_t x = (uint8_t)(src[k] + add);
        dst[k] = x > dst[k] ? x : dst[k];
    }
}

const uint8_t *nf__mc_row(const nf_hops *h, nf_node s, uint8_t *buf) {
    uint32_t dims[NF_FABRIC_TORUS_MAX_D];
    unsigned nd = nf_hops_torus(h, dims);
    if (!nd) return nf_hops_row(h, s, buf);
    nf_hops_torus_row(dims, 0, nd, s, buf);
    return buf;
}

/* nf__mc_max_rows on a torus (nf_hops_torus gave its nd dimensions). A switch is (x, p): x its
 * first coordinate, p its position over the other dimensions, and d(leaf, (x, p)) =
 * ring(x_leaf, x) + e_leaf(p), e_leaf being the leaf's distances over the other dimensions (a
 * plane of P = S / dims[0] bytes). The leaves are ascending, so those of one first coordinate v
 * are consecutive: they make one plane Q_v = max of their e (in buf, one per run of v), and mx's
 * plane x is the max over the runs of Q_v + ring(v, x). The work is a plane per leaf plus a plane
 * per (run, x), against a whole row per leaf read from the matrix, and it stays in cache. The
 * planes are built in mx's first P bytes before mx is written. */
static uint8_t torus_max_rows(const uint32_t *dims, unsigned nd, uint32_t S, const nf_node *leaf,
                              uint32_t n, uint8_t *mx, uint8_t *buf) {
    uint32_t X = dims[0], P = S / X, runs = 0;
    for (uint32_t i = 0; i < n; i++) {
        if (i == 0 || leaf[i - 1] / P != leaf[i] / P) {
            nf_hops_torus_row(dims, 1, nd, leaf[i] % P, buf + (size_t)runs++ * P);
        } else {
            nf_hops_torus_row(dims, 1, nd, leaf[i] % P, mx);
            max_add(buf + (size_t)(runs - 1) * P, mx, 0, P);
        }
    }
    for (uint32_t i = 0, j = 0; i < n; i++) {
        uint32_t v = leaf[i] / P;
        if (i > 0 && leaf[i - 1] / P == v) continue;
        const uint8_t *q = buf + (size_t)j * P;
        for (uint32_t x = 0; x < X; x++)
            if (j == 0)
                set_add(mx + (size_t)x * P, q, (uint8_t)nf_hops_ring(v, x, X), P);
            else
                max_add(mx + (size_t)x * P, q, (uint8_t)nf_hops_ring(v, x, X), P);
        j++;
    }
    return min_of(mx, S);
}

uint8_t nf__mc_max_rows(const nf_hops *h, const nf_node *leaf, uint32_t n, uint8_t *mx,
                        uint8_t *buf) {
    uint32_t S = h->n, dims[NF_FABRIC_TORUS_MAX_D];
    unsigned nd = nf_hops_torus(h, dims);
    if (nd) return torus_max_rows(dims, nd, S, leaf, n, mx, buf);
    memcpy(mx, nf_hops_row(h, leaf[0], buf), S);
    uint8_t least = min_of(mx, S);
    /* once every switch is at the diameter from some leaf, the other rows can change nothing */
    uint8_t top = h->connected && h->diameter_exact ? h->diameter : NF_HOPS_INF;
    for (uint32_t i = 1; i < n && least < top; i++)
        least = max_into(mx, nf_hops_row(h, leaf[i], buf), S);
    return least;
}

/* Whether one of the eight bytes at p is below t (1 <= t <= 128): the zero-byte test shifted,
 * (w - t * 0x01..01) & ~w & 0x80..80 is zero exactly when no byte is below t. */
static inline bool has_below(const uint8_t *p, unsigned t) {
    const uint64_t ones = 0x0101010101010101ull;
    uint64_t w;
    memcpy(&w, p, 8);
    return ((w - ones * t) & ~w & (ones << 7)) != 0;
}

/* mx[u] = max(a[u], b[u]) */
ROW_LOOP static void max_of2(uint8_t *restrict mx, const uint8_t *restrict a,
                             const uint8_t *restrict b, uint32_t S) {
    for (uint32_t u = 0; u < S; u++)
        mx[u] = a[u] > b[u] ? a[u] : b[u];
}

/* The candidates when the search gave up, r* being known to be r0 or more (da, db: the rows of
 * the far leaves a and b). First r0 itself: its candidates lie within r0 of a and of b, so between
 * the first and the last switch that is, and the running max of the rows over that range of ids
 * alone tells whether any switch there is within r0 of every leaf (stopping as soon as none can
 * be). On a fat tree, whose spread groups have their candidates at r0 among the core switches, a
 * range of consecutive ids, that reads a fifth of each row. Otherwise the whole rows. On a torus
 * the rows come from coordinates (nf__mc_max_rows) and the whole rows cost little. */
static uint32_t scan_candidates(const nf__mc_view *v, const nf_node *leaf, uint32_t n,
                                const uint8_t *da, const uint8_t *db, unsigned r0,
                                unsigned *radius) {
    const nf_hops *h = v->h;
    uint32_t S = h->n, dims[NF_FABRIC_TORUS_MAX_D];
    uint8_t *mx = (uint8_t *)v->scr->layer; /* S bytes fit in the S-entry layer buffer */
    if (!nf_hops_torus(h, dims) && r0 < 128) {
        max_of2(mx, da, db, S);
        uint32_t c0 = 0, c1 = S;
        while (c0 + 8 <= S && !has_below(mx + c0, r0 + 1))
            c0 += 8;
        while (c0 < S && mx[c0] > r0)
            c0++;
        while (c1 >= c0 + 8 && !has_below(mx + c1 - 8, r0 + 1))
            c1 -= 8;
        while (c1 > c0 && mx[c1 - 1] > r0)
            c1--;
        uint8_t least = c0 < c1 ? (uint8_t)r0 : NF_HOPS_INF;
        for (uint32_t i = 0; i < n && least <= r0; i++)
            least = max_into(mx + c0, nf_hops_row(h, leaf[i], v->scr->row[2]) + c0, c1 - c0);
        if (least <= r0) { /* every switch is r0 or more from some leaf: least is r0 */
            *radius = r0;
            return find_eq(mx + c0, c1 - c0, (uint8_t)r0, c0, v->scr->cand);
        }
    }
    uint8_t best = nf__mc_max_rows(h, leaf, n, mx, v->scr->row[0]);
    if (best == NF_HOPS_INF) return 0;
    *radius = best;
    if (h->connected && h->diameter_exact && best == h->diameter)
        return every_switch(v->scr->cand, S); /* none is farther than the diameter from a leaf */
    return find_eq(mx, S, best, 0, v->scr->cand);
}

uint32_t nf__mc_candidates(const nf__mc_view *v, const nf_node *leaf, uint32_t n,
                           unsigned *radius) {
    const nf_hops *h = v->h;
    nf__mc_scratch *s = v->scr;
    const uint8_t *d0 = nf__mc_row(h, leaf[0], s->row[1]);
    nf_node a = leaf[0];
    for (uint32_t i = 0; i < n; i++) {
        if (d0[leaf[i]] == NF_HOPS_INF) return 0;
        if (d0[leaf[i]] > d0[a]) a = leaf[i];
    }
    const uint8_t *da = nf__mc_row(h, a, s->row[0]);
    nf_node b = a;
    for (uint32_t i = 0; i < n; i++)
        if (da[leaf[i]] > da[b]) b = leaf[i];
    unsigned D = da[b];
    const uint8_t *db = nf__mc_row(h, b, s->row[1]);
    nf_node *order = s->next_layer; /* farthest from a first, to begin with */
    uint32_t *bucket = s->next_off;
    memset(bucket, 0, (D + 2) * sizeof *bucket);
    for (uint32_t i = 0; i < n; i++)
        bucket[D - da[leaf[i]] + 1]++;
    for (unsigned k = 1; k <= D + 1; k++)
        bucket[k] += bucket[k - 1];
    for (uint32_t i = 0; i < n; i++)
        order[bucket[D - da[leaf[i]]]++] = leaf[i];

    /* small radii (most groups) go up one by one: a probe above r* searches a wider region than
     * needed, so the binary search only pays when the range is wide */
    unsigned lo = (D + 1) / 2, hi = D;
    if (h->connected && h->diameter < hi) hi = h->diameter; /* diameter is 0 when not connected */
    /* the search may spend about what the full scan would (n rows of S bytes; a search step is a
     * random access, weighed as 256 streamed bytes) before it gives up and scans: never much more
     * than twice the cheaper of the two */
    uint64_t budget = (uint64_t)n * v->f->n_switches / 256 + 64;
    uint32_t nc = 0;
    while (lo < hi && hi - lo > 3) {
        unsigned mid = lo + (hi - lo) / 2;
        nc = probe(v, da, db, a, order, n, mid, &budget);
        if (nc == PROBE_OVER) return scan_candidates(v, leaf, n, da, db, lo, radius);
        if (nc)
            hi = mid;
        else
            lo = mid + 1;
    }
    while (!(nc = probe(v, da, db, a, order, n, lo, &budget)) && lo < hi)
        lo++;
    if (nc == PROBE_OVER) return scan_candidates(v, leaf, n, da, db, lo, radius);
    /* ascending ids, as a full scan would list them */
    qsort(s->cand, nc, sizeof *s->cand, cmp_node);
    *radius = lo;
    return nc;
}

/* The candidate that comes first by (load if rotating, then OpenSM's switch order). */
static int pick_root(const nf__mc_view *v, const nf_node *leaf, uint32_t n, bool rotate,
                     nf_node *root) {
    unsigned r;
    uint32_t nc = nf__mc_candidates(v, leaf, n, &r);
    if (!nc) return NF_EUNREACHABLE;
    const nf_node *cand = v->scr->cand;
    nf_node best = cand[0];
    uint32_t lb = rotate ? v->sw_load[best] : 0;
    uint64_t kb = nf__mc_opensm_key(v->f->guid[best]);
    for (uint32_t i = 1; i < nc; i++) {
        nf_node c = cand[i];
        uint32_t lc = rotate ? v->sw_load[c] : 0;
        if (lc > lb) continue;
        uint64_t kc = nf__mc_opensm_key(v->f->guid[c]);
        if (lc < lb || kc < kb) {
            best = c;
            lb = lc;
            kb = kc;
        }
    }
    *root = best;
    return NF_OK;
}

int nf__mc_root_opensm(void *ctx, const nf__mc_view *v, const nf_node *leaf, uint32_t n,
                       nf_node *root) {
    (void)ctx;
    return pick_root(v, leaf, n, false, root);
}

int nf__mc_root_rotate(void *ctx, const nf__mc_view *v, const nf_node *leaf, uint32_t n,
                       nf_node *root) {
    (void)ctx;
    return pick_root(v, leaf, n, true, root);
}

/* ---- the routing loop ---------------------------------------------------------------------- */

void nf_mcast_free(nf_mcast *m) {
    if (!m) return;
    nf__free(m->root);
    nf__free(m->height);
    nf__free(m->status);
    nf__free(m->tree_off);
    nf__free(m->tree_link);
    nf__free(m->sw_member_off);
    nf__free(m->sw_member);
    nf__free(m->efi);
    nf__free(m);
}

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

void nf__mc_scratch_fini(nf__mc_scratch *s) {
    nf__free(s->stamp);
    nf__free(s->layer);
    nf__free(s->next_layer);
    nf__free(s->next_off);
    nf__free(s->cand);
    nf__free(s->work);
    nf__free(s->key);
    nf__free(s->cost);
    nf__free(s->parent);
    nf__free(s->seen);
    for (int i = 0; i < 3; i++)
        nf__free(s->row[i]);
}

int nf__mc_scratch_init(nf__mc_scratch *s, uint32_t S, uint32_t max_leaves) {
    memset(s, 0, sizeof *s);
    size_t n = (size_t)S + 2, l = (size_t)(max_leaves > S ? max_leaves : S) + 2;
    s->stamp = nf__calloc(n, sizeof *s->stamp);
    s->layer = nf__malloc(n * sizeof *s->layer);
    s->next_layer = nf__malloc(l * sizeof *s->next_layer);
    s->next_off = nf__malloc((256 + n) * sizeof *s->next_off);
    s->cand = nf__malloc(n * sizeof *s->cand);
    s->work = nf__malloc(l * sizeof *s->work);
    s->key = nf__malloc(l * sizeof *s->key);
    s->cost = nf__malloc(n * sizeof *s->cost);
    s->parent = nf__malloc(n * sizeof *s->parent);
    s->seen = nf__calloc(n, sizeof *s->seen);
    for (int i = 0; i < 3; i++)
        s->row[i] = nf__malloc(n);
    if (!s->row[0] || !s->row[1] || !s->row[2] || !s->stamp || !s->layer || !s->next_layer ||
        !s->next_off || !s->cand || !s->work || !s->key || !s->cost || !s->parent || !s->seen) {
        nf__mc_scratch_fini(s);
        return NF_ENOMEM;
    }
    return NF_OK;
}

/* With weights base + load and the base above any sum of loads along a path, Dijkstra's order is
 * lexicographic: (hops, load sum). So the search runs breadth-first from the root, layer by layer
 * of hop distance, and every switch keeps the cheapest load sum over its parents in the previous
 * layer: when a layer is done its costs are final, exactly as Dijkstra would settle them, without
 * a heap. Ties keep the first parent found (parents in search order, then port order). */
int32_t nf__mc_light_tree(const nf__mc_view *v, const nf_node *leaf, uint32_t n, nf_node root,
                          uint32_t limit, bool dag_only, nf_link *links) {
    const nf_fabric *f = v->f;
    nf__mc_scratch *s = v->scr;
    const uint8_t *dr = nf__mc_row(v->h, root, s->row[2]);
    if (s->seen_now >= UINT32_MAX - 2) {
        memset(s->seen, 0, (size_t)f->n_switches * sizeof *s->seen);
        s->seen_now = 0;
    }
    uint32_t in_dag = ++s->seen_now, reached = ++s->seen_now;
    nf_node *q = s->layer;
    uint32_t head = 0, tail = 0;
    if (dag_only) { /* mark the switches on shortest paths from the leaves up to the root */
        for (uint32_t i = 0; i < n; i++)
            if (s->seen[leaf[i]] != in_dag) {
                s->seen[leaf[i]] = in_dag;
                q[tail++] = leaf[i];
            }
        for (; head < tail; head++) {
            nf_node u = q[head];
            for (uint32_t e = f->sw_adj_off[u]; e < f->sw_adj_off[u + 1]; e++) {
                nf_node w = f->sw_adj[e];
                if (dr[w] + 1 != dr[u] || s->seen[w] == in_dag) continue;
                s->seen[w] = in_dag;
                q[tail++] = w;
            }
        }
        head = tail = 0;
    }
    q[tail++] = root;
    s->seen[root] = reached;
    s->cost[root] = 0;
    while (head < tail) {
        nf_node u = q[head++];
        for (uint32_t e = f->sw_adj_off[u]; e < f->sw_adj_off[u + 1]; e++) {
            nf_node w = f->sw_adj[e];
            nf_link l = f->sw_adj_link[e];
            if (dr[w] != dr[u] + 1 || f->link_state[l] != NF_LINK_UP ||
                (limit != UINT32_MAX && v->efi[l] + 1 >= limit))
                continue;
            if (dag_only && s->seen[w] != in_dag && s->seen[w] != reached) continue;
            uint64_t cw = s->cost[u] + v->efi[l];
            if (s->seen[w] != reached) {
                s->seen[w] = reached;
                q[tail++] = w;
            } else if (cw >= s->cost[w]) {
                continue;
            }
            s->cost[w] = cw;
            s->parent[w] = l;
        }
    }
    /* the union of the leaves' paths: walk up to the root or a switch already taken */
    uint32_t stamp = next_stamp(s, f->n_switches);
    s->stamp[root] = stamp;
    int32_t k = 0;
    for (uint32_t i = 0; i < n; i++) {
        nf_node u = leaf[i];
        if (s->seen[u] != reached) return -1;
        while (s->stamp[u] != stamp) {
            s->stamp[u] = stamp;
            nf_link l = s->parent[u];
            links[k++] = l;
            u = f->link_a[l] == u ? f->link_z[l] : f->link_a[l];
        }
    }
    return k;
}

nf_node nf__mc_member_switch(const nf_fabric *f, nf_node ca, unsigned port, nf_link *host_link) {
    if (ca < f->n_switches) { /* a switch itself, by its port 0 */
        *host_link = NF_NONE;
        return ca;
    }
    if (ca >= f->n_nodes || port < 1 || port > f->nports[ca]) return NF_NONE;
    nf_gport g = nf_port_index(f, ca, port);
    nf_node s = f->peer[g];
    if (s == NF_NONE || s >= f->n_switches || f->link_state[f->port_link[g]] != NF_LINK_UP)
        return NF_NONE;
    *host_link = f->port_link[g];
    return s;
}

int nf__mc_opensm_order(const nf_fabric *f, nf_node *order, uint32_t *rank) {
    uint32_t S = f->n_switches;
    nf_node *ids = order ? order : nf__malloc(((size_t)S + 1) * sizeof *ids);
    uint64_t *key = nf__malloc(((size_t)S + 1) * sizeof *key);
    int rc = NF_ENOMEM;
    if (ids && key) {
        for (nf_node s = 0; s < S; s++) {
            ids[s] = s;
            key[s] = nf__mc_opensm_key(f->guid[s]);
        }
        if (!(rc = nf__sort_ids_by_key(ids, key, S)))
            for (uint32_t i = 0; i < S; i++)
                rank[ids[i]] = i;
    }
    if (ids != order) nf__free(ids);
    nf__free(key);
    return rc;
}

uint32_t nf__mc_group_leaves(const nf_fabric *f, const nf_groups *g, uint32_t k, unsigned port,
                             nf_node *leaf, bool *all_cabled) {
    return nf__mc_member_leaves(f, g->member + g->off[k], g->off[k + 1] - g->off[k], port, leaf,
                                all_cabled);
}

uint32_t nf__mc_member_leaves(const nf_fabric *f, const nf_node *member, uint32_t count,
                              unsigned port, nf_node *leaf, bool *all_cabled) {
    uint32_t n = 0;
    bool all = true;
    for (uint32_t i = 0; i < count; i++) {
        nf_link hl;
        nf_node s = nf__mc_member_switch(f, member[i], port, &hl);
        if (s == NF_NONE)
            all = false;
        else
            leaf[n++] = s;
    }
    if (n <= 48) { /* most groups are small: an insertion sort beats qsort's merge sort there */
        for (uint32_t i = 1; i < n; i++) {
            nf_node x = leaf[i];
            uint32_t j = i;
            for (; j > 0 && leaf[j - 1] > x; j--)
                leaf[j] = leaf[j - 1];
            leaf[j] = x;
        }
    } else {
        qsort(leaf, n, sizeof *leaf, cmp_node);
    }
    uint32_t w = 0;
    for (uint32_t i = 0; i < n; i++)
        if (w == 0 || leaf[i] != leaf[w - 1]) leaf[w++] = leaf[i];
    if (all_cabled) *all_cabled = all;
    return w;
}

/* Whether member[0..n) names one CA only (n > 0). */
static bool one_member(const nf_node *member, uint32_t n) {
    for (uint32_t i = 1; i < n; i++)
        if (member[i] != member[0]) return false;
    return true;
}

/* Routes one group whose members hang off the nl distinct switches leaf[] (ascending): root and
 * tree from the engine, the switch links into links[0..*nt), the height. Timings added to *t_root
 * and *t_tree. */
static int route_one(const nf_mcast_engine *e, void *ctx, const nf__mc_view *view,
                     const nf_node *leaf, uint32_t nl, nf_link *links, uint32_t *nt, nf_node *root,
                     uint8_t *height, double *t_root, double *t_tree) {
    double t0 = now_s();
    int rc = e->root(ctx, view, leaf, nl, root);
    double t1 = now_s();
    *nt = 0;
    if (rc == NF_OK) rc = e->tree(ctx, view, leaf, nl, *root, links, nt);
    *t_tree += now_s() - t1;
    *t_root += t1 - t0;
    if (rc) return rc;
    unsigned far = 0;
    for (uint32_t i = 0; i < nl; i++)
        if (nf_hops_sw(view->h, *root, leaf[i]) > far) far = nf_hops_sw(view->h, *root, leaf[i]);
    *height = (uint8_t)(far + 1);
    return NF_OK;
}

/* Adds (dir 1) or takes out (dir -1) a tree's loads: a switch's load is the groups it roots plus
 * the tree links at its ports, i.e. its roots plus the EFI of its inter-switch links. */
static void tree_loads(const nf_fabric *f, uint32_t *efi, uint32_t *sw_load, nf_node root,
                       const nf_link *links, uint32_t n, int dir) {
    uint32_t S = f->n_switches;
    sw_load[root] += (uint32_t)dir;
    for (uint32_t i = 0; i < n; i++) {
        nf_link l = links[i];
        efi[l] += (uint32_t)dir;
        if (f->link_a[l] < S && f->link_z[l] < S) {
            sw_load[f->link_a[l]] += (uint32_t)dir;
            sw_load[f->link_z[l]] += (uint32_t)dir;
        }
    }
}

/* The height of a tree rooted at root over members[0..n) when some are switches: a CA member's
 * switch distance and its host link, a switch member's distance alone (its port 0 is no link;
 * as the tables' analysis counts it, nf_mft). The trees are of shortest paths from the root. */
static uint8_t height_with_sw(const nf_fabric *f, const nf_hops *h, nf_node root,
                              const nf_node *members, uint32_t n, unsigned port) {
    unsigned top = 0;
    for (uint32_t i = 0; i < n; i++) {
        nf_link hl;
        nf_node s = nf__mc_member_switch(f, members[i], port, &hl);
        if (s == NF_NONE) continue;
        unsigned d = nf_hops_sw(h, root, s) + (hl != NF_NONE);
        if (d > top) top = d;
    }
    return (uint8_t)(top > 255 ? 255 : top);
}

/* Records group k's switch members (ascending, once each; none for a group not routed) in
 * m->sw_member, making the arrays at the first such member (the groups before it have none);
 * called for every group in order. *cap: sw_member's room. NF_ENOMEM. */
static int note_sw_members(nf_mcast *m, const nf_fabric *f, const nf_groups *g, uint32_t k,
                           bool routed, size_t *cap) {
    uint32_t n0 = m->sw_member_off ? m->sw_member_off[k] : 0, n = n0;
    for (uint32_t i = g->off[k]; i < g->off[k + 1] && routed; i++) {
        nf_node x = g->member[i];
        if (x >= f->n_switches) continue;
        if (!m->sw_member_off &&
            !(m->sw_member_off = nf__calloc((size_t)m->n_groups + 1, sizeof *m->sw_member_off)))
            return NF_ENOMEM;
        uint32_t j = n; /* insertion, once each: a group has few */
        while (j > n0 && m->sw_member[j - 1] > x)
            j--;
        if (j > n0 && m->sw_member[j - 1] == x) continue;
        if (NF_GROW(m->sw_member, *cap, (size_t)n + 1)) return NF_ENOMEM;
        memmove(m->sw_member + j + 1, m->sw_member + j, (n - j) * sizeof *m->sw_member);
        m->sw_member[j] = x;
        n++;
    }
    if (m->sw_member_off) m->sw_member_off[k + 1] = n;
    return NF_OK;
}

int nf_mcast_route(const nf_fabric *f, const nf_hops *h, const nf_groups *g,
                   const nf_mcast_engine *e, nf_mcast **out, nf_diag *diag) {
    return nf_mcast_route_progress(f, h, g, e, NULL, NULL, out, diag);
}

static int route_all(const nf_fabric *f, const nf_hops *h, const nf_groups *g,
                     const nf_mcast_engine *e, unsigned port,
                     void (*progress)(void *ud, double frac), void *ud, nf_mcast **out,
                     nf_diag *diag);

int nf_mcast_route_progress(const nf_fabric *f, const nf_hops *h, const nf_groups *g,
                            const nf_mcast_engine *e, void (*progress)(void *ud, double frac),
                            void *ud, nf_mcast **out, nf_diag *diag) {
    return route_all(f, h, g, e, 1, progress, ud, out, diag);
}

int nf_mcast_route_port(const nf_fabric *f, const nf_hops *h, const nf_groups *g,
                        const nf_mcast_engine *e, unsigned ca_port, nf_mcast **out, nf_diag *diag) {
    *out = NULL;
    if (ca_port < 1 || ca_port > 2) return NF_EINVAL;
    return route_all(f, h, g, e, ca_port, NULL, NULL, out, diag);
}

static int route_all(const nf_fabric *f, const nf_hops *h, const nf_groups *g,
                     const nf_mcast_engine *e, unsigned port,
                     void (*progress)(void *ud, double frac), void *ud, nf_mcast **out,
                     nf_diag *diag) {
    *out = NULL;
    if (h->n != f->n_switches || !e) return NF_EINVAL;
    uint32_t S = f->n_switches, G = g->n, max_members = 0;
    for (uint32_t k = 0; k < G; k++)
        if (g->off[k + 1] - g->off[k] > max_members) max_members = g->off[k + 1] - g->off[k];
    nf_mcast *m = nf__calloc(1, sizeof *m);
    nf__mc_scratch scr;
    uint32_t *sw_load = NULL;
    nf_node *leaf = NULL;
    nf_link *links = NULL;
    size_t tree_cap = 0, tree_n = 0, swm_cap = 0;
    void *ctx = NULL;
    int rc = NF_ENOMEM;
    bool scratch = false;
    if (!m) return NF_ENOMEM;
    m->n_groups = G;
    m->ca_port = (uint8_t)port;
    m->root = nf__malloc(((size_t)G + 1) * sizeof *m->root);
    m->height = nf__calloc((size_t)G + 1, sizeof *m->height);
    m->status = nf__calloc((size_t)G + 1, sizeof *m->status);
    m->tree_off = nf__calloc((size_t)G + 1, sizeof *m->tree_off);
    m->efi = nf__calloc((size_t)f->n_links + 1, sizeof *m->efi);
    sw_load = nf__calloc((size_t)S + 1, sizeof *sw_load);
    leaf = nf__malloc(((size_t)max_members + 1) * sizeof *leaf);
    links = nf__malloc(((size_t)S + (size_t)max_members + 1) * sizeof *links);
    if (!m->root || !m->height || !m->status || !m->tree_off || !m->efi || !sw_load || !leaf ||
        !links)
        goto fail;
    if ((rc = nf__mc_scratch_init(&scr, S, max_members))) goto fail;
    scratch = true;
    if (e->init && (rc = e->init(&ctx, f, h))) goto fail;

    nf__mc_view view = {
        .f = f, .h = h, .efi = m->efi, .sw_load = sw_load, .ca_port = port, .scr = &scr};
    for (nf_link l = 0; l < f->n_links; l++)
        view.has_global |= f->link_cls[l] == NF_LINK_GLOBAL;

    for (uint32_t k = 0; k < G; k++) {
        if (progress && (k & 63) == 0) progress(ud, (double)k / G);
        m->tree_off[k] = (uint32_t)tree_n;
        m->root[k] = NF_NONE;
        /* members' switches (distinct, ascending) and their host links */
        bool cabled;
        uint32_t nl = nf__mc_group_leaves(f, g, k, port, leaf, &cabled), n_host = 0;
        int status = cabled ? NF_OK : NF_EUNREACHABLE;
        for (uint32_t i = g->off[k]; i < g->off[k + 1] && cabled; i++) {
            nf_link hl = NF_NONE;
            nf__mc_member_switch(f, g->member[i], port, &hl);
            if (hl != NF_NONE) links[S + n_host++] = hl; /* (a switch member has none) */
        }
        if (status == NF_OK && nl == 1 && e->single_empty &&
            one_member(g->member + g->off[k], g->off[k + 1] - g->off[k])) {
            m->root[k] = leaf[0]; /* an empty tree: no links, height 0, no load */
        } else if (status == NF_OK && nl > 0) {
            nf_node root = NF_NONE;
            uint32_t nt = 0;
            uint8_t height = 0;
            rc = route_one(e, ctx, &view, leaf, nl, links, &nt, &root, &height, &m->root_s,
                           &m->tree_s);
            if (rc == NF_ENOMEM) goto fail;
            if (rc == NF_OK) {
                /* record the tree: switch links, then host links; update the loads */
                if ((rc = NF_GROW(m->tree_link, tree_cap, tree_n + nt + n_host))) goto fail;
                memmove(links + nt, links + S, n_host * sizeof *links);
                memcpy(m->tree_link + tree_n, links, (nt + n_host) * sizeof *links);
                tree_n += nt + n_host;
                tree_loads(f, m->efi, sw_load, root, links, nt + n_host, 1);
                m->root[k] = root;
                m->height[k] = height;
            } else {
                status = rc;
            }
        } else if (status == NF_OK) {
            status = NF_EINVAL; /* an empty group */
        }
        m->status[k] = status;
        /* (a group of one member with nothing installed, minihop's, installs no port 0) */
        bool installed = status == NF_OK && (m->tree_off[k] != tree_n || m->height[k] != 0);
        if ((rc = note_sw_members(m, f, g, k, installed, &swm_cap))) goto fail;
        if (m->sw_member_off && m->sw_member_off[k + 1] > m->sw_member_off[k])
            m->height[k] = height_with_sw(f, h, m->root[k], g->member + g->off[k],
                                          g->off[k + 1] - g->off[k], port);
    }
    m->tree_off[G] = (uint32_t)tree_n;
    if (e->refine) {
        double t0 = now_s();
        rc = e->refine(ctx, &view, g, m);
        m->refine_s = now_s() - t0;
        if (rc) goto fail;
    }
    if (!m->tree_link && !(m->tree_link = nf__malloc(sizeof *m->tree_link))) goto fail;
    rc = NF_OK;
    *out = m;
    m = NULL;
fail:
    if (e->fini && ctx) e->fini(ctx);
    if (scratch) nf__mc_scratch_fini(&scr);
    nf__free(sw_load);
    nf__free(leaf);
    nf__free(links);
    nf_mcast_free(m);
    if (rc && diag) {
        diag->file[0] = '\0';
        diag->line = 0;
        snprintf(diag->msg, sizeof diag->msg, "%s: %s", e->name, nf_strerror(rc));
    }
    return rc;
}

/* ---- live routing -------------------------------------------------------------------------- */

struct nf_mcast_live {
    const nf_fabric *f;
    const nf_hops *h;
    const nf_mcast_engine *e;
    void *ctx;
    nf__mc_scratch scr;
    nf__mc_view view;
    uint32_t *efi, *sw_load;
    nf_node *leaf;  /* room for cap_members */
    nf_link *links; /* room for S + cap_members */
    uint32_t cap_members;
};

void nf_mcast_tree_clear(nf_mcast_tree *t) {
    if (!t) return;
    nf__free(t->links);
    memset(t, 0, sizeof *t);
    t->root = NF_NONE;
}

void nf_mcast_live_free(nf_mcast_live *lv) {
    if (!lv) return;
    if (lv->e && lv->e->fini && lv->ctx) lv->e->fini(lv->ctx);
    nf__mc_scratch_fini(&lv->scr);
    nf__free(lv->efi);
    nf__free(lv->sw_load);
    nf__free(lv->leaf);
    nf__free(lv->links);
    nf__free(lv);
}

int nf_mcast_live_new(const nf_fabric *f, const nf_hops *h, const nf_mcast_engine *e,
                      nf_mcast_live **out) {
    *out = NULL;
    if (!e || e->refine || h->n != f->n_switches) return NF_EINVAL;
    nf_mcast_live *lv = nf__calloc(1, sizeof *lv);
    if (!lv) return NF_ENOMEM;
    uint32_t S = f->n_switches;
    lv->f = f;
    lv->h = h;
    lv->efi = nf__calloc((size_t)f->n_links + 1, sizeof *lv->efi);
    lv->sw_load = nf__calloc((size_t)S + 1, sizeof *lv->sw_load);
    int rc = NF_ENOMEM;
    if (!lv->efi || !lv->sw_load || (rc = nf__mc_scratch_init(&lv->scr, S, S))) goto fail;
    lv->e = e; /* from here on free() finalises the engine context */
    if (e->init && (rc = e->init(&lv->ctx, f, h))) goto fail;
    lv->view =
        (nf__mc_view){.f = f, .h = h, .efi = lv->efi, .sw_load = lv->sw_load, .scr = &lv->scr};
    for (nf_link l = 0; l < f->n_links; l++)
        lv->view.has_global |= f->link_cls[l] == NF_LINK_GLOBAL;
    *out = lv;
    return NF_OK;
fail:
    nf_mcast_live_free(lv);
    return rc;
}

int nf_mcast_live_add(nf_mcast_live *lv, const nf_node *members, uint32_t n, nf_mcast_tree *out) {
    const nf_fabric *f = lv->f;
    memset(out, 0, sizeof *out);
    out->root = NF_NONE;
    if (n == 0) return NF_EINVAL;
    for (uint32_t i = 0; i < n; i++)
        if (members[i] >= f->n_nodes) return NF_EINVAL; /* (a switch: its port 0) */
    if (n > lv->cap_members) {
        nf_node *leaf = nf__malloc((size_t)n * sizeof *leaf);
        nf_link *links = nf__malloc(((size_t)f->n_switches + n) * sizeof *links);
        if (!leaf || !links) {
            nf__free(leaf);
            nf__free(links);
            return NF_ENOMEM;
        }
        nf__free(lv->leaf);
        nf__free(lv->links);
        lv->leaf = leaf;
        lv->links = links;
        lv->cap_members = n;
    }
    bool cabled;
    uint32_t nl = nf__mc_member_leaves(f, members, n, 1, lv->leaf, &cabled);
    if (!cabled) return NF_EUNREACHABLE;
    if (nl == 1 && lv->e->single_empty && one_member(members, n)) {
        out->links = nf__malloc(sizeof *out->links); /* an empty tree: height 0, no load */
        if (!out->links) return NF_ENOMEM;
        out->root = lv->leaf[0];
        return NF_OK;
    }
    nf_node root = NF_NONE;
    uint32_t nt = 0;
    uint8_t height = 0;
    double t_root = 0, t_tree = 0;
    int rc = route_one(lv->e, lv->ctx, &lv->view, lv->leaf, nl, lv->links, &nt, &root, &height,
                       &t_root, &t_tree);
    if (rc) return rc;
    /* host links: one per distinct member (members may repeat: sort and drop repeats) */
    uint32_t nh = 0;
    nf_link *hl = lv->links + nt;
    for (uint32_t i = 0; i < n; i++) {
        nf_link l; /* every member is cabled (checked above); a switch member has no link */
        if (nf__mc_member_switch(f, members[i], 1, &l) == NF_NONE) return NF_EUNREACHABLE;
        if (l != NF_NONE) hl[nh++] = l;
    }
    qsort(hl, nh, sizeof *hl, cmp_node);
    uint32_t w = 0;
    for (uint32_t i = 0; i < nh; i++)
        if (w == 0 || hl[i] != hl[w - 1]) hl[w++] = hl[i];
    out->links = nf__malloc(((size_t)nt + w + 1) * sizeof *out->links);
    if (!out->links) return NF_ENOMEM;
    memcpy(out->links, lv->links, ((size_t)nt + w) * sizeof *out->links);
    out->n_links = nt + w;
    out->root = root;
    out->height = height;
    for (uint32_t i = 0; i < n; i++)
        if (members[i] < f->n_switches) { /* a switch member: no link beyond its switch */
            out->height = height_with_sw(f, lv->h, root, members, n, 1);
            break;
        }
    tree_loads(f, lv->efi, lv->sw_load, root, out->links, out->n_links, 1);
    return NF_OK;
}

int nf_mcast_live_adopt(nf_mcast_live *lv, const nf_mcast_tree *t) {
    if (t->root >= lv->f->n_switches) return NF_EINVAL;
    for (uint32_t i = 0; i < t->n_links; i++)
        if (t->links[i] >= lv->f->n_links) return NF_EINVAL;
    if (t->n_links == 0) return NF_OK; /* an empty tree carries no load, not even at its root */
    tree_loads(lv->f, lv->efi, lv->sw_load, t->root, t->links, t->n_links, 1);
    return NF_OK;
}

void nf_mcast_live_remove(nf_mcast_live *lv, const nf_mcast_tree *t) {
    if (t->n_links == 0) return; /* an empty tree added no load */
    tree_loads(lv->f, lv->efi, lv->sw_load, t->root, t->links, t->n_links, -1);
}

const uint32_t *nf_mcast_live_efi(const nf_mcast_live *lv) { return lv->efi; }
