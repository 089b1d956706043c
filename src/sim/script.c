/* SPDX-License-Identifier: MIT */
/* Scripted messages: the Sunway NIC's message kinds (write with its hardware acknowledgement,
 * read served as a write back, put with a reply word, short), released at a time or after the
 * messages they depend on, their packets on a fixed rail or spread over both, and each one's
 * release, data-in and completion times. A module of its own: the engine (sim.c) posts the
 * messages, tells it the tails that arrive and takes from it the sends that are due; it knows
 * nothing of the engine. Everything here runs on one thread between the cycle's phases. */
#include "sim/script.h"

#include "util/mem.h"

#include <string.h>

enum { PH_DATA = 0, PH_BACK = 1 }; /* WRITE: the ack; READ: the data coming back */
enum { PH_HOST = 2 }; /* in the heap only: a message due, its sender's host not yet done with it */

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
    uint64_t *host_free; /* per source endpoint: the cycle its host is free (host_cycles) */
};

void nf__script_free(nf__script *sc) {
    if (!sc) return;
    void *a[] = {sc->m,     sc->edge, sc->succ_off, sc->succ, sc->preds, sc->left,
                 sc->phase, sc->t,    sc->heap,     sc->recv, sc->sends, sc->host_free};
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
    if (sc->n >= NF__SCRIPT_TAG - 1) return NF_ENOMEM;
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

static uint64_t overhead(const nf__script_params *p, const nf_sim_msg *m) {
    return m->kind == NF_SIM_SHORT || m->by_nic ? p->short_cycles : p->msg_cycles;
}

/* Message i is due at cycle `at` (its own time, or its last dependence done): its NIC's work
 * begins then; with a host overhead, a message the host issues (not by_nic) first waits for
 * its sender's host, which handles its messages one at a time in the order they fall due. */
static int due(nf__script *sc, uint32_t i, uint64_t at) {
    const nf_sim_msg *m = &sc->m[i];
    if (sc->par.host_cycles && !m->by_nic) return heap_push(sc, (heap_ent){at, i, PH_HOST});
    return heap_push(sc, (heap_ent){at + overhead(&sc->par, m), i, PH_DATA});
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
    if (par->host_cycles) {
        uint32_t top = 0;
        for (size_t i = 0; i < n; i++)
            if (sc->m[i].src >= top) top = sc->m[i].src + 1;
        if (!(sc->host_free = nf__calloc((size_t)top + 1, sizeof *sc->host_free))) return NF_ENOMEM;
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
    for (size_t i = 0; i < n; i++) {
        sc->t[i] = (nf_sim_msg_times){UINT64_MAX, UINT64_MAX, UINT64_MAX,
                                      data_packets(c->payload, &sc->m[i])};
        if (sc->preds[i]) continue;
        if (due(sc, (uint32_t)i, sc->m[i].at)) return NF_ENOMEM;
    }
    return NF_OK;
}

bool nf__script_idle(const nf__script *sc, uint32_t *done, uint64_t *last_done) {
    *done = sc->done;
    *last_done = sc->last_done;
    return sc->n_heap == 0 && sc->in_phase == 0;
}

bool nf__script_waiting(const nf__script *sc) { return sc->n_heap > 0; }

void nf__script_mark(const nf__script *sc, size_t *n_msg, size_t *n_edge) {
    *n_msg = sc ? sc->n : 0;
    *n_edge = sc ? sc->n_edge : 0;
}

void nf__script_truncate(nf__script *sc, size_t n_msg, size_t n_edge) {
    if (sc && n_msg <= sc->n && n_edge <= sc->n_edge) sc->n = n_msg, sc->n_edge = n_edge;
}

uint32_t nf__script_count(const nf__script *sc) { return sc ? (uint32_t)sc->n : 0; }

const nf_sim_msg *nf__script_msg(const nf__script *sc, uint32_t i) { return &sc->m[i]; }

/* Message i's current phase is complete at `now`. */
static int phase_done(nf__script *sc, uint32_t i, uint64_t now) {
    const nf__script_params *c = &sc->par;
    const nf_sim_msg *m = &sc->m[i];
    if (sc->phase[i] == PH_DATA && m->kind != NF_SIM_READ) sc->t[i].data_in = now;
    if (sc->phase[i] == PH_BACK && m->kind == NF_SIM_READ) sc->t[i].data_in = now;
    if (sc->phase[i] == PH_DATA && (m->kind == NF_SIM_WRITE || m->kind == NF_SIM_READ)) {
        /* the target NIC answers: a hardware acknowledgement, or the data read */
        sc->phase[i] = PH_BACK;
        uint64_t at = now + (m->kind == NF_SIM_WRITE ? c->short_cycles : c->msg_cycles);
        return heap_push(sc, (heap_ent){at, i, PH_BACK});
    }
    sc->t[i].done = now;
    sc->done++;
    sc->in_phase--;
    sc->last_done = now;
    for (uint32_t k = sc->succ_off[i]; k < sc->succ_off[i + 1]; k++) {
        uint32_t j = sc->succ[k];
        if (--sc->preds[j]) continue;
        int rc = due(sc, j, sc->m[j].at > now ? sc->m[j].at : now);
        if (rc) return rc;
    }
    return NF_OK;
}

int nf__script_arrivals(nf__script *sc, uint64_t now, const uint32_t *ids, size_t n) {
    for (size_t k = 0; k < n; k++) {
        uint32_t i = ids[k];
        if (i >= sc->n || sc->left[i] == 0) continue; /* (cannot happen: one count per packet) */
        if (--sc->left[i] == 0) {
            int rc = phase_done(sc, i, now);
            if (rc) return rc;
        }
    }
    return NF_OK;
}

int nf__script_release(nf__script *sc, uint64_t now, const nf__script_send **sends, size_t *n) {
    size_t k = 0;
    while (sc->n_heap && sc->heap[0].at <= now) {
        heap_ent e = heap_pop(sc);
        const nf_sim_msg *m = &sc->m[e.id];
        if (e.phase == PH_HOST) { /* the host takes it when free; the NIC after that */
            uint64_t start = e.at > sc->host_free[m->src] ? e.at : sc->host_free[m->src];
            sc->host_free[m->src] = start + sc->par.host_cycles;
            int rc = heap_push(
                sc, (heap_ent){start + sc->par.host_cycles + overhead(&sc->par, m), e.id, PH_DATA});
            if (rc) return rc;
            continue;
        }
        uint32_t from = m->src, to = m->dst, npk = sc->t[e.id].packets;
        if (e.phase == PH_DATA) {
            /* released when due (its `at`, its last dependence done); its NIC's overhead
             * after that, the packets go to the NIC's queue */
            sc->t[e.id].released = e.at - overhead(&sc->par, m);
            sc->in_phase++;
            if (m->kind == NF_SIM_READ) npk = 1; /* the request */
        } else {
            from = m->dst, to = m->src;
            if (m->kind == NF_SIM_WRITE) npk = 1; /* the acknowledgement */
        }
        sc->left[e.id] = npk;
        uint32_t group = UINT32_MAX;
        if (m->kind == NF_SIM_MCAST) { /* every other member gets every packet */
            sc->left[e.id] = npk * sc->recv[e.id];
            group = m->group, to = from;
        }
        if (k == sc->cap_sends && NF_GROW(sc->sends, sc->cap_sends, k + 1)) return NF_ENOMEM;
        sc->sends[k++] = (nf__script_send){.from = from,
                                           .to = to,
                                           .rail = m->kind == NF_SIM_MCAST ? NF_SIM_RAIL0 : m->rail,
                                           .npkts = npk,
                                           .tag = e.id,
                                           .group = group};
    }
    *sends = sc->sends;
    *n = k;
    return NF_OK;
}

int nf__script_times(const nf__script *sc, uint32_t id, nf_sim_msg_times *out) {
    if (!sc || id >= sc->n || !sc->t) return NF_EINVAL;
    *out = sc->t[id];
    return NF_OK;
}
