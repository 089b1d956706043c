/* SSSP-MC as seed 000 defines it: after the root is chosen (sssp: as MINIHOP-MC; sssp-new: the
 * least-loaded candidate), a single-source shortest-path tree from the root over every switch,
 * each link weighted by a base weight large enough that fewer hops always win plus the number of
 * groups already on the link; the tree is then pruned to the members' switches. Unlike OpenSM's
 * dfsssp, which never adds multicast trees to its weights, every routed group counts here. */
#include "route/mcast_engine.h"
#include "util/mem.h"

#include <string.h>

/* With weights base + efi and base above any sum of loads along a path, Dijkstra's order is
 * lexicographic: (hops, sum of loads). So the search runs breadth-first from the root, layer by
 * layer of hop distance, and within a layer every switch keeps the cheapest load sum over its
 * parents in the previous layer: when a layer is done its switches' costs are final, exactly as
 * Dijkstra would settle them, without a heap. Ties keep the first parent found (parents in BFS
 * order, then port order). The whole fabric is explored for every group: that is SSSP-MC. */
typedef struct sssp_ctx {
    uint64_t *cost;  /* load sum along the best shortest path from the root */
    nf_link *parent; /* link to the parent in the shortest-path tree */
    nf_node *queue;
    uint32_t *seen; /* stamp: reached in this search */
    uint32_t stamp;
} sssp_ctx;

static int sssp_init(void **out, const nf_fabric *f, const nf_hops *h) {
    (void)h;
    sssp_ctx *c = nf__calloc(1, sizeof *c);
    size_t S = (size_t)f->n_switches + 1;
    if (!c) return NF_ENOMEM;
    c->cost = nf__malloc(S * sizeof *c->cost);
    c->parent = nf__malloc(S * sizeof *c->parent);
    c->queue = nf__malloc(S * sizeof *c->queue);
    c->seen = nf__calloc(S, sizeof *c->seen);
    if (!c->cost || !c->parent || !c->queue || !c->seen) {
        nf__free(c->cost);
        nf__free(c->parent);
        nf__free(c->queue);
        nf__free(c->seen);
        nf__free(c);
        return NF_ENOMEM;
    }
    *out = c;
    return NF_OK;
}

static void sssp_fini(void *ctx) {
    sssp_ctx *c = ctx;
    nf__free(c->cost);
    nf__free(c->parent);
    nf__free(c->queue);
    nf__free(c->seen);
    nf__free(c);
}

static int sssp_tree(void *ctx, const nf__mc_view *v, const nf_node *leaf, uint32_t n, nf_node root,
                     nf_link *links, uint32_t *n_links) {
    sssp_ctx *c = ctx;
    const nf_fabric *f = v->f;
    if (++c->stamp == 0) {
        memset(c->seen, 0, (size_t)f->n_switches * sizeof *c->seen);
        c->stamp = 1;
    }
    const uint8_t *dr = v->h->d + (size_t)root * v->h->n;
    uint32_t head = 0, tail = 0;
    c->queue[tail++] = root;
    c->seen[root] = c->stamp;
    c->cost[root] = 0;
    c->parent[root] = NF_NONE;
    while (head < tail) {
        nf_node u = c->queue[head++];
        for (uint32_t e = f->sw_adj_off[u]; e < f->sw_adj_off[u + 1]; e++) {
            nf_node w = f->sw_adj[e];
            nf_link l = f->sw_adj_link[e];
            if (dr[w] != dr[u] + 1 || f->link_state[l] != NF_LINK_UP) continue;
            uint64_t cw = c->cost[u] + v->efi[l];
            if (c->seen[w] != c->stamp) {
                c->seen[w] = c->stamp;
                c->queue[tail++] = w;
            } else if (cw >= c->cost[w]) {
                continue;
            }
            c->cost[w] = cw;
            c->parent[w] = l;
        }
    }
    /* prune: walk each leaf up to the root or to a switch already taken */
    uint32_t stamp = nf__mc_new_stamp(v);
    uint32_t *mark = v->scr->stamp;
    mark[root] = stamp;
    *n_links = 0;
    for (uint32_t i = 0; i < n; i++) {
        nf_node u = leaf[i];
        if (c->seen[u] != c->stamp) return NF_EUNREACHABLE;
        while (mark[u] != stamp) {
            mark[u] = stamp;
            nf_link l = c->parent[u];
            links[(*n_links)++] = l;
            u = f->link_a[l] == u ? f->link_z[l] : f->link_a[l];
        }
    }
    return NF_OK;
}

const nf_mcast_engine nf__mc_sssp = {
    .name = "sssp",
    .summary = "SSSP-MC (seed 000): shortest-path tree weighted by the groups on each link",
    .init = sssp_init,
    .root = nf__mc_root_opensm,
    .tree = sssp_tree,
    .fini = sssp_fini,
};

const nf_mcast_engine nf__mc_sssp_new = {
    .name = "sssp-new",
    .summary = "SSSP-MC with root rotation: the least-loaded least-max-hop root",
    .init = sssp_init,
    .root = nf__mc_root_rotate,
    .tree = sssp_tree,
    .fini = sssp_fini,
};
