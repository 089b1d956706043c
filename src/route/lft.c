/* SPDX-License-Identifier: MIT */
/* Two-level unicast forwarding tables (the Sunway paper): per switch an intra-supernode table
 * indexed by an endpoint's rank in its supernode and an inter-supernode table indexed by supernode,
 * both in CSR form; the flat table's entries computed from the distances; memory accounting; and
 * the check that the two give the same lookups. */
#include "netfab/lft.h"
#include "util/diag.h"
#include "util/mem.h"
#include "util/u64map.h"

#include <omp.h>
#include <stdio.h>
#include <string.h>

struct nf_lft {
    const nf_fabric *f;
    const nf_hops *h;
    uint32_t n_sn;     /* supernodes: 0 .. the largest an endpoint names */
    int32_t *sw_sn;    /* per switch: its supernode, or -1 (none, or one without endpoints) */
    uint32_t *sn_size; /* per supernode: its endpoints */
    uint32_t *ca_rank; /* per endpoint (CA id - n_switches): its rank in its supernode */
    uint64_t *row;     /* per switch: its first row (intra rows, then one per supernode) */
    uint64_t *off;     /* per row: offset into ports; rows + 1 */
    uint8_t *ports;
    uint32_t entry_max; /* the most ports any entry holds */
    uint8_t *dsn;       /* per switch and supernode: distance to its nearest switch */
};

void nf_lft_free(nf_lft *t) {
    if (!t) return;
    nf__free(t->sw_sn);
    nf__free(t->sn_size);
    nf__free(t->ca_rank);
    nf__free(t->row);
    nf__free(t->off);
    nf__free(t->ports);
    nf__free(t->dsn);
    nf__free(t);
}

/* Links from switch s to endpoint ca through each port p of s (d[p], 1..nports), over links
 * that are up: 1 for ca's own cable, else 2 + the distance from p's peer switch to a switch ca
 * is cabled to; NF_HOPS_INF for no way. Distances are symmetric, so a neighbour w is looked up
 * in the row of ca's switches (one row, few cache lines). Returns the least of them. */
static unsigned port_dists(const nf_fabric *f, const nf_hops *h, nf_node s, nf_node ca,
                           uint8_t *d) {
    nf_node at[8];
    unsigned na = 0, best = NF_HOPS_INF;
    for (unsigned cp = 1; cp <= f->nports[ca] && na < 8; cp++) {
        nf_gport g = nf_port_index(f, ca, cp);
        if (f->peer[g] != NF_NONE && f->link_state[f->port_link[g]] == NF_LINK_UP)
            at[na++] = f->peer[g];
    }
    for (unsigned p = 1; p <= f->nports[s]; p++) {
        nf_gport g = nf_port_index(f, s, p);
        nf_node w = f->peer[g];
        unsigned x = NF_HOPS_INF;
        if (w != NF_NONE && f->link_state[f->port_link[g]] == NF_LINK_UP) {
            if (w == ca)
                x = 1;
            else if (w < f->n_switches && w != s)
                for (unsigned i = 0; i < na; i++) {
                    unsigned y = nf_hops_sw(h, at[i], w);
                    if (y + 2 < x) x = y + 2;
                }
        }
        d[p] = (uint8_t)(x > NF_HOPS_INF ? NF_HOPS_INF : x);
        if (x < best) best = x;
    }
    return best;
}

unsigned nf_lft_flat_entry(const nf_fabric *f, const nf_hops *h, nf_node s, nf_node ca,
                           uint8_t *ports, unsigned max) {
    if (s >= f->n_switches || ca < f->n_switches || ca >= f->n_nodes) return 0;
    uint8_t d[NF_MAX_PORTS + 1];
    unsigned best = port_dists(f, h, s, ca, d), n = 0;
    for (unsigned p = 1; p <= f->nports[s] && best < NF_HOPS_INF; p++)
        if (d[p] == best) {
            if (n < max) ports[n] = (uint8_t)p;
            n++;
        }
    return n;
}

static uint32_t intra_rows(const nf_lft *t, nf_node s) {
    return t->sw_sn[s] >= 0 ? t->sn_size[t->sw_sn[s]] : 0;
}

/* Switch s's entries, into ports when fill (else only counted), rows' offsets into off from
 * base; returns the ports written or counted. The intra entries are flat entries (the same
 * computation: within its own supernode a router has one row per endpoint); an inter entry
 * holds the ports one hop closer to the supernode's nearest switch. */
