/* SPDX-License-Identifier: MIT */
/* `netfab plot latency|efi|tree`: results as pictures. latency draws latency-throughput curves
 * from the JSON of sim or sweep, efi the EFI histograms of mcast --json (both plot.c, through
 * gnuplot), tree one group's multicast tree (plot_tree.c, through Graphviz's dot). This file
 * reads the options and checks that they make sense together. */
#define _GNU_SOURCE
#include "cmd.h"
#include "opts.h"
#include "plot.h"
#include "plot_tree.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { K_LATENCY = 1, K_EFI = 2, K_TREE = 4, K_ALL = 7 };
static const char *const kind_name[] = {"latency", "efi", "tree"};

/* The kinds, for --help (the tree's limit from MAX_TREE_NODES). */
static void plot_kinds(FILE *out) {
    fprintf(out,
            "kinds:\n"
            "  latency   latency-throughput curves from netfab sim --json or netfab sweep --json\n"
            "            (an array of rows, or {\"rows\": [...]} or {\"results\": [...]}): a line\n"
            "            per series, its points sorted by x, rows without x or y skipped;\n"
            "            saturated points are hollow, and when they would stretch the y axis\n"
            "            beyond 4x the largest unsaturated y it stops there\n"
            "  efi       per object of netfab mcast --json (one per engine), a histogram of its\n"
            "            efi_hist: inter-switch links (y) carrying each EFI (x), side by side\n"
            "  tree      routes the groups as netfab mcast does and draws group N's tree top-down\n"
            "            from its root (filled): switches as boxes, member endpoints as\n"
            "            ellipses; trees of more than %d nodes are refused\n\n",
            MAX_TREE_NODES);
}

/* ---- options ------------------------------------------------------------------------------- */

