/* SPDX-License-Identifier: MIT */
/* Link errors and the data link layer's switching (nf_sim_config.ber, switching; the Sunway
 * paper, section 2.2): each switch-to-switch link's chance of a corrupt packet, the check at the
 * tail, link-level retry from the upstream router's replay buffer, the bad mark a corrupt
 * cut-through packet carries on, and dynamic store-and-forward. The engine (sim.c) calls these
 * only while some link has errors or the switching is not plain cut-through (s->err.on). */
#include "sim/engine.h"

#include "util/diag.h"
#include "util/mem.h"

#include <math.h>
#include <string.h>

/* Turns link errors on: the per link, port and VC state (sim_errors), filled in by reset. */
int nf__sim_errors_init(nf_sim *s) {
    if (s->err.on) return NF_OK;
    const nf_fabric *f = s->f;
    s->err.ber = nf__malloc(((size_t)f->n_links + 1) * sizeof *s->err.ber);
    s->err.in = nf__calloc((size_t)s->topo.n_sw_ports + 1, sizeof *s->err.in);
    s->err.vc = nf__calloc((size_t)s->topo.n_sw_ports * s->net.n_vcs + 1, sizeof *s->err.vc);
    if (!s->err.ber || !s->err.in || !s->err.vc) return NF_ENOMEM;
    for (nf_link l = 0; l < f->n_links; l++)
        s->err.ber[l] = NAN;
    s->err.on = true;
    return NF_OK;
}

/* A run begins: every link's chance of a corrupt packet from its bit error rate, its switching
 * mode as configured, no recent errors, no marks. */
void nf__sim_errors_reset(nf_sim *s) {
    const nf_fabric *f = s->f;
    double bits = 8.0 * s->cfg.flit_bytes * s->cfg.pkt_flits;
    for (nf_gport g = 0; g < s->topo.n_sw_ports; g++) {
        sim_errlink *L = &s->err.in[g];
        *L = (sim_errlink){.saf = s->cfg.switching == NF_SIM_SAF};
        nf_link l = f->port_link[g];
        if (l == NF_NONE || !sim_port_at(s, g)->to_sw) continue;
        double ber = isnan(s->err.ber[l]) ? s->cfg.ber : s->err.ber[l];
        double p = ber >= 1 ? 1.0 : -expm1(bits * log1p(-ber)); /* 1 - (1 - ber)^bits */
        L->p_bad = p * 4294967296.0 >= 4294967295.0 ? UINT32_MAX : (uint32_t)(p * 4294967296.0);
    }
    memset(s->err.vc, 0, (size_t)s->topo.n_sw_ports * s->net.n_vcs * sizeof *s->err.vc);
}

/* The draw of whether the packet whose tail reaches input port g now is corrupt: a hash of the
 * seed, the port and the cycle (one tail a cycle reaches a port), so it does not depend on the
 * threads or the packet ids. */
static uint32_t err_draw(const nf_sim *s, nf_gport g) { return sim_draw(s, 0xe5505e11a7e5ULL, g); }

/* Link L's recent errors weighed as of now (dynamic switching). */
static void err_decay(const nf_sim *s, sim_errlink *L) {
    L->recent *= expf(-(float)(s->now - L->at) / (float)s->cfg.saf_window);
    L->at = (uint32_t)s->now;
}

/* Whether the packet whose head comes in over link L now is stored whole before it goes on. */
static bool err_saf(const nf_sim *s, sim_errlink *L) {
    if (L->saf && s->cfg.switching == NF_SIM_SWITCH_DYNAMIC) {
        err_decay(s, L);
        if (L->recent < s->cfg.saf_errors / 2) L->saf = 0;
    }
    return L->saf;
}

/* Link errors, at input VC v of switch port e.port whose link leads from a switch, flit e just
 * in (the packet's entry is the last of the VC's ring): a head on a link that stores and
 * forwards holds the packet until its tail is in; a tail is checked. A corrupt packet (the draw)
 * is sent again from the upstream router's replay buffer: a fresh copy of it as it came in goes
 * back there (a NAK over the link, its latency later). A corrupt packet, or a bad copy's tail
 * (SIM_FL_BAD), is then discarded here if none of it has gone on (when it comes to the head of
 * the VC), else its tail leaves marked bad. */
