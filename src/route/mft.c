/* SPDX-License-Identifier: MIT */
/* Installed multicast forwarding tables (mft.h): sparse rows of 256-bit port masks, one per
 * (switch, MLID) pair with a port set, found through a hash index; the readers of the real tools'
 * layouts, OpenSM's writer, and the per-MLID tree analysis with link loads. */
#include "netfab/mft.h"
#include "netfab/io.h"

#include "route/mcast_engine.h"
#include "util/diag.h"
#include "util/mem.h"
#include "util/sort.h"
#include "util/textfile.h"
#include "util/u64map.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

typedef struct mrow {
    uint64_t mask[4]; /* ports 0 .. 255 */
    nf_node sw;
    uint16_t mlid;
} mrow;

struct nf_mft {
    const nf_fabric *f;
    mrow *row;
    size_t n, cap;
    nf__u64map idx; /* mlid << 32 | switch -> row */
};

static uint64_t row_key(nf_node s, uint16_t mlid) { return (uint64_t)mlid << 32 | s; }

static bool mask_has(const uint64_t *m, unsigned p) { return m[p >> 6] >> (p & 63) & 1; }

static bool mask_empty(const uint64_t *m) { return !(m[0] | m[1] | m[2] | m[3]); }

nf_mft *nf_mft_new(const nf_fabric *f) {
    nf_mft *t = nf__calloc(1, sizeof *t);
    if (!t) return NULL;
    t->f = f;
    nf__u64map_init(&t->idx);
    return t;
}

void nf_mft_free(nf_mft *t) {
    if (!t) return;
    nf__free(t->row);
    nf__u64map_fini(&t->idx);
    nf__free(t);
}

static const mrow *find_row(const nf_mft *t, nf_node s, uint16_t mlid) {
    uint32_t i;
    return nf__u64map_get(&t->idx, row_key(s, mlid), &i) ? &t->row[i] : NULL;
}

int nf_mft_set(nf_mft *t, nf_node s, uint16_t mlid, unsigned p, bool on) {
    if (!nf_is_switch(t->f, s) || p > t->f->nports[s] || mlid < NF_MFT_MLID_LO ||
        mlid > NF_MFT_MLID_HI)
        return NF_EINVAL;
    uint32_t i;
    if (!nf__u64map_get(&t->idx, row_key(s, mlid), &i)) {
        if (!on) return NF_OK;
        if (t->n >= UINT32_MAX || NF_GROW(t->row, t->cap, t->n + 1)) return NF_ENOMEM;
        i = (uint32_t)t->n;
        if (nf__u64map_put(&t->idx, row_key(s, mlid), i)) return NF_ENOMEM;
        t->row[t->n++] = (mrow){.sw = s, .mlid = mlid};
    }
    uint64_t bit = (uint64_t)1 << (p & 63);
    if (on)
        t->row[i].mask[p >> 6] |= bit;
    else
        t->row[i].mask[p >> 6] &= ~bit;
    return NF_OK;
}

bool nf_mft_get(const nf_mft *t, nf_node s, uint16_t mlid, unsigned p) {
    if (!nf_is_switch(t->f, s) || p > 255) return false;
    const mrow *r = find_row(t, s, mlid);
    return r && mask_has(r->mask, p);
}

/* The rows with a port set, as indices ordered by key(row) ascending: *ord (nf__free it), *n. */
static int sorted_rows(const nf_mft *t, uint64_t (*key)(const nf_mft *, const mrow *),
                       uint32_t **ord, size_t *n) {
    *ord = nf__malloc((t->n + 1) * sizeof **ord);
    uint64_t *k = nf__malloc((t->n + 1) * sizeof *k);
    int rc = NF_ENOMEM;
    if (!*ord || !k) goto done;
    size_t m = 0;
    for (size_t i = 0; i < t->n; i++)
        if (!mask_empty(t->row[i].mask)) {
            (*ord)[m] = (uint32_t)i;
            k[m++] = key(t, &t->row[i]);
        }
    *n = m;
    rc = nf__sort_ids_by_key(*ord, k, m);
done:
    nf__free(k);
    if (rc) {
        nf__free(*ord);
        *ord = NULL;
    }
    return rc;
}

static uint64_t key_mlid_sw(const nf_mft *t, const mrow *r) {
    (void)t;
    return row_key(r->sw, r->mlid);
}

