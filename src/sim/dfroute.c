/* SPDX-License-Identifier: MIT */
/* The Dragonfly routings of the simulator (sim.h): minimal (local, global, local), Valiant (via a
 * random intermediate group), UGAL-L and its fixed-threshold variant (at the source router,
 * minimal or Valiant by the queues of the two first ports, the UGAL note), UGAL-G (by the queues
 * along both whole ways) and PAR (UGAL-L again at the next router of the source group), and
 * ugal-bs (BookSim2's dragonflynew UGAL, for comparing with it). They share tables built at init:
 * per switch, the ports toward every group and every switch of its own group. */
#include "sim/sim_internal.h"

#include "util/diag.h"
#include "util/mem.h"

#include <stdbool.h>
#include <string.h>

/* ---- dfmin: Dragonfly minimal, local-global-local; class 0 before the destination group ---- */

/* The candidates are tabled at init, one row per (switch, destination group) and per (switch,
 * switch of its own group): the global ports to that group (adjacency order), else the local
 * ports to the group's gateway (the first switch of the group with a global link to it, marked
 * VIA: class 0), and within the destination group the ports to the destination switch. Routing
 * is then two reads instead of a walk over the switch's links. */
#define DF_VIA 0x80

typedef enum df_kind {
    DF_MIN,
    DF_MIN_BS,
    DF_VAL,
    DF_UGAL_L,
    DF_UGAL_LT,
    DF_UGAL_G,
    DF_PAR,
    DF_UGAL_BS
} df_kind;

typedef struct df_ctx {
    const nf_fabric *f;
    const uint8_t *ls; /* the link states it goes by (the init's link_state) */
    unsigned V;
    df_kind kind;
    double bias, w_hop; /* UGAL: take MIN when cost_min <= bias * cost_val */
    double threshold;   /* UGAL with a threshold: MIN when cost_min <= bias * cost_val +
                         * threshold (bias 1 unless given) */
    nf_sim_proxy proxy; /* where the intermediate group is drawn (nf_sim_proxy) */
    uint8_t *slot;      /* per global port of a switch to an endpoint: its place among them */
    uint8_t *nhost;     /* per switch: its endpoints */
    nf_node *gw;        /* ng * ng: the gateway of group x to group y (its first switch with a
                         * global link there), or NF_NONE */
    nf_node *gw_far;    /* ng * ng: the switch at the far end of that gateway's first link */
    uint32_t ng, amax;  /* groups; switches in the largest group */
    int32_t *grp;       /* per switch: its group */
    uint32_t *rank;     /* per switch: its index within its group */
    uint8_t *in_global; /* per global port: its link is a global link */
    uint32_t *off;      /* per row (S * (ng + amax)), one more: offset into ports */
    uint8_t *ports;     /* port numbers, DF_VIA on the gateway ones */
    nf_node *ep_sw;     /* ugal-bs: per endpoint (CA), the switch it is cabled to */
    uint32_t n_ep;
} df_ctx;

static void df_fini(void *ctx) {
    df_ctx *d = ctx;
    if (!d) return;
    nf__free(d->grp);
    nf__free(d->rank);
    nf__free(d->in_global);
    nf__free(d->slot);
    nf__free(d->nhost);
    nf__free(d->off);
    nf__free(d->ports);
    nf__free(d->gw);
    nf__free(d->gw_far);
    nf__free(d->ep_sw);
    nf__free(d);
}

/* The ports of switch s toward target (a switch of its own group) or, with target NF_NONE,
 * toward group gd, into out when given; returns their number. */
static uint32_t df_row(const df_ctx *d, const nf_node *gw, nf_node s, nf_node target, int32_t gd,
                       uint8_t *out) {
    const nf_fabric *f = d->f;
    uint32_t n = 0;
    for (uint32_t e = f->sw_adj_off[s]; e < f->sw_adj_off[s + 1]; e++) {
        nf_link l = f->sw_adj_link[e];
        if (d->ls[l] != NF_LINK_UP) continue;
        nf_node w = f->sw_adj[e];
        bool take = target != NF_NONE ? w == target
                                      : f->link_cls[l] == NF_LINK_GLOBAL && f->supernode[w] == gd;
        if (take) {
            if (out) out[n] = f->sw_adj_port[e];
            n++;
        }
    }
    if (n || target != NF_NONE) return n;
    /* no global link to the destination group here: to the group's switch that has one */
    nf_node via = gw[(size_t)f->supernode[s] * d->ng + (uint32_t)gd];
    for (uint32_t e = f->sw_adj_off[s]; e < f->sw_adj_off[s + 1]; e++)
        if (f->sw_adj[e] == via && d->ls[f->sw_adj_link[e]] == NF_LINK_UP) {
            if (out) out[n] = (uint8_t)(f->sw_adj_port[e] | DF_VIA);
            n++;
        }
    return n;
}

int nf__sim_dragonfly_groups(const nf_fabric *f, const char *routing, uint32_t *groups,
                             nf_diag *diag) {
    int32_t mx = -1;
    bool global = false;
    for (nf_node s = 0; s < f->n_switches; s++) {
        if (f->supernode[s] < 0)
            return nf__fail(diag, NF_EINVAL, "%s routes Dragonflies: switch %s has no group",
                            routing, nf_node_name(f, s));
        if (f->supernode[s] > mx) mx = f->supernode[s];
    }
    for (nf_link l = 0; l < f->n_links; l++)
        global |= f->link_cls[l] == NF_LINK_GLOBAL;
    if (!global)
        return nf__fail(diag, NF_EINVAL, "%s routes Dragonflies: the fabric has no global link",
                        routing);
    *groups = (uint32_t)mx + 1;
    return NF_OK;
}

