/* SPDX-License-Identifier: MIT */
/* `netfab plot latency|efi|tree`: results as pictures. latency draws latency-throughput curves
 * from the JSON of sim or sweep, efi the EFI histograms of mcast --json, tree one group's multicast
 * tree. gnuplot and Graphviz's dot run as child processes that read their input on a pipe. */
#define _GNU_SOURCE
#include "cmd.h"
#include "opts.h"
#include "netfab/groups.h"
#include "netfab/hops.h"
#include "netfab/mcast.h"

#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

enum { K_LATENCY = 1, K_EFI = 2, K_TREE = 4, K_ALL = 7 };
static const char *const kind_name[] = {"latency", "efi", "tree"};

enum { MAX_TREE_NODES = 400, MAX_KEYS = 16 };

/* The keys that tell rows apart when no --series is given, and the efi histograms' titles. */
static const char *const vary_keys[] = {"topo", "routing", "traffic", "seed", "engine", "groups"};
static const char *const efi_keys[] = {"topo",    "groups_spec",    "groups", "mapping",
                                       "routing", "procs_per_node", "seed"};
enum {
    N_VARY = sizeof vary_keys / sizeof *vary_keys,
    N_EFI_KEYS = sizeof efi_keys / sizeof *efi_keys
};

typedef struct plot_opts {
    int kind;
    const char *in, *out, *x, *y, *series, *title, *xlabel, *ylabel, *script;
    const char *topo, *groups, *engine;
    unsigned long group;
    bool have_group;
    bool to_saturation; /* latency: each line ends at its first saturated point */
    nf_workload_opts w;
} plot_opts;

/* The kinds, for --help (the tree's limit from MAX_TREE_NODES). */
static void plot_kinds(FILE *out) {
    fprintf(out,
            "kinds:\n"
            "  latency   latency-throughput curves from netfab sim --json or netfab sweep --json\n"
            "            (an array of rows, or {\"rows\": [...]} or {\"results\": [...]}): a line\n"
            "            per series, its points sorted by x, rows without x or y skipped;\n"
            "            saturated points are hollow, and when they would stretch the y axis\n"
            "            beyond 4x the largest unsaturated y it stops there\n"
            "  efi       per object of netfab mcast --json (one per engine), a histogram of its\n"
            "            efi_hist: inter-switch links (y) carrying each EFI (x), side by side\n"
            "  tree      routes the groups as netfab mcast does and draws group N's tree top-down\n"
            "            from its root (filled): switches as boxes, member endpoints as\n"
            "            ellipses; trees of more than %d nodes are refused\n\n",
            MAX_TREE_NODES);
}

/* ---- small helpers ------------------------------------------------------------------------- */

/* A JSON number as a double; false for anything else. */
static bool number(json_t *v, double *out) {
    if (json_is_integer(v))
        *out = (double)json_integer_value(v);
    else if (json_is_real(v))
        *out = json_real_value(v);
    else
        return false;
    return true;
}

/* A value as text for a series title: strings as they are, numbers as %g, "-" when missing. */
static const char *value_text(json_t *v, char buf[64]) {
    double d;
    if (json_is_string(v)) return json_string_value(v);
    if (json_is_boolean(v)) return json_is_true(v) ? "true" : "false";
    if (!number(v, &d)) return "-";
    snprintf(buf, 64, "%.6g", d);
    return buf;
}

void nf_app_gnuplot_quote(FILE *o, const char *s) {
    putc('\'', o);
    for (; *s; s++)
        if (*s == '\'')
            fputs("''", o);
        else
            putc((unsigned char)*s < 0x20 || *s == 0x7f ? ' ' : *s, o);
    putc('\'', o);
}

/* A '#' comment line for a gnuplot data block: control characters as blanks, so that no text
 * can end the comment early. */
static void gcomment(FILE *o, size_t series, const char *s) {
    fprintf(o, "# series %zu: ", series);
    for (; *s; s++)
        putc((unsigned char)*s < 0x20 || *s == 0x7f ? ' ' : *s, o);
    putc('\n', o);
}

/* Whether s is valid UTF-8 (Graphviz refuses anything else). */
static bool utf8_ok(const unsigned char *s) {
    while (*s) {
        int n = *s < 0x80             ? 0
                : (*s & 0xe0) == 0xc0 ? 1
                : (*s & 0xf0) == 0xe0 ? 2
                : (*s & 0xf8) == 0xf0 ? 3
                                      : -1;
        if (n < 0 || (n == 1 && *s < 0xc2)) return false;
        for (s++; n > 0; n--, s++)
            if ((*s & 0xc0) != 0x80) return false;
    }
    return true;
}

/* A DOT double-quoted string: quote and backslash escaped, control characters dropped, and every
 * byte above ASCII as '?' when the text is not UTF-8 (dumps are often Latin-1). */
static void dq(FILE *o, const char *s) {
    bool utf8 = utf8_ok((const unsigned char *)s);
    putc('"', o);
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c < 0x20 || c == 0x7f) continue;
        if (c == '"' || c == '\\') putc('\\', o);
        putc(c >= 0x80 && !utf8 ? '?' : c, o);
    }
    putc('"', o);
}

typedef enum { F_PNG, F_SVG, F_DOT, F_BAD } out_fmt;

static out_fmt out_format(const char *path) {
    const char *dot = strrchr(path, '.'), *slash = strrchr(path, '/');
    if (!dot || (slash && dot < slash)) return F_BAD;
    return strcasecmp(dot, ".png") == 0   ? F_PNG
           : strcasecmp(dot, ".svg") == 0 ? F_SVG
           : strcasecmp(dot, ".dot") == 0 ? F_DOT
                                          : F_BAD;
}