int nf_mft_mlids(const nf_mft *t, uint16_t **mlids, size_t *n) {
    *mlids = NULL;
    *n = 0;
    uint32_t *ord;
    size_t m;
    if (sorted_rows(t, key_mlid_sw, &ord, &m)) return NF_ENOMEM;
    size_t k = 0;
    for (size_t i = 0; i < m; i++)
        k += !i || t->row[ord[i]].mlid != t->row[ord[i - 1]].mlid;
    if (k && !(*mlids = nf__malloc(k * sizeof **mlids))) {
        nf__free(ord);
        return NF_ENOMEM;
    }
    for (size_t i = 0; i < m; i++)
        if (!i || t->row[ord[i]].mlid != t->row[ord[i - 1]].mlid)
            (*mlids)[(*n)++] = t->row[ord[i]].mlid;
    nf__free(ord);
    return NF_OK;
}

/* The lowest port set in mask a but not in b, or 256. */
static unsigned first_extra(const uint64_t *a, const uint64_t *b) {
    for (unsigned w = 0; w < 4; w++) {
        uint64_t x = a[w] & ~b[w];
        if (x) return w * 64 + (unsigned)__builtin_ctzll(x);
    }
    return 256;
}

bool nf_mft_equal(const nf_mft *a, const nf_mft *b, nf_diag *diag) {
    static const uint64_t none[4] = {0};
    bool same = a->f == b->f;
    if (!same) {
        nf__fail(diag, NF_EINVAL, "tables of two different fabrics");
        return false;
    }
    /* every row of one side against the other, both ways; report the least (MLID, switch) */
    uint64_t worst = UINT64_MAX;
    unsigned port = 0;
    bool in_a = false;
    for (int side = 0; side < 2; side++) {
        const nf_mft *x = side ? b : a, *y = side ? a : b;
        for (size_t i = 0; i < x->n; i++) {
            const mrow *r = &x->row[i], *o = find_row(y, r->sw, r->mlid);
            unsigned p = first_extra(r->mask, o ? o->mask : none);
            uint64_t k = row_key(r->sw, r->mlid);
            if (p < 256 && k < worst) {
                worst = k;
                port = p;
                in_a = side == 0;
            }
        }
    }
    if (worst == UINT64_MAX) return true;
    nf_node s = (nf_node)(worst & 0xFFFFFFFFu);
    nf__fail(diag, NF_EINVAL, "MLID 0x%04X on switch %s (0x%016" PRIx64 "): port %u only in the %s",
             (unsigned)(worst >> 32), nf_node_name(a->f, s), a->f->guid[s], port,
             in_a ? "first" : "second");
    return false;
}

/* ---- reading -------------------------------------------------------------------------------- */

typedef enum layout { LAYOUT_NONE, LAYOUT_DIAGS, LAYOUT_OPENSM } layout;

/* The state of one parse. */
typedef struct mparse {
    const nf_fabric *f;
    nf_mft *t;
    const char *file;
    nf_diag *diag;
    int line;
    layout lay;
    nf_node sw;
    bool *seen;     /* per switch: its header was read */
    uint16_t *col;  /* dump_fts -M: col[k] is the column of port k's digit */
    unsigned ncols; /* ports in the "Ports:" header; 0 before it */
    nf__tally no_link;
} mparse;

static int perr(mparse *c, const char *what) {
    return nf__fail_at(c->diag, NF_EPARSE, c->file, c->line, "%s", what);
}

/* A switch header's GUID: the switch, checked to be new. */
static int take_switch(mparse *c, uint64_t guid) {
    nf_node s = nf_fabric_find_guid(c->f, guid);
    if (s == NF_NONE || !nf_is_switch(c->f, s))
        return nf__fail_at(c->diag, NF_EPARSE, c->file, c->line,
                           "switch GUID 0x%016" PRIx64 " is no switch of the fabric", guid);
    if (c->seen[s])
        return nf__fail_at(c->diag, NF_EPARSE, c->file, c->line,
                           "switch %s (0x%016" PRIx64 ") listed twice", nf_node_name(c->f, s),
                           guid);
    c->seen[s] = true;
    c->sw = s;
    c->ncols = 0;
    return NF_OK;
}

static int add_port(mparse *c, uint64_t mlid, uint64_t port) {
    const nf_fabric *f = c->f;
    if (mlid < NF_MFT_MLID_LO || mlid > NF_MFT_MLID_HI)
        return nf__fail_at(c->diag, NF_EPARSE, c->file, c->line,
                           "MLID 0x%" PRIx64 " is outside the multicast range 0xC000-0xFFFE", mlid);
    if (port > f->nports[c->sw])
        return nf__fail_at(c->diag, NF_EPARSE, c->file, c->line,
                           "port %" PRIu64 " of switch %s, which has %u ports", port,
                           nf_node_name(f, c->sw), f->nports[c->sw]);
    if (port && f->peer[nf_port_index(f, c->sw, (unsigned)port)] == NF_NONE)
        nf__tally_add(&c->no_link, c->line);
    return nf_mft_set(c->t, c->sw, (uint16_t)mlid, (unsigned)port, true);
}

