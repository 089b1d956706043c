/* SPDX-License-Identifier: MIT */
/* The simulation engine's state and a router's primitives, shared by the engine (sim.c:
 * construction, the cycle loop, routers and NICs) and the parts it calls, which call nothing
 * back: the multicast replication (replicate.c), link errors (linkerr.c) and congestion
 * pre-awareness (preaware.c). Not part of the library's API. */
#ifndef NETFAB_SIM_ENGINE_H
#define NETFAB_SIM_ENGINE_H

#include "sim/script.h"
#include "sim/sim_internal.h"

#include "util/mem.h"
#include "util/rng.h"
#include "util/u64map.h"

#define SIM_NO_PKT UINT32_MAX
#define SIM_CACHE_CANDS 6
/* An input VC's out_port when its head packet is being discarded: above every port number (a
 * switch has up to NF_MAX_PORTS = 255 ports, so out_port is 16 bits). */
#define SIM_DROP_PORT 0xFFFFu
/* Words of a switch's port bitset (bit p - 1 for port p): 1 when every switch has at most 64
 * ports (the fast path), else SIM_MASK_WORDS, enough for NF_MAX_PORTS. */
#define SIM_MASK_WORDS 4
/* Input VC rings hold (buf + shared) / pkt + 2 packet entries in 16-bit indices. */
#define SIM_MAX_BUF_FLITS NF_SIM_MAX_BUF_FLITS
#define SIM_CAL_SLOTS 1024u /* slots of the sources' calendar (a power of two) */
/* Switch port records up to this many bytes are taken to stay in the last-level cache: no
 * prefetching of the router two ahead (it costs a small fabric 3-4% of its speed and gains it
 * nothing). Whether a run prefetches at all is SIM_L2_BYTES's rule, below. */
#define SIM_NEAR_BYTES (4u << 20)
/* A run whose switch port records and packet records come to at most this many bytes (a core's
 * second-level cache here) finds them in the cache: it prefetches nothing, as a prefetch then
 * only costs (72-node Dragonfly: 9.8% of the instructions, 14% of the time). */
#define SIM_L2_BYTES (1u << 20)

/* ---- state ---------------------------------------------------------------------------------- */

typedef struct sim_pkt {
    nf_node src_sw, dst_ca, dst_sw; /* the switches of the rail it travels on */
    uint64_t t_create, t_inject;
    uint32_t msg; /* measured message id, or UINT32_MAX */
    union {
        uint32_t salt;   /* unicast: the routing's random number */
        uint32_t mgroup; /* multicast (SIM_PK_MCAST): its group (nf_sim_set_mcast) */
    };
    uint32_t rs;      /* the routing's word */
    uint16_t hops;    /* switch-to-switch links so far */
    uint8_t dst_port; /* the port of dst_sw its destination hangs off */
    uint8_t flags;    /* SIM_PK_MEASURED, SIM_PK_MCAST */
    uint8_t inj_vc;   /* a listed packet's injection VC + 1; 0: inject_vc chooses */
} sim_pkt;            /* 48 bytes */

/* SIM_PK_BAD: a corrupt copy (link errors), discarded where it is held whole; SIM_PK_SRCROUTE:
 * source routed (nf_sim_msg.source_routed): rs is its path's start in scr.path, each switch's
 * output port in turn, hops the switches passed */
enum { SIM_PK_MEASURED = 1, SIM_PK_MCAST = 2, SIM_PK_BAD = 4, SIM_PK_SRCROUTE = 8 };

/* An input VC: the flits present, its ring of packet entries (flits of a packet are contiguous
 * in a VC, as an upstream output VC serves one packet at a time, so a ring of packets is the
 * buffer), and the head packet's state. */
typedef struct sim_ivc {
    uint32_t count;    /* flits present */
    uint32_t ready_at; /* the head flit may cross the switch from this cycle (runs are shorter
                        * than 2^32 cycles) */
    uint32_t head_pkt; /* the packet at the ring's head, when qn > 0 */
    uint16_t head, qn; /* ring of packet entries: first, number */
    uint16_t out;      /* flits of the head packet that have left */
    uint16_t sh;       /* flits held in the port's shared pool */
    uint16_t out_port; /* 0: no output VC yet; SIM_DROP_PORT: discarding */
    uint8_t out_vc;
    uint8_t ncand; /* candidates cached in cands (0: none: not routed yet, or routed and given
                    * its output VC at once; more than SIM_CACHE_CANDS: routed again at each
                    * try) */
} sim_ivc;         /* 24 bytes */

/* An output VC (whether a packet holds it is a bit of its port's busy mask). */
typedef struct sim_ovc {
    int32_t credits; /* free slots downstream; ejection ports never run out */
} sim_ovc;

/* A run of flits in an output queue: n consecutive flits of one packet (on output VC vc); the
 * first carries SIM_FL_HEAD and the last SIM_FL_TAIL if the run's flags have them, all
 * SIM_FL_SHARED if. */
typedef struct sim_run {
    uint32_t pkt;
    uint8_t vc, flags;
    uint16_t n;
} sim_run;

/* A port's record comes in two parts, each with the link's fields it needs: the output side
 * (sim_port, then its n_vcs output VCs) and the input side (sim_pin, then its n_vcs input VCs),
 * at net.pin_off. With up to 2 VCs each part is one cache line of its own, so an event, a
 * crossing or a credit touches one line of the port. The output queue (switch ports) is a queue
 * of runs: the first (hd) and the last (tl) live here, the ones between in the port's part of
 * net.oq_ring, so a queue of one or two packets (the usual case) is served without leaving the
 * record. */
