/* SPDX-License-Identifier: MIT */
/* Internal: what a routing function and a traffic pattern are, for the engine (sim.c), the
 * routings (simroute.c) and the patterns (traffic.c). */
#ifndef NF_SIM_INTERNAL_H
#define NF_SIM_INTERNAL_H

#include "netfab/sim.h"

/* What a routing may read of the router it runs at: the occupancy of an output port, in flits
 * (flits in its output queue plus the downstream buffer slots whose credits are not back, so
 * credits in flight count as occupied). Only the router's own ports: routers run in parallel. */
typedef struct nf__sim_view {
    uint32_t (*occupancy)(const struct nf__sim_view *v, unsigned port);
    /* For routings with needs_global: the occupancy of port `port` of any switch as it was at
     * the end of the previous cycle (a snapshot: routers run in parallel). */
    uint32_t (*remote)(const struct nf__sim_view *v, nf_node sw, unsigned port);
    const void *sim;
    nf_node sw;
} nf__sim_view;

/* A packet as routing sees it. rs is the routing's word of per-packet state (0 at injection; the
 * routing may keep its decisions there; NF__RS_NONMIN marks a packet sent the long way round).
 * In the deadlock checker view and rs are NULL: the routing then gives every candidate a packet
 * in this state could get, whatever its word and whatever the queues. */
typedef struct nf__sim_pkt {
    nf_node dst_ca, dst_sw;
    uint32_t salt; /* per packet random bits, for oblivious choices */
    uint32_t *rs;
    const nf__sim_view *view;
    /* A lookahead call (nf_sim_routing.lookahead): the head is leaving the switch (or NIC) before
     * sw, view reads sw's snapshot, and the routing keeps its choice at sw in *rs. */
    bool ahead;
} nf__sim_pkt;

#define NF__RS_NONMIN 0x80000000u

/* A routing function. route() gives the candidates at switch sw (sw != the destination's
 * switch) for a packet that came in on in_port (a switch port, 1-based) on VC in_vc after hops
 * switch-to-switch links; up to max into out, in preference order; returns their number (0: no
 * way on, the packet is dropped as unroutable and counted). inj_vc_hi: injected packets use VCs
 * 0..inj_vc_hi. */
