/* SPDX-License-Identifier: MIT */
/* Topology generators and the --topo spec strings that name them.
 * Every generator returns a frozen fabric with GUIDs, LIDs (switches 1..S, then CA ports), names,
 * link classes, levels/supernodes/planes set; the exact wiring of each is documented in
 * README.md. */
#ifndef NETFAB_GEN_H
#define NETFAB_GEN_H

#include "core.h"
#include "fabric.h"

#define NF_XGFT_MAX_H 8
#define NF_TORUS_MAX_D 8

/* Standard 3-level fat tree of k-port switches (k even, 2..254): k pods of k/2 edge and k/2
 * aggregation switches, (k/2)^2 core switches, k/2 endpoints per edge switch. */
NF_API int nf_gen_fattree(unsigned k, nf_fabric **out, nf_diag *diag);

/* XGFT(h; m1..mh; w1..wh): level-0 endpoints, level i (1..h) switches with m_i children, and each
 * node at level i-1 has w_i parents. */
NF_API int nf_gen_xgft(unsigned h, const unsigned *m, const unsigned *w, nf_fabric **out,
                       nf_diag *diag);

/* nd-dimensional torus with dims[i] switches along dimension i and c endpoints per switch. */
NF_API int nf_gen_torus(unsigned nd, const unsigned *dims, unsigned c, nf_fabric **out,
                        nf_diag *diag);

typedef enum nf_df_arrangement { NF_DF_PALMTREE = 0, NF_DF_CONSECUTIVE = 1 } nf_df_arrangement;
/* Dragonfly: g groups of a routers, fully connected inside a group, p endpoints and h global
 * ports per router. g = 0 means a*h + 1. */
NF_API int nf_gen_dragonfly(unsigned a, unsigned p, unsigned h, unsigned g, nf_df_arrangement arr,
                            nf_fabric **out, nf_diag *diag);

/* Generalized fat tree (Sunway): a two-level leaf-spine tree per rail, leaf/spine routers 2i and
 * 2i+1 of the same level are siblings joined by `sib` links; with rails = 2 every node is one CA
 * with one port in each plane. */
typedef struct nf_gft_params {
    unsigned leaves; /* leaf routers per plane (even) */
    unsigned nodes;  /* endpoints per leaf */
    unsigned spines; /* spine routers per plane (even) */
    unsigned links;  /* parallel links between each leaf and each spine */
    unsigned sib;    /* links between the two routers of a sibling pair */
    unsigned rails;  /* 1 or 2 */
    unsigned radix;  /* router ports */
} nf_gft_params;
NF_API int nf_gen_gft(const nf_gft_params *prm, nf_fabric **out, nf_diag *diag);

/* Options for nf_topo_build. */
typedef struct nf_topo_opts {
    nf_warn_fn warn; /* findings while reading a file: spec; may be NULL */
    void *warn_ud;
} nf_topo_opts;

/* Builds the fabric named by spec: "fattree:k=K", "xgft:h=H,m=a.b.c,w=a.b.c",
 * "torus:XxYxZ,c=C", "dragonfly:a=A,p=P,h=H[,g=G][,arr=palmtree|consecutive]",
 * "gft:preset=sunway-proto" or
 * "gft:leaves=..,nodes=..,spines=..[,links=][,sib=][,rails=][,radix=]", "bluelight", "taihulight",
 * "file:PATH". opts may be NULL. On failure diag says why. */
NF_API int nf_topo_build(const char *spec, const nf_topo_opts *opts, nf_fabric **out,
                         nf_diag *diag);

#endif
