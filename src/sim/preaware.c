/* SPDX-License-Identifier: MIT */
/* Congestion pre-awareness (nf_sim_config.preaware_cycles; the Sunway router senses downstream
 * congestion from the rate its credits come back): the decayed average of credits returned per
 * cycle, the credits a port expects back, a NIC rail's cost and the throttle's gap. The engine
 * (sim.c) keeps the averages (s->net.cr_rate, cr_at) and calls these only when they exist. */
#include "sim/engine.h"

#include <math.h>

double nf__sim_rate_read(double rate, uint64_t at, uint64_t now, unsigned T) {
    if (now <= at) return rate;
    return rate * pow(1.0 - 1.0 / T, (double)(now - at));
}

void nf__sim_rate_credit(double *rate, uint64_t *at, uint64_t now, unsigned T, unsigned c) {
    *rate = nf__sim_rate_read(*rate, *at, now, T) + (double)c / T;
    *at = now;
}

double nf__sim_rate_back(double rate, int64_t owed, unsigned T) {
    double back = rate * T;
    return back < (double)owed ? back : (double)(owed > 0 ? owed : 0);
}

unsigned nf__sim_throttle_gap(double rate, int64_t owed, unsigned pkt, unsigned buf, double frac,
                              unsigned T) {
    if (!(frac > 0) || rate >= frac || 2 * owed < (int64_t)buf) return 0;
    if (rate <= 0) return T;
    double g = ceil((double)pkt * (frac / (rate * rate) - 1.0));
    return g >= (double)T ? T : (unsigned)g;
}

/* Port g's rate now (pre-awareness on). */
double nf__sim_port_rate_now(const nf_sim *s, nf_gport g) {
    return nf__sim_rate_read(s->net.cr_rate[g], s->net.cr_at[g], s->now, s->cfg.preaware_cycles);
}

double nf__sim_port_rate(const nf_sim *s, nf_gport g) {
    return s->net.cr_rate && g < s->topo.n_ports ? nf__sim_port_rate_now(s, g) : 0.0;
}

/* The credits output p is owed: its downstream's slots, every VC's and the shared pool's, whose
 * credits are not back (0 for a port into a NIC, which never runs out). */
int64_t nf__sim_port_owed(const nf_sim *s, sim_port *p) {
    if (!p->to_sw) return 0;
    int64_t owed = (int64_t)s->net.n_vcs * s->net.buf_flits + s->cfg.shared_flits - p->shcr;
    const sim_ovc *ov = sim_ovcs(s, p);
    for (unsigned v = 0; v < s->net.n_vcs; v++)
        owed -= ov[v].credits;
    return owed;
}

/* A NIC rail's pre-awareness cost (fewer is better): the flits its downstream is expected to
 * hold still after T cycles at its rate, plus those queued for it at the NIC. */
double nf__sim_rail_cost(const nf_sim *s, size_t k, uint64_t backlog) {
    nf_gport g = s->topo.ep_gport[k];
    int64_t owed = nf__sim_port_owed(s, sim_port_at(s, g));
    return (double)owed -
           nf__sim_rate_back(nf__sim_port_rate_now(s, g), owed, s->cfg.preaware_cycles) +
           (double)backlog;
}
