/* SPDX-License-Identifier: MIT */
/* Multicast workloads: a communicator pattern expands to groups of ranks, ranks are laid on rank
 * slots (in order, or shuffled with the seed), slots on endpoints, and every group is reduced to
 * its distinct member endpoints in ascending order. Spec strings: include/netfab/groups.h. */
#include "netfab/groups.h"
#include "netfab/io.h"
#include "util/diag.h"
#include "util/mem.h"
#include "util/rng.h"
#include "util/textfile.h"
#include "util/u64map.h"

#include <assert.h>
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define GR_NUM_MAX 1000000000u            /* spec numbers: digits only, at most 10^9 */
#define GR_RANKS_MAX (1ull << 31)         /* ranks and rank slots */
#define GR_HIER_MAX 16                    /* hier levels */
#define GR_MAP_STREAM 0x6d617070696e6721u /* "mapping!": the mapping's stream is seed ^ this */

/* The build in progress: the fabric's endpoint count and rank slots, then the ranks of every
 * group in CSR form (off has n + 1 entries) as the pattern emits them. */
typedef struct gctx {
    const char *spec; /* the whole spec, for messages */
    const char *name; /* the pattern name */
    nf_diag *diag;
    uint32_t n_ep, ppn;
    uint64_t slots;  /* n_ep * ppn */
    uint64_t nranks; /* the pattern uses ranks 0 .. nranks-1 (at most) */
    uint32_t n;
    uint32_t *off;
    size_t offcap;
    uint32_t *rank;
    size_t len, cap;
} gctx;

#define gr_fail(d, rc, ...) nf__fail_at((d), (rc), "", 0, __VA_ARGS__)

static uint64_t sat_mul(uint64_t a, uint64_t b) {
    if (a && b > UINT64_MAX / a) return UINT64_MAX;
    return a * b;
}

/* Refuses a pattern of need ranks that is too large or does not fit on the rank slots. */
static int check_ranks(const gctx *c, uint64_t need) {
    if (need > GR_RANKS_MAX)
        return gr_fail(c->diag, NF_EINVAL, "%.100s: too many ranks (more than 2^31)", c->spec);
    if (need > c->slots)
        return gr_fail(
            c->diag, NF_EINVAL,
            "%.100s needs %llu ranks but the fabric has %u endpoints x %u procs per node", c->spec,
            (unsigned long long)need, c->n_ep, c->ppn);
    return NF_OK;
}

/* ---- the rank CSR ---------------------------------------------------------------------------- */

/* Allocates room for exactly `groups` groups of `entries` ranks in all (the patterns that know
 * their sizes), so that gb_add and gb_close cannot fail within it: those patterns ignore their
 * results. The file pattern reserves nothing and grows as it reads. */
static int gb_reserve(gctx *c, uint64_t groups, uint64_t entries) {
    if (groups >= UINT32_MAX || entries > UINT32_MAX)
        return gr_fail(c->diag, NF_EINVAL, "%.100s: too many group members (more than 2^32)",
                       c->spec);
    uint32_t *o = nf__realloc(c->off, (size_t)(groups + 1) * sizeof *o);
    if (!o) return NF_ENOMEM;
    c->off = o;
    c->offcap = (size_t)groups + 1;
    uint32_t *r = nf__realloc(c->rank, (size_t)entries * sizeof *r);
    if (!r) return NF_ENOMEM;
    c->rank = r;
    c->cap = (size_t)entries;
    if (c->n == 0) c->off[0] = 0;
    return NF_OK;
}

static inline int gb_add(gctx *c, uint32_t r) {
    if (c->len == c->cap) {
        if (c->len == UINT32_MAX)
            return gr_fail(c->diag, NF_EINVAL, "%.100s: too many group members (more than 2^32)",
                           c->spec);
        if (NF_GROW(c->rank, c->cap, c->len + 1)) return NF_ENOMEM;
    }
    c->rank[c->len++] = r;
    return NF_OK;
}

/* Ends the current group (the ranks added since the last close). */
static int gb_close(gctx *c) {
    if (c->n + 2u > c->offcap) {
        if (c->n == UINT32_MAX - 1)
            return gr_fail(c->diag, NF_EINVAL, "%.100s: too many groups", c->spec);
        if (NF_GROW(c->off, c->offcap, (size_t)c->n + 2)) return NF_ENOMEM;
    }
    c->off[++c->n] = (uint32_t)c->len;
    return NF_OK;
}

/* ---- spec parsing ---------------------------------------------------------------------------- */