typedef struct portset {
    uint64_t w[4]; /* ports 0..255 */
} portset;

static uint64_t switch_rows(nf_lft *t, nf_node s, const nf_node *sn_cas, const uint32_t *sn_first,
                            portset *sets, bool fill, uint64_t base, uint32_t *emax) {
    const nf_fabric *f = t->f;
    uint64_t n = 0, r = t->row[s];
    uint8_t tmp[NF_MAX_PORTS];
    if (t->sw_sn[s] >= 0) {
        uint32_t g = (uint32_t)t->sw_sn[s];
        for (uint32_t i = sn_first[g]; i < sn_first[g + 1]; i++) {
            unsigned k = nf_lft_flat_entry(f, t->h, s, sn_cas[i], tmp, NF_MAX_PORTS);
            if (fill) {
                t->off[r++] = base + n;
                memcpy(t->ports + base + n, tmp, k);
            }
            if (k > *emax) *emax = k;
            n += k;
        }
    }
    /* inter: port p serves supernode g when its peer is one hop nearer g; gathered a port at a
     * time (a sequential pass over the peer's row of distances) into a bitset per supernode */
    const uint8_t *ds = t->dsn + (size_t)s * t->n_sn;
    memset(sets, 0, (size_t)t->n_sn * sizeof *sets);
    for (unsigned p = 1; p <= f->nports[s]; p++) {
        nf_gport gp = nf_port_index(f, s, p);
        nf_node w = f->peer[gp];
        if (w >= f->n_switches || w == s || f->link_state[f->port_link[gp]] != NF_LINK_UP) continue;
        const uint8_t *dw = t->dsn + (size_t)w * t->n_sn;
        for (uint32_t g = 0; g < t->n_sn; g++)
            if (ds[g] != 0 && ds[g] != NF_HOPS_INF && dw[g] + 1 == ds[g])
                sets[g].w[p >> 6] |= 1ull << (p & 63);
    }
    for (uint32_t g = 0; g < t->n_sn; g++) {
        unsigned k = 0;
        for (unsigned j = 0; j < 4; j++)
            for (uint64_t m = sets[g].w[j]; m; m &= m - 1)
                tmp[k++] = (uint8_t)(j * 64 + (unsigned)__builtin_ctzll(m));
        if (fill) {
            t->off[r++] = base + n;
            memcpy(t->ports + base + n, tmp, k);
        }
        if (k > *emax) *emax = k;
        n += k;
    }
    return n;
}

