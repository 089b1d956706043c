/* SPDX-License-Identifier: MIT */
/* netfab report's page: DIR/index.html, each step's section with its plot, its table and the
 * comparison beside what the paper reports, grouped by paper. */
#ifndef NETFAB_APP_REPORT_PAGE_H
#define NETFAB_APP_REPORT_PAGE_H

#include "report_jobs.h"
#include "report_steps.h"

#include <stdio.h>

/* s as HTML text: < > & " escaped. */
void report_html_text(FILE *h, const char *s);

/* Writes DIR/index.html whole for the steps run as jobs[i] (one per report_steps[i]), which
 * took wall seconds, made by the command line argv. NF_EXIT_OK when every selected step ran;
 * NF_EXIT_FAIL when one failed (its section says so) or the page cannot be written. */
int report_page_write(const report_ctx *x, const report_job *jobs, double wall, int argc,
                      char **argv);

#endif
