/* SPDX-License-Identifier: MIT */
/* The routers (sim.h, engine.h): the routing's view of a router's queues and the snapshot of
 * them, VC allocation (combined with the switch request, or a pass of its own as BookSim2's
 * separable allocator), the crossbar passes with their switch allocation, the output queues
 * onto the links, and the router phase of a worker's active switches. sim.c's cycle calls
 * nf__sim_router_phase for each worker and nf__sim_snap_phase after them. */
#include "sim/engine.h"

#include "util/mem.h"

#include <math.h>
#include <string.h>

/* The router's steps, inlined into each build of the crossbar (see crossbar_pass_w). */
#define SIM_INLINE static inline __attribute__((always_inline))

/* ---- routers -------------------------------------------------------------------------------- */

/* The routing's view of a router: an output port's occupancy in flits (its output queue, and
 * the downstream slots whose credits are not back). */
typedef struct sim_view {
    nf__sim_view v;
    nf_gport g0;
} sim_view;

/* Port i's (switch-local, 0-based) place in its switch's arbiters, and the port at place r:
 * the port order, or BookSim2's (port_order booksim with a routing that knows it). */
SIM_INLINE unsigned arb_rank(const nf_sim *s, nf_gport g0, unsigned i) {
    return s->net.rank ? s->net.rank[g0 + i] : i;
}
SIM_INLINE unsigned arb_port(const nf_sim *s, nf_gport g0, unsigned r) {
    return s->net.unrank ? s->net.unrank[g0 + r] : r;
}

static uint32_t port_occupancy(const nf_sim *s, sim_port *p) {
    int64_t q = p->oq_count;
    if (p->to_sw) {
        for (unsigned c = 0; c < s->net.n_vcs; c++)
            q += (int64_t)s->net.buf_flits - sim_ovcs(s, p)[c].credits;
        q += (int64_t)s->cfg.shared_flits - p->shcr;
    }
    return q < 0 ? 0 : (uint32_t)q;
}

static uint32_t occupancy(const nf__sim_view *v, unsigned pno) {
    const nf_sim *s = v->sim;
    return port_occupancy(s, sim_port_at(s, ((const sim_view *)(const void *)v)->g0 + pno - 1));
}

static uint32_t remote(const nf__sim_view *v, nf_node sw, unsigned pno) {
    const nf_sim *s = v->sim;
    return s->net.snap ? s->net.snap[nf_port_index(s->f, sw, pno)] : 0;
}

/* Switch v->sw's port occupancy as the snapshot has it (a lookahead routing's view). */
static uint32_t ahead_occupancy(const nf__sim_view *v, unsigned pno) {
    const nf_sim *s = v->sim;
    return s->net.snap[nf_port_index(s->f, v->sw, pno)];
}

void nf__sim_route_ahead(nf_sim *s, uint32_t id, nf_node sw, unsigned in_port) {
    sim_pkt *p = &s->pool.pkts[id];
    p->rs = 0;
    if (p->dst_sw == sw || p->flags & (SIM_PK_MCAST | SIM_PK_BAD)) return;
    nf__sim_view view = {.occupancy = ahead_occupancy, .remote = remote, .sim = s, .sw = sw};
    nf__sim_pkt rp = {.dst_ca = p->dst_ca,
                      .dst_sw = p->dst_sw,
                      .salt = p->salt,
                      .rs = &p->rs,
                      .view = &view,
                      .ahead = true};
    nf_sim_cand buf[NF_SIM_MAX_RADIX];
    (void)s->routing->route(s->routing_ctx, sw, in_port, 0, p->hops, &rp, buf, NF_SIM_MAX_RADIX);
}

/* After a cycle's routers, the snapshot of the ones thread t ran (the others did not change). */
void nf__sim_snap_phase(nf_sim *s, unsigned t) {
    sim_worker *wk = &s->workers[t];
    for (uint32_t i = 0; i < wk->n_ran; i++) {
        nf_node sw = wk->ran[i];
        for (nf_gport g = s->f->port_off[sw]; g < s->f->port_off[sw + 1]; g++)
            s->net.snap[g] = port_occupancy(s, sim_port_at(s, g));
    }
}

/* A learning routing's estimate for the head packet of input VC v of port gi (pi) at switch sw,
 * sent back upstream once per packet and switch (nf_sim_routing.learns); its arrival cycle here
 * becomes the packet's stamp. */
static int learn_back(nf_sim *s, sim_worker *b, nf_node sw, nf_gport gi, sim_port *pi,
                      unsigned in_port, unsigned v) {
    sim_ivc *civ = &sim_ivcs(s, pi)[v];
    uint32_t id = civ->head_pkt;
    const sim_qent *q = s->net.rings + sim_vc_ix(s, gi, v) * s->net.ring_cap;
    uint32_t here = q[civ->head].t_arrive, up = s->pool.stamp[id];
    if (up == here) return NF_OK; /* told already (a packet only stays or moves on) */
    s->pool.stamp[id] = here;
    if (!pi->to_sw) return NF_OK; /* from a NIC: no switch upstream */
    const sim_pkt *p = &s->pool.pkts[id];
    uint32_t rs = p->rs; /* (the routing's word, read only: a copy) */
    nf__sim_pkt rp = {.dst_ca = p->dst_ca, .dst_sw = p->dst_sw, .salt = p->salt, .rs = &rs};
    uint32_t row = 0;
    float value = s->routing->estimate(s->routing_ctx, sw, in_port, v, p->hops, &rp, &row);
    if (isnan(value)) return NF_OK; /* nothing to tell */
    value += (float)(here - up);
    sim_event e = {.port = pi->back, .row = (uint16_t)row};
    memcpy(&e.pkt, &value, sizeof value);
    sim_wheel_slot *w =
        &b->learn[pi->peer_own][(s->now + s->cfg.credit_delay + pi->lat) & s->net.wheel_mask];
    if (w->n == w->cap && NF_GROW(w->ev, w->cap, w->n + 1)) return NF_ENOMEM;
    w->ev[w->n++] = e;
    return NF_OK;
}

