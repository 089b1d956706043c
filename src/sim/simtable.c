/* SPDX-License-Identifier: MIT */
/* Routings and forwarding tables both ways (sim.h): a routing that follows installed tables
 * (nf_uft, read from what OpenSM or the switches printed), the tables a deterministic routing
 * amounts to, and the path of one packet under any routing, walked hop by hop. */
#include "netfab/simset.h"
#include "sim/sim_internal.h"

#include "netfab/uft.h"

#include "util/diag.h"
#include "util/mem.h"

#include <string.h>

/* ---- lft: the installed tables, exactly ------------------------------------------------------ */

/* At switch sw a packet for CA dst_ca, travelling to its port cabled to switch dst_sw (its
 * rail), leaves by the one port the tables hold for that port's LID. There is no fallback: no
 * entry, port 0, a port with no link or whose link is down, or a port into a CA that is not the
 * destination give no candidate. VC = switch hops taken (as minhop), so any path the tables
 * give climbs the VCs; a loop in the tables shows in the deadlock checker as a cycle on the top
 * VC. */
typedef struct lft_ctx {
    const nf_fabric *f;
    const uint8_t *ls;
    const nf_uft *t;
    unsigned V;
} lft_ctx;

static void lft_fini(void *ctx) { nf__free(ctx); }

static int lft_init(void **out, const void *data, const nf_fabric *f, const uint8_t *ls,
                    const nf_hops *h, const nf_sim_config *c, nf_diag *diag) {
    (void)h;
    const nf_uft *t = data;
    if (!t || nf_uft_fabric(t) != f)
        return nf__fail(diag, NF_EINVAL,
                        "lft: the tables were read against another fabric than the one routed");
    lft_ctx *x = nf__calloc(1, sizeof *x);
    if (!x) return NF_ENOMEM;
    *x = (lft_ctx){.f = f, .ls = ls, .t = t, .V = c->vcs};
    *out = x;
    return NF_OK;
}

/* The LID of ca's port cabled to switch sw (its first such port); 0 when none. */
static uint16_t ca_lid_at(const nf_fabric *f, nf_node ca, nf_node sw) {
    for (unsigned p = 1; p <= f->nports[ca]; p++) {
        nf_gport g = nf_port_index(f, ca, p);
        if (f->peer[g] == sw) return f->port_lid[g];
    }
    return 0;
}

/* The port the tables send a packet for lid out of at sw when it leads on: a link that is up,
 * to a switch or to dst_ca itself; 0 otherwise. */
static unsigned lft_port(const lft_ctx *x, nf_node sw, uint16_t lid, nf_node dst_ca) {
    const nf_fabric *f = x->f;
    unsigned port = lid ? nf_uft_get(x->t, sw, lid) : NF_UFT_NONE;
    if (port == NF_UFT_NONE || port == 0) return 0;
    nf_gport g = nf_port_index(f, sw, port);
    nf_link l = f->port_link[g];
    if (l == NF_NONE || x->ls[l] != NF_LINK_UP) return 0;
    nf_node w = f->peer[g];
    if (!nf_is_switch(f, w) && w != dst_ca) return 0;
    return port;
}

static unsigned lft_route(void *ctx, nf_node sw, unsigned in_port, unsigned in_vc, unsigned hops,
                          const nf__sim_pkt *p, nf_sim_cand *out, unsigned max) {
    (void)in_port, (void)in_vc;
    lft_ctx *x = ctx;
    if (!max) return 0;
    unsigned port = lft_port(x, sw, ca_lid_at(x->f, p->dst_ca, p->dst_sw), p->dst_ca);
    if (!port) return 0;
    unsigned vc = hops + 1 < x->V ? hops + 1 : x->V - 1;
    out[0] = (nf_sim_cand){.port = (uint8_t)port, .vc_lo = (uint8_t)vc, .vc_hi = (uint8_t)vc};
    return 1;
}

/* Walks the tables from src_sw: true when they lead to dst_ca, the destination switch's entry
 * included (the engine itself ejects there, so the entry is checked here). */
