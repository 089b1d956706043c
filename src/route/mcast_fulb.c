/* SPDX-License-Identifier: MIT */
/* FULB-MC (the multicast paper): root rotation, then bottom-up link rotation: from each member's
 * switch walk towards the root, at every hop taking among the links on a shortest path to the root
 * the one with the fewest groups, and stop as soon as the walk meets the tree. That is fulb-paper,
 * the paper's algorithm as its text describes it. netfab's fulb adds three things, each of which
 * an engine of its own adds alone to fulb-paper: a look-ahead (the hop whose way on is least
 * loaded, fulb-paper+lookahead), on a Dragonfly the hops that keep the fewest global links to the
 * root first (fulb-paper+global), and on a Dragonfly root trials (fulb-paper+trials). fulb+ adds
 * to fulb a refinement pass that moves groups off the most loaded links while keeping every tree
 * of minimal height. */
#include "route/mcast_engine.h"
#include "util/mem.h"

#include <string.h>

/* A hop of a switch's down list: the link and the switch one closer to the root it leads to. */
typedef struct hop {
    nf_node w;
    nf_link l;
} hop;

/* What an engine of the family adds to the paper's algorithm (fulb_ctx.mode). */
enum {
    FULB_LOOK = 1,   /* the look-ahead: 2 hops, or with FULB_GLOBAL the whole path */
    FULB_GLOBAL = 2, /* on a Dragonfly, the fewest global links to the root first */
    FULB_TRIALS = 4, /* on a Dragonfly, the tree built from several roots, the best kept */
    FULB_ALL = FULB_LOOK | FULB_GLOBAL | FULB_TRIALS
};

typedef struct fulb_ctx {
    unsigned mode;   /* FULB_* */
    uint64_t *gkey;  /* per switch: the look-ahead key of its best way on (path_key) */
    uint32_t *gseen; /* stamp for gkey */
    uint32_t gstamp;
    uint32_t gwalk;        /* stamp of the entries that hold for a whole walk_tree call */
    uint8_t *tg;           /* per tree switch: global links on its tree path to the root */
    nf_node *path;         /* the switches of the current walk */
    nf_link *kept, *trial; /* Dragonfly root trials: the best tree so far, the one being tried */
    uint32_t kept_n;
    nf_node kept_root; /* root of the kept tree, NF_NONE when there is none */
    /* Down lists (down_hops) of the current walk_tree call: switch s's list is dl[dls[s].off ..
     * + dls[s].len) when dls[s].seen == dl_stamp; dl_near == dl_stamp once the lists of every
     * switch next to the root are made. */
    hop *dl;
    struct dl_at {
        uint32_t seen, off, len; /* together: one cache line per switch looked at */
    } * dls;
    uint32_t dl_stamp, dl_near, dl_n;
    /* per switch: its part of the fabric without global links (made on the first Dragonfly walk;
     * NULL before) */
    uint32_t *part;
} fulb_ctx;

static void fulb_fini(void *ctx) {
    fulb_ctx *c = ctx;
    nf__free(c->gkey);
    nf__free(c->gseen);
    nf__free(c->tg);
    nf__free(c->path);
    nf__free(c->kept);
    nf__free(c->trial);
    nf__free(c->dl);
    nf__free(c->dls);
    nf__free(c->part);
    nf__free(c);
}

static int fulb_init_mode(void **out, const nf_fabric *f, unsigned mode) {
    size_t S = (size_t)f->n_switches + 1;
    fulb_ctx *c = nf__calloc(1, sizeof *c);
    if (!c) return NF_ENOMEM;
    c->mode = mode;
    c->gkey = nf__malloc(S * sizeof *c->gkey);
    c->gseen = nf__calloc(S, sizeof *c->gseen);
    c->tg = nf__malloc(S * sizeof *c->tg);
    c->path = nf__malloc(S * sizeof *c->path);
    c->kept = nf__malloc(S * sizeof *c->kept);
    c->trial = nf__malloc(S * sizeof *c->trial);
    c->kept_root = NF_NONE;
    if (!c->gkey || !c->gseen || !c->tg || !c->path || !c->kept || !c->trial) {
        fulb_fini(c);
        return NF_ENOMEM;
    }
    *out = c;
    return NF_OK;
}