unsigned nf__sim_host_slots(const nf_fabric *f, uint8_t *slot, uint8_t *nhost) {
    unsigned most = 0;
    for (nf_node s = 0; s < f->n_switches; s++) {
        unsigned k = 0;
        for (nf_gport g = f->port_off[s]; g < f->port_off[s + 1]; g++)
            if (f->peer[g] != NF_NONE && f->peer[g] >= f->n_switches && k < UINT8_MAX)
                slot[g] = (uint8_t)k++;
        if (nhost) nhost[s] = (uint8_t)k;
        if (k > most) most = k;
    }
    return most;
}

static int df_init_kind(void **out, const nf_fabric *f, const uint8_t *ls, const nf_hops *h,
                        const nf_sim_config *c, df_kind kind, nf_diag *diag) {
    (void)h;
    static const char *const names[] = {"dfmin",   "dfmin-bs", "val", "ugal-l",
                                        "ugal-lt", "ugal-g",   "par", "ugal-bs"};
    uint32_t ng;
    int rc = nf__sim_dragonfly_groups(f, names[kind], &ng, diag);
    if (rc) return rc;
    df_ctx *d = nf__calloc(1, sizeof *d);
    if (!d) return NF_ENOMEM;
    d->f = f;
    d->ls = ls;
    d->V = c->vcs;
    d->kind = kind;
    /* c is as the caller gave it: w_hop 0 is hops costing nothing; bias and threshold 0 are
     * auto (nf_sim_config) */
    d->bias = c->bias > 0          ? c->bias
              : kind == DF_UGAL_G  ? 1.0 /* UGAL-G: see bench_ugal.sh */
              : kind == DF_UGAL_LT ? 1.0 /* the threshold alone */
              : kind == DF_UGAL_BS ? 2.0 /* BookSim2's constants */
                                   : 2.5;
    d->w_hop = c->w_hop;
    d->threshold = c->threshold > 0 ? c->threshold : kind == DF_UGAL_BS ? 30.0 : c->buf_flits;
    d->proxy = c->proxy;
    d->ng = ng;
    size_t S = f->n_switches, P = f->port_off[f->n_nodes];
    nf_node *gw = d->gw = nf__malloc((size_t)d->ng * d->ng * sizeof *gw);
    d->gw_far = nf__malloc((size_t)d->ng * d->ng * sizeof *d->gw_far);
    uint32_t *size = nf__calloc(d->ng, sizeof *size);
    d->grp = nf__malloc((S + 1) * sizeof *d->grp);
    d->rank = nf__malloc((S + 1) * sizeof *d->rank);
    d->in_global = nf__calloc(P + 1, 1);
    d->slot = nf__calloc(P + 1, 1);
    d->nhost = nf__calloc(S + 1, 1);
    rc = NF_ENOMEM;
    if (!gw || !d->gw_far || !size || !d->grp || !d->rank || !d->in_global || !d->slot || !d->nhost)
        goto done;
    (void)nf__sim_host_slots(f, d->slot, d->nhost);
    if (kind == DF_UGAL_BS) { /* the endpoints' switches, to draw intermediates among */
        d->ep_sw = nf__malloc(((size_t)f->n_nodes - S + 1) * sizeof *d->ep_sw);
        if (!d->ep_sw) goto done;
        for (nf_node x = (nf_node)S; x < f->n_nodes; x++) {
            if (f->port_off[x] == f->port_off[x + 1]) continue;
            nf_node w = f->peer[nf_port_index(f, x, 1)];
            if (w != NF_NONE && w < S) d->ep_sw[d->n_ep++] = w;
        }
    }
    for (size_t i = 0; i < (size_t)d->ng * d->ng; i++)
        gw[i] = d->gw_far[i] = NF_NONE;
    for (nf_node s = 0; s < S; s++) {
        d->grp[s] = f->supernode[s];
        d->rank[s] = size[f->supernode[s]]++;
        if (d->rank[s] + 1 > d->amax) d->amax = d->rank[s] + 1;
        for (uint32_t e = f->sw_adj_off[s]; e < f->sw_adj_off[s + 1]; e++) {
            if (f->link_cls[f->sw_adj_link[e]] != NF_LINK_GLOBAL) continue;
            size_t k = (size_t)f->supernode[s] * d->ng + (uint32_t)f->supernode[f->sw_adj[e]];
            if (gw[k] == NF_NONE) {
                gw[k] = s;
                d->gw_far[k] = f->sw_adj[e];
            }
        }
    }
    for (nf_gport g = 0; g < P; g++)
        d->in_global[g] =
            f->port_link[g] != NF_NONE && f->link_cls[f->port_link[g]] == NF_LINK_GLOBAL;
    /* the group's switches in rank order, for the rows of the own group */
    nf_node *member = nf__malloc(((size_t)d->ng * d->amax + 1) * sizeof *member);
    size_t rows = S * (d->ng + d->amax);
    d->off = nf__malloc((rows + 1) * sizeof *d->off);
    if (!member || !d->off) {
        nf__free(member);
        goto done;
    }
    for (size_t i = 0; i < (size_t)d->ng * d->amax; i++)
        member[i] = NF_NONE;
    for (nf_node s = 0; s < S; s++)
        member[(size_t)d->grp[s] * d->amax + d->rank[s]] = s;
    /* two passes: count, then fill */
    for (int pass = 0; pass < 2; pass++) {
        uint32_t at = 0;
        for (nf_node s = 0; s < S; s++)
            for (uint32_t k = 0; k < d->ng + d->amax; k++) {
                size_t r = (size_t)s * (d->ng + d->amax) + k;
                nf_node target = NF_NONE;
                int32_t gd = (int32_t)k;
                if (k >= d->ng) {
                    target = member[(size_t)d->grp[s] * d->amax + (k - d->ng)];
                    gd = d->grp[s];
                    if (target == NF_NONE || target == s) { /* no such switch, or here */
                        d->off[r] = at;
                        continue;
                    }
                } else if (gd == d->grp[s]) {
                    d->off[r] = at;
                    continue;
                }
                if (pass) d->off[r] = at;
                at += df_row(d, gw, s, target, gd, pass ? d->ports + at : NULL);
            }
        d->off[rows] = at;
        if (!pass && !(d->ports = nf__malloc((size_t)at + 1))) {
            nf__free(member);
            goto done;
        }
    }
    nf__free(member);
    rc = NF_OK;
done:
    nf__free(size);
    if (rc) {
        df_fini(d);
        return rc;
    }
    *out = d;
    return NF_OK;
}

