/* SPDX-License-Identifier: MIT */
/* `netfab mcast --analyze FILE`: the multicast forwarding tables a subnet manager installed
 * (dump_fts -M, ibroute -M or opensm.mcfdbs), one row per MLID (members, switches, roots, height,
 * members reached, faults) and the link loads (EFI) with their histogram; with --engine, the
 * same groups routed by netfab's engines beside. */
#include "cmd.h"
#include "netfab/groups.h"
#include "netfab/hops.h"
#include "netfab/mcast.h"
#include "netfab/mft.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

/* The fault bits of a group as words: "loop,unreached", or "-". */
static const char *problem_text(unsigned p, char *buf, size_t cap) {
    static const struct {
        unsigned bit;
        const char *name;
    } names[] = {{NF_MFT_LOOP, "loop"},
                 {NF_MFT_UNREACHED, "unreached"},
                 {NF_MFT_NO_LINK, "no-link"},
                 {NF_MFT_ASYMMETRIC, "asymmetric"}};
    size_t n = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (p & names[i].bit)
            n += (size_t)snprintf(buf + n, cap - n, "%s%s", n ? "," : "", names[i].name);
    return n ? buf : "-";
}

/* The engines' results for the groups, by MLID: height[e][k] of the table's group k, or -1 when
 * the engine has no such group (or did not route it). */
typedef struct beside {
    int n_eng;
    nf_mcast *m[32];
    int *height[32];
} beside;

static int route_beside(const nf_fabric *f, const nf_hops *h, const nf_groups *g,
                        const uint16_t *mlid, const nf_mft_report *r,
                        const nf_mcast_engine *const *engines, int n_eng, beside *b) {
    nf_diag d = {{0}, 0, {0}};
    b->n_eng = n_eng;
    for (int e = 0; e < n_eng; e++) {
        int rc = nf_mcast_route(f, h, g, engines[e], &b->m[e], &d);
        if (rc) return nf_app_report(rc, &d);
        if (!(b->height[e] = malloc(((size_t)r->n_groups + 1) * sizeof *b->height[e]))) {
            fprintf(stderr, "netfab mcast: %s\n", nf_strerror(NF_ENOMEM));
            return NF_EXIT_FAIL;
        }
        /* both lists ascend by MLID: merge */
        for (uint32_t i = 0, k = 0; i < r->n_groups; i++) {
            while (k < g->n && mlid[k] < r->group[i].mlid)
                k++;
            b->height[e][i] = k < g->n && mlid[k] == r->group[i].mlid && b->m[e]->status[k] == NF_OK
                                  ? b->m[e]->height[k]
                                  : -1;
        }
    }
    return NF_EXIT_OK;
}

static void beside_fini(beside *b) {
    for (int e = 0; e < b->n_eng; e++) {
        nf_mcast_free(b->m[e]);
        free(b->height[e]);
    }
}

/* A switch as the tables name it: its GUID. */
static void guid_text(const nf_fabric *f, nf_node s, char *buf, size_t cap) {
    snprintf(buf, cap, "0x%016" PRIx64, f->guid[s]);
}

/* The width of an engine's height column: its name, at least 8. */
static int col_width(const nf_mcast_engine *e) {
    int w = (int)strlen(nf_mcast_engine_name(e));
    return w > 8 ? w : 8;
}

static void print_table(const nf_fabric *f, const nf_mft_report *r, const beside *b,
                        const nf_mcast_engine *const *engines, const char *path) {
    printf("%-6s %7s %8s %5s %-18s %5s %6s %7s", "mlid", "members", "switches", "links", "root",
           "roots", "height", "reached");
    for (int e = 0; e < b->n_eng; e++)
        printf(" %*s", col_width(engines[e]), nf_mcast_engine_name(engines[e]));
    printf("  problems\n");
    for (uint32_t i = 0; i < r->n_groups; i++) {
        const nf_mft_group *g = &r->group[i];
        char root[24], probs[64];
        guid_text(f, r->roots[g->root_off], root, sizeof root);
        printf("0x%04X %7u %8u %5u %-18s %5u %6u %7u", g->mlid, g->members, g->switches, g->links,
               root, g->n_roots, g->height, g->reached);
        for (int e = 0; e < b->n_eng; e++)
            if (b->height[e][i] < 0)
                printf(" %*s", col_width(engines[e]), "-");
            else
                printf(" %*d", col_width(engines[e]), b->height[e][i]);
        printf("  %s\n", problem_text(g->problems, probs, sizeof probs));
    }
    printf("%s: %u groups, %u with problems; height max %u, mean %.2f\n", path, r->n_groups,
           r->bad_groups, r->max_height, r->mean_height);
    uint32_t isl = 0;
    for (uint32_t e = 0; e <= r->max_efi; e++)
        isl += r->hist[e];
    printf("EFI over inter-switch links: max %u, mean %.2f, %u of %u links used\n", r->max_efi,
           r->mean_efi, r->links_used, isl);
    printf("%8s %8s\n", "EFI", "links");
    for (uint32_t e = 0; e <= r->max_efi; e++)
        if (r->hist[e]) printf("%8u %8u\n", e, r->hist[e]);
}

