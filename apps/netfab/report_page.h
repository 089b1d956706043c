/* SPDX-License-Identifier: MIT */
/* netfab report's page: DIR/index.html, each step's section with its plot, its table and the
 * comparison beside what the paper reports, grouped by paper; its template and text are data
 * files. */
#ifndef NETFAB_APP_REPORT_PAGE_H
#define NETFAB_APP_REPORT_PAGE_H

#include "report_jobs.h"
#include "report_steps.h"

#include <stdio.h>

/* s as HTML text: < > & " escaped. */
void report_html_text(FILE *h, const char *s);

/* The page's form and words, from netfab's data files (datadir.h): report/page.html, the
 * skeleton, whose fields @css@ @version@ @scale@ @when@ @seconds@ @command@ @seed@
 * @processors@ and @sections@ are filled in (@sections@ required); report/page.css;
 * report/papers.txt, each paper's heading; report/STEP.txt per step, what it runs and what its
 * paper reports. Text files hold '#' comment lines, then parts opened by a line "KEY:" whose
 * lines are joined by a space; the text is HTML. */
typedef struct report_text report_text;

/* Reads them all into *out (report_text_free). NF_EXIT_OK, or NF_EXIT_FAIL after naming the
 * file missing or wrong and why. */
int report_text_load(report_text **out);
void report_text_free(report_text *t);

/* Writes DIR/index.html whole for the steps run as jobs[i] (one per report_steps[i]), which
 * took wall seconds, made by the command line argv, in t's form and words. NF_EXIT_OK when
 * every selected step ran; NF_EXIT_FAIL when one failed (its section says so) or the page cannot
 * be written. */
int report_page_write(const report_text *t, const report_ctx *x, const report_job *jobs,
                      double wall, int argc, char **argv);

#endif
