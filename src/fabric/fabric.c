/* SPDX-License-Identifier: MIT */
/* The fabric model: the builder that collects nodes and links, the freeze that lays them out in
 * dense columns (switches first, CSR switch adjacency), and the checks and comparisons on the
 * frozen form. */
#include "netfab/fabric.h"
#include "util/mem.h"
#include "util/sort.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *nf_link_class_name(nf_link_class c) {
    static const char *names[NF_LINK_NCLASSES] = {"host", "local", "global", "sibling"};
    return (unsigned)c < NF_LINK_NCLASSES ? names[c] : "?";
}

const char *nf_speed_name(nf_speed s) {
    switch (s) {
#define NF_X_SPEED(id, str, mbps)                                                                  \
    case NF_SPEED_##id: return str;
        NF_SPEED_MAP(NF_X_SPEED)
#undef NF_X_SPEED
    default: return "?";
    }
}

int nf_speed_parse(const char *s, size_t len, uint8_t *width, nf_speed *speed) {
    size_t i = 0;
    unsigned w = 0;
    while (i < len && s[i] >= '0' && s[i] <= '9' && w < 100)
        w = w * 10 + (unsigned)(s[i++] - '0');
    if (i == 0 || i >= len || s[i] != 'x' || (w != 1 && w != 2 && w != 4 && w != 8 && w != 12))
        return NF_EPARSE;
    i++;
    static const struct {
        const char *str;
        nf_speed sp;
    } tab[] = {
#define NF_X_SPEED(id, str, mbps) {str, NF_SPEED_##id},
        NF_SPEED_MAP(NF_X_SPEED)
#undef NF_X_SPEED
    };
    for (size_t k = 0; k < sizeof tab / sizeof tab[0]; k++) {
        size_t n = strlen(tab[k].str);
        if (len - i == n && memcmp(s + i, tab[k].str, n) == 0) {
            *width = (uint8_t)w;
            *speed = tab[k].sp;
            return NF_OK;
        }
    }
    return NF_EPARSE;
}

/* ---- builder ------------------------------------------------------------------------------- */

struct nf_builder {
    size_t n_nodes, cap_nodes;
    uint8_t *kind, *nports, *lmc, *level, *plane;
    uint32_t *port_off, *vendid, *devid, *name_off;
    uint64_t *guid, *sysimgguid;
    uint16_t *lid;
    int32_t *supernode;

    char *names;
    size_t names_len, names_cap;

    size_t n_ports, cap_ports;
    nf_node *peer;
    uint8_t *peer_port, *port_lmc;
    nf_link *port_link;
    uint64_t *port_guid;
    uint16_t *port_lid;

    size_t n_links, cap_links;
    nf_node *la, *lz;
    uint8_t *lpa, *lpz, *lcls, *lwidth, *lspeed, *lplane;
};

nf_builder *nf_builder_new(size_t nodes_hint, size_t links_hint) {
    (void)nodes_hint;
    (void)links_hint;
    nf_builder *b = nf__calloc(1, sizeof *b);
    if (!b) return NULL;
    /* names[0] is the empty name shared by unnamed nodes */
    if (NF_GROW(b->names, b->names_cap, 1)) {
        nf__free(b);
        return NULL;
    }
    b->names[0] = '\0';
    b->names_len = 1;
    return b;
}

static void builder_release(nf_builder *b) {
    void *cols[] = {
        b->kind,  b->nports,    b->lmc,      b->level,      b->plane,     b->port_off,  b->vendid,
        b->devid, b->name_off,  b->guid,     b->sysimgguid, b->lid,       b->supernode, b->names,
        b->peer,  b->peer_port, b->port_lmc, b->port_link,  b->port_guid, b->port_lid,  b->la,
        b->lz,    b->lpa,       b->lpz,      b->lcls,       b->lwidth,    b->lspeed,    b->lplane};
    for (size_t i = 0; i < sizeof cols / sizeof cols[0]; i++)
        nf__free(cols[i]);
}

void nf_builder_free(nf_builder *b) {
    if (!b) return;
    builder_release(b);
    nf__free(b);
}