/* A decimal number of 1..GR_NUM_MAX, digits only. */
static int parse_num(const gctx *c, const char *what, const char *s, size_t len, uint32_t *out) {
    int wl = (int)(len > 40 ? 40 : len);
    if (len == 0) return gr_fail(c->diag, NF_EINVAL, "%s: %s has no value", c->name, what);
    uint64_t v = 0;
    for (size_t i = 0; i < len; i++) {
        if (s[i] < '0' || s[i] > '9')
            return gr_fail(c->diag, NF_EINVAL, "%s: %s '%.*s' is not a number", c->name, what, wl,
                           s);
        v = v * 10 + (unsigned)(s[i] - '0');
        if (v > GR_NUM_MAX)
            return gr_fail(c->diag, NF_EINVAL, "%s: %s %.*s is too large", c->name, what, wl, s);
    }
    if (v == 0) return gr_fail(c->diag, NF_EINVAL, "%s: %s must be at least 1", c->name, what);
    *out = (uint32_t)v;
    return NF_OK;
}

/* Exactly n numbers separated by sep (the grid dimensions "RxC", the hier sizes "A.B.C"); with
 * at_most, 1..n of them and their count in *got. */
static int parse_list(const gctx *c, const char *what, const char *form, const char *s, size_t len,
                      char sep, unsigned n, bool at_most, uint32_t *vals, unsigned *got) {
    unsigned k = 0;
    size_t i = 0;
    for (;;) {
        size_t j = i;
        while (j < len && s[j] != sep)
            j++;
        if (k == n || j == i) break; /* too many or an empty value: the form message below */
        int rc = parse_num(c, what, s + i, j - i, &vals[k++]);
        if (rc) return rc;
        if (j == len) {
            if (k != n && !at_most) break;
            if (got) *got = k;
            return NF_OK;
        }
        i = j + 1;
    }
    return gr_fail(c->diag, NF_EINVAL, "%s: expected %s, got '%.*s'", c->name, form,
                   (int)(len > 80 ? 80 : len), s);
}

typedef struct kv {
    const char *key;
    uint32_t *num;    /* a number, or */
    const char **str; /* the raw value (with its length in *slen) */
    size_t *slen;
    bool seen;
} kv;

/* Splits "key=value,key=value" into the known keys; every key is required. */
static int parse_keys(const gctx *c, const char *args, kv *keys, unsigned nkeys) {
    char known[120];
    size_t pos = 0;
    known[0] = '\0';
    for (unsigned k = 0; k < nkeys; k++)
        pos +=
            (size_t)snprintf(known + pos, sizeof known - pos, "%s%s", k ? ", " : "", keys[k].key);
    const char *s = args ? args : "";
    while (*s) {
        const char *end = strchr(s, ',');
        size_t len = end ? (size_t)(end - s) : strlen(s);
        int wl = (int)(len > 80 ? 80 : len);
        const char *eq = memchr(s, '=', len);
        if (len == 0)
            return gr_fail(c->diag, NF_EINVAL, "%s: empty item in '%.80s'", c->name, args);
        if (!eq)
            return gr_fail(c->diag, NF_EINVAL, "%s: expected key=value, got '%.*s'", c->name, wl,
                           s);
        size_t klen = (size_t)(eq - s);
        kv *hit = NULL;
        for (unsigned k = 0; k < nkeys && !hit; k++)
            if (strlen(keys[k].key) == klen && memcmp(keys[k].key, s, klen) == 0) hit = &keys[k];
        if (!hit)
            return gr_fail(c->diag, NF_EINVAL, "%s: unknown key '%.*s' (known: %s)", c->name,
                           (int)(klen > 80 ? 80 : klen), s, known);
        if (hit->seen)
            return gr_fail(c->diag, NF_EINVAL, "%s: key '%s' given twice", c->name, hit->key);
        hit->seen = true;
        size_t vlen = len - klen - 1;
        if (hit->num) {
            int rc = parse_num(c, hit->key, eq + 1, vlen, hit->num);
            if (rc) return rc;
        } else {
            *hit->str = eq + 1;
            *hit->slen = vlen;
        }
        if (!end) break;
        s = end + 1;
        if (!*s) return gr_fail(c->diag, NF_EINVAL, "%s: empty item in '%.80s'", c->name, args);
    }
    for (unsigned k = 0; k < nkeys; k++)
        if (!keys[k].seen)
            return gr_fail(c->diag, NF_EINVAL, "%s: missing %s", c->name, keys[k].key);
    return NF_OK;
}

/* ---- patterns -------------------------------------------------------------------------------- */

