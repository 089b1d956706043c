/* SPDX-License-Identifier: MIT */
/* The simulator's routing functions and the deadlock checker (sim.h). Each routing gives, at a
 * switch, the ports a packet may leave by, in preference order, each with the VCs it may use;
 * the engine takes the first usable one (deterministic) or the one with most credits (adaptive).
 * VC classes split the VCs in halves: class 0 is [0, V/2), class 1 is [V/2, V). */
#include "sim/sim_internal.h"

#include "netfab/lft.h"

#include "util/diag.h"
#include "util/mem.h"
#include "util/u64map.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct base_ctx {
    const nf_fabric *f;
    const uint8_t *ls; /* the link states it goes by (the init's link_state) */
    const nf_hops *h;
    unsigned V;
} base_ctx;

static void base_fini(void *ctx) { nf__free(ctx); }

static int base_init(void **out, const nf_fabric *f, const uint8_t *ls, const nf_hops *h,
                     const nf_sim_config *c) {
    base_ctx *b = nf__calloc(1, sizeof *b);
    if (!b) return NF_ENOMEM;
    b->f = f;
    b->ls = ls;
    b->h = h;
    b->V = c->vcs;
    *out = b;
    return NF_OK;
}

static nf_sim_cand cls(const base_ctx *b, unsigned port, unsigned cl) {
    unsigned half = b->V / 2 ? b->V / 2 : 1;
    if (b->V < 2) return (nf_sim_cand){.port = (uint8_t)port, .vc_lo = 0, .vc_hi = 0};
    return cl ? (nf_sim_cand){.port = (uint8_t)port,
                              .vc_lo = (uint8_t)half,
                              .vc_hi = (uint8_t)(b->V - 1)}
              : (nf_sim_cand){.port = (uint8_t)port, .vc_lo = 0, .vc_hi = (uint8_t)(half - 1)};
}

/* The ports of sw one hop closer to dst_sw over links up in ls, in port order (CSR order). */
static unsigned closer_ports(const nf_fabric *f, const uint8_t *ls, const nf_hops *h, nf_node sw,
                             nf_node dst, uint8_t *ports, unsigned max) {
    unsigned d = nf_hops_sw(h, sw, dst), n = 0;
    for (uint32_t e = f->sw_adj_off[sw]; e < f->sw_adj_off[sw + 1] && n < max; e++) {
        nf_node w = f->sw_adj[e];
        if (ls[f->sw_adj_link[e]] != NF_LINK_UP) continue;
        if ((unsigned)nf_hops_sw(h, w, dst) + 1 == d) ports[n++] = f->sw_adj_port[e];
    }
    return n;
}

/* ---- minhop: every min-hop port; VC = hops taken (deadlock-free only with V > diameter) ---- */

static int mh_init(void **ctx, const void *data, const nf_fabric *f, const uint8_t *ls,
                   const nf_hops *h, const nf_sim_config *c, nf_diag *d) {
    (void)data;
    (void)d;
    return base_init(ctx, f, ls, h, c);
}

static unsigned mh_route(void *ctx, nf_node sw, unsigned in_port, unsigned in_vc, unsigned hops,
                         const nf__sim_pkt *p, nf_sim_cand *out, unsigned max) {
    (void)in_port, (void)in_vc;
    base_ctx *b = ctx;
    uint8_t ports[NF_SIM_MAX_RADIX];
    unsigned n = closer_ports(b->f, b->ls, b->h, sw, p->dst_sw, ports,
                              max < NF_SIM_MAX_RADIX ? max : NF_SIM_MAX_RADIX);
    unsigned vc = hops + 1 < b->V ? hops + 1 : b->V - 1;
    for (unsigned i = 0; i < n; i++)
        out[i] = (nf_sim_cand){.port = ports[i], .vc_lo = (uint8_t)vc, .vc_hi = (uint8_t)vc};
    return n;
}

static unsigned vc0_only(void *ctx) {
    (void)ctx;
    return 0;
}

/* ---- updown: fat trees; up by d-mod-k among the min-hop up ports, then down -------------- */

static int ud_init(void **ctx, const void *data, const nf_fabric *f, const uint8_t *ls,
                   const nf_hops *h, const nf_sim_config *c, nf_diag *d) {
    (void)data;
    for (nf_node s = 0; s < f->n_switches; s++)
        if (f->level[s] == 0)
            return nf__fail(
                d, NF_EINVAL,
                "updown, nca-bs and anca-bs route trees: switch %s has no tree level (use a "
                "fat tree, xgft, gft, bluelight or taihulight)",
                nf_node_name(f, s));
    return base_init(ctx, f, ls, h, c);
}

