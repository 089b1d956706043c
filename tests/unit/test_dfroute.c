/* SPDX-License-Identifier: MIT */
/* The Dragonfly routing ugal-bs (src/sim/dfroute.c), BookSim2's dragonflynew UGAL, against
 * answers worked out from BookSim's rules by hand: on the 72-node Dragonfly with BookSim's global
 * link layout (arr=consecutive: group x's link to group y at its router (y < x ? y : y - 1) / h)
 * the walk of a packet for every intermediate switch, its VC class at every hop, the decision
 * rule at its boundary; the channel dependency cycle BookSim's classes make, and none once the
 * intermediate group's first class is split from the source group's. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "netfab/gen.h"
#include "netfab/sim.h"
#include "simrig.h"
#include "sim/sim_internal.h"

#include <stdio.h>
#include <string.h>

#define TOPO "dragonfly:a=4,p=2,h=2,arr=consecutive"
#define A 4 /* routers per group */
#define H 2 /* global links per router */
#define G 9 /* groups */

/* The switch of router r of group g, found by its name. */
static nf_node sw_of(const nf_fabric *f, unsigned g, unsigned r) {
    char name[32];
    snprintf(name, sizeof name, "df g%u r%u", g, r);
    for (nf_node s = 0; s < f->n_switches; s++)
        if (strcmp(nf_node_name(f, s), name) == 0) return s;
    fail_msg("no switch %s", name);
    return NF_NONE;
}

/* A hop of a walk: the switch reached (group * A + router) and the VC class it was sent on. */
typedef struct hop {
    unsigned at, cls;
} hop;

/* ---- the expected walks, from BookSim's rules ---- */

/* The router of group x holding its global link to group y. */
static unsigned gw(unsigned x, unsigned y) { return (y < x ? y : y - 1) / H; }

/* The walk of a packet from router (gs, rs) to (gd, rd) sent through router m (group gm):
 * minimal in phase 1 when m is in the source group (or, by_queue, when the ways to gm and to gd
 * leave by the same port, the same local link to the same gateway, whose queue is never worse
 * than itself), else minimal to m in phase 0, then from m to the destination in phase 1. Same
 * group: one local hop in class 2. */
static unsigned expected(unsigned gs, unsigned rs, unsigned gd, unsigned rd, unsigned m,
                         bool by_queue, hop *out) {
    unsigned n = 0;
    struct {
        unsigned g, r, ph;
    } leg[2] = {{m / A, m % A, 0}, {gd, rd, 1}};
    unsigned gm = m / A;
    bool same_port = gm != gs && gw(gs, gm) == gw(gs, gd) && rs != gw(gs, gd);
    unsigned first = gm == gs || (by_queue && same_port) ? 1 : 0;
    if (gs == gd) {
        out[0] = (hop){gd * A + rd, 2};
        return 1;
    }
    unsigned g = gs, r = rs;
    for (unsigned l = first; l < 2; l++) {
        unsigned gt = leg[l].g, rt = leg[l].r, ph = leg[l].ph;
        if (g != gt) {
            unsigned gr = gw(g, gt);
            if (r != gr) out[n++] = (hop){g * A + gr, ph == 1 ? 1 : 0};
            if (ph == 1) ph = 2;
            unsigned arr = gw(gt, g); /* the far end of that global link */
            out[n++] = (hop){gt * A + arr, ph};
            g = gt, r = arr;
        }
        if (r != rt) {
            out[n++] = (hop){gt * A + rt, ph};
            r = rt;
        }
    }
    return n;
}

/* ---- walking the routing ---- */

typedef struct fake_view {
    nf__sim_view v;
    unsigned min_port; /* the port that reads q_min; every other reads q_val */
    uint32_t q_min, q_val;
} fake_view;

static uint32_t fake_occupancy(const nf__sim_view *v, unsigned port) {
    const fake_view *fv = (const fake_view *)(const void *)v;
    return port == fv->min_port ? fv->q_min : fv->q_val;
}

typedef struct bs_rig {
    nf_fabric *f;
    nf_hops *h;
    void *ctx;
    unsigned V;
} bs_rig;

static bs_rig bs_make(unsigned V) {
    bs_rig b = {.V = V};
    nf_diag d = {{0}, 0, {0}};
    assert_int_equal(nf_topo_build(TOPO, NULL, &b.f, &d), 0);
    assert_int_equal(nf_hops_compute(b.f, 1, &b.h), 0);
    nf_sim_config c = rig_defaults();
    c.vcs = V;
    assert_int_equal(nf__sim_ugal_bs.init(&b.ctx, NULL, b.f, b.f->link_state, b.h, &c, &d), 0);
    return b;
}