static bool lft_deliverable(void *ctx, nf_node src_sw, nf_node dst_ca, nf_node dst_sw) {
    lft_ctx *x = ctx;
    const nf_fabric *f = x->f;
    uint16_t lid = ca_lid_at(f, dst_ca, dst_sw);
    nf_node s = src_sw;
    for (uint32_t steps = 0; steps <= f->n_switches; steps++) {
        unsigned port = lft_port(x, s, lid, dst_ca);
        if (!port) return false;
        nf_node w = f->peer[nf_port_index(f, s, port)];
        if (w == dst_ca) return true;
        s = w;
    }
    return false; /* round a loop */
}

static unsigned lft_inj_vc_hi(void *ctx) {
    (void)ctx;
    return 0;
}

static const nf_sim_routing lft_template = {
    .name = "lft",
    .summary = "installed forwarding tables (a file): the one port of each entry, no fallback; "
               "VC = hops taken",
    .min_vcs = 1,
    .fixed_ports = true,
    .may_strand = true,
    .init = lft_init,
    .route = lft_route,
    .inj_vc_hi = lft_inj_vc_hi,
    .deliverable = lft_deliverable,
    .fini = lft_fini};

int nf_sim_routing_from_uft(const nf_uft *t, nf_sim_routing **out, nf_diag *diag) {
    *out = NULL;
    if (!t) return nf__fail(diag, NF_EINVAL, "lft: no tables");
    nf_sim_routing *r = nf__malloc(sizeof *r);
    if (!r) return NF_ENOMEM;
    *r = lft_template;
    r->data = t;
    *out = r;
    return NF_OK;
}

void nf_sim_routing_free(nf_sim_routing *r) {
    if (r && r->init == lft_init) nf__free(r);
}

/* The tables of r when it follows tables; NULL otherwise. */
static const nf_uft *tables_of(const nf_sim_routing *r) {
    return r->init == lft_init ? r->data : NULL;
}

/* ---- from a routing to tables ---------------------------------------------------------------- */

static uint32_t no_queue(const nf__sim_view *v, unsigned port) {
    (void)v, (void)port;
    return 0;
}
static uint32_t no_remote(const nf__sim_view *v, nf_node sw, unsigned port) {
    (void)v, (void)sw, (void)port;
    return 0;
}

/* The input port a packet injected at switch s comes in by: a port cabled to a CA, else the
 * first cabled port, else 0 (a switch with no link: route is not asked). */
static unsigned inject_port(const nf_fabric *f, nf_node s) {
    unsigned any = 0;
    for (unsigned p = 1; p <= f->nports[s]; p++) {
        nf_node w = f->peer[nf_port_index(f, s, p)];
        if (w == NF_NONE) continue;
        if (!nf_is_switch(f, w)) return p;
        if (!any) any = p;
    }
    return any;
}

static bool port_up(const nf_fabric *f, const uint8_t *ls, nf_node s, unsigned port) {
    if (port == 0 || port > f->nports[s]) return false;
    nf_link l = f->port_link[nf_port_index(f, s, port)];
    return l != NF_NONE && ls[l] == NF_LINK_UP;
}

/* The first port of s one hop closer to switch t over a link that is up (port order), and the
 * number of such ports in *n; 0 when none. */
static unsigned first_closer(const nf_fabric *f, const nf_hops *h, nf_node s, nf_node t,
                             unsigned *n) {
    unsigned d = nf_hops_sw(h, s, t), first = 0;
    *n = 0;
    if (d == NF_HOPS_INF || d == 0) return 0;
    for (unsigned p = 1; p <= f->nports[s]; p++) {
        nf_gport g = nf_port_index(f, s, p);
        nf_node w = f->peer[g];
        if (w == NF_NONE || !nf_is_switch(f, w) || !port_up(f, f->link_state, s, p)) continue;
        if ((unsigned)nf_hops_sw(h, w, t) + 1 != d) continue;
        if (!first) first = p;
        ++*n;
    }
    return first;
}

/* The candidates of r at switch sw for a packet to ca's port cabled to dst_sw, a packet that came
 * in by in_port on VC in_vc after hops switch hops, with the word *rs, salt 0 and every queue
 * empty. */