typedef struct sim_port {
    nf_gport back;       /* the global port at the other end of its link, or UINT32_MAX */
    nf_node node;        /* its node */
    int32_t shcr;        /* free slots in the downstream port's shared pool */
    uint32_t oq_count;   /* flits in the output queue */
    uint32_t oq_runs;    /* runs in it: hd, then oq_runs - 2 in the ring from oq_mid, then tl */
    uint32_t oq_mid;     /* the ring's first */
    uint32_t link_flits; /* flits sent in the measurement window (to switches) */
    sim_run hd, tl;
    uint16_t busy;    /* the output VCs held by a packet until its tail crosses the switch */
    uint8_t lat;      /* latency of its link, both ways */
    uint8_t to_sw;    /* its link leads to a switch */
    uint8_t rr_in;    /* round-robin input pointer */
    uint8_t peer_own; /* the thread that owns the other end (it applies the events sent there) */
    uint8_t down;     /* its link is down (link_state's copy, for the allocator) */
    uint8_t late;     /* xbar_pass: its last queued flit crossed in its router's last pass of this
                       * cycle, so it leaves in the next */
} sim_port;           /* 52 bytes */

/* A port's input side: the link's fields a flit's arrival and a credit's return read (copies of
 * sim_port's), the VCs holding flits, and the round-robin VC pointer. */
typedef struct sim_pin {
    nf_gport back;
    nf_node node;
    uint16_t vmask; /* the VCs holding flits (bit v: count > 0) */
    uint8_t rr_vc;
    uint8_t rr_out; /* sw_input output: the first output it asks for at or after this one */
    uint8_t lat, peer_own, to_sw;
} sim_pin; /* 16 bytes */
_Static_assert(NF_SIM_MAX_VCS <= 16, "sim_port.busy and sim_pin.vmask hold a bit per VC");

/* An entry of an input VC's ring: a packet and the cycle its head flit arrived. */
typedef struct sim_qent {
    uint32_t pkt, t_arrive;
} sim_qent;

typedef struct sim_event {
    uint32_t port;     /* global port: the receiving input (flit) or the sending output (credit,
                        * estimate) */
    uint32_t pkt;      /* flit: packet id; SIM_NO_PKT: a credit; an estimate: its float's bits */
    uint8_t vc, flags; /* SIM_FL_HEAD, SIM_FL_TAIL */
    uint16_t row;      /* an estimate (learn wheels): the row of the learning routing's table */
} sim_event;

enum {
    SIM_FL_TAIL = 1,
    SIM_FL_HEAD = 2,
    SIM_FL_SHARED = 4,
    SIM_FL_BAD = 8, /* link errors: the tail of a corrupt copy (its receiver discards it) */
    SIM_FL_NAK = 16 /* link errors: to an output port, a copy (pkt) to send again on VC vc */
};                  /* credits: flags 1 = a shared-pool credit */

/* A packet entry's t_arrive while its link stores and forwards and its tail is not in yet. */
#define SIM_T_WAIT UINT32_MAX

typedef struct sim_wheel_slot {
    sim_event *ev;
    size_t n, cap;
} sim_wheel_slot;

typedef struct sim_nic {
    uint32_t *q; /* source queue of packet ids (a ring) */
    uint32_t q_head, q_count, q_cap;
    uint32_t cur;      /* packet being injected, or SIM_NO_PKT */
    uint16_t cur_sent; /* its flits sent */
    uint8_t cur_vc;
    uint8_t rr_next;     /* the VC NF_SIM_INJ_RR tries first: the one after its last packet's */
    uint8_t burst_on;    /* bursty injection: in a burst (rail 0's) */
    uint8_t next_rail;   /* the rail of its next message (rail 0's) */
    uint32_t hold_until; /* pre-awareness's throttle: no packet starts before this cycle */
} sim_nic;

/* A packet generated this cycle, for the worker owning its source to write and queue (the
 * generation draws in one stream on one thread; the scattered writes run on the owners). */
typedef struct sim_born {
    uint32_t id, src_k, dst_k, dst, msg, salt; /* dst: its destination endpoint */
    uint8_t meas;                              /* measured */
    uint8_t inj_vc;                            /* sim_pkt.inj_vc */
} sim_born;

/* Latencies in cycles (saturated at 2^32 - 1). */
typedef struct sim_sampler {
    uint32_t *v;
    size_t n, cap;
} sim_sampler;

/* One window's counts of a run's timeline (nf_sim_set_timeline): the run's (flits generated and
 * delivered), and each worker's of the packets whose tails it delivered. */
typedef struct sim_tl_count {
    uint64_t gen_flits, acc_flits;      /* the run's */
    uint64_t packets, lat_sum, minimal; /* a worker's: packets, their latencies, minimal ones */
} sim_tl_count;

/* A thread's share of the fabric: a contiguous range of switches, their ports, and the
 * deliveries to their endpoints. It applies the events sent to its ports, runs its active
 * routers, and sends events into its own wheels, one per destination thread, so no two threads
 * write the same memory; its counters are summed after each cycle. With one thread it is the
 * whole engine. */