/* Empties b, keeping the allocation of the names pool (which always holds the empty name). */
static void builder_reset(nf_builder *b) {
    char *names = b->names;
    size_t names_cap = b->names_cap;
    b->names = NULL;
    builder_release(b);
    memset(b, 0, sizeof *b);
    b->names = names;
    b->names_cap = names_cap;
    b->names_len = 1;
}

size_t nf_builder_node_count(const nf_builder *b) { return b->n_nodes; }

/* Grows every node column to hold need nodes. Columns are grown one by one, so a failure may
 * leave some longer than others; only cap_nodes (the common minimum) is trusted. */
static int grow_nodes(nf_builder *b, size_t need) {
    if (need <= b->cap_nodes) return NF_OK;
    size_t cap = b->cap_nodes ? b->cap_nodes * 2 : 64;
    while (cap < need)
        cap *= 2;
#define G(col)                                                                                     \
    do {                                                                                           \
        void *p = nf__realloc(b->col, cap * sizeof(*b->col));                                      \
        if (!p) return NF_ENOMEM;                                                                  \
        b->col = p;                                                                                \
    } while (0)
    G(kind);
    G(nports);
    G(lmc);
    G(level);
    G(plane);
    G(vendid);
    G(devid);
    G(name_off);
    G(guid);
    G(sysimgguid);
    G(lid);
    G(supernode);
    {
        void *p = nf__realloc(b->port_off, (cap + 1) * sizeof(*b->port_off));
        if (!p) return NF_ENOMEM;
        b->port_off = p;
    }
    b->cap_nodes = cap;
    return NF_OK;
}

static int grow_ports(nf_builder *b, size_t need) {
    if (need <= b->cap_ports) return NF_OK;
    size_t cap = b->cap_ports ? b->cap_ports * 2 : 256;
    while (cap < need)
        cap *= 2;
    G(peer);
    G(peer_port);
    G(port_lmc);
    G(port_link);
    G(port_guid);
    G(port_lid);
    b->cap_ports = cap;
    return NF_OK;
}

static int grow_links(nf_builder *b, size_t need) {
    if (need <= b->cap_links) return NF_OK;
    size_t cap = b->cap_links ? b->cap_links * 2 : 256;
    while (cap < need)
        cap *= 2;
    G(la);
    G(lz);
    G(lpa);
    G(lpz);
    G(lcls);
    G(lwidth);
    G(lspeed);
    G(lplane);
#undef G
    b->cap_links = cap;
    return NF_OK;
}

int nf_builder_add_node(nf_builder *b, nf_node_kind kind, unsigned nports, const nf_node_attr *attr,
                        nf_node *out) {
    if (nports < 1 || nports > NF_MAX_PORTS || (kind != NF_NODE_SWITCH && kind != NF_NODE_CA))
        return NF_EINVAL;
    if (b->n_nodes >= NF_NONE - 1 || b->n_ports + nports >= NF_NONE) return NF_ERANGE;
    int rc;
    if ((rc = grow_nodes(b, b->n_nodes + 1)) || (rc = grow_ports(b, b->n_ports + nports)))
        return rc;
    static const nf_node_attr none = {.supernode = -1};
    if (!attr) attr = &none;
    uint32_t name_off = 0;
    if (attr->name && attr->name[0]) {
        size_t n = strlen(attr->name) + 1;
        if ((rc = NF_GROW(b->names, b->names_cap, b->names_len + n))) return rc;
        memcpy(b->names + b->names_len, attr->name, n);
        name_off = (uint32_t)b->names_len;
        b->names_len += n;
    }
    nf_node id = (nf_node)b->n_nodes;
    b->kind[id] = (uint8_t)kind;
    b->nports[id] = (uint8_t)nports;
    b->lmc[id] = attr->lmc;
    b->level[id] = attr->level;
    b->plane[id] = attr->plane;
    b->vendid[id] = attr->vendid;
    b->devid[id] = attr->devid;
    b->name_off[id] = name_off;
    b->guid[id] = attr->guid;
    b->sysimgguid[id] = attr->sysimgguid;
    b->lid[id] = attr->lid;
    b->supernode[id] = attr->supernode;
    b->port_off[id] = (uint32_t)b->n_ports;
    for (size_t i = b->n_ports; i < b->n_ports + nports; i++) {
        b->peer[i] = NF_NONE;
        b->peer_port[i] = 0;
        b->port_link[i] = NF_NONE;
        b->port_guid[i] = 0;
        b->port_lid[i] = kind == NF_NODE_SWITCH ? attr->lid : 0;
        b->port_lmc[i] = attr->lmc;
    }
    b->n_ports += nports;
    b->n_nodes++;
    b->port_off[b->n_nodes] = (uint32_t)b->n_ports;
    *out = id;
    return NF_OK;
}

