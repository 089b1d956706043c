/* SPDX-License-Identifier: MIT */
/* ibsim's net file format: ibnetdiscover-like blocks with bare node ids (Switch/Hca/Ca).
 * Reading is lenient where real dumps vary and strict where the structure is wrong. */
#ifndef NETFAB_IBSIM_H
#define NETFAB_IBSIM_H

#include "fabric.h"
#include "io.h"

#include <stdio.h>

/* Parses text (len bytes). On success *out owns a new fabric; on malformed input returns
 * NF_EPARSE with "what is wrong" and the line in diag. filename is used in diag only. */
NF_API int nf_ibsim_parse(const char *text, size_t len, const char *filename,
                          const nf_load_opts *opts, nf_fabric **out, nf_diag *diag);

/* Writes f in this format. Returns 0 or NF_EIO. */
NF_API int nf_ibsim_write(const nf_fabric *f, FILE *out);

#endif
