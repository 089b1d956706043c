/* SPDX-License-Identifier: MIT */
/* `netfab exp vs-taihulight`: the Sunway paper's headline, "communication performance 4 times
 * that of TaihuLight's network", with 1,024 processors on 2 tree levels where TaihuLight needs
 * 4. Both machines' networks at 1,024 processors, as the papers describe them:
 * - the prototype: gft:preset=sunway-proto, 512 nodes of two processors on one dual-port NIC
 *   (processor p on NIC p / 2, its messages on send queue p mod 2, so engine p mod 2: each CPU
 *   has its engine), two rails, the two engines sharing the two ports packet by packet, FSW,
 *   puts with a reply word, hardware collectives (the NICs' tree reduction, the result by
 *   multicast, the multicast chain on both rails);
 * - TaihuLight: taihulight:sn=4,group=1 (4 supernodes of 256, joined at the top: 4 levels), one
 *   processor per node on a one-port NIC with one message engine, no FSW, no reply word (a write,
 *   acknowledged, then a short message to tell the target), collectives in software (binomial
 *   broadcast, recursive-doubling allreduce): assumed, the Sunway paper lists FSW, the reply word
 *   and the hardware collectives among what its message library adds.
 * The same routers, buffers and NIC costs on both; a cycle is 2.286 ns (a 32-byte flit on the
 * prototype's 112 Gb/s port) and TaihuLight's flit 36 bytes (126 Gb/s, its 128 Gb/s injection
 * rate). Each measure twice: the network and NICs alone, and with the hosts of the multicast
 * experiments (exp_mcast_host: a host's time issuing and receiving a message, and its jitter; no
 * copy, both machines' RDMA being zero-copy; the same on both: assumed), each CPU its own host. A
 * row per measure, the prototype's figure, TaihuLight's and their ratio (how many times better the
 * prototype is), and the geometric mean of the ratios against the paper's 4. */
#include "cmd.h"
#include "exp.h"
#include "netfab/groups.h"
#include "netfab/hops.h"
#include "netfab/mcast.h"
#include "netfab/sim.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#define PROCS 1024
#define CYCLE_NS 2.286
#define TAIHU_FLIT_BYTES 36

typedef struct machine {
    const char *topo;
    unsigned cpus; /* processors a NIC */
    bool proto;
    nf_fabric *f;
    nf_hops *h;
    nf_sim *s[2];   /* without and with the hosts' time */
    nf_mcast *m[2]; /* the prototype's group of every NIC (each rail's trees), for its hardware
                     * collectives */
} machine;

static void machine_close(machine *x) {
    for (int i = 0; i < 2; i++)
        nf_sim_free(x->s[i]);
    nf_mcast_free(x->m[0]);
    nf_mcast_free(x->m[1]);
    nf_hops_free(x->h);
    nf_fabric_free(x->f);
}

static int machine_open(const exp_opts *o, bool proto, machine *x) {
    *x = (machine){.topo = proto ? "gft:preset=sunway-proto" : "taihulight:sn=4,group=1",
                   .cpus = proto ? 2 : 1,
                   .proto = proto};
    int rc = nf_app_fabric(x->topo, o->threads, &x->f, &x->h);
    if (rc) return rc;
    nf_sim_config c;
    exp_sunway_config(o, &c);
    c.nic_pcie_cycles = EXP_PCIE_CYCLES;
    if (!proto) c.nic_engines = 1, c.flit_bytes = TAIHU_FLIT_BYTES;
    nf_sim_config ch = c;
    exp_opts ho = *o;
    ho.host = 1;
    exp_mcast_host(&ho, &ch);
    ch.host_copy_bytes = 0; /* RDMA into the user's memory on both: zero copy */
    nf_diag d = {{0}, 0, {0}};
    for (int i = 0; i < 2 && !rc; i++)
        rc = nf_sim_new(x->f, x->h, i ? &ch : &c, nf_sim_routing_find("minhop"),
                        nf_sim_traffic_find("uniform"), &x->s[i], &d);
    if (!rc && proto) { /* every NIC in one group, its tree by FULB */
        uint32_t n = x->f->n_cas, off[2] = {0, n};
        nf_node *mem = malloc(n * sizeof *mem);
        if (!mem) rc = NF_ENOMEM;
        for (uint32_t i = 0; mem && i < n; i++)
            mem[i] = x->f->n_switches + i;
        nf_groups g = {.n = 1, .off = off, .member = mem};
        if (!rc) { /* (prints its own error) */
            int e = exp_mcast_rails(x->f, x->h, &g, "fulb", x->s, 2, x->m);
            if (e) {
                free(mem);
                machine_close(x);
                return e;
            }
        }
        free(mem);
    }
    if (rc) {
        machine_close(x);
        return nf_app_report(rc, &d);
    }
    return NF_EXIT_OK;
}

