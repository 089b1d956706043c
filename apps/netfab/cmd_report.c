/* SPDX-License-Identifier: MIT */
/* `netfab report --out DIR`: the reproduction of the three papers' experiments at one scale, as
 * one HTML page with its images. Every step is this program run again as a child (netfab exp,
 * netfab sweep, netfab mcast, then netfab plot on what they wrote), several at once; the data
 * stay in DIR/data as JSON next to each step's log, the images in DIR/img, and the page puts
 * each table and plot beside what the paper reports for the same experiment. */
#define _GNU_SOURCE
#include "cmd.h"
#include "opts.h"
#include "report_jobs.h"
#include "report_page.h"
#include "report_steps.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

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
    report_ctx x = {.seed = 1};
    const char *only = NULL;
    bool quick = false, dry = false, list = false;
    long nproc = sysconf(_SC_NPROCESSORS_ONLN);
    unsigned par = nproc > 0 ? (unsigned)nproc : 1;
    const nf_opt rows[] = {
        {.name = "out",
         .arg = "DIR",
         .kind = NF_OPT_STR,
         NF_OPT_TO(x.dir),
         .help = "where the page, its data and images go"},
        {.name = "quick",
         .kind = NF_OPT_FLAG,
         NF_OPT_TO(quick),
         .help = "small fabrics, under 2 minutes on 2 cores (the default)"},
        {.name = "full",
         .kind = NF_OPT_FLAG,
         NF_OPT_TO(x.full),
         .help = "the papers' fabrics and grids (hours on 2 cores)"},
        {.name = "only",
         .arg = "LIST",
         .kind = NF_OPT_STR,
         NF_OPT_TO(only),
         .help = "only these steps (comma-separated; netfab report --list)"},
        {.name = "jobs",
         .arg = "N",
         .kind = NF_OPT_UINT,
         NF_OPT_TO(par),
         .lo = 1,
         .hi = 256,
         .help = "steps run at once (default: the processors), the costliest first; each may "
                 "use every processor"},
        {.name = "seed",
         .arg = "S",
         .kind = NF_OPT_SEED,
         NF_OPT_TO(x.seed),
         .help = "the experiments' seed (default 1)"},
        {.name = "list", .kind = NF_OPT_FLAG, NF_OPT_TO(list), .help = "the steps, then exit"},
        {.name = "dry-run",
         .kind = NF_OPT_FLAG,
         NF_OPT_TO(dry),
         .help = "print the command lines of the steps, then exit"},
    };
    const nf_cmd_spec spec = {
        .name = "report",
        .synopsis = "netfab report --out DIR [--quick | --full] [--only LIST] [--jobs N]\n"
                    "                     [--seed S] [--dry-run]\n"
                    "       netfab report --list\n",
        .description =
            "Runs the reproduction of the papers' experiments and writes DIR/index.html:\n"
            "for each experiment what was run, its plot and table, and beside them what the\n"
            "paper reports for it (the figure or table, and the numbers its text gives) with\n"
            "the matching figure measured here. DIR/data holds every step's JSON and log,\n"
            "DIR/img the images. [M] the multicast paper (Chen, Zhou, He, Qi 2022, FULB-MC):\n"
            "the engines' max EFI and routing time, an EFI histogram, tree height, EFI and\n"
            "workload latency; [S] the Sunway paper (Gao et al. 2021): dual rail, faults,\n"
            "routing tables, hardware collectives; [U] the UGAL note (UGAL on Dragonfly):\n"
            "latency-throughput curves. Full citations: docs/references.md.\n",
        .group = {{"options", rows, sizeof rows / sizeof rows[0]}},
        .notes = "Exit 0 when every step ran; 1 when one failed (the page says which, its log is "
                 "in\n"
                 "DIR/data); 2 on bad usage.\n",
        .examples = "  netfab report --quick --out report && chromium report/index.html\n"};
    int argi, ex0 = nf_opt_parse(&spec, argc, argv, &argi);
    if (ex0) return ex0 == NF_OPT_HELP ? NF_EXIT_OK : ex0;
    if (list) {
        for (size_t i = 0; i < REPORT_N_STEPS; i++)
            printf("%-20s [%s]  %s\n", report_steps[i].name, report_steps[i].seed_paper,
                   report_steps[i].title);
        return NF_EXIT_OK;
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
