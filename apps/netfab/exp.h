/* SPDX-License-Identifier: MIT */
/* `netfab exp`: the experiments of the Sunway seeds, each one command that measures a grid of
 * points and returns one JSON object per point. An experiment is a row in one table
 * (cmd_exp.c); its driver lives in an exp_<family>.c. */
#ifndef NETFAB_APP_EXP_H
#define NETFAB_APP_EXP_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

typedef struct exp_opts {
    bool quick;  /* the small version: under a minute on 2 cores */
    int threads; /* 0: OpenMP's default */
    uint64_t seed;
} exp_opts;

/* How --plot draws the rows: y against x, one line per distinct value of series (NULL: one
 * line), only the rows whose string key `where` is where_is when where is set. */
typedef struct exp_plot {
    const char *x, *y, *series;
    const char *where, *where_is;
    bool logx, logy;
    const char *xlabel, *ylabel;
} exp_plot;

typedef struct exp_def {
    const char *name, *summary;
    /* Appends one object per measured point to rows; on failure prints why (netfab: ...) and
     * returns an exit status (NF_EXIT_FAIL or NF_EXIT_USAGE), NF_EXIT_OK otherwise. */
    int (*run)(const exp_opts *o, json_t *rows);
    exp_plot plot;
} exp_def;

/* The drivers. */
int exp_tables(const exp_opts *o, json_t *rows);
int exp_faults(const exp_opts *o, json_t *rows);
int exp_dual_rail(const exp_opts *o, json_t *rows);
int exp_mcast_height(const exp_opts *o, json_t *rows);
int exp_mcast_efi(const exp_opts *o, json_t *rows);
int exp_mcast_workload(const exp_opts *o, json_t *rows);
int exp_collectives(const exp_opts *o, json_t *rows);
int exp_link_errors(const exp_opts *o, json_t *rows);
/* asynchronous queue messages (exp_queues.c) */
int exp_queues(const exp_opts *o, json_t *rows);
int exp_congestion(const exp_opts *o, json_t *rows);

/* The progress bar of the running experiment (progress.h): it is done to fraction frac (0..1)
 * and runs what fmt says now. Drawn on stderr only when it is a terminal. */
void exp_progress(double frac, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* The registry, for netfab exp and netfab report. */
size_t exp_count(void);
const exp_def *exp_at(size_t i);
const exp_def *exp_find(const char *name);

/* Runs e with the progress bar drawn as a share [lo, hi) of bar (which the caller began and
 * ends); appends its rows. */
typedef struct nf_progress nf_progress;
int exp_run(const exp_def *e, const exp_opts *o, json_t *rows, nf_progress *bar, double lo,
            double hi);

/* A cell as text: integers whole, reals to 4 significant digits, "-" for a missing value. */
const char *exp_cell_text(json_t *v, char buf[64]);

/* Draws the rows as e's plot says into a PNG (or SVG when path ends in .svg) with gnuplot;
 * NF_EXIT_OK or NF_EXIT_FAIL after saying why. */
int exp_plot_rows(const exp_def *e, json_t *rows, const char *path);

#endif
