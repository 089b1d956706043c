/* Software collectives as scripted messages: binomial broadcast, recursive-doubling and ring
 * allreduce, a recursive-doubling barrier. Each message depends on the message that brought
 * its data to its sender; the NIC's queue keeps a rank's own sends in order. */
#include "sim/sim_internal.h"

#include "util/mem.h"

#include <stdlib.h>

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
    if (n < 2 || (unsigned)c > NF_SIM_BARRIER) return NF_EINVAL;
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
    if (!rc) *count = n_msg;
    return rc;
}
