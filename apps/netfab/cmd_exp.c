/* SPDX-License-Identifier: MIT */
/* `netfab exp NAME [--quick] [--json] [--plot FILE.png]`: runs one of the Sunway experiments
 * and prints its rows as a table, or as {"rows": [...]} with --json; --plot draws them with
 * gnuplot. `netfab exp list` lists the experiments. */
#define _GNU_SOURCE
#include "cmd.h"
#include "opts.h"
#include "exp.h"
#include "gnuplot.h"
#include "progress.h"
#include "rows.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const exp_def experiments[] = {
    {.name = "dual-rail",
     .summary = "one message over one rail vs two (fixed, per-packet); reply word vs notify",
     .run = exp_dual_rail,
     .plot = {.x = "msg_bytes",
              .y = "bandwidth",
              .series = "mode",
              .where = "measure",
              .where_is = "bandwidth",
              .logx = true,
              .xlabel = "message bytes",
              .ylabel = "bytes per cycle"}},
    {.name = "mcast-height",
     .summary = "hardware multicast to 4 ranks, tree of height 1 vs 2: mean and p99 latency",
     .run = exp_mcast_height,
     .plot = {.x = "msg_bytes",
              .y = "lat_mean",
              .series = "height",
              .logx = true,
              .xlabel = "message bytes",
              .ylabel = "mean latency (cycles)"}},
    {.name = "mcast-efi",
     .summary = "groups of 4 forced onto one tree, EFI 1..128, all sending: mean and p99",
     .run = exp_mcast_efi,
     .plot = {.x = "efi",
              .y = "lat_mean",
              .series = "msg_bytes",
              .logx = true,
              .logy = true,
              .xlabel = "EFI (groups sharing the tree)",
              .ylabel = "mean latency (cycles)"}},
    {.name = "mcast-workload",
     .summary = "3D-grid communicators broadcasting at once: MINIHOP vs SSSP vs FULB trees",
     .run = exp_mcast_workload,
     .plot = {.x = "max_efi",
              .y = "lat_mean",
              .series = "engine",
              .xlabel = "max EFI of the trees",
              .ylabel = "mean latency (cycles)"}},
    {.name = "collectives",
     .summary = "hardware (NIC tree + multicast) vs point-to-point collectives, 16..512 ranks",
     .run = exp_collectives,
     .plot = {.x = "nodes",
              .y = "lat_mean",
              .series = "algorithm",
              .where = "op",
              .where_is = "allreduce",
              .logx = true,
              .logy = true,
              .xlabel = "ranks",
              .ylabel = "allreduce latency (cycles)"}},
    {.name = "faults",
     .summary = "fat tree vs gft with siblings (1, 2 rails) under 1..64 failed links",
     .run = exp_faults,
     .plot = {.x = "failed_links",
              .y = "reachability",
              .series = "fabric",
              .where = "case",
              .where_is = "random",
              .logx = true,
              .xlabel = "failed switch-to-switch links",
              .ylabel = "endpoint pairs reachable"}},
    {.name = "tables",
     .summary = "two-level (supernode) routing tables vs flat: memory, lookups checked equal",
     .run = exp_tables,
     .plot = {.x = "endpoints",
              .y = "two_level_bytes",
              .series = NULL,
              .logx = true,
              .logy = true,
              .xlabel = "endpoints",
              .ylabel = "table bytes, whole fabric"}},
    {.name = "link-errors",
     .summary = "VCT vs SAF vs dynamic switching under link bit errors, clean to 1e-5",
     .run = exp_link_errors,
     .plot = {.x = "ber",
              .y = "lat_mean",
              .series = "mode",
              .where = "case",
              .where_is = "all links",
              .logx = true,
              .xlabel = "bit error rate of every switch-to-switch link",
              .ylabel = "mean latency at load 0.3 (cycles)"}},
    /* asynchronous queue messages */
    {.name = "queues",
     .summary = "incast of queue messages into rings of 4..256: delivered, drops, retries, latency",
     .run = exp_queues,
     .plot = {.x = "ring_entries",
              .y = "delivered_frac",
              .series = "case",
              .logx = true,
              .xlabel = "receive-queue ring entries",
              .ylabel = "messages delivered (share)"}},
    /* the NIC's message engines (issue 39) */
    {.name = "desdp",
     .summary = "two engines sharing two ports (DESDP) vs an engine per port, 1..8 processes",
     .run = exp_desdp,
     .plot = {.x = "processes",
              .y = "bandwidth",
              .series = "ports",
              .xlabel = "processes on the node",
              .ylabel = "bytes per cycle"}},
    {.name = "nic-queues",
     .summary = "send queues' round robin with long and short (fast) puts: share, Jain's index",
     .run = exp_nic_queues,
     .plot = {.x = "queue",
              .y = "bytes_per_cycle",
              .series = "case",
              .xlabel = "send queue",
              .ylabel = "bytes per cycle while every queue has work"}},
    {.name = "inflight",
     .summary = "1..512 outstanding writes against the engine's 256 in flight: bandwidth",
     .run = exp_inflight,
     .plot = {.x = "outstanding",
              .y = "bandwidth",
              .series = "case",
              .logx = true,
              .xlabel = "writes outstanding",
              .ylabel = "bytes per cycle"}},
    {.name = "mcast-table",
     .summary = "32 multicast entries a router port: groups taken, a refused one's unicast copies",
     .run = exp_mcast_table,
     .plot = {.x = "members",
              .y = "lat",
              .series = "way",
              .where = "measure",
              .where_is = "latency",
              .logx = true,
              .xlabel = "group members",
              .ylabel = "multicast latency (cycles)"}},
    {.name = "fsw",
     .summary = "fast short messages (PIO, no PCIe reads) against ordinary puts, 8..256 bytes",
     .run = exp_fsw,
     .plot = {.x = "msg_bytes",
              .y = "lat",
              .series = "way",
              .logx = true,
              .xlabel = "message bytes",
              .ylabel = "latency (cycles)"}},
    {.name = "source-routing",
     .summary = "management messages by tables vs source routes, with and without links down",
     .run = exp_source_routing,
     .plot = {.x = "links_down",
              .y = "delivered",
              .series = "routing",
              .xlabel = "switch links down",
              .ylabel = "management messages delivered (of 64)"}},
    {.name = "reductions",
     .summary = "NIC reductions of f32/f64/i32/i64 by every operator, bit for bit; the ordered sum",
     .run = exp_reductions,
     .plot = {.x = "ranks",
              .y = "lat",
              .series = "tree",
              .where = "measure",
              .where_is = "latency",
              .logx = true,
              .xlabel = "ranks",
              .ylabel = "hardware allreduce latency (cycles)"}},
    {.name = "vs-taihulight",
     .summary = "the prototype against TaihuLight at 1,024 processors, a ratio a measure; the 4x",
     .run = exp_vs_taihulight,
     .plot = {.x = "index",
              .y = "ratio",
              .series = "hosts",
              .xlabel = "measure (diameter, bandwidth, latency, all-to-all, allreduce, broadcast, "
                        "mean)",
              .ylabel = "prototype / TaihuLight (times better)"}},
    {.name = "q-adaptive",
     .summary = "Q-adaptive as its authors built it, against minimal, Valiant, UGAL and PAR at "
                "their scale and knobs",
     .run = exp_q_adaptive,
     .plot = {.x = "load",
              .y = "accepted",
              .series = "routing",
              .where = "traffic",
              .where_is = "worstcase",
              .xlabel = "offered load under the worst case (flits per endpoint per cycle)",
              .ylabel = "accepted load"}},
    {.name = "proxies",
     .summary = "Navaridas and Pascual's restrictive proxies against Valiant and UGAL-L",
     .run = exp_proxies,
     .plot = {.x = "load",
              .y = "accepted",
              .series = "routing",
              .where = "traffic",
              .where_is = "worstcase",
              .xlabel = "offered load under the worst case (flits per endpoint per cycle)",
              .ylabel = "accepted load"}},
    /* congestion pre-awareness (issue 19) */
    {.name = "congestion",
     .summary = "hot spot beside uniform traffic, with and without congestion pre-awareness",
     .run = exp_congestion,
     .plot = {.x = "load",
              .y = "bg_lat_mean",
              .series = "preaware",
              .xlabel = "offered load (flits per endpoint per cycle)",
              .ylabel = "background mean latency (cycles)"}},
};
enum { N_EXP = sizeof experiments / sizeof experiments[0] };

