/* SPDX-License-Identifier: MIT */
/* What is done with routed multicast groups: their statistics (EFI, heights, a lower bound), an
 * independent verifier that replays every group through the forwarding tables, and the exports in
 * OpenSM's mcfdbs layout and as a member list. */
#include "route/mcast_engine.h"
#include "util/mem.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

static bool host_link(const nf_fabric *f, nf_link l) {
    return f->link_a[l] >= f->n_switches || f->link_z[l] >= f->n_switches;
}

/* The lower bound. For a switch s, let n_s be the number of groups with a member on s and a member
 * on another switch: each of their trees, whatever its root, contains an inter-switch link of s,
 * so one of s's deg(s) up links carries at least ceil(n_s / deg(s)) groups. Also, a group whose
 * members hang off k distinct switches needs at least max(k - 1, r) inter-switch links, r being
 * its least max distance (the height of any tree is at least r + 1): the loads sum to at least
 * that over all groups, spread over L inter-switch links. The bound is the larger of the two. */
uint32_t nf_mcast_lower_bound(const nf_fabric *f, const nf_hops *h, const nf_groups *g) {
    uint32_t S = f->n_switches;
    uint32_t *n_s = nf__calloc((size_t)S + 1, sizeof *n_s),
             *deg = nf__calloc((size_t)S + 1, sizeof *deg);
    nf_node *sw = nf__malloc(((size_t)g->off[g->n] + 1) * sizeof *sw);
    uint8_t *mx = nf__malloc((size_t)S + 1), *row = nf__malloc((size_t)S + 1);
    uint32_t best = 0;
    if (!n_s || !deg || !sw || !mx || !row) goto done;
    uint64_t links = 0, need = 0;
    for (nf_link l = 0; l < f->n_links; l++)
        if (!host_link(f, l) && f->link_a[l] != f->link_z[l] && f->link_state[l] == NF_LINK_UP) {
            deg[f->link_a[l]]++;
            deg[f->link_z[l]]++;
            links++;
        }
    for (uint32_t k = 0; k < g->n; k++) {
        uint32_t d = nf__mc_group_leaves(f, g, k, 1, sw, NULL);
        if (d < 2) continue;
        for (uint32_t i = 0; i < d; i++)
            n_s[sw[i]]++;
        unsigned r = nf__mc_max_rows(h, sw, d, mx, row);
        need += d - 1 > r ? d - 1 : r;
    }
    for (nf_node s = 0; s < S; s++)
        if (n_s[s] && deg[s]) {
            uint32_t b = (n_s[s] + deg[s] - 1) / deg[s];
            if (b > best) best = b;
        }
    if (links) {
        uint64_t b = (need + links - 1) / links;
        if (b > best) best = (uint32_t)b;
    }
done:
    nf__free(n_s);
    nf__free(deg);
    nf__free(sw);
    nf__free(mx);
    nf__free(row);
    return best;
}

void nf_mcast_stats_compute(const nf_fabric *f, const nf_groups *g, const nf_mcast *m,
                            nf_mcast_stats *out) {
    memset(out, 0, sizeof *out);
    out->groups = m->n_groups;
    out->memberships = g->off[g->n];
    uint64_t sum = 0, sum_host = 0, hsum = 0;
    uint32_t used_host = 0;
    for (nf_link l = 0; l < f->n_links; l++) {
        uint32_t e = m->efi[l];
        if (!e) continue;
        if (host_link(f, l)) {
            used_host++;
            sum_host += e;
            if (e > out->max_efi_host) out->max_efi_host = e;
        } else {
            out->links_used++;
            sum += e;
            if (e > out->max_efi) out->max_efi = e;
        }
    }
    out->mean_efi = out->links_used ? (double)sum / out->links_used : 0.0;
    out->mean_efi_host = used_host ? (double)sum_host / used_host : 0.0;
    for (uint32_t k = 0; k < m->n_groups; k++) {
        if (m->status[k] != NF_OK) {
            out->failed++;
            continue;
        }
        out->routed++;
        if (m->tree_off[k + 1] == m->tree_off[k]) {
            out->empty++;
            continue;
        }
        hsum += m->height[k];
        if (m->height[k] > out->max_height) out->max_height = m->height[k];
    }
    uint32_t with_tree = out->routed - out->empty;
    out->mean_height = with_tree ? (double)hsum / with_tree : 0.0;
}

