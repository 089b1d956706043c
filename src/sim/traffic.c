/* SPDX-License-Identifier: MIT */
/* Synthetic traffic patterns (sim.h). Endpoints are numbered 0..E-1 in CA order; bit patterns
 * work on the low log2(E) bits and send nowhere when the partner falls outside (E not a power of
 * two), as is usual; netfab's own patterns never send a packet to its source.
 *
 * The bs-* patterns are BookSim2's (its traffic.cpp), for runs held against it: a source the
 * pattern maps to itself sends to itself (through its router and back), uniform draws among all
 * endpoints, the permutation may have fixed points, and tornado and neighbor shift every digit
 * of the node's k-ary n-cube address. On a generated torus with one endpoint per switch the
 * address is BookSim2's kncube numbering, dimension 0 fastest (the dimension dor routes first;
 * netfab's own endpoint order is row-major, the last dimension fastest), and digit d has that
 * dimension's radix; on other fabrics the address is the endpoint's index: on a tree of k
 * endpoints per leaf switch and k^n in all (a k-ary n-tree, BookSim2's fattree) n digits of
 * radix k, else one digit of radix E. */
#include "sim/sim_internal.h"

#include "util/diag.h"
#include "util/mem.h"
#include "util/rng.h"

#include <string.h>

typedef struct tctx {
    uint32_t E;
    unsigned bits;   /* floor(log2(E)) */
    uint32_t *perm;  /* permutation */
    uint32_t *group; /* worstcase: endpoint -> Dragonfly group (supernode), or NULL */
    uint32_t *first; /* worstcase: group -> first endpoint of it; n_groups + 1 entries */
    uint32_t n_groups;
    uint32_t hot;   /* hotspot: the hot endpoint */
    uint32_t *turn; /* alltoall, allreduce: per source, its next partner's turn */
    /* bs-*: endpoint -> BookSim2 node number and back, or NULL (the same); the radix of each
     * address digit, least significant first */
    uint32_t *to_bs, *from_bs;
    uint32_t gx, gy, gz; /* stencil3d, fft3d: the grid, x fastest */
    unsigned n_dig;
    uint32_t radix[NF_FABRIC_TORUS_MAX_D];
} tctx;

static void t_fini(void *ctx) {
    tctx *t = ctx;
    if (!t) return;
    nf__free(t->perm);
    nf__free(t->group);
    nf__free(t->first);
    nf__free(t->turn);
    nf__free(t->to_bs);
    nf__free(t->from_bs);
    nf__free(t);
}

/* BookSim2's node numbers (see the top): on a generated torus whose E endpoints sit one per
 * switch, in switch order, endpoint e's number has switch e's coordinate in dimension d as its
 * digit d; elsewhere the index itself, in k-ary digits on a k-ary n-tree. */
static int bs_numbering(tctx *t, const nf_fabric *f, const nf_node *ep) {
    uint32_t E = t->E;
    t->n_dig = 1; /* by default one digit of radix E */
    t->radix[0] = E;
    if (!E) return NF_OK;
    bool cube = f->torus_nd > 0 && E == f->n_switches;
    for (uint32_t i = 0; cube && i < E; i++)
        cube = f->peer[nf_port_index(f, ep[i], 1)] == i;
    nf_node leaf = f->peer[nf_port_index(f, ep[0], 1)];
    if (!cube && f->level[leaf] > 0) { /* a tree of k endpoints a leaf and k^n in all */
        uint32_t k = 1, n = 0;
        while (k < E && f->peer[nf_port_index(f, ep[k], 1)] == leaf)
            k++;
        uint64_t pow = 1;
        while (k > 1 && pow < E && n < NF_FABRIC_TORUS_MAX_D)
            pow *= k, n++;
        if (k > 1 && pow == E) {
            t->n_dig = n;
            for (unsigned d = 0; d < n; d++)
                t->radix[d] = k;
        }
        return NF_OK;
    }
    if (!cube) return NF_OK;
    t->to_bs = nf__malloc((size_t)E * sizeof *t->to_bs);
    t->from_bs = nf__malloc((size_t)E * sizeof *t->from_bs);
    if (!t->to_bs || !t->from_bs) return NF_ENOMEM;
    t->n_dig = f->torus_nd;
    for (unsigned d = 0; d < t->n_dig; d++)
        t->radix[d] = f->torus_dims[d];
    for (uint32_t e = 0; e < E; e++) {
        uint32_t rest = e, num = 0, weight = 1; /* row-major: the last dimension fastest */
        uint32_t coord[NF_FABRIC_TORUS_MAX_D];
        for (unsigned d = t->n_dig; d-- > 0;) {
            coord[d] = rest % t->radix[d];
            rest /= t->radix[d];
        }
        for (unsigned d = 0; d < t->n_dig; d++) {
            num += coord[d] * weight;
            weight *= t->radix[d];
        }
        t->to_bs[e] = num;
        t->from_bs[num] = e;
    }
    return NF_OK;
}

