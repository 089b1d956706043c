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

/* A line on stderr saying what runs now, when stderr is a terminal. */
void exp_progress(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif
