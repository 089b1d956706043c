/* SPDX-License-Identifier: MIT */
/* Result rows: numbers read from JSON, fields written as CSV. */
#include "rows.h"

#include <string.h>

bool nf_app_json_number(const json_t *v, double *out) {
    if (json_is_integer(v))
        *out = (double)json_integer_value(v);
    else if (json_is_real(v))
        *out = json_real_value(v);
    else
        return false;
    return true;
}

void nf_app_csv_field(FILE *o, const char *s) {
    if (!strpbrk(s, ",\"\n\r")) {
        fputs(s, o);
        return;
    }
    fputc('"', o);
    for (; *s; s++) {
        if (*s == '"') fputc('"', o);
        fputc(*s, o);
    }
    fputc('"', o);
}
