/* SPDX-License-Identifier: MIT */
/* The packet-level simulator: input-queued routers with virtual channels, credit-based flow
 * control and virtual cut-through, a separable switch allocator with internal speedup, links with
 * per-class latency, NICs that packetise and inject with Bernoulli or bursty processes, routing
 * functions as plug-ins with a deadlock checker, synthetic traffic, and measurement in the usual
 * style of cycle-level interconnect simulators (warm-up, measurement window, drain). Cycle-driven,
 * only active routers and channels are visited, all state in dense arrays, the switches shared
 * out among threads. Deterministic for a seed, whatever the number of threads. */
#ifndef NETFAB_SIM_H
#define NETFAB_SIM_H

#include "core.h"
#include "fabric.h"
#include "groups.h"
#include "hops.h"
#include "mcast.h"
#include "uft.h"

#include <stdbool.h>

#define NF_SIM_MAX_VCS 16
/* the most flits of an input VC's buffer and of an input port's shared pool (an output queue:
 * NF_SIM_MAX_VCS times as many) */
#define NF_SIM_MAX_BUF_FLITS 60000u
/* Ports of a switch the router model takes: every switch a fabric holds (NF_MAX_PORTS, 255). */
#define NF_SIM_MAX_RADIX NF_MAX_PORTS
#define NF_SIM_MAX_THREADS 64 /* threads one simulator shares its switches among */
#define NF_SIM_MAX_QUEUES 256 /* a NIC's send queues (nf_sim_msg.queue) */
#define NF_SIM_MAX_ENGINES 2  /* a NIC's message engines (nf_sim_config.nic_engines) */

/* A run's phases when nf_sim_run is given none (cycles). */
#define NF_SIM_DEFAULT_WARMUP 1000
#define NF_SIM_DEFAULT_WINDOW 5000
#define NF_SIM_DEFAULT_DRAIN 20000

/* How a router forwards a packet coming in over a switch-to-switch link: as soon as its head is
 * in (virtual cut-through), only once all of it is in and checked (store-and-forward), or per link
 * by its recent errors (dynamic; nf_sim_config.saf_errors). */
typedef enum nf_sim_switching {
    NF_SIM_VCT = 0,
    NF_SIM_SAF = 1,
    NF_SIM_SWITCH_DYNAMIC = 2
} nf_sim_switching;

/* Where val, ugal-* and par draw a packet's intermediate (proxy) group: among all groups but
 * the source's and the destination's (all); among the distinct groups the source router's own
 * global links reach, the destination's left out (restricted, netfab's first reading); and the
 * restrictive proxies of Navaridas and Pascual, drawn over links, a draw of the source or the
 * destination group sending the packet minimally: a global link of the source router (qvl), of
 * the destination router (qvr), either by a coin (qvd), of the source router's slice of its
 * global links for the source endpoint's place at it (private, qvp: links [k h / p,
 * (k + 1) h / p) of its h, k its place of p; quasi-private, qvq: [k h / p, (k + 2) h / p) mod
 * h, each link shared with the next place). Links that are down are left out; none left: all. */
typedef enum nf_sim_proxy {
    NF_SIM_PROXY_ALL = 0,
    NF_SIM_PROXY_RESTRICTED = 1,
    NF_SIM_PROXY_QVL = 2,
    NF_SIM_PROXY_QVR = 3,
    NF_SIM_PROXY_QVD = 4,
    NF_SIM_PROXY_QVP = 5,
    NF_SIM_PROXY_QVQ = 6
} nf_sim_proxy;

/* qadapt's table rows (nf_sim_config.q_row): a row per destination group and source endpoint's
 * place at its router (the authors' destG_srcN), per destination group, per destination switch. */
typedef enum nf_sim_q_row {
    NF_SIM_Q_ROW_GROUP_HOST = 0,
    NF_SIM_Q_ROW_GROUP = 1,
    NF_SIM_Q_ROW_ROUTER = 2
} nf_sim_q_row;

/* The simulator's knobs; nf_sim_config_defaults gives each its default (in brackets). Every
 * value is taken as given, 0 included; only the fields marked "auto" have a 0 that stands for
 * a value worked out when the simulator is made. */
/* How a router gives a head packet its output VC (nf_sim_config.vc_alloc). Combined (netfab's
 * model): in the same crossbar pass that the packet asks for the switch, and its VC may start its
 * next packet in the cycle after a tail leaves. Separate (BookSim2's input-queued router without
 * speculation): VC allocation is a pass of its own; the packet asks for the switch from the next
 * pass on, and its input VC allocates for its next packet no earlier than the pass after its
 * tail crossed, so a VC moves at most one packet every two passes. */
typedef enum nf_sim_vc_alloc { NF_SIM_VA_COMBINED = 0, NF_SIM_VA_SEPARATE = 1 } nf_sim_vc_alloc;

/* The VC a NIC starts a packet on (nf_sim_config.inject_vc). Room (netfab's): of the routing's
 * injection VCs, the free one with most room. Random (BookSim2's): one of all the VCs drawn
 * uniformly at each try, the packet waiting while the drawn VC is held or short of room; the
 * first router routes it as if it came in on VC 0. Rr (BookSim2's traffic manager, as its code
 * does it): of all the VCs, from the one after the rail's last, the first that is free and has a
 * slot (not room for the whole packet), VC 0 first; routed at the first router as random. Routing
 * (BookSim2's, whose routing functions name it): random for the Dragonfly routings (dfmin, val,
 * ugal-*, par, qadapt), rr for the others. */
typedef enum nf_sim_inject_vc {
    NF_SIM_INJ_ROOM = 0,
    NF_SIM_INJ_RANDOM = 1,
    NF_SIM_INJ_RR = 2,
    NF_SIM_INJ_ROUTING = 3
} nf_sim_inject_vc;

/* The VC a packet leaves its last switch on, toward its NIC (nf_sim_config.eject_vc). Any
 * (netfab's): any VC of the ejection port. Arrival (BookSim2's Dragonfly routings, which name the
 * packet's class VC at the ejection port as at every other): the VC it came into that switch on,
 * so a port ejects each class on one VC; a packet whose destination hangs off its source's switch
 * leaves on the first VC of the class its routing gives a packet that stays in its group (ugal-bs
 * class 2 of 3, as BookSim2's ugal; the others VC 0, as its min). Routing (BookSim2's, whose
 * routing functions name it): arrival for the Dragonfly routings (dfmin, val, ugal-*, par, qadapt),
 * any for the others (its dim_order_torus and fattree routings give the whole VC range at the
 * destination). */
typedef enum nf_sim_eject_vc {
    NF_SIM_EJ_ANY = 0,
    NF_SIM_EJ_ARRIVAL = 1,
    NF_SIM_EJ_ROUTING = 2
} nf_sim_eject_vc;

/* What an input port asks the switch for (nf_sim_config.sw_input). Vc (netfab's): the first of
 * its VCs, round-robin from the one after its last grant, that may ask. Output (BookSim2's
 * separable input-first allocator): for each output some VC may ask for, the VC nearest that
 * round-robin pointer; then, of those outputs, the first at or after a second pointer over the
 * outputs, which a grant moves past the output granted. */
