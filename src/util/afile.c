/* SPDX-License-Identifier: MIT */
/* Files that appear complete or not at all (afile.h): a temporary file renamed over the target. */
#define _XOPEN_SOURCE 700 /* realpath */
#include "util/afile.h"

#include "netfab/core.h"
#include "util/mem.h"
#include "util/u64map.h"

#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* The pending registry: the temporary files a signal handler must remove. It is a chain of
 * blocks of slots: the first is static, and a writer that finds every slot taken links a new
 * block at the end (blocks are never freed, so the handler can walk the chain at any moment),
 * so there is no limit but memory, and when a block cannot be allocated the open fails with
 * NF_ENOMEM instead of leaving a file the handler would not know of. A slot is free (0),
 * claimed by a writer that is filling or emptying it (1), or live (2): it points to the
 * writer's complete name, which stays allocated until the slot is released, and the file may
 * exist. The handler only reads live slots and only calls unlink(2), so it is
 * async-signal-safe. A name is registered live before the file is created and unregistered
 * after it is renamed or removed, so no moment exists when the file is there unregistered. */
enum { BLOCK_SLOTS = 64 };
typedef struct reg_block {
    atomic_int state[BLOCK_SLOTS];
    _Atomic(const char *) name[BLOCK_SLOTS];
    _Atomic(struct reg_block *) next;
} reg_block;
static reg_block reg_first;

/* Claims a slot for name (borrowed until the slot is released); its number, or -1 when a new
 * block was needed and could not be allocated. */
static int reg_claim(const char *name) {
    reg_block *b = &reg_first;
    for (int base = 0;; base += BLOCK_SLOTS) {
        for (int i = 0; i < BLOCK_SLOTS; i++) {
            int free_ = 0;
            if (atomic_compare_exchange_strong(&b->state[i], &free_, 1)) {
                atomic_store(&b->name[i], name);
                atomic_store(&b->state[i], 2);
                return base + i;
            }
        }
        reg_block *next = atomic_load(&b->next);
        if (!next) {
            reg_block *fresh = nf__calloc(1, sizeof *fresh);
            if (!fresh) return -1;
            if (atomic_compare_exchange_strong(&b->next, &next, fresh))
                next = fresh;
            else
                nf__free(fresh); /* another thread linked one first: next is that one */
        }
        b = next;
    }
}

static void reg_release(int slot) {
    if (slot < 0) return;
    reg_block *b = &reg_first;
    for (; slot >= BLOCK_SLOTS; slot -= BLOCK_SLOTS)
        b = atomic_load(&b->next);
    atomic_store(&b->state[slot], 1);
    atomic_store(&b->name[slot], NULL);
    atomic_store(&b->state[slot], 0);
}

void nf__afile_unlink_pending(void) {
    for (reg_block *b = &reg_first; b; b = atomic_load(&b->next))
        for (int i = 0; i < BLOCK_SLOTS; i++)
            if (atomic_load(&b->state[i]) == 2) unlink(atomic_load(&b->name[i]));
}

/* 64 unpredictable bits: the kernel's generator, or when it is unavailable, the clock, the
 * process id and a counter mixed. */