static int fulb_init(void **out, const nf_fabric *f, const nf_hops *h) {
    (void)h;
    return fulb_init_mode(out, f, FULB_ALL);
}

/* The look-ahead. At switch u the walk may take any up link to a switch one hop closer to the
 * root. The key of a way on from u is (global links on it, the load of its most loaded link,
 * links it adds to the tree), compared in that order. A way ends where it meets the tree (the root
 * is in it from the start), because from there on the walk adds nothing, or at the horizon: 2 hops
 * off the Dragonfly (from a fat-tree leaf: its up link and the link above it, the one a merge
 * would spare), the whole path on a Dragonfly (at most 3 hops there), where counting global links
 * needs all of it. Meeting the tree at w adds the global links of w's tree path, so a member's
 * whole path to the root has the fewest global links. path_key(u) is the least key over the ways
 * from u, by memoised recursion over the hops that get one closer to the root. The memo holds for
 * the walk of one leaf on a Dragonfly and for the whole tree elsewhere (walk_tree says why); within
 * it a switch's remaining depth is fixed by its distance to the root, so one entry per switch is
 * right. */
#define KEY_G(k) ((k) >> 48)
#define KEY_BN(k) ((uint32_t)((k) >> 16))
#define KEY_NEW(k) ((uint32_t)((k)&0xFFFF))
static inline uint64_t make_key(uint64_t g, uint64_t bn, uint64_t nl) {
    if (g > 0xFFFF) g = 0xFFFF;
    if (nl > 0xFFFF) nl = 0xFFFF;
    return g << 48 | bn << 16 | nl;
}

typedef struct walk {
    fulb_ctx *c;
    const nf__mc_view *v;
    const uint8_t *dr;
    const uint32_t *mark;
    nf_node root;
    uint32_t root_part; /* the root's part (fulb_ctx.part) */
    uint32_t tree;      /* mark value of the switches in the tree */
    unsigned horizon;   /* dr below which the look-ahead stops */
    uint32_t limit;     /* links whose load is limit - 1 or more are not used (UINT32_MAX: none) */
} walk;

/* The down lists, for the Dragonfly's whole-path look-ahead. Switch u's down list is the up links
 * of u to a switch one hop closer to the root, in u's port order (the adjacency's order): what the
 * walk and path_key would scan u's adjacency for. It depends on the root only, so it is made once
 * per walk_tree call and kept for the call: the look-ahead asks for a switch's hops from every
 * member whose ways pass it, and the walk asks again when it steps there. The switches next to the
 * root (a walk_tree call asks for about 14 of them on the paper Dragonfly, 26 links each) get their
 * lists from one pass over the root's adjacency instead (root_lists). */
static inline unsigned port_at(const nf_fabric *f, nf_link l, nf_node w) {
    return f->link_a[l] == w ? f->link_pa[l] : f->link_pz[l];
}

/* Makes the down lists of every switch at distance 1 from the root: each such switch x is a
 * neighbour of the root, and its list is its up links to the root, which the root's adjacency
 * holds. Placed by x's port, which orders them as x's adjacency does (parallel links). Two passes:
 * count, then place. */
static void root_lists(walk *k) {
    fulb_ctx *c = k->c;
    const nf_fabric *f = k->v->f;
    const uint8_t *dr = k->dr;
    uint32_t stamp = c->dl_stamp, e0 = f->sw_adj_off[k->root], e1 = f->sw_adj_off[k->root + 1];
    c->dl_near = stamp;
    for (uint32_t e = e0; e < e1; e++) {
        nf_node x = f->sw_adj[e];
        if (dr[x] != 1) continue;
        if (c->dls[x].seen != stamp) {
            c->dls[x].seen = stamp;
            c->dls[x].len = 0;
            c->dls[x].off = 0;
        }
        if (f->link_state[f->sw_adj_link[e]] == NF_LINK_UP && c->dls[x].len++ == 0)
            c->dls[x].off = UINT32_MAX; /* to be placed */
    }
    for (uint32_t e = e0; e < e1; e++) {
        nf_node x = f->sw_adj[e];
        nf_link l = f->sw_adj_link[e];
        if (dr[x] != 1 || f->link_state[l] != NF_LINK_UP) continue;
        if (c->dls[x].off == UINT32_MAX) {
            c->dls[x].off = c->dl_n;
            c->dl_n += c->dls[x].len;
            c->dls[x].len = 0;
        }
        hop *d = c->dl + c->dls[x].off;
        uint32_t j = c->dls[x].len++;
        unsigned p = port_at(f, l, x);
        for (; j > 0 && port_at(f, d[j - 1].l, x) > p; j--)
            d[j] = d[j - 1];
        d[j] = (hop){k->root, l};
    }
}