typedef struct sim_worker {
    sim_wheel_slot *
        *wheel; /* [n_threads]: wheel_mask + 1 slots each, the events for thread d's ports */
    sim_wheel_slot **learn; /* the same for a learning routing's estimates (NULL for others) */
    nf_node *act;           /* its active switches (in switch order when its routers run) */
    uint32_t n_act;
    nf_node sw_lo, sw_hi; /* the switches it owns: sw_lo..sw_hi-1 */
    uint32_t *freed;      /* packet ids freed this cycle */
    size_t n_freed, cap_freed;
    uint32_t *nic_act; /* its NICs' rails (e * 2 + r) with packets to send (in order up to
                        * n_nic_sorted; sort_nics orders them all) */
    uint32_t *nic_tmp; /* room for as many, for sort_nics */
    uint32_t n_nic_sorted;
    sim_born *born; /* this cycle's generated packets from its NICs, in generation order */
    size_t n_born, cap_born;
    nf_node *ran; /* the switches it ran this cycle (kept for the snapshot) */
    uint32_t n_ran;
    uint32_t n_nic_act;
    uint32_t *sarr; /* scripted packets whose tails arrived this cycle (message ids) */
    uint32_t *larr; /* listed packets whose tails arrived this cycle (their indexes) */
    size_t n_larr, cap_larr;
    uint32_t *stash; /* packet ids it may take for multicast copies this cycle */
    size_t n_stash, cap_stash;
    size_t n_sarr, cap_sarr;
    sim_sampler lat, nlat, mlat;
    sim_sampler bglat;  /* traffic with a hot endpoint: the measured packets to the others */
    uint64_t hot_flits; /* flits delivered to the hot endpoint in the window this cycle */
    uint64_t flit_hops, unroutable, injected, delivered, acc_flits, hops_sum, minimal, n_meas;
    uint64_t dropped, dropped_pkts, dropped_meas; /* flits, packets, measured packets */
    sim_tl_count *tl; /* with a timeline: per window so far, its deliveries' counts */
    size_t cap_tl;
    /* link errors: copies its switches' ports owe a resend (NAKs received), in arrival order */
    struct sim_replay *rpl;
    size_t n_rpl, cap_rpl;
    uint64_t replayed, discarded;         /* flits: sent again, corrupt copies thrown away */
    uint64_t corrupt, wasted, rx, rx_saf; /* in the window: packets, flits, receptions */
    uint64_t pass;             /* the crossbar pass its router runs now (sim_net.va_pass) */
    bool last_pass;            /* xbar_pass: it is the router's last pass of the cycle */
    struct sim_va_req *va_req; /* separate VC allocation: a router's requests, one per input VC */
    int moved, rc;
    char pad[64]; /* workers on separate cache lines */
} sim_worker;

/* The simulator, in parts. topo and the sizes of net are fixed when it is made; net is the
 * routers' state, written by the worker owning each switch; src, pool, the counters and meas
 * are the sources' and the run's, written on one thread between the parallel phases (the
 * workers keep their own counters, summed after each cycle); faults, mc and scr are the
 * failures, the multicast groups and the script. Every array is dense and indexed by an id:
 * switch, endpoint, global port, (global port, VC), packet. */
typedef struct sim_topo {
    uint32_t n_sw, n_ep; /* switches (nodes 0..n_sw-1), endpoints */
    uint32_t n_ports;    /* global ports of the fabric */
    uint32_t n_sw_ports; /* ports of switches: global ports 0..n_sw_ports-1 */
    nf_node *ep_ca;      /* endpoint -> its CA */
    uint32_t *ca_ep;     /* CA node -> its endpoint, UINT32_MAX for none */
    uint8_t *ep_rails;   /* endpoint -> its rails (NIC ports), 1 or 2 */
    /* per endpoint e and rail r, at e * 2 + r: */
    nf_node *ep_sw;     /* the switch of the rail */
    uint8_t *ep_port;   /* the switch port the CA's port hangs off */
    nf_gport *ep_gport; /* the CA's port (global) */
    uint8_t *owner;     /* per switch: the thread (worker) that owns it */
} sim_topo;