/* gnuplot's scripts are made without `set output`: the image is drawn into a temporary file
 * that replaces the target only once complete (util/afile.h). This writes text to o with
 * "set output 'name'" after its first line (`set terminal ...`). */
static void put_with_output(FILE *o, const char *text, size_t len, const char *name) {
    const char *nl = memchr(text, '\n', len);
    size_t head = nl ? (size_t)(nl - text) + 1 : len;
    fwrite(text, 1, head, o);
    fputs("set output ", o);
    nf_app_gnuplot_quote(o, name);
    fputc('\n', o);
    fwrite(text + head, 1, len - head, o);
}

/* Writes len bytes of text to path ("-": stdout), with set output out when out is given. */
static int write_text(const char *path, const char *text, size_t len, const char *out) {
    nf__afile a;
    FILE *fp = nf_app_out_open(&a, "netfab plot", path);
    if (!fp) return NF_EXIT_FAIL;
    if (out)
        put_with_output(fp, text, len, out);
    else
        fwrite(text, 1, len, fp);
    return nf_app_out_close(&a, "netfab plot", path, ferror(fp) ? NF_EIO : 0);
}

/* Runs args[0] (found in PATH) with text on its standard input, and expects it to exit 0 and to
 * have written something to out (the temporary file of output shown being written). The child gets
 * SIGPIPE back at its default; here it is ignored while writing, so a child that dies early is
 * an error to report, not our death. */
static int run_tool(const char *who, char *const args[], const char *text, size_t len,
                    const char *out, const char *shown, const char *hint) {
    int fd[2];
    if (pipe2(fd, O_CLOEXEC) != 0) {
        fprintf(stderr, "%s: pipe: %s\n", who, strerror(errno));
        return NF_EXIT_FAIL;
    }
    posix_spawn_file_actions_t fa;
    posix_spawnattr_t at;
    sigset_t pipe_set;
    sigemptyset(&pipe_set);
    sigaddset(&pipe_set, SIGPIPE);
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, fd[0], STDIN_FILENO);
    posix_spawnattr_init(&at);
    posix_spawnattr_setsigdefault(&at, &pipe_set);
    posix_spawnattr_setflags(&at, POSIX_SPAWN_SETSIGDEF);
    pid_t pid;
    int rc = posix_spawnp(&pid, args[0], &fa, &at, args, environ);
    posix_spawn_file_actions_destroy(&fa);
    posix_spawnattr_destroy(&at);
    close(fd[0]);
    if (rc != 0) {
        close(fd[1]);
        fprintf(stderr, "%s: cannot run %s: %s (%s)\n", who, args[0], strerror(rc), hint);
        return NF_EXIT_FAIL;
    }
    struct sigaction ign = {.sa_handler = SIG_IGN}, was;
    sigaction(SIGPIPE, &ign, &was);
    for (size_t off = 0; off < len;) {
        ssize_t n = write(fd[1], text + off, len - off);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) break; /* the child is gone: its status says why */
        off += (size_t)n;
    }
    close(fd[1]);
    sigaction(SIGPIPE, &was, NULL);
    int st;
    pid_t w;
    while ((w = waitpid(pid, &st, 0)) < 0 && errno == EINTR)
        ;
    if (w < 0) {
        fprintf(stderr, "%s: waiting for %s: %s\n", who, args[0], strerror(errno));
    } else if (WIFEXITED(st) && WEXITSTATUS(st) == 0) {
        struct stat sb;
        if (stat(out, &sb) == 0 && sb.st_size > 0) return NF_EXIT_OK;
        fprintf(stderr, "%s: %s wrote nothing to %s\n", who, args[0], shown);
    } else if (WIFEXITED(st)) {
        fprintf(stderr, "%s: %s failed (exit status %d)\n", who, args[0], WEXITSTATUS(st));
    } else {
        fprintf(stderr, "%s: %s was killed by signal %d\n", who, args[0], WTERMSIG(st));
    }
    return NF_EXIT_FAIL;
}

/* The name a child program writes output a to: its temporary file, or the device itself. */
static const char *tool_out(const nf__afile *a, const char *path) { return a->tmp ? a->tmp : path; }

/* Ends output a after its tool ran with status: committed on success, else dropped. */
static int tool_done(nf__afile *a, const char *who, const char *path, int status) {
    if (status == NF_EXIT_OK) return nf_app_out_close(a, who, path, 0);
    nf__afile_abort(a);
    return status;
}

int nf_app_run_gnuplot(const char *who, const char *text, size_t len, const char *out) {
    nf__afile a;
    if (!nf_app_out_open(&a, who, out)) return NF_EXIT_FAIL;
    char *full = NULL;
    size_t flen = 0;
    FILE *m = open_memstream(&full, &flen);
    if (m) put_with_output(m, text, len, tool_out(&a, out));
    if (!m || fclose(m) != 0) {
        free(full);
        nf__afile_abort(&a);
        return nf_app_report(NF_ENOMEM, NULL);
    }
    char *args[] = {"gnuplot", NULL};
    int status =
        run_tool(who, args, full, flen, tool_out(&a, out), out, "apt-get install gnuplot-nox");
    free(full);
    return tool_done(&a, who, out, status);
}

/* Hands a gnuplot script to gnuplot (and to --script first, so a failing plot can be looked at). */
static int run_gnuplot(const plot_opts *o, const char *text, size_t len) {
    int rc;
    if (o->script && (rc = write_text(o->script, text, len, o->out))) return rc;
    return nf_app_run_gnuplot("netfab plot", text, len, o->out);
}

