/* SPDX-License-Identifier: MIT */
/* MINIHOP-MC, OpenSM's multicast routing (docs/opensm-mcast.md): the root is a switch with the
 * least max hop distance to the members (minihop: the first such switch in OpenSM's switch order;
 * minihop-new: the least-loaded such switch), then the tree grows top-down, the members at each
 * switch split by the lowest-numbered port that lies on a shortest path towards their switch
 * (minihop-new-high: the highest-numbered). */
#include "route/mcast_engine.h"

#include <assert.h>
#include <stdlib.h>

/* The lowest-numbered (with high, the highest-numbered) port of switch s whose link is up and
 * leads to a switch one hop closer to switch t, or 0 when there is none. The CSR lists a
 * switch's neighbours in port order. */
static unsigned min_hop_port(const nf_fabric *f, const nf_hops *h, nf_node s, nf_node t,
                             bool high) {
    uint8_t want = (uint8_t)(nf_hops_sw(h, s, t) - 1);
    unsigned found = 0;
    for (uint32_t e = f->sw_adj_off[s]; e < f->sw_adj_off[s + 1]; e++)
        if (nf_hops_sw(h, f->sw_adj[e], t) == want &&
            f->link_state[f->sw_adj_link[e]] == NF_LINK_UP) {
            found = f->sw_adj_port[e];
            if (!high) break;
        }
    return found;
}

static int cmp_u64(const void *a, const void *b) {
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* Top-down branching from switch s, which is in the tree at its shortest distance from the root,
 * towards leaf[0..n). Each leaf other than s gets the key (port << 32 | leaf); sorting the keys
 * groups the leaves by port, and each run recurses into that port's peer. The child's recursion
 * reuses the run's slots of leaf[] and key[], which the parent no longer reads.
 * No switch is reached twice, so the union of the branches is a tree: if the paths to leaves l1
 * and l2 parted at a switch u (into neighbours a and b) and met again at x, then a would lie on a
 * shortest path from u to l2 and b on one to l1, so the lowest (highest) such port of u would be
 * the same for both leaves, a contradiction. The assert states it. */
static int branch(const nf__mc_view *v, nf_node s, nf_node *leaf, uint64_t *key, uint32_t n,
                  uint32_t stamp, bool high, nf_link *links, uint32_t *n_links) {
    const nf_fabric *f = v->f;
    uint32_t m = 0;
    for (uint32_t i = 0; i < n; i++) {
        if (leaf[i] == s) continue; /* delivered here, through s's host ports */
        unsigned p = min_hop_port(f, v->h, s, leaf[i], high);
        if (!p) return NF_EUNREACHABLE;
        key[m++] = (uint64_t)p << 32 | leaf[i];
    }
    qsort(key, m, sizeof *key, cmp_u64);
    for (uint32_t i = 0; i < m; i++)
        leaf[i] = (nf_node)key[i];
    for (uint32_t a = 0; a < m;) {
        unsigned p = (unsigned)(key[a] >> 32);
        uint32_t b = a + 1;
        while (b < m && (unsigned)(key[b] >> 32) == p)
            b++;
        nf_gport g = nf_port_index(f, s, p);
        nf_node child = f->peer[g];
        assert(v->scr->stamp[child] != stamp);
        v->scr->stamp[child] = stamp;
        links[(*n_links)++] = f->port_link[g];
        int rc = branch(v, child, leaf + a, key + a, b - a, stamp, high, links, n_links);
        if (rc) return rc;
        a = b;
    }
    return NF_OK;
}

static int tree_from(const nf__mc_view *v, const nf_node *leaf, uint32_t n, nf_node root, bool high,
                     nf_link *links, uint32_t *n_links) {
    nf_node *work = v->scr->work;
    for (uint32_t i = 0; i < n; i++)
        work[i] = leaf[i];
    uint32_t stamp = nf__mc_new_stamp(v);
    v->scr->stamp[root] = stamp;
    *n_links = 0;
    return branch(v, root, work, v->scr->key, n, stamp, high, links, n_links);
}

static int minihop_tree(void *ctx, const nf__mc_view *v, const nf_node *leaf, uint32_t n,
                        nf_node root, nf_link *links, uint32_t *n_links) {
    (void)ctx;
    return tree_from(v, leaf, n, root, false, links, n_links);
}

static int minihop_high_tree(void *ctx, const nf__mc_view *v, const nf_node *leaf, uint32_t n,
                             nf_node root, nf_link *links, uint32_t *n_links) {
    (void)ctx;
    return tree_from(v, leaf, n, root, true, links, n_links);
}

const nf_mcast_engine nf__mc_minihop = {
    .name = "minihop",
    .summary = "OpenSM's MINIHOP-MC: first least-max-hop root, top-down lowest min-hop port",
    .root = nf__mc_root_opensm,
    .tree = minihop_tree,
    .single_empty = true,
};

const nf_mcast_engine nf__mc_minihop_new = {
    .name = "minihop-new",
    .summary = "MINIHOP-MC with root rotation: the least-loaded least-max-hop root",
    .root = nf__mc_root_rotate,
    .tree = minihop_tree,
};

/* The variant the multicast paper discusses (its Dragonfly section): MINIHOP-MC-new preferring
 * the highest-numbered port, which in the paper's example (its Figure 6) takes the way with two
 * global links where the lowest port takes the one with one. */
const nf_mcast_engine nf__mc_minihop_new_high = {
    .name = "minihop-new-high",
    .summary = "MINIHOP-MC-new taking the highest-numbered min-hop port",
    .root = nf__mc_root_rotate,
    .tree = minihop_high_tree,
};
