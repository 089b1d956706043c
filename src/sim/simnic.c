/* SPDX-License-Identifier: MIT */
/* The sources and the NICs (sim.h): the injection process (Bernoulli sources on a calendar of
 * due cycles, or on/off bursts), messages generated into their NIC rail's queue, the script's
 * sends, and each NIC rail sending a flit a cycle on an injection VC chosen by the configured
 * rule. sim.c's cycle calls nf__sim_sources_phase in its generation step and
 * nf__sim_send_phase for each worker. */
#include "sim/engine.h"

#include "netfab/simset.h"

#include "util/mem.h"
#include "util/diag.h"
#include "util/rng.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static uint64_t rnd64(void *ud) { return nf__rng_next((nf__rng *)ud); }
static uint64_t geometric(nf_sim *s, double p);

/* Files Bernoulli source e under the cycle of its next message (modulo SIM_CAL_SLOTS: a slot also
 * holds sources due SIM_CAL_SLOTS or more cycles later, which stay in it until their turn). */
static int cal_put(nf_sim *s, uint32_t e) {
    sim_cal_slot *c = &s->src.cal[s->src.next_gen[e] & (SIM_CAL_SLOTS - 1)];
    if (c->n == c->cap && NF_GROW(c->e, c->cap, c->n + 1)) return NF_ENOMEM;
    c->e[c->n++] = e;
    return NF_OK;
}

int nf_sim_set_injection(nf_sim *s, const nf_sim_injection *inj) {
    if (!(inj->load >= 0 && inj->load <= 1) || nf_simset_check_all(NF_SIMSET_INJECTION, inj, NULL))
        return NF_EINVAL;
    s->src.inj = *inj;
    if (!s->src.inj.msg_pkts) s->src.inj.msg_pkts = 1;
    if (s->src.inj.bursty && !(s->src.inj.burst_pkts >= 1)) s->src.inj.burst_pkts = 8;
    s->src.pkt_rate = inj->load / s->cfg.pkt_flits;
    double rate = s->src.pkt_rate / s->src.inj.msg_pkts;
    for (uint32_t i = 0; i < SIM_CAL_SLOTS; i++)
        s->src.cal[i].n = 0;
    for (uint32_t e = 0; e < s->topo.n_ep; e++) { /* the first message of each Bernoulli source */
        s->src.next_gen[e] = rate > 0 ? s->now + geometric(s, rate) - 1 : UINT64_MAX;
        if (!s->src.inj.bursty && s->src.next_gen[e] != UINT64_MAX && cal_put(s, e))
            return NF_ENOMEM;
    }
    return NF_OK;
}

static uint64_t nic_backlog(const nf_sim *s, const sim_nic *n);

int nf_sim_set_packets(nf_sim *s, const nf_sim_packet *list, size_t n, nf_diag *diag) {
    if (!s || (n && !list)) return nf__fail(diag, NF_EINVAL, "no simulator or no list");
    if (n >= NF__LIST_TAG)
        return nf__fail(diag, NF_EINVAL, "%zu packets: at most %u", n, NF__LIST_TAG - 1);
    for (size_t i = 0; i < n; i++) {
        const nf_sim_packet *q = &list[i];
        if (q->src >= s->topo.n_ep || q->dst >= s->topo.n_ep)
            return nf__fail(diag, NF_EINVAL, "packet %zu: endpoint %u: there are %u", i,
                            q->src >= s->topo.n_ep ? q->src : q->dst, s->topo.n_ep);
        if (q->vc < -1 || q->vc >= (int)s->net.n_vcs)
            return nf__fail(diag, NF_EINVAL, "packet %zu: VC %d: -1 or 0 to %u", i, q->vc,
                            s->net.n_vcs - 1);
        if (i && q->at < list[i - 1].at)
            return nf__fail(diag, NF_EINVAL, "packet %zu: cycle %llu before the one above (%llu)",
                            i, (unsigned long long)q->at, (unsigned long long)list[i - 1].at);
    }
    nf_sim_packet *l = NULL;
    uint64_t *arr = NULL;
    if (n && (!(l = nf__malloc(n * sizeof *l)) || !(arr = nf__malloc(n * sizeof *arr)))) {
        nf__free(l);
        return NF_ENOMEM;
    }
    if (n) memcpy(l, list, n * sizeof *l);
    for (size_t i = 0; i < n; i++)
        arr[i] = UINT64_MAX;
    nf__free(s->src.list);
    nf__free(s->src.list_arr);
    s->src.list = l;
    s->src.list_arr = arr;
    s->src.n_list = n;
    s->src.list_pos = 0;
    return NF_OK;
}

