/* SPDX-License-Identifier: MIT */
/* `netfab sim --packets FILE [--packet-log FILE]`: a list of packets run instead of the random
 * sources (another simulator's trace, say), and when each arrived. */
#ifndef NF_APP_PKTLIST_H
#define NF_APP_PKTLIST_H

#include "netfab/sim.h"

#include <stddef.h>

/* Reads path's lines "CYCLE SRC DST [VC]" ('#' starts a comment; VC -1 or none: the NIC's rule)
 * into *out (malloc'd; *n of them). NF_EXIT_OK; NF_EXIT_USAGE for a malformed line, or cycles
 * out of order (the message names the file and line); NF_EXIT_FAIL when it cannot be read. */
int nf_app_packets_read(const char *cmd, const char *path, nf_sim_packet **out, size_t *n);

/* Writes path (whole or not at all): a line "CYCLE SRC DST ARRIVED LATENCY" per listed packet,
 * in the list's order, ARRIVED and LATENCY -1 for one that did not arrive in the run. */
int nf_app_packets_log(const char *cmd, const char *path, const nf_sim *s,
                       const nf_sim_packet *list, size_t n);

#endif
