/* SPDX-License-Identifier: MIT */
/* Topology generators: standard fat tree, XGFT, the BlueLight/TaihuLight trimmed fat trees,
 * any-D torus, Dragonfly with palm-tree or consecutive global links, the Sunway generalized fat
 * tree; and nf_topo_build, the parser of --topo spec strings. Wiring: README.md, "Generators: exact
 * wiring". */
#include "netfab/gen.h"
#include "netfab/io.h"
#include "util/diag.h"
#include "util/mem.h"

#include <assert.h>
#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#define GEN_PORTS_MAX (1u << 22) /* switches plus CA ports: ~4M, memory stays in GiB */
#define GEN_SAT (1ULL << 40)     /* saturation point of size arithmetic */
#define GEN_WIDTH 4              /* every generated link is 4x EDR */
#define GEN_SPEED NF_SPEED_EDR

static uint64_t sat_mul(uint64_t a, uint64_t b) {
    if (a && b > GEN_SAT / a) return GEN_SAT;
    uint64_t r = a * b;
    return r > GEN_SAT ? GEN_SAT : r;
}

/* Refuse sizes past GEN_PORTS_MAX switches plus CA ports before allocating anything. A fabric
 * within the unicast LID space (49,151 switches plus CA ports) gets LIDs; a larger one is left
 * without (every LID 0, as a subnet no SM has configured): IB cannot address it, the routing
 * engines and the simulator do not need it. */
static int check_size(nf_diag *d, const char *topo, uint64_t switches, uint64_t ca_ports) {
    if (switches + ca_ports > GEN_PORTS_MAX)
        return nf__fail(d, NF_EINVAL,
                        "%s: too large: %llu switches and %llu endpoint ports, more than %u", topo,
                        (unsigned long long)switches, (unsigned long long)ca_ports, GEN_PORTS_MAX);
    return NF_OK;
}

/* ---- builder wrapper with a sticky error ---------------------------------------------------- */

/* The generators add nodes and links in long loops; the first failure is remembered in rc and
 * every later call becomes a no-op, so a loop checks once at its end. Node ids are the builder's
 * insertion indices (the builder starts empty), so a generator computes them as base + index. */
typedef struct gen {
    nf_builder *b;
    const char *topo;
    int rc;
} gen;

static void gen_begin(gen *g, const char *topo) {
    g->topo = topo;
    g->b = nf_builder_new(0, 0);
    g->rc = g->b ? NF_OK : NF_ENOMEM;
}

NF__PRINTF(7, 8)
static nf_node gen_node(gen *g, nf_node_kind kind, unsigned nports, unsigned level,
                        int32_t supernode, unsigned plane, const char *fmt, ...) {
    if (g->rc) return NF_NONE;
    char name[160];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(name, sizeof name, fmt, ap);
    va_end(ap);
    nf_node_attr at = {
        .name = name, .supernode = supernode, .level = (uint8_t)level, .plane = (uint8_t)plane};
    nf_node id = NF_NONE;
    g->rc = nf_builder_add_node(g->b, kind, nports, &at, &id);
    return g->rc ? NF_NONE : id;
}

static void gen_link(gen *g, nf_node a, unsigned pa, nf_node z, unsigned pz, nf_link_class cls,
                     unsigned plane) {
    if (g->rc) return;
    nf_link_attr at = {.cls = cls, .width = GEN_WIDTH, .speed = GEN_SPEED, .plane = (uint8_t)plane};
    g->rc = nf_builder_connect(g->b, a, pa, z, pz, &at);
}

/* The id the next node will get. */
static nf_node gen_next(const gen *g) { return g->rc ? 0 : (nf_node)nf_builder_node_count(g->b); }

static int gen_end(gen *g, nf_fabric **out, nf_diag *diag) {
    if (!g->rc) g->rc = nf_builder_freeze(g->b, true, out);
    nf_builder_free(g->b);
    if (g->rc) {
        *out = NULL;
        return nf__fail(diag, g->rc, "%s: %s while building", g->topo, nf_strerror(g->rc));
    }
    return NF_OK;
}

/* ---- fat tree ------------------------------------------------------------------------------- */

int nf_gen_fattree(unsigned k, nf_fabric **out, nf_diag *diag) {
    *out = NULL;
    if (k < 2 || k % 2 || k > 254)
        return nf__fail(diag, NF_EINVAL, "fattree: k must be even and in 2..254 (got %u)", k);
    unsigned h = k / 2;
    int rc =
        check_size(diag, "fattree", (uint64_t)2 * k * h + (uint64_t)h * h, (uint64_t)k * h * h);
    if (rc) return rc;
    gen g;
    gen_begin(&g, "fattree");
    nf_node e0 = gen_next(&g);
    for (unsigned pod = 0; pod < k; pod++)
        for (unsigned e = 0; e < h; e++)
            gen_node(&g, NF_NODE_SWITCH, k, 1, (int32_t)pod, 0, "ft pod%u edge%u", pod, e);
    nf_node a0 = gen_next(&g);
    for (unsigned pod = 0; pod < k; pod++)
        for (unsigned j = 0; j < h; j++)
            gen_node(&g, NF_NODE_SWITCH, k, 2, (int32_t)pod, 0, "ft pod%u agg%u", pod, j);
    nf_node c0 = gen_next(&g);
    for (unsigned c = 0; c < h * h; c++)
        gen_node(&g, NF_NODE_SWITCH, k, 3, -1, 0, "ft core%u", c);
    nf_node n0 = gen_next(&g);
    for (unsigned pod = 0; pod < k; pod++)
        for (unsigned e = 0; e < h; e++)
            for (unsigned i = 0; i < h; i++)
                gen_node(&g, NF_NODE_CA, 1, 0, (int32_t)pod, 0, "ft pod%u edge%u n%u", pod, e, i);
    for (unsigned pod = 0; pod < k && !g.rc; pod++) {
        for (unsigned e = 0; e < h; e++) {
            nf_node edge = e0 + pod * h + e;
            for (unsigned i = 0; i < h; i++)
                gen_link(&g, n0 + (pod * h + e) * h + i, 1, edge, i + 1, NF_LINK_HOST, 0);
            for (unsigned j = 0; j < h; j++)
                gen_link(&g, edge, h + 1 + j, a0 + pod * h + j, e + 1, NF_LINK_LOCAL, 0);
        }
        for (unsigned j = 0; j < h; j++)
            for (unsigned t = 0; t < h; t++)
                gen_link(&g, a0 + pod * h + j, h + 1 + t, c0 + j * h + t, pod + 1, NF_LINK_LOCAL,
                         0);
    }
    return gen_end(&g, out, diag);
}

