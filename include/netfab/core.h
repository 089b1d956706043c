/* SPDX-License-Identifier: MIT */
/* netfab core: error codes, the allocator hook, parser diagnostics, version.
 * Every other public header includes this one. */
#ifndef NETFAB_CORE_H
#define NETFAB_CORE_H

#include <stddef.h>
#include <stdint.h>

#define NF_VERSION_STRING "0.1.0"

/* Marks the public API: the only functions a shared libnetfab exports (it is built with hidden
 * visibility; the library's internal nf__ functions stay inside it). */
#if defined(__GNUC__)
#define NF_API __attribute__((visibility("default")))
#else
#define NF_API
#endif

/* Error codes: 0 is success, failures are negative. Codes and strings come from this one list. */
#define NF_ERRNO_MAP(X)                                                                            \
    X(NOMEM, -1, "out of memory")                                                                  \
    X(INVAL, -2, "invalid argument")                                                               \
    X(PARSE, -3, "malformed input")                                                                \
    X(IO, -4, "input/output error")                                                                \
    X(RANGE, -5, "value out of range")                                                             \
    X(BUSY, -6, "port already connected")                                                          \
    X(NOTFOUND, -7, "not found")                                                                   \
    X(UNSUPPORTED, -8, "unsupported")                                                              \
    X(UNREACHABLE, -9, "fabric is not connected")                                                  \
    X(LOCKED, -10, "locked by another process")                                                    \
    X(TIMEDOUT, -11, "timed out")                                                                  \
    X(NOSPC, -12, "no space left on device")                                                       \
    X(REFUSED, -13, "connection refused")

enum {
    NF_OK = 0,
#define NF_X_ENUM(name, val, str) NF_E##name = (val),
    NF_ERRNO_MAP(NF_X_ENUM)
#undef NF_X_ENUM
};

/* A static string describing err; never NULL. */
NF_API const char *nf_strerror(int err);

/* Allocator hook. All library allocations go through these three functions; tests install a
 * failing allocator to sweep allocation failures. Passing NULL restores the C library's.
 * Not thread-safe: set it before using the library. */
typedef struct nf_allocator {
    void *(*malloc_fn)(size_t n, void *ud);
    void *(*realloc_fn)(void *p, size_t n, void *ud);
    void (*free_fn)(void *p, void *ud);
    void *ud;
} nf_allocator;
NF_API void nf_set_allocator(const nf_allocator *a);

/* Releases memory the library allocated (through the hook) and handed to the caller without a
 * release function of its own: the arrays of nf_mcgm_export's MLIDs and nf_smc_table's records.
 * NULL is a no-op. Objects with a _free function are released with that. */
NF_API void nf_free(void *p);

/* Where a parser or generator failed: filled instead of printing. file may be "" (spec strings),
 * line is 1-based or 0 when it does not apply. */
typedef struct nf_diag {
    char file[256];
    int line;
    char msg[512];
} nf_diag;

/* Non-fatal findings (a skipped stray line, a self-loop cable) go to this callback when set. */
typedef void (*nf_warn_fn)(void *ud, const char *file, int line, const char *msg);

#endif
