/* SPDX-License-Identifier: MIT */
/* `netfab topo`: build a fabric from a --topo spec (or read one from a file), compute its min-hop
 * distances, print statistics as a table or JSON, and convert it to another format. */
#define _GNU_SOURCE
#include "cmd.h"
#include "opts.h"
#include "netfab/gen.h"
#include "netfab/hops.h"
#include "netfab/io.h"

#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const formats[] = {"ibnet", "ibsim", "dot", "json", NULL};

/* The options of netfab topo, filled in by nf_cmd_topo. */
typedef struct topo_args {
    nf_opt_strs specs;
    bool stats, json, fmt_given;
    const char *out;
    unsigned fmt;
    int threads;
} topo_args;

static void topo_spec(topo_args *a, nf_cmd_spec *s, nf_opt *o) {
    const nf_opt rows[] = {
        {.name = "topo",
         .short_name = 't',
         .arg = "SPEC",
         .kind = NF_OPT_STRS,
         NF_OPT_TO(a->specs),
         .help = "a fabric (see specs above); repeat it for several"},
        {.name = "stats",
         .short_name = 's',
         .kind = NF_OPT_FLAG,
         NF_OPT_TO(a->stats),
         .help = "print statistics (default when --out is not given)"},
        {.name = "json",
         .short_name = 'j',
         .kind = NF_OPT_FLAG,
         NF_OPT_TO(a->json),
         .help = "statistics as JSON (keys endpoints, switches, links, diameter, build_s, "
                 "distances_s, peak_rss_kib, ...)"},
        {.name = "out",
         .short_name = 'o',
         .arg = "FILE",
         .kind = NF_OPT_STR,
         NF_OPT_TO(a->out),
         .help = "write the fabric; the format comes from --format or FILE's suffix (.ibnet .net "
                 ".dot .json)"},
        {.name = "format",
         .short_name = 'f',
         .kind = NF_OPT_CHOICE,
         NF_OPT_TO(a->fmt),
         .choices = formats,
         .given = &a->fmt_given,
         .help = "the format of --out"},
        {NF_OPT_THREADS(a->threads, "threads for the distance computation (default: all cores)"),
         .short_name = 'T'},
    };
    memcpy(o, rows, sizeof rows);
    *s = (nf_cmd_spec){
        .name = "topo",
        .synopsis = "netfab topo --topo SPEC [--topo SPEC ...] [--stats] [--json]\n"
                    "                   [--out FILE [--format ibnet|ibsim|dot|json]] "
                    "[--threads N]\n",
        .description =
            "Builds each fabric, computes all-pairs switch distances and prints its statistics\n"
            "(the default), or writes it to FILE ('-' = stdout). With several --topo options the\n"
            "statistics are one table row (or one JSON object in an array) per fabric.\n",
        .sections =
            "specs:\n"
            "  fattree:k=K                      3-level fat tree of K-port switches\n"
            "  xgft:h=H,m=M1.M2..,w=W1.W2..     extended generalized fat tree\n"
            "  torus:XxYxZ,c=C                  torus (any number of dimensions), C "
            "endpoints/switch\n"
            "  dragonfly:a=A,p=P,h=H[,g=G][,arr=palmtree|consecutive]\n"
            "  gft:preset=sunway-proto | "
            "gft:leaves=L,nodes=N,spines=S[,links=][,sib=][,rails=][,radix=]\n"
            "  bluelight, taihulight            trimmed fat trees shaped like the Sunway "
            "machines\n"
            "  file:PATH                        ibnetdiscover output or an ibsim net file\n",
        .group = {{"options", o, sizeof rows / sizeof rows[0]}},
        .examples = "  netfab topo --topo dragonfly:a=18,p=9,h=9\n"
                    "  netfab topo --topo fattree:k=4 --out ft4.ibnet\n"
                    "  netfab topo --topo file:cluster.ibnet --json\n"};
}

typedef struct topo_stats {
    const char *spec;
    nf_fabric_counts counts;
    uint32_t endpoints, switches, links;
    int diameter, connected;
    double build_s, distances_s;
    size_t fabric_bytes, hops_bytes;
    long peak_rss_kib;
    int diameter_lo; /* a lower bound when diameter is only an upper one, else -1 */
} topo_stats;