uint64_t nf_sim_packet_arrival(const nf_sim *s, size_t i) {
    return s && i < s->src.n_list ? s->src.list_arr[i] : UINT64_MAX;
}

/* ---- injection ------------------------------------------------------------------------------ */

static int nic_push(sim_nic *n, uint32_t id) {
    if (n->q_count == n->q_cap) {
        uint32_t cap = n->q_cap ? 2 * n->q_cap : 16;
        uint32_t *q = nf__malloc((size_t)cap * sizeof *q);
        if (!q) return NF_ENOMEM;
        for (uint32_t i = 0; i < n->q_count; i++)
            q[i] = n->q[(n->q_head + i) % n->q_cap];
        nf__free(n->q);
        n->q = q;
        n->q_head = 0;
        n->q_cap = cap;
    }
    n->q[(n->q_head + n->q_count++) % n->q_cap] = id;
    return NF_OK;
}

static double uniform01(nf_sim *s) { return (double)(nf__rng_next(&s->src.rng) >> 11) * 0x1p-53; }

/* Bernoulli: a message starts with probability rate / msg_pkts per cycle. Bursty: an on/off
 * source; on, it sends a packet every cycle it can at full rate 1/pkt_flits; bursts last
 * burst_pkts packets on average and the off periods are sized so the mean rate is the load. */
/* Cycles until the next success of a Bernoulli process of probability p per cycle (>= 1). */
static uint64_t geometric(nf_sim *s, double p) {
    if (p >= 1) return 1;
    double u = 1.0 - uniform01(s); /* (0, 1] */
    /* one p for every source of a load point: its logarithm kept */
    if (p != s->src.geo_p) {
        s->src.geo_p = p;
        s->src.geo_log = log1p(-p);
    }
    double k = floor(log(u) / s->src.geo_log);
    return k > 1e15 ? (uint64_t)1e15 : (uint64_t)k + 1;
}

static bool want_message(nf_sim *s, sim_nic *n) {
    double rate = s->src.pkt_rate / s->src.inj.msg_pkts;
    if (!s->src.inj.bursty) { /* Bernoulli, drawn as geometric gaps: one draw per message */
        uint32_t e = (uint32_t)(n - s->src.nics) / 2;
        if (rate <= 0 || s->src.next_gen[e] > s->now) return false;
        s->src.next_gen[e] = s->now + geometric(s, rate);
        return true;
    }
    double full = 1.0 / s->cfg.pkt_flits / s->src.inj.msg_pkts; /* messages per cycle when on */
    if (rate <= 0) return false;
    if (rate >= full) return uniform01(s) < full;
    double p_off =
        1.0 / s->src.inj.burst_pkts * s->src.inj.msg_pkts; /* leave a burst after a message */
    double p_on = p_off * full * rate / (full - rate);     /* on:off = rate:(full - rate) */
    if (!n->burst_on) n->burst_on = uniform01(s) < p_on;
    if (!n->burst_on) return false;
    if (uniform01(s) < full) {
        if (uniform01(s) < p_off) n->burst_on = 0;
        return true;
    }
    return false;
}

