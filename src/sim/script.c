/* SPDX-License-Identifier: MIT */
/* Scripted messages: the Sunway NIC's message kinds (write with its hardware acknowledgement,
 * read served as a write back, put with a reply word, short, asynchronous queue messages into
 * the target's receive-queue ring), released at a time or after the messages they depend on,
 * their packets on a fixed rail or spread over both, and each one's release, data-in and
 * completion times. A module of its own: the engine (sim.c) posts the
 * messages, tells it the tails that arrive and takes from it the sends that are due; it knows
 * nothing of the engine. Everything here runs on one thread between the cycle's phases. */
#include "sim/script.h"

#include "util/mem.h"
#include "util/rng.h"

#include <stdlib.h>
#include <string.h>

/* PH_BACK: WRITE's ack, READ's data coming back, a reliable queue message's NAK; PH_RETRY (in
 * the heap only): a refused queue message sent again */
enum { PH_DATA = 0, PH_BACK = 1, PH_RETRY = 2 };

/* A target's receive-queue ring. Its host takes the oldest entry off it every host_cycles
 * cycles while it holds any, so the k-th entry written (at w_k) is free again at
 * f_k = max(w_k, f_{k-1}) + host_cycles; the ring keeps the f of the entries it holds, oldest
 * first, in free_at[] (a circular buffer of `size`, at least as many as the ring can hold at
 * once: its capacity, or the queue messages to it when fewer). An entry whose f is the cycle
 * some data arrives is free for it. */
typedef struct sc_ring {
    uint32_t cap, size, head, count;
    uint64_t last_free; /* f of the newest entry written (0 before any) */
    uint64_t *free_at;
} sc_ring;

static bool is_queue(const nf_sim_msg *m) {
    return m->kind == NF_SIM_QUEUE_RELIABLE || m->kind == NF_SIM_QUEUE_UNRELIABLE;
}
/* in the heap only: a message due, its sender's host not yet done with it (PH_HOST); its data
 * in, its receiver's host not yet done with it (PH_RECV); with message engines, a message that
 * reaches its send queue (PH_NICQ) */
enum { PH_HOST = 3, PH_RECV = 4, PH_NICQ = 5 };

#define SC_NONE UINT32_MAX

/* A message engine of a NIC (nf_sim_config.nic_engines): its descriptor unit, its arbiter's
 * round-robin place among its send queues, its messages in flight, and its send unit's credit
 * and the messages it still has packets of (in the order taken). */
typedef struct sc_engine {
    uint64_t desc_free; /* the descriptor unit takes the next message from this cycle */
    double credit;      /* flits the send unit has read and not sent (it reads while under a
                         * packet's) */
    uint32_t rr;        /* the arbiter tries queue rr first (the one after its last) */
    uint32_t in_flight, queued;
    uint32_t *sending;
    size_t n_sending, cap_sending;
    uint8_t active, next_rail;
} sc_engine;

typedef struct heap_ent {
    uint64_t at;
    uint32_t id, phase;
} heap_ent;

struct nf__script {
    /* posted */
    nf_sim_msg *m;
    size_t n, cap;
    uint32_t (*edge)[2];
    size_t n_edge, cap_edge;
    /* a run */
    uint32_t *succ_off, *succ; /* CSR of the edges by their first message */
    uint32_t *preds;           /* completions still awaited */
    uint32_t *left;            /* packets of the current phase still out */
    uint8_t *phase;
    nf_sim_msg_times *t;
    heap_ent *heap;
    size_t n_heap, cap_heap;
    uint32_t done, in_phase; /* completed; released and not completed */
    uint64_t last_done;
    nf__script_params par;  /* of the run */
    uint32_t *recv;         /* per message: a multicast's receivers */
    nf__script_send *sends; /* the sends of the last release */
    size_t cap_sends;
    /* queue messages */
    uint32_t *ring_of; /* per endpoint: its ring in rings[], UINT32_MAX when no queue message
                        * goes to it */
    sc_ring *rings;
    uint32_t n_rings;
    uint32_t *pend; /* queue messages whose data came in this cycle */
    size_t n_pend, cap_pend;
    uint32_t dropped;
    uint64_t retries, ring_writes;
    /* per source endpoint and CPU: the cycle the host is free (msg_host_cycles); with message
     * engines a NIC has a CPU an engine, the processes of CPU c posting to engine c's queues
     * (the Sunway node: two processors on one NIC), else one */
    uint64_t *host_free;
    /* message engines (par.engines > 0) */
    uint32_t n_q;              /* send queues per endpoint: the highest posted, plus one */
    uint32_t *q_head, *q_tail; /* per (endpoint, queue): a FIFO of message ids, SC_NONE empty */
    uint32_t *q_next;          /* per message: the one behind it in its queue */
    uint32_t *to_send;         /* per message: packets its engine has still to send */
    uint64_t *ready;           /* per message: its first packet's cycle at its engine */
    uint32_t *eng_of;          /* per message: its engine (endpoint x engines + e), SC_NONE */
    sc_engine *eng;            /* per endpoint x engines */
    uint32_t *act;             /* the engines with messages queued or packets to send */
    size_t n_act, cap_act;
    uint32_t max_in_flight;
};