/* Gives the head packet of input VC v of port pi (index in_port) at switch sw an output VC: the
 * routing's candidates (or the ejection port at the destination switch), the first free VC with
 * room for the whole packet, deterministically the first candidate that has one, adaptively the
 * one with the most credits; adaptively with pre-awareness, the one with the most credits plus
 * those its port expects back within T cycles (nf__sim_rate_back), ties to the most credits,
 * then the first. NF_ENOMEM when a learning routing's estimate cannot be sent. */
SIM_INLINE int allocate_vc_as(nf_sim *s, sim_worker *b, nf_node sw, nf_gport gi, sim_port *pi,
                              unsigned in_port, unsigned v, sim_va_req *pick) {
    sim_ivc *civ = &sim_ivcs(s, pi)[v];
    sim_pkt *p = &s->pool.pkts[civ->head_pkt];
    if (p->flags & (SIM_PK_MCAST | SIM_PK_BAD)) {
        if (p->flags & SIM_PK_BAD) /* a corrupt copy, all of it here: thrown away */
            civ->out_port = SIM_DROP_PORT;
        else
            nf__sim_allocate_mc(s, b, sw, gi, pi, in_port, v);
        return NF_OK;
    }
    nf_sim_cand buf[NF_SIM_MAX_RADIX];
    nf_sim_cand *cached = s->net.cands + sim_vc_ix(s, gi, v) * SIM_CACHE_CANDS;
    const nf_sim_cand *cand = cached;
    unsigned nc = civ->ncand;
    nf_gport g0 = s->f->port_off[sw];
    if (nc == 0 || nc > SIM_CACHE_CANDS) { /* route (once per packet and router, when it fits) */
        if (s->err.on && nc == 0) {        /* its way in, for a copy sent again (err_arrive) */
            sim_errvc *ev = &s->err.vc[sim_vc_ix(s, gi, v)];
            ev->rs = p->rs;
            ev->hops = p->hops;
        }
        if (b->learn) {
            int rc = learn_back(s, b, sw, gi, pi, in_port, v);
            if (rc) return rc;
        }
        if (p->dst_sw == sw) {
            buf[0] = (nf_sim_cand){
                .port = p->dst_port, .vc_lo = 0, .vc_hi = (uint8_t)(s->net.n_vcs - 1)};
            if (s->cfg.eject_vc == NF_SIM_EJ_ARRIVAL) { /* from its NIC: its routing's class */
                unsigned k = s->routing->own_group_class, V = s->net.n_vcs;
                buf[0].vc_lo = buf[0].vc_hi = (uint8_t)(pi->to_sw ? v : V >= 3 ? k * V / 3 : 0);
            }
            nc = 1;
        } else if (p->flags & SIM_PK_SRCROUTE) { /* its path's next port, VC = links taken */
            unsigned vc = p->hops < s->net.n_vcs ? p->hops : s->net.n_vcs - 1;
            buf[0] = (nf_sim_cand){
                .port = s->scr.path[p->rs + p->hops], .vc_lo = (uint8_t)vc, .vc_hi = (uint8_t)vc};
            nc = 1;
        } else {
            sim_view view = {.v = {.occupancy = occupancy, .remote = remote, .sim = s, .sw = sw},
                             .g0 = g0};
            nf__sim_pkt rp = {.dst_ca = p->dst_ca,
                              .dst_sw = p->dst_sw,
                              .salt = p->salt,
                              .rs = &p->rs,
                              .view = &view.v};
            unsigned in_vc = v; /* a random injection VC carries no class */
            if (s->cfg.inject_vc != NF_SIM_INJ_ROOM && s->f->peer[gi] >= s->f->n_switches)
                in_vc = 0;
            nc = s->routing->route(s->routing_ctx, sw, in_port, in_vc, p->hops, &rp, buf,
                                   NF_SIM_MAX_RADIX);
            if (nc == 0) b->unroutable++;
            if (nc == 0 && s->routing->deliverable) { /* a link failed under it: discard it here */
                civ->out_port = SIM_DROP_PORT;
                return NF_OK;
            }
        }
        cand = buf;
    }
    int32_t best_cr = -1;
    unsigned best_port = 0, best_vc = 0, best_k = 0;
    bool failed = false;
    bool pre = s->net.cr_rate && s->cfg.adaptive;
    double best_back = 0;
    for (unsigned k = 0; k < nc; k++) {
        sim_port *po = sim_port_at(s, g0 + cand[k].port - 1);
        if (po->down) { /* failed: the next */
            failed = true;
            continue;
        }
        unsigned hi = cand[k].vc_hi < s->net.n_vcs ? cand[k].vc_hi : s->net.n_vcs - 1;
        double back = 0;
        if (pre)
            back = nf__sim_rate_back(nf__sim_port_rate_now(s, g0 + cand[k].port - 1),
                                     nf__sim_port_owed(s, po), s->cfg.preaware_cycles);
        for (unsigned vc = cand[k].vc_lo; vc <= hi; vc++) {
            int32_t r = sim_room(s, po, vc);
            /* separate allocation takes an idle VC whatever its credits, as BookSim2 does:
             * the switch stage waits for them */
            if (sim_ovc_busy(po, vc) || (!pick && r < (int32_t)s->cfg.pkt_flits)) continue;
            if (pre) {
                if (nf__sim_preaware_better(r, back, best_cr, best_back)) {
                    best_back = back;
                    best_cr = r;
                    best_port = cand[k].port;
                    best_vc = vc;
                    best_k = k;
                }
            } else if (r > best_cr) {
                best_cr = r;
                best_port = cand[k].port;
                best_vc = vc;
                best_k = k;
            }
            if (!s->cfg.adaptive) break;
        }
        if (best_port && !s->cfg.adaptive) break;
    }
    if ((!best_port || pick) && cand == buf && nc) { /* it may ask again: routed once */
        if (nc <= SIM_CACHE_CANDS) {
            memcpy(cached, buf, nc * sizeof *buf);
            civ->ncand = (uint8_t)nc;
        } else {
            civ->ncand = SIM_CACHE_CANDS + 1;
        }
    }
    if (!best_port) {
        /* a cached way has failed since: a routing that can tell asks again next time */
        if (failed && s->routing->deliverable) civ->ncand = 0;
        return NF_OK;
    }
    if (pick) { /* separate allocation: a request, granted or not by the output VC's arbiter */
        /* of the free VCs of the port chosen, the first at or after this input VC's pointer over
         * the switch's output VCs, else the first (BookSim2's input arbiter of its separable VC
         * allocator) */
        unsigned V = s->net.n_vcs, hi = cand[best_k].vc_hi < V ? cand[best_k].vc_hi : V - 1;
        unsigned at = s->net.va_in_rr[sim_vc_ix(s, gi, v)];
        unsigned base = arb_rank(s, g0, best_port - 1) * V;
        unsigned first = V, after = V;
        const sim_port *po = sim_port_at(s, g0 + best_port - 1);
        for (unsigned vc = cand[best_k].vc_lo; vc <= hi && after == V; vc++) {
            if (sim_ovc_busy(po, vc)) continue;
            if (first == V) first = vc;
            if (base + vc >= at) after = vc;
        }
        pick->port = (uint16_t)best_port;
        pick->vc = (uint8_t)(after < V ? after : first);
        return NF_OK;
    }
    civ->out_port = (uint16_t)best_port;
    civ->out_vc = (uint8_t)best_vc;
    sim_port *po = sim_port_at(s, g0 + best_port - 1);
    sim_ovc_hold(po, best_vc);
    if (po->to_sw) p->hops++;
    return NF_OK;
}

