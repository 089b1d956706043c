/* SPDX-License-Identifier: MIT */
/* `netfab exp desdp`, `nic-queues`, `inflight`: the Sunway NIC's message engines (the Sunway
 * paper, section 2.3; nf_sim_config.nic_engines) on the Sunway prototype (gft, two rails), from
 * endpoint 0, whose processes each post to their own send queue (queue p, served by engine
 * p mod 2: with two CPUs on the NIC, CPU c's processes on engine c).
 * - desdp: DESDP (both engines share both ports) against an engine per port, 1 to 8 processes:
 *   the bandwidth of their puts together, and the latency of small puts all posted at once.
 * - nic-queues: the arbiter's fairness among send queues, all backlogged, long puts on some and
 *   short ones on the others, with and without the fast flag: messages and bytes each queue got
 *   until the first queue ran dry, Jain's index over the queues, the short ones' latency.
 * - inflight: one process keeping 1 to 512 acknowledged writes outstanding, against the engine's
 *   limit of 256 in flight, on the prototype's links and with switch-to-switch links of 250
 *   cycles (where the round trip outlasts 256 messages' time on the port).
 * - mcast-table: the router's 32 multicast entries a port: how many groups sharing a port the
 *   tables take, and a multicast to a refused group (unicast copies) against one in them.
 * - fsw: fast short messages (descriptor and data written into the NIC by PIO) against puts whose
 *   descriptor and data the NIC reads over PCIe, 8 to 256 bytes.
 * - source-routing: management messages by the tables against source routes, links down. */
#include "cmd.h"
#include "exp.h"
#include "netfab/gen.h"
#include "netfab/groups.h"
#include "netfab/hops.h"
#include "netfab/mcast.h"
#include "netfab/sim.h"

#include <stdio.h>
#include <stdlib.h>

/* The prototype's simulator with c, or an exit status after saying why. */
static int make_sim(const nf_fabric *f, const nf_hops *h, const nf_sim_config *c, nf_sim **s) {
    nf_diag d = {{0}, 0, {0}};
    int rc =
        nf_sim_new(f, h, c, nf_sim_routing_find("minhop"), nf_sim_traffic_find("uniform"), s, &d);
    return rc ? nf_app_report(rc, &d) : NF_EXIT_OK;
}

static int run_all(nf_sim *s, const char *what, nf_sim_script_result *r) {
    int rc = nf_sim_run_script(s, UINT64_MAX, r);
    if (rc) return nf_app_report(rc, NULL);
    if (r->deadlock || r->unfinished) {
        fprintf(stderr, "netfab exp: %s: a message did not complete\n", what);
        return NF_EXIT_FAIL;
    }
    return NF_EXIT_OK;
}

/* A script of message m alone, run: its times and the run's result, or an exit status. */
static int run_one(nf_sim *s, const nf_sim_msg *m, const char *what, nf_sim_msg_times *t,
                   nf_sim_script_result *r) {
    uint32_t id;
    nf_sim_script_clear(s);
    int rc = nf_sim_post(s, m, &id);
    if (rc) return nf_app_report(rc, NULL);
    if ((rc = run_all(s, what, r))) return rc;
    nf_sim_msg_times_of(s, id, t);
    return NF_EXIT_OK;
}

/* ---- desdp ------------------------------------------------------------------------------- */

/* P processes on endpoint 0, process p to endpoint E - 1 - p (across the spines), each posting
 * n puts of b bytes at once, the port per packet: their bytes together over the cycles from the
 * first release to the last data in, and the mean from a put's due time to its completion. */