/* A message from endpoint e to dst: its packets into the queue of one rail, the next in turn
 * when both ends have two (the rail is the message descriptor's), to the destination's port on
 * it. list: a listed packet's index (one packet, started on VC inj_vc - 1 unless 0), else
 * SIZE_MAX. */
static int make_message(nf_sim *s, uint32_t e, uint32_t dst, size_t list, uint8_t inj_vc) {
    sim_nic *n0 = &s->src.nics[(size_t)e * 2];
    uint32_t msg_pkts = list == SIZE_MAX ? s->src.inj.msg_pkts : 1;
    if (s->cfg.exclude_unroutable && (s->meas.ep_cut[e] != s->meas.ep_cut[dst] ||
                                      nf_hops_sw(s->h, s->topo.ep_sw[(size_t)e * 2],
                                                 s->topo.ep_sw[(size_t)dst * 2]) == NF_HOPS_INF)) {
        if (s->now >= s->meas.win_lo && s->now < s->meas.win_hi) s->meas.excluded_msgs++;
        return NF_OK;
    }
    unsigned rail = 0, rails = 1;
    if (s->topo.ep_rails[e] == 2 && s->topo.ep_rails[dst] == 2) {
        rail = n0->next_rail;
        n0->next_rail ^= 1;
        rails = 2;
        if (s->net.cr_rate) { /* pre-awareness: the rail of lower cost; ties in turn */
            double c0 = nf__sim_rail_cost(s, (size_t)e * 2, nic_backlog(s, n0));
            double c1 = nf__sim_rail_cost(s, (size_t)e * 2 + 1, nic_backlog(s, n0 + 1));
            if (c0 != c1) rail = c1 < c0;
        }
    }
    bool meas = s->now >= s->meas.win_lo && s->now < s->meas.win_hi;
    if (s->routing->deliverable && (s->faults.any_down || s->routing->may_strand)) {
        /* a rail with a way, else the message is lost */
        unsigned k = 0;
        while (k < rails &&
               !s->routing->deliverable(s->routing_ctx, s->topo.ep_sw[(size_t)e * 2 + rail],
                                        s->topo.ep_ca[dst], s->topo.ep_sw[(size_t)dst * 2 + rail]))
            rail ^= 1, k++;
        if (k == rails) {
            if (meas) s->meas.lost_flits += (uint64_t)msg_pkts * s->cfg.pkt_flits;
            return NF_OK;
        }
    }
    size_t src_k = (size_t)e * 2 + rail, dst_k = (size_t)dst * 2 + rail;
    uint32_t msg = list == SIZE_MAX ? UINT32_MAX : NF__LIST_TAG | (uint32_t)list;
    if (meas && msg_pkts > 1) { /* (one-packet messages: their packets' figures) */
        if (NF_GROW(s->meas.msg_left, s->meas.cap_msg, s->meas.n_msg + 1)) return NF_ENOMEM;
        if (NF_GROW(s->meas.msg_t0, s->meas.cap_t0, s->meas.n_msg + 1)) return NF_ENOMEM;
        msg = (uint32_t)s->meas.n_msg++;
        s->meas.msg_left[msg] = msg_pkts;
        s->meas.msg_t0[msg] = s->now;
    }
    sim_worker *wk = &s->workers[s->topo.owner[s->topo.ep_sw[(size_t)e * 2]]];
    if (wk->n_born + msg_pkts > wk->cap_born &&
        NF_GROW(wk->born, wk->cap_born, wk->n_born + msg_pkts))
        return NF_ENOMEM;
    for (unsigned k = 0; k < msg_pkts; k++) {
        uint32_t id = nf__sim_new_pkt(s);
        if (id == SIM_NO_PKT) return NF_ENOMEM;
        wk->born[wk->n_born++] = (sim_born){.id = id,
                                            .src_k = (uint32_t)src_k,
                                            .dst_k = (uint32_t)dst_k,
                                            .dst = dst,
                                            .msg = msg,
                                            .salt = (uint32_t)nf__rng_next(&s->src.rng),
                                            .meas = meas,
                                            .inj_vc = inj_vc};
        if (meas) {
            s->meas.gen_flits += s->cfg.pkt_flits;
            s->meas.pkts_left++;
        }
        if (s->tl.on) s->tl.sum[s->tl.cur].gen_flits += s->cfg.pkt_flits;
    }
    return NF_OK;
}