static unsigned ask(const nf_sim_routing *r, void *ctx, nf_node sw, unsigned in_port,
                    unsigned in_vc, unsigned hops, nf_node ca, nf_node dst_sw, uint32_t *rs,
                    nf_sim_cand *cand) {
    nf__sim_view view = {.occupancy = no_queue, .remote = no_remote, .sim = NULL, .sw = sw};
    nf__sim_pkt pk = {.dst_ca = ca, .dst_sw = dst_sw, .salt = 0, .rs = rs, .view = &view};
    return r->route(ctx, sw, in_port, in_vc, hops, &pk, cand, NF_SIM_MAX_RADIX);
}

int nf__sim_routing_config(const nf_sim_routing *r, const nf_sim_config *cfg, nf_sim_config *c,
                           nf_diag *diag) {
    if (cfg)
        *c = *cfg;
    else
        nf_sim_config_defaults(c);
    int rc = nf_simset_check_all(NF_SIMSET_CONFIG, c, diag); /* each setting's own range */
    if (rc) return rc;
    if (c->vcs < r->min_vcs)
        return nf__fail(diag, NF_EINVAL, "routing %s needs %u VCs, got %u", r->name, r->min_vcs,
                        c->vcs);
    return NF_OK;
}

int nf_sim_routing_to_uft(const nf_fabric *f, const nf_hops *h, const nf_sim_routing *r,
                          const nf_sim_config *cfg, nf_uft **out, nf_diag *diag) {
    *out = NULL;
    if (!r->fixed_ports)
        return nf__fail(diag, NF_EINVAL,
                        "routing %s chooses ports per packet (by random bits or by the queues): "
                        "no forwarding table holds it",
                        r->name);
    nf_sim_config c;
    int rc = nf__sim_routing_config(r, cfg, &c, diag);
    if (rc) return rc;
    nf_uft *t;
    if ((rc = nf_uft_new(f, &t, diag))) return rc;
    const nf_uft *src = tables_of(r);
    if (src) { /* a table routing: its tables as they are */
        for (nf_node s = 0; s < f->n_switches && !rc; s++)
            for (unsigned l = 1; l <= nf_uft_top_lid(t) && !rc; l++)
                rc = nf_uft_set(t, s, (uint16_t)l, nf_uft_get(src, s, (uint16_t)l));
        if (rc) nf_uft_free(t);
        if (!rc) *out = t;
        return rc;
    }
    void *ctx = NULL;
    if ((rc = r->init(&ctx, r->data, f, f->link_state, h, &c, diag))) {
        nf_uft_free(t);
        return rc;
    }
    nf_sim_cand cand[NF_SIM_MAX_RADIX];
    for (nf_node s = 0; s < f->n_switches && !rc; s++) {
        unsigned in = inject_port(f, s);
        for (unsigned l = 1; l <= nf_uft_top_lid(t) && !rc; l++) {
            unsigned port, cport = 0, n;
            nf_node o = nf_uft_lid_owner(t, (uint16_t)l, &cport);
            if (o == NF_NONE) continue;
            if (nf_is_switch(f, o)) { /* management traffic: the first min-hop port */
                port = o == s ? 0 : first_closer(f, h, s, o, &n);
                if (o != s && !port) continue;
            } else {
                nf_gport g = nf_port_index(f, o, cport);
                nf_node dsw = f->peer[g];
                nf_link cl = f->port_link[g];
                if (dsw == NF_NONE || !nf_is_switch(f, dsw) || f->link_state[cl] != NF_LINK_UP)
                    continue;
                if (dsw == s) {
                    port = f->peer_port[g];
                } else {
                    if (!in) continue;
                    uint32_t rs = 0;
                    unsigned nc = ask(r, ctx, s, in, 0, 0, o, dsw, &rs, cand);
                    port = 0;
                    for (unsigned k = 0; k < nc && !port; k++)
                        if (port_up(f, f->link_state, s, cand[k].port)) port = cand[k].port;
                    if (!port) continue;
                }
            }
            rc = nf_uft_set(t, s, (uint16_t)l, port);
        }
    }
    r->fini(ctx);
    if (rc) {
        nf_uft_free(t);
        return rc;
    }
    *out = t;
    return NF_OK;
}