/* Processor p's message to processor q (its NIC's endpoint, its CPU's send queue). */
static nf_sim_msg proc_msg(const machine *x, uint32_t p, uint32_t q, uint64_t bytes,
                           nf_sim_msg_kind kind) {
    return (nf_sim_msg){.src = p / x->cpus,
                        .dst = q / x->cpus,
                        .queue = p % x->cpus,
                        .bytes = bytes,
                        .kind = kind,
                        .rail = x->proto ? NF_SIM_RAIL_DYNAMIC : NF_SIM_RAIL0};
}

/* Runs the posted script; its cycles until the last completion, or an exit status (< 0). */
static int64_t run(nf_sim *s, const char *what) {
    nf_sim_script_result r;
    int rc = nf_sim_run_script(s, UINT64_MAX, &r);
    if (rc) return -(int64_t)nf_app_report(rc, NULL);
    if (r.deadlock || r.unfinished) {
        fprintf(stderr, "netfab exp: vs-taihulight: %s did not complete\n", what);
        return -(int64_t)NF_EXIT_FAIL;
    }
    return (int64_t)r.cycles;
}

/* One measure on machine x (host: with the hosts' time): its figure in *v, NF_EXIT_OK or an exit
 * status. */
typedef int (*measure_fn)(const exp_opts *o, machine *x, int host, double *v);

/* A put of B bytes from processor 0 to the last (leaves, and on TaihuLight supernodes, apart):
 * GB/s from the host's posting to the data in (and the target host told, with hosts). */
static int m_bandwidth(const exp_opts *o, machine *x, int host, double *v) {
    nf_sim *s = x->s[host];
    uint64_t b = o->quick ? (uint64_t)1 << 20 : (uint64_t)16 << 20;
    nf_sim_script_clear(s);
    nf_sim_msg m = proc_msg(x, 0, PROCS - 1, b, NF_SIM_PUT_REPLY);
    uint32_t id;
    int rc = nf_sim_post(s, &m, &id);
    if (rc) return nf_app_report(rc, NULL);
    int64_t c = run(s, "the put");
    if (c < 0) return (int)-c;
    nf_sim_msg_times t;
    nf_sim_msg_times_of(s, id, &t);
    *v = (double)b / (double)(t.done - t.due) / CYCLE_NS;
    return NF_EXIT_OK;
}

/* 8 bytes from processor 0 to the last, until the target knows: the prototype's FSW put with a
 * reply word; TaihuLight's write (its data read over PCIe, acknowledged) and then a short message
 * to the target. Nanoseconds. */
static int m_latency(const exp_opts *o, machine *x, int host, double *v) {
    (void)o;
    nf_sim *s = x->s[host];
    nf_sim_script_clear(s);
    uint32_t a, b = 0;
    nf_sim_msg m = proc_msg(x, 0, PROCS - 1, 8, x->proto ? NF_SIM_PUT_REPLY : NF_SIM_WRITE);
    m.fsw = x->proto;
    nf_sim_msg tell = proc_msg(x, 0, PROCS - 1, 8, NF_SIM_SHORT);
    int rc = nf_sim_post(s, &m, &a);
    if (!rc && !x->proto && !(rc = nf_sim_post(s, &tell, &b))) rc = nf_sim_after(s, a, b);
    if (rc) return nf_app_report(rc, NULL);
    int64_t c = run(s, "the latency message");
    if (c < 0) return (int)-c;
    nf_sim_msg_times ta, tb;
    nf_sim_msg_times_of(s, a, &ta);
    nf_sim_msg_times_of(s, x->proto ? a : b, &tb);
    *v = (double)(tb.done - ta.due) * CYCLE_NS;
    return NF_EXIT_OK;
}

/* All-to-all of 256 bytes among n processors spread evenly over the 1,024 (n = 1,024; --quick 64):
 * processor i sends to i + 1, i + 2, ... (mod n) in turn, all posted at once; the two processors
 * of one prototype node exchange in memory (not modelled). Microseconds until the last is in. */
static int m_alltoall(const exp_opts *o, machine *x, int host, double *v) {
    nf_sim *s = x->s[host];
    uint32_t n = o->quick ? 64 : PROCS, step = PROCS / n;
    nf_sim_script_clear(s);
    for (uint32_t k = 1; k < n; k++)
        for (uint32_t i = 0; i < n; i++) {
            uint32_t p = i * step, q = (i + k) % n * step, id;
            if (p / x->cpus == q / x->cpus) continue;
            nf_sim_msg m = proc_msg(x, p, q, 256, NF_SIM_PUT_REPLY);
            int rc = nf_sim_post(s, &m, &id);
            if (rc) return nf_app_report(rc, NULL);
        }
    int64_t c = run(s, "the all-to-all");
    if (c < 0) return (int)-c;
    *v = (double)c * CYCLE_NS / 1000;
    return NF_EXIT_OK;
}

/* A collective of 8 bytes over the 1,024 processors (the prototype's in its 512 NICs, a node's
 * two processors combined in their NIC; fan-in 4 as exp collectives): nanoseconds. */