/* VC class k of K: [k V / K, (k + 1) V / K) (V >= K). */
static nf_sim_cand vclass(unsigned V, unsigned port, unsigned k, unsigned K) {
    if (V < K) return (nf_sim_cand){.port = (uint8_t)port, .vc_lo = 0, .vc_hi = (uint8_t)(V - 1)};
    return (nf_sim_cand){.port = (uint8_t)port,
                         .vc_lo = (uint8_t)(k * V / K),
                         .vc_hi = (uint8_t)((k + 1) * V / K - 1)};
}

static inline size_t df_rowix(const df_ctx *d, nf_node sw, int32_t g) {
    return (size_t)sw * (d->ng + d->amax) + (uint32_t)g;
}
static inline size_t df_rowsw(const df_ctx *d, nf_node sw, nf_node target) {
    return (size_t)sw * (d->ng + d->amax) + d->ng + d->rank[target];
}

static unsigned df_route(void *ctx, nf_node sw, unsigned in_port, unsigned in_vc, unsigned hops,
                         const nf__sim_pkt *p, nf_sim_cand *out, unsigned max) {
    (void)hops;
    df_ctx *d = ctx;
    int32_t gs = d->grp[sw], gd = d->grp[p->dst_sw];
    /* class 1 once the packet has crossed a global link (it arrives in the destination group) */
    bool crossed =
        d->in_global[nf_port_index(d->f, sw, in_port)] || (d->V >= 2 && in_vc >= d->V / 2);
    size_t r = gs == gd ? df_rowsw(d, sw, p->dst_sw) : df_rowix(d, sw, gd);
    unsigned n = 0;
    for (uint32_t i = d->off[r]; i < d->off[r + 1] && n < max; i++) {
        uint8_t pt = d->ports[i];
        out[n++] = vclass(d->V, pt & (uint8_t)~DF_VIA, pt & DF_VIA ? 0 : crossed, 2);
    }
    return n;
}

static int dfmin_init(void **out, const void *data, const nf_fabric *f, const uint8_t *ls,
                      const nf_hops *h, const nf_sim_config *c, nf_diag *diag) {
    (void)data;
    return df_init_kind(out, f, ls, h, c, DF_MIN, diag);
}

/* dfmin-bs, BookSim2's dragonflynew min: the same ports, VC 0 up to the global hop and VC 1 from
 * it on (its packet's phase, set as it takes a global port; the other VCs idle). */
static unsigned df_route_bs(void *ctx, nf_node sw, unsigned in_port, unsigned in_vc, unsigned hops,
                            const nf__sim_pkt *p, nf_sim_cand *out, unsigned max) {
    df_ctx *d = ctx;
    unsigned n = df_route(ctx, sw, in_port, in_vc, hops, p, out, max);
    bool crossed = d->in_global[nf_port_index(d->f, sw, in_port)] || in_vc == 1;
    for (unsigned i = 0; i < n; i++) {
        bool g = crossed || d->in_global[nf_port_index(d->f, sw, out[i].port)];
        out[i].vc_lo = out[i].vc_hi = g;
    }
    return n;
}
static int dfmin_bs_init(void **out, const void *data, const nf_fabric *f, const uint8_t *ls,
                         const nf_hops *h, const nf_sim_config *c, nf_diag *diag) {
    (void)data;
    return df_init_kind(out, f, ls, h, c, DF_MIN_BS, diag);
}
static int dfval_init(void **out, const void *data, const nf_fabric *f, const uint8_t *ls,
                      const nf_hops *h, const nf_sim_config *c, nf_diag *diag) {
    (void)data;
    return df_init_kind(out, f, ls, h, c, DF_VAL, diag);
}
static int ugal_l_init(void **out, const void *data, const nf_fabric *f, const uint8_t *ls,
                       const nf_hops *h, const nf_sim_config *c, nf_diag *diag) {
    (void)data;
    return df_init_kind(out, f, ls, h, c, DF_UGAL_L, diag);
}
static int ugal_g_init(void **out, const void *data, const nf_fabric *f, const uint8_t *ls,
                       const nf_hops *h, const nf_sim_config *c, nf_diag *diag) {
    (void)data;
    return df_init_kind(out, f, ls, h, c, DF_UGAL_G, diag);
}
static int par_init(void **out, const void *data, const nf_fabric *f, const uint8_t *ls,
                    const nf_hops *h, const nf_sim_config *c, nf_diag *diag) {
    (void)data;
    return df_init_kind(out, f, ls, h, c, DF_PAR, diag);
}
static int ugal_lt_init(void **out, const void *data, const nf_fabric *f, const uint8_t *ls,
                        const nf_hops *h, const nf_sim_config *c, nf_diag *diag) {
    (void)data;
    return df_init_kind(out, f, ls, h, c, DF_UGAL_LT, diag);
}