static int pat_grid2d(gctx *c, const char *args) {
    uint32_t d[2];
    const char *a = args ? args : "";
    int rc = parse_list(c, "dimension", "RxC", a, strlen(a), 'x', 2, false, d, NULL);
    if (rc) return rc;
    uint64_t R = d[0], C = d[1], N = R * C;
    if ((rc = check_ranks(c, N)) || (rc = gb_reserve(c, R + C, 2 * N))) return rc;
    c->nranks = N;
    for (uint64_t r = 0; r < R; r++) {
        for (uint64_t k = 0; k < C; k++)
            gb_add(c, (uint32_t)(r * C + k));
        gb_close(c);
    }
    for (uint64_t k = 0; k < C; k++) {
        for (uint64_t r = 0; r < R; r++)
            gb_add(c, (uint32_t)(r * C + k));
        gb_close(c);
    }
    return NF_OK;
}

/* Rank (x, y, z) = (x*Y + y)*Z + z. Lines along Z for every (x, y) in x-major order, then lines
 * along Y for every (x, z), then lines along X for every (y, z). */
static int pat_grid3d(gctx *c, const char *args) {
    uint32_t d[3];
    const char *a = args ? args : "";
    int rc = parse_list(c, "dimension", "XxYxZ", a, strlen(a), 'x', 3, false, d, NULL);
    if (rc) return rc;
    uint64_t X = d[0], Y = d[1], Z = d[2], N = sat_mul(sat_mul(X, Y), Z);
    if ((rc = check_ranks(c, N)) || (rc = gb_reserve(c, X * Y + X * Z + Y * Z, 3 * N))) return rc;
    c->nranks = N;
    for (uint64_t x = 0; x < X; x++)
        for (uint64_t y = 0; y < Y; y++) {
            for (uint64_t z = 0; z < Z; z++)
                gb_add(c, (uint32_t)((x * Y + y) * Z + z));
            gb_close(c);
        }
    for (uint64_t x = 0; x < X; x++)
        for (uint64_t z = 0; z < Z; z++) {
            for (uint64_t y = 0; y < Y; y++)
                gb_add(c, (uint32_t)((x * Y + y) * Z + z));
            gb_close(c);
        }
    for (uint64_t y = 0; y < Y; y++)
        for (uint64_t z = 0; z < Z; z++) {
            for (uint64_t x = 0; x < X; x++)
                gb_add(c, (uint32_t)((x * Y + y) * Z + z));
            gb_close(c);
        }
    return NF_OK;
}

/* Each group is the first S entries of a partial Fisher-Yates pass over a pool holding every rank
 * once. The pass leaves the pool a permutation, so the next group's pass from that state is again
 * a uniform selection of S distinct ranks: the pool is never reset. */
static int pat_random(gctx *c, const char *args, uint64_t seed) {
    uint32_t G = 0, S = 0;
    kv keys[] = {{.key = "n", .num = &G}, {.key = "size", .num = &S}};
    int rc = parse_keys(c, args, keys, 2);
    if (rc || (rc = check_ranks(c, S))) return rc;
    if ((rc = gb_reserve(c, G, (uint64_t)G * S))) return rc;
    c->nranks = c->slots;
    uint32_t *pool = nf__malloc((size_t)c->slots * sizeof *pool);
    if (!pool) return NF_ENOMEM;
    for (uint32_t i = 0; i < c->slots; i++)
        pool[i] = i;
    nf__rng rng;
    nf__rng_seed(&rng, seed);
    for (uint32_t g = 0; g < G; g++) {
        nf__rng_sample_u32(&rng, pool, (size_t)c->slots, S);
        for (uint32_t i = 0; i < S; i++)
            gb_add(c, pool[i]);
        gb_close(c);
    }
    nf__free(pool);
    return NF_OK;
}

/* The leaders at level i (1-based) are the ranks k * P_i for k < L_i, where P_i = s_1 * ... * s_i
 * and L_i = ceil(N / P_i), so level i's group j holds the level-(i-1) leaders j*s_i .. j*s_i +
 * s_i - 1 (those below L_{i-1}), i.e. ranks (j*s_i + t) * P_{i-1}. Level 1 is always emitted;
 * a later level, and the final group of the remaining leaders, only while more than one leader
 * remains. */