/* ---- XGFT ----------------------------------------------------------------------------------- */

/* XGFT(h; m; w) in the standard labelling. A level-i node is labelled (a_h..a_{i+1}, b_i..b_1):
 * the a digits (a_j < m_j) say which level-i subtree it sits in, the b digits (b_j < w_j) which
 * parent was chosen at each level below. Level-i node (a, b) and level-(i+1) node (a', b') are
 * joined iff a_j = a'_j for j >= i+2 and b_j = b'_j for j <= i: the child's a_{i+1} is its index
 * under the parent and the parent's b_{i+1} its index above the child. We number a level-i node
 * idx = A * W_i + B, with A the a digits (a_{i+1} least significant), W_i = w_1 * .. * w_i and B
 * the b digits (b_1 least significant). Then parent t of (A, B) is (A / m_{i+1}, B + W_i * t),
 * reached from the child's up port t and arriving at the parent's down port A mod m_{i+1}; every
 * parent down port gets exactly one child because (A, B, t) is recovered from (A', B', port). */
static int xgft_build(const char *topo, unsigned h, const unsigned *m, const unsigned *w,
                      nf_fabric **out, nf_diag *diag) {
    *out = NULL;
    if (h < 1 || h > NF_XGFT_MAX_H)
        return nf__fail(diag, NF_EINVAL, "%s: h must be in 1..%d (got %u)", topo, NF_XGFT_MAX_H, h);
    for (unsigned i = 0; i < h; i++) {
        if (m[i] < 1) return nf__fail(diag, NF_EINVAL, "%s: m%u must be at least 1", topo, i + 1);
        if (w[i] < 1) return nf__fail(diag, NF_EINVAL, "%s: w%u must be at least 1", topo, i + 1);
    }
    if (w[0] != 1)
        return nf__fail(diag, NF_EINVAL, "%s: w1 must be 1 (endpoints have one port), got %u", topo,
                        w[0]);
    unsigned nports[NF_XGFT_MAX_H + 1] = {1};
    for (unsigned i = 1; i <= h; i++) {
        uint64_t np = (uint64_t)m[i - 1] + (i < h ? w[i] : 0);
        if (np > NF_MAX_PORTS)
            return nf__fail(diag, NF_EINVAL, "%s: level-%u switches would need %llu ports (max %d)",
                            topo, i, (unsigned long long)np, NF_MAX_PORTS);
        nports[i] = (unsigned)np;
    }
    /* W[i] = w_1..w_i, M[i] = m_{i+1}..m_h, count[i] = M[i] * W[i] */
    uint64_t W[NF_XGFT_MAX_H + 1], M[NF_XGFT_MAX_H + 1], count[NF_XGFT_MAX_H + 1];
    W[0] = 1;
    for (unsigned i = 1; i <= h; i++)
        W[i] = sat_mul(W[i - 1], w[i - 1]);
    M[h] = 1;
    for (unsigned i = h; i-- > 0;)
        M[i] = sat_mul(M[i + 1], m[i]);
    uint64_t switches = 0;
    for (unsigned i = 0; i <= h; i++) {
        count[i] = sat_mul(M[i], W[i]);
        if (i) switches += count[i];
    }
    int rc = check_size(diag, topo, switches, count[0]);
    if (rc) return rc;

    unsigned top = h < 2 ? h : 2; /* supernodes are the level-2 subtrees */
    gen g;
    gen_begin(&g, topo);
    nf_node base[NF_XGFT_MAX_H + 1];
    for (unsigned i = 1; i <= h; i++) {
        base[i] = gen_next(&g);
        for (uint64_t idx = 0; idx < count[i]; idx++) {
            int32_t sn = -1;
            if (i <= top) {
                uint64_t a = idx / W[i];
                for (unsigned j = i + 1; j <= top; j++)
                    a /= m[j - 1];
                sn = (int32_t)a;
            }
            gen_node(&g, NF_NODE_SWITCH, nports[i], i, sn, 0, "%s L%u %llu", topo, i,
                     (unsigned long long)idx);
        }
    }
    base[0] = gen_next(&g);
    for (uint64_t idx = 0; idx < count[0]; idx++) {
        uint64_t a = idx;
        for (unsigned j = 1; j <= top; j++)
            a /= m[j - 1];
        gen_node(&g, NF_NODE_CA, 1, 0, (int32_t)a, 0, "%s node %llu", topo,
                 (unsigned long long)idx);
    }
    for (unsigned i = 0; i < h && !g.rc; i++) {
        unsigned mp = m[i], up0 = i ? m[i - 1] : 0; /* m_{i+1}; first up port - 1 */
        for (uint64_t idx = 0; idx < count[i]; idx++) {
            uint64_t A = idx / W[i], B = idx % W[i];
            for (unsigned t = 0; t < w[i]; t++) {
                uint64_t parent = (A / mp) * W[i + 1] + B + W[i] * t;
                gen_link(&g, base[i] + (nf_node)idx, up0 + t + 1, base[i + 1] + (nf_node)parent,
                         (unsigned)(A % mp) + 1, i ? NF_LINK_LOCAL : NF_LINK_HOST, 0);
            }
        }
    }
    return gen_end(&g, out, diag);
}

int nf_gen_xgft(unsigned h, const unsigned *m, const unsigned *w, nf_fabric **out, nf_diag *diag) {
    return xgft_build("xgft", h, m, w, out, diag);
}

/* ---- torus ---------------------------------------------------------------------------------- */

