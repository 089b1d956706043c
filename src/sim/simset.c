/* SPDX-License-Identifier: MIT */
/* The simulator's settings table (simset.h): each setting's every fact in one row, and the
 * defaults, checks and texts made from the rows. */
#include "netfab/simset.h"

#include "util/diag.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

static const char *const no_yes[] = {"no", "yes", NULL};
static const char *const proxies[] = {"all", "restricted", "qvl", "qvr", "qvd", "qvp", "qvq", NULL};
static const char *const q_rows[] = {"group-host", "group", "router", NULL};
static const char *const q_srcs[] = {"any", "global", NULL};
static const char *const switchings[] = {"vct", "saf", "dynamic", NULL};
static const char *const vc_allocs[] = {"combined", "separate", NULL};
static const char *const inject_vcs[] = {"room", "random", "rr", "routing", NULL};
static const char *const eject_vcs[] = {"any", "arrival", "routing", NULL};
static const char *const sw_inputs[] = {"vc", "output", NULL};
static const char *const pass_clocks[] = {"busy", "every", NULL};
static const char *const port_orders[] = {"own", "booksim", NULL};

#define FIELD(st, f) .offset = offsetof(st, f), .size = sizeof(((st *)0)->f)
/* a row of nf_sim_config (C), nf_sim_phase (P), nf_sim_injection (I) */
#define C(nm, f) .name = nm, .key = #f, .in = NF_SIMSET_CONFIG, FIELD(nf_sim_config, f)
#define P(nm, f) .name = nm, .key = #f, .in = NF_SIMSET_PHASE, FIELD(nf_sim_phase, f)
#define I(nm, f) .name = nm, .key = #f, .in = NF_SIMSET_INJECTION, FIELD(nf_sim_injection, f)
#define UINT(l, h) .type = NF_SIMSET_UINT, .lo = (l), .hi = (h)
#define REAL(l, h) .type = NF_SIMSET_REAL, .rlo = (l), .rhi = (h)
#define CHOICE(v) .type = NF_SIMSET_CHOICE, .choices = (v)
#define BOOL .type = NF_SIMSET_BOOL, .choices = no_yes
#define BIG 1000000000u /* cycles and counts with no limit of their own */

