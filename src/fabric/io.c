/* SPDX-License-Identifier: MIT */
/* Format detection and dispatch: read a file, guess its format from its content, hand it to the
 * right parser; write a fabric in a named format. */
#include "netfab/io.h"
#include "netfab/export.h"
#include "netfab/ibnet.h"
#include "netfab/ibsim.h"
#include "util/diag.h"
#include "util/mem.h"
#include "util/textfile.h"

#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static const char *const fmt_names[] = {"auto", "ibnet", "ibsim", "dot", "json"};

nf_format nf_format_from_name(const char *name) {
    for (int i = 1; i < (int)(sizeof fmt_names / sizeof fmt_names[0]); i++)
        if (strcmp(name, fmt_names[i]) == 0) return (nf_format)i;
    if (strcmp(name, "ibnetdiscover") == 0) return NF_FMT_IBNET;
    return NF_FMT_AUTO;
}

const char *nf_format_name(nf_format f) {
    return (unsigned)f < sizeof fmt_names / sizeof fmt_names[0] ? fmt_names[f] : "?";
}

/* Does the line [p, e) start, after blanks, with word? */
static bool starts_with(const char *p, const char *e, const char *word) {
    while (p < e && (*p == ' ' || *p == '\t'))
        p++;
    size_t n = strlen(word);
    return (size_t)(e - p) >= n && memcmp(p, word, n) == 0;
}

/* Is the quoted node id at q (just past the opening quote, line end e) an ibnetdiscover id,
 * "S-", "H-" or "R-" followed by 16 hex digits and a closing quote? */
static bool guid_id(const char *q, const char *e) {
    if (e - q < 19 || (q[0] != 'S' && q[0] != 'H' && q[0] != 'R') || q[1] != '-') return false;
    for (int i = 2; i < 18; i++)
        if (!isxdigit((unsigned char)q[i])) return false;
    return q[18] == '"';
}

/* ibnetdiscover prints key lines (vendid=, devid=, sysimgguid=, switchguid=, caguid=) before every
 * node header, names CAs "Ca" and nodes by S-/H-<guid>. ibsim net files name CAs "Hca" (or "Ca")
 * and nodes freely, and may carry key lines too. So: a header with "Hca" or a free-form id makes
 * the file ibsim; otherwise key lines make it ibnetdiscover; plain headers make it ibsim. */
nf_format nf_io_detect(const char *text, size_t len) {
    const char *p = text, *end = text + len;
    bool headers = false, keys = false;
    while (p < end) {
        const char *e = memchr(p, '\n', (size_t)(end - p));
        if (!e) e = end;
        if (starts_with(p, e, "vendid=") || starts_with(p, e, "devid=") ||
            starts_with(p, e, "switchguid=") || starts_with(p, e, "caguid=") ||
            starts_with(p, e, "sysimgguid="))
            keys = true;
        bool hca = starts_with(p, e, "Hca");
        if (hca || starts_with(p, e, "Switch") || starts_with(p, e, "Ca") ||
            starts_with(p, e, "Rt")) {
            const char *q = memchr(p, '"', (size_t)(e - p));
            if (q) {
                headers = true;
                if (hca || !guid_id(q + 1, e)) return NF_FMT_IBSIM;
            }
        }
        p = e + 1;
    }
    return keys ? NF_FMT_IBNET : headers ? NF_FMT_IBSIM : NF_FMT_AUTO;
}

int nf_io_parse(const char *text, size_t len, nf_format fmt, const char *filename,
                const nf_load_opts *opts, nf_fabric **out, nf_diag *diag) {
    *out = NULL;
    if (fmt == NF_FMT_AUTO) fmt = nf_io_detect(text, len);
    switch (fmt) {
    case NF_FMT_IBNET: return nf_ibnet_parse(text, len, filename, opts, out, diag);
    case NF_FMT_IBSIM: return nf_ibsim_parse(text, len, filename, opts, out, diag);
    case NF_FMT_AUTO:
        if (diag) {
            snprintf(diag->file, sizeof diag->file, "%s", filename ? filename : "");
            diag->line = 0;
            snprintf(
                diag->msg, sizeof diag->msg,
                "not a fabric file: no Switch/Ca/Hca node header or ibnetdiscover key line found");
        }
        return NF_EPARSE;
    default:
        if (diag) {
            snprintf(diag->file, sizeof diag->file, "%s", filename ? filename : "");
            diag->line = 0;
            snprintf(diag->msg, sizeof diag->msg, "%s is an output-only format",
                     nf_format_name(fmt));
        }
        return NF_EUNSUPPORTED;
    }
}

int nf_io_load(const char *path, nf_format fmt, const nf_load_opts *opts, nf_fabric **out,
               nf_diag *diag) {
    *out = NULL;
    char *buf;
    size_t len;
    int rc =
        nf__read_text(path, "a fabric file", NF_IO_MAX_BYTES, NF_IO_MAX_LINE, &buf, &len, diag);
    if (rc) return rc;
    rc = nf_io_parse(buf ? buf : "", len, fmt, path, opts, out, diag);
    nf__free(buf);
    return rc;
}

int nf_io_write(const nf_fabric *f, nf_format fmt, FILE *out) {
    switch (fmt) {
    case NF_FMT_IBNET: return nf_ibnet_write(f, out);
    case NF_FMT_IBSIM: return nf_ibsim_write(f, out);
    case NF_FMT_DOT: return nf_dot_write(f, out);
    case NF_FMT_JSON: return nf_json_write(f, out);
    default: return NF_EINVAL;
    }
}