static void bs_unmake(bs_rig *b) {
    nf__sim_ugal_bs.fini(b->ctx);
    nf_hops_free(b->h);
    nf_fabric_free(b->f);
}

/* The port of switch s toward neighbour w. */
static unsigned port_to(const nf_fabric *f, nf_node s, nf_node w) {
    for (uint32_t e = f->sw_adj_off[s]; e < f->sw_adj_off[s + 1]; e++)
        if (f->sw_adj[e] == w) return f->sw_adj_port[e];
    fail_msg("no link");
    return 0;
}

/* Walks a packet with salt from router (gs, rs) to (gd, rd), by the first candidate at every
 * switch, each candidate's VCs one class of V / 3; its hops into out (at most 8); *rs_out its
 * word at the end. */
static unsigned walk(const bs_rig *b, unsigned gs, unsigned rs, unsigned gd, unsigned rd,
                     uint32_t salt, const nf__sim_view *view, hop *out, uint32_t *rs_out) {
    const nf_fabric *f = b->f;
    nf_node sw = sw_of(f, gs, rs), dst = sw_of(f, gd, rd);
    uint32_t word = 0;
    nf__sim_pkt p = {.dst_ca = NF_NONE, .dst_sw = dst, .salt = salt, .rs = &word, .view = view};
    unsigned in_port = 1, in_vc = 0, n = 0; /* port 1: an endpoint's */
    while (sw != dst) {
        if (n == 8) fail_msg("salt %u: more than 8 hops", salt);
        nf_sim_cand c[NF_SIM_MAX_RADIX];
        unsigned nc = nf__sim_ugal_bs.route(b->ctx, sw, in_port, in_vc, n, &p, c, NF_SIM_MAX_RADIX);
        assert_int_equal(nc, 1); /* one link between two routers or groups: one port */
        unsigned k = c[0].vc_lo * 3 / b->V;
        assert_int_equal(c[0].vc_lo, k * b->V / 3); /* exactly class k's VCs */
        assert_int_equal(c[0].vc_hi, (k + 1) * b->V / 3 - 1);
        nf_gport go = nf_port_index(f, sw, c[0].port);
        nf_node nx = f->peer[go];
        assert_true(nx < f->n_switches);
        unsigned g = (unsigned)f->supernode[nx], r = 0;
        while (sw_of(f, g, r) != nx)
            r++;
        out[n++] = (hop){g * A + r, k};
        in_port = f->peer_port[go], in_vc = c[0].vc_lo, sw = nx;
    }
    if (rs_out) *rs_out = word;
    return n;
}

static bool same(const hop *x, unsigned nx, const hop *y, unsigned ny) {
    if (nx != ny) return false;
    for (unsigned i = 0; i < nx; i++)
        if (x[i].at != y[i].at || x[i].cls != y[i].cls) return false;
    return true;
}

/* The walks by hand (router g0 r0 to g8 r3, the long way taken): through g3 r1, g0 r1 (class 0)
 * g3 r0 (global, 0) g3 r1 (0, reached) g3 r3 (1) g8 r1 (global, 2) g8 r3 (2); through the
 * destination group's g8 r1, g0 r3 (0) g8 r0 (0) g8 r1 (0) g8 r3 (1); through a router of the
 * source group, the minimal walk g0 r3 (1) g8 r0 (2) g8 r3 (2); and from the gateway g0 r3 the
 * minimal walk starts on its global link in class 2. Then every salt of 3,000, on 3 and on 6 VCs,
 * without a view of the queues (the long way whenever the intermediate is in another group) and
 * with queues that send a packet the long way unless both ways start on the same port (g0 r0's
 * ways to groups 7 and 8 both start on its link to g0 r3, and so does every way to the
 * destination group): its walk is the one expected for some intermediate router, every router
 * that may be one is met, and the share sent minimally, unmarked, is the intermediates' that
 * give the minimal walk (8 and 24 of 72 endpoints). */
