/* SPDX-License-Identifier: MIT */
/* `netfab exp`: the experiments of the Sunway papers, each one command that measures a grid of
 * points and returns one JSON object per point. An experiment is a row in one table
 * (cmd_exp.c); its driver lives in an exp_<family>.c. */
#ifndef NETFAB_APP_EXP_H
#define NETFAB_APP_EXP_H

#include "netfab/sim.h"

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

typedef struct exp_opts {
    bool quick;  /* the small version: under a minute on 2 cores */
    int threads; /* 0: OpenMP's default */
    uint64_t seed;
    /* the papers' unknowns, fitted (issue 19); 0: the experiment's own value */
    unsigned period;       /* mcast-efi: cycles between two multicasts of a group (2,000) */
    unsigned router_delay; /* mcast-height: the routers' delay, cycles (the simulator's, 3) */
    unsigned host_cycles;  /* collectives: the host's time per software message in the rows
                            * with host overhead (EXP_HOST_CYCLES) */
    /* mcast-height, mcast-efi: the hosts and the routers as fitted to the multicast paper's
     * Tables 1 and 2 (host 1: EXP_MC_*, the default) or the bare network of before (host 0:
     * no host time, the routers' delay 3, mcast-efi's groups every period); each value below
     * given on the command line (its *_given) wins over the model's */
    unsigned host;
    unsigned host_send, host_recv, host_copy, host_jitter;
    bool host_send_given, host_recv_given, host_copy_given, host_jitter_given;
    bool period_given;
} exp_opts;

/* The fitted and published values the report and the defaults use (README.md, "Fitted
 * values"): the multicast period fitted to the multicast paper's +38% at EFI 16 (2 KB), the
 * router delay fitted to its +20% from height 1 to 2 (8 B), and an MPI host's time per small
 * message (send and receive overheads, 0.813 us) at the cycle of a 112 Gb/s Sunway port
 * (2.286 ns for a 32-byte flit). */
#define EXP_EFI_PERIOD 2000
#define EXP_EFI_PERIOD_FIT 1031
#define EXP_HEIGHT_ROUTER_DELAY_FIT 4
#define EXP_HOST_CYCLES 356
/* A PCIe read's round trip, assumed (the Sunway paper gives none): 110 cycles, 251 ns at
 * 2.286 ns a cycle, what a PCIe 3.0 device's read of host memory takes (netfab exp fsw). */
#define EXP_PCIE_CYCLES 110

/* The multicast experiments' host model, fitted to the multicast paper's Tables 1 and 2 by
 * bench/fit_mcast_host.sh (docs/results.md, "The host model"): the routers' delay and the hosts'
 * copy rate from Table 1's +20% (8 B) and +15% (2 KB) with Table 2's +38% (2 KB, EFI 16, a
 * closed loop), the send and receive times splitting Table 1's fixed time evenly, and a jitter
 * (not fitted: the text gives no absolute tail) of a tenth of the 8-byte latency. */
#define EXP_MC_ROUTER_DELAY 57 /* 130 ns at 2.286 ns a cycle */
#define EXP_MC_HOST_SEND 205   /* with the receive: 0.94 us */
#define EXP_MC_HOST_RECV 205
#define EXP_MC_HOST_COPY 30   /* bytes a cycle: 13 GB/s */
#define EXP_MC_HOST_JITTER 58 /* 0.13 us */

/* Sets c's host knobs (send, receive, copy, jitter) as o says: exp_opts.host's model, each
 * overridden by its value when given. mcast-height and mcast-efi add the router delay fitted
 * with the paper's host; collectives keep their own routers. */
void exp_mcast_host(const exp_opts *o, nf_sim_config *c);

/* How --plot draws the rows: y against x, one line per distinct value of series (NULL: one
 * line), only the rows whose string key `where` is where_is when where is set. */
typedef struct exp_plot {
    const char *x, *y, *series;
    const char *where, *where_is;
    bool logx, logy;
    const char *xlabel, *ylabel;
} exp_plot;

typedef struct exp_def {
    const char *name, *summary;
    /* Appends one object per measured point to rows; on failure prints why (netfab: ...) and
     * returns an exit status (NF_EXIT_FAIL or NF_EXIT_USAGE), NF_EXIT_OK otherwise. */
    int (*run)(const exp_opts *o, json_t *rows);
    exp_plot plot;
} exp_def;

