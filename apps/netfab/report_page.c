/* SPDX-License-Identifier: MIT */
/* netfab report's page: the rows each step wrote read back, its table, plot and comparison set
 * beside what the paper reports, written as one HTML file. */
#define _GNU_SOURCE
#include "report_page.h"
#include "cmd.h"
#include "exp.h"

#include <limits.h>
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

static const char *paper_title(const char *id) {
    return !strcmp(id, "M")   ? "[M] Load-balanced multicast routing (FULB-MC): Chen, Zhou, He, "
                                "Qi, Computer Engineering and Applications, 2022"
           : !strcmp(id, "S") ? "[S] The interconnection network and message mechanism of the "
                                "Sunway exascale prototype: Gao et al., Chinese Journal of "
                                "Computers, 2021"
                              : "[U] UGAL adaptive routing on Dragonfly: an unsigned note "
                                "(UGAL: Kim, Dally, Scott, Abts, ISCA 2008)";
}

int report_page_write(const report_ctx *x, const report_job *jobs, double wall, int argc,
                      char **argv) {
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/index.html", x->dir);
    nf__afile page;
    FILE *h = nf_app_out_open(&page, "netfab report", path);
    if (!h) return NF_EXIT_FAIL;
    time_t t = time(NULL);
    char when[64];
    strftime(when, sizeof when, "%Y-%m-%d %H:%M UTC", gmtime(&t));
    fputs("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
          "<title>netfab: the papers' experiments reproduced</title>\n"
          "<style>\n"
          "body{font-family:sans-serif;max-width:1250px;margin:1em auto;padding:0 1em;"
          "color:#222}\n"
          "h1{font-size:1.5em}h2{border-bottom:2px solid #369;margin-top:2em}\n"
          ".pair{display:flex;gap:1.5em;align-items:flex-start;flex-wrap:wrap}\n"
          ".ours{flex:1 1 640px}.paper{flex:0 1 420px;background:#f4f7fb;border-left:4px solid "
          "#369;padding:.5em 1em}\n"
          ".here{background:#eef7ee;border-left:4px solid #393;padding:.5em 1em}\n"
          ".fail{background:#fbeeee;border-left:4px solid #c33;padding:.5em 1em}\n"
          "img{max-width:100%;height:auto}table{border-collapse:collapse;font-size:.85em}\n"
          "td,th{border:1px solid #ccc;padding:2px 6px}td.n{text-align:right}\n"
          ".scroll{max-height:24em;overflow:auto}code{background:#f2f2f2}\n"
          "</style>\n</head>\n<body>\n",
          h);
    fprintf(h, "<h1>netfab %s: the papers' experiments reproduced</h1>\n", NF_VERSION_STRING);
    fprintf(h, "<p>Scale: <b>%s</b>. Made %s in %.0f s by <code>", x->full ? "full" : "quick", when,
            wall);
    for (int i = 0; i < argc; i++) {
        if (i) fputc(' ', h);
        report_html_text(h, argv[i]);
    }
    fprintf(h,
            "</code> (seed %llu, %ld processors). Every step's data and log are in "
            "<code>data/</code>.</p>\n",
            (unsigned long long)x->seed, sysconf(_SC_NPROCESSORS_ONLN));
    int ex = NF_EXIT_OK;
    const char *seed = "";
    for (size_t i = 0; i < REPORT_N_STEPS; i++) {
        const report_step *st = &report_steps[i];
        const report_job *j = &jobs[i];
        if (!j->selected) continue;
        if (strcmp(seed, st->seed_paper)) {
            seed = st->seed_paper;
            fprintf(h, "<h2>%s</h2>\n", paper_title(seed));
        }
        fprintf(h, "<section id=\"%s\">\n<h3>%s</h3>\n<p>%s", st->name, st->title, st->what);
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
        fprintf(h, " [%s]:</b> %s</div>\n</div>\n</section>\n", st->seed_paper,
                st->paper ? st->paper : "nothing to compare.");
    }
    fputs("</body>\n</html>\n", h);
    if (nf_app_out_close(&page, "netfab report", path, ferror(h) ? NF_EIO : 0)) return NF_EXIT_FAIL;
    return ex;
}