int nf_lft_build(const nf_fabric *f, const nf_hops *h, int threads, nf_lft **out, nf_diag *diag) {
    *out = NULL;
    uint32_t S = f->n_switches;
    int32_t mx = -1;
    for (nf_node c = S; c < f->n_nodes; c++) {
        if (f->supernode[c] < 0)
            return nf__fail(diag, NF_EINVAL,
                            "two-level tables: endpoint %s belongs to no supernode",
                            nf_node_name(f, c));
        if (f->supernode[c] > mx) mx = f->supernode[c];
    }
    nf_lft *t = nf__calloc(1, sizeof *t);
    if (!t) return NF_ENOMEM;
    t->f = f;
    t->h = h;
    t->n_sn = (uint32_t)(mx + 1);
    uint32_t G = t->n_sn, C = f->n_cas;
    uint32_t *sn_first = nf__calloc((size_t)G + 1, sizeof *sn_first);
    nf_node *sn_cas = nf__malloc(((size_t)C + 1) * sizeof *sn_cas);
    uint32_t *mfirst = nf__calloc((size_t)G + 1, sizeof *mfirst);
    nf_node *members = NULL;
    portset *sets = NULL;
    uint64_t *cnt = nf__calloc((size_t)S + 1, sizeof *cnt);
    t->sw_sn = nf__malloc(((size_t)S + 1) * sizeof *t->sw_sn);
    t->sn_size = nf__calloc((size_t)G + 1, sizeof *t->sn_size);
    t->ca_rank = nf__malloc(((size_t)C + 1) * sizeof *t->ca_rank);
    t->row = nf__malloc(((size_t)S + 1) * sizeof *t->row);
    t->dsn = nf__malloc((size_t)S * G + 1);
    if (!sn_first || !sn_cas || !mfirst || !cnt || !t->sw_sn || !t->sn_size || !t->ca_rank ||
        !t->row || !t->dsn)
        goto oom;
    for (nf_node c = S; c < f->n_nodes; c++)
        t->ca_rank[c - S] = t->sn_size[f->supernode[c]]++;
    for (uint32_t g = 0; g < G; g++)
        sn_first[g + 1] = sn_first[g] + t->sn_size[g];
    for (nf_node c = S; c < f->n_nodes; c++)
        sn_cas[sn_first[f->supernode[c]] + t->ca_rank[c - S]] = c;
    for (nf_node s = 0; s < S; s++) {
        int32_t g = f->supernode[s];
        t->sw_sn[s] = g >= 0 && (uint32_t)g < G && t->sn_size[g] ? g : -1;
    }
    /* a supernode's switches: those it names, and those its endpoints are cabled to */
    {
        size_t cap = 0, n = 0;
        bool short_of_memory = false;
        uint32_t *mark = nf__malloc(((size_t)S + 1) * sizeof *mark);
        if (!mark) goto oom;
        for (nf_node s = 0; s < S; s++)
            mark[s] = UINT32_MAX;
        for (uint32_t g = 0; g < G && !short_of_memory; g++) {
            mfirst[g] = (uint32_t)n;
            for (nf_node s = 0; s < S && !short_of_memory; s++)
                if (t->sw_sn[s] == (int32_t)g) {
                    short_of_memory = NF_GROW(members, cap, n + 1) != 0;
                    if (!short_of_memory) members[n++] = s, mark[s] = g;
                }
            for (uint32_t i = sn_first[g]; i < sn_first[g + 1] && !short_of_memory; i++)
                for (unsigned p = 1; p <= f->nports[sn_cas[i]] && !short_of_memory; p++) {
                    nf_node s = f->peer[nf_port_index(f, sn_cas[i], p)];
                    if (s >= S || mark[s] == g) continue;
                    short_of_memory = NF_GROW(members, cap, n + 1) != 0;
                    if (!short_of_memory) members[n++] = s, mark[s] = g;
                }
        }
        mfirst[G] = (uint32_t)n;
        nf__free(mark);
        if (short_of_memory) goto oom;
    }
    /* num_threads clauses, not omp_set_num_threads: the caller's default must not change */
    int nth = threads > 0 ? threads : omp_get_max_threads();
#pragma omp parallel for num_threads(nth) schedule(dynamic, 64)
    for (int64_t s = 0; s < (int64_t)S; s++)
        for (uint32_t g = 0; g < G; g++) {
            unsigned best = NF_HOPS_INF;
            for (uint32_t i = mfirst[g]; i < mfirst[g + 1]; i++) {
                unsigned d = nf_hops_sw(h, (nf_node)s, members[i]);
                if (d < best) best = d;
            }
            t->dsn[(size_t)s * G + g] = (uint8_t)best;
        }
    uint64_t rows = 0;
    for (nf_node s = 0; s < S; s++) {
        t->row[s] = rows;
        rows += intra_rows(t, s) + G;
    }
    t->row[S] = rows;
    t->off = nf__malloc((rows + 1) * sizeof *t->off);
    if (!t->off) goto oom;
    uint32_t emax = 0;
    sets = nf__malloc((size_t)nth * (G + 1) * sizeof *sets);
    if (!sets) goto oom;
#pragma omp parallel for num_threads(nth) schedule(dynamic, 16) reduction(max : emax)
    for (int64_t s = 0; s < (int64_t)S; s++)
        cnt[s + 1] = switch_rows(t, (nf_node)s, sn_cas, sn_first,
                                 sets + (size_t)omp_get_thread_num() * (G + 1), false, 0, &emax);
    for (nf_node s = 0; s < S; s++)
        cnt[s + 1] += cnt[s];
    t->ports = nf__malloc(cnt[S] + 1);
    if (!t->ports) goto oom;
#pragma omp parallel for num_threads(nth) schedule(dynamic, 16) reduction(max : emax)
    for (int64_t s = 0; s < (int64_t)S; s++)
        switch_rows(t, (nf_node)s, sn_cas, sn_first, sets + (size_t)omp_get_thread_num() * (G + 1),
                    true, cnt[s], &emax);
    t->off[rows] = cnt[S];
    t->entry_max = emax;
    nf__free(sn_first);
    nf__free(sn_cas);
    nf__free(mfirst);
    nf__free(members);
    nf__free(sets);
    nf__free(cnt);
    *out = t;
    return NF_OK;
oom:
    nf__free(sn_first);
    nf__free(sn_cas);
    nf__free(mfirst);
    nf__free(members);
    nf__free(sets);
    nf__free(cnt);
    nf_lft_free(t);
    return NF_ENOMEM;
}

