/* SPDX-License-Identifier: MIT */
/* gnuplot scripts: quoting, the lines every plot starts with, and running gnuplot on a pipe
 * (spawn.c) into an output file written whole or not at all (util/afile.h). */
#define _GNU_SOURCE
#include "gnuplot.h"
#include "cmd.h"
#include "spawn.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

void nf_app_gnuplot_quote(FILE *o, const char *s) {
    putc('\'', o);
    for (; *s; s++)
        if (*s == '\'')
            fputs("''", o);
        else
            putc((unsigned char)*s < 0x20 || *s == 0x7f ? ' ' : *s, o);
    putc('\'', o);
}

void nf_app_gnuplot_head(FILE *o, const char *path, unsigned width, unsigned height,
                         const char *title, const char *xlabel, const char *ylabel) {
    const char *dot = strrchr(path, '.'), *slash = strrchr(path, '/');
    if (dot && (!slash || dot > slash) && strcasecmp(dot, ".svg") == 0)
        fprintf(o, "set terminal svg size %u,%u noenhanced background rgb 'white'\n", width,
                height);
    else
        fprintf(o, "set terminal pngcairo size %u,%u noenhanced\n", width, height);
    fputs("set title ", o);
    nf_app_gnuplot_quote(o, title);
    fputs("\nset xlabel ", o);
    nf_app_gnuplot_quote(o, xlabel);
    fputs("\nset ylabel ", o);
    nf_app_gnuplot_quote(o, ylabel);
    fputc('\n', o);
}

/* gnuplot's scripts are made without `set output`: the image is drawn into a temporary file
 * that replaces the target only once complete. */
void nf_app_gnuplot_put(FILE *o, const char *text, size_t len, const char *name) {
    const char *nl = memchr(text, '\n', len);
    size_t head = nl ? (size_t)(nl - text) + 1 : len;
    fwrite(text, 1, head, o);
    fputs("set output ", o);
    nf_app_gnuplot_quote(o, name);
    fputc('\n', o);
    fwrite(text + head, 1, len - head, o);
}

int nf_app_run_gnuplot(const char *who, const char *text, size_t len, const char *out) {
    nf__afile a;
    if (!nf_app_out_open(&a, who, out)) return NF_EXIT_FAIL;
    char *full = NULL;
    size_t flen = 0;
    FILE *m = open_memstream(&full, &flen);
    if (m) nf_app_gnuplot_put(m, text, len, nf_app_out_name(&a, out));
    if (!m || fclose(m) != 0) {
        free(full);
        nf__afile_abort(&a);
        return nf_app_report(NF_ENOMEM, NULL);
    }
    char *args[] = {"gnuplot", NULL};
    int status = nf_app_run_tool(who, args, full, flen, &a, out, "apt-get install gnuplot-nox");
    free(full);
    return status;
}