size_t exp_count(void) { return N_EXP; }
const exp_def *exp_at(size_t i) { return i < N_EXP ? &experiments[i] : NULL; }
const exp_def *exp_find(const char *name) {
    for (size_t i = 0; i < N_EXP; i++)
        if (strcmp(experiments[i].name, name) == 0) return &experiments[i];
    return NULL;
}

/* The bar of the experiment that runs now, and the share of it the experiment fills. */
static nf_progress *cur_bar;
static double cur_lo, cur_hi = 1;

void exp_progress(double frac, const char *fmt, ...) {
    if (!cur_bar || !cur_bar->tty) return;
    char what[96];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    nf_progress_label(cur_bar, what);
    nf_progress_set(cur_bar, cur_lo + (cur_hi - cur_lo) * frac);
}

int exp_run(const exp_def *e, const exp_opts *o, json_t *rows, nf_progress *bar, double lo,
            double hi) {
    cur_bar = bar, cur_lo = lo, cur_hi = hi;
    int rc = e->run(o, rows);
    cur_bar = NULL, cur_lo = 0, cur_hi = 1;
    return rc;
}

/* The experiments, for --help. */
static void exp_list(FILE *out) {
    fprintf(out, "experiments:\n");
    for (size_t i = 0; i < N_EXP; i++)
        fprintf(out, "  %-16s %s\n", experiments[i].name, experiments[i].summary);
    fputc('\n', out);
}

