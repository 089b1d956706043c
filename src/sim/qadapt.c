/* SPDX-License-Identifier: MIT */
/* Q-adaptive (sim.h, "qadapt") as Kang, Wang and Lan built it in their SST/Merlin fork
 * (SPEAR-UIC/sst-elements, merlin/topology/dragonfly.cc, routing "q-adaptive"), read there and
 * written here; docs/qadapt.md says what is theirs and what is ours.
 *
 * Decisions are taken at two routers of a packet's way only; every other router sends it the
 * minimal way:
 *   the source router (a packet from its NIC): the port of least estimate, any switch port
 *     (q_src_global: any global port; ours),
 *     unless the minimal port's estimate is lower than that by less than q_threshold1 of itself;
 *   the first router of the intermediate group (arrived over a global link after one hop, not
 *     in the destination group, without a global link of its own there): a local port to a
 *     router of the group drawn for the packet, against the minimal port, by q_threshold2;
 * then, at those two, with chance q_explore any switch port at random. A hop leaves on VC class
 * h of five, h the switch-to-switch hops taken before it: a way has at most five, so classes only
 * rise and the channel dependency graph has no cycle (route --check).
 *
 * The table. Row kinds (q_row): group-host (theirs, destG_srcN: destination group x the source
 * endpoint's place at its router), group (destination group), router (destination switch); a
 * column per switch port. An entry: the cycles from the packet's arrival here to its arrival at
 * the first router of the destination group (router rows: at the destination switch). What a
 * router sends back for a packet is the least entry of the packet's row there, whatever port the
 * packet takes, or 0 in the destination group where it came over a global link (router rows: at
 * the destination switch); nothing in the destination group where it came over a local one (group
 * rows). The engine adds the cycles since the packet's arrival upstream (nf_sim_routing.learns).
 * The upstream entry moves by q_alpha of the error when the news is better, by q_alpha2 when it
 * is worse (their hysteresis). */
#include "sim/sim_internal.h"

#include "util/diag.h"
#include "util/mem.h"

#include <math.h>
#include <string.h>

#define QA_CLASSES 5
/* the packet's word: its source endpoint's place at its router, + 1 (0: not yet known) */
#define QA_SLOT_SHIFT 16
#define QA_SLOT_MASK 0xFFu

typedef struct qa_ctx {
    const nf_fabric *f;
    const uint8_t *ls; /* the link states it goes by */
    unsigned V;
    nf_sim_q_row kind;
    uint32_t ng, slots, nrows; /* groups, most endpoints a router, rows of a table */
    int32_t *grp;              /* per switch: its group */
    uint32_t *gfirst, *gsize;  /* per group: its first switch's index in members, its switches */
    nf_node *members;          /* the switches of each group in turn */
    uint8_t *in_global;        /* per global port: its link is global */
    uint8_t *slot;             /* per global port of a switch to an endpoint: its place */
    uint16_t *col;             /* per global port of a switch: its column */
    uint32_t *ncol;            /* per switch: its columns */
    uint64_t *qoff;            /* per switch: its table's first entry in q */
    float *q;                  /* the tables */
    float alpha, alpha2, eps, thr1, thr2;
    bool src_global; /* the source router's best among its global ports only (q_src global) */
    float hop_local, hop_global; /* a hop's cycles in an empty network */
} qa_ctx;

static void qa_fini(void *ctx) {
    qa_ctx *d = ctx;
    if (!d) return;
    nf__free(d->grp);
    nf__free(d->gfirst);
    nf__free(d->gsize);
    nf__free(d->members);
    nf__free(d->in_global);
    nf__free(d->slot);
    nf__free(d->col);
    nf__free(d->ncol);
    nf__free(d->qoff);
    nf__free(d->q);
    nf__free(d);
}

static inline bool qa_up(const qa_ctx *d, nf_link l) { return d->ls[l] == NF_LINK_UP; }

/* The row a packet for switch t, from the endpoint in place slot (0: unknown) of its router,
 * counts in. */
static inline uint32_t qa_row(const qa_ctx *d, nf_node t, uint32_t slot) {
    switch (d->kind) {
    case NF_SIM_Q_ROW_GROUP: return (uint32_t)d->grp[t];
    case NF_SIM_Q_ROW_ROUTER: return t;
    default: return (uint32_t)d->grp[t] * d->slots + (slot ? slot - 1 : 0);
    }
}