static void free_rings(nf__script *sc) {
    for (uint32_t r = 0; r < sc->n_rings; r++)
        nf__free(sc->rings[r].free_at);
    nf__free(sc->rings);
    nf__free(sc->ring_of);
    sc->rings = NULL, sc->ring_of = NULL, sc->n_rings = 0;
}

static void free_engines(nf__script *sc) {
    size_t n = sc->eng ? (size_t)sc->par.n_ep * sc->par.engines : 0;
    for (size_t k = 0; k < n; k++)
        nf__free(sc->eng[k].sending);
    void *a[] = {sc->eng,     sc->q_head, sc->q_tail, sc->q_next,
                 sc->to_send, sc->ready,  sc->eng_of, sc->act};
    for (size_t i = 0; i < sizeof a / sizeof a[0]; i++)
        nf__free(a[i]);
    sc->eng = NULL, sc->q_head = sc->q_tail = sc->q_next = sc->to_send = sc->eng_of = NULL;
    sc->ready = NULL, sc->act = NULL, sc->n_act = sc->cap_act = 0;
}

void nf__script_free(nf__script *sc) {
    if (!sc) return;
    free_rings(sc);
    free_engines(sc);
    void *a[] = {sc->m, sc->edge, sc->succ_off, sc->succ,  sc->preds, sc->left,     sc->phase,
                 sc->t, sc->heap, sc->recv,     sc->sends, sc->pend,  sc->host_free};
    for (size_t i = 0; i < sizeof a / sizeof a[0]; i++)
        nf__free(a[i]);
    nf__free(sc);
}

static uint32_t data_packets(uint64_t payload, const nf_sim_msg *m) {
    return m->bytes ? (uint32_t)((m->bytes - 1) / payload + 1) : 1; /* (nf_sim_post bounds it) */
}

int nf__script_add(nf__script **slot, const nf_sim_msg *m, uint32_t *id) {
    if (!*slot && !(*slot = nf__calloc(1, sizeof **slot))) return NF_ENOMEM;
    nf__script *sc = *slot;
    if (sc->n >= NF__LIST_TAG - 1) return NF_ENOMEM;
    if (sc->n == sc->cap && NF_GROW(sc->m, sc->cap, sc->n + 1)) return NF_ENOMEM;
    sc->m[sc->n] = *m;
    *id = (uint32_t)sc->n++;
    return NF_OK;
}

int nf__script_edge(nf__script **slot, uint32_t before, uint32_t after) {
    if (!*slot && !(*slot = nf__calloc(1, sizeof **slot))) return NF_ENOMEM;
    nf__script *sc = *slot;
    if (before >= sc->n || after >= sc->n || before == after) return NF_EINVAL;
    if (sc->n_edge == sc->cap_edge && NF_GROW(sc->edge, sc->cap_edge, sc->n_edge + 1))
        return NF_ENOMEM;
    sc->edge[sc->n_edge][0] = before;
    sc->edge[sc->n_edge][1] = after;
    sc->n_edge++;
    return NF_OK;
}

/* ---- the release heap: (cycle, id) smallest first, so releases are in a fixed order --------- */

static bool heap_less(const heap_ent *a, const heap_ent *b) {
    return a->at != b->at ? a->at < b->at : a->id != b->id ? a->id < b->id : a->phase < b->phase;
}

static int heap_push(nf__script *sc, heap_ent e) {
    if (sc->n_heap == sc->cap_heap && NF_GROW(sc->heap, sc->cap_heap, sc->n_heap + 1))
        return NF_ENOMEM;
    size_t i = sc->n_heap++;
    while (i && heap_less(&e, &sc->heap[(i - 1) / 2])) {
        sc->heap[i] = sc->heap[(i - 1) / 2];
        i = (i - 1) / 2;
    }
    sc->heap[i] = e;
    return NF_OK;
}

