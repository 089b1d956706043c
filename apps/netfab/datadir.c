/* SPDX-License-Identifier: MIT */
/* Finding and reading netfab's data files. NF_DATADIR_REL (the installed data directory relative
 * to the installed executable's), NF_SOURCE_DATADIR and NF_BUILD_BINDIR (where the build tree's
 * netfab is) come from CMakeLists.txt. */
#define _GNU_SOURCE
#include "datadir.h"

#include <errno.h>
#include <stdbool.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#ifndef NF_DATADIR_REL
#define NF_DATADIR_REL "../share/netfab"
#endif

/* The directory of the running executable into dir (size bytes): false when unknown. */
static bool exe_dir(char *dir, size_t size) {
    ssize_t n = readlink("/proc/self/exe", dir, size - 1);
    if (n <= 0) return false;
    dir[n] = '\0';
    char *slash = strrchr(dir, '/');
    if (!slash) return false;
    *slash = '\0';
    return true;
}

const char *nf_app_datadir(char *buf) {
    const char *env = getenv("NETFAB_DATADIR");
    if (env && *env) return env;
    char dir[PATH_MAX - 64]; /* room left for NF_DATADIR_REL */
    if (!exe_dir(dir, sizeof dir)) return NF_DATADIR_REL; /* relative to nothing: fails clearly */
    snprintf(buf, PATH_MAX, "%s/%s", dir, NF_DATADIR_REL);
    struct stat sb;
    if (stat(buf, &sb) == 0 && S_ISDIR(sb.st_mode)) return buf;
#if defined NF_SOURCE_DATADIR && defined NF_BUILD_BINDIR
    /* the build tree's netfab, which nobody installed: the files of the source tree */
    char build[PATH_MAX];
    if (realpath(NF_BUILD_BINDIR, build) && strcmp(build, dir) == 0) return NF_SOURCE_DATADIR;
#endif
    return buf;
}

char *nf_app_data_read(const char *who, const char *rel, size_t *len) {
    char buf[PATH_MAX], path[PATH_MAX];
    const char *env = getenv("NETFAB_DATADIR");
    snprintf(path, sizeof path, "%s/%s", nf_app_datadir(buf), rel);
    FILE *fp = fopen(path, "rb");
    char *text = NULL;
    size_t n = 0;
    int err = 0;
    if (!fp) {
        err = errno;
    } else {
        FILE *m = open_memstream(&text, &n);
        char chunk[8192];
        size_t got;
        while (m && (got = fread(chunk, 1, sizeof chunk, fp)) > 0)
            if (fwrite(chunk, 1, got, m) != got) break;
        if (ferror(fp)) err = errno ? errno : EIO;
        if (!m || fclose(m) != 0) err = ENOMEM;
        fclose(fp);
    }
    if (err) {
        free(text);
        fprintf(stderr, "%s: cannot read data file %s: %s (%s)\n", who, path, strerror(err),
                env && *env ? "from NETFAB_DATADIR"
                            : "netfab's installed share/netfab; NETFAB_DATADIR overrides it");
        return NULL;
    }
    if (len) *len = n;
    return text;
}
