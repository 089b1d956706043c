/* SPDX-License-Identifier: MIT */
/* The option layer (opts.h): getopt_long's table and short-option string made from a command's
 * rows, each value converted by the one integer parser (nf_app_u64) or the one real parser
 * (nf_app_real), and the --help text laid out from the same rows. */
#include "opts.h"

#include "cmd.h"

#include <assert.h>
#include <getopt.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

enum { HELP_CODE = 255, ROW_CODE = 256, WIDTH = 79, NAME_COL = 26 };

int nf_opt_bad(const char *cmd, const char *opt, const char *want, const char *arg) {
    fprintf(stderr, "netfab %s: %s wants %s, not '%s'\n", cmd, opt, want, arg);
    return NF_EXIT_USAGE;
}

int nf_opt_usage(const char *cmd, const char *fmt, ...) {
    va_list ap;
    fprintf(stderr, "netfab %s: ", cmd);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    return NF_EXIT_USAGE;
}

void nf_opt_real_want(double lo, double hi, unsigned open, char *buf, size_t cap) {
    bool olo = open & NF_OPT_OPEN_LO, ohi = open & NF_OPT_OPEN_HI;
    if (isinf(hi))
        snprintf(buf, cap, "a number %s %g", olo ? "above" : "from", lo);
    else if (!olo && !ohi)
        snprintf(buf, cap, "a number from %g to %g", lo, hi);
    else
        snprintf(buf, cap, "a number %s %g and %s %g", olo ? "above" : "from", lo,
                 ohi ? "below" : "at most", hi);
}

/* The rows of every group, row i of all at *at(i). */
static size_t n_rows(const nf_cmd_spec *s) {
    size_t n = 0;
    for (int g = 0; g < NF_OPT_GROUPS; g++)
        n += s->group[g].n;
    return n;
}

static const nf_opt *row_at(const nf_cmd_spec *s, size_t i) {
    for (int g = 0; g < NF_OPT_GROUPS; g++) {
        if (i < s->group[g].n) return &s->group[g].v[i];
        i -= s->group[g].n;
    }
    return NULL;
}

static const nf_opt *row_short(const nf_cmd_spec *s, int c) {
    for (size_t i = 0; c > 0 && i < n_rows(s); i++)
        if (row_at(s, i)->short_name == c) return row_at(s, i);
    return NULL;
}

/* Stores v into an integer field of o->size bytes (v fits: the row's hi says so). */
static void store(const nf_opt *o, uint64_t v) {
    uint8_t b1 = (uint8_t)v;
    uint16_t b2 = (uint16_t)v;
    uint32_t b4 = (uint32_t)v;
    switch (o->size) {
    case 1: memcpy(o->dst, &b1, 1); break;
    case 2: memcpy(o->dst, &b2, 2); break;
    case 4: memcpy(o->dst, &b4, 4); break;
    default: memcpy(o->dst, &v, 8); break;
    }
}

/* The row's value from arg, stored; NF_EXIT_OK or the exit status after saying why. */
static int take(const nf_cmd_spec *s, const nf_opt *o, const char *arg) {
    char opt[64], want[160];
    snprintf(opt, sizeof opt, "--%s", o->name);
    uint64_t u;
    double d;
    switch (o->kind) {
    case NF_OPT_FLAG: *(bool *)o->dst = true; break;
    case NF_OPT_STR: *(const char **)o->dst = arg; break;
    case NF_OPT_STRS: {
        nf_opt_strs *l = o->dst;
        const char **v = realloc(l->v, (l->n + 1) * sizeof *v);
        if (!v) return nf_app_report(NF_ENOMEM, NULL);
        l->v = v;
        l->v[l->n++] = arg;
        break;
    }
    case NF_OPT_SEED:
    case NF_OPT_UINT: {
        uint64_t lo = o->kind == NF_OPT_SEED ? 0 : o->lo,
                 hi = o->kind == NF_OPT_SEED ? UINT64_MAX : o->hi;
        if (nf_app_u64(arg, lo, hi, &u)) {
            snprintf(want, sizeof want, "a whole number from %llu to %llu", (unsigned long long)lo,
                     (unsigned long long)hi);
            return nf_opt_bad(s->name, opt, want, arg);
        }
        store(o, u);
        break;
    }
    case NF_OPT_REAL:
        if (nf_app_real(arg, isinf(o->rhi), &d) || d < o->rlo || d > o->rhi ||
            ((o->open & NF_OPT_OPEN_LO) && d == o->rlo) ||
            ((o->open & NF_OPT_OPEN_HI) && d == o->rhi)) {
            nf_opt_real_want(o->rlo, o->rhi, o->open, want, sizeof want);
            return nf_opt_bad(s->name, opt, want, arg);
        }
        *(double *)o->dst = d;
        break;
    case NF_OPT_CHOICE: {
        size_t i = 0;
        while (o->choices[i] && strcmp(o->choices[i], arg))
            i++;
        if (!o->choices[i]) {
            size_t len = 0;
            for (size_t k = 0; o->choices[k] && len < sizeof want; k++)
                len += (size_t)snprintf(want + len, sizeof want - len, "%s%s",
                                        k == 0              ? ""
                                        : o->choices[k + 1] ? ", "
                                                            : " or ",
                                        o->choices[k]);
            return nf_opt_bad(s->name, opt, want, arg);
        }
        store(o, i);
        break;
    }
    case NF_OPT_CUSTOM: {
        int ex = o->parse(s->name, o, arg);
        if (ex) return ex;
        break;
    }
    }
    if (o->given) *o->given = true;
    return NF_EXIT_OK;
}