typedef enum nf_sim_sw_input { NF_SIM_SWIN_VC = 0, NF_SIM_SWIN_OUTPUT = 1 } nf_sim_sw_input;

/* Which cycles give a router its crossbar passes (nf_sim_config.pass_clock), speedup S a cycle
 * on average. Busy (netfab's): the cycles it holds flits, so its passes follow its own history.
 * Every (BookSim2's internal speedup): every cycle, busy or not, so all routers have the same
 * number of passes in a cycle. */
/* The port order of a switch's arbiters (nf_sim_config.port_order). */
typedef enum nf_sim_port_order { NF_SIM_PORTS_OWN = 0, NF_SIM_PORTS_BOOKSIM = 1 } nf_sim_port_order;

typedef enum nf_sim_pass_clock { NF_SIM_CLOCK_BUSY = 0, NF_SIM_CLOCK_EVERY = 1 } nf_sim_pass_clock;

typedef struct nf_sim_config {
    unsigned vcs;          /* virtual channels per port, 1..NF_SIM_MAX_VCS (4) */
    unsigned buf_flits;    /* input buffer per VC, flits, at least one packet (32) */
    unsigned shared_flits; /* per input port: a pool its VCs share once their own is full (0) */
    unsigned pkt_flits;    /* flits per packet, at least 1 (1) */
    unsigned router_delay; /* cycles from a head flit's arrival to its switch traversal (3) */
    unsigned credit_delay; /* cycles before a freed slot's credit leaves for upstream (2) */
    unsigned lat_host, lat_local, lat_global; /* link latency by class, cycles, 1..255 (1, 1, 1) */
    double speedup;        /* internal speedup: crossbar flits per cycle per port, > 0 (1.0) */
    unsigned out_buf;      /* output queue per port behind the crossbar, flits (0: auto, as
                            * buf_flits and at least two packets) */
    unsigned alloc_iters;  /* switch allocator iterations, at least 1 (1) */
    bool adaptive;         /* table routings: the candidate with most downstream credits (no) */
    double bias;           /* UGAL: MIN when cost_min <= bias * cost_val (0: auto, 2.5 as the
                            * UGAL note; ugal-g 1: with the whole ways' queues no bias pays) */
    double w_hop;          /* UGAL: cost of a hop, in flits of queue; 0: hops cost nothing (1 flit,
                            * any packet size) */
    double threshold;      /* ugal-lt: MIN when cost_min <= bias * cost_val + threshold (bias 1
                            * unless given), flits (0: auto,
                            * one VC buffer, buf_flits) */
    nf_sim_proxy proxy;    /* val, ugal-*, par: where the intermediate group is drawn
                            * (NF_SIM_PROXY_ALL) */
    double q_alpha;        /* qadapt, qadapt-nf: learning rate, the share of an estimate's
                            * error corrected at each return, above 0, at most 1 (0.2; qadapt:
                            * when the news is better) */
    double q_alpha2;       /* qadapt: the learning rate when the news is worse (0.04) */
    double q_explore;      /* qadapt, qadapt-nf: the chance a router sends a packet by a random
                            * candidate instead of its choice, 0 to 1 (0.001) */
    double q_threshold1;   /* qadapt: at the source router, the port of least estimate only when
                            * the minimal port's is higher by this share of itself (0.2) */
    double q_threshold2;   /* qadapt: at the intermediate group's first router, a local port to a
                            * router drawn for the packet only when the minimal port's estimate
                            * is higher by this share of itself (0.35) */
    nf_sim_q_row q_row;    /* qadapt: its table's rows (NF_SIM_Q_ROW_GROUP_HOST) */
    bool q_src_global;     /* qadapt: the source router weighs its global ports only against the
                            * minimal one, not its local ports too (no: the authors' rule) */
    double q_threshold;    /* qadapt-nf: a source-group router sends a packet the long way only when
                            * that is expected sooner than the minimal way by more than this many
                            * cycles (0: auto, a local hop in an empty network, router_delay +
                            * lat_local) */
    unsigned q_sample;     /* qadapt-nf: the long ways a source-group router weighs against the
                            * minimal one, drawn at random per packet; 0: all of them (1) */
    double q_bias;         /* qadapt-nf: the long way only when bias x its value + threshold is
                            * below the minimal way's, 1 to 100 (1) */
    double q_local;        /* qadapt-nf: a candidate's value is its estimate plus this many cycles
                            * per flit waiting at its port now (its output queue and the
                            * downstream slots whose credits are not back); 0: the estimate
                            * alone, 0 to 1000 (1) */
    unsigned threads;      /* threads (0: auto, every processor for 64 switches or more, else
                            * 1; more than NF_SIM_MAX_THREADS count as that many); results do
                            * not depend on it */
    /* scripted messages (nf_sim_post) */
    unsigned flit_bytes;       /* bytes a flit carries, at least 1 (32): a message of B bytes is
                                * ceil(B / (flit bytes x pkt_flits)) packets */
    unsigned nic_msg_cycles;   /* a NIC's work before a message's first packet (40 cycles) */
    unsigned nic_short_cycles; /* the same for a short message and a hardware reply (8) */
    uint64_t seed;             /* (0) */
    /* messages between endpoints no path joins (by nf_hops, or, but for ftable, which drops
     * them, by the links up when the message is made: failed before or during the run) are
     * skipped and counted in excluded_msgs; without it they wait for ever (see
     * nf_sim_unroutable_pairs). Packets already on their way when a failure parts their ends
     * still wait. (no) */
    bool exclude_unroutable;
    /* link errors and the data link layer's switching (the Sunway paper, section 2.2): every
     * switch-to-switch link's bit error rate (links to NICs are error-free; nf_sim_set_link_ber
     * sets one link's): a packet crossing a link arrives corrupt with probability
     * 1 - (1 - ber)^(bits of the packet), the receiver finds it when the tail is in, discards it
     * and the upstream router sends it again from its replay buffer (link-level retry: the request
     * goes back over the link, the copy waits for its output VC like any packet). Under
     * cut-through, a corrupt packet whose head has gone on is marked bad as its tail passes and
     * discarded at the first router that holds it whole (or the NIC), wasting the links it
     * reached; under store-and-forward a packet crosses no router before its tail is in and
     * checked. 0 to 1 (0) */
    double ber;
    nf_sim_switching switching; /* NF_SIM_VCT, NF_SIM_SAF or NF_SIM_SWITCH_DYNAMIC (VCT) */
    /* NF_SIM_SWITCH_DYNAMIC: a link stores and forwards from an error that brings its recent
     * errors (each weighed e^(-age / saf_window)) to saf_errors or more, and cuts through again
     * once they decay below half of that (2 errors; 1000 cycles) */
    double saf_errors;
    unsigned saf_window;
    /* asynchronous queue messages (NF_SIM_QUEUE_*): each target endpoint has a receive-queue
     * ring that its host empties one entry at a time */
    unsigned queue_entries;     /* a ring's capacity in entries, at least 1, for every target
                                 * nf_sim_set_queue_ring has not set (256: the messages one
                                 * Sunway NIC engine keeps in flight, so one sender alone
                                 * cannot fill it) */
    unsigned queue_host_cycles; /* the target's host takes the oldest entry off its ring every
                                 * this many cycles while it holds any (40: the NIC's own work
                                 * per message, nic_msg_cycles; the host does in software at
                                 * least what the NIC does in hardware) */
    unsigned queue_backoff;     /* reliable kind: cycles a source NIC waits after a refusal
                                 * before it sends the message again (0: auto, one host period,
                                 * queue_host_cycles: by then an entry has been freed) */
    /* congestion pre-awareness (the Sunway router: upstream senses downstream congestion from
     * the rate its credits come back). Each output port (switch and NIC) keeps an exponentially
     * weighted average of the credits returned per cycle, r <- r (1 - 1/T)^dt + c / T, with
     * preaware_cycles as T; with it, adaptive table routing scores a candidate by its room plus
     * the credits expected back within T cycles (at most those outstanding), a two-rail NIC
     * sends a message (or, dynamic, a packet) by the rail whose downstream is expected to hold
     * fewer of its flits after T cycles, plus those queued for it, and a NIC throttles a rail
     * whose rate has collapsed (preaware_throttle). 0: off, 1 to 100000 (0) */
    unsigned preaware_cycles;
    /* with pre-awareness: a NIC rail whose rate r is below this many flits per cycle (its link
     * carries 1) while its downstream holds at least half a VC buffer of its flits waits
     * ceil(pkt_flits (F / r^2 - 1)) cycles, at most T, after a packet before the next: it sends
     * at r x r / F, slower than its credits come back, the more so the lower r; 0: no throttle,
     * 0 to 1 (0.5) */
    double preaware_throttle;
    /* host software: the time a host spends on each scripted message it issues (not by_nic),
     * before the NIC's overhead; a host handles its messages one at a time, in the order they
     * fall due, so a rank's sends queue behind each other; with message engines (nic_engines)
     * a NIC has a CPU an engine, each a host of its own: the messages of send queue q are CPU
     * q mod nic_engines's (the Sunway node: two processors on one NIC) (0 cycles: none) */
    unsigned host_msg_cycles;
    /* the host's side of a message's arrival: a message whose data goes to a host (PUT_REPLY,
     * SHORT and MCAST; not a by_nic unicast, which a NIC takes) completes this many cycles
     * after its data is in (a multicast: after its last member's), plus its copy (0: none) */
    unsigned host_recv_cycles;
    /* bytes a host copies a cycle, on each message it issues and on each it receives as above
     * (ceil(bytes / host_copy_bytes) cycles each; 0: copying is free) */
    unsigned host_copy_bytes;
    /* each host time above (a message's issue, its arrival) takes 0 to this many cycles more,
     * uniformly, drawn from the seed and the message: the hosts' software and clock noise
     * (0: none) */
    unsigned host_jitter_cycles;
    /* the router model: BookSim2's with NF_SIM_VA_SEPARATE, NF_SIM_INJ_ROUTING and
     * NF_SIM_EJ_ROUTING (see the enums; docs/guide.md "Router model") (combined; room; any) */
    nf_sim_vc_alloc vc_alloc;
    nf_sim_inject_vc inject_vc;
    nf_sim_eject_vc eject_vc;
    /* cycles a flit spends in its NIC before it enters the host link, 0..255: BookSim2 writes
     * an injected flit after its channels have read their inputs for the cycle, so its
     * injection channel takes a cycle more than its others (0) */
    unsigned nic_delay;
    nf_sim_sw_input sw_input;     /* (vc) */
    nf_sim_pass_clock pass_clock; /* (busy) */
    /* a flit granted the switch crosses it in the next pass, so one granted in its router's
     * last pass of a cycle leaves in the next cycle: BookSim2's switch traversal stage (no) */
    bool xbar_pass;
    /* a NIC takes its credits back as they arrive, without credit_delay, as BookSim2's traffic
     * manager does (its routers add the delay on their side); else as a switch does (no) */
    bool nic_prompt_credits;
    /* the order of a switch's ports in its round-robin arbiters: its own (port order), or,
     * booksim, BookSim2's numbering of the same ports, from a routing that mirrors a BookSim2
     * routing function on its topology (dor-bs: each dimension's plus then minus port, BookSim2's
     * dimension 0 first, then the host ports; the others: their own) (own) */
    nf_sim_port_order port_order;
    /* cycles a flit behind its packet's head waits, when it arrives at an empty VC, before it
     * may cross the switch: BookSim2 reads a body flit in and asks for the switch in the same
     * cycle, one cycle later than netfab's crossing on arrival under its stage timing
     * (router_delay 1, xbar_pass); 0..1000 (0) */
    unsigned body_delay;
    /* The NIC's message engines (the Sunway paper's SWHNI, section 2.3), for scripted messages.
     * 0: none, the model of before: a released message's packets all go to its port's queue at
     * once and its NIC overhead is a delay that no other message waits for. 1 or 2 engines: a
     * message falls due into its send queue (nf_sim_msg.queue; queue q is served by engine
     * q mod nic_engines); an engine's arbiter takes the head of its queues in round robin, one
     * message every nic_short_cycles (its descriptor unit) while it has fewer than nic_inflight
     * messages in flight (taken and not complete); the message's first packet is ready its
     * overhead later (nic_msg_cycles, or nic_short_cycles for a short or fast one). The engine's
     * send unit reads nic_engine_flits flits a cycle over PCIe and sends a packet at a time, of
     * the ready messages the fast ones first (nf_sim_msg.fast), then the one with the fewest
     * packets left (by length), then the first taken, into a port that holds under two packets:
     * messages complete out of order. Replies (acknowledgements, read data, NAKs) and a refused
     * queue message's second sending go to the port queue directly. (0) */
    unsigned nic_engines;
    /* DESDP (double engine shares double port): every engine sends on both ports, on the
     * descriptor's port or, dynamic, on the one with less queued, packet by packet; no: engine e
     * sends only on port e (a one-port NIC: port 0), whatever the descriptor says (yes) */
    bool nic_share_ports;
    unsigned nic_inflight; /* messages an engine keeps in flight at most, 1.. (256) */
    /* flits a cycle an engine's send unit reads, > 0 (2: enough for both ports, as the paper
     * has one message's packets fill both rails; its PCIe lane count is not legible) */
    double nic_engine_flits;
    /* multicast table entries per switch port (nf_sim_set_mcast, nf_sim_mcast_installed; the
     * Sunway router: 32); 0: as many as there are groups (0) */
    unsigned mcast_port_entries;
    /* the NIC's PCIe: a message whose descriptor and data are in host memory waits, before its
     * first packet, for two PCIe reads of this many cycles each (the descriptor, the data; a
     * read's data served at the target, one more): 0 counts them in nic_msg_cycles (0); a fast
     * short message (nf_sim_msg.fsw) is written by the host into the NIC instead, at
     * nic_pio_bytes bytes a cycle (16) */
    unsigned nic_pcie_cycles;
    unsigned nic_pio_bytes;
} nf_sim_config;