/* A message from endpoint e when its source wants one, to its pattern's destination. */
static int generate(nf_sim *s, uint32_t e) {
    if (!want_message(s, &s->src.nics[(size_t)e * 2])) return NF_OK;
    uint32_t dst = s->traffic->dest(s->traffic_ctx, e, rnd64, &s->src.rng);
    if (dst >= s->topo.n_ep || (dst == e && !s->traffic->self))
        return NF_OK; /* a pattern with no partner for e */
    return make_message(s, e, dst, SIZE_MAX, 0);
}

/* Worker wk's packets generated this cycle: their records written and each queued at its NIC
 * rail, which joins the worker's sending NICs if it was idle (a NIC's packets in generation
 * order, as the generation would have queued them). */
static int enqueue_born(nf_sim *s, sim_worker *wk) {
    for (size_t i = 0; i < wk->n_born; i++) {
        const sim_born *b = &wk->born[i];
        s->pool.pkts[b->id] = (sim_pkt){.src_sw = s->topo.ep_sw[b->src_k],
                                        .dst_ca = s->topo.ep_ca[b->dst],
                                        .dst_sw = s->topo.ep_sw[b->dst_k],
                                        .dst_port = s->topo.ep_port[b->dst_k],
                                        .t_create = s->now,
                                        .msg = b->msg,
                                        .salt = b->salt,
                                        .flags = b->meas ? SIM_PK_MEASURED : 0,
                                        .inj_vc = b->inj_vc};
        if (nic_push(&s->src.nics[b->src_k], b->id)) return NF_ENOMEM;
        if (!s->src.nic_on[b->src_k]) { /* to the list of sending NICs of the CA's owner */
            s->src.nic_on[b->src_k] = 1;
            wk->nic_act[wk->n_nic_act++] = b->src_k;
        }
    }
    wk->n_born = 0;
    return NF_OK;
}

const nf_sim_config *nf__sim_config(const nf_sim *s) { return &s->cfg; }
uint32_t nf_sim_endpoints(const nf_sim *s) { return s->topo.n_ep; }
nf_node nf_sim_endpoint_ca(const nf_sim *s, uint32_t e) {
    return e < s->topo.n_ep ? s->topo.ep_ca[e] : NF_NONE;
}

int64_t nf__sim_port_backlog(void *ud, uint32_t from, uint32_t to, unsigned rail) {
    const nf_sim *s = ud;
    if (rail && (s->topo.ep_rails[from] != 2 || s->topo.ep_rails[to] != 2)) return -1;
    return (int64_t)nic_backlog(s, &s->src.nics[(size_t)from * 2 + rail]);
}

/* Flits a NIC rail still has to send: queued packets and what is left of the current one. */
static uint64_t nic_backlog(const nf_sim *s, const sim_nic *n) {
    return (uint64_t)n->q_count * s->cfg.pkt_flits +
           (n->cur != SIM_NO_PKT ? s->cfg.pkt_flits - n->cur_sent : 0);
}

/* A source route from switch a to switch z over the switch links up now: a breadth-first
 * search from a, the ports of each switch in ascending order, so the path is a shortest one and
 * at each switch the lowest port that is on one; its ports appended to scr.path from *start.
 * false when z cannot be reached (or no memory: *oom). */
