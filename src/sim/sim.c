/* SPDX-License-Identifier: MIT */
/* The simulation engine (sim.h). Cycle-driven; every cycle:
 *  1. the events of this cycle (flits arriving at an input buffer or a NIC, credits arriving at
 *     an output VC) are applied, waking the routers they touch;
 *  2. the NICs start and send packets (one flit per cycle per injection channel);
 *  3. every active router runs its crossbar passes (internal speedup): each input port offers the
 *     flit of one of its VCs (round-robin over VCs whose head packet is past the router delay and
 *     holds, or now gets, an output VC), each output grants one input (round-robin), the winner's
 *     flit moves to the output queue and its slot's credit leaves upstream; then every output
 *     queue puts one flit on its link.
 * A router only changes another's state through events at least a cycle ahead, so the result
 * does not depend on the order routers are visited in. Virtual cut-through: an output VC is
 * given to a packet only when the downstream buffer has room for the whole packet; it stays with
 * the packet until its tail crosses the switch.
 *
 * Layout: everything a port holds (its link, both sides' round-robin pointers, its input VCs and
 * output VCs, its output queue's ends) is one record of a few cache lines, and a router's ports
 * are consecutive records, so a router's cycle reads one contiguous block. The buffers behind
 * (packet rings of the input VCs, flit rings of the output queues) exist for switch ports only;
 * an input VC keeps its head packet in its record, so the ring is touched once per packet. */
#define _DEFAULT_SOURCE /* madvise */
#include "sim/engine.h"

#include "netfab/simset.h"

#include "util/cpus.h"
#include "util/diag.h"
#include "util/mem.h"
#include "util/rng.h"
#include "util/sort.h"

#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

/* With threads 0 (auto), fabrics of this many switches or more are shared among every
 * processor; smaller ones run on one thread. */
#define AUTO_THREADS_MIN_SWITCHES 64

/* The defaults are the settings table's (simset.c). */
void nf_sim_config_defaults(nf_sim_config *c) { nf_simset_defaults(NF_SIMSET_CONFIG, c); }

/* An array of n bytes on 64-byte boundaries; a large one on 2 MiB ones, with transparent huge
 * pages asked for: the engine's reads are scattered over hundreds of MiB, and with 4 KiB pages
 * they (and the prefetches ahead of them) miss the TLB. *raw receives what to free. Paper
 * Dragonfly, cycles 500-800 on 2 threads, min of 3: 8.58 s with 4 KiB pages, 8.09 s with huge
 * ones. */
static void *big_alloc(size_t n, void **raw) {
    const size_t H = (size_t)2 << 20, A = n >= 2 * H ? H : 64; /* small ones: cache lines */
    char *p = nf__malloc(n + A);
    *raw = p;
    if (!p) return NULL;
    char *a = p + (A - (uintptr_t)p % A) % A;
#ifdef MADV_HUGEPAGE
    if (A == H) (void)madvise(a, n / H * H, MADV_HUGEPAGE); /* advice: failure changes nothing */
#endif
    return a;
}

static int sample(sim_sampler *sm, uint64_t v) {
    if (sm->n == sm->cap && NF_GROW(sm->v, sm->cap, sm->n + 1)) return NF_ENOMEM;
    sm->v[sm->n++] = v > UINT32_MAX ? UINT32_MAX : (uint32_t)v;
    return NF_OK;
}

uint32_t nf__sim_new_pkt(nf_sim *s) {
    if (s->pool.n_free) return s->pool.free_ids[--s->pool.n_free];
    if (s->pool.n == s->pool.cap) {
        uint32_t cap = s->pool.cap ? 2 * s->pool.cap : 4096;
        sim_pkt *p = nf__realloc(s->pool.pkts, (size_t)cap * sizeof *p);
        if (!p) return SIM_NO_PKT;
        s->pool.pkts = p;
        if (s->routing->learns) {
            uint32_t *st = nf__realloc(s->pool.stamp, (size_t)cap * sizeof *st);
            if (!st) return SIM_NO_PKT;
            s->pool.stamp = st;
        }
        uint32_t *fr = nf__realloc(s->pool.free_ids, (size_t)cap * sizeof *fr);
        if (!fr) return SIM_NO_PKT;
        s->pool.free_ids = fr;
        s->pool.cap = cap;
    }
    return s->pool.n++;
}

/* ---- construction --------------------------------------------------------------------------- */

void nf_sim_free(nf_sim *s) {
    if (!s) return;
    if (s->routing && s->routing->fini && s->routing_ctx) s->routing->fini(s->routing_ctx);
    if (s->traffic && s->traffic->fini && s->traffic_ctx) s->traffic->fini(s->traffic_ctx);
    for (unsigned t = 0; s->workers && t < s->n_threads; t++) {
        sim_worker *w = &s->workers[t];
        for (unsigned d = 0; w->wheel && d < s->n_threads; d++) {
            for (uint32_t i = 0; w->wheel[d] && i <= s->net.wheel_mask; i++)
                nf__free(w->wheel[d][i].ev);
            nf__free(w->wheel[d]);
        }
        for (unsigned d = 0; w->learn && d < s->n_threads; d++) {
            for (uint32_t i = 0; w->learn[d] && i <= s->net.wheel_mask; i++)
                nf__free(w->learn[d][i].ev);
            nf__free(w->learn[d]);
        }
        nf__free(w->learn);
        nf__free(w->nic_tmp);
        void *arrays[] = {w->wheel,  w->act,    w->freed, w->nic_act, w->ran,     w->lat.v,
                          w->nlat.v, w->mlat.v, w->sarr,  w->stash,   w->bglat.v, w->larr};
        for (size_t i = 0; i < sizeof arrays / sizeof arrays[0]; i++)
            nf__free(arrays[i]);
        nf__free(w->tl);
        nf__free(w->rpl);
        nf__free(w->va_req);
        nf__free(w->born);
    }
    for (uint32_t i = 0; s->src.nics && i < 2 * s->topo.n_ep; i++)
        nf__free(s->src.nics[i].q);
    for (uint32_t i = 0; s->src.cal && i < SIM_CAL_SLOTS; i++)
        nf__free(s->src.cal[i].e);
    nf__free(s->src.cal);
    nf__free(s->src.due);
    nf__free(s->src.due_bits);
    nf__free(s->mc.off);
    nf__free(s->mc.sw);
    nf__free(s->mc.mask);
    nf__free(s->mc.left);
    nf__free(s->mc.ids);
    nf__free(s->mc.grp_off);
    nf__free(s->mc.grp_ep);
    nf__free(s->mc.sw_off);
    nf__free(s->mc.sw_mem);
    nf__free(s->mc.refused);
    nf__free(s->src.nic_on);
    nf__free(s->net.snap);
    nf__free(s->net.cr_rate);
    nf__free(s->net.cr_at);
    nf__free(s->net.va_pass);
    nf__free(s->net.va_rr);
    nf__free(s->net.va_in_rr);
    nf__free(s->net.rank);
    nf__free(s->net.unrank);
    nf__free(s->src.list);
    nf__free(s->src.list_arr);
    nf__free(s->pool.stamp);
    nf__free(s->topo.ep_rails);
    nf__free(s->meas.ep_cut);
    nf__free(s->meas.cut_uf);
    nf__free(s->tl.sum);
    nf__free(s->tl.win);
    nf__free(s->err.ber);
    nf__free(s->err.in);
    nf__free(s->err.vc);
    void *arrays[] = {s->workers,      s->topo.owner,    s->topo.ep_ca,    s->topo.ep_sw,
                      s->topo.ep_port, s->topo.ep_gport, s->topo.ca_ep,    s->net.raw[0],
                      s->net.raw[1],   s->net.raw[2],    s->net.raw[3],    s->net.xbar_credit,
                      s->net.in_mask,  s->net.out_mask,  s->src.next_gen,  s->net.active,
                      s->src.nics,     s->pool.pkts,     s->pool.free_ids, s->meas.msg_left,
                      s->meas.msg_t0,  s->scr.arrivals,  s->faults.ev,     s->faults.link_state};
    nf__script_free(s->scr.script);
    nf__free(s->scr.ring_cap);
    nf__free(s->scr.path);
    nf__u64map_fini(&s->scr.routes);
    nf__free(s->scr.bfs_from);
    nf__free(s->scr.bfs_q);
    for (size_t i = 0; i < sizeof arrays / sizeof arrays[0]; i++)
        nf__free(arrays[i]);
    nf__free(s);
}

static unsigned link_latency(const nf_sim_config *c, nf_link_class cls) {
    return cls == NF_LINK_HOST ? c->lat_host : cls == NF_LINK_GLOBAL ? c->lat_global : c->lat_local;
}