/* Sets every field of *c to its default (the auto ones to 0). Start a configuration from it and
 * change what you need: nf_sim_new and the deadlock checker take a configuration as it is, and
 * use these defaults when given none. */
NF_API void nf_sim_config_defaults(nf_sim_config *c);

/* ---- routing functions ---------------------------------------------------------------------- */

typedef struct nf_sim_routing nf_sim_routing;

/* A candidate: leave by out_port (1-based port of the router) on a VC in [vc_lo, vc_hi]. */
typedef struct nf_sim_cand {
    uint8_t port, vc_lo, vc_hi;
} nf_sim_cand;

/* "minhop" (table: every min-hop port, VC = hops taken), "updown" (fat trees: up by d-mod-k or
 * adaptively, then down), "dor" (tori built by torus:...: dimension order, dateline VCs),
 * "dfmin" (Dragonfly minimal local-global-local, VC 0 before the global hop, 1 after), "val"
 * (Dragonfly Valiant: via a uniformly random intermediate group), "ugal-l" (Dragonfly: at the
 * source router MIN or VAL by nf_sim_ugal_takes_min over the occupancy of the two first ports,
 * in flits queued behind the crossbar plus flits downstream whose credits are not back, credits
 * in flight included; hops are the switch hops left on each way), "ugal-lt" (the same costs, MIN
 * when cost_min <= bias cost_val + threshold, bias 1 unless given), "ugal-g" (the rule over the
 * occupancy summed along each whole way: the router's own ports now, the others' as at the end of
 * the last cycle). "par" (UGAL-L at the source router; a packet it sent minimally is looked at
 * again at the next router of its source group, which may send it the long way). val and ugal-* use
 * three VC classes (one per group visited), par four (its second local hop in the source group has
 * its own).
 * "ugal-bs" is BookSim2's dragonflynew UGAL: an intermediate switch drawn among all endpoints'
 * switches, minimal when it is in the source group or q_min <= bias q_val + threshold (2 and 30
 * unless given), else minimal to that switch and on; VC classes by phase (0 to the intermediate,
 * 1 after it, 2 from the minimal way's global hop on), which the deadlock checker finds cyclic. */
