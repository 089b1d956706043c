/* SPDX-License-Identifier: MIT */
/* Shared body of the reader fuzz targets: parse the bytes in one format; when that succeeds the
 * fabric must pass nf_fabric_check, and writing it and reading it back must give the same fabric
 * (nodes, names, ports, links, LIDs). Any crash, leak, sanitizer report or abort is a finding. */
#ifndef NF_FUZZ_COMMON_H
#define NF_FUZZ_COMMON_H

#include "netfab/io.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

static void fuzz_warn(void *ud, const char *file, int line, const char *msg) {
    (void)file;
    (void)line;
    *(size_t *)ud += msg[0] != '\0';
}

/* Names that cannot round-trip: the writers turn control characters into spaces, and the ibsim
 * writer trims names to 190 bytes to keep its lines within ibsim's 255. */
static int plain_names(const nf_fabric *f, size_t max_len) {
    for (nf_node n = 0; n < f->n_nodes; n++) {
        const unsigned char *s = (const unsigned char *)nf_node_name(f, n);
        size_t len = 0;
        for (; s[len]; len++)
            if (s[len] < 0x20 || s[len] == 0x7f) return 0;
        if (len > max_len) return 0;
    }
    return 1;
}

static int fuzz_one(const uint8_t *data, size_t size, nf_format fmt) {
    size_t warnings = 0;
    nf_load_opts opts = {.warn = fuzz_warn, .warn_ud = &warnings};
    nf_fabric *f = NULL;
    nf_diag d;
    if (nf_io_parse((const char *)data, size, fmt, "fuzz", &opts, &f, &d) != NF_OK) {
        if (f) abort(); /* a failed parse must leave *out NULL */
        return 0;
    }
    if (nf_fabric_check(f, &d) != NF_OK) abort();
    char *text = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&text, &len);
    if (!m) abort();
    if (nf_io_write(f, fmt, m) != NF_OK) abort();
    fclose(m);
    nf_fabric *g = NULL;
    if (nf_io_parse(text, len, fmt, "fuzz-rewritten", NULL, &g, &d) != NF_OK) abort();
    if (plain_names(f, fmt == NF_FMT_IBSIM ? 190 : SIZE_MAX) &&
        !nf_fabric_equal(f, g, true, false, &d))
        abort();
    free(text);
    nf_fabric_free(g);
    nf_fabric_free(f);
    return 0;
}

#endif
