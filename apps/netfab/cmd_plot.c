/* SPDX-License-Identifier: MIT */
/* `netfab plot latency|efi|tree`: results as pictures. latency draws latency-throughput curves
 * from the JSON of sim or sweep, efi the EFI histograms of mcast --json (both plot.c, through
 * gnuplot), tree one group's multicast tree (plot_tree.c, through Graphviz's dot). This file
 * reads the options and checks that they make sense together. */
#define _GNU_SOURCE
#include "cmd.h"
#include "plot.h"
#include "plot_tree.h"

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { K_LATENCY = 1, K_EFI = 2, K_TREE = 4, K_ALL = 7 };
static const char *const kind_name[] = {"latency", "efi", "tree"};

static void plot_usage(FILE *out) {
    fprintf(
        out,
        "usage: netfab plot latency --in FILE.json --out FILE.png|svg [--x KEY] [--y KEY]\n"
        "                           [--series KEY[,KEY...]] [--title T] [--xlabel T]\n"
        "                           [--ylabel T] [--to-saturation] [--script FILE]\n"
        "       netfab plot efi --in FILE.json --out FILE.png|svg [--title T] [--script FILE]\n"
        "       netfab plot tree --topo SPEC --groups PATTERN --group N --out FILE.png|svg|dot\n"
        "                        [--engine NAME] [--procs-per-node N] [--mapping aware|random]\n"
        "                        [--seed S] [--title T]\n\n"
        "Draws results as pictures; the --out suffix picks the format: .png (gnuplot's\n"
        "pngcairo, dot -Tpng), .svg, and for trees .dot (the Graphviz text, no dot needed).\n"
        "--in - reads standard input.\n\n"
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
        "            ellipses; trees of more than %d nodes are refused\n\n"
        "options:\n"
        "  --x KEY, --y KEY        the keys on the axes (default offered and lat_mean)\n"
        "  --series K1,K2...       the keys whose values make the lines (default: those of\n"
        "                          topo, routing, traffic, seed, engine, groups with more\n"
        "                          than one value among the rows; '' for one line)\n"
        "  --title T               the title (default: the input's name, or the group)\n"
        "  --xlabel T, --ylabel T  the axis labels (default: the keys)\n"
        "  --to-saturation         latency: each line ends at its first saturated point\n"
        "  --script FILE           also write the gnuplot input to FILE ('-': stdout): the\n"
        "                          commands, then per line drawn a '# series N: TITLE'\n"
        "                          comment and its inline data block ending in 'e'\n"
        "  --group N               the group to draw, 0 for the pattern's first\n"
        "  --engine NAME           the multicast engine (default fulb; see netfab mcast)\n"
        "  --procs-per-node N, --mapping M, --seed S   the workload, as in netfab mcast\n\n"
        "examples:\n"
        "  netfab plot latency --in sweep.json --out sweep.png --series routing\n"
        "  netfab sim --topo torus:4x4,c=1 --routing dor --traffic uniform --sweep 0.1:0.9:0.2 \\\n"
        "      --json >s.json\n"
        "  netfab plot latency --in s.json --out s.svg --y lat_p99\n"
        "  netfab mcast --topo fattree:k=8 --groups grid2d:8x16 --json >m.json\n"
        "  netfab plot efi --in m.json --out efi.png\n"
        "  netfab plot tree --topo fattree:k=4 --groups grid2d:4x4 --group 5 --out t.svg\n",
        MAX_TREE_NODES);
}

/* ---- options ------------------------------------------------------------------------------- */

static int parse_num(const char *opt, const char *s, unsigned long max, unsigned long *out) {
    char *end;
    errno = 0;
    unsigned long v = strtoul(s, &end, 10);
    if (!*s || *end || errno || v > max || s[0] == '-') {
        fprintf(stderr, "netfab plot: %s wants a number from 0 to %lu, not '%s'\n", opt, max, s);
        return -1;
    }
    *out = v;
    return 0;
}