NF_API const nf_sim_routing *nf_sim_routing_find(const char *name);
NF_API size_t nf_sim_routing_count(void);
NF_API const nf_sim_routing *nf_sim_routing_at(size_t i);
NF_API const char *nf_sim_routing_name(const nf_sim_routing *r);
NF_API const char *nf_sim_routing_summary(const nf_sim_routing *r);

/* A routing that follows installed forwarding tables t (uft.h: OpenSM's or the switches' dump,
 * read against the fabric it will route): at a switch a packet for a CA leaves by the one port
 * the tables hold for the LID of the CA's port on the packet's rail; no entry, port 0, a port
 * with no link or whose link is down, or a port into another CA: no way on (no fallback). VC =
 * switch hops taken, as minhop (injection on VC 0). A packet whose way the tables do not complete
 * (a hole, a loop, a missing link) is counted lost at its source (lost_frac), never sent. Its
 * name is "lft". t outlives it; free it with nf_sim_routing_free. NF_EINVAL (t NULL),
 * NF_ENOMEM; nf_sim_new and the checker refuse it (NF_EINVAL) on a fabric other than t's. */
NF_API int nf_sim_routing_from_uft(const nf_uft *t, nf_sim_routing **out, nf_diag *diag);
/* Frees a routing of nf_sim_routing_from_uft; NULL and the registry's routings: nothing. */
NF_API void nf_sim_routing_free(nf_sim_routing *r);

/* The forwarding tables routing r amounts to on f under its link states, for every switch and
 * LID of f (nf_uft_new): a CA port's LID gets the port the simulator sends a packet on when it
 * has a free choice: the first candidate of r whose link is up, for a packet injected at that
 * switch (input port: one cabled to a CA, else the first cabled; VC 0, no hops taken); at the
 * CA's own switch, the port cabled to it. Every routing that can be tabled picks its ports from
 * the switch and the destination alone (the input port and the hops choose VCs only), so the
 * tables are its first choice at every switch of every path. A switch's own LID gets port 0,
 * another switch's LID the first min-hop port toward it (management traffic, which the
 * simulator does not route). A LID with no way from a switch: no entry. A table routing (lft)
 * gives its tables as they are. c: the configuration (NULL: defaults; VCs at least the routing's
 * minimum). NF_EINVAL (reason in diag) for a routing whose ports depend on the packet (random
 * bits) or the queues (adaptive), or a fabric with no LIDs; NF_ENOMEM. */
NF_API int nf_sim_routing_to_uft(const nf_fabric *f, const nf_hops *h, const nf_sim_routing *r,
                                 const nf_sim_config *c, nf_uft **out, nf_diag *diag);

/* The path of one packet, hop by hop. */
typedef enum nf_sim_trace_end {
    NF_SIM_TRACE_REACHED = 0, /* at the destination */
    NF_SIM_TRACE_LOOP = 1,    /* a switch visited twice (the last hop is the repeat) */
    NF_SIM_TRACE_HOLE = 2,    /* no entry at a switch, or the routing gave no candidate */
    NF_SIM_TRACE_NO_LINK = 3, /* out of a port with no link, or whose link is down */
    NF_SIM_TRACE_ASTRAY = 4   /* into a CA that is not the destination, or port 0 at a switch
                               * that is not it */
} nf_sim_trace_end;

/* "reached", "loop", "hole", "no link", "astray". */
NF_API const char *nf_sim_trace_end_name(nf_sim_trace_end e);

typedef struct nf_sim_trace_hop {
    nf_node node;
    unsigned in_port;    /* the port it came in by; 0 at the source */
    unsigned out_port;   /* the port it leaves by; 0 at the last node */
    unsigned candidates; /* the routing's candidates there (1 out of a CA or with tables; 0 at
                          * the last node) */
} nf_sim_trace_hop;

typedef struct nf_sim_trace {
    nf_sim_trace_hop *hop; /* the nodes visited, source first */
    size_t n;
    nf_sim_trace_end end;
    size_t loop_at; /* LOOP: the index of the first visit of the switch seen again */
} nf_sim_trace;

/* Walks routing r on f (links as they are) from node src to node dst (CAs or switches): src_port
 * is a CA source's port (0: its first cabled), dst_port a CA destination's (0: the source's port
 * number when cabled, as a packet keeps its rail, else its first cabled). At each switch the
 * first candidate whose link is up is followed, as the simulator does with a free choice, for a
 * packet with random bits 0 in an empty network (so val takes one fixed intermediate group and
 * ugal-* go minimal); the tables of lft are followed exactly, the destination switch's entry
 * included. To a switch, routings other than lft follow the first min-hop port (what
 * nf_sim_routing_to_uft writes for switch LIDs). The result is in *out (free with
 * nf_sim_trace_fini); a loop, a hole, a missing link are results, not errors. NF_EINVAL (reason
 * in diag): src or dst not a node, equal, a CA with no cabled port, too few VCs in c (NULL:
 * defaults), a destination with no LID under lft; the routing's own refusals; NF_ENOMEM. */
NF_API int nf_sim_trace_path(const nf_fabric *f, const nf_hops *h, const nf_sim_routing *r,
                             const nf_sim_config *c, nf_node src, unsigned src_port, nf_node dst,
                             unsigned dst_port, nf_sim_trace *out, nf_diag *diag);
NF_API void nf_sim_trace_fini(nf_sim_trace *t);