/* The row's argument as the help shows it: its name, or the choices joined by '|'. */
static void arg_text(const nf_opt *o, char *buf, size_t cap) {
    buf[0] = '\0';
    if (o->arg) {
        snprintf(buf, cap, "%s", o->arg);
    } else if (o->kind == NF_OPT_CHOICE) {
        size_t len = 0;
        for (size_t k = 0; o->choices[k] && len < cap; k++)
            len += (size_t)snprintf(buf + len, cap - len, "%s%s", k ? "|" : "", o->choices[k]);
    }
}

/* Whether a, "--NAME" or "--NAME=VALUE", abbreviates the names of two options or more. */
static bool ambiguous(const nf_cmd_spec *s, const char *a) {
    if (strncmp(a, "--", 2) != 0) return false;
    size_t len = strcspn(a + 2, "="), n = strncmp("help", a + 2, len) == 0;
    for (size_t i = 0; i < n_rows(s); i++)
        n += strncmp(row_at(s, i)->name, a + 2, len) == 0;
    return n > 1;
}

static bool takes_arg(const nf_opt *o) { return o->kind != NF_OPT_FLAG; }

int nf_opt_parse(const nf_cmd_spec *s, int argc, char **argv, int *argi) {
    size_t n = n_rows(s);
    struct option *lo = calloc(n + 2, sizeof *lo);
    char *shorts = malloc(2 * n + 4);
    if (!lo || !shorts) {
        free(lo);
        free(shorts);
        return nf_app_report(NF_ENOMEM, NULL);
    }
    /* ':' first: a missing argument is ':' (not '?'), told apart from an unknown option */
    size_t k = 0;
    shorts[k++] = ':';
    for (size_t i = 0; i < n; i++) {
        const nf_opt *o = row_at(s, i);
        /* the table's own consistency: fields that can hold every value the row admits */
        assert(o->kind != NF_OPT_UINT ||
               (o->lo <= o->hi && (o->size == 8 || (o->size < 8 && o->hi >> (8 * o->size) == 0))));
        assert(o->kind != NF_OPT_CHOICE || (o->size >= 1 && o->size <= 8));
        assert(o->kind != NF_OPT_SEED || o->size == 8);
        assert(o->kind != NF_OPT_REAL || o->size == sizeof(double));
        assert(o->kind != NF_OPT_CUSTOM || o->parse);
        lo[i] = (struct option){o->name, takes_arg(o) ? required_argument : no_argument, NULL,
                                ROW_CODE + (int)i};
        if (o->short_name) {
            shorts[k++] = o->short_name;
            if (takes_arg(o)) shorts[k++] = ':';
        }
    }
    lo[n] = (struct option){"help", no_argument, NULL, HELP_CODE};
    shorts[k++] = 'h';
    shorts[k] = '\0';
    optind = 0; /* glibc: start afresh */
    opterr = 0;
    int c, ex = NF_EXIT_OK;
    while (!ex && (c = getopt_long(argc, argv, shorts, lo, NULL)) != -1) {
        const nf_opt *o = c >= ROW_CODE ? row_at(s, (size_t)(c - ROW_CODE)) : row_short(s, c);
        char want[96];
        if (c == 'h' || c == HELP_CODE) {
            nf_opt_help(s, stdout);
            ex = NF_OPT_HELP;
        } else if (c == ':') { /* optopt: the row's code or short letter */
            o = optopt >= ROW_CODE ? row_at(s, (size_t)(optopt - ROW_CODE)) : row_short(s, optopt);
            arg_text(o, want, sizeof want);
            ex = nf_opt_usage(s->name, "--%s wants an argument (%s)", o->name, want);
        } else if (c == '?') {
            o = optopt >= ROW_CODE ? row_at(s, (size_t)(optopt - ROW_CODE)) : NULL;
            if (o) /* a flag given a value: --json=yes */
                ex = nf_opt_usage(s->name, "--%s takes no argument, not '%s'", o->name,
                                  argv[optind - 1]);
            else if (optopt == HELP_CODE)
                ex = nf_opt_usage(s->name, "--help takes no argument");
            else if (optopt > 0)
                ex = nf_opt_usage(s->name, "unknown option '-%c' (netfab %s --help lists them)",
                                  optopt, s->name);
            else
                ex = nf_opt_usage(s->name, "%s option '%s' (netfab %s --help lists them)",
                                  ambiguous(s, argv[optind - 1]) ? "ambiguous" : "unknown",
                                  argv[optind - 1], s->name);
        } else {
            ex = take(s, o, o->kind == NF_OPT_FLAG ? NULL : optarg);
        }
    }
    if (!ex && argc - optind > s->max_args)
        ex = nf_opt_usage(s->name, "unexpected argument '%s'", argv[optind + s->max_args]);
    *argi = optind;
    free(lo);
    free(shorts);
    return ex;
}