static int desdp_point(nf_sim *s, unsigned P, unsigned n, uint64_t b, double *bw, double *lat) {
    uint32_t E = nf_sim_endpoints(s);
    nf_sim_script_clear(s);
    int rc = NF_OK;
    for (unsigned p = 0; p < P && !rc; p++)
        for (unsigned k = 0; k < n && !rc; k++) {
            nf_sim_msg m = {.src = 0,
                            .dst = E - 1 - p,
                            .bytes = b,
                            .kind = NF_SIM_PUT_REPLY,
                            .rail = NF_SIM_RAIL_DYNAMIC,
                            .queue = (uint16_t)p};
            uint32_t id;
            rc = nf_sim_post(s, &m, &id);
        }
    if (rc) return nf_app_report(rc, NULL);
    nf_sim_script_result r;
    if ((rc = run_all(s, "desdp", &r))) return rc;
    uint64_t last = 0;
    double sum = 0;
    for (uint32_t i = 0; i < P * n; i++) {
        nf_sim_msg_times t;
        nf_sim_msg_times_of(s, i, &t);
        if (t.data_in > last) last = t.data_in;
        sum += (double)(t.done - t.due);
    }
    *bw = (double)P * n * (double)b / (double)last;
    *lat = sum / (P * n);
    return NF_EXIT_OK;
}

int exp_desdp(const exp_opts *o, json_t *rows) {
    nf_fabric *f;
    nf_hops *h;
    int rc = nf_app_fabric("gft:preset=sunway-proto", o->threads, &f, &h);
    if (rc) return rc;
    static const unsigned procs[] = {1, 2, 3, 4, 8};
    uint64_t big = o->quick ? 64 << 10 : 1 << 20;
    for (int share = 1; share >= 0 && rc == NF_EXIT_OK; share--) {
        nf_sim_config c;
        exp_sunway_config(o, &c);
        c.nic_share_ports = share;
        nf_sim *s = NULL;
        if ((rc = make_sim(f, h, &c, &s))) break;
        for (size_t i = 0; i < sizeof procs / sizeof procs[0] && rc == NF_EXIT_OK; i++) {
            exp_progress(((1 - share) + (double)i / 5) / 2, "desdp: %u processes", procs[i]);
            double bw = 0, lat_big = 0, bw_small = 0, lat = 0;
            if ((rc = desdp_point(s, procs[i], 4, big, &bw, &lat_big)) ||
                (rc = desdp_point(s, procs[i], 32, 256, &bw_small, &lat)))
                break;
            json_array_append_new(rows, json_pack("{s:s, s:I, s:I, s:f, s:I, s:f}", "ports",
                                                  share ? "shared (DESDP)" : "one per engine",
                                                  "processes", (json_int_t)procs[i], "msg_bytes",
                                                  (json_int_t)big, "bandwidth", bw, "small_bytes",
                                                  (json_int_t)256, "small_lat_mean", lat));
        }
        nf_sim_free(s);
    }
    nf_hops_free(h);
    nf_fabric_free(f);
    return rc;
}

/* ---- nic-queues -------------------------------------------------------------------------- */

static int cmp_u64(const void *a, const void *b) {
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

/* Q queues on engine 0 (the even ones: queue 2q), all due at 0, n puts each to endpoints across
 * the spines: on the first half of the queues of 16 KiB, on the others (mixed) of 256 bytes,
 * fast when asked. The arbiter's share: each queue's messages among the first 16 Q the engine
 * took (its first 16 rounds, every queue backlogged). While every queue has work (until the
 * first queue's last message is done): each queue's bytes done per cycle (its throughput); Jain's
 * index (sum x)^2 / (Q sum x^2) of both over the queues, and the short puts' mean latency from
 * due to completion. */
static int queues_case(nf_sim *s, json_t *rows, const char *label, unsigned Q, unsigned n,
                       bool mixed, bool fast) {
    uint32_t E = nf_sim_endpoints(s);
    nf_sim_script_clear(s);
    int rc = NF_OK;
    for (unsigned q = 0; q < Q && !rc; q++)
        for (unsigned k = 0; k < n && !rc; k++) {
            bool shrt = mixed && q >= Q / 2;
            nf_sim_msg m = {.src = 0,
                            .dst = E - 1 - (q * 7 + k) % 64,
                            .bytes = shrt ? 256 : 16 << 10,
                            .kind = NF_SIM_PUT_REPLY,
                            .rail = NF_SIM_RAIL_DYNAMIC,
                            .queue = (uint16_t)(2 * q),
                            .fast = shrt && fast};
            uint32_t id;
            rc = nf_sim_post(s, &m, &id);
        }
    if (rc) return nf_app_report(rc, NULL);
    nf_sim_script_result r;
    if ((rc = run_all(s, "nic-queues", &r))) return rc;
    uint64_t until = UINT64_MAX; /* the first queue's last message done */
    for (unsigned q = 0; q < Q; q++) {
        uint64_t last = 0;
        for (unsigned k = 0; k < n; k++) {
            nf_sim_msg_times t;
            nf_sim_msg_times_of(s, q * n + k, &t);
            if (t.done > last) last = t.done;
        }
        if (last < until) until = last;
    }
    /* the arbiter's share: of the first 16 Q messages the engine took (16 rounds of its round
     * robin while every queue is backlogged), each queue's */
    uint64_t *rel = malloc((size_t)Q * n * sizeof *rel), first = 0;
    if (!rel) return nf_app_report(NF_ENOMEM, NULL);
    for (uint32_t i = 0; i < Q * n; i++) {
        nf_sim_msg_times t;
        nf_sim_msg_times_of(s, i, &t);
        rel[i] = t.released;
    }
    qsort(rel, (size_t)Q * n, sizeof *rel, cmp_u64);
    first = rel[16 * Q - 1];
    free(rel);
    double msgs[NF_SIM_MAX_QUEUES] = {0}, bytes[NF_SIM_MAX_QUEUES] = {0}, lat = 0, n_lat = 0;
    for (unsigned q = 0; q < Q; q++) {
        bool shrt = mixed && q >= Q / 2;
        for (unsigned k = 0; k < n; k++) {
            nf_sim_msg_times t;
            nf_sim_msg_times_of(s, q * n + k, &t);
            if (t.released <= first) msgs[q]++;
            if (t.done <= until) bytes[q] += shrt ? 256 : 16 << 10;
            if (shrt && t.done <= until) lat += (double)(t.done - t.due), n_lat++;
        }
        bytes[q] /= (double)until;
    }
    double sm = 0, sm2 = 0, sb = 0, sb2 = 0;
    for (unsigned q = 0; q < Q; q++)
        sm += msgs[q], sm2 += msgs[q] * msgs[q], sb += bytes[q], sb2 += bytes[q] * bytes[q];
    for (unsigned q = 0; q < Q; q++) {
        bool shrt = mixed && q >= Q / 2;
        json_array_append_new(rows,
                              json_pack("{s:s, s:I, s:s, s:b, s:I, s:f, s:f, s:f, s:f, s:o, s:I}",
                                        "case", label, "queue", (json_int_t)(2 * q), "messages",
                                        shrt ? "short" : "long", "fast", shrt && fast, "window",
                                        (json_int_t)until, "taken", msgs[q], "bytes_per_cycle",
                                        bytes[q], "jain_taken", sm * sm / (Q * sm2), "jain_bytes",
                                        sb2 > 0 ? sb * sb / (Q * sb2) : 0.0, "short_lat_mean",
                                        n_lat ? json_real(lat / n_lat) : json_null(),
                                        "max_in_flight", (json_int_t)r.max_in_flight));
    }
    return NF_EXIT_OK;
}

int exp_nic_queues(const exp_opts *o, json_t *rows) {
    nf_fabric *f;
    nf_hops *h;
    int rc = nf_app_fabric("gft:preset=sunway-proto", o->threads, &f, &h);
    if (rc) return rc;
    nf_sim_config c;
    exp_sunway_config(o, &c);
    nf_sim *s = NULL;
    unsigned Q = o->quick ? 4 : 8, n = o->quick ? 64 : 256;
    if (!(rc = make_sim(f, h, &c, &s))) {
        exp_progress(0, "nic-queues: long puts");
        rc = queues_case(s, rows, "all long", Q, n, false, false);
        exp_progress(0.33, "nic-queues: long and short");
        if (!rc) rc = queues_case(s, rows, "long + short", Q, n, true, false);
        exp_progress(0.67, "nic-queues: long and fast");
        if (!rc) rc = queues_case(s, rows, "long + short, fast", Q, n, true, true);
    }
    nf_sim_free(s);
    nf_hops_free(h);
    nf_fabric_free(f);
    return rc;
}

/* ---- inflight ---------------------------------------------------------------------------- */

/* One process keeps K writes of 256 bytes (one packet, acknowledged by the target NIC)
 * outstanding to endpoint E - 1: write k + K comes after write k; 4,096 of them (1,024 quick).
 * Bandwidth: their bytes over the cycles to the last acknowledgement; latency from due (the
 * application's post) to the acknowledgement, the wait in the send queue included. */
static int inflight_point(nf_sim *s, unsigned K, unsigned n, double *bw, double *lat,
                          uint32_t *max_fl) {
    uint32_t E = nf_sim_endpoints(s);
    nf_sim_script_clear(s);
    int rc = NF_OK;
    for (uint32_t k = 0; k < n && !rc; k++) {
        nf_sim_msg m = {.src = 0,
                        .dst = E - 1,
                        .bytes = 256,
                        .kind = NF_SIM_WRITE,
                        .rail = NF_SIM_RAIL_DYNAMIC};
        uint32_t id;
        rc = nf_sim_post(s, &m, &id);
        if (!rc && k >= K) rc = nf_sim_after(s, k - K, k);
    }
    if (rc) return nf_app_report(rc, NULL);
    nf_sim_script_result r;
    if ((rc = run_all(s, "inflight", &r))) return rc;
    double sum = 0;
    for (uint32_t k = 0; k < n; k++) {
        nf_sim_msg_times t;
        nf_sim_msg_times_of(s, k, &t);
        sum += (double)(t.done - t.due);
    }
    *bw = (double)n * 256 / (double)r.cycles;
    *lat = sum / n;
    *max_fl = r.max_in_flight;
    return NF_EXIT_OK;
}

int exp_inflight(const exp_opts *o, json_t *rows) {
    nf_fabric *f;
    nf_hops *h;
    int rc = nf_app_fabric("gft:preset=sunway-proto", o->threads, &f, &h);
    if (rc) return rc;
    /* the prototype's links, links of 250 cycles, and the prototype with the limit at 8 */
    static const unsigned lats[] = {1, 250, 1}, limits[] = {256, 256, 8};
    unsigned n = o->quick ? 1024 : 4096;
    for (size_t li = 0; li < 3 && rc == NF_EXIT_OK; li++) {
        nf_sim_config c;
        exp_sunway_config(o, &c);
        c.lat_local = c.lat_global = lats[li];
        c.nic_inflight = limits[li];
        nf_sim *s = NULL;
        if ((rc = make_sim(f, h, &c, &s))) break;
        for (unsigned K = 1; K <= 512 && rc == NF_EXIT_OK; K *= 2) {
            exp_progress(((double)li + (K == 1 ? 0 : __builtin_ctz(K)) / 10.0) / 3,
                         "inflight: links of %u cycles, %u outstanding", lats[li], K);
            double bw = 0, lat = 0;
            uint32_t mx = 0;
            if ((rc = inflight_point(s, K, n, &bw, &lat, &mx))) break;
            char label[64];
            snprintf(label, sizeof label, "links %u, limit %u", lats[li], limits[li]);
            json_array_append_new(
                rows,
                json_pack("{s:s, s:I, s:I, s:I, s:I, s:f, s:f, s:I}", "case", label, "link_cycles",
                          (json_int_t)lats[li], "outstanding", (json_int_t)K, "limit",
                          (json_int_t)c.nic_inflight, "max_in_flight", (json_int_t)mx, "bandwidth",
                          bw, "lat_mean", lat, "messages", (json_int_t)n));
        }
        nf_sim_free(s);
    }
    nf_hops_free(h);
    nf_fabric_free(f);
    return rc;
}

/* ---- mcast-table ------------------------------------------------------------------------- */

/* The prototype's simulator with 32 multicast entries a switch port and groups g routed by
 * FULB-MC (one thread), or an exit status. */
static int table_sim(const exp_opts *o, const nf_fabric *f, const nf_hops *h, const nf_groups *g,
                     nf_sim **s, nf_mcast **m) {
    nf_sim_config c;
    exp_sunway_config(o, &c);
    c.mcast_port_entries = 32;
    nf_diag d = {{0}, 0, {0}};
    int rc = nf_mcast_route(f, h, g, nf_mcast_engine_find("fulb"), m, &d);
    if (!rc)
        rc = make_sim(f, h, &c, s);
    else
        rc = nf_app_report(rc, &d);
    if (!rc && (rc = nf_sim_set_mcast(*s, g, *m))) rc = nf_app_report(rc, NULL);
    return rc;
}

/* G groups of 8: endpoint 0 and 7 others drawn with the seed (all sharing endpoint 0's port):
 * how many the tables take. Then 33 copies of one group of n members (endpoint 0 and n - 1
 * spread over the fabric): a multicast of b bytes from endpoint 0 on the first (in the tables)
 * and on the 33rd (refused: unicast copies), each alone on an idle fabric. */
int exp_mcast_table(const exp_opts *o, json_t *rows) {
    nf_fabric *f;
    nf_hops *h;
    int rc = nf_app_fabric("gft:preset=sunway-proto", o->threads, &f, &h);
    if (rc) return rc;
    uint32_t E = 0;
    for (nf_node x = f->n_switches; x < f->n_nodes; x++)
        E++;
    static const uint32_t Gs[] = {16, 32, 33, 48, 64};
    uint64_t x = o->seed * 0x9E3779B97F4A7C15ull + 7;
    for (size_t gi = 0; gi < sizeof Gs / sizeof Gs[0] && !rc; gi++) {
        uint32_t G = Gs[gi], *off = malloc((G + 1) * sizeof *off), *mem = malloc(G * 8 * 4);
        if (!off || !mem) {
            free(off), free(mem);
            rc = nf_app_report(NF_ENOMEM, NULL);
            break;
        }
        for (uint32_t k = 0; k < G; k++) {
            off[k] = 8 * k;
            mem[8 * k] = f->n_switches;
            for (uint32_t j = 1; j < 8; j++) { /* distinct from the ones before in the group */
                uint32_t e;
                bool again;
                do {
                    x = x * 6364136223846793005ull + 1442695040888963407ull;
                    e = 1 + (uint32_t)((x >> 33) % (E - 1));
                    again = false;
                    for (uint32_t q = 1; q < j; q++)
                        again |= mem[8 * k + q] == f->n_switches + e;
                } while (again);
                mem[8 * k + j] = f->n_switches + e;
            }
        }
        off[G] = 8 * G;
        nf_groups g = {.n = G, .off = off, .member = mem};
        nf_sim *s = NULL;
        nf_mcast *m = NULL;
        if (!(rc = table_sim(o, f, h, &g, &s, &m)))
            json_array_append_new(rows,
                                  json_pack("{s:s, s:I, s:I, s:I, s:I}", "measure", "fit", "groups",
                                            (json_int_t)G, "entries_per_port", (json_int_t)32,
                                            "installed", (json_int_t)(G - nf_sim_mcast_refused(s)),
                                            "refused", (json_int_t)nf_sim_mcast_refused(s)));
        nf_sim_free(s);
        nf_mcast_free(m);
        free(off), free(mem);
    }
    static const uint32_t sizes[] = {4, 16, 64};
    static const uint64_t bytes[] = {8, 2048};
    for (size_t si = 0; si < 3 && !rc; si++) {
        uint32_t n = sizes[si], *off = malloc(34 * sizeof *off), *mem = malloc(33 * n * 4);
        if (!off || !mem) {
            free(off), free(mem);
            rc = nf_app_report(NF_ENOMEM, NULL);
            break;
        }
        for (uint32_t k = 0; k < 33; k++) {
            off[k] = n * k;
            for (uint32_t j = 0; j < n; j++)
                mem[n * k + j] = f->n_switches + (uint32_t)((uint64_t)j * (E - 1) / (n - 1));
        }
        off[33] = 33 * n;
        nf_groups g = {.n = 33, .off = off, .member = mem};
        nf_sim *s = NULL;
        nf_mcast *m = NULL;
        rc = table_sim(o, f, h, &g, &s, &m);
        for (size_t bi = 0; bi < 2 && !rc; bi++)
            for (uint32_t grp = 0; grp <= 32 && !rc; grp += 32) {
                exp_progress(0.5 + (double)(si * 4 + bi * 2 + grp / 32) / 24,
                             "mcast-table: %u members, %llu bytes", n,
                             (unsigned long long)bytes[bi]);
                nf_sim_msg mc = {.src = 0, .bytes = bytes[bi], .kind = NF_SIM_MCAST, .group = grp};
                nf_sim_msg_times t;
                nf_sim_script_result r;
                if ((rc = run_one(s, &mc, "mcast-table", &t, &r))) break;
                bool hw = nf_sim_mcast_installed(s, grp);
                json_array_append_new(
                    rows,
                    json_pack("{s:s, s:I, s:I, s:s, s:I, s:I}", "measure", "latency", "members",
                              (json_int_t)n, "msg_bytes", (json_int_t)bytes[bi], "way",
                              hw ? "multicast tables" : "unicast copies (refused)", "lat",
                              (json_int_t)(t.done - t.due), "link_flits", (json_int_t)r.flit_hops));
            }
        nf_sim_free(s);
        nf_mcast_free(m);
        free(off), free(mem);
    }
    nf_hops_free(h);
    nf_fabric_free(f);
    return rc;
}

/* ---- fsw --------------------------------------------------------------------------------- */

/* A put of b bytes from endpoint 0 to the last endpoint (across the spines) on an idle fabric,
 * ordinary (descriptor and data read over PCIe, EXP_PCIE_CYCLES each) or FSW (written by the host
 * into the NIC by PIO), and ordinary with the PCIe reads counted in the NIC's 40 cycles (the
 * model before FSW): its latency from the post to its data in at the target. */
int exp_fsw(const exp_opts *o, json_t *rows) {
    nf_fabric *f;
    nf_hops *h;
    int rc = nf_app_fabric("gft:preset=sunway-proto", o->threads, &f, &h);
    if (rc) return rc;
    static const struct {
        const char *way;
        unsigned pcie;
        bool fsw;
    } ways[] = {{"put", EXP_PCIE_CYCLES, false},
                {"fsw", EXP_PCIE_CYCLES, true},
                {"put, PCIe in the NIC's time", 0, false}};
    for (size_t w = 0; w < 3 && !rc; w++) {
        nf_sim_config c;
        exp_sunway_config(o, &c);
        c.nic_pcie_cycles = ways[w].pcie;
        nf_sim *s = NULL;
        if ((rc = make_sim(f, h, &c, &s))) break;
        uint32_t E = nf_sim_endpoints(s);
        for (uint64_t b = 8; b <= 256 && !rc; b *= 2) {
            exp_progress(((double)w + (double)__builtin_ctzll(b) / 9) / 3, "fsw: %s, %llu bytes",
                         ways[w].way, (unsigned long long)b);
            nf_sim_msg m = {.src = 0,
                            .dst = E - 1,
                            .bytes = b,
                            .kind = NF_SIM_PUT_REPLY,
                            .rail = NF_SIM_RAIL_DYNAMIC,
                            .fsw = ways[w].fsw};
            nf_sim_msg_times t;
            nf_sim_script_result r;
            if ((rc = run_one(s, &m, "fsw", &t, &r))) break;
            json_array_append_new(rows,
                                  json_pack("{s:s, s:I, s:I, s:I}", "way", ways[w].way,
                                            "pcie_cycles", (json_int_t)ways[w].pcie, "msg_bytes",
                                            (json_int_t)b, "lat", (json_int_t)(t.done - t.due)));
        }
        nf_sim_free(s);
    }
    nf_hops_free(h);
    nf_fabric_free(f);
    return rc;
}

/* ---- source-routing ---------------------------------------------------------------------- */

/* Management messages (64-byte short messages, rail 0) from endpoint 0 to 64 endpoints spread
 * over the prototype, all at once, routed by the tables (minhop, whose distances are the intact
 * fabric's) or source routed (a path found when sent, over the links up), with no link down,
 * with every up link of endpoint 0's leaf down (its sibling link left), and with up to 32 switch
 * links drawn with the seed (each with a chance of 1 in 64) down: how many arrive within 20,000
 * cycles, and their mean latency and the switch links their packets took. */
int exp_source_routing(const exp_opts *o, json_t *rows) {
    nf_fabric *f;
    nf_hops *h;
    int rc = nf_app_fabric("gft:preset=sunway-proto", o->threads, &f, &h);
    if (rc) return rc;
    static const char *const cases[] = {"no link down", "leaf 0's up links down",
                                        "random links down"};
    for (int cs = 0; cs < 3 && !rc; cs++)
        for (int sr = 0; sr <= 1 && !rc; sr++) {
            exp_progress((cs * 2 + sr) / 6.0, "source-routing: %s", cases[cs]);
            nf_sim_config c;
            exp_sunway_config(o, &c);
            nf_sim *s = NULL;
            if ((rc = make_sim(f, h, &c, &s))) break;
            unsigned down = 0;
            nf_node leaf = f->peer[nf_port_index(f, f->n_switches, 1)]; /* endpoint 0's, rail 0 */
            uint64_t x = o->seed * 0x9E3779B97F4A7C15ull + 3;
            for (nf_link l = 0; l < f->n_links && cs; l++) {
                nf_node a = f->link_a[l], z = f->link_z[l];
                if (a >= f->n_switches || z >= f->n_switches) continue;
                bool cut = false;
                if (cs == 1) /* leaf 0 to a switch of a higher level */
                    cut = (a == leaf && f->level[z] > f->level[a]) ||
                          (z == leaf && f->level[a] > f->level[z]);
                if (cs == 2) {
                    x = x * 6364136223846793005ull + 1442695040888963407ull;
                    cut = down < 32 && (x >> 40) % 64 == 0;
                }
                if (cut && !(rc = nf_sim_link_at(s, l, 0, false))) down++;
            }
            uint32_t E = nf_sim_endpoints(s), n = 64, got = 0;
            for (uint32_t k = 0; k < n && !rc; k++) {
                nf_sim_msg m = {.src = 0,
                                .dst = 1 + (uint32_t)((uint64_t)k * (E - 2) / (n - 1)),
                                .bytes = 64,
                                .kind = NF_SIM_SHORT,
                                .source_routed = sr};
                uint32_t id;
                rc = nf_sim_post(s, &m, &id);
            }
            nf_sim_script_result r;
            if (!rc) rc = nf_sim_run_script(s, 20000, &r);
            if (rc) {
                rc = nf_app_report(rc, NULL);
            } else {
                double lat = 0;
                for (uint32_t k = 0; k < n; k++) {
                    nf_sim_msg_times t;
                    nf_sim_msg_times_of(s, k, &t);
                    if (t.done != UINT64_MAX) got++, lat += (double)(t.done - t.due);
                }
                json_array_append_new(
                    rows, json_pack("{s:s, s:I, s:s, s:I, s:I, s:o, s:I}", "case", cases[cs],
                                    "links_down", (json_int_t)down, "routing",
                                    sr ? "source route" : "tables (minhop)", "messages",
                                    (json_int_t)n, "delivered", (json_int_t)got, "lat_mean",
                                    got ? json_real(lat / got) : json_null(), "link_flits",
                                    (json_int_t)r.flit_hops));
            }
            nf_sim_free(s);
        }
    nf_hops_free(h);
    nf_fabric_free(f);
    return rc;
}
