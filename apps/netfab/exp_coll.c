/* SPDX-License-Identifier: MIT */
/* `netfab exp collectives`: the Sunway paper's hardware collectives against the same collectives
 * made of point-to-point messages, on fattree:k=16 (1,024 endpoints), for 16 .. 512 ranks on the
 * first endpoints: barrier, broadcast, reduce and allreduce of 8 bytes; hardware: gather up a
 * logical tree of fan-in 4 with the reduction in the NICs, the root's multicast down the group's
 * FULB tree; software: binomial broadcast and reduce, recursive-doubling barrier,
 * recursive-doubling and ring allreduce. The latency of one collective on an idle fabric (the
 * simulator has no noise: one run is the mean) and its link traffic (flits over switch-to-switch
 * links). Each one twice: with no host time, and with the hosts of the multicast experiments'
 * model (exp_mcast_host: a host's time issuing a message, receiving one, its copies and jitter,
 * fitted to the multicast paper's Tables 1 and 2), or with --host-cycles the older model (that
 * many cycles a message on its issuing host: an MPI's send and receive overheads); the ring
 * not (2 (n - 1) host times in a row: long to simulate, and never the choice for 8 bytes;
 * --quick: the host rows at its largest job only). The hardware ones pay a host only where a
 * host takes part: the result's multicast to the members' hosts (the gather runs in the NICs). */
#include "cmd.h"
#include "exp.h"
#include "netfab/gen.h"
#include "netfab/groups.h"
#include "netfab/hops.h"
#include "netfab/mcast.h"
#include "netfab/sim.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>

enum { FANIN = 4 };

static int run_one(nf_sim *s, json_t *rows, const char *op, const char *impl, const char *alg,
                   uint32_t n, const nf_sim_config *host) {
    nf_sim_script_result res;
    int rc = nf_sim_run_script(s, UINT64_MAX, &res);
    if (rc) return nf_app_report(rc, NULL);
    if (res.deadlock || res.unfinished) {
        fprintf(stderr, "netfab exp: collectives: %s %s on %u ranks did not complete\n", op, alg,
                n);
        return NF_EXIT_FAIL;
    }
    json_t *row = json_pack("{s:s, s:s, s:s, s:I, s:f, s:I}", "op", op, "impl", impl, "algorithm",
                            alg, "nodes", (json_int_t)n, "lat_mean", (double)res.cycles,
                            "link_flits", (json_int_t)res.flit_hops);
    /* the host's knobs: its time issuing (host_cycles, the older name), receiving, copying */
    json_object_set_new(row, "host_cycles",
                        json_integer(host ? (json_int_t)host->host_msg_cycles : 0));
    if (host && (host->host_recv_cycles || host->host_copy_bytes || host->host_jitter_cycles)) {
        json_object_set_new(row, "host_recv", json_integer((json_int_t)host->host_recv_cycles));
        json_object_set_new(row, "host_copy", json_integer((json_int_t)host->host_copy_bytes));
        json_object_set_new(row, "host_jitter", json_integer((json_int_t)host->host_jitter_cycles));
    }
    json_array_append_new(rows, row);
    return NF_EXIT_OK;
}

