/* SPDX-License-Identifier: MIT */
/* Multicast routing: engines that give every group a minimal-height tree rooted at a switch,
 * link loads (EFI: the number of groups whose tree uses a link), statistics, an independent
 * verifier, and OpenSM-format exports. */
#ifndef NETFAB_MCAST_H
#define NETFAB_MCAST_H

#include "core.h"
#include "fabric.h"
#include "groups.h"
#include "hops.h"

#include <stdio.h>

typedef struct nf_mcast_engine nf_mcast_engine;

/* The engines, by name: "minihop", "minihop-new", "minihop-new-high", "sssp", "sssp-new",
 * "fulb-paper", "fulb-paper+lookahead", "fulb-paper+global", "fulb-paper+trials", "fulb",
 * "fulb+".
 * NULL for an unknown name. */
NF_API const nf_mcast_engine *nf_mcast_engine_find(const char *name);
NF_API size_t nf_mcast_engine_count(void);
NF_API const nf_mcast_engine *nf_mcast_engine_at(size_t i);
NF_API const char *nf_mcast_engine_name(const nf_mcast_engine *e);
NF_API const char *nf_mcast_engine_summary(const nf_mcast_engine *e);

/* The routed state of a set of groups. Group g has root switch root[g] and its tree is the set
 * of links tree_link[tree_off[g] .. tree_off[g+1]): switch-to-switch links and the host link of
 * every member. A member may be a switch itself (its port 0, as InfiniBand allows): it has no
 * host link; the tree reaches its switch, whose port 0 the forwarding tables then set, and the
 * height counts its switch's distance alone (a CA member's host link counts one more), as the
 * tables' analysis does (nf_mft). The root is still a switch at the least max distance from the
 * members' switches, so with switch members the height may be one more than the least. Group g's
 * switch members are sw_member[sw_member_off[g] .. sw_member_off[g+1]), ascending; both are
 * NULL when no group has one. Under minihop, a group of one member gets an empty tree (no links,
 * height 0), as OpenSM installs nothing for it; root[g] is then its member's switch. A group that
 * cannot be routed (a member unreachable from every switch that reaches the others, a member with
 * no cabled port) has status[g] < 0, root NF_NONE and an empty tree; the other groups are routed
 * regardless. */
typedef struct nf_mcast {
    uint32_t n_groups;
    nf_node *root;
    uint8_t *height; /* links from the root switch to the farthest member endpoint */
    int32_t *status; /* 0, or a negative NF_E* code for a group that could not be routed */
    uint32_t *tree_off;
    nf_link *tree_link;
    uint32_t *sw_member_off; /* NULL when no member is a switch */
    nf_node *sw_member;
    uint32_t *efi;   /* per link: groups whose tree uses it */
    double root_s;   /* time spent choosing roots */
    double tree_s;   /* time spent building trees */
    double refine_s; /* time spent in a refinement pass (fulb+) */
    uint8_t ca_port; /* the port every CA member joins by: 1, or 2 (nf_mcast_route_port) */
} nf_mcast;

/* Routes every group of g in order with engine e; loads start at zero. Routing is sequential by
 * nature: each group sees the loads of those before it.
 * Returns 0 (even when some groups failed: see status), NF_ENOMEM, or NF_EINVAL. */
NF_API int nf_mcast_route(const nf_fabric *f, const nf_hops *h, const nf_groups *g,
                          const nf_mcast_engine *e, nf_mcast **out, nf_diag *diag);
/* The same, telling progress(ud, frac) how far it is (the share of groups routed, every 64
 * groups) when progress is given. */
NF_API int nf_mcast_route_progress(const nf_fabric *f, const nf_hops *h, const nf_groups *g,
                                   const nf_mcast_engine *e,
                                   void (*progress)(void *ud, double frac), void *ud,
                                   nf_mcast **out, nf_diag *diag);
/* The same with every CA member joining by its port ca_port (1 or 2) instead of port 1: an
 * InfiniBand port joins a group, and a dual-rail node's second rail is its port 2 (a switch
 * member is still its port 0). The trees of the groups on that rail, with their own loads: on a
 * dual-rail fabric whose rails are apart, port 1's and port 2's trees share no switch. A member
 * without an up link at that port fails its group (status). NF_EINVAL for another port. */
NF_API int nf_mcast_route_port(const nf_fabric *f, const nf_hops *h, const nf_groups *g,
                               const nf_mcast_engine *e, unsigned ca_port, nf_mcast **out,
                               nf_diag *diag);
NF_API void nf_mcast_free(nf_mcast *m);

typedef struct nf_mcast_stats {
    uint32_t groups, routed, failed;
    uint32_t empty; /* routed groups with an empty tree (one member under minihop) */
    uint64_t memberships;
    uint32_t max_efi;      /* over inter-switch links */
    double mean_efi;       /* over inter-switch links that carry at least one group */
    uint32_t links_used;   /* inter-switch links that carry at least one group */
    uint32_t max_efi_host; /* the same over host (endpoint) links */
    double mean_efi_host;
    uint32_t max_height;
    double mean_height; /* over routed groups with a non-empty tree */
} nf_mcast_stats;
NF_API void nf_mcast_stats_compute(const nf_fabric *f, const nf_groups *g, const nf_mcast *m,
                                   nf_mcast_stats *out);

