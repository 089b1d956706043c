/* SPDX-License-Identifier: MIT */
/* Software collectives as scripted messages: binomial broadcast, recursive-doubling and ring
 * allreduce, a recursive-doubling barrier. Each message depends on the message that brought
 * its data to its sender; the NIC's queue keeps a rank's own sends in order. */
#include "sim/sim_internal.h"

#include "util/mem.h"

#include <stdlib.h>
#include <string.h>

static bool pow2(uint32_t n) { return n && !(n & (n - 1)); }

/* Posts one message of `bytes` from rank a to rank b; a put with a reply word, or a short
 * message when it fits a packet. */
static int send(nf_sim *s, const uint32_t *ranks, uint32_t a, uint32_t b, uint64_t bytes,
                nf_sim_rail_mode rail, uint32_t *id) {
    const nf_sim_config *c = nf__sim_config(s);
    bool fits = bytes <= (uint64_t)c->flit_bytes * c->pkt_flits;
    nf_sim_msg m = {.src = ranks[a],
                    .dst = ranks[b],
                    .bytes = bytes,
                    .kind = fits ? NF_SIM_SHORT : NF_SIM_PUT_REPLY,
                    .rail = rail};
    return nf_sim_post(s, &m, id);
}

int nf_sim_post_collective(nf_sim *s, nf_sim_coll c, const uint32_t *ranks, uint32_t n,
                           uint64_t bytes, nf_sim_rail_mode rail, uint32_t *first,
                           uint32_t *count) {
    uint32_t E = nf_sim_endpoints(s);
    if (n < 2 || (unsigned)c > NF_SIM_REDUCE_BINOMIAL) return NF_EINVAL;
    size_t mark_msg, mark_edge;
    nf__sim_script_mark(s, &mark_msg, &mark_edge);
    if ((c == NF_SIM_ALLREDUCE_RD || c == NF_SIM_BARRIER) && !pow2(n)) return NF_EINVAL;
    uint8_t *seen = nf__calloc(E, 1);
    /* got[r]: the message that last brought data to rank r, or UINT32_MAX (none yet) */
    uint32_t *got = nf__malloc((size_t)n * sizeof *got),
             *next = nf__malloc((size_t)n * sizeof *next);
    int rc = seen && got && next ? NF_OK : NF_ENOMEM;
    for (uint32_t i = 0; i < n && rc == NF_OK; i++) {
        if (ranks[i] >= E || seen[ranks[i]])
            rc = NF_EINVAL;
        else
            seen[ranks[i]] = 1;
        got[i] = UINT32_MAX;
    }
    uint32_t id = 0, n_msg = 0;
    bool any = false;
#define SEND(a, b, len)                                                                            \
    do {                                                                                           \
        if ((rc = send(s, ranks, (a), (b), (len), rail, &id))) goto out;                           \
        if (!any) *first = id, any = true;                                                         \
        n_msg++;                                                                                   \
        if (got[a] != UINT32_MAX && (rc = nf_sim_after(s, got[a], id))) goto out;                  \
        next[b] = id;                                                                              \
    } while (0)
    if (rc) goto out;
    if (c == NF_SIM_BCAST_BINOMIAL) {
        for (uint32_t k = 1; k < n; k <<= 1) { /* round: ranks below k send to r + k */
            for (uint32_t r = 0; r < n; r++)
                next[r] = got[r];
            for (uint32_t r = 0; r < k && r + k < n; r++)
                SEND(r, r + k, bytes);
            for (uint32_t r = 0; r < n; r++)
                got[r] = next[r];
        }
    } else if (c == NF_SIM_ALLREDUCE_RD || c == NF_SIM_BARRIER) {
        uint64_t len = c == NF_SIM_BARRIER ? 0 : bytes;
        for (uint32_t k = 1; k < n; k <<= 1) {
            for (uint32_t r = 0; r < n; r++)
                SEND(r, r ^ k, len);
            for (uint32_t r = 0; r < n; r++)
                got[r] = next[r];
        }
    } else if (c == NF_SIM_REDUCE_BINOMIAL) { /* each rank's message after its children's */
        uint32_t *msg = nf__malloc((size_t)n * sizeof *msg);
        if (!msg) {
            rc = NF_ENOMEM;
            goto out;
        }
        for (uint32_t r = 1; r < n && !rc; r++) {
            uint32_t parent = r & ~(1u << (31 - __builtin_clz(r)));
            if ((rc = send(s, ranks, r, parent, bytes, rail, &msg[r]))) break;
            if (!any) *first = msg[r], any = true;
            n_msg++;
        }
        for (uint32_t r = 1; r < n && !rc; r++) {
            uint32_t parent = r & ~(1u << (31 - __builtin_clz(r)));
            if (parent) rc = nf_sim_after(s, msg[r], msg[parent]);
        }
        nf__free(msg);
    } else { /* ring: reduce-scatter, then allgather */
        uint64_t chunk = (bytes + n - 1) / n;
        for (uint32_t t = 0; t < 2 * (n - 1); t++) {
            for (uint32_t r = 0; r < n; r++)
                SEND(r, (r + 1) % n, chunk);
            for (uint32_t r = 0; r < n; r++)
                got[r] = next[r];
        }
    }
#undef SEND
out:
    nf__free(seen);
    nf__free(got);
    nf__free(next);
    if (rc) nf__sim_script_truncate(s, mark_msg, mark_edge);
    if (!rc) *count = n_msg;
    return rc;
}