int nf_gen_torus(unsigned nd, const unsigned *dims, unsigned c, nf_fabric **out, nf_diag *diag) {
    *out = NULL;
    if (nd < 1 || nd > NF_TORUS_MAX_D)
        return nf__fail(diag, NF_EINVAL, "torus: 1..%d dimensions, got %u", NF_TORUS_MAX_D, nd);
    for (unsigned d = 0; d < nd; d++)
        if (dims[d] < 1) return nf__fail(diag, NF_EINVAL, "torus: dimension %u has size 0", d + 1);
    if (c < 1) return nf__fail(diag, NF_EINVAL, "torus: c must be at least 1");
    if ((uint64_t)c + 2 * nd > NF_MAX_PORTS)
        return nf__fail(diag, NF_EINVAL, "torus: c + 2*dims = %llu ports, more than %d",
                        (unsigned long long)c + 2 * nd, NF_MAX_PORTS);
    uint64_t n = 1;
    for (unsigned d = 0; d < nd; d++)
        n = sat_mul(n, dims[d]);
    int rc = check_size(diag, "torus", n, sat_mul(n, c));
    if (rc) return rc;
    /* row-major: the last dimension varies fastest */
    uint32_t stride[NF_TORUS_MAX_D];
    stride[nd - 1] = 1;
    for (unsigned d = nd - 1; d-- > 0;)
        stride[d] = stride[d + 1] * dims[d + 1];

    gen g;
    gen_begin(&g, "torus");
    unsigned x[NF_TORUS_MAX_D] = {0};
    char coord[NF_TORUS_MAX_D * 12];
    nf_node s0 = gen_next(&g);
    for (uint32_t s = 0; s < n; s++) {
        size_t pos = 0;
        for (unsigned d = 0; d < nd; d++)
            pos += (size_t)snprintf(coord + pos, sizeof coord - pos, d ? ",%u" : "%u", x[d]);
        gen_node(&g, NF_NODE_SWITCH, c + 2 * nd, 0, -1, 0, "torus %s", coord);
        for (unsigned d = nd; d-- > 0;) { /* odometer */
            if (++x[d] < dims[d]) break;
            x[d] = 0;
        }
    }
    nf_node n0 = gen_next(&g);
    for (uint32_t s = 0; s < n; s++) {
        size_t pos = 0;
        for (unsigned d = 0; d < nd; d++)
            pos += (size_t)snprintf(coord + pos, sizeof coord - pos, d ? ",%u" : "%u",
                                    (unsigned)(s / stride[d] % dims[d]));
        for (unsigned j = 0; j < c; j++)
            gen_node(&g, NF_NODE_CA, 1, 0, -1, 0, "torus %s n%u", coord, j);
    }
    /* each switch cables its +1 port of every dimension to the -1 port of its +1 neighbour, so
     * every link is made once; a dimension of size 2 thus gets two parallel links per pair and a
     * dimension of size 1 none (its two ports stay unconnected) */
    for (uint32_t s = 0; s < n && !g.rc; s++) {
        for (unsigned j = 0; j < c; j++)
            gen_link(&g, n0 + s * c + j, 1, s0 + s, j + 1, NF_LINK_HOST, 0);
        for (unsigned d = 0; d < nd; d++) {
            if (dims[d] < 2) continue;
            uint32_t xd = s / stride[d] % dims[d];
            uint32_t nb = xd + 1 < dims[d] ? s + stride[d] : s - xd * stride[d];
            gen_link(&g, s0 + s, c + 2 * d + 1, s0 + nb, c + 2 * d + 2, NF_LINK_LOCAL, 0);
        }
    }
    rc = gen_end(&g, out, diag);
    if (rc == NF_OK) { /* switches were added first, in row-major order: s0 is 0 */
        _Static_assert(NF_TORUS_MAX_D <= NF_FABRIC_TORUS_MAX_D, "torus geometry fits the fabric");
        (*out)->torus_nd = (uint8_t)nd;
        (*out)->torus_c = (uint8_t)c;
        for (unsigned d = 0; d < nd; d++)
            (*out)->torus_dims[d] = dims[d];
    }
    return rc;
}

/* ---- Dragonfly ------------------------------------------------------------------------------ */

/* Global links. Group i numbers its global ports k = r*h + j (router r, its j-th global port),
 * k = 0..a*h-1. With n = g-1 peer groups, port k has offset o = k mod n and copy c = k / n; only
 * copies c < floor(a*h / n) are cabled, so every pair of groups gets exactly that many links.
 * Offset o of group i names a peer group j, and the link arrives at j's port with the same copy
 * and the offset o2 that names i back, so both maps below are involutions on (group, port)
 * without fixed points: perfect matchings of the used ports.
 *   consecutive: j = (o < i ? o : o+1), o2 = (i < j ? i : i-1). o -> j skips i, so it is a
 *     bijection of 0..n-1 onto the other groups. If o < i then j = o < i, o2 = i-1 >= j names
 *     i-1+1 = i from j, and the offset back is j = o; if o >= i then j = o+1 > i, o2 = i < j names
 *     i, and the offset back is j-1 = o.
 *   palmtree: j = (i - o - 1) mod g, o2 = g - o - 2. Since 1 <= o+1 <= g-1, j is never i; from j,
 *     offset o2 names (i - o - 1 - (g - o - 2) - 1) mod g = i, and the offset back is
 *     g - (g-o-2) - 2 = o.
 * The link is made once, from the smaller group; the larger group's loop asserts that it sees the
 * same pairing from its side (tests/unit/test_gen.c checks every port against these formulas).
 */
static void df_peer(nf_df_arrangement arr, unsigned g, unsigned i, unsigned o, unsigned *j,
                    unsigned *o2) {
    if (arr == NF_DF_CONSECUTIVE) {
        *j = o < i ? o : o + 1;
        *o2 = i < *j ? i : i - 1;
    } else {
        *j = (i + g - o - 1) % g;
        *o2 = g - o - 2;
    }
}