int exp_collectives(const exp_opts *o, json_t *rows) {
    const char *topo = "fattree:k=16";
    nf_fabric *f;
    nf_hops *h;
    int rc = nf_app_fabric(topo, o->threads, &f, &h);
    if (rc) return rc;
    uint32_t max_n = o->quick ? 128 : 512;
    uint32_t *ranks = malloc(max_n * sizeof *ranks);
    nf_node *mem = malloc(max_n * sizeof *mem);
    if (!ranks || !mem) rc = nf_app_report(NF_ENOMEM, NULL);
    static const struct {
        const char *op;
        nf_sim_hw_coll hw;
        nf_sim_coll sw[2];
        const char *alg[2], *alg_host[2];
        unsigned n_sw;
    } ops[] = {
        {"barrier",
         NF_SIM_HW_BARRIER,
         {NF_SIM_BARRIER},
         {"recursive doubling"},
         {"recursive doubling + host"},
         1},
        {"broadcast",
         NF_SIM_HW_BCAST,
         {NF_SIM_BCAST_BINOMIAL},
         {"binomial"},
         {"binomial + host"},
         1},
        {"reduce",
         NF_SIM_HW_REDUCE,
         {NF_SIM_REDUCE_BINOMIAL},
         {"binomial"},
         {"binomial + host"},
         1},
        {"allreduce",
         NF_SIM_HW_ALLREDUCE,
         {NF_SIM_ALLREDUCE_RD, NF_SIM_ALLREDUCE_RING},
         {"recursive doubling", "ring"},
         {"recursive doubling + host", NULL}, /* the ring with host time: 2 (n - 1) x 356 */
         2},
    };
    for (uint32_t n = 16; n <= max_n && rc == NF_EXIT_OK; n *= 2) {
        exp_progress((double)(n - 16) / (2.0 * max_n - 16), "collectives: %u ranks", n);
        for (uint32_t i = 0; i < n; i++)
            ranks[i] = i, mem[i] = f->n_switches + i;
        uint32_t off[2] = {0, n};
        nf_groups g = {.n = 1, .off = off, .member = mem};
        nf_mcast *m = NULL;
        nf_sim *s = NULL, *sh = NULL; /* sh: the same with the host's time per message */
        nf_diag d = {{0}, 0, {0}};
        nf_sim_config c;
        nf_sim_config_defaults(&c);
        c.vcs = 8, c.seed = o->seed; /* 1-flit packets of 32 bytes */
        nf_sim_config ch = c;
        if (o->host_cycles) { /* the older model: the issuing host's time alone */
            ch.host_msg_cycles = o->host_cycles;
        } else { /* the multicast experiments' hosts; this experiment's own routers */
            exp_opts ho = *o;
            ho.host = 1;
            exp_mcast_host(&ho, &ch);
        }
        if ((rc = nf_mcast_route(f, h, &g, nf_mcast_engine_find("fulb"), &m, &d)) ||
            (rc = nf_sim_new(f, h, &c, nf_sim_routing_find("minhop"),
                             nf_sim_traffic_find("uniform"), &s, &d)) ||
            (rc = nf_sim_set_mcast(s, &g, m)) ||
            (rc = nf_sim_new(f, h, &ch, nf_sim_routing_find("minhop"),
                             nf_sim_traffic_find("uniform"), &sh, &d)) ||
            (rc = nf_sim_set_mcast(sh, &g, m)))
            rc = nf_app_report(rc, &d);
        for (size_t k = 0; k < sizeof ops / sizeof ops[0] && rc == NF_EXIT_OK; k++) {
            uint32_t first, cnt;
            for (int with_host = 0; with_host < 2 && rc == NF_EXIT_OK; with_host++) {
                if (with_host && o->quick && n < max_n) continue;
                nf_sim *t = with_host ? sh : s;
                nf_sim_script_clear(t);
                if ((rc = nf_sim_post_hw_collective(t, ops[k].hw, ranks, n, 8, FANIN, 0, &first,
                                                    &cnt)))
                    rc = nf_app_report(rc, NULL);
                else
                    rc = run_one(t, rows, ops[k].op, "hw",
                                 with_host ? "tree + multicast + host" : "tree + multicast", n,
                                 with_host ? &ch : NULL);
            }
            if (rc) break;
            for (unsigned a = 0; a < 2 * ops[k].n_sw && rc == NF_EXIT_OK; a++) {
                bool with_host = a >= ops[k].n_sw; /* without the host's time, then with it */
                unsigned i = a % ops[k].n_sw;
                if (with_host && (!ops[k].alg_host[i] || (o->quick && n < max_n))) continue;
                nf_sim *t = with_host ? sh : s;
                nf_sim_script_clear(t);
                if ((rc = nf_sim_post_collective(t, ops[k].sw[i], ranks, n, 8, NF_SIM_RAIL0, &first,
                                                 &cnt)))
                    rc = nf_app_report(rc, NULL);
                else
                    rc = run_one(t, rows, ops[k].op, "sw",
                                 with_host ? ops[k].alg_host[i] : ops[k].alg[i], n,
                                 with_host ? &ch : NULL);
            }
        }
        nf_sim_free(s);
        nf_sim_free(sh);
        nf_mcast_free(m);
    }
    free(ranks);
    free(mem);
    nf_hops_free(h);
    nf_fabric_free(f);
    return rc;
}