/* The configuration checked (NF_EINVAL with the reason in diag) and its automatic values
 * resolved (out_buf, queue_backoff, the routing-named VC rules), for routing r. */
static int check_config(nf_sim_config *c, const nf_sim_routing *r, nf_diag *diag) {
    int bad = nf_simset_check_all(NF_SIMSET_CONFIG, c, diag); /* each setting's own range */
    if (bad) return bad;
    /* what depends on several settings, or on the routing */
    if (c->vc_alloc == NF_SIM_VA_SEPARATE && c->speedup > 63)
        return nf__fail(diag, NF_EINVAL,
                        "separate VC allocation counts at most 63 passes a cycle (speedup %g)",
                        c->speedup);
    if (c->vcs < r->min_vcs)
        return nf__fail(diag, NF_EINVAL, "routing %s needs at least %u VCs, got %u", r->name,
                        r->min_vcs, c->vcs);
    if (c->buf_flits < c->pkt_flits)
        return nf__fail(diag, NF_EINVAL,
                        "buffers of %u flits cannot hold a packet of %u (virtual cut-through)",
                        c->buf_flits, c->pkt_flits);
    /* the automatic values resolved */
    if (!c->out_buf) c->out_buf = c->buf_flits > 2 * c->pkt_flits ? c->buf_flits : 2 * c->pkt_flits;
    if (!c->queue_backoff) c->queue_backoff = c->queue_host_cycles;
    /* the routing's VC rules (BookSim2's, as its routing functions name them) made concrete */
    if (c->inject_vc == NF_SIM_INJ_ROUTING)
        c->inject_vc = r->bs_dragonfly ? NF_SIM_INJ_RANDOM : NF_SIM_INJ_RR;
    if (c->eject_vc == NF_SIM_EJ_ROUTING)
        c->eject_vc = r->bs_dragonfly ? NF_SIM_EJ_ARRIVAL : NF_SIM_EJ_ANY;
    return NF_OK;
}

