/* SPDX-License-Identifier: MIT */
/* `netfab exp dual-rail`: the Sunway paper's dual-port NIC on the Sunway prototype (gft, two
 * rails). One message at a time on an idle fabric, endpoint 0 to the last one (leaves apart): the
 * bandwidth of a put over one rail, two rails with the packets of a message on a fixed rail,
 * and two rails with the port chosen per packet (least busy); then when the target learns of
 * the data: a put with a reply word incremented by the target NIC on completion, against a write
 * (acknowledged by the target NIC) followed by a short notification message; and a broadcast
 * to every endpoint over the multicast chain of rail 0 alone, or of both rails with each packet
 * on the freer port. */
#include "cmd.h"
#include "exp.h"
#include "netfab/gen.h"
#include "netfab/hops.h"
#include "netfab/mcast.h"
#include "netfab/sim.h"

#include <stdio.h>
#include <stdlib.h>

/* Runs a script of one or two messages; the times of the first and the last. */
static int one(nf_sim *s, const nf_sim_msg *a, const nf_sim_msg *b, nf_sim_msg_times *ta,
               nf_sim_msg_times *tb) {
    nf_sim_script_clear(s);
    uint32_t ia, ib = 0;
    int rc = nf_sim_post(s, a, &ia);
    if (!rc && b && !(rc = nf_sim_post(s, b, &ib))) rc = nf_sim_after(s, ia, ib);
    nf_sim_script_result r;
    if (!rc) rc = nf_sim_run_script(s, UINT64_MAX, &r);
    if (rc) return nf_app_report(rc, NULL);
    if (r.deadlock || r.unfinished) {
        fprintf(stderr, "netfab exp: dual-rail: a message did not complete\n");
        return NF_EXIT_FAIL;
    }
    nf_sim_msg_times_of(s, ia, ta);
    if (b) nf_sim_msg_times_of(s, ib, tb);
    return NF_EXIT_OK;
}

/* One row: a put of b bytes from endpoint 0 to dst on rail mode rm, or, for the "fixed" way
 * on two rails, two puts of b / 2 with the descriptors giving rail 0 and rail 1; after a 1 MiB
 * put to another endpoint on rail 0 when busy. Bandwidth: b over the cycles from release to
 * the last byte in. */
static int bandwidth(nf_sim *s, json_t *rows, const char *measure, unsigned rails, const char *mode,
                     nf_sim_rail_mode rm, uint32_t dst, uint64_t b, bool busy) {
    bool halves = rails == 2 && rm == NF_SIM_RAIL0;
    nf_sim_msg bg = {.src = 0,
                     .dst = dst - 1,
                     .bytes = (uint64_t)1 << 20,
                     .kind = NF_SIM_PUT_REPLY,
                     .rail = NF_SIM_RAIL0};
    nf_sim_msg m = {
        .src = 0, .dst = dst, .bytes = halves ? b / 2 : b, .kind = NF_SIM_PUT_REPLY, .rail = rm};
    nf_sim_msg m2 = m;
    m2.rail = NF_SIM_RAIL1;
    nf_sim_script_clear(s);
    uint32_t ib, i1, i2 = 0;
    nf_sim_script_result r;
    int rc;
    if ((busy && (rc = nf_sim_post(s, &bg, &ib))) || (rc = nf_sim_post(s, &m, &i1)) ||
        (halves && (rc = nf_sim_post(s, &m2, &i2))) || (rc = nf_sim_run_script(s, UINT64_MAX, &r)))
        return nf_app_report(rc, NULL);
    if (r.deadlock || r.unfinished) {
        fprintf(stderr, "netfab exp: dual-rail: a message did not complete\n");
        return NF_EXIT_FAIL;
    }
    nf_sim_msg_times t, t2;
    nf_sim_msg_times_of(s, i1, &t);
    if (halves) {
        nf_sim_msg_times_of(s, i2, &t2);
        if (t2.data_in > t.data_in) t.data_in = t2.data_in;
    }
    uint64_t cyc = t.data_in - t.released;
    json_array_append_new(rows, json_pack("{s:s, s:I, s:s, s:I, s:f, s:I}", "measure", measure,
                                          "rails", (json_int_t)rails, "mode", mode, "msg_bytes",
                                          (json_int_t)b, "bandwidth", (double)b / (double)cyc,
                                          "cycles", (json_int_t)cyc));
    return NF_EXIT_OK;
}

