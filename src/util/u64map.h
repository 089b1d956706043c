/* SPDX-License-Identifier: MIT */
/* A hash map from 64-bit keys to 32-bit values: open addressing, linear probing, deletion by
 * backward shift (no tombstones), capacity a power of two kept at most half full. The group
 * manager's tables (groups by MGID hash, memberships) live in these. */
#ifndef NF_UTIL_U64MAP_H
#define NF_UTIL_U64MAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct nf__u64map {
    uint64_t *key;
    uint32_t *val;
    uint8_t *used;
    size_t cap, n; /* cap: 0 or a power of two */
} nf__u64map;

void nf__u64map_init(nf__u64map *m); /* empty, no allocation */
void nf__u64map_fini(nf__u64map *m);
/* The value of key in *val; false when absent. */
bool nf__u64map_get(const nf__u64map *m, uint64_t key, uint32_t *val);
/* Sets key to val (inserting or replacing). 0 or NF_ENOMEM (the map is unchanged then). */
int nf__u64map_put(nf__u64map *m, uint64_t key, uint32_t val);
/* Removes key; false when it was absent. */
bool nf__u64map_del(nf__u64map *m, uint64_t key);

/* A 64-bit mix of 16 bytes (for 128-bit GIDs), and of one 64-bit value. */
uint64_t nf__hash16(const uint8_t b[16]);
uint64_t nf__hash64(uint64_t x);

#endif