/* ---- verification -------------------------------------------------------------------------- */

static int vfail(nf_diag *d, const char *fmt, unsigned long a, unsigned long b, unsigned long c) {
    if (d) {
        d->file[0] = '\0';
        d->line = 0;
        snprintf(d->msg, sizeof d->msg, fmt, a, b, c);
    }
    return NF_EINVAL;
}

/* The forwarding table of one group: per switch a 256-bit port mask, kept sparse (only the
 * switches the tree touches are set, and cleared again after the group). */
typedef struct mft {
    uint64_t (*mask)[4]; /* per switch */
    nf_node *touched;
    uint32_t n_touched;
} mft;

static void mft_set(mft *t, nf_node s, unsigned p) {
    uint64_t *mk = t->mask[s];
    if (!(mk[0] | mk[1] | mk[2] | mk[3])) t->touched[t->n_touched++] = s;
    mk[p >> 6] |= (uint64_t)1 << (p & 63);
}

static bool mft_has(const mft *t, nf_node s, unsigned p) {
    return t->mask[s][p >> 6] >> (p & 63) & 1;
}

static void mft_clear(mft *t) {
    for (uint32_t i = 0; i < t->n_touched; i++)
        memset(t->mask[t->touched[i]], 0, sizeof t->mask[0]);
    t->n_touched = 0;
}

/* Group k's switch members: *n of them from the returned pointer (NULL, 0: none). */
static const nf_node *sw_members(const nf_mcast *m, uint32_t k, uint32_t *n) {
    *n = m->sw_member_off ? m->sw_member_off[k + 1] - m->sw_member_off[k] : 0;
    return *n ? m->sw_member + m->sw_member_off[k] : NULL;
}

/* The port bits a tree sets: both switch ends of a switch link, the switch end of a host link,
 * port 0 of a switch member. */
static void mft_fill(mft *t, const nf_fabric *f, const nf_mcast *m, uint32_t k) {
    for (uint32_t i = m->tree_off[k]; i < m->tree_off[k + 1]; i++) {
        nf_link l = m->tree_link[i];
        if (f->link_a[l] < f->n_switches) mft_set(t, f->link_a[l], f->link_pa[l]);
        if (f->link_z[l] < f->n_switches) mft_set(t, f->link_z[l], f->link_pz[l]);
    }
    uint32_t ns;
    const nf_node *sm = sw_members(m, k, &ns);
    for (uint32_t i = 0; i < ns; i++)
        mft_set(t, sm[i], 0);
}

/* Replays group k: a packet injected at the root is copied by every switch to every port of its
 * mask except the one it came in on. Every copy into a switch must arrive on a port of that
 * switch's mask (else the tables are inconsistent), no switch may receive the group twice (a cycle
 * or a duplicate), every member CA must receive it exactly once and no other CA at all, and every
 * switch with a non-empty mask must be reached. The deepest delivery is the height. Members carry
 * the stamp in memb[], receivers in seen[]. */
typedef struct replay_buf {
    uint32_t *seen, *memb;
    nf_node *queue;
    uint8_t *depth, *inport;
    uint32_t *efi;
} replay_buf;

