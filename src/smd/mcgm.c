/* SPDX-License-Identifier: MIT */
/* The multicast group manager's state machine (mcgm.h). Groups live in a slot array; an MGID
 * hash map (chained through the slots on 64-bit hash collisions) finds them, a membership map
 * keyed by (group generation, CA) finds a member's index, a binary heap of deadlines drives the
 * timers (stale entries are skipped by checking the slot's generation and deadline), a bitmap
 * hands out MLIDs, lowest first. Link loads live in an nf_mcast_live: a tree is added when a group
 * is routed and taken out when it is destroyed, so they always equal a recount. */
#define _GNU_SOURCE /* qsort_r */
#include "netfab/mcgm.h"

#include "util/mem.h"
#include "util/u64map.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define NO_SLOT UINT32_MAX
#define NO_DEADLINE UINT64_MAX
#define N_MLIDS (NF_MLID_MAX - NF_MLID_BASE + 1)

/* Journal records: type byte, then fields little-endian. */
enum { REC_FABRIC = 0, REC_CREATE = 1, REC_JOIN = 2, REC_LEAVE = 3, REC_TREE = 4, REC_DESTROY = 5 };

typedef struct group {
    nf_gid mgid;
    uint16_t mlid;
    uint8_t state; /* NF_MCG_*; 0 for a free slot */
    bool routed;   /* tree holds a tree in the loads */
    uint32_t member_count, joined, left;
    bool pending;       /* counted in its owner's pending groups (created, not yet Ready) */
    uint64_t owner;     /* the requester that created it (0: the manager, no limits) */
    uint32_t gen;       /* generation: memberships of an earlier group in this slot never match */
    uint32_t next_hash; /* next slot with the same MGID hash */
    nf_node *member;    /* joined CAs, in join order (those that left stay, flagged) */
    uint8_t *has_left;
    uint32_t cap_member;
    nf_mcast_tree tree;
    uint64_t deadline;
} group;

typedef struct timer {
    uint64_t at;
    uint32_t slot, gen;
} timer;

typedef struct port_entry {
    uint64_t guid;
    nf_node ca;
} port_entry;

struct nf_mcgm {
    const nf_fabric *f;
    const nf_hops *h;
    nf_mcgm_opts o;
    nf_mcgm_log_fn log;
    void *log_ud;
    nf_mcast_live *live;
    group *g;
    uint32_t n_slots, free_head, gen_next; /* free slots chain through next_hash */
    size_t cap_slots;
    nf__u64map by_mgid; /* hash16(MGID) -> first slot */
    nf__u64map members; /* gen << 32 | CA -> member index */
    nf__u64map owners;  /* owner -> index in own[] */
    struct owner_count {
        uint64_t owner;
        uint32_t open, pending; /* groups it created that are alive / not yet Ready */
    } * own;
    size_t n_own, cap_own;
    timer *heap;
    size_t n_heap, cap_heap;
    uint64_t mlid_used[(N_MLIDS + 63) / 64];
    port_entry *ports; /* CA port GUIDs and switch GUIDs (a switch joins by port 0), ascending */
    uint32_t n_ports;
    nf_node *scratch; /* members of one group, for routing */
    size_t cap_scratch;
    uint8_t *rec; /* one journal record being built */
    size_t cap_rec;
    nf_mcgm_counters c;
    bool lost_timers; /* a deadline is not in the heap (allocation failure): scan instead */
};

/* ---- small helpers -------------------------------------------------------------------------- */