static unsigned ud_route(void *ctx, nf_node sw, unsigned in_port, unsigned in_vc, unsigned hops,
                         const nf__sim_pkt *p, nf_sim_cand *out, unsigned max) {
    (void)in_port, (void)in_vc, (void)hops;
    base_ctx *b = ctx;
    uint8_t ports[NF_SIM_MAX_RADIX];
    unsigned n = closer_ports(b->f, b->ls, b->h, sw, p->dst_sw, ports,
                              max < NF_SIM_MAX_RADIX ? max : NF_SIM_MAX_RADIX);
    /* d-mod-k: at level L the destination's L-th digit in base n picks the first candidate
     * (the others follow in turn), so that destinations spread over all the top switches */
    uint32_t idx = p->dst_ca - b->f->n_switches;
    for (unsigned l = 1; n && l < b->f->level[sw]; l++)
        idx /= n;
    unsigned first = n ? idx % n : 0;
    for (unsigned i = 0; i < n; i++)
        out[i] =
            (nf_sim_cand){.port = ports[(first + i) % n], .vc_lo = 0, .vc_hi = (uint8_t)(b->V - 1)};
    return n;
}

static unsigned all_vcs(void *ctx) { return ((base_ctx *)ctx)->V - 1; }

/* ---- nca-bs, anca-bs: BookSim2's fattree_nca and fattree_anca ------------------------------- */

/* A k-ary n-tree's up ports all lead to a nearest common ancestor at the same distance, so the
 * min-hop ports toward the destination are its one down port, or every up port. Going up,
 * nca-bs takes one up port drawn at random, anca-bs draws two (with replacement) and takes the
 * one whose downstream holds fewer flits, the first on a tie, as BookSim2's do; the draws come
 * from the packet's salt and the switch (the same at every try of the packet there). anca-bs
 * chooses ahead (lookahead), as BookSim2 with routing_delay 0: as the head leaves the switch
 * before, from this switch's snapshot; it keeps the port in the packet's word and gives it here. */
static uint32_t ft_draw(uint32_t salt, nf_node sw, unsigned k) {
    uint32_t x = (salt ^ (sw * 0x85ebca6bu) ^ (k * 0xc2b2ae35u)) * 0x9E3779B1u;
    x ^= x >> 15;
    x *= 0x2c1b3c6du;
    return x ^ (x >> 12);
}

#define FT_AHEAD 0x100u /* the packet's word holds the up port chosen ahead (lookahead) */

static unsigned bsft_route(void *ctx, nf_node sw, const nf__sim_pkt *p, nf_sim_cand *out,
                           unsigned max, bool adaptive) {
    base_ctx *b = ctx;
    uint8_t ports[NF_SIM_MAX_RADIX];
    unsigned n = closer_ports(b->f, b->ls, b->h, sw, p->dst_sw, ports,
                              max < NF_SIM_MAX_RADIX ? max : NF_SIM_MAX_RADIX);
    if (n > 1 && p->view) { /* up (the deadlock checker, no view: every port it may take) */
        unsigned r1 = (unsigned)(((uint64_t)ft_draw(p->salt, sw, 0) * n) >> 32), pick = r1;
        unsigned kept = p->rs && !p->ahead && *p->rs & FT_AHEAD ? *p->rs & 0xffu : 0;
        for (unsigned i = 0; kept && i < n; i++) /* chosen ahead (if its port is still up) */
            if (ports[i] == kept) pick = i, adaptive = false, kept = 0;
        if (adaptive) {
            unsigned r2 = (unsigned)(((uint64_t)ft_draw(p->salt, sw, 1) * n) >> 32);
            if (p->view->occupancy(p->view, ports[r1]) > p->view->occupancy(p->view, ports[r2]))
                pick = r2;
        }
        ports[0] = ports[pick];
        n = 1;
        if (p->ahead) *p->rs = FT_AHEAD | ports[0];
    }
    for (unsigned i = 0; i < n; i++)
        out[i] = (nf_sim_cand){.port = ports[i], .vc_lo = 0, .vc_hi = (uint8_t)(b->V - 1)};
    return n;
}
static unsigned nca_route(void *ctx, nf_node sw, unsigned in_port, unsigned in_vc, unsigned hops,
                          const nf__sim_pkt *p, nf_sim_cand *out, unsigned max) {
    (void)in_port, (void)in_vc, (void)hops;
    return bsft_route(ctx, sw, p, out, max, false);
}
static unsigned anca_route(void *ctx, nf_node sw, unsigned in_port, unsigned in_vc, unsigned hops,
                           const nf__sim_pkt *p, nf_sim_cand *out, unsigned max) {
    (void)in_port, (void)in_vc, (void)hops;
    return bsft_route(ctx, sw, p, out, max, true);
}

/* ---- dor: tori built by torus:...; dimension order, shortest way round, dateline VCs -------- */

typedef struct dor_ctx {
    base_ctx b;
    unsigned nd, c; /* dimensions, host ports per switch */
    unsigned dims[8];
    uint16_t *coord; /* S * nd */
    int mode;        /* DOR_PLAIN, DOR_DATELINE, DOR_BOOKSIM */
} dor_ctx;

enum { DOR_PLAIN, DOR_DATELINE, DOR_BOOKSIM };
static const char *const dor_names[] = {"dor-plain", "dor", "dor-bs"};

static void dor_fini(void *ctx) {
    dor_ctx *d = ctx;
    if (d) nf__free(d->coord);
    nf__free(d);
}

