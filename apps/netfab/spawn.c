/* SPDX-License-Identifier: MIT */
/* Child processes through posix_spawn: the streams and signals a child starts with, its exit
 * status, and the tools that draw pictures fed on a pipe. */
#define _GNU_SOURCE
#include "spawn.h"
#include "cmd.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

int nf_app_spawn(const nf_app_child *c, pid_t *pid) {
    posix_spawn_file_actions_t fa;
    posix_spawnattr_t at;
    sigset_t dfl;
    sigemptyset(&dfl);
    sigaddset(&dfl, SIGINT);
    sigaddset(&dfl, SIGTERM);
    sigaddset(&dfl, SIGHUP);
    sigaddset(&dfl, SIGPIPE);
    int rc = posix_spawn_file_actions_init(&fa);
    if (rc) return rc;
    if ((rc = posix_spawnattr_init(&at))) {
        posix_spawn_file_actions_destroy(&fa);
        return rc;
    }
    const int fds[3] = {c->in, c->out, c->err};
    for (int k = 0; k < 3 && !rc; k++)
        if (fds[k] >= 0) rc = posix_spawn_file_actions_adddup2(&fa, fds[k], k);
    short flags = POSIX_SPAWN_SETSIGDEF;
    if (c->own_group) {
        flags |= POSIX_SPAWN_SETPGROUP;
        if (!rc) rc = posix_spawnattr_setpgroup(&at, 0);
    }
    if (!rc) rc = posix_spawnattr_setsigdefault(&at, &dfl);
    if (!rc) rc = posix_spawnattr_setflags(&at, flags);
    if (!rc)
        rc = c->path ? posix_spawn(pid, c->path, &fa, &at, c->argv, environ)
                     : posix_spawnp(pid, c->argv[0], &fa, &at, c->argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    posix_spawnattr_destroy(&at);
    return rc;
}

int nf_app_exit_status(int wstatus) {
    return WIFEXITED(wstatus) ? WEXITSTATUS(wstatus) : 128 + WTERMSIG(wstatus);
}

const char *nf_app_out_name(const nf__afile *a, const char *path) { return a->tmp ? a->tmp : path; }

/* Feeds text to the child on fd and closes it; stops early when the child is gone (its status
 * then says why). */
static void feed(int fd, const char *text, size_t len) {
    struct sigaction ign = {.sa_handler = SIG_IGN}, was;
    sigaction(SIGPIPE, &ign, &was);
    for (size_t off = 0; off < len;) {
        ssize_t n = write(fd, text + off, len - off);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) break;
        off += (size_t)n;
    }
    close(fd);
    sigaction(SIGPIPE, &was, NULL);
}

/* Runs argv[0] with text on its standard input and expects it to exit 0 having written
 * something to wrote (path as the user named it: shown). */
static int run_fed(const char *who, char *const argv[], const char *text, size_t len,
                   const char *wrote, const char *shown, const char *hint) {
    int fd[2];
    if (pipe2(fd, O_CLOEXEC) != 0) {
        fprintf(stderr, "%s: pipe: %s\n", who, strerror(errno));
        return NF_EXIT_FAIL;
    }
    pid_t pid;
    int rc = nf_app_spawn(&(nf_app_child){.argv = argv, .in = fd[0], .out = -1, .err = -1}, &pid);
    close(fd[0]);
    if (rc != 0) {
        close(fd[1]);
        fprintf(stderr, "%s: cannot run %s: %s (%s)\n", who, argv[0], strerror(rc), hint);
        return NF_EXIT_FAIL;
    }
    feed(fd[1], text, len);
    int st;
    pid_t w;
    while ((w = waitpid(pid, &st, 0)) < 0 && errno == EINTR)
        ;
    if (w < 0) {
        fprintf(stderr, "%s: waiting for %s: %s\n", who, argv[0], strerror(errno));
    } else if (WIFEXITED(st) && WEXITSTATUS(st) == 0) {
        struct stat sb;
        if (stat(wrote, &sb) == 0 && sb.st_size > 0) return NF_EXIT_OK;
        fprintf(stderr, "%s: %s wrote nothing to %s\n", who, argv[0], shown);
    } else if (WIFEXITED(st)) {
        fprintf(stderr, "%s: %s failed (exit status %d)\n", who, argv[0], WEXITSTATUS(st));
    } else {
        fprintf(stderr, "%s: %s was killed by signal %d\n", who, argv[0], WTERMSIG(st));
    }
    return NF_EXIT_FAIL;
}

int nf_app_run_tool(const char *who, char *const argv[], const char *text, size_t len,
                    nf__afile *out, const char *path, const char *hint) {
    int status = run_fed(who, argv, text, len, nf_app_out_name(out, path), path, hint);
    if (status == NF_EXIT_OK) return nf_app_out_close(out, who, path, 0);
    nf__afile_abort(out);
    return status;
}
