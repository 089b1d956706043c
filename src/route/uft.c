/* SPDX-License-Identifier: MIT */
/* Installed unicast forwarding tables (uft.h): a dense S x (top LID + 1) byte matrix of output
 * ports, read from and written in the real tools' text layouts. */
#include "netfab/uft.h"
#include "netfab/io.h"

#include "../util/diag.h"
#include "../util/mem.h"
#include "../util/textfile.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

struct nf_uft {
    const nf_fabric *f;
    uint16_t top;        /* highest LID */
    size_t stride;       /* top + 1 */
    uint8_t *port;       /* [switch * stride + lid] */
    nf_node *owner;      /* [lid]: the node with that LID, NF_NONE when none */
    uint8_t *owner_port; /* [lid]: its port (0 for a switch) */
};

int nf_uft_new(const nf_fabric *f, nf_uft **out, nf_diag *diag) {
    *out = NULL;
    uint16_t top = 0;
    for (nf_node n = 0; n < f->n_nodes; n++)
        for (unsigned p = 1; p <= f->nports[n]; p++) {
            uint16_t l = f->port_lid[nf_port_index(f, n, p)];
            if (l > top) top = l;
        }
    if (top == 0)
        return nf__fail_at(diag, NF_EINVAL, "", 0,
                           "the fabric has no LIDs (all 0): nothing to "
                           "resolve forwarding tables against");
    nf_uft *t = nf__calloc(1, sizeof *t);
    if (!t) return NF_ENOMEM;
    t->f = f;
    t->top = top;
    t->stride = (size_t)top + 1;
    t->port = nf__malloc((size_t)f->n_switches * t->stride + 1);
    t->owner = nf__malloc(t->stride * sizeof *t->owner);
    t->owner_port = nf__calloc(t->stride, 1);
    if (!t->port || !t->owner || !t->owner_port) {
        nf_uft_free(t);
        return NF_ENOMEM;
    }
    memset(t->port, NF_UFT_NONE, (size_t)f->n_switches * t->stride);
    for (size_t l = 0; l < t->stride; l++)
        t->owner[l] = NF_NONE;
    for (nf_node n = 0; n < f->n_nodes; n++) {
        if (nf_is_switch(f, n)) {
            if (f->lid[n] && t->owner[f->lid[n]] == NF_NONE) t->owner[f->lid[n]] = n;
            continue;
        }
        for (unsigned p = 1; p <= f->nports[n]; p++) {
            uint16_t l = f->port_lid[nf_port_index(f, n, p)];
            if (l && t->owner[l] == NF_NONE) {
                t->owner[l] = n;
                t->owner_port[l] = (uint8_t)p;
            }
        }
    }
    *out = t;
    return NF_OK;
}

void nf_uft_free(nf_uft *t) {
    if (!t) return;
    nf__free(t->port);
    nf__free(t->owner);
    nf__free(t->owner_port);
    nf__free(t);
}

uint16_t nf_uft_top_lid(const nf_uft *t) { return t->top; }

const nf_fabric *nf_uft_fabric(const nf_uft *t) { return t->f; }

nf_node nf_uft_lid_owner(const nf_uft *t, uint16_t lid, unsigned *port) {
    if (lid == 0 || lid > t->top) return NF_NONE;
    if (port) *port = t->owner_port[lid];
    return t->owner[lid];
}

unsigned nf_uft_get(const nf_uft *t, nf_node s, uint16_t lid) {
    if (!nf_is_switch(t->f, s) || lid > t->top) return NF_UFT_NONE;
    return t->port[(size_t)s * t->stride + lid];
}

int nf_uft_set(nf_uft *t, nf_node s, uint16_t lid, unsigned port) {
    if (!nf_is_switch(t->f, s) || lid > t->top || (port != NF_UFT_NONE && port > t->f->nports[s]))
        return NF_EINVAL;
    t->port[(size_t)s * t->stride + lid] = (uint8_t)port;
    return NF_OK;
}

/* ---- reading -------------------------------------------------------------------------------- */

/* The GUID of a header line "Unicast lids [..] of switch ... guid 0x<hex> ...". */
static bool header_guid(const char *p, const char *end, uint64_t *guid) {
    for (const char *q = p; q + 7 < end; q++)
        if (memcmp(q, " guid 0x", 8) == 0) {
            q += 6;
            return nf__hex_at(&q, end, guid);
        }
    return false;
}

