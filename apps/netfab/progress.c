/* SPDX-License-Identifier: MIT */
/* The CLI's progress bar (progress.h). */
#include "progress.h"

#include "cmd.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

enum { BAR = 24, LINE = 120 };

void nf_progress_begin(nf_progress *p, const char *what) {
    memset(p, 0, sizeof *p);
    nf_progress_label(p, what);
    p->t0 = nf_app_now();
    p->tty = isatty(STDERR_FILENO) == 1;
}

void nf_progress_label(nf_progress *p, const char *what) {
    snprintf(p->what, sizeof p->what, "%s", what ? what : "");
}

static void clock_text(char *buf, size_t n, double s) {
    if (!(s >= 0) || s > 359999) { /* NaN, negative or past 99 hours: unknown */
        snprintf(buf, n, "--:--");
        return;
    }
    unsigned t = (unsigned)(s + 0.5);
    if (t >= 3600)
        snprintf(buf, n, "%u:%02u:%02u", t / 3600, t / 60 % 60, t % 60);
    else
        snprintf(buf, n, "%u:%02u", t / 60, t % 60);
}

void nf_progress_format(char *buf, int n, const char *what, double frac, double elapsed) {
    if (!(frac >= 0)) frac = 0;
    if (frac > 1) frac = 1;
    char bar[BAR + 1];
    int fill = (int)(frac * BAR + 1e-9);
    for (int i = 0; i < BAR; i++)
        bar[i] = i < fill ? '#' : '.';
    bar[BAR] = '\0';
    char eta[16], took[16];
    /* before 1% the rate says little */
    clock_text(eta, sizeof eta, frac >= 0.01 ? elapsed * (1 - frac) / frac : -1);
    clock_text(took, sizeof took, elapsed);
    snprintf(buf, (size_t)n, "%s [%s] %3.0f%% %s, ETA %s", what, bar, 100 * frac, took, eta);
}

void nf_progress_set(nf_progress *p, double frac) {
    if (!p->tty) return;
    double now = nf_app_now();
    if (now - p->t0 < 1.0 || now - p->last < 0.1) return;
    p->last = now;
    char line[LINE + 32];
    nf_progress_format(line, LINE, p->what, frac, now - p->t0);
    fprintf(stderr, "\r%s\033[K", line); /* the rest of the old line erased */
    fflush(stderr);
    p->drawn = true;
}

void nf_progress_end(nf_progress *p) {
    if (p->drawn) fputs("\r\033[K", stderr);
    p->drawn = false;
}
