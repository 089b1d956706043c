/* SPDX-License-Identifier: MIT */
/* Reading a text file whole, refusing what is not text as early as it shows: the readers of
 * fabric files and of forwarding tables share it. */
#ifndef NF_UTIL_TEXTFILE_H
#define NF_UTIL_TEXTFILE_H

#include "netfab/core.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Reads path into a new buffer (*buf, *len bytes; free with nf__free), in 64 KiB chunks each
 * checked as it comes: a NUL byte, a line over max_line bytes or more than max_bytes in all stop
 * the reading at once with NF_EPARSE and "file:line: ..., not <what>" in diag (what: e.g. "a
 * fabric file"), so /dev/zero or a binary file costs one chunk, not all of memory. NF_EIO with
 * "cannot read: <errno text>" when it cannot be read; NF_ENOMEM. *buf is NULL on failure. */
int nf__read_text(const char *path, const char *what, size_t max_bytes, size_t max_line, char **buf,
                  size_t *len, nf_diag *diag);

/* A kind of finding a reader counts rather than stops at: how many, and the first line. */
typedef struct nf__tally {
    uint64_t n;
    int first;
} nf__tally;
void nf__tally_add(nf__tally *t, int line);

/* A hexadecimal number after "0x" or "0X" at *p, before end (advancing *p past it); false when
 * there is none or it has more than 16 digits. */
bool nf__hex_at(const char **p, const char *end, uint64_t *v);

/* Whether the text at p (before end) begins with the string w. */
bool nf__starts(const char *p, const char *end, const char *w);

#endif