/* A lower bound on the max EFI of inter-switch links that any routing of g must reach, with
 * trees of any height: the larger of (a) over every switch s, the groups with a member on s and a
 * member elsewhere, divided by s's inter-switch links, rounded up (each such tree uses one of
 * them), and (b) the sum over groups of max(k - 1, r) (a tree over k member switches has at least
 * k - 1 links and reaches r hops), divided by the number of inter-switch links, rounded up.
 * 0 on allocation failure. */
NF_API uint32_t nf_mcast_lower_bound(const nf_fabric *f, const nf_hops *h, const nf_groups *g);

/* Recounts everything from the forwarding tables (the per-switch port masks the trees imply),
 * independently of how they were built: from each routed group's root, following the masks
 * reaches every member exactly once, the tree has no cycle and no switch outside it forwards
 * the group, its height equals the least possible (1 + the least max distance from a switch to
 * the members' switches), the recorded height is right, and the EFI recount equals m->efi.
 * Returns 0 or NF_EINVAL with the first problem in diag. */
NF_API int nf_mcast_verify(const nf_fabric *f, const nf_hops *h, const nf_groups *g,
                           const nf_mcast *m, nf_diag *diag);

/* ---- live routing: groups come and go one at a time (the group manager) ------------------- */

/* One group's tree: root switch, height (as in nf_mcast), and its links: the switch-to-switch
 * links, then the host link of every member. links is owned by the tree. */
typedef struct nf_mcast_tree {
    nf_node root;
    uint8_t height;
    uint32_t n_links;
    nf_link *links;
} nf_mcast_tree;
NF_API void nf_mcast_tree_clear(nf_mcast_tree *t); /* frees links, zeroes t */

/* Link and switch loads kept exact while trees are added and taken out in any order. */
typedef struct nf_mcast_live nf_mcast_live;

/* A live state over fabric f (f and h must outlive it), loads at zero. Engines with a
 * refinement pass (fulb+) are refused with NF_EINVAL: a refinement moves groups already routed,
 * which a live manager must not do behind its members' backs. */
NF_API int nf_mcast_live_new(const nf_fabric *f, const nf_hops *h, const nf_mcast_engine *e,
                             nf_mcast_live **out);
NF_API void nf_mcast_live_free(nf_mcast_live *lv);

/* Routes a group over the members members[0..n) (CAs, or switches by their port 0; any order,
 * duplicates count once) with the current loads, adds it to them and returns its tree in *out
 * (a switch member has no link of its own; its port 0 is the caller's to set). NF_EINVAL (n ==
 * 0, a member that is no node of f), NF_EUNREACHABLE (a CA without a cabled port 1, or members
 * in different parts of a cut fabric), NF_ENOMEM; on failure the loads are unchanged and *out is
 * empty. */
NF_API int nf_mcast_live_add(nf_mcast_live *lv, const nf_node *members, uint32_t n,
                             nf_mcast_tree *out);

/* Adds a tree known from before (a journal replay) to the loads as it is. NF_EINVAL when its
 * root is no switch or a link id is out of range. */
NF_API int nf_mcast_live_adopt(nf_mcast_live *lv, const nf_mcast_tree *t);

/* Takes a tree that was added (or adopted) out of the loads. */
NF_API void nf_mcast_live_remove(nf_mcast_live *lv, const nf_mcast_tree *t);

/* Per link: the groups whose tree uses it now. */
NF_API const uint32_t *nf_mcast_live_efi(const nf_mcast_live *lv);

/* First MLID; group g gets MLID NF_MLID_BASE + g. */
#define NF_MLID_BASE 0xC000u
#define NF_MLID_MAX 0xFFFEu

/* Writes every switch's multicast forwarding table in the layout of OpenSM's opensm.mcfdbs dump.
 * Returns 0, NF_ERANGE when there are more groups than MLIDs, NF_EIO on a write error. */
NF_API int nf_mcast_write_mft(const nf_fabric *f, const nf_mcast *m, FILE *out);

/* The same with group g's MLID given by mlid[g] (distinct, ascending or not). */
NF_API int nf_mcast_write_mft_mlids(const nf_fabric *f, const nf_mcast *m, const uint16_t *mlid,
                                    FILE *out);

/* One line per group: its MLID in hex, then the port GUID of every member in hex. */
NF_API int nf_mcast_write_groups(const nf_fabric *f, const nf_groups *g, FILE *out);

/* The same with group g's MLID given by mlid[g] (NULL: NF_MLID_BASE + g). */
NF_API int nf_mcast_write_groups_mlids(const nf_fabric *f, const nf_groups *g, const uint16_t *mlid,
                                       FILE *out);

#endif