/* ---- hardware collectives ------------------------------------------------------------------- */

int nf_sim_post_hw_collective(nf_sim *s, nf_sim_hw_coll c, const uint32_t *ranks, uint32_t n,
                              uint64_t bytes, unsigned fanin, uint32_t group, uint32_t *first,
                              uint32_t *count) {
    const nf_sim_config *cf = nf__sim_config(s);
    uint32_t E = nf_sim_endpoints(s), recv;
    if (n < 2 || fanin == 0 || (unsigned)c > NF_SIM_HW_BARRIER ||
        bytes > (uint64_t)cf->flit_bytes * cf->pkt_flits)
        return NF_EINVAL;
    if (c != NF_SIM_HW_REDUCE && nf__sim_group_receivers(s, group, ranks[0], &recv))
        return NF_EINVAL;
    size_t mark_msg, mark_edge;
    nf__sim_script_mark(s, &mark_msg, &mark_edge);
    uint8_t *seen = nf__calloc(E, 1);
    uint32_t *msg = nf__malloc((size_t)n * sizeof *msg);
    int rc = seen && msg ? NF_OK : NF_ENOMEM;
    for (uint32_t i = 0; i < n && !rc; i++) {
        if (ranks[i] >= E || seen[ranks[i]])
            rc = NF_EINVAL;
        else
            seen[ranks[i]] = 1;
    }
    uint32_t n_msg = 0, id;
    bool gather = c != NF_SIM_HW_BCAST;
    uint64_t len = c == NF_SIM_HW_BARRIER ? 0 : bytes;
    for (uint32_t r = 1; gather && r < n && !rc; r++) { /* up the tree, NIC to NIC */
        nf_sim_msg m = {.src = ranks[r],
                        .dst = ranks[(r - 1) / fanin],
                        .bytes = len,
                        .kind = NF_SIM_SHORT,
                        .by_nic = true};
        if ((rc = nf_sim_post(s, &m, &msg[r]))) break;
        if (!n_msg++) *first = msg[r];
    }
    for (uint32_t r = 1; gather && r < n && !rc; r++)
        if ((r - 1) / fanin) rc = nf_sim_after(s, msg[r], msg[(r - 1) / fanin]);
    if (!rc && c != NF_SIM_HW_REDUCE) { /* the root's multicast, after its children */
        nf_sim_msg m = {.src = ranks[0],
                        .bytes = len,
                        .kind = NF_SIM_MCAST,
                        .group = group,
                        .by_nic = true,
                        .rail =
                            NF_SIM_RAIL_DYNAMIC}; /* (either rail, when the trees are on both) */
        if (!(rc = nf_sim_post(s, &m, &id))) {
            if (!n_msg++) *first = id;
            for (uint32_t r = 1; gather && r <= fanin && r < n && !rc; r++)
                rc = nf_sim_after(s, msg[r], id);
        }
    }
    nf__free(seen);
    nf__free(msg);
    if (rc) nf__sim_script_truncate(s, mark_msg, mark_edge);
    if (!rc) *count = n_msg;
    return rc;
}