static double mono_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void put16(uint8_t *p, uint16_t v) {
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
}
static void put32(uint8_t *p, uint32_t v) {
    for (int i = 0; i < 4; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}
static void put64(uint8_t *p, uint64_t v) {
    for (int i = 0; i < 8; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}
static uint16_t get16(const uint8_t *p) { return (uint16_t)(p[0] | p[1] << 8); }
static uint32_t get32(const uint8_t *p) {
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}
static uint64_t get64(const uint8_t *p) { return get32(p) | (uint64_t)get32(p + 4) << 32; }

static int cmp_port(const void *a, const void *b) {
    uint64_t x = ((const port_entry *)a)->guid, y = ((const port_entry *)b)->guid;
    return x < y ? -1 : x > y;
}

static int cmp_node(const void *a, const void *b) {
    nf_node x = *(const nf_node *)a, y = *(const nf_node *)b;
    return x < y ? -1 : x > y;
}

static nf_node port_ca(const nf_mcgm *m, uint64_t guid) {
    size_t lo = 0, hi = m->n_ports;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (m->ports[mid].guid < guid)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < m->n_ports && m->ports[lo].guid == guid ? m->ports[lo].ca : NF_NONE;
}

/* A fingerprint of the fabric for the journal: node and link counts and every GUID. */
static uint64_t fabric_hash(const nf_fabric *f) {
    uint64_t x = nf__hash64((uint64_t)f->n_nodes << 32 | f->n_links);
    for (nf_node n = 0; n < f->n_nodes; n++)
        x = nf__hash64(x ^ f->guid[n]);
    return x;
}

/* ---- records -------------------------------------------------------------------------------- */

static uint8_t *rec_room(nf_mcgm *m, size_t n) {
    if (n > m->cap_rec) {
        uint8_t *r = nf__realloc(m->rec, n);
        if (!r) return NULL;
        m->rec = r;
        m->cap_rec = n;
    }
    return m->rec;
}

/* CREATE (MLID, MemberCount, owner), JOIN and LEAVE (port GUID), DESTROY: type, MGID, then the
 * fields, into r (room for SIMPLE_REC_MAX bytes); returns the length. A CREATE of 23 bytes (no
 * owner: journals written before owners existed) is read as the manager's. */
#define SIMPLE_REC_MAX 31
static size_t simple_rec(uint8_t *r, uint8_t type, const group *g, uint64_t guid) {
    r[0] = type;
    memcpy(r + 1, g->mgid.raw, 16);
    if (type == REC_CREATE) {
        put16(r + 17, g->mlid);
        put32(r + 19, g->member_count);
        put64(r + 23, g->owner);
        return 31;
    }
    if (type == REC_JOIN || type == REC_LEAVE) {
        put64(r + 17, guid);
        return 25;
    }
    return 17;
}

static void log_simple(nf_mcgm *m, uint8_t type, const group *g, uint64_t guid) {
    if (!m->log) return;
    uint8_t r[SIMPLE_REC_MAX];
    m->log(m->log_ud, r, (uint32_t)simple_rec(r, type, g, guid));
}

/* TREE: type, MGID, ready, root, height, link count, links. */
static size_t tree_rec(const group *g, uint8_t *r) {
    r[0] = REC_TREE;
    memcpy(r + 1, g->mgid.raw, 16);
    r[17] = g->state == NF_MCG_READY || g->state == NF_MCG_RECEIVING_LEAVE;
    put32(r + 18, g->tree.root);
    r[22] = g->tree.height;
    put32(r + 23, g->tree.n_links);
    for (uint32_t i = 0; i < g->tree.n_links; i++)
        put32(r + 27 + 4 * (size_t)i, g->tree.links[i]);
    return 27 + 4 * (size_t)g->tree.n_links;
}

static void log_tree(nf_mcgm *m, const group *g) {
    if (!m->log) return;
    uint8_t *r = rec_room(m, 27 + 4 * (size_t)g->tree.n_links);
    if (!r) return; /* the caller checked room before routing: see route_group */
    m->log(m->log_ud, r, (uint32_t)tree_rec(g, r));
}

/* ---- slots, maps, MLIDs, timers ------------------------------------------------------------- */

static uint32_t find_slot(const nf_mcgm *m, const nf_gid *mgid) {
    uint32_t s;
    if (!nf__u64map_get(&m->by_mgid, nf__hash16(mgid->raw), &s)) return NO_SLOT;
    for (; s != NO_SLOT; s = m->g[s].next_hash)
        if (memcmp(m->g[s].mgid.raw, mgid->raw, 16) == 0) return s;
    return NO_SLOT;
}

static int mlid_take(nf_mcgm *m, uint16_t *out) {
    for (size_t w = 0; w < sizeof m->mlid_used / sizeof m->mlid_used[0]; w++) {
        if (m->mlid_used[w] == UINT64_MAX) continue;
        unsigned b = (unsigned)__builtin_ctzll(~m->mlid_used[w]);
        size_t i = w * 64 + b;
        if (i >= N_MLIDS) break;
        m->mlid_used[w] |= 1ULL << b;
        *out = (uint16_t)(NF_MLID_BASE + i);
        return NF_OK;
    }
    return NF_ERANGE;
}

static bool mlid_claim(nf_mcgm *m, uint16_t mlid) {
    if (mlid < NF_MLID_BASE || mlid > NF_MLID_MAX) return false;
    size_t i = mlid - NF_MLID_BASE;
    if (m->mlid_used[i / 64] >> (i % 64) & 1) return false;
    m->mlid_used[i / 64] |= 1ULL << (i % 64);
    return true;
}

static void mlid_give(nf_mcgm *m, uint16_t mlid) {
    size_t i = mlid - NF_MLID_BASE;
    m->mlid_used[i / 64] &= ~(1ULL << (i % 64));
}

static void heap_push(nf_mcgm *m, timer t) {
    if (NF_GROW(m->heap, m->cap_heap, m->n_heap + 1)) return; /* the timer is lost: see below */
    size_t i = m->n_heap++;
    while (i > 0 && m->heap[(i - 1) / 2].at > t.at) {
        m->heap[i] = m->heap[(i - 1) / 2];
        i = (i - 1) / 2;
    }
    m->heap[i] = t;
}

static void heap_pop(nf_mcgm *m) {
    timer last = m->heap[--m->n_heap];
    size_t i = 0;
    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= m->n_heap) break;
        if (c + 1 < m->n_heap && m->heap[c + 1].at < m->heap[c].at) c++;
        if (m->heap[c].at >= last.at) break;
        m->heap[i] = m->heap[c];
        i = c;
    }
    if (m->n_heap) m->heap[i] = last;
}

/* A group's deadline. Timer entries are never removed: an entry whose slot has another
 * generation or another deadline is stale and skipped. If the heap cannot grow (out of memory)
 * the deadline is still kept on the group and lost_timers is set: then the timers fall back to a
 * scan of every group until the heap can be rebuilt (see nf_mcgm_tick). */
static void set_deadline(nf_mcgm *m, uint32_t slot, uint64_t at) {
    m->g[slot].deadline = at;
    if (at == NO_DEADLINE) return;
    size_t before = m->n_heap;
    heap_push(m, (timer){.at = at, .slot = slot, .gen = m->g[slot].gen});
    if (m->n_heap == before) m->lost_timers = true;
}

/* ---- owners: what each requester has created ------------------------------------------------ */

/* The owner's counts, or NULL when it has none. */
static struct owner_count *owner_find(const nf_mcgm *m, uint64_t owner) {
    uint32_t i;
    return nf__u64map_get(&m->owners, owner, &i) ? &m->own[i] : NULL;
}

/* A new group of g->owner: one more open and pending group. NF_ENOMEM leaves the counts as they
 * were. The manager's own groups (owner 0) are not counted. */
static int owner_add(nf_mcgm *m, group *g) {
    if (!g->owner) return NF_OK;
    struct owner_count *o = owner_find(m, g->owner);
    if (!o) {
        if (NF_GROW(m->own, m->cap_own, m->n_own + 1)) return NF_ENOMEM;
        if (nf__u64map_put(&m->owners, g->owner, (uint32_t)m->n_own)) return NF_ENOMEM;
        o = &m->own[m->n_own++];
        *o = (struct owner_count){.owner = g->owner};
    }
    o->open++;
    o->pending++;
    g->pending = true;
    return NF_OK;
}