static heap_ent heap_pop(nf__script *sc) {
    heap_ent top = sc->heap[0], last = sc->heap[--sc->n_heap];
    size_t i = 0;
    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= sc->n_heap) break;
        if (c + 1 < sc->n_heap && heap_less(&sc->heap[c + 1], &sc->heap[c])) c++;
        if (!heap_less(&sc->heap[c], &last)) break;
        sc->heap[i] = sc->heap[c];
        i = c;
    }
    if (sc->n_heap) sc->heap[i] = last;
    return top;
}

/* The NIC's time from a message's release to its first packet: its work (the short overhead
 * for a short message, one the NIC issues itself, a fast one), and, for one whose descriptor
 * and data are in host memory, two PCIe reads (the descriptor, then the data). A fast short
 * message (FSW) has both written by the host into the NIC's on-chip storage instead: the short
 * overhead and the PIO writes of a 32-byte descriptor and its data. */
static uint64_t overhead(const nf__script_params *p, const nf_sim_msg *m) {
    if (m->fsw) return p->short_cycles + (32 + m->bytes + p->pio_bytes - 1) / p->pio_bytes;
    uint64_t work = m->kind == NF_SIM_SHORT || m->by_nic || (m->fast && p->engines)
                        ? p->short_cycles
                        : p->msg_cycles;
    return work + (m->by_nic ? 0 : 2 * (uint64_t)p->pcie_cycles);
}

/* ---- the hosts: the time a host spends on a message it issues, and on one it receives ------- */

/* Whether message m goes through its sender's host (not issued by the NIC), and whether its data
 * goes to a host: a put's, a short message's, a multicast's (a hardware collective's result
 * too), not a NIC-to-NIC one's nor a write's or a read's (a NIC answers those). */
static bool host_sends(const nf__script_params *p, const nf_sim_msg *m) {
    return !m->by_nic && (p->msg_host_cycles || p->copy_bytes || p->jitter_cycles);
}
static bool host_receives(const nf__script_params *p, const nf_sim_msg *m) {
    bool to_host = m->kind == NF_SIM_MCAST ||
                   (!m->by_nic && (m->kind == NF_SIM_PUT_REPLY || m->kind == NF_SIM_SHORT));
    return to_host && (p->recv_host_cycles || p->copy_bytes || p->jitter_cycles);
}

/* A host time's jitter: 0 .. jitter_cycles, uniform, from the seed, the message and the side
 * (0 issuing, 1 receiving), so a run gives the same draws whatever the order of events. */
static uint64_t jitter(const nf__script_params *p, uint32_t id, unsigned side) {
    if (!p->jitter_cycles) return 0;
    uint64_t x = p->seed ^ (((uint64_t)id << 1 | side) * 0x9E3779B97F4A7C15ull);
    uint64_t v = nf__splitmix64(&x) >> 32;
    return (v * ((uint64_t)p->jitter_cycles + 1)) >> 32;
}

static uint64_t copy_time(const nf__script_params *p, const nf_sim_msg *m) {
    return p->copy_bytes ? (m->bytes + p->copy_bytes - 1) / p->copy_bytes : 0;
}

/* The host's time on message id: issuing it (side 0), receiving it (1). */
static uint64_t host_time(const nf__script *sc, uint32_t id, unsigned side) {
    const nf__script_params *p = &sc->par;
    const nf_sim_msg *m = &sc->m[id];
    return (side ? p->recv_host_cycles : p->msg_host_cycles) + copy_time(p, m) +
           jitter(p, id, side);
}

/* A ring for every endpoint some queue message goes to, empty. NF_ENOMEM. */
static int make_rings(nf__script *sc, const nf__script_params *p) {
    free_rings(sc);
    sc->ring_of = nf__malloc(((size_t)p->n_ep + 1) * sizeof *sc->ring_of);
    if (!sc->ring_of) return NF_ENOMEM;
    for (uint32_t e = 0; e < p->n_ep; e++)
        sc->ring_of[e] = UINT32_MAX;
    uint32_t *msgs = NULL; /* per ring: the queue messages to it */
    size_t cap_msgs = 0;
    for (size_t i = 0; i < sc->n; i++) {
        const nf_sim_msg *m = &sc->m[i];
        if (!is_queue(m)) continue;
        if (sc->ring_of[m->dst] == UINT32_MAX) {
            if (NF_GROW(msgs, cap_msgs, sc->n_rings + 1)) {
                nf__free(msgs);
                return NF_ENOMEM;
            }
            msgs[sc->n_rings] = 0;
            sc->ring_of[m->dst] = sc->n_rings++;
        }
        msgs[sc->ring_of[m->dst]]++;
    }
    sc->rings = nf__calloc((size_t)sc->n_rings + 1, sizeof *sc->rings);
    int rc = sc->rings ? NF_OK : NF_ENOMEM;
    for (uint32_t e = 0; e < p->n_ep && !rc; e++) {
        uint32_t k = sc->ring_of[e];
        if (k == UINT32_MAX) continue;
        sc_ring *r = &sc->rings[k];
        r->cap = p->ring_cap && p->ring_cap[e] ? p->ring_cap[e] : p->ring_entries;
        r->size = r->cap < msgs[k] ? r->cap : msgs[k];
        if (!(r->free_at = nf__malloc((size_t)r->size * sizeof *r->free_at))) rc = NF_ENOMEM;
    }
    nf__free(msgs);
    return rc;
}