/* Closes the gnuplot input written to g (a memstream over *text, *len) and runs it. */
static int close_and_run(FILE *g, const plot_opts *o, char **text, size_t *len) {
    if (fclose(g) != 0) {
        fprintf(stderr, "netfab plot: out of memory\n");
        return NF_EXIT_FAIL;
    }
    return run_gnuplot(o, *text, *len);
}

/* The terminal, output, title and labels every gnuplot plot starts with. */
static void gnuplot_head(FILE *g, const plot_opts *o, const char *title, const char *xlabel,
                         const char *ylabel) {
    if (out_format(o->out) == F_SVG)
        fputs("set terminal svg size 900,560 noenhanced background rgb 'white'\n", g);
    else
        fputs("set terminal pngcairo size 900,560 noenhanced\n", g);
    fputs("set title ", g); /* set output: put_with_output */
    nf_app_gnuplot_quote(g, title);
    fputs("\nset xlabel ", g);
    nf_app_gnuplot_quote(g, xlabel);
    fputs("\nset ylabel ", g);
    nf_app_gnuplot_quote(g, ylabel);
    fputs("\nset grid\nset key outside right top\n", g);
}

/* ---- input --------------------------------------------------------------------------------- */

/* The input's name in messages, and in default titles (without its directory). */
static const char *src_name(const char *path) { return strcmp(path, "-") == 0 ? "stdin" : path; }

static const char *in_name(const char *path) {
    const char *slash = strrchr(src_name(path), '/');
    return slash && slash[1] ? slash + 1 : src_name(path);
}

/* Reads the rows from path ("-": stdin): a JSON array of objects, or an object whose "rows" or
 * "results" is one. Returns a new reference, or NULL with the exit status in *status after saying
 * why: 1 when the file cannot be read, 2 when it is not such JSON. */
static json_t *read_rows(const char *path, int *status) {
    const char *name = src_name(path);
    FILE *fp = strcmp(path, "-") == 0 ? stdin : fopen(path, "rb");
    if (!fp) {
        fprintf(stderr, "netfab plot: %s: %s\n", name, strerror(errno));
        *status = NF_EXIT_FAIL;
        return NULL;
    }
    json_error_t err;
    json_t *doc = json_loadf(fp, 0, &err);
    int read_err = ferror(fp) ? errno : 0;
    if (fp != stdin) fclose(fp);
    if (read_err) {
        fprintf(stderr, "netfab plot: %s: %s\n", name, strerror(read_err));
        json_decref(doc);
        *status = NF_EXIT_FAIL;
        return NULL;
    }
    if (!doc) {
        fprintf(stderr, "netfab plot: %s:%d:%d: %s\n", name, err.line, err.column, err.text);
        *status = NF_EXIT_USAGE;
        return NULL;
    }
    json_t *rows = doc;
    if (json_is_object(doc)) {
        rows = json_object_get(doc, "rows");
        if (!rows) rows = json_object_get(doc, "results");
    }
    const char *why = NULL;
    if (!json_is_array(rows))
        why = "expected an array of rows, or an object with \"rows\" or \"results\"";
    for (size_t i = 0; !why && i < json_array_size(rows); i++)
        if (!json_is_object(json_array_get(rows, i))) why = "a row is not an object";
    if (why) {
        fprintf(stderr, "netfab plot: %s: %s\n", name, why);
        json_decref(doc);
        *status = NF_EXIT_USAGE;
        return NULL;
    }
    json_incref(rows);
    json_decref(doc);
    return rows;
}

/* Splits a comma list into at most MAX_KEYS keys in buf; "" gives none. -1 for a bad list. */
static int split_keys(const char *list, char buf[256], const char *keys[MAX_KEYS]) {
    if (!*list) return 0;
    if (strlen(list) >= 256) return -1;
    strcpy(buf, list);
    int n = 0;
    for (char *p = buf, *q; p; p = q) {
        q = strchr(p, ',');
        if (q) *q++ = '\0';
        if (!*p || n == MAX_KEYS) return -1;
        keys[n++] = p;
    }
    return n;
}

/* Whether key takes more than one value among the rows flagged in use (missing is a value). */
static bool key_varies(json_t *rows, const bool *use, const char *key) {
    json_t *first = NULL, *row;
    bool any = false;
    size_t i;
    json_array_foreach(rows, i, row) {
        if (!use[i]) continue;
        json_t *v = json_object_get(row, key);
        if (!any)
            first = v, any = true;
        else if (v != first && !(v && first && json_equal(v, first)))
            return true;
    }
    return false;
}

/* The series a row belongs to: "k1=v1, k2=v2" over the keys (the y key's name when none), found
 * in or added to names; returns its index. */
static size_t series_index(json_t *names, json_t *row, const char *const *keys, int n_keys,
                           const char *none) {
    char title[512] = "", buf[64];
    size_t len = 0;
    for (int k = 0; k < n_keys && len < sizeof title; k++)
        len += (size_t)snprintf(title + len, sizeof title - len, "%s%s=%s", k ? ", " : "", keys[k],
                                value_text(json_object_get(row, keys[k]), buf));
    if (!n_keys) snprintf(title, sizeof title, "%s", none);
    size_t j;
    json_t *v;
    json_array_foreach(names, j, v) if (strcmp(json_string_value(v), title) == 0) return j;
    json_array_append_new(names, json_string_nocheck(title)); /* keys come from argv */
    return json_array_size(names) - 1;
}

/* ---- latency ------------------------------------------------------------------------------- */

typedef struct point {
    double x, y;
    size_t series, row;
    bool sat;
} point;