/* The group is no longer pending (Ready, or destroyed). */
static void owner_settled(nf_mcgm *m, group *g) {
    if (!g->pending) return;
    g->pending = false;
    struct owner_count *o = owner_find(m, g->owner);
    if (o && o->pending) o->pending--;
}

/* The group's slot and MLID are given back: it no longer counts against its owner; an owner with
 * nothing left is forgotten (the last entry moves into its place). */
static void owner_release(nf_mcgm *m, group *g) {
    owner_settled(m, g);
    uint32_t i;
    if (!g->owner || !nf__u64map_get(&m->owners, g->owner, &i)) return;
    if (m->own[i].open) m->own[i].open--;
    if (m->own[i].open || m->own[i].pending) return;
    nf__u64map_del(&m->owners, g->owner);
    if (i + 1 != m->n_own) {
        m->own[i] = m->own[m->n_own - 1];
        nf__u64map_put(&m->owners, m->own[i].owner, i); /* replaces: no allocation */
    }
    m->n_own--;
}

static int new_slot(nf_mcgm *m, const nf_gid *mgid, uint32_t *out) {
    uint32_t s = m->free_head;
    if (s == NO_SLOT) {
        if (NF_GROW(m->g, m->cap_slots, (size_t)m->n_slots + 1)) return NF_ENOMEM;
        s = m->n_slots++;
        memset(&m->g[s], 0, sizeof m->g[s]);
    } else {
        m->free_head = m->g[s].next_hash;
    }
    group *g = &m->g[s];
    nf_node *member = g->member;
    uint8_t *has_left = g->has_left;
    uint32_t cap = g->cap_member; /* member arrays are kept for reuse */
    memset(g, 0, sizeof *g);
    g->member = member;
    g->has_left = has_left;
    g->cap_member = cap;
    g->mgid = *mgid;
    g->gen = ++m->gen_next;
    g->tree.root = NF_NONE;
    g->deadline = NO_DEADLINE;
    uint64_t hk = nf__hash16(mgid->raw);
    uint32_t head;
    g->next_hash = nf__u64map_get(&m->by_mgid, hk, &head) ? head : NO_SLOT;
    if (nf__u64map_put(&m->by_mgid, hk, s)) {
        g->next_hash = m->free_head;
        m->free_head = s;
        return NF_ENOMEM;
    }
    *out = s;
    return NF_OK;
}

/* Frees a slot: out of the MGID chain and the membership map, its MLID back. */
static void drop_slot(nf_mcgm *m, uint32_t s) {
    group *g = &m->g[s];
    uint64_t hk = nf__hash16(g->mgid.raw);
    uint32_t head = NO_SLOT;
    nf__u64map_get(&m->by_mgid, hk, &head);
    if (head == s) {
        if (g->next_hash == NO_SLOT)
            nf__u64map_del(&m->by_mgid, hk);
        else
            nf__u64map_put(&m->by_mgid, hk, g->next_hash); /* replaces: no allocation */
    } else {
        for (uint32_t p = head; p != NO_SLOT; p = m->g[p].next_hash)
            if (m->g[p].next_hash == s) {
                m->g[p].next_hash = g->next_hash;
                break;
            }
    }
    for (uint32_t i = 0; i < g->joined + g->left && i < g->cap_member; i++)
        nf__u64map_del(&m->members, (uint64_t)g->gen << 32 | g->member[i]);
    if (g->routed) nf_mcast_live_remove(m->live, &g->tree);
    nf_mcast_tree_clear(&g->tree);
    mlid_give(m, g->mlid);
    owner_release(m, g);
    g->state = 0;
    g->gen = 0;
    g->next_hash = m->free_head;
    m->free_head = s;
}

static uint32_t n_members(const group *g) { return g->joined + g->left; }

static int add_member(nf_mcgm *m, uint32_t s, nf_node ca) {
    group *g = &m->g[s];
    uint32_t n = n_members(g);
    if (n + 1 > g->cap_member) {
        uint32_t cap = g->cap_member ? 2 * g->cap_member : 8;
        nf_node *mem = nf__realloc(g->member, (size_t)cap * sizeof *mem);
        if (!mem) return NF_ENOMEM;
        g->member = mem;
        uint8_t *hl = nf__realloc(g->has_left, cap);
        if (!hl) return NF_ENOMEM;
        g->has_left = hl;
        g->cap_member = cap;
    }
    if (nf__u64map_put(&m->members, (uint64_t)g->gen << 32 | ca, n)) return NF_ENOMEM;
    g->member[n] = ca;
    g->has_left[n] = 0;
    g->joined++;
    return NF_OK;
}

/* Takes member i out before Ready (swap with the last). */
static void remove_member(nf_mcgm *m, uint32_t s, uint32_t i) {
    group *g = &m->g[s];
    uint32_t last = n_members(g) - 1;
    nf__u64map_del(&m->members, (uint64_t)g->gen << 32 | g->member[i]);
    if (i != last) {
        g->member[i] = g->member[last];
        g->has_left[i] = g->has_left[last];
        nf__u64map_put(&m->members, (uint64_t)g->gen << 32 | g->member[i], i); /* replaces */
    }
    g->joined--;
}

/* ---- routing and destruction ---------------------------------------------------------------- */

/* (Re)routes group s over its members still in (all of them unless recompute mode dropped the
 * ones that left), replacing any tree it had. NF_ENOMEM, NF_EUNREACHABLE; the old tree stays in
 * the loads on failure. */