/* Message i is due at cycle `at` (its own time, or its last dependence done): its NIC's work
 * begins then; with a host overhead, a message the host issues (not by_nic) first waits for
 * its sender's host, which handles its messages one at a time in the order they fall due. */
static int due(nf__script *sc, uint32_t i, uint64_t at) {
    const nf_sim_msg *m = &sc->m[i];
    sc->t[i].due = at;
    if (host_sends(&sc->par, m)) return heap_push(sc, (heap_ent){at, i, PH_HOST});
    if (sc->par.engines) return heap_push(sc, (heap_ent){at, i, PH_NICQ});
    return heap_push(sc, (heap_ent){at + overhead(&sc->par, m), i, PH_DATA});
}

/* ---- message engines ---------------------------------------------------------------------- */

/* The engine of message i: its source's, the one its queue belongs to. */
static uint32_t engine_of(const nf__script *sc, uint32_t i) {
    const nf_sim_msg *m = &sc->m[i];
    return m->src * sc->par.engines + m->queue % sc->par.engines;
}

static int activate(nf__script *sc, uint32_t k) {
    if (sc->eng[k].active) return NF_OK;
    if (sc->n_act == sc->cap_act && NF_GROW(sc->act, sc->cap_act, sc->n_act + 1)) return NF_ENOMEM;
    sc->act[sc->n_act++] = k;
    sc->eng[k].active = 1;
    return NF_OK;
}

/* Message i reaches the back of its send queue. */
static int enqueue(nf__script *sc, uint32_t i) {
    const nf_sim_msg *m = &sc->m[i];
    size_t q = (size_t)m->src * sc->n_q + m->queue;
    sc->q_next[i] = SC_NONE;
    if (sc->q_tail[q] == SC_NONE)
        sc->q_head[q] = i;
    else
        sc->q_next[sc->q_tail[q]] = i;
    sc->q_tail[q] = i;
    uint32_t k = engine_of(sc, i);
    sc->eng[k].queued++;
    return activate(sc, k);
}

/* Engines and send queues for a run: every queue empty, every engine idle. NF_ENOMEM. */
static int make_engines(nf__script *sc) {
    free_engines(sc);
    const nf__script_params *p = &sc->par;
    if (!p->engines) return NF_OK;
    sc->n_q = 1;
    for (size_t i = 0; i < sc->n; i++)
        if (sc->m[i].queue >= sc->n_q) sc->n_q = sc->m[i].queue + 1u;
    size_t nq = (size_t)p->n_ep * sc->n_q, n = sc->n + 1;
    sc->eng = nf__calloc((size_t)p->n_ep * p->engines + 1, sizeof *sc->eng);
    sc->q_head = nf__malloc((nq + 1) * sizeof *sc->q_head);
    sc->q_tail = nf__malloc((nq + 1) * sizeof *sc->q_tail);
    sc->q_next = nf__malloc(n * sizeof *sc->q_next);
    sc->to_send = nf__calloc(n, sizeof *sc->to_send);
    sc->ready = nf__calloc(n, sizeof *sc->ready);
    sc->eng_of = nf__malloc(n * sizeof *sc->eng_of);
    if (!sc->eng || !sc->q_head || !sc->q_tail || !sc->q_next || !sc->to_send || !sc->ready ||
        !sc->eng_of)
        return NF_ENOMEM;
    for (size_t q = 0; q < nq; q++)
        sc->q_head[q] = sc->q_tail[q] = SC_NONE;
    for (size_t i = 0; i < sc->n; i++)
        sc->eng_of[i] = SC_NONE;
    sc->max_in_flight = 0;
    return NF_OK;
}

