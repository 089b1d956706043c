/* SPDX-License-Identifier: MIT */
/* Internal allocation helpers: every library allocation goes through the hook set with
 * nf_set_allocator, so tests can fail the k-th allocation. */
#ifndef NF_UTIL_MEM_H
#define NF_UTIL_MEM_H

#include <stddef.h>
#include <stdint.h>

void *nf__malloc(size_t n);
void *nf__calloc(size_t count, size_t size);
void *nf__realloc(void *p, size_t n);
void nf__free(void *p);
char *nf__strdup(const char *s);
char *nf__strndup(const char *s, size_t n);

/* Grows *arr (elements of elem bytes, capacity *cap) to hold at least need elements, doubling.
 * Returns 0 or NF_ENOMEM (the array is unchanged then). */
int nf__grow(void **arr, size_t *cap, size_t need, size_t elem);
#define NF_GROW(arr, cap, need) nf__grow((void **)&(arr), &(cap), (need), sizeof(*(arr)))

#endif
