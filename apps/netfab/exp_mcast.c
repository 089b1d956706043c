/* SPDX-License-Identifier: MIT */
/* `netfab exp mcast-height`: the multicast paper's first experiment in simulation. A group of 4
 * ranks on a two-level fat tree (8 leaves of 8 endpoints, 8 spines): on 4 endpoints of one leaf
 * (the tree's height is 1: the leaf replicates) or on 4 leaves (height 2: up to a spine and down);
 * 5,000 hardware multicasts of each size, one after the other, the ranks taking turns at the
 * root; the mean and 99th-percentile latency from a message's release to its last member.
 * --router-delay sets the routers' delay (the rows then carry it). */
#include "cmd.h"
#include "exp.h"
#include "netfab/gen.h"
#include "netfab/groups.h"
#include "netfab/hops.h"
#include "netfab/mcast.h"
#include "netfab/sim.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int cmp_u64(const void *a, const void *b) {
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

void exp_mcast_host(const exp_opts *o, nf_sim_config *c) {
    bool model = o->host == 1;
    c->host_msg_cycles = o->host_send_given ? o->host_send : model ? EXP_MC_HOST_SEND : 0;
    c->host_recv_cycles = o->host_recv_given ? o->host_recv : model ? EXP_MC_HOST_RECV : 0;
    c->host_copy_bytes = o->host_copy_given ? o->host_copy : model ? EXP_MC_HOST_COPY : 0;
    c->host_jitter_cycles = o->host_jitter_given ? o->host_jitter : model ? EXP_MC_HOST_JITTER : 0;
}

/* The multicast experiments' network and hosts: with the paper's host (--host paper) the router
 * delay fitted with it, buffers that cover the credit loop; *closed: the groups send in a closed
 * loop (no --period given). */
static void mcast_config(const exp_opts *o, nf_sim_config *c, bool *closed) {
    bool model = o->host == 1;
    c->router_delay = o->router_delay ? o->router_delay : model ? EXP_MC_ROUTER_DELAY : 3;
    exp_mcast_host(o, c);
    /* a slot's credit is back a router delay, the credit delay and two links after its flit
     * came in: buffers that cover it keep a link busy however long the routers take */
    unsigned loop = c->router_delay + c->credit_delay + 2 * c->lat_local + c->pkt_flits;
    if (c->buf_flits < loop) c->buf_flits = loop;
    *closed = model && !o->period_given;
}

/* The host model's knobs in a row, when they are not the bare network's. */
static void host_fields(json_t *row, const nf_sim_config *c, bool closed) {
    if (!c->host_msg_cycles && !c->host_recv_cycles && !c->host_copy_bytes &&
        !c->host_jitter_cycles)
        return;
    json_object_set_new(row, "host_send", json_integer((json_int_t)c->host_msg_cycles));
    json_object_set_new(row, "host_recv", json_integer((json_int_t)c->host_recv_cycles));
    json_object_set_new(row, "host_copy", json_integer((json_int_t)c->host_copy_bytes));
    json_object_set_new(row, "host_jitter", json_integer((json_int_t)c->host_jitter_cycles));
    if (closed) json_object_set_new(row, "closed_loop", json_true());
}

/* Runs the script of n messages (ids 0..n-1) on s; their mean latency, due to completion (the
 * issuing host's time, the network's and the receiving host's),
 * and the 99th percentile (the ceil(0.99 n)-th smallest) into *mean, *p99 (lat: room for n).
 * NF_EXIT_OK, or the exit status after saying why. */
static int run_latencies(nf_sim *s, const char *exp, uint32_t n, uint64_t *lat, double *mean,
                         uint64_t *p99) {
    nf_sim_script_result res;
    int rc = nf_sim_run_script(s, UINT64_MAX, &res);
    if (rc) return nf_app_report(rc, NULL);
    if (res.done != n) {
        fprintf(stderr, "netfab exp: %s: %u of %u messages done%s\n", exp, res.done, n,
                res.deadlock ? " (deadlock)" : "");
        return NF_EXIT_FAIL;
    }
    double sum = 0;
    for (uint32_t i = 0; i < n; i++) {
        nf_sim_msg_times t;
        nf_sim_msg_times_of(s, i, &t);
        lat[i] = t.done - t.due;
        sum += (double)lat[i];
    }
    qsort(lat, n, sizeof *lat, cmp_u64);
    size_t k = (size_t)ceil(0.99 * n);
    *mean = n ? sum / n : 0;
    *p99 = n ? lat[k ? k - 1 : 0] : 0;
    return NF_EXIT_OK;
}

