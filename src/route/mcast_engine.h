/* SPDX-License-Identifier: MIT */
/* Internal: what a multicast engine is, what it sees, and the helpers engines share (root
 * candidates, the switch each member hangs off). One file per engine family implements these. */
#ifndef NF_ROUTE_MCAST_ENGINE_H
#define NF_ROUTE_MCAST_ENGINE_H

#include "netfab/mcast.h"

#include <stdbool.h>

/* Scratch owned by the routing driver, sized for the fabric; engines borrow it per call. */
typedef struct nf__mc_scratch {
    uint32_t *stamp; /* per switch: pass stamp for de-duplication */
    uint32_t stamp_now;
    nf_node *layer, *next_layer; /* search queue; leaf order */
    uint32_t *next_off;          /* counting-sort buckets */
    nf_node *cand;               /* root candidates */
    nf_node *work;               /* a copy of a group's leaves an engine may reorder */
    uint64_t *key;               /* per leaf sort keys */
    /* the layered shortest-path search of nf__mc_light_tree */
    uint64_t *cost;
    nf_link *parent;
    uint32_t *seen;
    uint32_t seen_now;
    uint8_t *row[3]; /* S bytes each: distance rows nf_hops_row may write (see its callers) */
} nf__mc_scratch;

/* Allocates the scratch for a fabric of S switches and groups of up to max_leaves distinct member
 * switches; NF_ENOMEM. fini frees it. */
int nf__mc_scratch_init(nf__mc_scratch *s, uint32_t S, uint32_t max_leaves);
void nf__mc_scratch_fini(nf__mc_scratch *s);

/* The state of the fabric as the next group sees it. */
typedef struct nf__mc_view {
    const nf_fabric *f;
    const nf_hops *h;
    const uint32_t *efi;     /* per link: groups routed over it so far */
    const uint32_t *sw_load; /* per switch: groups rooted there + tree links at its ports */
    bool has_global;         /* the fabric has Dragonfly global links */
    unsigned ca_port;        /* the port CA members join by (nf_mcast.ca_port) */
    nf__mc_scratch *scr;
} nf__mc_view;

/* An engine. root() picks the root switch of a group whose members hang off the n distinct
 * switches leaf[0..n) (ascending); tree() adds the switch-to-switch links of a minimal-height tree
 * from root to every leaf to links (room for n_switches - 1) and sets *n_links. refine() is
 * optional: a pass over all routed groups after the last one (fulb+). */
struct nf_mcast_engine {
    const char *name;
    const char *summary;
    int (*init)(void **ctx, const nf_fabric *f, const nf_hops *h);
    int (*root)(void *ctx, const nf__mc_view *v, const nf_node *leaf, uint32_t n, nf_node *root);
    int (*tree)(void *ctx, const nf__mc_view *v, const nf_node *leaf, uint32_t n, nf_node root,
                nf_link *links, uint32_t *n_links);
    int (*refine)(void *ctx, const nf__mc_view *v, const nf_groups *g, nf_mcast *m);
    void (*fini)(void *ctx);
    /* A group of fewer than two distinct members gets an empty tree (no links, height 0, no
     * load), its root being its member's switch: what OpenSM (3.3.7 on) installs for it. */
    bool single_empty;
};

/* The switches at the least max distance from the leaves (the root candidates of every engine),
 * found from the leaves outwards: balls of radius 0, 1, 2, ... grow around every leaf, and the
 * first radius at which some switch lies in all of them gives the candidates, in ascending id
 * order, in v->scr->cand. Touches only the balls, never every switch. Returns the number of
 * candidates and the radius in *radius; 0 when the leaves are not all connected. */
uint32_t nf__mc_candidates(const nf__mc_view *v, const nf_node *leaf, uint32_t n, unsigned *radius);

/* The switch member CA ca hangs off (the peer of its port `port`, 1 or 2, over an up link), or
 * NF_NONE; its host link in *host_link. A switch member is its own (no host link). */
nf_node nf__mc_member_switch(const nf_fabric *f, nf_node ca, unsigned port, nf_link *host_link);