static int route_group(nf_mcgm *m, uint32_t s) {
    group *g = &m->g[s];
    uint32_t n = 0, total = n_members(g);
    if (NF_GROW(m->scratch, m->cap_scratch, (size_t)total + 1)) return NF_ENOMEM;
    for (uint32_t i = 0; i < total; i++)
        if (!(m->o.recompute_each_join && g->has_left[i])) m->scratch[n++] = g->member[i];
    if (n == 0) return NF_EINVAL;
    /* room for the TREE record first, so that logging a routed tree cannot fail */
    if (m->log && !rec_room(m, 27 + 4 * ((size_t)m->f->n_switches + n))) return NF_ENOMEM;
    bool was_routed = g->routed; /* its tree may be empty: one member under minihop */
    if (g->routed) { /* out of the loads first: the new tree must not see its own old load */
        nf_mcast_live_remove(m->live, &g->tree);
        g->routed = false;
    }
    nf_mcast_tree t;
    double t0 = mono_s();
    int rc = nf_mcast_live_add(m->live, m->scratch, n, &t);
    m->c.route_s += mono_s() - t0;
    if (rc) {
        if (was_routed) { /* the old tree goes back */
            nf_mcast_live_adopt(m->live, &g->tree);
            g->routed = true;
        }
        return rc;
    }
    m->c.routes++;
    nf_mcast_tree_clear(&g->tree);
    g->tree = t;
    g->routed = true;
    return NF_OK;
}

/* To Destroying: the tree leaves the loads now; the slot lingers so late requests learn why. */
static void destroy(nf_mcgm *m, uint32_t s, uint64_t now) {
    group *g = &m->g[s];
    if (g->routed) {
        nf_mcast_live_remove(m->live, &g->tree);
        g->routed = false;
    }
    nf_mcast_tree_clear(&g->tree);
    g->state = NF_MCG_DESTROYING;
    owner_settled(m, g);
    log_simple(m, REC_DESTROY, g, 0);
    m->c.destroyed++;
    set_deadline(m, s, now + m->o.linger_ms);
}

static void fill(const nf_mcgm *m, uint32_t s, const nf_gid *mgid, nf_mcgstate_rec *out) {
    memset(out, 0, sizeof *out);
    if (s == NO_SLOT) {
        if (mgid) out->mgid = *mgid;
        return;
    }
    const group *g = &m->g[s];
    out->mgid = g->mgid;
    out->mlid = g->mlid;
    out->state = g->state;
    out->member_count = g->member_count;
    out->joined = g->joined;
    out->left = g->left;
}

/* The member count reached: route once (Ready), or Destroying when the members cannot be joined
 * by a tree. */
static uint16_t complete(nf_mcgm *m, uint32_t s, uint64_t now, bool reroute) {
    group *g = &m->g[s];
    g->state = NF_MCG_COMPUTING_ROUTES;
    int rc = g->routed && !reroute ? NF_OK : route_group(m, s);
    if (rc == NF_ENOMEM) {
        g->state = NF_MCG_RECEIVING_JOIN; /* a later retransmission can try again */
        return NF_SA_STATUS_NO_RESOURCES;
    }
    if (rc) {
        destroy(m, s, now);
        return NF_SA_STATUS_DENIED;
    }
    g->state = NF_MCG_READY;
    owner_settled(m, g);
    set_deadline(m, s, NO_DEADLINE);
    m->c.ready++;
    log_tree(m, g);
    return NF_MAD_STATUS_OK;
}

/* ---- requests ------------------------------------------------------------------------------- */

bool nf_mcgm_mgid_valid(const nf_gid *mgid) {
    return mgid->raw[0] == 0xFF && (mgid->raw[1] & 0xE0) == 0;
}

uint16_t nf_mcgm_join(nf_mcgm *m, const nf_gid *mgid, uint64_t port_guid, uint32_t member_count,
                      uint64_t now, nf_mcgstate_rec *out) {
    return nf_mcgm_join_as(m, 0, mgid, port_guid, member_count, now, out);
}

uint16_t nf_mcgm_join_as(nf_mcgm *m, uint64_t owner, const nf_gid *mgid, uint64_t port_guid,
                         uint32_t member_count, uint64_t now, nf_mcgstate_rec *out) {
    m->c.joins++;
    uint32_t s = find_slot(m, mgid);
    fill(m, s, mgid, out);
    if (!nf_mcgm_mgid_valid(mgid)) return NF_SA_STATUS_INVALID_GID;
    if (member_count == 0 || member_count > m->f->n_cas + m->f->n_switches)
        return NF_SA_STATUS_REQ_INVALID;
    nf_node ca = port_ca(m, port_guid);
    if (ca == NF_NONE) return NF_SA_STATUS_INVALID_GID;
    if (s == NO_SLOT) {
        const struct owner_count *oc = owner ? owner_find(m, owner) : NULL;
        if (oc &&
            (oc->open >= m->o.max_groups_per_owner || oc->pending >= m->o.max_pending_per_owner)) {
            m->c.refused_limit++;
            return NF_SA_STATUS_NO_RESOURCES;
        }
        uint16_t mlid;
        if (mlid_take(m, &mlid)) return NF_SA_STATUS_NO_RESOURCES;
        if (new_slot(m, mgid, &s)) {
            mlid_give(m, mlid);
            return NF_SA_STATUS_NO_RESOURCES;
        }
        group *g = &m->g[s];
        g->mlid = mlid;
        g->member_count = member_count;
        g->owner = owner;
        g->state = NF_MCG_RECEIVING_JOIN;
        if (owner_add(m, g)) {
            g->owner = 0; /* counted nowhere: drop_slot must not uncount it */
            drop_slot(m, s);
            return NF_SA_STATUS_NO_RESOURCES;
        }
        log_simple(m, REC_CREATE, g, 0);
        set_deadline(m, s, now + m->o.join_timeout_ms);
    }
    group *g = &m->g[s];
    uint16_t st = NF_MAD_STATUS_OK;
    uint32_t idx;
    if (g->state == NF_MCG_DESTROYING) {
        st = NF_SA_STATUS_DENIED;
    } else if (member_count != g->member_count) {
        st = NF_SA_STATUS_REQ_INVALID;
    } else if (nf__u64map_get(&m->members, (uint64_t)g->gen << 32 | ca, &idx)) {
        if (g->has_left[idx]) st = NF_SA_STATUS_DENIED; /* no coming back once left */
    } else if (g->state != NF_MCG_RECEIVING_JOIN) {
        st = NF_SA_STATUS_REQ_INVALID; /* one distinct port too many */
    } else if (m->members.n >= m->o.max_members) {
        m->c.refused_limit++; /* every group's members together: memory stays bounded */
        st = NF_SA_STATUS_NO_RESOURCES;
    } else if (add_member(m, s, ca)) {
        st = NF_SA_STATUS_NO_RESOURCES;
    } else {
        log_simple(m, REC_JOIN, g, port_guid);
        if (m->o.recompute_each_join) {
            int rc = route_group(m, s);
            if (rc == NF_OK)
                log_tree(m, g);
            else if (rc != NF_ENOMEM) {
                destroy(m, s, now);
                st = NF_SA_STATUS_DENIED;
            }
        }
        if (st == NF_MAD_STATUS_OK && g->joined == g->member_count)
            st = complete(m, s, now, !m->o.recompute_each_join);
    }
    fill(m, s, mgid, out);
    return st;
}