int exp_mcast_height(const exp_opts *o, json_t *rows) {
    const char *topo = "gft:leaves=8,nodes=8,spines=8,sib=0";
    nf_fabric *f;
    nf_hops *h;
    int rc = nf_app_fabric(topo, o->threads, &f, &h);
    if (rc) return rc;
    unsigned count = o->quick ? 500 : 5000;
    static const uint64_t sizes[] = {8, 256, 2048, 8192};
    static const struct {
        unsigned height, stride; /* members: endpoints 0, stride, 2 stride, 3 stride */
    } shapes[] = {{1, 1}, {2, 8}};
    uint64_t *lat = malloc(count * sizeof *lat);
    for (size_t k = 0; k < 2 && rc == NF_EXIT_OK && lat; k++) {
        nf_node mem[4];
        for (unsigned i = 0; i < 4; i++)
            mem[i] = f->n_switches + i * shapes[k].stride;
        uint32_t off[2] = {0, 4};
        nf_groups g = {.n = 1, .off = off, .member = mem};
        nf_mcast *m = NULL;
        nf_sim *s = NULL;
        nf_diag d = {{0}, 0, {0}};
        /* 256-byte packets (8 flits of 32 bytes), 8 VCs */
        nf_sim_config c;
        nf_sim_config_defaults(&c);
        c.vcs = 8, c.pkt_flits = 8, c.threads = 1, c.seed = o->seed;
        bool closed;
        mcast_config(o, &c, &closed);
        if ((rc = nf_mcast_route(f, h, &g, nf_mcast_engine_find("minihop"), &m, &d)) ||
            (rc = nf_sim_new(f, h, &c, nf_sim_routing_find("minhop"),
                             nf_sim_traffic_find("uniform"), &s, &d)) ||
            (rc = nf_sim_set_mcast(s, &g, m))) {
            rc = nf_app_report(rc, &d);
        } else if (m->height[0] != shapes[k].height) { /* links, root to farthest member */
            fprintf(stderr, "netfab exp: mcast-height: tree of height %u, wanted %u\n",
                    m->height[0], shapes[k].height);
            rc = NF_EXIT_FAIL;
        }
        for (size_t z = 0; z < sizeof sizes / sizeof sizes[0] && rc == NF_EXIT_OK; z++) {
            exp_progress((double)(k * 4 + z) / 8, "mcast-height: height %u, %llu bytes",
                         shapes[k].height, (unsigned long long)sizes[z]);
            nf_sim_script_clear(s);
            uint32_t id, prev = 0;
            for (unsigned i = 0; i < count && rc == NF_EXIT_OK; i++) {
                nf_sim_msg mc = {.src = (uint32_t)(mem[i % 4] - f->n_switches),
                                 .bytes = sizes[z],
                                 .kind = NF_SIM_MCAST,
                                 .group = 0};
                if ((rc = nf_sim_post(s, &mc, &id)) || (i && (rc = nf_sim_after(s, prev, id))))
                    rc = nf_app_report(rc, NULL);
                prev = id;
            }
            double mean = 0;
            uint64_t p99 = 0;
            if (rc == NF_EXIT_OK) rc = run_latencies(s, "mcast-height", count, lat, &mean, &p99);
            if (rc != NF_EXIT_OK) break;
            json_t *row =
                json_pack("{s:I, s:I, s:f, s:I, s:I}", "height", (json_int_t)shapes[k].height,
                          "msg_bytes", (json_int_t)sizes[z], "lat_mean", mean, "lat_p99",
                          (json_int_t)p99, "messages", (json_int_t)count);
            if (c.router_delay != 3)
                json_object_set_new(row, "router_delay", json_integer((json_int_t)c.router_delay));
            host_fields(row, &c, false);
            json_array_append_new(rows, row);
        }
        nf_sim_free(s);
        nf_mcast_free(m);
    }
    if (!lat) rc = nf_app_report(NF_ENOMEM, NULL);
    free(lat);
    nf_hops_free(h);
    nf_fabric_free(f);
    return rc;
}

/* `netfab exp mcast-efi`: the multicast paper's second experiment. On a two-level fat tree of 512
 * endpoints (32 leaves of 16, 18 spines), k groups of 4 adjacent endpoints all forced onto one
 * tree (the minihop tree of all their endpoints), so every link of it carries k groups (EFI k)
 * and every packet floods every endpoint on it; all groups multicast at once, every period
 * (--period, EXP_EFI_PERIOD cycles: the program's time between two tests), the ranks taking
 * turns at the root; mean and p99 latency to the last of a message's own members. Rows carry
 * the period when --period is given. */