/* One line of dump_fts -M / ibroute -M (trailing blanks kept: p .. e). */
static int line_diags(mparse *c, const char *p, const char *e) {
    const char *le = e;
    while (le > p && le[-1] == ' ')
        le--;
    if (nf__starts(p, le, "Multicast mlids [")) {
        for (const char *q = p; q + 8 <= le; q++)
            if (memcmp(q, " guid 0x", 8) == 0) {
                uint64_t guid;
                q += 6;
                if (!nf__hex_at(&q, le, &guid)) break;
                return take_switch(c, guid);
            }
        return perr(c, "switch header without a GUID");
    }
    if (le == p) return NF_OK;
    if (*p == ' ') {
        const char *q = p;
        while (q < le && *q == ' ')
            q++;
        if (nf__starts(q, le, "Ports:")) {
            /* the units digits, two columns apart: the k-th digit is port k */
            c->ncols = 0;
            for (const char *r = q + 6; r < le; r++) {
                if (*r == ' ') continue;
                if (*r < '0' || *r > '9' || (unsigned)(*r - '0') != c->ncols % 10 || c->ncols > 255)
                    return perr(c, "a \"Ports:\" header that does not count 0 1 2 ...");
                c->col[c->ncols++] = (uint16_t)(r - p);
            }
            if (!c->ncols) return perr(c, "a \"Ports:\" header without ports");
            return NF_OK;
        }
        if (nf__starts(q, le, "MLid") && q + 4 == le) return NF_OK;
        for (; q < le; q++) /* the tens digits above "Ports:" */
            if (*q != ' ' && (*q < '0' || *q > '9'))
                return perr(c, "not a line of dump_fts -M or ibroute -M");
        return NF_OK;
    }
    const char *q = p;
    uint64_t mlid;
    if (nf__hex_at(&q, le, &mlid)) {
        if (c->sw == NF_NONE) return perr(c, "an MLID line before any switch header");
        if (!c->ncols) return perr(c, "an MLID line before the \"Ports:\" header");
        unsigned k = 0;
        for (; q < le; q++) {
            if (*q == ' ') continue;
            size_t at = (size_t)(q - p);
            while (k < c->ncols && c->col[k] < at)
                k++;
            if (*q != 'x' || k == c->ncols || c->col[k] != at)
                return nf__fail_at(c->diag, NF_EPARSE, c->file, c->line,
                                   "'%c' in column %zu, not an 'x' under a port of the header", *q,
                                   at + 1);
            int rc = add_port(c, mlid, k);
            if (rc) return rc;
        }
        return NF_OK;
    }
    while (q < le && *q >= '0' && *q <= '9')
        q++;
    if (q > p && nf__starts(q, le, " valid mlids dumped") && q + 19 == le) return NF_OK;
    return perr(c, "not a line of dump_fts -M or ibroute -M");
}

/* One line of opensm.mcfdbs (trailing blanks dropped: p .. le). */
static int line_opensm(mparse *c, const char *p, const char *le) {
    if (le == p || (nf__starts(p, le, "LID    : Out Port(s)") && p + 20 == le)) return NF_OK;
    const char *q = p;
    uint64_t v;
    if (nf__starts(p, le, "Switch 0x")) {
        q += 7;
        if (!nf__hex_at(&q, le, &v) || q != le) return perr(c, "a switch line without a GUID");
        return take_switch(c, v);
    }
    if (!nf__hex_at(&q, le, &v) || !nf__starts(q, le, " :"))
        return perr(c, "not a line of opensm.mcfdbs (want \"0xMLID : 0xPORT ...\")");
    if (c->sw == NF_NONE) return perr(c, "an MLID line before any switch line");
    q += 2;
    bool any = false;
    while (q < le) {
        if (*q == ' ') {
            q++;
            continue;
        }
        uint64_t port;
        if (!nf__hex_at(&q, le, &port) || (q < le && *q != ' '))
            return perr(c, "a port that is not \"0x\" and hexadecimal digits");
        int rc = add_port(c, v, port);
        if (rc) return rc;
        any = true;
    }
    if (!any) return perr(c, "an MLID line without ports");
    return NF_OK;
}

