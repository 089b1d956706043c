/* SPDX-License-Identifier: MIT */
/* `netfab route`: a unicast routing of the simulator (or installed tables, lft:FILE) looked at
 * without simulating: the deadlock checker (--check), the forwarding tables it amounts to in
 * OpenSM's layout (--dump-lft), and the path of one packet (--trace). */
#define _GNU_SOURCE
#include "cmd.h"
#include "opts.h"
#include "progress.h"
#include "simopt.h"
#include "netfab/hops.h"
#include "netfab/sim.h"
#include "netfab/uft.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void on_progress(void *ud, double f) { nf_progress_set(ud, f); }

/* The node (and, for a CA's LID, its port) that `what` names: a node name as the fabric has it,
 * a node GUID 0x..., or a LID in decimal. NF_EXIT_OK, or NF_EXIT_USAGE after saying why. */
static int find_node(const nf_fabric *f, const char *what, nf_node *n, unsigned *port) {
    *port = 0;
    uint64_t v;
    if (strncmp(what, "0x", 2) == 0 || strncmp(what, "0X", 2) == 0) {
        if (nf_app_u64(what, 0, UINT64_MAX, &v) == 0 && (*n = nf_fabric_find_guid(f, v)) != NF_NONE)
            return NF_EXIT_OK;
    } else if (nf_app_u64(what, 1, 0xFFFF, &v) == 0) {
        for (nf_node x = 0; x < f->n_nodes; x++) {
            if (nf_is_switch(f, x)) {
                if (f->lid[x] == v) return *n = x, NF_EXIT_OK;
                continue;
            }
            for (unsigned p = 1; p <= f->nports[x]; p++)
                if (f->port_lid[nf_port_index(f, x, p)] == v) return *n = x, *port = p, NF_EXIT_OK;
        }
    }
    nf_node found = NF_NONE;
    for (nf_node x = 0; x < f->n_nodes; x++) {
        const char *name = nf_node_name(f, x);
        if (!name || strcmp(name, what) != 0) continue;
        if (found != NF_NONE)
            return nf_opt_usage("route", "--trace: two nodes are named '%s'; give a GUID or LID",
                                what);
        found = x;
    }
    if (found == NF_NONE)
        return nf_opt_usage("route", "--trace: no node '%s' in the fabric (a name, 0xGUID or LID)",
                            what);
    *n = found;
    return NF_EXIT_OK;
}

/* The LID shown for hop k: a switch's own, a CA's of the port it is at. */
static unsigned hop_lid(const nf_fabric *f, const nf_sim_trace_hop *hp) {
    if (nf_is_switch(f, hp->node)) return f->lid[hp->node];
    unsigned p = hp->in_port ? hp->in_port : hp->out_port;
    return p ? f->port_lid[nf_port_index(f, hp->node, p)] : f->lid[hp->node];
}

/* What went wrong at the end of t, in words (into buf). */
static void problem_text(const nf_fabric *f, const nf_sim_trace *t, char *buf, size_t cap) {
    const nf_sim_trace_hop *last = &t->hop[t->n - 1];
    size_t pos = 0;
    switch (t->end) {
    case NF_SIM_TRACE_REACHED: snprintf(buf, cap, "reached"); break;
    case NF_SIM_TRACE_LOOP:
        pos = (size_t)snprintf(buf, cap, "loop:");
        for (size_t k = t->loop_at; k < t->n && pos < cap; k++)
            pos += (size_t)snprintf(buf + pos, cap - pos, "%s \"%s\"", k > t->loop_at ? " ->" : "",
                                    nf_node_name(f, t->hop[k].node));
        break;
    case NF_SIM_TRACE_HOLE:
        snprintf(buf, cap, "hole: \"%s\" has no way on (no entry, no candidate)",
                 nf_node_name(f, last->node));
        break;
    case NF_SIM_TRACE_NO_LINK:
        snprintf(buf, cap, "no link: \"%s\" port %u has no link up", nf_node_name(f, last->node),
                 last->out_port);
        break;
    case NF_SIM_TRACE_ASTRAY:
        snprintf(buf, cap, "astray: at \"%s\", which is not the destination",
                 nf_node_name(f, last->node));
        break;
    }
}