static int dor_init_any(void **out, const nf_fabric *f, const uint8_t *ls, const nf_hops *h,
                        const nf_sim_config *c, nf_diag *diag, int mode) {
    dor_ctx *d = nf__calloc(1, sizeof *d);
    if (!d) return NF_ENOMEM;
    d->b = (base_ctx){.f = f, .ls = ls, .h = h, .V = c->vcs};
    d->mode = mode;
    for (nf_node s = 0; s < f->n_switches; s++) {
        const char *name = nf_node_name(f, s);
        unsigned x[8], k = 0;
        if (!name || strncmp(name, "torus ", 6) != 0) goto refuse;
        const char *q = name + 6;
        while (k < 8) {
            char *end;
            unsigned long v = strtoul(q, &end, 10);
            if (end == q || v > 65535) goto refuse;
            x[k++] = (unsigned)v;
            if (*end != ',') {
                if (*end) goto refuse;
                break;
            }
            q = end + 1;
        }
        if (s == 0) {
            d->nd = k;
            d->coord = nf__malloc((size_t)f->n_switches * k * sizeof *d->coord);
            if (!d->coord) {
                dor_fini(d);
                return NF_ENOMEM;
            }
            d->c = f->nports[s] - 2 * k;
        }
        if (k != d->nd || f->nports[s] != d->c + 2 * k) goto refuse;
        for (unsigned i = 0; i < k; i++) {
            d->coord[(size_t)s * k + i] = (uint16_t)x[i];
            if (x[i] + 1 > d->dims[i]) d->dims[i] = x[i] + 1;
        }
    }
    *out = d;
    return NF_OK;
refuse:
    dor_fini(d);
    return nf__fail(diag, NF_EINVAL,
                    "%s routes tori built by torus:...: switch names give the coordinates",
                    dor_names[mode]);
}

static int dor_init(void **ctx, const void *data, const nf_fabric *f, const uint8_t *ls,
                    const nf_hops *h, const nf_sim_config *c, nf_diag *d) {
    (void)data;
    return dor_init_any(ctx, f, ls, h, c, d, DOR_DATELINE);
}
static int dorb_init(void **ctx, const void *data, const nf_fabric *f, const uint8_t *ls,
                     const nf_hops *h, const nf_sim_config *c, nf_diag *d) {
    (void)data;
    return dor_init_any(ctx, f, ls, h, c, d, DOR_BOOKSIM);
}
static int dorp_init(void **ctx, const void *data, const nf_fabric *f, const uint8_t *ls,
                     const nf_hops *h, const nf_sim_config *c, nf_diag *d) {
    (void)data;
    return dor_init_any(ctx, f, ls, h, c, d, DOR_PLAIN);
}

static unsigned dor_route(void *ctx, nf_node sw, unsigned in_port, unsigned in_vc, unsigned hops,
                          const nf__sim_pkt *p, nf_sim_cand *out, unsigned max) {
    (void)hops;
    dor_ctx *d = ctx;
    if (!max) return 0;
    const uint16_t *a = d->coord + (size_t)sw * d->nd, *z = d->coord + (size_t)p->dst_sw * d->nd;
    for (unsigned j = 0; j < d->nd; j++) {
        /* BookSim2's dimension 0 is its node number's lowest digit: the name's last coordinate */
        unsigned i = d->mode == DOR_BOOKSIM ? d->nd - 1 - j : j;
        if (a[i] == z[i]) continue;
        unsigned k = d->dims[i];
        unsigned delta = (z[i] + k - a[i]) % k;
        bool plus = 2 * delta <= k;
        if (d->mode == DOR_BOOKSIM && 2 * delta == k) /* half way round: either, by the packet */
            plus = p->salt >> (i & 31) & 1;
        unsigned port = d->c + 2 * i + (plus ? 1 : 2);
        if (d->mode == DOR_PLAIN) {
            out[0] =
                (nf_sim_cand){.port = (uint8_t)port, .vc_lo = 0, .vc_hi = (uint8_t)(d->b.V - 1)};
            return 1;
        }
        bool same_dim = in_port > d->c && (in_port - d->c - 1) / 2 == i;
        unsigned half = d->b.V / 2;
        bool was1 = same_dim && in_vc >= half;
        if (d->mode == DOR_BOOKSIM) {
            /* the class fixed on entry, as BookSim2's dor_next_torus (without balance) sets it:
             * 1 going up when its way wraps, and 1 going down when the destination is below, so
             * when its way does not wrap (its balanced branch tests the wrap there). Either
             * way every class-0 way down crosses the wrap link, so none closes a cycle. */
            bool one = plus ? a[i] > z[i] : z[i] < a[i];
            out[0] = cls(&d->b, port, same_dim ? was1 : one);
            return 1;
        }
        /* class 1 from the wrap-around link on, within this dimension */
        bool wrap = plus ? a[i] == k - 1 : a[i] == 0;
        out[0] = cls(&d->b, port, wrap || was1);
        return 1;
    }
    return 0;
}