int nf_sim_new(const nf_fabric *f, const nf_hops *h, const nf_sim_config *cfg,
               const nf_sim_routing *r, const nf_sim_traffic *t, nf_sim **out, nf_diag *diag) {
    *out = NULL;
    nf_sim_config c;
    if (cfg)
        c = *cfg;
    else
        nf_sim_config_defaults(&c);
    int bad = check_config(&c, r, diag);
    if (bad) return bad;
    unsigned maxlat = c.lat_host > c.lat_local ? c.lat_host : c.lat_local;
    if (c.lat_global > maxlat) maxlat = c.lat_global;
    nf_sim *s = nf__calloc(1, sizeof *s);
    if (!s) return NF_ENOMEM;
    s->f = f;
    s->h = h;
    s->cfg = c;
    s->routing = r;
    s->traffic = t;
    s->topo.n_sw = f->n_switches;
    s->topo.n_ports = f->port_off[f->n_nodes];
    s->topo.n_sw_ports = f->port_off[f->n_switches];
    s->net.n_vcs = c.vcs;
    s->net.buf_flits = c.buf_flits;
    s->net.oq_cap = c.out_buf;
    for (nf_node n = 0; n < f->n_switches; n++) /* port bitsets of one word, or of four */
        if (f->nports[n] > 64) s->net.mw_shift = 2;
    _Static_assert(SIM_MASK_WORDS == 4 && NF_MAX_PORTS <= 64 * SIM_MASK_WORDS,
                   "port bitsets of 1 << 2 words hold every port");
    int rc = NF_ENOMEM;
    /* endpoints: CAs whose port 1 is cabled to a switch over an up link; a second rail when
     * port 2 is too */
    size_t nca = (size_t)f->n_cas + 1;
    s->topo.ep_ca = nf__malloc(nca * sizeof *s->topo.ep_ca);
    s->topo.ep_rails = nf__malloc(nca);
    s->topo.ep_sw = nf__malloc(2 * nca * sizeof *s->topo.ep_sw);
    s->topo.ep_port = nf__malloc(2 * nca);
    s->topo.ep_gport = nf__malloc(2 * nca * sizeof *s->topo.ep_gport);
    s->topo.ca_ep = nf__malloc(((size_t)f->n_nodes + 1) * sizeof *s->topo.ca_ep);
    if (!s->topo.ep_ca || !s->topo.ep_rails || !s->topo.ep_sw || !s->topo.ep_port ||
        !s->topo.ep_gport || !s->topo.ca_ep)
        goto fail;
    for (nf_node n = 0; n < f->n_nodes; n++) {
        s->topo.ca_ep[n] = UINT32_MAX;
        if (nf_is_switch(f, n)) continue;
        unsigned rails = 0;
        for (unsigned rl = 0; rl < 2 && rl < f->nports[n] && rails == rl; rl++) {
            nf_gport g = nf_port_index(f, n, rl + 1);
            nf_node sw = f->peer[g];
            if (sw == NF_NONE || sw >= f->n_switches ||
                f->link_state[f->port_link[g]] != NF_LINK_UP)
                continue;
            size_t k = (size_t)s->topo.n_ep * 2 + rl;
            s->topo.ep_sw[k] = sw;
            s->topo.ep_port[k] = f->peer_port[g];
            s->topo.ep_gport[k] = g;
            rails++;
        }
        if (!rails) continue;
        s->topo.ca_ep[n] = s->topo.n_ep;
        s->topo.ep_ca[s->topo.n_ep] = n;
        s->topo.ep_rails[s->topo.n_ep] = (uint8_t)rails;
        s->topo.n_ep++;
    }
    if (s->topo.n_ep == 0) {
        rc = nf__fail(diag, NF_EINVAL, "the fabric has no endpoint cabled to a switch");
        goto fail;
    }
    /* port records: the output side and its n_vcs output VCs, then the input side and its n_vcs
     * input VCs, on a cache line of its own when each part fits one (up to 2 VCs); 32-byte
     * multiples. Paper Dragonfly, 400 cycles, cachegrind with a 1 MiB last level: 29% fewer
     * misses than with the parts mixed over two lines; 1,500 cycles on 1 thread 8% faster. */
    size_t out_end = sizeof(sim_port) + (size_t)s->net.n_vcs * sizeof(sim_ovc);
    size_t in_size = sizeof(sim_pin) + (size_t)s->net.n_vcs * sizeof(sim_ivc);
    s->net.ovc_off = sizeof(sim_port);
    s->net.pin_off = out_end <= 64 && in_size <= 64 ? 64 : out_end;
    s->net.ivc_off = s->net.pin_off + sizeof(sim_pin);
    s->net.port_stride = (s->net.pin_off + in_size + 31) / 32 * 32;
    s->net.sides1 = s->net.pin_off == 64 && s->net.port_stride == 128;
    s->net.far = (size_t)s->topo.n_sw_ports * s->net.port_stride > SIM_NEAR_BYTES;
    size_t PSV = (size_t)s->topo.n_sw_ports * s->net.n_vcs;
    s->net.ring_cap = (s->net.buf_flits + c.shared_flits) / c.pkt_flits + 2;
    s->net.ports = big_alloc(((size_t)s->topo.n_ports + 1) * s->net.port_stride, &s->net.raw[0]);
    s->net.rings = big_alloc((PSV * s->net.ring_cap + 1) * sizeof *s->net.rings, &s->net.raw[1]);
    s->net.oq_ring = big_alloc(
        ((size_t)s->topo.n_sw_ports * s->net.oq_cap + 1) * sizeof *s->net.oq_ring, &s->net.raw[2]);
    s->net.cands = big_alloc((PSV * SIM_CACHE_CANDS + 1) * sizeof *s->net.cands, &s->net.raw[3]);
    /* threads: asked, or every processor this process may use (affinity, cgroup quota) when
     * the fabric is big enough to share */
    s->n_threads = c.threads                                   ? c.threads
                   : s->topo.n_sw >= AUTO_THREADS_MIN_SWITCHES ? nf__cpus_usable()
                                                               : 1;
    if (s->n_threads < 1) s->n_threads = 1;
    if (s->n_threads > NF_SIM_MAX_THREADS) s->n_threads = NF_SIM_MAX_THREADS;
    if (s->n_threads > s->topo.n_sw) s->n_threads = s->topo.n_sw;
    s->par.use = s->n_threads; /* all of them, until par_epoch has timed both ways */
    s->net.xbar_credit = nf__calloc((size_t)s->topo.n_sw + 1, sizeof *s->net.xbar_credit);
    s->net.active = nf__calloc((size_t)s->topo.n_sw + 1, 1);
    s->topo.owner = nf__calloc((size_t)s->topo.n_sw + 1, 1);
    s->src.nics = nf__calloc(2 * (size_t)s->topo.n_ep, sizeof *s->src.nics);
    size_t mask_words = ((size_t)s->topo.n_sw << s->net.mw_shift) + 1;
    s->net.in_mask = nf__calloc(mask_words, sizeof *s->net.in_mask);
    s->net.out_mask = nf__calloc(mask_words, sizeof *s->net.out_mask);
    s->src.next_gen = nf__calloc((size_t)s->topo.n_ep + 1, sizeof *s->src.next_gen);
    s->workers = nf__calloc(s->n_threads, sizeof *s->workers);
    s->src.nic_on = nf__calloc(2 * (size_t)s->topo.n_ep, 1);
    s->src.cal = nf__calloc(SIM_CAL_SLOTS, sizeof *s->src.cal);
    s->src.due = nf__malloc(((size_t)s->topo.n_ep + 1) * sizeof *s->src.due);
    s->src.due_bits = nf__calloc((size_t)s->topo.n_ep / 64 + 1, sizeof *s->src.due_bits);
    s->faults.link_state = nf__malloc((size_t)f->n_links + 1);
    if (c.exclude_unroutable &&
        (!(s->meas.ep_cut = nf__malloc(((size_t)s->topo.n_ep + 1) * sizeof *s->meas.ep_cut)) ||
         !(s->meas.cut_uf = nf__malloc(((size_t)s->topo.n_sw + 1) * sizeof *s->meas.cut_uf))))
        goto fail;
    if ((r->needs_global || r->lookahead) &&
        !(s->net.snap = nf__calloc((size_t)s->topo.n_sw_ports + 1, sizeof *s->net.snap)))
        goto fail;
    if (c.preaware_cycles &&
        (!(s->net.cr_rate = nf__calloc((size_t)s->topo.n_ports + 1, sizeof *s->net.cr_rate)) ||
         !(s->net.cr_at = nf__calloc((size_t)s->topo.n_ports + 1, sizeof *s->net.cr_at))))
        goto fail;
    if (c.vc_alloc == NF_SIM_VA_SEPARATE &&
        (!(s->net.va_pass =
               nf__calloc((size_t)s->topo.n_sw_ports * c.vcs + 1, sizeof *s->net.va_pass)) ||
         !(s->net.va_rr =
               nf__calloc((size_t)s->topo.n_sw_ports * c.vcs + 1, sizeof *s->net.va_rr)) ||
         !(s->net.va_in_rr =
               nf__calloc((size_t)s->topo.n_sw_ports * c.vcs + 1, sizeof *s->net.va_in_rr))))
        goto fail;
    uint32_t w = 1;
    while (w < maxlat + c.nic_delay + c.credit_delay + 4)
        w <<= 1;
    s->net.wheel_mask = w - 1;
    if (!s->net.ports || !s->net.rings || !s->net.oq_ring || !s->net.cands || !s->net.xbar_credit ||
        !s->net.active || !s->topo.owner || !s->src.nics || !s->net.in_mask || !s->net.out_mask ||
        !s->src.next_gen || !s->workers || !s->src.nic_on || !s->src.cal || !s->src.due ||
        !s->src.due_bits || !s->faults.link_state)
        goto fail;
    memcpy(s->faults.link_state, f->link_state,
           f->n_links); /* the routings' tables are made on it */
    for (unsigned th = 0; th < s->n_threads; th++) {
        sim_worker *wk = &s->workers[th];
        wk->act = nf__malloc(((size_t)s->topo.n_sw + 1) * sizeof *wk->act);
        wk->nic_act = nf__malloc(2 * (size_t)s->topo.n_ep * sizeof *wk->nic_act);
        wk->nic_tmp = nf__malloc(2 * (size_t)s->topo.n_ep * sizeof *wk->nic_tmp);
        if ((r->needs_global || r->lookahead) &&
            !(wk->ran = nf__malloc(((size_t)s->topo.n_sw + 1) * sizeof *wk->ran)))
            goto fail;
        wk->wheel = nf__calloc(s->n_threads, sizeof *wk->wheel);
        if (s->net.va_pass &&
            !(wk->va_req = nf__malloc((size_t)NF_MAX_PORTS * c.vcs * sizeof *wk->va_req)))
            goto fail;
        if (!wk->act || !wk->nic_act || !wk->nic_tmp || !wk->wheel) goto fail;
        for (unsigned d = 0; d < s->n_threads; d++)
            if (!(wk->wheel[d] = nf__calloc(w, sizeof *wk->wheel[d]))) goto fail;
        if (r->learns) {
            if (!(wk->learn = nf__calloc(s->n_threads, sizeof *wk->learn))) goto fail;
            for (unsigned d = 0; d < s->n_threads; d++)
                if (!(wk->learn[d] = nf__calloc(w, sizeof *wk->learn[d]))) goto fail;
        }
    }
    /* threads own contiguous ranges of switches with about as many ports each (a Dragonfly's
     * groups are contiguous, so only global links cross) */
    for (nf_node n = 0, th = 0; n < s->topo.n_sw; n++) {
        while (th + 1 < s->n_threads &&
               (uint64_t)f->port_off[n] * s->n_threads >= (uint64_t)(th + 1) * s->topo.n_sw_ports)
            th++;
        s->topo.owner[n] = (uint8_t)th;
        if (s->workers[th].sw_hi == 0) s->workers[th].sw_lo = n;
        s->workers[th].sw_hi = n + 1;
    }
    memset(s->net.ports, 0, (size_t)s->topo.n_ports * s->net.port_stride);
    for (nf_node n = 0; n < f->n_nodes; n++)
        for (unsigned p = 1; p <= f->nports[n]; p++) {
            nf_gport g = nf_port_index(f, n, p);
            sim_port *pp = sim_port_at(s, g);
            sim_pin *pin = sim_pin_of(s, pp);
            pp->node = n;
            nf_node far = f->peer[g]; /* the owner of a CA is the owner of its switch */
            if (far != NF_NONE && far >= s->topo.n_sw) far = f->peer[nf_port_index(f, far, 1)];
            pp->peer_own = far != NF_NONE && far < s->topo.n_sw ? s->topo.owner[far] : 0;
            pp->back =
                f->peer[g] == NF_NONE ? UINT32_MAX : nf_port_index(f, f->peer[g], f->peer_port[g]);
            pp->to_sw = f->peer[g] != NF_NONE && f->peer[g] < f->n_switches;
            nf_link l = f->port_link[g];
            if (l != NF_NONE) pp->lat = (uint8_t)link_latency(&c, f->link_cls[l]);
            *pin = (sim_pin){.back = pp->back,
                             .node = n,
                             .lat = pp->lat,
                             .peer_own = pp->peer_own,
                             .to_sw = pp->to_sw};
        }
    for (uint32_t e = 0; e < 2 * s->topo.n_ep; e++)
        s->src.nics[e].cur = SIM_NO_PKT;
    if ((rc = r->init(&s->routing_ctx, r->data, f, s->faults.link_state, h, &c, diag))) goto fail;
    if (c.port_order == NF_SIM_PORTS_BOOKSIM && s->routing->bs_ports) {
        if (!(s->net.rank = nf__malloc((size_t)s->topo.n_sw_ports + 1)) ||
            !(s->net.unrank = nf__malloc((size_t)s->topo.n_sw_ports + 1)))
            goto fail;
        for (nf_node sw = 0; sw < s->topo.n_sw; sw++) {
            nf_gport g0 = f->port_off[sw];
            s->routing->bs_ports(s->routing_ctx, sw, s->net.rank + g0);
            for (unsigned i = 0; i < f->nports[sw]; i++)
                s->net.unrank[g0 + s->net.rank[g0 + i]] = (uint8_t)i;
        }
    }
    if ((rc = t->init(&s->traffic_ctx, f, s->topo.n_ep, s->topo.ep_ca, c.seed, diag))) goto fail;
    if ((c.ber > 0 || c.switching != NF_SIM_VCT) && (rc = nf__sim_errors_init(s))) goto fail;
    s->src.hot_ep = t->hot ? t->hot(s->traffic_ctx) : UINT32_MAX;
    nf__sim_reset(s);
    *out = s;
    return NF_OK;
fail:
    nf_sim_free(s);
    return rc;
}

static uint32_t uf_find(uint32_t *uf, uint32_t x) {
    while (uf[x] != x)
        x = uf[x] = uf[uf[x]]; /* path halving */
    return x;
}