static const nf_simset table[] = {
    /* the run's phases */
    {P("cycles", window), UINT(1, BIG), .def = NF_SIM_DEFAULT_WINDOW, .arg = "N",
     .help = "cycles measured, after the warm-up"},
    {P("warmup", warmup), UINT(0, BIG), .def = NF_SIM_DEFAULT_WARMUP, .arg = "N",
     .help = "cycles before the measurement"},
    {P("drain", drain_max), UINT(0, BIG), .def = NF_SIM_DEFAULT_DRAIN, .arg = "N",
     .help = "then at most N cycles for the measured packets to arrive"},
    /* the router */
    {C("vcs", vcs), UINT(1, NF_SIM_MAX_VCS), .def = 4, .arg = "V",
     .help = "virtual channels per port; val and ugal-* need 3, par 4"},
    {C("buf", buf_flits), UINT(1, NF_SIM_MAX_BUF_FLITS), .def = 32, .arg = "FLITS",
     .help = "input buffer per VC, in flits, at least a packet"},
    {C("pkt", pkt_flits), UINT(1, 65535), .def = 1, .arg = "FLITS", .help = "flits per packet"},
    {I("msg", msg_pkts), UINT(1, 65535), .flags = NF_SIMSET_AUTO, .def = 1, .arg = "PKTS",
     .help = "packets per message", .def_text = "1; 0 is 1 too"},
    {C("router-delay", router_delay), UINT(0, 1000), .flags = NF_SIMSET_BOOKSIM, .def = 3,
     .booksim = 1, .arg = "C", .help = "cycles from a head flit's arrival to its switch traversal"},
    {C("credit-delay", credit_delay), UINT(0, 1000), .flags = NF_SIMSET_BOOKSIM, .def = 2,
     .booksim = 3, .arg = "C", .help = "cycles before a freed slot's credit leaves for upstream"},
    {C("nic-delay", nic_delay), UINT(0, 255), .flags = NF_SIMSET_BOOKSIM, .def = 0, .booksim = 1,
     .arg = "C",
     .help = "cycles a flit spends in its NIC before the host link; BookSim2's injection channel "
             "takes a cycle more than its others, as it writes an injected flit after the "
             "channels have read their inputs for the cycle"},
    {C("lat-host", lat_host), UINT(1, 255), .def = 1, .arg = "C",
     .help = "latency of host links, cycles"},
    {C("lat-local", lat_local), UINT(1, 255), .def = 1, .arg = "C",
     .help = "latency of local links, cycles"},
    {C("lat-global", lat_global), UINT(1, 255), .def = 1, .arg = "C",
     .help = "latency of global links, cycles"},
    {C("speedup", speedup), REAL(0.1, 64), .def = 1, .arg = "S",
     .help = "internal speedup: crossbar flits per cycle per port"},
    {C("alloc-iters", alloc_iters), UINT(1, 64), .flags = NF_SIMSET_BOOKSIM, .def = 1, .booksim = 1,
     .arg = "N", .help = "switch allocator iterations"},
    {C("out-buf", out_buf), UINT(0, NF_SIM_MAX_BUF_FLITS *NF_SIM_MAX_VCS), .flags = NF_SIMSET_AUTO,
     .arg = "FLITS", .help = "output queue per port behind the crossbar",
     .def_text = "0: as --buf, and at least two packets"},
    {C("shared", shared_flits), UINT(0, NF_SIM_MAX_BUF_FLITS), .def = 0, .arg = "FLITS",
     .help = "a pool per input port its VCs share when their own buffers are full"},
    {C("vc-alloc", vc_alloc), CHOICE(vc_allocs), .flags = NF_SIMSET_BOOKSIM, .def = 0,
     .booksim = NF_SIM_VA_SEPARATE,
     .help = "combined: a head gets its output VC in the pass it asks for the switch; separate "
             "(BookSim2's router): VC allocation is a pass of its own, and a VC starts its next "
             "packet no earlier than the pass after a tail left"},
    {C("inject-vc", inject_vc), CHOICE(inject_vcs), .flags = NF_SIMSET_BOOKSIM, .def = 0,
     .booksim = NF_SIM_INJ_ROUTING,
     .help = "the VC a NIC starts a packet on: room (the routing's injection VC with most room), "
             "random (any VC, drawn at each try), or rr (BookSim2's: from the one after the "
             "last, the first free VC with a slot), or routing (BookSim2's: random for the "
             "Dragonfly routings, rr for the others)"},
    {C("eject-vc", eject_vc), CHOICE(eject_vcs), .flags = NF_SIMSET_BOOKSIM, .def = 0,
     .booksim = NF_SIM_EJ_ROUTING,
     .help = "the VC a packet leaves its last switch on: any, or arrival (BookSim2's Dragonfly "
             "routings: the VC it came in on), or routing (BookSim2's: arrival for the Dragonfly "
             "routings, any for the others)"},
    {C("sw-input", sw_input), CHOICE(sw_inputs), .flags = NF_SIMSET_BOOKSIM, .def = 0,
     .booksim = NF_SIM_SWIN_OUTPUT,
     .help = "what an input asks the switch for: vc (the first of its VCs that may, round-robin) "
             "or output (BookSim2's allocator: per output the VC nearest that pointer, then the "
             "output nearest a second pointer, over the outputs)"},
    {C("pass-clock", pass_clock), CHOICE(pass_clocks), .flags = NF_SIMSET_BOOKSIM, .def = 0,
     .booksim = NF_SIM_CLOCK_EVERY,
     .help = "the cycles that give a router its crossbar passes: busy (those it holds flits in) "
             "or every (BookSim2's internal speedup: every router every cycle, all in step)"},
    {C("nic-prompt-credits", nic_prompt_credits), BOOL, .flags = NF_SIMSET_BOOKSIM, .booksim = 1,
     .help = "a NIC takes its credits back as they arrive, without --credit-delay (BookSim2's "
             "traffic manager: its routers add the delay on their side)"},
    {C("port-order", port_order), CHOICE(port_orders), .flags = NF_SIMSET_BOOKSIM, .def = 0,
     .booksim = NF_SIM_PORTS_BOOKSIM,
     .help = "the order of a switch's ports in its round-robin arbiters: own, or booksim "
             "(BookSim2's numbering of them, with dor-bs: per dimension plus then minus, its "
             "dimension 0 first, then the hosts)"},
    {C("body-delay", body_delay), UINT(0, 1000), .flags = NF_SIMSET_BOOKSIM, .def = 0, .booksim = 1,
     .arg = "C",
     .help = "cycles a flit behind its packet's head waits, when it arrives at an empty VC, "
             "before it may cross (BookSim2's body flit asks for the switch the cycle it is "
             "read in)"},
    {C("xbar-pass", xbar_pass), BOOL, .flags = NF_SIMSET_BOOKSIM, .booksim = 1,
     .help = "a flit granted the switch crosses it in the next pass, so one granted in a cycle's "
             "last pass leaves a cycle later (BookSim2's switch traversal stage)"},
    /* routing */
    {C("adaptive", adaptive), BOOL,
     .help = "table routings take the candidate port with most credits"},
    {C("bias", bias), REAL(0, 1e12), .flags = NF_SIMSET_AUTO, .arg = "B",
     .help = "ugal-l: minimal when q_min + h_min * w_hop <= bias * (q_val + h_val * w_hop), "
             "queues in flits",
     .def_text = "0: 2.5, for ugal-g 1"},
    {C("w-hop", w_hop), REAL(0, 1e9), .def = 1, .arg = "FLITS",
     .help = "UGAL: the cost of a hop in flits of queue (0: hops cost nothing)"},
    {C("threshold", threshold), REAL(0, 1e9), .flags = NF_SIMSET_AUTO, .arg = "FLITS",
     .help = "ugal-lt: minimal when cost_min <= B * cost_val + threshold, B --bias or 1",
     .def_text = "0: one VC buffer"},
    {C("proxy", proxy), CHOICE(proxies), .def = 0,
     .help = "val, ugal-*, par: the intermediate group among all others (all); among the groups "
             "the source router's own global links reach, the destination's left out "
             "(restricted); Navaridas and Pascual's restrictive proxies, over links, a draw of "
             "the source or destination group going minimally: the source router's (qvl), the "
             "destination router's (qvr), either (qvd), the source endpoint's private slice of "
             "the source router's (qvp), a slice shared with the next endpoint (qvq)"},
    {C("q-alpha", q_alpha), REAL(1e-6, 1), .def = 0.2, .arg = "A",
     .help = "qadapt, qadapt-nf: learning rate, the share of an estimate's error corrected at "
             "each return (qadapt: when the news is better; the authors' learning_rate)"},
    {C("q-alpha2", q_alpha2), REAL(1e-6, 1), .def = 0.04, .arg = "A",
     .help = "qadapt: the learning rate when the news is worse (the authors' learning_rate2)"},
    {C("q-explore", q_explore), REAL(0, 1), .def = 0.001, .arg = "P",
     .help = "qadapt, qadapt-nf: the chance a deciding router sends a packet by a random port "
             "rather than its choice (the authors' epsilon)"},
    {C("q-threshold1", q_threshold1), REAL(0, 1), .def = 0.2, .arg = "R",
     .help = "qadapt: the source router takes the port of least estimate only when the minimal "
             "port's is higher by R of itself (the authors' q_threshold1)"},
    {C("q-threshold2", q_threshold2), REAL(0, 1), .def = 0.35, .arg = "R",
     .help = "qadapt: the intermediate group's first router takes a local port to a router drawn "
             "for the packet only when the minimal port's estimate is higher by R of itself (the "
             "authors' q_threshold2)"},
    {C("q-row", q_row), CHOICE(q_rows), .def = 0,
     .help = "qadapt: the table's rows: destination group x the source endpoint's place at its "
             "router (the authors' destG_srcN), destination group (g), destination router (r)"},
    {C("q-src", q_src_global), CHOICE(q_srcs), .def = 0,
     .help = "qadapt: the ports the source router weighs against the minimal one: any switch "
             "port (the authors'), or its global ports only (a local detour is routed minimally "
             "from the next router on, through the same global link)"},
    {C("q-threshold", q_threshold), REAL(0, 1e9), .flags = NF_SIMSET_AUTO, .arg = "C",
     .help = "qadapt-nf: the long way only when expected sooner than the minimal one by more than C "
             "cycles",
     .def_text = "0: a local hop's, router delay + local latency"},
    {C("q-sample", q_sample), UINT(0, 255), .def = 1, .arg = "K",
     .help = "qadapt-nf: the long ways weighed against the minimal one, K drawn at random per "
             "packet, 0 all"},
    {C("q-bias", q_bias), REAL(1, 100), .def = 1, .arg = "B",
     .help = "qadapt-nf: the long way only when B x its estimate + the threshold is below the "
             "minimal way's"},
    {C("q-local", q_local), REAL(0, 1000), .def = 1, .arg = "W",
     .help = "qadapt-nf: add W cycles per flit waiting at a candidate's port now to its estimate; "
             "0 the estimate alone"},
    /* traffic */
    {I("bursty", bursty), BOOL, .help = "on/off injection: bursts of packets at full rate"},
    {I("burst-pkts", burst_pkts), REAL(1, 1e6), .flags = NF_SIMSET_AUTO | NF_SIMSET_LIBRARY,
     .def = 8, .help = "with --bursty: the mean burst length in packets", .def_text = "8"},
    {C("exclude-unroutable", exclude_unroutable), BOOL,
     .help = "skip the messages of source/destination pairs that no path joins, and count them "
             "(excluded_msgs)"},
    /* link errors */
    {C("ber", ber), REAL(0, 1), .def = 0, .arg = "RATE",
     .help = "bit error rate of every switch-to-switch link: a corrupt packet is sent again "
             "over its link"},
    {C("switching", switching), CHOICE(switchings), .def = 0,
     .help = "how routers forward packets from other routers: vct (cut-through), saf "
             "(store-and-forward), dynamic (per link, saf while its recent errors are many)"},
    {C("saf-errors", saf_errors), REAL(0.001, 1e9), .def = 2, .arg = "N",
     .help = "dynamic switching: a link stores and forwards from N recent errors, cuts through "
             "again below N/2"},
    {C("saf-window", saf_window), UINT(1, BIG), .def = 1000, .arg = "C",
     .help = "dynamic switching: an error weighs e^(-age/C), C in cycles"},
    /* congestion pre-awareness (the Sunway router) */
    {C("preaware", preaware_cycles), UINT(0, 100000), .def = 0, .arg = "T",
     .help = "congestion pre-awareness: each output port averages the credits it gets back per "
             "cycle over about T cycles; --adaptive adds the credits expected back within T "
             "cycles to a candidate's room, two-rail NICs take the rail expected to be emptier, "
             "and NICs throttle a rail whose rate has collapsed (0: off)"},
    {C("preaware-throttle", preaware_throttle), REAL(0, 1), .def = 0.5, .arg = "F",
     .help = "with --preaware: a NIC rail getting credits back at under F per cycle while its "
             "switch holds half a VC buffer of its flits sends at r x r / F; 0: no throttle"},
    /* scripted messages and the hosts (nf_sim_post; netfab exp) */
    {C("flit-bytes", flit_bytes), UINT(1, BIG), .flags = NF_SIMSET_LIBRARY, .def = 32, .arg = "B",
     .help = "bytes a flit carries"},
    {C("nic-msg-cycles", nic_msg_cycles), UINT(0, BIG), .flags = NF_SIMSET_LIBRARY, .def = 40,
     .arg = "C", .help = "a NIC's work before a message's first packet"},
    {C("nic-short-cycles", nic_short_cycles), UINT(0, BIG), .flags = NF_SIMSET_LIBRARY, .def = 8,
     .arg = "C", .help = "a NIC's work before a short message or a hardware reply"},
    {C("host-msg-cycles", host_msg_cycles), UINT(0, BIG), .flags = NF_SIMSET_LIBRARY, .def = 0,
     .arg = "C", .help = "a host's time on each scripted message it issues"},
    {C("host-recv-cycles", host_recv_cycles), UINT(0, BIG), .flags = NF_SIMSET_LIBRARY, .def = 0,
     .arg = "C",
     .help = "a host's time on each scripted message whose data comes to it (a multicast: after "
             "its last member's data)"},
    {C("host-copy-bytes", host_copy_bytes), UINT(0, BIG), .flags = NF_SIMSET_LIBRARY, .def = 0,
     .arg = "B", .help = "bytes a host copies a cycle, issuing and receiving (0: free)"},
    {C("host-jitter-cycles", host_jitter_cycles), UINT(0, BIG), .flags = NF_SIMSET_LIBRARY,
     .def = 0, .arg = "C",
     .help = "each host time takes 0 to C cycles more, uniformly, drawn per message"},
    {C("nic-engines", nic_engines), UINT(0, NF_SIM_MAX_ENGINES), .flags = NF_SIMSET_LIBRARY,
     .def = 0, .arg = "E",
     .help = "message engines per NIC, each with its send queues, in-flight limit and send unit "
             "(0: none, every message's packets queued at their port at once)"},
    {C("nic-share-ports", nic_share_ports), CHOICE(no_yes), .flags = NF_SIMSET_LIBRARY, .def = 1,
     .help = "with message engines: every engine sends on both ports (DESDP); no: engine e on "
             "port e"},
    {C("nic-inflight", nic_inflight), UINT(1, BIG), .flags = NF_SIMSET_LIBRARY, .def = 256,
     .arg = "N", .help = "messages a message engine keeps in flight at most"},
    {C("nic-engine-flits", nic_engine_flits), REAL(0.001, 1e6), .flags = NF_SIMSET_LIBRARY,
     .def = 2, .arg = "F",
     .help = "flits a cycle a message engine's send unit reads over PCIe (2: one message fills "
             "both ports, as the Sunway paper has it)"},
    {C("mcast-port-entries", mcast_port_entries), UINT(0, BIG), .flags = NF_SIMSET_LIBRARY,
     .def = 0, .arg = "N",
     .help = "multicast table entries per switch port; a group that finds a port of its tree "
             "full is sent as unicast copies (0: no limit)"},
    {C("nic-pcie-cycles", nic_pcie_cycles), UINT(0, BIG), .flags = NF_SIMSET_LIBRARY, .def = 0,
     .arg = "C",
     .help = "a PCIe read's round trip: a message waits for two (its descriptor, its data) "
             "before its first packet, a fast short message (FSW) none (0: in nic-msg-cycles)"},
    {C("nic-pio-bytes", nic_pio_bytes), UINT(1, BIG), .flags = NF_SIMSET_LIBRARY, .def = 16,
     .arg = "B", .help = "bytes a cycle a host writes into the NIC by PIO (FSW messages)"},
    {C("queue-entries", queue_entries), UINT(1, BIG), .flags = NF_SIMSET_LIBRARY, .def = 256,
     .arg = "N", .help = "a receive-queue ring's capacity in entries"},
    {C("queue-host-cycles", queue_host_cycles), UINT(1, BIG), .flags = NF_SIMSET_LIBRARY, .def = 40,
     .arg = "C", .help = "a target host takes an entry off its ring every C cycles"},
    {C("queue-backoff", queue_backoff), UINT(0, BIG), .flags = NF_SIMSET_AUTO | NF_SIMSET_LIBRARY,
     .arg = "C", .help = "reliable queue messages: cycles a source waits after a refusal",
     .def_text = "0: one host period"},
    /* the run */
    {C("seed", seed), UINT(0, UINT64_MAX), .flags = NF_SIMSET_LIBRARY, .def = 0, .arg = "S",
     .help = "the seed of the traffic and of every random choice"},
    {C("threads", threads), UINT(0, 0xFFFFFFFFu), .flags = NF_SIMSET_AUTO | NF_SIMSET_LIBRARY,
     .arg = "N", .help = "threads the switches are shared among; results do not depend on it",
     .def_text = "0: the processors this process may use, for fabrics of 64 switches or more"},
};

