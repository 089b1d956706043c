/* SPDX-License-Identifier: MIT */
/* Internal: Graphviz DOT text shared by the fabric export (export.c) and the CLI's multicast
 * tree picture (netfab plot tree), so that both quote names the same way. */
#ifndef NF_FABRIC_DOT_H
#define NF_FABRIC_DOT_H

#include <stdio.h>

/* s as a DOT double-quoted string: quote and backslash escaped, control characters dropped, and
 * every byte above ASCII written as '?' when s is not valid UTF-8 (Graphviz refuses such text,
 * and names read from dumps are often Latin-1). */
void nf__dot_string(FILE *out, const char *s);

#endif