uint16_t nf_mcgm_leave(nf_mcgm *m, const nf_gid *mgid, uint64_t port_guid, uint64_t now,
                       nf_mcgstate_rec *out) {
    m->c.leaves++;
    uint32_t s = find_slot(m, mgid);
    fill(m, s, mgid, out);
    if (!nf_mcgm_mgid_valid(mgid)) return NF_SA_STATUS_INVALID_GID;
    nf_node ca = port_ca(m, port_guid);
    if (ca == NF_NONE) return NF_SA_STATUS_INVALID_GID;
    if (s == NO_SLOT) return NF_SA_STATUS_NO_RECORDS;
    group *g = &m->g[s];
    if (g->state == NF_MCG_DESTROYING) return NF_MAD_STATUS_OK; /* leaving a dying group: done */
    uint32_t idx;
    if (!nf__u64map_get(&m->members, (uint64_t)g->gen << 32 | ca, &idx))
        return NF_SA_STATUS_REQ_INVALID;
    if (g->has_left[idx]) return NF_MAD_STATUS_OK;
    log_simple(m, REC_LEAVE, g, port_guid);
    if (g->state == NF_MCG_RECEIVING_JOIN) {
        remove_member(m, s, idx);
        if (g->joined == 0) {
            destroy(m, s, now);
        } else if (m->o.recompute_each_join) {
            if (route_group(m, s) == NF_OK) log_tree(m, g);
        }
    } else {
        g->has_left[idx] = 1;
        g->joined--;
        g->left++;
        if (g->state == NF_MCG_READY) {
            g->state = NF_MCG_RECEIVING_LEAVE;
            set_deadline(m, s, now + m->o.leave_timeout_ms);
        }
        if (g->joined == 0)
            destroy(m, s, now);
        else if (m->o.recompute_each_join && route_group(m, s) == NF_OK)
            log_tree(m, g);
    }
    fill(m, s, mgid, out);
    return NF_MAD_STATUS_OK;
}

uint16_t nf_mcgm_query(const nf_mcgm *m, const nf_gid *mgid, nf_mcgstate_rec *out) {
    uint32_t s = find_slot(m, mgid);
    fill(m, s, mgid, out);
    if (!nf_mcgm_mgid_valid(mgid)) return NF_SA_STATUS_INVALID_GID;
    return s == NO_SLOT ? NF_SA_STATUS_NO_RECORDS : NF_MAD_STATUS_OK;
}

/* ---- timers --------------------------------------------------------------------------------- */

uint64_t nf_mcgm_next_deadline(nf_mcgm *m) {
    while (m->n_heap) { /* drop stale entries off the top, so the answer is exact */
        const timer *t = &m->heap[0];
        const group *g = &m->g[t->slot];
        if (g->gen == t->gen && g->deadline == t->at && g->state) break;
        heap_pop(m);
    }
    uint64_t at = m->n_heap ? m->heap[0].at : NO_DEADLINE;
    for (uint32_t s = 0; m->lost_timers && s < m->n_slots; s++)
        if (m->g[s].state && m->g[s].deadline < at) at = m->g[s].deadline;
    return at;
}

/* Expires group s's deadline. */
static uint32_t expire(nf_mcgm *m, uint32_t s, uint64_t now) {
    group *g = &m->g[s];
    g->deadline = NO_DEADLINE;
    if (g->state == NF_MCG_DESTROYING) {
        drop_slot(m, s);
    } else if (g->state == NF_MCG_RECEIVING_JOIN || g->state == NF_MCG_RECEIVING_LEAVE) {
        destroy(m, s, now);
        return 1;
    }
    return 0;
}

uint32_t nf_mcgm_tick(nf_mcgm *m, uint64_t now) {
    uint32_t destroyed = 0;
    if (m->lost_timers) { /* scan, then rebuild the heap from every group's deadline */
        for (uint32_t s = 0; s < m->n_slots; s++)
            if (m->g[s].state && m->g[s].deadline <= now) destroyed += expire(m, s, now);
        m->n_heap = 0;
        m->lost_timers = false;
        for (uint32_t s = 0; s < m->n_slots; s++)
            if (m->g[s].state && m->g[s].deadline != NO_DEADLINE)
                set_deadline(m, s, m->g[s].deadline);
    }
    while (m->n_heap && m->heap[0].at <= now) {
        timer t = m->heap[0];
        heap_pop(m);
        group *g = &m->g[t.slot];
        if (g->gen != t.gen || g->deadline != t.at || !g->state) continue; /* stale */
        destroyed += expire(m, t.slot, now);
    }
    return destroyed;
}

/* ---- lifetime ------------------------------------------------------------------------------- */