/* Switch u's down list (see above) and its length in *n. */
static const hop *down_hops(walk *k, nf_node u, uint32_t *n) {
    fulb_ctx *c = k->c;
    if (c->dls[u].seen != c->dl_stamp && k->dr[u] == 1 && c->dl_near != c->dl_stamp) root_lists(k);
    if (c->dls[u].seen != c->dl_stamp) {
        const nf_fabric *f = k->v->f;
        const uint8_t *dr = k->dr;
        const uint8_t *state = f->link_state;
        const nf_node *adj = f->sw_adj;
        const nf_link *adj_link = f->sw_adj_link;
        unsigned want = dr[u] - 1u;
        uint32_t m = c->dl_n, e1 = f->sw_adj_off[u + 1];
        hop *d = c->dl;
        for (uint32_t e = f->sw_adj_off[u]; e < e1; e++) {
            nf_node w = adj[e];
            if (dr[w] != want) continue;
            nf_link l = adj_link[e];
            if (state[l] == NF_LINK_UP) d[m++] = (hop){w, l};
        }
        c->dls[u].seen = c->dl_stamp;
        c->dls[u].off = c->dl_n;
        c->dls[u].len = m - c->dl_n;
        c->dl_n = m;
    }
    *n = c->dls[u].len;
    return c->dl + c->dls[u].off;
}

/* Forgets every down list (all switches' stamps are cleared when the stamp wraps). */
static void new_down_lists(fulb_ctx *c, uint32_t n_switches) {
    if (++c->dl_stamp == 0) {
        for (uint32_t i = 0; i < n_switches; i++)
            c->dls[i].seen = 0;
        c->dl_stamp = 1;
        c->dl_near = 0;
    }
    c->dl_n = 0;
}

/* What only the Dragonfly's walk uses, made on its first call: the down lists' room (each
 * switch's list is made at most once per walk_tree call and holds at most its adjacency, so all
 * fit in the adjacency's size) and the parts of the fabric without its global links: part[s] is
 * the same for two switches exactly when a path of other links (in any state) joins them, and a
 * path between two parts crosses a global link (breadth-first from each switch not yet placed;
 * path serves as the queue). NF_ENOMEM. */
static int dragonfly_init(fulb_ctx *c, const nf_fabric *f) {
    size_t S = (size_t)f->n_switches + 1;
    if (!c->dl) c->dl = nf__malloc(((size_t)f->sw_adj_off[f->n_switches] + 1) * sizeof *c->dl);
    if (!c->dls) c->dls = nf__calloc(S, sizeof *c->dls);
    uint32_t *part = nf__malloc(S * sizeof *part);
    if (!c->dl || !c->dls || !part) {
        nf__free(part);
        return NF_ENOMEM; /* the others are kept for the next try or fulb_fini */
    }
    for (nf_node s = 0; s < f->n_switches; s++)
        part[s] = UINT32_MAX;
    nf_node *q = c->path;
    for (nf_node s = 0; s < f->n_switches; s++) {
        if (part[s] != UINT32_MAX) continue;
        uint32_t head = 0, tail = 0;
        part[s] = s;
        q[tail++] = s;
        while (head < tail) {
            nf_node u = q[head++];
            for (uint32_t e = f->sw_adj_off[u]; e < f->sw_adj_off[u + 1]; e++) {
                nf_node w = f->sw_adj[e];
                if (part[w] != UINT32_MAX || f->link_cls[f->sw_adj_link[e]] == NF_LINK_GLOBAL)
                    continue;
                part[w] = s;
                q[tail++] = w;
            }
        }
    }
    c->part = part;
    return NF_OK;
}