/* ---- Valiant and UGAL-L ----------------------------------------------------------------------
 *
 * A packet sent the long way visits three groups: its source group, an intermediate group gi and
 * the destination group, with at most one local hop in each (a group is fully connected) and a
 * global hop between. VC classes (of three) follow the group visited: class k for the local hops
 * in the k-th group and for the global hop leaving it, so along every path the channel classes
 * run L0 G0 L1 G1 L2 (a minimal path L0 G0 L2): the dependency graph cannot close a cycle.
 *
 * The packet's word: bits 0-15 gi + 1 (0: minimal), bits 16-23 the source endpoint's place at
 * its router + 1 (restrictive proxies), RS_DECIDED once the source router chose, NF__RS_NONMIN
 * with an intermediate group. */
#define RS_SLOT_SHIFT 16
#define RS_SLOT_MASK 0xFFu
#define RS_DECIDED 0x40000000u
#define RS_TENTATIVE 0x20000000u /* PAR: minimal at the source router, to be looked at again */

/* The switch a packet at sw reaches over the first global hop of its way to group g (sw not in
 * g): the far end of sw's first global link there, else of its group's gateway. */
static nf_node df_arrival(const df_ctx *d, nf_node sw, int32_t g) {
    size_t r = df_rowix(d, sw, g);
    if (d->off[r] < d->off[r + 1] && !(d->ports[d->off[r]] & DF_VIA))
        return d->f->peer[nf_port_index(d->f, sw, d->ports[d->off[r]])];
    return d->gw_far[(size_t)d->grp[sw] * d->ng + (uint32_t)g];
}

/* Switch hops from sw (group gs) to switch t of group g != gs by the minimal way. */
static unsigned df_min_hops(const df_ctx *d, nf_node sw, nf_node t) {
    int32_t g = d->grp[t];
    size_t r = df_rowix(d, sw, g);
    bool direct = d->off[r] < d->off[r + 1] && !(d->ports[d->off[r]] & DF_VIA);
    nf_node a = df_arrival(d, sw, g);
    return (direct ? 0u : 1u) + 1u + (a == t ? 0u : 1u);
}

/* The first port of sw's row toward group g (0 when none). */
static unsigned df_first_port(const df_ctx *d, nf_node sw, int32_t g) {
    size_t r = df_rowix(d, sw, g);
    return d->off[r] < d->off[r + 1] ? d->ports[d->off[r]] & (uint8_t)~DF_VIA : 0;
}

bool nf_sim_ugal_takes_min(double q_min, unsigned h_min, double q_val, unsigned h_val, double w_hop,
                           double bias) {
    return q_min + h_min * w_hop <= bias * (q_val + h_val * w_hop);
}

/* The group at the far end of one of switch r's global links that are up, drawn by x: any of
 * them, or (slice) those of its h global ports (in port order) numbered [k h / p, (k + w) h / p)
 * mod h, k = slot of p = its endpoints, at least one; -2 when none is up. */
static int32_t df_link_group(const df_ctx *d, nf_node r, uint32_t x, bool slice, unsigned slot,
                             unsigned w) {
    const nf_fabric *f = d->f;
    uint32_t ge[NF_SIM_MAX_RADIX]; /* r's global links' adjacency entries, in port order */
    unsigned h = 0;
    for (uint32_t e = f->sw_adj_off[r]; e < f->sw_adj_off[r + 1] && h < NF_SIM_MAX_RADIX; e++)
        if (f->link_cls[f->sw_adj_link[e]] == NF_LINK_GLOBAL) ge[h++] = e;
    unsigned lo = 0, n = h, p = d->nhost[r] ? d->nhost[r] : 1;
    if (slice && h) {
        lo = slot * h / p;
        unsigned hi = (slot + w) * h / p;
        n = hi > lo ? hi - lo : 1;
        if (n > h) n = h;
    }
    int32_t cand[NF_SIM_MAX_RADIX];
    unsigned m = 0;
    for (unsigned i = 0; i < n; i++) {
        uint32_t e = ge[(lo + i) % h];
        if (d->ls[f->sw_adj_link[e]] == NF_LINK_UP) cand[m++] = d->grp[f->sw_adj[e]];
    }
    return m ? cand[(uint64_t)x * m >> 32] : -2;
}

/* The intermediate group of a packet at its source router sw (slot: its source endpoint's place
 * there) for switch t, drawn from its salt (the same on every thread and every run of a seed);
 * -1: the minimal way (a restrictive proxy drew the source or the destination group). All:
 * uniform over the groups other than gs and gd. Restricted: uniform over the distinct groups
 * sw's own global links reach but gd (the Valiant way starts on a global link and spreads evenly
 * over them). qvl, qvr, qvd, qvp, qvq: nf_sim_proxy. Any of these with no link up: all. */
