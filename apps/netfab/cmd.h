/* SPDX-License-Identifier: MIT */
/* The CLI's subcommands: one X-list so the names, the help text and the dispatch cannot drift. */
#ifndef NETFAB_APP_CMD_H
#define NETFAB_APP_CMD_H

#include "netfab/core.h"
#include "util/afile.h"

#include <jansson.h>
#include <stdbool.h>
#include <stdio.h>

#define NF_COMMANDS(X)                                                                             \
    X(topo, "topo", "build, read or convert a fabric and print its statistics")                    \
    X(mcast, "mcast", "route multicast groups with the MINIHOP, SSSP and FULB engines")            \
    X(smd, "smd", "the multicast group manager daemon (SA MADs over loopback UDP)")                \
    X(mcast_join, "mcast-join", "ask the group manager to add a port to a multicast group")        \
    X(mcast_leave, "mcast-leave", "ask the group manager to take a port out of a group")           \
    X(mcast_state, "mcast-state", "a group's state, every group's (--all), or a dump")             \
    X(smd_load, "smd-load", "play every rank of a job against the group manager; joins/s")         \
    X(sim, "sim", "packet-level simulation: latency and throughput per load point")                \
    X(route, "route", "unicast routings: deadlock check, tables out (OpenSM), one path")           \
    X(exp, "exp", "the Sunway experiments: dual rail, multicast, collectives, faults, tables")     \
    X(sweep, "sweep", "a grid of simulations or multicast routings over MPI ranks and threads")    \
    X(plot, "plot", "draw results: latency curves, EFI histograms, a multicast tree (png, svg)")   \
    X(report, "report", "reproduce the papers' experiments as one HTML page (--quick, --full)")

#define NF_X_DECL(id, name, help) int nf_cmd_##id(int argc, char **argv);
NF_COMMANDS(NF_X_DECL)
#undef NF_X_DECL

/* Exit statuses shared by every subcommand. */
enum { NF_EXIT_OK = 0, NF_EXIT_FAIL = 1, NF_EXIT_USAGE = 2 };

/* A numeric macro's digits as a string literal, for help texts that quote the library's defaults.
 */
#define NF_STR_(x) #x
#define NF_STR(x) NF_STR_(x)

/* Prints "netfab: <where>: <what>" for a library error and returns the exit status for it:
 * NF_EXIT_USAGE for bad input (parse errors, invalid specs), NF_EXIT_FAIL otherwise. */
int nf_app_report(int rc, const nf_diag *d);

/* The warn callback the CLI hands to the library: to stderr, at most a few dozen lines. */
void nf_app_warn(void *ud, const char *file, int line, const char *msg);
void nf_app_warn_summary(void);

/* Builds the fabric of spec topo (warnings to stderr) and, when h is given, its all-pairs
 * distances with threads threads (0: OpenMP's default). Returns NF_EXIT_OK, or reports the error
 * and returns the exit status for it (nothing is left allocated then). */
typedef struct nf_fabric nf_fabric;
typedef struct nf_hops nf_hops;
int nf_app_fabric(const char *topo, int threads, nf_fabric **f, nf_hops **h);

/* --fail-links N|FILE (fail.c): a number N (N switch-to-switch links that are up, drawn with a
 * seed) or a file of "NODE PORT" lines (a node's name or 0xGUID, a port), read when the option
 * is parsed. */
typedef struct nf_app_fail_line {
    char *node;
    unsigned port;
    int line;
} nf_app_fail_line;
typedef struct nf_app_fail {
    uint64_t count;   /* N, when path is NULL */
    const char *path; /* FILE, and its lines: */
    nf_app_fail_line *v;
    size_t n;
} nf_app_fail;

/* The option layer's parser of --fail-links (an nf_opt row of kind NF_OPT_CUSTOM whose dst is
 * an nf_app_fail): NF_EXIT_OK, NF_EXIT_USAGE for a malformed line, NF_EXIT_FAIL when the file
 * cannot be read. nf_app_fail_fini releases what it holds (and clears it). */
typedef struct nf_opt nf_opt;
int nf_app_fail_arg(const char *cmd, const nf_opt *o, const char *arg);
void nf_app_fail_fini(nf_app_fail *fl);