static bool search_route(nf_sim *s, nf_node a, nf_node z, uint32_t *start, bool *oom) {
    const nf_fabric *f = s->f;
    nf_node S = f->n_switches;
    if (!s->scr.bfs_from && (!(s->scr.bfs_from = nf__malloc(((size_t)S + 1) * 4)) ||
                             !(s->scr.bfs_q = nf__malloc(((size_t)S + 1) * 4)))) {
        *oom = true;
        return false;
    }
    uint32_t *from = s->scr.bfs_from, *q = s->scr.bfs_q, head = 0, tail = 0;
    for (nf_node x = 0; x < S; x++)
        from[x] = UINT32_MAX; /* its port towards the switch it was reached from */
    from[a] = 0, q[tail++] = a;
    while (head < tail && from[z] == UINT32_MAX) {
        nf_node x = q[head++];
        for (nf_gport g = f->port_off[x]; g < f->port_off[x + 1]; g++) {
            nf_node y = f->peer[g];
            nf_link l = f->port_link[g];
            if (y >= S || from[y] != UINT32_MAX || l == NF_NONE ||
                s->faults.link_state[l] != NF_LINK_UP)
                continue;
            from[y] = nf_port_index(f, y, f->peer_port[g]); /* its port back to x */
            q[tail++] = y;
        }
    }
    if (from[z] == UINT32_MAX) return false;
    uint32_t len = 0;
    for (nf_node y = z; y != a; y = f->peer[from[y]])
        len++;
    if (s->scr.n_path + len > s->scr.cap_path &&
        NF_GROW(s->scr.path, s->scr.cap_path, s->scr.n_path + len + 1)) {
        *oom = true;
        return false;
    }
    *start = (uint32_t)s->scr.n_path;
    uint32_t i = len;
    for (nf_node y = z; y != a;) { /* back from z: each port at the switch before */
        nf_gport g = from[y];
        nf_node x = f->peer[g];
        s->scr.path[s->scr.n_path + --i] = f->peer_port[g];
        y = x;
    }
    s->scr.n_path += len;
    return true;
}

/* The source route from switch a to z: the one found since the links last changed, or a new
 * search, remembered (scr.routes). NF_OK with *start UINT32_MAX when there is none, NF_ENOMEM. */
static int source_route(nf_sim *s, nf_node a, nf_node z, uint32_t *start) {
    uint64_t key = (uint64_t)a << 32 | z;
    if (nf__u64map_get(&s->scr.routes, key, start)) return NF_OK;
    bool oom = false;
    if (!search_route(s, a, z, start, &oom)) *start = UINT32_MAX;
    return oom ? NF_ENOMEM : nf__u64map_put(&s->scr.routes, key, *start);
}

/* A script's send: npkts packets of message `tag` from endpoint `from` to `to` into from's NIC
 * now (rail by mode, per packet when dynamic); group: UINT32_MAX for unicast; srcroute: each
 * rail's packets by a source route found now (by the routing if there is none). */