static inline float *qa_at(const qa_ctx *d, nf_node x, uint32_t row) {
    return d->q + d->qoff[x] + (uint64_t)row * d->ncol[x];
}

static inline nf_sim_cand qa_cand(const qa_ctx *d, unsigned port, unsigned k) {
    unsigned w = d->V / QA_CLASSES;
    return (nf_sim_cand){
        .port = (uint8_t)port, .vc_lo = (uint8_t)(k * w), .vc_hi = (uint8_t)((k + 1) * w - 1)};
}

/* Switch x has an up global link to group g. */
static bool qa_direct(const qa_ctx *d, nf_node x, int32_t g) {
    const nf_fabric *f = d->f;
    for (uint32_t e = f->sw_adj_off[x]; e < f->sw_adj_off[x + 1]; e++)
        if (f->link_cls[f->sw_adj_link[e]] == NF_LINK_GLOBAL && d->grp[f->sw_adj[e]] == g &&
            qa_up(d, f->sw_adj_link[e]))
            return true;
    return false;
}

/* Edge e of sw's adjacency (its link up) is on a minimal way to switch t: in t's group the local
 * link to t; else a global link to t's group when sw has one that is up (direct), else a local
 * link to a switch with one. */
static bool qa_is_minimal(const qa_ctx *d, nf_node sw, nf_node t, uint32_t e, bool direct) {
    const nf_fabric *f = d->f;
    int32_t gd = d->grp[t];
    nf_node w = f->sw_adj[e];
    bool global = f->link_cls[f->sw_adj_link[e]] == NF_LINK_GLOBAL;
    if (d->grp[sw] == gd) return w == t;
    return direct ? global && d->grp[w] == gd : !global && qa_direct(d, w, gd);
}

/* The minimal edge of least estimate in row (the first when several tie; their one-link fabrics
 * have one), or UINT32_MAX when the failed links leave none. */
static uint32_t qa_minimal(const qa_ctx *d, nf_node sw, nf_node t, const float *row) {
    const nf_fabric *f = d->f;
    bool direct = d->grp[sw] != d->grp[t] && qa_direct(d, sw, d->grp[t]);
    uint32_t best = UINT32_MAX;
    for (uint32_t e = f->sw_adj_off[sw]; e < f->sw_adj_off[sw + 1]; e++) {
        if (!qa_up(d, f->sw_adj_link[e]) || !qa_is_minimal(d, sw, t, e, direct)) continue;
        float v = row[d->col[nf_port_index(f, sw, f->sw_adj_port[e])]];
        if (best == UINT32_MAX || v < row[d->col[nf_port_index(f, sw, f->sw_adj_port[best])]])
            best = e;
    }
    return best;
}

/* ---- the starting estimates ------------------------------------------------------------------
 * Theirs for group rows: a global link to the destination group a global hop, every other port a
 * global and a local hop. Router rows (ours, theirs being in their units): to a switch of the own
 * group one local hop by the link to it, two by another local link, two global hops by a global
 * one; to another group's switch a global and a local hop by a direct global link, a global and
 * two local hops by any other port. */
static void qa_start(qa_ctx *d) {
    const nf_fabric *f = d->f;
    for (nf_node x = 0; x < f->n_switches; x++)
        for (uint32_t r = 0; r < d->nrows; r++) {
            float *row = qa_at(d, x, r);
            nf_node t = d->kind == NF_SIM_Q_ROW_ROUTER ? (nf_node)r : NF_NONE;
            int32_t g = d->kind == NF_SIM_Q_ROW_ROUTER  ? d->grp[r]
                        : d->kind == NF_SIM_Q_ROW_GROUP ? (int32_t)r
                                                        : (int32_t)(r / d->slots);
            for (uint32_t e = f->sw_adj_off[x]; e < f->sw_adj_off[x + 1]; e++) {
                nf_node w = f->sw_adj[e];
                bool global = f->link_cls[f->sw_adj_link[e]] == NF_LINK_GLOBAL;
                bool to_g = global && d->grp[w] == g;
                float v;
                if (t == NF_NONE)
                    v = to_g ? d->hop_global : d->hop_global + d->hop_local;
                else if (d->grp[x] == g)
                    v = global ? 2 * d->hop_global : w == t ? d->hop_local : 2 * d->hop_local;
                else
                    v = d->hop_global + (to_g ? 1 : 2) * d->hop_local;
                row[d->col[nf_port_index(f, x, f->sw_adj_port[e])]] = v;
            }
        }
}

