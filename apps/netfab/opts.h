/* SPDX-License-Identifier: MIT */
/* The CLI's one option layer: each command describes its options in a table (nf_opt rows in a
 * nf_cmd_spec), and from that table alone come the parsing (getopt_long), the conversion and
 * range check of every value, the error messages ("netfab CMD: --opt wants ..., not 'x'", exit
 * NF_EXIT_USAGE), and the --help text that scripts/manpage.sh turns into the man pages. */
#ifndef NETFAB_APP_OPTS_H
#define NETFAB_APP_OPTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

typedef enum nf_opt_kind {
    NF_OPT_FLAG,   /* no argument: *dst (bool) becomes true */
    NF_OPT_STR,    /* *dst (const char *) is the argument, borrowed from argv */
    NF_OPT_STRS,   /* repeatable: appended to *dst (nf_opt_strs; free its v) */
    NF_OPT_UINT,   /* a whole number from lo to hi (nf_app_u64), into an unsigned field */
    NF_OPT_SEED,   /* a whole number from 0 to 2^64 - 1, into a uint64_t */
    NF_OPT_REAL,   /* a number in [rlo, rhi], ends open as `open` says (nf_app_real) */
    NF_OPT_CHOICE, /* one of choices[]: its index, into an unsigned field (or a bool) */
    NF_OPT_CUSTOM  /* parse(cmd, row, argument) does it all */
} nf_opt_kind;

/* NF_OPT_REAL's `open`: which ends of [rlo, rhi] are excluded. */
enum { NF_OPT_OPEN_LO = 1, NF_OPT_OPEN_HI = 2 };

/* The values of a repeatable string option, in the order given (pointers into argv). */
typedef struct nf_opt_strs {
    const char **v;
    size_t n;
} nf_opt_strs;

typedef struct nf_opt nf_opt;
struct nf_opt {
    const char *name; /* the long name, without "--" */
    char short_name;  /* a one-letter alias, or 0 */
    const char *arg;  /* the argument's name in the help ("N", "FILE"); NULL for a flag (and for
                       * a choice: the choices joined by '|') */
    nf_opt_kind kind;
    void *dst;   /* where the value goes (its type as the kind says) */
    size_t size; /* sizeof *dst: integer and choice fields of 1, 2, 4 or 8 bytes */
    uint64_t lo, hi;
    double rlo, rhi;
    unsigned open;
    const char *const *choices; /* NULL-terminated */
    /* NF_OPT_CUSTOM: converts arg into o->dst; NF_EXIT_OK, or the exit status after saying why
     * (nf_opt_bad) */
    int (*parse)(const char *cmd, const nf_opt *o, const char *arg);
    bool *given;      /* set when the option is on the command line (optional) */
    const char *help; /* one paragraph, wrapped by the layer */
    unsigned tag;     /* the command's own bits for the row (netfab plot: the kinds it fits) */
};

/* A row's destination and its size, for the designated initializers of a table. */
#define NF_OPT_TO(var) .dst = &(var), .size = sizeof(var)

/* The members of a --threads N row, from 1 to NF_APP_MAX_THREADS (cmd.h) in every command, into
 * var: {NF_OPT_THREADS(n, "..."), .short_name = 'T'}. */
#define NF_OPT_THREADS(var, text)                                                                  \
    .name = "threads", .arg = "N", .kind = NF_OPT_UINT, NF_OPT_TO(var), .lo = 1,                   \
    .hi = NF_APP_MAX_THREADS, .help = text

/* The members of a --topo SPEC row, the fabric every command builds, into var:
 * {NF_OPT_TOPO(topo)}. */
#define NF_OPT_TOPO(var)                                                                           \
    .name = "topo", .arg = "SPEC", .kind = NF_OPT_STR, NF_OPT_TO(var),                             \
    .help = "the fabric (netfab topo --help)"

enum { NF_OPT_GROUPS = 2 };

/* A command: usage synopsis (the lines after "usage: "), description, extra sections (static
 * text, and/or printed by more()), its option groups, notes after them, examples. Every text
 * ends with a newline; NULL leaves it out. */
typedef struct nf_cmd_spec {
    const char *name; /* the subcommand, as in "netfab NAME" */
    const char *synopsis, *description, *sections;
    void (*more)(FILE *out);
    struct {
        const char *title; /* "options" */
        const nf_opt *v;
        size_t n;
    } group[NF_OPT_GROUPS];
    const char *notes, *examples;
    int max_args; /* operands allowed after the options (netfab exp NAME: 1) */
} nf_cmd_spec;

/* nf_opt_parse's status after --help: the text is on stdout, the command exits 0. */
enum { NF_OPT_HELP = -1 };

/* Parses argv[1..argc) by the spec's tables: every value converted, range-checked and stored;
 * --help printed. Returns NF_EXIT_OK with *argi the index of the first operand (argv is
 * permuted: options first), NF_OPT_HELP, or NF_EXIT_USAGE (NF_EXIT_FAIL when out of memory)
 * after one line on stderr. Values already stored stay so on failure. */
int nf_opt_parse(const nf_cmd_spec *s, int argc, char **argv, int *argi);

/* The --help text of s. */
void nf_opt_help(const nf_cmd_spec *s, FILE *out);

/* "netfab CMD: OPT wants WANT, not 'ARG'" on stderr; returns NF_EXIT_USAGE. For custom parsers
 * and the checks that follow parsing. */
int nf_opt_bad(const char *cmd, const char *opt, const char *want, const char *arg);

/* "netfab CMD: WHY" on stderr; returns NF_EXIT_USAGE. The message of a validation step. */
int nf_opt_usage(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* The text of a real range as the messages say it ("a number from 0 to 1", "a number above 0"),
 * into buf (cap bytes). */
void nf_opt_real_want(double lo, double hi, unsigned open, char *buf, size_t cap);

#endif
