/* SPDX-License-Identifier: MIT */
/* `netfab mcast`: route a multicast workload on a fabric with one or more engines, print max and
 * mean EFI, tree heights and routing time per engine, verify the trees, export them. */
#define _GNU_SOURCE
#include "cmd.h"
#include "opts.h"
#include "progress.h"
#include "netfab/gen.h"
#include "netfab/groups.h"
#include "netfab/hops.h"
#include "netfab/mcast.h"

#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The engines the library has, for --help. */
static void mcast_engines(FILE *out) {
    fprintf(out, "engines: ");
    for (size_t i = 0; i < nf_mcast_engine_count(); i++)
        fprintf(out, "%s%s", i ? ", " : "", nf_mcast_engine_name(nf_mcast_engine_at(i)));
    fprintf(out, " (default all)\n\n");
}

/* Splits a comma list of engine names (or "all") into engines; returns the count or -1. */
static int parse_engines(const char *list, const nf_mcast_engine **out, int cap) {
    if (strcmp(list, "all") == 0) {
        int n = 0;
        for (size_t i = 0; i < nf_mcast_engine_count() && n < cap; i++)
            out[n++] = nf_mcast_engine_at(i);
        return n;
    }
    int n = 0;
    const char *p = list;
    while (*p) {
        const char *q = strchr(p, ',');
        size_t len = q ? (size_t)(q - p) : strlen(p);
        char name[64];
        if (len == 0 || len >= sizeof name || n >= cap) {
            nf_opt_bad("mcast", "--engine", "a list of engine names, or all", list);
            return -1;
        }
        memcpy(name, p, len);
        name[len] = '\0';
        const nf_mcast_engine *e = nf_mcast_engine_find(name);
        if (!e) {
            char known[512];
            nf_opt_usage("mcast", "unknown engine '%s' (%s; or all)", name,
                         nf_app_known(NF_APP_ENGINES, known, sizeof known));
            return -1;
        }
        out[n++] = e;
        p += len + (q != NULL);
    }
    return n;
}

/* [[efi, links], ...], ascending: how many inter-switch links carry each EFI, over the links
 * that carry at least one group. Inter-switch means neither end is a CA, exactly as
 * nf_mcast_stats_compute counts them, so the links sum to links_used, the weighted mean is
 * mean_efi and the last EFI is max_efi. NULL when out of memory. */
static json_t *efi_hist(const nf_fabric *f, const nf_mcast *m, uint32_t max_efi) {
    json_t *hist = json_array();
    uint32_t *count = calloc((size_t)max_efi + 1, sizeof *count);
    if (!hist || !count) {
        json_decref(hist);
        free(count);
        return NULL;
    }
    for (nf_link l = 0; l < f->n_links; l++)
        if (f->link_a[l] < f->n_switches && f->link_z[l] < f->n_switches && m->efi[l])
            count[m->efi[l]]++;
    for (uint32_t e = 1; e <= max_efi; e++)
        if (count[e])
            json_array_append_new(hist, json_pack("[I, I]", (json_int_t)e, (json_int_t)count[e]));
    free(count);
    return hist;
}

json_t *nf_app_mcast_json(const nf_fabric *f, const char *topo, const char *pattern,
                          const nf_groups *g, const nf_mcast *m, const nf_mcast_engine *e,
                          uint32_t lower_bound, bool verified) {
    nf_mcast_stats st;
    nf_mcast_stats_compute(f, g, m, &st);
    json_t *o = json_pack(
        "{s:s, s:s, s:s, s:I, s:I, s:I, s:f, s:I, s:f, s:I, s:f, s:I, s:f, s:f, s:f, s:f, s:I, "
        "s:b, s:I, s:I}",
        "engine", nf_mcast_engine_name(e), "topo", topo, "groups_spec", pattern, "groups",
        (json_int_t)st.groups, "memberships", (json_int_t)st.memberships, "max_efi",
        (json_int_t)st.max_efi, "mean_efi", st.mean_efi, "max_efi_host",
        (json_int_t)st.max_efi_host, "mean_efi_host", st.mean_efi_host, "max_height",
        (json_int_t)st.max_height, "mean_height", st.mean_height, "lower_bound",
        (json_int_t)lower_bound, "route_s", m->root_s + m->tree_s + m->refine_s, "root_s",
        m->root_s, "tree_s", m->tree_s, "refine_s", m->refine_s, "failed", (json_int_t)st.failed,
        "verified", verified, "peak_rss_kib", (json_int_t)nf_app_peak_rss_kib(), "links_used",
        (json_int_t)st.links_used);
    json_t *hist = o ? efi_hist(f, m, st.max_efi) : NULL;
    if (!hist || json_object_set_new(o, "efi_hist", hist)) {
        json_decref(o);
        return NULL;
    }
    return o;
}