static int32_t df_pick(const df_ctx *d, nf_node sw, unsigned slot, nf_node t, uint32_t salt,
                       int32_t gs, int32_t gd) {
    uint32_t x = salt * 0x9E3779B1u;
    x ^= x >> 15;
    x *= 0x85EBCA77u;
    x ^= x >> 13;
    if (d->proxy == NF_SIM_PROXY_RESTRICTED) {
        const nf_fabric *f = d->f;
        int32_t cand[NF_SIM_MAX_RADIX];
        unsigned n = 0;
        for (uint32_t e = f->sw_adj_off[sw]; e < f->sw_adj_off[sw + 1] && n < NF_SIM_MAX_RADIX;
             e++) {
            nf_link l = f->sw_adj_link[e];
            int32_t g = d->grp[f->sw_adj[e]];
            if (f->link_cls[l] != NF_LINK_GLOBAL || d->ls[l] != NF_LINK_UP || g == gd) continue;
            bool dup = false;
            for (unsigned j = 0; j < n && !dup; j++)
                dup = cand[j] == g;
            if (!dup) cand[n++] = g;
        }
        if (n) return cand[(uint64_t)x * n >> 32];
    } else if (d->proxy != NF_SIM_PROXY_ALL) {
        nf_sim_proxy k = d->proxy;
        if (k == NF_SIM_PROXY_QVD) { /* a coin, then a draw of its own */
            k = x >> 31 ? NF_SIM_PROXY_QVR : NF_SIM_PROXY_QVL;
            x = x * 0x85EBCA77u + 0x165667B1u;
            x ^= x >> 16;
        }
        int32_t g = df_link_group(d, k == NF_SIM_PROXY_QVR ? t : sw, x,
                                  k == NF_SIM_PROXY_QVP || k == NF_SIM_PROXY_QVQ, slot,
                                  k == NF_SIM_PROXY_QVQ ? 2 : 1);
        if (g == gs || g == gd) return -1;
        if (g >= 0) return g;
    }
    int32_t k = (int32_t)((uint64_t)x * (d->ng - 2) >> 32);
    int32_t lo = gs < gd ? gs : gd, hi = gs < gd ? gd : gs;
    if (k >= lo) k++;
    if (k >= hi) k++;
    return k;
}

/* UGAL-G's cost of a way: walks the first candidates from sw, through group gi when gi >= 0,
 * to switch t, adding the occupancy of every output port taken (sw's own now, the others' from
 * the snapshot of the end of the last cycle); *hops receives its switch hops. */
static double df_way_queue(const df_ctx *d, const nf__sim_view *v, nf_node sw, int32_t gi,
                           nf_node t, unsigned *hops) {
    double q = 0;
    unsigned h = 0;
    nf_node x = sw;
    while (x != t && h < 8) {
        int32_t g = gi >= 0 ? gi : d->grp[t];
        size_t r = d->grp[x] == d->grp[t] ? df_rowsw(d, x, t) : df_rowix(d, x, g);
        if (d->off[r] == d->off[r + 1]) break;
        unsigned port = d->ports[d->off[r]] & (uint8_t)~DF_VIA;
        q += x == sw ? v->occupancy(v, port) : v->remote(v, x, port);
        x = d->f->peer[nf_port_index(d->f, x, port)];
        h++;
        if (gi >= 0 && d->grp[x] == gi) gi = -1; /* reached: on to t */
    }
    *hops = h;
    return q;
}

/* The VC classes of the adaptive routings: a local hop in the source group (the first, and
 * PAR's second), the global hop out of it, the intermediate group's hops, the destination
 * group's; K classes in all. Valiant and UGAL: 0, 0, 0, 1, 2 of 3 (L0 G0 L1 G1 L2). PAR, whose
 * packet may take two local hops in its source group (it re-decides at the second router):
 * 0, 1, 1, 2, 3 of 4 (L0 L1 G1 L2 G2 L3). */
typedef struct df_cls {
    unsigned local1, local2, global, mid, dst, K;
} df_cls;

static df_cls df_classes(const df_ctx *d) {
    return d->kind == DF_PAR ? (df_cls){0, 1, 1, 2, 3, 4} : (df_cls){0, 0, 0, 1, 2, 3};
}

/* Appends row r's ports, local ones in class kl (only when locals), global ones in class kg, to
 * out without repeats. */
static unsigned df_emit(const df_ctx *d, size_t r, unsigned kl, unsigned kg, unsigned K,
                        bool locals, nf_sim_cand *out, unsigned n, unsigned max) {
    for (uint32_t i = d->off[r]; i < d->off[r + 1] && n < max; i++) {
        uint8_t pt = d->ports[i];
        if ((pt & DF_VIA) && !locals) continue;
        unsigned port = pt & (uint8_t)~DF_VIA;
        bool dup = false;
        for (unsigned j = 0; j < n && !dup; j++)
            dup = out[j].port == port;
        if (!dup) out[n++] = vclass(d->V, port, pt & DF_VIA ? kl : kg, K);
    }
    return n;
}