struct nf_sim_routing {
    const char *name, *summary;
    unsigned min_vcs;
    bool marks_nonmin; /* minimal = not marked NF__RS_NONMIN (else: hops equal the distance) */
    bool needs_global; /* reads view->remote: the engine keeps the snapshot */
    /* Lookahead routing, as BookSim2's with routing_delay 0: as a head leaves a switch (or its
     * NIC) for switch X, route() is called for X (nf__sim_pkt.ahead) with a view of X's
     * occupancy as the snapshot has it; the routing keeps its choice in the packet's word and
     * gives it at X. The engine keeps the snapshot. */
    bool lookahead;
    /* The ports route() gives depend only on the switch, the destination and the link states:
     * not on the packet's salt or word, the queues, the input port, the input VC or the hops
     * (those may choose the VC only). Such a routing is what a forwarding table can hold
     * (nf_sim_routing_to_uft); the others are random or adaptive. */
    bool fixed_ports;
    /* The routing's ways may be missing or circle even with every link up (tables read from a
     * file): the engine asks deliverable for every message, not only once links have failed. */
    bool may_strand;
    /* The routing's BookSim2 counterpart is a Dragonfly routing, which draws the injection VC at
     * random and names the packet's class VC at the ejection port: NF_SIM_INJ_ROUTING is then
     * NF_SIM_INJ_RANDOM and NF_SIM_EJ_ROUTING NF_SIM_EJ_ARRIVAL; else rr and any. */
    bool bs_dragonfly;
    /* With NF_SIM_EJ_ARRIVAL, the VC class (of three) a packet leaves on when its destination hangs
     * off its source's switch: the class the routing gives a packet that stays in its group
     * (BookSim2's ugal: 2; min: 0). */
    uint8_t own_group_class;
    /* What init gets as data: NULL for the registry's routings; a table routing's tables. */
    const void *data;
    /* link_state: the states of f's links the routing goes by (one nf_link_state per link),
     * read at init and at every route call, borrowed for the context's life: the simulator's
     * own copy, which changes during a run as links fail (the deadlock checker passes
     * f->link_state). The fabric itself is never written. */
    int (*init)(void **ctx, const void *data, const nf_fabric *f, const uint8_t *link_state,
                const nf_hops *h, const nf_sim_config *c, nf_diag *diag);
    unsigned (*route)(void *ctx, nf_node sw, unsigned in_port, unsigned in_vc, unsigned hops,
                      const nf__sim_pkt *p, nf_sim_cand *out, unsigned max);
    unsigned (*inj_vc_hi)(void *ctx);
    /* Optional: BookSim2's place of each of switch sw's ports (switch-local, 0-based) in its
     * arbiters, a permutation of 0 .. nports - 1, into rank (port_order booksim). */
    void (*bs_ports)(void *ctx, nf_node sw, uint8_t *rank);
    /* Optional, for a routing that knows its packets' whole way (deterministic tables): false
     * when a packet from switch src_sw can never reach endpoint dst_ca, at its port cabled to
     * switch dst_sw (its rail), under the current link states (link_state of init). The engine then
     * counts it lost at its source (lost_frac), and since such a routing's "no port" means the way
     * is gone, not "wait", it discards a packet its route gives no port (dropped_pkts) and routes
     * again a packet whose cached port has failed. A routing without it: packets with no port wait
     * (unroutable). */
    bool (*deliverable)(void *ctx, nf_node src_sw, nf_node dst_ca, nf_node dst_sw);
    void (*fini)(void *ctx);
    /* A learning routing (learns): routers that learn from their neighbours' estimates, as a
     * Q-routing does. The engine keeps each packet's arrival cycle at the switch it last
     * reached. When a packet's head is first given a way at a switch it reached over a
     * switch-to-switch link (its destination switch too), the engine asks estimate() for that
     * switch's own estimate of the cycles the packet still needs (at the destination switch the
     * routing sees dst_sw == sw) and the row of the upstream switch's table the packet counts in
     * (*row_up, below 2^16), adds the cycles from the packet's arrival upstream to its arrival
     * here, and sends the sum back over the link like a credit: learn() receives it at the
     * upstream switch, for the port the packet left by, credit_delay plus the link's latency
     * later. Both run on the thread that owns the switch they are called for, in an order that
     * does not depend on the threads. reset() returns the learned state to where a run starts;
     * estimate() may return NAN: nothing is sent back for the packet at that switch. memory() tells the learned state's bytes at the switch that keeps the most, and what a
     * table with a row per destination switch would take instead (flat). */
    bool learns;
    float (*estimate)(void *ctx, nf_node sw, unsigned in_port, unsigned in_vc, unsigned hops,
                      const nf__sim_pkt *p, uint32_t *row_up);
    void (*learn)(void *ctx, nf_node sw, unsigned port, uint32_t row, float value);
    void (*reset)(void *ctx);
    void (*memory)(void *ctx, uint64_t *bytes, uint64_t *flat);
};

/* A traffic pattern: the destination endpoint (index among endpoints 0..E-1) of a packet from
 * endpoint src; rnd gives uniform 64-bit numbers. init may precompute (a permutation). */
struct nf_sim_traffic {
    const char *name, *summary;
    int (*init)(void **ctx, const nf_fabric *f, uint32_t n_ep, const nf_node *ep, uint64_t seed,
                nf_diag *diag);
    uint32_t (*dest)(void *ctx, uint32_t src, uint64_t (*rnd)(void *), void *rnd_ud);
    void (*fini)(void *ctx);
    /* optional: the pattern's hot endpoint, whose packets the result counts apart */
    uint32_t (*hot)(void *ctx);
    /* a destination equal to the source is sent (out of the source's router and back, as
     * BookSim2 does) rather than skipped */
    bool self;
};

/* Congestion pre-awareness (nf_sim_config.preaware_cycles, T). A port's average of credits
 * returned per cycle, kept as (rate, at): read at cycle now it is rate (1 - 1/T)^(now - at);
 * c credits arriving at now make it that plus c / T, as of now. A port sent a credit every k
 * cycles settles, just after each, at (1/T) / (1 - (1 - 1/T)^k), whose mean over the k cycles
 * is 1/k. */