static int pat_hier(gctx *c, const char *args) {
    uint32_t N = 0, s[GR_HIER_MAX];
    const char *sv = NULL;
    size_t slen = 0;
    unsigned ns = 0;
    kv keys[] = {{.key = "n", .num = &N}, {.key = "s", .str = &sv, .slen = &slen}};
    int rc = parse_keys(c, args, keys, 2);
    if (rc ||
        (rc = parse_list(c, "s", "s=A.B... (1 to 16 sizes)", sv, slen, '.', GR_HIER_MAX, true, s,
                         &ns)) ||
        (rc = check_ranks(c, N)))
        return rc;
    /* sizes first, so everything is allocated once */
    uint64_t groups = 0, entries = 0, L = N;
    for (unsigned i = 0; i < ns && (i == 0 || L > 1); i++) {
        entries += L;
        L = (L + s[i] - 1) / s[i];
        groups += L;
    }
    if (L > 1) {
        entries += L;
        groups++;
    }
    if ((rc = gb_reserve(c, groups, entries))) return rc;
    c->nranks = N;
    uint64_t P = 1; /* P_{i-1} */
    L = N;
    for (unsigned i = 0; i < ns && (i == 0 || L > 1); i++) {
        for (uint64_t j = 0; j * s[i] < L; j++) {
            for (uint64_t t = j * s[i]; t < (j + 1) * s[i] && t < L; t++)
                gb_add(c, (uint32_t)(t * P));
            gb_close(c);
        }
        L = (L + s[i] - 1) / s[i];
        P *= s[i];
    }
    if (L > 1) {
        for (uint64_t t = 0; t < L; t++)
            gb_add(c, (uint32_t)(t * P));
        gb_close(c);
    }
    return NF_OK;
}

static bool is_space(char ch) {
    return ch == ' ' || ch == '\t' || ch == '\r' || ch == '\n' || ch == '\v' || ch == '\f';
}

/* One group per line of decimal ranks separated by white space; '#' to the end of the line is a
 * comment; lines left empty are skipped. */
static int parse_file(gctx *c, const char *path, const char *text, size_t len) {
    int line = 0;
    uint64_t max = 0;
    for (size_t i = 0; i < len;) {
        line++;
        size_t eol = i;
        while (eol < len && text[eol] != '\n')
            eol++;
        size_t stop = i;
        while (stop < eol && text[stop] != '#')
            stop++;
        size_t before = c->len;
        for (size_t p = i; p < stop;) {
            if (is_space(text[p])) {
                p++;
                continue;
            }
            size_t q = p;
            while (q < stop && !is_space(text[q]))
                q++;
            int wl = (int)(q - p > 40 ? 40 : q - p);
            uint64_t v = 0;
            for (size_t k = p; k < q; k++) {
                if (text[k] < '0' || text[k] > '9')
                    return nf__fail_at(c->diag, NF_EPARSE, path, line,
                                       "'%.*s' is not a rank (a decimal number)", wl, text + p);
                if (v < c->slots) v = v * 10 + (unsigned)(text[k] - '0');
            }
            if (v >= c->slots)
                return nf__fail_at(c->diag, NF_EPARSE, path, line,
                                   "rank %.*s is beyond the %llu rank slots (%u endpoints x %u "
                                   "procs per node)",
                                   wl, text + p, (unsigned long long)c->slots, c->n_ep, c->ppn);
            int rc = gb_add(c, (uint32_t)v);
            if (rc) return rc;
            if (v > max) max = v;
            p = q;
        }
        if (c->len > before) {
            int rc = gb_close(c);
            if (rc) return rc;
        }
        i = eol + 1;
    }
    if (c->n == 0) return nf__fail_at(c->diag, NF_EPARSE, path, 0, "no groups in the file");
    c->nranks = max + 1;
    return NF_OK;
}

static int pat_file(gctx *c, const char *path) {
    if (!path || !*path) return gr_fail(c->diag, NF_EINVAL, "file: missing path (file:PATH)");
    FILE *fp = fopen(path, "rb");
    if (!fp) return nf__fail_at(c->diag, NF_EIO, path, 0, "cannot read: %s", strerror(errno));
    char *buf = NULL;
    size_t len = 0, cap = 0;
    int rc = NF_OK;
    for (;;) {
        if ((rc = NF_GROW(buf, cap, len + 65536))) goto done;
        size_t got = fread(buf + len, 1, cap - len, fp);
        len += got;
        if (got == 0) break;
    }
    if (ferror(fp)) {
        rc = nf__fail_at(c->diag, NF_EIO, path, 0, "cannot read: %s", strerror(errno));
        goto done;
    }
    if ((rc = gb_reserve(c, 0, 0))) goto done;
    rc = parse_file(c, path, buf, len);
done:
    fclose(fp);
    nf__free(buf);
    return rc;
}

/* ---- ranks to members ------------------------------------------------------------------------ */

static bool is_endpoint(const nf_fabric *f, nf_node n) {
    if (f->nports[n] < 1) return false;
    nf_node peer = f->peer[nf_port_index(f, n, 1)];
    return peer != NF_NONE && peer < f->n_switches;
}

static int cmp_u32(const void *a, const void *b) {
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return (x > y) - (x < y);
}

