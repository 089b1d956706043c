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
 *   sa:PATH              the groups a subnet manager's SA holds (nf_groups_load_sa; its MLIDs
 *                        and warnings dropped here; ppn, mapping and seed do not apply)
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

/* The multicast groups of an InfiniBand SA, from the text of `saquery -m --smkey 1`
 * (MCMemberRecord blocks: Mlid, PortGid, ScopeState) or OpenSM's opensm-sa.dump ("MC Group
 * 0x<mlid> ..." lines, each followed by one "mcm_port: port_gid=..." line per member), told apart
 * line by line (docs/real-tools.md). One group per MLID, ascending (records of several MGIDs on
 * one MLID are one group, as OpenSM routes them); every join state (full, non-member, send-only)
 * makes a member, as OpenSM counts them. A member is the CA whose cabled port 1 has the record's
 * port GUID (the GID's low 64 bits), or whose node GUID + 1 is that GUID (ibsim numbers a CA's
 * port GUIDs node GUID + port), or else the switch whose GUID it is (a switch joins by its port
 * 0, whose GUID is the switch's). MLIDs without a member in the fabric (IPoIB's well-known 0xC000
 * under OpenSM) are left out. filename is used in messages only.
 *
 * Returns 0, the groups in *out (free with nf_groups_free) and their MLIDs in a new array *mlids
 * (n entries, ascending; free with nf_free). Fatal, as NF_EPARSE with "file:line: what" in diag:
 * a malformed record or line of either layout, an MLID outside 0xC000-0xFFFE, a record with an
 * all-zero PortGid (saquery without the SM key hides the members: the message says to use
 * --smkey 1). Counted as one warning (warn, optional) with the first line: members whose port
 * GUID neither a cabled CA port nor a switch of f has (skipped). NF_EINVAL (diag) when no group has a member in f;
 * the input limits of the fabric readers (NF_IO_MAX_LINE, NF_IO_MAX_BYTES, no NUL). */
NF_API int nf_groups_parse_sa(const nf_fabric *f, const char *text, size_t len,
                              const char *filename, nf_warn_fn warn, void *warn_ud, nf_groups **out,
                              uint16_t **mlids, nf_diag *diag);

/* Reads path and parses it as nf_groups_parse_sa; NF_EIO (reason in diag) when it cannot be
 * read. */
NF_API int nf_groups_load_sa(const nf_fabric *f, const char *path, nf_warn_fn warn, void *warn_ud,
                             nf_groups **out, uint16_t **mlids, nf_diag *diag);

#endif
