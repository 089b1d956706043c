/* SPDX-License-Identifier: MIT */
/* Runs (sim.h): a load point from an empty network (warm-up, measurement window, drain) and
 * its figures, the timeline of windows, a script's run to its end; the deadlock watchdog. The
 * cycle itself is sim.c's (nf__sim_cycle). */
#include "sim/engine.h"

#include "netfab/simset.h"
#include "sim/script.h"

#include "util/mem.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* Mean and 99th percentile (the ceil(0.99 n)-th smallest) of the samples: by counting when the
 * largest is below 2^24 cycles (millions of samples in linear time), else by sorting. */
static int stats(sim_sampler *sm, double *mean, double *p99) {
    *mean = *p99 = 0;
    if (!sm->n) return NF_OK;
    uint64_t sum = 0;
    uint32_t mx = 0;
    for (size_t i = 0; i < sm->n; i++) {
        sum += sm->v[i];
        if (sm->v[i] > mx) mx = sm->v[i];
    }
    *mean = (double)sum / (double)sm->n;
    size_t k = (size_t)ceil(0.99 * (double)sm->n);
    k = k ? k - 1 : 0; /* 0-based rank */
    if (mx < (1u << 24)) {
        uint32_t *cnt = nf__calloc((size_t)mx + 1, sizeof *cnt);
        if (!cnt) return NF_ENOMEM;
        for (size_t i = 0; i < sm->n; i++)
            cnt[sm->v[i]]++;
        size_t below = 0;
        uint32_t v = 0;
        while (below + cnt[v] <= k)
            below += cnt[v++];
        *p99 = v;
        nf__free(cnt);
        return NF_OK;
    }
    qsort(sm->v, sm->n, sizeof *sm->v, nf__sim_cmp_u32);
    *p99 = sm->v[k];
    return NF_OK;
}

static void describe_stuck(const nf_sim *s, char *out, size_t cap) {
    size_t pos = 0;
    out[0] = '\0';
    unsigned shown = 0;
    for (nf_gport g = 0; g < s->topo.n_sw_ports && shown < 4; g++) {
        sim_port *p = sim_port_at(s, g);
        nf_node n = p->node;
        for (unsigned v = 0; v < s->net.n_vcs && shown < 4; v++) {
            const sim_ivc *iv = &sim_ivcs(s, p)[v];
            if (!iv->count) continue;
            unsigned pno = (unsigned)(g - s->f->port_off[n] + 1);
            int k = snprintf(out + pos, cap - pos, "%s%s port %u VC %u (%u flits)",
                             shown ? "; " : "", nf_node_name(s->f, n), pno, v, iv->count);
            if (k < 0 || (size_t)k >= cap - pos) return;
            pos += (size_t)k;
            shown++;
        }
    }
}