int exp_mcast_efi(const exp_opts *o, json_t *rows) {
    uint64_t period = o->period ? o->period : EXP_EFI_PERIOD;
    const char *topo = "gft:leaves=32,nodes=16,spines=18,sib=0";
    nf_fabric *f;
    nf_hops *h;
    int rc = nf_app_fabric(topo, o->threads, &f, &h);
    if (rc) return rc;
    unsigned per_group = o->quick ? 20 : 200, max_k = o->quick ? 32 : 128;
    static const uint64_t sizes[] = {8, 2048};
    uint64_t *lat = malloc((size_t)per_group * max_k * sizeof *lat);
    nf_node *mem = malloc(4 * (size_t)max_k * sizeof *mem);
    uint32_t *off = malloc(((size_t)max_k + 1) * sizeof *off);
    uint32_t *toff = malloc(((size_t)max_k + 1) * sizeof *toff);
    if (!lat || !mem || !off || !toff) rc = nf_app_report(NF_ENOMEM, NULL);
    for (unsigned k = 1; k <= max_k && rc == NF_EXIT_OK; k *= 2) {
        for (unsigned i = 0; i < 4 * k; i++)
            mem[i] = f->n_switches + i;
        /* the shared tree: all 4k endpoints as one group */
        uint32_t all_off[2] = {0, 4 * k};
        nf_groups all = {.n = 1, .off = all_off, .member = mem};
        nf_mcast *one = NULL;
        nf_sim *s = NULL;
        nf_diag d = {{0}, 0, {0}};
        nf_link *links = NULL;
        if ((rc = nf_mcast_route(f, h, &all, nf_mcast_engine_find("minihop"), &one, &d))) {
            rc = nf_app_report(rc, &d);
            break;
        }
        uint32_t L = one->tree_off[1];
        links = malloc(((size_t)L * k + 1) * sizeof *links);
        nf_node *root = malloc(k * sizeof *root);
        uint8_t *height = malloc(k);
        int32_t *status = calloc(k, sizeof *status);
        for (unsigned g = 0; links && root && height && status && g < k; g++) {
            off[g] = 4 * g;
            toff[g] = g * L;
            root[g] = one->root[0];
            height[g] = one->height[0];
            memcpy(links + (size_t)g * L, one->tree_link, L * sizeof *links);
        }
        off[k] = 4 * k;
        toff[k] = k * L;
        nf_groups g = {.n = k, .off = off, .member = mem};
        nf_mcast shared = {.n_groups = k,
                           .root = root,
                           .height = height,
                           .status = status,
                           .tree_off = toff,
                           .tree_link = links};
        nf_sim_config c;
        nf_sim_config_defaults(&c);
        c.vcs = 8, c.pkt_flits = 8, c.seed = o->seed;
        bool closed;
        mcast_config(o, &c, &closed);
        if (!links || !root || !height || !status)
            rc = nf_app_report(NF_ENOMEM, NULL);
        else if ((rc = nf_sim_new(f, h, &c, nf_sim_routing_find("minhop"),
                                  nf_sim_traffic_find("uniform"), &s, &d)) ||
                 (rc = nf_sim_set_mcast(s, &g, &shared)))
            rc = nf_app_report(rc, &d);
        for (size_t z = 0; z < 2 && rc == NF_EXIT_OK; z++) {
            exp_progress(((double)k - 1 + (double)k * (double)z / 2) / (2.0 * max_k - 1),
                         "mcast-efi: EFI %u, %llu bytes", k, (unsigned long long)sizes[z]);
            nf_sim_script_clear(s);
            uint32_t id, prev = 0, n = 0;
            for (unsigned gi = 0; gi < k && rc == NF_EXIT_OK; gi++)
                for (unsigned i = 0; i < per_group && rc == NF_EXIT_OK; i++) {
                    nf_sim_msg mc = {.src = (uint32_t)(mem[4 * gi + i % 4] - f->n_switches),
                                     .bytes = sizes[z],
                                     .kind = NF_SIM_MCAST,
                                     .group = gi,
                                     .at = closed ? 0 : (uint64_t)i * period};
                    if ((rc = nf_sim_post(s, &mc, &id)) ||
                        (closed && i && (rc = nf_sim_after(s, prev, id))))
                        rc = nf_app_report(rc, NULL);
                    prev = id;
                    n++;
                }
            double mean = 0;
            uint64_t p99 = 0;
            if (rc == NF_EXIT_OK) rc = run_latencies(s, "mcast-efi", n, lat, &mean, &p99);
            if (rc != NF_EXIT_OK) break;
            json_t *row = json_pack("{s:I, s:I, s:f, s:I, s:I}", "efi", (json_int_t)k, "msg_bytes",
                                    (json_int_t)sizes[z], "lat_mean", mean, "lat_p99",
                                    (json_int_t)p99, "messages", (json_int_t)n);
            if (o->period) json_object_set_new(row, "period", json_integer((json_int_t)period));
            if (c.router_delay != 3)
                json_object_set_new(row, "router_delay", json_integer((json_int_t)c.router_delay));
            host_fields(row, &c, closed);
            json_array_append_new(rows, row);
        }
        nf_sim_free(s);
        nf_mcast_free(one);
        free(links);
        free(root);
        free(height);
        free(status);
    }
    free(lat);
    free(mem);
    free(off);
    free(toff);
    nf_hops_free(h);
    nf_fabric_free(f);
    return rc;
}

