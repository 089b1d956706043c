/* SPDX-License-Identifier: MIT */
/* `netfab report --out DIR`: the reproduction of the three papers' experiments at one scale, as
 * one HTML page with its images. Every step is this program run again as a child (netfab exp,
 * netfab sweep, netfab mcast, then netfab plot on what they wrote), several at once; the data
 * stay in DIR/data as JSON next to each step's log, the images in DIR/img, and the page puts
 * each table and plot beside what the paper reports for the same experiment. */
#define _GNU_SOURCE
#include "cmd.h"
#include "report_jobs.h"
#include "report_page.h"
#include "report_steps.h"

#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static void report_usage(FILE *out) {
    fprintf(out,
            "usage: netfab report --out DIR [--quick | --full] [--only LIST] [--jobs N]\n"
            "                     [--seed S] [--dry-run]\n"
            "       netfab report --list\n\n"
            "Runs the reproduction of the papers' experiments and writes DIR/index.html:\n"
            "for each experiment what was run, its plot and table, and beside them what the\n"
            "paper reports for it (the figure or table, and the numbers its text gives) with\n"
            "the matching figure measured here. DIR/data holds every step's JSON and log,\n"
            "DIR/img the images. [M] the multicast paper (Chen, Zhou, He, Qi 2022, FULB-MC):\n"
            "the engines' max EFI and routing time, an EFI histogram, tree height, EFI and\n"
            "workload latency; [S] the Sunway paper (Gao et al. 2021): dual rail, faults,\n"
            "routing tables, hardware collectives; [U] the UGAL note (UGAL on Dragonfly):\n"
            "latency-throughput curves. Full citations: docs/references.md.\n\n"
            "  --quick      small fabrics, under 2 minutes on 2 cores (the default)\n"
            "  --full       the papers' fabrics and grids (hours on 2 cores)\n"
            "  --only LIST  only these steps (comma-separated; netfab report --list)\n"
            "  --jobs N     steps run at once (default: the processors), the costliest\n"
            "               first; each may use every processor\n"
            "  --seed S     the experiments' seed (default 1)\n"
            "  --list       the steps, then exit\n"
            "  --dry-run    print the command lines of the steps, then exit\n\n"
            "Exit 0 when every step ran; 1 when one failed (the page says which, its log is in\n"
            "DIR/data); 2 on bad usage.\n\n"
            "example:\n  netfab report --quick --out report && chromium report/index.html\n");
}

/* ---- the command --------------------------------------------------------------------------- */

static int mkdir_p(const char *path) {
    char buf[PATH_MAX];
    snprintf(buf, sizeof buf, "%s", path);
    for (char *p = buf + 1; *p; p++)
        if (*p == '/') {
            *p = '\0';
            if (mkdir(buf, 0755) && errno != EEXIST) return -1;
            *p = '/';
        }
    return mkdir(buf, 0755) && errno != EEXIST ? -1 : 0;
}

