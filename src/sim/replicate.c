/* SPDX-License-Identifier: MIT */
/* Hardware multicast in the routers: the groups and their trees (nf_sim_set_mcast), and the
 * replication (a packet takes an output VC on every branch of its tree at a router at once,
 * then each flit crosses to all of them in one crossbar pass). */
#include "sim/engine.h"

#include <stdlib.h>
#include <string.h>

static int cmp_u32(const void *a, const void *b) {
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return x < y ? -1 : x > y;
}

bool nf__sim_is_member(const nf_sim *s, uint32_t g, uint32_t e) { /* (members sorted) */
    uint32_t i = sim_lower_bound(s->mc.grp_ep, s->mc.grp_off[g], s->mc.grp_off[g + 1], e);
    return i < s->mc.grp_off[g + 1] && s->mc.grp_ep[i] == e;
}

bool nf__sim_is_sw_member(const nf_sim *s, uint32_t g, nf_node sw) {
    if (!s->mc.sw_off) return false;
    uint32_t i = sim_lower_bound(s->mc.sw_mem, s->mc.sw_off[g], s->mc.sw_off[g + 1], sw);
    return i < s->mc.sw_off[g + 1] && s->mc.sw_mem[i] == sw;
}

int nf__sim_sw_member_got(nf_sim *s, sim_worker *b, uint32_t id) {
    uint32_t msg = s->pool.pkts[id].msg;
    if (msg == UINT32_MAX || !(msg & NF__SCRIPT_TAG)) return NF_OK;
    if (b->n_sarr == b->cap_sarr && NF_GROW(b->sarr, b->cap_sarr, b->n_sarr + 1)) return NF_ENOMEM;
    b->sarr[b->n_sarr++] = msg & ~NF__SCRIPT_TAG;
    return NF_OK;
}

int nf__sim_group_receivers(const nf_sim *s, uint32_t g, uint32_t src, uint32_t *receivers) {
    if (g >= s->mc.n_groups || !nf__sim_is_member(s, g, src)) return NF_EINVAL;
    *receivers = s->mc.grp_off[g + 1] - s->mc.grp_off[g] - 1;
    bool hw = !s->mc.refused || !s->mc.refused[g]; /* a refused group's copies reach endpoints */
    if (s->mc.sw_off && hw) *receivers += s->mc.sw_off[g + 1] - s->mc.sw_off[g];
    return NF_OK;
}

bool nf_sim_mcast_installed(const nf_sim *s, uint32_t g) {
    return s && g < s->mc.n_groups && (!s->mc.refused || !s->mc.refused[g]);
}

uint32_t nf_sim_mcast_refused(const nf_sim *s) { return s ? s->mc.n_refused : 0; }

/* With a table limit (mcast_port_entries), which groups fit, in order: a group takes an entry at
 * every switch port of its tree (each row's bits, and port 0 where a switch is a member), and
 * is refused when one of them has no entry left. refused: n groups' flags, written. NF_ENOMEM. */
static int fit_tables(const nf_sim *s, uint32_t n, const uint32_t *off, const nf_node *sw,
                      const uint64_t *mask, const uint32_t *soff, const nf_node *smem,
                      uint8_t *refused, uint32_t *n_refused) {
    unsigned cap = s->cfg.mcast_port_entries, W = 1u << s->net.mw_shift;
    const nf_fabric *f = s->f;
    /* entries used per switch port, port 0 after the others: port_off[sw] + nports[sw] */
    uint32_t *used = nf__calloc((size_t)s->topo.n_sw_ports + f->n_switches + 1, sizeof *used);
    if (!used) return NF_ENOMEM;
#define PORT0(x) ((size_t)s->topo.n_sw_ports + (x))
    *n_refused = 0;
    for (uint32_t k = 0; k < n; k++) {
        bool fits = true;
        for (uint32_t i = off[k]; i < off[k + 1] && fits; i++)
            for (unsigned w = 0; w < W && fits; w++)
                for (uint64_t m = mask[(size_t)i * W + w]; m && fits; m &= m - 1)
                    fits = used[f->port_off[sw[i]] + w * 64 + (unsigned)__builtin_ctzll(m)] < cap;
        for (uint32_t i = soff ? soff[k] : 0; soff && i < soff[k + 1] && fits; i++)
            fits = used[PORT0(smem[i])] < cap;
        refused[k] = !fits;
        if (!fits) {
            (*n_refused)++;
            continue;
        }
        for (uint32_t i = off[k]; i < off[k + 1]; i++)
            for (unsigned w = 0; w < W; w++)
                for (uint64_t m = mask[(size_t)i * W + w]; m; m &= m - 1)
                    used[f->port_off[sw[i]] + w * 64 + (unsigned)__builtin_ctzll(m)]++;
        for (uint32_t i = soff ? soff[k] : 0; soff && i < soff[k + 1]; i++)
            used[PORT0(smem[i])]++;
    }
#undef PORT0
    nf__free(used);
    return NF_OK;
}