/* The footer lines: "N lids dumped", "N valid lids dumped". */
static bool footer(const char *p, const char *end) {
    while (p < end && *p >= '0' && *p <= '9')
        p++;
    return nf__starts(p, end, " lids dumped") || nf__starts(p, end, " valid lids dumped");
}

int nf_uft_parse(const nf_fabric *f, const char *text, size_t len, const char *filename,
                 nf_warn_fn warn, void *warn_ud, nf_uft **out, nf_diag *diag) {
    *out = NULL;
    const char *file = filename ? filename : "<tables>";
    if (len > NF_IO_MAX_BYTES)
        return nf__fail_at(diag, NF_EPARSE, file, 0, "larger than %llu MiB: not a table file",
                           (unsigned long long)(NF_IO_MAX_BYTES >> 20));
    nf_uft *t;
    int rc = nf_uft_new(f, &t, diag);
    if (rc) {
        if (rc == NF_EINVAL && diag) snprintf(diag->file, sizeof diag->file, "%s", file);
        return rc;
    }
    bool *seen = nf__calloc(f->n_switches + 1, sizeof *seen);
    if (!seen) {
        nf_uft_free(t);
        return NF_ENOMEM;
    }
    nf__tally no_lid = {0}, no_link = {0}, no_top = {0};
    nf_node sw = NF_NONE;
    uint64_t top = 0;     /* the hex top LID of the current dump_fts/ibroute header, else 0 */
    bool top_seen = true; /* its entry was listed */
    int top_line = 0;
    uint64_t top_missing = 0; /* the first such top LID not listed */
    int line = 0;
    const char *p = text, *end = text + len;
    while (p < end && !rc) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        const char *e = nl ? nl : end;
        line++;
        if ((size_t)(e - p) > NF_IO_MAX_LINE) {
            rc = nf__fail_at(diag, NF_EPARSE, file, line, "line longer than %u bytes",
                             NF_IO_MAX_LINE);
            break;
        }
        if (memchr(p, '\0', (size_t)(e - p))) {
            rc = nf__fail_at(diag, NF_EPARSE, file, line, "NUL byte: binary data, not a table");
            break;
        }
        const char *le = e;
        while (le > p && (le[-1] == '\r' || le[-1] == ' ' || le[-1] == '\t'))
            le--;
        uint64_t v;
        const char *q = p;
        if (le == p || *p == ' ' || *p == '\t' || footer(p, le)) {
            /* blank, the column heads of dump_fts and ibroute, the footers */
        } else if (nf__starts(p, le, "Unicast lids [")) {
            if (!top_seen && !no_top.n++) no_top.first = top_line, top_missing = top;
            const char *r = p + 14;
            top = 0;
            top_seen = true;
            if (nf__starts(r, le, "0x") && nf__hex_at(&r, le, &v) && *r == '-' && ++r < le &&
                nf__hex_at(&r, le, &v) && v % 64 == 0 && v)
                top = v, top_seen = false, top_line = line;
            uint64_t guid;
            if (!header_guid(p, le, &guid)) {
                rc = nf__fail_at(diag, NF_EPARSE, file, line, "switch header without a GUID");
                break;
            }
            sw = nf_fabric_find_guid(f, guid);
            if (sw == NF_NONE || !nf_is_switch(f, sw)) {
                rc = nf__fail_at(diag, NF_EPARSE, file, line,
                                 "switch GUID 0x%016llx is no switch of the fabric",
                                 (unsigned long long)guid);
                break;
            }
            if (seen[sw]) {
                rc = nf__fail_at(diag, NF_EPARSE, file, line, "switch %s (0x%016llx) listed twice",
                                 nf_node_name(f, sw), (unsigned long long)guid);
                break;
            }
            seen[sw] = true;
        } else if (nf__hex_at(&q, le, &v)) {
            /* an entry: LID, blanks, the port in decimal, then " : (...)" or " # ..." or nothing */
            const char *r = q;
            while (r < le && *r == ' ')
                r++;
            unsigned port = 0, digits = 0;
            for (; r < le && *r >= '0' && *r <= '9' && digits < 4; r++, digits++)
                port = port * 10 + (unsigned)(*r - '0');
            bool tail_ok = r == le || *r == ' ';
            if (q == r || !digits || !tail_ok || v > 0xFFFF) {
                rc = nf__fail_at(diag, NF_EPARSE, file, line,
                                 "not a forwarding entry (want \"0xLID PORT\")");
                break;
            }
            if (sw == NF_NONE) {
                rc = nf__fail_at(diag, NF_EPARSE, file, line, "an entry before any switch header");
                break;
            }
            if (v == top) top_seen = true;
            if (port == NF_UFT_NONE) {
                /* an invalid entry (dump_fts -a): none */
            } else if (port > f->nports[sw]) {
                rc = nf__fail_at(diag, NF_EPARSE, file, line,
                                 "port %u of switch %s, which has %u ports", port,
                                 nf_node_name(f, sw), f->nports[sw]);
                break;
            } else if (nf_uft_lid_owner(t, (uint16_t)v, NULL) == NF_NONE) {
                nf__tally_add(&no_lid, line);
            } else {
                if (port && f->peer[nf_port_index(f, sw, port)] == NF_NONE)
                    nf__tally_add(&no_link, line);
                t->port[(size_t)sw * t->stride + v] = (uint8_t)port;
            }
        } else {
            rc = nf__fail_at(diag, NF_EPARSE, file, line,
                             "not a line of opensm-lfts.dump, dump_fts or ibroute");
            break;
        }
        p = nl ? nl + 1 : end;
    }
    nf__free(seen);
    if (rc) {
        nf_uft_free(t);
        return rc;
    }
    if (!top_seen && !no_top.n++) no_top.first = top_line, top_missing = top;
    char msg[320];
    if (warn && no_lid.n) {
        snprintf(msg, sizeof msg, "%llu entries for LIDs that no port of the fabric has: skipped",
                 (unsigned long long)no_lid.n);
        warn(warn_ud, file, no_lid.first, msg);
    }
    if (warn && no_link.n) {
        snprintf(msg, sizeof msg, "%llu entries forward out of a port with no link",
                 (unsigned long long)no_link.n);
        warn(warn_ud, file, no_link.first, msg);
    }
    if (warn && no_top.n) {
        snprintf(
            msg, sizeof msg,
            "%llu switches list no entry for the top LID 0x%llx of their header: "
            "infiniband-diags' dump_fts and ibroute skip a top LID that is a multiple of 64 "
            "(the switch may still hold it: ibtracert tells; OpenSM's opensm-lfts.dump has it)",
            (unsigned long long)no_top.n, (unsigned long long)top_missing);
        warn(warn_ud, file, no_top.first, msg);
    }
    *out = t;
    return NF_OK;
}

