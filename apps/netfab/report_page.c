/* SPDX-License-Identifier: MIT */
/* netfab report's page: the template (page.html with its @fields@), style and text read from the
 * data files, then the rows each step wrote read back, its table, plot and comparison set beside
 * what the paper reports, all written as one HTML file. */
#define _GNU_SOURCE
#include "report_page.h"
#include "cmd.h"
#include "datadir.h"
#include "exp.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

void report_html_text(FILE *h, const char *s) {
    for (; s && *s; s++) {
        switch (*s) {
        case '<': fputs("&lt;", h); break;
        case '>': fputs("&gt;", h); break;
        case '&': fputs("&amp;", h); break;
        case '"': fputs("&quot;", h); break;
        default: fputc(*s, h);
        }
    }
}

/* The rows a step wrote: data/NAME.json, or data/NAME-0.json, NAME-1.json ... concatenated;
 * an array, or the "rows" of an object. NULL when there is none. */
static json_t *load_rows(const report_ctx *x, const report_step *st) {
    json_t *all = json_array();
    for (int k = -1; k < REPORT_MAX_CMDS; k++) {
        char path[PATH_MAX];
        if (k < 0)
            snprintf(path, sizeof path, "%s/data/%s.json", x->dir, st->name);
        else
            snprintf(path, sizeof path, "%s/data/%s-%d.json", x->dir, st->name, k);
        json_t *d = json_load_file(path, 0, NULL);
        if (!d) continue;
        json_t *rows = json_is_array(d) ? d : json_object_get(d, "rows");
        json_array_extend(all, rows);
        json_decref(d);
    }
    if (json_array_size(all) == 0) {
        json_decref(all);
        return NULL;
    }
    return all;
}

static void html_table(FILE *h, json_t *rows, const char *const *cols) {
    json_t *keys = json_array();
    size_t i;
    json_t *r;
    if (cols) {
        for (; *cols; cols++)
            json_array_append_new(keys, json_string(*cols));
    } else {
        json_array_foreach(rows, i, r) {
            const char *k;
            json_t *v;
            json_object_foreach(r, k, v) {
                bool seen = false;
                for (size_t j = 0; j < json_array_size(keys) && !seen; j++)
                    seen = !strcmp(json_string_value(json_array_get(keys, j)), k);
                if (!seen && !json_is_array(v) && !json_is_object(v))
                    json_array_append_new(keys, json_string(k));
            }
        }
    }
    fputs("<div class=\"scroll\"><table>\n<tr>", h);
    for (size_t j = 0; j < json_array_size(keys); j++) {
        fputs("<th>", h);
        report_html_text(h, json_string_value(json_array_get(keys, j)));
        fputs("</th>", h);
    }
    fputs("</tr>\n", h);
    char buf[64];
    json_array_foreach(rows, i, r) {
        fputs("<tr>", h);
        for (size_t j = 0; j < json_array_size(keys); j++) {
            json_t *v = json_object_get(r, json_string_value(json_array_get(keys, j)));
            fputs(json_is_number(v) ? "<td class=\"n\">" : "<td>", h);
            report_html_text(h, exp_cell_text(v, buf));
            fputs("</td>", h);
        }
        fputs("</tr>\n", h);
    }
    fputs("</table></div>\n", h);
    json_decref(keys);
}

/* ---- the page's text: data files ------------------------------------------------------------ */

struct report_text {
    char *page, *css;
    const char *paper_heading[REPORT_N_STEPS]; /* by step: its paper's heading (borrowed) */
    char *what[REPORT_N_STEPS], *paper[REPORT_N_STEPS];
    char *headings[3]; /* papers.txt's, owned */
};

static const char *const paper_ids[3] = {"M", "S", "U"};

/* The fields of page.html, in the order report_page_write fills them. */
static const char *const fields[] = {"css",     "version", "scale",      "when",    "seconds",
                                     "command", "seed",    "processors", "sections"};
enum { N_FIELDS = sizeof fields / sizeof fields[0], F_SECTIONS = N_FIELDS - 1 };

/* The field named at s (just after an '@'): its index, and its length in *len; -1 when s does
 * not start "name@" with a known name. */
static int field_at(const char *s, size_t *len) {
    size_t n = strspn(s, "abcdefghijklmnopqrstuvwxyz");
    if (s[n] != '@') return -1;
    for (int i = 0; i < N_FIELDS; i++)
        if (strlen(fields[i]) == n && !strncmp(fields[i], s, n)) {
            *len = n;
            return i;
        }
    return -1;
}