/* ---- the path of one packet ------------------------------------------------------------------ */

const char *nf_sim_trace_end_name(nf_sim_trace_end e) {
    switch (e) {
    case NF_SIM_TRACE_REACHED: return "reached";
    case NF_SIM_TRACE_LOOP: return "loop";
    case NF_SIM_TRACE_HOLE: return "hole";
    case NF_SIM_TRACE_NO_LINK: return "no link";
    case NF_SIM_TRACE_ASTRAY: return "astray";
    }
    return "?";
}

void nf_sim_trace_fini(nf_sim_trace *t) {
    if (!t) return;
    nf__free(t->hop);
    *t = (nf_sim_trace){0};
}

typedef struct walk {
    nf_sim_trace *t;
    size_t cap;
} walk;

static int push_hop(walk *w, nf_node n, unsigned in, unsigned out, unsigned cands) {
    if (NF_GROW(w->t->hop, w->cap, w->t->n + 1)) return NF_ENOMEM;
    w->t->hop[w->t->n++] =
        (nf_sim_trace_hop){.node = n, .in_port = in, .out_port = out, .candidates = cands};
    return NF_OK;
}

/* The cabled port of ca to use: want when cabled, else its first cabled port; 0 when none. */
static unsigned ca_port(const nf_fabric *f, nf_node ca, unsigned want) {
    if (want && want <= f->nports[ca] && f->peer[nf_port_index(f, ca, want)] != NF_NONE)
        return want;
    for (unsigned p = 1; p <= f->nports[ca]; p++)
        if (f->peer[nf_port_index(f, ca, p)] != NF_NONE) return p;
    return 0;
}