static int t_init(void **out, const nf_fabric *f, uint32_t E, const nf_node *ep, uint64_t seed,
                  nf_diag *diag) {
    (void)diag;
    tctx *t = nf__calloc(1, sizeof *t);
    if (!t) return NF_ENOMEM;
    t->E = E;
    while ((2ULL << t->bits) <= E)
        t->bits++;
    t->perm = nf__malloc((size_t)E * sizeof *t->perm);
    t->group = nf__malloc((size_t)E * sizeof *t->group);
    t->turn = nf__calloc(E, sizeof *t->turn);
    if (!t->perm || !t->group || !t->turn) {
        t_fini(t);
        return NF_ENOMEM;
    }
    /* a random permutation without fixed points (a derangement by rotation of a shuffle) */
    nf__rng r;
    nf__rng_seed(&r, seed ^ 0x7e12a11cULL);
    uint32_t *order = t->turn; /* scratch */
    for (uint32_t i = 0; i < E; i++)
        order[i] = i;
    nf__rng_shuffle_u32(&r, order, E);
    for (uint32_t i = 0; i < E; i++)
        t->perm[order[i]] = order[(i + 1) % E];
    memset(t->turn, 0, (size_t)E * sizeof *t->turn);
    t->hot = E ? nf__rng_below(&r, E) : 0;
    /* groups (supernodes of the endpoints' switches), for the Dragonfly worst case */
    int32_t max_g = -1;
    for (uint32_t i = 0; i < E; i++) {
        nf_node sw = f->peer[nf_port_index(f, ep[i], 1)];
        int32_t g = f->supernode[sw];
        t->group[i] = g < 0 ? 0 : (uint32_t)g;
        if (g > max_g) max_g = g;
    }
    t->n_groups = (uint32_t)(max_g + 1);
    t->first = nf__calloc((size_t)t->n_groups + 2, sizeof *t->first);
    if (!t->first) {
        t_fini(t);
        return NF_ENOMEM;
    }
    for (uint32_t g = 0; g <= t->n_groups; g++)
        t->first[g] = UINT32_MAX;
    for (uint32_t i = E; i-- > 0;)
        t->first[t->group[i]] = i;
    *out = t;
    return NF_OK;
}

/* The bs-* patterns' context: netfab's, with BookSim2's node numbers */
static int t_init_bs(void **out, const nf_fabric *f, uint32_t E, const nf_node *ep, uint64_t seed,
                     nf_diag *diag) {
    int rc = t_init(out, f, E, ep, seed, diag);
    if (rc) return rc;
    if ((rc = bs_numbering(*out, f, ep))) {
        t_fini(*out);
        *out = NULL;
    }
    return rc;
}

/* bs-randperm's context: its permutation of node numbers a shuffle, fixed points and all */
static int t_init_perm(void **out, const nf_fabric *f, uint32_t E, const nf_node *ep, uint64_t seed,
                       nf_diag *diag) {
    int rc = t_init_bs(out, f, E, ep, seed, diag);
    if (rc) return rc;
    tctx *t = *out;
    nf__rng r;
    nf__rng_seed(&r, seed ^ 0xb005e1aULL);
    for (uint32_t i = 0; i < E; i++)
        t->perm[i] = i;
    nf__rng_shuffle_u32(&r, t->perm, E);
    return NF_OK;
}