/* Rewrites the rank CSR in place into the member CSR: rank -> slot (P[rank], or the rank itself)
 * -> endpoint index slot / ppn; repeats inside a group are dropped with a per-endpoint stamp
 * holding the last group that took it, the survivors sorted (only when not already ascending,
 * which aware mappings of ordered patterns always are) and turned into CA ids, which ascend with
 * the endpoint index. The write position never passes the read position. */
static int map_members(gctx *c, const nf_fabric *f, const nf_workload_opts *o) {
    int rc = NF_ENOMEM;
    uint32_t *ep = nf__malloc((size_t)c->n_ep * sizeof *ep);
    uint32_t *stamp = nf__malloc((size_t)c->n_ep * sizeof *stamp);
    uint32_t *perm = NULL;
    if (!ep || !stamp) goto done;
    uint32_t e = 0;
    for (nf_node n = f->n_switches; n < f->n_nodes; n++)
        if (is_endpoint(f, n)) ep[e++] = n;
    assert(e == c->n_ep);
    memset(stamp, 0xff, (size_t)c->n_ep * sizeof *stamp);
    if (o->mapping == NF_MAP_RANDOM) {
        if (!(perm = nf__malloc((size_t)c->slots * sizeof *perm))) goto done;
        for (uint32_t i = 0; i < c->slots; i++)
            perm[i] = i;
        nf__rng rng;
        nf__rng_seed(&rng, o->seed ^ GR_MAP_STREAM);
        nf__rng_sample_u32(&rng, perm, (size_t)c->slots, (size_t)c->nranks);
    }
    uint32_t w = 0;
    for (uint32_t g = 0; g < c->n; g++) {
        uint32_t b = c->off[g], end = c->off[g + 1], start = w;
        bool sorted = true;
        c->off[g] = w;
        for (uint32_t i = b; i < end; i++) {
            uint32_t r = c->rank[i];
            uint32_t x = (perm ? perm[r] : r) / c->ppn;
            if (stamp[x] == g) continue;
            stamp[x] = g;
            if (w > start && x < c->rank[w - 1]) sorted = false;
            c->rank[w++] = x;
        }
        if (!sorted) qsort(c->rank + start, w - start, sizeof *c->rank, cmp_u32);
        for (uint32_t i = start; i < w; i++)
            c->rank[i] = ep[c->rank[i]];
    }
    c->off[c->n] = w;
    c->len = w;
    rc = NF_OK;
done:
    nf__free(ep);
    nf__free(stamp);
    nf__free(perm);
    return rc;
}

/* ---- entry points ---------------------------------------------------------------------------- */

static const char *const pattern_names = "grid2d, grid3d, random, hier, file, sa";

int nf_groups_build(const nf_fabric *f, const char *spec, const nf_workload_opts *opts,
                    nf_groups **out, nf_diag *diag) {
    assert(out);
    *out = NULL;
    if (!f || !spec) return gr_fail(diag, NF_EINVAL, "no fabric or no groups spec given");
    nf_workload_opts o = opts ? *opts : (nf_workload_opts){0};
    if (o.procs_per_node == 0) o.procs_per_node = 1;
    if (o.mapping != NF_MAP_AWARE && o.mapping != NF_MAP_RANDOM)
        return gr_fail(diag, NF_EINVAL, "unknown mapping %d (aware or random)", (int)o.mapping);

    if (strncmp(spec, "sa:", 3) == 0) {
        if (!spec[3]) return gr_fail(diag, NF_EINVAL, "sa: missing path (sa:PATH)");
        uint16_t *ml = NULL;
        int rc = nf_groups_load_sa(f, spec + 3, NULL, NULL, out, &ml, diag);
        nf__free(ml);
        return rc;
    }
    const char *colon = strchr(spec, ':');
    size_t nlen = colon ? (size_t)(colon - spec) : strlen(spec);
    const char *args = colon ? colon + 1 : NULL;
    static const char *const names[] = {"grid2d", "grid3d", "random", "hier", "file"};
    const char *name = NULL;
    for (size_t i = 0; i < sizeof names / sizeof names[0] && !name; i++)
        if (strlen(names[i]) == nlen && memcmp(names[i], spec, nlen) == 0) name = names[i];
    if (!name)
        return gr_fail(diag, NF_EINVAL, "unknown groups pattern '%.*s' (known: %s)",
                       (int)(nlen > 60 ? 60 : nlen), spec, pattern_names);

    gctx c = {.spec = spec, .name = name, .diag = diag, .ppn = o.procs_per_node};
    for (nf_node n = f->n_switches; n < f->n_nodes; n++)
        c.n_ep += is_endpoint(f, n);
    c.slots = (uint64_t)c.n_ep * c.ppn;
    if (c.slots > GR_RANKS_MAX)
        return gr_fail(diag, NF_EINVAL,
                       "%u endpoints x %u procs per node make more than 2^31 rank slots", c.n_ep,
                       c.ppn);

    int rc;
    if (name == names[0])
        rc = pat_grid2d(&c, args);
    else if (name == names[1])
        rc = pat_grid3d(&c, args);
    else if (name == names[2])
        rc = pat_random(&c, args, o.seed);
    else if (name == names[3])
        rc = pat_hier(&c, args);
    else
        rc = pat_file(&c, args);
    if (rc) goto fail;
    assert(c.n > 0 && c.nranks <= c.slots);
    if ((rc = map_members(&c, f, &o))) goto fail;

    nf_groups *g = nf__malloc(sizeof *g);
    if (!g) {
        rc = NF_ENOMEM;
        goto fail;
    }
    /* give back what duplicate endpoints freed; a failed shrink keeps the larger block */
    if (c.len < c.cap) {
        uint32_t *m = nf__realloc(c.rank, c.len * sizeof *m);
        if (m) c.rank = m;
    }
    *g = (nf_groups){.n = c.n, .off = c.off, .member = c.rank};
    *out = g;
    return NF_OK;
fail:
    if (rc == NF_ENOMEM) gr_fail(diag, rc, "%s: out of memory while building groups", name);
    nf__free(c.off);
    nf__free(c.rank);
    return rc;
}