/* The UGAL rule of the UGAL note: minimal when q_min + h_min w_hop <= bias (q_val + h_val w_hop).
 */
NF_API bool nf_sim_ugal_takes_min(double q_min, unsigned h_min, double q_val, unsigned h_val,
                                  double w_hop, double bias);

/* The deadlock checker: builds the channel dependency graph of routing r under configuration c
 * (NULL: the defaults) on fabric f, its link states as they are (every
 * (channel, VC) a vertex; an edge from the one a packet holds to each one it may request next,
 * over every destination and every state reachable from an injection) and looks for a cycle.
 * NF_OK and *cycle_len 0 when there is none; NF_OK and the cycle's length and a description of
 * it in diag->msg when there is one; NF_EINVAL (the routing refuses the fabric or has too few
 * VCs, reason in diag), NF_ENOMEM. *vertices and *edges (optional) receive the graph's size. */
NF_API int nf_sim_check_deadlock(const nf_fabric *f, const nf_hops *h, const nf_sim_routing *r,
                                 const nf_sim_config *c, uint32_t *cycle_len, uint64_t *vertices,
                                 uint64_t *edges, nf_diag *diag);
/* The same, telling progress(ud, frac) the share of destinations done when it is given. */
NF_API int nf_sim_check_deadlock_progress(const nf_fabric *f, const nf_hops *h,
                                          const nf_sim_routing *r, const nf_sim_config *cfg,
                                          void (*progress)(void *ud, double frac), void *ud,
                                          uint32_t *cycle_len, uint64_t *vertices, uint64_t *edges,
                                          nf_diag *diag);

/* ---- traffic -------------------------------------------------------------------------------- */

/* "uniform", "permutation", "bitcomp", "transpose", "tornado", "hotspot", "worstcase",
 * "alltoall", "stencil3d", "fft3d" (the Q-adaptive authors' Stencil_3D and FFT3D_all2all on an
 * (endpoints a switch) x (switches a group) x groups grid), "allreduce", "hotspot-set" (every
 * eighth endpoint, 7, 15, 23, ..., sends all its packets to one endpoint, the others uniform),
 * and BookSim2's bs-* patterns. */
typedef struct nf_sim_traffic nf_sim_traffic;
NF_API const nf_sim_traffic *nf_sim_traffic_find(const char *name);
NF_API size_t nf_sim_traffic_count(void);
NF_API const nf_sim_traffic *nf_sim_traffic_at(size_t i);
NF_API const char *nf_sim_traffic_name(const nf_sim_traffic *t);
NF_API const char *nf_sim_traffic_summary(const nf_sim_traffic *t);

/* Endpoints are the CAs whose port 1 is cabled to a switch; a CA whose port 2 is too (gft with
 * rails=2) has a dual-port NIC with an injection queue per port: a message's packets all take
 * one rail, successive messages the two in turn when both ends have two, each packet to the
 * destination's port on its rail (the choice per packet, and by load, comes with the Sunway
 * NIC). Loads stay per endpoint: a two-rail NIC can inject up to 2 flits a cycle. */
typedef struct nf_sim_injection {
    double load;       /* offered flits per endpoint per cycle, 0..1 */
    bool bursty;       /* on/off: bursts of burst_pkts packets on average at full rate */
    double burst_pkts; /* mean burst length in packets (bursty only; default 8) */
    unsigned msg_pkts; /* packets per message (default 1) */
} nf_sim_injection;

/* ---- scripted messages ------------------------------------------------------------------------
 */

typedef struct nf_sim nf_sim;

/* The Sunway NIC's message kinds (the Sunway paper). Each has a completion event:
 * WRITE      data src -> dst; the target NIC acknowledges the last packet with a one-packet
 *            reply; complete when the reply is back at src (the initiator may reuse its buffer).
 * READ       a one-packet request src -> dst, served by the target NIC as a write of the data
 *            dst -> src; complete when the data is in at src.
 * PUT_REPLY  data src -> dst; complete at dst when its last packet is in: the target NIC then
 *            increments a reply word there, so the target learns of the data without a message.
 * SHORT      one packet src -> dst (bytes at most a packet's payload) with the NIC's short
 *            overhead; complete at dst. */
typedef enum nf_sim_msg_kind {
    NF_SIM_WRITE = 0,
    NF_SIM_READ = 1,
    NF_SIM_PUT_REPLY = 2,
    NF_SIM_SHORT = 3,
    NF_SIM_MCAST = 4, /* data src -> every other member of group `group`, replicated by the
                       * routers along its tree (nf_sim_set_mcast); complete when every member
                       * has it all; rail 0 */
    /* Asynchronous queue messages: data src -> dst written by the target NIC straight into the
     * target's receive-queue ring (one entry a message, whatever its size; the source names no
     * target address). When its data is all in: a free entry, and it is complete there; the
     * ring full, the unreliable kind is dropped (nf_sim_msg_times.dropped; it ends then, and
     * messages after it are released as after a completion), while the reliable kind is
     * refused: the target NIC sends a one-packet NAK back (its short overhead), and the source
     * NIC, when the NAK is in, waits queue_backoff cycles and sends the whole message again
     * (its message overhead again), as often as it takes; so it is written once, and only
     * once. Rings and their host: nf_sim_config's queue_*, nf_sim_set_queue_ring. */
    NF_SIM_QUEUE_RELIABLE = 5,
    NF_SIM_QUEUE_UNRELIABLE = 6
} nf_sim_msg_kind;

/* Which port of a dual-port NIC the packets take: fixed (the descriptor's), or per packet the
 * port with fewer flits queued (dynamic: one message's packets spread over both rails and
 * arrive out of order; completion counts them all in). A one-port NIC always uses its port. A
 * multicast goes on rail 0 unless its trees are on both rails (nf_sim_set_mcast_rails). */
typedef enum nf_sim_rail_mode {
    NF_SIM_RAIL0 = 0,
    NF_SIM_RAIL1 = 1,
    NF_SIM_RAIL_DYNAMIC = 2
} nf_sim_rail_mode;

typedef struct nf_sim_msg {
    uint32_t src, dst; /* endpoints, 0 .. nf_sim_endpoints() - 1 */
    uint64_t bytes;
    nf_sim_msg_kind kind;
    nf_sim_rail_mode rail;
    uint64_t at;    /* not released before this cycle */
    uint32_t group; /* NF_SIM_MCAST: the group (its source must be a member) */
    bool by_nic;    /* issued by the NIC itself (hardware collectives): the short overhead */
    /* with message engines (nf_sim_config.nic_engines): the send queue (a process's virtual
     * interface) it is posted to, 0 .. NF_SIM_MAX_QUEUES - 1, and its descriptor's fast flag
     * (its packets go first; the short overhead) */
    uint16_t queue;
    bool fast;
    /* a fast short message (FSW, the Sunway paper): descriptor and data written by the host over
     * PIO into the NIC's on-chip storage, sparing the two PCIe reads: the short overhead plus
     * the PIO writes (nf_sim_config.nic_pio_bytes); at most one packet's payload, not a
     * multicast or a queue message */
    bool fsw;
    /* source routed (the Sunway router's source routing, which management messages use for
     * discovery and table updates): each phase's packets follow a path fixed when they are sent,
     * a shortest one over the switch links up at that moment (the lowest port first at each
     * switch), port by port, whatever the routing function would do; VC = links taken (a
     * unicast, not a multicast) */
    bool source_routed;
} nf_sim_msg;

