/* SPDX-License-Identifier: MIT */
/* Internal: the reader shared by the two block-structured text formats (ibnetdiscover output and
 * ibsim net files) and the block writer they share. nf_ibnet_parse and nf_ibsim_parse are
 * thin wrappers over nf__ibtext_parse. */
#ifndef NF_FABRIC_IBTEXT_H
#define NF_FABRIC_IBTEXT_H

#include "netfab/fabric.h"
#include "netfab/io.h"

#include <stdio.h>

typedef enum nf__ibtext_dialect {
    NF__IBTEXT_IBNET, /* ids must be "S-"/"H-"/"R-" + hex GUID */
    NF__IBTEXT_IBSIM, /* ids are free strings; include/do lines; w=/s= port options */
} nf__ibtext_dialect;

/* Parses text in the given dialect. Same contract as nf_ibnet_parse. */
int nf__ibtext_parse(const char *text, size_t len, nf__ibtext_dialect dialect, const char *filename,
                     const nf_load_opts *opts, nf_fabric **out, nf_diag *diag);

/* Writes node n as one block: a blank line, key lines, the header and a line per connected port,
 * in ibnetdiscover's layout. Names are quoted with '"' replaced by '\'' and control characters by
 * ' ', so that the readers find the closing quote. The ibsim dialect writes no key lines (they are
 * what tells the two formats apart, see nf_io_detect), says "Hca" for CAs and adds w=/s= options
 * where the comment cannot carry a width or speed. */
void nf__ibtext_put_block(const nf_fabric *f, nf_node n, nf__ibtext_dialect dialect, FILE *out);

#endif