/* Whether every way on through link l to w has more global links than best's key: then its key
 * is above best (the first part of a key is its global links), and the way need not be looked at.
 * A way into the tree at w has l's and w's tree path's global links; any other way from w to the
 * root has at least one when w and the root lie in different parts (dragonfly_init). */
static inline bool more_global(const walk *k, nf_node w, nf_link l, uint64_t best) {
    if (best == UINT64_MAX) return false;
    unsigned g = k->v->f->link_cls[l] == NF_LINK_GLOBAL;
    g += k->mark[w] == k->tree ? k->c->tg[w] : k->c->part[w] != k->root_part;
    return g > KEY_G(best);
}

static uint64_t step_key(walk *k, nf_node w, nf_link l);

static uint64_t path_key(walk *k, nf_node u) {
    fulb_ctx *c = k->c;
    if (c->gseen[u] == c->gstamp || (k->dr[u] == 1 && c->gseen[u] == c->gwalk)) return c->gkey[u];
    uint64_t best = UINT64_MAX;
    uint32_t nd;
    const hop *d = down_hops(k, u, &nd);
    for (uint32_t i = 0; i < nd; i++) {
        if (more_global(k, d[i].w, d[i].l, best)) continue;
        uint64_t kw = step_key(k, d[i].w, d[i].l);
        if (kw < best) best = kw;
    }
    /* a switch next to the root has only ways that end at the root, which is in the tree from
     * the start with no global links above it: its key holds for the whole walk_tree call */
    c->gseen[u] = k->dr[u] == 1 ? c->gwalk : c->gstamp;
    c->gkey[u] = best;
    return best;
}

/* The key of the best way on that leaves through link l to w. */
static uint64_t step_key(walk *k, nf_node w, nf_link l) {
    if (k->limit != UINT32_MAX && k->v->efi[l] + 1 >= k->limit) return UINT64_MAX;
    uint64_t g = k->v->f->link_cls[l] == NF_LINK_GLOBAL, bn = k->v->efi[l], nl = 1;
    if (k->mark[w] == k->tree) {
        g += k->c->tg[w];
    } else if (k->dr[w] > k->horizon) {
        uint64_t kw = path_key(k, w);
        if (kw == UINT64_MAX) return kw;
        g += KEY_G(kw);
        if (KEY_BN(kw) > bn) bn = KEY_BN(kw);
        nl += KEY_NEW(kw);
    }
    if (!(k->c->mode & FULB_LOOK)) bn = nl = 0; /* the global links alone (fulb-paper+global) */
    return make_key(g, bn, nl);
}

/* step_key off the Dragonfly, where the look-ahead reaches two hops, without the recursion:
 * through l to a tree switch w, (0, l's load, 1); to w outside the tree, (0, the larger of l's load
 * and the least load of w's usable links towards the root, 2), which is what step_key gives there
 * (walk_tree says why). The least load is memoised per switch in gkey for the whole tree. */
static uint64_t near_key(walk *k, nf_node w, nf_link l) {
    const uint32_t *efi = k->v->efi;
    if (k->limit != UINT32_MAX && efi[l] + 1 >= k->limit) return UINT64_MAX;
    if (k->mark[w] == k->tree) return make_key(0, efi[l], 1);
    fulb_ctx *c = k->c;
    if (c->gseen[w] != c->gstamp) {
        const nf_fabric *f = k->v->f;
        uint64_t least = UINT64_MAX;
        for (uint32_t e = f->sw_adj_off[w]; e < f->sw_adj_off[w + 1]; e++) {
            nf_node x = f->sw_adj[e];
            if (k->dr[x] + 1 != k->dr[w]) continue;
            nf_link lx = f->sw_adj_link[e];
            if (f->link_state[lx] != NF_LINK_UP ||
                (k->limit != UINT32_MAX && efi[lx] + 1 >= k->limit))
                continue;
            if (efi[lx] < least) least = efi[lx];
        }
        c->gseen[w] = c->gstamp;
        c->gkey[w] = least;
    }
    uint64_t least = c->gkey[w];
    if (least == UINT64_MAX) return UINT64_MAX;
    return make_key(0, efi[l] > least ? efi[l] : least, 2);
}