/* Which endpoints the links can still join, for the packets that would otherwise wait for ever.
 * key[e] is the component of e's rail-0 switch over the switch-to-switch links that are up in
 * state and not marked in down (when given), or n_sw + e when e's own rail-0 cable is down: two
 * endpoints are joined exactly when their keys are equal. A routing that knows which packets can no
 * longer arrive (deliverable: ftable) drops them instead of letting them wait, so for it failed
 * links part nothing: every key is 0. uf has room for n_sw entries. */
static void cut_keys(const nf_sim *s, const uint8_t *state, const uint8_t *down, uint32_t *uf,
                     uint32_t *key) {
    const nf_fabric *f = s->f;
    if (s->routing->deliverable) {
        memset(key, 0, (size_t)s->topo.n_ep * sizeof *key);
        return;
    }
    for (uint32_t i = 0; i < s->topo.n_sw; i++)
        uf[i] = i;
    for (nf_link l = 0; l < f->n_links; l++) {
        nf_node a = f->link_a[l], z = f->link_z[l];
        if (a >= s->topo.n_sw || z >= s->topo.n_sw || state[l] != NF_LINK_UP || (down && down[l]))
            continue;
        a = uf_find(uf, a), z = uf_find(uf, z);
        if (a != z) uf[a > z ? a : z] = a < z ? a : z;
    }
    for (uint32_t e = 0; e < s->topo.n_ep; e++) {
        nf_link l = f->port_link[s->topo.ep_gport[(size_t)e * 2]];
        bool up = state[l] == NF_LINK_UP && !(down && down[l]);
        key[e] = up ? uf_find(uf, s->topo.ep_sw[(size_t)e * 2]) : s->topo.n_sw + e;
    }
}

/* Empties the network: every buffer, queue, event, packet; credits to full; the link states
 * the fabric's. */
void nf__sim_reset(nf_sim *s) {
    s->faults.any_down = false;
    memcpy(s->faults.link_state, s->f->link_state, s->f->n_links);
    for (nf_gport g = 0; g < s->topo.n_ports; g++) {
        sim_port *p = sim_port_at(s, g);
        /* downstream of g: a switch input buffer, or a NIC (never full) */
        int32_t cr = p->to_sw ? (int32_t)s->net.buf_flits : INT32_MAX / 2;
        memset(sim_ivcs(s, p), 0, s->net.n_vcs * sizeof(sim_ivc));
        for (unsigned v = 0; v < s->net.n_vcs; v++)
            sim_ovcs(s, p)[v] = (sim_ovc){.credits = cr};
        p->busy = 0;
        p->shcr = p->to_sw ? (int32_t)s->cfg.shared_flits : 0;
        p->oq_count = p->oq_runs = p->oq_mid = p->link_flits = 0;
        p->rr_in = p->late = 0;
        sim_pin_of(s, p)->rr_vc = sim_pin_of(s, p)->rr_out = 0;
        sim_pin_of(s, p)->vmask = 0;
        nf_link l = s->f->port_link[g];
        p->down = l != NF_NONE && s->faults.link_state[l] != NF_LINK_UP;
        s->faults.any_down |= p->down;
    }
    memset(s->net.xbar_credit, 0, (size_t)s->topo.n_sw * sizeof *s->net.xbar_credit);
    memset(s->net.in_mask, 0, ((size_t)s->topo.n_sw << s->net.mw_shift) * sizeof *s->net.in_mask);
    memset(s->net.out_mask, 0, ((size_t)s->topo.n_sw << s->net.mw_shift) * sizeof *s->net.out_mask);
    memset(s->net.active, 0, s->topo.n_sw);
    for (unsigned t = 0; t < s->n_threads; t++) {
        sim_worker *w = &s->workers[t];
        for (unsigned d = 0; d < s->n_threads; d++)
            for (uint32_t i = 0; i <= s->net.wheel_mask; i++) {
                w->wheel[d][i].n = 0;
                if (w->learn) w->learn[d][i].n = 0;
            }
        w->n_act = w->n_nic_act = w->n_nic_sorted = 0;
        w->n_born = 0;
        w->n_freed = w->n_sarr = w->n_stash = w->n_larr = 0; /* (every packet id is free again) */
        w->lat.n = w->nlat.n = w->mlat.n = w->bglat.n = 0;
        w->hot_flits = 0;
        w->flit_hops = w->unroutable = w->injected = w->delivered = w->acc_flits = 0;
        w->hops_sum = w->minimal = w->n_meas = 0;
        w->dropped = w->dropped_pkts = w->dropped_meas = 0;
        w->n_rpl = 0;
        w->replayed = w->discarded = w->corrupt = w->wasted = w->rx = w->rx_saf = 0;
        w->moved = w->rc = 0;
    }
    memset(s->src.nic_on, 0, 2 * (size_t)s->topo.n_ep);
    if (s->net.snap) memset(s->net.snap, 0, (size_t)s->topo.n_sw_ports * sizeof *s->net.snap);
    if (s->net.va_pass) {
        memset(s->net.va_pass, 0,
               (size_t)s->topo.n_sw_ports * s->net.n_vcs * sizeof *s->net.va_pass);
        memset(s->net.va_rr, 0, (size_t)s->topo.n_sw_ports * s->net.n_vcs * sizeof *s->net.va_rr);
        memset(s->net.va_in_rr, 0,
               (size_t)s->topo.n_sw_ports * s->net.n_vcs * sizeof *s->net.va_in_rr);
    }
    if (s->net.cr_rate) {
        memset(s->net.cr_rate, 0, (size_t)s->topo.n_ports * sizeof *s->net.cr_rate);
        memset(s->net.cr_at, 0, (size_t)s->topo.n_ports * sizeof *s->net.cr_at);
    }
    for (uint32_t e = 0; e < 2 * s->topo.n_ep; e++) {
        sim_nic *n = &s->src.nics[e];
        n->q_head = n->q_count = 0;
        n->cur = SIM_NO_PKT;
        n->cur_sent = 0;
        n->burst_on = n->next_rail = 0;
        n->hold_until = 0;
        n->rr_next = 0;
    }
    s->src.list_pos = 0;
    for (size_t i = 0; i < s->src.n_list; i++)
        s->src.list_arr[i] = UINT64_MAX;
    s->pool.n = s->pool.n_free = 0;
    if (s->mc.left) {
        memset(s->mc.left, 0,
               (((size_t)s->topo.n_sw_ports * s->net.n_vcs) << s->net.mw_shift) *
                   sizeof *s->mc.left);
    }
    s->now = s->tally.injected = s->tally.delivered = s->tally.in_net = s->tally.moved_at =
        s->tally.flit_hops = 0;
    s->par.t0 = 0; /* the cycle count restarts: so does the thread choice's epoch */
    s->tally.unroutable = 0;
    s->meas.n_msg = 0;
    s->meas.win_lo = s->meas.win_hi = UINT64_MAX;
    s->meas.gen_flits = s->meas.acc_flits = s->meas.pkts_left = s->meas.hops_sum = s->meas.minimal =
        s->meas.n_pkts = 0;
    s->meas.lost_flits = s->meas.excluded_msgs = s->meas.hot_flits = 0;
    s->tally.dropped = s->tally.dropped_pkts = 0;
    s->tally.replayed = s->tally.discarded = 0;
    s->meas.corrupt = s->meas.wasted = s->meas.rx = s->meas.rx_saf = 0;
    s->faults.next = 0;
    if (s->meas.ep_cut) cut_keys(s, s->faults.link_state, NULL, s->meas.cut_uf, s->meas.ep_cut);
    nf__rng_seed(&s->src.rng, s->cfg.seed ^ 0x5eed5eed5eedULL);
    if (s->routing->reset) s->routing->reset(s->routing_ctx);
    if (s->err.on) nf__sim_errors_reset(s);
}

/* ---- events --------------------------------------------------------------------------------- */

/* Whether packet p, delivered, went a minimal way (nf_sim_result's minimal_frac). */
static bool went_minimal(const nf_sim *s, const sim_pkt *p) {
    return s->routing->marks_nonmin ? !(p->rs & NF__RS_NONMIN)
                                    : p->hops == nf_hops_sw(s->h, p->src_sw, p->dst_sw);
}

/* A flit reaches its NIC (flits of a packet arrive in order: its tail completes it); with its
 * packet's last, the packet's figures are taken (the timeline's for every packet that counts,
 * the result's for the measured ones). NF_ENOMEM when a latency sample cannot be kept (the run
 * fails rather than report figures without it). */
