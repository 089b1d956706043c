/* SPDX-License-Identifier: MIT */
/* Open-addressing hash map, u64 -> u32 (u64map.h). */
#include "util/u64map.h"

#include "netfab/core.h"
#include "util/mem.h"

#include <string.h>

uint64_t
nf__hash64(uint64_t x) { /* the splitmix64 finaliser: every input bit moves every output bit */
    x ^= x >> 30;
    x *= 0xbf58476d1ce4e5b9ULL;
    x ^= x >> 27;
    x *= 0x94d049bb133111ebULL;
    return x ^ (x >> 31);
}

uint64_t nf__hash16(const uint8_t b[16]) {
    uint64_t hi = 0, lo = 0;
    for (int i = 0; i < 8; i++) {
        hi = hi << 8 | b[i];
        lo = lo << 8 | b[8 + i];
    }
    return nf__hash64(hi ^ nf__hash64(lo));
}

void nf__u64map_init(nf__u64map *m) { memset(m, 0, sizeof *m); }

void nf__u64map_fini(nf__u64map *m) {
    nf__free(m->key);
    nf__free(m->val);
    nf__free(m->used);
    memset(m, 0, sizeof *m);
}

static size_t slot_of(const nf__u64map *m, uint64_t key) {
    return (size_t)nf__hash64(key) & (m->cap - 1);
}

bool nf__u64map_get(const nf__u64map *m, uint64_t key, uint32_t *val) {
    if (!m->cap) return false;
    for (size_t i = slot_of(m, key);; i = (i + 1) & (m->cap - 1)) {
        if (!m->used[i]) return false;
        if (m->key[i] == key) {
            if (val) *val = m->val[i];
            return true;
        }
    }
}

static int rehash(nf__u64map *m, size_t cap) {
    nf__u64map t = {.cap = cap};
    t.key = nf__malloc(cap * sizeof *t.key);
    t.val = nf__malloc(cap * sizeof *t.val);
    t.used = nf__calloc(cap, 1);
    if (!t.key || !t.val || !t.used) {
        nf__u64map_fini(&t);
        return NF_ENOMEM;
    }
    for (size_t i = 0; i < m->cap; i++) {
        if (!m->used[i]) continue;
        size_t j = slot_of(&t, m->key[i]);
        while (t.used[j])
            j = (j + 1) & (cap - 1);
        t.used[j] = 1;
        t.key[j] = m->key[i];
        t.val[j] = m->val[i];
    }
    t.n = m->n;
    nf__u64map_fini(m);
    *m = t;
    return NF_OK;
}

int nf__u64map_put(nf__u64map *m, uint64_t key, uint32_t val) {
    if (2 * (m->n + 1) > m->cap) {
        int rc = rehash(m, m->cap ? 2 * m->cap : 16);
        if (rc) return rc;
    }
    size_t i = slot_of(m, key);
    while (m->used[i] && m->key[i] != key)
        i = (i + 1) & (m->cap - 1);
    if (!m->used[i]) {
        m->used[i] = 1;
        m->key[i] = key;
        m->n++;
    }
    m->val[i] = val;
    return NF_OK;
}

/* Backward shift: after emptying slot i, pull later entries of the probe run back into the hole
 * when their home slot does not lie cyclically in (hole, their slot], so that every entry stays
 * reachable from its home without tombstones. */
bool nf__u64map_del(nf__u64map *m, uint64_t key) {
    if (!m->cap) return false;
    size_t mask = m->cap - 1, i = slot_of(m, key);
    while (m->used[i] && m->key[i] != key)
        i = (i + 1) & mask;
    if (!m->used[i]) return false;
    size_t hole = i;
    for (size_t j = (hole + 1) & mask; m->used[j]; j = (j + 1) & mask) {
        size_t home = slot_of(m, m->key[j]);
        bool stays = hole <= j ? (home > hole && home <= j) : (home > hole || home <= j);
        if (stays) continue;
        m->key[hole] = m->key[j];
        m->val[hole] = m->val[j];
        hole = j;
    }
    m->used[hole] = 0;
    m->n--;
    return true;
}
