/* SPDX-License-Identifier: MIT */
/* Deterministic pseudo-random numbers for workloads and simulation: xoshiro256** seeded through
 * splitmix64, unbiased bounded draws (Lemire's multiply-shift with rejection) and Fisher-Yates
 * shuffles. Pure 64-bit integer arithmetic: the same seed gives the same stream on every platform.
 */
#ifndef NF_UTIL_RNG_H
#define NF_UTIL_RNG_H

#include <stddef.h>
#include <stdint.h>

/* xoshiro256** state; never all zero (seeding guarantees it). Copy it to fork a stream. */
typedef struct nf__rng {
    uint64_t s[4];
} nf__rng;

/* splitmix64: advances *x by the golden-ratio increment and returns the mixed value. */
uint64_t nf__splitmix64(uint64_t *x);

/* Seeds the four state words with the first four splitmix64 outputs from seed. */
void nf__rng_seed(nf__rng *r, uint64_t seed);

/* The next 64 random bits. */
uint64_t nf__rng_next(nf__rng *r);

/* A uniform integer in [0, n); n >= 1. Exact: no modulo bias. */
uint32_t nf__rng_below(nf__rng *r, uint32_t n);

/* Partial Fisher-Yates, front to back: afterwards a[0..k) is a uniformly random ordered selection
 * of k of the n elements (k <= n) and a[0..n) is still a permutation of its input. With k = n it
 * is a full shuffle; the first k positions are the same as a full shuffle's would be. n < 2^32. */
void nf__rng_sample_u32(nf__rng *r, uint32_t *a, size_t n, size_t k);
static inline void nf__rng_shuffle_u32(nf__rng *r, uint32_t *a, size_t n) {
    nf__rng_sample_u32(r, a, n, n);
}

#endif