void nf_mcgm_free(nf_mcgm *m) {
    if (!m) return;
    for (uint32_t s = 0; s < m->n_slots; s++) {
        nf__free(m->g[s].member);
        nf__free(m->g[s].has_left);
        nf_mcast_tree_clear(&m->g[s].tree);
    }
    nf__free(m->g);
    nf__u64map_fini(&m->by_mgid);
    nf__u64map_fini(&m->members);
    nf__u64map_fini(&m->owners);
    nf__free(m->own);
    nf__free(m->heap);
    nf__free(m->ports);
    nf__free(m->scratch);
    nf__free(m->rec);
    nf_mcast_live_free(m->live);
    nf__free(m);
}

int nf_mcgm_new(const nf_fabric *f, const nf_hops *h, const nf_mcgm_opts *opts, nf_mcgm_log_fn log,
                void *log_ud, nf_mcgm **out) {
    *out = NULL;
    nf_mcgm *m = nf__calloc(1, sizeof *m);
    if (!m) return NF_ENOMEM;
    if (opts) m->o = *opts;
    if (!m->o.engine) m->o.engine = nf_mcast_engine_find("fulb");
    if (!m->o.join_timeout_ms) m->o.join_timeout_ms = 10000;
    if (!m->o.leave_timeout_ms) m->o.leave_timeout_ms = 10000;
    if (!m->o.linger_ms) m->o.linger_ms = 5000;
    if (!m->o.max_groups_per_owner) m->o.max_groups_per_owner = NF_MCGM_DEFAULT_GROUPS_PER_OWNER;
    if (!m->o.max_pending_per_owner) m->o.max_pending_per_owner = NF_MCGM_DEFAULT_PENDING_PER_OWNER;
    if (!m->o.max_members) { /* 64 per endpoint, within [NF_MCGM_DEFAULT_MEMBERS, 2^32) */
        uint64_t per_ep = 64 * (uint64_t)f->n_cas;
        m->o.max_members = per_ep < NF_MCGM_DEFAULT_MEMBERS ? NF_MCGM_DEFAULT_MEMBERS
                           : per_ep > UINT32_MAX            ? UINT32_MAX
                                                            : (uint32_t)per_ep;
    }
    m->f = f;
    m->h = h;
    m->log = log;
    m->log_ud = log_ud;
    m->free_head = NO_SLOT;
    nf__u64map_init(&m->by_mgid);
    nf__u64map_init(&m->members);
    nf__u64map_init(&m->owners);
    int rc = nf_mcast_live_new(f, h, m->o.engine, &m->live);
    if (rc) goto fail;
    rc = NF_ENOMEM;
    for (nf_node n = f->n_switches; n < f->n_nodes; n++)
        m->n_ports += f->nports[n];
    m->n_ports += f->n_switches; /* a switch joins by its port 0, whose GUID is the switch's */
    if (!(m->ports = nf__malloc(((size_t)m->n_ports + 1) * sizeof *m->ports))) goto fail;
    m->n_ports = 0;
    for (nf_node n = 0; n < f->n_switches; n++)
        m->ports[m->n_ports++] = (port_entry){.guid = f->guid[n], .ca = n};
    for (nf_node n = f->n_switches; n < f->n_nodes; n++)
        for (unsigned p = 1; p <= f->nports[n]; p++)
            m->ports[m->n_ports++] =
                (port_entry){.guid = f->port_guid[nf_port_index(f, n, p)], .ca = n};
    qsort(m->ports, m->n_ports, sizeof *m->ports, cmp_port);
    *out = m;
    return NF_OK;
fail:
    nf_mcgm_free(m);
    return rc;
}

/* ---- listing, export, dump ------------------------------------------------------------------ */

static int cmp_mlid_slot(const void *a, const void *b, void *ctx) {
    const group *g = ctx;
    uint16_t x = g[*(const uint32_t *)a].mlid, y = g[*(const uint32_t *)b].mlid;
    return x < y ? -1 : x > y;
}

/* Live slots in MLID order into a new array; NULL with *n = 0 on allocation failure. */
static uint32_t *slots_by_mlid(const nf_mcgm *m, uint32_t *n) {
    uint32_t *s = nf__malloc(((size_t)m->n_slots + 1) * sizeof *s);
    *n = 0;
    if (!s) return NULL;
    for (uint32_t i = 0; i < m->n_slots; i++)
        if (m->g[i].state) s[(*n)++] = i;
    qsort_r(s, *n, sizeof *s, cmp_mlid_slot, m->g);
    return s;
}

size_t nf_mcgm_list(const nf_mcgm *m, nf_mcgstate_rec *out, size_t cap) {
    uint32_t n;
    uint32_t *s = slots_by_mlid(m, &n);
    if (!s) return 0;
    for (uint32_t i = 0; i < n && i < cap; i++)
        fill(m, s[i], NULL, &out[i]);
    nf__free(s);
    return n;
}

const uint32_t *nf_mcgm_efi(const nf_mcgm *m) { return nf_mcast_live_efi(m->live); }

void nf_mcgm_get_counters(const nf_mcgm *m, nf_mcgm_counters *out) {
    *out = m->c;
    out->groups = 0;
    for (uint32_t i = 0; i < m->n_slots; i++)
        out->groups += m->g[i].state != 0;
}