/* A cell as text: integers whole, reals to 4 significant digits, "-" for a missing value. */
const char *exp_cell_text(json_t *v, char buf[64]) {
    if (json_is_string(v)) return json_string_value(v);
    if (json_is_integer(v))
        snprintf(buf, 64, "%lld", (long long)json_integer_value(v));
    else if (json_is_real(v))
        snprintf(buf, 64, "%.4g", json_real_value(v));
    else if (json_is_boolean(v))
        return json_is_true(v) ? "true" : "false";
    else
        return "-";
    return buf;
}

/* Columns: the keys of all rows in the order first seen; each as wide as its longest cell. */
static void print_table(json_t *rows) {
    json_t *cols = json_array();
    size_t i;
    json_t *row;
    json_array_foreach(rows, i, row) {
        const char *k;
        json_t *v;
        json_object_foreach(row, k, v) {
            bool seen = false;
            for (size_t j = 0; j < json_array_size(cols) && !seen; j++)
                seen = strcmp(json_string_value(json_array_get(cols, j)), k) == 0;
            if (!seen) json_array_append_new(cols, json_string(k));
        }
    }
    size_t nc = json_array_size(cols);
    int *w = calloc(nc + 1, sizeof *w);
    char buf[64];
    for (size_t j = 0; j < nc; j++) {
        const char *k = json_string_value(json_array_get(cols, j));
        w[j] = (int)strlen(k);
        json_array_foreach(rows, i, row) {
            int n = (int)strlen(exp_cell_text(json_object_get(row, k), buf));
            if (n > w[j]) w[j] = n;
        }
    }
    for (size_t j = 0; j < nc; j++)
        printf("%s%*s", j ? "  " : "", w[j], json_string_value(json_array_get(cols, j)));
    putchar('\n');
    json_array_foreach(rows, i, row) {
        for (size_t j = 0; j < nc; j++)
            printf("%s%*s", j ? "  " : "", w[j],
                   exp_cell_text(json_object_get(row, json_string_value(json_array_get(cols, j))),
                                 buf));
        putchar('\n');
    }
    free(w);
    json_decref(cols);
}

/* A plotted value: a number as it is, anything else as 0. */
static double number(json_t *v) {
    double d = 0.0;
    nf_app_json_number(v, &d);
    return d;
}

/* Whether a row is plotted (its `where` key has the value asked for), and its series' name. */
static bool plotted(const exp_plot *p, json_t *row) {
    json_t *wv = p->where ? json_object_get(row, p->where) : NULL;
    return !p->where || (json_is_string(wv) && strcmp(json_string_value(wv), p->where_is) == 0);
}

static const char *series_of(const exp_plot *p, json_t *row, char buf[64]) {
    return p->series ? exp_cell_text(json_object_get(row, p->series), buf) : "";
}