/* ---- --help -------------------------------------------------------------------------------- */

/* Writes text wrapped at WIDTH, its first line going on from column col0, the others starting
 * at column indent; a '\n' in text starts a new line. */
static void wrap(FILE *out, const char *text, int col0, int indent) {
    int col = col0;
    const char *p = text;
    while (*p) {
        if (*p == '\n') {
            fprintf(out, "\n%*s", indent, "");
            col = indent;
            p++;
            continue;
        }
        size_t w = strcspn(p, " \n");
        if (col > indent && col + 1 + (int)w > WIDTH) {
            fprintf(out, "\n%*s", indent, "");
            col = indent;
        } else if (col > indent) {
            fputc(' ', out);
            col++;
        }
        fwrite(p, 1, w, out);
        col += (int)w;
        p += w;
        while (*p == ' ')
            p++;
    }
    fputc('\n', out);
}

static void help_row(FILE *out, const nf_opt *o, bool pad) {
    char a[128], lhs[192];
    arg_text(o, a, sizeof a);
    if (o->short_name)
        snprintf(lhs, sizeof lhs, "-%c, --%s%s%s", o->short_name, o->name, a[0] ? " " : "", a);
    else
        snprintf(lhs, sizeof lhs, "%s--%s%s%s", pad ? "    " : "", o->name, a[0] ? " " : "", a);
    int col = fprintf(out, "  %s", lhs);
    if (col + 2 > NAME_COL) {
        fprintf(out, "\n%*s", NAME_COL, "");
    } else {
        fprintf(out, "%*s", NAME_COL - col, "");
    }
    wrap(out, o->help ? o->help : "", NAME_COL, NAME_COL);
}

void nf_opt_help(const nf_cmd_spec *s, FILE *out) {
    fprintf(out, "usage: %s\n", s->synopsis);
    if (s->description) fprintf(out, "%s\n", s->description);
    if (s->sections) fprintf(out, "%s\n", s->sections);
    if (s->more) s->more(out);
    bool pad = false;
    for (size_t i = 0; i < n_rows(s); i++)
        pad = pad || row_at(s, i)->short_name;
    for (int g = 0; g < NF_OPT_GROUPS; g++) {
        if (!s->group[g].n) continue;
        fprintf(out, "%s:\n", s->group[g].title ? s->group[g].title : "options");
        for (size_t i = 0; i < s->group[g].n; i++)
            help_row(out, &s->group[g].v[i], pad);
        if (g == 0) {
            nf_opt h = {
                .name = "help", .short_name = pad ? 'h' : 0, .help = "this text, then exit"};
            help_row(out, &h, pad);
        }
        fputc('\n', out);
    }
    if (s->notes) fprintf(out, "%s\n", s->notes);
    if (s->examples) fprintf(out, "examples:\n%s", s->examples);
}
