/* SPDX-License-Identifier: MIT */
/* Write-only views of a fabric: a Graphviz graph for looking at it and netfab's JSON for other
 * tools. JSON is streamed one node or link object at a time, so memory stays flat however large
 * the fabric is. */
#include "netfab/export.h"
#include "fabric/dot.h"
#include "util/mem.h"

#include <jansson.h>
#include <stdio.h>
#include <string.h>

/* ---- Graphviz ------------------------------------------------------------------------------ */

static const char *const class_colour[NF_LINK_NCLASSES] = {"gray50", "black", "red", "blue"};

int nf_dot_write(const nf_fabric *f, FILE *out) {
    fprintf(out, "graph fabric {\n  // netfab %s: %u switches, %u CAs, %u links\n",
            NF_VERSION_STRING, f->n_switches, f->n_cas, f->n_links);
    fputs("  node [fontname=\"Helvetica\" fontsize=10];\n  edge [fontname=\"Helvetica\" "
          "fontsize=8];\n",
          out);
    for (nf_node n = 0; n < f->n_nodes; n++) {
        char guid[24];
        const char *name = nf_node_name(f, n);
        snprintf(guid, sizeof guid, "0x%016llx", (unsigned long long)f->guid[n]);
        fprintf(out, "  n%u [shape=%s label=", n, nf_is_switch(f, n) ? "box" : "ellipse");
        nf__dot_string(out, name[0] ? name : guid);
        fprintf(out, " tooltip=\"%s lid %u\"];\n", guid, f->lid[n]);
    }
    for (nf_link l = 0; l < f->n_links; l++) {
        unsigned c = f->link_cls[l] < NF_LINK_NCLASSES ? f->link_cls[l] : NF_LINK_LOCAL;
        fprintf(out, "  n%u -- n%u [taillabel=\"%u\" headlabel=\"%u\" color=\"%s\"%s];\n",
                f->link_a[l], f->link_z[l], f->link_pa[l], f->link_pz[l], class_colour[c],
                f->link_state[l] == NF_LINK_DOWN ? " style=dashed" : "");
    }
    fputs("}\n", out);
    return ferror(out) ? NF_EIO : NF_OK;
}

/* ---- JSON ---------------------------------------------------------------------------------- */

/* A JSON string for a node name. Names read from dumps need not be UTF-8; jansson refuses those,
 * so bytes outside ASCII are replaced by '?' then. */
static json_t *name_string(const char *name) {
    json_t *s = json_string(name);
    if (s) return s;
    char *copy = nf__strdup(name);
    if (!copy) return NULL;
    for (char *p = copy; *p; p++)
        if ((unsigned char)*p >= 0x80) *p = '?';
    s = json_string(copy);
    nf__free(copy);
    return s;
}

static json_t *node_object(const nf_fabric *f, nf_node n) {
    char guid[24];
    snprintf(guid, sizeof guid, "0x%016llx", (unsigned long long)f->guid[n]);
    return json_pack("{s:I, s:s, s:s, s:o, s:I, s:I, s:I, s:I, s:I}", "id", (json_int_t)n, "kind",
                     nf_is_switch(f, n) ? "switch" : "ca", "guid", guid, "name",
                     name_string(nf_node_name(f, n)), "lid", (json_int_t)f->lid[n], "ports",
                     (json_int_t)f->nports[n], "supernode", (json_int_t)f->supernode[n], "level",
                     (json_int_t)f->level[n], "plane", (json_int_t)f->plane[n]);
}

static json_t *link_object(const nf_fabric *f, nf_link l) {
    nf_speed sp = (nf_speed)f->link_speed[l];
    json_t *speed = sp != NF_SPEED_UNKNOWN && sp < NF_SPEED_COUNT ? json_string(nf_speed_name(sp))
                                                                  : json_null();
    return json_pack(
        "{s:I, s:I, s:I, s:I, s:s, s:I, s:o, s:I, s:s}", "a", (json_int_t)f->link_a[l], "pa",
        (json_int_t)f->link_pa[l], "z", (json_int_t)f->link_z[l], "pz", (json_int_t)f->link_pz[l],
        "class", nf_link_class_name((nf_link_class)f->link_cls[l]), "width",
        (json_int_t)f->link_width[l], "speed", speed, "plane", (json_int_t)f->link_plane[l],
        "state", f->link_state[l] == NF_LINK_DOWN ? "down" : "up");
}

/* Dumps one array element and drops it; NF_ENOMEM when it could not be built. */
static int dump_element(json_t *o, bool first, FILE *out) {
    if (!o) return NF_ENOMEM;
    if (!first) putc(',', out);
    fputs("\n  ", out);
    int r = json_dumpf(o, out, JSON_COMPACT);
    json_decref(o);
    return r ? NF_EIO : NF_OK;
}

int nf_json_write(const nf_fabric *f, FILE *out) {
    int rc = NF_OK;
    fprintf(out,
            "{\"format\":\"netfab-fabric\",\"version\":1,\"switches\":%u,\"cas\":%u,\"nodes\":[",
            f->n_switches, f->n_cas);
    for (nf_node n = 0; n < f->n_nodes && !rc; n++)
        rc = dump_element(node_object(f, n), n == 0, out);
    if (!rc) fputs("\n],\"links\":[", out);
    for (nf_link l = 0; l < f->n_links && !rc; l++)
        rc = dump_element(link_object(f, l), l == 0, out);
    if (rc) return rc;
    fputs("\n]}\n", out);
    return ferror(out) ? NF_EIO : NF_OK;
}