unsigned nf_lft_lookup(const nf_lft *t, nf_node s, nf_node ca, const uint8_t **ports) {
    const nf_fabric *f = t->f;
    *ports = t->ports;
    if (s >= f->n_switches || ca < f->n_switches || ca >= f->n_nodes) return 0;
    uint32_t g = (uint32_t)f->supernode[ca];
    uint64_t r = t->row[s];
    r += t->sw_sn[s] == (int32_t)g ? t->ca_rank[ca - f->n_switches] : intra_rows(t, s) + g;
    *ports = t->ports + t->off[r];
    return (unsigned)(t->off[r + 1] - t->off[r]);
}

void nf_lft_memory_of(const nf_lft *t, nf_lft_memory *m) {
    const nf_fabric *f = t->f;
    memset(m, 0, sizeof *m);
    m->endpoints = f->n_cas;
    m->supernodes = t->n_sn;
    for (uint32_t g = 0; g < t->n_sn; g++)
        if (t->sn_size[g] > m->intra_max) m->intra_max = t->sn_size[g];
    m->entry_ports = t->entry_max ? t->entry_max : 1;
    for (nf_gport g = 0; g < f->port_off[f->n_switches]; g++)
        m->table_ports += f->peer[g] != NF_NONE;
    m->flat_table_bytes = m->endpoints * m->entry_ports;
    m->two_level_table_bytes = ((uint64_t)m->intra_max + m->supernodes) * m->entry_ports;
    m->flat_bytes = m->flat_table_bytes * m->table_ports;
    m->two_level_bytes = m->two_level_table_bytes * m->table_ports;
}

/* The endpoints whose flat and inter entries stand for others': the first of those cabled to
 * the same switches (by port 1 and 2; an endpoint with more ports stands for itself). */
static int representatives(const nf_fabric *f, uint8_t *rep) {
    nf__u64map seen;
    nf__u64map_init(&seen);
    uint64_t S = f->n_switches;
    for (nf_node c = f->n_switches; c < f->n_nodes; c++) {
        uint64_t a = f->peer[nf_port_index(f, c, 1)];
        uint64_t b = f->nports[c] >= 2 ? f->peer[nf_port_index(f, c, 2)] : NF_NONE;
        if (f->nports[c] > 2 || a == NF_NONE) {
            rep[c - S] = 1;
            continue;
        }
        if (b != NF_NONE && b < a) {
            uint64_t x = a;
            a = b;
            b = x;
        }
        uint64_t key = a * (S + 1) + (b == NF_NONE ? S : b);
        uint32_t v;
        rep[c - S] = !nf__u64map_get(&seen, key, &v);
        if (rep[c - S] && nf__u64map_put(&seen, key, c)) {
            nf__u64map_fini(&seen);
            return NF_ENOMEM;
        }
    }
    nf__u64map_fini(&seen);
    return NF_OK;
}

