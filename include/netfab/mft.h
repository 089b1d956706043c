/* SPDX-License-Identifier: MIT */
/* Multicast forwarding tables as an InfiniBand subnet manager installs them: per switch, for each
 * MLID (0xC000 ..), the mask of ports (0 .. 255; port 0 is the switch itself) a packet of that
 * group leaves by. Read from the text the real tools print (infiniband-diags' dump_fts -M and
 * ibroute -M, OpenSM's opensm.mcfdbs; docs/real-tools.md), written in OpenSM's layout, and
 * analysed: each MLID's tree, its root, height and faults, and the link loads (EFI) of all. */
#ifndef NETFAB_MFT_H
#define NETFAB_MFT_H

#include "core.h"
#include "fabric.h"
#include "groups.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

typedef struct nf_mft nf_mft;

/* The multicast LID range. */
#define NF_MFT_MLID_LO 0xC000u
#define NF_MFT_MLID_HI 0xFFFEu

/* Empty tables for the switches of f (f outlives them). NULL when out of memory. Memory: one
 * 40-byte row per (switch, MLID) pair with a port set, plus a hash index of 8 + 4 + 1 bytes per
 * slot at most half full; nothing per absent pair. */
NF_API nf_mft *nf_mft_new(const nf_fabric *f);
NF_API void nf_mft_free(nf_mft *t); /* NULL is a no-op */

/* Adds (on) or removes port p of switch s to MLID mlid's mask. NF_EINVAL when s is no switch, p
 * is beyond s's ports or mlid is outside NF_MFT_MLID_LO .. NF_MFT_MLID_HI; NF_ENOMEM. */
NF_API int nf_mft_set(nf_mft *t, nf_node s, uint16_t mlid, unsigned p, bool on);

/* Whether port p of switch s is in mlid's mask (false for anything out of range). */
NF_API bool nf_mft_get(const nf_mft *t, nf_node s, uint16_t mlid, unsigned p);

/* The distinct MLIDs with a port set on some switch, ascending, into a new array *mlids (free
 * with nf_free; NULL when there are none), their number in *n. 0 or NF_ENOMEM. */
NF_API int nf_mft_mlids(const nf_mft *t, uint16_t **mlids, size_t *n);

/* Are a and b (over the same fabric) the same tables? On a difference, false and the first one
 * (lowest MLID, then switch in fabric order) in diag (optional). */
NF_API bool nf_mft_equal(const nf_mft *a, const nf_mft *b, nf_diag *diag);

/* Parses the tables in text (len bytes; need not be NUL-terminated) against f, in any of the
 * layouts, told apart per file by its first line that is not blank: dump_fts -M / ibroute -M
 * ("Multicast mlids [...] of switch ... guid 0x..."; the MLID lines read by column position under
 * the "Ports:" header), or OpenSM's opensm.mcfdbs ("Switch 0x<guid>", then "0xC001 : 0x001 ...",
 * ports in hex). filename is used in messages only. Fatal, as NF_EPARSE with "file:line: what" in
 * diag: a line that fits neither layout (an 'x' off the port columns or past the switch's ports
 * included), an MLID line before any switch, a GUID that is no switch of f or a switch read twice,
 * a port beyond the switch's ports, an MLID outside the multicast range. Counted, each kind as one
 * warning (warn, optional) with the first line: ports with no link (kept: the switch holds
 * them). The same input limits as the fabric readers (NF_IO_MAX_LINE, NF_IO_MAX_BYTES, no NUL). */
NF_API int nf_mft_parse(const nf_fabric *f, const char *text, size_t len, const char *filename,
                        nf_warn_fn warn, void *warn_ud, nf_mft **out, nf_diag *diag);

/* Reads path and parses it; NF_EIO (reason in diag) when it cannot be read. */
NF_API int nf_mft_load(const nf_fabric *f, const char *path, nf_warn_fn warn, void *warn_ud,
                       nf_mft **out, nf_diag *diag);

/* Writes the tables in OpenSM's opensm.mcfdbs layout: switches in OpenSM's order (its switch
 * table is keyed by the GUID in network byte order, so on the little-endian hosts OpenSM runs on
 * the GUIDs compare from their last byte; docs/opensm-mcast.md), switches without an entry left
 * out, MLIDs ascending, ports ascending. 0, or NF_EIO on a write error. */
NF_API int nf_mft_write(const nf_mft *t, FILE *out);

/* ---- analysis -------------------------------------------------------------------------------- */

/* What can be wrong with one MLID's tree (bits of nf_mft_group.problems). */
enum {
    NF_MFT_LOOP = 1,      /* the switches and the links the masks use contain a cycle */
    NF_MFT_UNREACHED = 2, /* a member is not reached from the root by following the masks */
    NF_MFT_NO_LINK = 4,   /* a mask holds a port with no link */
    NF_MFT_ASYMMETRIC = 8 /* one end of an inter-switch link lists it, the other does not */
};

/* One MLID's tree as the tables hold it. Members are the CA nodes behind ports in the masks and
 * the switches with port 0 set; member switches are the switches those members hang on (a switch
 * with port 0 is its own). The tree's links are the inter-switch links either end of which lists
 * its port. Roots: the tree's switches whose largest distance over the tree's links to a member
 * switch is least (the center, which is the root OpenSM's minihop picks when the tree is
 * minimal); roots[root_off .. root_off + n_roots) in OpenSM's switch order. With a tree split in
 * parts, only switches reaching the most members are candidates. */
typedef struct nf_mft_group {
    uint16_t mlid;
    uint16_t problems; /* NF_MFT_* bits */
    uint32_t members;  /* member CAs and port-0 switches */
    uint32_t switches; /* switches with a port set */
    uint32_t links;    /* inter-switch links of the tree */
    uint32_t root_off, n_roots;
    uint32_t height;  /* links from the root to the farthest member it reaches (a CA member counts
                       * its own link, as nf_mcast's height) */
    uint32_t reached; /* members a packet sent from the first root reaches following the masks
                       * (a switch forwards out of every port of its mask but the one it came in) */
} nf_mft_group;

/* The analysis of all MLIDs. efi[l]: the MLIDs whose tree uses link l (inter-switch links only;
 * host links 0); max and mean over the inter-switch links that carry at least one; hist[e] for e
 * in 0 .. max_efi: the number of inter-switch links with EFI e (hist[0]: links unused). */
typedef struct nf_mft_report {
    uint32_t n_groups;
    nf_mft_group *group; /* ascending MLID */
    nf_node *roots;
    uint32_t *efi;
    uint32_t *hist;
    uint32_t max_efi, links_used, bad_groups; /* bad_groups: groups with a problem */
    double mean_efi;
    uint32_t max_height;
    double mean_height; /* over groups with a member (as nf_mcast_stats: non-empty trees) */
} nf_mft_report;

/* Analyses every MLID of t. 0 and a new report in *out (free with nf_mft_report_free), or
 * NF_ENOMEM. */
NF_API int nf_mft_analyze(const nf_mft *t, nf_mft_report **out);
NF_API void nf_mft_report_free(nf_mft_report *r); /* NULL is a no-op */

/* The members of every MLID of t as groups (ascending MLID, members as in nf_mft_group; port-0
 * switches are not CAs and are left out), the MLIDs in *mlids (free with nf_free). MLIDs
 * without a CA member are left out. 0, NF_ENOMEM, or NF_EINVAL (diag) when no MLID has a CA. */
NF_API int nf_mft_groups(const nf_mft *t, nf_groups **out, uint16_t **mlids, nf_diag *diag);

#endif