static json_t *stats_json(const topo_stats *s) {
    json_t *o = NULL, *cls = json_object();
    for (int c = 0; c < NF_LINK_NCLASSES; c++)
        json_object_set_new(cls, nf_link_class_name((nf_link_class)c),
                            json_integer(s->counts.links_by_class[c]));
    o = json_pack(
        "{s:s, s:I, s:I, s:I, s:o, s:I, s:I, s:I, s:I, s:i, s:b, s:f, s:f, s:I, s:I, s:I}", "topo",
        s->spec, "endpoints", (json_int_t)s->endpoints, "switches", (json_int_t)s->switches,
        "links", (json_int_t)s->links, "links_by_class", cls, "loopback_links",
        (json_int_t)s->counts.loopback_links, "ports_used", (json_int_t)s->counts.ports_used,
        "ports_total", (json_int_t)s->counts.ports_total, "max_radix",
        (json_int_t)s->counts.max_radix, "diameter", s->diameter, "connected", s->connected,
        "build_s", s->build_s, "distances_s", s->distances_s, "fabric_bytes",
        (json_int_t)s->fabric_bytes, "hops_bytes", (json_int_t)s->hops_bytes, "peak_rss_kib",
        (json_int_t)s->peak_rss_kib);
    /* a large irregular fabric's diameter may be known only within bounds */
    if (o && s->diameter_lo >= 0)
        json_object_set_new(o, "diameter_lower_bound", json_integer(s->diameter_lo));
    return o;
}

static void print_one(const topo_stats *s) {
    const nf_fabric_counts *c = &s->counts;
    printf("%-18s %s\n", "fabric", s->spec);
    printf("%-18s %u\n", "endpoints", s->endpoints);
    printf("%-18s %u\n", "switches", s->switches);
    printf("%-18s %u (host %u, local %u, global %u, sibling %u; loop-back %u)\n", "links", s->links,
           c->links_by_class[NF_LINK_HOST], c->links_by_class[NF_LINK_LOCAL],
           c->links_by_class[NF_LINK_GLOBAL], c->links_by_class[NF_LINK_SIBLING],
           c->loopback_links);
    printf("%-18s %u of %u switch ports (%.1f%%), largest radix %u\n", "radix use", c->ports_used,
           c->ports_total, c->ports_total ? 100.0 * c->ports_used / c->ports_total : 0.0,
           c->max_radix);
    if (s->diameter >= 0 && s->diameter_lo >= 0) /* bounds only */
        if (s->connected)
            printf("%-18s at most %d, at least %d\n", "switch diameter", s->diameter,
                   s->diameter_lo);
        else
            printf("%-18s at least %d (not connected)\n", "switch diameter", s->diameter_lo);
    else if (s->diameter >= 0)
        printf("%-18s %d%s\n", "switch diameter", s->diameter,
               s->connected ? "" : " (not connected)");
    printf("%-18s %.3f s\n", "build", s->build_s);
    printf("%-18s %.3f s\n", "distances", s->distances_s);
    printf("%-18s %.1f MiB model + %.1f MiB distances\n", "memory", s->fabric_bytes / 1048576.0,
           s->hops_bytes / 1048576.0);
    printf("%-18s %ld KiB\n", "peak RSS", s->peak_rss_kib);
}

static void print_row(const topo_stats *s, bool header) {
    if (header)
        printf("%-26s %9s %8s %9s %5s %8s %8s %9s %9s\n", "fabric", "endpoints", "switches",
               "links", "diam", "build_s", "dist_s", "model_MiB", "dist_MiB");
    printf("%-26s %9u %8u %9u %5d %8.3f %8.3f %9.1f %9.1f\n", s->spec, s->endpoints, s->switches,
           s->links, s->diameter, s->build_s, s->distances_s, s->fabric_bytes / 1048576.0,
           s->hops_bytes / 1048576.0);
}

static nf_format format_for(const char *fmt, const char *path) {
    if (fmt) return nf_format_from_name(fmt);
    const char *dot = strrchr(path, '.');
    if (!dot) return NF_FMT_AUTO;
    if (!strcmp(dot, ".ibnet") || !strcmp(dot, ".topo")) return NF_FMT_IBNET;
    if (!strcmp(dot, ".net")) return NF_FMT_IBSIM;
    if (!strcmp(dot, ".dot") || !strcmp(dot, ".gv")) return NF_FMT_DOT;
    if (!strcmp(dot, ".json")) return NF_FMT_JSON;
    return NF_FMT_AUTO;
}

