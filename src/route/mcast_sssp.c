/* SPDX-License-Identifier: MIT */
/* SSSP-MC as the multicast paper defines it: after the root is chosen (sssp: as MINIHOP-MC;
 * sssp-new: the least-loaded candidate), a single-source shortest-path tree from the root over
 * every switch, each link weighted by a base weight large enough that fewer hops always win plus
 * the number of groups already on the link; the tree is then pruned to the members' switches.
 * Unlike OpenSM's dfsssp, which never adds multicast trees to its weights, every routed group
 * counts here. */
#include "route/mcast_engine.h"

/* The search itself is nf__mc_light_tree over the whole fabric: breadth-first by hop layers, each
 * switch keeping its cheapest parent, which is Dijkstra's result for weights base + load without a
 * heap. It explores every switch for every group: that is SSSP-MC. */
static int sssp_tree(void *ctx, const nf__mc_view *v, const nf_node *leaf, uint32_t n, nf_node root,
                     nf_link *links, uint32_t *n_links) {
    (void)ctx;
    int32_t k = nf__mc_light_tree(v, leaf, n, root, UINT32_MAX, false, links);
    if (k < 0) return NF_EUNREACHABLE;
    *n_links = (uint32_t)k;
    return NF_OK;
}

const nf_mcast_engine nf__mc_sssp = {
    .name = "sssp",
    .summary = "SSSP-MC of the multicast paper: shortest-path tree weighted by groups per link",
    .root = nf__mc_root_opensm,
    .tree = sssp_tree,
};

const nf_mcast_engine nf__mc_sssp_new = {
    .name = "sssp-new",
    .summary = "SSSP-MC with root rotation: the least-loaded least-max-hop root",
    .root = nf__mc_root_rotate,
    .tree = sssp_tree,
};