int nf_mcgm_export(const nf_mcgm *m, nf_groups **groups, nf_mcast **trees, uint16_t **mlid) {
    *groups = NULL;
    *trees = NULL;
    *mlid = NULL;
    uint32_t n_all;
    uint32_t *order = slots_by_mlid(m, &n_all);
    nf_groups *gr = nf__calloc(1, sizeof *gr);
    nf_mcast *mc = nf__calloc(1, sizeof *mc);
    uint32_t G = 0;
    size_t members = 0, links = 0;
    for (uint32_t i = 0; order && i < n_all; i++) {
        const group *g = &m->g[order[i]];
        if (!g->routed) continue;
        order[G++] = order[i];
        members += n_members(g);
        links += g->tree.n_links;
    }
    uint16_t *ml = nf__malloc(((size_t)G + 1) * sizeof *ml);
    if (gr) {
        gr->off = nf__calloc((size_t)G + 1, sizeof *gr->off);
        gr->member = nf__malloc((members + 1) * sizeof *gr->member);
    }
    if (mc) {
        mc->n_groups = G;
        mc->root = nf__malloc(((size_t)G + 1) * sizeof *mc->root);
        mc->height = nf__malloc((size_t)G + 1);
        mc->status = nf__calloc((size_t)G + 1, sizeof *mc->status);
        mc->tree_off = nf__calloc((size_t)G + 1, sizeof *mc->tree_off);
        mc->tree_link = nf__malloc((links + 1) * sizeof *mc->tree_link);
        mc->efi = nf__malloc(((size_t)m->f->n_links + 1) * sizeof *mc->efi);
    }
    if (!order || !gr || !mc || !ml || !gr->off || !gr->member || !mc->root || !mc->height ||
        !mc->status || !mc->tree_off || !mc->tree_link || !mc->efi) {
        nf__free(order);
        nf_groups_free(gr);
        nf_mcast_free(mc);
        nf__free(ml);
        return NF_ENOMEM;
    }
    gr->n = G;
    size_t pm = 0, pl = 0;
    for (uint32_t k = 0; k < G; k++) {
        const group *g = &m->g[order[k]];
        size_t first = pm;
        for (uint32_t i = 0; i < n_members(g); i++)
            if (!(m->o.recompute_each_join && g->has_left[i])) gr->member[pm++] = g->member[i];
        qsort(gr->member + first, pm - first, sizeof *gr->member, cmp_node);
        gr->off[k + 1] = (uint32_t)pm;
        memcpy(mc->tree_link + pl, g->tree.links, g->tree.n_links * sizeof *mc->tree_link);
        pl += g->tree.n_links;
        mc->tree_off[k + 1] = (uint32_t)pl;
        mc->root[k] = g->tree.root;
        mc->height[k] = g->tree.height;
        ml[k] = g->mlid;
    }
    /* switch members (their port 0), per group: the switches sort first among its members */
    size_t n_sw = 0;
    for (size_t i = 0; i < pm; i++)
        n_sw += gr->member[i] < m->f->n_switches;
    if (n_sw) {
        mc->sw_member_off = nf__calloc((size_t)G + 1, sizeof *mc->sw_member_off);
        mc->sw_member = nf__malloc(n_sw * sizeof *mc->sw_member);
        if (!mc->sw_member_off || !mc->sw_member) {
            nf__free(order);
            nf_groups_free(gr);
            nf_mcast_free(mc);
            nf__free(ml);
            return NF_ENOMEM;
        }
        size_t w = 0;
        for (uint32_t k = 0; k < G; k++) {
            for (uint32_t i = gr->off[k]; i < gr->off[k + 1]; i++)
                if (gr->member[i] < m->f->n_switches &&
                    (w == mc->sw_member_off[k] || mc->sw_member[w - 1] != gr->member[i]))
                    mc->sw_member[w++] = gr->member[i];
            mc->sw_member_off[k + 1] = (uint32_t)w;
        }
    }
    memcpy(mc->efi, nf_mcast_live_efi(m->live), m->f->n_links * sizeof *mc->efi);
    nf__free(order);
    *groups = gr;
    *trees = mc;
    *mlid = ml;
    return NF_OK;
}

int nf_mcgm_write_dump(const nf_mcgm *m, FILE *mft, FILE *table) {
    nf_groups *gr;
    nf_mcast *mc;
    uint16_t *ml;
    int rc = nf_mcgm_export(m, &gr, &mc, &ml);
    if (rc) return rc;
    if (mft) rc = nf_mcast_write_mft_mlids(m->f, mc, ml, mft);
    nf_groups_free(gr);
    nf_mcast_free(mc);
    nf__free(ml);
    if (rc || !table) return rc;
    uint32_t n;
    uint32_t *s = slots_by_mlid(m, &n);
    if (!s) return NF_ENOMEM;
    fprintf(table, "# MLID MGID state MemberCount joined left root\n");
    for (uint32_t i = 0; i < n; i++) {
        const group *g = &m->g[s[i]];
        char gid[40];
        nf_gid_format(&g->mgid, gid);
        fprintf(table, "0x%04X %s %s %" PRIu32 " %" PRIu32 " %" PRIu32, g->mlid, gid,
                nf_mcg_state_name(g->state), g->member_count, g->joined, g->left);
        if (g->routed)
            fprintf(table, " 0x%016" PRIx64 "\n", m->f->guid[g->tree.root]);
        else
            fputs(" -\n", table);
    }
    nf__free(s);
    return ferror(table) ? NF_EIO : NF_OK;
}

/* The port GUID of member k (port 1 of its CA: any port of it maps back to the CA). */
static uint64_t member_guid(const nf_mcgm *m, const group *g, uint32_t k) {
    return m->f->port_guid[nf_port_index(m->f, g->member[k], 1)];
}

/* ---- journal: snapshot and replay ----------------------------------------------------------- */