int nf__script_begin(nf__script *sc, const nf__script_params *par, const uint32_t *receivers) {
    const nf__script_params *c = par;
    size_t n = sc->n;
    sc->par = *par;
    nf__free(sc->succ_off);
    nf__free(sc->succ);
    nf__free(sc->preds);
    nf__free(sc->left);
    nf__free(sc->phase);
    nf__free(sc->t);
    nf__free(sc->recv);
    nf__free(sc->host_free);
    sc->host_free = NULL;
    if (par->msg_host_cycles || par->copy_bytes || par->jitter_cycles) {
        uint32_t top = 0;
        for (size_t i = 0; i < n; i++)
            if (sc->m[i].src >= top) top = sc->m[i].src + 1;
        size_t cpus = par->engines ? par->engines : 1;
        if (!(sc->host_free = nf__calloc((size_t)top * cpus + 1, sizeof *sc->host_free)))
            return NF_ENOMEM;
    }
    sc->recv = nf__malloc((n + 1) * sizeof *sc->recv);
    sc->succ_off = nf__calloc(n + 2, sizeof *sc->succ_off);
    sc->succ = nf__malloc((sc->n_edge + 1) * sizeof *sc->succ);
    sc->preds = nf__calloc(n + 1, sizeof *sc->preds);
    sc->left = nf__calloc(n + 1, sizeof *sc->left);
    sc->phase = nf__calloc(n + 1, 1);
    sc->t = nf__malloc((n + 1) * sizeof *sc->t);
    if (!sc->succ_off || !sc->succ || !sc->preds || !sc->left || !sc->phase || !sc->t || !sc->recv)
        return NF_ENOMEM;
    memcpy(sc->recv, receivers, n * sizeof *sc->recv);
    for (size_t i = 0; i < sc->n_edge; i++) {
        sc->succ_off[sc->edge[i][0] + 2]++;
        sc->preds[sc->edge[i][1]]++;
    }
    for (size_t i = 0; i < n; i++)
        sc->succ_off[i + 2] += sc->succ_off[i + 1];
    for (size_t i = 0; i < sc->n_edge; i++)
        sc->succ[sc->succ_off[sc->edge[i][0] + 1]++] = sc->edge[i][1];
    sc->n_heap = 0;
    sc->done = sc->in_phase = 0;
    sc->last_done = 0;
    sc->n_pend = 0;
    sc->dropped = 0;
    sc->retries = sc->ring_writes = 0;
    if (make_rings(sc, c) || make_engines(sc)) return NF_ENOMEM;
    for (size_t i = 0; i < n; i++) {
        sc->t[i] = (nf_sim_msg_times){.due = UINT64_MAX,
                                      .released = UINT64_MAX,
                                      .data_in = UINT64_MAX,
                                      .done = UINT64_MAX,
                                      .packets = data_packets(c->payload, &sc->m[i])};
        if (sc->preds[i]) continue;
        if (due(sc, (uint32_t)i, sc->m[i].at)) return NF_ENOMEM;
    }
    return NF_OK;
}

bool nf__script_idle(const nf__script *sc, uint32_t *done, uint64_t *last_done) {
    *done = sc->done;
    *last_done = sc->last_done;
    return sc->n_heap == 0 && sc->in_phase == 0 && sc->n_act == 0;
}

bool nf__script_waiting(const nf__script *sc) { return sc->n_heap > 0 || sc->n_act > 0; }

uint32_t nf__script_max_in_flight(const nf__script *sc) { return sc ? sc->max_in_flight : 0; }

void nf__script_queue_counts(const nf__script *sc, uint32_t *dropped, uint64_t *retries,
                             uint64_t *ring_writes) {
    *dropped = sc->dropped;
    *retries = sc->retries;
    *ring_writes = sc->ring_writes;
}

void nf__script_mark(const nf__script *sc, size_t *n_msg, size_t *n_edge) {
    *n_msg = sc ? sc->n : 0;
    *n_edge = sc ? sc->n_edge : 0;
}

void nf__script_truncate(nf__script *sc, size_t n_msg, size_t n_edge) {
    if (sc && n_msg <= sc->n && n_edge <= sc->n_edge) sc->n = n_msg, sc->n_edge = n_edge;
}

uint32_t nf__script_count(const nf__script *sc) { return sc ? (uint32_t)sc->n : 0; }

const nf_sim_msg *nf__script_msg(const nf__script *sc, uint32_t i) { return &sc->m[i]; }

/* Message i ends at `now`: complete, or dropped (a queue message); the messages after it are
 * due. */
static int finish(nf__script *sc, uint32_t i, uint64_t now, bool dropped) {
    if (dropped) {
        sc->t[i].dropped = true;
        sc->dropped++;
    } else {
        sc->t[i].done = now;
        sc->done++;
    }
    sc->in_phase--;
    sc->last_done = now;
    if (sc->eng_of && sc->eng_of[i] != SC_NONE) { /* its engine's slot is free */
        sc_engine *g = &sc->eng[sc->eng_of[i]];
        g->in_flight--;
        if (g->queued) {
            int rc = activate(sc, sc->eng_of[i]);
            if (rc) return rc;
        }
    }
    for (uint32_t k = sc->succ_off[i]; k < sc->succ_off[i + 1]; k++) {
        uint32_t j = sc->succ[k];
        if (--sc->preds[j]) continue;
        int rc = due(sc, j, sc->m[j].at > now ? sc->m[j].at : now);
        if (rc) return rc;
    }
    return NF_OK;
}

