/* SPDX-License-Identifier: MIT */
/* netfab report's comparisons: from a step's rows, the figure measured here that matches what
 * the paper reports, as HTML for the page's "Here:" line (cmp_engines also a table). Numbers the
 * scale did not measure read "(not measured at this scale)" or NaN. */
#ifndef NETFAB_APP_REPORT_COMPARE_H
#define NETFAB_APP_REPORT_COMPARE_H

#include <jansson.h>
#include <stdio.h>

void report_cmp_engines(FILE *h, json_t *rows);   /* max EFI and routing time per engine */
void report_cmp_height(FILE *h, json_t *rows);    /* tree height 2 against 1 */
void report_cmp_efi(FILE *h, json_t *rows);       /* latency against EFI */
void report_cmp_workload(FILE *h, json_t *rows);  /* max EFI and latency per engine */
void report_cmp_coll(FILE *h, json_t *rows);      /* hardware allreduce against software */
void report_cmp_dual(FILE *h, json_t *rows);      /* one rail against two */
void report_cmp_faults(FILE *h, json_t *rows);    /* reachability with a leaf cut off */
void report_cmp_tables(FILE *h, json_t *rows);    /* two-level tables' memory saved */
void report_cmp_dragonfly(FILE *h, json_t *rows); /* saturation throughput per routing */
/* the fitted runs (issue 19) */
void report_cmp_height_fit(FILE *h, json_t *rows); /* height 2 against 1, router delay fitted */
void report_cmp_efi_fit(FILE *h, json_t *rows);    /* latency against EFI, period fitted */

/* congestion pre-awareness (issue 19): the background's latency with it and without */
void report_cmp_congestion(FILE *h, json_t *rows);

/* the Sunway prototype against TaihuLight (issue 39): the geometric means against the paper's 4x */
void report_cmp_taihulight(FILE *h, json_t *rows);

/* the Dragonfly routings at their papers' scale (issue 40): each way's most accepted load under
 * the worst case and uniform traffic on the largest fabric, against the papers' claims */
void report_cmp_q_adaptive(FILE *h, json_t *rows);
void report_cmp_proxies(FILE *h, json_t *rows);

#endif
