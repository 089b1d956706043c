/* SPDX-License-Identifier: MIT */
/* A progress bar with an ETA on stderr for the CLI's long runs: drawn only when stderr is a
 * terminal and only once a run has lasted a second, redrawn at most ten times a second, and
 * erased at the end so that it never mixes with the results on stdout. */
#ifndef NETFAB_APP_PROGRESS_H
#define NETFAB_APP_PROGRESS_H

#include <stdbool.h>

typedef struct nf_progress {
    char what[96]; /* the label in front of the bar */
    double t0;     /* when the run began */
    double last;   /* when the bar was last drawn */
    bool tty;      /* stderr is a terminal */
    bool drawn;    /* something is on the line to erase */
} nf_progress;

/* Starts a run called what (copied; may be changed later with nf_progress_label). */
void nf_progress_begin(nf_progress *p, const char *what);
void nf_progress_label(nf_progress *p, const char *what);
/* The run is done to fraction frac (0..1; clamped). The ETA assumes a steady rate. */
void nf_progress_set(nf_progress *p, double frac);
/* Erases the bar if it was drawn. */
void nf_progress_end(nf_progress *p);

/* The bar as text, for a run that has taken elapsed seconds and is at frac: exposed for tests
 * and for callers that draw elsewhere. Writes at most n bytes into buf. */
void nf_progress_format(char *buf, int n, const char *what, double frac, double elapsed);

#endif