int nf__sim_err_arrive(nf_sim *s, sim_worker *wk, sim_event e, sim_ivc *v) {
    nf_gport gi = e.port;
    sim_errlink *L = &s->err.in[gi];
    sim_qent *ring = s->net.rings + sim_vc_ix(s, gi, e.vc) * s->net.ring_cap;
    uint32_t last = v->head + v->qn - 1u;
    sim_qent *q = &ring[last >= s->net.ring_cap ? last - s->net.ring_cap : last];
    bool in_win = s->now >= s->meas.win_lo && s->now < s->meas.win_hi;
    bool at_head = v->qn == 1;
    if (e.flags & SIM_FL_HEAD) {
        bool saf = err_saf(s, L);
        if (in_win) wk->rx++, wk->rx_saf += saf;
        if (saf && !(e.flags & SIM_FL_TAIL)) {
            q->t_arrive = SIM_T_WAIT;
            if (at_head) v->ready_at = SIM_T_WAIT;
        }
    }
    if (!(e.flags & SIM_FL_TAIL)) return NF_OK;
    if (q->t_arrive == SIM_T_WAIT) { /* all of it is in */
        q->t_arrive = (uint32_t)s->now;
        if (at_head) v->ready_at = (uint32_t)(s->now + s->cfg.router_delay);
    }
    bool corrupt = !(e.flags & SIM_FL_BAD) && L->p_bad && err_draw(s, gi) < L->p_bad;
    if (!corrupt && !(e.flags & SIM_FL_BAD)) return NF_OK;
    uint32_t id = q->pkt;
    /* a multicast at the end of its tree, at a switch that is a member (its port 0 takes it) */
    nf_node here = sim_port_at(s, gi)->node;
    bool mc = s->pool.pkts[id].flags & SIM_PK_MCAST;
    bool end_member = at_head && v->out_port == SIM_DROP_PORT && mc &&
                      nf__sim_is_sw_member(s, s->pool.pkts[id].mgroup, here);
    if (at_head && v->out_port == SIM_DROP_PORT && !end_member)
        return NF_OK; /* its way has gone: lost */
    sim_errvc *ev = &s->err.vc[sim_vc_ix(s, gi, e.vc)];
    /* routed here already: its way in is in ev (the head packet only) */
    bool routed = at_head && (v->ncand || v->out_port || v->out);
    if (corrupt) {
        if (in_win) wk->corrupt++;
        if (s->cfg.switching == NF_SIM_SWITCH_DYNAMIC) {
            err_decay(s, L);
            if ((L->recent += 1.0f) >= s->cfg.saf_errors) L->saf = 1;
        }
        if (!wk->n_stash) return NF_ENOMEM; /* (gen_phase keeps one per switch port) */
        uint32_t nid = wk->stash[--wk->n_stash];
        sim_pkt *np = &s->pool.pkts[nid];
        *np = s->pool.pkts[id];
        np->flags &= (uint8_t)~SIM_PK_BAD;
        if (routed) np->hops = ev->hops, np->rs = ev->rs;
        if (s->pool.stamp) s->pool.stamp[nid] = s->pool.stamp[id];
        sim_port *p = sim_port_at(s, gi);
        int rc = sim_push_event(
            s, wk, p->peer_own, s->now + p->lat,
            (sim_event){.port = p->back, .pkt = nid, .vc = e.vc, .flags = SIM_FL_NAK});
        if (rc) return rc;
        wk->replayed += s->cfg.pkt_flits;
    }
    if (end_member) { /* nothing goes on from here: its port 0 does not take it */
        s->pool.pkts[id].flags |= SIM_PK_BAD;
        wk->delivered -= v->out; /* its flits taken so far, counted delivered: taken back */
        wk->discarded += v->out;
        return NF_OK;
    }
    /* its head has gone on, or a multicast holds its branches: its tail goes marked (its
     * copies are discarded downstream) */
    if (at_head && (v->out || (mc && v->out_port))) {
        ev->stomp = 1;
        return NF_OK;
    }
    s->pool.pkts[id].flags |= SIM_PK_BAD; /* all of it is here: nobody else reads it */
    if (at_head) {
        if (v->out_port) { /* an output VC taken but nothing sent: given back */
            sim_ovc_free(sim_port_at(s, s->f->port_off[here] + v->out_port - 1), v->out_vc);
            v->out_port = 0;
        }
        v->ncand = 0;
        v->ready_at = (uint32_t)(s->now + 1);
    }
    return NF_OK;
}

/* Link errors: thread t's copies to send again, in the order their NAKs came: each goes whole
 * into its output port's queue, on its VC, as soon as the VC is free, the downstream buffer has
 * room for it and the queue has room (or is empty); the others wait. Before the routers: the
 * replay buffer goes first. */
int nf__sim_replay_phase(nf_sim *s, unsigned t) {
    sim_worker *wk = &s->workers[t];
    unsigned F = s->cfg.pkt_flits;
    size_t keep = 0;
    for (size_t i = 0; i < wk->n_rpl; i++) {
        sim_replay r = wk->rpl[i];
        sim_port *po = sim_port_at(s, r.port);
        if (sim_ovc_busy(po, r.vc) || sim_room(s, po, r.vc) < (int32_t)F ||
            (po->oq_count && po->oq_count + F > s->net.oq_cap)) {
            wk->rpl[keep++] = r;
            continue;
        }
        for (unsigned k = 0; k < F; k++) {
            bool shared = sim_take_credit(s, po, r.vc);
            sim_oq_push(s, po, r.port, r.pkt, r.vc,
                        (uint8_t)((k == 0 ? SIM_FL_HEAD : 0) | (k + 1 == F ? SIM_FL_TAIL : 0) |
                                  (shared ? SIM_FL_SHARED : 0)));
        }
        nf_node sw = po->node;
        sim_port_set(s->net.out_mask, sw, r.port - s->f->port_off[sw], 1u << s->net.mw_shift);
        sim_wake(s, wk, sw);
        wk->moved = 1;
    }
    wk->n_rpl = keep;
    return NF_OK;
}

int nf_sim_set_link_ber(nf_sim *s, nf_link l, double ber, nf_diag *diag) {
    if (!s) return nf__fail(diag, NF_EINVAL, "no simulator");
    const nf_fabric *f = s->f;
    if (l >= f->n_links || f->link_a[l] >= s->topo.n_sw || f->link_z[l] >= s->topo.n_sw)
        return nf__fail(diag, NF_EINVAL,
                        "link %u: not a link between two switches (links to NICs are error-free "
                        "in the model)",
                        (unsigned)l);
    if (!(ber >= 0 && ber <= 1)) return nf__fail(diag, NF_EINVAL, "bit error rate %g: 0 to 1", ber);
    if (nf__sim_errors_init(s)) return nf__fail(diag, NF_ENOMEM, "out of memory");
    s->err.ber[l] = ber;
    return NF_OK;
}