static uint32_t d_uniform(void *ctx, uint32_t src, uint64_t (*rnd)(void *), void *ud) {
    tctx *t = ctx;
    if (t->E < 2) return UINT32_MAX;
    uint32_t d = (uint32_t)((rnd(ud) >> 32) * (t->E - 1) >> 32);
    return d >= src ? d + 1 : d;
}

static uint32_t d_perm(void *ctx, uint32_t src, uint64_t (*rnd)(void *), void *ud) {
    (void)rnd, (void)ud;
    return ((tctx *)ctx)->perm[src];
}

static uint32_t d_bitcomp(void *ctx, uint32_t src, uint64_t (*rnd)(void *), void *ud) {
    (void)rnd, (void)ud;
    tctx *t = ctx;
    uint32_t mask = t->bits ? (uint32_t)((1ULL << t->bits) - 1) : 0;
    return src > mask ? UINT32_MAX : ~src & mask;
}

static uint32_t d_transpose(void *ctx, uint32_t src, uint64_t (*rnd)(void *), void *ud) {
    (void)rnd, (void)ud;
    tctx *t = ctx;
    unsigned h = t->bits / 2;
    if (src >> (2 * h)) return UINT32_MAX;
    uint32_t lo = src & ((1u << h) - 1), hi = src >> h;
    return lo << h | hi;
}

/* tornado: halfway round the endpoint ring, minus one (the classic ceil(k/2) - 1 shift) */
static uint32_t d_tornado(void *ctx, uint32_t src, uint64_t (*rnd)(void *), void *ud) {
    (void)rnd, (void)ud;
    tctx *t = ctx;
    uint32_t shift = (t->E + 1) / 2 - 1;
    return shift ? (src + shift) % t->E : UINT32_MAX;
}

/* hotspot: a quarter of the packets to one endpoint, the rest uniform */
static uint32_t d_hotspot(void *ctx, uint32_t src, uint64_t (*rnd)(void *), void *ud) {
    tctx *t = ctx;
    if ((rnd(ud) & 3) == 0 && src != t->hot) return t->hot;
    return d_uniform(ctx, src, rnd, ud);
}

/* hotspot-set: every eighth endpoint (7, 15, ...) sends all its packets to the hot one, the
 * others uniform */
static uint32_t d_hotset(void *ctx, uint32_t src, uint64_t (*rnd)(void *), void *ud) {
    tctx *t = ctx;
    if (src % 8 == 7 && src != t->hot) return t->hot;
    return d_uniform(ctx, src, rnd, ud);
}

static uint32_t t_hot(void *ctx) { return ((tctx *)ctx)->hot; }

/* Dragonfly worst case: every endpoint of group i sends to a random endpoint of group i+1 */
static uint32_t d_worst(void *ctx, uint32_t src, uint64_t (*rnd)(void *), void *ud) {
    tctx *t = ctx;
    if (t->n_groups < 2) return d_uniform(ctx, src, rnd, ud);
    uint32_t g = (t->group[src] + 1) % t->n_groups;
    uint32_t lo = t->first[g], hi = lo;
    if (lo == UINT32_MAX) return UINT32_MAX;
    while (hi < t->E && t->group[hi] == g)
        hi++;
    return lo + (uint32_t)((rnd(ud) >> 32) * (hi - lo) >> 32);
}

/* all-to-all: each source cycles through every other endpoint in turn */
static uint32_t d_alltoall(void *ctx, uint32_t src, uint64_t (*rnd)(void *), void *ud) {
    (void)rnd, (void)ud;
    tctx *t = ctx;
    if (t->E < 2) return UINT32_MAX;
    uint32_t k = t->turn[src];
    t->turn[src] = (k + 1) % (t->E - 1);
    return (src + 1 + k) % t->E;
}

/* all-reduce by recursive doubling: a source's successive messages go to its partners of the
 * log2 E stages in turn, src XOR 1, XOR 2, XOR 4, ... (low log2 E bits, as the bit patterns) */
