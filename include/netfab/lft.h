/* SPDX-License-Identifier: MIT */
/* Unicast forwarding tables indexed by destination endpoint, as the Sunway router holds them
 * (the Sunway paper): an entry is an ordered list of candidate output ports. A flat table has one
 * entry per endpoint of the fabric. A two-level table has one entry per endpoint of the router's
 * own supernode (the intra-supernode table) and one per supernode (the inter-supernode table): a
 * destination in the router's supernode is looked up in the first, any other by its supernode in
 * the second. Both hold min-hop ports in ascending port order; the two-level inter entry lists
 * the ports one hop closer to the destination supernode's nearest switch. On fabrics whose
 * supernodes are entered the same way whatever the endpoint (trees of supernodes such as
 * TaihuLight) the two give the same lookups; where they do not, nf_lft_check says so. */
#ifndef NETFAB_LFT_H
#define NETFAB_LFT_H

#include "core.h"
#include "fabric.h"
#include "hops.h"

#include <stdint.h>

typedef struct nf_lft nf_lft;

/* Builds the two-level tables of every switch of f over distances h (f, h outlive it; link
 * states as h saw them). Every endpoint must belong to a supernode (f->supernode >= 0); a switch
 * with none has no intra table. threads <= 0: OpenMP's default. NF_EINVAL (reason in diag) when
 * an endpoint has no supernode; NF_ENOMEM. Free with nf_lft_free. */
NF_API int nf_lft_build(const nf_fabric *f, const nf_hops *h, int threads, nf_lft **out,
                        nf_diag *diag);
NF_API void nf_lft_free(nf_lft *t);

/* The two-level lookup at switch s for endpoint ca (a CA node id): the candidate ports in order,
 * borrowed until t is freed; returns their count (0: s is cut off from ca, or ca is not an
 * endpoint). */
NF_API unsigned nf_lft_lookup(const nf_lft *t, nf_node s, nf_node ca, const uint8_t **ports);

/* The flat table's entry at switch s for endpoint ca, computed from the distances: every port of
 * s on a shortest path to one of ca's ports, ascending, at most max of them into ports. Returns
 * the count (which may exceed max; only max are written). */
NF_API unsigned nf_lft_flat_entry(const nf_fabric *f, const nf_hops *h, nf_node s, nf_node ca,
                                  uint8_t *ports, unsigned max);

/* Table memory. An entry is entry_ports bytes (one per candidate port; entry_ports the most any
 * entry of the fabric holds, flat or two-level), the same width in both layouts. Per router
 * input port (the chip has a table per port) the flat table has `endpoints` entries and the
 * two-level one intra + supernodes; the fabric totals multiply by the switch ports cabled. */
typedef struct nf_lft_memory {
    uint64_t endpoints, supernodes;
    uint32_t intra_max;   /* the largest intra-supernode table: endpoints of one supernode */
    uint32_t entry_ports; /* bytes per entry */
    uint64_t table_ports; /* switch ports cabled: one table each */
    uint64_t flat_table_bytes, two_level_table_bytes; /* one port's table */
    uint64_t flat_bytes, two_level_bytes;             /* all of them */
} nf_lft_memory;
NF_API void nf_lft_memory_of(const nf_lft *t, nf_lft_memory *m);

/* Compares every two-level lookup with the flat entry, as ordered port lists: at switches of an
 * endpoint's own supernode for every endpoint, elsewhere for one endpoint per attachment (the
 * endpoints cabled to the same switches share their flat and inter entries there). *lookups
 * gets the number compared, *mismatches the number that differ (the first one described in
 * diag->msg). threads <= 0: OpenMP's default. NF_OK or NF_ENOMEM. */
NF_API int nf_lft_check(const nf_lft *t, int threads, uint64_t *lookups, uint64_t *mismatches,
                        nf_diag *diag);

/* ---- deterministic tables that survive link failures ------------------------------------- */

/* A flat table whose entry for (switch s, endpoint ca) is: the min-hop ports of s towards ca,
 * rotated to begin at index (ca's endpoint number mod their count) so that destinations spread
 * over equal ports; then the ports one hop longer over ordinary links (in a generalized fat
 * tree, a spine's way down to the sibling of the leaf), then those one hop longer over sibling
 * links (across to the sibling router), each run rotated the same way. Built once on the fabric as
 * it is; when links fail afterwards a switch takes the first candidate whose link is up (the Sunway
 * paper: traffic keeps flowing before any table is rewritten). */
typedef struct nf_ftable nf_ftable;

/* Builds the table of every switch over distances h (f, h outlive it; borrowed). threads <= 0:
 * OpenMP's default. NF_OK or NF_ENOMEM. */
NF_API int nf_ftable_build(const nf_fabric *f, const nf_hops *h, int threads, nf_ftable **out);
NF_API void nf_ftable_free(nf_ftable *t);

/* The entry of switch s for endpoint ca, borrowed until t is freed; returns its length. */
NF_API unsigned nf_ftable_entry(const nf_ftable *t, nf_node s, nf_node ca, const uint8_t **ports);

/* The port switch s forwards a packet for ca to under the link states link_state (one
 * nf_link_state per link of the fabric: f->link_state, or a simulator's own copy): the first
 * candidate whose link is up; 0 when none is. */
NF_API unsigned nf_ftable_next(const nf_ftable *t, const uint8_t *link_state, nf_node s,
                               nf_node ca);

/* Reachability under the fabric's current link states: of the ordered pairs of distinct endpoints
 * (*pairs), how many (*reached) deliver when every switch forwards by nf_ftable_next (a packet
 * that comes back to a switch it has visited is lost). An endpoint with several ports (rails)
 * reaches ca when any of its ports does, each port's packets going to ca's port in the same
 * plane. threads <= 0: OpenMP's default. NF_OK or NF_ENOMEM. */
NF_API int nf_ftable_reach(const nf_ftable *t, int threads, uint64_t *pairs, uint64_t *reached);

#endif
