/* SPDX-License-Identifier: MIT */
/* `netfab plot latency` and `netfab plot efi`: result rows (the JSON of sim, sweep or mcast) read,
 * sorted into series and written as a gnuplot script with the data inline, then drawn by
 * gnuplot (gnuplot.h). */
#define _GNU_SOURCE
#include "plot.h"
#include "cmd.h"
#include "gnuplot.h"
#include "rows.h"

#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

enum { MAX_KEYS = 16 };

/* The keys that tell rows apart when no --series is given, and the efi histograms' titles. */
static const char *const vary_keys[] = {"topo", "routing", "traffic", "seed", "engine", "groups"};
static const char *const efi_keys[] = {"topo",    "groups_spec",    "groups", "mapping",
                                       "routing", "procs_per_node", "seed"};
enum {
    N_VARY = sizeof vary_keys / sizeof *vary_keys,
    N_EFI_KEYS = sizeof efi_keys / sizeof *efi_keys
};

/* ---- small helpers ------------------------------------------------------------------------- */

/* A value as text for a series title: strings as they are, numbers as %g, "-" when missing. */
static const char *value_text(json_t *v, char buf[64]) {
    double d;
    if (json_is_string(v)) return json_string_value(v);
    if (json_is_boolean(v)) return json_is_true(v) ? "true" : "false";
    if (!nf_app_json_number(v, &d)) return "-";
    snprintf(buf, 64, "%.6g", d);
    return buf;
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
out_fmt out_format(const char *path) {
    const char *dot = strrchr(path, '.'), *slash = strrchr(path, '/');
    if (!dot || (slash && dot < slash)) return F_BAD;
    return strcasecmp(dot, ".png") == 0   ? F_PNG
           : strcasecmp(dot, ".svg") == 0 ? F_SVG
           : strcasecmp(dot, ".dot") == 0 ? F_DOT
                                          : F_BAD;
}

/* Writes len bytes of text to path ("-": stdout), with set output out when out is given. */
int plot_write_text(const char *path, const char *text, size_t len, const char *out) {
    nf__afile a;
    FILE *fp = nf_app_out_open(&a, "netfab plot", path);
    if (!fp) return NF_EXIT_FAIL;
    if (out)
        nf_app_gnuplot_put(fp, text, len, out);
    else
        fwrite(text, 1, len, fp);
    return nf_app_out_close(&a, "netfab plot", path, ferror(fp) ? NF_EIO : 0);
}

/* Hands a gnuplot script to gnuplot (and to --script first, so a failing plot can be looked at). */
static int run_gnuplot(const plot_opts *o, const char *text, size_t len) {
    int rc;
    if (o->script && (rc = plot_write_text(o->script, text, len, o->out))) return rc;
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

/* The terminal, title and labels every gnuplot plot starts with (its output: nf_app_gnuplot_put),
 * then the grid and the key. */
static void gnuplot_head(FILE *g, const plot_opts *o, const char *title, const char *xlabel,
                         const char *ylabel) {
    nf_app_gnuplot_head(g, o->out, 900, 560, title, xlabel, ylabel);
    fputs("set grid\nset key outside right top\n", g);
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
int plot_latency(const plot_opts *o) {
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
        if (!nf_app_json_number(json_object_get(row, xk), &x) ||
            !nf_app_json_number(json_object_get(row, yk), &y))
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
int plot_efi(const plot_opts *o) {
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
                  nf_app_json_number(json_array_get(pair, 0), &e) &&
                  nf_app_json_number(json_array_get(pair, 1), &l);
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
            nf_app_json_number(json_array_get(json_array_get(h, j), 0), &e);
            nf_app_json_number(json_array_get(json_array_get(h, j), 1), &l);
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
