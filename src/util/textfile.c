/* SPDX-License-Identifier: MIT */
/* Reading a text file whole, with its limits checked as it comes (textfile.h). */
#include "textfile.h"

#include "diag.h"
#include "mem.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

int nf__read_text(const char *path, const char *what, size_t max_bytes, size_t max_line, char **out,
                  size_t *out_len, nf_diag *diag) {
    *out = NULL;
    *out_len = 0;
    FILE *fp = fopen(path, "rb");
    char *buf = NULL;
    size_t len = 0, cap = 0, cur = 0; /* cur: the length of the last line so far */
    int rc = NF_OK, lines = 0;        /* lines: newlines read so far */
    if (!fp) goto ioerr;
    struct stat st;
    if (fstat(fileno(fp), &st) == 0 && S_ISREG(st.st_mode) &&
        (unsigned long long)st.st_size > max_bytes) {
        rc = nf__fail_at(diag, NF_EPARSE, path, 0, "larger than %llu MiB: not %s",
                         (unsigned long long)(max_bytes >> 20), what);
        goto done;
    }
    for (;;) {
        if ((rc = NF_GROW(buf, cap, len + 65536))) goto done;
        size_t want = cap - len > 65536 ? 65536 : cap - len;
        size_t n = fread(buf + len, 1, want, fp);
        if (n == 0) break;
        const char *p = buf + len, *end = p + n;
        len += n;
        if (len > max_bytes) {
            rc = nf__fail_at(diag, NF_EPARSE, path, 0, "larger than %llu MiB: not %s",
                             (unsigned long long)(max_bytes >> 20), what);
            goto done;
        }
        const char *nul = memchr(p, '\0', n);
        for (;;) {
            const char *nl = memchr(p, '\n', (size_t)(end - p));
            const char *stop = nl ? nl : end;
            if (nul && nul < stop) {
                rc = nf__fail_at(diag, NF_EPARSE, path, lines + 1,
                                 "NUL byte at column %zu: binary data, not %s",
                                 cur + (size_t)(nul - p) + 1, what);
                goto done;
            }
            cur += (size_t)(stop - p);
            if (cur > max_line) {
                rc = nf__fail_at(diag, NF_EPARSE, path, lines + 1,
                                 "line longer than %zu bytes: not %s", max_line, what);
                goto done;
            }
            if (!nl) break;
            if (lines < INT32_MAX) lines++;
            cur = 0;
            p = nl + 1;
        }
    }
    if (ferror(fp)) goto ioerr;
    *out = buf;
    *out_len = len;
    buf = NULL;
    goto done;
ioerr:
    rc = nf__fail_at(diag, NF_EIO, path, 0, "cannot read: %s", strerror(errno));
done:
    if (fp) fclose(fp);
    nf__free(buf);
    return rc;
}

void nf__tally_add(nf__tally *t, int line) {
    if (!t->n++) t->first = line;
}

bool nf__hex_at(const char **p, const char *end, uint64_t *v) {
    const char *s = *p;
    if (end - s < 3 || s[0] != '0' || (s[1] != 'x' && s[1] != 'X')) return false;
    s += 2;
    uint64_t x = 0;
    int digits = 0;
    for (; s < end; s++, digits++) {
        unsigned d = *s >= '0' && *s <= '9'   ? (unsigned)(*s - '0')
                     : *s >= 'a' && *s <= 'f' ? (unsigned)(*s - 'a' + 10)
                     : *s >= 'A' && *s <= 'F' ? (unsigned)(*s - 'A' + 10)
                                              : 16;
        if (d == 16) break;
        if (digits == 16) return false;
        x = x << 4 | d;
    }
    if (!digits) return false;
    *v = x;
    *p = s;
    return true;
}

bool nf__starts(const char *p, const char *end, const char *w) {
    size_t n = strlen(w);
    return (size_t)(end - p) >= n && memcmp(p, w, n) == 0;
}