/* BookSim2's kncube numbers a router's ports 2 d (toward the next node in dimension d) and
 * 2 d + 1 (the previous), its dimension 0 the lowest digit of a node's number (the name's last
 * coordinate here), and the node's port 2 n; here the host ports come first, then each name
 * coordinate's plus and minus ports. */
static void dor_bs_ports(void *ctx, nf_node sw, uint8_t *rank) {
    (void)sw;
    const dor_ctx *d = ctx;
    for (unsigned h = 0; h < d->c; h++)
        rank[h] = (uint8_t)(2 * d->nd + h);
    for (unsigned i = 0; i < d->nd; i++)
        for (unsigned dir = 0; dir < 2; dir++)
            rank[d->c + 2 * i + dir] = (uint8_t)(2 * (d->nd - 1 - i) + dir);
}

/* ---- table2: two-level tables (intra- and inter-supernode), SPEC section 4 ------------------ */

/* Every switch holds two tables of candidate port lists: one row per switch of its own
 * supernode (the ports one hop closer to it) and one row per other supernode (the ports one hop
 * closer to that supernode's nearest switch). A destination in the router's own supernode is
 * looked up in the first, any other in the second; so a packet heads for the destination's
 * supernode, and once inside, for its switch. The rows are port lists in CSR form. VC = hops
 * taken, as minhop (deadlock-free with more VCs than the longest path). */
typedef struct t2_ctx {
    base_ctx b;
    uint32_t n_sn;
    int32_t *sn;        /* per switch: its supernode (switches without one form their own) */
    uint32_t *sn_first; /* per supernode: offset into sn_members; n_sn + 1 */
    nf_node *sn_members;
    uint32_t *rank; /* per switch: its index within its supernode */
    uint64_t *row;  /* per switch: offset of its first row (intra rows, then inter rows) */
    uint32_t *off;  /* per row: offset into ports; one more at the end */
    uint8_t *ports;
    uint64_t entries; /* port entries in all tables */
} t2_ctx;

static void t2_fini(void *ctx) {
    t2_ctx *t = ctx;
    if (!t) return;
    nf__free(t->sn);
    nf__free(t->sn_first);
    nf__free(t->sn_members);
    nf__free(t->rank);
    nf__free(t->row);
    nf__free(t->off);
    nf__free(t->ports);
    nf__free(t);
}

static int t2_init(void **out, const void *data, const nf_fabric *f, const uint8_t *ls,
                   const nf_hops *h, const nf_sim_config *c, nf_diag *diag) {
    (void)data;
    (void)diag;
    uint32_t S = f->n_switches;
    t2_ctx *t = nf__calloc(1, sizeof *t);
    if (!t) return NF_ENOMEM;
    t->b = (base_ctx){.f = f, .ls = ls, .h = h, .V = c->vcs};
    int32_t mx = -1;
    for (nf_node s = 0; s < S; s++)
        if (f->supernode[s] > mx) mx = f->supernode[s];
    uint32_t extra = 0;
    t->sn = nf__malloc((size_t)S * sizeof *t->sn);
    t->rank = nf__malloc((size_t)S * sizeof *t->rank);
    if (!t->sn || !t->rank) goto oom;
    for (nf_node s = 0; s < S; s++)
        t->sn[s] = f->supernode[s] >= 0 ? f->supernode[s] : (int32_t)(mx + 1 + extra++);
    t->n_sn = (uint32_t)(mx + 1) + extra;
    t->sn_first = nf__calloc((size_t)t->n_sn + 1, sizeof *t->sn_first);
    t->sn_members = nf__malloc((size_t)S * sizeof *t->sn_members);
    t->row = nf__malloc(((size_t)S + 1) * sizeof *t->row);
    if (!t->sn_first || !t->sn_members || !t->row) goto oom;
    for (nf_node s = 0; s < S; s++)
        t->sn_first[t->sn[s] + 1]++;
    for (uint32_t g = 0; g < t->n_sn; g++)
        t->sn_first[g + 1] += t->sn_first[g];
    { /* members in id order; rank = the switch's place among them */
        uint32_t *fill = nf__calloc(t->n_sn, sizeof *fill);
        if (!fill) goto oom;
        for (nf_node s = 0; s < S; s++) {
            uint32_t g = (uint32_t)t->sn[s];
            t->rank[s] = fill[g];
            t->sn_members[t->sn_first[g] + fill[g]++] = s;
        }
        nf__free(fill);
    }
    uint64_t rows = 0;
    for (nf_node s = 0; s < S; s++) {
        t->row[s] = rows;
        uint32_t g = (uint32_t)t->sn[s];
        rows += (t->sn_first[g + 1] - t->sn_first[g]) + (t->n_sn - 1);
    }
    t->row[S] = rows;
    t->off = nf__malloc((rows + 1) * sizeof *t->off);
    if (!t->off) goto oom;
    size_t cap = 0, n = 0;
    for (nf_node s = 0; s < S; s++) {
        uint32_t g = (uint32_t)t->sn[s];
        uint64_t k = t->row[s];
        /* intra: one row per member of the own supernode */
        for (uint32_t m = t->sn_first[g]; m < t->sn_first[g + 1]; m++, k++) {
            t->off[k] = (uint32_t)n;
            nf_node dst = t->sn_members[m];
            unsigned d = nf_hops_sw(h, s, dst);
            for (uint32_t e = f->sw_adj_off[s]; e < f->sw_adj_off[s + 1] && dst != s; e++)
                if ((unsigned)nf_hops_sw(h, f->sw_adj[e], dst) + 1 == d) {
                    if (NF_GROW(t->ports, cap, n + 1)) goto oom;
                    t->ports[n++] = f->sw_adj_port[e];
                }
        }
        /* inter: one row per other supernode, towards its nearest switch */
        for (uint32_t og = 0; og < t->n_sn; og++) {
            if (og == g) continue;
            t->off[k++] = (uint32_t)n;
            unsigned best = 255;
            for (uint32_t m = t->sn_first[og]; m < t->sn_first[og + 1]; m++) {
                unsigned x = nf_hops_sw(h, s, t->sn_members[m]);
                if (x < best) best = x;
            }
            if (best == 255 || best == 0) continue;
            for (uint32_t e = f->sw_adj_off[s]; e < f->sw_adj_off[s + 1]; e++) {
                nf_node w = f->sw_adj[e];
                unsigned bw = 255;
                for (uint32_t m = t->sn_first[og]; m < t->sn_first[og + 1] && bw >= best; m++) {
                    unsigned x = nf_hops_sw(h, w, t->sn_members[m]);
                    if (x < bw) bw = x;
                }
                if (bw + 1 == best) {
                    if (NF_GROW(t->ports, cap, n + 1)) goto oom;
                    t->ports[n++] = f->sw_adj_port[e];
                }
            }
        }
    }
    t->off[rows] = (uint32_t)n;
    t->entries = n;
    if (!t->ports && !(t->ports = nf__malloc(1))) goto oom;
    *out = t;
    return NF_OK;
oom:
    t2_fini(t);
    return NF_ENOMEM;
}