/* Forgets the memo entries of path_key and near_key but those stamped gwalk (all of them when the
 * stamp wraps). */
static void new_memo(fulb_ctx *c, uint32_t n_switches) {
    if (++c->gstamp == 0) {
        memset(c->gseen, 0, (size_t)n_switches * sizeof *c->gseen);
        c->gwalk = 1; /* forgotten as well */
        c->gstamp = 2;
    }
}

/* The bottom-up walk. Every switch joins the tree through the link chosen when the walk first
 * reached it, and a walk stops at the first switch already in the tree, so each switch has one
 * parent: the links form a tree, and each leaf's path is a shortest path to the root, so its
 * height is minimal. Choice at switch u: among up links to a switch one hop closer to the root,
 * the least look-ahead key (on a Dragonfly fewest global links first; then the least loaded
 * bottleneck; then the fewest links added, which prefers meeting the tree), then the fewest
 * groups on the link itself, then the lowest port. With a limit (fulb+), links whose load is
 * limit - 1 or more are not used, and a walk that finds no way on within the horizon gives up:
 * NF_ERANGE. With give_up other than UINT64_MAX, the walk stops and returns WALK_LOST as soon as
 * tree_score of the links so far reaches give_up: the whole tree could only score as much or more.
 */
/* A root trial's score: the load of the tree's most loaded link, then the links at that load,
 * then the links (lower is better). It never falls as links are added: a link above the bottleneck
 * raises the first part, one at it the second, any other the third. */
static uint64_t tree_score(uint32_t bn, uint32_t at_bn, uint32_t k) {
    return (uint64_t)bn << 40 | (uint64_t)(at_bn > 0xFFFFF ? 0xFFFFF : at_bn) << 20 |
           (k > 0xFFFFF ? 0xFFFFF : k);
}

enum { WALK_LOST = 1 }; /* walk_tree gave up: its score reached give_up */

/* A walk's best next hop so far: over link l to switch w, of key `key` and load `load` on l. */
typedef struct step {
    uint64_t key;
    unsigned load;
    nf_link l;
    nf_node w;
} step;

/* Offers a hop to *b: it wins on a smaller key, or an equal key and a smaller load; the first
 * offered keeps the ties. */
static inline void step_offer(step *b, uint64_t key, unsigned load, nf_link l, nf_node w) {
    if (key < b->key || (key == b->key && load < b->load))
        *b = (step){.key = key, .load = load, .l = l, .w = w};
}