/* Queue message i's data is all in at its target at `now`: it takes an entry of the target's
 * ring when one is free, else is dropped (unreliable) or refused with a NAK (reliable). */
static int ring_offer(nf__script *sc, uint32_t i, uint64_t now) {
    const nf_sim_msg *m = &sc->m[i];
    sc_ring *r = &sc->rings[sc->ring_of[m->dst]];
    while (r->count && r->free_at[r->head] <= now) { /* what the host has taken off by now */
        r->head = (r->head + 1) % r->size;
        r->count--;
    }
    if (r->count < r->cap) {
        r->last_free = (r->last_free > now ? r->last_free : now) + sc->par.host_cycles;
        r->free_at[(r->head + r->count) % r->size] = r->last_free;
        r->count++;
        sc->ring_writes++;
        return finish(sc, i, now, false);
    }
    if (m->kind == NF_SIM_QUEUE_UNRELIABLE) return finish(sc, i, now, true);
    sc->t[i].retries++;
    sc->retries++;
    sc->phase[i] = PH_BACK;
    return heap_push(sc, (heap_ent){now + sc->par.short_cycles, i, PH_BACK});
}

/* Message i's current phase is complete at `now`. A queue message whose data is in waits in
 * the cycle's list for its ring (ring_offer, by id). */
static int phase_done(nf__script *sc, uint32_t i, uint64_t now) {
    const nf__script_params *c = &sc->par;
    const nf_sim_msg *m = &sc->m[i];
    if (sc->phase[i] == PH_DATA && m->kind != NF_SIM_READ) sc->t[i].data_in = now;
    if (sc->phase[i] == PH_BACK && m->kind == NF_SIM_READ) sc->t[i].data_in = now;
    if (is_queue(m)) {
        if (sc->phase[i] == PH_BACK) { /* the NAK is in: the source sends it all again */
            sc->phase[i] = PH_DATA;
            return heap_push(sc, (heap_ent){now + c->backoff + overhead(c, m), i, PH_RETRY});
        }
        if (sc->n_pend == sc->cap_pend && NF_GROW(sc->pend, sc->cap_pend, sc->n_pend + 1))
            return NF_ENOMEM;
        sc->pend[sc->n_pend++] = i;
        return NF_OK;
    }
    if (sc->phase[i] == PH_DATA && (m->kind == NF_SIM_WRITE || m->kind == NF_SIM_READ)) {
        /* the target NIC answers: a hardware acknowledgement, or the data read */
        sc->phase[i] = PH_BACK;
        uint64_t at = now + (m->kind == NF_SIM_WRITE ? c->short_cycles
                                                     : c->msg_cycles + (uint64_t)c->pcie_cycles);
        return heap_push(sc, (heap_ent){at, i, PH_BACK});
    }
    if (sc->phase[i] == PH_DATA && host_receives(c, m)) /* its host's turn, then complete */
        return heap_push(sc, (heap_ent){now + host_time(sc, i, 1), i, PH_RECV});
    return finish(sc, i, now, false);
}

static int cmp_u32(const void *a, const void *b) {
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return (x > y) - (x < y);
}

int nf__script_arrivals(nf__script *sc, uint64_t now, const uint32_t *ids, size_t n) {
    sc->n_pend = 0;
    for (size_t k = 0; k < n; k++) {
        uint32_t i = ids[k];
        if (i >= sc->n || sc->left[i] == 0) continue; /* (cannot happen: one count per packet) */
        if (--sc->left[i] == 0) {
            int rc = phase_done(sc, i, now);
            if (rc) return rc;
        }
    }
    /* the rings take the queue messages in by id: the arrivals' order (the threads') and so
     * the result do not depend on the number of threads */
    if (sc->n_pend > 1) qsort(sc->pend, sc->n_pend, sizeof *sc->pend, cmp_u32);
    for (size_t k = 0; k < sc->n_pend; k++) {
        int rc = ring_offer(sc, sc->pend[k], now);
        if (rc) return rc;
    }
    sc->n_pend = 0;
    return NF_OK;
}

static int add_send(nf__script *sc, size_t *k, nf__script_send s) {
    if (*k == sc->cap_sends && NF_GROW(sc->sends, sc->cap_sends, *k + 1)) return NF_ENOMEM;
    sc->sends[(*k)++] = s;
    return NF_OK;
}