/* One gnuplot run: a line per distinct series value among the rows plotted, the data inline. */
int exp_plot_rows(const exp_def *e, json_t *rows, const char *path) {
    const exp_plot *p = &e->plot;
    json_t *series = json_array();
    size_t i;
    json_t *row;
    char buf[64];
    json_array_foreach(rows, i, row) {
        if (!plotted(p, row)) continue;
        const char *name = series_of(p, row, buf);
        bool seen = false;
        for (size_t j = 0; j < json_array_size(series) && !seen; j++)
            seen = strcmp(json_string_value(json_array_get(series, j)), name) == 0;
        if (!seen) json_array_append_new(series, json_string(name));
    }
    char *text = NULL;
    size_t len = 0;
    FILE *g = open_memstream(&text, &len);
    if (!g) {
        json_decref(series);
        return nf_app_report(NF_ENOMEM, NULL);
    }
    char title[128];
    snprintf(title, sizeof title, "netfab exp %s", e->name);
    nf_app_gnuplot_head(g, path, 800, 520, title, p->xlabel, p->ylabel);
    fprintf(g, "set grid\nset key outside right\n%s%s", p->logx ? "set logscale x\n" : "",
            p->logy ? "set logscale y\n" : "");
    fputs("plot", g);
    for (size_t j = 0; j < json_array_size(series); j++) {
        fprintf(g, "%s '-' using 1:2 with linespoints title ", j ? "," : "");
        nf_app_gnuplot_quote(g, p->series ? json_string_value(json_array_get(series, j)) : p->y);
    }
    fputc('\n', g);
    for (size_t j = 0; j < json_array_size(series); j++) {
        const char *want = json_string_value(json_array_get(series, j));
        json_array_foreach(rows, i, row) {
            json_t *x = json_object_get(row, p->x), *y = json_object_get(row, p->y);
            if (!plotted(p, row) || !x || !y || strcmp(series_of(p, row, buf), want)) continue;
            fprintf(g, "%.9g %.9g\n", number(x), number(y));
        }
        fputs("e\n", g);
    }
    json_decref(series);
    int rc = fclose(g) ? nf_app_report(NF_ENOMEM, NULL)
                       : nf_app_run_gnuplot("netfab exp", text, len, path);
    free(text);
    return rc;
}

static const char *const host_models[] = {"none", "paper", NULL}; /* exp_opts.host */

