/* SPDX-License-Identifier: MIT */
/* gnuplot for every picture (netfab plot, netfab exp --plot): the script's common lines, its
 * strings quoted, and the script run by gnuplot into an output file that appears complete or
 * not at all. */
#ifndef NETFAB_APP_GNUPLOT_H
#define NETFAB_APP_GNUPLOT_H

#include <stddef.h>
#include <stdio.h>

/* s as a gnuplot single-quoted string: a quote doubled, control characters as blanks. */
void nf_app_gnuplot_quote(FILE *o, const char *s);

/* The first lines of a script drawing into path, width x height pixels: `set terminal` (svg on a
 * white background when path ends in .svg, any case; pngcairo otherwise), then the title and
 * the axis labels. No `set output`: nf_app_run_gnuplot adds it. */
void nf_app_gnuplot_head(FILE *o, const char *path, unsigned width, unsigned height,
                         const char *title, const char *xlabel, const char *ylabel);

/* Writes len bytes of script text to o with `set output 'name'` after its first line (the
 * `set terminal` one). */
void nf_app_gnuplot_put(FILE *o, const char *text, size_t len, const char *name);

/* Runs the script (which sets no output) with gnuplot into a temporary file next to out, which
 * replaces out once gnuplot exits 0 having written it (else out is left as it was and who says
 * why on stderr). NF_EXIT_OK or NF_EXIT_FAIL. */
int nf_app_run_gnuplot(const char *who, const char *text, size_t len, const char *out);

#endif