static uint32_t d_allreduce(void *ctx, uint32_t src, uint64_t (*rnd)(void *), void *ud) {
    (void)rnd, (void)ud;
    tctx *t = ctx;
    if (!t->bits || src >> t->bits) return UINT32_MAX;
    uint32_t k = t->turn[src];
    t->turn[src] = (k + 1) % t->bits;
    return src ^ (1u << k);
}

/* ---- the Q-adaptive authors' patterns (their SST/Merlin trafficgen) ---------------------------
 * On a grid of (endpoints a switch) x (switches a group) x groups, x fastest: endpoint e at
 * (e mod X, e / X mod Y, e / (X Y)), a Dragonfly's endpoint order. stencil3d: each source sends
 * to its 6 neighbours in turn (-x, +x, -y, +y, -z, +z, periodic); fft3d: to the endpoint of its
 * (x, y) in every other z (group) in turn, an all-to-all among the groups. A neighbour that is
 * the source itself (a dimension of 1 or 2) is passed over. */
static int t_init_grid(void **out, const nf_fabric *f, uint32_t E, const nf_node *ep, uint64_t seed,
                       nf_diag *diag) {
    int rc = t_init(out, f, E, ep, seed, diag);
    if (rc || !E) return rc;
    tctx *t = *out;
    nf_node sw0 = f->peer[nf_port_index(f, ep[0], 1)];
    uint32_t x = 0, g0 = 0;
    while (x < E && f->peer[nf_port_index(f, ep[x], 1)] == sw0)
        x++;
    while (g0 < E && t->group[g0] == t->group[0])
        g0++;
    t->gx = x, t->gy = g0 / x, t->gz = (uint32_t)(E / ((uint64_t)x * (g0 / x)));
    if ((uint64_t)t->gx * t->gy * t->gz != E || g0 % x) {
        t_fini(t);
        *out = NULL;
        return nf__fail(diag, NF_EINVAL,
                        "the grid patterns need every switch with %u endpoints and every group "
                        "with %u: %u endpoints are no such grid",
                        x, g0, E);
    }
    return NF_OK;
}

static int t_init_fft(void **out, const nf_fabric *f, uint32_t E, const nf_node *ep, uint64_t seed,
                      nf_diag *diag) {
    int rc = t_init_grid(out, f, E, ep, seed, diag);
    if (rc || !E || ((tctx *)*out)->gz > 1) return rc;
    t_fini(*out);
    *out = NULL;
    return nf__fail(diag, NF_EINVAL, "fft3d sends among groups: the fabric has one group");
}

static uint32_t grid_at(const tctx *t, uint32_t x, uint32_t y, uint32_t z) {
    return x + t->gx * (y + t->gy * z);
}

static uint32_t d_stencil(void *ctx, uint32_t src, uint64_t (*rnd)(void *), void *ud) {
    (void)rnd, (void)ud;
    tctx *t = ctx;
    uint32_t x = src % t->gx, y = src / t->gx % t->gy, z = src / (t->gx * t->gy);
    for (int tries = 0; tries < 6; tries++) {
        uint32_t k = t->turn[src];
        t->turn[src] = (k + 1) % 6;
        uint32_t d;
        switch (k) {
        case 0: d = grid_at(t, (x + t->gx - 1) % t->gx, y, z); break;
        case 1: d = grid_at(t, (x + 1) % t->gx, y, z); break;
        case 2: d = grid_at(t, x, (y + t->gy - 1) % t->gy, z); break;
        case 3: d = grid_at(t, x, (y + 1) % t->gy, z); break;
        case 4: d = grid_at(t, x, y, (z + t->gz - 1) % t->gz); break;
        default: d = grid_at(t, x, y, (z + 1) % t->gz);
        }
        if (d != src) return d;
    }
    return UINT32_MAX;
}

