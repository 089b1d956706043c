/* SPDX-License-Identifier: MIT */
/* Q-adaptive as netfab first read it (sim.h, "qadapt-nf"; "qadapt" is the authors' own,
 * qadapt.c): Dragonfly routers that learn where to send a packet, after Kang,
 * Wang and Lan's multi-agent reinforcement learning routing. Each router keeps a table of
 * estimated cycles to delivery per destination and output port, chooses by them (and by its own
 * ports' queues, --q-local), and corrects them from what the next router tells it back (the
 * engine's learning hooks, nf_sim_routing.learns). docs/qadapt.md says what is taken from the
 * paper and what we assumed. */
#include "sim/sim_internal.h"

#include "util/diag.h"
#include "util/mem.h"

#include <math.h>
#include <string.h>

/* The two-level table. A router of group gc keeps one row per destination group (rows 0..ng-1,
 * its own group's row unused) and one per router of its own group (rows ng + rank), not one per
 * destination router: a packet bound to another group is routed by its group until it gets
 * there. Columns are the router's switch-to-switch ports in port order. An entry is the
 * estimated cycles from the packet's arrival at this router to its arrival at its destination
 * switch when it leaves by that port.
 *
 * Ways. A packet takes at most one local hop in each group it visits and visits at most three:
 *   source router (hops 0, SRC):  any port: a global one (to the destination group: minimal;
 *                                 to another: that is the intermediate group) or a local one;
 *   second source router (SRC2): any global port (a local hop here has been taken);
 *   intermediate group (MID):     the minimal way to the destination group: a direct global
 *                                 port, else a local port to a router that has one (arrived
 *                                 over a local link: a direct global port only);
 *   destination group (DST):      the local port to the destination router.
 * So the channels a packet holds run L0 G0 L1 G1 L2 in VC classes 0, 0, 1, 1, 2 of three (the
 * class of a hop is the number of global links crossed before it; the destination group's is
 * 2): the dependency graph has no cycle, as for val and ugal (route --check proves it). */

typedef enum q_phase { PH_SRC, PH_SRC2, PH_MID, PH_DST } q_phase;

typedef struct q_ctx {
    const nf_fabric *f;
    const uint8_t *ls; /* the link states it goes by */
    unsigned V;
    uint32_t ng, amax, nrows; /* groups, the largest group, rows of a table (ng + amax) */
    int32_t *grp;             /* per switch: its group */
    uint32_t *rank;           /* per switch: its index in its group */
    uint32_t *gsize;          /* per group: its switches */
    uint8_t *in_global;       /* per global port: its link is global */
    uint16_t *col;            /* per global port of a switch: its column (switch ports only) */
    uint32_t *ncol;           /* per switch: its columns */
    uint64_t *qoff;           /* per switch: its table's first entry in q */
    float *q;                 /* the tables */
    uint8_t *gw;              /* S * ng: switch s has a global link up to group g */
    float *mid, *src2;        /* S * ng: q_start's ways to group g from switch s */
    float alpha, eps, threshold, bias, local;
    unsigned sample;
    float hop_local, hop_global; /* a hop's cycles in an empty network */
} q_ctx;

static void q_fini(void *ctx) {
    q_ctx *d = ctx;
    if (!d) return;
    nf__free(d->grp);
    nf__free(d->rank);
    nf__free(d->gsize);
    nf__free(d->in_global);
    nf__free(d->col);
    nf__free(d->ncol);
    nf__free(d->qoff);
    nf__free(d->q);
    nf__free(d->gw);
    nf__free(d->mid);
    nf__free(d->src2);
    nf__free(d);
}

static inline bool q_up(const q_ctx *d, nf_link l) { return d->ls[l] == NF_LINK_UP; }

/* The row of switch x's table a packet for switch t counts in. */
static inline uint32_t q_row(const q_ctx *d, nf_node x, nf_node t) {
    return d->grp[t] == d->grp[x] ? d->ng + d->rank[t] : (uint32_t)d->grp[t];
}

static inline float *q_at(const q_ctx *d, nf_node x, uint32_t row) {
    return d->q + d->qoff[x] + (uint64_t)row * d->ncol[x];
}