typedef struct sim_net {
    uint32_t n_vcs, buf_flits; /* VCs per port; a VC's buffer */
    uint32_t oq_cap;           /* runs an output queue's ring holds (out_buf) */
    uint32_t ring_cap;         /* packet entries per input VC: (buf + shared) / pkt_flits + 2 */
    char *ports;               /* port records (output side and VCs, input side and VCs) */
    size_t port_stride, ovc_off, pin_off, ivc_off; /* a record's size, its parts' offsets */
    bool sides1;         /* each side of a record is one cache line: pin_off 64, stride 128 */
    sim_qent *rings;     /* n_sw_ports * n_vcs * ring_cap: the input VCs' packet entries */
    sim_run *oq_ring;    /* n_sw_ports * oq_cap: the output queues' middle runs */
    nf_sim_cand *cands;  /* n_sw_ports * n_vcs * SIM_CACHE_CANDS: head packets' candidates */
    void *raw[4];        /* what to free for ports, rings, oq_ring, cands */
    double *xbar_credit; /* per switch: fractional crossbar passes */
    uint32_t mw_shift;  /* a switch's port bitsets have 1 << mw_shift words (1 or SIM_MASK_WORDS) */
    bool far;           /* the port records outgrow the caches: prefetch two routers ahead */
    bool pf;            /* the records in use outgrow SIM_L2_BYTES: prefetch (set each cycle) */
    uint64_t *in_mask;  /* per switch, 1 << mw_shift words: ports with buffered input flits */
    uint64_t *out_mask; /* per switch, the same: ports with queued output flits */
    uint8_t *active;    /* per switch: in its owner's active list */
    uint32_t *snap;     /* routings that need it: per switch port, its occupancy at the
                         * end of the last cycle its switch ran */
    uint32_t wheel_mask; /* slots of an event wheel, less 1 (a power of two) */
    /* congestion pre-awareness (preaware_cycles > 0; else NULL): per global port, the average
     * credits returned per cycle as of the cycle cr_at (decayed to now when read), written
     * only when a credit arrives, by the port's owner */
    double *cr_rate;
    uint64_t *cr_at;
    /* separate VC allocation (vc_alloc; else NULL): per input VC (sim_vc_ix), the crossbar pass
     * (cycle * 64 + pass of the cycle) in which its head got its output VC or its last tail
     * crossed: the VC's next stage waits for a later pass */
    uint64_t *va_pass;
    /* and per output VC (sim_vc_ix), its round-robin pointer over the switch's input VCs
     * ((input port - 1) * n_vcs + VC): the first at or after it wins the output VC */
    uint16_t *va_rr;
    /* and per input VC, its round-robin pointer over the switch's output VCs ((port - 1) * n_vcs
     * + VC): it asks for the first free one of its port at or after it */
    uint16_t *va_in_rr;
    /* port_order booksim: per global port, its switch-local place in the arbiters, and per
     * global slot g0 + place, the switch-local port there (NULL: the port order) */
    uint8_t *rank, *unrank;
    /* pass_clock every: the passes every router has this cycle, and the fraction carried */
    unsigned cyc_passes;
    double pass_frac;
} sim_net;

/* A request of separate VC allocation: input VC ivx ((port - 1) * n_vcs + VC) of the router
 * asks for VC vc of its output port (1-based; 0 once decided). */
typedef struct sim_va_req {
    uint16_t ivx, port;
    uint8_t vc;
} sim_va_req;

/* Bernoulli sources by the cycle of their next message (a calendar slot). */
typedef struct sim_cal_slot {
    uint32_t *e;
    size_t n, cap;
} sim_cal_slot;

typedef struct sim_sources {
    sim_nic *nics;      /* per endpoint and rail */
    uint64_t *next_gen; /* per endpoint: the cycle its next message is generated */
    uint8_t *nic_on;    /* per endpoint and rail: in its owner's nic_act */
    sim_cal_slot *cal;  /* SIM_CAL_SLOTS slots */
    uint32_t *due;      /* the sources whose message is due this cycle */
    uint64_t *due_bits; /* per endpoint, a bit: sorts due (all clear between cycles) */
    nf_sim_injection inj;
    double pkt_rate; /* packets per endpoint per cycle */
    double geo_p;    /* geometric's last p (0 at first) */
    double geo_log;  /* log1p(-geo_p) */
    uint32_t hot_ep; /* the traffic's hot endpoint, or UINT32_MAX */
    nf__rng rng;     /* the one random stream */
    /* listed packets (nf_sim_set_packets): made in place of the sources, in order; each one's
     * arrival cycle in the run (UINT64_MAX until its tail is in) */
    nf_sim_packet *list;
    uint64_t *list_arr;
    size_t n_list, list_pos;
} sim_sources;

typedef struct sim_pool { /* packets by id */
    sim_pkt *pkts;
    uint32_t *stamp; /* a learning routing's: the cycle each packet reached its last switch */
    uint32_t n, cap;
    uint32_t *free_ids, n_free;
} sim_pool;

typedef struct sim_tally { /* the run's counters (the workers' summed after each cycle) */
    uint64_t injected, delivered, in_net; /* flits */
    uint64_t moved_at;                    /* the last cycle a flit moved */
    uint64_t flit_hops, unroutable;
    uint64_t dropped, dropped_pkts; /* flits, packets discarded in the network */
    uint64_t replayed, discarded;   /* link errors: flits sent again, corrupt flits discarded */
} sim_tally;

typedef struct sim_measure {
    uint64_t win_lo, win_hi;            /* the measurement window [lo, hi) */
    uint64_t gen_flits, acc_flits;      /* generated, delivered in it */
    uint64_t pkts_left;                 /* measured packets not delivered (nor dropped) yet */
    uint64_t hops_sum, minimal, n_pkts; /* of the measured packets delivered */
    uint64_t lost_flits;    /* generated in the window with no way to their destination */
    uint64_t hot_flits;     /* delivered to the hot endpoint in the window */
    uint64_t excluded_msgs; /* exclude_unroutable: window messages between disconnected ends */
    uint64_t corrupt, wasted, rx, rx_saf; /* link errors in the window (sim_worker's) */
    /* exclude_unroutable: per endpoint, a key two endpoints share when the links up now join
     * them (see cut_keys in sim.c), and union-find room for n_sw switches to compute it */
    uint32_t *ep_cut, *cut_uf;
    uint32_t *msg_left; /* per measured message: its packets not delivered yet */
    uint64_t *msg_t0;   /* per measured message: its creation */
    size_t n_msg, cap_msg, cap_t0;
} sim_measure;

/* A link to set down (or up) at a cycle. */
typedef struct sim_fail_ev {
    uint64_t at;
    nf_link link;
    uint8_t state;
} sim_fail_ev;

typedef struct sim_faults {
    sim_fail_ev *ev; /* nf_sim_link_at's, in cycle order */
    size_t n, cap, next;
    /* the link states the run goes by: the fabric's, copied when a run begins (reset), then
     * changed by the failures above; the routings read it; the fabric is never written */
    uint8_t *link_state;
    bool any_down; /* some port's link is down (since the last reset) */
} sim_faults;

