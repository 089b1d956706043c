/* Internal: what a routing function and a traffic pattern are, for the engine (sim.c), the
 * routings (simroute.c) and the patterns (traffic.c). */
#ifndef NF_SIM_INTERNAL_H
#define NF_SIM_INTERNAL_H

#include "netfab/sim.h"

/* A packet as routing sees it. */
typedef struct nf__sim_pkt {
    nf_node dst_ca, dst_sw;
    uint32_t salt; /* per packet random bits, for oblivious choices */
} nf__sim_pkt;

/* A routing function. route() gives the candidates at switch sw (sw != the destination's
 * switch) for a packet that came in on in_port (a switch port, 1-based) on VC in_vc after hops
 * switch-to-switch links; up to max into out, in preference order; returns their number (0: no
 * way on, the packet is dropped as unroutable and counted). inj_vc_hi: injected packets use VCs
 * 0..inj_vc_hi. */
struct nf_sim_routing {
    const char *name, *summary;
    unsigned min_vcs;
    int (*init)(void **ctx, const nf_fabric *f, const nf_hops *h, const nf_sim_config *c,
                nf_diag *diag);
    unsigned (*route)(void *ctx, nf_node sw, unsigned in_port, unsigned in_vc, unsigned hops,
                      const nf__sim_pkt *p, nf_sim_cand *out, unsigned max);
    unsigned (*inj_vc_hi)(void *ctx);
    void (*fini)(void *ctx);
};

/* A traffic pattern: the destination endpoint (index among endpoints 0..E-1) of a packet from
 * endpoint src; rnd gives uniform 64-bit numbers. init may precompute (a permutation). */
struct nf_sim_traffic {
    const char *name, *summary;
    int (*init)(void **ctx, const nf_fabric *f, uint32_t n_ep, const nf_node *ep, uint64_t seed,
                nf_diag *diag);
    uint32_t (*dest)(void *ctx, uint32_t src, uint64_t (*rnd)(void *), void *rnd_ud);
    void (*fini)(void *ctx);
};

#endif
