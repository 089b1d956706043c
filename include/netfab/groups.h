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

/* Builds the groups named by spec on fabric f:
 *   grid2d:RxC           ranks in an R x C grid (row-major); every row and every column a group
 *   grid3d:XxYxZ         every line along each of the three dimensions a group
 *   random:n=G,size=S    G groups of S distinct ranks drawn at random (with the seed) from all
 *                        endpoints * procs_per_node rank slots
 *   hier:n=N,s=A.B...    N ranks; level 1: consecutive groups of A ranks; level 2: their
 *                        leaders (first rank of each) in consecutive groups of B; ...; last: one
 *                        group of the remaining leaders (when more than one remains)
 *   file:PATH            one group per line, ranks as decimal numbers; '#' starts a comment
 * The ranks used must fit on the endpoints: ranks <= endpoints * procs_per_node. Groups whose
 * members collapse to one endpoint are kept (a group of one member). NF_EINVAL with diag for a
 * bad spec or a workload that does not fit; NF_EPARSE with file:line for a bad file. */
int nf_groups_build(const nf_fabric *f, const char *spec, const nf_workload_opts *opts,
                    nf_groups **out, nf_diag *diag);
void nf_groups_free(nf_groups *g);

#endif
