/* SPDX-License-Identifier: MIT */
/* Ordering ids by a key (sort.h): (key, id) pairs sorted with a context-free comparator. */
#include "util/sort.h"

#include "netfab/core.h"
#include "util/mem.h"

#include <stdlib.h>

typedef struct keyed {
    uint64_t key;
    uint32_t id;
} keyed;

static int cmp_keyed(const void *a, const void *b) {
    const keyed *x = a, *y = b;
    if (x->key != y->key) return x->key < y->key ? -1 : 1;
    return x->id < y->id ? -1 : x->id > y->id;
}

int nf__sort_ids_by_key(uint32_t *ids, const uint64_t *key, size_t n) {
    keyed *p = nf__malloc((n + 1) * sizeof *p);
    if (!p) return NF_ENOMEM;
    for (size_t i = 0; i < n; i++)
        p[i] = (keyed){.key = key[i], .id = ids[i]};
    qsort(p, n, sizeof *p, cmp_keyed);
    for (size_t i = 0; i < n; i++)
        ids[i] = p[i].id;
    nf__free(p);
    return NF_OK;
}