int nf_gen_dragonfly(unsigned a, unsigned p, unsigned h, unsigned g, nf_df_arrangement arr,
                     nf_fabric **out, nf_diag *diag) {
    *out = NULL;
    if (a < 1) return nf__fail(diag, NF_EINVAL, "dragonfly: a must be at least 1");
    if (p < 1) return nf__fail(diag, NF_EINVAL, "dragonfly: p must be at least 1");
    if (h < 1) return nf__fail(diag, NF_EINVAL, "dragonfly: h must be at least 1");
    uint64_t np = (uint64_t)p + a - 1 + h;
    if (np > NF_MAX_PORTS)
        return nf__fail(diag, NF_EINVAL,
                        "dragonfly: p + a - 1 + h = %llu router ports, more than %d",
                        (unsigned long long)np, NF_MAX_PORTS);
    if (arr != NF_DF_PALMTREE && arr != NF_DF_CONSECUTIVE)
        return nf__fail(diag, NF_EINVAL, "dragonfly: unknown arrangement %d", (int)arr);
    unsigned gmax = a * h + 1;
    if (g == 0) g = gmax;
    if (g < 2 || g > gmax)
        return nf__fail(diag, NF_EINVAL, "dragonfly: g must be in 2..%u (a*h+1), got %u", gmax, g);
    int rc = check_size(diag, "dragonfly", (uint64_t)g * a, (uint64_t)g * a * p);
    if (rc) return rc;

    gen gb;
    gen_begin(&gb, "dragonfly");
    nf_node r0 = gen_next(&gb);
    for (unsigned i = 0; i < g; i++)
        for (unsigned r = 0; r < a; r++)
            gen_node(&gb, NF_NODE_SWITCH, (unsigned)np, 0, (int32_t)i, 0, "df g%u r%u", i, r);
    nf_node n0 = gen_next(&gb);
    for (unsigned i = 0; i < g; i++)
        for (unsigned r = 0; r < a; r++)
            for (unsigned e = 0; e < p; e++)
                gen_node(&gb, NF_NODE_CA, 1, 0, (int32_t)i, 0, "df g%u r%u n%u", i, r, e);
    unsigned n = g - 1, used = (a * h / n) * n, gp0 = p + a; /* first global port */
    for (unsigned i = 0; i < g && !gb.rc; i++) {
        nf_node gr = r0 + i * a;
        for (unsigned r = 0; r < a; r++) {
            for (unsigned e = 0; e < p; e++)
                gen_link(&gb, n0 + (i * a + r) * p + e, 1, gr + r, e + 1, NF_LINK_HOST, 0);
            /* router r reaches router q through port p+1+q when q < r, p+q when q > r */
            for (unsigned q = r + 1; q < a; q++)
                gen_link(&gb, gr + r, p + q, gr + q, p + 1 + r, NF_LINK_LOCAL, 0);
        }
        for (unsigned k = 0; k < used; k++) {
            unsigned j, o2;
            df_peer(arr, g, i, k % n, &j, &o2);
            unsigned k2 = (k / n) * n + o2;
            nf_node peer = r0 + j * a + k2 / h;
            if (j > i) {
                gen_link(&gb, gr + k / h, gp0 + k % h, peer, gp0 + k2 % h, NF_LINK_GLOBAL, 0);
            } else if (!gb.rc) { /* made from group j already: the pairing must agree */
                unsigned pp = 0;
                (void)pp;
                assert(nf_builder_peer(gb.b, gr + k / h, gp0 + k % h, &pp) == peer &&
                       pp == gp0 + k2 % h);
            }
        }
    }
    return gen_end(&gb, out, diag);
}

/* ---- generalized fat tree (Sunway) ---------------------------------------------------------- */

int nf_gen_gft(const nf_gft_params *prm, nf_fabric **out, nf_diag *diag) {
    *out = NULL;
    if (!prm) return nf__fail(diag, NF_EINVAL, "gft: no parameters");
    unsigned L = prm->leaves, N = prm->nodes, S = prm->spines, ln = prm->links, sib = prm->sib;
    unsigned rails = prm->rails, radix = prm->radix;
    if (L < 1) return nf__fail(diag, NF_EINVAL, "gft: leaves must be at least 1");
    if (S < 1) return nf__fail(diag, NF_EINVAL, "gft: spines must be at least 1");
    if (N < 1) return nf__fail(diag, NF_EINVAL, "gft: nodes must be at least 1");
    if (ln < 1) return nf__fail(diag, NF_EINVAL, "gft: links must be at least 1");
    if (rails < 1 || rails > 2)
        return nf__fail(diag, NF_EINVAL, "gft: rails must be 1 or 2 (got %u)", rails);
    if (radix < 1 || radix > NF_MAX_PORTS)
        return nf__fail(diag, NF_EINVAL, "gft: radix must be in 1..%d (got %u)", NF_MAX_PORTS,
                        radix);
    if (sib && (L % 2 || S % 2))
        return nf__fail(diag, NF_EINVAL,
                        "gft: leaves and spines must be even to form sibling pairs (got %u and %u)",
                        L, S);
    uint64_t leaf_ports = (uint64_t)N + (uint64_t)S * ln + sib;
    uint64_t spine_ports = (uint64_t)L * ln + sib;
    if (leaf_ports > radix)
        return nf__fail(
            diag, NF_EINVAL,
            "gft: leaf routers need nodes + spines*links + sib = %llu ports, radix is %u",
            (unsigned long long)leaf_ports, radix);
    if (spine_ports > radix)
        return nf__fail(diag, NF_EINVAL,
                        "gft: spine routers need leaves*links + sib = %llu ports, radix is %u",
                        (unsigned long long)spine_ports, radix);
    int rc = check_size(diag, "gft", (uint64_t)rails * (L + S), (uint64_t)L * N * rails);
    if (rc) return rc;

    gen g;
    gen_begin(&g, "gft");
    nf_node leaf0[2], spine0[2];
    for (unsigned r = 0; r < rails; r++) {
        leaf0[r] = gen_next(&g);
        for (unsigned q = 0; q < L; q++)
            gen_node(&g, NF_NODE_SWITCH, radix, 1, (int32_t)(q / 2), r, "gft rail%u leaf%u", r, q);
        spine0[r] = gen_next(&g);
        for (unsigned s = 0; s < S; s++)
            gen_node(&g, NF_NODE_SWITCH, radix, 2, -1, r, "gft rail%u spine%u", r, s);
    }
    nf_node n0 = gen_next(&g);
    for (unsigned q = 0; q < L; q++)
        for (unsigned e = 0; e < N; e++)
            gen_node(&g, NF_NODE_CA, rails, 0, (int32_t)(q / 2), 0, "gft leaf%u n%u", q, e);
    unsigned lsib = N + S * ln + 1, ssib = L * ln + 1; /* first sibling port */
    for (unsigned r = 0; r < rails && !g.rc; r++) {
        for (unsigned q = 0; q < L; q++) {
            for (unsigned e = 0; e < N; e++)
                gen_link(&g, n0 + q * N + e, r + 1, leaf0[r] + q, e + 1, NF_LINK_HOST, r);
            for (unsigned s = 0; s < S; s++)
                for (unsigned l = 0; l < ln; l++)
                    gen_link(&g, leaf0[r] + q, N + s * ln + l + 1, spine0[r] + s, q * ln + l + 1,
                             NF_LINK_LOCAL, r);
        }
        for (unsigned t = 0; t < sib; t++) {
            for (unsigned q = 0; q + 1 < L; q += 2)
                gen_link(&g, leaf0[r] + q, lsib + t, leaf0[r] + q + 1, lsib + t, NF_LINK_SIBLING,
                         r);
            for (unsigned s = 0; s + 1 < S; s += 2)
                gen_link(&g, spine0[r] + s, ssib + t, spine0[r] + s + 1, ssib + t, NF_LINK_SIBLING,
                         r);
        }
    }
    return gen_end(&g, out, diag);
}

