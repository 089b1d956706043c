/* SPDX-License-Identifier: MIT */
/* netfab report's job scheduler: each job is a step's short list of netfab command lines run one
 * after the other, several jobs at once, the costliest waiting first; a signal stops them all. */
#ifndef NETFAB_APP_REPORT_JOBS_H
#define NETFAB_APP_REPORT_JOBS_H

#include "util/afile.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <sys/types.h>

enum { REPORT_MAX_CMDS = 8, REPORT_MAX_ARGS = 48 };

/* A command line: argv[0] is this program ("netfab"), which runs it (/proc/self/exe). argv's
 * strings and stdout_to are owned (report_jobs_free). */
typedef struct report_cmd {
    char *argv[REPORT_MAX_ARGS + 1];
    int argc;
    char *stdout_to; /* a file for its stdout, or NULL */
} report_cmd;

/* A step's commands and how they ran. The caller fills name, cost, selected and the commands;
 * report_jobs_run the rest. */
typedef struct report_job {
    const char *name; /* the step: its log is DIR/data/NAME.log */
    double cost;      /* its expected seconds: the order jobs start in, the progress bar's weight */
    bool selected;
    report_cmd cmds[REPORT_MAX_CMDS];
    int n, at;     /* commands, the one running or next */
    pid_t pid;     /* running: its pid (and its process group's id), else 0 */
    nf__afile out; /* running with stdout_to: the temporary file its stdout goes to */
    int status;    /* 0 ok; else the failed command's exit status (or 128 + signal) */
    bool done;
    double started, took; /* seconds: when its first command started, how long all took */
} report_job;

/* Runs the selected jobs of jobs[0..n), at most par at once, the costliest waiting first; a job
 * stops at its first failing command. Each command's stderr (and its stdout when it has no
 * stdout_to) goes to DIR/data/NAME.log after its command line; a stdout_to file is replaced only
 * when its command exits 0. A progress bar on stderr (when a terminal). SIGINT, SIGTERM or SIGHUP
 * meanwhile stops every running command (its process group), waits for them and leaves the
 * previous outputs; returns that signal, else 0; -1 when this program cannot be run again
 * (/proc/self/exe), after saying so. */
int report_jobs_run(const char *dir, report_job *jobs, size_t n, unsigned par);

/* The selected jobs' command lines as a shell would take them, one a line, to out. */
void report_jobs_print(FILE *out, const report_job *jobs, size_t n);

/* Frees the command lines of jobs[0..n) (not jobs itself). */
void report_jobs_free(report_job *jobs, size_t n);

#endif