int nf__sim_emit(nf_sim *s, uint32_t from, uint32_t to, nf_sim_rail_mode mode, uint32_t npkts,
                 uint32_t tag, uint32_t group, bool srcroute) {
    bool two = s->topo.ep_rails[from] == 2 && s->topo.ep_rails[to] == 2;
    sim_nic *n0 = &s->src.nics[(size_t)from * 2];
    for (uint32_t k = 0; k < npkts; k++) {
        unsigned rail = 0;
        if (two && mode == NF_SIM_RAIL1) rail = 1;
        if (two && mode == NF_SIM_RAIL_DYNAMIC) { /* the port with less to send; ties in turn */
            uint64_t b0 = nic_backlog(s, n0), b1 = nic_backlog(s, n0 + 1);
            double c0 = 0, c1 = 0;
            if (s->net.cr_rate) { /* pre-awareness: the lower cost first */
                c0 = nf__sim_rail_cost(s, (size_t)from * 2, b0);
                c1 = nf__sim_rail_cost(s, (size_t)from * 2 + 1, b1);
            }
            if (c0 != c1) {
                rail = c1 < c0;
            } else {
                rail = b0 == b1 ? n0->next_rail : b1 < b0;
                if (b0 == b1) n0->next_rail ^= 1;
            }
        }
        size_t src_k = (size_t)from * 2 + rail, dst_k = (size_t)to * 2 + rail;
        uint32_t id = nf__sim_new_pkt(s);
        if (id == SIM_NO_PKT) return NF_ENOMEM;
        s->pool.pkts[id] = (sim_pkt){.src_sw = s->topo.ep_sw[src_k],
                                     .dst_ca = s->topo.ep_ca[to],
                                     .dst_sw = s->topo.ep_sw[dst_k],
                                     .dst_port = s->topo.ep_port[dst_k],
                                     .t_create = s->now,
                                     .msg = NF__SCRIPT_TAG | tag,
                                     .salt = (uint32_t)nf__rng_next(&s->src.rng)};
        if (group != UINT32_MAX)
            s->pool.pkts[id].mgroup = group, s->pool.pkts[id].flags = SIM_PK_MCAST;
        uint32_t route = UINT32_MAX;
        if (srcroute && group == UINT32_MAX &&
            source_route(s, s->topo.ep_sw[src_k], s->topo.ep_sw[dst_k], &route))
            return NF_ENOMEM;
        if (route != UINT32_MAX)
            s->pool.pkts[id].rs = route, s->pool.pkts[id].flags |= SIM_PK_SRCROUTE;
        if (nic_push(&s->src.nics[src_k], id)) return NF_ENOMEM;
        if (!s->src.nic_on[src_k]) {
            sim_worker *wk = &s->workers[s->topo.owner[s->topo.ep_sw[(size_t)from * 2]]];
            s->src.nic_on[src_k] = 1;
            wk->nic_act[wk->n_nic_act++] = (uint32_t)src_k;
        }
    }
    return NF_OK;
}

/* A NIC's rail k (endpoint * 2 + rail) sends at most one flit a cycle into its switch's input
 * port: a packet starts only on a VC (0..inj_vc_hi) with room for all of it. */
/* The random injection VC's draw for NIC rail k now: a hash of the seed, the rail and the cycle
 * (a rail tries once a cycle), so it depends neither on the threads nor on other draws. */
static uint32_t inject_draw(const nf_sim *s, uint32_t k) {
    return sim_draw(s, 0x1a7ec7edc0ffeeULL, k);
}