int nf_cmd_plot(int argc, char **argv) {
    enum {
        O_IN = 256,
        O_OUT,
        O_X,
        O_Y,
        O_SERIES,
        O_TITLE,
        O_XLABEL,
        O_YLABEL,
        O_SCRIPT,
        O_TOPO,
        O_GROUPS,
        O_GROUP,
        O_ENGINE,
        O_PPN,
        O_MAPPING,
        O_SEED,
        O_TOSAT,
        O_END
    };
    static const struct option lo[] = {{"in", 1, NULL, O_IN},
                                       {"out", 1, NULL, O_OUT},
                                       {"x", 1, NULL, O_X},
                                       {"y", 1, NULL, O_Y},
                                       {"series", 1, NULL, O_SERIES},
                                       {"title", 1, NULL, O_TITLE},
                                       {"xlabel", 1, NULL, O_XLABEL},
                                       {"ylabel", 1, NULL, O_YLABEL},
                                       {"script", 1, NULL, O_SCRIPT},
                                       {"topo", 1, NULL, O_TOPO},
                                       {"groups", 1, NULL, O_GROUPS},
                                       {"group", 1, NULL, O_GROUP},
                                       {"engine", 1, NULL, O_ENGINE},
                                       {"procs-per-node", 1, NULL, O_PPN},
                                       {"mapping", 1, NULL, O_MAPPING},
                                       {"seed", 1, NULL, O_SEED},
                                       {"to-saturation", 0, NULL, O_TOSAT},
                                       {"help", 0, NULL, 'h'},
                                       {NULL, 0, NULL, 0}};
    /* the kinds each option applies to, in the order of lo */
    static const unsigned char applies[O_END - O_IN] = {
        K_LATENCY | K_EFI, K_ALL,  K_LATENCY, K_LATENCY, K_LATENCY, K_ALL,  K_LATENCY, K_LATENCY,
        K_LATENCY | K_EFI, K_TREE, K_TREE,    K_TREE,    K_TREE,    K_TREE, K_TREE,    K_TREE,
        K_LATENCY};
    plot_opts o = {.w = {.procs_per_node = 1, .mapping = NF_MAP_AWARE, .seed = 1}};
    bool seen[O_END - O_IN] = {false};
    unsigned long v;
    optind = 1;
    opterr = 0;
    int ch;
    while ((ch = getopt_long(argc, argv, "h", lo, NULL)) != -1) {
        if (ch >= O_IN && ch < O_END) seen[ch - O_IN] = true;
        switch (ch) {
        case O_IN: o.in = optarg; break;
        case O_OUT: o.out = optarg; break;
        case O_X: o.x = optarg; break;
        case O_Y: o.y = optarg; break;
        case O_SERIES: o.series = optarg; break;
        case O_TITLE: o.title = optarg; break;
        case O_XLABEL: o.xlabel = optarg; break;
        case O_YLABEL: o.ylabel = optarg; break;
        case O_SCRIPT: o.script = optarg; break;
        case O_TOSAT: o.to_saturation = true; break;
        case O_TOPO: o.topo = optarg; break;
        case O_GROUPS: o.groups = optarg; break;
        case O_ENGINE: o.engine = optarg; break;
        case O_GROUP:
            if (parse_num("--group", optarg, UINT32_MAX, &o.group)) return NF_EXIT_USAGE;
            o.have_group = true;
            break;
        case O_PPN:
            if (parse_num("--procs-per-node", optarg, 1024, &v)) return NF_EXIT_USAGE;
            if (v == 0) {
                fprintf(stderr, "netfab plot: --procs-per-node must be at least 1\n");
                return NF_EXIT_USAGE;
            }
            o.w.procs_per_node = (unsigned)v;
            break;
        case O_MAPPING:
            if (strcmp(optarg, "aware") && strcmp(optarg, "random")) {
                fprintf(stderr, "netfab plot: --mapping is aware or random, not '%s'\n", optarg);
                return NF_EXIT_USAGE;
            }
            o.w.mapping = optarg[0] == 'a' ? NF_MAP_AWARE : NF_MAP_RANDOM;
            break;
        case O_SEED:
            if (parse_num("--seed", optarg, ~0UL, &v)) return NF_EXIT_USAGE;
            o.w.seed = v;
            break;
        case 'h': plot_usage(stdout); return NF_EXIT_OK;
        default:
            fprintf(stderr,
                    "netfab plot: unknown or incomplete option '%s'\ntry 'netfab plot --help'\n",
                    argv[optind - 1]);
            return NF_EXIT_USAGE;
        }
    }
    const char *why = NULL;
    if (optind == argc)
        why = "what to plot? latency, efi or tree";
    else if (optind + 1 < argc)
        why = "one kind at a time";
    for (int i = 0; i < 3 && !why; i++)
        if (strcmp(argv[optind], kind_name[i]) == 0) o.kind = 1 << i;
    if (!why && !o.kind) {
        fprintf(stderr, "netfab plot: unknown kind '%s' (latency, efi or tree)\n", argv[optind]);
        return NF_EXIT_USAGE;
    }
    for (int i = 0; i < O_END - O_IN && !why; i++)
        if (seen[i] && !(applies[i] & o.kind)) {
            fprintf(stderr, "netfab plot: --%s does not apply to %s\n", lo[i].name, argv[optind]);
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
