/* SPDX-License-Identifier: MIT */
/* netfab report's steps: what each runs (its netfab command lines), the paper it belongs to,
 * the table's columns and the comparison the page shows beside the paper's figures. Their prose
 * (report_page.h) and their expected costs are data files. */
#ifndef NETFAB_APP_REPORT_STEPS_H
#define NETFAB_APP_REPORT_STEPS_H

#include "report_jobs.h"

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

/* What the whole report was asked for. */
typedef struct report_ctx {
    bool full; /* the papers' scales; else the quick ones */
    uint64_t seed;
    unsigned threads; /* per child */
    const char *dir;  /* the output directory: DIR/data, DIR/img, DIR/index.html */
} report_ctx;

typedef struct report_step report_step;
struct report_step {
    const char *name, *seed_paper, *title; /* seed_paper: "M", "S" or "U" */
    const char *const *cols;               /* the table's columns (NULL: every key) */
    /* Appends the step's command lines to cmds[*n ...] (at most REPORT_MAX_CMDS in all): what
     * they write goes to DIR/data/NAME.json (or NAME-0.json, NAME-1.json ...) and
     * DIR/img/NAME.png. */
    void (*build)(const report_step *st, const report_ctx *x, report_cmd *cmds, int *n);
    /* HTML: the figure measured here that matches the paper's, from the step's rows; NULL: none */
    void (*compare)(FILE *h, json_t *rows);
};

/* The steps, in the page's order (grouped by paper). */
enum { REPORT_N_STEPS = 26 };
extern const report_step report_steps[REPORT_N_STEPS];

/* Marks in selected[] the steps named in the comma list only (NULL: every step). NF_EXIT_OK, or
 * NF_EXIT_USAGE after naming a step that does not exist. */
int report_steps_select(const char *only, bool selected[REPORT_N_STEPS]);

/* Each step's expected seconds at the scale asked for (full or quick) into cost[], from the data
 * file report/costs.txt: '#' comment lines, then one line "STEP QUICK FULL" per step. They
 * order the steps (the costliest waiting starts first) and weight the progress bar. NF_EXIT_OK,
 * or NF_EXIT_FAIL after saying what is missing or wrong (a line, a step without a cost). */
int report_steps_costs(bool full, double cost[REPORT_N_STEPS]);

#endif