static int walk_tree(fulb_ctx *c, const nf__mc_view *v, const nf_node *leaf, uint32_t n,
                     nf_node root, uint32_t limit, uint64_t give_up, nf_link *links,
                     uint32_t *n_links) {
    const nf_fabric *f = v->f;
    const uint8_t *dr = nf__mc_row(v->h, root, v->scr->row[2]);
    uint32_t stamp = nf__mc_new_stamp(v);
    uint32_t *mark = v->scr->stamp;
    mark[root] = stamp;
    c->tg[root] = 0;
    walk k = {.c = c, .v = v, .dr = dr, .mark = mark, .root = root, .tree = stamp, .limit = limit};
    uint32_t bn = 0, at_bn = 0; /* the score so far, when give_up is set */
    /* 255: the whole path (the global-link rule needs it all); 2: two hops; 0: none, the
     * paper's choice of the least-loaded link alone */
    unsigned ahead = v->has_global && (c->mode & FULB_GLOBAL) ? 255 : c->mode & FULB_LOOK ? 2 : 0;
    /* Without global links every key's first part is 0 and the look-ahead from u reaches two
     * hops, so path_key(w) is only asked for a switch w one hop above the horizon, and it ends
     * one hop on whether or not that next switch is in the tree: its key is (0, the least load of
     * w's usable links towards the root, 1), the same at every step while the loads (v->efi)
     * stay as they are, which they do until the whole tree is built. near_key computes the step's
     * key from that directly, and its memo holds for the whole tree. On a Dragonfly the memo is
     * renewed for each leaf's walk below, but for the switches next to the root (path_key). */
    new_memo(c, f->n_switches);
    c->gwalk = c->gstamp;
    if (ahead == 255) {
        if (!c->part && dragonfly_init(c, f)) return NF_ENOMEM;
        k.root_part = c->part[root];
        new_down_lists(c, f->n_switches);
    }
    *n_links = 0;
    for (uint32_t i = 0; i < n; i++) {
        nf_node u = leaf[i];
        if (dr[u] == NF_HOPS_INF) return NF_EUNREACHABLE;
        uint32_t np = 0;
        while (mark[u] != stamp) {
            mark[u] = stamp;
            c->path[np++] = u;
            /* with the whole path in view the horizon stays 0, and the switches this walk adds
             * are farther from the root than anything it looks at later, so the memo holds for
             * the whole walk of one leaf (see also the memo's reset above the loop) */
            if (np == 1 && ahead == 255) new_memo(c, f->n_switches);
            /* ways from u stop ahead hops on: at distance dr[u] - ahead from the root */
            k.horizon = dr[u] > ahead ? dr[u] - ahead : 0;
            step best = {.key = UINT64_MAX, .load = UINT32_MAX, .l = NF_NONE, .w = NF_NONE};
            if (ahead == 255) { /* the same hops as the scan below, from the down list */
                uint32_t nd;
                const hop *d = down_hops(&k, u, &nd);
                for (uint32_t j = 0; j < nd; j++) {
                    if (more_global(&k, d[j].w, d[j].l, best.key)) continue;
                    uint64_t key = step_key(&k, d[j].w, d[j].l);
                    if (key != UINT64_MAX) step_offer(&best, key, v->efi[d[j].l], d[j].l, d[j].w);
                }
            } else {
                for (uint32_t e = f->sw_adj_off[u]; e < f->sw_adj_off[u + 1]; e++) {
                    nf_node w = f->sw_adj[e];
                    nf_link l = f->sw_adj_link[e];
                    if (dr[w] + 1 != dr[u] || f->link_state[l] != NF_LINK_UP) continue;
                    uint64_t key = ahead ? near_key(&k, w, l)
                                   : limit != UINT32_MAX && v->efi[l] + 1 >= limit ? UINT64_MAX
                                                                                   : 0;
                    if (key != UINT64_MAX) step_offer(&best, key, v->efi[l], l, w);
                }
            }
            nf_link best_l = best.l;
            if (best_l == NF_NONE) return limit == UINT32_MAX ? NF_EUNREACHABLE : NF_ERANGE;
            links[(*n_links)++] = best_l;
            u = best.w;
            if (give_up != UINT64_MAX) {
                uint32_t e = v->efi[best_l];
                if (e > bn) bn = e, at_bn = 0;
                at_bn += e == bn;
                if (tree_score(bn, at_bn, *n_links) >= give_up) return WALK_LOST;
            }
        }
        /* the walk met the tree at u: its switches' tree paths, top down */
        for (uint32_t j = np; j-- > 0;) {
            nf_link l = links[*n_links - np + j];
            c->tg[c->path[j]] = (uint8_t)(c->tg[u] + (f->link_cls[l] == NF_LINK_GLOBAL));
            u = c->path[j];
        }
    }
    return NF_OK;
}

/* The root on a Dragonfly. There the fewest-global-links rule leaves a member one way to a given
 * root (its group's global link towards the root's group is unique in a palm-tree Dragonfly), so
 * the walk has almost nothing to balance and the root is the lever: the tree is built from each of
 * the ROOT_TRIALS least-loaded candidates (sw_load, ties to OpenSM's order), and the root whose
 * tree has the least loaded bottleneck wins (then fewer links at that load, then fewer links,
 * then the earlier candidate). The winning tree is kept for fulb_tree. Off the Dragonfly the walk
 * has real choices and plain root rotation (the least-loaded candidate) is kept: trials there cost
 * 3-6x the time for little (measured: bluelight random:n=2000,size=32 57 -> 55, torus
 * grid3d:40x30x20 11 -> 12), except on the k=40 fat tree (random:n=2000,size=32: 14 -> 8). */
