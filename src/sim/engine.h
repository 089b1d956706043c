/* SPDX-License-Identifier: MIT */
/* The simulation engine's state, shared by its files (sim.c: construction, the cycle loop,
 * routers and NICs; replicate.c: multicast replication). Not part of the library's API. */
#ifndef NETFAB_SIM_ENGINE_H
#define NETFAB_SIM_ENGINE_H

#include "sim/sim_internal.h"

#include "util/mem.h"
#include "util/rng.h"

#define NO_PKT UINT32_MAX
#define CACHE_CANDS 6
#define DROP_PORT 0xFF /* an input VC's out_port: its head packet is being discarded */
/* Input VC rings hold (buf + shared) / pkt + 2 packet entries in 16-bit indices. */
#define MAX_BUF_FLITS 60000u
#define CAL 1024u /* slots of the sources' calendar (a power of two) */

/* ---- state ---------------------------------------------------------------------------------- */

typedef struct pkt {
    nf_node src_sw, dst_ca, dst_sw; /* the switches of the rail it travels on */
    uint64_t t_create, t_inject;
    uint32_t msg; /* measured message id, or UINT32_MAX */
    union {
        uint32_t salt;   /* unicast: the routing's random number */
        uint32_t mgroup; /* multicast (PK_MCAST): its group (nf_sim_set_mcast) */
    };
    uint32_t rs;      /* the routing's word */
    uint16_t hops;    /* switch-to-switch links so far */
    uint8_t dst_port; /* the port of dst_sw its destination hangs off */
    uint8_t flags;    /* PK_MEASURED, PK_MCAST */
} pkt;                /* 48 bytes */

enum { PK_MEASURED = 1, PK_MCAST = 2 };

/* An input VC: the flits present, its ring of packet entries (flits of a packet are contiguous
 * in a VC, as an upstream output VC serves one packet at a time, so a ring of packets is the
 * buffer), and the head packet's state. */
typedef struct ivc {
    uint32_t count;    /* flits present */
    uint32_t ready_at; /* the head flit may cross the switch from this cycle (runs are shorter
                        * than 2^32 cycles) */
    uint32_t head_pkt; /* the packet at the ring's head, when qn > 0 */
    uint16_t head, qn; /* ring of packet entries: first, number */
    uint16_t out;      /* flits of the head packet that have left */
    uint16_t sh;       /* flits held in the port's shared pool */
    uint8_t out_port;  /* 0: no output VC yet */
    uint8_t out_vc;
    uint8_t ncand; /* candidates cached in cands (0: not routed yet; more than CACHE_CANDS:
                    * routed again at each try) */
    uint8_t pad_;
} ivc;

typedef struct ovc {
    int32_t credits; /* free slots downstream; ejection ports never run out */
    uint8_t busy;    /* held by a packet until its tail crosses the switch */
} ovc;

/* A run of flits in an output queue: n consecutive flits of one packet (on output VC vc); the
 * first carries FL_HEAD and the last FL_TAIL if the run's flags have them, all FL_SHARED if. */
typedef struct run {
    uint32_t pkt;
    uint8_t vc, flags;
    uint16_t n;
} run;

/* A port's record; its V input VCs and V output VCs follow it in the same block. The output
 * queue (switch ports) is a queue of runs: the first (hd) and the last (tl) live here, the ones
 * between in the port's ring of the oq array, so a queue of one or two packets (the usual case)
 * is served without leaving the record. */
typedef struct port {
    nf_gport back;       /* the global port at the other end of its link, or UINT32_MAX */
    nf_node node;        /* its node */
    uint32_t occ;        /* flits in its input VCs */
    int32_t shcr;        /* free slots in the downstream port's shared pool */
    uint32_t oq_count;   /* flits in the output queue */
    uint32_t oq_runs;    /* runs in it: hd, then oq_runs - 2 in the ring from oq_mid, then tl */
    uint32_t oq_mid;     /* the ring's first */
    uint32_t link_flits; /* flits sent in the measurement window (to switches) */
    run hd, tl;
    uint8_t lat;      /* latency of its link, both ways */
    uint8_t to_sw;    /* its link leads to a switch */
    uint8_t rr_vc;    /* input side: round-robin VC pointer */
    uint8_t rr_in;    /* output side: round-robin input pointer */
    uint8_t peer_own; /* the thread that owns the other end (it applies the events sent there) */
    uint8_t down;     /* its link is down (link_state's copy, for the allocator) */
} port;

/* An entry of an input VC's ring: a packet and the cycle its head flit arrived. */
typedef struct qent {
    uint32_t pkt, t_arrive;
} qent;

typedef struct event {
    uint32_t port;     /* global port: the receiving input (flit) or the sending output (credit) */
    uint32_t pkt;      /* flit: packet id; NO_PKT: a credit */
    uint8_t vc, flags; /* FL_HEAD, FL_TAIL */
} event;

