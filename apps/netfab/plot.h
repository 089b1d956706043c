/* SPDX-License-Identifier: MIT */
/* netfab plot's pictures: what the options asked for (plot_opts, filled by cmd_plot.c), the
 * output formats, and the pictures drawn from result rows with gnuplot: latency-throughput
 * curves and EFI histograms. The tree picture is plot_tree.h's. */
#ifndef NETFAB_APP_PLOT_H
#define NETFAB_APP_PLOT_H

#include "netfab/groups.h"

#include <stdbool.h>
#include <stddef.h>

typedef struct plot_opts {
    int kind;
    const char *in, *out, *x, *y, *series, *title, *xlabel, *ylabel, *script;
    const char *topo, *groups, *engine;
    unsigned long group;
    bool have_group;
    bool to_saturation; /* latency: each line ends at its first saturated point */
    nf_workload_opts w;
} plot_opts;

/* The picture's format, from the output's suffix (any case): .png, .svg, .dot; F_BAD for
 * anything else. */
typedef enum { F_PNG, F_SVG, F_DOT, F_BAD } out_fmt;
out_fmt out_format(const char *path);

/* Writes len bytes of text to path ("-": stdout) as one whole file, with `set output 'out'`
 * after its first line when out is given (a gnuplot script as --script shows it). NF_EXIT_OK,
 * or NF_EXIT_FAIL after saying why. */
int plot_write_text(const char *path, const char *text, size_t len, const char *out);

/* The pictures from o->in's rows into o->out: latency draws one line per series of y against x,
 * efi one histogram per object with an efi_hist. Also the gnuplot script into o->script when
 * given. NF_EXIT_OK; NF_EXIT_FAIL when the input cannot be read or the picture not drawn;
 * NF_EXIT_USAGE when the input is not what the kind wants; each after saying why. */
int plot_latency(const plot_opts *o);
int plot_efi(const plot_opts *o);

#endif