SIM_INLINE int allocate_vc(nf_sim *s, sim_worker *b, nf_node sw, nf_gport gi, sim_port *pi,
                           unsigned in_port, unsigned v) {
    return allocate_vc_as(s, b, sw, gi, pi, in_port, v, NULL);
}

/* Takes the first flit of output go's queue (not empty) as the event that carries it on. */
SIM_INLINE sim_event oq_pop(nf_sim *s, sim_port *po, nf_gport go) {
    sim_run *h = &po->hd;
    sim_event e = {.port = po->back,
                   .pkt = h->pkt,
                   .vc = h->vc,
                   .flags = (uint8_t)((h->flags & (SIM_FL_HEAD | SIM_FL_SHARED)) |
                                      (h->n == 1 ? h->flags & (SIM_FL_TAIL | SIM_FL_BAD) : 0))};
    h->flags &= (uint8_t)~SIM_FL_HEAD;
    po->oq_count--;
    if (--h->n) return e;
    if (--po->oq_runs == 1) {
        po->hd = po->tl;
    } else if (po->oq_runs > 1) {
        po->hd = s->net.oq_ring[(size_t)go * s->net.oq_cap + po->oq_mid];
        po->oq_mid = po->oq_mid + 1 == s->net.oq_cap ? 0 : po->oq_mid + 1;
    }
    return e;
}

/* Discards the head flit of input VC v of port gi (its packet has no way left: a link failed
 * after it was sent; or it is a corrupt copy, SIM_PK_BAD); its slot's credit leaves upstream as
 * if it had crossed. */
