/* SPDX-License-Identifier: MIT */
/* Child processes: every program the CLI runs (gnuplot, dot, netfab itself for the report's
 * steps) is started here, with its standard streams where the caller says, and waited for
 * here. */
#ifndef NETFAB_APP_SPAWN_H
#define NETFAB_APP_SPAWN_H

#include "util/afile.h"

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

/* How to start a child: the program at path (NULL: argv[0] looked up in PATH) with argv (NULL
 * terminated); its standard input, output and error from these descriptors (-1: ours);
 * own_group puts it in a process group of its own, so that a signal to the group reaches what
 * it runs too. The child starts with SIGINT, SIGTERM, SIGHUP and SIGPIPE at their defaults. */
typedef struct nf_app_child {
    const char *path;
    char *const *argv;
    int in, out, err;
    bool own_group;
} nf_app_child;

/* Starts c: 0 with its pid in *pid, or an errno value (the program could not be run). */
int nf_app_spawn(const nf_app_child *c, pid_t *pid);

/* A wait status as an exit status: the child's own, or 128 + the signal that ended it. */
int nf_app_exit_status(int wstatus);

/* Runs a tool that writes the output file `path` (opened by the caller as *out; the tool writes
 * its temporary file, nf_app_out_name) with len bytes of text on its standard input, and waits
 * for it. The output replaces path when the tool exits 0 having written something; else it is
 * dropped and `who: ...` on stderr says why (hint, e.g. how to install the tool, follows a tool
 * that cannot be run). The child gets SIGPIPE at its default; here it is ignored while writing,
 * so a tool that dies early is an error to report, not our death. NF_EXIT_OK or NF_EXIT_FAIL. */
int nf_app_run_tool(const char *who, char *const argv[], const char *text, size_t len,
                    nf__afile *out, const char *path, const char *hint);

/* The name a child writes output a (opened for path) to: its temporary file, or path itself
 * when a is written in place (stdout, a device). */
const char *nf_app_out_name(const nf__afile *a, const char *path);

#endif