static unsigned t2_route(void *ctx, nf_node sw, unsigned in_port, unsigned in_vc, unsigned hops,
                         const nf__sim_pkt *p, nf_sim_cand *out, unsigned max) {
    (void)in_port, (void)in_vc;
    t2_ctx *t = ctx;
    uint32_t g = (uint32_t)t->sn[sw], gd = (uint32_t)t->sn[p->dst_sw];
    uint64_t k = t->row[sw];
    if (g == gd)
        k += t->rank[p->dst_sw];
    else
        k += (t->sn_first[g + 1] - t->sn_first[g]) + (gd < g ? gd : gd - 1);
    unsigned vc = hops + 1 < t->b.V ? hops + 1 : t->b.V - 1, n = 0;
    for (uint32_t i = t->off[k]; i < t->off[k + 1] && n < max; i++)
        out[n++] = (nf_sim_cand){.port = t->ports[i], .vc_lo = (uint8_t)vc, .vc_hi = (uint8_t)vc};
    return n;
}

/* ---- ftable: deterministic tables kept through link failures (nf_ftable) ------------------- */

/* The table is built from the links' states when the simulator is made; links that fail later
 * are skipped (the first usable candidate), the Sunway paper's behaviour before the SM rewrites
 * tables. VC = switch hops taken, so every path climbs the VCs: deadlock-free while paths are
 * shorter than the VCs (detours included; the checker tells for a given fabric and VC count). */
typedef struct ft_ctx {
    base_ctx b;
    nf_ftable *t;
} ft_ctx;

static void ft_fini(void *ctx) {
    ft_ctx *x = ctx;
    if (!x) return;
    nf_ftable_free(x->t);
    nf__free(x);
}

static int ft_init(void **out, const void *data, const nf_fabric *f, const uint8_t *ls,
                   const nf_hops *h, const nf_sim_config *c, nf_diag *diag) {
    (void)data;
    (void)diag;
    ft_ctx *x = nf__calloc(1, sizeof *x);
    if (!x) return NF_ENOMEM;
    x->b = (base_ctx){.f = f, .ls = ls, .h = h, .V = c->vcs};
    int rc = nf_ftable_build(f, h, (int)c->threads, &x->t);
    if (rc) {
        ft_fini(x);
        return rc;
    }
    *out = x;
    return NF_OK;
}

static unsigned ft_route(void *ctx, nf_node sw, unsigned in_port, unsigned in_vc, unsigned hops,
                         const nf__sim_pkt *p, nf_sim_cand *out, unsigned max) {
    (void)in_port, (void)in_vc;
    ft_ctx *x = ctx;
    unsigned vc = hops + 1 < x->b.V ? hops + 1 : x->b.V - 1;
    /* the first usable candidate only: deterministic, so the path is the one ft_deliverable
     * walked (were the others offered, a busy first port would send packets down ways that
     * may end at a failed link) */
    unsigned port = max ? nf_ftable_next(x->t, x->b.ls, sw, p->dst_ca) : 0;
    if (!port) return 0;
    out[0] = (nf_sim_cand){.port = (uint8_t)port, .vc_lo = (uint8_t)vc, .vc_hi = (uint8_t)vc};
    return 1;
}

