/* SPDX-License-Identifier: MIT */
/* What every command shares about its output files and its options: files written through
 * util/afile.h so that they appear complete or not at all (also when SIGINT or SIGTERM ends the
 * run), and the one parser of whole numbers and the one of reals that every option goes
 * through (opts.h). */
#include "cmd.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>

FILE *nf_app_out_open(nf__afile *a, const char *who, const char *path) {
    int rc = nf__afile_open(a, path);
    if (rc == NF_ENOMEM) {
        fprintf(stderr, "%s: cannot write %s: out of memory\n", who, path);
        return NULL;
    }
    if (rc) {
        fprintf(stderr, "%s: cannot write %s: %s\n", who, path, strerror(errno));
        return NULL;
    }
    return a->fp;
}

int nf_app_out_close(nf__afile *a, const char *who, const char *path, int rc) {
    if (rc) {
        /* a write error: errno still says why when the writer stopped at it, else flushing
         * again most likely meets the same cause */
        int err = errno;
        if (rc != NF_EIO || !ferror(a->fp)) err = 0;
        errno = 0;
        if (rc == NF_EIO && !err && fflush(a->fp) != 0) err = errno;
        nf__afile_abort(a);
        fprintf(stderr, "%s: cannot write %s: %s\n", who, path,
                err ? strerror(err) : nf_strerror(rc));
        return NF_EXIT_FAIL;
    }
    if (nf__afile_commit(a)) {
        fprintf(stderr, "%s: cannot write %s: %s\n", who, path, strerror(errno));
        return NF_EXIT_FAIL;
    }
    return NF_EXIT_OK;
}

/* Removes the temporary files of unfinished outputs, then dies of the signal as if there had
 * been no handler (so the exit status says which). Async-signal-safe. */
static void on_fatal(int sig) {
    nf__afile_unlink_pending();
    signal(sig, SIG_DFL);
    raise(sig); /* blocked while in here: delivered on return */
}

void nf_app_catch_signals(void) {
    static const int sigs[] = {SIGINT, SIGTERM, SIGHUP};
    for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++) {
        struct sigaction sa = {.sa_handler = on_fatal, .sa_flags = SA_RESTART}, was;
        sigemptyset(&sa.sa_mask);
        /* a signal ignored by whoever started us (nohup, a shell's background job) stays so */
        if (sigaction(sigs[i], NULL, &was) == 0 && was.sa_handler != SIG_IGN)
            sigaction(sigs[i], &sa, NULL);
    }
}

int nf_app_u64(const char *s, uint64_t lo, uint64_t hi, uint64_t *out) {
    const char *p = s;
    unsigned base = 10;
    if (p[0] == '0' && (p[1] == 'x' || p[1] == 'X')) {
        base = 16;
        p += 2;
    }
    bool ok = *p != '\0';
    uint64_t v = 0;
    for (; ok && *p; p++) {
        unsigned d = *p >= '0' && *p <= '9'                 ? (unsigned)(*p - '0')
                     : base == 16 && *p >= 'a' && *p <= 'f' ? (unsigned)(*p - 'a' + 10)
                     : base == 16 && *p >= 'A' && *p <= 'F' ? (unsigned)(*p - 'A' + 10)
                                                            : 99;
        if (d >= base || v > (UINT64_MAX - d) / base)
            ok = false;
        else
            v = v * base + d;
    }
    if (!ok || v < lo || v > hi) return -1;
    *out = v;
    return 0;
}

int nf_app_real(const char *s, bool allow_inf, double *out) {
    char *end;
    errno = 0;
    /* strtod would skip leading blanks and take "nan" and "inf"; neither is a value here */
    if (!*s || isspace((unsigned char)*s)) return -1;
    double v = strtod(s, &end);
    if (*end || errno || isnan(v) || (isinf(v) && !allow_inf)) return -1;
    *out = v;
    return 0;
}