/* Hardware multicast (nf_sim_set_mcast): per group, its switches (ascending) and each one's
 * ports (a port bitset of net.mw_shift's size); per input VC the branches its head packet has
 * still to take (the same) and the packet id of the copy being sent (the packet itself for the
 * last branch). */
typedef struct sim_mcast {
    uint32_t n_groups;
    uint32_t *off; /* per group: its rows in sw, mask */
    nf_node *sw;
    uint64_t *mask;             /* per row, a port bitset */
    uint64_t *left;             /* per input VC, a port bitset */
    uint32_t *ids, fan;         /* per input VC: fan packet ids, one per branch */
    uint32_t *grp_off, *grp_ep; /* per group: its member endpoints (ascending) */
    uint32_t *sw_off;           /* per group: its member switches (their port 0), ascending: */
    nf_node *sw_mem;            /* sw_mem[sw_off[g] .. sw_off[g + 1]) */
    /* per group: 1 when the switches' multicast tables had no room for it
     * (nf_sim_config.mcast_port_entries): its messages go as unicast copies; NULL: none */
    uint8_t *refused;
    uint32_t n_refused;
    bool rails; /* the trees of both rails (nf_sim_set_mcast_rails): packets go on either */
} sim_mcast;

/* Link errors (nf_sim_config.ber, switching; nf_sim_set_link_ber): on when some link has errors or
 * a link may store and forward. Per switch input port whose link leads from a switch (the
 * receiving end), its chance of a corrupt packet and its switching state; per input VC the way
 * its head packet came in (its hops and routing word before this router routed it), for the
 * copy sent again, and whether its tail is to leave marked bad. */
typedef struct sim_errlink {
    uint32_t p_bad; /* a packet arrives corrupt with chance p_bad / 2^32 */
    uint8_t saf;    /* stores and forwards now */
    float recent;   /* dynamic switching: its recent errors, weighed by age, as of cycle at */
    uint32_t at;
} sim_errlink;

typedef struct sim_errvc {
    uint32_t rs;
    uint16_t hops;
    uint8_t stomp; /* the head packet's tail leaves marked bad */
} sim_errvc;

typedef struct sim_replay {
    nf_gport port; /* the output port that sends it again */
    uint32_t pkt;
    uint8_t vc;
} sim_replay;

typedef struct sim_errors {
    bool on;
    double *ber;     /* per link: nf_sim_set_link_ber's, or NaN for the configuration's */
    sim_errlink *in; /* per switch port */
    sim_errvc *vc;   /* per switch port and VC */
} sim_errors;

typedef struct sim_script {
    nf__script *script; /* scripted messages, when posted */
    bool on;            /* in nf_sim_run_script */
    uint32_t *arrivals; /* the workers' scripted arrivals of a cycle, merged */
    size_t cap_arrivals;
    uint32_t *ring_cap; /* per endpoint: its receive-queue ring's entries, 0 for the default
                         * (nf_sim_set_queue_ring; NULL until it is first called) */
    /* source routes (nf_sim_msg.source_routed): the output ports of each path, one after the
     * other (grown only between the cycle's parallel phases, emptied when a run begins); the
     * path found from switch a to switch z by a << 32 | z (its start, UINT32_MAX: none), kept
     * while the links stay as they are; a search's scratch: per switch its port back and a
     * queue */
    uint8_t *path;
    size_t n_path, cap_path;
    nf__u64map routes;
    uint32_t *bfs_from, *bfs_q;
} sim_script;

/* The timeline of a run (nf_sim_set_timeline): windows of `cycles` cycles from cycle 0, opened by
 * the run loop as the run reaches them (their counts zeroed, every worker's too), so deliver and
 * the generation only add to the current one's; the figures made from them when the run ends. */
typedef struct sim_timeline {
    uint64_t cycles;   /* a window's length; 0: no timeline */
    bool on;           /* counting: in nf_sim_run with a timeline */
    size_t cur;        /* the window of the cycle being run */
    size_t n_open;     /* the windows opened in this run */
    uint64_t next;     /* the cycle the next window begins */
    uint64_t acc_at;   /* tally.delivered when the current window began */
    sim_tl_count *sum; /* per window: the run's counts */
    size_t cap_sum;
    nf_sim_window *win; /* the last run's timeline */
    size_t n_win, cap_win;
} sim_timeline;

struct nf_sim {
    const nf_fabric *f; /* read only */
    const nf_hops *h;
    nf_sim_config cfg; /* as given, out_buf resolved */
    const nf_sim_routing *routing;
    void *routing_ctx;
    const nf_sim_traffic *traffic;
    void *traffic_ctx;
    sim_topo topo;
    sim_net net;
    sim_worker *workers; /* the threads' shares */
    unsigned n_threads;
    /* How many threads run the n_threads shares (sim.c, one_cycle): all of them, or one when
     * the machine is busy and one runs the cycles faster. Epochs of about SIM_EPOCH_NS each:
     * a probe of each way, then the faster for run_left epochs (doubling while one keeps
     * winning). While one runs, a probe of all is made only when the processors this process
     * may use stood idle enough for the others to run (the idle stretch). The results are the
     * same either way. */
    struct {
        unsigned use;          /* threads now: 1 or n_threads */
        unsigned phase;        /* 0 probe all, 1 probe one, 2 run */
        uint64_t t0, c0;       /* the epoch's start: ns, cycle */
        double ns_all, ns_one; /* ns a cycle in the last probes */
        unsigned run_left, run_len;
        unsigned use_last; /* the way the last probe chose */
        uint64_t idle_t0;  /* the one-thread stretch's start, ns (0: none) */
        double idle_s0;    /* the processors' idle seconds then */
        bool started;      /* the first choice made */
    } par;
    uint64_t now; /* the cycle */
    sim_sources src;
    sim_pool pool;
    sim_tally tally;
    sim_measure meas;
    sim_faults faults;
    sim_mcast mc;
    sim_script scr;
    sim_timeline tl;
    sim_errors err;
};

