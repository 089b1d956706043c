/* SPDX-License-Identifier: MIT */
/* `netfab exp reductions`: the Sunway NIC's hardware reductions (the Sunway paper, section 2.3:
 * single and double floats, 32- and 64-bit integers; sum, max, min, and, or, xor; an ordered
 * floating sum through a special tree). For every type and operator, 64 ranks' values (16 with
 * --quick) drawn from the seed, spread over many binary orders of magnitude so that a float sum
 * depends on its order (for AND every bit set but two, one in 32-bit types, for OR two bits set,
 * one, so that the results are rarely all zeros or all ones): the result the NICs' logical tree of
 * fan-in 4 computes (nf_sim_tree_reduce_*) against the same tree evaluated here by a second,
 * iterative implementation, bit for bit; for sums the chain (fan-in 1, ranks in reverse: the
 * paper's special tree) against a sequential sum from rank 0 up, bit for bit, and whether the
 * fan-in 4 tree's bits differ from it. Then the time of a hardware allreduce of 8 bytes on
 * fattree:k=16 (as `netfab exp collectives`) with the tree of fan-in 4 and with the chain, 16 to
 * 256 ranks. */
#include "cmd.h"
#include "exp.h"
#include "netfab/gen.h"
#include "netfab/groups.h"
#include "netfab/hops.h"
#include "netfab/mcast.h"
#include "netfab/sim.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const op_names[] = {"sum", "max", "min", "and", "or", "xor"};

