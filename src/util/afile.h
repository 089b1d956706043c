/* SPDX-License-Identifier: MIT */
/* Writing a file so that it appears complete or not at all: the contents go to a temporary file
 * in the target's directory, which replaces the target by rename(2) only once it is written,
 * flushed and synced. A failed or interrupted write leaves the previous file as it was. */
#ifndef NF_UTIL_AFILE_H
#define NF_UTIL_AFILE_H

#include <stdio.h>

/* The caller embeds it; open fills it, commit or abort finishes it (after which it holds no
 * resources and abort is a no-op on it). */
typedef struct nf__afile {
    FILE *fp;   /* write the contents here */
    char *path; /* the target (owned) */
    char *tmp;  /* the temporary file (owned); NULL when writing to stdout or a device */
    int slot;   /* its entry in the pending registry, or -1 */
} nf__afile;

/* Creates a temporary file ".<name>.<random>.tmp" next to path, with O_EXCL and the mode a new
 * file gets (0666 & ~umask), and opens a->fp on it. path "-" means stdout, and a path that is
 * a device or a FIFO (/dev/null) is written directly (a->tmp NULL; commit then only flushes and
 * closes it). A symbolic link is followed: the file it names is replaced. Every temporary file is
 * in the pending registry (nf__afile_unlink_pending) until it is committed or aborted, however
 * many are open at once. 0, or NF_EIO with errno set to the cause (ENOENT, EACCES, ...), or
 * NF_ENOMEM (also when the registry cannot grow); nothing is left to clean up on failure. */
int nf__afile_open(nf__afile *a, const char *path);

/* The same for a file a privileged daemon writes: a path that is a symbolic link is refused
 * (NF_EIO, errno ELOOP) instead of followed, so a link planted where the file goes cannot send
 * it elsewhere (a FIFO is still written directly). */
int nf__afile_open_nofollow(nf__afile *a, const char *path);

/* Flushes, checks for a write error, fsyncs and closes the temporary file, renames it over the
 * target and fsyncs the directory. 0, or NF_EIO with errno set to the first cause (ENOSPC, EIO,
 * ...) after removing the temporary file: the target is untouched then. a is finished either
 * way. */
int nf__afile_commit(nf__afile *a);

/* Closes and removes the temporary file; the target is untouched. For stdout, flushes it. */
void nf__afile_abort(nf__afile *a);

/* Removes every temporary file of this process that is neither committed nor aborted yet.
 * Async-signal-safe (only unlink(2) and atomics): for a SIGINT/SIGTERM handler, which should
 * then restore the default action and re-raise the signal. */
void nf__afile_unlink_pending(void);

#endif