static inline sim_port *sim_port_at(const nf_sim *s, nf_gport g) {
    return (sim_port *)(void *)(s->net.ports + (size_t)g * s->net.port_stride);
}
static inline sim_pin *sim_pin_of(const nf_sim *s, sim_port *p) {
    return (sim_pin *)(void *)((char *)p + s->net.pin_off);
}
static inline sim_ivc *sim_ivcs(const nf_sim *s, sim_port *p) {
    return (sim_ivc *)(void *)((char *)p + s->net.ivc_off);
}
static inline sim_ovc *sim_ovcs(const nf_sim *s, sim_port *p) {
    return (sim_ovc *)(void *)((char *)p + s->net.ovc_off);
}
/* Whether output VC vc of port p is held; holds, frees it. */
static inline bool sim_ovc_busy(const sim_port *p, unsigned vc) { return p->busy >> vc & 1; }
static inline void sim_ovc_hold(sim_port *p, unsigned vc) { p->busy |= (uint16_t)(1u << vc); }
static inline void sim_ovc_free(sim_port *p, unsigned vc) { p->busy &= (uint16_t) ~(1u << vc); }
static inline size_t sim_vc_ix(const nf_sim *s, nf_gport g, unsigned vc) {
    return (size_t)g * s->net.n_vcs + vc;
}

/* Switch sw's port bitset in masks (net.in_mask, net.out_mask). */
static inline uint64_t *sim_mask(const nf_sim *s, uint64_t *masks, nf_node sw) {
    return masks + ((size_t)sw << s->net.mw_shift);
}
/* Sets (clears) bit i of switch sw's port bitset in masks, bitsets of W words (W = 1 when
 * i is below 64: the one-word path, as the engine's W = 1 build calls it). */
static inline void sim_port_set(uint64_t *masks, nf_node sw, unsigned i, unsigned W) {
    if (W == 1)
        masks[sw] |= 1ULL << i;
    else
        masks[(size_t)sw * W + (i >> 6)] |= 1ULL << (i & 63);
}
static inline void sim_port_clear(uint64_t *masks, nf_node sw, unsigned i, unsigned W) {
    if (W == 1)
        masks[sw] &= ~(1ULL << i);
    else
        masks[(size_t)sw * W + (i >> 6)] &= ~(1ULL << (i & 63));
}
/* Sets (clears) bit i of bitset m. */
static inline void sim_bit_set(uint64_t *m, unsigned i) { m[i >> 6] |= 1ULL << (i & 63); }
static inline void sim_bit_clear(uint64_t *m, unsigned i) { m[i >> 6] &= ~(1ULL << (i & 63)); }
/* Whether bitset m of n words has a bit set. */
static inline bool sim_bits_any(const uint64_t *m, unsigned n) {
    uint64_t a = 0;
    for (unsigned w = 0; w < n; w++)
        a |= m[w];
    return a != 0;
}

/* Room downstream of output p on VC vc: its own slots and the port's shared pool. */
static inline int32_t sim_room(const nf_sim *s, sim_port *p, unsigned vc) {
    return sim_ovcs(s, p)[vc].credits + p->shcr;
}

/* Takes a slot for one flit: the VC's own first, then the shared pool; true for a shared one. */
static inline bool sim_take_credit(const nf_sim *s, sim_port *p, unsigned vc) {
    sim_ovc *o = &sim_ovcs(s, p)[vc];
    if (o->credits > 0) {
        o->credits--;
        return false;
    }
    p->shcr--;
    return true;
}

/* Sends event e, for a port of thread d, to cycle at (at least a cycle ahead: never into the
 * slot being applied). */
static inline int sim_push_event(nf_sim *s, sim_worker *wk, unsigned d, uint64_t at, sim_event e) {
    sim_wheel_slot *w = &wk->wheel[d][at & s->net.wheel_mask];
    if (w->n == w->cap && NF_GROW(w->ev, w->cap, w->n + 1)) return NF_ENOMEM;
    sim_event *o = &w->ev[w->n++]; /* field by field: a whole-struct copy went through the stack */
    o->port = e.port;
    o->pkt = e.pkt;
    o->vc = e.vc;
    o->flags = e.flags;
    o->row = e.row;
    return NF_OK;
}

