/* SPDX-License-Identifier: MIT */
/* `netfab report --out DIR`: the reproduction of the three papers' experiments at one scale, as
 * one HTML page with its images. Every step is this program run again as a child (netfab exp,
 * netfab sweep, netfab mcast, then netfab plot on what they wrote), several at once; the data
 * stay in DIR/data as JSON next to each step's log, the images in DIR/img, and the page puts
 * each table and plot beside what the paper reports for the same experiment. */
#define _GNU_SOURCE
#include "cmd.h"
#include "opts.h"
#include "exp.h"
#include "progress.h"

#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* ---- the steps ----------------------------------------------------------------------------- */

enum { MAX_CMDS = 8, MAX_ARGS = 48 };

typedef struct report_ctx {
    bool full;
    uint64_t seed;
    unsigned threads; /* per child */
    const char *dir;
} report_ctx;

/* A command line being built: argv[0] is this program. */
typedef struct cmdline {
    char *argv[MAX_ARGS + 1];
    int argc;
    char *stdout_to; /* a file for its stdout, or NULL */
} cmdline;

typedef struct step step;
typedef void (*build_fn)(const step *st, const report_ctx *x, cmdline *cmds, int *n);
typedef void (*compare_fn)(FILE *h, json_t *rows);

struct step {
    const char *name, *seed_paper, *title;
    const char *what;  /* HTML: what runs */
    const char *paper; /* HTML: what the paper reports (figure/table, numbers); NULL: nothing */
    const char *const *cols; /* the table's columns (NULL: every key) */
    build_fn build;
    compare_fn compare; /* HTML: the figure measured here that matches the paper's */
    /* seconds each took on 2 cores (2026-11-30): the order of the steps and the bar's weights */
    double cost_quick, cost_full;
};