/* The phase of a packet at sw for switch t that came in by in_port on in_vc after hops links. */
static q_phase q_phase_of(const q_ctx *d, nf_node sw, unsigned in_port, unsigned in_vc,
                          unsigned hops, nf_node t) {
    if (d->grp[sw] == d->grp[t]) return PH_DST;
    if (d->in_global[nf_port_index(d->f, sw, in_port)] || in_vc >= d->V / 3) return PH_MID;
    return hops == 0 ? PH_SRC : PH_SRC2;
}

/* VC class k of three as a candidate on port. */
static nf_sim_cand q_cand(const q_ctx *d, unsigned port, unsigned k) {
    return (nf_sim_cand){.port = (uint8_t)port,
                         .vc_lo = (uint8_t)(k * d->V / 3),
                         .vc_hi = (uint8_t)((k + 1) * d->V / 3 - 1)};
}

/* The candidates of a packet in phase ph at sw for switch t (in_global: it came over a global
 * link), with their columns, into out and cols; returns their number. Links that are down are
 * left out. */
static unsigned q_cands(const q_ctx *d, nf_node sw, q_phase ph, bool in_global, nf_node t,
                        nf_sim_cand *out, uint16_t *cols, uint8_t *minimal, unsigned max) {
    const nf_fabric *f = d->f;
    int32_t gd = d->grp[t];
    unsigned n = 0, k = ph == PH_DST ? 2 : ph == PH_MID ? 1 : 0;
    bool direct = false; /* sw has a global link up to gd */
    if (ph != PH_DST)
        for (uint32_t e = f->sw_adj_off[sw]; e < f->sw_adj_off[sw + 1] && !direct; e++)
            direct = f->link_cls[f->sw_adj_link[e]] == NF_LINK_GLOBAL &&
                     d->grp[f->sw_adj[e]] == gd && q_up(d, f->sw_adj_link[e]);
    for (uint32_t e = f->sw_adj_off[sw]; e < f->sw_adj_off[sw + 1] && n < max; e++) {
        nf_link l = f->sw_adj_link[e];
        if (!q_up(d, l)) continue;
        nf_node w = f->sw_adj[e];
        bool global = f->link_cls[l] == NF_LINK_GLOBAL;
        bool take;
        switch (ph) {
        case PH_SRC: take = true; break;
        case PH_SRC2: take = global; break;
        case PH_MID:
            take = global ? d->grp[w] == gd
                          : !direct && in_global && d->gw[(size_t)w * d->ng + (uint32_t)gd];
            break;
        default: take = w == t; break;
        }
        if (!take) continue;
        unsigned port = f->sw_adj_port[e];
        out[n] = q_cand(d, port, k);
        /* the minimal way on: a direct global link, else a local one to a router with one */
        if (minimal)
            minimal[n] =
                ph >= PH_MID ||
                (global ? d->grp[w] == gd : !direct && d->gw[(size_t)w * d->ng + (uint32_t)gd]);
        cols[n++] = d->col[nf_port_index(f, sw, port)];
    }
    return n;
}

/* The least estimate among a packet's candidates (the routing's value of it at sw). */
static float q_best(const q_ctx *d, nf_node sw, q_phase ph, bool in_global, nf_node t) {
    nf_sim_cand c[NF_SIM_MAX_RADIX];
    uint16_t cols[NF_SIM_MAX_RADIX];
    unsigned n = q_cands(d, sw, ph, in_global, t, c, cols, NULL, NF_SIM_MAX_RADIX);
    const float *row = q_at(d, sw, q_row(d, sw, t));
    float best = INFINITY;
    for (unsigned i = 0; i < n; i++)
        if (row[cols[i]] < best) best = row[cols[i]];
    return n ? best : 0;
}

/* ---- the starting estimates ------------------------------------------------------------------
 *
 * Made at init and again at every run's start, in scratch kept from init (mid, src2). A run starts
 * from what an empty network would give (cycles of a hop: router delay plus link latency): per
 * switch y and group g, A = the best way on from y by a direct global link to g, M = the
 * intermediate group's minimal way (A, else a local hop to a router with a direct link), S2 = the
 * second source router's (any global link, then M in the group reached); the entry of a global port
 * toward group h is a global hop then M of the far switch (a local hop in g on average when h = g),
 * of a local port to z a local hop then S2 of z. Own-group rows: one local hop. */