static void test_walks(void **state) {
    (void)state;
    static const hop via_g3r1[] = {{1, 0}, {12, 0}, {13, 0}, {15, 1}, {33, 2}, {35, 2}};
    static const hop via_g8r1[] = {{3, 0}, {32, 0}, {33, 0}, {35, 1}};
    static const hop minimal[] = {{3, 1}, {32, 2}, {35, 2}};
    hop e[8];
    assert_true(same(e, expected(0, 0, 8, 3, 13, false, e), via_g3r1, 6));
    assert_true(same(e, expected(0, 0, 8, 3, 33, false, e), via_g8r1, 4));
    assert_true(same(e, expected(0, 0, 8, 3, 33, true, e), minimal, 3));
    assert_true(same(e, expected(0, 0, 8, 3, 2, false, e), minimal, 3));
    for (unsigned V = 3; V <= 6; V += 3) {
        bs_rig b = bs_make(V);
        fake_view fv = {.v = {.occupancy = fake_occupancy},
                        .min_port = port_to(b.f, sw_of(b.f, 0, 0), sw_of(b.f, 0, 3)),
                        .q_min = 1000};
        for (int by_queue = 0; by_queue < 2; by_queue++) {
            unsigned met[G * A] = {0}, n_min = 0;
            bool seen_g3r1 = false, seen_g8r1 = false;
            for (uint32_t salt = 0; salt < 3000; salt++) {
                hop w[8];
                uint32_t word;
                unsigned n = walk(&b, 0, 0, 8, 3, salt, by_queue ? &fv.v : NULL, w, &word);
                unsigned m = 0;
                while (m < G * A && !same(w, n, e, expected(0, 0, 8, 3, m, by_queue, e)))
                    m++;
                if (m == G * A)
                    fail_msg("V %u salt %u: a walk of %u hops no intermediate gives", V, salt, n);
                else
                    met[m]++;
                bool walk_min = same(w, n, minimal, 3);
                n_min += walk_min;
                assert_int_equal(!(word & NF__RS_NONMIN), walk_min);
                seen_g3r1 |= same(w, n, via_g3r1, 6);
                seen_g8r1 |= same(w, n, via_g8r1, 4);
            }
            for (unsigned m = A; m < (by_queue ? 7 : G) * A; m++)
                if (!met[m])
                    fail_msg("V %u: router g%u r%u never the intermediate", V, m / A, m % A);
            assert_true(seen_g3r1 && seen_g8r1 != by_queue);
            unsigned want = 3000 * (by_queue ? 24 : 8) / 72;
            if (n_min + 80 < want || n_min > want + 80)
                fail_msg("V %u: %u of 3000 minimal, about %u expected", V, n_min, want);
        }
        /* from the gateway: straight onto the global link in class 2 */
        hop w[8];
        fv.q_min = 0;
        unsigned n = walk(&b, 0, 3, 8, 3, 7, &fv.v, w, NULL);
        static const hop from_gw[] = {{32, 2}, {35, 2}};
        assert_true(same(w, n, from_gw, 2));
        /* within the group: one local hop in class 2 */
        n = walk(&b, 0, 0, 0, 2, 7, &fv.v, w, NULL);
        static const hop local[] = {{2, 2}};
        assert_true(same(w, n, local, 1));
        bs_unmake(&b);
    }
}

/* The rule at its boundary: with q_val 10 the packet goes minimally while q_min <= 2 * 10 + 30
 * = 50 and the long way from 51 (a salt whose intermediate is g3 r1, reached by another port
 * than the minimal way's); with empty queues every salt goes minimally. */
static void test_rule(void **state) {
    (void)state;
    static const hop via_g3r1[] = {{1, 0}, {12, 0}, {13, 0}, {15, 1}, {33, 2}, {35, 2}};
    static const hop minimal[] = {{3, 1}, {32, 2}, {35, 2}};
    bs_rig b = bs_make(3);
    fake_view fv = {.v = {.occupancy = fake_occupancy},
                    .min_port = port_to(b.f, sw_of(b.f, 0, 0), sw_of(b.f, 0, 3)),
                    .q_min = 1000};
    hop w[8];
    uint32_t salt = 0;
    while (!same(w, walk(&b, 0, 0, 8, 3, salt, &fv.v, w, NULL), via_g3r1, 6))
        salt++;
    fv.q_val = 10, fv.q_min = 50;
    assert_true(same(w, walk(&b, 0, 0, 8, 3, salt, &fv.v, w, NULL), minimal, 3));
    fv.q_min = 51;
    assert_true(same(w, walk(&b, 0, 0, 8, 3, salt, &fv.v, w, NULL), via_g3r1, 6));
    fv.q_min = fv.q_val = 0;
    for (uint32_t s = 0; s < 500; s++)
        assert_true(same(w, walk(&b, 0, 0, 8, 3, s, &fv.v, w, NULL), minimal, 3));
    bs_unmake(&b);
}

/* ugal-bs with BookSim's class 0 of the intermediate group moved to a VC of its own (VC 3; the
 * routing's classes 0, 1, 2 on VCs 0, 1, 2): the checker's candidates, told by its VC, hops and
 * kind of link, then close no cycle. */