static void qa_reset(void *ctx) { qa_start(ctx); }

static int qa_init(void **out, const void *data, const nf_fabric *f, const uint8_t *ls,
                   const nf_hops *h, const nf_sim_config *c, nf_diag *diag) {
    (void)data, (void)h;
    uint32_t ng;
    int rc = nf__sim_dragonfly_groups(f, "qadapt", &ng, diag);
    if (rc) return rc;
    /* (the settings are in range: nf_sim_new checked them) */
    qa_ctx *d = nf__calloc(1, sizeof *d);
    if (!d) return NF_ENOMEM;
    size_t S = f->n_switches, P = f->port_off[f->n_nodes];
    d->f = f;
    d->ls = ls;
    d->V = c->vcs;
    d->kind = c->q_row;
    d->ng = ng;
    d->alpha = (float)c->q_alpha;
    d->alpha2 = (float)c->q_alpha2;
    d->eps = (float)c->q_explore;
    d->thr1 = (float)c->q_threshold1;
    d->thr2 = (float)c->q_threshold2;
    d->src_global = c->q_src_global;
    d->hop_local = (float)(c->router_delay + c->lat_local);
    d->hop_global = (float)(c->router_delay + c->lat_global);
    d->grp = nf__malloc((S + 1) * sizeof *d->grp);
    d->gfirst = nf__calloc(ng + 1, sizeof *d->gfirst);
    d->gsize = nf__calloc(ng + 1, sizeof *d->gsize);
    d->members = nf__malloc((S + 1) * sizeof *d->members);
    d->in_global = nf__calloc(P + 1, 1);
    d->slot = nf__calloc(P + 1, 1);
    d->col = nf__malloc((P + 1) * sizeof *d->col);
    d->ncol = nf__calloc(S + 1, sizeof *d->ncol);
    d->qoff = nf__malloc((S + 1) * sizeof *d->qoff);
    if (!d->grp || !d->gfirst || !d->gsize || !d->members || !d->in_global || !d->slot || !d->col ||
        !d->ncol || !d->qoff) {
        rc = NF_ENOMEM;
        goto fail;
    }
    for (nf_node s = 0; s < S; s++)
        d->gsize[d->grp[s] = f->supernode[s]]++;
    for (uint32_t g = 1; g <= ng; g++)
        d->gfirst[g] = d->gfirst[g - 1] + d->gsize[g - 1];
    {
        uint32_t *fill = nf__calloc(ng + 1, sizeof *fill);
        if (!fill) {
            rc = NF_ENOMEM;
            goto fail;
        }
        for (nf_node s = 0; s < S; s++) {
            uint32_t g = (uint32_t)d->grp[s];
            d->members[d->gfirst[g] + fill[g]++] = s;
        }
        nf__free(fill);
    }
    for (nf_gport g = 0; g < P; g++) {
        d->in_global[g] =
            f->port_link[g] != NF_NONE && f->link_cls[f->port_link[g]] == NF_LINK_GLOBAL;
        d->col[g] = UINT16_MAX;
    }
    unsigned slots = nf__sim_host_slots(f, d->slot, NULL);
    if (!slots) slots = 1;
    uint64_t at = 0;
    for (nf_node s = 0; s < S; s++) {
        for (uint32_t e = f->sw_adj_off[s]; e < f->sw_adj_off[s + 1]; e++) {
            nf_gport g = nf_port_index(f, s, f->sw_adj_port[e]);
            if (d->col[g] == UINT16_MAX) d->col[g] = (uint16_t)d->ncol[s]++;
        }
    }
    d->slots = slots;
    d->nrows = d->kind == NF_SIM_Q_ROW_GROUP    ? ng
               : d->kind == NF_SIM_Q_ROW_ROUTER ? (uint32_t)S
                                                : ng * slots;
    if (d->nrows > 0xFFFF) { /* (the engine carries a row in 16 bits) */
        rc = nf__fail(diag, NF_EINVAL, "qadapt: --q-row %s needs %u rows, at most %u",
                      d->kind == NF_SIM_Q_ROW_ROUTER ? "router" : "group-host", d->nrows, 0xFFFF);
        goto fail;
    }
    for (nf_node s = 0; s < S; s++) {
        d->qoff[s] = at;
        at += (uint64_t)d->nrows * d->ncol[s];
    }
    d->qoff[S] = at;
    if (!(d->q = nf__malloc((size_t)at * sizeof *d->q + 1))) {
        rc = NF_ENOMEM;
        goto fail;
    }
    qa_start(d);
    *out = d;
    return NF_OK;
fail:
    qa_fini(d);
    return rc;
}

