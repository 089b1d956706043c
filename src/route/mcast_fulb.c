/* FULB-MC (seed 000): root rotation, then bottom-up link rotation: from each member's switch walk
 * towards the root, at every hop taking among the links on a shortest path to the root the one
 * with the fewest groups, and stop as soon as the walk meets the tree. On a Dragonfly the walk
 * first prefers the hops that keep the fewest global links to the root. fulb+ adds a refinement
 * pass that moves groups off the most loaded links while keeping every tree of minimal height. */
#include "route/mcast_engine.h"
#include "util/mem.h"

#include <string.h>

typedef struct fulb_ctx {
    uint64_t *gkey; /* per switch: (global links << 32 | bottleneck) of its best path to the root */
    uint32_t *gseen; /* stamp for gkey */
    uint32_t gstamp;
} fulb_ctx;

static void fulb_fini(void *ctx) {
    fulb_ctx *c = ctx;
    nf__free(c->gkey);
    nf__free(c->gseen);
    nf__free(c);
}

static int fulb_init(void **out, const nf_fabric *f, const nf_hops *h) {
    (void)h;
    size_t S = (size_t)f->n_switches + 1;
    fulb_ctx *c = nf__calloc(1, sizeof *c);
    if (!c) return NF_ENOMEM;
    c->gkey = nf__malloc(S * sizeof *c->gkey);
    c->gseen = nf__calloc(S, sizeof *c->gseen);
    if (!c->gkey || !c->gseen) {
        fulb_fini(c);
        return NF_ENOMEM;
    }
    *out = c;
    return NF_OK;
}

/* The Dragonfly rule with a look-ahead. Among the shortest paths from u to the root (whose
 * distances are dr), the key of a path is (number of global links, then the load of its most
 * loaded link); path_key(u) is the least key, computed by memoised recursion over the hops that get
 * one closer to the root: at most the distance deep (3 on a Dragonfly), each switch once per group.
 * The loads do not change while a group is routed, so the memo holds for the whole group. */
static uint64_t step_key(fulb_ctx *c, const nf__mc_view *v, const uint8_t *dr, nf_node w,
                         nf_link l);

static uint64_t path_key(fulb_ctx *c, const nf__mc_view *v, const uint8_t *dr, nf_node u) {
    if (dr[u] == 0) return 0;
    if (c->gseen[u] == c->gstamp) return c->gkey[u];
    const nf_fabric *f = v->f;
    uint64_t best = UINT64_MAX;
    for (uint32_t e = f->sw_adj_off[u]; e < f->sw_adj_off[u + 1]; e++) {
        nf_node w = f->sw_adj[e];
        nf_link l = f->sw_adj_link[e];
        if (dr[w] + 1 != dr[u] || f->link_state[l] != NF_LINK_UP) continue;
        uint64_t k = step_key(c, v, dr, w, l);
        if (k < best) best = k;
    }
    c->gseen[u] = c->gstamp;
    c->gkey[u] = best;
    return best;
}

/* The key of the best path that leaves through link l to w. */
static uint64_t step_key(fulb_ctx *c, const nf__mc_view *v, const uint8_t *dr, nf_node w,
                         nf_link l) {
    uint64_t kw = path_key(c, v, dr, w);
    uint64_t g = (kw >> 32) + (v->f->link_cls[l] == NF_LINK_GLOBAL);
    uint32_t bn = (uint32_t)kw > v->efi[l] ? (uint32_t)kw : v->efi[l];
    return g << 32 | bn;
}

/* The bottom-up walk. Every switch joins the tree through the link chosen when the walk first
 * reached it, and a walk stops at the first switch already in the tree, so each switch has one
 * parent: the links form a tree, and each leaf's path is a shortest path to the root, so its
 * height is minimal. Choice at switch u: among up links to a switch one hop closer to the root,
 * on a Dragonfly first the least path key (fewest global links to the root, then the least loaded
 * bottleneck), then the fewest groups on the link, then the lowest port. */