static void q_start(q_ctx *d) {
    const nf_fabric *f = d->f;
    size_t S = f->n_switches, ng = d->ng;
    float *M = d->mid, *S2 = d->src2;
    /* A: by y's own global link to g (gw), then one local hop in g unless at the destination:
     * on average (|g| - 1) / |g| of one */
#define Q_A(y, g)                                                                                  \
    (d->gw[(size_t)(y)*ng + (g)]                                                                   \
         ? d->hop_global + (float)(d->gsize[g] - 1) / (float)d->gsize[g] * d->hop_local            \
         : INFINITY)
    for (size_t y = 0; y < S; y++)
        for (size_t g = 0; g < ng; g++) {
            float best = Q_A(y, g);
            if (!isfinite(best))
                for (uint32_t e = f->sw_adj_off[y]; e < f->sw_adj_off[y + 1]; e++) {
                    if (f->link_cls[f->sw_adj_link[e]] == NF_LINK_GLOBAL) continue;
                    float v = d->hop_local + Q_A(f->sw_adj[e], g);
                    if (v < best) best = v;
                }
            M[y * ng + g] = best;
        }
    for (size_t y = 0; y < S; y++)
        for (size_t g = 0; g < ng; g++) {
            float best = INFINITY;
            for (uint32_t e = f->sw_adj_off[y]; e < f->sw_adj_off[y + 1]; e++) {
                if (f->link_cls[f->sw_adj_link[e]] != NF_LINK_GLOBAL) continue;
                nf_node w = f->sw_adj[e];
                float v = d->grp[w] == (int32_t)g ? Q_A(y, g) : d->hop_global + M[w * ng + g];
                if (v < best) best = v;
            }
            S2[y * ng + g] = best;
        }
#undef Q_A
    for (nf_node x = 0; x < S; x++)
        for (uint32_t r = 0; r < d->nrows; r++) {
            float *row = q_at(d, x, r);
            for (uint32_t e = f->sw_adj_off[x]; e < f->sw_adj_off[x + 1]; e++) {
                nf_node w = f->sw_adj[e];
                bool global = f->link_cls[f->sw_adj_link[e]] == NF_LINK_GLOBAL;
                float v;
                if (r >= ng) { /* a router of the own group: one local hop when direct */
                    v = d->hop_local * (global ? 3.0f : 1.0f);
                } else if (global) { /* (w in group r: r has switches) */
                    v = d->hop_global +
                        (d->grp[w] == (int32_t)r
                             ? (float)(d->gsize[r] - 1) / (float)d->gsize[r] * d->hop_local
                             : M[(size_t)w * ng + r]);
                } else {
                    v = d->hop_local + S2[(size_t)w * ng + r];
                }
                row[d->col[nf_port_index(f, x, f->sw_adj_port[e])]] = isfinite(v) ? v : 1e6f;
            }
        }
}

static void q_reset(void *ctx) { q_start(ctx); }