/* The NIC's ALU on two values of one type T (U: the unsigned integer of its width): floats
 * compared and added as C does (a NaN operand loses under MAX and MIN), bitwise ops on their bit
 * patterns; integer sums wrapping, as the hardware's adder. */
#define ALU(name, T, U, is_float)                                                                  \
    static T name(T a, T b, nf_sim_op op) {                                                        \
        U x, y, z;                                                                                 \
        memcpy(&x, &a, sizeof x);                                                                  \
        memcpy(&y, &b, sizeof y);                                                                  \
        switch (op) {                                                                              \
        case NF_SIM_MAX: return a > b || b != b ? a : b;                                           \
        case NF_SIM_MIN: return a < b || b != b ? a : b;                                           \
        case NF_SIM_AND: z = x & y; break;                                                         \
        case NF_SIM_OR: z = x | y; break;                                                          \
        case NF_SIM_XOR: z = x ^ y; break;                                                         \
        default:                                                                                   \
            if (is_float) return a + b;                                                            \
            z = x + y;                                                                             \
        }                                                                                          \
        memcpy(&a, &z, sizeof a);                                                                  \
        return a;                                                                                  \
    }
ALU(op_f64, double, uint64_t, 1)
ALU(op_f32, float, uint32_t, 1)
ALU(op_i64, int64_t, uint64_t, 0)
ALU(op_i32, int32_t, uint32_t, 0)
#undef ALU

/* Rank r's result: its own value, then each child's result in child order (children
 * fanin * r + 1 .. fanin * r + fanin); by recursion, depth log_fanin n (n for the chain of fan-in
 * 1, which is walked as a loop from its far end so that no recursion is n deep). */
#define TREE(name, T, opf)                                                                         \
    static T name(const T *v, uint32_t n, unsigned fanin, nf_sim_op op, uint32_t r) {              \
        if (fanin == 1) {                                                                          \
            T acc = v[n - 1];                                                                      \
            for (uint32_t k = n - 1; k-- > r;)                                                     \
                acc = opf(v[k], acc, op);                                                          \
            return acc;                                                                            \
        }                                                                                          \
        T acc = v[r];                                                                              \
        for (uint64_t c = (uint64_t)fanin * r + 1; c <= (uint64_t)fanin * r + fanin && c < n; c++) \
            acc = opf(acc, name(v, n, fanin, op, (uint32_t)c), op);                                \
        return acc;                                                                                \
    }
TREE(tree_f64, double, op_f64)
TREE(tree_f32, float, op_f32)
TREE(tree_i64, int64_t, op_i64)
TREE(tree_i32, int32_t, op_i32)

double nf_sim_tree_reduce_f64(const double *v, uint32_t n, unsigned fanin, nf_sim_op op) {
    return n && fanin ? tree_f64(v, n, fanin, op, 0) : 0.0;
}

int64_t nf_sim_tree_reduce_i64(const int64_t *v, uint32_t n, unsigned fanin, nf_sim_op op) {
    return n && fanin ? tree_i64(v, n, fanin, op, 0) : 0;
}

float nf_sim_tree_reduce_f32(const float *v, uint32_t n, unsigned fanin, nf_sim_op op) {
    return n && fanin ? tree_f32(v, n, fanin, op, 0) : 0.0f;
}

int32_t nf_sim_tree_reduce_i32(const int32_t *v, uint32_t n, unsigned fanin, nf_sim_op op) {
    return n && fanin ? tree_i32(v, n, fanin, op, 0) : 0;
}