enum { ROOT_TRIALS = 8 };

static int fulb_root(void *ctx, const nf__mc_view *v, const nf_node *leaf, uint32_t n,
                     nf_node *root) {
    fulb_ctx *c = ctx;
    c->kept_root = NF_NONE;
    if (!v->has_global || !(c->mode & FULB_TRIALS))
        return nf__mc_root_rotate(ctx, v, leaf, n, root);
    unsigned r;
    uint32_t nc = nf__mc_candidates(v, leaf, n, &r);
    if (!nc) return NF_EUNREACHABLE;
    const nf_node *cand = v->scr->cand;
    /* the K least-loaded candidates, in one pass: an insertion into a sorted array of K */
    const uint32_t want = ROOT_TRIALS;
    nf_node tried[ROOT_TRIALS];
    uint32_t tload[ROOT_TRIALS];
    uint64_t tkey[ROOT_TRIALS];
    uint32_t nt = 0;
    for (uint32_t i = 0; i < nc; i++) {
        nf_node x = cand[i];
        uint32_t lx = v->sw_load[x];
        if (nt == want && lx > tload[nt - 1]) continue;
        uint64_t kx = nf__mc_opensm_key(v->f->guid[x]);
        if (nt == want && lx == tload[nt - 1] && kx >= tkey[nt - 1]) continue;
        uint32_t j = nt < want ? nt++ : nt - 1;
        while (j > 0 && (tload[j - 1] > lx || (tload[j - 1] == lx && tkey[j - 1] > kx))) {
            tload[j] = tload[j - 1];
            tkey[j] = tkey[j - 1];
            tried[j] = tried[j - 1];
            j--;
        }
        tload[j] = lx;
        tkey[j] = kx;
        tried[j] = x;
    }
    uint64_t best_score = UINT64_MAX;
    for (uint32_t t = 0; t < nt; t++) {
        nf_node pick = tried[t];
        uint32_t k = 0;
        /* a trial that cannot beat the best so far is dropped as soon as that shows */
        int rc = walk_tree(c, v, leaf, n, pick, UINT32_MAX, best_score, c->trial, &k);
        if (rc == WALK_LOST) continue;
        if (rc) return rc;
        uint32_t bn = 0, at_bn = 0;
        for (uint32_t i = 0; i < k; i++) {
            uint32_t e = v->efi[c->trial[i]];
            if (e > bn) bn = e, at_bn = 0;
            at_bn += e == bn;
        }
        uint64_t score = tree_score(bn, at_bn, k);
        if (score < best_score) {
            best_score = score;
            nf_link *tmp = c->kept;
            c->kept = c->trial;
            c->trial = tmp;
            c->kept_n = k;
            c->kept_root = pick;
        }
    }
    *root = c->kept_root;
    return NF_OK;
}

static int fulb_tree(void *ctx, const nf__mc_view *v, const nf_node *leaf, uint32_t n, nf_node root,
                     nf_link *links, uint32_t *n_links) {
    fulb_ctx *c = ctx;
    if (c->kept_root == root) {
        memcpy(links, c->kept, (size_t)c->kept_n * sizeof *links);
        *n_links = c->kept_n;
        c->kept_root = NF_NONE;
        return NF_OK;
    }
    return walk_tree(c, v, leaf, n, root, UINT32_MAX, UINT64_MAX, links, n_links);
}

const nf_mcast_engine nf__mc_fulb = {
    .name = "fulb",
    .summary = "FULB-MC with netfab's look-ahead, and on a Dragonfly its global-link rule and root "
               "trials",
    .init = fulb_init,
    .root = fulb_root,
    .tree = fulb_tree,
    .fini = fulb_fini,
};

/* An engine of the family that adds `mode` (FULB_*) to the paper's algorithm: its init and its
 * registry entry. */