/* Walks the first usable candidates from src_sw: the packet's path, if it has one. */
static bool ft_deliverable(void *ctx, nf_node src_sw, nf_node dst_ca, nf_node dst_sw) {
    (void)dst_sw; /* ftable's ways lead to the CA (its first cabled port) */
    ft_ctx *x = ctx;
    const nf_fabric *f = x->b.f;
    nf_node s = src_sw;
    for (uint32_t steps = 0; steps <= f->n_switches; steps++) {
        unsigned p = nf_ftable_next(x->t, x->b.ls, s, dst_ca);
        if (!p) return false;
        nf_node w = f->peer[nf_port_index(f, s, p)];
        if (w == dst_ca) return true;
        if (w >= f->n_switches) return false;
        s = w;
    }
    return false; /* round in a loop */
}

/* ---- registry ------------------------------------------------------------------------------- */

static const nf_sim_routing r_minhop = {
    .name = "minhop",
    .summary = "every min-hop port (table); VC = hops taken, deadlock-free when VCs > diameter",
    .min_vcs = 1,
    .fixed_ports = true,
    .init = mh_init,
    .route = mh_route,
    .inj_vc_hi = vc0_only,
    .fini = base_fini};
static const nf_sim_routing r_updown = {
    .name = "updown",
    .summary = "fat trees: up by d-mod-k (or adaptively) among min-hop up ports, then down",
    .min_vcs = 1,
    .fixed_ports = true,
    .init = ud_init,
    .route = ud_route,
    .inj_vc_hi = all_vcs,
    .fini = base_fini};
static const nf_sim_routing r_nca_bs = {
    .name = "nca-bs",
    .summary = "k-ary n-trees: BookSim2's fattree nca: up by an up port drawn at random, then down",
    .min_vcs = 1,
    .init = ud_init,
    .route = nca_route,
    .inj_vc_hi = all_vcs,
    .fini = base_fini};
static const nf_sim_routing r_anca_bs = {
    .name = "anca-bs",
    .summary = "k-ary n-trees: BookSim2's fattree anca: up by the emptier of two up ports drawn at "
               "random, then down",
    .min_vcs = 1,
    .init = ud_init,
    .route = anca_route,
    .lookahead = true,
    .inj_vc_hi = all_vcs,
    .fini = base_fini};
static const nf_sim_routing r_dor = {
    .name = "dor",
    .summary = "tori: dimension order, shortest way round, dateline VC classes",
    .min_vcs = 2,
    .fixed_ports = true,
    .init = dor_init,
    .route = dor_route,
    .inj_vc_hi = vc0_only,
    .fini = dor_fini};
static const nf_sim_routing r_dor_bs = {
    .name = "dor-bs",
    .summary = "tori: BookSim2's dim_order_torus: dimension 0 its lowest digit, a packet's VC "
               "class in a dimension fixed as it enters it (1 up when its way wraps round, 1 "
               "down when it does not)",
    .min_vcs = 2,
    .fixed_ports = true,
    .init = dorb_init,
    .route = dor_route,
    .inj_vc_hi = vc0_only,
    .bs_ports = dor_bs_ports,
    .fini = dor_fini};
static const nf_sim_routing r_dor_plain = {
    .name = "dor-plain",
    .summary = "tori: dimension order without datelines (deadlocks; for the checker)",
    .min_vcs = 1,
    .fixed_ports = true,
    .init = dorp_init,
    .route = dor_route,
    .inj_vc_hi = all_vcs,
    .fini = dor_fini};
static const nf_sim_routing r_table2 = {
    .name = "table2",
    .summary = "two-level tables: intra-supernode rows, inter-supernode rows; VC = hops taken",
    .min_vcs = 1,
    .fixed_ports = true,
    .init = t2_init,
    .route = t2_route,
    .inj_vc_hi = vc0_only,
    .fini = t2_fini};

static const nf_sim_routing r_ftable = {
    .name = "ftable",
    .summary = "deterministic tables kept through link failures: first usable candidate "
               "(min-hop, then sibling detours); VC = hops taken",
    .min_vcs = 1,
    .fixed_ports = true,
    .init = ft_init,
    .route = ft_route,
    .inj_vc_hi = vc0_only,
    .deliverable = ft_deliverable,
    .fini = ft_fini};

static const nf_sim_routing *const routings[] = {
    &r_minhop,       &r_updown,        &r_nca_bs,         &r_anca_bs,       &r_dor,
    &r_dor_plain,    &r_dor_bs,        &r_table2,         &r_ftable,        &nf__sim_dfmin,
    &nf__sim_dfval,  &nf__sim_ugal_l,  &nf__sim_ugal_g,   &nf__sim_ugal_lt, &nf__sim_par,
    &nf__sim_qadapt, &nf__sim_qadapt_nf, &nf__sim_ugal_bs, &nf__sim_dfmin_bs,
};