static uint32_t d_fft3d(void *ctx, uint32_t src, uint64_t (*rnd)(void *), void *ud) {
    (void)rnd, (void)ud;
    tctx *t = ctx;
    if (t->gz < 2) return UINT32_MAX;
    uint32_t xy = src % (t->gx * t->gy), z = src / (t->gx * t->gy);
    uint32_t k = t->turn[src];
    t->turn[src] = (k + 1) % (t->gz - 1);
    return xy + t->gx * t->gy * ((z + 1 + k) % t->gz);
}

/* ---- BookSim2's patterns: on node numbers (bs_numbering), self-sends kept ---- */

static uint32_t bs_num(const tctx *t, uint32_t e) { return t->to_bs ? t->to_bs[e] : e; }
static uint32_t bs_ep(const tctx *t, uint32_t n) {
    if (n >= t->E) return UINT32_MAX;
    return t->from_bs ? t->from_bs[n] : n;
}

static uint32_t b_uniform(void *ctx, uint32_t src, uint64_t (*rnd)(void *), void *ud) {
    (void)src;
    tctx *t = ctx;
    return (uint32_t)((rnd(ud) >> 32) * t->E >> 32);
}

/* every digit shifted by add(radix) */
static uint32_t b_digits(const tctx *t, uint32_t src, bool tornado) {
    uint32_t n = bs_num(t, src), out = 0, weight = 1;
    for (unsigned d = 0; d < t->n_dig; d++) {
        uint32_t k = t->radix[d], x = n % k;
        n /= k;
        out += (x + (tornado ? (k + 1) / 2 - 1 : 1)) % k * weight;
        weight *= k;
    }
    return bs_ep(t, out);
}
static uint32_t b_tornado(void *ctx, uint32_t src, uint64_t (*rnd)(void *), void *ud) {
    (void)rnd, (void)ud;
    return b_digits(ctx, src, true);
}
static uint32_t b_neighbor(void *ctx, uint32_t src, uint64_t (*rnd)(void *), void *ud) {
    (void)rnd, (void)ud;
    return b_digits(ctx, src, false);
}

static uint32_t b_perm(void *ctx, uint32_t src, uint64_t (*rnd)(void *), void *ud) {
    (void)rnd, (void)ud;
    tctx *t = ctx;
    return bs_ep(t, t->perm[bs_num(t, src)]);
}

/* the bit patterns, on the node number's log2(E) bits (E a power of two; else the numbers past
 * the largest power of two below E send nowhere) */
enum { B_BITCOMP, B_TRANSPOSE, B_BITREV, B_SHUFFLE };
static uint32_t b_bits(const tctx *t, uint32_t src, int kind) {
    uint32_t n = bs_num(t, src), B = t->bits, mask = B ? (uint32_t)((1ULL << B) - 1) : 0, out = 0;
    if (n > mask) return UINT32_MAX;
    switch (kind) {
    case B_BITCOMP: out = ~n & mask; break;
    case B_TRANSPOSE: /* swap the halves (an even number of bits) */
        if (B % 2) return UINT32_MAX;
        out = (n >> B / 2) | ((n << B / 2) & mask);
        break;
    case B_BITREV:
        for (unsigned b = 0; b < B; b++)
            out |= (n >> b & 1u) << (B - 1 - b);
        break;
    default: out = B ? ((n << 1) & mask) | (n >> (B - 1)) : 0; /* B_SHUFFLE: rotate left by 1 */
    }
    return bs_ep(t, out);
}
static uint32_t b_bitcomp(void *ctx, uint32_t src, uint64_t (*rnd)(void *), void *ud) {
    (void)rnd, (void)ud;
    return b_bits(ctx, src, B_BITCOMP);
}
static uint32_t b_transpose(void *ctx, uint32_t src, uint64_t (*rnd)(void *), void *ud) {
    (void)rnd, (void)ud;
    return b_bits(ctx, src, B_TRANSPOSE);
}
static uint32_t b_bitrev(void *ctx, uint32_t src, uint64_t (*rnd)(void *), void *ud) {
    (void)rnd, (void)ud;
    return b_bits(ctx, src, B_BITREV);
}
static uint32_t b_shuffle(void *ctx, uint32_t src, uint64_t (*rnd)(void *), void *ud) {
    (void)rnd, (void)ud;
    return b_bits(ctx, src, B_SHUFFLE);
}