/* ---- spec strings --------------------------------------------------------------------------- */

#define SPEC_MAX_ITEMS 16
#define SPEC_NUM_MAX 1000000000u

typedef struct spec_item {
    const char *key, *val;
    size_t klen, vlen;
} spec_item;

/* The parsed argument list of one spec: key=value items and at most one leading positional item
 * (the torus dimensions). Pointers borrow from the spec string. */
typedef struct spec_args {
    const char *topo;
    spec_item item[SPEC_MAX_ITEMS];
    unsigned n;
    const char *pos;
    size_t poslen;
    bool has_pos;
} spec_args;

static int spec_split(const char *topo, const char *args, bool positional, spec_args *sa,
                      nf_diag *diag) {
    memset(sa, 0, sizeof *sa);
    sa->topo = topo;
    if (!args || !*args) return NF_OK;
    const char *s = args;
    for (unsigned idx = 0;; idx++) {
        const char *end = strchr(s, ',');
        size_t len = end ? (size_t)(end - s) : strlen(s);
        if (len == 0) return nf__fail(diag, NF_EINVAL, "%s: empty item in '%.80s'", topo, args);
        const char *eq = memchr(s, '=', len);
        if (!eq) {
            if (!positional || idx > 0)
                return nf__fail(diag, NF_EINVAL, "%s: expected key=value, got '%.*s'", topo,
                                (int)(len > 80 ? 80 : len), s);
            sa->pos = s;
            sa->poslen = len;
            sa->has_pos = true;
        } else {
            size_t klen = (size_t)(eq - s);
            if (klen == 0)
                return nf__fail(diag, NF_EINVAL, "%s: missing key before '=' in '%.*s'", topo,
                                (int)(len > 80 ? 80 : len), s);
            for (unsigned i = 0; i < sa->n; i++)
                if (sa->item[i].klen == klen && memcmp(sa->item[i].key, s, klen) == 0)
                    return nf__fail(diag, NF_EINVAL, "%s: key '%.*s' given twice", topo,
                                    (int)(klen > 80 ? 80 : klen), s);
            if (sa->n == SPEC_MAX_ITEMS)
                return nf__fail(diag, NF_EINVAL, "%s: too many items", topo);
            sa->item[sa->n++] = (spec_item){s, eq + 1, klen, len - klen - 1};
        }
        if (!end) break;
        s = end + 1;
    }
    return NF_OK;
}

/* Rejects keys outside known (a NULL-terminated list). */
static int spec_known(const spec_args *sa, const char *const *known, nf_diag *diag) {
    for (unsigned i = 0; i < sa->n; i++) {
        bool ok = false;
        for (const char *const *k = known; *k && !ok; k++)
            ok = strlen(*k) == sa->item[i].klen &&
                 memcmp(*k, sa->item[i].key, sa->item[i].klen) == 0;
        if (ok) continue;
        char list[200];
        size_t pos = 0;
        list[0] = '\0';
        for (const char *const *k = known; *k; k++)
            pos +=
                (size_t)snprintf(list + pos, sizeof list - pos, "%s%s", k == known ? "" : ", ", *k);
        size_t kl = sa->item[i].klen > 80 ? 80 : sa->item[i].klen;
        if (!known[0])
            return nf__fail(diag, NF_EINVAL, "%s: takes no parameters, got '%.*s'", sa->topo,
                            (int)kl, sa->item[i].key);
        return nf__fail(diag, NF_EINVAL, "%s: unknown key '%.*s' (known: %s)", sa->topo, (int)kl,
                        sa->item[i].key, list);
    }
    return NF_OK;
}

static const spec_item *spec_find(const spec_args *sa, const char *key) {
    size_t kl = strlen(key);
    for (unsigned i = 0; i < sa->n; i++)
        if (sa->item[i].klen == kl && memcmp(sa->item[i].key, key, kl) == 0) return &sa->item[i];
    return NULL;
}

/* A decimal number of at most SPEC_NUM_MAX, digits only. what names it in messages. */
static int spec_number(const char *topo, const char *what, const char *s, size_t len, unsigned *out,
                       nf_diag *diag) {
    int wl = (int)(len > 40 ? 40 : len);
    if (len == 0) return nf__fail(diag, NF_EINVAL, "%s: %s has no value", topo, what);
    uint64_t v = 0;
    for (size_t i = 0; i < len; i++) {
        if (s[i] < '0' || s[i] > '9')
            return nf__fail(diag, NF_EINVAL, "%s: %s='%.*s' is not a number", topo, what, wl, s);
        v = v * 10 + (unsigned)(s[i] - '0');
        if (v > SPEC_NUM_MAX)
            return nf__fail(diag, NF_EINVAL, "%s: %s=%.*s is too large", topo, what, wl, s);
    }
    *out = (unsigned)v;
    return NF_OK;
}

/* Reads key as a number into *out; def is kept when the key is absent and not required. */
static int spec_uint(const spec_args *sa, const char *key, bool required, unsigned *out,
                     nf_diag *diag) {
    const spec_item *it = spec_find(sa, key);
    if (!it) return required ? nf__fail(diag, NF_EINVAL, "%s: missing %s", sa->topo, key) : NF_OK;
    return spec_number(sa->topo, key, it->val, it->vlen, out, diag);
}