int nf_sim_trace_path(const nf_fabric *f, const nf_hops *h, const nf_sim_routing *r,
                      const nf_sim_config *cfg, nf_node src, unsigned src_port, nf_node dst,
                      unsigned dst_port, nf_sim_trace *out, nf_diag *diag) {
    *out = (nf_sim_trace){0};
    if (src >= f->n_nodes || dst >= f->n_nodes) return nf__fail(diag, NF_EINVAL, "no such node");
    if (src == dst) return nf__fail(diag, NF_EINVAL, "source and destination are one node");
    nf_sim_config c;
    int rc = nf__sim_routing_config(r, cfg, &c, diag);
    if (rc) return rc;
    /* the ends: a CA's port (the one asked, else by the source's rail, else its first cabled) */
    if (!nf_is_switch(f, src) && !(src_port = ca_port(f, src, src_port)))
        return nf__fail(diag, NF_EINVAL, "%s has no cabled port", nf_node_name(f, src));
    nf_node dst_sw = dst;
    uint16_t dst_lid = f->lid[dst];
    if (!nf_is_switch(f, dst)) {
        if (!(dst_port = ca_port(f, dst, dst_port ? dst_port : src_port)))
            return nf__fail(diag, NF_EINVAL, "%s has no cabled port", nf_node_name(f, dst));
        nf_gport g = nf_port_index(f, dst, dst_port);
        dst_sw = f->peer[g];
        dst_lid = f->port_lid[g];
        if (!nf_is_switch(f, dst_sw))
            return nf__fail(diag, NF_EINVAL, "%s port %u is not cabled to a switch",
                            nf_node_name(f, dst), dst_port);
    }
    const nf_uft *tab = tables_of(r);
    if (tab && !dst_lid)
        return nf__fail(diag, NF_EINVAL, "%s has no LID to look up in the tables",
                        nf_node_name(f, dst));
    void *ctx = NULL;
    if (!tab && (rc = r->init(&ctx, r->data, f, f->link_state, h, &c, diag))) return rc;
    walk w = {.t = out};
    uint8_t *seen = nf__calloc((size_t)f->n_switches + 1, 1);
    size_t *first = nf__malloc(((size_t)f->n_switches + 1) * sizeof *first);
    if (!seen || !first) rc = NF_ENOMEM;
    nf_node sw = src;
    unsigned in_port = 0, in_vc = 0, hops = 0, route_in = 0;
    uint32_t rs = 0;
    if (!rc && !nf_is_switch(f, src)) { /* out of the CA to its switch */
        nf_gport g = nf_port_index(f, src, src_port);
        nf_link l = f->port_link[g];
        rc = push_hop(&w, src, 0, src_port, 1);
        sw = f->peer[g];
        in_port = route_in = f->peer_port[g];
        if (!rc && f->link_state[l] != NF_LINK_UP) {
            out->end = NF_SIM_TRACE_NO_LINK;
            sw = NF_NONE;
        } else if (!rc && sw == dst) {
            rc = push_hop(&w, dst, in_port, 0, 0);
            out->end = NF_SIM_TRACE_REACHED;
            sw = NF_NONE;
        } else if (!rc && !nf_is_switch(f, sw)) {
            rc = push_hop(&w, sw, in_port, 0, 0);
            out->end = NF_SIM_TRACE_ASTRAY;
            sw = NF_NONE;
        }
    } else if (!rc) {
        route_in = inject_port(f, src);
    }
    while (!rc && sw != NF_NONE) {
        if (seen[sw]) {
            rc = push_hop(&w, sw, in_port, 0, 0);
            out->end = NF_SIM_TRACE_LOOP;
            out->loop_at = first[sw];
            break;
        }
        seen[sw] = 1;
        first[sw] = out->n;
        /* the port out of sw, and how many candidates the routing gave */
        unsigned port = 0, n = 0;
        nf_sim_cand cand[NF_SIM_MAX_RADIX];
        if (tab) {
            unsigned e = dst_lid ? nf_uft_get(tab, sw, dst_lid) : NF_UFT_NONE;
            if (e == 0 && sw == dst) {
                rc = push_hop(&w, sw, in_port, 0, 0);
                out->end = NF_SIM_TRACE_REACHED;
                break;
            }
            if (e != NF_UFT_NONE) port = e, n = 1;
        } else if (sw == dst) {
            rc = push_hop(&w, sw, in_port, 0, 0);
            out->end = NF_SIM_TRACE_REACHED;
            break;
        } else if (nf_is_switch(f, dst)) { /* to a switch: the first min-hop port */
            port = first_closer(f, h, sw, dst, &n);
        } else if (sw == dst_sw) {
            port = f->peer_port[nf_port_index(f, dst, dst_port)], n = 1;
        } else if (route_in) {
            n = ask(r, ctx, sw, route_in, in_vc, hops, dst, dst_sw, &rs, cand);
            for (unsigned k = 0; k < n && !port; k++)
                if (port_up(f, f->link_state, sw, cand[k].port)) {
                    port = cand[k].port;
                    in_vc = cand[k].vc_lo;
                }
            if (n && !port) port = cand[0].port; /* every candidate down: say so below */
        }
        if ((rc = push_hop(&w, sw, in_port, port, n))) break;
        if (!port || port > f->nports[sw]) {
            out->end = port ? NF_SIM_TRACE_NO_LINK : NF_SIM_TRACE_HOLE;
            if (port == 0 && n) out->end = NF_SIM_TRACE_ASTRAY; /* port 0: the switch itself */
            break;
        }
        nf_gport g = nf_port_index(f, sw, port);
        nf_link l = f->port_link[g];
        if (l == NF_NONE || f->link_state[l] != NF_LINK_UP) {
            out->end = NF_SIM_TRACE_NO_LINK;
            break;
        }
        nf_node next = f->peer[g];
        in_port = route_in = f->peer_port[g];
        if (!nf_is_switch(f, next)) {
            rc = push_hop(&w, next, in_port, 0, 0);
            out->end = next == dst ? NF_SIM_TRACE_REACHED : NF_SIM_TRACE_ASTRAY;
            break;
        }
        hops++;
        sw = next;
    }
    nf__free(seen);
    nf__free(first);
    if (ctx) r->fini(ctx);
    if (rc) nf_sim_trace_fini(out);
    return rc;
}