static int deliver(nf_sim *s, sim_worker *wk, uint32_t id, bool tail, nf_node ca) {
    wk->delivered++;
    bool hot = s->src.hot_ep != UINT32_MAX && s->topo.ca_ep[ca] == s->src.hot_ep;
    if (s->now >= s->meas.win_lo && s->now < s->meas.win_hi) {
        wk->acc_flits++;
        wk->hot_flits += hot;
    }
    if (!tail) return NF_OK;
    sim_pkt *p = &s->pool.pkts[id];
    bool counts = true; /* a multicast copy counts at its group's members only (a shared tree
                         * floods other groups' endpoints too) */
    if (p->flags & SIM_PK_MCAST) {
        counts = nf__sim_is_member(s, p->mgroup, s->topo.ca_ep[ca]);
    }
    if (s->tl.on && counts) { /* the current window of the timeline (opened for every worker) */
        sim_tl_count *c = &wk->tl[s->tl.cur];
        c->packets++;
        c->lat_sum += s->now - p->t_create;
        c->minimal += went_minimal(s, p);
    }
    if (counts && p->msg != UINT32_MAX && (p->msg & NF__SCRIPT_TAG)) {
        if (wk->n_sarr == wk->cap_sarr && NF_GROW(wk->sarr, wk->cap_sarr, wk->n_sarr + 1))
            return NF_ENOMEM;
        wk->sarr[wk->n_sarr++] = p->msg & ~NF__SCRIPT_TAG;
    } else if (p->msg != UINT32_MAX && (p->msg & NF__LIST_TAG)) { /* a listed packet */
        if (wk->n_larr == wk->cap_larr && NF_GROW(wk->larr, wk->cap_larr, wk->n_larr + 1))
            return NF_ENOMEM;
        wk->larr[wk->n_larr++] = p->msg & ~NF__LIST_TAG;
    }
    if (p->flags & SIM_PK_MEASURED) {
        if (sample(&wk->lat, s->now - p->t_create) || sample(&wk->nlat, s->now - p->t_inject))
            return NF_ENOMEM;
        if (s->src.hot_ep != UINT32_MAX && !hot && sample(&wk->bglat, s->now - p->t_create))
            return NF_ENOMEM;
        wk->hops_sum += p->hops;
        wk->minimal += went_minimal(s, p);
        wk->n_meas++;
        /* a message's packets all reach one endpoint, so one thread counts it down */
        if (p->msg != UINT32_MAX && !(p->msg & NF__LIST_TAG) && --s->meas.msg_left[p->msg] == 0 &&
            sample(&wk->mlat, s->now - s->meas.msg_t0[p->msg]))
            return NF_ENOMEM;
    }
    if (wk->n_freed == wk->cap_freed && NF_GROW(wk->freed, wk->cap_freed, wk->n_freed + 1))
        return NF_ENOMEM;
    wk->freed[wk->n_freed++] = id;
    return NF_OK;
}

static int apply_slot(nf_sim *s, sim_worker *wk, sim_wheel_slot *w);

/* The tail of a corrupt copy reaches its NIC (link errors): the copy is thrown away, and its
 * flits that came before, counted delivered as they came, are taken back. */
static int nic_discard(nf_sim *s, sim_worker *wk, uint32_t id) {
    uint64_t before = s->cfg.pkt_flits - 1u;
    wk->delivered -= before; /* (per-cycle counts: the sums wrap back) */
    if (s->now >= s->meas.win_lo && s->now < s->meas.win_hi) wk->acc_flits -= before;
    wk->discarded += s->cfg.pkt_flits;
    if (wk->n_freed == wk->cap_freed && NF_GROW(wk->freed, wk->cap_freed, wk->n_freed + 1))
        return NF_ENOMEM;
    wk->freed[wk->n_freed++] = id;
    return NF_OK;
}

/* A learning routing's estimates in slot w, for ports of thread t: each to its switch. */
static void apply_learn(nf_sim *s, sim_wheel_slot *w) {
    const nf_gport *port_off = s->f->port_off;
    for (size_t i = 0; i < w->n; i++) {
        sim_event e = w->ev[i];
        nf_node n = sim_port_at(s, e.port)->node;
        float value;
        memcpy(&value, &e.pkt, sizeof value);
        s->routing->learn(s->routing_ctx, n, e.port - port_off[n] + 1, e.row, value);
    }
    w->n = 0;
}

/* Applies this cycle's events for thread t's ports, from every thread's wheel in thread order
 * (a learning routing's estimates first). */
static int apply_events(nf_sim *s, unsigned t) {
    uint32_t slot = (uint32_t)(s->now & s->net.wheel_mask);
    if (s->workers[t].learn)
        for (unsigned src = 0; src < s->n_threads; src++)
            apply_learn(s, &s->workers[src].learn[t][slot]);
    for (unsigned src = 0; src < s->n_threads; src++) {
        int rc = apply_slot(s, &s->workers[t], &s->workers[src].wheel[t][slot]);
        if (rc) return rc;
    }
    return NF_OK;
}

static int apply_slot(nf_sim *s, sim_worker *wk, sim_wheel_slot *w) {
    /* what the loop reads of s, in locals: its stores through byte fields could alias s */
    const nf_gport *port_off = s->f->port_off;
    const sim_event *ev = w->ev;
    const size_t n_ev = w->n;
    char *const ports = s->net.ports;
    const size_t stride = s->net.port_stride, ovc_off = s->net.ovc_off, pin_off = s->net.pin_off,
                 ivc_off = s->net.ivc_off;
    const uint32_t n_sw = s->topo.n_sw, ring_cap = s->net.ring_cap, now = (uint32_t)s->now;
    const unsigned W = 1u << s->net.mw_shift;
    sim_qent *const rings = s->net.rings;
    /* the records are scattered over the fabric: events up to pf_port (pf_pkt) fetch the record
     * of the event 16 (the packet of the one 8) ahead; a side spans two lines only with more
     * than 2 VCs */
    const size_t pf_port = s->net.pf && n_ev > 16 ? n_ev - 16 : 0;
    const size_t pf_pkt = s->net.pf && n_ev > 8 ? n_ev - 8 : 0;
    const bool pf = s->net.pf, pf_two = !s->net.sides1;
    for (size_t i = 0; i < n_ev; i++) {
        const uint32_t port = ev[i].port, pkt = ev[i].pkt;
        const unsigned vc = ev[i].vc, flags = ev[i].flags;
        if (i < pf_port) { /* a credit's output side, a flit's input side */
            const sim_event *a = &ev[i + 16];
            const bool cr = a->pkt == SIM_NO_PKT;
            const char *ahead = ports + (size_t)a->port * stride;
            __builtin_prefetch(ahead + (cr ? 0 : pin_off), 1);
            if (pf_two) __builtin_prefetch(ahead + (cr ? pin_off : stride) - 1, 1);
        }
        if (i < pf_pkt) { /* a head is routed, a tail delivered: its packet */
            const sim_event *a = &ev[i + 8];
            if (a->pkt != SIM_NO_PKT && a->flags & (SIM_FL_HEAD | SIM_FL_TAIL))
                sim_prefetch_pkt(s, a->pkt);
        }
        char *rec = ports + (size_t)port * stride;
        if (pkt == SIM_NO_PKT) { /* a credit for output port, VC vc */
            sim_port *p = (sim_port *)(void *)rec;
            nf_node n = p->node;
            if (s->net.cr_rate)
                nf__sim_rate_credit(&s->net.cr_rate[port], &s->net.cr_at[port], s->now,
                                    s->cfg.preaware_cycles, 1);
            if (flags & 1)
                p->shcr++;
            else
                ((sim_ovc *)(void *)(rec + ovc_off))[vc].credits++;
            if (n < n_sw) sim_wake(s, wk, n);
            continue;
        }
        if (__builtin_expect(flags & SIM_FL_NAK, 0)) { /* a copy to send again (link errors) */
            if (wk->n_rpl == wk->cap_rpl && NF_GROW(wk->rpl, wk->cap_rpl, wk->n_rpl + 1))
                return NF_ENOMEM;
            wk->rpl[wk->n_rpl++] = (sim_replay){.port = port, .pkt = pkt, .vc = (uint8_t)vc};
            continue;
        }
        sim_pin *p = (sim_pin *)(void *)(rec + pin_off);
        nf_node n = p->node;
        if (n >= n_sw) { /* arrived at a NIC: consumed at once */
            int rc = __builtin_expect(flags & SIM_FL_BAD, 0)
                         ? nic_discard(s, wk, pkt)
                         : deliver(s, wk, pkt, flags & SIM_FL_TAIL, n);
            if (rc) return rc;
            continue;
        }
        sim_ivc *v = &((sim_ivc *)(void *)(rec + ivc_off))[vc];
        if (flags & SIM_FL_HEAD || !v->qn) {
            sim_qent *q = rings + ((size_t)port * s->net.n_vcs + vc) * ring_cap;
            uint32_t at = v->head + v->qn;
            q[at >= ring_cap ? at - ring_cap : at] = (sim_qent){.pkt = pkt, .t_arrive = now};
            if (v->qn++ == 0) {
                if (pf) sim_prefetch_pkt(s, pkt); /* its router routes it this cycle */
                v->head_pkt = pkt;
                v->out = 0;
            }
        }
        if (flags & SIM_FL_HEAD && v->count == 0) /* at the head now */
            v->ready_at = now + s->cfg.router_delay;
        else if (v->count == 0 && s->cfg.body_delay) /* a body flit, its packet under way */
            v->ready_at = now + s->cfg.body_delay;
        if (!p->vmask) sim_port_set(s->net.in_mask, n, port - port_off[n], W);
        if (flags & SIM_FL_SHARED) v->sh++;
        if (v->count++ == 0) p->vmask |= (uint16_t)(1u << vc);
        if (s->err.on && p->to_sw) {
            int rc = nf__sim_err_arrive(s, wk, ev[i], v);
            if (rc) return rc;
        }
        sim_wake(s, wk, n);
    }
    w->n = 0;
    return NF_OK;
}