int nf_mft_parse(const nf_fabric *f, const char *text, size_t len, const char *filename,
                 nf_warn_fn warn, void *warn_ud, nf_mft **out, nf_diag *diag) {
    *out = NULL;
    const char *file = filename ? filename : "<tables>";
    if (len > NF_IO_MAX_BYTES)
        return nf__fail_at(diag, NF_EPARSE, file, 0, "larger than %llu MiB: not a table file",
                           (unsigned long long)(NF_IO_MAX_BYTES >> 20));
    mparse c = {.f = f, .file = file, .diag = diag, .sw = NF_NONE};
    c.t = nf_mft_new(f);
    c.seen = nf__calloc((size_t)f->n_switches + 1, sizeof *c.seen);
    c.col = nf__malloc(256 * sizeof *c.col);
    int rc = NF_ENOMEM;
    if (!c.t || !c.seen || !c.col) goto done;
    rc = NF_OK;
    const char *p = text, *end = text + len;
    while (p < end && !rc) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        const char *e = nl ? nl : end;
        c.line++;
        if ((size_t)(e - p) > NF_IO_MAX_LINE) {
            rc = nf__fail_at(diag, NF_EPARSE, file, c.line, "line longer than %u bytes",
                             NF_IO_MAX_LINE);
            break;
        }
        if (memchr(p, '\0', (size_t)(e - p))) {
            rc = perr(&c, "NUL byte: binary data, not a table");
            break;
        }
        if (e > p && e[-1] == '\r') e--;
        const char *le = e;
        while (le > p && (le[-1] == ' ' || le[-1] == '\t'))
            le--;
        if (c.lay == LAYOUT_NONE && le > p) {
            if (nf__starts(p, le, "Multicast mlids ["))
                c.lay = LAYOUT_DIAGS;
            else if (nf__starts(p, le, "Switch 0x"))
                c.lay = LAYOUT_OPENSM;
            else {
                rc = perr(&c, "neither dump_fts -M / ibroute -M (\"Multicast mlids [...\") nor "
                              "opensm.mcfdbs (\"Switch 0x...\")");
                break;
            }
        }
        if (c.lay == LAYOUT_DIAGS)
            rc = line_diags(&c, p, e);
        else if (c.lay == LAYOUT_OPENSM)
            rc = line_opensm(&c, p, le);
        p = nl ? nl + 1 : end;
    }
    if (rc == NF_ENOMEM) nf__fail_at(diag, rc, file, c.line, "out of memory");
    if (!rc && warn && c.no_link.n) {
        char msg[160];
        snprintf(msg, sizeof msg, "%llu ports in the masks have no link (kept)",
                 (unsigned long long)c.no_link.n);
        warn(warn_ud, file, c.no_link.first, msg);
    }
done:
    nf__free(c.seen);
    nf__free(c.col);
    if (rc) {
        nf_mft_free(c.t);
        return rc;
    }
    *out = c.t;
    return NF_OK;
}

int nf_mft_load(const nf_fabric *f, const char *path, nf_warn_fn warn, void *warn_ud, nf_mft **out,
                nf_diag *diag) {
    *out = NULL;
    char *buf;
    size_t len;
    int rc = nf__read_text(path, "a table file", NF_IO_MAX_BYTES, NF_IO_MAX_LINE, &buf, &len, diag);
    if (rc) return rc;
    rc = nf_mft_parse(f, buf ? buf : "", len, path, warn, warn_ud, out, diag);
    nf__free(buf);
    return rc;
}

/* ---- writing -------------------------------------------------------------------------------- */

int nf_mft_write(const nf_mft *t, FILE *out) {
    const nf_fabric *f = t->f;
    uint32_t *ord = NULL, *rank = nf__malloc(((size_t)f->n_switches + 1) * sizeof *rank);
    if (!rank || nf__mc_opensm_order(f, NULL, rank)) {
        nf__free(rank);
        return NF_ENOMEM;
    }
    /* key per row: switch rank << 16 | MLID, sorted through the ids */
    uint64_t *k = nf__malloc((t->n + 1) * sizeof *k);
    ord = nf__malloc((t->n + 1) * sizeof *ord);
    int rc = NF_ENOMEM;
    if (!k || !ord) goto done;
    size_t m = 0;
    for (size_t i = 0; i < t->n; i++)
        if (!mask_empty(t->row[i].mask)) {
            ord[m] = (uint32_t)i;
            k[m++] = (uint64_t)rank[t->row[i].sw] << 16 | t->row[i].mlid;
        }
    if ((rc = nf__sort_ids_by_key(ord, k, m))) goto done;
    nf_node last = NF_NONE;
    for (size_t i = 0; i < m; i++) {
        const mrow *r = &t->row[ord[i]];
        if (r->sw != last)
            fprintf(out, "\nSwitch 0x%016" PRIx64 "\nLID    : Out Port(s)\n", f->guid[r->sw]);
        last = r->sw;
        fprintf(out, "0x%04X :", r->mlid);
        for (unsigned p = 0; p < 256; p++)
            if (mask_has(r->mask, p)) fprintf(out, " 0x%03X ", p);
        fputc('\n', out);
    }
    rc = ferror(out) ? NF_EIO : NF_OK;
done:
    nf__free(rank);
    nf__free(ord);
    nf__free(k);
    return rc;
}