/* The trees m[0..nm) of the groups g, one per rail (nm 1 or 2; rail r's CA members joining by
 * port r + 1), into the switches' rows: a rail's switches are its alone. */
static int set_mcast(nf_sim *s, const nf_groups *g, const nf_mcast *const *mt, unsigned nm) {
    const nf_fabric *f = s->f;
    size_t n_links = 0;
    for (unsigned r = 0; r < nm; r++) {
        const nf_mcast *m = mt[r];
        if (g->n != m->n_groups || (m->ca_port ? m->ca_port : 1) != r + 1) return NF_EINVAL;
        for (uint32_t i = 0; i < g->n; i++)
            if (m->status[i] < 0) return NF_EINVAL;
        n_links += m->tree_off[g->n];
    }
    size_t PSV = (size_t)s->topo.n_sw_ports * s->net.n_vcs;
    unsigned W = 1u << s->net.mw_shift; /* words of a port bitset */
    uint32_t *off = nf__calloc((size_t)g->n + 1, sizeof *off);
    nf_node *sw = nf__malloc((2 * n_links + 1) * sizeof *sw);
    uint64_t *mask = nf__malloc((2 * n_links + 1) * W * sizeof *mask);
    uint32_t *goff = nf__calloc((size_t)g->n + 1, sizeof *goff);
    uint32_t *gep = nf__malloc(((size_t)g->off[g->n] + 1) * sizeof *gep);
    uint32_t *soff = nf__calloc((size_t)g->n + 1, sizeof *soff);
    nf_node *smem = nf__malloc(((size_t)g->off[g->n] + 1) * sizeof *smem);
    uint32_t n_ep = 0, n_sw = 0;
    uint64_t *left = s->mc.left ? s->mc.left : nf__calloc(PSV * W + 1, sizeof *left);
    uint32_t *copy = NULL, fan = 1;
    /* with two rails, per switch 1 + the last group whose rail-0 tree holds it */
    uint32_t *on0 = nm > 1 ? nf__calloc((size_t)f->n_switches + 1, sizeof *on0) : NULL;
    if (!off || !sw || !mask || !goff || !gep || !soff || !smem || !left || (nm > 1 && !on0))
        goto oom;
    size_t n = 0;
    for (uint32_t k = 0; k < g->n; k++) {
        off[k] = (uint32_t)n;
        size_t first = n;
        /* every tree link's switch ends, each with the port's bit; then sorted and merged */
        for (unsigned r = 0; r < nm; r++)
            for (uint32_t t = mt[r]->tree_off[k]; t < mt[r]->tree_off[k + 1]; t++) {
                nf_link l = mt[r]->tree_link[t];
                nf_node ends[2] = {f->link_a[l], f->link_z[l]};
                unsigned ports[2] = {f->link_pa[l], f->link_pz[l]};
                for (int e = 0; e < 2; e++) {
                    if (ends[e] >= f->n_switches) continue;
                    if (on0 && r == 0) on0[ends[e]] = k + 1;
                    if (on0 && r == 1 && on0[ends[e]] == k + 1) goto inval; /* the rails meet */
                    size_t j = n++;
                    while (j > first && sw[j - 1] > ends[e]) { /* insertion: trees are small */
                        sw[j] = sw[j - 1];
                        memcpy(mask + j * W, mask + (j - 1) * W, W * sizeof *mask);
                        j--;
                    }
                    if (j > first && sw[j - 1] == ends[e]) { /* merge into the switch's row */
                        sim_bit_set(mask + (j - 1) * W, ports[e] - 1);
                        for (size_t q = j; q + 1 < n; q++) {
                            sw[q] = sw[q + 1];
                            memcpy(mask + q * W, mask + (q + 1) * W, W * sizeof *mask);
                        }
                        n--;
                    } else {
                        sw[j] = ends[e];
                        memset(mask + j * W, 0, W * sizeof *mask);
                        sim_bit_set(mask + j * W, ports[e] - 1);
                    }
                }
            }
        /* its endpoints, and its switches themselves (their port 0: the tree reaches them) */
        goff[k] = n_ep, soff[k] = n_sw;
        for (uint32_t i = g->off[k]; i < g->off[k + 1]; i++) {
            nf_node x = g->member[i];
            if (x < f->n_switches) {
                if (nm > 1) goto inval; /* a switch member would miss the other rail's packets */
                smem[n_sw++] = x;
                continue;
            }
            uint32_t e = x < f->n_nodes ? s->topo.ca_ep[x] : UINT32_MAX;
            if (e == UINT32_MAX) goto inval;
            gep[n_ep++] = e;
        }
        qsort(gep + goff[k], n_ep - goff[k], sizeof *gep, cmp_u32);
        qsort(smem + soff[k], n_sw - soff[k], sizeof *smem, cmp_u32);
        uint32_t w = soff[k]; /* a switch named twice counts once */
        for (uint32_t i = soff[k]; i < n_sw; i++)
            if (i == soff[k] || smem[i] != smem[i - 1]) smem[w++] = smem[i];
        n_sw = w;
        for (uint32_t i = soff[k]; i < n_sw; i++) { /* the tree must reach it */
            uint32_t j = sim_lower_bound(sw, off[k], (uint32_t)n, smem[i]);
            if (j >= n || sw[j] != smem[i]) {
                if (mt[0]->tree_off[k + 1] == mt[0]->tree_off[k] && g->off[k + 1] - g->off[k] == 1)
                    continue; /* one member, nothing installed (minihop's): nobody to reach */
                goto inval;
            }
        }
    }
    off[g->n] = (uint32_t)n;
    goff[g->n] = n_ep, soff[g->n] = n_sw;
    for (size_t i = 0; i < n; i++) { /* the most branches a copy set can have */
        uint32_t k = 0;
        for (unsigned w = 0; w < W; w++)
            k += (uint32_t)__builtin_popcountll(mask[i * W + w]);
        if (k > fan) fan = k;
    }
    copy = nf__malloc(PSV * fan * sizeof *copy + 1);
    if (!copy) goto oom;
    nf__free(s->mc.off);
    nf__free(s->mc.sw);
    nf__free(s->mc.mask);
    nf__free(s->mc.grp_off);
    nf__free(s->mc.grp_ep);
    s->mc.off = off, s->mc.sw = sw, s->mc.mask = mask, s->mc.grp_off = goff, s->mc.grp_ep = gep;
    nf__free(s->mc.sw_off);
    nf__free(s->mc.sw_mem);
    if (n_sw) {
        s->mc.sw_off = soff, s->mc.sw_mem = smem;
    } else {
        s->mc.sw_off = NULL, s->mc.sw_mem = NULL;
        nf__free(soff), nf__free(smem);
    }
    nf__free(s->mc.ids);
    s->mc.left = left, s->mc.ids = copy, s->mc.fan = fan;
    s->mc.n_groups = g->n;
    s->mc.rails = nm > 1;
    nf__free(on0);
    nf__free(s->mc.refused);
    s->mc.refused = NULL, s->mc.n_refused = 0;
    if (s->cfg.mcast_port_entries) {
        uint8_t *ref = nf__malloc((size_t)g->n + 1);
        if (!ref ||
            fit_tables(s, g->n, off, sw, mask, s->mc.sw_off, s->mc.sw_mem, ref, &s->mc.n_refused)) {
            nf__free(ref);
            s->mc.n_groups = 0; /* (the rest is freed with the simulator or the next call) */
            return NF_ENOMEM;
        }
        s->mc.refused = ref;
    }
    return NF_OK;
inval:
    nf__free(off), nf__free(sw), nf__free(mask), nf__free(goff), nf__free(gep);
    nf__free(soff), nf__free(smem), nf__free(on0);
    if (left != s->mc.left) nf__free(left);
    nf__free(copy);
    return NF_EINVAL;
oom:
    nf__free(off), nf__free(sw), nf__free(mask), nf__free(goff), nf__free(gep);
    nf__free(soff), nf__free(smem), nf__free(on0);
    if (left != s->mc.left) nf__free(left);
    nf__free(copy);
    return NF_ENOMEM;
}

