/* SPDX-License-Identifier: MIT */
/* Result rows, as the commands print them (JSON objects, CSV lines) and read them back (plot,
 * exp --plot, report): the one way to take a number from a JSON value and to write a CSV
 * field. */
#ifndef NETFAB_APP_ROWS_H
#define NETFAB_APP_ROWS_H

#include <jansson.h>
#include <stdbool.h>
#include <stdio.h>

/* A JSON integer or real as a double in *out: true; false for anything else (missing, string,
 * boolean...), *out untouched then, so the caller's default stands. */
bool nf_app_json_number(const json_t *v, double *out);

/* s as a CSV field (RFC 4180): as it is, or double-quoted with quotes doubled when it holds a
 * comma, a quote or a line break. */
void nf_app_csv_field(FILE *o, const char *s);

#endif