int nf_uft_load(const nf_fabric *f, const char *path, nf_warn_fn warn, void *warn_ud, nf_uft **out,
                nf_diag *diag) {
    *out = NULL;
    char *buf;
    size_t len;
    int rc = nf__read_text(path, "a table file", NF_IO_MAX_BYTES, NF_IO_MAX_LINE, &buf, &len, diag);
    if (rc) return rc;
    rc = nf_uft_parse(f, buf ? buf : "", len, path, warn, warn_ud, out, diag);
    nf__free(buf);
    return rc;
}

/* ---- writing -------------------------------------------------------------------------------- */

int nf_uft_write(const nf_uft *t, FILE *out) {
    const nf_fabric *f = t->f;
    for (nf_node s = 0; s < f->n_switches; s++) {
        fprintf(out, "Unicast lids [0-%u] of switch Lid %u guid 0x%016llx ('%s'):\n", t->top,
                f->lid[s], (unsigned long long)f->guid[s], nf_node_name(f, s));
        for (size_t l = 1; l < t->stride; l++) {
            unsigned port = t->port[(size_t)s * t->stride + l];
            if (port == NF_UFT_NONE) continue;
            nf_node o = t->owner[l];
            bool sw = nf_is_switch(f, o);
            uint64_t guid = sw ? f->guid[o] : f->port_guid[nf_port_index(f, o, t->owner_port[l])];
            fprintf(out, "0x%04zx %03u # %s portguid 0x%016llx: '%s'\n", l, port,
                    sw ? "Switch" : "Channel Adapter", (unsigned long long)guid,
                    nf_node_name(f, o));
        }
        fprintf(out, "%u lids dumped\n", t->top);
    }
    return ferror(out) ? NF_EIO : NF_OK;
}

/* ---- checking -------------------------------------------------------------------------------- */

enum { OUT_PENDING, OUT_DELIVERED, OUT_HOLE, OUT_DEAD, OUT_LOOP, OUT_MISROUTED };

/* A dependency of the graph: channel from (a global port) waits on channel to, for routes to
 * lid. */
typedef struct dep {
    uint32_t from, to;
    uint16_t lid;
} dep;

static int dep_cmp(const void *a, const void *b) {
    const dep *x = a, *y = b;
    if (x->from != y->from) return x->from < y->from ? -1 : 1;
    if (x->to != y->to) return x->to < y->to ? -1 : 1;
    return (x->lid > y->lid) - (x->lid < y->lid);
}