/* A list of numbers separated by sep, at most maxn of them. */
static int spec_list(const char *topo, const char *what, const char *s, size_t len, char sep,
                     unsigned maxn, unsigned *vals, unsigned *n, nf_diag *diag) {
    *n = 0;
    size_t i = 0;
    for (;;) {
        size_t j = i;
        while (j < len && s[j] != sep)
            j++;
        if (*n == maxn)
            return nf__fail(diag, NF_EINVAL, "%s: %s has more than %u values", topo, what, maxn);
        if (j == i)
            return nf__fail(diag, NF_EINVAL, "%s: %s='%.*s' has an empty value", topo, what,
                            (int)(len > 80 ? 80 : len), s);
        int rc = spec_number(topo, what, s + i, j - i, &vals[(*n)++], diag);
        if (rc) return rc;
        if (j == len) return NF_OK;
        i = j + 1;
    }
}

static bool spec_is(const spec_item *it, const char *s) {
    return it && it->vlen == strlen(s) && memcmp(it->val, s, it->vlen) == 0;
}

static int build_fattree(const spec_args *sa, nf_fabric **out, nf_diag *diag) {
    unsigned k = 0;
    int rc = spec_uint(sa, "k", true, &k, diag);
    return rc ? rc : nf_gen_fattree(k, out, diag);
}

static int build_xgft(const spec_args *sa, nf_fabric **out, nf_diag *diag) {
    unsigned h = 0, m[NF_XGFT_MAX_H], w[NF_XGFT_MAX_H], nm = 0, nw = 0;
    int rc = spec_uint(sa, "h", true, &h, diag);
    if (rc) return rc;
    if (h < 1 || h > NF_XGFT_MAX_H)
        return nf__fail(diag, NF_EINVAL, "xgft: h must be in 1..%d (got %u)", NF_XGFT_MAX_H, h);
    const spec_item *im = spec_find(sa, "m"), *iw = spec_find(sa, "w");
    if (!im) return nf__fail(diag, NF_EINVAL, "xgft: missing m");
    if (!iw) return nf__fail(diag, NF_EINVAL, "xgft: missing w");
    if ((rc = spec_list("xgft", "m", im->val, im->vlen, '.', NF_XGFT_MAX_H, m, &nm, diag)) ||
        (rc = spec_list("xgft", "w", iw->val, iw->vlen, '.', NF_XGFT_MAX_H, w, &nw, diag)))
        return rc;
    if (nm != h) return nf__fail(diag, NF_EINVAL, "xgft: m has %u values but h=%u", nm, h);
    if (nw != h) return nf__fail(diag, NF_EINVAL, "xgft: w has %u values but h=%u", nw, h);
    return nf_gen_xgft(h, m, w, out, diag);
}

static int build_torus(const spec_args *sa, nf_fabric **out, nf_diag *diag) {
    unsigned dims[NF_TORUS_MAX_D], nd = 0, c = 1;
    if (!sa->has_pos)
        return nf__fail(diag, NF_EINVAL, "torus: missing dimensions (as in torus:4x4x4,c=1)");
    int rc =
        spec_list("torus", "dimensions", sa->pos, sa->poslen, 'x', NF_TORUS_MAX_D, dims, &nd, diag);
    if (rc || (rc = spec_uint(sa, "c", false, &c, diag))) return rc;
    return nf_gen_torus(nd, dims, c, out, diag);
}

static int build_dragonfly(const spec_args *sa, nf_fabric **out, nf_diag *diag) {
    unsigned a = 0, p = 0, h = 0, g = 0;
    nf_df_arrangement arr = NF_DF_PALMTREE;
    int rc;
    if ((rc = spec_uint(sa, "a", true, &a, diag)) || (rc = spec_uint(sa, "p", true, &p, diag)) ||
        (rc = spec_uint(sa, "h", true, &h, diag)) || (rc = spec_uint(sa, "g", false, &g, diag)))
        return rc;
    const spec_item *it = spec_find(sa, "arr");
    if (spec_is(it, "consecutive"))
        arr = NF_DF_CONSECUTIVE;
    else if (it && !spec_is(it, "palmtree"))
        return nf__fail(diag, NF_EINVAL,
                        "dragonfly: arr must be palmtree or consecutive, got '%.*s'",
                        (int)(it->vlen > 40 ? 40 : it->vlen), it->val);
    if (spec_find(sa, "g") && g == 0)
        return nf__fail(diag, NF_EINVAL, "dragonfly: g must be at least 2");
    /* the ports check below bounds a and h, so a*h cannot overflow in the generator */
    return nf_gen_dragonfly(a, p, h, g, arr, out, diag);
}

static int build_gft(const spec_args *sa, nf_fabric **out, nf_diag *diag) {
    nf_gft_params prm = {.links = 1, .sib = 4, .rails = 1, .radix = 40};
    const spec_item *preset = spec_find(sa, "preset");
    bool req = true;
    if (preset) {
        if (!spec_is(preset, "sunway-proto"))
            return nf__fail(diag, NF_EINVAL, "gft: unknown preset '%.*s' (known: sunway-proto)",
                            (int)(preset->vlen > 40 ? 40 : preset->vlen), preset->val);
        /* Sunway prototype, the Sunway paper: see docs/generators.md for the counts we
         * had to choose */
        prm = (nf_gft_params){
            .leaves = 32, .nodes = 16, .spines = 18, .links = 1, .sib = 4, .rails = 2, .radix = 40};
        req = false;
    }
    int rc;
    if ((rc = spec_uint(sa, "leaves", req, &prm.leaves, diag)) ||
        (rc = spec_uint(sa, "nodes", req, &prm.nodes, diag)) ||
        (rc = spec_uint(sa, "spines", req, &prm.spines, diag)) ||
        (rc = spec_uint(sa, "links", false, &prm.links, diag)) ||
        (rc = spec_uint(sa, "sib", false, &prm.sib, diag)) ||
        (rc = spec_uint(sa, "rails", false, &prm.rails, diag)) ||
        (rc = spec_uint(sa, "radix", false, &prm.radix, diag)))
        return rc;
    return nf_gen_gft(&prm, out, diag);
}

/* ---- BlueLight and TaihuLight: trimmed fat trees -------------------------------------------- */

/* A trimmed fat tree of supernodes (docs/generators.md). A supernode is `leaves`
 * leaf switches of `hosts` endpoints and `l2` level-2 switches, every leaf joined to every level-2
 * switch of its supernode. Three levels (l3 == 0): every level-2 switch is joined to every one of
 * the `tops` top switches. Four levels: supernodes form groups of `sn_per_group`; a group has `l3`
 * level-3 switches, every level-2 switch of the group joined to each; level-3 switch k of every
 * group is joined to the `tops` top switches of plane k. Either way a leaf reaches every top switch
 * by exactly `l2` shortest paths, one through each level-2 switch of its supernode. */