enum { FL_TAIL = 1, FL_HEAD = 2, FL_SHARED = 4 }; /* credits: flags 1 = a shared-pool credit */

typedef struct wheel_slot {
    event *ev;
    size_t n, cap;
} wheel_slot;

typedef struct nic {
    uint32_t *q; /* source queue of packet ids (a ring) */
    uint32_t q_head, q_count, q_cap;
    uint32_t cur;      /* packet being injected, or NO_PKT */
    uint16_t cur_sent; /* its flits sent */
    uint8_t cur_vc;
    uint8_t burst_on;  /* bursty injection: in a burst (rail 0's) */
    uint8_t next_rail; /* the rail of its next message (rail 0's) */
} nic;

/* Latencies in cycles (saturated at 2^32 - 1). */
typedef struct sampler {
    uint32_t *v;
    size_t n, cap;
} sampler;

/* A thread's share of the fabric: a contiguous range of switches, their ports, and the
 * deliveries to their endpoints. It applies the events sent to its ports, runs its active
 * routers, and sends events into its own wheels, one per destination thread, so no two threads
 * write the same memory; its counters are summed after each cycle. With one thread it is the
 * whole engine. */
typedef struct worker {
    wheel_slot **wheel; /* [T]: wmask + 1 slots each, the events for thread d's ports */
    nf_node *act;       /* its active switches */
    uint32_t n_act;
    uint32_t *freed; /* packet ids freed this cycle */
    size_t n_freed, cap_freed;
    uint32_t *nic_act; /* its NICs' rails (e * 2 + r) with packets to send */
    nf_node *ran;      /* the switches it ran this cycle (kept for the snapshot) */
    uint32_t n_ran;
    uint32_t n_nic_act;
    uint32_t *sarr;  /* scripted packets whose tails arrived this cycle (message ids) */
    uint32_t *stash; /* packet ids it may take for multicast copies this cycle */
    size_t n_stash, cap_stash;
    size_t n_sarr, cap_sarr;
    sampler lat, nlat, mlat;
    uint64_t flit_hops, unroutable, injected, delivered, acc_flits, hops_sum, minimal, n_meas;
    uint64_t dropped, dropped_pkts, dropped_meas; /* flits, packets, measured packets */
    int moved, rc;
    char pad[64]; /* workers on separate cache lines */
} worker;

struct nf_sim {
    const nf_fabric *f;
    const nf_hops *h;
    nf_sim_config c;
    const nf_sim_routing *r;
    void *rctx;
    const nf_sim_traffic *t;
    void *tctx;
    uint32_t S, E, P, PS, V, B, O; /* PS: ports of switches (global ports 0..PS-1) */
    nf_node *ep;                   /* endpoint -> CA */
    /* NICs have one or two ports (rails); per endpoint e and rail r, at e * 2 + r: */
    uint8_t *ep_rails; /* endpoint -> its rails, 1 or 2 */
    nf_node *ep_sw;    /* the switch of the rail */
    uint8_t *ep_port;  /* the switch port the CA's port hangs off */
    nf_gport *ep_g;    /* the CA's port (global) */
    uint32_t *ep_of;   /* CA node -> endpoint, UINT32_MAX for none */
    char *pt;          /* port records */
    size_t pstride, iv_off, ov_off;
    qent *qe;           /* PS * V * QE packet entries */
    uint32_t QE;        /* entries per VC: (B + shared) / pkt_flits + 2 */
    run *oq;            /* PS * O: the output queues' middle runs */
    nf_sim_cand *cands; /* PS * V * CACHE_CANDS: the head packets' route candidates */
    void *raw[4];       /* what to free for pt, qe, oq, cands */
    worker *wk;         /* T threads' shares */
    unsigned T;
    uint8_t *own;            /* per switch: the thread that owns it */
    double *acc;             /* per switch: fractional crossbar passes */
    uint64_t *imask, *omask; /* per switch: ports with buffered input flits / queued output */
    uint64_t *next_gen;      /* per endpoint: the cycle its next message is generated */
    uint8_t *nic_on;         /* per endpoint and rail: in its owner's nic_act */
    struct cal_slot {        /* Bernoulli sources by the cycle of their next message */
        uint32_t *e;
        size_t n, cap;
    } * cal;
    uint32_t *due;   /* the sources whose message is due this cycle */
    uint32_t *snap;  /* routings that need it: per switch port, its occupancy at the end of the
                      * last cycle its switch ran */
    uint8_t *active; /* per switch: in its owner's active list */
    uint32_t wmask;
    nic *nics;
    pkt *pk;
    uint32_t n_pk, cap_pk, *free_pk, n_free_pk;
    uint64_t now;
    nf_sim_injection inj;
    double pkt_rate;
    nf__rng rng;
    uint64_t injected, delivered, in_net, moved_at, flit_hops, unroutable;
    /* measurement */
    uint64_t win_lo, win_hi, gen_flits, acc_flits, meas_left, hops_sum, minimal, n_meas;
    uint64_t lost_flits;    /* generated in the window with no way to their destination */
    uint64_t excluded_msgs; /* exclude_unroutable: window messages between disconnected ends */
    /* exclude_unroutable: per endpoint, a key two endpoints share when the links up now join
     * them (see cut_keys in sim.c), and union-find room for S switches to compute it */
    uint32_t *ep_cut, *cut_uf;
    uint32_t *msg_left;
    uint64_t *msg_t0;
    size_t n_msg, cap_msg, cap_t0;
    uint64_t dropped, dropped_pkts; /* flits, packets discarded in the network */
    struct fail_ev {                /* links to set down (or up) at a cycle, in cycle order */
        uint64_t at;
        nf_link link;
        uint8_t state;
    } * fails;
    size_t n_fails, cap_fails, next_fail;
    /* the link states the run goes by: the fabric's, copied when a run begins (reset), then
     * changed by the failures above; the routings read it; the fabric is never written */
    uint8_t *link_state;
    bool any_down; /* some port's link is down (since the last reset): ask deliverable() */
    /* multicast (nf_sim_set_mcast): per group, its switches (ascending) and each one's ports
     * (bit p - 1 for port p); per input VC the branches its head packet has still to take
     * and the packet id of the copy being sent (the packet itself for the last branch) */
    uint32_t n_groups, *mc_off;
    nf_node *mc_sw;
    uint64_t *mc_mask, *mc_left;
    uint32_t *mc_ids, mc_fan;   /* per input VC: mc_fan packet ids, one per branch */
    uint32_t *grp_off, *grp_ep; /* per group: its member endpoints */
    nf__script *script;         /* scripted messages, when posted */
    bool script_on;             /* in nf_sim_run_script */
    uint32_t *sarr;             /* the workers' scripted arrivals of a cycle, merged */
    size_t cap_sarr_all;
};