int nf_sim_set_mcast(nf_sim *s, const nf_groups *g, const nf_mcast *m) {
    return set_mcast(s, g, &m, 1);
}

int nf_sim_set_mcast_rails(nf_sim *s, const nf_groups *g, const nf_mcast *rail0,
                           const nf_mcast *rail1) {
    const nf_mcast *mt[2] = {rail0, rail1};
    return set_mcast(s, g, mt, rail1 ? 2 : 1);
}

/* The router's side comes in two builds, as the crossbar's (sim.c): the functions taking W (the
 * words of a port bitset, 1 or SIM_MASK_WORDS) are inlined into each entry point. */

/* Group g's ports at switch sw (a port bitset), NULL when sw is not in its tree. */
static const uint64_t *mc_row(const nf_sim *s, uint32_t g, nf_node sw) {
    uint32_t i = sim_lower_bound(s->mc.sw, s->mc.off[g], s->mc.off[g + 1], sw);
    return i < s->mc.off[g + 1] && s->mc.sw[i] == sw ? s->mc.mask + ((size_t)i << s->net.mw_shift)
                                                     : NULL;
}

/* A multicast head packet gets every branch of its tree at this router at once (the row less
 * the arrival port and failed links): an output VC with room for the packet on each, or none
 * (no hold-and-wait): VC hops + 1 towards a switch (copies climb the VCs as they go), 0 into a
 * NIC; a copy's packet id for every branch but the last, which keeps the packet itself. No
 * branch at all: discarded. */