/* ---- analysis ------------------------------------------------------------------------------- */

/* Scratch of the analysis, sized once for the fabric; per group only the entries it touched are
 * reset. Local ids number the switches of one group's tree (those with a row, then those reached
 * by a listed link only). */
typedef struct ascr {
    uint32_t *loc;     /* [switch]: local id, NF_NONE when not in this group's tree */
    nf_node *node;     /* [local]: the switch */
    const mrow **row;  /* [local]: its row, NULL when it has none */
    uint32_t *cas;     /* [local]: member CA ports on it */
    uint8_t *self;     /* [local]: port 0 set */
    uint32_t *uf;      /* [local]: union-find parent */
    uint32_t *adj_off; /* [local + 1] */
    uint32_t *adj;     /* [2 * edges] */
    uint32_t *dist, *queue;
    uint8_t *inport;    /* [local]: the port the forwarded packet came in by */
    nf_link *edge_link; /* per edge */
    uint32_t *edge_a, *edge_z;
    size_t edge_cap;
} ascr;

static uint32_t uf_find(uint32_t *uf, uint32_t x) {
    while (uf[x] != x)
        x = uf[x] = uf[uf[x]];
    return x;
}

static int local_of(ascr *a, nf_node s, uint32_t *nloc, const mrow *r) {
    if (a->loc[s] == NF_NONE) {
        uint32_t i = (*nloc)++;
        a->loc[s] = i;
        a->node[i] = s;
        a->row[i] = r;
        a->cas[i] = 0;
        a->self[i] = 0;
        a->uf[i] = i;
    }
    return (int)a->loc[s];
}

/* The members (CA ports and port-0 switches) in the tree part of local c reaches, and over them
 * the largest distance, a member switch's CAs one link further. From a BFS over the tree's
 * undirected links; fills a->dist. */
static void eccentricity(ascr *a, uint32_t nloc, uint32_t c, uint32_t *reach, uint32_t *ecc) {
    for (uint32_t i = 0; i < nloc; i++)
        a->dist[i] = UINT32_MAX;
    uint32_t head = 0, tail = 0;
    a->dist[c] = 0;
    a->queue[tail++] = c;
    *reach = 0;
    *ecc = 0;
    while (head < tail) {
        uint32_t u = a->queue[head++];
        *reach += a->cas[u] + a->self[u];
        uint32_t d = a->dist[u] + (a->cas[u] ? 1 : 0);
        if ((a->cas[u] || a->self[u]) && d > *ecc) *ecc = d;
        for (uint32_t j = a->adj_off[u]; j < a->adj_off[u + 1]; j++)
            if (a->dist[a->adj[j]] == UINT32_MAX) {
                a->dist[a->adj[j]] = a->dist[u] + 1;
                a->queue[tail++] = a->adj[j];
            }
    }
}

/* Follows the masks from local root r: a switch forwards out of every port of its mask but the
 * one it came in by, each switch handles the packet once (its first arrival). The members hit. */
static uint32_t forward(const nf_fabric *f, ascr *a, uint32_t nloc, uint32_t r) {
    for (uint32_t i = 0; i < nloc; i++)
        a->dist[i] = UINT32_MAX;
    uint32_t head = 0, tail = 0, hit = 0;
    a->dist[r] = 0;
    a->inport[r] = 0;
    a->queue[tail++] = r;
    while (head < tail) {
        uint32_t u = a->queue[head++];
        const mrow *row = a->row[u];
        if (!row) continue; /* a switch with no entry drops the packet */
        nf_node s = a->node[u];
        hit += mask_has(row->mask, 0);
        for (unsigned p = 1; p <= f->nports[s]; p++) {
            if (!mask_has(row->mask, p) || (u != r && p == a->inport[u])) continue;
            nf_gport gp = nf_port_index(f, s, p);
            nf_node z = f->peer[gp];
            if (z == NF_NONE) continue;
            if (!nf_is_switch(f, z)) {
                hit++;
                continue;
            }
            uint32_t w = a->loc[z];
            if (w != NF_NONE && a->dist[w] == UINT32_MAX) {
                a->dist[w] = a->dist[u] + 1;
                a->inport[w] = f->peer_port[gp];
                a->queue[tail++] = w;
            }
        }
    }
    return hit;
}