static void arg(cmdline *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void arg(cmdline *c, const char *fmt, ...) {
    if (c->argc >= MAX_ARGS) return;
    va_list ap;
    va_start(ap, fmt);
    if (vasprintf(&c->argv[c->argc], fmt, ap) >= 0) c->argc++;
    va_end(ap);
}

/* Where the command's stdout goes: DIR/data/NAME.json. */
static void stdout_to(cmdline *c, const report_ctx *x, const step *st) {
    if (asprintf(&c->stdout_to, "%s/data/%s.json", x->dir, st->name) < 0) c->stdout_to = NULL;
}

static cmdline *next_cmd(cmdline *cmds, int *n) {
    cmdline *c = &cmds[(*n)++];
    memset(c, 0, sizeof *c);
    arg(c, "netfab");
    return c;
}

/* netfab exp NAME --json --plot img/NAME.png > data/NAME.json */
static void build_exp(const step *st, const report_ctx *x, cmdline *cmds, int *n) {
    cmdline *c = next_cmd(cmds, n);
    arg(c, "exp");
    arg(c, "%s", st->name);
    if (!x->full) arg(c, "--quick");
    arg(c, "--json");
    arg(c, "--plot");
    arg(c, "%s/img/%s.png", x->dir, st->name);
    arg(c, "--seed");
    arg(c, "%llu", (unsigned long long)x->seed);
    arg(c, "--threads");
    arg(c, "%u", x->threads);
    stdout_to(c, x, st);
}

/* What every sweep of the report ends with: the seed, the threads, JSON into out. */
static void sweep_tail(cmdline *c, const report_ctx *x, const char *out) {
    arg(c, "--seeds");
    arg(c, "%llu", (unsigned long long)x->seed);
    arg(c, "--threads");
    arg(c, "%u", x->threads);
    arg(c, "--json");
    arg(c, "--out");
    arg(c, "%s", out);
}

/* The multicast paper's fabrics and workloads (Tables 3-12 at full scale; three small fabrics that
 * take the same patterns at quick scale), one sweep per fabric. */
static const struct {
    const char *topo;
    unsigned ppn;
    const char *groups[3];
} engine_cases_full[] = {
    {"fattree:k=40", 1, {"grid2d:160x100", "grid3d:40x20x20", "random:n=2000,size=32"}},
    {"torus:30x20x20,c=2", 1, {"grid2d:240x100", "grid3d:40x30x20", "random:n=2000,size=32"}},
    {"dragonfly:a=18,p=9,h=9", 1, {"grid2d:240x100", "grid3d:81x27x12", "random:n=2000,size=32"}},
    {"bluelight", 4, {"grid2d:272x128", "grid3d:34x32x32", "random:n=2000,size=32"}},
    {"taihulight", 1, {"grid2d:320x128", "grid3d:40x32x32", "random:n=2000,size=32"}},
};
static const char *const engine_topos_quick[] = {"fattree:k=12", "torus:7x7x7,c=1",
                                                 "dragonfly:a=6,p=3,h=3"};
static const char *const engine_groups_quick[] = {"grid2d:19x18", "grid3d:19x6x3",
                                                  "random:n=200,size=16"};

static void build_engines(const step *st, const report_ctx *x, cmdline *cmds, int *n) {
    size_t nc = x->full ? sizeof engine_cases_full / sizeof engine_cases_full[0] : 1;
    for (size_t i = 0; i < nc; i++) {
        cmdline *c = next_cmd(cmds, n);
        arg(c, "sweep");
        for (size_t t = 0; t < (x->full ? 1 : 3); t++) {
            arg(c, "--topo");
            arg(c, "%s", x->full ? engine_cases_full[i].topo : engine_topos_quick[t]);
        }
        for (size_t g = 0; g < 3; g++) {
            arg(c, "--groups");
            arg(c, "%s", x->full ? engine_cases_full[i].groups[g] : engine_groups_quick[g]);
        }
        if (x->full && engine_cases_full[i].ppn > 1) {
            arg(c, "--procs-per-node");
            arg(c, "%u", engine_cases_full[i].ppn);
        }
        arg(c, "--engine");
        arg(c, "all");
        char out[PATH_MAX];
        snprintf(out, sizeof out, "%s/data/%s-%zu.json", x->dir, st->name, i);
        sweep_tail(c, x, out);
    }
}

/* netfab plot KIND --in data/NAME.json --out img/NAME.png, to be completed. */
static cmdline *plot_cmd(cmdline *cmds, int *n, const report_ctx *x, const step *st,
                         const char *kind) {
    cmdline *c = next_cmd(cmds, n);
    arg(c, "plot");
    arg(c, "%s", kind);
    arg(c, "--in");
    arg(c, "%s/data/%s.json", x->dir, st->name);
    arg(c, "--out");
    arg(c, "%s/img/%s.png", x->dir, st->name);
    return c;
}

/* One workload routed by the three original engines, its EFI histogram drawn. */
static void build_hist(const step *st, const report_ctx *x, cmdline *cmds, int *n) {
    cmdline *c = next_cmd(cmds, n);
    arg(c, "mcast");
    arg(c, "--topo");
    arg(c, "%s", x->full ? "fattree:k=40" : "fattree:k=12");
    arg(c, "--groups");
    arg(c, "%s", x->full ? "grid3d:40x20x20" : "grid3d:19x6x3");
    arg(c, "--engine");
    arg(c, "minihop,sssp,fulb");
    arg(c, "--threads");
    arg(c, "%u", x->threads);
    arg(c, "--json");
    stdout_to(c, x, st);
    c = plot_cmd(cmds, n, x, st, "efi");
    arg(c, "--title");
    arg(c, "EFI of inter-switch links: %s",
        x->full ? "grid3d:40x20x20 on fattree:k=40" : "grid3d:19x6x3 on fattree:k=12");
}

/* Latency-throughput curves of the Dragonfly routings under one traffic. */
static void build_dragonfly(const step *st, const report_ctx *x, cmdline *cmds, int *n) {
    const char *traffic = strcmp(st->name, "dragonfly-uniform") == 0 ? "uniform" : "worstcase";
    cmdline *c = next_cmd(cmds, n);
    arg(c, "sweep");
    arg(c, "--topo");
    arg(c, "%s", x->full ? "dragonfly:a=8,p=4,h=4" : "dragonfly:a=4,p=2,h=2");
    arg(c, "--routing");
    arg(c, "dfmin,val,ugal-l,ugal-g,par");
    arg(c, "--traffic");
    arg(c, "%s", traffic);
    arg(c, "--loads");
    arg(c, "%s", x->full ? "0.05:0.95:0.05" : "0.05:0.95:0.1");
    if (!x->full) {
        arg(c, "--warmup");
        arg(c, "500");
        arg(c, "--cycles");
        arg(c, "2000");
    }
    char out[PATH_MAX];
    snprintf(out, sizeof out, "%s/data/%s.json", x->dir, st->name);
    sweep_tail(c, x, out);
    c = plot_cmd(cmds, n, x, st, "latency");
    arg(c, "--to-saturation");
    arg(c, "--xlabel");
    arg(c, "offered load (flits per endpoint per cycle)");
    arg(c, "--ylabel");
    arg(c, "mean packet latency (cycles)");
    arg(c, "--title");
    arg(c, "%s traffic on %s", traffic,
        x->full ? "dragonfly:a=8,p=4,h=4" : "dragonfly:a=4,p=2,h=2");
}

static void html_text(FILE *h, const char *s) {
    for (; s && *s; s++) {
        switch (*s) {
        case '<': fputs("&lt;", h); break;
        case '>': fputs("&gt;", h); break;
        case '&': fputs("&amp;", h); break;
        case '"': fputs("&quot;", h); break;
        default: fputc(*s, h);
        }
    }
}

/* ---- comparisons: the figure measured here that matches the paper's ------------------------ */

static double num(json_t *v) {
    return json_is_integer(v) ? (double)json_integer_value(v)
           : json_is_real(v)  ? json_real_value(v)
                              : NAN;
}

/* The number under key in the first row whose keys k1 (and k2) read v1 (and v2) as text. */
static double find(json_t *rows, const char *key, const char *k1, const char *v1, const char *k2,
                   const char *v2) {
    size_t i;
    json_t *r;
    char b1[64], b2[64];
    json_array_foreach(rows, i, r) {
        if (k1 && strcmp(exp_cell_text(json_object_get(r, k1), b1), v1)) continue;
        if (k2 && strcmp(exp_cell_text(json_object_get(r, k2), b2), v2)) continue;
        return num(json_object_get(r, key));
    }
    return NAN;
}

static void pct(FILE *h, double a, double b) {
    if (isfinite(a) && isfinite(b) && b > 0)
        fprintf(h, "%+.1f%%", 100 * (a / b - 1));
    else
        fputs("(not measured at this scale)", h);
}

static void cmp_height(FILE *h, json_t *rows) {
    static const char *const sizes[] = {"8", "2048"};
    fputs("Height 2 against height 1, mean latency: ", h);
    for (int i = 0; i < 2; i++) {
        fprintf(h, "%s%s B ", i ? "; " : "", sizes[i]);
        pct(h, find(rows, "lat_mean", "height", "2", "msg_bytes", sizes[i]),
            find(rows, "lat_mean", "height", "1", "msg_bytes", sizes[i]));
    }
    fputs(" (cycles of the simulated network, no host software).", h);
}

static void cmp_efi(FILE *h, json_t *rows) {
    double base = find(rows, "lat_mean", "efi", "1", "msg_bytes", "2048");
    fputs("2 KB messages, mean latency against EFI 1: EFI 16 ", h);
    pct(h, find(rows, "lat_mean", "efi", "16", "msg_bytes", "2048"), base);
    fputs("; EFI 128 ", h);
    pct(h, find(rows, "lat_mean", "efi", "128", "msg_bytes", "2048"), base);
    fputs("; 8 B at EFI 16 ", h);
    pct(h, find(rows, "lat_mean", "efi", "16", "msg_bytes", "8"),
        find(rows, "lat_mean", "efi", "1", "msg_bytes", "8"));
    fputs(". Groups send every 2,000 cycles (the paper gives no period), which sets where 2 KB "
          "messages overload the shared links.",
          h);
}

static void cmp_workload(FILE *h, json_t *rows) {
    static const char *const e[] = {"minihop", "sssp", "fulb"};
    fputs("Max EFI of the trees / mean latency: ", h);
    for (int i = 0; i < 3; i++)
        fprintf(h, "%s%s %.0f / %.1f cycles", i ? "; " : "", e[i],
                find(rows, "max_efi", "engine", e[i], NULL, NULL),
                find(rows, "lat_mean", "engine", e[i], NULL, NULL));
    fputs(".", h);
}

static void cmp_faults(FILE *h, json_t *rows) {
    fprintf(h,
            "All up links of leaf 0 failed: endpoint pairs still reachable, fat tree %.4f, "
            "gft with sibling links (1 rail) %.4f.",
            find(rows, "reachability", "fabric", "fat tree", "case", "leaf 0 up links"),
            find(rows, "reachability", "fabric", "gft, 1 rail", "case", "leaf 0 up links"));
}

static void cmp_tables(FILE *h, json_t *rows) {
    double s = find(rows, "saved", "endpoints", "262144", NULL, NULL);
    fprintf(h, "Two-level tables at 262,144 endpoints save %.2f%% of the flat tables' memory.",
            100 * s);
}

static void cmp_coll(FILE *h, json_t *rows) {
    double hw = NAN, sw = NAN;
    const char *n = NULL;
    size_t i;
    json_t *r;
    char b[64];
    json_array_foreach(rows, i, r) { /* the largest job measured */
        if (strcmp(exp_cell_text(json_object_get(r, "op"), b), "allreduce")) continue;
        const char *impl = json_string_value(json_object_get(r, "impl"));
        const char *alg = json_string_value(json_object_get(r, "algorithm"));
        if (impl && !strcmp(impl, "hw")) hw = num(json_object_get(r, "lat_mean"));
        if (alg && !strcmp(alg, "recursive doubling")) sw = num(json_object_get(r, "lat_mean"));
        n = exp_cell_text(json_object_get(r, "nodes"), b);
    }
    fprintf(h, "Allreduce on %s ranks: hardware %.0f cycles, recursive doubling %.0f (%.1fx).",
            n ? n : "?", hw, sw, sw / hw);
}

static void cmp_dual(FILE *h, json_t *rows) {
    double one = NAN, two = NAN, b = 0;
    size_t i;
    json_t *r;
    json_array_foreach(rows, i, r) { /* the largest message */
        const char *m = json_string_value(json_object_get(r, "measure"));
        const char *mode = json_string_value(json_object_get(r, "mode"));
        double mb = num(json_object_get(r, "msg_bytes"));
        if (!m || strcmp(m, "bandwidth") || !mode || mb < b) continue;
        b = mb;
        if (!strcmp(mode, "rail 0")) one = num(json_object_get(r, "bandwidth"));
        if (!strcmp(mode, "dynamic")) two = num(json_object_get(r, "bandwidth"));
    }
    fprintf(h,
            "A %.0f-byte message: %.2f bytes/cycle on one rail, %.2f on two with the rail chosen "
            "per packet (%.2fx).",
            b, one, two, two / one);
}

/* The saturation throughput of each routing: its largest accepted load. */
static void cmp_dragonfly(FILE *h, json_t *rows) {
    static const char *const rs[] = {"dfmin", "val", "ugal-l", "ugal-g", "par"};
    fputs("Largest accepted load (flits per endpoint per cycle): ", h);
    for (int k = 0; k < 5; k++) {
        double best = 0;
        size_t i;
        json_t *r;
        json_array_foreach(rows, i, r) {
            const char *rn = json_string_value(json_object_get(r, "routing"));
            double a = num(json_object_get(r, "accepted"));
            if (rn && !strcmp(rn, rs[k]) && a > best) best = a;
        }
        fprintf(h, "%s%s %.3f", k ? "; " : "", rs[k], best);
    }
    fputs(".", h);
}

/* Max EFI and routing time per fabric and workload (rows) and engine (columns), as the paper's
 * Tables 3-12 lay them out. */
static void cmp_engines(FILE *h, json_t *rows) {
    json_t *engines = json_array(), *cases = json_array();
    size_t i;
    json_t *r;
    json_array_foreach(rows, i, r) {
        json_t *e = json_object_get(r, "engine");
        json_t *c =
            json_pack("[O, O]", json_object_get(r, "topo"), json_object_get(r, "groups_spec"));
        bool seen_e = false, seen_c = false;
        for (size_t j = 0; j < json_array_size(engines); j++)
            seen_e |= json_equal(json_array_get(engines, j), e);
        for (size_t j = 0; j < json_array_size(cases); j++)
            seen_c |= json_equal(json_array_get(cases, j), c);
        if (!seen_e && json_is_string(e)) json_array_append(engines, e);
        if (!seen_c && c) json_array_append(cases, c);
        json_decref(c);
    }
    fputs("max EFI, and routing time in ms, per engine:</p>\n<div class=\"scroll\"><table>\n"
          "<tr><th>fabric</th><th>groups</th>",
          h);
    for (int pass = 0; pass < 2; pass++)
        for (size_t j = 0; j < json_array_size(engines); j++) {
            fprintf(h, "<th>%s ", pass ? "ms" : "EFI");
            html_text(h, json_string_value(json_array_get(engines, j)));
            fputs("</th>", h);
        }
    fputs("</tr>\n", h);
    for (size_t k = 0; k < json_array_size(cases); k++) {
        const char *t = json_string_value(json_array_get(json_array_get(cases, k), 0));
        const char *g = json_string_value(json_array_get(json_array_get(cases, k), 1));
        fputs("<tr><td>", h);
        html_text(h, t);
        fputs("</td><td>", h);
        html_text(h, g);
        fputs("</td>", h);
        for (int pass = 0; pass < 2; pass++)
            for (size_t j = 0; j < json_array_size(engines); j++) {
                const char *e = json_string_value(json_array_get(engines, j));
                double v = NAN;
                json_array_foreach(rows, i, r) {
                    const char *e2 = json_string_value(json_object_get(r, "engine"));
                    const char *t2 = json_string_value(json_object_get(r, "topo"));
                    const char *g2 = json_string_value(json_object_get(r, "groups_spec"));
                    if (e2 && t2 && g2 && !strcmp(e2, e) && !strcmp(t2, t) && !strcmp(g2, g))
                        v = num(json_object_get(r, pass ? "route_s" : "max_efi"));
                }
                fprintf(h, pass ? "<td class=\"n\">%.2f</td>" : "<td class=\"n\">%.0f</td>",
                        pass ? 1e3 * v : v);
            }
        fputs("</tr>\n", h);
    }
    fputs("</table></div><p>", h);
    json_decref(engines);
    json_decref(cases);
}

static const char *const cols_engines[] = {"topo",     "groups_spec", "engine",      "max_efi",
                                           "mean_efi", "max_height",  "lower_bound", "route_s",
                                           "failed",   NULL};
static const char *const cols_hist[] = {"engine",      "max_efi", "mean_efi", "links_used",
                                        "lower_bound", "route_s", NULL};
static const char *const cols_dragonfly[] = {"routing",      "load",      "offered",
                                             "accepted",     "lat_mean",  "lat_p99",
                                             "minimal_frac", "saturated", NULL};
static const char *const cols_tables[] = {"fabric",          "endpoints", "flat_bytes",
                                          "two_level_bytes", "saved",     "lookups_checked",
                                          "mismatches",      NULL};

static const step steps[] = {
    {"mcast-engines", "M", "Multicast routing engines: max EFI and routing time",
     "<code>netfab sweep --groups ... --engine all</code>: every engine (MINIHOP, SSSP, FULB and "
     "the root-rotating -new variants, FULB+) routes every group of each workload (2D grid, 3D "
     "grid, random groups) on each fabric, groups in order, each seeing the loads of those "
     "before it.",
     "Tables 3-12 (fat tree of 40-port switches, N = 16,000; 30&times;20&times;20 torus, "
     "N = 24,000; Dragonfly a=18, p=h=9, N = 26,406; BlueLight; TaihuLight). The cells are "
     "images; the text states: on the fat tree MINIHOP-MC and SSSP-MC are far above FULB-MC "
     "and the -new variants equal it exactly (Table 3); routing time from at most 2.4 s (SSSP-MC) "
     "to under 0.2 s (FULB-MC) (Table 4), 24 s to under 2.3 s on the torus (Table 6); on the "
     "Dragonfly, 81&times;27&times;12: MINIHOP-MC-new 41, FULB-MC 54 (Table 7); FULB-MC's max "
     "EFI down to about 1/6 of MINIHOP-MC's on BlueLight, 1/2 on TaihuLight; SSSP-MC-new up to "
     "48 s on TaihuLight, FULB-MC under 3 s (Table 12).",
     cols_engines, build_engines, cmp_engines, 1, 30},
    {"mcast-hist", "M", "EFI histogram of one workload",
     "<code>netfab mcast --json</code> then <code>netfab plot efi</code>: how many inter-switch "
     "links carry each EFI under MINIHOP, SSSP and FULB, one 3D-grid workload on a fat tree.",
     "No histogram in the paper; its tables give only the max EFI (and, for BlueLight, the "
     "mean).",
     cols_hist, build_hist, NULL, 1, 2},
    {"mcast-height", "M", "Hardware multicast: tree height 1 against 2",
     "<code>netfab exp mcast-height</code>: a group of 4 endpoints under one switch (height 1) "
     "or spread over switches (height 2), messages of 8 B to 8 KB, mean and p99 latency.",
     "Fig. 1 and Table 1 (&micro;s on the machine; 4-process group, 5,000 messages per length): "
     "height 2 costs about +20% at 8 B and about +15% at 2 KB, in the mean and the p99.",
     NULL, build_exp, cmp_height, 1, 2},
    {"mcast-efi", "M", "Hardware multicast: groups sharing one tree (EFI)",
     "<code>netfab exp mcast-efi</code>: EFI groups of 4 forced onto one tree, all sending; mean "
     "and p99 latency of 8 B and 2 KB messages against the EFI.",
     "Fig. 2 and Table 2 (512 endpoints in 128 groups of 4): 2 KB messages +38% at EFI 16 and "
     "+1,066% at EFI 128; 8 B messages grow only slightly.",
     NULL, build_exp, cmp_efi, 1, 220},
    {"mcast-workload", "M", "Hardware multicast: a job's communicators at once",
     "<code>netfab exp mcast-workload</code>: a 3D-grid job's line communicators all broadcast "
     "2 KB; their trees from MINIHOP, SSSP or FULB.",
     "No latency measurement in the paper; its Table 3 (3D grids on a fat tree) shows "
     "MINIHOP-MC = SSSP-MC far above FULB-MC in max EFI.",
     NULL, build_exp, cmp_workload, 8, 575},
    {"collectives", "S", "Hardware collectives against point-to-point ones",
     "<code>netfab exp collectives</code>: barrier, broadcast, reduce and allreduce by the NICs' "
     "gather tree and the root's multicast, against binomial, recursive-doubling and ring "
     "algorithms over messages, 16 to 512 ranks.",
     "The Sunway paper describes the hardware collectives; the text we have stops in section "
     "3.1, before its performance section, so it gives no timing.",
     NULL, build_exp, cmp_coll, 1, 4},
    {"dual-rail", "S", "Dual-rail NICs and the reply word",
     "<code>netfab exp dual-rail</code>: one message over one rail or two (halves fixed, or the "
     "rail chosen per packet), idle or with rail 0 busy; when the target learns of a write.",
     "Section 2 of the Sunway paper describes the dual-rail NIC (28 Gbps &times; 4 lanes a "
     "port) and the RDMA operations with a reply word; the text gives no measured bandwidth or "
     "latency.",
     NULL, build_exp, cmp_dual, 1, 2},
    {"faults", "S", "Faults: fat tree against the gft with sibling links",
     "<code>netfab exp faults</code>: random failed switch-to-switch links (1 to 64, many "
     "trials) and all up links of one leaf; endpoint pairs still reachable by the "
     "fault-tolerant tables, and the saturation throughput left.",
     "Section 2.1: with all 18 up links of a leaf failed, its endpoints still reach the rest "
     "through the 4 sibling links (36 + 4 port split); no figure.",
     NULL, build_exp, cmp_faults, 11, 990},
    {"tables", "S", "Two-level routing tables",
     "<code>netfab exp tables</code>: supernode tables (rows for the own supernode, rows per "
     "other supernode) against flat ones; memory, and every lookup compared.",
     "Section 2.2: the two-level table saves about 99.5% of the memory; no figure.", cols_tables,
     build_exp, cmp_tables, 5, 92},
    {"dragonfly-uniform", "U", "UGAL on Dragonfly: uniform traffic",
     "<code>netfab sweep --routing dfmin,val,ugal-l,ugal-g,par --traffic uniform</code>, then "
     "<code>netfab plot latency</code>: mean packet latency against the offered load.",
     "The UGAL note has no measurements: minimal routing has the lowest latency at light "
     "load, Valiant uses twice the global bandwidth (so about half the throughput under uniform "
     "traffic), UGAL switches between them (bias 2.0-3.0).",
     cols_dragonfly, build_dragonfly, cmp_dragonfly, 8, 1160},
    {"dragonfly-worstcase", "U", "UGAL on Dragonfly: worst-case traffic",
     "As above under worst-case traffic (every node of group i sends to group i + 1).",
     "The UGAL note: under adversarial traffic minimal routing funnels a group's traffic over "
     "one global link; Valiant and UGAL spread it (no numbers given).",
     cols_dragonfly, build_dragonfly, cmp_dragonfly, 25, 1620},
};
enum { N_STEPS = sizeof steps / sizeof steps[0] };

/* ---- running ------------------------------------------------------------------------------ */

typedef struct job {
    cmdline cmds[MAX_CMDS];
    int n, at;     /* commands, the one running or next */
    pid_t pid;     /* running: its pid (and its process group's id), else 0 */
    nf__afile out; /* running with stdout_to: the temporary file its stdout goes to */
    int status;    /* 0 ok; else the failed command's exit status (or 128 + signal) */
    bool done, selected;
    double started, took;
} job;

static const char self[] = "/proc/self/exe";

/* Starts command c of a step in a process group of its own (so that stopping it stops what it
 * runs too, gnuplot say), its stdout into a temporary file *out that replaces c->stdout_to
 * when the command succeeds (out->fp NULL when there is none). */
static pid_t start(const report_ctx *x, const step *st, cmdline *c, nf__afile *out) {
    char log[PATH_MAX];
    snprintf(log, sizeof log, "%s/data/%s.log", x->dir, st->name);
    *out = (nf__afile){.slot = -1};
    if (c->stdout_to && nf__afile_open(out, c->stdout_to)) *out = (nf__afile){.slot = -1};
    fflush(NULL);
    pid_t pid = fork();
    if (pid > 0) setpgid(pid, pid); /* also here: a stop may come before the child runs */
    if (pid < 0) nf__afile_abort(out);
    if (pid != 0) return pid;
    setpgid(0, 0);
    signal(SIGINT, SIG_DFL);
    signal(SIGTERM, SIG_DFL);
    signal(SIGHUP, SIG_DFL);
    int lfd = open(log, O_WRONLY | O_CREAT | O_APPEND, 0644);
    if (lfd >= 0) dup2(lfd, STDERR_FILENO);
    if (c->stdout_to) {
        if (!out->fp) _exit(126);
        dup2(fileno(out->fp), STDOUT_FILENO);
    } else if (lfd >= 0) {
        dup2(lfd, STDOUT_FILENO);
    }
    for (int i = 0; i < c->argc; i++)
        dprintf(STDERR_FILENO, "%s%s", i ? " " : "$ ", c->argv[i]);
    dprintf(STDERR_FILENO, "\n");
    execv(self, c->argv);
    dprintf(STDERR_FILENO, "netfab report: cannot run %s: %s\n", self, strerror(errno));
    _exit(127);
}

static double cost_of(const report_ctx *x, size_t i) {
    return x->full ? steps[i].cost_full : steps[i].cost_quick;
}

/* The signal (SIGINT, SIGTERM, SIGHUP) that asked the running report to stop, else 0. */
static volatile sig_atomic_t stop_sig;

static void on_stop(int sig) { stop_sig = sig; }

/* Stops every running step: SIGTERM to its process group, SIGKILL to what is left after 5 s;
 * waits for them and drops their unfinished outputs (each netfab child removes its own
 * temporary files on SIGTERM). */
static void stop_jobs(job *jobs) {
    for (size_t i = 0; i < N_STEPS; i++)
        if (jobs[i].pid) kill(-jobs[i].pid, SIGTERM);
    double t0 = nf_app_now();
    for (size_t i = 0; i < N_STEPS; i++) {
        job *j = &jobs[i];
        while (j->pid) {
            pid_t w = waitpid(j->pid, NULL, WNOHANG);
            if (w == j->pid || (w < 0 && errno != EINTR)) {
                kill(-j->pid, SIGKILL); /* its grandchildren, should one outlive it */
                j->pid = 0;
            } else if (nf_app_now() - t0 > 5) {
                kill(-j->pid, SIGKILL);
                waitpid(j->pid, NULL, 0);
                j->pid = 0;
            } else {
                usleep(20000);
            }
        }
        nf__afile_abort(&j->out);
    }
}

/* Runs the selected jobs, at most `par` at once. Returns the signal that stopped them, or 0. */
static int run_jobs(const report_ctx *x, job *jobs, unsigned par, double total_cost) {
    nf_progress bar;
    nf_progress_begin(&bar, "netfab report");
    unsigned running = 0;
    double done_cost = 0;
    for (;;) {
        if (stop_sig) {
            stop_jobs(jobs);
            break;
        }
        /* the costliest step waiting goes first (a step between its commands waits too), so
         * that the long ones do not end up alone at the end */
        while (running < par && !stop_sig) {
            size_t i = N_STEPS;
            for (size_t k = 0; k < N_STEPS; k++) {
                const job *j = &jobs[k];
                if (!j->selected || j->done || j->pid) continue;
                if (i == N_STEPS || cost_of(x, k) > cost_of(x, i)) i = k;
            }
            if (i == N_STEPS) break;
            job *j = &jobs[i];
            if (j->at == 0) j->started = nf_app_now();
            j->pid = start(x, &steps[i], &j->cmds[j->at], &j->out);
            if (j->pid < 0) {
                j->status = 127, j->done = true, j->pid = 0;
                continue;
            }
            running++;
        }
        if (!running) break;
        int st;
        pid_t pid = 0;
        /* poll so that the bar moves while children run */
        while (!stop_sig && (pid = waitpid(-1, &st, WNOHANG)) == 0) {
            double part = 0;
            for (size_t i = 0; i < N_STEPS; i++)
                if (jobs[i].pid) {
                    part += fmin(cost_of(x, i) * 0.95, nf_app_now() - jobs[i].started);
                }
            nf_progress_set(&bar, (done_cost + part) / total_cost);
            usleep(100000);
        }
        if (stop_sig) continue;
        if (pid < 0) break;
        for (size_t i = 0; i < N_STEPS; i++) {
            job *j = &jobs[i];
            if (j->pid != pid) continue;
            j->pid = 0;
            running--;
            int code = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
            if (j->out.fp && code == 0 && nf__afile_commit(&j->out)) {
                dprintf(STDERR_FILENO, "netfab report: cannot write %s: %s\n",
                        j->cmds[j->at].stdout_to, strerror(errno));
                code = 1;
            }
            nf__afile_abort(&j->out); /* a failed command's output: the previous file stays */
            if (code != 0) j->status = code;
            if (code != 0 || ++j->at == j->n) {
                j->done = true;
                j->took = nf_app_now() - j->started;
                done_cost += cost_of(x, i);
                nf_progress_label(&bar, "netfab report");
            }
        }
    }
    nf_progress_end(&bar);
    return stop_sig;
}

/* ---- the page ----------------------------------------------------------------------------- */

/* The rows a step wrote: data/NAME.json, or data/NAME-0.json, NAME-1.json ... concatenated;
 * an array, or the "rows" of an object. NULL when there is none. */
static json_t *load_rows(const report_ctx *x, const step *st) {
    json_t *all = json_array();
    for (int k = -1; k < MAX_CMDS; k++) {
        char path[PATH_MAX];
        if (k < 0)
            snprintf(path, sizeof path, "%s/data/%s.json", x->dir, st->name);
        else
            snprintf(path, sizeof path, "%s/data/%s-%d.json", x->dir, st->name, k);
        json_t *d = json_load_file(path, 0, NULL);
        if (!d) continue;
        json_t *rows = json_is_array(d) ? d : json_object_get(d, "rows");
        json_array_extend(all, rows);
        json_decref(d);
    }
    if (json_array_size(all) == 0) {
        json_decref(all);
        return NULL;
    }
    return all;
}

static void html_table(FILE *h, json_t *rows, const char *const *cols) {
    json_t *keys = json_array();
    size_t i;
    json_t *r;
    if (cols) {
        for (; *cols; cols++)
            json_array_append_new(keys, json_string(*cols));
    } else {
        json_array_foreach(rows, i, r) {
            const char *k;
            json_t *v;
            json_object_foreach(r, k, v) {
                bool seen = false;
                for (size_t j = 0; j < json_array_size(keys) && !seen; j++)
                    seen = !strcmp(json_string_value(json_array_get(keys, j)), k);
                if (!seen && !json_is_array(v) && !json_is_object(v))
                    json_array_append_new(keys, json_string(k));
            }
        }
    }
    fputs("<div class=\"scroll\"><table>\n<tr>", h);
    for (size_t j = 0; j < json_array_size(keys); j++) {
        fputs("<th>", h);
        html_text(h, json_string_value(json_array_get(keys, j)));
        fputs("</th>", h);
    }
    fputs("</tr>\n", h);
    char buf[64];
    json_array_foreach(rows, i, r) {
        fputs("<tr>", h);
        for (size_t j = 0; j < json_array_size(keys); j++) {
            json_t *v = json_object_get(r, json_string_value(json_array_get(keys, j)));
            fputs(json_is_number(v) ? "<td class=\"n\">" : "<td>", h);
            html_text(h, exp_cell_text(v, buf));
            fputs("</td>", h);
        }
        fputs("</tr>\n", h);
    }
    fputs("</table></div>\n", h);
    json_decref(keys);
}

static const char *paper_title(const char *id) {
    return !strcmp(id, "M")   ? "[M] Load-balanced multicast routing (FULB-MC): Chen, Zhou, He, "
                                "Qi, Computer Engineering and Applications, 2022"
           : !strcmp(id, "S") ? "[S] The interconnection network and message mechanism of the "
                                "Sunway exascale prototype: Gao et al., Chinese Journal of "
                                "Computers, 2021"
                              : "[U] UGAL adaptive routing on Dragonfly: an unsigned note "
                                "(UGAL: Kim, Dally, Scott, Abts, ISCA 2008)";
}

static int write_page(const report_ctx *x, job *jobs, double wall, int argc, char **argv) {
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/index.html", x->dir);
    nf__afile page;
    FILE *h = nf_app_out_open(&page, "netfab report", path);
    if (!h) return NF_EXIT_FAIL;
    time_t t = time(NULL);
    char when[64];
    strftime(when, sizeof when, "%Y-%m-%d %H:%M UTC", gmtime(&t));
    fputs("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
          "<title>netfab: the papers' experiments reproduced</title>\n"
          "<style>\n"
          "body{font-family:sans-serif;max-width:1250px;margin:1em auto;padding:0 1em;"
          "color:#222}\n"
          "h1{font-size:1.5em}h2{border-bottom:2px solid #369;margin-top:2em}\n"
          ".pair{display:flex;gap:1.5em;align-items:flex-start;flex-wrap:wrap}\n"
          ".ours{flex:1 1 640px}.paper{flex:0 1 420px;background:#f4f7fb;border-left:4px solid "
          "#369;padding:.5em 1em}\n"
          ".here{background:#eef7ee;border-left:4px solid #393;padding:.5em 1em}\n"
          ".fail{background:#fbeeee;border-left:4px solid #c33;padding:.5em 1em}\n"
          "img{max-width:100%;height:auto}table{border-collapse:collapse;font-size:.85em}\n"
          "td,th{border:1px solid #ccc;padding:2px 6px}td.n{text-align:right}\n"
          ".scroll{max-height:24em;overflow:auto}code{background:#f2f2f2}\n"
          "</style>\n</head>\n<body>\n",
          h);
    fprintf(h, "<h1>netfab %s: the papers' experiments reproduced</h1>\n", NF_VERSION_STRING);
    fprintf(h, "<p>Scale: <b>%s</b>. Made %s in %.0f s by <code>", x->full ? "full" : "quick", when,
            wall);
    for (int i = 0; i < argc; i++) {
        if (i) fputc(' ', h);
        html_text(h, argv[i]);
    }
    fprintf(h,
            "</code> (seed %llu, %ld processors). Every step's data and log are in "
            "<code>data/</code>.</p>\n",
            (unsigned long long)x->seed, sysconf(_SC_NPROCESSORS_ONLN));
    int ex = NF_EXIT_OK;
    const char *seed = "";
    for (size_t i = 0; i < N_STEPS; i++) {
        const step *st = &steps[i];
        job *j = &jobs[i];
        if (!j->selected) continue;
        if (strcmp(seed, st->seed_paper)) {
            seed = st->seed_paper;
            fprintf(h, "<h2>%s</h2>\n", paper_title(seed));
        }
        fprintf(h, "<section id=\"%s\">\n<h3>%s</h3>\n<p>%s", st->name, st->title, st->what);
        fprintf(h, " (%.1f s)</p>\n<div class=\"pair\">\n<div class=\"ours\">\n", j->took);
        json_t *rows = j->status ? NULL : load_rows(x, st);
        char img[PATH_MAX];
        snprintf(img, sizeof img, "%s/img/%s.png", x->dir, st->name);
        if (j->status || !rows) {
            fprintf(h,
                    "<p class=\"fail\">This step failed (exit %d); its log: <a "
                    "href=\"data/%s.log\">data/%s.log</a>.</p>\n",
                    j->status, st->name, st->name);
            ex = NF_EXIT_FAIL;
        } else {
            if (access(img, R_OK) == 0)
                fprintf(h, "<img src=\"img/%s.png\" alt=\"%s\" width=\"800\" height=\"520\">\n",
                        st->name, st->title);
            if (st->compare) {
                fputs("<p class=\"here\"><b>Here:</b> ", h);
                st->compare(h, rows);
                fputs("</p>\n", h);
            }
            html_table(h, rows, st->cols);
        }
        json_decref(rows);
        fputs("</div>\n<div class=\"paper\"><b>The paper", h);
        fprintf(h, " [%s]:</b> %s</div>\n</div>\n</section>\n", st->seed_paper,
                st->paper ? st->paper : "nothing to compare.");
    }
    fputs("</body>\n</html>\n", h);
    if (nf_app_out_close(&page, "netfab report", path, ferror(h) ? NF_EIO : 0)) return NF_EXIT_FAIL;
    return ex;
}

/* ---- the command --------------------------------------------------------------------------- */

static int mkdir_p(const char *path) {
    char buf[PATH_MAX];
    snprintf(buf, sizeof buf, "%s", path);
    for (char *p = buf + 1; *p; p++)
        if (*p == '/') {
            *p = '\0';
            if (mkdir(buf, 0755) && errno != EEXIST) return -1;
            *p = '/';
        }
    return mkdir(buf, 0755) && errno != EEXIST ? -1 : 0;
}

int nf_cmd_report(int argc, char **argv) {
    report_ctx x = {.seed = 1};
    const char *only = NULL;
    bool quick = false, dry = false, list = false;
    long nproc = sysconf(_SC_NPROCESSORS_ONLN);
    unsigned par = nproc > 0 ? (unsigned)nproc : 1;
    const nf_opt rows[] = {
        {.name = "out",
         .arg = "DIR",
         .kind = NF_OPT_STR,
         NF_OPT_TO(x.dir),
         .help = "where the page, its data and images go"},
        {.name = "quick",
         .kind = NF_OPT_FLAG,
         NF_OPT_TO(quick),
         .help = "small fabrics, under 2 minutes on 2 cores (the default)"},
        {.name = "full",
         .kind = NF_OPT_FLAG,
         NF_OPT_TO(x.full),
         .help = "the papers' fabrics and grids (hours on 2 cores)"},
        {.name = "only",
         .arg = "LIST",
         .kind = NF_OPT_STR,
         NF_OPT_TO(only),
         .help = "only these steps (comma-separated; netfab report --list)"},
        {.name = "jobs",
         .arg = "N",
         .kind = NF_OPT_UINT,
         NF_OPT_TO(par),
         .lo = 1,
         .hi = 256,
         .help = "steps run at once (default: the processors), the costliest first; each may "
                 "use every processor"},
        {.name = "seed",
         .arg = "S",
         .kind = NF_OPT_SEED,
         NF_OPT_TO(x.seed),
         .help = "the experiments' seed (default 1)"},
        {.name = "list", .kind = NF_OPT_FLAG, NF_OPT_TO(list), .help = "the steps, then exit"},
        {.name = "dry-run",
         .kind = NF_OPT_FLAG,
         NF_OPT_TO(dry),
         .help = "print the command lines of the steps, then exit"},
    };
    const nf_cmd_spec spec = {
        .name = "report",
        .synopsis = "netfab report --out DIR [--quick | --full] [--only LIST] [--jobs N]\n"
                    "                     [--seed S] [--dry-run]\n"
                    "       netfab report --list\n",
        .description =
            "Runs the reproduction of the papers' experiments and writes DIR/index.html:\n"
            "for each experiment what was run, its plot and table, and beside them what the\n"
            "paper reports for it (the figure or table, and the numbers its text gives) with\n"
            "the matching figure measured here. DIR/data holds every step's JSON and log,\n"
            "DIR/img the images. [M] the multicast paper (Chen, Zhou, He, Qi 2022, FULB-MC):\n"
            "the engines' max EFI and routing time, an EFI histogram, tree height, EFI and\n"
            "workload latency; [S] the Sunway paper (Gao et al. 2021): dual rail, faults,\n"
            "routing tables, hardware collectives; [U] the UGAL note (UGAL on Dragonfly):\n"
            "latency-throughput curves. Full citations: docs/references.md.\n",
        .group = {{"options", rows, sizeof rows / sizeof rows[0]}},
        .notes = "Exit 0 when every step ran; 1 when one failed (the page says which, its log is "
                 "in\n"
                 "DIR/data); 2 on bad usage.\n",
        .examples = "  netfab report --quick --out report && chromium report/index.html\n"};
    int argi, ex0 = nf_opt_parse(&spec, argc, argv, &argi);
    if (ex0) return ex0 == NF_OPT_HELP ? NF_EXIT_OK : ex0;
    if (list) {
        for (size_t i = 0; i < N_STEPS; i++)
            printf("%-20s [%s]  %s\n", steps[i].name, steps[i].seed_paper, steps[i].title);
        return NF_EXIT_OK;
    }
    if (!x.dir || (quick && x.full)) {
        fprintf(stderr, "netfab report: %s\n",
                !x.dir ? "--out DIR is required" : "--quick or --full, not both");
        return NF_EXIT_USAGE;
    }
    job *jobs = calloc(N_STEPS, sizeof *jobs);
    if (!jobs) return nf_app_report(NF_ENOMEM, NULL);
    int ex = NF_EXIT_OK;
    for (size_t i = 0; i < N_STEPS; i++)
        jobs[i].selected = !only;
    for (const char *p = only; p && *p && !ex;) {
        size_t n = strcspn(p, ",");
        bool found = false;
        for (size_t i = 0; i < N_STEPS; i++)
            if (strlen(steps[i].name) == n && !strncmp(steps[i].name, p, n))
                jobs[i].selected = found = true;
        if (!found) {
            fprintf(stderr, "netfab report: --only: no step '%.*s' (netfab report --list)\n",
                    (int)n, p);
            ex = NF_EXIT_USAGE;
        }
        p += n + (p[n] == ',');
    }
    double t0 = nf_app_now();
    if (ex) goto out;
    /* the running binary itself, even if a rebuild has replaced the file since */
    if (!ex && access(self, X_OK) != 0) {
        fprintf(stderr, "netfab report: cannot run %s: %s\n", self, strerror(errno));
        ex = NF_EXIT_FAIL;
    }
    unsigned selected = 0;
    double total = 0;
    for (size_t i = 0; i < N_STEPS; i++)
        if (jobs[i].selected) {
            selected++;
            total += x.full ? steps[i].cost_full : steps[i].cost_quick;
        }
    if (par > selected) par = selected;
    /* every child may use every processor: when the long steps are the last ones running they
     * then have the machine to themselves */
    x.threads = nproc > 0 ? (unsigned)nproc : 1;
    for (size_t i = 0; i < N_STEPS; i++) {
        if (!jobs[i].selected) continue;
        steps[i].build(&steps[i], &x, jobs[i].cmds, &jobs[i].n);
    }
    if (dry) { /* the command lines, as a shell would take them */
        for (size_t i = 0; i < N_STEPS; i++)
            for (int c = 0; jobs[i].selected && c < jobs[i].n; c++) {
                const cmdline *cl = &jobs[i].cmds[c];
                for (int k = 0; k < cl->argc; k++) {
                    bool plain =
                        strspn(cl->argv[k], "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOP"
                                            "QRSTUVWXYZ0123456789-_=:,./+") == strlen(cl->argv[k]);
                    printf(plain ? "%s%s" : "%s'%s'", k ? " " : "", cl->argv[k]);
                }
                printf(cl->stdout_to ? " > %s\n" : "\n", cl->stdout_to);
            }
        ex = NF_EXIT_OK;
        goto out;
    }
    char sub[PATH_MAX];
    snprintf(sub, sizeof sub, "%s/data", x.dir);
    bool made = !ex && mkdir_p(sub) == 0;
    snprintf(sub, sizeof sub, "%s/img", x.dir);
    made = made && mkdir_p(sub) == 0;
    if (!ex && !made) {
        fprintf(stderr, "netfab report: cannot make %s: %s\n", sub, strerror(errno));
        ex = NF_EXIT_FAIL;
    }
    for (size_t i = 0; i < N_STEPS && !ex; i++) { /* each step's log starts empty */
        char log[PATH_MAX];
        snprintf(log, sizeof log, "%s/data/%s.log", x.dir, steps[i].name);
        if (jobs[i].selected) unlink(log);
    }
    if (ex) goto out;
    /* SIGINT, SIGTERM or SIGHUP stops the running steps (their process groups), waits for
     * them and exits 128 + the signal, leaving the previous outputs */
    static const int sigs[] = {SIGINT, SIGTERM, SIGHUP};
    struct sigaction was[3];
    for (int k = 0; k < 3; k++) {
        struct sigaction sa = {.sa_handler = on_stop};
        sigemptyset(&sa.sa_mask);
        sigaction(sigs[k], NULL, &was[k]);
        if (was[k].sa_handler != SIG_IGN) sigaction(sigs[k], &sa, NULL);
    }
    int sig = run_jobs(&x, jobs, par, total);
    for (int k = 0; k < 3; k++)
        sigaction(sigs[k], &was[k], NULL);
    if (sig) {
        fprintf(stderr, "netfab report: stopped by signal %d; the steps that ran were stopped\n",
                sig);
        ex = 128 + sig;
        goto out;
    }
    ex = write_page(&x, jobs, nf_app_now() - t0, argc, argv);
out:
    for (size_t i = 0; i < N_STEPS; i++) {
        if (jobs[i].selected && jobs[i].status && ex < 128)
            fprintf(stderr, "netfab report: step %s failed (exit %d); see %s/data/%s.log\n",
                    steps[i].name, jobs[i].status, x.dir, steps[i].name);
        for (int c = 0; c < jobs[i].n; c++) {
            for (int a = 0; a < jobs[i].cmds[c].argc; a++)
                free(jobs[i].cmds[c].argv[a]);
            free(jobs[i].cmds[c].stdout_to);
        }
    }
    free(jobs);
    if (ex == NF_EXIT_OK && !dry)
        fprintf(stderr, "netfab report: %s/index.html (%.0f s)\n", x.dir, nf_app_now() - t0);
    return ex;
}