static int replay(const nf_fabric *f, const nf_groups *g, const nf_mcast *m, uint32_t k,
                  const mft *t, replay_buf *rb, uint32_t stamp, unsigned *height, nf_diag *d) {
    nf_node root = m->root[k];
    uint32_t head = 0, tail = 0, delivered = 0, reached = 0;
    for (uint32_t i = g->off[k]; i < g->off[k + 1]; i++)
        rb->memb[g->member[i]] = stamp;
    rb->queue[tail++] = root;
    rb->seen[root] = stamp;
    rb->depth[root] = 0;
    rb->inport[root] = 0;
    unsigned deepest = 0;
    while (head < tail) {
        nf_node s = rb->queue[head++];
        reached++;
        if (mft_has(t, s, 0)) { /* to the switch's own port 0: the switch is a member */
            if (rb->memb[s] != stamp)
                return vfail(d, "group %lu: switch %lu takes it at its port 0, not a member", k, s,
                             0);
            delivered++; /* at the switch's own depth: its port 0 is no link */
            if (rb->depth[s] > deepest) deepest = rb->depth[s];
        }
        for (unsigned p = 1; p <= f->nports[s]; p++) {
            if (p == rb->inport[s] || !mft_has(t, s, p)) continue;
            nf_gport gp = nf_port_index(f, s, p);
            nf_node q = f->peer[gp];
            if (q == NF_NONE)
                return vfail(d, "group %lu: switch %lu forwards to unconnected port %lu", k, s, p);
            rb->efi[f->port_link[gp]]++;
            if (q >= f->n_switches) {
                if (rb->memb[q] != stamp)
                    return vfail(d, "group %lu: switch %lu delivers to CA %lu, not a member", k, s,
                                 q);
                if (rb->seen[q] == stamp)
                    return vfail(d, "group %lu: member %lu receives twice (from switch %lu)", k, q,
                                 s);
                rb->seen[q] = stamp;
                delivered++;
                if (rb->depth[s] + 1u > deepest) deepest = rb->depth[s] + 1u;
                continue;
            }
            if (!mft_has(t, q, f->peer_port[gp]))
                return vfail(d, "group %lu: switch %lu does not take the group from switch %lu", k,
                             q, s);
            if (rb->seen[q] == stamp)
                return vfail(d, "group %lu: switch %lu is reached twice (a cycle), from %lu", k, q,
                             s);
            rb->seen[q] = stamp;
            rb->depth[q] = (uint8_t)(rb->depth[s] + 1);
            rb->inport[q] = f->peer_port[gp];
            rb->queue[tail++] = q;
        }
    }
    if (delivered != g->off[k + 1] - g->off[k])
        return vfail(d, "group %lu: %lu of %lu members reached", k, delivered,
                     g->off[k + 1] - g->off[k]);
    if (reached != t->n_touched)
        return vfail(d, "group %lu: %lu switches forward it but only %lu are reached from the root",
                     k, t->n_touched, reached);
    *height = deepest;
    return NF_OK;
}