static void ascr_free(ascr *a) {
    nf__free(a->loc);
    nf__free(a->node);
    nf__free(a->row);
    nf__free(a->cas);
    nf__free(a->self);
    nf__free(a->uf);
    nf__free(a->adj_off);
    nf__free(a->adj);
    nf__free(a->dist);
    nf__free(a->queue);
    nf__free(a->inport);
    nf__free(a->edge_link);
    nf__free(a->edge_a);
    nf__free(a->edge_z);
}

static int add_edge(ascr *a, size_t *ne, nf_link l, uint32_t u, uint32_t w) {
    if (*ne == a->edge_cap) {
        size_t cap = a->edge_cap ? 2 * a->edge_cap : 64;
        nf_link *el = nf__realloc(a->edge_link, cap * sizeof *el);
        if (el) a->edge_link = el;
        uint32_t *ea = el ? nf__realloc(a->edge_a, cap * sizeof *ea) : NULL;
        if (ea) a->edge_a = ea;
        uint32_t *ez = ea ? nf__realloc(a->edge_z, cap * sizeof *ez) : NULL;
        if (!ez) return NF_ENOMEM;
        a->edge_z = ez;
        a->edge_cap = cap;
    }
    a->edge_link[*ne] = l;
    a->edge_a[*ne] = u;
    a->edge_z[*ne] = w;
    (*ne)++;
    return NF_OK;
}

/* One group: rows ord[b .. e) of one MLID, ascending switch. Fills g (not root_off), its roots
 * into roots (room for every local switch), their number in g->n_roots; adds to efi. */
static int analyze_group(const nf_mft *t, ascr *a, const uint32_t *rank, const uint32_t *ord,
                         size_t b, size_t e, nf_mft_group *g, nf_node *roots, uint32_t *efi) {
    const nf_fabric *f = t->f;
    uint32_t nloc = 0;
    size_t ne = 0;
    int rc = NF_OK;
    *g = (nf_mft_group){.mlid = t->row[ord[b]].mlid};
    for (size_t i = b; i < e; i++)
        local_of(a, t->row[ord[i]].sw, &nloc, &t->row[ord[i]]);
    g->switches = nloc;
    /* the ports of every mask: members, faults, links (each link once) */
    for (size_t i = b; i < e && !rc; i++) {
        const mrow *r = &t->row[ord[i]];
        nf_node s = r->sw;
        uint32_t u = a->loc[s];
        if (mask_has(r->mask, 0)) a->self[u] = 1;
        for (unsigned p = 1; p < 256; p++) {
            if (!mask_has(r->mask, p)) continue;
            nf_gport gp = nf_port_index(f, s, p);
            nf_node z = f->peer[gp];
            if (z == NF_NONE) {
                g->problems |= NF_MFT_NO_LINK;
                continue;
            }
            if (!nf_is_switch(f, z)) {
                a->cas[u]++;
                continue;
            }
            unsigned q = f->peer_port[gp];
            const mrow *zr = find_row(t, z, r->mlid);
            bool back = zr && mask_has(zr->mask, q);
            if (!back) g->problems |= NF_MFT_ASYMMETRIC;
            /* a link both ends list is taken from its lower (switch, port) end */
            if (back && (z < s || (z == s && q < p))) continue;
            uint32_t w = (uint32_t)local_of(a, z, &nloc, zr);
            rc = add_edge(a, &ne, f->port_link[gp], u, w);
        }
    }
    if (rc) goto reset;
    g->links = (uint32_t)ne;
    /* cycles: an edge whose ends are already joined */
    for (size_t j = 0; j < ne; j++) {
        uint32_t x = uf_find(a->uf, a->edge_a[j]), y = uf_find(a->uf, a->edge_z[j]);
        if (x == y)
            g->problems |= NF_MFT_LOOP;
        else
            a->uf[x] = y;
        efi[a->edge_link[j]]++;
    }
    /* undirected adjacency of the tree */
    for (uint32_t i = 0; i <= nloc; i++)
        a->adj_off[i] = 0;
    for (size_t j = 0; j < ne; j++) {
        a->adj_off[a->edge_a[j] + 1]++;
        a->adj_off[a->edge_z[j] + 1]++;
    }
    for (uint32_t i = 0; i < nloc; i++)
        a->adj_off[i + 1] += a->adj_off[i];
    for (uint32_t i = 0; i < nloc; i++) /* queue as the fill cursor */
        a->queue[i] = a->adj_off[i];
    for (size_t j = 0; j < ne; j++) {
        a->adj[a->queue[a->edge_a[j]]++] = a->edge_z[j];
        a->adj[a->queue[a->edge_z[j]]++] = a->edge_a[j];
    }
    for (uint32_t i = 0; i < nloc; i++)
        g->members += a->cas[i] + a->self[i];
    /* roots: among the switches with an entry, those reaching the most members, then the least
     * eccentricity; in OpenSM's order */
    uint32_t best_reach = 0, best_ecc = UINT32_MAX, nr = 0;
    for (uint32_t c = 0; c < g->switches; c++) {
        uint32_t reach, ecc;
        eccentricity(a, nloc, c, &reach, &ecc);
        if (reach > best_reach || (reach == best_reach && ecc < best_ecc)) {
            best_reach = reach;
            best_ecc = ecc;
            nr = 0;
        }
        if (reach == best_reach && ecc == best_ecc) roots[nr++] = a->node[c];
    }
    for (uint32_t i = 1; i < nr; i++) /* few roots: insertion sort by OpenSM rank */
        for (uint32_t j = i; j > 0 && rank[roots[j]] < rank[roots[j - 1]]; j--) {
            nf_node x = roots[j];
            roots[j] = roots[j - 1];
            roots[j - 1] = x;
        }
    g->n_roots = nr;
    g->height = best_ecc;
    g->reached = forward(f, a, nloc, a->loc[roots[0]]);
    if (g->reached < g->members) g->problems |= NF_MFT_UNREACHED;
reset:
    for (uint32_t i = 0; i < nloc; i++)
        a->loc[a->node[i]] = NF_NONE;
    return rc;
}