/* The switch owning global port g, and its port number. */
static nf_uft_hop hop_of(const nf_fabric *f, uint32_t g, uint16_t lid) {
    nf_node lo = 0, hi = f->n_switches; /* the last switch s with port_off[s] <= g */
    while (hi - lo > 1) {
        nf_node mid = lo + (hi - lo) / 2;
        if (f->port_off[mid] <= g)
            lo = mid;
        else
            hi = mid;
    }
    return (nf_uft_hop){.sw = lo, .port = g - f->port_off[lo] + 1, .lid = lid};
}

/* A cycle of the graph deps[0..n) (sorted, distinct) into r->cycle; 0 or NF_ENOMEM. Iterative
 * depth-first search; a dependency onto a channel still on the search's stack closes a cycle. */
static int find_cycle(const nf_fabric *f, const dep *deps, size_t n, nf_uft_report *r) {
    uint32_t P = f->port_off[f->n_switches];
    uint32_t *first = nf__calloc((size_t)P + 1, sizeof *first); /* CSR over deps by from */
    uint8_t *color = nf__calloc(P ? P : 1, 1);                  /* 0 new, 1 on stack, 2 done */
    uint32_t *stack = nf__malloc(((size_t)P + 1) * sizeof *stack);
    size_t *next = nf__malloc(((size_t)P + 1) * sizeof *next); /* per stack level: next dep */
    int rc = NF_OK;
    if (!first || !color || !stack || !next) {
        rc = NF_ENOMEM;
        goto out;
    }
    for (size_t i = 0; i < n; i++)
        first[deps[i].from + 1]++;
    for (uint32_t g = 0; g < P; g++)
        first[g + 1] += first[g];
    for (uint32_t root = 0; root < P && !r->cycle_len; root++) {
        if (color[root] || first[root] == first[root + 1]) continue;
        size_t top = 0;
        stack[0] = root;
        next[0] = first[root];
        color[root] = 1;
        while (top != SIZE_MAX && !r->cycle_len) {
            uint32_t u = stack[top];
            if (next[top] == first[u + 1]) {
                color[u] = 2;
                top--;
                continue;
            }
            const dep *e = &deps[next[top]++];
            if (color[e->to] == 0) {
                color[e->to] = 1;
                stack[++top] = e->to;
                next[top] = first[e->to];
            } else if (color[e->to] == 1) {
                size_t k = top;
                while (stack[k] != e->to)
                    k--;
                uint32_t len = (uint32_t)(top - k + 1);
                r->cycle = nf__malloc(len * sizeof *r->cycle);
                if (!r->cycle) {
                    rc = NF_ENOMEM;
                    break;
                }
                /* each channel with the LID of the dependency leaving it */
                for (size_t j = k; j <= top; j++) {
                    const dep *out = j < top ? &deps[next[j] - 1] : e;
                    r->cycle[j - k] = hop_of(f, stack[j], out->lid);
                }
                r->cycle_len = len;
            }
        }
    }
out:
    nf__free(first);
    nf__free(color);
    nf__free(stack);
    nf__free(next);
    return rc;
}

void nf_uft_report_fini(nf_uft_report *r) {
    if (!r) return;
    nf__free(r->problem);
    nf__free(r->cycle);
    r->problem = r->cycle = NULL;
}

