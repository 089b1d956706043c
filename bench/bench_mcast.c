/* SPDX-License-Identifier: MIT */
/* Benchmark: the multicast paper's experiment grid. For each paper fabric, 2D-grid, 3D-grid and
 * random groups under aware and random mapping, every engine routes the whole workload; prints a
 * Markdown table of max EFI, mean EFI and routing time (root selection + trees + refinement; the
 * best of --runs runs, 3 by default: routing is deterministic, so only the time varies), with the
 * lower bound of the workload. The last two columns weigh the time against the floor of the work:
 * replaying the routed trees of one engine (fulb when it runs, else the first), every membership
 * and every tree link touched once (see floor_s), and that engine's time over it.
 * Usage: bench_mcast [--quick] [--runs N] [--fabric SUBSTRING] [ENGINE,...] */
#define _GNU_SOURCE
#include "netfab/gen.h"
#include "netfab/groups.h"
#include "netfab/hops.h"
#include "netfab/mcast.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef struct fabric_case {
    const char *topo;
    unsigned ppn;
    const char *workloads[3];
} fabric_case;

static const fabric_case cases[] = {
    {"fattree:k=40", 1, {"grid2d:160x100", "grid3d:40x20x20", "random:n=2000,size=32"}},
    {"torus:30x20x20,c=2", 1, {"grid2d:240x100", "grid3d:40x30x20", "random:n=2000,size=32"}},
    {"dragonfly:a=18,p=9,h=9", 1, {"grid2d:240x100", "grid3d:81x27x12", "random:n=2000,size=32"}},
    {"bluelight", 4, {"grid2d:272x128", "grid3d:34x32x32", "random:n=2000,size=32"}},
    {"taihulight", 1, {"grid2d:320x128", "grid3d:40x32x32", "random:n=2000,size=32"}},
};

static const fabric_case quick_cases[] = {
    {"fattree:k=12", 1, {"grid2d:24x18", "grid3d:12x6x6", "random:n=200,size=16"}},
    {"dragonfly:a=6,p=3,h=3", 1, {"grid2d:19x18", "grid3d:19x6x3", "random:n=200,size=16"}},
};

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* The floor of the work of routing g, given its trees in m: for every group, each member's switch
 * found once (the peer of its port 1, as a router must do to place it) and each tree link's load
 * counted once, as a router must at least do to record the tree; the best of runs, in seconds.
 * Any engine does this much and more (it must also choose the root and the links). */
static double floor_s(const nf_fabric *f, const nf_groups *g, const nf_mcast *m, int runs) {
    uint32_t *load = calloc((size_t)f->n_links + 1, sizeof *load);
    nf_node *at = malloc(((size_t)g->off[g->n] + 1) * sizeof *at);
    double best = 0;
    if (!load || !at) {
        free(load);
        free(at);
        return 0;
    }
    for (int r = 0; r < runs; r++) {
        memset(load, 0, ((size_t)f->n_links + 1) * sizeof *load);
        double t0 = now_s();
        for (uint32_t k = 0; k < g->n; k++) {
            for (uint32_t i = g->off[k]; i < g->off[k + 1]; i++)
                at[i] = f->peer[nf_port_index(f, g->member[i], 1)];
            for (uint32_t i = m->tree_off[k]; i < m->tree_off[k + 1]; i++)
                load[m->tree_link[i]]++;
        }
        double t = now_s() - t0;
        if (r == 0 || t < best) best = t;
        /* read everything written, after the clock, so that no store can be left out */
        uint32_t sum = 0;
        for (uint32_t i = 0; i < g->off[g->n]; i++)
            sum += at[i];
        for (nf_link l = 0; l < f->n_links; l++)
            sum += load[l];
        volatile uint32_t sink = sum;
        (void)sink;
    }
    free(load);
    free(at);
    return best;
}