static inline __attribute__((always_inline)) void allocate_mc(nf_sim *s, sim_worker *b, nf_node sw,
                                                              nf_gport gi, sim_port *pi,
                                                              unsigned in_port, unsigned v,
                                                              const unsigned W) {
    sim_ivc *civ = &sim_ivcs(s, pi)[v];
    size_t x = sim_vc_ix(s, gi, v);
    sim_pkt *p = &s->pool.pkts[civ->head_pkt];
    if (s->err.on) {
        if (p->flags & SIM_PK_BAD) { /* a corrupt copy, all of it here: thrown away */
            civ->out_port = SIM_DROP_PORT;
            return;
        }
        sim_errvc *ev = &s->err.vc[x]; /* its way in, for a copy sent again (err_arrive) */
        ev->rs = p->rs;
        ev->hops = p->hops;
    }
    nf_gport g0 = s->f->port_off[sw];
    uint64_t mask[SIM_MASK_WORDS] = {0};
    const uint64_t *row = mc_row(s, p->mgroup, sw);
    if (row) memcpy(mask, row, W * sizeof *mask);
    sim_bit_clear(mask, in_port - 1);
    /* the VC of the switch branches, fixed now (kept in out_vc): the packet's hops change as
     * its copies move on */
    unsigned swvc = p->hops + 1u < s->net.n_vcs ? p->hops + 1u : s->net.n_vcs - 1;
    unsigned k = 0, first = 0;
    for (unsigned w = 0; w < W; w++)
        for (uint64_t m = mask[w]; m; m &= m - 1) {
            nf_link l = s->f->port_link[g0 + w * 64 + (unsigned)__builtin_ctzll(m)];
            if (l == NF_NONE || s->faults.link_state[l] != NF_LINK_UP)
                mask[w] &= ~(m & -m);
            else if (k++ == 0)
                first = w * 64 + (unsigned)__builtin_ctzll(m);
        }
    if (!k) {
        civ->out_port = SIM_DROP_PORT;
        return;
    }
    for (unsigned w = 0; w < W; w++)
        for (uint64_t m = mask[w]; m; m &= m - 1) {
            sim_port *po = sim_port_at(s, g0 + w * 64 + (unsigned)__builtin_ctzll(m));
            unsigned vc = po->to_sw ? swvc : 0;
            if (sim_ovc_busy(po, vc) || sim_room(s, po, vc) < (int32_t)s->cfg.pkt_flits) return;
        }
    /* no ids left this cycle: next cycle (with link errors, one a switch port is kept for the
     * copies sent again) */
    if (b->n_stash < k - 1 + (s->err.on ? s->topo.n_sw_ports : 0)) return;
    uint32_t *ids = s->mc.ids + x * s->mc.fan, j = 0;
    for (unsigned w = 0; w < W; w++)
        for (uint64_t m = mask[w]; m; m &= m - 1, j++) {
            sim_port *po = sim_port_at(s, g0 + w * 64 + (unsigned)__builtin_ctzll(m));
            uint32_t id = civ->head_pkt;
            if (j + 1 < k) {
                id = b->stash[--b->n_stash];
                s->pool.pkts[id] = *p;
            }
            ids[j] = id;
            sim_ovc_hold(po, po->to_sw ? swvc : 0);
            if (po->to_sw) s->pool.pkts[id].hops++;
        }
    memcpy(s->mc.left + x * W, mask, W * sizeof *mask);
    civ->out_port = (uint16_t)(first + 1); /* (marks it allocated) */
    civ->out_vc = (uint8_t)swvc;
}