static int drop_flit(nf_sim *s, sim_worker *b, nf_node sw, nf_gport gi, unsigned v) {
    sim_port *pi = sim_port_at(s, gi);
    sim_ivc *iv = &sim_ivcs(s, pi)[v];
    bool tail = ++iv->out == s->cfg.pkt_flits;
    int rc = sim_free_slot(s, b, sw, gi, v);
    if (rc) return rc;
    uint32_t id = iv->head_pkt;
    bool bad = s->pool.pkts[id].flags & SIM_PK_BAD; /* its copy goes on: not lost */
    /* a multicast packet at the end of its tree, at a switch that is a member itself: taken
     * there (its port 0), not lost */
    bool taken = !bad && (s->pool.pkts[id].flags & SIM_PK_MCAST) &&
                 nf__sim_is_sw_member(s, s->pool.pkts[id].mgroup, sw);
    if (bad)
        b->discarded++;
    else if (taken)
        b->delivered++;
    else
        b->dropped++;
    if (!tail) return NF_OK;
    if (s->err.on) s->err.vc[sim_vc_ix(s, gi, v)].stomp = 0;
    if (taken && (rc = nf__sim_sw_member_got(s, b, id))) return rc;
    if (!bad && !taken) b->dropped_pkts++;
    if (!bad && !taken && s->pool.pkts[id].flags & SIM_PK_MEASURED) b->dropped_meas++;
    if (b->n_freed == b->cap_freed && NF_GROW(b->freed, b->cap_freed, b->n_freed + 1))
        return NF_ENOMEM;
    b->freed[b->n_freed++] = id;
    sim_next_head(s, gi, v, iv);
    return NF_OK;
}

/* Moves the head flit of input VC v of port ip (0-based: global g0 + ip) of switch sw through
 * the crossbar to output o's queue; its slot's credit leaves upstream. W: the words of a port
 * bitset. */
SIM_INLINE int traverse(nf_sim *s, sim_worker *b, nf_node sw, nf_gport g0, unsigned ip, unsigned v,
                        unsigned o, const unsigned W) {
    nf_gport gi = g0 + ip, go = g0 + o;
    sim_port *pi = sim_port_at(s, gi), *po = sim_port_at(s, go);
    sim_ivc *iv = &sim_ivcs(s, pi)[v];
    uint32_t id = iv->head_pkt;
    bool head = iv->out == 0; /* the first flit of its packet to leave this VC */
    bool tail = ++iv->out == s->cfg.pkt_flits;
    sim_port_set(s->net.out_mask, sw, o, W);
    int rc = sim_free_slot_at(s, b, sw, pi, ip, v, W);
    if (rc) return rc;
    bool shared = sim_take_credit(s, po, iv->out_vc);
    uint8_t bad = 0;
    if (tail && s->err.on && s->err.vc[sim_vc_ix(s, gi, v)].stomp) { /* a corrupt copy's */
        s->err.vc[sim_vc_ix(s, gi, v)].stomp = 0;
        bad = SIM_FL_BAD;
    }
    po->late = b->last_pass;
    if (head && po->to_sw && s->routing->lookahead)
        nf__sim_route_ahead(s, id, s->f->peer[go], s->f->peer_port[go]);
    sim_oq_push(s, po, go, id, iv->out_vc,
                (uint8_t)((tail ? SIM_FL_TAIL : 0) | (head ? SIM_FL_HEAD : 0) |
                          (shared ? SIM_FL_SHARED : 0) | bad));
    if (tail) {
        sim_ovc_free(po, iv->out_vc);
        if (s->net.va_pass) s->net.va_pass[sim_vc_ix(s, gi, v)] = b->pass;
        sim_next_head(s, gi, v, iv);
    }
    return NF_OK;
}

/* The router's cycle comes in two builds: W = 1, for fabrics whose switches have at most 64
 * ports (a port bitset is one word), and W = SIM_MASK_WORDS for bigger switches. The functions
 * taking W are inlined into each build (crossbar_pass_1 and _wide, router_phase), so the first
 * is the plain one-word code and the second loops over the words; both visit ports in the same
 * ascending order, so a fabric gives the same result in either. */

/* Bit i of bitset m of W words: read, set (with W = 1, i is below 64). */
SIM_INLINE bool bit_w(const uint64_t *m, unsigned i, const unsigned W) {
    return (W == 1 ? m[0] >> i : m[i >> 6] >> (i & 63)) & 1;
}
SIM_INLINE void set_bit_w(uint64_t *m, unsigned i, const unsigned W) {
    if (W == 1)
        m[0] |= 1ULL << i;
    else
        m[i >> 6] |= 1ULL << (i & 63);
}

/* The first set bit of bitset m (W words, not empty) at or after bit start, else the first. */
SIM_INLINE unsigned rr_first(const uint64_t *m, unsigned start, const unsigned W) {
    if (W == 1) {
        uint64_t hi = m[0] & (~0ULL << start);
        return (unsigned)__builtin_ctzll(hi ? hi : m[0]);
    }
    unsigned ws = start >> 6;
    uint64_t hi = m[ws] & (~0ULL << (start & 63));
    if (hi) return ws * 64 + (unsigned)__builtin_ctzll(hi);
    for (unsigned w = ws + 1; w < W; w++)
        if (m[w]) return w * 64 + (unsigned)__builtin_ctzll(m[w]);
    for (unsigned w = 0;; w++)
        if (m[w]) return w * 64 + (unsigned)__builtin_ctzll(m[w]);
}

/* Separate VC allocation (vc_alloc), separable as BookSim2's: every input VC of switch sw whose
 * head is ready and has no output VC, and whose last stage was in an earlier pass, asks for the
 * output VC its routing and selection pick (inputs in port order, each input's VCs from its
 * round-robin pointer; a discard and a multicast head go on at once as in the combined model);
 * then each output VC asked for goes to the first of its askers at or after its own round-robin
 * pointer over the switch's input VCs, and the pointer moves past the winner. A unicast head that
 * gets one asks for the switch from the next pass. */