/* The decision at a source-group router sw: an intermediate group, or -1 for the minimal way. */
static int32_t df_decide(const df_ctx *d, nf_node sw, unsigned hops, const nf__sim_pkt *p,
                         int32_t gc, int32_t gd) {
    if (d->ng < 3 || d->kind == DF_MIN || d->kind == DF_MIN_BS) return -1;
    /* PAR's second look draws another group than its first */
    unsigned slot = *p->rs >> RS_SLOT_SHIFT & RS_SLOT_MASK;
    slot = slot ? slot - 1 : 0;
    int32_t gi = df_pick(d, sw, slot, p->dst_sw, hops ? p->salt ^ 0x5bd1e995u : p->salt, gc, gd);
    if (gi < 0) return -1; /* a restrictive proxy's draw of the source or destination group */
    nf_node a = df_arrival(d, sw, gi);
    if (a == NF_NONE) return -1; /* no way to that group */
    if (!p->view || d->kind == DF_VAL) return gi;
    double qm, qv;
    unsigned hm, hv;
    if (d->kind == DF_UGAL_G) {
        qm = df_way_queue(d, p->view, sw, -1, p->dst_sw, &hm);
        qv = df_way_queue(d, p->view, sw, gi, p->dst_sw, &hv);
    } else {
        unsigned pm = df_first_port(d, sw, gd), pv = df_first_port(d, sw, gi);
        qm = pm ? p->view->occupancy(p->view, pm) : 0;
        qv = pv ? p->view->occupancy(p->view, pv) : 0;
        hm = df_min_hops(d, sw, p->dst_sw);
        hv = df_min_hops(d, sw, a) + df_min_hops(d, a, p->dst_sw);
    }
    bool min = d->kind == DF_UGAL_LT
                   ? qm + hm * d->w_hop <= d->bias * (qv + hv * d->w_hop) + d->threshold
                   : nf_sim_ugal_takes_min(qm, hm, qv, hv, d->w_hop, d->bias);
    return min ? -1 : gi;
}

static unsigned dfa_route(void *ctx, nf_node sw, unsigned in_port, unsigned in_vc, unsigned hops,
                          const nf__sim_pkt *p, nf_sim_cand *out, unsigned max) {
    df_ctx *d = ctx;
    const nf_fabric *f = d->f;
    df_cls c = df_classes(d);
    bool par = d->kind == DF_PAR;
    int32_t gc = d->grp[sw], gd = d->grp[p->dst_sw];
    unsigned src_local = hops == 0 ? c.local1 : c.local2;
    if (gc == gd) /* the destination group: to the destination switch */
        return df_emit(d, df_rowsw(d, sw, p->dst_sw), c.dst, c.dst, c.K, true, out, 0, max);
    if (!p->rs) { /* the checker: everything a packet in this state could be given */
        bool arrived = d->in_global[nf_port_index(f, sw, in_port)];
        bool in_mid = arrived || (d->V >= c.K && in_vc >= c.mid * d->V / c.K);
        if (in_mid) return df_emit(d, df_rowix(d, sw, gd), c.mid, c.mid, c.K, true, out, 0, max);
        /* the source group: on to any group; local hops only as the first (PAR: two) */
        bool locals = hops == 0 || (par && hops == 1);
        unsigned n = 0;
        for (uint32_t g = 0; g < d->ng && n < max; g++)
            if ((int32_t)g != gc)
                n = df_emit(d, df_rowix(d, sw, (int32_t)g), src_local, c.global, c.K, locals, out,
                            n, max);
        return n;
    }
    if (hops == 0) /* its source endpoint's place, for the private proxies */
        *p->rs = (*p->rs & ~(RS_SLOT_MASK << RS_SLOT_SHIFT)) |
                 (uint32_t)(d->slot[nf_port_index(f, sw, in_port)] + 1u) << RS_SLOT_SHIFT;
    uint32_t rs = *p->rs;
    if (!(rs & RS_DECIDED) && (!(rs & RS_TENTATIVE) || hops > 0)) {
        int32_t gi = df_decide(d, sw, hops, p, gc, gd);
        if (par && gi < 0 && !(rs & RS_TENTATIVE) && df_first_port(d, sw, gd) &&
            (d->ports[d->off[df_rowix(d, sw, gd)]] & DF_VIA))
            rs = (rs & (RS_SLOT_MASK << RS_SLOT_SHIFT)) | RS_TENTATIVE; /* PAR: again next */
        else
            rs = (rs & (RS_SLOT_MASK << RS_SLOT_SHIFT)) | RS_DECIDED |
                 (gi >= 0 ? ((uint32_t)gi + 1) | NF__RS_NONMIN : 0);
        *p->rs = rs;
    }
    int32_t gi = (int32_t)(rs & 0xFFFF) - 1;
    if (gi < 0) /* minimal, in the source group */
        return df_emit(d, df_rowix(d, sw, gd), src_local, c.global, c.K, true, out, 0, max);
    if (gc == gi) /* at the intermediate group: on to the destination */
        return df_emit(d, df_rowix(d, sw, gd), c.mid, c.mid, c.K, true, out, 0, max);
    return df_emit(d, df_rowix(d, sw, gi), src_local, c.global, c.K, true, out, 0, max);
}

/* ---- ugal-bs: BookSim2's dragonflynew UGAL -------------------------------------------------
 *
 * At its source router a packet for another group draws an intermediate switch: the switch of an
 * endpoint drawn uniformly among all endpoints, its own and its destination's included. One in
 * its own group sends it the minimal way. Otherwise it goes minimal when q_min <= bias q_val +
 * threshold (2 and 30 unless given), q_min and q_val the occupancy of the source router's first
 * port toward the destination and toward the intermediate switch; else it is routed minimally to
 * the intermediate switch (up to two local hops in its group, the one of arrival and the one to
 * it) and from there minimally to its destination. A packet for its own group goes there
 * directly.
 *
 * The VC class is the packet's phase: 0 on the way to the intermediate switch, 1 on the minimal
 * way before a global hop, 2 from the global hop of the minimal way on and for a packet that
 * stays in its group. Classes 0 of the source group and of the intermediate group are the same
 * class on the same local links, so the channel dependency graph has cycles (G0 L0 G0 L0 ...
 * through three groups): the deadlock checker finds one, a real one, as BookSim's own scheme has
 * it.
 *
 * The packet's word: bits 0-23 the intermediate switch + 1 (0: none), bits 24-25 the phase,
 * RS_DECIDED once the source router chose, NF__RS_NONMIN when it chose the intermediate. The
 * intermediate switch is reached when the phase is above 0. */
