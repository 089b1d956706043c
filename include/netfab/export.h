/* SPDX-License-Identifier: MIT */
/* Write-only exports of a fabric: Graphviz dot and netfab's JSON. */
#ifndef NETFAB_EXPORT_H
#define NETFAB_EXPORT_H

#include "fabric.h"

#include <stdio.h>

/* Graphviz: one node per switch/CA (switches as boxes), one undirected edge per link labelled
 * with its ports, coloured by link class. Returns 0 or NF_EIO. */
NF_API int nf_dot_write(const nf_fabric *f, FILE *out);

/* JSON: {"switches":N,"cas":N,"nodes":[...],"links":[...]} with every column of the model.
 * Returns 0, NF_ENOMEM or NF_EIO. */
NF_API int nf_json_write(const nf_fabric *f, FILE *out);

#endif