SIM_INLINE int va_stage(nf_sim *s, sim_worker *b, nf_node sw, const uint64_t *in_dropped,
                        bool *moved, const unsigned W) {
    unsigned V = s->net.n_vcs, N = s->f->nports[sw] * V, nr = 0;
    nf_gport g0 = s->f->port_off[sw];
    const uint64_t *in_mask = s->net.in_mask + (size_t)sw * W;
    sim_va_req *req = b->va_req;
    for (unsigned w = 0; w < W; w++) {
        for (uint64_t im = in_mask[w] & ~in_dropped[w]; im; im &= im - 1) {
            unsigned ip = w * 64 + (unsigned)__builtin_ctzll(im) + 1;
            nf_gport gi = g0 + ip - 1;
            sim_port *pi = sim_port_at(s, gi);
            const sim_pin *pn = sim_pin_of(s, pi);
            sim_ivc *ivs = sim_ivcs(s, pi);
            unsigned rr = pn->rr_vc;
            for (uint32_t vm = sim_vc_rot(pn->vmask, rr, V); vm; vm &= vm - 1) {
                unsigned v = sim_vc_of(vm, rr, V);
                sim_ivc *iv = &ivs[v];
                if (s->now < iv->ready_at || iv->out_port ||
                    s->net.va_pass[sim_vc_ix(s, gi, v)] >= b->pass)
                    continue;
                sim_va_req *q = &req[nr];
                q->port = 0;
                int rc = allocate_vc_as(s, b, sw, gi, pi, ip, v, q);
                if (rc) return rc;
                if (q->port) q->ivx = (uint16_t)(arb_rank(s, g0, ip - 1) * V + v), nr++;
            }
        }
    }
    for (unsigned i = 0; i < nr; i++) {
        if (!req[i].port) continue; /* decided with an earlier asker of its output VC */
        unsigned port = req[i].port, vc = req[i].vc;
        uint16_t *rr = &s->net.va_rr[sim_vc_ix(s, g0 + port - 1, vc)];
        unsigned win = i, best = (req[i].ivx + N - *rr) % N;
        for (unsigned j = i + 1; j < nr; j++) {
            if (req[j].port != port || req[j].vc != vc) continue;
            unsigned k = (req[j].ivx + N - *rr) % N;
            if (k < best) best = k, win = j;
            req[j].port = 0;
        }
        unsigned ivx = req[win].ivx;
        *rr = (uint16_t)(ivx + 1 == N ? 0 : ivx + 1);
        nf_gport gi = g0 + arb_port(s, g0, ivx / V);
        sim_ivc *iv = &sim_ivcs(s, sim_port_at(s, gi))[ivx % V];
        iv->out_port = (uint16_t)port;
        iv->out_vc = (uint8_t)vc;
        sim_port *po = sim_port_at(s, g0 + port - 1);
        sim_ovc_hold(po, vc);
        if (po->to_sw) s->pool.pkts[iv->head_pkt].hops++;
        s->net.va_pass[sim_vc_ix(s, gi, ivx % V)] = b->pass;
        unsigned next = arb_rank(s, g0, port - 1) * V + vc + 1; /* the winner's, past its grant */
        s->net.va_in_rr[sim_vc_ix(s, gi, ivx % V)] = (uint16_t)(next == N ? 0 : next);
        *moved = true;
    }
    return NF_OK;
}

/* Input ip (1-based; its place rank in the arbiters) of a pass's allocation asks for output o
 * with its VC v: o's request bitset (in req, W words a port, by place) is cleared when o is
 * first asked for in this iteration. */
SIM_INLINE void ask(uint64_t *req, uint64_t *outs, uint8_t *req_vc, unsigned ip, unsigned rank,
                    unsigned v, unsigned o, const unsigned W) {
    uint64_t *r = req + (size_t)o * W;
    if (!bit_w(outs, o, W))
        for (unsigned x = 0; x < W; x++)
            r[x] = 0;
    set_bit_w(r, rank, W);
    req_vc[ip - 1] = (uint8_t)v;
    set_bit_w(outs, o, W);
}

/* One crossbar pass at switch sw: separable input-first allocation with alloc_iters iterations
 * (iSLIP-like): in each, every unmatched input offers the first of its VCs (round-robin) whose
 * head packet is ready, holds (or now gets) an output VC whose output is unmatched, has a credit
 * and room in the output queue (with sw_input output: of the outputs its VCs could offer, each
 * with its first such VC, the first from its output pointer); every unmatched output grants one
 * offer (round-robin). Pointers
 * move past the winners. Then the matched flits cross. req is room for a W-word bitset per
 * port (the inputs requesting each output), written before it is read. */