int nf_mcast_verify(const nf_fabric *f, const nf_hops *h, const nf_groups *g, const nf_mcast *m,
                    nf_diag *diag) {
    uint32_t S = f->n_switches, N = f->n_nodes;
    unsigned port = m->ca_port ? m->ca_port : 1;
    mft t = {0};
    replay_buf rb = {0};
    nf_node *sw = NULL;
    int rc = NF_ENOMEM;
    t.mask = nf__calloc((size_t)S + 1, sizeof *t.mask);
    t.touched = nf__malloc(((size_t)S + 1) * sizeof *t.touched);
    rb.seen = nf__calloc((size_t)N + 1, sizeof *rb.seen);
    rb.memb = nf__calloc((size_t)N + 1, sizeof *rb.memb);
    rb.queue = nf__malloc(((size_t)S + 1) * sizeof *rb.queue);
    rb.depth = nf__malloc((size_t)S + 1);
    rb.inport = nf__malloc((size_t)S + 1);
    rb.efi = nf__calloc((size_t)f->n_links + 1, sizeof *rb.efi);
    sw = nf__malloc(((size_t)g->off[g->n] + 1) * sizeof *sw);
    if (!t.mask || !t.touched || !rb.seen || !rb.memb || !rb.queue || !rb.depth || !rb.inport ||
        !rb.efi || !sw)
        goto done;
    rc = NF_OK;
    if (m->n_groups != g->n)
        rc = vfail(diag, "%lu groups routed, %lu in the workload", m->n_groups, g->n, 0);
    for (uint32_t k = 0; k < m->n_groups && rc == NF_OK; k++) {
        if (m->status[k] != NF_OK) {
            if (m->tree_off[k + 1] != m->tree_off[k])
                rc = vfail(diag, "group %lu failed but has %lu tree links", k,
                           m->tree_off[k + 1] - m->tree_off[k], 0);
            continue;
        }
        if (m->root[k] >= S) {
            rc = vfail(diag, "group %lu: root %lu is not a switch", k, m->root[k], 0);
            break;
        }
        uint32_t n_sw_members;
        (void)sw_members(m, k, &n_sw_members);
        if (m->tree_off[k + 1] == m->tree_off[k] && !n_sw_members) {
            /* an empty tree: one member, nothing to do */
            bool one = true;
            for (uint32_t i = g->off[k] + 1; i < g->off[k + 1]; i++)
                one &= g->member[i] == g->member[g->off[k]];
            if (!one || g->off[k + 1] == g->off[k] || m->height[k] != 0) {
                rc = vfail(diag, "group %lu: empty tree for %lu members, height %lu", k,
                           g->off[k + 1] - g->off[k], m->height[k]);
                break;
            }
            continue;
        }
        mft_fill(&t, f, m, k);
        unsigned height = 0;
        rc = replay(f, g, m, k, &t, &rb, k + 1, &height, diag);
        mft_clear(&t);
        if (rc) break;
        if (height != m->height[k]) {
            rc = vfail(diag, "group %lu: height %lu, recorded %lu", k, height, m->height[k]);
            break;
        }
        /* the least possible height: 1 + the least max distance over all switches (a full scan,
         * independent of the engines' search from the members) */
        uint32_t n = 0;
        for (uint32_t i = g->off[k]; i < g->off[k + 1]; i++)
            sw[n++] =
                g->member[i] < S ? g->member[i] : f->peer[nf_port_index(f, g->member[i], port)];
        unsigned best = UINT32_MAX, at_root = 0;
        for (nf_node c = 0; c < S; c++) {
            unsigned mx = 0;
            for (uint32_t i = 0; i < n && mx < best; i++) {
                unsigned x = nf_hops_sw(h, c, sw[i]);
                if (x > mx) mx = x;
            }
            if (mx < best) best = mx;
        }
        for (uint32_t i = 0; i < n; i++)
            if (nf_hops_sw(h, m->root[k], sw[i]) > at_root)
                at_root = nf_hops_sw(h, m->root[k], sw[i]);
        if (!n_sw_members && height != best + 1) {
            rc = vfail(diag, "group %lu: height %lu, but %lu is possible", k, height, best + 1);
            break;
        }
        if (at_root != best) { /* with switch members: the root at the least max distance */
            rc = vfail(diag,
                       "group %lu: root %lu switch hops from its farthest member, %lu possible", k,
                       at_root, best);
            break;
        }
    }
    for (nf_link l = 0; l < f->n_links && rc == NF_OK; l++)
        if (rb.efi[l] != m->efi[l])
            rc = vfail(diag, "link %lu: EFI recount %lu, kept %lu", l, rb.efi[l], m->efi[l]);
done:
    nf__free(t.mask);
    nf__free(t.touched);
    nf__free(rb.seen);
    nf__free(rb.memb);
    nf__free(rb.queue);
    nf__free(rb.depth);
    nf__free(rb.inport);
    nf__free(rb.efi);
    nf__free(sw);
    return rc;
}

/* ---- exports ------------------------------------------------------------------------------- */