static void print_trace_text(const nf_fabric *f, const nf_sim_trace *t) {
    const nf_sim_trace_hop *h0 = &t->hop[0];
    bool sw = nf_is_switch(f, h0->node);
    printf("From %s 0x%016llx", sw ? "switch" : "ca", (unsigned long long)f->guid[h0->node]);
    if (!sw) printf(" port %u", h0->out_port);
    printf(" lid %u \"%s\"\n", hop_lid(f, h0), nf_node_name(f, h0->node));
    for (size_t k = 1; k < t->n; k++) {
        const nf_sim_trace_hop *from = &t->hop[k - 1], *hp = &t->hop[k];
        printf("[%u] -> %s 0x%016llx[%u] lid %u \"%s\"", from->out_port,
               nf_is_switch(f, hp->node) ? "switch" : "ca", (unsigned long long)f->guid[hp->node],
               hp->in_port, hop_lid(f, hp), nf_node_name(f, hp->node));
        if (from->candidates > 1) printf(" (first of %u candidates)", from->candidates);
        putchar('\n');
    }
    char why[512];
    problem_text(f, t, why, sizeof why);
    printf("%s\n", why);
}

/* The trace as one JSON object; NULL when out of memory. */
static json_t *trace_json(const nf_fabric *f, const nf_sim_trace *t, nf_node src, nf_node dst) {
    json_t *hops = json_array();
    for (size_t k = 0; hops && k < t->n; k++) {
        const nf_sim_trace_hop *hp = &t->hop[k];
        char guid[24];
        snprintf(guid, sizeof guid, "0x%016llx", (unsigned long long)f->guid[hp->node]);
        json_t *o = json_pack("{s:s, s:s, s:I, s:I, s:I, s:I}", "node", nf_node_name(f, hp->node),
                              "guid", guid, "lid", (json_int_t)hop_lid(f, hp), "in_port",
                              (json_int_t)hp->in_port, "out_port", (json_int_t)hp->out_port,
                              "candidates", (json_int_t)hp->candidates);
        if (!o || json_array_append_new(hops, o)) {
            json_decref(hops);
            return NULL;
        }
    }
    if (!hops) return NULL;
    char why[512];
    problem_text(f, t, why, sizeof why);
    bool reached = t->end == NF_SIM_TRACE_REACHED;
    return json_pack("{s:s, s:s, s:o, s:b, s:o}", "src", nf_node_name(f, src), "dst",
                     nf_node_name(f, dst), "hops", hops, "reached", reached, "problem",
                     reached ? json_null() : json_string(why));
}

/* --trace SRC DST: prints the path; NF_EXIT_OK when it reaches DST, NF_EXIT_FAIL when not. */
static int do_trace(const nf_fabric *f, const nf_hops *h, const nf_sim_routing *r,
                    const nf_sim_config *c, const char *src_s, const char *dst_s, bool json) {
    nf_node src, dst;
    unsigned sp, dp;
    int ex = find_node(f, src_s, &src, &sp);
    if (!ex) ex = find_node(f, dst_s, &dst, &dp);
    if (ex) return ex;
    nf_sim_trace t;
    nf_diag d = {{0}, 0, {0}};
    int rc = nf_sim_trace_path(f, h, r, c, src, sp, dst, dp, &t, &d);
    if (rc) return nf_app_report(rc, &d);
    if (json) {
        json_t *o = trace_json(f, &t, src, dst);
        if (!o) {
            nf_sim_trace_fini(&t);
            return nf_app_report(NF_ENOMEM, NULL);
        }
        json_dumpf(o, stdout, JSON_INDENT(2));
        putchar('\n');
        json_decref(o);
    } else {
        print_trace_text(f, &t);
    }
    ex = t.end == NF_SIM_TRACE_REACHED ? NF_EXIT_OK : NF_EXIT_FAIL;
    nf_sim_trace_fini(&t);
    return ex;
}

/* --check: the channel dependency graph's verdict. */
static int do_check(const nf_fabric *f, const nf_hops *h, const nf_sim_routing *r,
                    const nf_sim_config *c, const char *rname, const char *topo, bool json) {
    nf_diag d = {{0}, 0, {0}};
    uint32_t cyc;
    uint64_t nv, ne;
    nf_progress bar;
    nf_progress_begin(&bar, "netfab route: checking");
    int rc = nf_sim_check_deadlock_progress(f, h, r, c, on_progress, &bar, &cyc, &nv, &ne, &d);
    nf_progress_end(&bar);
    if (rc) return nf_app_report(rc, &d);
    if (json) {
        json_t *o = json_pack("{s:s, s:I, s:I, s:b, s:I}", "routing", rname, "vertices",
                              (json_int_t)nv, "edges", (json_int_t)ne, "deadlock_free", !cyc,
                              "cycle_length", (json_int_t)cyc);
        if (!o) return nf_app_report(NF_ENOMEM, NULL);
        json_dumpf(o, stdout, JSON_PRESERVE_ORDER);
        putchar('\n');
        json_decref(o);
    } else {
        printf("%s on %s: %llu channel-VC vertices, %llu dependencies: %s\n", rname, topo,
               (unsigned long long)nv, (unsigned long long)ne,
               cyc ? "a cycle (can deadlock)" : "no cycle (deadlock-free)");
        if (cyc) printf("%s (length %u)\n", d.msg, cyc);
    }
    return cyc ? NF_EXIT_FAIL : NF_EXIT_OK;
}