#undef FIELD
#undef C
#undef P
#undef I
#undef UINT
#undef REAL
#undef CHOICE
#undef BOOL
#undef BIG

const nf_simset *nf_simset_table(size_t *n) {
    *n = sizeof table / sizeof table[0];
    return table;
}

const nf_simset *nf_simset_find(const char *name) {
    for (size_t i = 0; name && i < sizeof table / sizeof table[0]; i++)
        if (!strcmp(table[i].name, name) || !strcmp(table[i].key, name)) return &table[i];
    return NULL;
}

static size_t n_choices(const nf_simset *s) {
    size_t n = 0;
    while (s->choices && s->choices[n])
        n++;
    return n;
}

double nf_simset_get(const nf_simset *s, const void *base) {
    const char *p = (const char *)base + s->offset;
    switch (s->type) {
    case NF_SIMSET_REAL: {
        double v;
        memcpy(&v, p, sizeof v);
        return v;
    }
    case NF_SIMSET_BOOL: return *(const unsigned char *)p ? 1 : 0;
    case NF_SIMSET_UINT: return (double)nf_simset_get_uint(s, base);
    default: /* CHOICE: an enum or a bool */
        if (s->size == sizeof(bool)) return *(const unsigned char *)p; /* as stored */
        unsigned v;
        memcpy(&v, p, sizeof v);
        return v;
    }
}