static int collective(machine *x, int host, bool allreduce, double *v) {
    nf_sim *s = x->s[host];
    uint32_t n = nf_sim_endpoints(s), first, cnt;
    uint32_t *ranks = malloc(n * sizeof *ranks);
    if (!ranks) return nf_app_report(NF_ENOMEM, NULL);
    for (uint32_t i = 0; i < n; i++)
        ranks[i] = i;
    nf_sim_script_clear(s);
    int rc =
        x->proto
            ? nf_sim_post_hw_collective(s, allreduce ? NF_SIM_HW_ALLREDUCE : NF_SIM_HW_BCAST, ranks,
                                        n, 8, 4, 0, &first, &cnt)
            : nf_sim_post_collective(s, allreduce ? NF_SIM_ALLREDUCE_RD : NF_SIM_BCAST_BINOMIAL,
                                     ranks, n, 8, NF_SIM_RAIL0, &first, &cnt);
    free(ranks);
    if (rc) return nf_app_report(rc, NULL);
    int64_t c = run(s, allreduce ? "the allreduce" : "the broadcast");
    if (c < 0) return (int)-c;
    *v = (double)c * CYCLE_NS;
    return NF_EXIT_OK;
}

static int m_allreduce(const exp_opts *o, machine *x, int host, double *v) {
    (void)o;
    return collective(x, host, true, v);
}

static int m_broadcast(const exp_opts *o, machine *x, int host, double *v) {
    (void)o;
    return collective(x, host, false, v);
}

/* Links from processor 0 to the last: NIC, switches, NIC. */
static int m_diameter(const exp_opts *o, machine *x, int host, double *v) {
    (void)o, (void)host;
    const nf_fabric *f = x->f;
    nf_node a = f->n_switches, z = f->n_switches + f->n_cas - 1;
    nf_node leaf = f->peer[f->port_off[a]];
    *v = 1.0 + nf_hops_to_ca(f, x->h, leaf, z, 1);
    return NF_EXIT_OK;
}

int exp_vs_taihulight(const exp_opts *o, json_t *rows) {
    static const struct {
        const char *measure, *unit, *gives_it;
        measure_fn fn;
        bool higher_better, hosts;
    } ms[] = {
        {"diameter", "links", "2 tree levels of 40-port routers (TaihuLight: 4 of 36-port)",
         m_diameter, false, false},
        {"p2p bandwidth", "GB/s", "two rails, each packet on the freer port (one 126 Gb/s port)",
         m_bandwidth, true, true},
        {"p2p latency, 8 B", "ns",
         "FSW (no PCIe read), the reply word (no second message), 4 fewer switch hops", m_latency,
         false, true},
        {"all-to-all, 256 B", "us", "two ports for two processors; 18 up links a leaf (2 for 16)",
         m_alltoall, false, true},
        {"allreduce, 8 B", "ns",
         "the reduction in the NICs, the result by multicast (TaihuLight: messages)", m_allreduce,
         false, true},
        {"broadcast, 8 B", "ns", "hardware multicast (TaihuLight: a binomial tree of messages)",
         m_broadcast, false, true},
    };
    machine mc[2];
    int rc = machine_open(o, true, &mc[0]);
    if (rc) return rc;
    if ((rc = machine_open(o, false, &mc[1]))) {
        machine_close(&mc[0]);
        return rc;
    }
    size_t n_ms = sizeof ms / sizeof ms[0];
    double logsum[2] = {0, 0};
    unsigned nlog[2] = {0, 0};
    for (int host = 0; host < 2 && rc == NF_EXIT_OK; host++)
        for (size_t k = 0; k < n_ms && rc == NF_EXIT_OK; k++) {
            if (host && !ms[k].hosts) continue;
            exp_progress(((double)host * n_ms + (double)k) / (2.0 * n_ms), "vs-taihulight: %s%s",
                         ms[k].measure, host ? ", hosts" : "");
            double v[2];
            for (int i = 0; i < 2 && rc == NF_EXIT_OK; i++)
                rc = ms[k].fn(o, &mc[i], host, &v[i]);
            if (rc) break;
            double ratio = ms[k].higher_better ? v[0] / v[1] : v[1] / v[0];
            if (ms[k].hosts) logsum[host] += log(ratio), nlog[host]++;
            json_array_append_new(rows,
                                  json_pack("{s:I, s:s, s:s, s:s, s:f, s:f, s:f, s:s}", "index",
                                            (json_int_t)(k + 1), "measure", ms[k].measure, "hosts",
                                            ms[k].hosts ? (host ? "model" : "none") : "-", "unit",
                                            ms[k].unit, "prototype", v[0], "taihulight", v[1],
                                            "ratio", ratio, "gives_it", ms[k].gives_it));
        }
    for (int host = 0; host < 2 && rc == NF_EXIT_OK; host++)
        json_array_append_new(
            rows, json_pack("{s:I, s:s, s:s, s:s, s:f, s:f, s:s}", "index", (json_int_t)(n_ms + 1),
                            "measure", "geometric mean", "hosts", host ? "model" : "none", "unit",
                            "x", "ratio", exp(logsum[host] / nlog[host]), "paper", 4.0, "gives_it",
                            "the Sunway paper: communication performance 4x TaihuLight's"));
    machine_close(&mc[0]);
    machine_close(&mc[1]);
    return rc;
}