/* The packets message i's data (first) phase counts in: one a packet, a multicast's at each of
 * its receivers; npk: the packets it sends (a read's request: one). */
static void data_phase(nf__script *sc, uint32_t i, uint64_t released, uint32_t npk) {
    sc->t[i].released = released;
    sc->in_phase++;
    sc->left[i] = sc->m[i].kind == NF_SIM_MCAST ? npk * sc->recv[i] : npk;
}

/* The port engine g (engine e of endpoint `from`) sends message i's next packet on: the
 * descriptor's, or with a dynamic one the port with less queued (ties in turn), or without
 * shared ports its own; a multicast's is port 0 unless its trees are on both rails (then as a
 * unicast's). -1 when that port holds two packets already. */
static int pick_port(nf__script *sc, sc_engine *g, unsigned e, uint32_t i) {
    const nf__script_params *p = &sc->par;
    const nf_sim_msg *m = &sc->m[i];
    bool mc = m->kind == NF_SIM_MCAST;
    uint32_t to = mc ? m->src : m->dst; /* (a multicast: any rail of its source's) */
    int64_t room = 2 * (int64_t)p->pkt_flits, b0 = p->port_backlog(p->ud, m->src, to, 0);
    if (mc && !p->mcast_rails) return b0 >= 0 && b0 < room ? 0 : -1;
    int64_t b1 = p->port_backlog(p->ud, m->src, to, 1);
    unsigned want = m->rail == NF_SIM_RAIL1 ? 1 : 0;
    if (!p->share_ports) want = e;
    if (p->share_ports && m->rail == NF_SIM_RAIL_DYNAMIC && b1 >= 0) {
        bool ok0 = b0 < room, ok1 = b1 < room;
        if (!ok0 && !ok1) return -1;
        if (ok0 != ok1) return ok1;
        if (b0 != b1) return b1 < b0;
        g->next_rail ^= 1;
        return g->next_rail ^ 1;
    }
    int64_t b = want ? b1 : b0;
    if (b < 0) want = 0, b = b0; /* a one-port NIC: its port */
    return b < room ? (int)want : -1;
}

/* Engine k's cycle: its arbiter takes a message (round robin over its queues, while the
 * descriptor unit is free and fewer than inflight are in flight), then its send unit sends the
 * next packet it may (the ready messages' fast ones first, then the fewest packets left, then
 * the first taken) into a port with room. Whether it still has work. */
static int engine_cycle(nf__script *sc, uint32_t k, uint64_t now, size_t *ns, bool *busy) {
    const nf__script_params *p = &sc->par;
    sc_engine *g = &sc->eng[k];
    uint32_t ep = k / p->engines, e = k % p->engines;
    if (g->queued && now >= g->desc_free && g->in_flight < p->inflight) {
        for (uint32_t j = 0; j < sc->n_q; j++) {
            uint32_t q = (g->rr + j) % sc->n_q;
            size_t at = (size_t)ep * sc->n_q + q;
            if (q % p->engines != e || sc->q_head[at] == SC_NONE) continue;
            uint32_t i = sc->q_head[at];
            sc->q_head[at] = sc->q_next[i];
            if (sc->q_head[at] == SC_NONE) sc->q_tail[at] = SC_NONE;
            g->queued--;
            g->rr = (q + 1) % sc->n_q;
            g->desc_free = now + (p->short_cycles ? p->short_cycles : 1);
            if (++g->in_flight > sc->max_in_flight) sc->max_in_flight = g->in_flight;
            uint32_t npk = sc->m[i].kind == NF_SIM_READ ? 1 : sc->t[i].packets;
            data_phase(sc, i, now, npk);
            sc->eng_of[i] = k;
            sc->to_send[i] = npk;
            sc->ready[i] = now + overhead(p, &sc->m[i]);
            if (g->n_sending == g->cap_sending &&
                NF_GROW(g->sending, g->cap_sending, g->n_sending + 1))
                return NF_ENOMEM;
            g->sending[g->n_sending++] = i;
            break;
        }
    }
    if (g->credit < p->pkt_flits) g->credit += p->engine_flits; /* it reads a packet ahead */
    if (g->credit >= p->pkt_flits && g->n_sending) {
        size_t best = SIZE_MAX;
        int port = -1;
        for (size_t x = 0; x < g->n_sending; x++) {
            uint32_t i = g->sending[x];
            if (sc->ready[i] > now) continue;
            if (best != SIZE_MAX) {
                const nf_sim_msg *a = &sc->m[i], *b = &sc->m[g->sending[best]];
                if (a->fast != b->fast ? !a->fast : sc->to_send[i] >= sc->to_send[g->sending[best]])
                    continue;
            }
            int pt = pick_port(sc, g, e, i);
            if (pt < 0) continue;
            best = x, port = pt;
        }
        if (best != SIZE_MAX) {
            uint32_t i = g->sending[best];
            const nf_sim_msg *m = &sc->m[i];
            bool mc = m->kind == NF_SIM_MCAST;
            int rc = add_send(sc, ns,
                              (nf__script_send){.from = m->src,
                                                .to = mc ? m->src : m->dst,
                                                .rail = port ? NF_SIM_RAIL1 : NF_SIM_RAIL0,
                                                .npkts = 1,
                                                .tag = i,
                                                .group = mc ? m->group : UINT32_MAX,
                                                .srcroute = m->source_routed});
            if (rc) return rc;
            g->credit -= p->pkt_flits;
            if (--sc->to_send[i] == 0) { /* all sent: it leaves the list, keeping the order */
                memmove(g->sending + best, g->sending + best + 1,
                        (g->n_sending - best - 1) * sizeof *g->sending);
                g->n_sending--;
            }
        }
    }
    *busy = g->n_sending || (g->queued && g->in_flight < p->inflight);
    return NF_OK;
}