int nf_builder_connect(nf_builder *b, nf_node a, unsigned pa, nf_node z, unsigned pz,
                       const nf_link_attr *attr) {
    if (a >= b->n_nodes || z >= b->n_nodes) return NF_EINVAL;
    if (pa < 1 || pa > b->nports[a] || pz < 1 || pz > b->nports[z]) return NF_ERANGE;
    if (a == z && pa == pz) return NF_EINVAL;
    size_t ga = b->port_off[a] + pa - 1, gz = b->port_off[z] + pz - 1;
    if (b->peer[ga] != NF_NONE || b->peer[gz] != NF_NONE) return NF_EBUSY;
    if (b->n_links >= NF_NONE - 1) return NF_ERANGE;
    int rc = grow_links(b, b->n_links + 1);
    if (rc) return rc;
    static const nf_link_attr none = {0};
    if (!attr) attr = &none;
    nf_link l = (nf_link)b->n_links++;
    b->la[l] = a;
    b->lpa[l] = (uint8_t)pa;
    b->lz[l] = z;
    b->lpz[l] = (uint8_t)pz;
    b->lcls[l] = (uint8_t)attr->cls;
    b->lwidth[l] = attr->width;
    b->lspeed[l] = (uint8_t)attr->speed;
    b->lplane[l] = attr->plane;
    b->peer[ga] = z;
    b->peer_port[ga] = (uint8_t)pz;
    b->port_link[ga] = l;
    b->peer[gz] = a;
    b->peer_port[gz] = (uint8_t)pa;
    b->port_link[gz] = l;
    return NF_OK;
}

int nf_builder_set_port(nf_builder *b, nf_node n, unsigned port, uint64_t guid, uint16_t lid,
                        uint8_t lmc) {
    if (n >= b->n_nodes) return NF_EINVAL;
    if (port < 1 || port > b->nports[n]) return NF_ERANGE;
    size_t g = b->port_off[n] + port - 1;
    b->port_guid[g] = guid;
    b->port_lid[g] = lid;
    b->port_lmc[g] = lmc;
    return NF_OK;
}

nf_node nf_builder_peer(const nf_builder *b, nf_node n, unsigned p, unsigned *peer_port) {
    if (n >= b->n_nodes || p < 1 || p > b->nports[n]) return NF_NONE;
    size_t g = b->port_off[n] + p - 1;
    if (peer_port) *peer_port = b->peer_port[g];
    return b->peer[g];
}

/* ---- freeze -------------------------------------------------------------------------------- */

void nf_fabric_free(nf_fabric *f) {
    if (!f) return;
    void *cols[] = {f->kind,       f->nports,      f->port_off,    f->guid,       f->sysimgguid,
                    f->vendid,     f->devid,       f->lid,         f->lmc,        f->supernode,
                    f->level,      f->plane,       f->name_off,    f->names,      f->peer,
                    f->peer_port,  f->port_link,   f->port_guid,   f->port_lid,   f->port_lmc,
                    f->link_a,     f->link_z,      f->link_pa,     f->link_pz,    f->link_cls,
                    f->link_width, f->link_speed,  f->link_plane,  f->link_state, f->sw_adj_off,
                    f->sw_adj,     f->sw_adj_port, f->sw_adj_link, f->guid_order};
    for (size_t i = 0; i < sizeof cols / sizeof cols[0]; i++)
        nf__free(cols[i]);
    nf__free(f);
}

/* GUIDs the builder invents for nodes that have none: a locally administered-looking prefix, the
 * node id shifted to leave room for per-port GUIDs. */
#define NF_AUTO_GUID_BASE 0x0002c90000000000ULL