static int nic_send(nf_sim *s, sim_worker *wk, uint32_t k) {
    sim_nic *n = &s->src.nics[k];
    sim_port *p = sim_port_at(s, s->topo.ep_gport[k]);
    if (n->cur == SIM_NO_PKT) {
        if (!n->q_count || s->now < n->hold_until) return NF_OK;
        int best = -1;
        nf_sim_inject_vc how = s->cfg.inject_vc; /* (routing: resolved at nf_sim_new) */
        unsigned forced = s->pool.pkts[n->q[n->q_head]].inj_vc;
        if (forced) { /* a listed packet's: held or short, wait */
            unsigned v = forced - 1;
            int32_t need = how == NF_SIM_INJ_RR ? 1 : (int32_t)s->cfg.pkt_flits;
            if (!sim_ovc_busy(p, v) && sim_room(s, p, v) >= need) best = (int)v;
        } else if (how == NF_SIM_INJ_RANDOM) { /* this try's draw, held or short: wait */
            unsigned v = (unsigned)(((uint64_t)inject_draw(s, k) * s->net.n_vcs) >> 32);
            if (!sim_ovc_busy(p, v) && sim_room(s, p, v) >= (int32_t)s->cfg.pkt_flits)
                best = (int)v;
        } else if (how == NF_SIM_INJ_RR) { /* from the one after the last, the first with a slot */
            for (unsigned i = 0; i < s->net.n_vcs && best < 0; i++) {
                unsigned v = (n->rr_next + i) % s->net.n_vcs;
                if (!sim_ovc_busy(p, v) && sim_room(s, p, v) > 0) best = (int)v;
            }
            if (best >= 0) n->rr_next = (uint8_t)((unsigned)(best + 1) % s->net.n_vcs);
        } else {
            unsigned hi = s->routing->inj_vc_hi(s->routing_ctx);
            if (hi >= s->net.n_vcs) hi = s->net.n_vcs - 1;
            for (unsigned v = 0; v <= hi; v++)
                if (!sim_ovc_busy(p, v) && sim_room(s, p, v) >= (int32_t)s->cfg.pkt_flits &&
                    (best < 0 || sim_room(s, p, v) > sim_room(s, p, (unsigned)best)))
                    best = (int)v;
        }
        if (best < 0) return NF_OK;
        n->cur = n->q[n->q_head];
        n->q_head = (n->q_head + 1) % n->q_cap;
        n->q_count--;
        n->cur_sent = 0;
        n->cur_vc = (uint8_t)best;
        sim_ovc_hold(p, (unsigned)best);
        s->pool.pkts[n->cur].t_inject = s->now;
    }
    if (sim_room(s, p, n->cur_vc) <= 0) return NF_OK;
    bool shared = sim_take_credit(s, p, n->cur_vc);
    bool tail = ++n->cur_sent == s->cfg.pkt_flits;
    if (n->cur_sent == 1 && s->routing->lookahead) { /* the choice at its first switch */
        nf_node sw = s->topo.ep_sw[k];
        nf__sim_route_ahead(s, n->cur, sw, p->back - s->f->port_off[sw] + 1);
    }
    sim_event ev = {.port = p->back,
                    .pkt = n->cur,
                    .vc = n->cur_vc,
                    .flags =
                        (uint8_t)((tail ? SIM_FL_TAIL : 0) | (n->cur_sent == 1 ? SIM_FL_HEAD : 0) |
                                  (shared ? SIM_FL_SHARED : 0))};
    int rc = sim_push_event(s, wk, p->peer_own, s->now + s->cfg.nic_delay + p->lat, ev);
    if (rc) return rc;
    wk->injected++;
    wk->moved = 1;
    if (tail) {
        sim_ovc_free(p, n->cur_vc);
        n->cur = SIM_NO_PKT;
        if (s->net.cr_rate && s->cfg.preaware_throttle > 0) {
            nf_gport g = s->topo.ep_gport[k];
            unsigned gap = nf__sim_throttle_gap(
                nf__sim_port_rate_now(s, g), nf__sim_port_owed(s, p), s->cfg.pkt_flits,
                s->net.buf_flits, s->cfg.preaware_throttle, s->cfg.preaware_cycles);
            n->hold_until = (uint32_t)(s->now + 1 + gap);
        }
    }
    return NF_OK;
}

/* The Bernoulli and bursty sources due this cycle: their messages generated, in ascending
 * endpoint order (gen_phase, after the link failures and the script). */