#define BS_SW_MASK 0x00FFFFFFu
#define BS_PH_SHIFT 24
#define BS_PH_MASK (3u << BS_PH_SHIFT)

/* The row of sw's ports toward switch t (sw != t): t's own row in sw's group, else the row toward
 * t's group. */
static size_t bs_row(const df_ctx *d, nf_node sw, nf_node t) {
    return d->grp[t] == d->grp[sw] ? df_rowsw(d, sw, t) : df_rowix(d, sw, d->grp[t]);
}

/* Emits row r's ports in class ph, or, when ph is 1 and the row's ports are global (the minimal
 * way's global hop), class 2; returns the class given (the ports of a row are all local or all
 * global). */
static unsigned bs_emit(const df_ctx *d, nf_node sw, size_t r, unsigned ph, nf_sim_cand *out,
                        unsigned *n, unsigned max) {
    unsigned k = ph;
    if (ph == 1 && d->off[r] < d->off[r + 1] &&
        d->in_global[nf_port_index(d->f, sw, d->ports[d->off[r]] & (uint8_t)~DF_VIA)])
        k = 2;
    *n = df_emit(d, r, k, k, 3, true, out, *n, max);
    return k;
}

/* The intermediate switch of a packet from its salt: the switch of a uniformly drawn endpoint. */
static nf_node bs_pick(const df_ctx *d, uint32_t salt) {
    uint32_t x = (salt ^ 0x27d4eb2fu) * 0x9E3779B1u;
    x ^= x >> 15;
    x *= 0x85EBCA77u;
    x ^= x >> 13;
    return d->ep_sw[(uint64_t)x * d->n_ep >> 32];
}

/* The decision at the source router sw of a packet for another group: its word. */
static uint32_t bs_decide(const df_ctx *d, nf_node sw, const nf__sim_pkt *p) {
    nf_node m = d->n_ep ? bs_pick(d, p->salt) : sw;
    int32_t gm = d->grp[m];
    size_t rv = df_rowix(d, sw, gm);
    uint32_t minimal = RS_DECIDED | 1u << BS_PH_SHIFT;
    if (gm == d->grp[sw] || d->off[rv] == d->off[rv + 1]) return minimal;
    if (p->view) {
        unsigned pm = df_first_port(d, sw, d->grp[p->dst_sw]), pv = df_first_port(d, sw, gm);
        double qm = pm ? p->view->occupancy(p->view, pm) : 0;
        double qv = pv ? p->view->occupancy(p->view, pv) : 0;
        if (qm <= d->bias * qv + d->threshold) return minimal;
    }
    return RS_DECIDED | NF__RS_NONMIN | (m + 1);
}

/* The checker's candidates: every one a packet at sw could be given, told by its VC class, the
 * kind of link it came over and its hops. Class 0 is the way to the intermediate switch: after
 * one local hop (hops 1) the packet is at its source group's gateway and leaves by a global link
 * toward any group; after a global hop it is at its intermediate group's switch of arrival, which
 * is the intermediate switch or sends it on to any other switch of that group; after a local hop
 * later (hops 2 or more) it is at the intermediate switch. At the intermediate switch it goes on
 * minimally in phase 1. */
static unsigned bs_superset(const df_ctx *d, nf_node sw, unsigned in_port, unsigned in_vc,
                            unsigned hops, const nf__sim_pkt *p, nf_sim_cand *out, unsigned max) {
    const nf_fabric *f = d->f;
    int32_t gc = d->grp[sw], gd = d->grp[p->dst_sw];
    size_t rmin = bs_row(d, sw, p->dst_sw);
    unsigned n = 0;
    if (hops == 0) { /* the source router: minimal, or toward any other group in class 0 */
        if (gc == gd) return df_emit(d, rmin, 2, 2, 3, true, out, 0, max);
        bs_emit(d, sw, rmin, 1, out, &n, max);
        for (uint32_t g = 0; g < d->ng && n < max; g++)
            if ((int32_t)g != gc)
                n = df_emit(d, df_rowix(d, sw, (int32_t)g), 0, 0, 3, true, out, n, max);
        return n;
    }
    unsigned k = d->V >= 3 ? (in_vc >= 2 * d->V / 3 ? 2 : in_vc >= d->V / 3 ? 1 : 0) : 0;
    bool global = d->in_global[nf_port_index(f, sw, in_port)];
    if (k > 0) {
        bs_emit(d, sw, rmin, k, out, &n, max);
        return n;
    }
    if (!global && hops == 1) { /* the source group's gateway: out to any group */
        for (uint32_t g = 0; g < d->ng && n < max; g++)
            if ((int32_t)g != gc)
                n = df_emit(d, df_rowix(d, sw, (int32_t)g), 0, 0, 3, false, out, n, max);
        return n;
    }
    bs_emit(d, sw, rmin, 1, out, &n, max); /* at the intermediate switch */
    if (global)                            /* or on to it */
        for (uint32_t t = 0; t < d->amax && n < max; t++) {
            size_t r = (size_t)sw * (d->ng + d->amax) + d->ng + t;
            n = df_emit(d, r, 0, 0, 3, true, out, n, max);
        }
    return n;
}

