/* SPDX-License-Identifier: MIT */
/* netfab report's scheduler: runs the steps' command lines as children of this program
 * (spawn.h), each in a process group of its own with its output in the step's log, several at
 * once, and polls them so that the progress bar moves; stops them all on a signal. */
#define _GNU_SOURCE
#include "report_jobs.h"
#include "cmd.h"
#include "progress.h"
#include "spawn.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

/* the running binary itself, even if a rebuild has replaced the file since */
static const char self[] = "/proc/self/exe";

/* Starts command c of a step in a process group of its own (so that stopping it stops what it
 * runs too, gnuplot say): its command line, then its stderr (and its stdout when it has no file)
 * appended to the step's log; its stdout into a temporary file *out that replaces c->stdout_to
 * when the command succeeds (out->fp NULL when there is none). Returns its pid, or -1 with the
 * exit status that stands for the failure in *status after writing why to the log. */
static pid_t start(const char *dir, const char *name, report_cmd *c, nf__afile *out, int *status) {
    char log[PATH_MAX];
    snprintf(log, sizeof log, "%s/data/%s.log", dir, name);
    *out = (nf__afile){.slot = -1};
    int lfd = open(log, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (lfd >= 0) {
        for (int i = 0; i < c->argc; i++)
            dprintf(lfd, "%s%s", i ? " " : "$ ", c->argv[i]);
        dprintf(lfd, "\n");
    }
    pid_t pid = -1;
    if (c->stdout_to && nf__afile_open(out, c->stdout_to)) {
        if (lfd >= 0)
            dprintf(lfd, "netfab report: cannot write %s: %s\n", c->stdout_to, strerror(errno));
        *out = (nf__afile){.slot = -1};
        *status = 126;
    } else {
        nf_app_child child = {.path = self,
                              .argv = c->argv,
                              .in = -1,
                              .out = c->stdout_to ? fileno(out->fp) : lfd,
                              .err = lfd,
                              .own_group = true};
        int rc = nf_app_spawn(&child, &pid);
        if (rc) {
            if (lfd >= 0) dprintf(lfd, "netfab report: cannot run %s: %s\n", self, strerror(rc));
            nf__afile_abort(out);
            pid = -1;
            *status = 127;
        }
    }
    if (lfd >= 0) close(lfd);
    return pid;
}

/* The signal (SIGINT, SIGTERM, SIGHUP) that asked the running report to stop, else 0. */
static volatile sig_atomic_t stop_sig;

static void on_stop(int sig) { stop_sig = sig; }

/* Stops every running step: SIGTERM to its process group, SIGKILL to what is left after 5 s;
 * waits for them and drops their unfinished outputs (each netfab child removes its own
 * temporary files on SIGTERM). */
static void stop_jobs(report_job *jobs, size_t n) {
    for (size_t i = 0; i < n; i++)
        if (jobs[i].pid) kill(-jobs[i].pid, SIGTERM);
    double t0 = nf_app_now();
    for (size_t i = 0; i < n; i++) {
        report_job *j = &jobs[i];
        while (j->pid) {
            pid_t w = waitpid(j->pid, NULL, WNOHANG);
            if (w == j->pid || (w < 0 && errno != EINTR)) {
                kill(-j->pid, SIGKILL); /* its grandchildren, should one outlive it */
                j->pid = 0;
            } else if (nf_app_now() - t0 > 5) {
                kill(-j->pid, SIGKILL);
                waitpid(j->pid, NULL, 0);
                j->pid = 0;
            } else {
                usleep(20000);
            }
        }
        nf__afile_abort(&j->out);
    }
}

/* The scheduler's loop: report_jobs_run without the signal handlers. */
static int run_jobs(const char *dir, report_job *jobs, size_t n, unsigned par) {
    double total_cost = 0;
    for (size_t i = 0; i < n; i++)
        if (jobs[i].selected) total_cost += jobs[i].cost;
    nf_progress bar;
    nf_progress_begin(&bar, "netfab report");
    unsigned running = 0;
    double done_cost = 0;
    for (;;) {
        if (stop_sig) {
            stop_jobs(jobs, n);
            break;
        }
        /* the costliest step waiting goes first (a step between its commands waits too), so
         * that the long ones do not end up alone at the end */
        while (running < par && !stop_sig) {
            size_t i = n;
            for (size_t k = 0; k < n; k++) {
                const report_job *j = &jobs[k];
                if (!j->selected || j->done || j->pid) continue;
                if (i == n || jobs[k].cost > jobs[i].cost) i = k;
            }
            if (i == n) break;
            report_job *j = &jobs[i];
            if (j->at == 0) j->started = nf_app_now();
            j->pid = start(dir, j->name, &j->cmds[j->at], &j->out, &j->status);
            if (j->pid < 0) {
                j->done = true, j->pid = 0;
                j->took = nf_app_now() - j->started;
                done_cost += jobs[i].cost;
                continue;
            }
            running++;
        }
        if (!running) break;
        int st;
        pid_t pid = 0;
        /* poll so that the bar moves while children run */
        while (!stop_sig && (pid = waitpid(-1, &st, WNOHANG)) == 0) {
            double part = 0;
            for (size_t i = 0; i < n; i++)
                if (jobs[i].pid) {
                    part += fmin(jobs[i].cost * 0.95, nf_app_now() - jobs[i].started);
                }
            nf_progress_set(&bar, (done_cost + part) / total_cost);
            usleep(100000);
        }
        if (stop_sig) continue;
        if (pid < 0) break;
        for (size_t i = 0; i < n; i++) {
            report_job *j = &jobs[i];
            if (j->pid != pid) continue;
            j->pid = 0;
            running--;
            int code = nf_app_exit_status(st);
            if (j->out.fp && code == 0 && nf__afile_commit(&j->out)) {
                dprintf(STDERR_FILENO, "netfab report: cannot write %s: %s\n",
                        j->cmds[j->at].stdout_to, strerror(errno));
                code = 1;
            }
            nf__afile_abort(&j->out); /* a failed command's output: the previous file stays */
            if (code != 0) j->status = code;
            if (code != 0 || ++j->at == j->n) {
                j->done = true;
                j->took = nf_app_now() - j->started;
                done_cost += jobs[i].cost;
                nf_progress_label(&bar, "netfab report");
            }
        }
    }
    nf_progress_end(&bar);
    return stop_sig;
}

int report_jobs_run(const char *dir, report_job *jobs, size_t n, unsigned par) {
    if (access(self, X_OK) != 0) {
        fprintf(stderr, "netfab report: cannot run %s: %s\n", self, strerror(errno));
        return -1;
    }
    static const int sigs[] = {SIGINT, SIGTERM, SIGHUP};
    struct sigaction was[3];
    stop_sig = 0;
    for (int k = 0; k < 3; k++) {
        struct sigaction sa = {.sa_handler = on_stop};
        sigemptyset(&sa.sa_mask);
        sigaction(sigs[k], NULL, &was[k]);
        if (was[k].sa_handler != SIG_IGN) sigaction(sigs[k], &sa, NULL);
    }
    int sig = run_jobs(dir, jobs, n, par);
    for (int k = 0; k < 3; k++)
        sigaction(sigs[k], &was[k], NULL);
    return sig;
}

void report_jobs_print(FILE *out, const report_job *jobs, size_t n) {
    for (size_t i = 0; i < n; i++)
        for (int c = 0; jobs[i].selected && c < jobs[i].n; c++) {
            const report_cmd *cl = &jobs[i].cmds[c];
            for (int k = 0; k < cl->argc; k++) {
                bool plain =
                    strspn(cl->argv[k], "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOP"
                                        "QRSTUVWXYZ0123456789-_=:,./+") == strlen(cl->argv[k]);
                fprintf(out, plain ? "%s%s" : "%s'%s'", k ? " " : "", cl->argv[k]);
            }
            fprintf(out, cl->stdout_to ? " > %s\n" : "\n", cl->stdout_to);
        }
}

void report_jobs_free(report_job *jobs, size_t n) {
    for (size_t i = 0; i < n; i++)
        for (int c = 0; c < jobs[i].n; c++) {
            for (int a = 0; a < jobs[i].cmds[c].argc; a++)
                free(jobs[i].cmds[c].argv[a]);
            free(jobs[i].cmds[c].stdout_to);
        }
}