static int fulb_tree(void *ctx, const nf__mc_view *v, const nf_node *leaf, uint32_t n, nf_node root,
                     nf_link *links, uint32_t *n_links) {
    fulb_ctx *c = ctx;
    const nf_fabric *f = v->f;
    const uint8_t *dr = v->h->d + (size_t)root * v->h->n;
    if (v->has_global && ++c->gstamp == 0) {
        memset(c->gseen, 0, (size_t)f->n_switches * sizeof *c->gseen);
        c->gstamp = 1;
    }
    uint32_t stamp = nf__mc_new_stamp(v);
    uint32_t *mark = v->scr->stamp;
    mark[root] = stamp;
    *n_links = 0;
    for (uint32_t i = 0; i < n; i++) {
        nf_node u = leaf[i];
        if (dr[u] == NF_HOPS_INF) return NF_EUNREACHABLE;
        while (mark[u] != stamp) {
            mark[u] = stamp;
            nf_link best = NF_NONE;
            nf_node next = NF_NONE;
            uint64_t best_g = UINT64_MAX;
            unsigned best_load = UINT32_MAX;
            for (uint32_t e = f->sw_adj_off[u]; e < f->sw_adj_off[u + 1]; e++) {
                nf_node w = f->sw_adj[e];
                nf_link l = f->sw_adj_link[e];
                if (dr[w] + 1 != dr[u] || f->link_state[l] != NF_LINK_UP) continue;
                uint64_t g = v->has_global ? step_key(c, v, dr, w, l) : 0;
                if (g < best_g || (g == best_g && v->efi[l] < best_load)) {
                    best_g = g;
                    best_load = v->efi[l];
                    best = l;
                    next = w;
                }
            }
            if (best == NF_NONE) return NF_EUNREACHABLE;
            links[(*n_links)++] = best;
            u = next;
        }
    }
    return NF_OK;
}

const nf_mcast_engine nf__mc_fulb = {
    .name = "fulb",
    .summary = "FULB-MC: root rotation, bottom-up least-loaded shortest paths, path reuse",
    .init = fulb_init,
    .root = nf__mc_root_rotate,
    .tree = fulb_tree,
    .fini = fulb_fini,
};

/* ---- fulb+: refinement --------------------------------------------------------------------- */

static bool is_host(const nf_fabric *f, nf_link l) {
    return f->link_a[l] >= f->n_switches || f->link_z[l] >= f->n_switches;
}

/* Up to want candidates to try as roots: the group's current root first, then the least-loaded
 * others (loads as routing left them), ties to the lower id. */
enum { REFINE_ROOTS = 8 };
static uint32_t pick_roots(const nf__mc_view *v, nf_node current, uint32_t nc, nf_node *out) {
    const nf_node *cand = v->scr->cand;
    uint32_t k = 0;
    out[k++] = current;
    while (k < REFINE_ROOTS) {
        nf_node best = NF_NONE;
        for (uint32_t i = 0; i < nc; i++) {
            nf_node x = cand[i];
            bool taken = false;
            for (uint32_t j = 0; j < k && !taken; j++)
                taken = out[j] == x;
            if (!taken && (best == NF_NONE || v->sw_load[x] < v->sw_load[best])) best = x;
        }
        if (best == NF_NONE) break;
        out[k++] = best;
    }
    return k;
}

/* The refinement. Let M be the largest load of an inter-switch link. For every group that uses a
 * link at M, take the group out of the loads and look, over its current root and a few of the
 * least-loaded other root candidates (all give the same minimal height), for a tree that keeps
 * every link below M; if one exists, move the group
 * there. Every move lowers the number of links at M by at least one and raises none to M, so M
 * falls once they are all cleared; the pass repeats until a whole round moves nothing (then no
 * single-group move can lower M) or M is 1. Trees that moved are kept aside and the tree table
 * is rebuilt at the end. */