/* The Sunway prototype (gft:preset=sunway-proto) with the dual-rail NIC experiments' knobs:
 * 256-byte packets (8 flits of 32 bytes), 4 VCs of 64 flits, minhop, one thread, o->seed, the
 * NIC's and the host's overheads at their defaults. On failure prints why and returns an exit
 * status, with nothing left to free. */
int exp_sunway_sim(const exp_opts *o, nf_fabric **f, nf_hops **h, nf_sim **s);
/* The configuration exp_sunway_sim uses: the knobs above and the NIC's two message engines
 * sharing its two ports. */
void exp_sunway_config(const exp_opts *o, nf_sim_config *c);
/* The trees of groups g by the multicast engine named `engine`: rail 0's (m[0], the members'
 * port 1), and on a dual-rail fabric (every CA member's port 2 cabled to a switch) rail 1's too
 * (m[1], else NULL), installed in the ns simulators s[] by nf_sim_set_mcast_rails: the multicast
 * chain on both rails, as the Sunway machine configures it. On failure prints why, frees what
 * it made and returns an exit status. */
int exp_mcast_rails(const nf_fabric *f, const nf_hops *h, const nf_groups *g, const char *engine,
                    nf_sim *const *s, unsigned ns, nf_mcast *m[2]);

/* The drivers. */
int exp_tables(const exp_opts *o, json_t *rows);
int exp_faults(const exp_opts *o, json_t *rows);
int exp_dual_rail(const exp_opts *o, json_t *rows);
int exp_mcast_height(const exp_opts *o, json_t *rows);
int exp_mcast_efi(const exp_opts *o, json_t *rows);
int exp_mcast_workload(const exp_opts *o, json_t *rows);
int exp_collectives(const exp_opts *o, json_t *rows);
int exp_link_errors(const exp_opts *o, json_t *rows);
/* asynchronous queue messages (exp_queues.c) */
int exp_queues(const exp_opts *o, json_t *rows);
int exp_congestion(const exp_opts *o, json_t *rows);
/* the NIC's message engines (exp_engines.c) */
int exp_desdp(const exp_opts *o, json_t *rows);
int exp_nic_queues(const exp_opts *o, json_t *rows);
int exp_inflight(const exp_opts *o, json_t *rows);
int exp_mcast_table(const exp_opts *o, json_t *rows);
int exp_fsw(const exp_opts *o, json_t *rows);
int exp_source_routing(const exp_opts *o, json_t *rows);
/* the NIC's reductions: types, operators, the ordered sum (exp_reduce.c) */
int exp_reductions(const exp_opts *o, json_t *rows);
/* the Sunway prototype against TaihuLight at 1,024 processors (exp_taihu.c) */
int exp_vs_taihulight(const exp_opts *o, json_t *rows);
/* the Dragonfly routings at their papers' scale and knobs: Q-adaptive, the restrictive proxies
 * (exp_dragonfly.c) */
int exp_q_adaptive(const exp_opts *o, json_t *rows);
int exp_proxies(const exp_opts *o, json_t *rows);

/* The progress bar of the running experiment (progress.h): it is done to fraction frac (0..1)
 * and runs what fmt says now. Drawn on stderr only when it is a terminal. */
void exp_progress(double frac, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* The registry, for netfab exp and netfab report. */
size_t exp_count(void);
const exp_def *exp_at(size_t i);
const exp_def *exp_find(const char *name);

/* Runs e with the progress bar drawn as a share [lo, hi) of bar (which the caller began and
 * ends); appends its rows. */
typedef struct nf_progress nf_progress;
int exp_run(const exp_def *e, const exp_opts *o, json_t *rows, nf_progress *bar, double lo,
            double hi);

/* A cell as text: integers whole, reals to 4 significant digits, "-" for a missing value. */
const char *exp_cell_text(json_t *v, char buf[64]);

/* Draws the rows as e's plot says into a PNG (or SVG when path ends in .svg) with gnuplot;
 * NF_EXIT_OK or NF_EXIT_FAIL after saying why. */
int exp_plot_rows(const exp_def *e, json_t *rows, const char *path);

#endif
