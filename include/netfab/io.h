/* SPDX-License-Identifier: MIT */
/* Reading and writing fabrics in real file formats. Formats are detected by content.
 * Parsers never print: errors come back as NF_EPARSE with "file:line: what" in diag, and skipped
 * material is reported through the warn callback. */
#ifndef NETFAB_IO_H
#define NETFAB_IO_H

#include "core.h"
#include "fabric.h"

#include <stdbool.h>
#include <stdio.h>

typedef enum nf_format {
    NF_FMT_AUTO = 0,
    NF_FMT_IBNET, /* ibnetdiscover output */
    NF_FMT_IBSIM, /* ibsim net file */
    NF_FMT_DOT,   /* Graphviz (write only) */
    NF_FMT_JSON,  /* netfab JSON (write only) */
} nf_format;

/* "ibnet", "ibsim", "dot", "json" -> format; NF_FMT_AUTO for an unknown name. */
NF_API nf_format nf_format_from_name(const char *name);
NF_API const char *nf_format_name(nf_format f);

typedef struct nf_load_opts {
    nf_warn_fn warn;
    void *warn_ud;
    /* ibnetdiscover output lists every link from both of its ends, so a link listed by one end
     * only, or a port whose peer has no block, means the file is cut short or incomplete: an
     * NF_EPARSE naming the first such line and the count. ibsim net files are held to the same
     * rule (ibsim refuses such a file). With partial set, such a file is read anyway: one-sided
     * links are kept, links to missing blocks dropped, and the two counts come as warnings. */
    bool partial;
} nf_load_opts;

/* Input limits of the text readers: a line longer than NF_IO_MAX_LINE bytes, a NUL byte (binary
 * input) or a file larger than NF_IO_MAX_BYTES is refused with NF_EPARSE, and nf_io_load stops
 * reading at the first of them, so reading /dev/zero or /dev/urandom fails at once in little
 * memory. */
#define NF_IO_MAX_LINE (64u * 1024u)
#define NF_IO_MAX_BYTES (1024ull * 1024u * 1024u)

/* Guesses the format of text: NF_FMT_IBSIM when a node header says "Hca" or names its node with a
 * free-form id (not S-/H-/R- and 16 hex digits); else NF_FMT_IBNET when ibnetdiscover's key lines
 * (vendid=, devid=, sysimgguid=, switchguid=, caguid=) appear; else NF_FMT_IBSIM when there are
 * node headers; NF_FMT_AUTO when it looks like neither. */
NF_API nf_format nf_io_detect(const char *text, size_t len);

/* Parses text (len bytes, need not be NUL-terminated) in format fmt (AUTO = detect). filename is
 * used in messages only. On success *out owns a new fabric. */
NF_API int nf_io_parse(const char *text, size_t len, nf_format fmt, const char *filename,
                       const nf_load_opts *opts, nf_fabric **out, nf_diag *diag);

/* Reads path and parses it. NF_EIO (with the reason in diag) when it cannot be read. */
NF_API int nf_io_load(const char *path, nf_format fmt, const nf_load_opts *opts, nf_fabric **out,
                      nf_diag *diag);

/* Writes f to out in format fmt (not AUTO). Returns 0, NF_EIO on a write error. */
NF_API int nf_io_write(const nf_fabric *f, nf_format fmt, FILE *out);

#endif