/* Sets the links fl names down in f (N of them drawn with seed) and their count in *n.
 * NF_EXIT_OK, or prints why not ("netfab CMD: ...": a name f lacks, more links than are up) and
 * returns the exit status. */
int nf_app_fail_links(const char *cmd, nf_fabric *f, const nf_app_fail *fl, uint64_t seed,
                      unsigned *n);

/* One engine's routing of a workload as netfab mcast --json prints it: the statistics, the
 * lower bound given, timings, and efi_hist ([EFI, inter-switch links with it] pairs). NULL when
 * out of memory. */
typedef struct nf_groups nf_groups;
typedef struct nf_mcast nf_mcast;
typedef struct nf_mcast_engine nf_mcast_engine;

json_t *nf_app_mcast_json(const nf_fabric *f, const char *topo, const char *pattern,
                          const nf_groups *g, const nf_mcast *m, const nf_mcast_engine *e,
                          uint32_t lower_bound, bool verified);

/* `netfab mcast --analyze TABLES` (cmd_mcast_analyze.c): reads the multicast tables against
 * fabric topo, prints their analysis (JSON with as_json) and, for each of the n_eng engines, the
 * same groups routed beside: the tables' members, or sa_spec's groups ("sa:PATH") when given.
 * NF_EXIT_FAIL when a group of the tables has a problem. */
int nf_app_mcast_analyze(const char *topo, int threads, const char *tables, const char *sa_spec,
                         const nf_mcast_engine *const *engines, int n_eng, bool as_json);

/* Output files (output.c): opened through util/afile.h, so a file appears complete or not at
 * all. out_open opens a temporary file next to path ("-": stdout) and returns where to write,
 * or NULL after saying why ("<who>: cannot write <path>: <errno text>"). out_close commits it
 * when rc (the writing's library status) is 0, else drops it; NF_EXIT_OK, or NF_EXIT_FAIL after
 * saying why, the previous file at path untouched then. */
FILE *nf_app_out_open(nf__afile *a, const char *who, const char *path);
int nf_app_out_close(nf__afile *a, const char *who, const char *path, int rc);

/* Installs the SIGINT, SIGTERM and SIGHUP handlers (unless the signal is ignored) that remove
 * unfinished outputs' temporary files, then die of the signal. main() calls it once. */
void nf_app_catch_signals(void);

/* The most threads --threads may ask for, the same in every command (opts.h NF_OPT_THREADS). */
enum { NF_APP_MAX_THREADS = 1024 };

/* The one integer parser: a whole number from lo to hi in decimal or in hexadecimal after 0x,
 * read exactly (no detour through double: seeds up to 2^64 - 1 keep every bit; no sign, no
 * blanks, no octal, no exponent). 0, or -1 (nothing said, *out untouched). The option layer
 * (opts.h) says why. */
int nf_app_u64(const char *s, uint64_t lo, uint64_t hi, uint64_t *out);

/* The one real parser: a number as strtod reads it, all of s (no blanks around it, nothing
 * after it), finite (inf only with allow_inf; nan never), not out of double's range. 0, or -1
 * (nothing said, *out untouched). */
int nf_app_real(const char *s, bool allow_inf, double *out);

/* The required options of cmd: names[i] is missing when !given[i]. NF_EXIT_OK when none is;
 * else says which are ("netfab sim: --routing NAME and --load L (or --sweep) are required")
 * and returns NF_EXIT_USAGE. */
int nf_app_require(const char *cmd, size_t n, const char *const *names, const bool *given);

/* The names a --routing, --traffic or --engine takes, for a message: "known: a, b, c" (cut
 * short with "..." when it does not fit); returns buf. */
typedef enum { NF_APP_ROUTINGS, NF_APP_TRAFFICS, NF_APP_ENGINES } nf_app_names;
const char *nf_app_known(nf_app_names what, char *buf, size_t n);

/* Wall-clock seconds since an arbitrary origin, and peak resident set size in KiB. */
double nf_app_now(void);
long nf_app_peak_rss_kib(void);

#endif