int nf_mcgm_snapshot(const nf_mcgm *m, int (*emit)(void *ud, const uint8_t *rec, uint32_t len),
                     void *ud) {
    uint8_t r[1 + 4 + 4 + 8];
    r[0] = REC_FABRIC;
    put32(r + 1, m->f->n_nodes);
    put32(r + 5, m->f->n_links);
    put64(r + 9, fabric_hash(m->f));
    int rc = emit(ud, r, sizeof r);
    uint32_t n;
    uint32_t *s = slots_by_mlid(m, &n);
    if (!s) return rc ? rc : NF_ENOMEM;
    size_t most = 0; /* the largest tree record */
    for (uint32_t i = 0; i < n; i++)
        if (m->g[s[i]].routed && m->g[s[i]].tree.n_links > most) most = m->g[s[i]].tree.n_links;
    uint8_t *t = nf__malloc(27 + 4 * most);
    if (!t) rc = rc ? rc : NF_ENOMEM;
    for (uint32_t i = 0; i < n && !rc; i++) {
        const group *g = &m->g[s[i]];
        if (g->state == NF_MCG_DESTROYING) continue; /* gone after a restart */
        uint8_t b[SIMPLE_REC_MAX];
        rc = emit(ud, b, (uint32_t)simple_rec(b, REC_CREATE, g, 0));
        for (uint32_t k = 0; k < n_members(g) && !rc; k++)
            rc = emit(ud, b, (uint32_t)simple_rec(b, REC_JOIN, g, member_guid(m, g, k)));
        if (!rc && g->routed) rc = emit(ud, t, (uint32_t)tree_rec(g, t));
        for (uint32_t k = 0; k < n_members(g) && !rc; k++)
            if (g->has_left[k])
                rc = emit(ud, b, (uint32_t)simple_rec(b, REC_LEAVE, g, member_guid(m, g, k)));
    }
    nf__free(t);
    nf__free(s);
    return rc;
}

/* Replay applies the effects without the checks a live request needs (the records were checked
 * when they were written) but refuses anything that does not fit this fabric. */
int nf_mcgm_replay(nf_mcgm *m, const uint8_t *r, uint32_t len) {
    if (len < 1) return NF_EPARSE;
    if (r[0] == REC_FABRIC) {
        if (len != 17) return NF_EPARSE;
        if (get32(r + 1) != m->f->n_nodes || get32(r + 5) != m->f->n_links ||
            get64(r + 9) != fabric_hash(m->f))
            return NF_EINVAL;
        return NF_OK;
    }
    if (len < 17 || r[0] > REC_DESTROY) return NF_EPARSE;
    nf_gid mgid;
    memcpy(mgid.raw, r + 1, 16);
    uint32_t s = find_slot(m, &mgid);
    if (r[0] == REC_CREATE) {
        if (len != 23 && len != 31) return NF_EPARSE;
        if (s != NO_SLOT) return NF_EINVAL;
        uint32_t count = get32(r + 19);
        if (count == 0 || count > NF_MEMBER_COUNT_MAX) return NF_EINVAL;
        uint16_t mlid = get16(r + 17);
        if (!mlid_claim(m, mlid)) return NF_EINVAL;
        int rc = new_slot(m, &mgid, &s);
        if (rc) {
            mlid_give(m, mlid);
            return rc;
        }
        m->g[s].mlid = mlid;
        m->g[s].member_count = count;
        m->g[s].owner = len == 31 ? get64(r + 23) : 0;
        m->g[s].state = NF_MCG_RECEIVING_JOIN;
        if (owner_add(m, &m->g[s])) {
            m->g[s].owner = 0;
            drop_slot(m, s);
            return NF_ENOMEM;
        }
        return NF_OK;
    }
    if (s == NO_SLOT) return NF_EINVAL;
    group *g = &m->g[s];
    if (r[0] == REC_DESTROY) {
        if (len != 17) return NF_EPARSE;
        drop_slot(m, s);
        return NF_OK;
    }
    if (r[0] == REC_JOIN || r[0] == REC_LEAVE) {
        if (len != 25) return NF_EPARSE;
        nf_node ca = port_ca(m, get64(r + 17));
        if (ca == NF_NONE) return NF_EINVAL;
        uint32_t idx;
        bool known = nf__u64map_get(&m->members, (uint64_t)g->gen << 32 | ca, &idx);
        if (r[0] == REC_JOIN) {
            if (known || g->state != NF_MCG_RECEIVING_JOIN || g->joined >= g->member_count)
                return NF_EINVAL;
            return add_member(m, s, ca);
        }
        if (!known || g->has_left[idx]) return NF_EINVAL;
        if (g->state == NF_MCG_RECEIVING_JOIN) {
            remove_member(m, s, idx);
        } else {
            g->has_left[idx] = 1;
            g->joined--;
            g->left++;
            g->state = NF_MCG_RECEIVING_LEAVE;
        }
        return NF_OK;
    }
    /* REC_TREE */
    if (len < 27) return NF_EPARSE;
    uint32_t nl = get32(r + 23);
    if (len != 27 + 4 * (uint64_t)nl) return NF_EPARSE;
    nf_mcast_tree t = {.root = get32(r + 18), .height = r[22], .n_links = nl};
    t.links = nf__malloc(((size_t)nl + 1) * sizeof *t.links);
    if (!t.links) return NF_ENOMEM;
    for (uint32_t i = 0; i < nl; i++)
        t.links[i] = get32(r + 27 + 4 * (size_t)i);
    bool was_routed = g->routed;
    if (g->routed) nf_mcast_live_remove(m->live, &g->tree);
    g->routed = false;
    int rc = nf_mcast_live_adopt(m->live, &t);
    if (rc) {
        nf_mcast_tree_clear(&t);
        if (was_routed) {
            nf_mcast_live_adopt(m->live, &g->tree);
            g->routed = true;
        }
        return rc;
    }
    nf_mcast_tree_clear(&g->tree);
    g->tree = t;
    g->routed = true;
    if (r[17] && g->state == NF_MCG_RECEIVING_JOIN) {
        g->state = NF_MCG_READY;
        owner_settled(m, g);
    }
    return NF_OK;
}

int nf_mcgm_replay_done(nf_mcgm *m, uint64_t now) {
    for (uint32_t s = 0; s < m->n_slots; s++) {
        group *g = &m->g[s];
        if (g->state == NF_MCG_RECEIVING_JOIN) {
            set_deadline(m, s, now + m->o.join_timeout_ms);
            /* the last join was logged, its routes were not: route now (logged) */
            if (g->joined == g->member_count) complete(m, s, now, true);
        } else if (g->state == NF_MCG_RECEIVING_LEAVE) {
            set_deadline(m, s, now + m->o.leave_timeout_ms);
        }
    }
    return NF_OK;
}