const char *nf_simset_range_text(const nf_simset *s, char *buf, size_t cap) {
    switch (s->type) {
    case NF_SIMSET_UINT:
        snprintf(buf, cap, "a whole number from %llu to %llu", (unsigned long long)s->lo,
                 (unsigned long long)s->hi);
        break;
    case NF_SIMSET_REAL: {
        bool olo = s->flags & NF_SIMSET_OPEN_LO, ohi = s->flags & NF_SIMSET_OPEN_HI;
        if (!olo && !ohi)
            snprintf(buf, cap, "a number from %g to %g", s->rlo, s->rhi);
        else
            snprintf(buf, cap, "a number %s %g and %s %g", olo ? "above" : "from", s->rlo,
                     ohi ? "below" : "at most", s->rhi);
        break;
    }
    default: {
        size_t len = (size_t)snprintf(buf, cap, "one of");
        for (size_t i = 0; s->choices[i] && len < cap; i++)
            len += (size_t)snprintf(buf + len, cap - len, "%s %s", i ? "," : "", s->choices[i]);
    }
    }
    return buf;
}

const char *nf_simset_value_text(const nf_simset *s, double v, char *buf, size_t cap) {
    if ((s->type == NF_SIMSET_CHOICE || s->type == NF_SIMSET_BOOL) && v >= 0 &&
        v < (double)n_choices(s))
        snprintf(buf, cap, "%s", s->choices[(size_t)v]);
    else if (s->type == NF_SIMSET_UINT)
        snprintf(buf, cap, "%.0f", v);
    else
        snprintf(buf, cap, "%g", v);
    return buf;
}

