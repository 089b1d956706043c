/* SPDX-License-Identifier: MIT */
/* Unicast forwarding tables as an InfiniBand subnet manager installs them: per switch, for each
 * destination LID, the one output port (0: the switch itself). Read from the text the real tools
 * print (OpenSM's opensm-lfts.dump, infiniband-diags' dump_fts and ibroute; the layouts are in
 * docs/real-tools.md) and written in OpenSM's layout, which `opensm -R file -U FILE` loads.
 * Switches are matched by node GUID and LIDs resolved against the fabric the tables belong to,
 * whose LIDs come from its ibnetdiscover or ibsim file (a fabric whose LIDs are all 0 has none to
 * resolve against). */
#ifndef NETFAB_UFT_H
#define NETFAB_UFT_H

#include "core.h"
#include "fabric.h"

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

typedef struct nf_uft nf_uft;

/* The port of an entry that is absent (no route to that LID). */
#define NF_UFT_NONE 255u

/* Empty tables (every entry NF_UFT_NONE) for every switch of f, LIDs 0 .. the highest LID of f.
 * f outlives them. NF_EINVAL (reason in diag, which may be NULL) when f has no LIDs; NF_ENOMEM. */
NF_API int nf_uft_new(const nf_fabric *f, nf_uft **out, nf_diag *diag);
NF_API void nf_uft_free(nf_uft *t);

/* The fabric the tables were made for (borrowed: f of nf_uft_new). */
NF_API const nf_fabric *nf_uft_fabric(const nf_uft *t);

/* The highest LID the tables hold an entry slot for. */
NF_API uint16_t nf_uft_top_lid(const nf_uft *t);

/* The node (a switch, or a CA whose port has that LID) and port owning lid in the fabric;
 * NF_NONE when no port has it. *port gets the port number (0 for a switch's own LID). */
NF_API nf_node nf_uft_lid_owner(const nf_uft *t, uint16_t lid, unsigned *port);

/* Switch s's entry for lid: its output port, NF_UFT_NONE when absent, lid beyond the top or s not
 * a switch. */
NF_API unsigned nf_uft_get(const nf_uft *t, nf_node s, uint16_t lid);

/* Sets switch s's entry for lid (port NF_UFT_NONE removes it). NF_EINVAL when s is not a switch,
 * lid is beyond the top, or port is neither NF_UFT_NONE nor at most s's port count. */
NF_API int nf_uft_set(nf_uft *t, nf_node s, uint16_t lid, unsigned port);

/* Parses the tables in text (len bytes; need not be NUL-terminated), any of the three layouts,
 * against f. filename is used in messages only. Fatal, as NF_EPARSE with "file:line: what" in
 * diag: a line of none of the layouts, an entry before any switch header, a header naming a GUID
 * that is no switch of f or a switch already read, a port beyond the switch's ports. Counted,
 * each kind as one warning with the first line it happened on: entries for a LID no port of f
 * has (skipped), entries out of a port with no link (kept: they are what the switch holds). The
 * same input limits as the fabric readers (NF_IO_MAX_LINE, NF_IO_MAX_BYTES, no NUL). */
NF_API int nf_uft_parse(const nf_fabric *f, const char *text, size_t len, const char *filename,
                        nf_warn_fn warn, void *warn_ud, nf_uft **out, nf_diag *diag);

/* Reads path and parses it; NF_EIO (reason in diag) when it cannot be read. */
NF_API int nf_uft_load(const nf_fabric *f, const char *path, nf_warn_fn warn, void *warn_ud,
                       nf_uft **out, nf_diag *diag);

/* Writes every switch's entries in OpenSM's opensm-lfts.dump layout, switches in the fabric's
 * order. 0, or NF_EIO on a write error. */
NF_API int nf_uft_write(const nf_uft *t, FILE *out);

/* ---- checking installed tables -------------------------------------------------------------- */

/* A channel: the output port of a switch. */
typedef struct nf_uft_hop {
    nf_node sw;
    unsigned port;
    uint16_t lid; /* in a credit loop: a destination LID whose routes use this dependency */
} nf_uft_hop;

/* nf_uft_check's flags. */
#define NF_UFT_CHECK_SWITCH_LIDS 1u /* switches are sources and destinations too */

/* What the tables do with the traffic they carry, and their credit loops. */
typedef struct nf_uft_report {
    uint32_t dests;       /* destination LIDs checked */
    uint32_t sources;     /* source switches (those CAs hang off; every switch with the flag) */
    uint64_t routes;      /* (source switch, destination LID) pairs walked */
    uint64_t delivered;   /* of them, reaching the destination's port */
    uint64_t holes;       /* stopping at a switch with no entry for the LID */
    uint64_t dead_ports;  /* stopping at an entry whose port has no link, or a link down */
    uint64_t loops;       /* going round a forwarding loop */
    uint64_t misrouted;   /* ending at another node (a CA, or port 0 of a switch not the owner) */
    nf_uft_hop *problem;  /* the walk of the first failing route, first hop first */
    uint32_t problem_len; /* its hops (for a loop: up to and around the loop once) */
    uint16_t problem_lid; /* its destination LID; 0 when every route delivers */
    /* the channel dependency graph on one VL: a vertex per channel some route uses, an edge
     * from a channel to the next one of the same route */
    uint64_t vertices, edges;
    nf_uft_hop *cycle;  /* a credit loop: channels c0 -> c1 -> ... -> c0 */
    uint32_t cycle_len; /* 0: the graph has no cycle (no credit loop) */
} nf_uft_report;

/* Walks every route of the tables: from each source switch to each destination LID (CA ports'
 * LIDs; with NF_UFT_CHECK_SWITCH_LIDS the switches' own LIDs too, and every switch is a source),
 * counting how each ends, and looks for a cycle in the channel dependency graph of those routes
 * (one VL: every route a channel carries waits on the next channel it takes). A forwarding loop
 * shows as a cycle too. Fills *r (free with nf_uft_report_fini). NF_OK or NF_ENOMEM. */
NF_API int nf_uft_check(const nf_uft *t, unsigned flags, nf_uft_report *r, nf_diag *diag);
NF_API void nf_uft_report_fini(nf_uft_report *r);

#endif