int nf_cmd_plot(int argc, char **argv) {
    plot_opts o = {.w = {.procs_per_node = 1, .mapping = NF_MAP_AWARE, .seed = 1}};
    static const char *const mappings[] = {"aware", "random", NULL};
    enum { N_OPTS = 17 };
    bool seen[N_OPTS] = {false};
    /* the tag of each row: the kinds it applies to */
    const nf_opt lo[N_OPTS] = {
        {.name = "in",
         .arg = "FILE.json",
         .kind = NF_OPT_STR,
         NF_OPT_TO(o.in),
         .given = &seen[0],
         .tag = K_LATENCY | K_EFI,
         .help = "latency, efi: the results to draw ('-': stdin)"},
        {.name = "out",
         .arg = "FILE",
         .kind = NF_OPT_STR,
         NF_OPT_TO(o.out),
         .given = &seen[1],
         .tag = K_ALL,
         .help = "the picture: .png, .svg, and for trees .dot"},
        {.name = "x",
         .arg = "KEY",
         .kind = NF_OPT_STR,
         NF_OPT_TO(o.x),
         .given = &seen[2],
         .tag = K_LATENCY,
         .help = "the key on the x axis (default offered)"},
        {.name = "y",
         .arg = "KEY",
         .kind = NF_OPT_STR,
         NF_OPT_TO(o.y),
         .given = &seen[3],
         .tag = K_LATENCY,
         .help = "the key on the y axis (default lat_mean)"},
        {.name = "series",
         .arg = "K1,K2...",
         .kind = NF_OPT_STR,
         NF_OPT_TO(o.series),
         .given = &seen[4],
         .tag = K_LATENCY,
         .help = "the keys whose values make the lines (default: those of topo, routing, "
                 "traffic, seed, engine, groups with more than one value among the rows; '' for "
                 "one line)"},
        {.name = "title",
         .arg = "T",
         .kind = NF_OPT_STR,
         NF_OPT_TO(o.title),
         .given = &seen[5],
         .tag = K_ALL,
         .help = "the title (default: the input's name, or the group)"},
        {.name = "xlabel",
         .arg = "T",
         .kind = NF_OPT_STR,
         NF_OPT_TO(o.xlabel),
         .given = &seen[6],
         .tag = K_LATENCY,
         .help = "the x axis label (default: the key)"},
        {.name = "ylabel",
         .arg = "T",
         .kind = NF_OPT_STR,
         NF_OPT_TO(o.ylabel),
         .given = &seen[7],
         .tag = K_LATENCY,
         .help = "the y axis label (default: the key)"},
        {.name = "script",
         .arg = "FILE",
         .kind = NF_OPT_STR,
         NF_OPT_TO(o.script),
         .given = &seen[8],
         .tag = K_LATENCY | K_EFI,
         .help = "also write the gnuplot input to FILE ('-': stdout): the commands, then per "
                 "line drawn a '# series N: TITLE' comment and its inline data block ending in "
                 "'e'"},
        {.name = "topo",
         .arg = "SPEC",
         .kind = NF_OPT_STR,
         NF_OPT_TO(o.topo),
         .given = &seen[9],
         .tag = K_TREE,
         .help = "tree: the fabric"},
        {.name = "groups",
         .arg = "PATTERN",
         .kind = NF_OPT_STR,
         NF_OPT_TO(o.groups),
         .given = &seen[10],
         .tag = K_TREE,
         .help = "tree: the workload, as in netfab mcast"},
        {.name = "group",
         .arg = "N",
         .kind = NF_OPT_UINT,
         NF_OPT_TO(o.group),
         .lo = 0,
         .hi = UINT32_MAX,
         .given = &seen[11],
         .tag = K_TREE,
         .help = "tree: the group to draw, 0 for the pattern's first"},
        {.name = "engine",
         .arg = "NAME",
         .kind = NF_OPT_STR,
         NF_OPT_TO(o.engine),
         .given = &seen[12],
         .tag = K_TREE,
         .help = "tree: the multicast engine (default fulb; see netfab mcast)"},
        {.name = "procs-per-node",
         .arg = "N",
         .kind = NF_OPT_UINT,
         NF_OPT_TO(o.w.procs_per_node),
         .lo = 1,
         .hi = 1024,
         .given = &seen[13],
         .tag = K_TREE,
         .help = "tree: ranks per endpoint, as in netfab mcast (default 1)"},
        {.name = "mapping",
         .kind = NF_OPT_CHOICE,
         NF_OPT_TO(o.w.mapping),
         .choices = mappings,
         .given = &seen[14],
         .tag = K_TREE,
         .help = "tree: the ranks' mapping, as in netfab mcast (default aware)"},
        {.name = "seed",
         .arg = "S",
         .kind = NF_OPT_SEED,
         NF_OPT_TO(o.w.seed),
         .given = &seen[15],
         .tag = K_TREE,
         .help = "tree: the workload's seed, as in netfab mcast (default 1)"},
        {.name = "to-saturation",
         .kind = NF_OPT_FLAG,
         NF_OPT_TO(o.to_saturation),
         .given = &seen[16],
         .tag = K_LATENCY,
         .help = "latency: each line ends at its first saturated point"},
    };
    const nf_cmd_spec spec = {
        .name = "plot",
        .synopsis =
            "netfab plot latency --in FILE.json --out FILE.png|svg [--x KEY] [--y KEY]\n"
            "                           [--series KEY[,KEY...]] [--title T] [--xlabel T]\n"
            "                           [--ylabel T] [--to-saturation] [--script FILE]\n"
            "       netfab plot efi --in FILE.json --out FILE.png|svg [--title T] [--script FILE]\n"
            "       netfab plot tree --topo SPEC --groups PATTERN --group N --out "
            "FILE.png|svg|dot\n"
            "                        [--engine NAME] [--procs-per-node N] [--mapping "
            "aware|random]\n"
            "                        [--seed S] [--title T]\n",
        .description =
            "Draws results as pictures; the --out suffix picks the format: .png (gnuplot's\n"
            "pngcairo, dot -Tpng), .svg, and for trees .dot (the Graphviz text, no dot needed).\n"
            "--in - reads standard input.\n",
        .more = plot_kinds,
        .group = {{"options", lo, N_OPTS}},
        .examples =
            "  netfab plot latency --in sweep.json --out sweep.png --series routing\n"
            "  netfab sim --topo torus:4x4,c=1 --routing dor --traffic uniform --sweep 0.1:0.9:0.2 "
            "\\\n"
            "      --json >s.json\n"
            "  netfab plot latency --in s.json --out s.svg --y lat_p99\n"
            "  netfab mcast --topo fattree:k=8 --groups grid2d:8x16 --json >m.json\n"
            "  netfab plot efi --in m.json --out efi.png\n"
            "  netfab plot tree --topo fattree:k=4 --groups grid2d:4x4 --group 5 --out t.svg\n",
        .max_args = 1};
    int argi, ex = nf_opt_parse(&spec, argc, argv, &argi);
    if (ex) return ex == NF_OPT_HELP ? NF_EXIT_OK : ex;
    o.have_group = seen[11];
    const char *why = NULL;
    if (argi == argc) why = "what to plot? latency, efi or tree";
    for (int i = 0; i < 3 && !why; i++)
        if (strcmp(argv[argi], kind_name[i]) == 0) o.kind = 1 << i;
    if (!why && !o.kind) {
        fprintf(stderr, "netfab plot: unknown kind '%s' (latency, efi or tree)\n", argv[argi]);
        return NF_EXIT_USAGE;
    }
    for (int i = 0; i < N_OPTS && !why; i++)
        if (seen[i] && !(lo[i].tag & o.kind)) {
            fprintf(stderr, "netfab plot: --%s does not apply to %s\n", lo[i].name, argv[argi]);
            return NF_EXIT_USAGE;
        }
    out_fmt fmt = o.out ? out_format(o.out) : F_BAD;
    if (!why && o.kind != K_TREE && !o.in)
        why = "--in FILE.json is required ('-' for stdin)";
    else if (!why && !o.out)
        why = "--out FILE is required (.png or .svg; .dot for a tree)";
    else if (!why && (fmt == F_BAD || (fmt == F_DOT && o.kind != K_TREE)))
        why = o.kind == K_TREE ? "--out wants a .png, .svg or .dot file"
                               : "--out wants a .png or .svg file";
    for (const char *c = o.out; !why && c && *c; c++)
        if ((unsigned char)*c < 0x20) why = "--out: no control characters in the name, please";
    if (why) {
        fprintf(stderr, "netfab plot: %s\ntry 'netfab plot --help'\n", why);
        return NF_EXIT_USAGE;
    }
    return o.kind == K_LATENCY ? plot_latency(&o) : o.kind == K_EFI ? plot_efi(&o) : plot_tree(&o);
}