int nf__script_release(nf__script *sc, uint64_t now, const nf__script_send **sends, size_t *n) {
    size_t k = 0;
    while (sc->n_heap && sc->heap[0].at <= now) {
        heap_ent e = heap_pop(sc);
        const nf_sim_msg *m = &sc->m[e.id];
        if (e.phase == PH_HOST) { /* the host takes it when free; the NIC after that */
            uint64_t *hf = &sc->host_free[sc->par.engines ? (size_t)m->src * sc->par.engines +
                                                                m->queue % sc->par.engines
                                                          : m->src];
            uint64_t start = e.at > *hf ? e.at : *hf;
            uint64_t ht = host_time(sc, e.id, 0);
            *hf = start + ht;
            heap_ent next = {start + ht + overhead(&sc->par, m), e.id, PH_DATA};
            if (sc->par.engines) next = (heap_ent){start + ht, e.id, PH_NICQ};
            int rc = heap_push(sc, next);
            if (rc) return rc;
            continue;
        }
        if (e.phase == PH_NICQ) { /* into its send queue */
            int rc = enqueue(sc, e.id);
            if (rc) return rc;
            continue;
        }
        if (e.phase == PH_RECV) { /* its receiver's host is done with it */
            int rc = finish(sc, e.id, e.at, false);
            if (rc) return rc;
            continue;
        }
        uint32_t from = m->src, to = m->dst, npk = sc->t[e.id].packets;
        if (e.phase == PH_DATA) {
            /* released when due (its `at`, its last dependence done); its NIC's overhead
             * after that, the packets go to the NIC's queue */
            if (m->kind == NF_SIM_READ) npk = 1; /* the request */
            data_phase(sc, e.id, e.at - overhead(&sc->par, m), npk);
        } else {
            if (e.phase == PH_BACK) {
                from = m->dst, to = m->src;
                if (m->kind != NF_SIM_READ) npk = 1; /* the acknowledgement, the NAK */
            }
            sc->left[e.id] = m->kind == NF_SIM_MCAST ? npk * sc->recv[e.id] : npk;
        }
        uint32_t group = UINT32_MAX;
        if (m->kind == NF_SIM_MCAST) /* every other member gets every packet */
            group = m->group, to = from;
        int rc = add_send(sc, &k,
                          (nf__script_send){.from = from,
                                            .to = to,
                                            .rail = m->kind == NF_SIM_MCAST && !sc->par.mcast_rails
                                                        ? NF_SIM_RAIL0
                                                        : m->rail,
                                            .npkts = npk,
                                            .tag = e.id,
                                            .group = group,
                                            .srcroute = m->source_routed});
        if (rc) return rc;
    }
    /* the engines' cycle, in the order they became busy; the idle ones leave the list */
    size_t w = 0;
    for (size_t x = 0; x < sc->n_act; x++) {
        uint32_t g = sc->act[x];
        bool busy;
        int rc = engine_cycle(sc, g, now, &k, &busy);
        if (rc) return rc;
        if (busy)
            sc->act[w++] = g;
        else
            sc->eng[g].active = 0;
    }
    sc->n_act = w;
    *sends = sc->sends;
    *n = k;
    return NF_OK;
}

int nf__script_times(const nf__script *sc, uint32_t id, nf_sim_msg_times *out) {
    if (!sc || id >= sc->n || !sc->t) return NF_EINVAL;
    *out = sc->t[id];
    return NF_OK;
}