static inline port *PT(const nf_sim *s, nf_gport g) {
    return (port *)(void *)(s->pt + (size_t)g * s->pstride);
}
static inline ivc *IV(const nf_sim *s, port *p) { return (ivc *)(void *)((char *)p + s->iv_off); }
static inline ovc *OV(const nf_sim *s, port *p) { return (ovc *)(void *)((char *)p + s->ov_off); }
static inline size_t vix(const nf_sim *s, nf_gport g, unsigned vc) { return (size_t)g * s->V + vc; }

/* Room downstream of output p on VC vc: its own slots and the port's shared pool. */
static inline int32_t room(const nf_sim *s, port *p, unsigned vc) {
    return OV(s, p)[vc].credits + p->shcr;
}

/* Takes a slot for one flit: the VC's own first, then the shared pool; true for a shared one. */
static inline bool take_credit(const nf_sim *s, port *p, unsigned vc) {
    ovc *o = &OV(s, p)[vc];
    if (o->credits > 0) {
        o->credits--;
        return false;
    }
    p->shcr--;
    return true;
}

/* Sends event e, for a port of thread d, to cycle at (at least a cycle ahead: never into the
 * slot being applied). */
static inline int push_event(nf_sim *s, worker *wk, unsigned d, uint64_t at, event e) {
    wheel_slot *w = &wk->wheel[d][at & s->wmask];
    if (w->n == w->cap && NF_GROW(w->ev, w->cap, w->n + 1)) return NF_ENOMEM;
    w->ev[w->n++] = e;
    return NF_OK;
}

/* The first index in [lo, hi) of sorted a whose value is not below key (hi when none). */
static inline uint32_t lower_bound_u32(const uint32_t *a, uint32_t lo, uint32_t hi, uint32_t key) {
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (a[mid] < key)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* sim.c, for replicate.c */
void nf__sim_oq_push(nf_sim *s, port *po, nf_gport go, uint32_t id, uint8_t vc, uint8_t flags);
void nf__sim_next_head(nf_sim *s, nf_gport gi, unsigned v, ivc *iv);
int nf__sim_free_slot(nf_sim *s, worker *b, nf_node sw, nf_gport gi, unsigned v);

/* replicate.c, for sim.c */
bool nf__sim_is_member(const nf_sim *s, uint32_t g, uint32_t e); /* endpoint e in group g */
void nf__sim_allocate_mc(nf_sim *s, worker *b, nf_node sw, nf_gport gi, port *pi, unsigned in_port,
                         unsigned v);
int nf__sim_crossbar_mc(nf_sim *s, worker *b, nf_node sw, uint64_t *in_done, uint64_t *out_done,
                        bool *moved);

#endif