int nf_lft_check(const nf_lft *t, int threads, uint64_t *lookups, uint64_t *mismatches,
                 nf_diag *diag) {
    const nf_fabric *f = t->f;
    uint32_t S = f->n_switches;
    uint8_t *rep = nf__malloc((size_t)f->n_cas + 1);
    if (!rep) return NF_ENOMEM;
    int rc = representatives(f, rep);
    if (rc) {
        nf__free(rep);
        return rc;
    }
    uint64_t looked = 0, bad = 0;
    int64_t first = -1; /* the first mismatch: switch * n_nodes + endpoint, smallest */
    int nth = threads > 0 ? threads : omp_get_max_threads();
#pragma omp parallel for num_threads(nth) schedule(dynamic, 16) reduction(+ : looked, bad)
    for (int64_t s = 0; s < (int64_t)S; s++) {
        uint8_t flat[NF_MAX_PORTS];
        for (nf_node c = S; c < f->n_nodes; c++) {
            if (!rep[c - S] && t->sw_sn[s] != f->supernode[c]) continue;
            const uint8_t *two;
            unsigned k2 = nf_lft_lookup(t, (nf_node)s, c, &two);
            unsigned k1 = nf_lft_flat_entry(f, t->h, (nf_node)s, c, flat, NF_MAX_PORTS);
            looked++;
            if (k1 == k2 && memcmp(flat, two, k1) == 0) continue;
            bad++;
            int64_t at = s * (int64_t)f->n_nodes + c;
#pragma omp critical(nf_lft_first)
            if (first < 0 || at < first) first = at;
        }
    }
    nf__free(rep);
    *lookups = looked;
    *mismatches = bad;
    if (first >= 0) {
        nf_node s = (nf_node)(first / f->n_nodes), c = (nf_node)(first % f->n_nodes);
        const uint8_t *two;
        uint8_t flat[NF_MAX_PORTS];
        unsigned k2 = nf_lft_lookup(t, s, c, &two);
        unsigned k1 = nf_lft_flat_entry(f, t->h, s, c, flat, NF_MAX_PORTS);
        char a[96] = "", b[96] = "";
        for (unsigned i = 0, n = 0; i < k1 && n + 5 < sizeof a; i++)
            n += (unsigned)snprintf(a + n, sizeof a - n, "%s%u", i ? "," : "", flat[i]);
        for (unsigned i = 0, n = 0; i < k2 && n + 5 < sizeof b; i++)
            n += (unsigned)snprintf(b + n, sizeof b - n, "%s%u", i ? "," : "", two[i]);
        nf__fail(diag, NF_OK, "%s to %s: flat ports {%s}, two-level {%s}", nf_node_name(f, s),
                 nf_node_name(f, c), a, b);
    }
    return NF_OK;
}

/* ---- deterministic tables that survive link failures ---------------------------------------- */

struct nf_ftable {
    const nf_fabric *f;
    uint32_t E;    /* endpoints: CA ids n_switches .. n_nodes-1 */
    uint64_t *off; /* per (switch, endpoint), s * E + e: offset into ports; one more at the end */
    uint8_t *ports;
};

void nf_ftable_free(nf_ftable *t) {
    if (!t) return;
    nf__free(t->off);
    nf__free(t->ports);
    nf__free(t);
}

/* The entry of (s, ca) into out (room for NF_MAX_PORTS): the ports at the shortest distance,
 * then those one longer, each run rotated by e. */
static unsigned ft_entry(const nf_fabric *f, const nf_hops *h, nf_node s, nf_node ca, uint32_t e,
                         uint8_t *out) {
    uint8_t d[NF_MAX_PORTS + 1];
    unsigned best = port_dists(f, h, s, ca, d);
    /* runs: the shortest; one longer over ordinary links (a spine down to the sibling of a
     * leaf it lost); one longer over sibling links (across to the sibling router) */
    unsigned n = 0;
    for (unsigned run = 0; run < 3 && best < NF_HOPS_INF - 1; run++) {
        unsigned first = n, want = best + (run > 0);
        for (unsigned p = 1; p <= f->nports[s]; p++) {
            if (d[p] != want) continue;
            bool sib = f->link_cls[f->port_link[nf_port_index(f, s, p)]] == NF_LINK_SIBLING;
            if (run == 0 || sib == (run == 2)) out[n++] = (uint8_t)p;
        }
        unsigned k = n - first;
        if (k > 1) { /* rotate the run left by e mod k */
            uint8_t tmp[NF_MAX_PORTS];
            unsigned r = e % k;
            for (unsigned i = 0; i < k; i++)
                tmp[i] = out[first + (i + r) % k];
            memcpy(out + first, tmp, k);
        }
    }
    return n;
}

int nf_ftable_build(const nf_fabric *f, const nf_hops *h, int threads, nf_ftable **out) {
    *out = NULL;
    uint32_t S = f->n_switches, E = f->n_cas;
    nf_ftable *t = nf__calloc(1, sizeof *t);
    if (!t) return NF_ENOMEM;
    t->f = f;
    t->E = E;
    size_t cells = (size_t)S * E;
    t->off = nf__malloc((cells + 1) * sizeof *t->off);
    uint64_t *cnt = nf__calloc((size_t)S + 1, sizeof *cnt);
    if (!t->off || !cnt) goto oom;
    int nth = threads > 0 ? threads : omp_get_max_threads();
#pragma omp parallel for num_threads(nth) schedule(dynamic, 4)
    for (int64_t s = 0; s < (int64_t)S; s++) {
        uint8_t buf[NF_MAX_PORTS];
        uint64_t n = 0;
        for (uint32_t e = 0; e < E; e++)
            n += ft_entry(f, h, (nf_node)s, S + e, e, buf);
        cnt[s + 1] = n;
    }
    for (uint32_t s = 0; s < S; s++)
        cnt[s + 1] += cnt[s];
    t->ports = nf__malloc(cnt[S] + 1);
    if (!t->ports) goto oom;
#pragma omp parallel for num_threads(nth) schedule(dynamic, 4)
    for (int64_t s = 0; s < (int64_t)S; s++) {
        uint64_t n = cnt[s];
        for (uint32_t e = 0; e < E; e++) {
            t->off[(size_t)s * E + e] = n;
            n += ft_entry(f, h, (nf_node)s, S + e, e, t->ports + n);
        }
    }
    t->off[cells] = cnt[S];
    nf__free(cnt);
    *out = t;
    return NF_OK;
oom:
    nf__free(cnt);
    nf_ftable_free(t);
    return NF_ENOMEM;
}

