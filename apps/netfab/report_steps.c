/* SPDX-License-Identifier: MIT */
/* netfab report's steps: the command lines of each (netfab exp, sweep, mcast, then plot on what
 * they wrote) at quick and full scale, and the table of steps. */
#define _GNU_SOURCE
#include "report_steps.h"
#include "cmd.h"
#include "datadir.h"
#include "report_compare.h"
#include "exp.h"

#include <limits.h>
#include <math.h>
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

/* The fitted runs of the network alone (issue 19): an experiment again with its fitted value and
 * no hosts, as step NAME-fit (netfab exp mcast-efi --period P --host none ..., netfab exp
 * mcast-height --router-delay R --host none ...); the plain steps run the host model. */
static void build_exp_fit(const report_step *st, const report_ctx *x, report_cmd *cmds, int *n) {
    bool efi = strcmp(st->name, "mcast-efi-fit") == 0;
    build_exp(st, x, cmds, n);
    report_cmd *c = &cmds[*n - 1];
    free(c->argv[2]);
    if (asprintf(&c->argv[2], "%s", efi ? "mcast-efi" : "mcast-height") < 0) c->argv[2] = NULL;
    arg(c, efi ? "--period" : "--router-delay");
    arg(c, "%u", efi ? EXP_EFI_PERIOD_FIT : EXP_HEIGHT_ROUTER_DELAY_FIT);
    arg(c, "--host");
    arg(c, "none");
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
    arg(c, "dfmin,val,ugal-l,ugal-g,par,qadapt");
    arg(c, "--vcs"); /* qadapt's five, one a hop; the others the same for a fair comparison */
    arg(c, "5");
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

static const char *const cols_links[] = {
    "case",     "mode",         "ber",         "lat_mean",       "lat_p99",        "saturation",
    "saf_frac", "corrupt_pkts", "wasted_frac", "pkts_generated", "pkts_delivered", NULL};
static const char *const cols_queues[] = {
    "kind",     "senders", "ring_entries", "messages", "delivered_frac", "dropped", "retries",
    "lat_mean", "lat_p99", "cycles",       NULL};

/* a count other than REPORT_N_STEPS conflicts with the declaration in report_steps.h */
const report_step report_steps[] = {
    {"mcast-engines", "M", "Multicast routing engines: max EFI and routing time", cols_engines,
     build_engines, report_cmp_engines},
    {"mcast-hist", "M", "EFI histogram of one workload", cols_hist, build_hist, NULL},
    {"mcast-height", "M", "Hardware multicast: tree height 1 against 2", NULL, build_exp,
     report_cmp_height},
    {"mcast-efi", "M", "Hardware multicast: groups sharing one tree (EFI)", NULL, build_exp,
     report_cmp_efi},
    /* the fitted runs (issue 19) */
    {"mcast-height-fit", "M", "Hardware multicast: tree height, the network alone", NULL,
     build_exp_fit, report_cmp_height_fit},
    {"mcast-efi-fit", "M", "Hardware multicast: EFI, the network alone", NULL, build_exp_fit,
     report_cmp_efi_fit},
    {"mcast-workload", "M", "Hardware multicast: a job's communicators at once", NULL, build_exp,
     report_cmp_workload},
    {"collectives", "S", "Hardware collectives against point-to-point ones", NULL, build_exp,
     report_cmp_coll},
    {"dual-rail", "S", "Dual-rail NICs and the reply word", NULL, build_exp, report_cmp_dual},
    {"faults", "S", "Faults: fat tree against the gft with sibling links", NULL, build_exp,
     report_cmp_faults},
    {"tables", "S", "Two-level routing tables", cols_tables, build_exp, report_cmp_tables},
    {"link-errors", "S", "Link errors: cut-through against store-and-forward", cols_links,
     build_exp, NULL},
    /* asynchronous queue messages: the paper gives no figure */
    {"queues", "S", "Asynchronous queue messages: receive-queue rings under an incast", cols_queues,
     build_exp, NULL},
    {"dragonfly-uniform", "U", "UGAL, PAR and Q-adaptive on Dragonfly: uniform traffic",
     cols_dragonfly, build_dragonfly, report_cmp_dragonfly},
    {"dragonfly-worstcase", "U", "UGAL, PAR and Q-adaptive on Dragonfly: worst-case traffic",
     cols_dragonfly, build_dragonfly, report_cmp_dragonfly},
    /* congestion pre-awareness (issue 19) */
    {"congestion", "S", "Congestion pre-awareness under a hot spot", NULL, build_exp,
     report_cmp_congestion},
    /* the NIC's message engines: the paper gives no figure */
    {"desdp", "S", "The NIC's two engines sharing two ports (DESDP) against one per port", NULL,
     build_exp, NULL},
    {"nic-queues", "S", "The NIC's send queues: round robin among long and short puts", NULL,
     build_exp, NULL},
    {"inflight", "S", "The NIC's 256 messages in flight an engine", NULL, build_exp, NULL},
    {"mcast-table", "S", "The router's 32 multicast entries a port: the 33rd group", NULL,
     build_exp, NULL},
    {"fsw", "S", "Fast short messages (FSW) against ordinary puts", NULL, build_exp, NULL},
    {"source-routing", "S", "Source-routed management messages against the tables", NULL, build_exp,
     NULL},
    {"reductions", "S", "The NIC's reductions: every type and operator, the ordered sum", NULL,
     build_exp, NULL},
    {"vs-taihulight", "S", "The prototype against TaihuLight at 1,024 processors: the 4x", NULL,
     build_exp, report_cmp_taihulight},
    /* the papers the UGAL note cites, at their scale (issue 40) */
    {"q-adaptive", "U", "Q-adaptive as its authors built it, at their scale and knobs", NULL,
     build_exp, report_cmp_q_adaptive},
    {"proxies", "U", "Restrictive proxy routing against Valiant", NULL, build_exp,
     report_cmp_proxies},
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

int report_steps_costs(bool full, double cost[REPORT_N_STEPS]) {
    static const char rel[] = "report/costs.txt";
    char *text = nf_app_data_read("netfab report", rel, NULL);
    if (!text) return NF_EXIT_FAIL;
    bool seen[REPORT_N_STEPS] = {false};
    const char *why = NULL;
    unsigned line = 0;
    for (char *p = text, *nl; p && *p && !why; p = nl) {
        if ((nl = strchr(p, '\n'))) *nl++ = '\0';
        line++;
        if (*p == '#' || p[strspn(p, " \t\r")] == '\0') continue;
        char name[64];
        double q, f;
        int used = 0;
        size_t i = REPORT_N_STEPS;
        if (sscanf(p, "%63s %lf %lf %n", name, &q, &f, &used) != 3 || p[used] != '\0')
            why = "want: STEP QUICK_SECONDS FULL_SECONDS";
        else if (!(isfinite(q) && isfinite(f) && q > 0 && f > 0))
            why = "the seconds must be positive";
        for (size_t k = 0; k < REPORT_N_STEPS && !why; k++)
            if (!strcmp(report_steps[k].name, name)) i = k;
        if (!why && i == REPORT_N_STEPS) why = "no such step";
        if (!why && seen[i]) why = "a step given twice";
        if (!why) {
            seen[i] = true;
            cost[i] = full ? f : q;
        }
    }
    int ex = NF_EXIT_OK;
    if (why) {
        fprintf(stderr, "netfab report: data file %s:%u: %s\n", rel, line, why);
        ex = NF_EXIT_FAIL;
    }
    for (size_t i = 0; i < REPORT_N_STEPS && !ex; i++)
        if (!seen[i]) {
            fprintf(stderr, "netfab report: data file %s: no line for step %s\n", rel,
                    report_steps[i].name);
            ex = NF_EXIT_FAIL;
        }
    free(text);
    return ex;
}