/* The bar of the engines' runs: engine i of n, done to frac. */
static int engine_at, n_engines;
static void on_progress(void *ud, double frac) {
    nf_progress_set(ud, (engine_at + frac) / (n_engines > 0 ? n_engines : 1));
}

int nf_cmd_mcast(int argc, char **argv) {
    const char *topo = NULL, *pattern = NULL, *engine_list = "all", *mft_path = NULL,
               *groups_path = NULL, *tables = NULL;
    bool engine_given = false;
    nf_workload_opts wopts = {.procs_per_node = 1, .mapping = NF_MAP_AWARE, .seed = 1};
    bool verify = false, as_json = false;
    int threads = 0;
    static const char *const mappings[] = {"aware", "random", NULL};
    const nf_opt rows[] = {
        {NF_OPT_TOPO(topo), .short_name = 't'},
        {.name = "groups",
         .short_name = 'g',
         .arg = "PATTERN",
         .kind = NF_OPT_STR,
         NF_OPT_TO(pattern),
         .help = "the workload (patterns above)"},
        {.name = "engine",
         .short_name = 'e',
         .arg = "LIST|all",
         .kind = NF_OPT_STR,
         NF_OPT_TO(engine_list),
         .given = &engine_given,
         .help = "comma-separated engines (default all; with --analyze, none)"},
        {.name = "analyze",
         .short_name = 'A',
         .arg = "FILE",
         .kind = NF_OPT_STR,
         NF_OPT_TO(tables),
         .help = "read installed multicast tables (dump_fts -M, ibroute -M or OpenSM's "
                 "opensm.mcfdbs) and print every MLID's tree (members, switches, root, height, "
                 "members reached, problems) and the EFI of the inter-switch links; with "
                 "--engine, the same groups (the tables' members, or --groups sa:FILE) routed "
                 "beside; exit 1 when a tree has a problem"},
        {.name = "procs-per-node",
         .short_name = 'p',
         .arg = "N",
         .kind = NF_OPT_UINT,
         NF_OPT_TO(wopts.procs_per_node),
         .lo = 1,
         .hi = 1024,
         .help = "ranks per endpoint (default 1)"},
        {.name = "mapping",
         .short_name = 'm',
         .kind = NF_OPT_CHOICE,
         NF_OPT_TO(wopts.mapping),
         .choices = mappings,
         .help = "aware: ranks laid on endpoints in order (default); random: ranks shuffled over "
                 "the endpoints"},
        {.name = "seed",
         .short_name = 's',
         .arg = "S",
         .kind = NF_OPT_SEED,
         NF_OPT_TO(wopts.seed),
         .help = "seed of random groups and random mapping (default 1)"},
        {.name = "verify",
         .short_name = 'v',
         .kind = NF_OPT_FLAG,
         NF_OPT_TO(verify),
         .help = "recount every tree and every load from the forwarding tables"},
        {.name = "json",
         .short_name = 'j',
         .kind = NF_OPT_FLAG,
         NF_OPT_TO(as_json),
         .help = "one JSON object per engine, in an array; its efi_hist holds [EFI, inter-switch "
                 "links with that EFI] pairs"},
        {.name = "dump-mft",
         .short_name = 'M',
         .arg = "FILE",
         .kind = NF_OPT_STR,
         NF_OPT_TO(mft_path),
         .help = "the switches' multicast forwarding tables, OpenSM mcfdbs layout (one engine "
                 "only); MLIDs from 0xC001 in group order, or the SA's with --groups sa:FILE"},
        {.name = "dump-groups",
         .short_name = 'G',
         .arg = "FILE",
         .kind = NF_OPT_STR,
         NF_OPT_TO(groups_path),
         .help = "one line per group: MLID and member port GUIDs"},
        {NF_OPT_THREADS(threads, "threads for the distance computation (default: all cores)"),
         .short_name = 'T'},
    };
    const nf_cmd_spec spec = {
        .name = "mcast",
        .synopsis = "netfab mcast --topo SPEC --groups PATTERN [--engine LIST|all]\n"
                    "                    [--procs-per-node N] [--mapping aware|random] [--seed "
                    "S]\n"
                    "                    [--verify] [--json] [--dump-mft FILE] [--dump-groups "
                    "FILE]\n"
                    "                    [--threads N]\n"
                    "       netfab mcast --topo SPEC --analyze FILE [--engine LIST] [--groups "
                    "sa:FILE] [--json]\n",
        .description =
            "Routes every group of the workload with each engine (groups in order, each seeing\n"
            "the link loads of those before it) and prints one row per engine.\n",
        .sections = "patterns:\n"
                    "  grid2d:RxC            every row and every column of an R x C rank grid\n"
                    "  grid3d:XxYxZ          every line along each dimension of a rank grid\n"
                    "  random:n=G,size=S     G groups of S random ranks\n"
                    "  hier:n=N,s=A.B...     hierarchical communicators and their leaders\n"
                    "  file:PATH             one group per line, ranks separated by blanks\n"
                    "  sa:PATH               the SA's groups and MLIDs: saquery -m --smkey 1, or "
                    "OpenSM's opensm-sa.dump\n",
        .more = mcast_engines,
        .group = {{"options", rows, sizeof rows / sizeof rows[0]}},
        .examples = "  netfab mcast --topo fattree:k=40 --groups grid2d:160x100 --engine "
                    "fulb,minihop-new\n"
                    "  netfab mcast --topo dragonfly:a=18,p=9,h=9 --groups grid3d:81x27x12 "
                    "--json\n"};
    int argi, ex = nf_opt_parse(&spec, argc, argv, &argi);
    if (ex) return ex == NF_OPT_HELP ? NF_EXIT_OK : ex;
    if (!topo) return nf_opt_usage("mcast", "--topo SPEC is required");
    bool from_sa = pattern && strncmp(pattern, "sa:", 3) == 0;
    if (from_sa && !pattern[3]) return nf_opt_bad("mcast", "--groups", "sa:FILE", pattern);
    const nf_mcast_engine *engines[32];
    if (tables) {
        if (pattern && !from_sa)
            return nf_opt_usage("mcast", "--analyze takes its groups from the tables, or from "
                                         "--groups sa:FILE");
        if (mft_path || groups_path || verify)
            return nf_opt_usage("mcast", "--analyze reads tables: no --dump-mft, --dump-groups "
                                         "or --verify with it");
        int n = engine_given ? parse_engines(engine_list, engines, 32) : 0;
        if (n < 0) return NF_EXIT_USAGE;
        return nf_app_mcast_analyze(topo, threads, tables, from_sa ? pattern : NULL, engines, n,
                                    as_json);
    }
    if (!pattern) return nf_opt_usage("mcast", "--groups PATTERN is required");
    int n_eng = parse_engines(engine_list, engines, 32);
    if (n_eng <= 0) return NF_EXIT_USAGE;
    if (mft_path && n_eng != 1)
        return nf_opt_usage("mcast", "--dump-mft writes one engine's tables: give one --engine");

    int status = NF_EXIT_OK;
    nf_fabric *f = NULL;
    nf_hops *h = NULL;
    nf_groups *g = NULL;
    uint16_t *mlid = NULL;
    json_t *arr = as_json ? json_array() : NULL;
    nf_diag d = {{0}, 0, {0}};
    int rc;
    if ((status = nf_app_fabric(topo, threads, &f, &h))) goto done;
    rc = from_sa ? nf_groups_load_sa(f, pattern + 3, nf_app_warn, NULL, &g, &mlid, &d)
                 : nf_groups_build(f, pattern, &wopts, &g, &d);
    if (rc) {
        status = nf_app_report(rc, &d);
        goto done;
    }
    if (!mlid && (mft_path || groups_path)) { /* OpenSM gives 0xC000 to IPoIB: ours from 0xC001 */
        if (g->n > NF_MLID_MAX - NF_MLID_BASE) {
            fprintf(stderr, "netfab mcast: %u groups, more than the %u MLIDs 0xC001-0xFFFE\n", g->n,
                    NF_MLID_MAX - NF_MLID_BASE);
            status = NF_EXIT_FAIL;
            goto done;
        }
        if (!(mlid = malloc(((size_t)g->n + 1) * sizeof *mlid))) {
            status = nf_app_report(NF_ENOMEM, &d);
            goto done;
        }
        for (uint32_t k = 0; k < g->n; k++)
            mlid[k] = (uint16_t)(NF_MLID_BASE + 1 + k);
    }
    if (groups_path) {
        nf__afile a;
        FILE *fp = nf_app_out_open(&a, "netfab mcast", groups_path);
        if (!fp) {
            status = NF_EXIT_FAIL;
            goto done;
        }
        status = nf_app_out_close(&a, "netfab mcast", groups_path,
                                  nf_mcast_write_groups_mlids(f, g, mlid, fp));
        if (status) goto done;
    }
    uint32_t lb = nf_mcast_lower_bound(f, h, g);
    nf_progress bar;
    nf_progress_begin(&bar, "netfab mcast");
    n_engines = n_eng;
    int name_w = 12; /* the engine column: as wide as the longest name asked for */
    for (int i = 0; i < n_eng; i++)
        if ((int)strlen(nf_mcast_engine_name(engines[i])) > name_w)
            name_w = (int)strlen(nf_mcast_engine_name(engines[i]));
    if (!as_json)
        printf("%-*s %7s %11s %7s %8s %6s %7s %8s %8s %8s %6s\n", name_w, "engine", "groups",
               "memberships", "max_efi", "mean_efi", "max_h", "mean_h", "root_s", "tree_s",
               "route_s", "failed");
    for (int i = 0; i < n_eng && status == NF_EXIT_OK; i++) {
        nf_mcast *m = NULL;
        char what[64];
        snprintf(what, sizeof what, "netfab mcast: %s", nf_mcast_engine_name(engines[i]));
        nf_progress_label(&bar, what);
        engine_at = i;
        rc = nf_mcast_route_progress(f, h, g, engines[i], on_progress, &bar, &m, &d);
        nf_progress_end(&bar);
        if (rc) {
            status = nf_app_report(rc, &d);
            break;
        }
        nf_mcast_stats st;
        nf_mcast_stats_compute(f, g, m, &st);
        double route_s = m->root_s + m->tree_s + m->refine_s;
        if (verify && (rc = nf_mcast_verify(f, h, g, m, &d))) {
            fprintf(stderr, "netfab mcast: %s: verification failed: %s\n",
                    nf_mcast_engine_name(engines[i]), d.msg);
            status = NF_EXIT_FAIL;
        }
        if (mft_path && status == NF_EXIT_OK) {
            nf__afile a;
            FILE *fp = nf_app_out_open(&a, "netfab mcast", mft_path);
            status = fp ? nf_app_out_close(&a, "netfab mcast", mft_path,
                                           nf_mcast_write_mft_mlids(f, m, mlid, fp))
                        : NF_EXIT_FAIL;
        }
        for (uint32_t k = 0; k < m->n_groups && st.failed; k++)
            if (m->status[k] != NF_OK) {
                fprintf(stderr, "netfab mcast: %s: group %u (MLID 0x%04X) not routed: %s\n",
                        nf_mcast_engine_name(engines[i]), k, mlid ? mlid[k] : NF_MLID_BASE + 1 + k,
                        nf_strerror(m->status[k]));
                break; /* one example is enough; the count is in the table */
            }
        if (as_json) {
            json_t *o = nf_app_mcast_json(f, topo, pattern, g, m, engines[i], lb,
                                          verify && status == NF_EXIT_OK);
            if (!o) {
                fprintf(stderr, "netfab mcast: %s\n", nf_strerror(NF_ENOMEM));
                status = NF_EXIT_FAIL;
                nf_mcast_free(m);
                break;
            }
            json_array_append_new(arr, o);
        } else {
            printf("%-*s %7u %11llu %7u %8.2f %6u %7.2f %8.4f %8.4f %8.4f %6u\n", name_w,
                   nf_mcast_engine_name(engines[i]), st.groups, (unsigned long long)st.memberships,
                   st.max_efi, st.mean_efi, st.max_height, st.mean_height, m->root_s,
                   m->tree_s + m->refine_s, route_s, st.failed);
            fflush(stdout);
        }
        nf_mcast_free(m);
    }
    if (status == NF_EXIT_OK) {
        if (as_json) {
            json_dumpf(arr, stdout, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
            putchar('\n');
        } else {
            printf("lower bound on max_efi for this workload: %u%s\n", lb,
                   verify ? "; every tree verified" : "");
        }
    }
done:
    json_decref(arr);
    if (from_sa)
        nf_free(mlid);
    else
        free(mlid);
    nf_groups_free(g);
    nf_hops_free(h);
    nf_fabric_free(f);
    return status;
}