void nf__sim_allocate_mc(nf_sim *s, sim_worker *b, nf_node sw, nf_gport gi, sim_port *pi,
                         unsigned in_port, unsigned v) {
    if (s->net.mw_shift)
        allocate_mc(s, b, sw, gi, pi, in_port, v, SIM_MASK_WORDS);
    else
        allocate_mc(s, b, sw, gi, pi, in_port, v, 1);
}

/* Moves the head flit of multicast input VC v of port gi to every branch at once (the
 * crossbar joins the input to all of them): the input slot frees once, a flit leaves on each. */
static inline __attribute__((always_inline)) int
traverse_mc(nf_sim *s, sim_worker *b, nf_node sw, nf_gport gi, unsigned v, const unsigned W) {
    sim_port *pi = sim_port_at(s, gi);
    sim_ivc *iv = &sim_ivcs(s, pi)[v];
    size_t x = sim_vc_ix(s, gi, v);
    uint64_t mask[SIM_MASK_WORDS];
    memcpy(mask, s->mc.left + x * W, W * sizeof *mask); /* (the tail clears it) */
    const uint32_t *ids = s->mc.ids + x * s->mc.fan;
    bool head = iv->out == 0, tail = ++iv->out == s->cfg.pkt_flits;
    int rc = sim_free_slot_w(s, b, sw, gi, v, W);
    if (rc) return rc;
    uint8_t bad = 0; /* a corrupt packet whose head had gone on: every copy's tail goes bad */
    if (tail && s->err.on && s->err.vc[x].stomp) {
        s->err.vc[x].stomp = 0;
        bad = SIM_FL_BAD;
    }
    nf_gport g0 = s->f->port_off[sw];
    unsigned j = 0;
    for (unsigned w = 0; w < W; w++)
        for (uint64_t m = mask[w]; m; m &= m - 1, j++) {
            unsigned o = w * 64 + (unsigned)__builtin_ctzll(m);
            sim_port *po = sim_port_at(s, g0 + o);
            /* the hops the copy had before this router: its VC was chosen on them */
            unsigned vc = po->to_sw ? iv->out_vc : 0;
            sim_port_set(s->net.out_mask, sw, o, W);
            bool shared = sim_take_credit(s, po, vc);
            po->late = b->last_pass;
            sim_oq_push(s, po, g0 + o, ids[j], (uint8_t)vc,
                        (uint8_t)((tail ? SIM_FL_TAIL : 0) | (head ? SIM_FL_HEAD : 0) |
                                  (shared ? SIM_FL_SHARED : 0) | bad));
            if (tail) sim_ovc_free(po, vc);
        }
    b->injected += j - 1; /* the copies are new flits in the network */
    if (tail) {
        uint32_t id = iv->head_pkt; /* (the packet's own record, still this VC's head) */
        if (!bad && nf__sim_is_sw_member(s, s->pool.pkts[id].mgroup, sw) &&
            (rc = nf__sim_sw_member_got(s, b, id)))
            return rc;
        sim_next_head(s, gi, v, iv);
    }
    return NF_OK;
}

