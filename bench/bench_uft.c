/* SPDX-License-Identifier: MIT */
/* Benchmark: reading a subnet manager's forwarding tables (nf_uft_parse) and checking them
 * (nf_uft_check). Prints one Markdown row: the file's size, the best of REPS parses and its rate,
 * and the check's time over CA LIDs and with the switch LIDs too, with what each found.
 * Usage: bench_uft FABRIC TABLES LABEL [REPS] */
#define _GNU_SOURCE
#include "netfab/io.h"
#include "netfab/uft.h"

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void quiet(void *ud, const char *file, int line, const char *msg) {
    (void)ud, (void)file, (void)line, (void)msg;
}

int main(int argc, char **argv) {
    if (argc < 4) {
        fprintf(stderr, "usage: bench_uft FABRIC TABLES LABEL [REPS]\n");
        return 2;
    }
    int reps = argc > 4 ? atoi(argv[4]) : 5;
    nf_fabric *f = NULL;
    nf_diag d = {0};
    if (nf_io_load(argv[1], NF_FMT_AUTO, NULL, &f, &d)) {
        fprintf(stderr, "bench_uft: %s:%d: %s\n", d.file, d.line, d.msg);
        return 1;
    }
    FILE *in = fopen(argv[2], "rb");
    if (!in) {
        perror(argv[2]);
        return 1;
    }
    size_t cap = 1 << 20, len = 0, n;
    char *text = malloc(cap);
    while (text && (n = fread(text + len, 1, cap - len, in)) > 0)
        if ((len += n) == cap) text = realloc(text, cap *= 2);
    fclose(in);
    if (!text) return 1;
    double best = 1e30;
    nf_uft *t = NULL;
    for (int i = 0; i < reps; i++) {
        nf_uft_free(t);
        double t0 = now();
        if (nf_uft_parse(f, text, len, argv[2], quiet, NULL, &t, &d)) {
            fprintf(stderr, "bench_uft: %s:%d: %s\n", d.file, d.line, d.msg);
            return 1;
        }
        double s = now() - t0;
        if (s < best) best = s;
    }
    double check_s[2];
    nf_uft_report r[2];
    for (unsigned fl = 0; fl < 2; fl++) {
        double t0 = now();
        if (nf_uft_check(t, fl, &r[fl], &d)) return 1;
        check_s[fl] = now() - t0;
    }
    printf("| %s | %.1f | %.0f | %.0f | %.0f (%s) | %.0f (%s) |\n", argv[3], (double)len / 1e6,
           best * 1e3, (double)len / 1e6 / best, check_s[0] * 1e3,
           r[0].cycle_len ? "credit loop" : "none", check_s[1] * 1e3,
           r[1].cycle_len ? "credit loop" : "none");
    nf_uft_report_fini(&r[0]);
    nf_uft_report_fini(&r[1]);
    nf_uft_free(t);
    nf_fabric_free(f);
    free(text);
    return 0;
}
