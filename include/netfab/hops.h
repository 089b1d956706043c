/* SPDX-License-Identifier: MIT */
/* Min-hop information in compact form: all-pairs switch-to-switch distances, one byte each,
 * computed by breadth-first search from every switch in parallel over links that are up.
 * With the fabric's port table this answers OpenSM's hops[lid][port] question in O(1).
 * A fabric too large for an S x S matrix gets a representation whose memory grows with S
 * instead (kind below), behind the same queries. */
#ifndef NETFAB_HOPS_H
#define NETFAB_HOPS_H

#include "core.h"
#include "fabric.h"

#define NF_HOPS_INF 255 /* unreachable */

/* How the distances are held. DENSE: the n x n matrix d. TORUS: a generated torus whose links were
 * all found up and in place (nf_fabric's torus geometry), distances from coordinates. ROWS: any
 * other fabric, rows computed by breadth-first search on demand and kept in a bounded cache. */
typedef enum nf_hops_kind { NF_HOPS_DENSE = 0, NF_HOPS_TORUS = 1, NF_HOPS_ROWS = 2 } nf_hops_kind;

/* Options for nf_hops_compute_ex; zero-initialise for the defaults. */
typedef struct nf_hops_opts {
    uint32_t dense_max; /* largest switch count kept as a dense matrix; 0 = NF_HOPS_DENSE_MAX */
    bool force_sparse;  /* never dense: the torus form when it applies, else ROWS (for tests) */
    bool no_torus;      /* never the torus form (for tests) */
    size_t cache_bytes; /* ROWS: memory for cached rows; 0 = NF_HOPS_CACHE_BYTES */
    uint32_t exact_diam_max; /* ROWS: exact diameter up to this many switches, else bounds;
                                0 = NF_HOPS_EXACT_DIAM_MAX */
} nf_hops_opts;
#define NF_HOPS_DENSE_MAX 32768u         /* a 1 GiB matrix */
#define NF_HOPS_CACHE_BYTES (256u << 20) /* 256 MiB of cached rows */
#define NF_HOPS_EXACT_DIAM_MAX 65536u
struct nf__hops_big; /* the TORUS and ROWS state, private to hops.c */

typedef struct nf_hops {
    uint32_t n;       /* switches */
    uint8_t *d;       /* n*n distances, row s holds distances from switch s; NULL unless DENSE */
    uint8_t diameter; /* largest distance, when connected; an upper bound unless diameter_exact */
    bool connected;   /* every pair of switches reachable */
    uint8_t kind;     /* nf_hops_kind */
    bool diameter_exact;      /* diameter is exact (always, except for a large ROWS fabric) */
    uint8_t diameter_lo;      /* a lower bound of the diameter (equal to it when exact) */
    struct nf__hops_big *big; /* TORUS and ROWS state */
} nf_hops;

/* Computes all-pairs switch distances over up links. threads <= 0 uses OpenMP's default.
 * NF_ERANGE if some distance would exceed 254. The caller frees with nf_hops_free. */
NF_API int nf_hops_compute(const nf_fabric *f, int threads, nf_hops **out);
NF_API void nf_hops_free(nf_hops *h);

/* nf_hops_compute with options (o may be NULL). Up to o->dense_max switches: the dense matrix.
 * Above: the torus form when the fabric carries a torus geometry its links match (all up), else
 * ROWS. For a ROWS fabric, connectivity comes from one search; the diameter is exact up to
 * o->exact_diam_max switches (one bit-parallel sweep, no matrix), beyond that diameter_lo and
 * diameter are the lower and upper bounds of a few eccentricities (diameter_exact false), and
 * NF_ERANGE when that upper bound exceeds 254. The h refers to f's link states at this call; it
 * does not follow later changes. Queries on h are thread-safe. */
NF_API int nf_hops_compute_ex(const nf_fabric *f, int threads, const nf_hops_opts *o,
                              nf_hops **out);
/* Heap bytes h holds now (the matrix, coordinates, or cached rows). */
NF_API size_t nf_hops_bytes(const nf_hops *h);
/* The distance from s to t when h is not dense (nf_hops_sw's slow path). */
NF_API uint8_t nf_hops_sw_far(const nf_hops *h, nf_node s, nf_node t);
/* Writes row s into buf when h is not dense (nf_hops_row's slow path); returns buf. */
NF_API const uint8_t *nf_hops_row_far(const nf_hops *h, nf_node s, uint8_t *buf);

static inline uint8_t nf_hops_sw(const nf_hops *h, nf_node s, nf_node t) {
    if (h->d) /* the dense path first: one well-predicted test */
        return h->d[(size_t)s * h->n + t];
    return nf_hops_sw_far(h, s, t);
}

/* Row s: the distances from switch s to every switch (n bytes, indexed by switch). The row may
 * live inside h, or be written into buf (n bytes, the caller's, never NULL) and buf returned: a
 * caller that holds several rows at once passes a buffer of its own for each. */
static inline const uint8_t *nf_hops_row(const nf_hops *h, nf_node s, uint8_t *buf) {
    if (h->d) /* the dense path first: one well-predicted test */
        return h->d + (size_t)s * h->n;
    return nf_hops_row_far(h, s, buf);
}

/* The torus h's distances follow: when h was computed (without o->no_torus) for a fabric that
 * carries a torus geometry (nf_fabric's torus_nd, torus_dims) whose ring links were all found up
 * and in place, and nothing else between switches, writes its dimensions into dims (room for
 * NF_FABRIC_TORUS_MAX_D) and returns their number; 0 otherwise. Switch s then sits at the
 * row-major coordinates of s (last dimension fastest), and the distance between two switches is
 * the sum over dimensions of the distance along each ring, whatever h's kind. */
NF_API unsigned nf_hops_torus(const nf_hops *h, uint32_t *dims);

/* Distance along a ring of D switches between positions x and y. */
static inline unsigned nf_hops_ring(unsigned x, unsigned y, unsigned D) {
    unsigned r = x > y ? x - y : y - x;
    return r < D - r ? r : D - r;
}

/* The torus distances over dimensions lo..nd-1 (sizes dims[lo..nd-1]) from position pos (an index
 * over those dimensions, row-major, last dimension fastest) to every such position, into out
 * (their product of bytes). With lo = 0 and nf_hops_torus's dims, pos is a switch and out its
 * row. */
NF_API void nf_hops_torus_row(const uint32_t *dims, unsigned lo, unsigned nd, uint32_t pos,
                              uint8_t *out);

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

/* The connected components of the distances: label[s] (n entries, the caller's) is the
 * smallest switch of s's component, so two switches are reachable from each other exactly when
 * their labels are equal. O(n) when h->connected, O(n x components) for a dense h, O(n + links)
 * otherwise. */
NF_API void nf_hops_components(const nf_hops *h, uint32_t *label);

/* Largest finite switch-to-switch distance, and whether every pair is reachable. */
NF_API uint8_t nf_hops_diameter(const nf_hops *h, int *connected);

#endif
