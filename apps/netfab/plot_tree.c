/* SPDX-License-Identifier: MIT */
/* `netfab plot tree`: the workload routed by the library, one group's tree checked for size and
 * written as a DOT digraph (names quoted as the fabric export quotes them), then handed to dot
 * (spawn.h) unless DOT text was asked for. */
#define _GNU_SOURCE
#include "plot_tree.h"
#include "cmd.h"
#include "fabric/dot.h"
#include "opts.h"
#include "netfab/hops.h"
#include "netfab/mcast.h"
#include "spawn.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Writes group k's tree as a DOT digraph. The tree's nodes are its root and the ends of its
 * links; a breadth-first walk from the root gives each node its depth and orients each link from
 * the end nearer the root, so dot lays the tree out top-down with one rank per depth. nodes (at
 * most MAX_TREE_NODES + 1 entries) and depth (one per fabric node, all -1) are scratch. */
static void write_tree_dot(FILE *o, const nf_fabric *f, const nf_groups *g, const nf_mcast *m,
                           uint32_t k, const char *engine, const char *title, nf_node *nodes,
                           int32_t *depth) {
    const nf_link *tl = m->tree_link + m->tree_off[k];
    uint32_t n_links = m->tree_off[k + 1] - m->tree_off[k], n = 0;
    nodes[n++] = m->root[k];
    depth[m->root[k]] = 0;
    for (uint32_t head = 0; head < n; head++) {
        nf_node u = nodes[head];
        for (uint32_t j = 0; j < n_links; j++) {
            nf_node a = f->link_a[tl[j]], z = f->link_z[tl[j]];
            nf_node v = a == u ? z : z == u ? a : NF_NONE;
            if (v != NF_NONE && depth[v] < 0) {
                depth[v] = depth[u] + 1;
                nodes[n++] = v;
            }
        }
    }
    for (uint32_t j = 0; j < n_links; j++) /* a link the walk missed: not a tree; show it anyway */
        for (int e = 0; e < 2; e++) {
            nf_node v = e ? f->link_z[tl[j]] : f->link_a[tl[j]];
            if (depth[v] < 0) depth[(nodes[n++] = v)] = 0;
        }
    uint32_t members = g->off[k + 1] - g->off[k];
    char label[512];
    if (title)
        snprintf(label, sizeof label, "%s", title);
    else
        snprintf(label, sizeof label, "group %u (MLID 0x%04X), %s: %u members, height %u", k,
                 NF_MLID_BASE + 1 + k, engine, members, m->height[k]);
    fprintf(o,
            "digraph mcast_tree {\n  // netfab plot tree: group %u, engine %s, %u links, %u "
            "nodes, root n%u\n",
            k, engine, n_links, n, m->root[k]);
    fputs("  graph [rankdir=TB labelloc=t fontname=\"Helvetica\" label=", o);
    nf__dot_string(o, label);
    fputs("];\n  node [fontname=\"Helvetica\" fontsize=10];\n"
          "  edge [dir=none fontname=\"Helvetica\" fontsize=8];\n",
          o);
    for (uint32_t j = 0; j < n; j++) {
        nf_node v = nodes[j];
        char guid[40];
        const char *name = nf_node_name(f, v);
        snprintf(guid, sizeof guid, "0x%016llx", (unsigned long long)f->guid[v]);
        fprintf(o, "  n%u [shape=%s label=", v, nf_is_switch(f, v) ? "box" : "ellipse");
        nf__dot_string(o, name[0] ? name : guid);
        fprintf(o, " tooltip=\"%s lid %u%s\"", guid, f->lid[v], v == m->root[k] ? ", root" : "");
        if (v == m->root[k]) fputs(" style=\"filled,bold\" fillcolor=\"gold\" penwidth=2", o);
        fputs("];\n", o);
    }
    int32_t max_depth = 0;
    for (uint32_t j = 0; j < n; j++)
        if (depth[nodes[j]] > max_depth) max_depth = depth[nodes[j]];
    for (int32_t dd = 0; dd <= max_depth; dd++) { /* one rank per depth */
        fputs("  { rank=same;", o);
        for (uint32_t j = 0; j < n; j++)
            if (depth[nodes[j]] == dd) fprintf(o, " n%u;", nodes[j]);
        fputs(" }\n", o);
    }
    for (uint32_t j = 0; j < n_links; j++) {
        nf_link l = tl[j];
        bool down = depth[f->link_a[l]] <= depth[f->link_z[l]];
        fprintf(o, "  n%u -> n%u [taillabel=\"%u\" headlabel=\"%u\"];\n",
                down ? f->link_a[l] : f->link_z[l], down ? f->link_z[l] : f->link_a[l],
                down ? f->link_pa[l] : f->link_pz[l], down ? f->link_pz[l] : f->link_pa[l]);
    }
    fputs("}\n", o);
}