int nf_cmd_exp(int argc, char **argv) {
    exp_opts o = {.seed = 1, .host = 1};
    bool json = false;
    const char *plot = NULL;
    const nf_opt opts[] = {
        {.name = "quick",
         .kind = NF_OPT_FLAG,
         NF_OPT_TO(o.quick),
         .help = "the small version, under a minute on 2 cores"},
        {.name = "json",
         .kind = NF_OPT_FLAG,
         NF_OPT_TO(json),
         .help = "{\"experiment\": NAME, \"quick\": ..., \"rows\": [...]} instead of a table"},
        {.name = "plot",
         .arg = "FILE.png",
         .kind = NF_OPT_STR,
         NF_OPT_TO(plot),
         .help = "draw the rows with gnuplot into a PNG (an SVG when FILE ends in .svg)"},
        {NF_OPT_THREADS(o.threads, "threads (default: OpenMP's)")},
        {.name = "seed",
         .arg = "S",
         .kind = NF_OPT_SEED,
         NF_OPT_TO(o.seed),
         .help = "the experiment's seed (default 1)"},
        /* the papers' unknowns (issue 19) */
        {.name = "period",
         .arg = "CYCLES",
         .kind = NF_OPT_UINT,
         NF_OPT_TO(o.period),
         .given = &o.period_given,
         .lo = 1,
         .hi = 100000000,
         .help = "mcast-efi: cycles between two multicasts of a group, all groups at once "
                 "(default with --host none 2000; the host model: each group's next once its "
                 "last is done)"},
        {.name = "host",
         .arg = "MODEL",
         .kind = NF_OPT_CHOICE,
         NF_OPT_TO(o.host),
         .choices = host_models,
         .help = "mcast-height, mcast-efi: paper (default): hosts and routers fitted to the "
                 "multicast paper's Tables 1 and 2; none: the network alone"},
        {.name = "host-send",
         .arg = "CYCLES",
         .kind = NF_OPT_UINT,
         NF_OPT_TO(o.host_send),
         .given = &o.host_send_given,
         .lo = 0,
         .hi = 100000000,
         .help =
             "mcast-height, mcast-efi, collectives' host rows: a host's time issuing a message"},
        {.name = "host-recv",
         .arg = "CYCLES",
         .kind = NF_OPT_UINT,
         NF_OPT_TO(o.host_recv),
         .given = &o.host_recv_given,
         .lo = 0,
         .hi = 100000000,
         .help = "the same: a host's time receiving one"},
        {.name = "host-copy",
         .arg = "BYTES",
         .kind = NF_OPT_UINT,
         NF_OPT_TO(o.host_copy),
         .given = &o.host_copy_given,
         .lo = 0,
         .hi = 100000000,
         .help = "the same: bytes a host copies a cycle, each side (0: free)"},
        {.name = "host-jitter",
         .arg = "CYCLES",
         .kind = NF_OPT_UINT,
         NF_OPT_TO(o.host_jitter),
         .given = &o.host_jitter_given,
         .lo = 0,
         .hi = 100000000,
         .help = "the same: each host time takes 0 to CYCLES more, uniformly"},
        {.name = "router-delay",
         .arg = "CYCLES",
         .kind = NF_OPT_UINT,
         NF_OPT_TO(o.router_delay),
         .lo = 1,
         .hi = 10000,
         .help = "mcast-height: the routers' delay (default the simulator's, 3)"},
        {.name = "host-cycles",
         .arg = "CYCLES",
         .kind = NF_OPT_UINT,
         NF_OPT_TO(o.host_cycles),
         .lo = 1,
         .hi = 100000000,
         .help = "collectives: the older host model in the rows with host time: CYCLES a "
                 "message on its issuing host alone (0.813 us of MPI is 356 at 2.286 ns a "
                 "cycle; default: the multicast paper's fitted hosts)"},
    };
    const nf_cmd_spec spec = {
        .name = "exp",
        .synopsis = "netfab exp NAME [--quick] [--json] [--plot FILE.png] [--threads N]\n"
                    "                        [--seed S]\n"
                    "                        [--period CYCLES] [--router-delay CYCLES]\n"
                    "                        [--host-cycles CYCLES] [--host paper|none]\n"
                    "                        [--host-send C] [--host-recv C] [--host-copy B]\n"
                    "                        [--host-jitter C]\n"
                    "       netfab exp list\n",
        .description = "Runs one of the papers' experiments and prints one row per measured point\n"
                       "(a table, or {\"rows\": [...]} with --json). --quick: the small version, "
                       "under\n"
                       "a minute on 2 cores. --plot draws the rows with gnuplot into a PNG.\n",
        .more = exp_list,
        .group = {{"options", opts, sizeof opts / sizeof opts[0]}},
        .examples = "  netfab exp tables --quick --json\n",
        .max_args = 1};
    int argi, ex = nf_opt_parse(&spec, argc, argv, &argi);
    if (ex) return ex == NF_OPT_HELP ? NF_EXIT_OK : ex;
    if (argi == argc) return nf_opt_usage("exp", "which experiment? (netfab exp list)");
    const char *name = argv[argi];
    if (strcmp(name, "list") == 0) {
        for (size_t i = 0; i < N_EXP; i++)
            printf("%-16s %s\n", experiments[i].name, experiments[i].summary);
        return NF_EXIT_OK;
    }
    const exp_def *e = exp_find(name);
    if (!e) {
        fprintf(stderr, "netfab exp: unknown experiment '%s' (known:", name);
        for (size_t i = 0; i < N_EXP; i++)
            fprintf(stderr, "%s %s", i ? "," : "", experiments[i].name);
        fprintf(stderr, ")\n");
        return NF_EXIT_USAGE;
    }
    /* before a long run: can the image be written? (a temporary file next to it is made and
     * removed; the image there is kept until the new one is drawn) */
    if (plot) {
        nf__afile probe;
        if (!nf_app_out_open(&probe, "netfab exp: --plot", plot)) return NF_EXIT_FAIL;
        nf__afile_abort(&probe);
    }
    json_t *rows = json_array();
    nf_progress bar;
    nf_progress_begin(&bar, e->name);
    int rc = exp_run(e, &o, rows, &bar, 0, 1);
    nf_progress_end(&bar);
    if (rc == NF_EXIT_OK) {
        if (json) {
            json_t *doc =
                json_pack("{s:s, s:b, s:O}", "experiment", e->name, "quick", o.quick, "rows", rows);
            json_dumpf(doc, stdout, JSON_INDENT(2) | JSON_REAL_PRECISION(9));
            putchar('\n');
            json_decref(doc);
        } else {
            print_table(rows);
        }
        if (plot) rc = exp_plot_rows(e, rows, plot);
    }
    json_decref(rows);
    return rc;
}