static int cmp_point(const void *pa, const void *pb) {
    const point *a = pa, *b = pb;
    if (a->series != b->series) return a->series < b->series ? -1 : 1;
    if (a->x != b->x) return a->x < b->x ? -1 : 1;
    return a->row < b->row ? -1 : a->row > b->row;
}

/* One line per series (the rows' values of the series keys), saturated points hollow, the y range
 * cut at 4x the largest unsaturated y when saturated points would stretch it further. */
static int plot_latency(const plot_opts *o) {
    const char *xk = o->x ? o->x : "offered", *yk = o->y ? o->y : "lat_mean";
    const char *keys[MAX_KEYS];
    char keybuf[256];
    int n_keys = 0, status = NF_EXIT_OK;
    if (o->series && (n_keys = split_keys(o->series, keybuf, keys)) < 0) {
        fprintf(stderr, "netfab plot: bad --series list '%s' (at most %d keys, comma-separated)\n",
                o->series, MAX_KEYS);
        return NF_EXIT_USAGE;
    }
    json_t *rows = read_rows(o->in, &status);
    if (!rows) return status;
    size_t n_rows = json_array_size(rows), n = 0;
    bool *use = calloc(n_rows + 1, sizeof *use);
    point *pt = calloc(n_rows + 1, sizeof *pt);
    json_t *names = json_array();
    char *text = NULL;
    size_t len = 0;
    if (!use || !pt || !names) {
        fprintf(stderr, "netfab plot: out of memory\n");
        status = NF_EXIT_FAIL;
        goto done;
    }
    size_t i;
    json_t *row;
    json_array_foreach(rows, i, row) {
        double x, y;
        if (!number(json_object_get(row, xk), &x) || !number(json_object_get(row, yk), &y))
            continue;
        use[i] = true;
        pt[n++] = (point){
            .x = x, .y = y, .row = i, .sat = json_is_true(json_object_get(row, "saturated"))};
    }
    if (n == 0) {
        fprintf(stderr, "netfab plot: %s: no row has both \"%s\" and \"%s\" as numbers\n",
                src_name(o->in), xk, yk);
        status = NF_EXIT_FAIL;
        goto done;
    }
    if (!o->series)
        for (int k = 0; k < N_VARY; k++)
            if (key_varies(rows, use, vary_keys[k])) keys[n_keys++] = vary_keys[k];
    double ymax = 0, ymax_ok = 0;
    bool any_sat = false, any_ok = false;
    for (size_t p = 0; p < n; p++) {
        pt[p].series = series_index(names, json_array_get(rows, pt[p].row), keys, n_keys, yk);
        if (p == 0 || pt[p].y > ymax) ymax = pt[p].y;
        if (pt[p].sat)
            any_sat = true;
        else if (!any_ok || pt[p].y > ymax_ok)
            ymax_ok = pt[p].y, any_ok = true;
    }
    qsort(pt, n, sizeof *pt, cmp_point);
    if (o->to_saturation) { /* past the knee the latency only says how long the run was */
        size_t kept = 0;
        bool past = false;
        for (size_t p = 0; p < n; p++) {
            if (p > 0 && pt[p].series != pt[p - 1].series) past = false;
            if (!past) pt[kept++] = pt[p];
            past |= pt[p].sat;
        }
        n = kept;
    }

    FILE *g = open_memstream(&text, &len);
    if (!g) {
        fprintf(stderr, "netfab plot: out of memory\n");
        status = NF_EXIT_FAIL;
        goto done;
    }
    gnuplot_head(g, o, o->title ? o->title : in_name(o->in), o->xlabel ? o->xlabel : xk,
                 o->ylabel ? o->ylabel : yk);
    fputs("set pointsize 1.2\nset clip two\n", g);
    if (any_ok && ymax_ok > 0 && ymax > 4 * ymax_ok)
        fprintf(g, "set yrange [*:%.9g]\n", 4 * ymax_ok);
    fputs("plot", g);
    for (size_t s = 0; s < json_array_size(names); s++) {
        fprintf(g, "%s '-' using 1:2:($3 > 0 ? 6 : 7) with linespoints pt variable title ",
                s ? "," : "");
        nf_app_gnuplot_quote(g, json_string_value(json_array_get(names, s)));
    }
    if (any_sat) fputs(", 1/0 with points pt 6 lc rgb 'black' title 'saturated'", g);
    fputc('\n', g);
    for (size_t p = 0; p < n; p++) {
        if (p == 0 || pt[p].series != pt[p - 1].series)
            gcomment(g, pt[p].series + 1, json_string_value(json_array_get(names, pt[p].series)));
        fprintf(g, "%.9g %.9g %d\n", pt[p].x, pt[p].y, pt[p].sat);
        if (p + 1 == n || pt[p + 1].series != pt[p].series) fputs("e\n", g);
    }
    status = close_and_run(g, o, &text, &len);
done:
    free(text);
    json_decref(names);
    free(pt);
    free(use);
    json_decref(rows);
    return status;
}

/* ---- efi ----------------------------------------------------------------------------------- */

/* One histogram per object with an efi_hist, the boxes of the non-empty ones shifted so that they
 * stand side by side at every EFI. Titles: the engine, plus the keys of efi_keys whose values
 * differ among the objects. */