int plot_tree(const plot_opts *o) {
    const char *why = !o->topo         ? "tree wants --topo SPEC"
                      : !o->groups     ? "tree wants --groups PATTERN"
                      : !o->have_group ? "tree wants --group N"
                                       : NULL;
    if (why) {
        fprintf(stderr, "netfab plot: %s\ntry 'netfab plot --help'\n", why);
        return NF_EXIT_USAGE;
    }
    const nf_mcast_engine *e = nf_mcast_engine_find(o->engine ? o->engine : "fulb");
    if (!e) {
        char known[512];
        return nf_opt_usage("plot", "unknown engine '%s' (%s)", o->engine,
                            nf_app_known(NF_APP_ENGINES, known, sizeof known));
    }
    nf_fabric *f = NULL;
    nf_hops *h = NULL;
    nf_groups *g = NULL;
    nf_mcast *m = NULL;
    nf_node *nodes = NULL;
    int32_t *depth = NULL;
    char *text = NULL;
    size_t len = 0;
    nf_diag d = {{0}, 0, {0}};
    int rc, status = nf_app_fabric(o->topo, 0, &f, &h);
    if (status) goto done;
    if ((rc = nf_groups_build(f, o->groups, &o->w, &g, &d))) {
        status = nf_app_report(rc, &d);
        goto done;
    }
    if (o->group >= g->n) {
        fprintf(stderr, "netfab plot: --group %lu is out of range: %s makes %u groups (0..%u)\n",
                o->group, o->groups, g->n, g->n ? g->n - 1 : 0);
        status = NF_EXIT_USAGE;
        goto done;
    }
    uint32_t k = (uint32_t)o->group;
    if ((rc = nf_mcast_route(f, h, g, e, &m, &d))) {
        status = nf_app_report(rc, &d);
        goto done;
    }
    if (m->status[k] != NF_OK) {
        fprintf(stderr, "netfab plot: group %u was not routed by %s: %s\n", k,
                nf_mcast_engine_name(e), nf_strerror(m->status[k]));
        status = NF_EXIT_USAGE;
        goto done;
    }
    /* the tree's nodes: its root and its links' ends, counted before anything is drawn */
    depth = malloc((size_t)f->n_nodes * sizeof *depth);
    nodes = malloc((MAX_TREE_NODES + 1) * sizeof *nodes);
    if (!depth || !nodes) {
        fprintf(stderr, "netfab plot: out of memory\n");
        status = NF_EXIT_FAIL;
        goto done;
    }
    memset(depth, 0xff, (size_t)f->n_nodes * sizeof *depth);
    uint32_t n_nodes = 1;
    depth[m->root[k]] = 0;
    for (uint32_t j = m->tree_off[k]; j < m->tree_off[k + 1]; j++)
        for (int end = 0; end < 2; end++) {
            nf_node v = end ? f->link_z[m->tree_link[j]] : f->link_a[m->tree_link[j]];
            if (depth[v] < 0) depth[v] = 0, n_nodes++;
        }
    if (n_nodes > MAX_TREE_NODES) {
        fprintf(stderr,
                "netfab plot: group %u's tree has %u nodes, too many to draw readably (at most "
                "%d); pick a smaller group\n",
                k, n_nodes, MAX_TREE_NODES);
        status = NF_EXIT_USAGE;
        goto done;
    }
    memset(depth, 0xff, (size_t)f->n_nodes * sizeof *depth);
    FILE *dot = open_memstream(&text, &len);
    if (!dot) {
        fprintf(stderr, "netfab plot: out of memory\n");
        status = NF_EXIT_FAIL;
        goto done;
    }
    write_tree_dot(dot, f, g, m, k, nf_mcast_engine_name(e), o->title, nodes, depth);
    if (fclose(dot) != 0) {
        fprintf(stderr, "netfab plot: out of memory\n");
        status = NF_EXIT_FAIL;
        goto done;
    }
    out_fmt fmt = out_format(o->out);
    nf__afile a;
    if (fmt == F_DOT) {
        status = plot_write_text(o->out, text, len, NULL);
    } else if (!nf_app_out_open(&a, "netfab plot", o->out)) {
        status = NF_EXIT_FAIL;
    } else {
        char *args[] = {"dot", fmt == F_PNG ? "-Tpng" : "-Tsvg", "-o",
                        (char *)nf_app_out_name(&a, o->out), NULL};
        status =
            nf_app_run_tool("netfab plot", args, text, len, &a, o->out, "apt-get install graphviz");
    }
done:
    free(text);
    free(nodes);
    free(depth);
    nf_mcast_free(m);
    nf_groups_free(g);
    nf_hops_free(h);
    nf_fabric_free(f);
    return status;
}