static unsigned bs_route(void *ctx, nf_node sw, unsigned in_port, unsigned in_vc, unsigned hops,
                         const nf__sim_pkt *p, nf_sim_cand *out, unsigned max) {
    df_ctx *d = ctx;
    if (!p->rs) return bs_superset(d, sw, in_port, in_vc, hops, p, out, max);
    uint32_t rs = *p->rs;
    if (!(rs & RS_DECIDED))
        rs = d->grp[sw] == d->grp[p->dst_sw] ? RS_DECIDED | 2u << BS_PH_SHIFT : bs_decide(d, sw, p);
    unsigned ph = (rs & BS_PH_MASK) >> BS_PH_SHIFT;
    nf_node m = (rs & BS_SW_MASK) ? (rs & BS_SW_MASK) - 1 : NF_NONE;
    if (ph == 0 && sw == m) ph = 1; /* reached: minimally on to the destination */
    unsigned n = 0;
    ph = bs_emit(d, sw, bs_row(d, sw, ph == 0 ? m : p->dst_sw), ph, out, &n, max);
    *p->rs = (rs & ~BS_PH_MASK) | ph << BS_PH_SHIFT;
    return n;
}

static int ugal_bs_init(void **out, const void *data, const nf_fabric *f, const uint8_t *ls,
                        const nf_hops *h, const nf_sim_config *c, nf_diag *diag) {
    (void)data;
    if (f->n_switches >= BS_SW_MASK) /* the packet's word holds the intermediate switch */
        return nf__fail(diag, NF_EINVAL, "ugal-bs routes fabrics of fewer than %u switches",
                        BS_SW_MASK);
    return df_init_kind(out, f, ls, h, c, DF_UGAL_BS, diag);
}

static unsigned vc0_only(void *ctx) {
    (void)ctx;
    return 0;
}

const nf_sim_routing nf__sim_dfmin = {
    .name = "dfmin",
    .summary = "Dragonfly minimal: local, global, local; VC class 1 after the global hop",
    .min_vcs = 2,
    .bs_dragonfly = true,
    .marks_nonmin = true, /* never marks: every packet goes local-global-local */
    .fixed_ports = true,
    .init = dfmin_init,
    .route = df_route,
    .inj_vc_hi = vc0_only,
    .fini = df_fini};

const nf_sim_routing nf__sim_dfmin_bs = {
    .name = "dfmin-bs",
    .summary = "Dragonfly minimal as BookSim2's dragonflynew min: VC 0, VC 1 from the global hop",
    .min_vcs = 2,
    .bs_dragonfly = true,
    .marks_nonmin = true,
    .fixed_ports = true,
    .init = dfmin_bs_init,
    .route = df_route_bs,
    .inj_vc_hi = vc0_only,
    .fini = df_fini};

const nf_sim_routing nf__sim_dfval = {
    .name = "val",
    .summary = "Dragonfly Valiant: via a random intermediate group; 3 VC classes",
    .min_vcs = 3,
    .bs_dragonfly = true,
    .marks_nonmin = true,
    .init = dfval_init,
    .route = dfa_route,
    .inj_vc_hi = vc0_only,
    .fini = df_fini};

const nf_sim_routing nf__sim_ugal_g = {
    .name = "ugal-g",
    .summary = "Dragonfly UGAL-G: as ugal-l with the occupancy summed along each whole way",
    .min_vcs = 3,
    .bs_dragonfly = true,
    .marks_nonmin = true,
    .needs_global = true,
    .init = ugal_g_init,
    .route = dfa_route,
    .inj_vc_hi = vc0_only,
    .fini = df_fini};

const nf_sim_routing nf__sim_par = {
    .name = "par",
    .summary = "Dragonfly PAR: UGAL-L at the source router, again at the next one; 4 VC classes",
    .min_vcs = 4,
    .bs_dragonfly = true,
    .marks_nonmin = true,
    .init = par_init,
    .route = dfa_route,
    .inj_vc_hi = vc0_only,
    .fini = df_fini};

const nf_sim_routing nf__sim_ugal_lt = {
    .name = "ugal-lt",
    .summary = "Dragonfly UGAL-L with a fixed threshold: MIN when cost_min <= B cost_val + T "
               "(B: --bias, default 1)",
    .min_vcs = 3,
    .bs_dragonfly = true,
    .marks_nonmin = true,
    .init = ugal_lt_init,
    .route = dfa_route,
    .inj_vc_hi = vc0_only,
    .fini = df_fini};

const nf_sim_routing nf__sim_ugal_l = {
    .name = "ugal-l",
    .summary = "Dragonfly UGAL-L: MIN when q_min + h_min w_hop <= bias (q_val + h_val w_hop)",
    .min_vcs = 3,
    .bs_dragonfly = true,
    .marks_nonmin = true,
    .init = ugal_l_init,
    .route = dfa_route,
    .inj_vc_hi = vc0_only,
    .fini = df_fini};

const nf_sim_routing nf__sim_ugal_bs = {.name = "ugal-bs",
                                        .summary = "Dragonfly UGAL as BookSim2's dragonflynew ugal",
                                        .min_vcs = 3,
                                        .bs_dragonfly = true,
                                        .own_group_class = 2,
                                        .marks_nonmin = true,
                                        .init = ugal_bs_init,
                                        .route = bs_route,
                                        .inj_vc_hi = vc0_only,
                                        .fini = df_fini};