/* ---- the cycle loop ------------------------------------------------------------------------- */

int nf__sim_cmp_u32(const void *a, const void *b) {
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return x < y ? -1 : x > y;
}

/* The sources: the messages of this cycle generated, in endpoint order (one random stream). A
 * Bernoulli source is visited only in the cycle of its next message; bursty ones every cycle. */
static int gen_phase(nf_sim *s) {
    int rc;
    bool cut = false;
    while (s->faults.next < s->faults.n && s->faults.ev[s->faults.next].at <= s->now) {
        const sim_fail_ev *e = &s->faults.ev[s->faults.next++];
        s->faults.link_state[e->link] = e->state; /* the simulator's copy, never the fabric */
        const nf_fabric *f = s->f;
        sim_port_at(s, nf_port_index(f, f->link_a[e->link], f->link_pa[e->link]))->down = e->state;
        sim_port_at(s, nf_port_index(f, f->link_z[e->link], f->link_pz[e->link]))->down = e->state;
        s->faults.any_down |= e->state == NF_LINK_DOWN;
        cut = true;
    }
    if (cut && s->scr.routes.n) { /* the source routes found are of links gone by */
        nf__u64map_fini(&s->scr.routes);
        nf__u64map_init(&s->scr.routes);
    }
    if (cut && s->meas.ep_cut) /* from this cycle's messages */
        cut_keys(s, s->faults.link_state, NULL, s->meas.cut_uf, s->meas.ep_cut);
    for (unsigned t = 0; t < s->n_threads; t++) { /* the packets delivered this cycle are free */
        sim_worker *wk = &s->workers[t];
        for (size_t i = 0; i < wk->n_freed; i++)
            s->pool.free_ids[s->pool.n_free++] = wk->freed[i];
        wk->n_freed = 0;
    }
    /* packet ids for this cycle's multicast copies, or for the copies sent again after link
     * errors (one a switch port at most), taken in worker order */
    if (s->mc.n_groups || s->err.on)
        for (unsigned t = 0; t < s->n_threads; t++) {
            sim_worker *wk = &s->workers[t];
            size_t want =
                (s->mc.n_groups ? (size_t)s->net.n_vcs * (64u << s->net.mw_shift) * 2 : 0) +
                (s->err.on ? (size_t)s->topo.n_sw_ports : 0);
            if (wk->cap_stash < want && NF_GROW(wk->stash, wk->cap_stash, want)) return NF_ENOMEM;
            while (wk->n_stash < want) {
                uint32_t id = nf__sim_new_pkt(s);
                if (id == SIM_NO_PKT) return NF_ENOMEM;
                wk->stash[wk->n_stash++] = id;
            }
        }
    for (unsigned t = 0; s->src.list && t < s->n_threads; t++) { /* listed packets arrived */
        sim_worker *wk = &s->workers[t];
        for (size_t i = 0; i < wk->n_larr; i++)
            s->src.list_arr[wk->larr[i]] = s->now;
        wk->n_larr = 0;
    }
    if (s->scr.on) { /* scripted arrivals in thread order (counting is order-free), releases */
        size_t n = 0;
        for (unsigned t = 0; t < s->n_threads; t++) {
            sim_worker *wk = &s->workers[t];
            if (n + wk->n_sarr > s->scr.cap_arrivals &&
                NF_GROW(s->scr.arrivals, s->scr.cap_arrivals, n + wk->n_sarr))
                return NF_ENOMEM;
            if (wk->n_sarr)
                memcpy(s->scr.arrivals + n, wk->sarr, wk->n_sarr * sizeof *s->scr.arrivals);
            n += wk->n_sarr;
            wk->n_sarr = 0;
        }
        const nf__script_send *sends;
        size_t n_sends;
        if ((n && (rc = nf__script_arrivals(s->scr.script, s->now, s->scr.arrivals, n))) ||
            (rc = nf__script_release(s->scr.script, s->now, &sends, &n_sends)))
            return rc;
        for (size_t i = 0; i < n_sends; i++) {
            const nf__script_send *x = &sends[i];
            if (x->group != UINT32_MAX && s->mc.refused && s->mc.refused[x->group]) {
                /* no table room: a unicast copy to every other member endpoint, in turn */
                for (uint32_t k = s->mc.grp_off[x->group]; k < s->mc.grp_off[x->group + 1]; k++)
                    if (s->mc.grp_ep[k] != x->from &&
                        (rc = nf__sim_emit(s, x->from, s->mc.grp_ep[k], NF_SIM_RAIL0, x->npkts,
                                           x->tag, UINT32_MAX, false)))
                        return rc;
                continue;
            }
            if ((rc = nf__sim_emit(s, x->from, x->to, x->rail, x->npkts, x->tag, x->group,
                                   x->srcroute)))
                return rc;
        }
    }
    return nf__sim_sources_phase(s);
}

/* The parallel part of a cycle, for thread id of nth running the n_threads shares (called in a
 * parallel region, or alone with id 0 and nth 1: the barriers then bind to no team). */
static void cycle_shares(nf_sim *s, unsigned id, unsigned nth, int *nic_rc) {
    unsigned T = s->n_threads;
    for (unsigned t = id; t < T; t += nth) /* all shares, whatever threads came */
        s->workers[t].rc = apply_events(s, t);
#pragma omp barrier
#pragma omp master
    {
        bool ok = true;
        for (unsigned t = 0; t < T; t++)
            ok &= s->workers[t].rc == NF_OK;
        *nic_rc = ok ? gen_phase(s) : NF_OK;
    }
#pragma omp barrier
    if (*nic_rc == NF_OK)
        for (unsigned t = id; t < T; t += nth) {
            sim_worker *wt = &s->workers[t];
            if (wt->rc == NF_OK && s->err.on) wt->rc = nf__sim_replay_phase(s, t);
            if (wt->rc == NF_OK && (wt->rc = nf__sim_send_phase(s, t)) == NF_OK)
                wt->rc = nf__sim_router_phase(s, t);
        }
    if (s->net.snap) { /* every router has run: the snapshot for the next cycle */
#pragma omp barrier
        for (unsigned t = id; t < T; t += nth)
            nf__sim_snap_phase(s, t);
    }
}

/* An epoch of the thread choice: long enough that a busy machine's time slices (a few ms) even
 * out, short enough that a wrong choice costs little. */
#define SIM_EPOCH_NS 10000000ull
#define SIM_RUN_MAX 128 /* epochs between probes, at most */

static uint64_t mono_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Idle processors needed, per thread beyond the first, for a probe of all threads to be
 * worth its cost, and the shortest stretch of one thread over which the idle time is read
 * (/proc/stat counts in ticks of 10 ms). */
#define SIM_IDLE_NEED 0.5
#define SIM_IDLE_MIN_NS 50000000ull

/* Whether a probe of all threads may pay, after a stretch on one: the processors this process
 * may use stood idle for at least SIM_IDLE_NEED of a processor per other thread, on average
 * over the stretch. When the stretch is too short or the idle time cannot be read, yes (the
 * probe decides). Starts the next stretch at now. */