void exp_sunway_config(const exp_opts *o, nf_sim_config *c) {
    /* NIC overheads: 40 cycles a message, 8 a short one or a hardware reply (nf_sim_config);
     * the SWHNI's two message engines sharing its two ports (DESDP), 256 messages in flight */
    nf_sim_config_defaults(c);
    c->vcs = 4, c->buf_flits = 64, c->pkt_flits = 8, c->threads = 1, c->seed = o->seed;
    c->nic_engines = 2;
}

int exp_sunway_sim(const exp_opts *o, nf_fabric **f, nf_hops **h, nf_sim **s) {
    int rc = nf_app_fabric("gft:preset=sunway-proto", o->threads, f, h);
    if (rc) return rc;
    nf_sim_config c;
    exp_sunway_config(o, &c);
    nf_diag d = {{0}, 0, {0}};
    if ((rc = nf_sim_new(*f, *h, &c, nf_sim_routing_find("minhop"), nf_sim_traffic_find("uniform"),
                         s, &d))) {
        nf_hops_free(*h);
        nf_fabric_free(*f);
        return nf_app_report(rc, &d);
    }
    return NF_EXIT_OK;
}

int exp_dual_rail(const exp_opts *o, json_t *rows) {
    nf_fabric *f;
    nf_hops *h;
    nf_sim *s;
    int rc = exp_sunway_sim(o, &f, &h, &s);
    if (rc) return rc;
    uint32_t dst = nf_sim_endpoints(s) - 1;
    uint64_t max_bytes = o->quick ? (uint64_t)1 << 20 : (uint64_t)16 << 20;
    static const struct {
        unsigned rails;
        const char *mode;
        nf_sim_rail_mode rm;
    } ways[] = {{1, "rail 0", NF_SIM_RAIL0},
                {2, "fixed", NF_SIM_RAIL0},
                {2, "dynamic", NF_SIM_RAIL_DYNAMIC}};
    for (size_t w = 0; w < 3 && rc == NF_EXIT_OK; w++)
        for (uint64_t b = 256; b <= max_bytes && rc == NF_EXIT_OK; b *= 4) {
            exp_progress(((double)w + (double)b / ((double)max_bytes * 4 / 3)) / 3,
                         "dual-rail: %s, %llu bytes", ways[w].mode, (unsigned long long)b);
            rc = bandwidth(s, rows, "bandwidth", ways[w].rails, ways[w].mode, ways[w].rm, dst, b,
                           false);
        }
    /* rail 0 already busy: the same endpoint has just handed its rail 0 a 1 MiB put to another
     * endpoint; then 1 MiB to dst on rail 0, split over the rails as two messages, or per
     * packet on the less busy port */
    for (size_t w = 0; w < 3 && rc == NF_EXIT_OK; w++)
        rc = bandwidth(s, rows, "bandwidth, rail 0 busy", ways[w].rails, ways[w].mode, ways[w].rm,
                       dst, (uint64_t)1 << 20, true);
    /* when the target knows: reply word vs write + notification, on two dynamic rails */
    for (uint64_t b = 256; b <= (o->quick ? 65536u : 1u << 20) && rc == NF_EXIT_OK; b *= 16) {
        nf_sim_msg put = {.src = 0,
                          .dst = dst,
                          .bytes = b,
                          .kind = NF_SIM_PUT_REPLY,
                          .rail = NF_SIM_RAIL_DYNAMIC};
        nf_sim_msg wr = put, note = put;
        wr.kind = NF_SIM_WRITE;
        note.kind = NF_SIM_SHORT;
        note.bytes = 8;
        nf_sim_msg_times t, tw, tn;
        if ((rc = one(s, &put, NULL, &t, NULL)) || (rc = one(s, &wr, &note, &tw, &tn))) break;
        json_array_append_new(rows, json_pack("{s:s, s:I, s:s, s:I, s:I}", "measure",
                                              "target completion", "rails", (json_int_t)2, "mode",
                                              "reply word", "msg_bytes", (json_int_t)b, "latency",
                                              (json_int_t)(t.done - t.released)));
        json_array_append_new(rows, json_pack("{s:s, s:I, s:s, s:I, s:I}", "measure",
                                              "target completion", "rails", (json_int_t)2, "mode",
                                              "write + notification", "msg_bytes", (json_int_t)b,
                                              "latency", (json_int_t)(tn.done - tw.released)));
    }
    /* a broadcast from endpoint 0 to every other endpoint: the multicast chain on rail 0 alone,
     * or on both rails with each packet on the freer port */
    uint32_t E = nf_sim_endpoints(s), goff[2] = {0, E};
    nf_node *mem = rc ? NULL : malloc((size_t)E * sizeof *mem);
    nf_mcast *m[2] = {NULL, NULL};
    if (!rc && !mem) rc = nf_app_report(NF_ENOMEM, NULL);
    for (uint32_t i = 0; mem && i < E; i++)
        mem[i] = nf_sim_endpoint_ca(s, i);
    nf_groups g = {.n = 1, .off = goff, .member = mem};
    if (!rc) rc = exp_mcast_rails(f, h, &g, "fulb", &s, 1, m);
    for (unsigned rails = 1; rails <= 2 && !rc; rails++) {
        int e = nf_sim_set_mcast_rails(s, &g, m[0], rails == 2 ? m[1] : NULL);
        if (e) rc = nf_app_report(e, NULL);
        for (uint64_t b = 256; b <= (o->quick ? 65536u : 1u << 20) && !rc; b *= 4) {
            exp_progress(0.99, "dual-rail: multicast, %u rails, %llu bytes", rails,
                         (unsigned long long)b);
            nf_sim_msg mc = {
                .src = 0, .bytes = b, .kind = NF_SIM_MCAST, .rail = NF_SIM_RAIL_DYNAMIC};
            nf_sim_msg_times t;
            if ((rc = one(s, &mc, NULL, &t, NULL))) break;
            uint64_t cyc = t.done - t.released;
            json_array_append_new(
                rows, json_pack("{s:s, s:I, s:s, s:I, s:f, s:I}", "measure", "multicast", "rails",
                                (json_int_t)rails, "mode", rails == 2 ? "dynamic" : "rail 0",
                                "msg_bytes", (json_int_t)b, "bandwidth", (double)b / (double)cyc,
                                "cycles", (json_int_t)cyc));
        }
    }
    nf_mcast_free(m[0]);
    nf_mcast_free(m[1]);
    free(mem);
    nf_sim_free(s);
    nf_hops_free(h);
    nf_fabric_free(f);
    return rc;
}