/* Multicast inputs first in a crossbar pass: an input VC whose packet holds its branches
 * crosses to all of them when each is free this pass and has room. */
static inline __attribute__((always_inline)) int crossbar_mc(nf_sim *s, sim_worker *b, nf_node sw,
                                                             uint64_t *in_done, uint64_t *out_done,
                                                             bool *moved, const unsigned W) {
    nf_gport g0 = s->f->port_off[sw];
    const uint64_t *in_mask = s->net.in_mask + (size_t)sw * W;
    const uint64_t now = s->now;
    for (unsigned iw = 0; iw < W; iw++)
        for (uint64_t im = in_mask[iw] & ~in_done[iw]; im; im &= im - 1) {
            unsigned ip = iw * 64 + (unsigned)__builtin_ctzll(im);
            sim_port *pi = sim_port_at(s, g0 + ip);
            sim_ivc *ivs = sim_ivcs(s, pi);
            for (uint32_t vm = sim_pin_of(s, pi)->vmask; vm; vm &= vm - 1) {
                unsigned v = (unsigned)__builtin_ctz(vm);
                size_t x = sim_vc_ix(s, g0 + ip, v);
                if (now < ivs[v].ready_at) continue;
                if (!ivs[v].out_port && (s->pool.pkts[ivs[v].head_pkt].flags & SIM_PK_MCAST))
                    allocate_mc(s, b, sw, g0 + ip, pi, ip + 1, v, W);
                const uint64_t *mask = s->mc.left + x * W;
                uint64_t any = 0, clash = 0;
                for (unsigned w = 0; w < W; w++)
                    any |= mask[w], clash |= mask[w] & out_done[w];
                if (!any || clash) continue;
                bool ok = true;
                for (unsigned w = 0; w < W && ok; w++)
                    for (uint64_t m = mask[w]; m && ok; m &= m - 1) {
                        sim_port *po = sim_port_at(s, g0 + w * 64 + (unsigned)__builtin_ctzll(m));
                        ok = po->oq_count < s->net.oq_cap &&
                             sim_room(s, po, po->to_sw ? ivs[v].out_vc : 0) > 0;
                    }
                if (!ok) continue;
                for (unsigned w = 0; w < W; w++)
                    out_done[w] |= mask[w]; /* (before the tail crossing clears it) */
                int rc = traverse_mc(s, b, sw, g0 + ip, v, W);
                if (rc) return rc;
                in_done[ip >> 6] |= 1ULL << (ip & 63);
                *moved = true;
                break;
            }
        }
    return NF_OK;
}

int nf__sim_crossbar_mc(nf_sim *s, sim_worker *b, nf_node sw, uint64_t *in_done, uint64_t *out_done,
                        bool *moved) {
    return s->net.mw_shift ? crossbar_mc(s, b, sw, in_done, out_done, moved, SIM_MASK_WORDS)
                           : crossbar_mc(s, b, sw, in_done, out_done, moved, 1);
}