/* Splits the data file rel ('#' comment lines and blank lines, then parts each opened by a line
 * "KEY:") into the parts named keys[0..n): vals[i] the lines of part keys[i] joined by one
 * space (blank lines dropped), owned by the caller. NF_EXIT_OK, or NF_EXIT_FAIL after saying
 * what is wrong where: text before the first key, an unknown or repeated key, a part missing or
 * empty (vals all NULL then). */
static int read_parts(const char *rel, const char *const *keys, size_t n, char **vals) {
    char *text = nf_app_data_read("netfab report", rel, NULL);
    if (!text) return NF_EXIT_FAIL;
    size_t len[8] = {0}; /* n <= 8 */
    int cur = -1, ex = NF_EXIT_OK;
    unsigned line = 0;
    for (size_t i = 0; i < n; i++)
        vals[i] = NULL;
    for (char *p = text, *nl; p && *p && !ex; p = nl) {
        if ((nl = strchr(p, '\n'))) *nl++ = '\0';
        line++;
        p[strcspn(p, "\r")] = '\0';
        size_t pl = strlen(p), kl = strspn(p, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                              "0123456789_-");
        const char *why = NULL;
        if (kl > 0 && kl + 1 == pl && p[kl] == ':') { /* KEY: */
            cur = -1;
            for (size_t i = 0; i < n; i++)
                if (strlen(keys[i]) == kl && !strncmp(keys[i], p, kl)) cur = (int)i;
            why = cur < 0     ? "a part the report does not know"
                  : vals[cur] ? "a part given twice"
                              : NULL;
            if (!why && !(vals[cur] = calloc(1, 1))) why = "out of memory";
        } else if (pl > 0 && !(cur < 0 && p[0] == '#')) {
            char *grown = cur < 0 ? NULL : realloc(vals[cur], len[cur] + pl + 2);
            if (cur < 0)
                why = "text before the first part (a line \"KEY:\")";
            else if (!grown)
                why = "out of memory";
            else {
                vals[cur] = grown;
                if (len[cur]) grown[len[cur]++] = ' ';
                memcpy(grown + len[cur], p, pl + 1);
                len[cur] += pl;
            }
        }
        if (why) {
            fprintf(stderr, "netfab report: data file %s:%u: %s: %s\n", rel, line, why, p);
            ex = NF_EXIT_FAIL;
        }
    }
    for (size_t i = 0; i < n && !ex; i++)
        if (!len[i]) {
            fprintf(stderr, "netfab report: data file %s: no text for \"%s:\"\n", rel, keys[i]);
            ex = NF_EXIT_FAIL;
        }
    free(text);
    for (size_t i = 0; i < n && ex; i++) {
        free(vals[i]);
        vals[i] = NULL;
    }
    return ex;
}

int report_text_load(report_text **out) {
    report_text *t = calloc(1, sizeof *t);
    *out = NULL;
    if (!t) return nf_app_report(NF_ENOMEM, NULL);
    int ex = NF_EXIT_OK;
    if (!(t->page = nf_app_data_read("netfab report", "report/page.html", NULL)) ||
        !(t->css = nf_app_data_read("netfab report", "report/page.css", NULL)))
        ex = NF_EXIT_FAIL;
    bool sections = false;
    for (const char *p = t->page; !ex && (p = strchr(p, '@')); p++) {
        size_t len;
        int f = field_at(p + 1, &len);
        if (f < 0 && strspn(p + 1, "abcdefghijklmnopqrstuvwxyz") > 0 &&
            p[1 + strspn(p + 1, "abcdefghijklmnopqrstuvwxyz")] == '@') {
            fprintf(stderr, "netfab report: data file report/page.html: unknown field @%.*s@\n",
                    (int)strspn(p + 1, "abcdefghijklmnopqrstuvwxyz"), p + 1);
            ex = NF_EXIT_FAIL;
        }
        if (f == F_SECTIONS) sections = true;
        if (f >= 0) p += len + 1;
    }
    if (!ex && !sections) {
        fprintf(stderr, "netfab report: data file report/page.html: no @sections@ field\n");
        ex = NF_EXIT_FAIL;
    }
    if (!ex) ex = read_parts("report/papers.txt", paper_ids, 3, t->headings);
    for (size_t i = 0; i < REPORT_N_STEPS && !ex; i++) {
        const report_step *st = &report_steps[i];
        char rel[128];
        snprintf(rel, sizeof rel, "report/%s.txt", st->name);
        char *parts[2];
        ex = read_parts(rel, (const char *const[]){"what", "paper"}, 2, parts);
        if (!ex) t->what[i] = parts[0], t->paper[i] = parts[1];
        for (int k = 0; k < 3 && !ex; k++)
            if (!strcmp(st->seed_paper, paper_ids[k])) t->paper_heading[i] = t->headings[k];
    }
    if (ex) {
        report_text_free(t);
        return ex;
    }
    *out = t;
    return NF_EXIT_OK;
}

