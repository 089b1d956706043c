/* SPDX-License-Identifier: MIT */
/* Benchmark: build + all-pairs switch distances for the paper fabrics. Each fabric runs in its own
 * child process (so peak RSS is that fabric's alone), REPS times; prints a Markdown table of the
 * best and median wall times. Usage: bench_topo [REPS] [SPEC ...] */
#define _GNU_SOURCE
#include "netfab/gen.h"
#include "netfab/hops.h"

#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

typedef struct result {
    double build_s, dist_s;
    unsigned endpoints, switches;
    int ok;
} result;

/* One measurement in a fresh process: returns its timings through a pipe, peak RSS via wait4. */
static int measure(const char *spec, result *r, long *rss_kib) {
    int fd[2];
    if (pipe(fd)) return -1;
    pid_t pid = fork();
    if (pid < 0) return -1;
    if (pid == 0) {
        close(fd[0]);
        result res = {0};
        nf_fabric *f;
        nf_hops *h;
        nf_diag d;
        double t0 = now();
        if (nf_topo_build(spec, NULL, &f, &d) == 0) {
            double t1 = now();
            if (nf_hops_compute(f, 0, &h) == 0) {
                res.dist_s = now() - t1;
                res.build_s = t1 - t0;
                res.endpoints = f->n_cas;
                res.switches = f->n_switches;
                res.ok = 1;
                nf_hops_free(h);
            }
            nf_fabric_free(f);
        } else {
            fprintf(stderr, "bench_topo: %s: %s\n", spec, d.msg);
        }
        ssize_t w = write(fd[1], &res, sizeof res);
        _exit(w == (ssize_t)sizeof res && res.ok ? 0 : 1);
    }
    close(fd[1]);
    ssize_t n = read(fd[0], r, sizeof *r);
    close(fd[0]);
    int status;
    struct rusage ru;
    if (wait4(pid, &status, 0, &ru) < 0 || n != (ssize_t)sizeof *r || !r->ok) return -1;
    *rss_kib = ru.ru_maxrss;
    return 0;
}

int main(int argc, char **argv) {
    int reps = argc > 1 ? atoi(argv[1]) : 5;
    if (reps < 1 || reps > 1000) {
        fprintf(stderr, "usage: bench_topo [REPS] [SPEC ...]\n");
        return 2;
    }
    static const char *defaults[] = {"fattree:k=40", "torus:30x20x20,c=2", "dragonfly:a=18,p=9,h=9",
                                     "bluelight", "taihulight"};
    const char **specs = argc > 2 ? (const char **)argv + 2 : defaults;
    int nspecs = argc > 2 ? argc - 2 : (int)(sizeof defaults / sizeof defaults[0]);
    printf(
        "| fabric | endpoints | switches | build s (best / median) | distances s (best / median) "
        "| total s (best) | peak RSS MiB |\n|---|---:|---:|---:|---:|---:|---:|\n");
    fflush(stdout);
    for (int i = 0; i < nspecs; i++) {
        double *b = calloc((size_t)reps, sizeof *b), *dd = calloc((size_t)reps, sizeof *dd),
               *tot = calloc((size_t)reps, sizeof *tot);
        long rss = 0;
        result r = {0};
        int ok = 1;
        for (int k = 0; k < reps && ok; k++) {
            long rk;
            if (measure(specs[i], &r, &rk)) ok = 0;
            b[k] = r.build_s;
            dd[k] = r.dist_s;
            tot[k] = r.build_s + r.dist_s;
            if (rk > rss) rss = rk;
        }
        if (!ok) {
            printf("| %s | failed |||||\n", specs[i]);
        } else {
            qsort(b, (size_t)reps, sizeof *b, cmp_double);
            qsort(dd, (size_t)reps, sizeof *dd, cmp_double);
            qsort(tot, (size_t)reps, sizeof *tot, cmp_double);
            printf("| `%s` | %u | %u | %.3f / %.3f | %.3f / %.3f | %.3f | %.1f |\n", specs[i],
                   r.endpoints, r.switches, b[0], b[reps / 2], dd[0], dd[reps / 2], tot[0],
                   rss / 1024.0);
        }
        fflush(stdout);
        free(b);
        free(dd);
        free(tot);
    }
    printf("\n%d runs each, %d OpenMP threads, %ld online CPUs.\n", reps, omp_get_max_threads(),
           sysconf(_SC_NPROCESSORS_ONLN));
    return 0;
}
