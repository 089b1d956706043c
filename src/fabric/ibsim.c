/* SPDX-License-Identifier: MIT */
/* ibsim's net file format. Reading is done by the shared block reader (ibtext.c) in its ibsim
 * dialect (free-form node ids, w=/s= options, include/do lines). Writing gives GUIDs in key lines
 * and node ids and names in header comments, so parse(write(f)) gives f back, and ibsim reads it
 * with our GUIDs. */
#include "netfab/ibsim.h"
#include "fabric/ibtext.h"

int nf_ibsim_parse(const char *text, size_t len, const char *filename, const nf_load_opts *opts,
                   nf_fabric **out, nf_diag *diag) {
    return nf__ibtext_parse(text, len, NF__IBTEXT_IBSIM, filename, opts, out, diag);
}

/* What ibsim (0.10) needs, beyond the ibnetdiscover layout it was made to read: a blank line
 * between blocks (a block ends at the first line that is neither a port line nor a comment, and
 * that line is consumed), lines under 256 bytes, and no '=' after a port unless it is a w=/s=
 * option. Width and speed ride in the "lid N 4xEDR" tail of the comment, which ibsim reads. A
 * "switchguid=G" or "caguid=G" line above each block gives ibsim the node GUID (ibsim takes it as
 * the GUID of the next node of that kind); the ids spell it too, for our reader. ibsim derives CA
 * port GUIDs itself (node GUID + port number) and skips ours in "(guid)". */
int nf_ibsim_write(const nf_fabric *f, FILE *out) {
    fprintf(
        out,
        "# ibsim net file written by netfab %s: %u switches, %u CAs, %u links.\n"
        "# Node ids are \"S-\"/\"H-\" and the node GUID; node names are in the header comments.\n",
        NF_VERSION_STRING, f->n_switches, f->n_cas, f->n_links);
    for (nf_node n = 0; n < f->n_nodes; n++)
        nf__ibtext_put_block(f, n, NF__IBTEXT_IBSIM, out);
    return ferror(out) ? NF_EIO : NF_OK;
}