/* A packet's random bits at sw: (uniform in [0, 1), uniform 32 bits), from its salt. */
static void qa_dice(uint32_t salt, nf_node sw, unsigned hops, float *u, uint32_t *k) {
    uint64_t x = ((uint64_t)salt << 32 | sw) ^ ((uint64_t)hops << 58);
    x += 0x9E3779B97F4A7C15u; /* splitmix64: the constant keeps an all-zero input off zero */
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9u;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBu;
    x ^= x >> 31;
    *u = (float)(x >> 40) * 0x1p-24f;
    *k = (uint32_t)x;
}

/* The packet decides at sw: its source router, or its intermediate group's first router. */
static bool qa_decides(const qa_ctx *d, nf_node sw, bool in_global, unsigned hops, nf_node t) {
    if (d->grp[sw] == d->grp[t]) return false;
    return hops == 0 || (hops == 1 && in_global && !qa_direct(d, sw, d->grp[t]));
}

static unsigned qa_route(void *ctx, nf_node sw, unsigned in_port, unsigned in_vc, unsigned hops,
                         const nf__sim_pkt *p, nf_sim_cand *out, unsigned max) {
    (void)in_vc;
    qa_ctx *d = ctx;
    const nf_fabric *f = d->f;
    nf_gport gin = nf_port_index(f, sw, in_port);
    if (hops >= QA_CLASSES || !max) return 0; /* (never: a way has at most five hops) */
    bool decide = qa_decides(d, sw, d->in_global[gin], hops, p->dst_sw);
    if (!p->rs) { /* the checker: every port a packet here may be given, every minimal one */
        bool direct = d->grp[sw] != d->grp[p->dst_sw] && qa_direct(d, sw, d->grp[p->dst_sw]);
        unsigned n = 0;
        for (uint32_t e = f->sw_adj_off[sw]; e < f->sw_adj_off[sw + 1] && n < max; e++)
            if (qa_up(d, f->sw_adj_link[e]) &&
                (decide || qa_is_minimal(d, sw, p->dst_sw, e, direct)))
                out[n++] = qa_cand(d, f->sw_adj_port[e], hops);
        return n;
    }
    if (hops == 0) /* its source endpoint's place, for the rows that have it */
        *p->rs = (*p->rs & ~(QA_SLOT_MASK << QA_SLOT_SHIFT)) | (uint32_t)(d->slot[gin] + 1u)
                                                                   << QA_SLOT_SHIFT;
    uint32_t slot = *p->rs >> QA_SLOT_SHIFT & QA_SLOT_MASK;
    const float *row = qa_at(d, sw, qa_row(d, p->dst_sw, slot));
    uint32_t em = qa_minimal(d, sw, p->dst_sw, row), pick = em;
    if (decide) {
        float u;
        uint32_t k;
        qa_dice(p->salt, sw, hops, &u, &k);
        uint32_t e0 = f->sw_adj_off[sw], ne = f->sw_adj_off[sw + 1] - e0;
#define QA_VAL(e) row[d->col[nf_port_index(f, sw, f->sw_adj_port[e])]]
        if (hops == 0) { /* the least estimate, ties to the first port */
            uint32_t eb = UINT32_MAX;
            for (uint32_t e = e0; e < e0 + ne; e++)
                if (qa_up(d, f->sw_adj_link[e]) &&
                    (!d->src_global || f->link_cls[f->sw_adj_link[e]] == NF_LINK_GLOBAL) &&
                    (eb == UINT32_MAX || QA_VAL(e) < QA_VAL(eb)))
                    eb = e;
            if (em == UINT32_MAX ||
                (eb != UINT32_MAX && eb != em && (QA_VAL(em) - QA_VAL(eb)) >= d->thr1 * QA_VAL(em)))
                pick = eb;
        } else { /* a local port to a router of the group drawn for the packet */
            uint32_t g = (uint32_t)d->grp[sw], n = d->gsize[g];
            nf_node r = sw; /* (one of the others; members ascend, so sw is skipped by + 1) */
            if (n > 1) {
                const nf_node *mem = d->members + d->gfirst[g];
                uint32_t j = (uint32_t)((uint64_t)k * (n - 1) >> 32);
                r = mem[j] >= sw ? mem[j + 1] : mem[j];
            }
            uint32_t ec = UINT32_MAX;
            for (uint32_t e = e0; e < e0 + ne && ec == UINT32_MAX; e++)
                if (f->sw_adj[e] == r && f->link_cls[f->sw_adj_link[e]] != NF_LINK_GLOBAL &&
                    qa_up(d, f->sw_adj_link[e]))
                    ec = e;
            if (ec != UINT32_MAX &&
                (em == UINT32_MAX || (QA_VAL(em) - QA_VAL(ec)) >= d->thr2 * QA_VAL(em)))
                pick = ec;
        }
#undef QA_VAL
        if (d->eps > 0 && u < d->eps && ne) { /* exploring: any port that is up */
            uint32_t e = e0 + (uint32_t)((uint64_t)(k * 0x9E3779B1u) * ne >> 32);
            if (qa_up(d, f->sw_adj_link[e])) pick = e;
        }
    }
    if (pick == UINT32_MAX) return 0; /* failed links left no way */
    if (pick != em) *p->rs |= NF__RS_NONMIN;
    out[0] = qa_cand(d, f->sw_adj_port[pick], hops);
    return 1;
}

