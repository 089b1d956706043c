/* SPDX-License-Identifier: MIT */
/* Scripted messages: the Sunway NIC's message kinds (write with its hardware acknowledgement,
 * read served as a write back, put with a reply word, short), released at a time or after the
 * messages they depend on, their packets on a fixed rail or spread over both, and each one's
 * release, data-in and completion times. The engine (sim.c) emits the packets and reports the
 * tails that arrive; everything here runs on one thread between the cycle's phases. */
#include "sim/sim_internal.h"

#include "util/mem.h"

#include <string.h>

enum { PH_DATA = 0, PH_BACK = 1 }; /* WRITE: the ack; READ: the data coming back */

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
};

void nf__script_free(nf__script *sc) {
    if (!sc) return;
    void *a[] = {sc->m,    sc->edge,  sc->succ_off, sc->succ, sc->preds,
                 sc->left, sc->phase, sc->t,        sc->heap};
    for (size_t i = 0; i < sizeof a / sizeof a[0]; i++)
        nf__free(a[i]);
    nf__free(sc);
}

static nf__script *script_of(nf_sim *s) {
    nf__script **slot = nf__sim_script_slot(s);
    if (!*slot) *slot = nf__calloc(1, sizeof **slot);
    return *slot;
}

void nf_sim_script_clear(nf_sim *s) {
    nf__script **slot = nf__sim_script_slot(s);
    nf__script_free(*slot);
    *slot = NULL;
}

static uint64_t payload(const nf_sim_config *c) { return (uint64_t)c->flit_bytes * c->pkt_flits; }

static uint32_t data_packets(const nf_sim_config *c, const nf_sim_msg *m) {
    return m->bytes ? (uint32_t)((m->bytes - 1) / payload(c) + 1) : 1; /* (nf_sim_post bounds it) */
}

int nf_sim_post(nf_sim *s, const nf_sim_msg *m, uint32_t *id) {
    const nf_sim_config *c = nf__sim_config(s);
    uint32_t E = nf_sim_endpoints(s), recv = 0;
    if (m->kind == NF_SIM_MCAST) {
        if (m->src >= E || nf__sim_group_receivers(s, m->group, m->src, &recv) || !recv)
            return NF_EINVAL;
    } else if (m->src >= E || m->dst >= E || m->src == m->dst || (unsigned)m->kind > NF_SIM_MCAST ||
               (unsigned)m->rail > NF_SIM_RAIL_DYNAMIC) {
        return NF_EINVAL;
    }
    if (m->kind == NF_SIM_SHORT && m->bytes > payload(c)) return NF_EINVAL;
    /* at most 2^24 packets a message (512 MiB of 32-byte flits in 1-flit packets), and as many
     * deliveries of a multicast's packets as a 32-bit count holds */
    uint64_t pk = m->bytes ? (m->bytes - 1) / payload(c) + 1 : 1;
    if (pk > (1u << 24) || (m->kind == NF_SIM_MCAST && pk * recv > UINT32_MAX)) return NF_EINVAL;
    if (m->rail == NF_SIM_RAIL1 && (!nf__sim_two_rails(s, m->src) || !nf__sim_two_rails(s, m->dst)))
        return NF_EINVAL;
    nf__script *sc = script_of(s);
    if (!sc) return NF_ENOMEM;
    if (sc->n >= NF__SCRIPT_TAG - 1) return NF_ENOMEM;
    if (sc->n == sc->cap && NF_GROW(sc->m, sc->cap, sc->n + 1)) return NF_ENOMEM;
    sc->m[sc->n] = *m;
    *id = (uint32_t)sc->n++;
    return NF_OK;
}