static int cmp_u64(const void *a, const void *b) {
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* Per switch in OpenSM's switch order, the MLIDs whose tree sets a port there, ascending, each with
 * its ports ascending: one list of (switch rank, group, port) keys, sorted once. */
int nf_mcast_write_mft(const nf_fabric *f, const nf_mcast *m, FILE *out) {
    return nf_mcast_write_mft_mlids(f, m, NULL, out);
}

int nf_mcast_write_mft_mlids(const nf_fabric *f, const nf_mcast *m, const uint16_t *mlid,
                             FILE *out) {
    if (!mlid && m->n_groups > NF_MLID_MAX - NF_MLID_BASE + 1) return NF_ERANGE;
    for (uint32_t k = 0; mlid && k < m->n_groups; k++)
        if (mlid[k] < NF_MLID_BASE || mlid[k] > NF_MLID_MAX) return NF_ERANGE;
    uint32_t S = f->n_switches;
    size_t n = 0;
    for (uint32_t k = 0; k < m->n_groups; k++) {
        uint32_t ns;
        (void)sw_members(m, k, &ns);
        n += 2 * (size_t)(m->tree_off[k + 1] - m->tree_off[k]) + ns;
    }
    nf_node *order = nf__malloc(((size_t)S + 1) * sizeof *order);
    uint32_t *rank = nf__malloc(((size_t)S + 1) * sizeof *rank);
    uint64_t *ent = nf__malloc((n + 1) * sizeof *ent);
    int rc = NF_ENOMEM;
    if (!order || !rank || !ent || nf__mc_opensm_order(f, order, rank)) goto done;
    /* key: switch rank << 24 | MLID offset << 8 | port (offsets < 2^14, ports < 2^8) */
    n = 0;
    for (uint32_t k = 0; k < m->n_groups; k++) {
        uint64_t off = mlid ? (uint64_t)(mlid[k] - NF_MLID_BASE) : k;
        for (uint32_t i = m->tree_off[k]; i < m->tree_off[k + 1]; i++) {
            nf_link l = m->tree_link[i];
            if (f->link_a[l] < S)
                ent[n++] = (uint64_t)rank[f->link_a[l]] << 24 | off << 8 | f->link_pa[l];
            if (f->link_z[l] < S)
                ent[n++] = (uint64_t)rank[f->link_z[l]] << 24 | off << 8 | f->link_pz[l];
        }
        uint32_t ns;
        const nf_node *sm = sw_members(m, k, &ns);
        for (uint32_t i = 0; i < ns; i++) /* a switch member: its port 0 */
            ent[n++] = (uint64_t)rank[sm[i]] << 24 | off << 8;
    }
    qsort(ent, n, sizeof *ent, cmp_u64);
    rc = NF_OK;
    for (size_t i = 0; i < n && rc == NF_OK;) {
        uint32_t r = (uint32_t)(ent[i] >> 24);
        if (fprintf(out, "\nSwitch 0x%016" PRIx64 "\nLID    : Out Port(s)\n", f->guid[order[r]]) <
            0)
            rc = NF_EIO;
        while (i < n && (uint32_t)(ent[i] >> 24) == r && rc == NF_OK) {
            uint32_t k = (uint32_t)(ent[i] >> 8) & 0xFFFF;
            fprintf(out, "0x%04X :", NF_MLID_BASE + k);
            unsigned last = 256; /* (no port yet: port 0 is one) */
            while (i < n && ent[i] >> 8 == ((uint64_t)r << 16 | k)) {
                unsigned p = ent[i] & 0xFF;
                if (p != last) fprintf(out, " 0x%03X ", p);
                last = p;
                i++;
            }
            if (fputc('\n', out) == EOF) rc = NF_EIO;
        }
    }
    if (rc == NF_OK && ferror(out)) rc = NF_EIO;
done:
    nf__free(order);
    nf__free(rank);
    nf__free(ent);
    return rc;
}

int nf_mcast_write_groups(const nf_fabric *f, const nf_groups *g, FILE *out) {
    return nf_mcast_write_groups_mlids(f, g, NULL, out);
}

int nf_mcast_write_groups_mlids(const nf_fabric *f, const nf_groups *g, const uint16_t *mlid,
                                FILE *out) {
    if (!mlid && g->n > NF_MLID_MAX - NF_MLID_BASE + 1) return NF_ERANGE;
    for (uint32_t k = 0; k < g->n; k++) {
        fprintf(out, "0x%04X", mlid ? mlid[k] : NF_MLID_BASE + k);
        for (uint32_t i = g->off[k]; i < g->off[k + 1]; i++)
            fprintf(out, " 0x%016" PRIx64, f->port_guid[nf_port_index(f, g->member[i], 1)]);
        if (fputc('\n', out) == EOF) return NF_EIO;
    }
    return ferror(out) ? NF_EIO : NF_OK;
}
