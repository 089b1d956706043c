/* SPDX-License-Identifier: MIT */
/* Internal: filling an nf_diag (core.h) from library code. */
#ifndef NF_UTIL_DIAG_H
#define NF_UTIL_DIAG_H

#include "netfab/core.h"

#if defined(__GNUC__)
#define NF__PRINTF(a, b) __attribute__((format(printf, a, b)))
#else
#define NF__PRINTF(a, b)
#endif

/* Sets d (may be NULL) to no file, no line and the formatted message; returns rc, so that
 * `return nf__fail(d, NF_EINVAL, "...", ...);` reports and fails in one step. */
NF__PRINTF(3, 4) int nf__fail(nf_diag *d, int rc, const char *fmt, ...);
/* The same with a file and a line (0: none) for the message to point at. */
NF__PRINTF(5, 6)
int nf__fail_at(nf_diag *d, int rc, const char *file, int line, const char *fmt, ...);

#endif