static int plot_efi(const plot_opts *o) {
    int status = NF_EXIT_OK;
    json_t *rows = read_rows(o->in, &status);
    if (!rows) return status;
    size_t n_rows = json_array_size(rows), n_sets = 0, n_full = 0, i;
    bool *use = calloc(n_rows + 1, sizeof *use), has_spec = false, first = true;
    char *text = NULL;
    size_t len = 0;
    json_t *row;
    double lo = 0, hi = 0;
    if (!use) {
        fprintf(stderr, "netfab plot: out of memory\n");
        json_decref(rows);
        return NF_EXIT_FAIL;
    }
    json_array_foreach(rows, i, row) {
        json_t *h = json_object_get(row, "efi_hist");
        if (!h) continue;
        bool okh = json_is_array(h);
        for (size_t j = 0; okh && j < json_array_size(h); j++) {
            json_t *pair = json_array_get(h, j);
            double e, l;
            okh = json_is_array(pair) && json_array_size(pair) == 2 &&
                  number(json_array_get(pair, 0), &e) && number(json_array_get(pair, 1), &l);
            if (okh && (first || e < lo)) lo = e;
            if (okh && (first || e > hi)) hi = e;
            first = false;
        }
        if (!okh) {
            fprintf(stderr, "netfab plot: %s: row %zu: efi_hist is not a list of [efi, links]\n",
                    src_name(o->in), i);
            status = NF_EXIT_USAGE;
            goto done;
        }
        use[i] = true;
        n_sets++;
        n_full += json_array_size(h) > 0;
        if (json_object_get(row, "groups_spec")) has_spec = true;
    }
    if (n_full == 0) {
        fprintf(stderr, "netfab plot: %s: %s\n", src_name(o->in),
                n_sets ? "every efi_hist is empty: no inter-switch link carries a group"
                       : "no row has an \"efi_hist\" (netfab mcast --json prints them)");
        status = NF_EXIT_FAIL;
        goto done;
    }
    const char *keys[N_EFI_KEYS];
    int n_keys = 0;
    for (int k = 0; k < N_EFI_KEYS; k++) /* mcast's "groups" is a count when groups_spec is there */
        if (!(has_spec && strcmp(efi_keys[k], "groups") == 0) && key_varies(rows, use, efi_keys[k]))
            keys[n_keys++] = efi_keys[k];

    FILE *g = open_memstream(&text, &len);
    if (!g) {
        fprintf(stderr, "netfab plot: out of memory\n");
        status = NF_EXIT_FAIL;
        goto done;
    }
    char title[512];
    snprintf(title, sizeof title, "EFI of inter-switch links: %s", in_name(o->in));
    gnuplot_head(g, o, o->title ? o->title : title, "EFI (groups on the link)",
                 "inter-switch links");
    double w = 0.8 / (double)n_full;
    fprintf(g, "set boxwidth %.6g absolute\nset style fill solid 0.7 border -1\n", w);
    fprintf(g, "set xrange [%.9g:%.9g]\nset yrange [0:*]\n", lo - 0.6, hi + 0.6);
    if (hi - lo <= 30) fputs("set xtics 1\n", g);
    fputs("plot", g);
    size_t s = 0, slot = 0;
    char buf[64], name[512];
    json_array_foreach(rows, i, row) {
        if (!use[i]) continue;
        size_t nl = (size_t)snprintf(name, sizeof name, "%s",
                                     value_text(json_object_get(row, "engine"), buf));
        for (int k = 0; k < n_keys && nl < sizeof name; k++)
            nl += (size_t)snprintf(name + nl, sizeof name - nl, ", %s=%s", keys[k],
                                   value_text(json_object_get(row, keys[k]), buf));
        if (json_array_size(json_object_get(row, "efi_hist")) == 0) {
            fprintf(g, "%s 1/0 with boxes title ", s++ ? "," : "");
            if (nl < sizeof name) snprintf(name + nl, sizeof name - nl, " (no links)");
        } else {
            fprintf(g, "%s '-' using ($1 %+.6g):2 with boxes title ", s++ ? "," : "",
                    ((double)slot++ - (double)(n_full - 1) / 2) * w);
        }
        nf_app_gnuplot_quote(g, name);
    }
    fputc('\n', g);
    s = 0;
    json_array_foreach(rows, i, row) {
        json_t *h = json_object_get(row, "efi_hist");
        s += use[i];
        if (!use[i] || json_array_size(h) == 0) continue;
        gcomment(g, s, value_text(json_object_get(row, "engine"), buf));
        for (size_t j = 0; j < json_array_size(h); j++) {
            double e = 0, l = 0; /* checked above */
            number(json_array_get(json_array_get(h, j), 0), &e);
            number(json_array_get(json_array_get(h, j), 1), &l);
            fprintf(g, "%.9g %.9g\n", e, l);
        }
        fputs("e\n", g);
    }
    status = close_and_run(g, o, &text, &len);
done:
    free(text);
    free(use);
    json_decref(rows);
    return status;
}

/* ---- tree ---------------------------------------------------------------------------------- */

/* Writes group k's tree as a DOT digraph. The tree's nodes are its root and the ends of its
 * links; a breadth-first walk from the root gives each node its depth and orients each link from
 * the end nearer the root, so dot lays the tree out top-down with one rank per depth. nodes (at
 * most MAX_TREE_NODES + 1 entries) and depth (one per fabric node, all -1) are scratch. */