int nf_builder_freeze(nf_builder *b, bool assign_lids, nf_fabric **out) {
    *out = NULL;
    nf_fabric *f = nf__calloc(1, sizeof *f);
    if (!f) return NF_ENOMEM;
    size_t N = b->n_nodes, P = b->n_ports, L = b->n_links;
    nf_node *perm = nf__malloc((N ? N : 1) * sizeof *perm); /* old id -> new id */
    if (!perm) goto nomem;
    uint32_t ns = 0;
    for (size_t i = 0; i < N; i++)
        ns += b->kind[i] == NF_NODE_SWITCH;
    {
        uint32_t s = 0, c = ns;
        for (size_t i = 0; i < N; i++)
            perm[i] = b->kind[i] == NF_NODE_SWITCH ? s++ : c++;
    }
    f->n_nodes = (uint32_t)N;
    f->n_switches = ns;
    f->n_cas = (uint32_t)N - ns;
    f->n_ports = (uint32_t)P;
    f->n_links = (uint32_t)L;

#define A(col, n)                                                                                  \
    do {                                                                                           \
        if (!(f->col = nf__calloc((n) ? (n) : 1, sizeof(*f->col)))) goto nomem;                    \
    } while (0)
    A(kind, N);
    A(nports, N);
    A(port_off, N + 1);
    A(guid, N);
    A(sysimgguid, N);
    A(vendid, N);
    A(devid, N);
    A(lid, N);
    A(lmc, N);
    A(supernode, N);
    A(level, N);
    A(plane, N);
    A(name_off, N);
    A(guid_order, N);
    A(peer, P);
    A(peer_port, P);
    A(port_link, P);
    A(port_guid, P);
    A(port_lid, P);
    A(port_lmc, P);
    A(link_a, L);
    A(link_z, L);
    A(link_pa, L);
    A(link_pz, L);
    A(link_cls, L);
    A(link_width, L);
    A(link_speed, L);
    A(link_plane, L);
    A(link_state, L);
    A(sw_adj_off, (size_t)ns + 1);
    if (!(f->names = nf__malloc(b->names_len))) goto nomem;
    memcpy(f->names, b->names, b->names_len);

    /* node columns in the new order, then port offsets */
    for (size_t i = 0; i < N; i++) {
        nf_node n = perm[i];
        f->kind[n] = b->kind[i];
        f->nports[n] = b->nports[i];
        f->guid[n] = b->guid[i] ? b->guid[i] : NF_AUTO_GUID_BASE + (((uint64_t)n + 1) << 4);
        f->sysimgguid[n] = b->sysimgguid[i];
        f->vendid[n] = b->vendid[i];
        f->devid[n] = b->devid[i];
        f->lid[n] = b->lid[i];
        f->lmc[n] = b->lmc[i];
        f->supernode[n] = b->supernode[i];
        f->level[n] = b->level[i];
        f->plane[n] = b->plane[i];
        f->name_off[n] = b->name_off[i];
    }
    f->port_off[0] = 0;
    for (size_t n = 0; n < N; n++)
        f->port_off[n + 1] = f->port_off[n] + f->nports[n];
    for (size_t i = 0; i < N; i++) {
        nf_node n = perm[i];
        for (unsigned p = 0; p < b->nports[i]; p++) {
            size_t go = b->port_off[i] + p, gn = f->port_off[n] + p;
            f->peer[gn] = b->peer[go] == NF_NONE ? NF_NONE : perm[b->peer[go]];
            f->peer_port[gn] = b->peer_port[go];
            f->port_link[gn] = b->port_link[go];
            f->port_guid[gn] = b->port_guid[go];
            f->port_lid[gn] = b->port_lid[go];
            f->port_lmc[gn] = b->port_lmc[go];
            if (!f->port_guid[gn])
                f->port_guid[gn] = f->guid[n] + (f->kind[n] == NF_NODE_CA ? p : 0);
        }
    }
    for (size_t l = 0; l < L; l++) {
        f->link_a[l] = perm[b->la[l]];
        f->link_z[l] = perm[b->lz[l]];
        f->link_pa[l] = b->lpa[l];
        f->link_pz[l] = b->lpz[l];
        f->link_cls[l] = b->lcls[l];
        f->link_width[l] = b->lwidth[l];
        f->link_speed[l] = b->lspeed[l];
        f->link_plane[l] = b->lplane[l];
        f->link_state[l] = NF_LINK_UP;
    }
    uint64_t lids = ns;
    for (nf_node n = ns; n < f->n_nodes; n++)
        lids += f->nports[n];
    if (assign_lids && lids > 0xBFFF) { /* past the unicast LID space: none (all 0) */
        memset(f->lid, 0, f->n_nodes * sizeof *f->lid);
        memset(f->lmc, 0, f->n_nodes * sizeof *f->lmc);
        memset(f->port_lid, 0, f->n_ports * sizeof *f->port_lid);
        memset(f->port_lmc, 0, f->n_ports * sizeof *f->port_lmc);
    } else if (assign_lids) {
        /* switches 1..S, then every CA port in node and port order */
        uint32_t next = 1;
        for (nf_node n = 0; n < f->n_nodes; n++) {
            unsigned cnt = n < ns ? 1 : f->nports[n];
            f->lmc[n] = 0;
            f->lid[n] = (uint16_t)next;
            for (unsigned p = 0; p < f->nports[n]; p++) {
                nf_gport g = f->port_off[n] + p;
                f->port_lid[g] = (uint16_t)(n < ns ? next : next + p);
                f->port_lmc[g] = 0;
            }
            next += cnt;
        }
    } else {
        for (nf_node n = ns; n < f->n_nodes; n++)
            if (!f->lid[n]) f->lid[n] = f->port_lid[f->port_off[n]];
    }

    /* CSR switch adjacency: two passes, count then fill */
    {
        size_t m = 0;
        for (nf_node s = 0; s < ns; s++) {
            f->sw_adj_off[s] = (uint32_t)m;
            for (unsigned p = 0; p < f->nports[s]; p++) {
                nf_node q = f->peer[f->port_off[s] + p];
                m += q != NF_NONE && q < ns && q != s;
            }
        }
        f->sw_adj_off[ns] = (uint32_t)m;
        A(sw_adj, m);
        A(sw_adj_port, m);
        A(sw_adj_link, m);
        m = 0;
        for (nf_node s = 0; s < ns; s++)
            for (unsigned p = 0; p < f->nports[s]; p++) {
                nf_gport g = f->port_off[s] + p;
                nf_node q = f->peer[g];
                if (q == NF_NONE || q >= ns || q == s) continue;
                f->sw_adj[m] = q;
                f->sw_adj_port[m] = (uint8_t)(p + 1);
                f->sw_adj_link[m] = f->port_link[g];
                m++;
            }
    }
#undef A
    {
        uint64_t *key = nf__malloc(((size_t)f->n_nodes + 1) * sizeof *key);
        if (!key) goto nomem;
        for (nf_node n = 0; n < f->n_nodes; n++) {
            f->guid_order[n] = n;
            key[n] = f->guid[n];
        }
        int rc = nf__sort_ids_by_key(f->guid_order, key, f->n_nodes);
        nf__free(key);
        if (rc) goto nomem;
    }

    nf__free(perm);
    builder_reset(b);
    *out = f;
    return NF_OK;
nomem:
    nf__free(perm);
    nf_fabric_free(f);
    return NF_ENOMEM;
}