int nf_app_mcast_analyze(const char *topo, int threads, const char *tables, const char *sa_spec,
                         const nf_mcast_engine *const *engines, int n_eng, bool as_json) {
    nf_fabric *f = NULL;
    nf_hops *h = NULL;
    nf_mft *t = NULL;
    nf_mft_report *r = NULL;
    nf_groups *g = NULL;
    uint16_t *mlid = NULL;
    beside b = {0};
    json_t *o = NULL;
    nf_diag d = {{0}, 0, {0}};
    int rc, status = nf_app_fabric(topo, threads, &f, n_eng ? &h : NULL);
    if (status) goto done;
    double t0 = nf_app_now();
    if ((rc = nf_mft_load(f, tables, nf_app_warn, NULL, &t, &d))) {
        status = nf_app_report(rc, &d);
        goto done;
    }
    double t1 = nf_app_now();
    if ((rc = nf_mft_analyze(t, &r))) {
        status = nf_app_report(rc, &d);
        goto done;
    }
    double read_s = t1 - t0, analyze_s = nf_app_now() - t1;
    if (n_eng) {
        if (sa_spec)
            rc = nf_groups_load_sa(f, sa_spec + 3, nf_app_warn, NULL, &g, &mlid, &d);
        else
            rc = nf_mft_groups(t, &g, &mlid, &d);
        if (rc) {
            status = nf_app_report(rc, &d);
            goto done;
        }
        if ((status = route_beside(f, h, g, mlid, r, engines, n_eng, &b))) goto done;
    }
    if (!as_json) {
        print_table(f, r, &b, engines, tables);
        printf("read %.4f s, analysed %.4f s\n", read_s, analyze_s);
        for (int e = 0; e < n_eng; e++) {
            nf_mcast_stats st;
            nf_mcast_stats_compute(f, g, b.m[e], &st);
            printf("%s on the same %u groups: EFI max %u, mean %.2f, %u links used; height max "
                   "%u, mean %.2f\n",
                   nf_mcast_engine_name(engines[e]), st.groups, st.max_efi, st.mean_efi,
                   st.links_used, st.max_height, st.mean_height);
        }
    } else {
        json_t *groups = json_array(), *hist = json_array(), *eng = json_array();
        o = json_pack("{s:s, s:s, s:I, s:I, s:I, s:f, s:I, s:I, s:f, s:f, s:f}", "tables", tables,
                      "topo", topo, "groups", (json_int_t)r->n_groups, "bad_groups",
                      (json_int_t)r->bad_groups, "max_efi", (json_int_t)r->max_efi, "mean_efi",
                      r->mean_efi, "links_used", (json_int_t)r->links_used, "max_height",
                      (json_int_t)r->max_height, "mean_height", r->mean_height, "read_s", read_s,
                      "analyze_s", analyze_s);
        if (!o || !groups || !hist || !eng) {
            json_decref(groups);
            json_decref(hist);
            json_decref(eng);
            goto oom;
        }
        json_object_set_new(o, "per_group", groups);
        json_object_set_new(o, "efi_hist", hist);
        json_object_set_new(o, "engines", eng);
        for (uint32_t e = 1; e <= r->max_efi; e++)
            if (r->hist[e])
                json_array_append_new(hist,
                                      json_pack("[I, I]", (json_int_t)e, (json_int_t)r->hist[e]));
        for (uint32_t i = 0; i < r->n_groups; i++) {
            const nf_mft_group *x = &r->group[i];
            char buf[24];
            json_t *roots = json_array(), *probs = json_array(), *eh = json_object();
            snprintf(buf, sizeof buf, "0x%04X", x->mlid);
            json_t *row = json_pack("{s:s, s:I, s:I, s:I, s:I, s:I}", "mlid", buf, "members",
                                    (json_int_t)x->members, "switches", (json_int_t)x->switches,
                                    "links", (json_int_t)x->links, "height", (json_int_t)x->height,
                                    "reached", (json_int_t)x->reached);
            if (!row || !roots || !probs || !eh) {
                json_decref(row);
                json_decref(roots);
                json_decref(probs);
                json_decref(eh);
                goto oom;
            }
            for (uint32_t k = 0; k < x->n_roots; k++) {
                guid_text(f, r->roots[x->root_off + k], buf, sizeof buf);
                json_array_append_new(roots, json_string(buf));
            }
            static const char *const pn[] = {"loop", "unreached", "no-link", "asymmetric"};
            for (unsigned k = 0; k < 4; k++)
                if (x->problems & (1u << k)) json_array_append_new(probs, json_string(pn[k]));
            for (int e = 0; e < n_eng; e++)
                json_object_set_new(eh, nf_mcast_engine_name(engines[e]),
                                    b.height[e][i] < 0 ? json_null()
                                                       : json_integer(b.height[e][i]));
            json_object_set_new(row, "roots", roots);
            json_object_set_new(row, "problems", probs);
            if (n_eng)
                json_object_set_new(row, "engine_height", eh);
            else
                json_decref(eh);
            json_array_append_new(groups, row);
        }
        for (int e = 0; e < n_eng; e++) {
            json_t *x = nf_app_mcast_json(f, topo, sa_spec ? sa_spec : tables, g, b.m[e],
                                          engines[e], nf_mcast_lower_bound(f, h, g), false);
            if (!x) goto oom;
            json_array_append_new(eng, x);
        }
        json_dumpf(o, stdout, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
        putchar('\n');
    }
    if (r->bad_groups) {
        fprintf(stderr, "netfab mcast: %s: %u of %u groups have problems\n", tables, r->bad_groups,
                r->n_groups);
        status = NF_EXIT_FAIL;
    }
    goto done;
oom:
    fprintf(stderr, "netfab mcast: %s\n", nf_strerror(NF_ENOMEM));
    status = NF_EXIT_FAIL;
done:
    json_decref(o);
    beside_fini(&b);
    nf_free(mlid);
    nf_groups_free(g);
    nf_mft_report_free(r);
    nf_mft_free(t);
    nf_hops_free(h);
    nf_fabric_free(f);
    return status;
}