SIM_INLINE int crossbar_pass_w(nf_sim *s, sim_worker *b, nf_node sw, bool *moved, const unsigned W,
                               uint64_t *req, uint64_t *stuck) {
    const nf_fabric *f = s->f;
    unsigned np = f->nports[sw], V = s->net.n_vcs;
    nf_gport g0 = f->port_off[sw];
    const uint64_t *in_mask = s->net.in_mask + (size_t)sw * W;
    /* matched; discarding a flit (or gone through the multicast pass) */
    uint64_t in_done[SIM_MASK_WORDS], out_done[SIM_MASK_WORDS], in_dropped[SIM_MASK_WORDS];
    for (unsigned w = 0; w < W; w++)
        in_done[w] = out_done[w] = in_dropped[w] = 0;
    if (s->mc.n_groups) {
        int rc = nf__sim_crossbar_mc(s, b, sw, in_dropped, out_done, moved);
        if (rc) return rc;
    }
    if (s->net.va_pass) {
        int rc = va_stage(s, b, sw, in_dropped, moved, W);
        if (rc) return rc;
    }
    uint8_t match_vc[64 * SIM_MASK_WORDS], match_out[64 * SIM_MASK_WORDS];
    /* Inputs that may still ask in a later iteration. Within a pass the outputs matched only grow
     * and nothing else an input's asking depends on changes, so an input that asked for nothing
     * asks for nothing again; its scan is skipped then, unless it tried a VC allocation that
     * failed (a try again may route again, which counts and may learn). */
    uint64_t live[SIM_MASK_WORDS];
    for (unsigned w = 0; w < W; w++)
        live[w] = ~stuck[w];
    /* An input whose VCs are all held back by what stays so for the rest of the router's cycle (a
     * head not ready yet, an output queue full, no credit: credits come back and queues drain only
     * between cycles) asks for nothing in the later passes either: it goes into stuck, which they
     * skip. Not with separate VC allocation or multicast, whose stages change that by passes. */
    const bool may_stick = !s->net.va_pass && !s->mc.n_groups;
    const bool by_out = s->cfg.sw_input == NF_SIM_SWIN_OUTPUT;
    for (unsigned it = 0; it < s->cfg.alloc_iters; it++) {
        uint64_t outs[SIM_MASK_WORDS];
        uint8_t req_vc[64 * SIM_MASK_WORDS];
        for (unsigned w = 0; w < W; w++)
            outs[w] = 0;
        for (unsigned w = 0; w < W; w++) {
            for (uint64_t im = in_mask[w] & ~in_done[w] & ~in_dropped[w] & live[w]; im;
                 im &= im - 1) {
                unsigned ip = w * 64 + (unsigned)__builtin_ctzll(im) + 1;
                nf_gport gi = g0 + ip - 1;
                sim_port *pi = sim_port_at(s, gi);
                const sim_pin *pn = sim_pin_of(s, pi);
                sim_ivc *ivs = sim_ivcs(s, pi);
                unsigned rr = pn->rr_vc;
                bool retry = false; /* a VC allocation failed: scan again next iteration */
                unsigned n_ask = 0; /* sw_input output: the outputs its VCs may ask for */
                uint8_t ask_out[NF_SIM_MAX_VCS], ask_vc[NF_SIM_MAX_VCS];
                bool soft = !may_stick; /* a VC held back only for this pass */
                live[w] &= ~(im & -im); /* until it asks */
                for (uint32_t vm = sim_vc_rot(pn->vmask, rr, V); vm; vm &= vm - 1) {
                    unsigned v = sim_vc_of(vm, rr, V); /* the VCs holding flits, from rr_vc */
                    sim_ivc *iv = &ivs[v];
                    if (s->now < iv->ready_at) continue;
                    if (s->net.va_pass) { /* separate: allocated before this pass, not in it */
                        if (s->net.va_pass[sim_vc_ix(s, gi, v)] >= b->pass) continue;
                    } else if (!iv->out_port) {
                        int rc = allocate_vc(s, b, sw, gi, pi, ip, v);
                        if (rc) return rc;
                        if (!iv->out_port) retry = true;
                    }
                    if (iv->out_port == SIM_DROP_PORT) { /* a flit a cycle into the void */
                        int rc = drop_flit(s, b, sw, gi, v);
                        if (rc) return rc;
                        set_bit_w(in_dropped, ip - 1, W); /* its turn this pass, no crossbar */
                        *moved = true;
                        soft = true;
                        break;
                    }
                    if (!iv->out_port) continue;
                    unsigned o = iv->out_port - 1u;
                    if (bit_w(out_done, o, W)) {
                        soft = true;
                        continue;
                    }
                    if (s->mc.n_groups && sim_bits_any(s->mc.left + sim_vc_ix(s, gi, v) * W, W))
                        continue; /* (crossbar_mc's) */
                    sim_port *po = sim_port_at(s, g0 + o);
                    if (po->oq_count >= s->net.oq_cap || sim_room(s, po, iv->out_vc) <= 0) continue;
                    retry = true;
                    if (by_out) { /* the first VC (from rr_vc) for each output */
                        unsigned k = 0;
                        while (k < n_ask && ask_out[k] != o)
                            k++;
                        if (k == n_ask) ask_out[n_ask] = (uint8_t)o, ask_vc[n_ask++] = (uint8_t)v;
                        continue;
                    }
                    ask(req, outs, req_vc, ip, arb_rank(s, g0, ip - 1), v, o, W);
                    break;
                }
                if (n_ask && !bit_w(in_dropped, ip - 1, W)) { /* the output first from rr_out */
                    unsigned best = 0, best_d = np;
                    for (unsigned k = 0; k < n_ask; k++) {
                        unsigned d = (arb_rank(s, g0, ask_out[k]) + np - pn->rr_out) % np;
                        if (d < best_d) best_d = d, best = k;
                    }
                    ask(req, outs, req_vc, ip, arb_rank(s, g0, ip - 1), ask_vc[best], ask_out[best],
                        W);
                }
                if (retry)
                    live[w] |= im & -im;
                else if (!soft)
                    stuck[w] |= im & -im;
            }
        }
        if (!sim_bits_any(outs, W)) break;
        for (unsigned w = 0; w < W; w++) {
            while (outs[w]) {
                unsigned o = w * 64 + (unsigned)__builtin_ctzll(outs[w]);
                outs[w] &= outs[w] - 1;
                sim_port *po = sim_port_at(s, g0 + o);
                unsigned wr = rr_first(req + (size_t)o * W, po->rr_in, W); /* a place */
                po->rr_in = (uint8_t)(wr + 1 == np ? 0 : wr + 1);
                unsigned win = arb_port(s, g0, wr), orank = arb_rank(s, g0, o);
                sim_pin *pw = sim_pin_of(s, sim_port_at(s, g0 + win));
                pw->rr_vc = (uint8_t)(req_vc[win] + 1u == V ? 0 : req_vc[win] + 1);
                pw->rr_out = (uint8_t)(orank + 1 == np ? 0 : orank + 1);
                set_bit_w(in_done, win, W);
                set_bit_w(out_done, o, W);
                match_vc[win] = req_vc[win];
                match_out[win] = (uint8_t)o;
            }
        }
    }
    for (unsigned w = 0; w < W; w++) {
        for (uint64_t m = in_done[w]; m; m &= m - 1) {
            unsigned ip = w * 64 + (unsigned)__builtin_ctzll(m);
            int rc = traverse(s, b, sw, g0, ip, match_vc[ip], match_out[ip], W);
            if (rc) return rc;
            *moved = true;
        }
    }
    return NF_OK;
}