static void write_tree_dot(FILE *o, const nf_fabric *f, const nf_groups *g, const nf_mcast *m,
                           uint32_t k, const char *engine, const char *title, nf_node *nodes,
                           int32_t *depth) {
    const nf_link *tl = m->tree_link + m->tree_off[k];
    uint32_t n_links = m->tree_off[k + 1] - m->tree_off[k], n = 0;
    nodes[n++] = m->root[k];
    depth[m->root[k]] = 0;
    for (uint32_t head = 0; head < n; head++) {
        nf_node u = nodes[head];
        for (uint32_t j = 0; j < n_links; j++) {
            nf_node a = f->link_a[tl[j]], z = f->link_z[tl[j]];
            nf_node v = a == u ? z : z == u ? a : NF_NONE;
            if (v != NF_NONE && depth[v] < 0) {
                depth[v] = depth[u] + 1;
                nodes[n++] = v;
            }
        }
    }
    for (uint32_t j = 0; j < n_links; j++) /* a link the walk missed: not a tree; show it anyway */
        for (int e = 0; e < 2; e++) {
            nf_node v = e ? f->link_z[tl[j]] : f->link_a[tl[j]];
            if (depth[v] < 0) depth[(nodes[n++] = v)] = 0;
        }
    uint32_t members = g->off[k + 1] - g->off[k];
    char label[512];
    if (title)
        snprintf(label, sizeof label, "%s", title);
    else
        snprintf(label, sizeof label, "group %u (MLID 0x%04X), %s: %u members, height %u", k,
                 NF_MLID_BASE + k, engine, members, m->height[k]);
    fprintf(o,
            "digraph mcast_tree {\n  // netfab plot tree: group %u, engine %s, %u links, %u "
            "nodes, root n%u\n",
            k, engine, n_links, n, m->root[k]);
    fputs("  graph [rankdir=TB labelloc=t fontname=\"Helvetica\" label=", o);
    dq(o, label);
    fputs("];\n  node [fontname=\"Helvetica\" fontsize=10];\n"
          "  edge [dir=none fontname=\"Helvetica\" fontsize=8];\n",
          o);
    for (uint32_t j = 0; j < n; j++) {
        nf_node v = nodes[j];
        char guid[40];
        const char *name = nf_node_name(f, v);
        snprintf(guid, sizeof guid, "0x%016llx", (unsigned long long)f->guid[v]);
        fprintf(o, "  n%u [shape=%s label=", v, nf_is_switch(f, v) ? "box" : "ellipse");
        dq(o, name[0] ? name : guid);
        fprintf(o, " tooltip=\"%s lid %u%s\"", guid, f->lid[v], v == m->root[k] ? ", root" : "");
        if (v == m->root[k]) fputs(" style=\"filled,bold\" fillcolor=\"gold\" penwidth=2", o);
        fputs("];\n", o);
    }
    int32_t max_depth = 0;
    for (uint32_t j = 0; j < n; j++)
        if (depth[nodes[j]] > max_depth) max_depth = depth[nodes[j]];
    for (int32_t dd = 0; dd <= max_depth; dd++) { /* one rank per depth */
        fputs("  { rank=same;", o);
        for (uint32_t j = 0; j < n; j++)
            if (depth[nodes[j]] == dd) fprintf(o, " n%u;", nodes[j]);
        fputs(" }\n", o);
    }
    for (uint32_t j = 0; j < n_links; j++) {
        nf_link l = tl[j];
        bool down = depth[f->link_a[l]] <= depth[f->link_z[l]];
        fprintf(o, "  n%u -> n%u [taillabel=\"%u\" headlabel=\"%u\"];\n",
                down ? f->link_a[l] : f->link_z[l], down ? f->link_z[l] : f->link_a[l],
                down ? f->link_pa[l] : f->link_pz[l], down ? f->link_pz[l] : f->link_pa[l]);
    }
    fputs("}\n", o);
}

static int plot_tree(const plot_opts *o) {
    const char *why = !o->topo         ? "tree wants --topo SPEC"
                      : !o->groups     ? "tree wants --groups PATTERN"
                      : !o->have_group ? "tree wants --group N"
                                       : NULL;
    if (why) {
        fprintf(stderr, "netfab plot: %s\ntry 'netfab plot --help'\n", why);
        return NF_EXIT_USAGE;
    }
    const nf_mcast_engine *e = nf_mcast_engine_find(o->engine ? o->engine : "fulb");
    if (!e) {
        fprintf(stderr, "netfab plot: unknown engine '%s' (known:", o->engine);
        for (size_t i = 0; i < nf_mcast_engine_count(); i++)
            fprintf(stderr, "%s %s", i ? "," : "", nf_mcast_engine_name(nf_mcast_engine_at(i)));
        fputs(")\n", stderr);
        return NF_EXIT_USAGE;
    }
    nf_fabric *f = NULL;
    nf_hops *h = NULL;
    nf_groups *g = NULL;
    nf_mcast *m = NULL;
    nf_node *nodes = NULL;
    int32_t *depth = NULL;
    char *text = NULL;
    size_t len = 0;
    nf_diag d = {{0}, 0, {0}};
    int rc, status = nf_app_fabric(o->topo, 0, &f, &h);
    if (status) goto done;
    if ((rc = nf_groups_build(f, o->groups, &o->w, &g, &d))) {
        status = nf_app_report(rc, &d);
        goto done;
    }
    if (o->group >= g->n) {
        fprintf(stderr, "netfab plot: --group %lu is out of range: %s makes %u groups (0..%u)\n",
                o->group, o->groups, g->n, g->n ? g->n - 1 : 0);
        status = NF_EXIT_USAGE;
        goto done;
    }
    uint32_t k = (uint32_t)o->group;
    if ((rc = nf_mcast_route(f, h, g, e, &m, &d))) {
        status = nf_app_report(rc, &d);
        goto done;
    }
    if (m->status[k] != NF_OK) {
        fprintf(stderr, "netfab plot: group %u was not routed by %s: %s\n", k,
                nf_mcast_engine_name(e), nf_strerror(m->status[k]));
        status = NF_EXIT_USAGE;
        goto done;
    }
    /* the tree's nodes: its root and its links' ends, counted before anything is drawn */
    depth = malloc((size_t)f->n_nodes * sizeof *depth);
    nodes = malloc((MAX_TREE_NODES + 1) * sizeof *nodes);
    if (!depth || !nodes) {
        fprintf(stderr, "netfab plot: out of memory\n");
        status = NF_EXIT_FAIL;
        goto done;
    }
    memset(depth, 0xff, (size_t)f->n_nodes * sizeof *depth);
    uint32_t n_nodes = 1;
    depth[m->root[k]] = 0;
    for (uint32_t j = m->tree_off[k]; j < m->tree_off[k + 1]; j++)
        for (int end = 0; end < 2; end++) {
            nf_node v = end ? f->link_z[m->tree_link[j]] : f->link_a[m->tree_link[j]];
            if (depth[v] < 0) depth[v] = 0, n_nodes++;
        }
    if (n_nodes > MAX_TREE_NODES) {
        fprintf(stderr,
                "netfab plot: group %u's tree has %u nodes, too many to draw readably (at most "
                "%d); pick a smaller group\n",
                k, n_nodes, MAX_TREE_NODES);
        status = NF_EXIT_USAGE;
        goto done;
    }
    memset(depth, 0xff, (size_t)f->n_nodes * sizeof *depth);
    FILE *dot = open_memstream(&text, &len);
    if (!dot) {
        fprintf(stderr, "netfab plot: out of memory\n");
        status = NF_EXIT_FAIL;
        goto done;
    }
    write_tree_dot(dot, f, g, m, k, nf_mcast_engine_name(e), o->title, nodes, depth);
    if (fclose(dot) != 0) {
        fprintf(stderr, "netfab plot: out of memory\n");
        status = NF_EXIT_FAIL;
        goto done;
    }
    out_fmt fmt = out_format(o->out);
    nf__afile a;
    if (fmt == F_DOT) {
        status = write_text(o->out, text, len, NULL);
    } else if (!nf_app_out_open(&a, "netfab plot", o->out)) {
        status = NF_EXIT_FAIL;
    } else {
        char *args[] = {"dot", fmt == F_PNG ? "-Tpng" : "-Tsvg", "-o", (char *)tool_out(&a, o->out),
                        NULL};
        status = run_tool("netfab plot", args, text, len, tool_out(&a, o->out), o->out,
                          "apt-get install graphviz");
        status = tool_done(&a, "netfab plot", o->out, status);
    }
done:
    free(text);
    free(nodes);
    free(depth);
    nf_mcast_free(m);
    nf_groups_free(g);
    nf_hops_free(h);
    nf_fabric_free(f);
    return status;
}