#define FULB_ENGINE(id, nm, mode, sum)                                                             \
    static int id##_init(void **out, const nf_fabric *f, const nf_hops *h) {                       \
        (void)h;                                                                                   \
        return fulb_init_mode(out, f, (mode));                                                     \
    }                                                                                              \
    const nf_mcast_engine nf__mc_##id = {.name = (nm),                                             \
                                         .summary = (sum),                                         \
                                         .init = id##_init,                                        \
                                         .root = fulb_root,                                        \
                                         .tree = fulb_tree,                                        \
                                         .fini = fulb_fini}

FULB_ENGINE(fulb_paper, "fulb-paper", 0,
            "FULB-MC as the paper: least-loaded root, bottom-up least-loaded min-hop link, path "
            "reuse");
FULB_ENGINE(fulb_paper_look, "fulb-paper+lookahead", FULB_LOOK,
            "fulb-paper with fulb's look-ahead alone (the hop whose next hop is least loaded)");
FULB_ENGINE(fulb_paper_global, "fulb-paper+global", FULB_GLOBAL,
            "fulb-paper with fulb's Dragonfly rule alone (fewest global links to the root first)");
FULB_ENGINE(fulb_paper_trials, "fulb-paper+trials", FULB_TRIALS,
            "fulb-paper with fulb's Dragonfly root trials alone (8 roots, the best tree kept)");

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
 * link at M, take the group out of the loads and look for a tree that keeps every link below M:
 * the look-ahead walk under that limit from its current root and from the least-loaded other root
 * candidates (all give the same minimal height), then the lightest tree under the limit from the
 * current root; if one is found, move the group there. Every move lowers the number of links at M
 * by at least one and raises none to M, so M falls once they are all cleared; the pass repeats
 * until a whole round moves nothing or M is 1. The search is a heuristic (a few roots, a greedy
 * walk), so the end is a local optimum, not a proof that no move helps. Trees that moved are kept
 * aside and the tree table is rebuilt at the end. */
static int fulb_refine(void *ctx, const nf__mc_view *v, const nf_groups *g, nf_mcast *m) {
    fulb_ctx *c = ctx;
    const nf_fabric *f = v->f;
    uint32_t *efi = m->efi;
    uint32_t S = f->n_switches, G = m->n_groups;
    nf_link **moved = nf__calloc((size_t)G + 1, sizeof *moved);
    uint32_t *moved_n = nf__calloc((size_t)G + 1, sizeof *moved_n);
    /* the leaves of a group: one per member before duplicates go (a group may have more members
     * than the fabric has switches) */
    uint32_t most = S;
    for (uint32_t k = 0; k < G; k++)
        if (g->off[k + 1] - g->off[k] > most) most = g->off[k + 1] - g->off[k];
    nf_node *leaf = nf__malloc(((size_t)most + 1) * sizeof *leaf);
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
            uint32_t nl = nf__mc_group_leaves(f, g, k, v->ca_port, leaf, NULL);
            uint32_t hot_here = 0;
            for (uint32_t i = 0; i < tn; i++)
                if (!is_host(f, tl[i])) hot_here += efi[tl[i]]-- == M;
            unsigned r;
            uint32_t nc = nf__mc_candidates(v, leaf, nl, &r);
            nf_node roots[REFINE_ROOTS];
            uint32_t nr = nc ? pick_roots(v, m->root[k], nc, roots) : 0;
            int32_t found = -1;
            nf_node root = NF_NONE;
            /* the walk under the limit from each root first (cheap: it follows the members'
             * paths), then the lightest tree from the current root (it sees every shortest
             * path inside the group's DAG, which the walk's look-ahead cannot) */
            for (uint32_t ci = 0; ci < nr && found < 0; ci++) {
                root = roots[ci];
                uint32_t wn = 0;
                if (walk_tree(c, v, leaf, nl, root, M, UINT64_MAX, buf, &wn) == NF_OK)
                    found = (int32_t)wn;
            }
            if (found < 0 && nr > 0) {
                root = roots[0];
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
    .root = fulb_root,
    .tree = fulb_tree,
    .refine = fulb_refine,
    .fini = fulb_fini,
};