int main(int argc, char **argv) {
    const fabric_case *cs = cases;
    size_t ncs = sizeof cases / sizeof cases[0];
    const char *list = NULL, *only = NULL;
    int runs = 3;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--runs") == 0 && i + 1 < argc) {
            runs = atoi(argv[++i]);
            if (runs < 1 || runs > 100) {
                fprintf(stderr, "bench_mcast: --runs must be 1..100\n");
                return 2;
            }
        } else if (strcmp(argv[i], "--fabric") == 0 && i + 1 < argc) {
            only = argv[++i];
        } else if (strcmp(argv[i], "--quick") == 0) {
            cs = quick_cases;
            ncs = sizeof quick_cases / sizeof quick_cases[0];
        } else {
            list = argv[i];
        }
    }
    const nf_mcast_engine *eng[32];
    size_t ne = 0;
    if (!list) {
        for (size_t i = 0; i < nf_mcast_engine_count() && ne < 32; i++)
            eng[ne++] = nf_mcast_engine_at(i);
    } else { /* the names of the comma-separated list, in its order */
        for (const char *p = list; *p && ne < 32;) {
            size_t len = strcspn(p, ",");
            char name[64];
            snprintf(name, sizeof name, "%.*s", (int)len, p);
            const nf_mcast_engine *e = nf_mcast_engine_find(name);
            if (!e) {
                fprintf(stderr, "bench_mcast: unknown engine '%s'\n", name);
                return 2;
            }
            eng[ne++] = e;
            p += len + (p[len] == ',');
        }
    }
    size_t fe = 0; /* the engine whose trees give the floor */
    for (size_t i = 0; i < ne; i++)
        if (strcmp(nf_mcast_engine_name(eng[i]), "fulb") == 0) fe = i;
    if (ne == 0) {
        fprintf(stderr, "bench_mcast: no engine matches %s\n", list);
        return 2;
    }
    printf("| fabric | workload | mapping | groups | LB |");
    for (size_t i = 0; i < ne; i++)
        printf(" %s max/mean EFI, ms |", nf_mcast_engine_name(eng[i]));
    printf(" floor ms | %s / floor |", nf_mcast_engine_name(eng[fe]));
    printf("\n|---|---|---|---:|---:|");
    for (size_t i = 0; i < ne + 2; i++)
        printf("---:|");
    printf("\n");
    fflush(stdout);
    for (size_t c = 0; c < ncs; c++) {
        if (only && !strstr(cs[c].topo, only)) continue;
        nf_fabric *f;
        nf_hops *h;
        nf_diag d;
        if (nf_topo_build(cs[c].topo, NULL, &f, &d) || nf_hops_compute(f, 0, &h)) {
            fprintf(stderr, "bench_mcast: %s: %s\n", cs[c].topo, d.msg);
            return 1;
        }
        for (int w = 0; w < 3; w++)
            for (int map = 0; map < 2; map++) {
                nf_workload_opts o = {.procs_per_node = cs[c].ppn,
                                      .mapping = map ? NF_MAP_RANDOM : NF_MAP_AWARE,
                                      .seed = 1};
                nf_groups *g;
                if (nf_groups_build(f, cs[c].workloads[w], &o, &g, &d)) {
                    fprintf(stderr, "bench_mcast: %s: %s\n", cs[c].workloads[w], d.msg);
                    return 1;
                }
                printf("| `%s`%s | `%s` | %s | %u | %u |", cs[c].topo,
                       cs[c].ppn > 1 ? " (4/node)" : "", cs[c].workloads[w],
                       map ? "random" : "aware", g->n, nf_mcast_lower_bound(f, h, g));
                double floor = 0, fe_best = 0;
                for (size_t i = 0; i < ne; i++) {
                    double best = 0;
                    nf_mcast_stats st;
                    int r = 0;
                    for (; r < runs; r++) {
                        nf_mcast *m;
                        if (nf_mcast_route(f, h, g, eng[i], &m, &d)) break;
                        double t = m->root_s + m->tree_s + m->refine_s;
                        if (r == 0 || t < best) best = t;
                        if (r == 0) nf_mcast_stats_compute(f, g, m, &st);
                        if (r == 0 && i == fe) floor = floor_s(f, g, m, runs);
                        nf_mcast_free(m);
                    }
                    if (r < runs)
                        printf(" failed |");
                    else
                        printf(" %u / %.2f, %.1f |", st.max_efi, st.mean_efi, 1e3 * best);
                    if (i == fe && r == runs) fe_best = best;
                    fflush(stdout);
                }
                if (floor > 0 && fe_best > 0)
                    printf(" %.3f | %.0fx |", 1e3 * floor, fe_best / floor);
                else
                    printf(" - | - |");
                printf("\n");
                fflush(stdout);
                nf_groups_free(g);
            }
        nf_hops_free(h);
        nf_fabric_free(f);
    }
    return 0;
}