void report_text_free(report_text *t) {
    if (!t) return;
    free(t->page);
    free(t->css);
    for (size_t i = 0; i < REPORT_N_STEPS; i++) {
        free(t->what[i]);
        free(t->paper[i]);
    }
    for (int k = 0; k < 3; k++)
        free(t->headings[k]);
    free(t);
}

/* Each selected step's section, grouped under its paper's heading; NF_EXIT_FAIL when a step
 * failed (its section says so), else NF_EXIT_OK. */
static int write_sections(FILE *h, const report_text *t, const report_ctx *x,
                          const report_job *jobs) {
    int ex = NF_EXIT_OK;
    const char *seed = "";
    for (size_t i = 0; i < REPORT_N_STEPS; i++) {
        const report_step *st = &report_steps[i];
        const report_job *j = &jobs[i];
        if (!j->selected) continue;
        if (strcmp(seed, st->seed_paper)) {
            seed = st->seed_paper;
            fprintf(h, "<h2>%s</h2>\n", t->paper_heading[i]);
        }
        fprintf(h, "<section id=\"%s\">\n<h3>%s</h3>\n<p>%s", st->name, st->title, t->what[i]);
        fprintf(h, " (%.1f s)</p>\n<div class=\"pair\">\n<div class=\"ours\">\n", j->took);
        json_t *rows = j->status ? NULL : load_rows(x, st);
        char img[PATH_MAX];
        snprintf(img, sizeof img, "%s/img/%s.png", x->dir, st->name);
        if (j->status || !rows) {
            fprintf(h,
                    "<p class=\"fail\">This step failed (exit %d); its log: <a "
                    "href=\"data/%s.log\">data/%s.log</a>.</p>\n",
                    j->status, st->name, st->name);
            ex = NF_EXIT_FAIL;
        } else {
            if (access(img, R_OK) == 0)
                fprintf(h, "<img src=\"img/%s.png\" alt=\"%s\" width=\"800\" height=\"520\">\n",
                        st->name, st->title);
            if (st->compare) {
                fputs("<p class=\"here\"><b>Here:</b> ", h);
                st->compare(h, rows);
                fputs("</p>\n", h);
            }
            html_table(h, rows, st->cols);
        }
        json_decref(rows);
        fputs("</div>\n<div class=\"paper\"><b>The paper", h);
        fprintf(h, " [%s]:</b> %s</div>\n</div>\n</section>\n", st->seed_paper, t->paper[i]);
    }
    return ex;
}

int report_page_write(const report_text *t, const report_ctx *x, const report_job *jobs,
                      double wall, int argc, char **argv) {
    char *sections = NULL, *command = NULL;
    size_t len = 0;
    int ex = NF_EXIT_OK;
    FILE *s = open_memstream(&sections, &len);
    if (s) ex = write_sections(s, t, x, jobs);
    FILE *c = s && fclose(s) == 0 ? open_memstream(&command, &len) : NULL;
    for (int i = 0; c && i < argc; i++) {
        if (i) fputc(' ', c);
        report_html_text(c, argv[i]);
    }
    if (!c || fclose(c) != 0) {
        free(sections);
        free(command);
        return nf_app_report(NF_ENOMEM, NULL);
    }
    time_t now = time(NULL);
    char when[64], seconds[32], seed[32], procs[32];
    strftime(when, sizeof when, "%Y-%m-%d %H:%M UTC", gmtime(&now));
    snprintf(seconds, sizeof seconds, "%.0f", wall);
    snprintf(seed, sizeof seed, "%llu", (unsigned long long)x->seed);
    snprintf(procs, sizeof procs, "%ld", sysconf(_SC_NPROCESSORS_ONLN));
    const char *val[N_FIELDS] = {
        t->css, NF_VERSION_STRING, x->full ? "full" : "quick", when, seconds, command, seed,
        procs,  sections};
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/index.html", x->dir);
    nf__afile page;
    FILE *h = nf_app_out_open(&page, "netfab report", path);
    if (h) { /* the template with its @fields@ filled */
        for (const char *p = t->page; *p;) {
            const char *at = strchr(p, '@');
            if (!at) {
                fputs(p, h);
                break;
            }
            fwrite(p, 1, (size_t)(at - p), h);
            size_t n;
            int f = field_at(at + 1, &n);
            if (f < 0) {
                fputc('@', h);
                p = at + 1;
            } else {
                fputs(val[f], h);
                p = at + n + 2;
            }
        }
    }
    free(sections);
    free(command);
    if (!h || nf_app_out_close(&page, "netfab report", path, ferror(h) ? NF_EIO : 0))
        return NF_EXIT_FAIL;
    return ex;
}