/* A channel of the table check as words: "name" port P. */
static void print_hop(const nf_fabric *f, const nf_uft_hop *hp) {
    printf("\"%s\" port ", nf_node_name(f, hp->sw));
    if (hp->port == NF_UFT_NONE)
        printf("none");
    else
        printf("%u", hp->port);
}

static json_t *hops_json(const nf_fabric *f, const nf_uft_hop *hp, uint32_t n) {
    json_t *a = json_array();
    for (uint32_t i = 0; a && i < n; i++) {
        json_t *o = json_pack("{s:s, s:o, s:I}", "switch", nf_node_name(f, hp[i].sw), "port",
                              hp[i].port == NF_UFT_NONE ? json_null()
                                                        : json_integer((json_int_t)hp[i].port),
                              "lid", (json_int_t)hp[i].lid);
        if (!o || json_array_append_new(a, o)) {
            json_decref(a);
            return NULL;
        }
    }
    return a;
}

/* --check of lft:FILE: every route the tables hold walked, and their credit loops on one VL
 * (nf_uft_check). NF_EXIT_OK when every route delivers and there is no credit loop. */
static int do_table_check(const nf_fabric *f, const nf_uft *t, const char *rname, bool switch_lids,
                          bool json) {
    nf_uft_report r;
    nf_diag d = {{0}, 0, {0}};
    int rc = nf_uft_check(t, switch_lids ? NF_UFT_CHECK_SWITCH_LIDS : 0, &r, &d);
    if (rc) return nf_app_report(rc, &d);
    bool bad = r.delivered != r.routes || r.cycle_len;
    if (json) {
        json_t *problem = r.problem_lid ? json_pack("{s:I, s:o}", "lid", (json_int_t)r.problem_lid,
                                                    "path", hops_json(f, r.problem, r.problem_len))
                                        : json_null();
        json_t *o = json_pack(
            "{s:s, s:b, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:b, s:o, s:o}",
            "routing", rname, "switch_lids", switch_lids, "destinations", (json_int_t)r.dests,
            "sources", (json_int_t)r.sources, "routes", (json_int_t)r.routes, "delivered",
            (json_int_t)r.delivered, "holes", (json_int_t)r.holes, "dead_ports",
            (json_int_t)r.dead_ports, "loops", (json_int_t)r.loops, "misrouted",
            (json_int_t)r.misrouted, "vertices", (json_int_t)r.vertices, "edges",
            (json_int_t)r.edges, "credit_loop", r.cycle_len > 0, "cycle",
            hops_json(f, r.cycle, r.cycle_len), "problem", problem);
        if (!o) {
            nf_uft_report_fini(&r);
            return nf_app_report(NF_ENOMEM, NULL);
        }
        json_dumpf(o, stdout, JSON_PRESERVE_ORDER);
        putchar('\n');
        json_decref(o);
    } else {
        printf("%s: %u destination LIDs (CA ports%s), %u source switches: %llu routes, %llu "
               "delivered",
               rname, r.dests, switch_lids ? " and switches" : "", r.sources,
               (unsigned long long)r.routes, (unsigned long long)r.delivered);
        const struct {
            uint64_t n;
            const char *what;
        } ends[] = {{r.holes, "end at a switch with no entry"},
                    {r.dead_ports, "end at a port with no link up"},
                    {r.loops, "go round a forwarding loop"},
                    {r.misrouted, "end at the wrong node"}};
        for (size_t i = 0; i < sizeof ends / sizeof ends[0]; i++)
            if (ends[i].n) printf(", %llu %s", (unsigned long long)ends[i].n, ends[i].what);
        printf("\n");
        if (r.problem_lid) {
            printf("first failing route, to LID %u: ", r.problem_lid);
            for (uint32_t i = 0; i < r.problem_len; i++) {
                if (i) printf(" -> ");
                print_hop(f, &r.problem[i]);
            }
            printf("\n");
        }
        printf("channel dependency graph on one VL: %llu channels, %llu dependencies: %s\n",
               (unsigned long long)r.vertices, (unsigned long long)r.edges,
               r.cycle_len ? "a credit loop (can deadlock)" : "no credit loop");
        for (uint32_t i = 0; i < r.cycle_len; i++) {
            printf("  ");
            print_hop(f, &r.cycle[i]);
            printf(" waits on the next, for LID %u\n", r.cycle[i].lid);
        }
    }
    nf_uft_report_fini(&r);
    return bad ? NF_EXIT_FAIL : NF_EXIT_OK;
}