static bool par_idle_enough(nf_sim *s, uint64_t now) {
    double idle;
    if (!nf__cpus_idle_seconds(&idle)) return true;
    bool have = s->par.idle_t0 && now - s->par.idle_t0 >= SIM_IDLE_MIN_NS;
    double free_cpus = have ? (idle - s->par.idle_s0) / (1e-9 * (double)(now - s->par.idle_t0)) : 0;
    s->par.idle_t0 = now, s->par.idle_s0 = idle;
    return !have || free_cpus >= SIM_IDLE_NEED * (double)(s->n_threads - 1);
}

/* The thread choice's start, before the first cycle with several shares: with fewer
 * processors free of other processes than threads, one thread, for a stretch long enough to
 * read the idle time over; else all (par_epoch's probes then correct a wrong guess). */
static void par_start(nf_sim *s) {
    s->par.started = true;
    int free_cpus = nf__cpus_free_now();
    if (free_cpus < 0 || (unsigned)free_cpus >= s->n_threads) return;
    s->par.use = s->par.use_last = 1, s->par.phase = 2;
    s->par.run_len = s->par.run_left = (unsigned)(SIM_IDLE_MIN_NS / SIM_EPOCH_NS);
    (void)par_idle_enough(s, mono_ns());
}

/* After a cycle with several shares: the epoch's end moves the choice on. A probe of all the
 * threads, then of one, then the faster runs for run_len epochs; run_len doubles (to
 * SIM_RUN_MAX) while the same way wins and starts again at 1 when the other does. One thread
 * is kept only when it was at least 10% faster: threads are the way on a quiet machine. When
 * one runs and the machine had no processors idle for the others, the probe of all is left
 * out and one goes on as if it had won again: on a busy machine a probe of all costs the
 * most, a time slice of the other process's at each barrier. */
static void par_epoch(nf_sim *s) {
    uint64_t now = mono_ns();
    if (!s->par.t0) {
        s->par.t0 = now, s->par.c0 = s->now;
        return;
    }
    /* a probe of the way that lost the last choice is a quarter epoch: it costs less */
    bool lost = s->par.use_last && ((s->par.phase == 0 && s->par.use_last == 1) ||
                                    (s->par.phase == 1 && s->par.use_last > 1));
    if (now - s->par.t0 < (lost ? SIM_EPOCH_NS / 4 : SIM_EPOCH_NS)) return;
    double ns = (double)(now - s->par.t0) / (double)(s->now - s->par.c0 ? s->now - s->par.c0 : 1);
    s->par.t0 = now, s->par.c0 = s->now;
    if (s->par.phase == 0) {
        s->par.ns_all = ns;
        s->par.phase = 1, s->par.use = 1;
        s->par.idle_t0 = 0;
        (void)par_idle_enough(s, now); /* the stretch of one starts */
    } else if (s->par.phase == 1) {
        s->par.ns_one = ns;
        unsigned want = s->par.ns_one < 0.9 * s->par.ns_all ? 1 : s->n_threads;
        s->par.run_len = want == s->par.use_last ? s->par.run_len * 2 : 1;
        if (s->par.run_len > SIM_RUN_MAX) s->par.run_len = SIM_RUN_MAX;
        s->par.use_last = want;
        s->par.use = want, s->par.run_left = s->par.run_len, s->par.phase = 2;
    } else if (--s->par.run_left == 0) {
        if (s->par.use == 1 && !par_idle_enough(s, now)) {
            s->par.run_len = s->par.run_len * 2 > SIM_RUN_MAX ? SIM_RUN_MAX : s->par.run_len * 2;
            s->par.run_left = s->par.run_len;
            return;
        }
        s->par.phase = 0, s->par.use = s->n_threads;
    }
}

/* One cycle: events applied, messages generated, NICs and routers. With several threads, each
 * applies its events, then runs its NICs and routers, in parallel; the generation (one random
 * stream) runs on one between two barriers. Every thread writes
 * only its own state and its own wheels, and what a router does depends on its own state only,
 * so the results are the same for every number of threads, and for every number of threads
 * running the shares (par_epoch picks it). */
int nf__sim_cycle(nf_sim *s) {
    int rc = NF_OK;
    if (s->cfg.pass_clock == NF_SIM_CLOCK_EVERY) {
        /* BookSim2's routers add the speedup to what they carry every cycle and take a step per
         * whole one, in doubles as here; its cycle c is cycle c + 1 here (a flit it reads in at c
         * is here at c + 1), so cycle 0 has whole passes and carries nothing */
        unsigned n = (unsigned)s->cfg.speedup;
        if (s->now == 0) {
            s->net.pass_frac = 0;
        } else {
            n = 0;
            s->net.pass_frac += s->cfg.speedup;
            while (s->net.pass_frac >= 1.0)
                n++, s->net.pass_frac -= 1.0;
        }
        s->net.cyc_passes = n;
    }
    s->net.pf =
        (size_t)s->topo.n_sw_ports * s->net.port_stride + (size_t)s->pool.n * sizeof(sim_pkt) >
        SIM_L2_BYTES;
    if (s->n_threads == 1) {
        if ((rc = apply_events(s, 0)) || (rc = gen_phase(s)) ||
            (s->err.on && (rc = nf__sim_replay_phase(s, 0))) || (rc = nf__sim_send_phase(s, 0)) ||
            (rc = nf__sim_router_phase(s, 0)))
            return rc;
        if (s->net.snap) nf__sim_snap_phase(s, 0);
    } else {
        int nic_rc = NF_OK;
        if (!s->par.started) par_start(s);
        unsigned use = s->par.use;
        if (use > 1) {
#pragma omp parallel num_threads(use)
            cycle_shares(s, (unsigned)omp_get_thread_num(), (unsigned)omp_get_num_threads(),
                         &nic_rc);
        } else {
            cycle_shares(s, 0, 1, &nic_rc);
        }
        if (nic_rc) return nic_rc;
        for (unsigned t = 0; t < s->n_threads; t++)
            if (s->workers[t].rc) return s->workers[t].rc;
    }
    for (unsigned t = 0; t < s->n_threads; t++) {
        sim_worker *wk = &s->workers[t];
        s->tally.flit_hops += wk->flit_hops;
        s->tally.unroutable += wk->unroutable;
        s->tally.injected += wk->injected;
        s->tally.in_net += wk->injected;
        s->tally.delivered += wk->delivered;
        s->tally.in_net -= wk->delivered;
        s->meas.acc_flits += wk->acc_flits;
        s->meas.hot_flits += wk->hot_flits;
        wk->hot_flits = 0;
        s->meas.hops_sum += wk->hops_sum;
        s->meas.minimal += wk->minimal;
        s->meas.n_pkts += wk->n_meas;
        s->meas.pkts_left -= wk->n_meas + wk->dropped_meas;
        s->tally.in_net -= wk->dropped;
        s->tally.dropped += wk->dropped;
        s->tally.dropped_pkts += wk->dropped_pkts;
        wk->dropped = wk->dropped_pkts = wk->dropped_meas = 0;
        if (s->err.on) {
            s->tally.in_net += wk->replayed - wk->discarded;
            s->tally.replayed += wk->replayed;
            s->tally.discarded += wk->discarded;
            s->meas.corrupt += wk->corrupt;
            s->meas.wasted += wk->wasted;
            s->meas.rx += wk->rx;
            s->meas.rx_saf += wk->rx_saf;
            wk->replayed = wk->discarded = wk->corrupt = wk->wasted = wk->rx = wk->rx_saf = 0;
        }
        if (wk->moved) s->tally.moved_at = s->now;
        wk->flit_hops = wk->unroutable = wk->injected = wk->delivered = wk->acc_flits = 0;
        wk->hops_sum = wk->minimal = wk->n_meas = 0;
        wk->moved = 0;
    }
    s->now++;
    if (s->n_threads > 1) par_epoch(s);
    return NF_OK;
}

int nf_sim_step(nf_sim *s, uint64_t n) {
    for (uint64_t i = 0; i < n; i++) {
        int rc = nf__sim_cycle(s);
        if (rc) return rc;
    }
    return NF_OK;
}

void nf_sim_link_flits(const nf_sim *s, uint32_t *flits) {
    for (nf_gport g = 0; g < s->topo.n_ports; g++) {
        const sim_port *p = sim_port_at(s, g);
        flits[g] = g < s->topo.n_sw_ports && p->to_sw ? p->link_flits : 0;
    }
}

void nf_sim_get_counts(const nf_sim *s, nf_sim_counts *out) {
    out->injected = s->tally.injected;
    out->delivered = s->tally.delivered;
    out->in_flight = s->tally.in_net;
    out->dropped = s->tally.dropped;
    out->replayed = s->tally.replayed;
    out->discarded = s->tally.discarded;
    out->cycle = s->now;
}