/* ---- options ------------------------------------------------------------------------------- */

int nf_cmd_plot(int argc, char **argv) {
    plot_opts o = {.w = {.procs_per_node = 1, .mapping = NF_MAP_AWARE, .seed = 1}};
    static const char *const mappings[] = {"aware", "random", NULL};
    enum { N_OPTS = 17 };
    bool seen[N_OPTS] = {false};
    /* the tag of each row: the kinds it applies to */
    const nf_opt lo[N_OPTS] = {
        {.name = "in",
         .arg = "FILE.json",
         .kind = NF_OPT_STR,
         NF_OPT_TO(o.in),
         .given = &seen[0],
         .tag = K_LATENCY | K_EFI,
         .help = "latency, efi: the results to draw ('-': stdin)"},
        {.name = "out",
         .arg = "FILE",
         .kind = NF_OPT_STR,
         NF_OPT_TO(o.out),
         .given = &seen[1],
         .tag = K_ALL,
         .help = "the picture: .png, .svg, and for trees .dot"},
        {.name = "x",
         .arg = "KEY",
         .kind = NF_OPT_STR,
         NF_OPT_TO(o.x),
         .given = &seen[2],
         .tag = K_LATENCY,
         .help = "the key on the x axis (default offered)"},
        {.name = "y",
         .arg = "KEY",
         .kind = NF_OPT_STR,
         NF_OPT_TO(o.y),
         .given = &seen[3],
         .tag = K_LATENCY,
         .help = "the key on the y axis (default lat_mean)"},
        {.name = "series",
         .arg = "K1,K2...",
         .kind = NF_OPT_STR,
         NF_OPT_TO(o.series),
         .given = &seen[4],
         .tag = K_LATENCY,
         .help = "the keys whose values make the lines (default: those of topo, routing, "
                 "traffic, seed, engine, groups with more than one value among the rows; '' for "
                 "one line)"},
        {.name = "title",
         .arg = "T",
         .kind = NF_OPT_STR,
         NF_OPT_TO(o.title),
         .given = &seen[5],
         .tag = K_ALL,
         .help = "the title (default: the input's name, or the group)"},
        {.name = "xlabel",
         .arg = "T",
         .kind = NF_OPT_STR,
         NF_OPT_TO(o.xlabel),
         .given = &seen[6],
         .tag = K_LATENCY,
         .help = "the x axis label (default: the key)"},
        {.name = "ylabel",
         .arg = "T",
         .kind = NF_OPT_STR,
         NF_OPT_TO(o.ylabel),
         .given = &seen[7],
         .tag = K_LATENCY,
         .help = "the y axis label (default: the key)"},
        {.name = "script",
         .arg = "FILE",
         .kind = NF_OPT_STR,
         NF_OPT_TO(o.script),
         .given = &seen[8],
         .tag = K_LATENCY | K_EFI,
         .help = "also write the gnuplot input to FILE ('-': stdout): the commands, then per "
                 "line drawn a '# series N: TITLE' comment and its inline data block ending in "
                 "'e'"},
        {.name = "topo",
         .arg = "SPEC",
         .kind = NF_OPT_STR,
         NF_OPT_TO(o.topo),
         .given = &seen[9],
         .tag = K_TREE,
         .help = "tree: the fabric"},
        {.name = "groups",
         .arg = "PATTERN",
         .kind = NF_OPT_STR,
         NF_OPT_TO(o.groups),
         .given = &seen[10],
         .tag = K_TREE,
         .help = "tree: the workload, as in netfab mcast"},
        {.name = "group",
         .arg = "N",
         .kind = NF_OPT_UINT,
         NF_OPT_TO(o.group),
         .lo = 0,
         .hi = UINT32_MAX,
         .given = &seen[11],
         .tag = K_TREE,
         .help = "tree: the group to draw, 0 for the pattern's first"},
        {.name = "engine",
         .arg = "NAME",
         .kind = NF_OPT_STR,
         NF_OPT_TO(o.engine),
         .given = &seen[12],
         .tag = K_TREE,
         .help = "tree: the multicast engine (default fulb; see netfab mcast)"},
        {.name = "procs-per-node",
         .arg = "N",
         .kind = NF_OPT_UINT,
         NF_OPT_TO(o.w.procs_per_node),
         .lo = 1,
         .hi = 1024,
         .given = &seen[13],
         .tag = K_TREE,
         .help = "tree: ranks per endpoint, as in netfab mcast (default 1)"},
        {.name = "mapping",
         .kind = NF_OPT_CHOICE,
         NF_OPT_TO(o.w.mapping),
         .choices = mappings,
         .given = &seen[14],
         .tag = K_TREE,
         .help = "tree: the ranks' mapping, as in netfab mcast (default aware)"},
        {.name = "seed",
         .arg = "S",
         .kind = NF_OPT_SEED,
         NF_OPT_TO(o.w.seed),
         .given = &seen[15],
         .tag = K_TREE,
         .help = "tree: the workload's seed, as in netfab mcast (default 1)"},
        {.name = "to-saturation",
         .kind = NF_OPT_FLAG,
         NF_OPT_TO(o.to_saturation),
         .given = &seen[16],
         .tag = K_LATENCY,
         .help = "latency: each line ends at its first saturated point"},
    };
    const nf_cmd_spec spec = {
        .name = "plot",
        .synopsis =
            "netfab plot latency --in FILE.json --out FILE.png|svg [--x KEY] [--y KEY]\n"
            "                           [--series KEY[,KEY...]] [--title T] [--xlabel T]\n"
            "                           [--ylabel T] [--to-saturation] [--script FILE]\n"
            "       netfab plot efi --in FILE.json --out FILE.png|svg [--title T] [--script FILE]\n"
            "       netfab plot tree --topo SPEC --groups PATTERN --group N --out "
            "FILE.png|svg|dot\n"
            "                        [--engine NAME] [--procs-per-node N] [--mapping "
            "aware|random]\n"
            "                        [--seed S] [--title T]\n",
        .description =
            "Draws results as pictures; the --out suffix picks the format: .png (gnuplot's\n"
            "pngcairo, dot -Tpng), .svg, and for trees .dot (the Graphviz text, no dot needed).\n"
            "--in - reads standard input.\n",
        .more = plot_kinds,
        .group = {{"options", lo, N_OPTS}},
        .examples =
            "  netfab plot latency --in sweep.json --out sweep.png --series routing\n"
            "  netfab sim --topo torus:4x4,c=1 --routing dor --traffic uniform --sweep 0.1:0.9:0.2 "
            "\\\n"
            "      --json >s.json\n"
            "  netfab plot latency --in s.json --out s.svg --y lat_p99\n"
            "  netfab mcast --topo fattree:k=8 --groups grid2d:8x16 --json >m.json\n"
            "  netfab plot efi --in m.json --out efi.png\n"
            "  netfab plot tree --topo fattree:k=4 --groups grid2d:4x4 --group 5 --out t.svg\n",
        .max_args = 1};
    int argi, ex = nf_opt_parse(&spec, argc, argv, &argi);
    if (ex) return ex == NF_OPT_HELP ? NF_EXIT_OK : ex;
    o.have_group = seen[11];
    const char *why = NULL;
    if (argi == argc) why = "what to plot? latency, efi or tree";
    for (int i = 0; i < 3 && !why; i++)
        if (strcmp(argv[argi], kind_name[i]) == 0) o.kind = 1 << i;
    if (!why && !o.kind) {
        fprintf(stderr, "netfab plot: unknown kind '%s' (latency, efi or tree)\n", argv[argi]);
        return NF_EXIT_USAGE;
    }
    for (int i = 0; i < N_OPTS && !why; i++)
        if (seen[i] && !(lo[i].tag & o.kind)) {
            fprintf(stderr, "netfab plot: --%s does not apply to %s\n", lo[i].name, argv[argi]);
            return NF_EXIT_USAGE;
        }
    out_fmt fmt = o.out ? out_format(o.out) : F_BAD;
    if (!why && o.kind != K_TREE && !o.in)
        why = "--in FILE.json is required ('-' for stdin)";
    else if (!why && !o.out)
        why = "--out FILE is required (.png or .svg; .dot for a tree)";
    else if (!why && (fmt == F_BAD || (fmt == F_DOT && o.kind != K_TREE)))
        why = o.kind == K_TREE ? "--out wants a .png, .svg or .dot file"
                               : "--out wants a .png or .svg file";
    for (const char *c = o.out; !why && c && *c; c++)
        if ((unsigned char)*c < 0x20) why = "--out: no control characters in the name, please";
    if (why) {
        fprintf(stderr, "netfab plot: %s\ntry 'netfab plot --help'\n", why);
        return NF_EXIT_USAGE;
    }
    return o.kind == K_LATENCY ? plot_latency(&o) : o.kind == K_EFI ? plot_efi(&o) : plot_tree(&o);
}
