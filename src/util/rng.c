/* SPDX-License-Identifier: MIT */
/* xoshiro256** (Blackman and Vigna) seeded through splitmix64, with Lemire's bounded draws and
 * Fisher-Yates selection; the reference for every random choice the library makes. */
#include "util/rng.h"

#include <assert.h>

uint64_t nf__splitmix64(uint64_t *x) {
    uint64_t z = (*x += 0x9e3779b97f4a7c15u);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
    return z ^ (z >> 31);
}

void nf__rng_seed(nf__rng *r, uint64_t seed) {
    /* splitmix64 is a bijection of its counter, so four consecutive outputs are never all zero */
    for (int i = 0; i < 4; i++)
        r->s[i] = nf__splitmix64(&seed);
}

static inline uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

uint64_t nf__rng_next(nf__rng *r) {
    uint64_t *s = r->s;
    uint64_t out = rotl(s[1] * 5, 7) * 9;
    uint64_t t = s[1] << 17;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = rotl(s[3], 45);
    return out;
}

/* Lemire's method: x * n / 2^32 for a uniform 32-bit x maps onto [0, n); the low word of the
 * product tells which x fall in the 2^32 mod n overrepresented slots, and exactly those are
 * redrawn (the threshold 2^32 mod n is only computed when a low word is below n). */
uint32_t nf__rng_below(nf__rng *r, uint32_t n) {
    assert(n > 0);
    uint64_t m = (nf__rng_next(r) >> 32) * (uint64_t)n;
    uint32_t lo = (uint32_t)m;
    if (lo < n) {
        uint32_t t = (UINT32_MAX - n + 1) % n; /* 2^32 mod n */
        while (lo < t) {
            m = (nf__rng_next(r) >> 32) * (uint64_t)n;
            lo = (uint32_t)m;
        }
    }
    return (uint32_t)(m >> 32);
}

void nf__rng_sample_u32(nf__rng *r, uint32_t *a, size_t n, size_t k) {
    assert(k <= n && n <= UINT32_MAX);
    for (size_t i = 0; i < k && i + 1 < n; i++) {
        size_t j = i + nf__rng_below(r, (uint32_t)(n - i));
        uint32_t t = a[i];
        a[i] = a[j];
        a[j] = t;
    }
}