/* Whether every CA member of g has its port 2 cabled to a switch over an up link. */
static bool second_rail(const nf_fabric *f, const nf_groups *g) {
    for (uint32_t i = 0; i < g->off[g->n]; i++) {
        nf_node x = g->member[i];
        if (x < f->n_switches) continue;
        if (x >= f->n_nodes || f->nports[x] < 2) return false;
        nf_gport p = nf_port_index(f, x, 2);
        if (f->peer[p] >= f->n_switches || f->link_state[f->port_link[p]] != NF_LINK_UP)
            return false;
    }
    return true;
}

int exp_mcast_rails(const nf_fabric *f, const nf_hops *h, const nf_groups *g, const char *engine,
                    nf_sim *const *s, unsigned ns, nf_mcast *m[2]) {
    const nf_mcast_engine *e = nf_mcast_engine_find(engine);
    nf_diag d = {{0}, 0, {0}};
    m[0] = m[1] = NULL;
    int rc = nf_mcast_route(f, h, g, e, &m[0], &d);
    if (!rc && second_rail(f, g)) rc = nf_mcast_route_port(f, h, g, e, 2, &m[1], &d);
    for (unsigned i = 0; i < ns && !rc; i++)
        rc = nf_sim_set_mcast_rails(s[i], g, m[0], m[1]);
    if (rc) {
        nf_mcast_free(m[0]);
        nf_mcast_free(m[1]);
        m[0] = m[1] = NULL;
        return nf_app_report(rc, &d);
    }
    return NF_EXIT_OK;
}