static int q_init(void **out, const void *data, const nf_fabric *f, const uint8_t *ls,
                  const nf_hops *h, const nf_sim_config *c, nf_diag *diag) {
    (void)data, (void)h;
    uint32_t ng;
    int rc = nf__sim_dragonfly_groups(f, "qadapt-nf", &ng, diag);
    if (rc) return rc;
    /* (q_alpha and the other settings are in range: nf_sim_new checked them) */
    q_ctx *d = nf__calloc(1, sizeof *d);
    if (!d) return NF_ENOMEM;
    size_t S = f->n_switches, P = f->port_off[f->n_nodes];
    d->f = f;
    d->ls = ls;
    d->V = c->vcs;
    d->ng = ng;
    d->alpha = (float)c->q_alpha;
    d->eps = (float)c->q_explore;
    d->sample = c->q_sample;
    d->bias = (float)c->q_bias;
    d->local = (float)c->q_local;
    d->hop_local = (float)(c->router_delay + c->lat_local);
    d->hop_global = (float)(c->router_delay + c->lat_global);
    d->threshold = c->q_threshold > 0 ? (float)c->q_threshold : d->hop_local; /* 0: auto */
    d->grp = nf__malloc((S + 1) * sizeof *d->grp);
    d->rank = nf__malloc((S + 1) * sizeof *d->rank);
    d->gsize = nf__calloc(d->ng, sizeof *d->gsize);
    d->in_global = nf__calloc(P + 1, 1);
    d->col = nf__malloc((P + 1) * sizeof *d->col);
    d->ncol = nf__calloc(S + 1, sizeof *d->ncol);
    d->qoff = nf__malloc((S + 1) * sizeof *d->qoff);
    d->gw = nf__calloc(S * d->ng + 1, 1);
    d->mid = nf__malloc((S * d->ng + 1) * sizeof *d->mid);
    d->src2 = nf__malloc((S * d->ng + 1) * sizeof *d->src2);
    if (!d->grp || !d->rank || !d->gsize || !d->in_global || !d->col || !d->ncol || !d->qoff ||
        !d->gw || !d->mid || !d->src2) {
        rc = NF_ENOMEM;
        goto fail;
    }
    for (nf_node s = 0; s < S; s++) {
        d->grp[s] = f->supernode[s];
        d->rank[s] = d->gsize[d->grp[s]]++;
        if (d->rank[s] + 1 > d->amax) d->amax = d->rank[s] + 1;
    }
    d->nrows = d->ng + d->amax;
    if (d->nrows > 0xFFFF) {
        rc = nf__fail(diag, NF_EINVAL,
                      "qadapt-nf: %u groups and %u routers a group: at most %u rows", d->ng,
                      d->amax, 0xFFFF);
        goto fail;
    }
    for (nf_gport g = 0; g < P; g++) {
        d->in_global[g] =
            f->port_link[g] != NF_NONE && f->link_cls[f->port_link[g]] == NF_LINK_GLOBAL;
        d->col[g] = UINT16_MAX;
    }
    uint64_t at = 0;
    for (nf_node s = 0; s < S; s++) {
        d->qoff[s] = at;
        for (uint32_t e = f->sw_adj_off[s]; e < f->sw_adj_off[s + 1]; e++) {
            nf_gport g = nf_port_index(f, s, f->sw_adj_port[e]);
            if (d->col[g] == UINT16_MAX) d->col[g] = (uint16_t)d->ncol[s]++;
            if (f->link_cls[f->sw_adj_link[e]] == NF_LINK_GLOBAL &&
                ls[f->sw_adj_link[e]] == NF_LINK_UP)
                d->gw[(size_t)s * d->ng + (uint32_t)d->grp[f->sw_adj[e]]] = 1;
        }
        at += (uint64_t)d->nrows * d->ncol[s];
    }
    d->qoff[S] = at;
    if (!(d->q = nf__malloc((size_t)at * sizeof *d->q + 1))) {
        rc = NF_ENOMEM;
        goto fail;
    }
    q_start(d);
    *out = d;
    return NF_OK;
fail:
    q_fini(d);
    return rc;
}

/* A packet's random choice at sw: (uniform in [0, 1), uniform 32 bits), from its salt. */
static void q_dice(uint32_t salt, nf_node sw, unsigned hops, float *u, uint32_t *k) {
    /* splitmix64 of the three: its added constant keeps an all-zero input from giving zero */
    uint64_t x = ((uint64_t)salt << 32 | sw) ^ ((uint64_t)hops << 58);
    x += 0x9E3779B97F4A7C15u;
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9u;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBu;
    x ^= x >> 31;
    *u = (float)(x >> 40) * 0x1p-24f;
    *k = (uint32_t)x;
}