static int write_fabric(const nf_fabric *f, const char *path, nf_format fmt) {
    nf__afile a;
    FILE *out = nf_app_out_open(&a, "netfab topo", path);
    if (!out) return NF_EXIT_FAIL;
    return nf_app_out_close(&a, "netfab topo", path, nf_io_write(f, fmt, out));
}

/* The checks between the options; NULL when they agree, else why not. */
static const char *topo_check(const topo_args *a, nf_format *fmt) {
    *fmt = NF_FMT_AUTO;
    if (a->specs.n == 0) return "--topo SPEC is required";
    if (a->out && a->specs.n > 1) return "--out takes a single --topo";
    if (a->fmt_given && !a->out) return "--format needs --out";
    if (a->out && (*fmt = format_for(a->fmt_given ? formats[a->fmt] : NULL, a->out)) == NF_FMT_AUTO)
        return "cannot tell the format from the file name: give --format";
    return NULL;
}

int nf_cmd_topo(int argc, char **argv) {
    topo_args a = {0};
    nf_cmd_spec spec;
    nf_opt rows[6];
    topo_spec(&a, &spec, rows);
    int argi, status = nf_opt_parse(&spec, argc, argv, &argi);
    nf_format fmt = NF_FMT_AUTO;
    const char *why = status ? NULL : topo_check(&a, &fmt);
    if (why) status = nf_opt_usage("topo", "%s", why);
    if (status) {
        free(a.specs.v);
        return status == NF_OPT_HELP ? NF_EXIT_OK : status;
    }
    const char **specs = a.specs.v, *out_path = a.out;
    int nspecs = (int)a.specs.n, threads = a.threads;
    bool stats = a.stats || !out_path, as_json = a.json;

    json_t *arr = as_json && nspecs > 1 ? json_array() : NULL;
    nf_topo_opts opts = {.warn = nf_app_warn};
    for (int i = 0; i < nspecs && status == NF_EXIT_OK; i++) {
        topo_stats s = {.spec = specs[i], .diameter = -1, .diameter_lo = -1};
        nf_fabric *f = NULL;
        nf_hops *h = NULL;
        nf_diag d = {{0}, 0, {0}};
        double t0 = nf_app_now();
        int rc = nf_topo_build(specs[i], &opts, &f, &d);
        s.build_s = nf_app_now() - t0;
        nf_app_warn_summary();
        if (rc) {
            status = nf_app_report(rc, &d);
            break;
        }
        if (out_path) status = write_fabric(f, out_path, fmt);
        if (stats && status == NF_EXIT_OK) {
            t0 = nf_app_now();
            rc = nf_hops_compute(f, threads, &h);
            s.distances_s = nf_app_now() - t0;
            if (rc == NF_OK) {
                s.diameter = nf_hops_diameter(h, &s.connected);
                s.hops_bytes = nf_hops_bytes(h);
                if (!h->diameter_exact) s.diameter_lo = h->diameter_lo;
            } else if (rc == NF_ERANGE) {
                fprintf(stderr, "netfab topo: %s: distances exceed 254 hops; diameter not computed\n",
                        specs[i]);
            } else {
                status = nf_app_report(rc, NULL);
            }
            nf_fabric_count(f, &s.counts);
            s.endpoints = f->n_cas;
            s.switches = f->n_switches;
            s.links = f->n_links;
            s.fabric_bytes = nf_fabric_bytes(f);
            s.peak_rss_kib = nf_app_peak_rss_kib();
            if (status == NF_EXIT_OK) {
                if (arr)
                    json_array_append_new(arr, stats_json(&s));
                else if (as_json) {
                    json_t *o = stats_json(&s);
                    json_dumpf(o, stdout, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
                    putchar('\n');
                    json_decref(o);
                } else if (nspecs > 1)
                    print_row(&s, i == 0);
                else
                    print_one(&s);
                fflush(stdout);
            }
        }
        nf_hops_free(h);
        nf_fabric_free(f);
    }
    if (arr) {
        if (status == NF_EXIT_OK) {
            json_dumpf(arr, stdout, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
            putchar('\n');
        }
        json_decref(arr);
    }
    free(specs);
    return status;
}
