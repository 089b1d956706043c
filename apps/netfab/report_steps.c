/* SPDX-License-Identifier: MIT */
/* netfab report's steps: the command lines of each (netfab exp, sweep, mcast, then plot on what
 * they wrote) at quick and full scale, and the table of steps. */
#define _GNU_SOURCE
#include "report_steps.h"
#include "cmd.h"
#include "report_compare.h"

#include <limits.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

static void arg(report_cmd *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void arg(report_cmd *c, const char *fmt, ...) {
    if (c->argc >= REPORT_MAX_ARGS) return;
    va_list ap;
    va_start(ap, fmt);
    if (vasprintf(&c->argv[c->argc], fmt, ap) >= 0) c->argc++;
    va_end(ap);
}

/* Where the command's stdout goes: DIR/data/NAME.json. */
static void stdout_to(report_cmd *c, const report_ctx *x, const report_step *st) {
    if (asprintf(&c->stdout_to, "%s/data/%s.json", x->dir, st->name) < 0) c->stdout_to = NULL;
}

static report_cmd *next_cmd(report_cmd *cmds, int *n) {
    report_cmd *c = &cmds[(*n)++];
    memset(c, 0, sizeof *c);
    arg(c, "netfab");
    return c;
}

/* netfab exp NAME --json --plot img/NAME.png > data/NAME.json */
static void build_exp(const report_step *st, const report_ctx *x, report_cmd *cmds, int *n) {
    report_cmd *c = next_cmd(cmds, n);
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
static void sweep_tail(report_cmd *c, const report_ctx *x, const char *out) {
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

static void build_engines(const report_step *st, const report_ctx *x, report_cmd *cmds, int *n) {
    size_t nc = x->full ? sizeof engine_cases_full / sizeof engine_cases_full[0] : 1;
    for (size_t i = 0; i < nc; i++) {
        report_cmd *c = next_cmd(cmds, n);
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
static report_cmd *plot_cmd(report_cmd *cmds, int *n, const report_ctx *x, const report_step *st,
                            const char *kind) {
    report_cmd *c = next_cmd(cmds, n);
    arg(c, "plot");
    arg(c, "%s", kind);
    arg(c, "--in");
    arg(c, "%s/data/%s.json", x->dir, st->name);
    arg(c, "--out");
    arg(c, "%s/img/%s.png", x->dir, st->name);
    return c;
}

/* One workload routed by the three original engines, its EFI histogram drawn. */
static void build_hist(const report_step *st, const report_ctx *x, report_cmd *cmds, int *n) {
    report_cmd *c = next_cmd(cmds, n);
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
static void build_dragonfly(const report_step *st, const report_ctx *x, report_cmd *cmds, int *n) {
    const char *traffic = strcmp(st->name, "dragonfly-uniform") == 0 ? "uniform" : "worstcase";
    report_cmd *c = next_cmd(cmds, n);
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

/* a count other than REPORT_N_STEPS conflicts with the declaration in report_steps.h */
const report_step report_steps[] = {
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
     cols_engines, build_engines, report_cmp_engines, 1, 30},
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
     NULL, build_exp, report_cmp_height, 1, 2},
    {"mcast-efi", "M", "Hardware multicast: groups sharing one tree (EFI)",
     "<code>netfab exp mcast-efi</code>: EFI groups of 4 forced onto one tree, all sending; mean "
     "and p99 latency of 8 B and 2 KB messages against the EFI.",
     "Fig. 2 and Table 2 (512 endpoints in 128 groups of 4): 2 KB messages +38% at EFI 16 and "
     "+1,066% at EFI 128; 8 B messages grow only slightly.",
     NULL, build_exp, report_cmp_efi, 1, 220},
    {"mcast-workload", "M", "Hardware multicast: a job's communicators at once",
     "<code>netfab exp mcast-workload</code>: a 3D-grid job's line communicators all broadcast "
     "2 KB; their trees from MINIHOP, SSSP or FULB.",
     "No latency measurement in the paper; its Table 3 (3D grids on a fat tree) shows "
     "MINIHOP-MC = SSSP-MC far above FULB-MC in max EFI.",
     NULL, build_exp, report_cmp_workload, 8, 575},
    {"collectives", "S", "Hardware collectives against point-to-point ones",
     "<code>netfab exp collectives</code>: barrier, broadcast, reduce and allreduce by the NICs' "
     "gather tree and the root's multicast, against binomial, recursive-doubling and ring "
     "algorithms over messages, 16 to 512 ranks.",
     "The Sunway paper describes the hardware collectives; the text we have stops in section "
     "3.1, before its performance section, so it gives no timing.",
     NULL, build_exp, report_cmp_coll, 1, 4},
    {"dual-rail", "S", "Dual-rail NICs and the reply word",
     "<code>netfab exp dual-rail</code>: one message over one rail or two (halves fixed, or the "
     "rail chosen per packet), idle or with rail 0 busy; when the target learns of a write.",
     "Section 2 of the Sunway paper describes the dual-rail NIC (28 Gbps &times; 4 lanes a "
     "port) and the RDMA operations with a reply word; the text gives no measured bandwidth or "
     "latency.",
     NULL, build_exp, report_cmp_dual, 1, 2},
    {"faults", "S", "Faults: fat tree against the gft with sibling links",
     "<code>netfab exp faults</code>: random failed switch-to-switch links (1 to 64, many "
     "trials) and all up links of one leaf; endpoint pairs still reachable by the "
     "fault-tolerant tables, and the saturation throughput left.",
     "Section 2.1: with all 18 up links of a leaf failed, its endpoints still reach the rest "
     "through the 4 sibling links (36 + 4 port split); no figure.",
     NULL, build_exp, report_cmp_faults, 11, 990},
    {"tables", "S", "Two-level routing tables",
     "<code>netfab exp tables</code>: supernode tables (rows for the own supernode, rows per "
     "other supernode) against flat ones; memory, and every lookup compared.",
     "Section 2.2: the two-level table saves about 99.5% of the memory; no figure.", cols_tables,
     build_exp, report_cmp_tables, 5, 92},
    {"dragonfly-uniform", "U", "UGAL on Dragonfly: uniform traffic",
     "<code>netfab sweep --routing dfmin,val,ugal-l,ugal-g,par --traffic uniform</code>, then "
     "<code>netfab plot latency</code>: mean packet latency against the offered load.",
     "The UGAL note has no measurements: minimal routing has the lowest latency at light "
     "load, Valiant uses twice the global bandwidth (so about half the throughput under uniform "
     "traffic), UGAL switches between them (bias 2.0-3.0).",
     cols_dragonfly, build_dragonfly, report_cmp_dragonfly, 8, 1160},
    {"dragonfly-worstcase", "U", "UGAL on Dragonfly: worst-case traffic",
     "As above under worst-case traffic (every node of group i sends to group i + 1).",
     "The UGAL note: under adversarial traffic minimal routing funnels a group's traffic over "
     "one global link; Valiant and UGAL spread it (no numbers given).",
     cols_dragonfly, build_dragonfly, report_cmp_dragonfly, 25, 1620},
};

int report_steps_select(const char *only, bool selected[REPORT_N_STEPS]) {
    for (size_t i = 0; i < REPORT_N_STEPS; i++)
        selected[i] = !only;
    for (const char *p = only; p && *p;) {
        size_t n = strcspn(p, ",");
        bool found = false;
        for (size_t i = 0; i < REPORT_N_STEPS; i++)
            if (strlen(report_steps[i].name) == n && !strncmp(report_steps[i].name, p, n))
                selected[i] = found = true;
        if (!found) {
            fprintf(stderr, "netfab report: --only: no step '%.*s' (netfab report --list)\n",
                    (int)n, p);
            return NF_EXIT_USAGE;
        }
        p += n + (p[n] == ',');
    }
    return NF_EXIT_OK;
}