static int split_init(void **ctx, const void *data, const nf_fabric *f, const uint8_t *ls,
                      const nf_hops *h, const nf_sim_config *c, nf_diag *diag) {
    nf_sim_config c3 = *c;
    c3.vcs = 3;
    return nf__sim_ugal_bs.init(ctx, data, f, ls, h, &c3, diag);
}
static const nf_fabric *split_fabric;
static unsigned split_route(void *ctx, nf_node sw, unsigned in_port, unsigned in_vc, unsigned hops,
                            const nf__sim_pkt *p, nf_sim_cand *out, unsigned max) {
    unsigned n = nf__sim_ugal_bs.route(ctx, sw, in_port, in_vc == 3 ? 0 : in_vc, hops, p, out, max);
    const nf_fabric *f = split_fabric;
    for (unsigned i = 0; i < n; i++) {
        nf_link l = f->port_link[nf_port_index(f, sw, out[i].port)];
        if (out[i].vc_lo == 0 && hops >= 1 && f->link_cls[l] != NF_LINK_GLOBAL)
            out[i].vc_lo = out[i].vc_hi = 3; /* a local hop in the intermediate group */
    }
    return n;
}
static unsigned split_inj(void *ctx) { return nf__sim_ugal_bs.inj_vc_hi(ctx); }

/* BookSim's classes share class 0 between the source group's local hop and the intermediate
 * group's first, so G0 L0 G0 L0 ... closes through three groups: the checker finds such a cycle,
 * on VC 0 only, on both global link layouts; with the intermediate group's class 0 on a VC of
 * its own it finds none. Fewer than 3 VCs are refused. */
static void test_deadlock(void **state) {
    (void)state;
    const nf_sim_routing split = {.name = "ugal-bs-split",
                                  .summary = "",
                                  .min_vcs = 4,
                                  .init = split_init,
                                  .route = split_route,
                                  .inj_vc_hi = split_inj,
                                  .fini = nf__sim_ugal_bs.fini};
    const char *topos[] = {TOPO, "dragonfly:a=4,p=2,h=2", "dragonfly:a=6,p=3,h=3,arr=consecutive"};
    for (size_t i = 0; i < sizeof topos / sizeof *topos; i++) {
        nf_fabric *f;
        nf_hops *h;
        nf_diag d = {{0}, 0, {0}};
        assert_int_equal(nf_topo_build(topos[i], NULL, &f, &d), 0);
        assert_int_equal(nf_hops_compute(f, 1, &h), 0);
        nf_sim_config c = rig_defaults();
        c.vcs = 3;
        uint32_t cyc = 0;
        assert_int_equal(nf_sim_check_deadlock(f, h, &nf__sim_ugal_bs, &c, &cyc, NULL, NULL, &d),
                         0);
        if (!cyc || !strstr(d.msg, "VC 0") || strstr(d.msg, "VC 1") || strstr(d.msg, "VC 2"))
            fail_msg("%s: cycle of %u: %s", topos[i], cyc, d.msg);
        c.vcs = 4;
        split_fabric = f;
        cyc = 1;
        assert_int_equal(nf_sim_check_deadlock(f, h, &split, &c, &cyc, NULL, NULL, &d), 0);
        if (cyc) fail_msg("%s split: %s", topos[i], d.msg);
        c.vcs = 2;
        assert_int_equal(nf_sim_check_deadlock(f, h, &nf__sim_ugal_bs, &c, &cyc, NULL, NULL, &d),
                         NF_EINVAL);
        assert_non_null(strstr(d.msg, "3 VCs"));
        nf_hops_free(h);
        nf_fabric_free(f);
    }
}

/* In the simulator: at a light load the queues stay under the threshold, every packet goes
 * minimally and all are delivered. */
static void test_run(void **state) {
    (void)state;
    nf_sim_config c = rig_defaults();
    c.vcs = 3, c.seed = 3;
    rig r = rig_make(TOPO, "ugal-bs", "worstcase", c);
    nf_sim_injection inj = {.load = 0.05};
    nf_sim_phase ph = {.warmup = 500, .window = 3000, .drain_max = 3000};
    nf_sim_result res;
    assert_int_equal(nf_sim_run(r.s, &inj, &ph, NULL, NULL, &res), 0);
    assert_false(res.saturated);
    assert_false(res.deadlock);
    assert_true(res.minimal_frac == 1.0);
    if (res.accepted < 0.045) fail_msg("accepted %.4f at 0.05", res.accepted);
    rig_unmake(&r);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_walks),
        cmocka_unit_test(test_rule),
        cmocka_unit_test(test_deadlock),
        cmocka_unit_test(test_run),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