typedef struct trimmed_shape {
    unsigned hosts, leaves, l2, n_sn; /* per leaf, per supernode, per supernode, supernodes */
    unsigned sn_per_group, l3;        /* four levels only (l3 > 0) */
    unsigned tops;                    /* three levels: top switches; four: per plane */
} trimmed_shape;

static int trimmed_build(const char *topo, const trimmed_shape *t, nf_fabric **out, nf_diag *diag) {
    *out = NULL;
    unsigned groups = t->l3 ? t->n_sn / t->sn_per_group : 0;
    unsigned n1 = t->n_sn * t->leaves, n2 = t->n_sn * t->l2, n3 = groups * t->l3;
    unsigned n4 = t->l3 ? t->l3 * t->tops : t->tops, nca = n1 * t->hosts;
    int rc = check_size(diag, topo, (uint64_t)n1 + n2 + n3 + n4, nca);
    if (rc) return rc;
    gen g;
    gen_begin(&g, topo);
    nf_node b1 = gen_next(&g);
    for (unsigned i = 0; i < n1; i++)
        gen_node(&g, NF_NODE_SWITCH, t->hosts + t->l2, 1, (int32_t)(i / t->leaves), 0, "%s L1 %u",
                 topo, i);
    nf_node b2 = gen_next(&g);
    unsigned up2 = t->l3 ? t->l3 : t->tops;
    for (unsigned i = 0; i < n2; i++)
        gen_node(&g, NF_NODE_SWITCH, t->leaves + up2, 2, (int32_t)(i / t->l2), 0, "%s L2 %u", topo,
                 i);
    nf_node b3 = gen_next(&g);
    unsigned down3 = t->sn_per_group * t->l2;
    for (unsigned i = 0; i < n3; i++)
        gen_node(&g, NF_NODE_SWITCH, down3 + t->tops, 3, -1, 0, "%s L3 %u", topo, i);
    nf_node bt = gen_next(&g);
    unsigned top_level = t->l3 ? 4 : 3;
    for (unsigned i = 0; i < n4; i++)
        gen_node(&g, NF_NODE_SWITCH, t->l3 ? groups : n2, top_level, -1, 0, "%s L%u %u", topo,
                 top_level, i);
    nf_node bc = gen_next(&g);
    for (unsigned i = 0; i < nca; i++)
        gen_node(&g, NF_NODE_CA, 1, 0, (int32_t)(i / (t->hosts * t->leaves)), 0, "%s node %u", topo,
                 i);
    /* leaf i: ports 1..hosts to its endpoints, hosts+1+j to level-2 switch j of its supernode,
     * arriving at that switch's down port (i mod leaves) + 1 */
    for (unsigned i = 0; i < n1; i++) {
        for (unsigned e = 0; e < t->hosts; e++)
            gen_link(&g, b1 + i, e + 1, bc + i * t->hosts + e, 1, NF_LINK_HOST, 0);
        unsigned sn = i / t->leaves;
        for (unsigned j = 0; j < t->l2; j++)
            gen_link(&g, b1 + i, t->hosts + 1 + j, b2 + sn * t->l2 + j, i % t->leaves + 1,
                     NF_LINK_LOCAL, 0);
    }
    if (!t->l3) {
        /* level-2 switch x: port leaves+1+k to top k, arriving at the top's port x + 1 */
        for (unsigned x = 0; x < n2; x++)
            for (unsigned k = 0; k < t->tops; k++)
                gen_link(&g, b2 + x, t->leaves + 1 + k, bt + k, x + 1, NF_LINK_LOCAL, 0);
        return gen_end(&g, out, diag);
    }
    /* level-2 switch x of group q (local index x mod down3): port leaves+1+k to level-3 switch k
     * of the group, arriving at its port (x mod down3) + 1; level-3 switch k of group q: port
     * down3+1+p to top p of plane k, arriving at the top's port q + 1 */
    for (unsigned x = 0; x < n2; x++) {
        unsigned q = x / down3;
        for (unsigned k = 0; k < t->l3; k++)
            gen_link(&g, b2 + x, t->leaves + 1 + k, b3 + q * t->l3 + k, x % down3 + 1,
                     NF_LINK_LOCAL, 0);
    }
    for (unsigned y = 0; y < n3; y++) {
        unsigned q = y / t->l3, k = y % t->l3;
        for (unsigned p = 0; p < t->tops; p++)
            gen_link(&g, b3 + y, down3 + 1 + p, bt + k * t->tops + p, q + 1, NF_LINK_LOCAL, 0);
    }
    return gen_end(&g, out, diag);
}

/* BlueLight: 17 supernodes of 512 endpoints (32 leaves x 16, 8 level-2 switches), 4 top
 * switches: 8 shortest paths from every leaf to every top switch. TaihuLight: 160 supernodes of
 * 256 (16 leaves x 16, 2 level-2 switches), 10 groups of 16 supernodes with 16 level-3 switches
 * each, 16 planes of 4 top switches: 2 shortest paths from every leaf to every top switch. */
static const trimmed_shape shape_bluelight = {
    .hosts = 16, .leaves = 32, .l2 = 8, .n_sn = 17, .tops = 4};
static const trimmed_shape shape_taihulight = {
    .hosts = 16, .leaves = 16, .l2 = 2, .n_sn = 160, .sn_per_group = 16, .l3 = 16, .tops = 4};

static int build_bluelight(const spec_args *sa, nf_fabric **out, nf_diag *diag) {
    (void)sa;
    return trimmed_build("bluelight", &shape_bluelight, out, diag);
}

/* taihulight:sn=N[,group=G]: the same shape with N supernodes (default 160) in groups of G
 * (default 16; one group of N below 16), for the two-level tables at other sizes (the Sunway
 * paper: up to 256K endpoints, sn=1024); group=1 joins supernodes through the top level only:
 * sn=4,group=1 is the Sunway paper's TaihuLight of 1,024 processors on a 4-level tree */