int nf_simset_check(const nf_simset *s, double v, nf_diag *diag) {
    bool ok;
    if (v == 0 && (s->flags & NF_SIMSET_AUTO)) return NF_OK;
    switch (s->type) {
    case NF_SIMSET_UINT: ok = v == floor(v) && v >= (double)s->lo && v <= (double)s->hi; break;
    case NF_SIMSET_REAL:
        ok = isfinite(v) && ((s->flags & NF_SIMSET_OPEN_LO) ? v > s->rlo : v >= s->rlo) &&
             ((s->flags & NF_SIMSET_OPEN_HI) ? v < s->rhi : v <= s->rhi);
        break;
    default: ok = v == floor(v) && v >= 0 && v < (double)n_choices(s);
    }
    if (ok) return NF_OK;
    char want[160];
    nf_simset_range_text(s, want, sizeof want);
    if (s->type == NF_SIMSET_CHOICE || s->type == NF_SIMSET_BOOL)
        return nf__fail(diag, NF_EINVAL, "%s %g: %s (0 to %zu)", s->key, v, want, n_choices(s) - 1);
    return nf__fail(diag, NF_EINVAL, "%s %.15g: %s", s->key, v, want);
}

uint64_t nf_simset_get_uint(const nf_simset *s, const void *base) {
    const char *p = (const char *)base + s->offset;
    if (s->size == sizeof(uint64_t)) {
        uint64_t v;
        memcpy(&v, p, sizeof v);
        return v;
    }
    unsigned v;
    memcpy(&v, p, sizeof v);
    return v;
}