/* Hardware multicast: the groups g (CA members) and their trees m (any nf_mcast engine; every
 * group routed): each router replicates a group's packet to every port of the tree at it but
 * the one it came in by, all at once: the packet takes an output VC with room on every branch
 * (or waits, holding none), then each flit crosses to all of them in one crossbar pass, when
 * all are free; each copy on VC hops + 1 as it climbs, 0 into a NIC. Copies count at their own
 * group's members only (a tree shared by several groups floods them all). A member that is a
 * switch itself (its port 0) takes a packet as it crosses the switch (or, at the end of the
 * tree, instead of its being dropped there), a cycle on, as if its port 0 were a link of one
 * cycle; it counts among a multicast's receivers. Replaces earlier groups. NF_EINVAL (a group not
 * routed, a member without a cabled port, a switch member the tree does not reach),
 * NF_ENOMEM. With link errors (nf_sim_config.ber) a corrupt multicast packet is sent again
 * over its link alone, as a unicast one is, and replicated again where it arrives whole; a
 * corrupt one whose copies have left (cut-through) has every copy's tail marked bad, so each
 * is discarded where it is next held whole: every member takes one good copy. */
NF_API int nf_sim_set_mcast(nf_sim *s, const nf_groups *g, const nf_mcast *m);
/* The multicast chain on both rails of a dual-rail fabric: rail0's trees over the members' port
 * 1 (nf_mcast_route), rail1's over their port 2 (nf_mcast_route_port), each rail's switches
 * replicating its own copies. A multicast then sends each packet on the rail its message names
 * (nf_sim_msg.rail: with NF_SIM_RAIL_DYNAMIC, per packet, as a unicast message's), and every
 * member takes each packet once, from the rail it came on. The tables hold both rails' entries.
 * rail1 NULL is nf_sim_set_mcast. NF_EINVAL as nf_sim_set_mcast, and for trees of a group that
 * share a switch (the rails meet) or a group with a switch member (it would miss the other
 * rail's packets). */
NF_API int nf_sim_set_mcast_rails(nf_sim *s, const nf_groups *g, const nf_mcast *rail0,
                                  const nf_mcast *rail1);
/* With nf_sim_config.mcast_port_entries, the switches' multicast tables: each switch port holds
 * that many groups' entries (the Sunway router: 32), a group taking one at every switch port of
 * its tree (and port 0 at a switch member). nf_sim_set_mcast fits the groups in order; a group
 * one of whose ports is full is refused: it gets no table entries, and a multicast to it is
 * sent as unicast copies from its source to every other member endpoint, one after another on
 * rail 0 (what a messaging library falls back to; its switch members get nothing). Whether
 * group g was installed (false for an unknown group), and how many were refused. */
NF_API bool nf_sim_mcast_installed(const nf_sim *s, uint32_t g);
NF_API uint32_t nf_sim_mcast_refused(const nf_sim *s);

/* When a scripted message was released (its NIC work begun), its data fully in at its target,
 * and completed (see the kinds); UINT64_MAX for what has not happened. */
typedef struct nf_sim_msg_times {
    /* due: its time or its last dependence done (its host's work begins when the host is
     * free); released: its NIC's work begun */
    uint64_t due, released, data_in, done;
    uint32_t packets; /* of its data */
    /* queue messages: data_in is the last attempt's; done when it took a ring entry */
    uint32_t retries; /* the reliable kind: refusals (each one NAK and one more sending) */
    bool dropped;     /* the unreliable kind: found the ring full (done stays UINT64_MAX) */
} nf_sim_msg_times;

/* The endpoints the simulator knows (CAs with a port cabled to a switch), and the CA of one. */
NF_API uint32_t nf_sim_endpoints(const nf_sim *s);
NF_API nf_node nf_sim_endpoint_ca(const nf_sim *s, uint32_t e);

/* A script is a set of messages and "after" edges: a message is released at its `at`, or when
 * every message it comes after has completed, whichever is later, plus its host's time
 * (host_msg_cycles, once its host is free) and its NIC's overhead. Post
 * them (ids 0, 1, ... in order), add edges, then run. NF_EINVAL for endpoints out of range, a
 * message to itself, a SHORT or an FSW over one packet (an FSW multicast or queue message), a
 * queue past NF_SIM_MAX_QUEUES, a message of more
 * than 2^24 packets, rail 1 of a one-port NIC, an edge to or from an unknown id or from a message
 * to itself; NF_ENOMEM. */
NF_API int nf_sim_post(nf_sim *s, const nf_sim_msg *m, uint32_t *id);
NF_API int nf_sim_after(nf_sim *s, uint32_t before, uint32_t after);
/* Forgets the script. */
NF_API void nf_sim_script_clear(nf_sim *s);
/* Endpoint e's receive-queue ring holds `entries` queue messages from the next run on (the
 * others': nf_sim_config's queue_entries); kept until changed, whatever the script. NF_EINVAL
 * for an endpoint out of range or 0 entries, NF_ENOMEM. */
NF_API int nf_sim_set_queue_ring(nf_sim *s, uint32_t e, unsigned entries);

/* Collectives built of scripted messages (software collectives): each message is a put with a
 * reply word (a short message when it fits one packet), released when the data it carries is
 * in at its sender.
 * BCAST_BINOMIAL  rank 0's bytes to every rank: in round k, rank r < 2^k sends to r + 2^k.
 * ALLREDUCE_RD    recursive doubling: in step k every rank sends its whole vector to rank
 *                 r xor 2^k (n a power of two); log2 n steps.
 * ALLREDUCE_RING  reduce-scatter then allgather around the ring r -> r + 1: 2 (n - 1) steps of
 *                 ceil(bytes / n) each.
 * BARRIER         recursive doubling with empty messages (n a power of two). */
typedef enum nf_sim_coll {
    NF_SIM_BCAST_BINOMIAL = 0,
    NF_SIM_ALLREDUCE_RD = 1,
    NF_SIM_ALLREDUCE_RING = 2,
    NF_SIM_BARRIER = 3,
    NF_SIM_REDUCE_BINOMIAL = 4 /* to rank 0 up the binomial tree: rank r sends to r less its
                                * highest bit once all its children's data are in */
} nf_sim_coll;

/* Posts collective c over the endpoints ranks[0..n) (rank i is ranks[i]) with `bytes` per
 * rank, the messages on `rail`; their ids are *first .. *first + *count - 1, and the collective
 * is complete when the last of them is. NF_EINVAL for n < 2, a repeated or unknown endpoint, a
 * power-of-two algorithm on another n, an unknown c; NF_ENOMEM. */
NF_API int nf_sim_post_collective(nf_sim *s, nf_sim_coll c, const uint32_t *ranks, uint32_t n,
                                  uint64_t bytes, nf_sim_rail_mode rail, uint32_t *first,
                                  uint32_t *count);