static uint64_t random64(void) {
    static atomic_uint_fast64_t counter;
    uint64_t r;
    if (getrandom(&r, sizeof r, GRND_NONBLOCK) == (ssize_t)sizeof r) return r;
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return nf__hash64(((uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec) ^
                      ((uint64_t)getpid() << 40) ^ nf__hash64(atomic_fetch_add(&counter, 1)));
}

static int afile_open(nf__afile *a, const char *path, bool follow);

int nf__afile_open(nf__afile *a, const char *path) { return afile_open(a, path, true); }

int nf__afile_open_nofollow(nf__afile *a, const char *path) {
    struct stat lst;
    if (lstat(path, &lst) == 0 && S_ISLNK(lst.st_mode)) {
        *a = (nf__afile){.slot = -1};
        errno = ELOOP;
        return NF_EIO;
    }
    return afile_open(a, path, false);
}

static int afile_open(nf__afile *a, const char *path, bool follow) {
    *a = (nf__afile){.slot = -1};
    if (strcmp(path, "-") == 0) {
        a->fp = stdout;
        return 0;
    }
    /* a device, a pipe or a socket (/dev/null, /dev/full, a FIFO) cannot be replaced: write to
     * it directly (commit then only flushes and closes) */
    struct stat st;
    if (stat(path, &st) == 0 && !S_ISREG(st.st_mode)) {
        if (S_ISDIR(st.st_mode)) {
            errno = EISDIR;
            return NF_EIO;
        }
        return (a->fp = fopen(path, "w")) ? 0 : NF_EIO;
    }
    size_t plen = strlen(path);
    if (plen == 0 || path[plen - 1] == '/') {
        errno = EISDIR;
        return NF_EIO;
    }
    /* a symbolic link: replace the file it names, not the link */
    struct stat lst;
    char *real = NULL;
    if (follow && lstat(path, &lst) == 0 && S_ISLNK(lst.st_mode)) real = realpath(path, NULL);
    a->path = nf__strdup(real ? real : path);
    free(real); /* realpath's, from malloc */
    size_t cap = a->path ? strlen(a->path) + 32 : 0;
    a->tmp = a->path ? nf__malloc(cap) : NULL;
    if (!a->path || !a->tmp) {
        nf__free(a->path);
        nf__free(a->tmp);
        *a = (nf__afile){.slot = -1};
        return NF_ENOMEM;
    }
    const char *slash = strrchr(a->path, '/');
    int dirlen = slash ? (int)(slash - a->path) + 1 : 0;
    const char *base = a->path + dirlen;
    int fd = -1, err = EEXIST;
    for (int tries = 0; fd < 0 && err == EEXIST && tries < 100; tries++) {
        snprintf(a->tmp, cap, "%.*s.%s.%016llx.tmp", dirlen, a->path, base,
                 (unsigned long long)random64());
        if ((a->slot = reg_claim(a->tmp)) < 0) {
            nf__free(a->path);
            nf__free(a->tmp);
            *a = (nf__afile){.slot = -1};
            return NF_ENOMEM;
        }
        fd = open(a->tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
        if (fd < 0) {
            err = errno;
            reg_release(a->slot);
            a->slot = -1;
        }
    }
    if (fd >= 0 && !(a->fp = fdopen(fd, "w"))) {
        err = errno;
        close(fd);
        unlink(a->tmp);
        reg_release(a->slot);
        fd = -1;
    }
    if (fd < 0) {
        nf__free(a->path);
        nf__free(a->tmp);
        *a = (nf__afile){.slot = -1};
        errno = err;
        return NF_EIO;
    }
    return 0;
}

static void finish(nf__afile *a) {
    reg_release(a->slot);
    nf__free(a->path);
    nf__free(a->tmp);
    *a = (nf__afile){.slot = -1};
}

/* Syncs the directory holding path so that the rename survives a crash; file systems that
 * cannot sync a directory are not an error. */
static void sync_dir(const char *path) {
    const char *slash = strrchr(path, '/');
    char dir[4096];
    if (!slash) {
        strcpy(dir, ".");
    } else {
        size_t n = slash == path ? 1 : (size_t)(slash - path);
        if (n >= sizeof dir) return;
        memcpy(dir, path, n);
        dir[n] = 0;
    }
    int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0) return;
    fsync(fd);
    close(fd);
}

int nf__afile_commit(nf__afile *a) {
    if (!a->fp) {
        errno = EBADF;
        return NF_EIO;
    }
    int err = 0;
    errno = 0;
    if (fflush(a->fp) != 0 || ferror(a->fp)) err = errno ? errno : EIO;
    if (!a->tmp) { /* stdout, or a device written directly */
        if (a->fp != stdout && fclose(a->fp) != 0 && !err) err = errno;
        *a = (nf__afile){.slot = -1};
        errno = err;
        return err ? NF_EIO : 0;
    }
    if (!err && fsync(fileno(a->fp)) != 0 && errno != EINVAL) err = errno;
    if (fclose(a->fp) != 0 && !err) err = errno;
    a->fp = NULL;
    if (!err && rename(a->tmp, a->path) != 0) err = errno;
    if (err) {
        unlink(a->tmp);
        finish(a);
        errno = err;
        return NF_EIO;
    }
    sync_dir(a->path);
    finish(a);
    return 0;
}

void nf__afile_abort(nf__afile *a) {
    if (!a->fp) return;
    if (!a->tmp) {
        if (a->fp == stdout)
            fflush(a->fp);
        else
            fclose(a->fp);
        *a = (nf__afile){.slot = -1};
        return;
    }
    fclose(a->fp);
    unlink(a->tmp);
    finish(a);
}
