/* SPDX-License-Identifier: MIT */
/* Multicast workloads: groups of member endpoints built from communicator patterns (2D and 3D
 * process grids, random groups, hierarchical communicators, a file), with ranks laid on endpoints
 * consecutively (topology-aware) or shuffled (topology-unaware). */
#ifndef NETFAB_GROUPS_H
#define NETFAB_GROUPS_H

#include "core.h"
#include "fabric.h"

/* The groups of a workload in CSR form: the members of group g are the CA nodes
 * member[off[g] .. off[g+1]), distinct and in ascending order. Ranks sharing an endpoint count
 * once. Every member is a CA with its port 1 cabled to a switch. */
typedef struct nf_groups {
    uint32_t n;      /* number of groups */
    uint32_t *off;   /* n + 1 offsets */
    nf_node *member; /* off[n] member CA ids */
} nf_groups;

typedef enum nf_mapping {
    NF_MAP_AWARE = 0, /* rank r on endpoint r / procs_per_node, endpoints in CA id order */
    NF_MAP_RANDOM = 1 /* the rank slots shuffled with the seed */
} nf_mapping;

typedef struct nf_workload_opts {
    unsigned procs_per_node; /* ranks per endpoint, >= 1 (0 means 1) */
    nf_mapping mapping;
    uint64_t seed;
} nf_workload_opts;

/* Builds the groups named by spec on fabric f.
 *
 * Endpoints are the CAs whose port 1 is cabled to a switch, in CA id order; other CAs are
 * skipped. With E endpoints and ppn = procs_per_node there are E * ppn rank slots (at most 2^31),
 * slot s living on endpoint s / ppn. NF_MAP_AWARE puts rank r on slot r; NF_MAP_RANDOM on slot
 * P[r], P a permutation of all the slots drawn with the seed (Fisher-Yates, front to back), so
 * ranks still fill distinct slots.
 *
 *   grid2d:RxC           ranks 0..R*C-1 in an R x C grid, row-major; the R rows (ranks
 *                        r*C .. r*C+C-1) in order, then the C columns
 *   grid3d:XxYxZ         rank (x,y,z) = (x*Y + y)*Z + z; the lines along Z for every (x,y) in
 *                        x-major order, then along Y for every (x,z), then along X for every
 *                        (y,z): X*Y + X*Z + Y*Z groups
 *   random:n=G,size=S    G groups of S distinct ranks each, drawn uniformly (with the seed) from
 *                        all E * ppn ranks
 *   hier:n=N,s=A.B...    N ranks; level 1: consecutive groups of A ranks (the last may be
 *                        shorter); level 2: their leaders (first rank of each) in consecutive
 *                        groups of B; ... (1 to 16 levels); last: one group of the remaining
 *                        leaders. Levels after the first, and the last group, are made only
 *                        while more than one leader remains.
 *   file:PATH            one group per line of decimal ranks separated by white space; '#'
 *                        starts a comment; lines left empty are skipped; a rank may repeat
 * Dimensions, n, size and the hier sizes are decimal numbers from 1 to 10^9, and every rank used
 * must have a slot (ranks <= E * ppn). Groups come in the order above; a group's members are the
 * distinct endpoints of its ranks, ascending; groups that collapse to one endpoint are kept (a
 * group of one member). The random pattern and the random mapping draw from two independent
 * streams of the seed: the same seed gives the same groups of ranks under either mapping, and the
 * same result on every platform. opts may be NULL (ppn 1, aware, seed 0).
 *
 * Returns 0 and a new nf_groups in *out (free with nf_groups_free); otherwise *out is NULL and
 * diag (optional) says why: NF_EINVAL for a bad spec or a workload that does not fit, NF_EPARSE
 * with file:line for a bad file, NF_EIO for an unreadable one, NF_ENOMEM. */
NF_API int nf_groups_build(const nf_fabric *f, const char *spec, const nf_workload_opts *opts,
                           nf_groups **out, nf_diag *diag);
NF_API void nf_groups_free(nf_groups *g); /* NULL is a no-op */

#endif