/* The first index in [lo, hi) of sorted a whose value is not below key (hi when none). */
static inline uint32_t sim_lower_bound(const uint32_t *a, uint32_t lo, uint32_t hi, uint32_t key) {
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (a[mid] < key)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* The first VC of mask m (bits 0..V-1, not empty) counted from VC rr in round-robin order: its
 * bits rotated so bit 0 stands for rr (sim_vc_of maps a bit back to its VC). */
static inline uint32_t sim_vc_rot(uint32_t m, unsigned rr, unsigned V) {
    return rr ? ((m >> rr) | (m << (V - rr))) & ((1u << V) - 1) : m;
}
static inline unsigned sim_vc_of(uint32_t rot, unsigned rr, unsigned V) {
    unsigned v = rr + (unsigned)__builtin_ctz(rot);
    return v >= V ? v - V : v;
}

/* A 32-bit draw that depends only on the seed, a salt, a key and the cycle (a splitmix64
 * finaliser): draws made this way are the same on any number of threads and in any order. */
static inline uint32_t sim_draw(const nf_sim *s, uint64_t salt, uint64_t key) {
    uint64_t z =
        (s->cfg.seed ^ salt) + key * 0x9E3779B97F4A7C15ULL + s->now * 0xD1B54A32D192ED03ULL;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return (uint32_t)((z ^ (z >> 31)) >> 32);
}

/* Asks the memory for packet id's record: both lines when it straddles two (a 48-byte record
 * does in half the cases; its flags, read first, are at its end). */
static inline void sim_prefetch_pkt(const nf_sim *s, uint32_t id) {
    const char *a = (const char *)&s->pool.pkts[id];
    __builtin_prefetch(a, 1);
    __builtin_prefetch(a + sizeof(sim_pkt) - 1, 1);
}

/* A switch with work: on its owner's active list (once). */
static inline void sim_wake(nf_sim *s, sim_worker *wk, nf_node sw) {
    if (s->net.active[sw]) return;
    s->net.active[sw] = 1;
    wk->act[wk->n_act++] = sw;
}

/* ---- link errors (linkerr.c), called by the engine while s->err.on ----------------------- */

/* Turns link errors on: the per link, port and VC state (sim_errors), filled in by
 * nf__sim_errors_reset; NF_ENOMEM. */
int nf__sim_errors_init(nf_sim *s);
/* A run begins: every link's chance of a corrupt packet, its switching mode, no marks. */
void nf__sim_errors_reset(nf_sim *s);
/* Flit e has just come into input VC v of switch port e.port from a switch: store-and-forward
 * holds, a tail is checked, a corrupt packet is asked for again and discarded or marked. */
int nf__sim_err_arrive(nf_sim *s, sim_worker *wk, sim_event e, sim_ivc *v);
/* Thread t's copies to send again go into their output queues when they can. */
int nf__sim_replay_phase(nf_sim *s, unsigned t);

/* ---- congestion pre-awareness (preaware.c), while s->net.cr_rate exists ------------------ */

double nf__sim_port_rate_now(const nf_sim *s, nf_gport g);             /* port g's rate now */
int64_t nf__sim_port_owed(const nf_sim *s, sim_port *p);               /* credits not back */
double nf__sim_rail_cost(const nf_sim *s, size_t k, uint64_t backlog); /* NIC rail k's cost */

/* ---- a router's primitives, for the crossbar (sim.c) and the replication (replicate.c) --- */

/* The head flit of input VC v of port p (bit i of switch sw's port bitsets) has left (crossed, or
 * been discarded): its slot is free and its credit leaves upstream, shared slots given back first.
 * W: the words of a port bitset (1 << net.mw_shift). */
static inline int sim_free_slot_at(nf_sim *s, sim_worker *b, nf_node sw, sim_port *p, unsigned i,
                                   unsigned v, unsigned W) {
    sim_pin *pi = sim_pin_of(s, p);
    sim_ivc *iv = &sim_ivcs(s, p)[v];
    if (--iv->count == 0 && !(pi->vmask &= (uint16_t) ~(1u << v)))
        sim_port_clear(s->net.in_mask, sw, i, W);
    uint8_t kind = iv->sh ? 1 : 0;
    if (kind) iv->sh--;
    unsigned delay = pi->to_sw || !s->cfg.nic_prompt_credits ? s->cfg.credit_delay : 0;
    return sim_push_event(
        s, b, pi->peer_own, s->now + delay + pi->lat,
        (sim_event){.port = pi->back, .pkt = SIM_NO_PKT, .vc = (uint8_t)v, .flags = kind});
}

/* The same for global port gi. */
static inline int sim_free_slot_w(nf_sim *s, sim_worker *b, nf_node sw, nf_gport gi, unsigned v,
                                  unsigned W) {
    return sim_free_slot_at(s, b, sw, sim_port_at(s, gi), gi - s->f->port_off[sw], v, W);
}

static inline int sim_free_slot(nf_sim *s, sim_worker *b, nf_node sw, nf_gport gi, unsigned v) {
    return sim_free_slot_w(s, b, sw, gi, v, 1u << s->net.mw_shift);
}

/* Appends a flit to output go's queue: to the last run when it continues it, else as a run. */
static inline void sim_oq_push(nf_sim *s, sim_port *po, nf_gport go, uint32_t id, uint8_t vc,
                               uint8_t flags) {
    po->oq_count++;
    sim_run *last = po->oq_runs == 0 ? NULL : po->oq_runs == 1 ? &po->hd : &po->tl;
    if (last && last->pkt == id && !(last->flags & SIM_FL_TAIL) &&
        (last->flags & SIM_FL_SHARED) == (flags & SIM_FL_SHARED) && last->n < 0xFFFF) {
        last->n++;
        last->flags |= flags & (SIM_FL_TAIL | SIM_FL_BAD);
        return;
    }
    sim_run r = {.pkt = id, .vc = vc, .flags = flags, .n = 1};
    if (po->oq_runs == 0) {
        po->hd = r;
    } else if (po->oq_runs == 1) {
        po->tl = r;
    } else {
        uint32_t at = po->oq_mid + po->oq_runs - 2;
        s->net
            .oq_ring[(size_t)go * s->net.oq_cap + (at >= s->net.oq_cap ? at - s->net.oq_cap : at)] =
            po->tl;
        po->tl = r;
    }
    po->oq_runs++;
}

/* The head packet of input VC v of port gi has left with its tail: the next one comes up. */
static inline void sim_next_head(nf_sim *s, nf_gport gi, unsigned v, sim_ivc *iv) {
    if (s->mc.left) {
        uint64_t *left = s->mc.left + (sim_vc_ix(s, gi, v) << s->net.mw_shift);
        for (unsigned w = 0; w < 1u << s->net.mw_shift; w++)
            left[w] = 0;
    }
    iv->out_port = 0;
    iv->ncand = 0;
    iv->out = 0;
    iv->head = (uint16_t)(iv->head + 1u == s->net.ring_cap ? 0 : iv->head + 1);
    iv->qn--;
    if (iv->count) { /* the next packet is at the head */
        const sim_qent *q = &s->net.rings[sim_vc_ix(s, gi, v) * s->net.ring_cap + iv->head];
        iv->head_pkt = q->pkt;
        if (s->net.pf) sim_prefetch_pkt(s, q->pkt); /* routed in the next pass */
        uint64_t a = (uint64_t)q->t_arrive + s->cfg.router_delay;
        uint64_t next = s->net.va_pass ? s->now : s->now + 1; /* separate: by passes, va_pass */
        iv->ready_at = q->t_arrive == SIM_T_WAIT ? SIM_T_WAIT /* its tail is not in */
                                                 : (uint32_t)(a > next ? a : next);
    }
}

/* ---- multicast replication (replicate.c), called by the engine ---------------------------- */

bool nf__sim_is_member(const nf_sim *s, uint32_t g, uint32_t e); /* endpoint e in group g */
/* Whether switch sw is itself a member of group g (its port 0), and the bookkeeping of a packet
 * of the group reaching it there: its tail counts as a member's arrival of the packet's message
 * (a scripted one) in worker b's list. NF_ENOMEM. */
bool nf__sim_is_sw_member(const nf_sim *s, uint32_t g, nf_node sw);
int nf__sim_sw_member_got(nf_sim *s, sim_worker *b, uint32_t id);
/* A multicast head packet of input VC v of port pi at switch sw takes its branches (or waits). */
void nf__sim_allocate_mc(nf_sim *s, sim_worker *b, nf_node sw, nf_gport gi, sim_port *pi,
                         unsigned in_port, unsigned v);
/* The multicast inputs of a crossbar pass at sw, before the unicast ones; in_done and out_done
 * are port bitsets of 1 << net.mw_shift words. */
int nf__sim_crossbar_mc(nf_sim *s, sim_worker *b, nf_node sw, uint64_t *in_done, uint64_t *out_done,
                        bool *moved);

/* The engine's parts across files (sim.c: building, the NIC, routers and the cycle; simrun.c:
 * the runs, their figures and the timeline). */
/* One cycle (sim.c): events, generation, NICs and routers; NF_OK or NF_ENOMEM. */
int nf__sim_cycle(nf_sim *s);
/* Empties the network: every buffer, queue, event, packet; credits to full; the link states
 * the fabric's (sim.c). */
void nf__sim_reset(nf_sim *s);
/* qsort's comparison of two uint32_t */
int nf__sim_cmp_u32(const void *a, const void *b);
/* A free packet id (its record to be written), the pool grown when none is free; SIM_NO_PKT
 * when it cannot grow (sim.c). */
uint32_t nf__sim_new_pkt(nf_sim *s);
/* simnic.c: the sources due this cycle, their messages queued at their NICs (the generation
 * step; NF_ENOMEM) */
int nf__sim_sources_phase(nf_sim *s);
/* simnic.c: a script's send, npkts packets of message tag from endpoint from to endpoint to
 * into from's NIC now (rail by mode; group UINT32_MAX for unicast) */
int nf__sim_emit(nf_sim *s, uint32_t from, uint32_t to, nf_sim_rail_mode mode, uint32_t npkts,
                 uint32_t tag, uint32_t group, bool srcroute);
/* simnic.c: worker t's packets born this cycle queued at their NICs, then each of its sending
 * NICs sends a flit if it can */
int nf__sim_send_phase(nf_sim *s, unsigned t);
/* simnic.c: the message engines' view of their ports (nf__script_params.port_backlog; ud is
 * the simulator) */
int64_t nf__sim_port_backlog(void *ud, uint32_t from, uint32_t to, unsigned rail);
/* simrouter.c: worker t's active routers run their crossbar passes and put their output queues
 * on the links (NF_ENOMEM) */
int nf__sim_router_phase(nf_sim *s, unsigned t);
/* simrouter.c: with a lookahead routing, packet id's head leaves for switch sw, where it comes in
 * on port in_port: the routing's choice there, from sw's snapshot, goes into the packet's word */
void nf__sim_route_ahead(nf_sim *s, uint32_t id, nf_node sw, unsigned in_port);
/* simrouter.c: worker t's routers' entries of the queue-occupancy snapshot (routings that read
 * other routers' queues) */
void nf__sim_snap_phase(nf_sim *s, unsigned t);

#endif
