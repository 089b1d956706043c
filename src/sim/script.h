/* SPDX-License-Identifier: MIT */
/* Internal: scripted messages (script.c), a module below the engine: it holds the messages and
 * their "after" edges, releases them, and keeps their times; the engine (sim.c) emits the
 * packets of the sends it hands out and reports the tails that arrive. It never calls the
 * engine. */
#ifndef NF_SIM_SCRIPT_H
#define NF_SIM_SCRIPT_H

#include "netfab/sim.h"

/* A scripted message's packets carry NF__SCRIPT_TAG | id in their message field. */
#define NF__SCRIPT_TAG 0x80000000u
/* A listed packet's (nf_sim_set_packets) carry NF__LIST_TAG | its index: scripted ids stay
 * below it. */
#define NF__LIST_TAG 0x40000000u

typedef struct nf__script nf__script;

/* What a run of the script needs of the simulator's configuration. */
typedef struct nf__script_params {
    uint64_t payload;                  /* bytes a packet carries */
    unsigned msg_cycles, short_cycles; /* NIC overheads (nf_sim_config) */
    unsigned pcie_cycles, pio_bytes;   /* a PCIe read's round trip; PIO bytes a cycle */
    /* queue messages: the receive-queue rings and their hosts (nf_sim_config's queue_*) */
    uint32_t n_ep;             /* endpoints */
    const uint32_t *ring_cap;  /* per endpoint its ring's entries, 0 for ring_entries (NULL:
                                * all); read by nf__script_begin only */
    unsigned ring_entries;     /* a ring's entries when ring_cap gives none */
    unsigned host_cycles;      /* a host's cycles per entry taken off its ring */
    unsigned backoff;          /* cycles from a NAK's arrival to the sending again */
    unsigned msg_host_cycles;  /* a host's time per message it issues (nf_sim_config) */
    unsigned recv_host_cycles; /* ... per message it receives (host_recv_cycles) */
    unsigned copy_bytes;       /* bytes a host copies a cycle (host_copy_bytes; 0: free) */
    unsigned jitter_cycles;    /* host_jitter_cycles */
    uint64_t seed;             /* of the jitter */
    /* message engines (nf_sim_config's nic_*): engines 0 for none */
    unsigned engines, inflight, pkt_flits;
    bool share_ports;
    bool mcast_rails; /* multicast trees on both rails (nf_sim_set_mcast_rails) */
    double engine_flits;
    /* flits queued at endpoint from's port `rail` (0, 1) for a packet to `to`, or -1 when that
     * port cannot carry it (a one-port NIC at either end): what the engines see of their ports
     * (a query the engine answers; it changes nothing) */
    int64_t (*port_backlog)(void *ud, uint32_t from, uint32_t to, unsigned rail);
    void *ud;
} nf__script_params;

/* npkts packets of message `tag` from endpoint `from` to `to` into from's NIC now (rail by
 * mode, per packet when dynamic); group: the multicast group, UINT32_MAX for unicast. */
typedef struct nf__script_send {
    uint32_t from, to;
    nf_sim_rail_mode rail;
    uint32_t npkts, tag, group;
    bool srcroute; /* by a source route found when sent (nf_sim_msg.source_routed) */
} nf__script_send;

/* Appends message m (checked by the caller) as *id, and an edge before -> after (NF_EINVAL for
 * an unknown id or a message after itself); *slot is made when NULL. NF_ENOMEM. */
int nf__script_add(nf__script **slot, const nf_sim_msg *m, uint32_t *id);
int nf__script_edge(nf__script **slot, uint32_t before, uint32_t after);
void nf__script_free(nf__script *sc);
uint32_t nf__script_count(const nf__script *sc); /* messages posted (0 for NULL) */
const nf_sim_msg *nf__script_msg(const nf__script *sc, uint32_t i);
/* The messages and edges posted so far, and back to them: a collective that fails halfway
 * leaves nothing of itself in the script (sc may be NULL). */
void nf__script_mark(const nf__script *sc, size_t *n_msg, size_t *n_edge);
void nf__script_truncate(nf__script *sc, size_t n_msg, size_t n_edge);

/* Before a run: the dependences counted, the messages due first in the heap; receivers[i]
 * is multicast message i's receiver count (checked by the caller). NF_ENOMEM. */
int nf__script_begin(nf__script *sc, const nf__script_params *par, const uint32_t *receivers);
/* The scripted packets whose tails reached their NIC at cycle now (ids, tag removed). */
int nf__script_arrivals(nf__script *sc, uint64_t now, const uint32_t *ids, size_t n);
/* The sends due at cycle now, in release order, into *sends (*n of them; borrowed until the
 * next call). NF_ENOMEM. */
int nf__script_release(nf__script *sc, uint64_t now, const nf__script_send **sends, size_t *n);
/* Nothing due and nothing in flight; the completions so far (dropped queue messages not
 * counted) and the last completion's or drop's cycle. */
bool nf__script_idle(const nf__script *sc, uint32_t *done, uint64_t *last_done);
/* The queue messages of the run: unreliable ones dropped, reliable ones' refusals, entries
 * written into rings. */
void nf__script_queue_counts(const nf__script *sc, uint32_t *dropped, uint64_t *retries,
                             uint64_t *ring_writes);
/* Whether messages wait for their release time, for messages they come after, or in a message
 * engine (its queues, or packets it has still to send). */
bool nf__script_waiting(const nf__script *sc);
/* With message engines: the most messages one engine had in flight at once in the run. */
uint32_t nf__script_max_in_flight(const nf__script *sc);
/* Message id's times in the last run. NF_EINVAL for an unknown id or no run. */
int nf__script_times(const nf__script *sc, uint32_t id, nf_sim_msg_times *out);

#endif