double nf__sim_rate_read(double rate, uint64_t at, uint64_t now, unsigned T);
void nf__sim_rate_credit(double *rate, uint64_t *at, uint64_t now, unsigned T, unsigned c);
/* The credits a port expects back within T cycles at its rate: rate T, at most those it is owed
 * (owed: the downstream slots whose credits are not back). */
double nf__sim_rate_back(double rate, int64_t owed, unsigned T);
/* The cycles a NIC waits after a packet of pkt flits on a rail of rate `rate` owed `owed`
 * credits: 0 unless rate < frac and owed >= buf / 2 (half a VC buffer); then
 * ceil(pkt (frac / rate^2 - 1)), at most T (T when rate is 0): it sends at rate x rate / frac,
 * the rate its credits come back scaled down by how far that is below frac. */
unsigned nf__sim_throttle_gap(double rate, int64_t owed, unsigned pkt, unsigned buf, double frac,
                              unsigned T);
/* Adaptive choice with pre-awareness: a VC of room `room` on a port expecting `back` credits
 * within T cycles beats the best so far (best_room, best_back) when its room plus back is more,
 * or equal with more room; the first candidate wins the remaining ties. */
static inline bool nf__sim_preaware_better(int32_t room, double back, int32_t best_room,
                                           double best_back) {
    double sc = room + back, best = best_room + best_back;
    return sc > best || (sc == best && room > best_room);
}
/* The current rate of global port g (0 without pre-awareness), for the tests. */
double nf__sim_port_rate(const nf_sim *s, nf_gport g);

/* For coll.c, the collectives built on the simulator's API: its configuration (as made,
 * out_buf resolved), a multicast group's receivers (NF_EINVAL unless src is a member of group g),
 * and the script's mark and truncation (script.h). */
const nf_sim_config *nf__sim_config(const nf_sim *s);
int nf__sim_group_receivers(const nf_sim *s, uint32_t g, uint32_t src, uint32_t *receivers);
void nf__sim_script_mark(const nf_sim *s, size_t *n_msg, size_t *n_edge);
void nf__sim_script_truncate(nf_sim *s, size_t n_msg, size_t n_edge);

/* The configuration a routing is asked under outside the simulator (the deadlock checker, its
 * tables, a trace): *cfg, or the defaults when cfg is NULL, into *c; NF_EINVAL (reason in diag)
 * when its VCs are fewer than r needs or more than NF_SIM_MAX_VCS (simtable.c). */
int nf__sim_routing_config(const nf_sim_routing *r, const nf_sim_config *cfg, nf_sim_config *c,
                           nf_diag *diag);

/* The groups of Dragonfly f (*groups: the largest group number + 1), or NF_EINVAL (the reason
 * in diag, naming routing) when a switch has none or no link is global (dfroute.c). */
int nf__sim_dragonfly_groups(const nf_fabric *f, const char *routing, uint32_t *groups,
                             nf_diag *diag);
/* Each switch port cabled to an endpoint gets the endpoint's place among the switch's endpoints
 * in port order (slot, one entry per global port, the others left as they are), and each switch
 * its number of endpoints (nhost, optional), both at most 255; returns the most a switch has. */
unsigned nf__sim_host_slots(const nf_fabric *f, uint8_t *slot, uint8_t *nhost);

/* The Dragonfly routings (dfroute.c). */
extern const nf_sim_routing nf__sim_dfmin, nf__sim_dfval, nf__sim_ugal_l, nf__sim_ugal_lt,
    nf__sim_ugal_g, nf__sim_par;
/* BookSim2's dragonflynew UGAL (dfroute.c). */
extern const nf_sim_routing nf__sim_ugal_bs;
extern const nf_sim_routing nf__sim_dfmin_bs;
/* Q-adaptive, the learning Dragonfly routing (qroute.c). */
extern const nf_sim_routing nf__sim_qadapt;
extern const nf_sim_routing nf__sim_qadapt_nf;

#endif
