/* SPDX-License-Identifier: MIT */
/* `netfab plot tree`: one multicast group's tree, routed as netfab mcast routes the workload,
 * drawn top-down from its root as Graphviz DOT (written as it is, or run through dot). */
#ifndef NETFAB_APP_PLOT_TREE_H
#define NETFAB_APP_PLOT_TREE_H

#include "plot.h"

/* Trees of more nodes than this are refused: too many to draw readably. */
enum { MAX_TREE_NODES = 400 };

/* Routes o->groups on o->topo with o->engine (default fulb) and draws group o->group's tree into
 * o->out (.dot: the text; .png, .svg: through dot). NF_EXIT_OK; NF_EXIT_USAGE for options that
 * do not make a drawable tree; NF_EXIT_FAIL otherwise; each after saying why. */
int plot_tree(const plot_opts *o);

#endif
