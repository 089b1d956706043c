/* SPDX-License-Identifier: MIT */
/* For the tests of what the real tools wrote (tests/data/real, captured by capture.sh): the
 * directory, a counter of reader warnings, and the fabrics those files belong to. Included by a
 * test program after cmocka.h. */
#ifndef NF_TEST_REAL_H
#define NF_TEST_REAL_H

#include "netfab/io.h"

#include <stdio.h>

#define REAL NF_TEST_DATA "/real/"

/* Reader warnings (nf_warn_fn): how many, the line and text of the last. */
typedef struct warns {
    int n, line;
    char last[256];
} warns;

static inline void on_warn(void *ud, const char *file, int line, const char *msg) {
    (void)file;
    warns *w = ud;
    w->n++;
    w->line = line;
    snprintf(w->last, sizeof w->last, "%s", msg);
}

/* The fabric of file path (any format nf_io_load reads); fails the test when it does not read. */
static inline nf_fabric *real_fabric(const char *path) {
    nf_fabric *f = NULL;
    nf_diag d = {{0}, 0, {0}};
    if (nf_io_load(path, NF_FMT_AUTO, NULL, &f, &d))
        fail_msg("%s: %s:%d: %s", path, d.file, d.line, d.msg);
    return f;
}

/* The xgft fabric most fixtures were captured on. */
static inline nf_fabric *xgft(void) { return real_fabric(REAL "xgft.ibnet"); }

#endif