int nf_cmd_report(int argc, char **argv) {
    enum { O_OUT = 256, O_QUICK, O_FULL, O_ONLY, O_JOBS, O_SEED, O_LIST, O_DRY };
    static const struct option lo[] = {{"out", 1, NULL, O_OUT},   {"quick", 0, NULL, O_QUICK},
                                       {"full", 0, NULL, O_FULL}, {"only", 1, NULL, O_ONLY},
                                       {"jobs", 1, NULL, O_JOBS}, {"seed", 1, NULL, O_SEED},
                                       {"list", 0, NULL, O_LIST}, {"dry-run", 0, NULL, O_DRY},
                                       {"help", 0, NULL, 'h'},    {NULL, 0, NULL, 0}};
    report_ctx x = {.seed = 1};
    const char *only = NULL;
    bool quick = false, dry = false;
    long nproc = sysconf(_SC_NPROCESSORS_ONLN);
    unsigned par = nproc > 0 ? (unsigned)nproc : 1;
    optind = 1;
    opterr = 0;
    int ch;
    while ((ch = getopt_long(argc, argv, "h", lo, NULL)) != -1) {
        switch (ch) {
        case O_OUT: x.dir = optarg; break;
        case O_QUICK: quick = true; break;
        case O_FULL: x.full = true; break;
        case O_DRY: dry = true; break;
        case O_ONLY: only = optarg; break;
        case O_JOBS:
            if (nf_app_count("--jobs", optarg, 256, &par)) return NF_EXIT_USAGE;
            break;
        case O_SEED:
            if (nf_app_seed("--seed", optarg, &x.seed)) return NF_EXIT_USAGE;
            break;
        case O_LIST:
            for (size_t i = 0; i < REPORT_N_STEPS; i++)
                printf("%-20s [%s]  %s\n", report_steps[i].name, report_steps[i].seed_paper,
                       report_steps[i].title);
            return NF_EXIT_OK;
        case 'h': report_usage(stdout); return NF_EXIT_OK;
        default:
            fprintf(stderr, "netfab report: unknown or incomplete option '%s'\n", argv[optind - 1]);
            report_usage(stderr);
            return NF_EXIT_USAGE;
        }
    }
    if (optind < argc) {
        fprintf(stderr, "netfab report: unexpected argument '%s'\n", argv[optind]);
        return NF_EXIT_USAGE;
    }
    if (!x.dir || (quick && x.full)) {
        fprintf(stderr, "netfab report: %s\n",
                !x.dir ? "--out DIR is required" : "--quick or --full, not both");
        return NF_EXIT_USAGE;
    }
    report_job *jobs = calloc(REPORT_N_STEPS, sizeof *jobs);
    if (!jobs) return nf_app_report(NF_ENOMEM, NULL);
    report_text *text = NULL;
    bool selected[REPORT_N_STEPS];
    int ex = report_steps_select(only, selected);
    double t0 = nf_app_now();
    if (ex) goto out;
    unsigned n_selected = 0;
    for (size_t i = 0; i < REPORT_N_STEPS; i++) {
        const report_step *st = &report_steps[i];
        jobs[i] = (report_job){.name = st->name, .selected = selected[i]};
        n_selected += selected[i];
    }
    if (par > n_selected) par = n_selected;
    /* every child may use every processor: when the long steps are the last ones running they
     * then have the machine to themselves */
    x.threads = nproc > 0 ? (unsigned)nproc : 1;
    for (size_t i = 0; i < REPORT_N_STEPS; i++)
        if (jobs[i].selected) report_steps[i].build(&report_steps[i], &x, jobs[i].cmds, &jobs[i].n);
    if (dry) { /* the command lines, as a shell would take them */
        report_jobs_print(stdout, jobs, REPORT_N_STEPS);
        goto out;
    }
    /* the page's text and the steps' costs, read before anything runs */
    double cost[REPORT_N_STEPS];
    if ((ex = report_steps_costs(x.full, cost)) || (ex = report_text_load(&text))) goto out;
    for (size_t i = 0; i < REPORT_N_STEPS; i++)
        jobs[i].cost = cost[i];
    char sub[PATH_MAX];
    snprintf(sub, sizeof sub, "%s/data", x.dir);
    bool made = mkdir_p(sub) == 0;
    snprintf(sub, sizeof sub, "%s/img", x.dir);
    made = made && mkdir_p(sub) == 0;
    if (!made) {
        fprintf(stderr, "netfab report: cannot make %s: %s\n", sub, strerror(errno));
        ex = NF_EXIT_FAIL;
        goto out;
    }
    for (size_t i = 0; i < REPORT_N_STEPS; i++) { /* each step's log starts empty */
        char log[PATH_MAX];
        snprintf(log, sizeof log, "%s/data/%s.log", x.dir, report_steps[i].name);
        if (jobs[i].selected) unlink(log);
    }
    int sig = report_jobs_run(x.dir, jobs, REPORT_N_STEPS, par);
    if (sig < 0) {
        ex = NF_EXIT_FAIL;
        goto out;
    }
    if (sig) {
        fprintf(stderr, "netfab report: stopped by signal %d; the steps that ran were stopped\n",
                sig);
        ex = 128 + sig;
        goto out;
    }
    ex = report_page_write(text, &x, jobs, nf_app_now() - t0, argc, argv);
out:
    for (size_t i = 0; i < REPORT_N_STEPS; i++)
        if (jobs[i].selected && jobs[i].status && ex < 128)
            fprintf(stderr, "netfab report: step %s failed (exit %d); see %s/data/%s.log\n",
                    jobs[i].name, jobs[i].status, x.dir, jobs[i].name);
    report_jobs_free(jobs, REPORT_N_STEPS);
    report_text_free(text);
    free(jobs);
    if (ex == NF_EXIT_OK && !dry)
        fprintf(stderr, "netfab report: %s/index.html (%.0f s)\n", x.dir, nf_app_now() - t0);
    return ex;
}