nf_node nf_fabric_find_guid(const nf_fabric *f, uint64_t guid) {
    size_t lo = 0, hi = f->n_nodes;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        uint64_t g = f->guid[f->guid_order[mid]];
        if (g < guid)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < f->n_nodes && f->guid[f->guid_order[lo]] == guid ? f->guid_order[lo] : NF_NONE;
}

/* ---- checks -------------------------------------------------------------------------------- */

static int fail(nf_diag *d, const char *fmt, unsigned long a, unsigned long b2) {
    if (d) {
        d->file[0] = '\0';
        d->line = 0;
        snprintf(d->msg, sizeof d->msg, fmt, a, b2);
    }
    return NF_EINVAL;
}

int nf_fabric_check(const nf_fabric *f, nf_diag *diag) {
    if (f->n_switches + f->n_cas != f->n_nodes) return fail(diag, "node counts disagree", 0, 0);
    if (f->port_off[f->n_nodes] != f->n_ports)
        return fail(diag, "port offsets end at %lu, not %lu", f->port_off[f->n_nodes], f->n_ports);
    for (nf_node n = 0; n < f->n_nodes; n++) {
        if ((f->kind[n] == NF_NODE_SWITCH) != (n < f->n_switches))
            return fail(diag, "node %lu: kind out of order", n, 0);
        if (f->port_off[n + 1] - f->port_off[n] != f->nports[n])
            return fail(diag, "node %lu: port offsets disagree with port count", n, 0);
        for (unsigned p = 1; p <= f->nports[n]; p++) {
            nf_gport g = nf_port_index(f, n, p);
            nf_node q = f->peer[g];
            if (q == NF_NONE) {
                if (f->port_link[g] != NF_NONE)
                    return fail(diag, "node %lu port %lu: link without peer", n, p);
                continue;
            }
            if (q >= f->n_nodes) return fail(diag, "node %lu port %lu: peer out of range", n, p);
            unsigned qp = f->peer_port[g];
            if (qp < 1 || qp > f->nports[q])
                return fail(diag, "node %lu port %lu: peer port out of range", n, p);
            nf_gport h = nf_port_index(f, q, qp);
            if (f->peer[h] != n || f->peer_port[h] != p)
                return fail(diag, "node %lu port %lu: peer does not point back", n, p);
            nf_link l = f->port_link[g];
            if (l >= f->n_links || f->port_link[h] != l)
                return fail(diag, "node %lu port %lu: link id disagrees", n, p);
            bool ends = (f->link_a[l] == n && f->link_pa[l] == p && f->link_z[l] == q &&
                         f->link_pz[l] == qp) ||
                        (f->link_z[l] == n && f->link_pz[l] == p && f->link_a[l] == q &&
                         f->link_pa[l] == qp);
            if (!ends)
                return fail(diag, "link %lu: ends disagree with port table at node %lu", l, n);
            if (f->kind[n] == NF_NODE_CA && f->kind[q] == NF_NODE_CA)
                return fail(diag, "node %lu port %lu: CA cabled straight to a CA", n, p);
        }
    }
    for (nf_node i = 1; i < f->n_nodes; i++) {
        uint64_t g0 = f->guid[f->guid_order[i - 1]], g1 = f->guid[f->guid_order[i]];
        if (g0 == g1)
            return fail(diag, "nodes %lu and %lu share a GUID", f->guid_order[i - 1],
                        f->guid_order[i]);
        if (g0 > g1)
            return fail(diag, "GUID index out of order at %lu (GUIDs changed after freeze?)", i, 0);
    }
    for (nf_node s = 0; s < f->n_switches; s++)
        for (uint32_t e = f->sw_adj_off[s]; e < f->sw_adj_off[s + 1]; e++) {
            nf_gport g = nf_port_index(f, s, f->sw_adj_port[e]);
            if (f->peer[g] != f->sw_adj[e] || f->port_link[g] != f->sw_adj_link[e])
                return fail(diag, "switch %lu: CSR entry %lu disagrees with the port table", s, e);
        }
    return NF_OK;
}

