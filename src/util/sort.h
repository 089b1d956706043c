/* SPDX-License-Identifier: MIT */
/* Internal: ordering ids by a 64-bit key without a comparator context (C11's qsort has no user
 * pointer, and a file-static one makes the caller non-reentrant). */
#ifndef NF_UTIL_SORT_H
#define NF_UTIL_SORT_H

#include <stddef.h>
#include <stdint.h>

/* Sorts ids[0..n) by key[i] (the key of ids[i] on entry), ties by id, ascending. key is
 * scratch: its order afterwards is unspecified. NF_ENOMEM (ids untouched) or 0. */
int nf__sort_ids_by_key(uint32_t *ids, const uint64_t *key, size_t n);

#endif