const nf_sim_routing *nf_sim_routing_find(const char *name) {
    for (size_t i = 0; name && i < sizeof routings / sizeof routings[0]; i++)
        if (strcmp(routings[i]->name, name) == 0) return routings[i];
    return NULL;
}
size_t nf_sim_routing_count(void) { return sizeof routings / sizeof routings[0]; }
const nf_sim_routing *nf_sim_routing_at(size_t i) {
    return i < nf_sim_routing_count() ? routings[i] : NULL;
}
const char *nf_sim_routing_name(const nf_sim_routing *r) { return r->name; }
const char *nf_sim_routing_summary(const nf_sim_routing *r) { return r->summary; }

/* ---- the deadlock checker ------------------------------------------------------------------- */

/* A channel-VC vertex: the global port sending on the channel, times V, plus the VC. */
typedef struct cdg {
    nf__u64map edges; /* from << 32 | to -> 1 */
    nf__u64map seen;  /* routing states visited: (in vertex, hops) */
    uint64_t *list;
    size_t n, cap;
} cdg;

static int add_edge(cdg *g, uint32_t from, uint32_t to) {
    uint64_t k = (uint64_t)from << 32 | to;
    if (nf__u64map_get(&g->edges, k, NULL)) return NF_OK;
    if (nf__u64map_put(&g->edges, k, 1) || NF_GROW(g->list, g->cap, g->n + 1)) return NF_ENOMEM;
    g->list[g->n++] = k;
    return NF_OK;
}