static int fulb_refine(void *ctx, const nf__mc_view *v, const nf_groups *g, nf_mcast *m) {
    (void)ctx;
    const nf_fabric *f = v->f;
    uint32_t *efi = m->efi;
    uint32_t S = f->n_switches, G = m->n_groups;
    nf_link **moved = nf__calloc((size_t)G + 1, sizeof *moved);
    uint32_t *moved_n = nf__calloc((size_t)G + 1, sizeof *moved_n);
    nf_node *leaf = nf__malloc(((size_t)S + 1) * sizeof *leaf);
    nf_link *buf = nf__malloc(((size_t)S + 1) * sizeof *buf);
    int rc = NF_ENOMEM;
    if (!moved || !moved_n || !leaf || !buf) goto done;

    for (;;) {
        uint32_t M = 0, hot = 0;
        for (nf_link l = 0; l < f->n_links; l++)
            if (!is_host(f, l)) {
                if (efi[l] > M) M = efi[l], hot = 0;
                if (efi[l] == M) hot++;
            }
        if (M <= 1) break;
        bool progress = false;
        for (uint32_t k = 0; k < G && hot > 0; k++) {
            if (m->status[k] != NF_OK) continue;
            const nf_link *tl = moved[k] ? moved[k] : m->tree_link + m->tree_off[k];
            uint32_t tn = moved[k] ? moved_n[k] : m->tree_off[k + 1] - m->tree_off[k];
            bool uses_hot = false;
            for (uint32_t i = 0; i < tn && !uses_hot; i++)
                uses_hot = !is_host(f, tl[i]) && efi[tl[i]] == M;
            if (!uses_hot) continue;
            uint32_t nl = nf__mc_group_leaves(f, g, k, leaf, NULL);
            uint32_t hot_here = 0;
            for (uint32_t i = 0; i < tn; i++)
                if (!is_host(f, tl[i])) hot_here += efi[tl[i]]-- == M;
            unsigned r;
            uint32_t nc = nf__mc_candidates(v, leaf, nl, &r);
            nf_node roots[REFINE_ROOTS];
            uint32_t nr = nc ? pick_roots(v, m->root[k], nc, roots) : 0;
            int32_t found = -1;
            nf_node root = NF_NONE;
            for (uint32_t ci = 0; ci < nr && found < 0; ci++) {
                root = roots[ci];
                found = nf__mc_light_tree(v, leaf, nl, root, M, true, buf);
            }
            if (found < 0) {
                for (uint32_t i = 0; i < tn; i++)
                    if (!is_host(f, tl[i])) efi[tl[i]]++;
                continue;
            }
            /* keep the host links, replace the switch links */
            uint32_t n_host = 0;
            for (uint32_t i = 0; i < tn; i++)
                n_host += is_host(f, tl[i]);
            nf_link *nt = nf__malloc(((size_t)found + n_host + 1) * sizeof *nt);
            if (!nt) goto done;
            uint32_t w = 0;
            for (int32_t i = 0; i < found; i++) {
                nt[w++] = buf[i];
                efi[buf[i]]++;
            }
            for (uint32_t i = 0; i < tn; i++)
                if (is_host(f, tl[i])) nt[w++] = tl[i];
            nf__free(moved[k]);
            moved[k] = nt;
            moved_n[k] = w;
            m->root[k] = root;
            hot -= hot_here;
            progress = true;
        }
        if (!progress) break;
    }
    /* rebuild the tree table with the moved trees */
    size_t total = 0;
    for (uint32_t k = 0; k < G; k++)
        total += moved[k] ? moved_n[k] : m->tree_off[k + 1] - m->tree_off[k];
    nf_link *all = nf__malloc((total + 1) * sizeof *all);
    if (!all) goto done;
    size_t w = 0;
    for (uint32_t k = 0; k < G; k++) {
        const nf_link *tl = moved[k] ? moved[k] : m->tree_link + m->tree_off[k];
        uint32_t tn = moved[k] ? moved_n[k] : m->tree_off[k + 1] - m->tree_off[k];
        m->tree_off[k] = (uint32_t)w;
        memcpy(all + w, tl, tn * sizeof *all);
        w += tn;
    }
    m->tree_off[G] = (uint32_t)w;
    nf__free(m->tree_link);
    m->tree_link = all;
    rc = NF_OK;
done:
    if (moved)
        for (uint32_t k = 0; k < G; k++)
            nf__free(moved[k]);
    nf__free(moved);
    nf__free(moved_n);
    nf__free(leaf);
    nf__free(buf);
    return rc;
}

const nf_mcast_engine nf__mc_fulb_plus = {
    .name = "fulb+",
    .summary = "FULB-MC, then moves groups off the most loaded links while heights stay minimal",
    .init = fulb_init,
    .root = nf__mc_root_rotate,
    .tree = fulb_tree,
    .refine = fulb_refine,
    .fini = fulb_fini,
};