int nf_uft_check(const nf_uft *t, unsigned flags, nf_uft_report *r, nf_diag *diag) {
    (void)diag;
    const nf_fabric *f = t->f;
    memset(r, 0, sizeof *r);
    uint32_t S = f->n_switches, P = f->port_off[S];
    bool with_sw = flags & NF_UFT_CHECK_SWITCH_LIDS;
    uint32_t *stamp = nf__calloc(S ? S : 1, sizeof *stamp);
    uint8_t *res = nf__calloc(S ? S : 1, 1);
    nf_node *path = nf__malloc(((size_t)S + 1) * sizeof *path);
    nf_node *src = nf__malloc(((size_t)S + 1) * sizeof *src);
    uint8_t *used = nf__calloc(P ? P : 1, 1);
    dep *deps = NULL;
    size_t n_deps = 0, cap = 0;
    int rc = NF_OK;
    if (!stamp || !res || !path || !src || !used) {
        rc = NF_ENOMEM;
        goto out;
    }
    /* the sources: switches a CA is cabled to (every switch with the flag) */
    for (nf_node s = 0; s < S; s++) {
        bool ca = with_sw;
        for (unsigned p = 1; p <= f->nports[s] && !ca; p++) {
            nf_node w = f->peer[nf_port_index(f, s, p)];
            ca = w != NF_NONE && !nf_is_switch(f, w);
        }
        if (ca) src[r->sources++] = s;
    }
    uint32_t cur = 0;
    for (size_t lid = 1; lid < t->stride; lid++) {
        nf_node o = t->owner[lid];
        if (o == NF_NONE || (nf_is_switch(f, o) && !with_sw)) continue;
        unsigned op = t->owner_port[lid];
        const uint8_t *col = t->port + lid; /* switch s's entry: col[s * stride] */
        r->dests++;
        cur++;
        for (uint32_t i = 0; i < r->sources; i++) {
            nf_node s = src[i];
            uint32_t len = 0;
            int outcome = OUT_PENDING;
            nf_node loop_at = NF_NONE;
            while (outcome == OUT_PENDING) {
                if (stamp[s] == cur) {
                    outcome = res[s] == OUT_PENDING ? OUT_LOOP : res[s];
                    if (outcome == OUT_LOOP) loop_at = s;
                    break;
                }
                stamp[s] = cur;
                res[s] = OUT_PENDING;
                path[len++] = s;
                unsigned p = col[(size_t)s * t->stride];
                if (p == NF_UFT_NONE) {
                    outcome = OUT_HOLE;
                    break;
                }
                if (p == 0) {
                    outcome = s == o ? OUT_DELIVERED : OUT_MISROUTED;
                    break;
                }
                nf_gport g = nf_port_index(f, s, p);
                nf_node w = f->peer[g];
                if (w == NF_NONE || f->link_state[f->port_link[g]] != NF_LINK_UP) {
                    outcome = OUT_DEAD;
                    break;
                }
                used[g] = 1;
                if (!nf_is_switch(f, w)) {
                    outcome = w == o && f->peer_port[g] == op ? OUT_DELIVERED : OUT_MISROUTED;
                    break;
                }
                unsigned q = col[(size_t)w * t->stride];
                if (q != NF_UFT_NONE && q != 0) {
                    nf_gport h = nf_port_index(f, w, q);
                    if (f->peer[h] != NF_NONE && f->link_state[f->port_link[h]] == NF_LINK_UP) {
                        if (NF_GROW(deps, cap, n_deps + 1)) {
                            rc = NF_ENOMEM;
                            goto out;
                        }
                        deps[n_deps++] = (dep){.from = g, .to = h, .lid = (uint16_t)lid};
                    }
                }
                s = w;
            }
            for (uint32_t j = 0; j < len; j++)
                res[path[j]] = (uint8_t)outcome;
            r->routes++;
            r->delivered += outcome == OUT_DELIVERED;
            r->holes += outcome == OUT_HOLE;
            r->dead_ports += outcome == OUT_DEAD;
            r->loops += outcome == OUT_LOOP;
            r->misrouted += outcome == OUT_MISROUTED;
            if (outcome != OUT_DELIVERED && !r->problem_lid && len) {
                /* the first failing route is always walked whole: a switch that ended an earlier
                 * walk badly would have been the first */
                uint32_t n = len + (loop_at != NF_NONE);
                r->problem = nf__malloc(n * sizeof *r->problem);
                if (!r->problem) {
                    rc = NF_ENOMEM;
                    goto out;
                }
                for (uint32_t j = 0; j < n; j++) {
                    nf_node x = j < len ? path[j] : loop_at;
                    r->problem[j] = (nf_uft_hop){
                        .sw = x, .port = col[(size_t)x * t->stride], .lid = (uint16_t)lid};
                }
                r->problem_len = n;
                r->problem_lid = (uint16_t)lid;
            }
        }
    }
    for (uint32_t g = 0; g < P; g++)
        r->vertices += used[g];
    if (n_deps) {
        qsort(deps, n_deps, sizeof *deps, dep_cmp);
        size_t k = 0; /* distinct (from, to), each with its lowest LID */
        for (size_t i = 0; i < n_deps; i++)
            if (!k || deps[i].from != deps[k - 1].from || deps[i].to != deps[k - 1].to)
                deps[k++] = deps[i];
        n_deps = k;
    }
    r->edges = n_deps;
    rc = find_cycle(f, deps, n_deps, r);
out:
    nf__free(stamp);
    nf__free(res);
    nf__free(path);
    nf__free(src);
    nf__free(used);
    nf__free(deps);
    if (rc) nf_uft_report_fini(r);
    return rc;
}