int nf_sim_after(nf_sim *s, uint32_t before, uint32_t after) {
    nf__script *sc = script_of(s);
    if (!sc) return NF_ENOMEM;
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

static uint64_t overhead(const nf_sim_config *c, const nf_sim_msg *m) {
    return m->kind == NF_SIM_SHORT || m->by_nic ? c->nic_short_cycles : c->nic_msg_cycles;
}

int nf__script_begin(nf__script *sc, nf_sim *s) {
    const nf_sim_config *c = nf__sim_config(s);
    size_t n = sc->n;
    nf__free(sc->succ_off);
    nf__free(sc->succ);
    nf__free(sc->preds);
    nf__free(sc->left);
    nf__free(sc->phase);
    nf__free(sc->t);
    sc->succ_off = nf__calloc(n + 2, sizeof *sc->succ_off);
    sc->succ = nf__malloc((sc->n_edge + 1) * sizeof *sc->succ);
    sc->preds = nf__calloc(n + 1, sizeof *sc->preds);
    sc->left = nf__calloc(n + 1, sizeof *sc->left);
    sc->phase = nf__calloc(n + 1, 1);
    sc->t = nf__malloc((n + 1) * sizeof *sc->t);
    if (!sc->succ_off || !sc->succ || !sc->preds || !sc->left || !sc->phase || !sc->t)
        return NF_ENOMEM;
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
    for (size_t i = 0; i < n; i++) { /* the groups may have changed since the post */
        uint32_t recv;
        if (sc->m[i].kind == NF_SIM_MCAST &&
            (nf__sim_group_receivers(s, sc->m[i].group, sc->m[i].src, &recv) || recv == 0))
            return NF_EINVAL;
    }
    for (size_t i = 0; i < n; i++) {
        sc->t[i] =
            (nf_sim_msg_times){UINT64_MAX, UINT64_MAX, UINT64_MAX, data_packets(c, &sc->m[i])};
        if (sc->preds[i]) continue;
        uint64_t at = sc->m[i].at + overhead(c, &sc->m[i]);
        if (heap_push(sc, (heap_ent){at, (uint32_t)i, PH_DATA})) return NF_ENOMEM;
    }
    return NF_OK;
}

bool nf__script_idle(const nf__script *sc, uint32_t *done, uint64_t *last_done) {
    *done = sc->done;
    *last_done = sc->last_done;
    return sc->n_heap == 0 && sc->in_phase == 0;
}

bool nf__script_waiting(const nf__script *sc) { return sc->n_heap > 0; }

void nf__script_mark(nf_sim *s, size_t *n_msg, size_t *n_edge) {
    const nf__script *sc = *nf__sim_script_slot(s);
    *n_msg = sc ? sc->n : 0;
    *n_edge = sc ? sc->n_edge : 0;
}

void nf__script_truncate(nf_sim *s, size_t n_msg, size_t n_edge) {
    nf__script *sc = *nf__sim_script_slot(s);
    if (sc && n_msg <= sc->n && n_edge <= sc->n_edge) sc->n = n_msg, sc->n_edge = n_edge;
}

uint32_t nf__script_count(const nf__script *sc) { return (uint32_t)sc->n; }

/* Message i's current phase is complete at `now`. */
static int phase_done(nf__script *sc, nf_sim *s, uint32_t i, uint64_t now) {
    const nf_sim_config *c = nf__sim_config(s);
    const nf_sim_msg *m = &sc->m[i];
    if (sc->phase[i] == PH_DATA && m->kind != NF_SIM_READ) sc->t[i].data_in = now;
    if (sc->phase[i] == PH_BACK && m->kind == NF_SIM_READ) sc->t[i].data_in = now;
    if (sc->phase[i] == PH_DATA && (m->kind == NF_SIM_WRITE || m->kind == NF_SIM_READ)) {
        /* the target NIC answers: a hardware acknowledgement, or the data read */
        sc->phase[i] = PH_BACK;
        uint64_t at = now + (m->kind == NF_SIM_WRITE ? c->nic_short_cycles : c->nic_msg_cycles);
        return heap_push(sc, (heap_ent){at, i, PH_BACK});
    }
    sc->t[i].done = now;
    sc->done++;
    sc->in_phase--;
    sc->last_done = now;
    for (uint32_t k = sc->succ_off[i]; k < sc->succ_off[i + 1]; k++) {
        uint32_t j = sc->succ[k];
        if (--sc->preds[j]) continue;
        uint64_t at = now + overhead(c, &sc->m[j]);
        if (sc->m[j].at + overhead(c, &sc->m[j]) > at) at = sc->m[j].at + overhead(c, &sc->m[j]);
        int rc = heap_push(sc, (heap_ent){at, j, PH_DATA});
        if (rc) return rc;
    }
    return NF_OK;
}

int nf__script_arrivals(nf__script *sc, nf_sim *s, const uint32_t *ids, size_t n) {
    uint64_t now = nf__sim_now(s);
    for (size_t k = 0; k < n; k++) {
        uint32_t i = ids[k];
        if (i >= sc->n || sc->left[i] == 0) continue; /* (cannot happen: one count per packet) */
        if (--sc->left[i] == 0) {
            int rc = phase_done(sc, s, i, now);
            if (rc) return rc;
        }
    }
    return NF_OK;
}

int nf__script_release(nf__script *sc, nf_sim *s) {
    uint64_t now = nf__sim_now(s);
    while (sc->n_heap && sc->heap[0].at <= now) {
        heap_ent e = heap_pop(sc);
        const nf_sim_msg *m = &sc->m[e.id];
        uint32_t from = m->src, to = m->dst, npk = sc->t[e.id].packets;
        if (e.phase == PH_DATA) {
            /* released when due (its `at`, its last dependence done); its NIC's overhead
             * after that, the packets go to the NIC's queue */
            sc->t[e.id].released = e.at - overhead(nf__sim_config(s), m);
            sc->in_phase++;
            if (m->kind == NF_SIM_READ) npk = 1; /* the request */
        } else {
            from = m->dst, to = m->src;
            if (m->kind == NF_SIM_WRITE) npk = 1; /* the acknowledgement */
        }
        sc->left[e.id] = npk;
        uint32_t group = UINT32_MAX;
        if (m->kind == NF_SIM_MCAST) { /* every other member gets every packet */
            uint32_t recv = 0;
            if (nf__sim_group_receivers(s, m->group, m->src, &recv)) return NF_EINVAL;
            sc->left[e.id] = npk * recv;
            group = m->group, to = from;
        }
        int rc = nf__sim_emit(s, from, to, m->kind == NF_SIM_MCAST ? NF_SIM_RAIL0 : m->rail, npk,
                              e.id, group);
        if (rc) return rc;
    }
    return NF_OK;
}

int nf_sim_msg_times_of(const nf_sim *s, uint32_t id, nf_sim_msg_times *out) {
    nf__script *const *slot = nf__sim_script_slot((nf_sim *)(uintptr_t)s);
    const nf__script *sc = *slot;
    if (!sc || id >= sc->n || !sc->t) return NF_EINVAL;
    *out = sc->t[id];
    return NF_OK;
}