static bool differ(nf_diag *d, const char *what, uint64_t guid, unsigned port) {
    if (d) {
        d->file[0] = '\0';
        d->line = 0;
        snprintf(d->msg, sizeof d->msg, "node 0x%016llx port %u: %s differs",
                 (unsigned long long)guid, port, what);
    }
    return false;
}

bool nf_fabric_equal(const nf_fabric *a, const nf_fabric *b, bool cmp_lids, bool cmp_attrs,
                     nf_diag *diag) {
    if (a->n_switches != b->n_switches || a->n_cas != b->n_cas || a->n_links != b->n_links) {
        if (diag) {
            diag->file[0] = '\0';
            diag->line = 0;
            snprintf(diag->msg, sizeof diag->msg,
                     "counts differ: %u/%u/%u switches/CAs/links against %u/%u/%u", a->n_switches,
                     a->n_cas, a->n_links, b->n_switches, b->n_cas, b->n_links);
        }
        return false;
    }
    for (nf_node n = 0; n < a->n_nodes; n++) {
        uint64_t g = a->guid[n];
        nf_node m = nf_fabric_find_guid(b, g);
        if (m == NF_NONE) return differ(diag, "presence", g, 0);
        if (a->kind[n] != b->kind[m]) return differ(diag, "kind", g, 0);
        if (a->nports[n] != b->nports[m]) return differ(diag, "port count", g, 0);
        if (strcmp(nf_node_name(a, n), nf_node_name(b, m)) != 0) return differ(diag, "name", g, 0);
        if (cmp_lids && a->lid[n] != b->lid[m]) return differ(diag, "LID", g, 0);
        for (unsigned p = 1; p <= a->nports[n]; p++) {
            nf_gport ga = nf_port_index(a, n, p), gb = nf_port_index(b, m, p);
            nf_node pa = a->peer[ga], pb = b->peer[gb];
            if ((pa == NF_NONE) != (pb == NF_NONE)) return differ(diag, "connection", g, p);
            if (pa == NF_NONE) continue;
            if (a->guid[pa] != b->guid[pb] || a->peer_port[ga] != b->peer_port[gb])
                return differ(diag, "peer", g, p);
            if (cmp_lids && a->port_lid[ga] != b->port_lid[gb])
                return differ(diag, "port LID", g, p);
            if (a->kind[n] == NF_NODE_CA && a->port_guid[ga] != b->port_guid[gb])
                return differ(diag, "port GUID", g, p);
            if (cmp_attrs) {
                nf_link la = a->port_link[ga], lb = b->port_link[gb];
                if (a->link_cls[la] != b->link_cls[lb]) return differ(diag, "link class", g, p);
                if (a->link_width[la] != b->link_width[lb]) return differ(diag, "link width", g, p);
                if (a->link_speed[la] != b->link_speed[lb]) return differ(diag, "link speed", g, p);
            }
        }
    }
    return true;
}