int nf_mft_analyze(const nf_mft *t, nf_mft_report **out) {
    *out = NULL;
    const nf_fabric *f = t->f;
    uint32_t S = f->n_switches;
    uint32_t *ord = NULL, *rank = NULL;
    size_t m = 0;
    ascr a = {0};
    nf_mft_report *r = nf__calloc(1, sizeof *r);
    int rc = NF_ENOMEM;
    if (!r || sorted_rows(t, key_mlid_sw, &ord, &m) ||
        !(rank = nf__malloc(((size_t)S + 1) * sizeof *rank)) || nf__mc_opensm_order(f, NULL, rank))
        goto done;
    uint32_t ng = 0;
    for (size_t i = 0; i < m; i++)
        ng += !i || t->row[ord[i]].mlid != t->row[ord[i - 1]].mlid;
    size_t Sx = (size_t)S + 1;
    r->group = nf__calloc((size_t)ng + 1, sizeof *r->group);
    r->roots = nf__malloc((m + 1) * sizeof *r->roots);
    r->efi = nf__calloc((size_t)f->n_links + 1, sizeof *r->efi);
    a.loc = nf__malloc(Sx * sizeof *a.loc);
    a.node = nf__malloc(Sx * sizeof *a.node);
    a.row = nf__malloc(Sx * sizeof *a.row);
    a.cas = nf__malloc(Sx * sizeof *a.cas);
    a.self = nf__malloc(Sx);
    a.uf = nf__malloc(Sx * sizeof *a.uf);
    a.adj_off = nf__malloc((Sx + 1) * sizeof *a.adj_off);
    a.dist = nf__malloc(Sx * sizeof *a.dist);
    a.queue = nf__malloc(Sx * sizeof *a.queue);
    a.inport = nf__malloc(Sx);
    nf_node *roots = nf__malloc(Sx * sizeof *roots);
    if (!r->group || !r->roots || !r->efi || !a.loc || !a.node || !a.row || !a.cas || !a.self ||
        !a.uf || !a.adj_off || !a.dist || !a.queue || !a.inport || !roots) {
        nf__free(roots);
        goto done;
    }
    for (nf_node s = 0; s < S; s++)
        a.loc[s] = NF_NONE;
    size_t adj_cap = 0, n_roots = 0;
    uint64_t hsum = 0;
    uint32_t hn = 0;
    rc = NF_OK;
    for (size_t b = 0, k = 0; b < m && !rc; k++) {
        size_t e = b + 1;
        while (e < m && t->row[ord[e]].mlid == t->row[ord[b]].mlid)
            e++;
        /* edges per group are at most the ports set: room for them in adj */
        size_t ports = 0;
        for (size_t i = b; i < e; i++)
            for (unsigned w = 0; w < 4; w++)
                ports += (size_t)__builtin_popcountll(t->row[ord[i]].mask[w]);
        if ((rc = NF_GROW(a.adj, adj_cap, 2 * ports + 1))) break;
        nf_mft_group *g = &r->group[k];
        if ((rc = analyze_group(t, &a, rank, ord, b, e, g, roots, r->efi))) break;
        g->root_off = (uint32_t)n_roots;
        memcpy(r->roots + n_roots, roots, g->n_roots * sizeof *roots);
        n_roots += g->n_roots;
        r->bad_groups += g->problems != 0;
        if (g->height > r->max_height) r->max_height = g->height;
        if (g->members) {
            hsum += g->height;
            hn++;
        }
        b = e;
    }
    nf__free(roots);
    if (rc) goto done;
    r->n_groups = ng;
    r->mean_height = hn ? (double)hsum / hn : 0;
    uint64_t esum = 0;
    for (nf_link l = 0; l < f->n_links; l++)
        if (nf_is_switch(f, f->link_a[l]) && nf_is_switch(f, f->link_z[l])) {
            if (r->efi[l] > r->max_efi) r->max_efi = r->efi[l];
            if (r->efi[l]) {
                r->links_used++;
                esum += r->efi[l];
            }
        }
    r->mean_efi = r->links_used ? (double)esum / r->links_used : 0;
    if (!(r->hist = nf__calloc((size_t)r->max_efi + 1, sizeof *r->hist))) {
        rc = NF_ENOMEM;
        goto done;
    }
    for (nf_link l = 0; l < f->n_links; l++)
        if (nf_is_switch(f, f->link_a[l]) && nf_is_switch(f, f->link_z[l])) r->hist[r->efi[l]]++;
done:
    ascr_free(&a);
    nf__free(ord);
    nf__free(rank);
    if (rc) {
        nf_mft_report_free(r);
        return rc;
    }
    *out = r;
    return NF_OK;
}