static int build_taihulight(const spec_args *sa, nf_fabric **out, nf_diag *diag) {
    trimmed_shape t = shape_taihulight;
    int rc = spec_uint(sa, "sn", false, &t.n_sn, diag);
    if (rc) return rc;
    if (t.n_sn < 1 || t.n_sn > 4096)
        return nf__fail(diag, NF_EINVAL, "taihulight: sn must be 1..4096 (got %u)", t.n_sn);
    unsigned group = UINT_MAX; /* (not given) */
    if ((rc = spec_uint(sa, "group", false, &group, diag))) return rc;
    if (group != UINT_MAX && (group < 1 || group > 64 || group > t.n_sn))
        return nf__fail(diag, NF_EINVAL, "taihulight: group must be 1..min(64, sn) (got %u)",
                        group);
    if (group != UINT_MAX)
        t.sn_per_group = group;
    else if (t.n_sn < t.sn_per_group)
        t.sn_per_group = t.n_sn;
    if (t.n_sn % t.sn_per_group)
        return nf__fail(diag, NF_EINVAL,
                        "taihulight: sn must be a multiple of %u, supernodes per group (got %u)",
                        t.sn_per_group, t.n_sn);
    if (t.n_sn / t.sn_per_group > NF_MAX_PORTS)
        return nf__fail(diag, NF_EINVAL,
                        "taihulight: sn=%u needs top switches of %u ports (most %u)", t.n_sn,
                        t.n_sn / t.sn_per_group, NF_MAX_PORTS);
    return trimmed_build("taihulight", &t, out, diag);
}

static const char *const keys_fattree[] = {"k", NULL};
static const char *const keys_xgft[] = {"h", "m", "w", NULL};
static const char *const keys_torus[] = {"c", NULL};
static const char *const keys_dragonfly[] = {"a", "p", "h", "g", "arr", NULL};
static const char *const keys_gft[] = {"preset", "leaves", "nodes", "spines", "links",
                                       "sib",    "rails",  "radix", NULL};
static const char *const keys_none[] = {NULL};
static const char *const keys_taihulight[] = {"sn", "group", NULL};

/* The spec names; "file" is handled apart because its argument is a path, not key=value items. */
static const struct topo_kind {
    const char *name;
    const char *const *keys;
    bool positional;
    int (*build)(const spec_args *sa, nf_fabric **out, nf_diag *diag);
} topo_kinds[] = {
    {.name = "fattree", .keys = keys_fattree, .build = build_fattree},
    {.name = "xgft", .keys = keys_xgft, .build = build_xgft},
    {.name = "torus", .keys = keys_torus, .positional = true, .build = build_torus},
    {.name = "dragonfly", .keys = keys_dragonfly, .build = build_dragonfly},
    {.name = "gft", .keys = keys_gft, .build = build_gft},
    {.name = "bluelight", .keys = keys_none, .build = build_bluelight},
    {.name = "taihulight", .keys = keys_taihulight, .build = build_taihulight},
};

/* "PATH[,partial=0|1]": options follow the path after its last comma. A last comma item that is
 * not of the form key=value (lower-case key, no '/') belongs to the path, so paths with commas
 * still work; a key=value item with another key is refused. *path is allocated. */
static int file_spec_split(const char *args, char **path, bool *partial, nf_diag *diag) {
    size_t plen = strlen(args);
    *partial = false;
    const char *comma = strrchr(args, ',');
    if (comma && comma[1] >= 'a' && comma[1] <= 'z' && !strchr(comma, '/')) {
        const char *k = comma + 1, *eq = k;
        while (*eq >= 'a' && *eq <= 'z')
            eq++;
        if (*eq == '=') {
            if ((size_t)(eq - k) != 7 || memcmp(k, "partial", 7) != 0)
                return nf__fail(diag, NF_EINVAL, "file: unknown option '%.*s' (known: partial)",
                                (int)(eq - k > 40 ? 40 : eq - k), k);
            if (strcmp(eq + 1, "0") && strcmp(eq + 1, "1"))
                return nf__fail(diag, NF_EINVAL, "file: partial must be 0 or 1, not '%.20s'",
                                eq + 1);
            *partial = eq[1] == '1';
            plen = (size_t)(comma - args);
            if (!plen) return nf__fail(diag, NF_EINVAL, "file: missing path (file:PATH)");
        }
    }
    if (!(*path = nf__strndup(args, plen))) return nf__fail(diag, NF_ENOMEM, "file: out of memory");
    return NF_OK;
}

int nf_topo_build(const char *spec, const nf_topo_opts *opts, nf_fabric **out, nf_diag *diag) {
    assert(out);
    *out = NULL;
    if (!spec) return nf__fail(diag, NF_EINVAL, "no topology given");
    const char *colon = strchr(spec, ':');
    size_t nlen = colon ? (size_t)(colon - spec) : strlen(spec);
    const char *args = colon ? colon + 1 : NULL;
    if (nlen == 4 && memcmp(spec, "file", 4) == 0) {
        if (!args || !*args) return nf__fail(diag, NF_EINVAL, "file: missing path (file:PATH)");
        nf_load_opts lo = {.warn = opts ? opts->warn : NULL,
                           .warn_ud = opts ? opts->warn_ud : NULL};
        char *path = NULL;
        int rc = file_spec_split(args, &path, &lo.partial, diag);
        if (rc) return rc;
        rc = nf_io_load(path, NF_FMT_AUTO, &lo, out, diag);
        nf__free(path);
        return rc;
    }
    for (size_t i = 0; i < sizeof topo_kinds / sizeof topo_kinds[0]; i++) {
        const struct topo_kind *t = &topo_kinds[i];
        if (strlen(t->name) != nlen || memcmp(t->name, spec, nlen) != 0) continue;
        spec_args sa;
        int rc = spec_split(t->name, args, t->positional, &sa, diag);
        if (rc || (rc = spec_known(&sa, t->keys, diag))) return rc;
        return t->build(&sa, out, diag);
    }
    char list[200];
    size_t pos = 0;
    for (size_t i = 0; i < sizeof topo_kinds / sizeof topo_kinds[0]; i++)
        pos += (size_t)snprintf(list + pos, sizeof list - pos, "%s, ", topo_kinds[i].name);
    snprintf(list + pos, sizeof list - pos, "file");
    return nf__fail(diag, NF_EINVAL, "unknown topology '%.*s' (known: %s)",
                    (int)(nlen > 60 ? 60 : nlen), spec, list);
}