void nf_fabric_count(const nf_fabric *f, nf_fabric_counts *out) {
    memset(out, 0, sizeof *out);
    for (nf_link l = 0; l < f->n_links; l++) {
        if (f->link_cls[l] < NF_LINK_NCLASSES) out->links_by_class[f->link_cls[l]]++;
        out->loopback_links += f->link_a[l] == f->link_z[l];
    }
    for (nf_node s = 0; s < f->n_switches; s++) {
        out->ports_total += f->nports[s];
        if (f->nports[s] > out->max_radix) out->max_radix = f->nports[s];
        for (unsigned p = 1; p <= f->nports[s]; p++)
            out->ports_used += f->peer[nf_port_index(f, s, p)] != NF_NONE;
    }
    for (nf_node c = f->n_switches; c < f->n_nodes; c++)
        for (unsigned p = 1; p <= f->nports[c]; p++)
            out->endpoint_ports += f->peer[nf_port_index(f, c, p)] != NF_NONE;
}

size_t nf_fabric_bytes(const nf_fabric *f) {
    size_t N = f->n_nodes, P = f->n_ports, L = f->n_links, S = f->n_switches;
    size_t per_node = 2 * sizeof(uint8_t) + sizeof(uint32_t) * 4 + sizeof(uint64_t) * 2 +
                      sizeof(uint16_t) + 3 * sizeof(uint8_t) + sizeof(int32_t) + sizeof(nf_node);
    size_t per_port = sizeof(nf_node) + 2 * sizeof(uint8_t) + sizeof(nf_link) + sizeof(uint64_t) +
                      sizeof(uint16_t);
    size_t per_link = 2 * sizeof(nf_node) + 7 * sizeof(uint8_t);
    size_t adj = f->sw_adj_off[S];
    size_t names = 0;
    for (size_t n = 0; n < N; n++) {
        size_t end = f->name_off[n] + strlen(f->names + f->name_off[n]) + 1;
        if (end > names) names = end;
    }
    return sizeof *f + N * per_node + sizeof(uint32_t) + P * per_port + L * per_link +
           (S + 1) * sizeof(uint32_t) +
           adj * (sizeof(nf_node) + sizeof(uint8_t) + sizeof(nf_link)) + names;
}