/* The crossbar pass of a fabric with switches of at most 64 ports, and of one with more. */
static int crossbar_pass_1(nf_sim *s, sim_worker *b, nf_node sw, bool *moved, uint64_t *stuck) {
    uint64_t req[64];
    return crossbar_pass_w(s, b, sw, moved, 1, req, stuck);
}
static int crossbar_pass_wide(nf_sim *s, sim_worker *b, nf_node sw, bool *moved, uint64_t *stuck) {
    uint64_t req[NF_MAX_PORTS * SIM_MASK_WORDS];
    return crossbar_pass_w(s, b, sw, moved, SIM_MASK_WORDS, req, stuck);
}

/* A router's cycle; *busy says whether it still holds flits. */
SIM_INLINE int router_cycle(nf_sim *s, sim_worker *b, nf_node sw, bool *busy, const unsigned W) {
    unsigned passes = s->net.cyc_passes;
    if (s->cfg.pass_clock == NF_SIM_CLOCK_BUSY) {
        s->net.xbar_credit[sw] += s->cfg.speedup;
        passes = (unsigned)s->net.xbar_credit[sw];
        s->net.xbar_credit[sw] -= passes;
    }
    bool moved = false;
    uint64_t stuck[SIM_MASK_WORDS] = {0};   /* inputs held back for the rest of the cycle */
    for (unsigned k = 0; k < passes; k++) { /* a pass that moves nothing leaves all as it was */
        bool m = false;
        b->pass = s->now * 64 + k + 1; /* 0: none yet */
        b->last_pass = s->cfg.xbar_pass && k + 1 == passes;
        int rc =
            W == 1 ? crossbar_pass_1(s, b, sw, &m, stuck) : crossbar_pass_wide(s, b, sw, &m, stuck);
        if (rc) return rc;
        if (!m) break;
        moved = true;
    }
    nf_gport g0 = s->f->port_off[sw];
    bool in_win = s->now >= s->meas.win_lo && s->now < s->meas.win_hi;
    uint64_t *out_mask = s->net.out_mask + (size_t)sw * W;
    for (unsigned w = 0; w < W; w++) {
        for (uint64_t om = out_mask[w]; om; om &= om - 1) {
            unsigned p = w * 64 + (unsigned)__builtin_ctzll(om);
            nf_gport go = g0 + p;
            sim_port *po = sim_port_at(s, go);
            if (po->late) { /* crossed in the last pass: its switch traversal ends next cycle */
                po->late = 0;
                if (po->oq_count == 1) continue;
            }
            sim_event e = oq_pop(s, po, go);
            if (__builtin_expect(e.flags & SIM_FL_BAD, 0) && in_win) /* a corrupt copy went on */
                b->wasted += s->cfg.pkt_flits;
            int rc = sim_push_event(s, b, po->peer_own, s->now + po->lat, e);
            if (rc) return rc;
            if (po->oq_count == 0) out_mask[w] &= ~(1ULL << (p & 63));
            b->flit_hops++;
            moved = true;
            if (po->to_sw && in_win) po->link_flits++;
        }
    }
    if (moved) b->moved = 1;
    *busy = sim_bits_any(s->net.in_mask + (size_t)sw * W, W) || sim_bits_any(out_mask, W);
    return NF_OK;
}

/* Asks the memory for what the port records of a router about to run point to, that its cycle
 * will read (the head packets still to be routed and their cached candidates, the next packet
 * entries of the input rings, the middle runs of the output queues). */