/* Hardware collectives (the Sunway paper) over a software-defined logical tree on the ranks (rank
 * i's parent is (i - 1) / fanin, rank 0 the root): each NIC sends its rank's contribution up to the
 * parent's NIC once every child's has arrived, the reduction done in the NICs (a short message: the
 * NIC's short overhead, no host); then the root's NIC multicasts the result over group `group`
 * (nf_sim_set_mcast; its members should be the ranks). BCAST: the root's multicast only; REDUCE:
 * the gather only; ALLREDUCE and BARRIER (0 bytes): both. bytes at most one packet. NF_EINVAL as
 * nf_sim_post_collective, for fanin 0, bytes over a packet, or a group the root is not in;
 * NF_ENOMEM. */
typedef enum nf_sim_hw_coll {
    NF_SIM_HW_BCAST = 0,
    NF_SIM_HW_REDUCE = 1,
    NF_SIM_HW_ALLREDUCE = 2,
    NF_SIM_HW_BARRIER = 3
} nf_sim_hw_coll;
NF_API int nf_sim_post_hw_collective(nf_sim *s, nf_sim_hw_coll c, const uint32_t *ranks, uint32_t n,
                                     uint64_t bytes, unsigned fanin, uint32_t group,
                                     uint32_t *first, uint32_t *count);

/* The result of a reduction as the NICs of that logical tree compute it (the Sunway paper,
 * section 2.3: single and double floats, 32- and 64-bit integers; sum, max, min, and, or, xor):
 * each rank combines its own value with its children's results in child order, whatever order
 * they arrive in, so a floating-point sum is the same bits every run. Integer sums wrap, as a
 * hardware adder does; AND, OR and XOR on a float act on its bit pattern; MAX and MIN of floats
 * as C's comparisons (a NaN operand loses to the other). With fanin 1 the tree is a chain, rank
 * r's parent r - 1: the result is v[0] op (v[1] op (... op v[n - 1])), which is, a float sum
 * being commutative though not associative, the sequential sum from v[n - 1] down to v[0]: the
 * "special tree" the paper uses to fix a floating sum's order (give the ranks in reverse to sum
 * from v[0] up). n 0 or fanin 0: 0. */
typedef enum nf_sim_op {
    NF_SIM_SUM = 0,
    NF_SIM_MAX = 1,
    NF_SIM_MIN = 2,
    NF_SIM_AND = 3,
    NF_SIM_OR = 4,
    NF_SIM_XOR = 5
} nf_sim_op;
NF_API double nf_sim_tree_reduce_f64(const double *v, uint32_t n, unsigned fanin, nf_sim_op op);
NF_API int64_t nf_sim_tree_reduce_i64(const int64_t *v, uint32_t n, unsigned fanin, nf_sim_op op);
NF_API float nf_sim_tree_reduce_f32(const float *v, uint32_t n, unsigned fanin, nf_sim_op op);
NF_API int32_t nf_sim_tree_reduce_i32(const int32_t *v, uint32_t n, unsigned fanin, nf_sim_op op);

typedef struct nf_sim_script_result {
    uint64_t cycles;    /* until the last completion (or the stop) */
    uint32_t done;      /* messages completed */
    bool deadlock;      /* the watchdog fired */
    bool unfinished;    /* max_cycles reached first, or a cycle of "after" edges */
    uint64_t flit_hops; /* flits moved over switch-to-switch channels */
    double wall_s;
    /* queue messages */
    uint32_t dropped;     /* unreliable ones dropped at a full ring (not in done) */
    uint64_t retries;     /* reliable ones' refusals, each sent again */
    uint64_t ring_writes; /* entries written into rings: one per queue message done */
    /* message engines: the most messages one engine had in flight at once */
    uint32_t max_in_flight;
} nf_sim_script_result;

/* Runs the script from an empty network with no synthetic traffic until every message has
 * completed or been dropped (or max_cycles, or the watchdog). NF_OK (deadlock and unfinished
 * are results), NF_ENOMEM. Then nf_sim_msg_times gives each message's times. */
NF_API int nf_sim_run_script(nf_sim *s, uint64_t max_cycles, nf_sim_script_result *out);
NF_API int nf_sim_msg_times_of(const nf_sim *s, uint32_t id, nf_sim_msg_times *out);

/* ---- a run ---------------------------------------------------------------------------------- */

/* A simulator over fabric f (f, h outlive it; both only read, the link states copied when the
 * simulator is made and when each run begins) with configuration c (NULL: the defaults).
 * NF_EINVAL with the reason in diag when a knob is out of its range (see nf_sim_config), the
 * routing refuses the fabric or the configuration does not fit it (too few VCs for the
 * routing, buffers smaller than a packet). Switches of every radix a fabric holds are taken
 * (NF_SIM_MAX_RADIX); fabrics whose switches have at most 64 ports run a faster path. */
NF_API int nf_sim_new(const nf_fabric *f, const nf_hops *h, const nf_sim_config *c,
                      const nf_sim_routing *r, const nf_sim_traffic *t, nf_sim **out,
                      nf_diag *diag);
NF_API void nf_sim_free(nf_sim *s);

typedef struct nf_sim_result {
    double offered;           /* flits per endpoint per cycle generated in the window */
    double accepted;          /* flits per endpoint per cycle delivered in the window */
    double lat_mean, lat_p99; /* packet latency, cycles: creation to tail delivery */
    double msg_lat_mean, msg_lat_p99;
    double net_lat_mean; /* injection to delivery (no source queueing) */
    double hops_mean;    /* switch-to-switch links per packet */
    double minimal_frac; /* share of packets routed minimally: on a Dragonfly routing, not
                          * through an intermediate group; else a path of the least switch hops */
    double link_util_mean, link_util_max; /* inter-switch channels, over the window */
    bool saturated;            /* measured packets not all delivered by the drain limit, or the
                                * accepted load below 95% of the offered */
    bool deadlock;             /* the watchdog fired: flits in flight and none moved for a while */
    uint64_t packets;          /* measured packets delivered */
    uint64_t cycles;           /* simulated in all (warm-up, window, drain) */
    uint64_t flit_hops;        /* flits moved over channels */
    uint64_t unroutable;       /* times the routing gave a head packet no port (it then waits) */
    double lost_frac;          /* of the flits generated in the window, the share with no way to
                                * their destination (failed links; routings that can tell, ftable):
                                * dropped at the source, not in offered */
    uint64_t dropped_pkts;     /* discarded in the network: a link failed after they left
                                * (routings that can tell, ftable) */
    uint64_t excluded_msgs;    /* with exclude_unroutable: messages of the window not sent, their
                                * endpoints' switches being disconnected */
    uint64_t state_bytes;      /* a learning routing (qadapt): the learned state of the switch that
                                * keeps the most, bytes (0 for the others) */
    uint64_t state_bytes_flat; /* the same with a row per destination switch (plain Q-routing) */
    /* link errors (nf_sim_config.ber), over the measurement window: */
    uint64_t corrupt_pkts; /* packets a receiver found corrupt (each sent again over its link) */
    uint64_t wasted_flits; /* flits of corrupt copies carried over links past the one they were
                            * corrupted on (cut-through only) */
    double saf_frac;       /* of the packets received over switch-to-switch links, the share
                            * stored whole before they went on (NF_SIM_SAF: 1) */
    /* traffic with a hot endpoint (hotspot, hotspot-set), else 0: the measured packets to
     * other endpoints (the background), their latency; the flits delivered to the hot endpoint
     * per cycle of the window (all its rails together) */
    double bg_lat_mean, bg_lat_p99;
    double hot_accepted;
    double wall_s;
    char stuck[256]; /* with deadlock: some of the stuck channels */
} nf_sim_result;