unsigned nf_ftable_entry(const nf_ftable *t, nf_node s, nf_node ca, const uint8_t **ports) {
    const nf_fabric *f = t->f;
    *ports = t->ports;
    if (s >= f->n_switches || ca < f->n_switches || ca >= f->n_nodes) return 0;
    size_t k = (size_t)s * t->E + (ca - f->n_switches);
    *ports = t->ports + t->off[k];
    return (unsigned)(t->off[k + 1] - t->off[k]);
}

unsigned nf_ftable_next(const nf_ftable *t, const uint8_t *link_state, nf_node s, nf_node ca) {
    const nf_fabric *f = t->f;
    const uint8_t *p;
    unsigned n = nf_ftable_entry(t, s, ca, &p);
    for (unsigned i = 0; i < n; i++)
        if (link_state[f->port_link[nf_port_index(f, s, p[i])]] == NF_LINK_UP) return p[i];
    return 0;
}

int nf_ftable_reach(const nf_ftable *t, int threads, uint64_t *pairs, uint64_t *reached) {
    const nf_fabric *f = t->f;
    uint32_t S = f->n_switches, E = t->E;
    int nth = threads > 0 ? threads : omp_get_max_threads();
    /* per thread: a state per switch (0 unknown, 1 on the walk, 2 reaches, 3 does not) and the
     * walk's stack */
    uint8_t *state = nf__malloc((size_t)nth * (S + 1));
    nf_node *stack = nf__malloc((size_t)nth * (S + 1) * sizeof *stack);
    if (!state || !stack) {
        nf__free(state);
        nf__free(stack);
        return NF_ENOMEM;
    }
    uint64_t got = 0;
#pragma omp parallel for num_threads(nth) schedule(dynamic, 8) reduction(+ : got)
    for (int64_t e = 0; e < (int64_t)E; e++) {
        uint8_t *st = state + (size_t)omp_get_thread_num() * (S + 1);
        nf_node *stk = stack + (size_t)omp_get_thread_num() * (S + 1);
        nf_node ca = S + (nf_node)e;
        memset(st, 0, S);
        for (nf_node s0 = 0; s0 < S; s0++) {
            if (st[s0]) continue;
            unsigned top = 0;
            uint8_t verdict = 3;
            nf_node s = s0;
            for (;;) {
                if (st[s] == 1) break; /* a loop: lost */
                if (st[s] >= 2) {
                    verdict = st[s];
                    break;
                }
                st[s] = 1;
                stk[top++] = s;
                unsigned p = nf_ftable_next(t, f->link_state, s, ca);
                if (!p) break;
                nf_node w = f->peer[nf_port_index(f, s, p)];
                if (w == ca) {
                    verdict = 2;
                    break;
                }
                if (w >= S) break; /* another endpoint */
                s = w;
            }
            while (top)
                st[stk[--top]] = verdict;
        }
        for (nf_node c = S; c < f->n_nodes; c++) {
            if (c == ca) continue;
            for (unsigned cp = 1; cp <= f->nports[c]; cp++) {
                nf_gport g = nf_port_index(f, c, cp);
                nf_node s = f->peer[g];
                if (s < S && f->link_state[f->port_link[g]] == NF_LINK_UP && st[s] == 2) {
                    got++;
                    break;
                }
            }
        }
    }
    nf__free(state);
    nf__free(stack);
    *pairs = (uint64_t)E * (E ? E - 1 : 0);
    *reached = got;
    return NF_OK;
}