SIM_INLINE void prefetch_behind(const nf_sim *s, nf_node sw, const unsigned W) {
    nf_gport g0 = s->f->port_off[sw];
    for (unsigned w = 0; w < W; w++) {
        for (uint64_t m = s->net.in_mask[(size_t)sw * W + w]; m; m &= m - 1) {
            nf_gport g = g0 + w * 64 + (nf_gport)__builtin_ctzll(m);
            sim_port *p = sim_port_at(s, g);
            const sim_ivc *iv = sim_ivcs(s, p);
            for (uint32_t vm = sim_pin_of(s, p)->vmask; vm; vm &= vm - 1) {
                unsigned v = (unsigned)__builtin_ctz(vm);
                if (!iv[v].out_port) {
                    sim_prefetch_pkt(s, iv[v].head_pkt);
                    __builtin_prefetch(s->net.cands + sim_vc_ix(s, g, v) * SIM_CACHE_CANDS, 1);
                } else if (iv[v].out_port != SIM_DROP_PORT) { /* its output's side */
                    __builtin_prefetch(sim_port_at(s, g0 + iv[v].out_port - 1u), 1);
                }
                if (iv[v].qn > 1) {
                    uint32_t at = iv[v].head + 1u;
                    __builtin_prefetch(&s->net.rings[sim_vc_ix(s, g, v) * s->net.ring_cap +
                                                     (at == s->net.ring_cap ? 0 : at)]);
                }
            }
        }
    }
    for (unsigned w = 0; w < W; w++) {
        for (uint64_t m = s->net.out_mask[(size_t)sw * W + w]; m; m &= m - 1) {
            nf_gport g = g0 + w * 64 + (nf_gport)__builtin_ctzll(m);
            const sim_port *p = sim_port_at(s, g);
            if (p->oq_runs > 2)
                __builtin_prefetch(&s->net.oq_ring[(size_t)g * s->net.oq_cap + p->oq_mid]);
        }
    }
}

/* Asks the memory for the parts of the port records of a router two ahead that prefetch_behind
 * reads one router ahead: the input side (and its VCs) of the ports holding input flits, the
 * output side of those with queued flits (prefetch_behind asks for the outputs asked for). */
SIM_INLINE void prefetch_ports(const nf_sim *s, nf_node sw, const unsigned W) {
    nf_gport g0 = s->f->port_off[sw];
    const char *ports = s->net.ports;
    size_t stride = s->net.port_stride, pin_off = s->net.pin_off;
    if (s->net.sides1) { /* (up to 2 VCs) */
        for (unsigned w = 0; w < W; w++) {
            nf_gport gw = g0 + w * 64;
            for (uint64_t m = s->net.in_mask[(size_t)sw * W + w]; m; m &= m - 1)
                __builtin_prefetch(ports + (size_t)(gw + __builtin_ctzll(m)) * 128 + 64, 1);
            for (uint64_t m = s->net.out_mask[(size_t)sw * W + w]; m; m &= m - 1)
                __builtin_prefetch(ports + (size_t)(gw + __builtin_ctzll(m)) * 128, 1);
        }
        return;
    }
    for (unsigned w = 0; w < W; w++) {
        for (uint64_t m = s->net.in_mask[(size_t)sw * W + w]; m; m &= m - 1) {
            uintptr_t a = (uintptr_t)sim_port_at(s, g0 + w * 64 + (nf_gport)__builtin_ctzll(m));
            for (uintptr_t line = (a + pin_off) & ~(uintptr_t)63; line < a + stride; line += 64)
                __builtin_prefetch((const void *)line, 1);
        }
        for (uint64_t m = s->net.out_mask[(size_t)sw * W + w]; m; m &= m - 1) {
            uintptr_t a = (uintptr_t)sim_port_at(s, g0 + w * 64 + (nf_gport)__builtin_ctzll(m));
            for (uintptr_t line = a & ~(uintptr_t)63; line < a + pin_off; line += 64)
                __builtin_prefetch((const void *)line, 1);
        }
    }
}

/* Thread t's routers, with port bitsets of W words: each active one runs its cycle; the idle
 * ones leave the list. */
SIM_INLINE int router_phase_w(nf_sim *s, unsigned t, const unsigned W) {
    sim_worker *wk = &s->workers[t];
    uint32_t n = wk->n_act, w = 0;
    if (n > 1) { /* in switch order: their records lie in that order */
        n = 0;
        for (nf_node sw = wk->sw_lo; sw < wk->sw_hi; sw++)
            if (s->net.active[sw]) wk->act[n++] = sw;
    }
    if (s->net.snap) {
        memcpy(wk->ran, wk->act, n * sizeof *wk->act);
        wk->n_ran = n;
    }
    for (uint32_t i = 0; i < n; i++) {
        nf_node sw = wk->act[i];
        if (s->net.far && i + 2 < n) prefetch_ports(s, wk->act[i + 2], W);
        if (s->net.pf && i + 1 < n) prefetch_behind(s, wk->act[i + 1], W);
        bool busy = false;
        int rc = router_cycle(s, wk, sw, &busy, W);
        if (rc) return rc;
        if (busy)
            wk->act[w++] = sw;
        else
            s->net.active[sw] = 0;
    }
    wk->n_act = w;
    return NF_OK;
}

/* Thread t's routers. */
int nf__sim_router_phase(nf_sim *s, unsigned t) {
    return s->net.mw_shift ? router_phase_w(s, t, SIM_MASK_WORDS) : router_phase_w(s, t, 1);
}