/* The period of mcast-workload's broadcasts (not fitted: the paper has no such experiment). */
#define PERIOD 2000

/* `netfab exp mcast-workload`: the point of it all. A job's 3D-grid communicators (grid3d:16x8x8,
 * ranks shuffled over the 1,024 endpoints of fattree:k=16, as a scheduler leaves them) all
 * broadcasting at once, every PERIOD cycles from a root taking turns, over the trees of
 * MINIHOP-MC, SSSP-MC or FULB-MC; the mean and p99 latency to a message's last member. */
int exp_mcast_workload(const exp_opts *o, json_t *rows) {
    const char *topo = "fattree:k=16", *spec = "grid3d:16x8x8";
    nf_fabric *f;
    nf_hops *h;
    int rc = nf_app_fabric(topo, o->threads, &f, &h);
    if (rc) return rc;
    nf_groups *g = NULL;
    nf_diag d = {{0}, 0, {0}};
    nf_workload_opts wo = {.procs_per_node = 1, .mapping = NF_MAP_RANDOM, .seed = o->seed};
    if ((rc = nf_groups_build(f, spec, &wo, &g, &d))) {
        nf_hops_free(h);
        nf_fabric_free(f);
        return nf_app_report(rc, &d);
    }
    unsigned per_group = o->quick ? 2 : 50;
    static const char *const engines[] = {"minihop", "sssp", "fulb"};
    uint64_t *lat = malloc(((size_t)g->n * per_group + 1) * sizeof *lat);
    if (!lat) rc = nf_app_report(NF_ENOMEM, NULL);
    for (size_t ei = 0; ei < 3 && rc == NF_EXIT_OK; ei++) {
        exp_progress((double)ei / 3, "mcast-workload: %s", engines[ei]);
        nf_mcast *m = NULL;
        nf_sim *s = NULL;
        nf_sim_config c;
        nf_sim_config_defaults(&c);
        c.vcs = 8, c.pkt_flits = 8, c.seed = o->seed;
        if ((rc = nf_mcast_route(f, h, g, nf_mcast_engine_find(engines[ei]), &m, &d)) ||
            (rc = nf_sim_new(f, h, &c, nf_sim_routing_find("minhop"),
                             nf_sim_traffic_find("uniform"), &s, &d)) ||
            (rc = nf_sim_set_mcast(s, g, m))) {
            rc = nf_app_report(rc, &d);
            nf_sim_free(s);
            nf_mcast_free(m);
            break;
        }
        nf_mcast_stats st;
        nf_mcast_stats_compute(f, g, m, &st);
        uint32_t n = 0, id;
        for (uint32_t k = 0; k < g->n && rc == NF_EXIT_OK; k++) {
            uint32_t size = g->off[k + 1] - g->off[k];
            if (size < 2) continue;
            for (unsigned i = 0; i < per_group && rc == NF_EXIT_OK; i++, n++) {
                nf_node root = g->member[g->off[k] + i % size];
                nf_sim_msg mc = {.src = (uint32_t)(root - f->n_switches),
                                 .bytes = 2048,
                                 .kind = NF_SIM_MCAST,
                                 .group = k,
                                 .at = (uint64_t)i * PERIOD};
                if ((rc = nf_sim_post(s, &mc, &id))) rc = nf_app_report(rc, NULL);
            }
        }
        double mean = 0;
        uint64_t p99 = 0;
        if (rc == NF_EXIT_OK) rc = run_latencies(s, "mcast-workload", n, lat, &mean, &p99);
        if (rc == NF_EXIT_OK)
            json_array_append_new(
                rows, json_pack("{s:s, s:f, s:I, s:I, s:I, s:I}", "engine", engines[ei], "lat_mean",
                                mean, "lat_p99", (json_int_t)p99, "max_efi", (json_int_t)st.max_efi,
                                "groups", (json_int_t)g->n, "messages", (json_int_t)n));
        nf_sim_free(s);
        nf_mcast_free(m);
    }
    free(lat);
    nf_groups_free(g);
    nf_hops_free(h);
    nf_fabric_free(f);
    return rc;
}