int nf__sim_sources_phase(nf_sim *s) {
    int rc = NF_OK;
    if (s->src.list) { /* the listed packets due now, in their order */
        for (; s->src.list_pos < s->src.n_list && s->src.list[s->src.list_pos].at <= s->now;
             s->src.list_pos++) {
            const nf_sim_packet *q = &s->src.list[s->src.list_pos];
            if (q->at < s->now) continue; /* (a run that began after it) */
            rc = make_message(s, q->src, q->dst, s->src.list_pos, (uint8_t)(q->vc + 1));
            if (rc) return rc;
        }
        return NF_OK;
    }
    if (!(s->src.pkt_rate > 0)) return NF_OK;
    if (s->src.inj.bursty) {
        for (uint32_t e = 0; e < s->topo.n_ep; e++)
            if ((rc = generate(s, e))) return rc;
        return NF_OK;
    }
    /* the sources due now, in ascending order: a source is in the calendar once, so a bitset
     * over the endpoints sorts them (only its words between the least and the greatest) */
    sim_cal_slot *c = &s->src.cal[s->now & (SIM_CAL_SLOTS - 1)];
    uint64_t *bits = s->src.due_bits;
    size_t nd = 0, keep = 0, lo = SIZE_MAX, hi = 0;
    for (size_t i = 0; i < c->n; i++) {
        uint32_t e = c->e[i];
        if (s->src.next_gen[e] == s->now) {
            bits[e >> 6] |= 1ULL << (e & 63);
            lo = lo < e >> 6 ? lo : e >> 6;
            hi = hi > e >> 6 ? hi : e >> 6;
        } else {
            c->e[keep++] = e;
        }
    }
    c->n = keep;
    for (size_t w = lo; w <= hi && lo != SIZE_MAX; w++)
        for (; bits[w]; bits[w] &= bits[w] - 1)
            s->src.due[nd++] = (uint32_t)(w * 64 + (unsigned)__builtin_ctzll(bits[w]));
    for (size_t i = 0; i < nd; i++) {
        uint32_t e = s->src.due[i];
        if ((rc = generate(s, e))) return rc;
        if (s->src.next_gen[e] != UINT64_MAX && (rc = cal_put(s, e))) return rc;
    }
    return NF_OK;
}

/* Puts a worker's sending NICs in endpoint order (their records lie in that order): those
 * still sending from the last cycle are in order already (n_nic_sorted of them); the ones added
 * since, in the order their packets were born (ascending but for scripted ones), are sorted and
 * merged in. */
static void sort_nics(sim_worker *wk) {
    uint32_t *a = wk->nic_act, n = wk->n_nic_act, m = wk->n_nic_sorted;
    if (m >= n) return;
    bool sorted = true;
    for (uint32_t i = m + 1; i < n && sorted; i++)
        sorted = a[i - 1] < a[i];
    if (!sorted) qsort(a + m, n - m, sizeof *a, nf__sim_cmp_u32);
    if (m == 0 || a[m - 1] < a[m]) return;
    memcpy(wk->nic_tmp, a, m * sizeof *a); /* merge the two runs */
    uint32_t i = 0, j = m, o = 0;
    while (i < m && j < n)
        a[o++] = wk->nic_tmp[i] < a[j] ? wk->nic_tmp[i++] : a[j++];
    while (i < m)
        a[o++] = wk->nic_tmp[i++];
}

/* Thread t's NICs with packets: each sends a flit if it can; the idle ones leave the list. */
int nf__sim_send_phase(nf_sim *s, unsigned t) {
    sim_worker *wk = &s->workers[t];
    int rc = enqueue_born(s, wk);
    if (rc) return rc;
    sort_nics(wk);
    uint32_t w = 0;
    for (uint32_t i = 0; i < wk->n_nic_act; i++) {
        uint32_t e = wk->nic_act[i];
        if (i + 8 < wk->n_nic_act) { /* the records are spread: fetch ahead */
            uint32_t a = wk->nic_act[i + 8];
            __builtin_prefetch(&s->src.nics[a], 1);
            const char *r = (const char *)sim_port_at(s, s->topo.ep_gport[a]);
            __builtin_prefetch(r, 1);
            __builtin_prefetch(r + 64, 1);
        }
        if ((rc = nic_send(s, wk, e))) return rc;
        if (s->src.nics[e].q_count || s->src.nics[e].cur != SIM_NO_PKT)
            wk->nic_act[w++] = e;
        else
            s->src.nic_on[e] = 0;
    }
    wk->n_nic_act = wk->n_nic_sorted = w;
    return NF_OK;
}

/* One cycle: events applied, messages generated, NICs and routers. With several threads, each
 * applies its events, then runs its NICs and routers, in parallel; the generation (one random
 * stream) runs on one between two barriers. Every thread writes
 * only its own state and its own wheels, and what a router does depends on its own state only,
 * so the results are the same for every number of threads. */