/* --dump-lft FILE: the tables, written whole or not at all. */
static int do_dump(const nf_fabric *f, const nf_hops *h, const nf_sim_routing *r,
                   const nf_sim_config *c, const char *path) {
    nf_diag d = {{0}, 0, {0}};
    nf_uft *t;
    int rc = nf_sim_routing_to_uft(f, h, r, c, &t, &d);
    if (rc) return nf_app_report(rc, &d);
    nf__afile af;
    FILE *out = nf_app_out_open(&af, "netfab route", path);
    if (!out) {
        nf_uft_free(t);
        return NF_EXIT_FAIL;
    }
    rc = nf_uft_write(t, out);
    nf_uft_free(t);
    return nf_app_out_close(&af, "netfab route", path, rc);
}

int nf_cmd_route(int argc, char **argv) {
    const char *topo = NULL, *rname = NULL, *dump = NULL, *trace = NULL;
    bool check = false, json = false, switch_lids = false;
    nf_sim_config c;
    nf_sim_config_defaults(&c);
    char vcs_help[48];
    snprintf(vcs_help, sizeof vcs_help, "virtual channels per port (default %u)", c.vcs);
    const nf_opt rows[] = {
        {NF_OPT_TOPO(topo)},
        {.name = "routing",
         .arg = "NAME",
         .kind = NF_OPT_STR,
         NF_OPT_TO(rname),
         .help = "the routing function (netfab sim --help lists them)" NF_APP_LFT_HELP},
        {.name = "check",
         .kind = NF_OPT_FLAG,
         NF_OPT_TO(check),
         .help = "look for a cycle in the channel dependency graph"},
        {.name = "switch-lids",
         .kind = NF_OPT_FLAG,
         NF_OPT_TO(switch_lids),
         .help = "--check of lft:FILE: switches send and receive too (management traffic), "
                 "not only CA ports"},
        {.name = "dump-lft",
         .arg = "FILE",
         .kind = NF_OPT_STR,
         NF_OPT_TO(dump),
         .help = "write the forwarding tables the routing amounts to in OpenSM's "
                 "opensm-lfts.dump layout (opensm -R file -U FILE loads it; '-': stdout): per "
                 "switch and CA port LID, the port the simulator sends a packet on when free to "
                 "choose (the routing's first candidate with its link up; every routing that "
                 "can be tabled chooses its ports by switch and destination alone, the input "
                 "port and hops choosing only the VC); a switch's own LID port 0, other switch "
                 "LIDs the first min-hop port (management traffic). Routings that choose per "
                 "packet (val, ugal-*, par, qadapt, qadapt-nf) are refused"},
        {.name = "trace",
         .arg = "SRC",
         .kind = NF_OPT_STR,
         NF_OPT_TO(trace),
         .help = "with the operand DST: print the path from SRC to DST (CA or switch names as "
                 "the fabric has them, "
                 "node GUIDs 0x..., or LIDs), one line per hop as ibtracert, then 'reached' or "
                 "what went wrong (a loop, a hole, a port with no link); the first of several "
                 "candidates is followed, their number shown. Exit 1 when DST is not reached"},
        {.name = "vcs",
         .arg = "V",
         .kind = NF_OPT_UINT,
         NF_OPT_TO(c.vcs),
         .lo = 1,
         .hi = NF_SIM_MAX_VCS,
         .help = vcs_help},
        {.name = "json",
         .kind = NF_OPT_FLAG,
         NF_OPT_TO(json),
         .help = "--check: one object (routing, vertices, edges, deadlock_free, cycle_length; "
                 "for lft:FILE: switch_lids, destinations, sources, routes, delivered, holes, "
                 "dead_ports, loops, misrouted, vertices, edges, credit_loop, cycle [{switch, "
                 "port, lid}], problem {lid, path}); "
                 "--trace: one object (src, dst, hops [{node, guid, lid, in_port, out_port, "
                 "candidates}], reached, problem)"},
    };
    const nf_cmd_spec spec = {
        .name = "route",
        .synopsis = "netfab route --topo SPEC --routing NAME --check [--vcs V] [--json]\n"
                    "       netfab route --topo SPEC --routing lft:FILE --check [--switch-lids] "
                    "[--json]\n"
                    "       netfab route --topo SPEC --routing NAME|lft:FILE --dump-lft FILE\n"
                    "       netfab route --topo SPEC --routing NAME|lft:FILE --trace SRC DST "
                    "[--json]\n",
        .description =
            "--check builds the channel dependency graph of the routing on the fabric (every\n"
            "channel and VC a vertex; an edge for each channel a packet holding one may request\n"
            "next, over every destination and every reachable state) and looks for a cycle:\n"
            "exit 0 when it is deadlock-free, 1 when a cycle exists (one is printed).\n"
            "--dump-lft writes the routing as forwarding tables; --trace follows one packet.\n"
            "With lft:FILE the routing is the tables of FILE, exactly: a packet leaves by the\n"
            "entry's port, VC = hops taken; no entry or a port without a link is a dead end.\n"
            "--check of lft:FILE checks the tables as a switch holds them, on one VL (--vcs\n"
            "does not apply): it walks every route from each switch a CA hangs off to each CA\n"
            "port's LID (--switch-lids: from every switch to every LID), counts how each ends,\n"
            "and looks for a credit loop in the dependencies of those routes, printed as its\n"
            "channels (switch, port) with a LID whose routes take each. Exit 0 when every\n"
            "route delivers and there is no credit loop, 1 otherwise.\n",
        .group = {{"options", rows, sizeof rows / sizeof rows[0]}},
        .notes = "--trace under a routing with random or adaptive choices follows a packet with\n"
                 "random bits 0 in an empty network. To a switch, routings other than lft follow\n"
                 "the first min-hop port, as --dump-lft writes for switch LIDs.\n",
        .examples =
            "  netfab route --topo torus:4x4,c=1 --routing dor --check\n"
            "  netfab route --topo file:fabric.ibnet --routing minhop --dump-lft lfts.dump\n"
            "  netfab route --topo file:fabric.ibnet --routing lft:dump_fts.txt --check "
            "--switch-lids\n"
            "  netfab route --topo file:fabric.ibnet --routing lft:opensm-lfts.dump "
            "--trace 5 28\n",
        .max_args = 1};
    int argi, ex = nf_opt_parse(&spec, argc, argv, &argi);
    if (ex) return ex == NF_OPT_HELP ? NF_EXIT_OK : ex;
    const char *trace_dst = argi < argc ? argv[argi] : NULL;
    nf_app_routing ar = {0};
    const char *need[] = {"--topo SPEC", "--routing NAME", "one of --check, --dump-lft, --trace"};
    bool have[] = {topo, rname, check || dump || trace};
    if ((ex = nf_app_require("route", 3, need, have))) return ex;
    if (check && trace)
        return nf_opt_usage("route", "--check and --trace each print a report: one at a time");
    if (trace && !trace_dst) return nf_opt_usage("route", "--trace wants SRC DST");
    if (!trace && trace_dst) return nf_opt_usage("route", "unexpected argument '%s'", trace_dst);
    if (switch_lids && !check) return nf_opt_usage("route", "--switch-lids goes with --check");
    if ((ex = nf_app_routing_parse("route", rname, &ar))) return ex;
    if (switch_lids && !ar.lft_path)
        return nf_opt_usage("route", "--switch-lids checks installed tables: --routing lft:FILE");
    nf_fabric *f;
    nf_hops *h;
    if ((ex = nf_app_fabric(topo, 0, &f, &h))) return ex;
    if (!(ex = nf_app_routing_resolve(&ar, f))) {
        if (dump) ex = do_dump(f, h, ar.r, &c, dump);
        if (!ex && check)
            ex = ar.t ? do_table_check(f, ar.t, rname, switch_lids, json)
                      : do_check(f, h, ar.r, &c, rname, topo, json);
        if (!ex && trace) ex = do_trace(f, h, ar.r, &c, trace, trace_dst, json);
    }
    nf_app_routing_fini(&ar);
    nf_hops_free(h);
    nf_fabric_free(f);
    return ex;
}