void nf_mft_report_free(nf_mft_report *r) {
    if (!r) return;
    nf__free(r->group);
    nf__free(r->roots);
    nf__free(r->efi);
    nf__free(r->hist);
    nf__free(r);
}

static int cmp_node(const void *x, const void *y) {
    nf_node a = *(const nf_node *)x, b = *(const nf_node *)y;
    return (a > b) - (a < b);
}

int nf_mft_groups(const nf_mft *t, nf_groups **out, uint16_t **mlids, nf_diag *diag) {
    *out = NULL;
    *mlids = NULL;
    const nf_fabric *f = t->f;
    uint32_t *ord;
    size_t m;
    if (sorted_rows(t, key_mlid_sw, &ord, &m)) return NF_ENOMEM;
    size_t cap = 1;
    for (size_t i = 0; i < m; i++)
        for (unsigned w = 0; w < 4; w++)
            cap += (size_t)__builtin_popcountll(t->row[ord[i]].mask[w]);
    nf_groups *g = nf__calloc(1, sizeof *g);
    uint16_t *ml = nf__malloc((m + 1) * sizeof *ml);
    int rc = NF_ENOMEM;
    if (!g || !ml || !(g->off = nf__malloc((m + 2) * sizeof *g->off)) ||
        !(g->member = nf__malloc(cap * sizeof *g->member)))
        goto fail;
    uint32_t n = 0, w = 0;
    g->off[0] = 0;
    for (size_t b = 0; b < m;) {
        size_t e = b + 1;
        while (e < m && t->row[ord[e]].mlid == t->row[ord[b]].mlid)
            e++;
        uint32_t start = w;
        for (size_t i = b; i < e; i++) {
            const mrow *r = &t->row[ord[i]];
            for (unsigned p = 1; p <= f->nports[r->sw]; p++) {
                if (!mask_has(r->mask, p)) continue;
                nf_gport gp = nf_port_index(f, r->sw, p);
                nf_node z = f->peer[gp];
                /* a member as nf_groups has them: a CA whose port 1 is this cable */
                if (z != NF_NONE && !nf_is_switch(f, z) && f->peer_port[gp] == 1)
                    g->member[w++] = z;
            }
        }
        qsort(g->member + start, w - start, sizeof *g->member, cmp_node);
        uint32_t k = start;
        for (uint32_t i = start; i < w; i++)
            if (i == start || g->member[i] != g->member[i - 1]) g->member[k++] = g->member[i];
        w = k;
        if (w > start) {
            ml[n] = t->row[ord[b]].mlid;
            g->off[++n] = w;
        }
        b = e;
    }
    if (!n) {
        rc = nf__fail(diag, NF_EINVAL, "no MLID of the tables reaches a CA: no groups");
        goto fail;
    }
    g->n = n;
    nf__free(ord);
    *out = g;
    *mlids = ml;
    return NF_OK;
fail:
    nf__free(ord);
    nf_groups_free(g);
    nf__free(ml);
    return rc;
}