#define BS_PATTERN(n, i, fn, sum)                                                                  \
    { .name = n, .summary = sum, .init = i, .dest = fn, .fini = t_fini, .self = true }

#define PATTERN(n, fn, sum)                                                                        \
    { .name = n, .summary = sum, .init = t_init, .dest = fn, .fini = t_fini }
static const nf_sim_traffic patterns[] = {
    PATTERN("uniform", d_uniform, "every packet to a uniformly random other endpoint"),
    PATTERN("permutation", d_perm, "a random derangement, fixed for the seed"),
    PATTERN("bitcomp", d_bitcomp, "to the bitwise complement (low log2 E bits)"),
    PATTERN("transpose", d_transpose, "swap the two halves of the endpoint's bits"),
    PATTERN("tornado", d_tornado, "halfway round the endpoint ring, minus one"),
    {.name = "hotspot",
     .summary = "a quarter of the packets to one endpoint, the rest uniform",
     .init = t_init,
     .dest = d_hotspot,
     .fini = t_fini,
     .hot = t_hot},
    PATTERN("worstcase", d_worst, "Dragonfly: every node of group i to group i+1"),
    PATTERN("alltoall", d_alltoall, "each endpoint cycles through all the others"),
    {.name = "stencil3d",
     .summary = "the Q-adaptive authors' Stencil_3D: to the 6 neighbours in turn on an (endpoints "
                "a switch) x (switches a group) x groups torus",
     .init = t_init_grid,
     .dest = d_stencil,
     .fini = t_fini},
    {.name = "fft3d",
     .summary = "the Q-adaptive authors' FFT3D_all2all: to the endpoint of the same place and "
                "switch in every other group in turn",
     .init = t_init_fft,
     .dest = d_fft3d,
     .fini = t_fini},
    PATTERN("allreduce", d_allreduce, "recursive doubling: partners src^1, src^2, src^4, ..."),
    {.name = "hotspot-set",
     .summary = "every eighth endpoint sends all to one endpoint, the others uniform",
     .init = t_init,
     .dest = d_hotset,
     .fini = t_fini,
     .hot = t_hot},
    BS_PATTERN("bs-uniform", t_init_bs, b_uniform, "BookSim2's uniform: any endpoint, itself too"),
    BS_PATTERN("bs-randperm", t_init_perm, b_perm,
               "BookSim2's randperm: a random permutation, fixed points too"),
    BS_PATTERN("bs-tornado", t_init_bs, b_tornado,
               "BookSim2's tornado: every digit of the node's address + ceil(k/2) - 1"),
    BS_PATTERN("bs-neighbor", t_init_bs, b_neighbor,
               "BookSim2's neighbor: every digit of the node's address + 1"),
    BS_PATTERN("bs-bitcomp", t_init_bs, b_bitcomp, "BookSim2's bitcomp: the complement"),
    BS_PATTERN("bs-transpose", t_init_bs, b_transpose,
               "BookSim2's transpose: the address's bit halves swapped"),
    BS_PATTERN("bs-bitrev", t_init_bs, b_bitrev, "BookSim2's bitrev: the address's bits reversed"),
    BS_PATTERN("bs-shuffle", t_init_bs, b_shuffle,
               "BookSim2's shuffle: the address's bits rotated left by one"),
};

const nf_sim_traffic *nf_sim_traffic_find(const char *name) {
    for (size_t i = 0; name && i < sizeof patterns / sizeof patterns[0]; i++)
        if (strcmp(patterns[i].name, name) == 0) return &patterns[i];
    return NULL;
}
size_t nf_sim_traffic_count(void) { return sizeof patterns / sizeof patterns[0]; }
const nf_sim_traffic *nf_sim_traffic_at(size_t i) {
    return i < nf_sim_traffic_count() ? &patterns[i] : NULL;
}
const char *nf_sim_traffic_name(const nf_sim_traffic *t) { return t->name; }
const char *nf_sim_traffic_summary(const nf_sim_traffic *t) { return t->summary; }