void nf_groups_free(nf_groups *g) {
    if (!g) return;
    nf__free(g->off);
    nf__free(g->member);
    nf__free(g);
}

/* ---- groups from a subnet manager's SA --------------------------------------------------------
 */

/* A member found in the text: its MLID and CA, packed as mlid << 32 | node for one sort. */
typedef struct sactx {
    const nf_fabric *f;
    const char *file;
    nf_diag *diag;
    int line;
    nf__u64map port; /* port GUID -> CA */
    uint64_t *pair;
    size_t n, cap;
    uint64_t unknown;
    int unknown_line;
} sactx;

static int sa_err(sactx *c, const char *what) {
    return nf__fail_at(c->diag, NF_EPARSE, c->file, c->line, "%s", what);
}

static int sa_digit(char ch) {
    return ch >= '0' && ch <= '9'   ? ch - '0'
           : ch >= 'a' && ch <= 'f' ? ch - 'a' + 10
           : ch >= 'A' && ch <= 'F' ? ch - 'A' + 10
                                    : -1;
}

/* "0x" and 1 to 16 hex digits at *p, advancing it. */
static bool sa_hex(const char **p, const char *end, uint64_t *v) {
    const char *s = *p;
    if (end - s < 3 || s[0] != '0' || (s[1] != 'x' && s[1] != 'X')) return false;
    uint64_t x = 0;
    int n = 0;
    for (s += 2; s < end && sa_digit(*s) >= 0; s++, n++) {
        if (n == 16) return false;
        x = x << 4 | (uint64_t)sa_digit(*s);
    }
    if (!n) return false;
    *v = x;
    *p = s;
    return true;
}

/* An IPv6-notation GID (8 groups of up to 4 hex digits, one "::" allowed) in s .. end, as its
 * high and low 64 bits. */
static bool sa_gid6(const char *s, const char *end, uint64_t *hi, uint64_t *lo) {
    uint16_t g[8] = {0};
    int n = 0, gap = -1;
    const char *p = s;
    if (nf__starts(p, end, "::")) {
        gap = 0;
        p += 2;
    }
    while (p < end) {
        unsigned v = 0;
        int d = 0;
        for (; p < end && sa_digit(*p) >= 0; p++, d++)
            v = v << 4 | (unsigned)sa_digit(*p);
        if (d == 0 || d > 4 || n == 8) return false;
        g[n++] = (uint16_t)v;
        if (p == end) break;
        if (*p != ':') return false;
        p++;
        if (p < end && *p == ':') {
            if (gap >= 0) return false;
            gap = n;
            p++;
        } else if (p == end) {
            return false;
        }
    }
    if (gap < 0 && n != 8) return false;
    if (gap >= 0) { /* move the groups after the gap to the end */
        if (n == 8) return false;
        int tail = n - gap;
        memmove(g + 8 - tail, g + gap, (size_t)tail * sizeof *g);
        memset(g + gap, 0, (size_t)(8 - tail - gap) * sizeof *g);
    }
    *hi = *lo = 0;
    for (int i = 0; i < 4; i++) {
        *hi = *hi << 16 | g[i];
        *lo = *lo << 16 | g[4 + i];
    }
    return true;
}

