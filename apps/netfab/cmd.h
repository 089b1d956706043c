/* The CLI's subcommands: one X-list so the names, the help text and the dispatch cannot drift. */
#ifndef NETFAB_APP_CMD_H
#define NETFAB_APP_CMD_H

#include "netfab/core.h"

#define NF_COMMANDS(X)                                                                             \
    X(topo, "build, read or convert a fabric and print its statistics")                            \
    X(mcast, "route multicast groups with the MINIHOP, SSSP and FULB engines; EFI and trees")

#define NF_X_DECL(name, help) int nf_cmd_##name(int argc, char **argv);
NF_COMMANDS(NF_X_DECL)
#undef NF_X_DECL

/* Exit statuses shared by every subcommand. */
enum { NF_EXIT_OK = 0, NF_EXIT_FAIL = 1, NF_EXIT_USAGE = 2 };

/* Prints "netfab: <where>: <what>" for a library error and returns the exit status for it:
 * NF_EXIT_USAGE for bad input (parse errors, invalid specs), NF_EXIT_FAIL otherwise. */
int nf_app_report(int rc, const nf_diag *d);

/* The warn callback the CLI hands to the library: to stderr, at most a few dozen lines. */
void nf_app_warn(void *ud, const char *file, int line, const char *msg);
void nf_app_warn_summary(void);

/* Wall-clock seconds since an arbitrary origin, and peak resident set size in KiB. */
double nf_app_now(void);
long nf_app_peak_rss_kib(void);

#endif
