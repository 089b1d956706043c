/* SPDX-License-Identifier: MIT */
/* Synthetic traffic patterns (sim.h). Endpoints are numbered 0..E-1 in CA order; bit patterns
 * work on the low log2(E) bits and send nowhere when the partner falls outside (E not a power of
 * two), as is usual. */
#include "sim/sim_internal.h"

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
} tctx;

static void t_fini(void *ctx) {
    tctx *t = ctx;
    if (!t) return;
    nf__free(t->perm);
    nf__free(t->group);
    nf__free(t->first);
    nf__free(t->turn);
    nf__free(t);
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
    PATTERN("allreduce", d_allreduce, "recursive doubling: partners src^1, src^2, src^4, ..."),
    {.name = "hotspot-set",
     .summary = "every eighth endpoint sends all to one endpoint, the others uniform",
     .init = t_init,
     .dest = d_hotset,
     .fini = t_fini,
     .hot = t_hot},
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