static unsigned q_route(void *ctx, nf_node sw, unsigned in_port, unsigned in_vc, unsigned hops,
                        const nf__sim_pkt *p, nf_sim_cand *out, unsigned max) {
    q_ctx *d = ctx;
    q_phase ph = q_phase_of(d, sw, in_port, in_vc, hops, p->dst_sw);
    bool in_global = d->in_global[nf_port_index(d->f, sw, in_port)];
    uint16_t cols[NF_SIM_MAX_RADIX];
    if (!p->rs) { /* the checker: every candidate of the phase */
        /* (a packet in the intermediate group that came over a local link in class 1 has a
         * direct global link here; the class tells the phase) */
        return q_cands(d, sw, ph, in_global, p->dst_sw, out, cols, NULL, max);
    }
    nf_sim_cand c[NF_SIM_MAX_RADIX];
    uint8_t minimal[NF_SIM_MAX_RADIX];
    unsigned n = q_cands(d, sw, ph, in_global, p->dst_sw, c, cols, minimal, NF_SIM_MAX_RADIX);
    if (!n || !max) return 0;
    const float *row = q_at(d, sw, q_row(d, sw, p->dst_sw));
    /* a candidate's value: its estimate, plus (--q-local) the flits waiting at its port now
     * times a weight in cycles */
    float val[NF_SIM_MAX_RADIX];
    for (unsigned i = 0; i < n; i++)
        val[i] = row[cols[i]] + (d->local > 0 && p->view
                                     ? d->local * (float)p->view->occupancy(p->view, c[i].port)
                                     : 0.0f);
    /* the best minimal candidate and the best other; the other only when its value, times
     * the bias, is lower by more than the threshold */
    unsigned bm = n, bn = n, nn = 0;
    unsigned other[NF_SIM_MAX_RADIX];
    for (unsigned i = 0; i < n; i++) {
        if (!minimal[i]) {
            other[nn++] = i;
            continue;
        }
        if (bm == n || val[i] < val[bm]) bm = i;
    }
    float u0;
    uint32_t k0;
    q_dice(p->salt ^ 0xA5A5A5A5u, sw, hops, &u0, &k0);
    unsigned ks = d->sample && d->sample < nn ? d->sample : nn;
    for (unsigned j = 0; j < ks; j++) { /* ks of the others, at random (all: in order) */
        if (ks < nn) {
            unsigned r = j + (unsigned)((uint64_t)k0 * (nn - j) >> 32);
            unsigned t = other[j];
            other[j] = other[r], other[r] = t;
            k0 = k0 * 0x9E3779B1u + 0x7F4A7C15u;
        }
        unsigned i = other[j];
        if (bn == n || val[i] < val[bn]) bn = i;
    }
    unsigned pick = bm == n || (bn < n && d->bias * val[bn] + d->threshold < val[bm]) ? bn : bm;
    if (n > 1 && d->eps > 0) {
        float u;
        uint32_t k;
        q_dice(p->salt, sw, hops, &u, &k);
        if (u < d->eps) pick = (unsigned)((uint64_t)k * n >> 32);
    }
    if (!minimal[pick]) *p->rs |= NF__RS_NONMIN;
    out[0] = c[pick];
    return 1;
}

static float q_estimate(void *ctx, nf_node sw, unsigned in_port, unsigned in_vc, unsigned hops,
                        const nf__sim_pkt *p, uint32_t *row_up) {
    q_ctx *d = ctx;
    const nf_fabric *f = d->f;
    nf_gport g = nf_port_index(f, sw, in_port);
    nf_node up = f->peer[g];
    *row_up = q_row(d, up, p->dst_sw);
    if (p->dst_sw == sw) return 0;
    q_phase ph = q_phase_of(d, sw, in_port, in_vc, hops, p->dst_sw);
    return q_best(d, sw, ph, d->in_global[g], p->dst_sw);
}

static void q_learn(void *ctx, nf_node sw, unsigned port, uint32_t row, float value) {
    q_ctx *d = ctx;
    uint16_t col = d->col[nf_port_index(d->f, sw, port)];
    if (col == UINT16_MAX || row >= d->nrows) return; /* (never: the engine's own events) */
    float *e = q_at(d, sw, row) + col;
    *e += d->alpha * (value - *e);
}

static void q_memory(void *ctx, uint64_t *bytes, uint64_t *flat) {
    const q_ctx *d = ctx;
    uint32_t most = 0;
    for (nf_node s = 0; s < d->f->n_switches; s++)
        if (d->ncol[s] > most) most = d->ncol[s];
    *bytes = (uint64_t)d->nrows * most * sizeof *d->q;
    *flat = (uint64_t)d->f->n_switches * most * sizeof *d->q;
}

static unsigned q_inj_vc_hi(void *ctx) {
    (void)ctx;
    return 0;
}

const nf_sim_routing nf__sim_qadapt_nf = {
    .name = "qadapt-nf",
    .summary = "Dragonfly Q-adaptive as netfab first read it (before the authors' code): "
               "every source-group router learns, 3 VC classes",
    .min_vcs = 3,
    .marks_nonmin = true,
    .bs_dragonfly = true,
    .init = q_init,
    .route = q_route,
    .inj_vc_hi = q_inj_vc_hi,
    .fini = q_fini,
    .learns = true,
    .estimate = q_estimate,
    .learn = q_learn,
    .reset = q_reset,
    .memory = q_memory};