/* A run's phases in cycles, each as given (nf_sim_run with no phase: NF_SIM_DEFAULT_*). */
typedef struct nf_sim_phase {
    uint64_t warmup;    /* before the window (0: none) */
    uint64_t window;    /* the measurement window, at least 1 */
    uint64_t drain_max; /* after the window, at most, for the measured packets (0: none) */
} nf_sim_phase;

/* Sets link l down (up: up) when cycle `cycle` of every run begins (runs count cycles from 0),
 * in the simulator's own copy of the link states: each run (nf_sim_run, nf_sim_run_script)
 * starts from the fabric's link_state as it is then, and the fabric is never written, so
 * simulators of one fabric may run at the same time. Every routing skips a failed port;
 * ftable's packets whose way has gone are discarded where they stand (dropped_pkts). Packets
 * already queued for the link when it fails still cross it. NF_EINVAL, NF_ENOMEM. */
NF_API int nf_sim_link_at(nf_sim *s, nf_link l, uint64_t cycle, bool up);

/* Sets the bit error rate of switch-to-switch link l (both ways) to ber, 0 to 1, for every later
 * run, in place of nf_sim_config.ber. NF_EINVAL (reason in diag): l not a link between two
 * switches, ber out of range; NF_ENOMEM. */
NF_API int nf_sim_set_link_ber(nf_sim *s, nf_link l, double ber, nf_diag *diag);

/* Runs one load point from an empty network: warm-up, measurement window, drain. Progress
 * (a fraction 0..1: cycles run over those run and still to come, the drain estimated from the
 * measured packets in flight and the rate they arrive at; 1 at the end) to progress(ud, f)
 * when given. NF_OK (saturation and deadlock are results),
 * NF_EINVAL (a window of 0 cycles, a load outside 0..1), NF_ENOMEM. */
NF_API int nf_sim_run(nf_sim *s, const nf_sim_injection *inj, const nf_sim_phase *ph,
                      void (*progress)(void *ud, double frac), void *ud, nf_sim_result *out);

/* A listed packet (nf_sim_set_packets). */
typedef struct nf_sim_packet {
    uint64_t at;       /* the cycle it is made (runs count cycles from 0) */
    uint32_t src, dst; /* endpoints, 0 .. nf_sim_endpoints() - 1 (rail 0); src == dst allowed */
    int vc;            /* the VC its NIC starts it on, 0 .. vcs - 1, waiting for it while it is
                        * held or short of room; -1: as inject_vc chooses */
} nf_sim_packet;

/* Makes every later run's packets from list (copied; n of them, in order of at) instead of the
 * random sources: each a one-packet message at cycle at, measured when at falls in the window,
 * the injection's load, pattern and message length unused (bursty too). A trace of another
 * simulator's packets, run here: nf_sim_packet_arrival tells when each one arrived. n 0: the
 * sources again. NF_EINVAL (reason in diag): an endpoint or VC out of range, at not in order;
 * NF_ENOMEM. */
NF_API int nf_sim_set_packets(nf_sim *s, const nf_sim_packet *list, size_t n, nf_diag *diag);
/* The cycle listed packet i's tail reached its destination in the last run; UINT64_MAX when it
 * did not (not made in the run's cycles, or still on its way at the end), or no such packet. */
NF_API uint64_t nf_sim_packet_arrival(const nf_sim *s, size_t i);

/* One window of a run's timeline (nf_sim_set_timeline). */
typedef struct nf_sim_window {
    uint64_t cycle;      /* the window's first cycle (runs count cycles from 0) */
    double offered;      /* flits per endpoint per cycle generated in it */
    double accepted;     /* flits per endpoint per cycle delivered in it */
    double lat_mean;     /* mean latency (creation to tail delivery, cycles) of the packets whose
                          * tail was delivered in it; 0 when none */
    double minimal_frac; /* the share of those packets routed minimally (as nf_sim_result) */
    uint64_t packets;    /* packets delivered in it */
    uint64_t cycles;     /* its length: the timeline's window, or less for the last one, which
                          * ends with the run; its rates are over these cycles */
} nf_sim_window;

/* Keeps a timeline of every later run (nf_sim_run): its figures per window of `cycles` cycles
 * over the whole run, warm-up, window and drain; 0 turns it off. Every packet delivered counts,
 * measured or not (a multicast copy at its group's members only); a window's rates are over its
 * own cycles (the last one ends with the run, so it may be shorter). The same for any number of
 * threads. Off when the simulator is made. NF_EINVAL (s NULL). */
NF_API int nf_sim_set_timeline(nf_sim *s, uint64_t cycles);
/* The last run's timeline: *out (owned by s, valid until the next run or nf_sim_free), returns
 * the number of windows (0 and NULL with no timeline, or when the run failed). */
NF_API size_t nf_sim_timeline(const nf_sim *s, const nf_sim_window **out);

/* The ordered pairs of distinct endpoints (rail 0) whose packets would wait for ever: those no
 * path joins by the distances the simulator was made with, and those the failed links part: a
 * link counts as down when the fabric has it down now or nf_sim_link_at sets it down at some
 * cycle (a repair scheduled too is not looked at: the count is then an upper bound). A routing
 * that drops the packets that can no longer arrive (ftable: lost_frac, dropped_pkts) has only
 * the first kind. *pairs, and one of them as CA nodes in *src, *dst (NF_NONE when there is
 * none). O(switches log switches + links). Returns 0 or NF_ENOMEM. */
NF_API int nf_sim_unroutable_pairs(const nf_sim *s, uint64_t *pairs, nf_node *src, nf_node *dst);

/* The flits every switch-to-switch channel carried in the last run's measurement window: for
 * each global port g of a switch whose link leads to a switch, flits[g]; every other entry 0.
 * flits has one entry per global port of the fabric (port_off[n_nodes]). */
NF_API void nf_sim_link_flits(const nf_sim *s, uint32_t *flits);

/* Flits injected, delivered, and in the network now (conservation: injected = delivered + in
 * flight at every cycle; the tests check it through nf_sim_step). */
typedef struct nf_sim_counts {
    uint64_t injected, delivered, in_flight, cycle;
    uint64_t dropped; /* flits discarded in the network (nf_sim_link_at) */
    /* link errors: flits sent again from replay buffers, and flits of corrupt copies discarded
     * (injected + replayed = delivered + in_flight + dropped + discarded) */
    uint64_t replayed, discarded;
} nf_sim_counts;
/* Runs n cycles at the current injection (set by nf_sim_run's inj, or nf_sim_set_injection). */
NF_API int nf_sim_set_injection(nf_sim *s, const nf_sim_injection *inj);
NF_API int nf_sim_step(nf_sim *s, uint64_t n);
NF_API void nf_sim_get_counts(const nf_sim *s, nf_sim_counts *out);

#endif
