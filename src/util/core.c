/* SPDX-License-Identifier: MIT */
/* Error strings and the allocator hook shared by the whole library. */
#include "netfab/core.h"
#include "util/mem.h"
#include "util/diag.h"

#include <stdarg.h>
#include <stdio.h>

#include <stdlib.h>
#include <string.h>

const char *nf_strerror(int err) {
    switch (err) {
    case NF_OK: return "success";
#define NF_X_STR(name, val, str)                                                                   \
    case NF_E##name: return str;
        NF_ERRNO_MAP(NF_X_STR)
#undef NF_X_STR
    default: return "unknown error";
    }
}

static void *std_malloc(size_t n, void *ud) {
    (void)ud;
    return malloc(n);
}
static void *std_realloc(void *p, size_t n, void *ud) {
    (void)ud;
    return realloc(p, n);
}
static void std_free(void *p, void *ud) {
    (void)ud;
    free(p);
}

static nf_allocator cur = {std_malloc, std_realloc, std_free, NULL};

void nf_set_allocator(const nf_allocator *a) {
    if (a)
        cur = *a;
    else
        cur = (nf_allocator){std_malloc, std_realloc, std_free, NULL};
}

void *nf__malloc(size_t n) { return cur.malloc_fn(n ? n : 1, cur.ud); }

void *nf__calloc(size_t count, size_t size) {
    if (size && count > SIZE_MAX / size) return NULL;
    void *p = nf__malloc(count * size);
    if (p) memset(p, 0, (count * size) != 0 ? count * size : 1);
    return p;
}

void *nf__realloc(void *p, size_t n) { return cur.realloc_fn(p, n ? n : 1, cur.ud); }

void nf__free(void *p) {
    if (p) cur.free_fn(p, cur.ud);
}

char *nf__strndup(const char *s, size_t n) {
    char *d = nf__malloc(n + 1);
    if (!d) return NULL;
    memcpy(d, s, n);
    d[n] = '\0';
    return d;
}

char *nf__strdup(const char *s) { return nf__strndup(s, strlen(s)); }

int nf__grow(void **arr, size_t *cap, size_t need, size_t elem) {
    if (need <= *cap) return NF_OK;
    size_t ncap = *cap ? *cap : 16;
    while (ncap < need) {
        if (ncap > SIZE_MAX / 2 / elem) return NF_ENOMEM;
        ncap *= 2;
    }
    void *p = nf__realloc(*arr, ncap * elem);
    if (!p) return NF_ENOMEM;
    *arr = p;
    *cap = ncap;
    return NF_OK;
}

void nf_free(void *p) { nf__free(p); }

int nf__fail(nf_diag *d, int rc, const char *fmt, ...) {
    if (d) {
        d->file[0] = '\0';
        d->line = 0;
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(d->msg, sizeof d->msg, fmt, ap);
        va_end(ap);
    }
    return rc;
}

int nf__fail_at(nf_diag *d, int rc, const char *file, int line, const char *fmt, ...) {
    if (d) {
        snprintf(d->file, sizeof d->file, "%s", file ? file : "");
        d->line = line;
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(d->msg, sizeof d->msg, fmt, ap);
        va_end(ap);
    }
    return rc;
}
