/* SPDX-License-Identifier: MIT */
/* Min-hop information in compact form: all-pairs switch-to-switch distances, one byte each,
 * computed by breadth-first search from every switch in parallel over links that are up.
 * With the fabric's port table this answers OpenSM's hops[lid][port] question in O(1). */
#ifndef NETFAB_HOPS_H
#define NETFAB_HOPS_H

#include "core.h"
#include "fabric.h"

#define NF_HOPS_INF 255 /* unreachable */

typedef struct nf_hops {
    uint32_t n;       /* switches */
    uint8_t *d;       /* n*n distances, row s holds distances from switch s */
    uint8_t diameter; /* largest distance, when connected */
    bool connected;   /* every pair of switches reachable */
} nf_hops;

/* Computes all-pairs switch distances over up links. threads <= 0 uses OpenMP's default.
 * NF_ERANGE if some distance would exceed 254. The caller frees with nf_hops_free. */
NF_API int nf_hops_compute(const nf_fabric *f, int threads, nf_hops **out);
NF_API void nf_hops_free(nf_hops *h);

static inline uint8_t nf_hops_sw(const nf_hops *h, nf_node s, nf_node t) {
    return h->d[(size_t)s * h->n + t];
}

/* Row s: the distances from switch s to every switch (n bytes, indexed by switch). The row may
 * live inside h, or be written into buf (n bytes, the caller's) and buf returned: a caller that
 * holds several rows at once passes a buffer of its own for each. */
static inline const uint8_t *nf_hops_row(const nf_hops *h, nf_node s, uint8_t *buf) {
    (void)buf;
    return h->d + (size_t)s * h->n;
}

/* Links from switch s, leaving through port p, to port cp of CA ca: 1 when p is cabled to that
 * CA port itself, else 1 + (distance from p's peer switch to the CA port's switch) + 1.
 * NF_HOPS_INF when p is down or unconnected, leads to a CA (other than the target), or the target
 * is unreachable. O(1). */
NF_API uint8_t nf_hops_via(const nf_fabric *f, const nf_hops *h, nf_node s, unsigned p, nf_node ca,
                           unsigned cp);

/* Min over the ports of s of nf_hops_via (OpenSM's column 0): the links from s to the CA port,
 * 1 + distance from s to the CA port's switch. O(1). */
NF_API uint8_t nf_hops_to_ca(const nf_fabric *f, const nf_hops *h, nf_node s, nf_node ca,
                             unsigned cp);

/* Largest finite switch-to-switch distance, and whether every pair is reachable. */
NF_API uint8_t nf_hops_diameter(const nf_hops *h, int *connected);

#endif