/* A member record: MLID and port GID; all-zero GIDs refused. */
static int sa_member(sactx *c, uint64_t mlid, uint64_t hi, uint64_t lo) {
    if (mlid < 0xC000 || mlid > 0xFFFE)
        return nf__fail_at(c->diag, NF_EPARSE, c->file, c->line,
                           "MLID 0x%llX is outside the multicast range 0xC000-0xFFFE",
                           (unsigned long long)mlid);
    if (!hi && !lo)
        return sa_err(c, "the PortGid is all zero: the SA hides the members from a query "
                         "without the SM key; run saquery -m --smkey 1");
    uint32_t n;
    if (!nf__u64map_get(&c->port, lo, &n)) {
        if (!c->unknown++) c->unknown_line = c->line;
        return NF_OK;
    }
    if (NF_GROW(c->pair, c->cap, c->n + 1)) return NF_ENOMEM;
    c->pair[c->n++] = mlid << 32 | n;
    return NF_OK;
}

/* The value after "NAME....." of a saquery field line (two tabs, the name, dots), or NULL. */
static const char *sa_field(const char *p, const char *end, const char *name) {
    while (p < end && (*p == '\t' || *p == ' '))
        p++;
    if (!nf__starts(p, end, name)) return NULL;
    p += strlen(name);
    if (p == end || *p != '.') return NULL;
    while (p < end && *p == '.')
        p++;
    return p;
}

/* saquery's record in progress. */
typedef struct sarec {
    bool open, has_mlid, has_gid;
    uint64_t mlid, hi, lo;
    int line; /* of its PortGid */
} sarec;

static int sa_close(sactx *c, sarec *r) {
    if (!r->open) return NF_OK;
    int rc = NF_OK;
    if (!r->has_mlid || !r->has_gid) {
        rc = sa_err(c, "an MCMemberRecord without Mlid or PortGid");
    } else {
        int at = c->line;
        c->line = r->line;
        rc = sa_member(c, r->mlid, r->hi, r->lo);
        c->line = at;
    }
    *r = (sarec){0};
    return rc;
}

static int cmp_u64(const void *a, const void *b) {
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

static int sa_lines(sactx *c, const char *text, size_t len) {
    sarec r = {0};
    uint64_t group = 0; /* the MLID of the last "MC Group" line; 0 before one */
    const char *p = text, *end = text + len;
    int rc = NF_OK;
    while (p < end && !rc) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        const char *e = nl ? nl : end;
        c->line++;
        if ((size_t)(e - p) > NF_IO_MAX_LINE)
            return nf__fail_at(c->diag, NF_EPARSE, c->file, c->line, "line longer than %u bytes",
                               NF_IO_MAX_LINE);
        if (memchr(p, '\0', (size_t)(e - p))) return sa_err(c, "NUL byte: binary data");
        while (e > p && (e[-1] == '\r' || e[-1] == ' ' || e[-1] == '\t'))
            e--;
        const char *v;
        uint64_t x, hi, lo;
        if (p == e) {
            /* blank */
        } else if (nf__starts(p, e, "MCMemberRecord member dump:")) {
            rc = sa_close(c, &r);
            r.open = true;
        } else if ((v = sa_field(p, e, "Mlid"))) {
            const char *q = v;
            if (!r.open || !sa_hex(&q, e, &x) || q != e) return sa_err(c, "a bad Mlid line");
            r.mlid = x;
            r.has_mlid = true;
        } else if ((v = sa_field(p, e, "PortGid"))) {
            if (!r.open || !sa_gid6(v, e, &hi, &lo)) return sa_err(c, "a bad PortGid line");
            r.hi = hi;
            r.lo = lo;
            r.has_gid = true;
            r.line = c->line;
        } else if (*p == '\t' && r.open) {
            /* the record's other fields (MGID, ScopeState, ProxyJoin, NodeDescription) */
        } else if (nf__starts(p, e, "MC Group 0x")) {
            rc = sa_close(c, &r);
            const char *q = p + 9;
            if (!rc && (!sa_hex(&q, e, &group) || (q < e && *q != ' ' && *q != ':')))
                return sa_err(c, "an MC Group line without its MLID");
            if (!rc && (group < 0xC000 || group > 0xFFFE))
                return nf__fail_at(c->diag, NF_EPARSE, c->file, c->line,
                                   "MLID 0x%llX is outside the multicast range 0xC000-0xFFFE",
                                   (unsigned long long)group);
        } else if (nf__starts(p, e, "mcm_port: port_gid=0x")) {
            const char *q = p + 19;
            if (!group) return sa_err(c, "an mcm_port line before any MC Group line");
            bool ok = sa_hex(&q, e, &hi) && nf__starts(q, e, ":0x");
            if (ok) {
                q++;
                ok = sa_hex(&q, e, &lo) && (q == e || *q == ' ');
            }
            if (!ok) return sa_err(c, "an mcm_port line without a port_gid=0xPREFIX:0xGUID");
            rc = sa_member(c, group, hi, lo);
        } else if (r.open || !group) {
            return sa_err(c, "not a line of saquery -m or of opensm-sa.dump's groups");
        }
        /* else: another record kind of opensm-sa.dump (services, inform infos): not groups */
        p = nl ? nl + 1 : end;
    }
    if (!rc) rc = sa_close(c, &r);
    return rc;
}