/* The lightest minimal-height tree from root to the leaves: among shortest paths from the root,
 * each switch takes the parent link that minimises the sum of loads (v->efi) along its path, as
 * Dijkstra with weights (large base + load) would, and the tree is the union of the leaves' paths.
 * Links whose load is limit - 1 or more are not used (UINT32_MAX: no limit). With dag_only the
 * search stays inside the switches that lie on some shortest path from a leaf to the root (found
 * first by walking up from the leaves), so its cost follows the group; otherwise it explores every
 * switch reachable from the root. Writes the switch links to links (room for n_switches - 1) and
 * returns their number, or -1 when some leaf cannot be reached. */
int32_t nf__mc_light_tree(const nf__mc_view *v, const nf_node *leaf, uint32_t n, nf_node root,
                          uint32_t limit, bool dag_only, nf_link *links);

/* mx[u] = max over the leaves of d(leaf, u) for every switch u, from the leaves' rows of the
 * distance matrix read in order (vectorised), or on a torus (nf_hops_torus) from coordinates, the
 * leaves being ascending there (buf, S bytes, is then overwritten); returns the least of them
 * (NF_HOPS_INF when no switch reaches every leaf). */
uint8_t nf__mc_max_rows(const nf_hops *h, const nf_node *leaf, uint32_t n, uint8_t *mx,
                        uint8_t *buf);

/* Row s of the distances, as nf_hops_row gives it; on a torus (nf_hops_torus) computed from the
 * coordinates into buf (S bytes) instead, which costs less than reading the row from memory. */
const uint8_t *nf__mc_row(const nf_hops *h, nf_node s, uint8_t *buf);

/* The distinct switches the members of group k hang off by their port `port`, ascending, into
 * leaf (room for the group's size); returns their number. *all_cabled (optional) is false when
 * some member has no up link to a switch there (that member is left out). */
uint32_t nf__mc_group_leaves(const nf_fabric *f, const nf_groups *g, uint32_t k, unsigned port,
                             nf_node *leaf, bool *all_cabled);

/* The same for any list of member CAs (any order, duplicates allowed). */
uint32_t nf__mc_member_leaves(const nf_fabric *f, const nf_node *member, uint32_t count,
                              unsigned port, nf_node *leaf, bool *all_cabled);

/* A fresh value for scr->stamp marks: every switch counts as unmarked afterwards. */
uint32_t nf__mc_new_stamp(const nf__mc_view *v);

/* OpenSM keeps its switches in a map keyed by the GUID in network byte order, compared as a
 * native integer: on the little-endian machines it runs on, the order of the byte-swapped GUID
 * (docs/opensm-mcast.md). This is that order's key. */
static inline uint64_t nf__mc_opensm_key(uint64_t guid) { return __builtin_bswap64(guid); }

/* Every switch of f in OpenSM's order: the switches by rank into order (optional, S entries) and
 * each switch's rank into rank (S entries). NF_OK or NF_ENOMEM. */
int nf__mc_opensm_order(const nf_fabric *f, nf_node *order, uint32_t *rank);

/* Root choices shared by the engines, usable as nf_mcast_engine.root: among the candidates,
 * the first in OpenSM's switch order (MINIHOP-MC, SSSP-MC), or the least-loaded (sw_load), ties
 * to OpenSM's order (root rotation: the -new engines and FULB-MC).
 * NF_EUNREACHABLE when the members are not all connected. */
int nf__mc_root_opensm(void *ctx, const nf__mc_view *v, const nf_node *leaf, uint32_t n,
                       nf_node *root);
int nf__mc_root_rotate(void *ctx, const nf__mc_view *v, const nf_node *leaf, uint32_t n,
                       nf_node *root);

extern const nf_mcast_engine nf__mc_minihop, nf__mc_minihop_new, nf__mc_minihop_new_high,
    nf__mc_sssp, nf__mc_sssp_new, nf__mc_fulb_paper, nf__mc_fulb_paper_look,
    nf__mc_fulb_paper_global, nf__mc_fulb_paper_trials, nf__mc_fulb, nf__mc_fulb_plus;

#endif