static float qa_estimate(void *ctx, nf_node sw, unsigned in_port, unsigned in_vc, unsigned hops,
                         const nf__sim_pkt *p, uint32_t *row_up) {
    (void)in_vc, (void)hops;
    qa_ctx *d = ctx;
    uint32_t slot = p->rs ? *p->rs >> QA_SLOT_SHIFT & QA_SLOT_MASK : 0;
    uint32_t row = qa_row(d, p->dst_sw, slot);
    *row_up = row;
    if (d->kind == NF_SIM_Q_ROW_ROUTER) {
        if (p->dst_sw == sw) return 0;
    } else if (d->grp[sw] == d->grp[p->dst_sw]) { /* there: 0 over a global link, else nothing */
        return d->in_global[nf_port_index(d->f, sw, in_port)] ? 0 : NAN;
    }
    const float *q = qa_at(d, sw, row);
    float best = INFINITY;
    for (uint32_t c = 0; c < d->ncol[sw]; c++)
        if (q[c] < best) best = q[c];
    return isfinite(best) ? best : NAN;
}

static void qa_learn(void *ctx, nf_node sw, unsigned port, uint32_t row, float value) {
    qa_ctx *d = ctx;
    uint16_t col = d->col[nf_port_index(d->f, sw, port)];
    if (col == UINT16_MAX || row >= d->nrows || !isfinite(value)) return;
    float *e = qa_at(d, sw, row) + col, err = value - *e;
    *e += (err < 0 ? d->alpha : d->alpha2) * err;
}

/* The table of the switch with the most columns, and a row per destination switch instead
 * (the paper's "50% less" is against the latter). */
static void qa_memory(void *ctx, uint64_t *bytes, uint64_t *flat) {
    const qa_ctx *d = ctx;
    uint32_t most = 0;
    for (nf_node s = 0; s < d->f->n_switches; s++)
        if (d->ncol[s] > most) most = d->ncol[s];
    *bytes = (uint64_t)d->nrows * most * sizeof *d->q;
    *flat = (uint64_t)d->f->n_switches * most * sizeof *d->q;
}

static unsigned qa_inj_vc_hi(void *ctx) {
    const qa_ctx *d = ctx;
    return d->V / QA_CLASSES - 1;
}

const nf_sim_routing nf__sim_qadapt = {
    .name = "qadapt",
    .summary = "Dragonfly Q-adaptive as its authors built it: learned choices at the source router "
               "and the intermediate group's first; 5 VC classes",
    .min_vcs = QA_CLASSES,
    .marks_nonmin = true,
    .bs_dragonfly = true,
    .init = qa_init,
    .route = qa_route,
    .inj_vc_hi = qa_inj_vc_hi,
    .fini = qa_fini,
    .learns = true,
    .estimate = qa_estimate,
    .learn = qa_learn,
    .reset = qa_reset,
    .memory = qa_memory};