int nf_groups_parse_sa(const nf_fabric *f, const char *text, size_t len, const char *filename,
                       nf_warn_fn warn, void *warn_ud, nf_groups **out, uint16_t **mlids,
                       nf_diag *diag) {
    *out = NULL;
    *mlids = NULL;
    sactx c = {.f = f, .file = filename ? filename : "<sa>", .diag = diag};
    if (len > NF_IO_MAX_BYTES)
        return nf__fail_at(diag, NF_EPARSE, c.file, 0, "larger than %llu MiB: not an SA dump",
                           (unsigned long long)(NF_IO_MAX_BYTES >> 20));
    nf__u64map_init(&c.port);
    nf_groups *g = NULL;
    uint16_t *ml = NULL;
    int rc = NF_OK;
    /* switches (their port 0) first, then ibsim's numbering, so that a CA port GUID of the
     * fabric itself wins a clash */
    for (nf_node n = 0; n < f->n_switches && !rc; n++)
        rc = nf__u64map_put(&c.port, f->guid[n], n);
    for (int pass = 0; pass < 2 && !rc; pass++)
        for (nf_node n = f->n_switches; n < f->n_nodes && !rc; n++)
            if (is_endpoint(f, n))
                rc = nf__u64map_put(
                    &c.port, pass ? f->port_guid[nf_port_index(f, n, 1)] : f->guid[n] + 1, n);
    if (rc || (rc = sa_lines(&c, text, len))) goto done;
    if (c.n) qsort(c.pair, c.n, sizeof *c.pair, cmp_u64);
    rc = NF_ENOMEM;
    if (!(g = nf__calloc(1, sizeof *g)) || !(g->off = nf__malloc((c.n + 2) * sizeof *g->off)) ||
        !(g->member = nf__malloc((c.n + 1) * sizeof *g->member)) ||
        !(ml = nf__malloc((c.n + 1) * sizeof *ml)))
        goto done;
    uint32_t k = 0, w = 0;
    g->off[0] = 0;
    for (size_t i = 0; i < c.n; i++) {
        if (i && c.pair[i] == c.pair[i - 1]) continue;
        if (!i || c.pair[i] >> 32 != c.pair[i - 1] >> 32) {
            if (i) g->off[++k] = w;
            ml[k] = (uint16_t)(c.pair[i] >> 32);
        }
        g->member[w++] = (nf_node)(c.pair[i] & 0xFFFFFFFFu);
    }
    if (c.n) g->off[++k] = w;
    g->n = k;
    if (!k) {
        rc = nf__fail_at(diag, NF_EINVAL, c.file, 0, "no group has a member in the fabric");
        goto done;
    }
    rc = NF_OK;
    if (warn && c.unknown) {
        char msg[160];
        snprintf(msg, sizeof msg,
                 "%llu members have a port GUID no cabled CA port or switch of the fabric has: "
                 "skipped",
                 (unsigned long long)c.unknown);
        warn(warn_ud, c.file, c.unknown_line, msg);
    }
done:
    if (rc == NF_ENOMEM) nf__fail_at(diag, rc, c.file, c.line, "out of memory");
    nf__u64map_fini(&c.port);
    nf__free(c.pair);
    if (rc) {
        nf_groups_free(g);
        nf__free(ml);
        return rc;
    }
    *out = g;
    *mlids = ml;
    return NF_OK;
}

int nf_groups_load_sa(const nf_fabric *f, const char *path, nf_warn_fn warn, void *warn_ud,
                      nf_groups **out, uint16_t **mlids, nf_diag *diag) {
    *out = NULL;
    *mlids = NULL;
    char *buf;
    size_t len;
    int rc = nf__read_text(path, "an SA dump", NF_IO_MAX_BYTES, NF_IO_MAX_LINE, &buf, &len, diag);
    if (rc) return rc;
    rc = nf_groups_parse_sa(f, buf ? buf : "", len, path, warn, warn_ud, out, mlids, diag);
    nf__free(buf);
    return rc;
}
