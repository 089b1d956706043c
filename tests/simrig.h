/* SPDX-License-Identifier: MIT */
/* The simulator tests' rig: a generated fabric, its distances and a simulator on it, made and
 * freed in one call each. Header-only; include it after cmocka.h. */
#ifndef NF_SIMRIG_H
#define NF_SIMRIG_H

#include "netfab/gen.h"
#include "netfab/sim.h"

typedef struct rig {
    nf_fabric *f;
    nf_hops *h;
    nf_sim *s;
} rig;

/* The simulator's defaults; a test changes a few of them. */
static inline nf_sim_config rig_defaults(void) {
    nf_sim_config c;
    nf_sim_config_defaults(&c);
    return c;
}

/* Builds topo and its distances (a test failure if they cannot be), then tries the simulator:
 * nf_sim_new's status, its reason in d. */
static inline int rig_try(const char *topo, const char *routing, const char *traffic,
                          const nf_sim_config *c, rig *r, nf_diag *d) {
    r->s = NULL;
    if (nf_topo_build(topo, NULL, &r->f, d) || nf_hops_compute(r->f, 1, &r->h))
        fail_msg("%s: %s", topo, d->msg);
    return nf_sim_new(r->f, r->h, c, nf_sim_routing_find(routing), nf_sim_traffic_find(traffic),
                      &r->s, d);
}

/* The rig, or a test failure saying why not. */
static inline rig rig_make(const char *topo, const char *routing, const char *traffic,
                           nf_sim_config c) {
    rig r;
    nf_diag d = {{0}, 0, {0}};
    if (rig_try(topo, routing, traffic, &c, &r, &d)) fail_msg("%s %s: %s", topo, routing, d.msg);
    return r;
}

static inline void rig_unmake(rig *r) {
    nf_sim_free(r->s);
    nf_hops_free(r->h);
    nf_fabric_free(r->f);
}

#endif