static int cmp_u64(const void *a, const void *b) {
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

int nf_sim_check_deadlock(const nf_fabric *f, const nf_hops *h, const nf_sim_routing *r,
                          const nf_sim_config *cfg, uint32_t *cycle_len, uint64_t *vertices,
                          uint64_t *edges, nf_diag *diag) {
    return nf_sim_check_deadlock_progress(f, h, r, cfg, NULL, NULL, cycle_len, vertices, edges,
                                          diag);
}

/* Every routing state is explored twice, for a packet of salt 0 and one of salt all ones, so a
 * routing that breaks a tie by the salt (dor-bs half way round a ring) shows both ways. */
int nf_sim_check_deadlock_progress(const nf_fabric *f, const nf_hops *h, const nf_sim_routing *r,
                                   const nf_sim_config *cfg,
                                   void (*progress)(void *ud, double frac), void *ud,
                                   uint32_t *cycle_len, uint64_t *vertices, uint64_t *edges,
                                   nf_diag *diag) {
    *cycle_len = 0;
    nf_sim_config c;
    int rc = nf__sim_routing_config(r, cfg, &c, diag);
    if (rc) return rc;
    void *ctx = NULL;
    if ((rc = r->init(&ctx, r->data, f, f->link_state, h, &c, diag))) return rc;
    unsigned V = c.vcs;
    uint32_t P = f->port_off[f->n_nodes];
    cdg g = {0};
    nf__u64map_init(&g.edges);
    nf__u64map_init(&g.seen);
    typedef struct st {
        nf_node sw;
        uint8_t in_port, in_vc;
        uint16_t hops;
        uint8_t salt; /* 0 or 1: the packet's salt 0 or all ones */
    } st;
    st *stack = NULL;
    size_t n_st = 0, cap_st = 0;
    unsigned inj_hi = r->inj_vc_hi(ctx);
    if (inj_hi >= V) inj_hi = V - 1;
    rc = NF_OK;
    for (nf_node dst = f->n_switches; dst < f->n_nodes && !rc; dst++) {
        if (progress && ((dst - f->n_switches) & 15) == 0)
            progress(ud, (double)(dst - f->n_switches) / (f->n_nodes - f->n_switches));
        nf_gport dg = nf_port_index(f, dst, 1);
        nf_node dsw = f->peer[dg];
        if (dsw == NF_NONE || dsw >= f->n_switches) continue;
        nf__sim_pkt pk = {.dst_ca = dst, .dst_sw = dsw};
        /* the routing states of packets for dst, from every injection */
        nf__u64map_fini(&g.seen);
        nf__u64map_init(&g.seen);
        n_st = 0;
        for (nf_node src = f->n_switches; src < f->n_nodes && !rc; src++) {
            nf_gport sg = nf_port_index(f, src, 1);
            nf_node ssw = f->peer[sg];
            if (src == dst || ssw == NF_NONE || ssw >= f->n_switches) continue;
            for (unsigned v = 0; v <= inj_hi && !rc; v++)
                for (uint8_t sl = 0; sl < 2 && !rc; sl++) {
                    if (NF_GROW(stack, cap_st, n_st + 1))
                        rc = NF_ENOMEM;
                    else
                        stack[n_st++] = (st){ssw, (uint8_t)f->peer_port[sg], (uint8_t)v, 0, sl};
                }
        }
        while (n_st && !rc) {
            st s = stack[--n_st];
            nf_gport gin = nf_port_index(f, s.sw, s.in_port);
            nf_gport up = nf_port_index(f, f->peer[gin], f->peer_port[gin]);
            uint32_t from = (uint32_t)(up * V + s.in_vc); /* the channel the packet holds */
            uint64_t key = (uint64_t)s.salt << 60 | (uint64_t)from << 16 | s.hops;
            if (nf__u64map_get(&g.seen, key, NULL)) continue;
            if ((rc = nf__u64map_put(&g.seen, key, 1))) break;
            if (s.sw == dsw) continue; /* ejection: consumed, no further dependency */
            nf_sim_cand cand[NF_SIM_MAX_RADIX];
            pk.salt = s.salt ? UINT32_MAX : 0;
            unsigned nc =
                r->route(ctx, s.sw, s.in_port, s.in_vc, s.hops, &pk, cand, NF_SIM_MAX_RADIX);
            for (unsigned k = 0; k < nc && !rc; k++) {
                nf_gport go = nf_port_index(f, s.sw, cand[k].port);
                nf_node nx = f->peer[go];
                if (nx == NF_NONE || nx >= f->n_switches) continue;
                unsigned hi = cand[k].vc_hi < V ? cand[k].vc_hi : V - 1;
                for (unsigned v = cand[k].vc_lo; v <= hi && !rc; v++) {
                    if ((rc = add_edge(&g, from, (uint32_t)(go * V + v)))) break;
                    if (NF_GROW(stack, cap_st, n_st + 1)) {
                        rc = NF_ENOMEM;
                        break;
                    }
                    stack[n_st++] = (st){nx, (uint8_t)f->peer_port[go], (uint8_t)v,
                                         (uint16_t)(s.hops + 1), s.salt};
                }
            }
        }
    }
    nf__free(stack);
    nf__u64map_fini(&g.seen);
    r->fini(ctx);
    if (rc) {
        nf__u64map_fini(&g.edges);
        nf__free(g.list);
        return rc;
    }
    /* cycle search over the graph in CSR form: iterative DFS, white/grey/black */
    size_t NV = (size_t)P * V;
    qsort(g.list, g.n, sizeof *g.list, cmp_u64);
    uint32_t *off = nf__calloc(NV + 2, sizeof *off);
    uint8_t *color = nf__calloc(NV + 1, 1);
    uint32_t *parent = nf__malloc((NV + 1) * sizeof *parent),
             *it = nf__malloc((NV + 1) * sizeof *it);
    uint32_t *stk = nf__malloc((NV + 1) * sizeof *stk);
    if (!off || !color || !parent || !it || !stk) {
        rc = NF_ENOMEM;
        goto done;
    }
    for (size_t i = 0; i < g.n; i++)
        off[(g.list[i] >> 32) + 1]++;
    for (size_t v = 0; v < NV; v++)
        off[v + 1] += off[v];
    uint32_t found_from = UINT32_MAX, found_to = UINT32_MAX;
    for (size_t root = 0; root < NV && found_from == UINT32_MAX; root++) {
        if (color[root] || off[root] == off[root + 1]) continue;
        size_t sp = 0;
        stk[sp++] = (uint32_t)root;
        color[root] = 1;
        it[root] = off[root];
        parent[root] = UINT32_MAX;
        while (sp && found_from == UINT32_MAX) {
            uint32_t u = stk[sp - 1];
            if (it[u] == off[u + 1]) {
                color[u] = 2;
                sp--;
                continue;
            }
            uint32_t w = (uint32_t)g.list[it[u]++];
            if (color[w] == 1) {
                found_from = u;
                found_to = w;
            } else if (!color[w]) {
                color[w] = 1;
                parent[w] = u;
                it[w] = off[w];
                stk[sp++] = w;
            }
        }
    }
    if (found_from != UINT32_MAX) {
        uint32_t len = 1;
        size_t pos = 0;
        char *m = diag ? diag->msg : NULL;
        if (m) pos = (size_t)snprintf(m, sizeof diag->msg, "channel dependency cycle:");
        for (uint32_t v = found_from;; v = parent[v]) {
            if (m && len <= 6 && pos < sizeof diag->msg) {
                nf_gport gp = v / V;
                nf_node n = f->peer[gp] == NF_NONE ? 0 : f->peer[gp];
                nf_node from_node = 0;
                for (nf_node x = 0; x < f->n_nodes; x++)
                    if (f->port_off[x] <= gp && gp < f->port_off[x + 1]) {
                        from_node = x;
                        break;
                    }
                pos += (size_t)snprintf(m + pos, sizeof diag->msg - pos, " %s->%s VC %u%s",
                                        nf_node_name(f, from_node), nf_node_name(f, n), v % V,
                                        v == found_to ? "" : ",");
            }
            if (v == found_to) break;
            len++;
        }
        *cycle_len = len;
    }
    if (vertices) {
        uint64_t nv = 0;
        for (size_t v = 0; v < NV; v++)
            nv += off[v] != off[v + 1];
        *vertices = nv;
    }
    if (edges) *edges = g.n;
    rc = NF_OK;
done:
    nf__free(off);
    nf__free(color);
    nf__free(parent);
    nf__free(it);
    nf__free(stk);
    nf__free(g.list);
    nf__u64map_fini(&g.edges);
    return rc;
}