int nf_simset_put_uint(const nf_simset *s, void *base, uint64_t v, nf_diag *diag) {
    if (s->type != NF_SIMSET_UINT)
        return nf__fail(diag, NF_EINVAL, "%s: not a whole-number setting", s->key);
    if (!(v == 0 && s->flags & NF_SIMSET_AUTO) && (v < s->lo || v > s->hi)) {
        char want[96];
        return nf__fail(diag, NF_EINVAL, "%s %llu: %s", s->key, (unsigned long long)v,
                        nf_simset_range_text(s, want, sizeof want));
    }
    char *p = (char *)base + s->offset;
    if (s->size == sizeof(uint64_t)) {
        memcpy(p, &v, sizeof v);
    } else {
        unsigned u = (unsigned)v;
        memcpy(p, &u, sizeof u);
    }
    return NF_OK;
}

int nf_simset_put(const nf_simset *s, void *base, double v, nf_diag *diag) {
    int rc = nf_simset_check(s, v, diag);
    if (rc) return rc;
    char *p = (char *)base + s->offset;
    if (s->type == NF_SIMSET_UINT) /* checked: a whole number in range */
        return nf_simset_put_uint(s, base, v >= 18446744073709551615.0 ? UINT64_MAX : (uint64_t)v,
                                  diag);
    if (s->type == NF_SIMSET_REAL)
        memcpy(p, &v, sizeof v);
    else if (s->size == sizeof(bool))
        *(bool *)p = v != 0;
    else {
        unsigned u = (unsigned)v;
        memcpy(p, &u, sizeof u);
    }
    return NF_OK;
}

static const size_t struct_size[NF_SIMSET_N_IN] = {
    [NF_SIMSET_CONFIG] = sizeof(nf_sim_config),
    [NF_SIMSET_PHASE] = sizeof(nf_sim_phase),
    [NF_SIMSET_INJECTION] = sizeof(nf_sim_injection),
};

void nf_simset_defaults(nf_simset_in in, void *base) {
    memset(base, 0, struct_size[in]);
    for (size_t i = 0; i < sizeof table / sizeof table[0]; i++)
        if (table[i].in == in) (void)nf_simset_put(&table[i], base, table[i].def, NULL);
}

int nf_simset_check_all(nf_simset_in in, const void *base, nf_diag *diag) {
    for (size_t i = 0; i < sizeof table / sizeof table[0]; i++) {
        const nf_simset *s = &table[i];
        if (s->in != in) continue;
        /* an enum or bool field read as its bytes, so a value no choice names is seen */
        int rc = nf_simset_check(s, nf_simset_get(s, base), diag);
        if (rc) return rc;
    }
    return NF_OK;
}