int nf_sim_link_at(nf_sim *s, nf_link l, uint64_t cycle, bool up) {
    if (l >= s->f->n_links) return NF_EINVAL;
    if (s->faults.n == s->faults.cap && NF_GROW(s->faults.ev, s->faults.cap, s->faults.n + 1))
        return NF_ENOMEM;
    size_t i = s->faults.n++; /* kept in cycle order, the order given among equals */
    while (i && s->faults.ev[i - 1].at > cycle) {
        s->faults.ev[i] = s->faults.ev[i - 1];
        i--;
    }
    s->faults.ev[i] =
        (sim_fail_ev){.at = cycle, .link = l, .state = up ? NF_LINK_UP : NF_LINK_DOWN};
    return NF_OK;
}

/* The links down at some cycle of a run are those down now and those set to fail then: marked
 * in down, the components of what is left taken (cut_keys). Two switches with endpoints join
 * their endpoints when both their cut component and their component by the distances
 * (nf_hops_components) agree: the switches are sorted by that pair, and the ordered pairs of
 * endpoints on different switches are all of them, T^2 - sum of per-switch squares, less those
 * within one class, sum over classes of (class^2 - its switches' squares): T^2 - sum of class
 * squares. The example is the first such pair in switch order: the first switch with endpoints
 * and the first after it in another class. Endpoints whose own cable is down pair with no one.
 * O(S log S + links). */
int nf_sim_unroutable_pairs(const nf_sim *s, uint64_t *pairs, nf_node *src, nf_node *dst) {
    *pairs = 0;
    *src = *dst = NF_NONE;
    const nf_fabric *f = s->f;
    uint32_t S = s->topo.n_sw;
    uint32_t *cnt = nf__calloc((size_t)S + 1, sizeof *cnt), *first = NULL, *sws = NULL;
    uint32_t *uf = NULL, *key = NULL, *label = NULL;
    uint64_t *cls = NULL;
    uint8_t *down = NULL;
    int rc = NF_ENOMEM;
    if (!cnt || !(first = nf__malloc(((size_t)S + 1) * sizeof *first)) ||
        !(sws = nf__malloc(((size_t)S + 1) * sizeof *sws)) ||
        !(uf = nf__malloc(((size_t)S + 1) * sizeof *uf)) ||
        !(label = nf__malloc(((size_t)S + 1) * sizeof *label)) ||
        !(cls = nf__malloc(((size_t)S + 1) * sizeof *cls)) ||
        !(key = nf__malloc(((size_t)s->topo.n_ep + 1) * sizeof *key)) ||
        !(down = nf__calloc((size_t)f->n_links + 1, 1)))
        goto out;
    for (size_t i = 0; i < s->faults.n; i++)
        if (s->faults.ev[i].state == NF_LINK_DOWN) down[s->faults.ev[i].link] = 1;
    cut_keys(s, f->link_state, down, uf, key); /* the next run begins with the fabric's */
    nf_hops_components(s->h, label);
    uint32_t n = 0, alone = 0, first_alone = 0;
    for (uint32_t e = 0; e < s->topo.n_ep; e++) {
        nf_node sw = s->topo.ep_sw[(size_t)e * 2];
        if (key[e] >= S) {
            if (!alone++) first_alone = e;
        } else if (!cnt[sw]++) {
            first[sw] = e, sws[n++] = sw;
        }
    }
    /* a switch's class: its cut key (< S) and its distance label (< S) in one number */
#define CLASS_OF(i) ((uint64_t)key[first[sws[i]]] * S + label[sws[i]])
    for (uint32_t i = 1; i < n && *src == NF_NONE; i++)
        if (CLASS_OF(i) != CLASS_OF(0))
            *src = s->topo.ep_ca[first[sws[0]]], *dst = s->topo.ep_ca[first[sws[i]]];
    if (*src != NF_NONE) { /* some pair is parted: count them by class */
        uint64_t T = 0, sq = 0;
        for (uint32_t i = 0; i < n; i++)
            cls[i] = CLASS_OF(i), T += cnt[sws[i]];
        if ((rc = nf__sort_ids_by_key(sws, cls, n))) goto out;
        for (uint32_t i = 0; i < n;) {
            uint64_t c = CLASS_OF(i), sum = 0;
            for (; i < n && CLASS_OF(i) == c; i++)
                sum += cnt[sws[i]];
            sq += sum * sum;
        }
        *pairs = T * T - sq;
    }
#undef CLASS_OF
    if (alone) { /* every ordered pair with an end cut off */
        uint64_t E = s->topo.n_ep, joined = E - alone;
        *pairs += E * (E - 1) - joined * (joined ? joined - 1 : 0);
        if (*src == NF_NONE && E > 1)
            *src = s->topo.ep_ca[first_alone], *dst = s->topo.ep_ca[first_alone ? 0 : 1];
    }
    rc = NF_OK;
out:
    nf__free(cnt), nf__free(first), nf__free(sws), nf__free(uf), nf__free(key);
    nf__free(label), nf__free(cls), nf__free(down);
    return rc;
}

/* ---- the script's API (script.c keeps the messages) ---------------------------------------- */

/* Bytes a packet carries. */
static uint64_t payload(const nf_sim *s) { return (uint64_t)s->cfg.flit_bytes * s->cfg.pkt_flits; }

static bool two_rails(const nf_sim *s, uint32_t e) {
    return e < s->topo.n_ep && s->topo.ep_rails[e] == 2;
}

int nf_sim_post(nf_sim *s, const nf_sim_msg *m, uint32_t *id) {
    uint32_t E = s->topo.n_ep, recv = 0;
    if (m->kind == NF_SIM_MCAST) {
        if (m->src >= E || nf__sim_group_receivers(s, m->group, m->src, &recv) || !recv ||
            (unsigned)m->rail > NF_SIM_RAIL_DYNAMIC ||
            (m->rail == NF_SIM_RAIL1 && !two_rails(s, m->src)))
            return NF_EINVAL;
    } else if (m->src >= E || m->dst >= E || m->src == m->dst ||
               (unsigned)m->kind > NF_SIM_QUEUE_UNRELIABLE ||
               (unsigned)m->rail > NF_SIM_RAIL_DYNAMIC) {
        return NF_EINVAL;
    }
    if (m->kind == NF_SIM_SHORT && m->bytes > payload(s)) return NF_EINVAL;
    if (m->queue >= NF_SIM_MAX_QUEUES) return NF_EINVAL;
    if (m->source_routed && m->kind == NF_SIM_MCAST) return NF_EINVAL;
    if (m->fsw && (m->bytes > payload(s) || m->kind == NF_SIM_MCAST ||
                   m->kind == NF_SIM_QUEUE_RELIABLE || m->kind == NF_SIM_QUEUE_UNRELIABLE))
        return NF_EINVAL;
    /* at most 2^24 packets a message (512 MiB of 32-byte flits in 1-flit packets), and as many
     * deliveries of a multicast's packets as a 32-bit count holds */
    uint64_t pk = m->bytes ? (m->bytes - 1) / payload(s) + 1 : 1;
    if (pk > (1u << 24) || (m->kind == NF_SIM_MCAST && pk * recv > UINT32_MAX)) return NF_EINVAL;
    if (m->kind != NF_SIM_MCAST && m->rail == NF_SIM_RAIL1 &&
        (!two_rails(s, m->src) || !two_rails(s, m->dst)))
        return NF_EINVAL;
    return nf__script_add(&s->scr.script, m, id);
}

int nf_sim_after(nf_sim *s, uint32_t before, uint32_t after) {
    return nf__script_edge(&s->scr.script, before, after);
}

void nf_sim_script_clear(nf_sim *s) {
    nf__script_free(s->scr.script);
    s->scr.script = NULL;
}

int nf_sim_set_queue_ring(nf_sim *s, uint32_t e, unsigned entries) {
    if (!s || e >= s->topo.n_ep || entries < 1) return NF_EINVAL;
    if (!s->scr.ring_cap &&
        !(s->scr.ring_cap = nf__calloc((size_t)s->topo.n_ep, sizeof *s->scr.ring_cap)))
        return NF_ENOMEM;
    s->scr.ring_cap[e] = entries;
    return NF_OK;
}

int nf_sim_msg_times_of(const nf_sim *s, uint32_t id, nf_sim_msg_times *out) {
    return nf__script_times(s->scr.script, id, out);
}

void nf__sim_script_mark(const nf_sim *s, size_t *n_msg, size_t *n_edge) {
    nf__script_mark(s->scr.script, n_msg, n_edge);
}

void nf__sim_script_truncate(nf_sim *s, size_t n_msg, size_t n_edge) {
    nf__script_truncate(s->scr.script, n_msg, n_edge);
}