static double mono(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Cycles without a flit moving, with flits in the network, after which a run is declared
 * deadlocked: longer than any wait a live network can have (a full timing wheel, a packet's
 * serialisation) with a wide margin. */
static uint64_t stall_cycles(const nf_sim *s) {
    return 2000 + 4 * (uint64_t)(s->net.wheel_mask + 1) + (uint64_t)s->cfg.pkt_flits * 4;
}

/* ---- the timeline ---------------------------------------------------------------------------- */

int nf_sim_set_timeline(nf_sim *s, uint64_t cycles) {
    if (!s) return NF_EINVAL;
    s->tl.cycles = cycles;
    return NF_OK;
}

size_t nf_sim_timeline(const nf_sim *s, const nf_sim_window **out) {
    *out = s->tl.n_win ? s->tl.win : NULL;
    return s->tl.n_win;
}

/* Opens the timeline's next window, at the cycle about to run: the last one's delivered flits
 * taken, the new one's counts zeroed, the run's and every worker's. NF_ENOMEM. */
static int timeline_open(nf_sim *s) {
    sim_timeline *tl = &s->tl;
    size_t w = tl->n_open;
    if (w) tl->sum[w - 1].acc_flits = s->tally.delivered - tl->acc_at;
    if (NF_GROW(tl->sum, tl->cap_sum, w + 1)) return NF_ENOMEM;
    for (unsigned t = 0; t < s->n_threads; t++) {
        sim_worker *wk = &s->workers[t];
        if (NF_GROW(wk->tl, wk->cap_tl, w + 1)) return NF_ENOMEM;
        wk->tl[w] = (sim_tl_count){0};
    }
    tl->sum[w] = (sim_tl_count){0};
    tl->cur = w;
    tl->n_open = w + 1;
    tl->acc_at = s->tally.delivered;
    tl->next = s->now + tl->cycles < s->now ? UINT64_MAX : s->now + tl->cycles;
    return NF_OK;
}

/* Closes the run's timeline (the last window ends with the run, at cycle s->now) and makes its
 * figures from the run's counts and the workers', summed in worker order. NF_ENOMEM. */
static int timeline_close(nf_sim *s) {
    sim_timeline *tl = &s->tl;
    size_t n = tl->n_open;
    if (!n) return NF_OK;
    tl->sum[n - 1].acc_flits = s->tally.delivered - tl->acc_at;
    if (NF_GROW(tl->win, tl->cap_win, n)) return NF_ENOMEM;
    for (size_t w = 0; w < n; w++) {
        sim_tl_count c = tl->sum[w];
        for (unsigned t = 0; t < s->n_threads; t++) {
            const sim_tl_count *k = &s->workers[t].tl[w];
            c.packets += k->packets;
            c.lat_sum += k->lat_sum;
            c.minimal += k->minimal;
        }
        uint64_t at = (uint64_t)w * tl->cycles;
        uint64_t len = s->now - at < tl->cycles ? s->now - at : tl->cycles;
        double denom = (double)s->topo.n_ep * (double)len;
        tl->win[w] =
            (nf_sim_window){.cycle = at,
                            .offered = denom > 0 ? (double)c.gen_flits / denom : 0,
                            .accepted = denom > 0 ? (double)c.acc_flits / denom : 0,
                            .lat_mean = c.packets ? (double)c.lat_sum / (double)c.packets : 0,
                            .minimal_frac = c.packets ? (double)c.minimal / (double)c.packets : 0,
                            .packets = c.packets,
                            .cycles = len};
    }
    tl->n_win = n;
    return NF_OK;
}

/* How much of a run is done: the cycles so far over those so far plus those still to come. To
 * come: the rest of the window, then the drain, estimated as the measured packets in flight
 * over the rate measured packets arrive at (an unsaturated network's drain is about one
 * latency; a saturated one's backlog takes longer), no more than the drain limit allows. The
 * drain limit itself is not counted: a run that needs few of its cycles ends near 100%. */
static double run_fraction(const nf_sim *s, uint64_t end) {
    uint64_t now = s->now, hi = s->meas.win_hi, lo = s->meas.win_lo;
    double left = now < hi ? (double)(hi - now) : 0;
    double drain = (double)(end - (now > hi ? now : hi));
    if (s->meas.pkts_left == 0)
        drain = 0;
    else if (s->meas.n_pkts && now > lo)
        drain =
            fmin(drain, (double)s->meas.pkts_left * (double)(now - lo) / (double)s->meas.n_pkts);
    return (double)now / ((double)now + left + drain);
}

/* nf_sim_run without its timeline's beginning and end. */
static int run_load(nf_sim *s, const nf_sim_injection *inj, const nf_sim_phase *ph,
                    void (*progress)(void *ud, double frac), void *ud, nf_sim_result *out) {
    memset(out, 0, sizeof *out);
    nf_sim_phase p = ph ? *ph
                        : (nf_sim_phase){.warmup = NF_SIM_DEFAULT_WARMUP,
                                         .window = NF_SIM_DEFAULT_WINDOW,
                                         .drain_max = NF_SIM_DEFAULT_DRAIN};
    if (nf_simset_check_all(NF_SIMSET_PHASE, &p, NULL)) return NF_EINVAL;
    nf__sim_reset(s);
    int rc = nf_sim_set_injection(s, inj);
    if (rc) return rc;
    s->meas.win_lo = p.warmup;
    s->meas.win_hi = p.warmup + p.window;
    double t0 = mono();
    uint64_t stall = stall_cycles(s);
    uint64_t end = s->meas.win_hi + p.drain_max;
    while (s->now < end) {
        if (s->tl.on && s->now == s->tl.next && (rc = timeline_open(s))) return rc;
        if ((rc = nf__sim_cycle(s))) return rc;
        if (s->now >= s->meas.win_hi && s->meas.pkts_left == 0) break;
        if (s->tally.in_net && s->now - s->tally.moved_at > stall) {
            out->deadlock = true;
            describe_stuck(s, out->stuck, sizeof out->stuck);
            break;
        }
        if (progress && (s->now & 1023) == 0) progress(ud, run_fraction(s, end));
    }
    if (progress && !out->deadlock) progress(ud, 1.0);
    out->cycles = s->now;
    double denom = (double)s->topo.n_ep * (double)p.window;
    out->offered = (double)s->meas.gen_flits / denom;
    out->dropped_pkts = s->tally.dropped_pkts;
    out->excluded_msgs = s->meas.excluded_msgs;
    out->lost_frac = s->meas.lost_flits ? (double)s->meas.lost_flits /
                                              (double)(s->meas.lost_flits + s->meas.gen_flits)
                                        : 0.0;
    out->accepted = (double)s->meas.acc_flits / denom;
    /* every thread's samples in the first's (their order does not matter) */
    sim_worker *w0 = &s->workers[0];
    for (unsigned t = 1; t < s->n_threads; t++) {
        sim_sampler *from[4] = {&s->workers[t].lat, &s->workers[t].nlat, &s->workers[t].mlat,
                                &s->workers[t].bglat};
        sim_sampler *to[4] = {&w0->lat, &w0->nlat, &w0->mlat, &w0->bglat};
        for (int k = 0; k < 4; k++) {
            if (!from[k]->n) continue;
            if (NF_GROW(to[k]->v, to[k]->cap, to[k]->n + from[k]->n)) return NF_ENOMEM;
            memcpy(to[k]->v + to[k]->n, from[k]->v, from[k]->n * sizeof *from[k]->v);
            to[k]->n += from[k]->n;
            from[k]->n = 0;
        }
    }
    double dummy;
    if ((rc = stats(&w0->lat, &out->lat_mean, &out->lat_p99)) ||
        (rc = stats(&w0->nlat, &out->net_lat_mean, &dummy)) ||
        (rc = stats(&w0->mlat, &out->msg_lat_mean, &out->msg_lat_p99)) ||
        (rc = stats(&w0->bglat, &out->bg_lat_mean, &out->bg_lat_p99)))
        return rc;
    out->hot_accepted = (double)s->meas.hot_flits / (double)p.window;
    if (s->src.inj.msg_pkts == 1) {
        out->msg_lat_mean = out->lat_mean;
        out->msg_lat_p99 = out->lat_p99;
    }
    out->packets = s->meas.n_pkts;
    out->hops_mean = s->meas.n_pkts ? (double)s->meas.hops_sum / (double)s->meas.n_pkts : 0;
    out->minimal_frac = s->meas.n_pkts ? (double)s->meas.minimal / (double)s->meas.n_pkts : 0;
    out->flit_hops = s->tally.flit_hops;
    out->unroutable = s->tally.unroutable;
    out->corrupt_pkts = s->meas.corrupt;
    out->wasted_flits = s->meas.wasted;
    out->saf_frac = s->meas.rx ? (double)s->meas.rx_saf / (double)s->meas.rx : 0;
    if (s->routing->memory)
        s->routing->memory(s->routing_ctx, &out->state_bytes, &out->state_bytes_flat);
    uint64_t links = 0, sum = 0;
    uint32_t mx = 0;
    for (nf_gport g = 0; g < s->topo.n_sw_ports; g++) {
        const sim_port *pt = sim_port_at(s, g);
        if (!pt->to_sw) continue;
        links++;
        sum += pt->link_flits;
        if (pt->link_flits > mx) mx = pt->link_flits;
    }
    out->link_util_mean = links ? (double)sum / (double)links / (double)p.window : 0;
    out->link_util_max = (double)mx / (double)p.window;
    out->saturated = out->deadlock || s->meas.pkts_left > 0 ||
                     (out->offered > 0 && out->accepted < 0.95 * out->offered);
    out->wall_s = mono() - t0; /* the figures taken too */
    return NF_OK;
}

int nf_sim_run(nf_sim *s, const nf_sim_injection *inj, const nf_sim_phase *ph,
               void (*progress)(void *ud, double frac), void *ud, nf_sim_result *out) {
    s->tl.n_win = s->tl.n_open = 0;
    s->tl.next = 0;
    s->tl.on = s->tl.cycles > 0;
    int rc = run_load(s, inj, ph, progress, ud, out);
    if (rc == NF_OK && s->tl.on) rc = timeline_close(s);
    s->tl.on = false;
    return rc;
}

int nf_sim_run_script(nf_sim *s, uint64_t max_cycles, nf_sim_script_result *out) {
    memset(out, 0, sizeof *out);
    nf__script *sc = s->scr.script;
    nf__sim_reset(s);
    nf_sim_injection none = {0};
    int rc = nf_sim_set_injection(s, &none);
    if (rc) return rc;
    if (!sc) return NF_OK; /* nothing posted: nothing to do */
    uint32_t total = nf__script_count(sc);
    uint32_t *recv = nf__calloc((size_t)total + 1, sizeof *recv);
    if (!recv) return NF_ENOMEM;
    for (uint32_t i = 0; i < total && !rc; i++) { /* the groups may have changed since the post */
        const nf_sim_msg *m = nf__script_msg(sc, i);
        if (m->kind == NF_SIM_MCAST &&
            (nf__sim_group_receivers(s, m->group, m->src, &recv[i]) || recv[i] == 0))
            rc = NF_EINVAL;
    }
    nf__script_params par = {.payload = (uint64_t)s->cfg.flit_bytes * s->cfg.pkt_flits,
                             .msg_cycles = s->cfg.nic_msg_cycles,
                             .short_cycles = s->cfg.nic_short_cycles,
                             .pcie_cycles = s->cfg.nic_pcie_cycles,
                             .pio_bytes = s->cfg.nic_pio_bytes,
                             .n_ep = s->topo.n_ep,
                             .ring_cap = s->scr.ring_cap,
                             .ring_entries = s->cfg.queue_entries,
                             .host_cycles = s->cfg.queue_host_cycles,
                             .backoff = s->cfg.queue_backoff,
                             .msg_host_cycles = s->cfg.host_msg_cycles,
                             .recv_host_cycles = s->cfg.host_recv_cycles,
                             .copy_bytes = s->cfg.host_copy_bytes,
                             .jitter_cycles = s->cfg.host_jitter_cycles,
                             .seed = s->cfg.seed,
                             .engines = s->cfg.nic_engines,
                             .inflight = s->cfg.nic_inflight,
                             .pkt_flits = s->cfg.pkt_flits,
                             .share_ports = s->cfg.nic_share_ports,
                             .mcast_rails = s->mc.rails,
                             .engine_flits = s->cfg.nic_engine_flits,
                             .port_backlog = nf__sim_port_backlog,
                             .ud = s};
    if (!rc) rc = nf__script_begin(sc, &par, recv);
    nf__free(recv);
    if (rc) return rc;
    double t0 = mono();
    uint64_t stall = stall_cycles(s);
    uint64_t flit_hops0 = s->tally.flit_hops, last = 0;
    uint32_t done = 0;
    s->scr.on = true;
    s->scr.n_path = 0; /* (no source-routed packet is left from an earlier run) */
    nf__u64map_fini(&s->scr.routes);
    nf__u64map_init(&s->scr.routes);
    while (s->now < max_cycles) {
        if ((rc = nf__sim_cycle(s))) break;
        if (nf__script_idle(sc, &done, &last) && !s->tally.in_net) break; /* all done, or stuck */
        if (s->now - s->tally.moved_at > stall) {
            if (s->tally.in_net) {
                out->deadlock = true;
                break;
            }
            /* nothing in the network, nothing to release, nothing moving: what is left can
             * never finish (its packets were lost or discarded on failed links) */
            if (!nf__script_waiting(sc)) break;
        }
    }
    s->scr.on = false;
    if (rc) return rc;
    nf__script_idle(sc, &done, &last);
    nf__script_queue_counts(sc, &out->dropped, &out->retries, &out->ring_writes);
    out->max_in_flight = nf__script_max_in_flight(sc);
    out->done = done;
    out->unfinished = !out->deadlock && done + out->dropped < total;
    out->cycles = done + out->dropped == total ? last : s->now;
    out->flit_hops = s->tally.flit_hops - flit_hops0;
    out->wall_s = mono() - t0;
    return NF_OK;
}