static uint64_t next(uint64_t *x) { /* splitmix64 */
    uint64_t z = (*x += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

/* A value of 1 to 2 times 2^e, e in [-30, 30), of either sign. */
static double wide(uint64_t *x) {
    uint64_t r = next(x);
    double m = 1.0 + (double)(r >> 11) * 0x1p-53;
    return ldexp(r & 1 ? -m : m, (int)((r >> 1) % 60) - 30);
}

/* n ranks' values of each type: floats of 1 to 2 times 2^-30 .. 2^29 of either sign, integers
 * of every bit pattern. */
static void fill(uint64_t *x, uint32_t n, double *d, float *fl, int64_t *l, int32_t *w) {
    for (uint32_t i = 0; i < n; i++) {
        d[i] = wide(x);
        fl[i] = (float)wide(x);
        l[i] = (int64_t)next(x);
        w[i] = (int32_t)(uint32_t)next(x);
    }
}

/* The tree of fan-in k evaluated bottom-up: rank r's result is its value, then each of its
 * children's (k r + 1 .. k r + k) in order; children come after their parent, so a pass from
 * the last rank down has every child's result ready. */
#define HOST_TREE(name, T, combine)                                                                \
    static T name(const T *v, uint32_t n, unsigned k, nf_sim_op op, T *res) {                      \
        for (uint32_t r = n; r-- > 0;) {                                                           \
            T acc = v[r];                                                                          \
            for (uint64_t c = (uint64_t)k * r + 1; c <= (uint64_t)k * r + k && c < n; c++)         \
                acc = combine(acc, res[c], op);                                                    \
            res[r] = acc;                                                                          \
        }                                                                                          \
        return res[0];                                                                             \
    }

/* The operators as this experiment reads the paper: on a float, sum, max and min as C's (a NaN
 * loses) and the bitwise ones on its bit pattern; on an integer, a wrapping sum. T's bits as the
 * unsigned U. */
#define COMBINE(name, T, U, is_float)                                                              \
    static T name(T a, T b, nf_sim_op op) {                                                        \
        U x, y, z;                                                                                 \
        memcpy(&x, &a, sizeof x), memcpy(&y, &b, sizeof y);                                        \
        if (op == NF_SIM_MAX) return a > b || isnan((double)b) ? a : b;                            \
        if (op == NF_SIM_MIN) return a < b || isnan((double)b) ? a : b;                            \
        if (op == NF_SIM_SUM && is_float) return a + b;                                            \
        z = op == NF_SIM_SUM ? x + y : op == NF_SIM_AND ? x & y : op == NF_SIM_OR ? x | y : x ^ y; \
        memcpy(&a, &z, sizeof a);                                                                  \
        return a;                                                                                  \
    }
COMBINE(c_f64, double, uint64_t, 1)
COMBINE(c_f32, float, uint32_t, 1)
COMBINE(c_i64, int64_t, uint64_t, 0)
COMBINE(c_i32, int32_t, uint32_t, 0)
#undef COMBINE
HOST_TREE(host_f64, double, c_f64)
HOST_TREE(host_f32, float, c_f32)
HOST_TREE(host_i64, int64_t, c_i64)
HOST_TREE(host_i32, int32_t, c_i32)

/* A value's text and its bits as hex. */
static void text_f(char *buf, size_t n, double v) { snprintf(buf, n, "%.17g", v); }

static void result_row(json_t *rows, const char *type, nf_sim_op op, uint32_t n, const char *nic,
                       const char *host, uint64_t nic_bits, uint64_t host_bits, const char *seq,
                       int seq_equal, int tree_equals_seq) {
    char nb[24], hb[24];
    snprintf(nb, sizeof nb, "%" PRIx64, nic_bits);
    snprintf(hb, sizeof hb, "%" PRIx64, host_bits);
    json_t *r = json_pack("{s:s, s:s, s:s, s:I, s:I, s:s, s:s, s:s, s:s, s:b}", "measure", "result",
                          "type", type, "op", op_names[op], "ranks", (json_int_t)n, "fanin",
                          (json_int_t)4, "nic", nic, "host", host, "nic_bits", nb, "host_bits", hb,
                          "equal", nic_bits == host_bits);
    if (seq) {
        json_object_set_new(r, "sequential", json_string(seq));
        json_object_set_new(r, "chain_equals_sequential", json_boolean(seq_equal));
        json_object_set_new(r, "tree_equals_sequential", json_boolean(tree_equals_seq));
    }
    json_array_append_new(rows, r);
}

/* Every type and operator on n ranks' values; rc NF_EXIT_FAIL if any result differs from the
 * host's (the row says which). */
static int results(const exp_opts *o, json_t *rows, uint32_t n) {
    double *d = malloc(n * sizeof *d), *dr = malloc(n * sizeof *dr), *dres = malloc(n * sizeof *d);
    float *fl = malloc(n * sizeof *fl), *flr = malloc(n * sizeof *fl), *fres = malloc(n * 4);
    int64_t *l = malloc(n * sizeof *l), *lres = malloc(n * sizeof *l);
    int32_t *w = malloc(n * sizeof *w), *wres = malloc(n * sizeof *w);
    int rc = NF_EXIT_OK;
    if (!d || !dr || !dres || !fl || !flr || !fres || !l || !lres || !w || !wres) {
        rc = nf_app_report(NF_ENOMEM, NULL);
        goto out;
    }
    uint64_t x0 = o->seed * 0x2545F4914F6CDD1Dull + 1, x = x0;
    fill(&x, n, d, fl, l, w);
    for (uint32_t i = 0; i < n; i++) /* ranks in reverse, for the chain */
        dr[i] = d[n - 1 - i], flr[i] = fl[n - 1 - i];
    double dseq = d[0];
    float fseq = fl[0];
    for (uint32_t i = 1; i < n; i++)
        dseq += d[i], fseq += fl[i];
    char a[40], b[40], s[40];
    for (int op = NF_SIM_SUM; op <= NF_SIM_XOR; op++) {
        nf_sim_op p = (nf_sim_op)op;
        if (p == NF_SIM_AND || p == NF_SIM_OR) { /* sparse bits, so the result is neither 0 nor ~0:
                                                  * for AND every bit set but two (one of 32),
                                                  * for OR two bits set (one) */
            x = x0 + (uint64_t)op;
            for (uint32_t i = 0; i < n; i++) {
                uint64_t r = next(&x), b64 = 1ull << (r & 63) | 1ull << (r >> 6 & 63);
                uint32_t b32 = 1u << (r >> 12 & 31);
                if (p == NF_SIM_AND) b64 = ~b64, b32 = ~b32;
                memcpy(&d[i], &b64, 8), memcpy(&fl[i], &b32, 4);
                l[i] = (int64_t)b64, w[i] = (int32_t)b32;
            }
        } else { /* the wide values */
            x = x0;
            fill(&x, n, d, fl, l, w);
        }
        double dn = nf_sim_tree_reduce_f64(d, n, 4, p), dh = host_f64(d, n, 4, p, dres);
        uint64_t bn, bh, bs, bc;
        memcpy(&bn, &dn, 8), memcpy(&bh, &dh, 8);
        text_f(a, sizeof a, dn), text_f(b, sizeof b, dh);
        if (p == NF_SIM_SUM) {
            double dc = nf_sim_tree_reduce_f64(dr, n, 1, p);
            memcpy(&bc, &dc, 8), memcpy(&bs, &dseq, 8);
            text_f(s, sizeof s, dseq);
            result_row(rows, "f64", p, n, a, b, bn, bh, s, bc == bs, bn == bs);
            if (bc != bs) rc = NF_EXIT_FAIL;
        } else {
            result_row(rows, "f64", p, n, a, b, bn, bh, NULL, 0, 0);
        }
        if (bn != bh) rc = NF_EXIT_FAIL;
        float fn = nf_sim_tree_reduce_f32(fl, n, 4, p), fh = host_f32(fl, n, 4, p, fres);
        uint32_t un, uh, us, uc;
        memcpy(&un, &fn, 4), memcpy(&uh, &fh, 4);
        text_f(a, sizeof a, fn), text_f(b, sizeof b, fh);
        if (p == NF_SIM_SUM) {
            float fc = nf_sim_tree_reduce_f32(flr, n, 1, p);
            memcpy(&uc, &fc, 4), memcpy(&us, &fseq, 4);
            text_f(s, sizeof s, fseq);
            result_row(rows, "f32", p, n, a, b, un, uh, s, uc == us, un == us);
            if (uc != us) rc = NF_EXIT_FAIL;
        } else {
            result_row(rows, "f32", p, n, a, b, un, uh, NULL, 0, 0);
        }
        if (un != uh) rc = NF_EXIT_FAIL;
        int64_t ln = nf_sim_tree_reduce_i64(l, n, 4, p), lh = host_i64(l, n, 4, p, lres);
        snprintf(a, sizeof a, "%" PRId64, ln), snprintf(b, sizeof b, "%" PRId64, lh);
        result_row(rows, "i64", p, n, a, b, (uint64_t)ln, (uint64_t)lh, NULL, 0, 0);
        if (ln != lh) rc = NF_EXIT_FAIL;
        int32_t wn = nf_sim_tree_reduce_i32(w, n, 4, p), wh = host_i32(w, n, 4, p, wres);
        snprintf(a, sizeof a, "%" PRId32, wn), snprintf(b, sizeof b, "%" PRId32, wh);
        result_row(rows, "i32", p, n, a, b, (uint32_t)wn, (uint32_t)wh, NULL, 0, 0);
        if (wn != wh) rc = NF_EXIT_FAIL;
    }
    if (rc) fprintf(stderr, "netfab exp: reductions: a result differs from the host's\n");
out:
    free(d), free(dr), free(dres), free(fl), free(flr), free(fres), free(l), free(lres), free(w),
        free(wres);
    return rc;
}

/* The hardware allreduce's time on n ranks of f's first endpoints, with fan-in k. */
static int timing(const exp_opts *o, json_t *rows, const nf_fabric *f, const nf_hops *h, uint32_t n,
                  unsigned k) {
    uint32_t *ranks = malloc(n * sizeof *ranks), *mem = malloc(n * sizeof *mem);
    if (!ranks || !mem) {
        free(ranks), free(mem);
        return nf_app_report(NF_ENOMEM, NULL);
    }
    for (uint32_t i = 0; i < n; i++)
        ranks[i] = i, mem[i] = f->n_switches + i;
    uint32_t off[2] = {0, n};
    nf_groups g = {.n = 1, .off = off, .member = mem};
    nf_mcast *m = NULL;
    nf_sim *s = NULL;
    nf_diag d = {{0}, 0, {0}};
    nf_sim_config c;
    nf_sim_config_defaults(&c);
    c.vcs = 8, c.seed = o->seed;
    int rc = nf_mcast_route(f, h, &g, nf_mcast_engine_find("fulb"), &m, &d);
    if (!rc)
        rc = nf_sim_new(f, h, &c, nf_sim_routing_find("minhop"), nf_sim_traffic_find("uniform"), &s,
                        &d);
    if (!rc) rc = nf_sim_set_mcast(s, &g, m);
    uint32_t first, cnt;
    if (!rc)
        rc = nf_sim_post_hw_collective(s, NF_SIM_HW_ALLREDUCE, ranks, n, 8, k, 0, &first, &cnt);
    nf_sim_script_result res;
    if (!rc) rc = nf_sim_run_script(s, UINT64_MAX, &res);
    if (rc) {
        rc = nf_app_report(rc, &d);
    } else if (res.deadlock || res.unfinished) {
        fprintf(stderr, "netfab exp: reductions: the allreduce on %u ranks did not complete\n", n);
        rc = NF_EXIT_FAIL;
    } else {
        json_array_append_new(rows, json_pack("{s:s, s:I, s:I, s:s, s:I}", "measure", "latency",
                                              "ranks", (json_int_t)n, "fanin", (json_int_t)k,
                                              "tree", k == 1 ? "chain (ordered)" : "fan-in 4",
                                              "lat", (json_int_t)res.cycles));
    }
    nf_sim_free(s);
    nf_mcast_free(m);
    free(ranks), free(mem);
    return rc;
}

int exp_reductions(const exp_opts *o, json_t *rows) {
    int rc = results(o, rows, o->quick ? 16 : 64);
    if (rc) return rc;
    nf_fabric *f;
    nf_hops *h;
    if ((rc = nf_app_fabric("fattree:k=16", o->threads, &f, &h))) return rc;
    for (uint32_t n = 16; n <= (o->quick ? 64u : 256u) && !rc; n *= 2)
        for (unsigned k = 4; k && !rc; k = k == 4 ? 1 : 0) { /* fan-in 4, then the chain */
            exp_progress((double)n / (o->quick ? 64 : 256), "reductions: %u ranks, fan-in %u", n,
                         k);
            rc = timing(o, rows, f, h, n, k);
        }
    nf_hops_free(h);
    nf_fabric_free(f);
    return rc;
}
