/* SPDX-License-Identifier: MIT */
/* `netfab exp queues`: the Sunway paper's asynchronous queue messages on the Sunway prototype
 * (gft, two rails). An incast: n senders spread over the fabric each post 4 one-packet queue
 * messages (256 bytes) at once to the last endpoint, whose receive-queue ring holds 4 to 256
 * entries and whose host takes an entry off it every 40 cycles (the defaults of nf_sim_config).
 * For each kind: the share of the messages delivered (written into the ring), the unreliable
 * ones dropped at a full ring, the reliable ones' refusals (each a NAK and a sending again),
 * and the latency from release to the ring entry, mean and 99th percentile, of those
 * delivered. */
#include "cmd.h"
#include "exp.h"
#include "netfab/gen.h"
#include "netfab/hops.h"
#include "netfab/sim.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

enum { MSGS_PER_SENDER = 4 };

static int cmp_u64(const void *a, const void *b) {
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

/* One row: n senders (endpoints i (E - 1) / n) to endpoint E - 1 with a ring of `entries`,
 * every message of kind k; lat has room for every message. */
static int incast(nf_sim *s, json_t *rows, uint32_t n, unsigned entries, nf_sim_msg_kind k,
                  uint64_t *lat) {
    uint32_t E = nf_sim_endpoints(s), dst = E - 1, total = n * MSGS_PER_SENDER;
    nf_sim_script_clear(s);
    int rc = nf_sim_set_queue_ring(s, dst, entries);
    for (uint32_t i = 0; i < n && !rc; i++)
        for (uint32_t j = 0; j < MSGS_PER_SENDER && !rc; j++) {
            nf_sim_msg m = {.src = (uint32_t)((uint64_t)i * (E - 1) / n),
                            .dst = dst,
                            .bytes = 256,
                            .kind = k,
                            .rail = NF_SIM_RAIL_DYNAMIC};
            uint32_t id;
            rc = nf_sim_post(s, &m, &id);
        }
    nf_sim_script_result r;
    if (!rc) rc = nf_sim_run_script(s, UINT64_MAX, &r);
    if (rc) return nf_app_report(rc, NULL);
    if (r.deadlock || r.unfinished) {
        fprintf(stderr, "netfab exp: queues: %u of %u messages ended%s\n", r.done + r.dropped,
                total, r.deadlock ? " (deadlock)" : "");
        return NF_EXIT_FAIL;
    }
    uint32_t got = 0;
    double sum = 0;
    for (uint32_t i = 0; i < total; i++) {
        nf_sim_msg_times t;
        nf_sim_msg_times_of(s, i, &t);
        if (t.done == UINT64_MAX) continue;
        lat[got++] = t.done - t.released;
        sum += (double)(t.done - t.released);
    }
    /* every message written once or dropped: the library's counts and the times agree */
    if (got != r.done || r.ring_writes != got || got + r.dropped != total ||
        (k == NF_SIM_QUEUE_RELIABLE && got != total)) {
        fprintf(stderr, "netfab exp: queues: %u delivered, %llu written, %u dropped of %u\n", got,
                (unsigned long long)r.ring_writes, r.dropped, total);
        return NF_EXIT_FAIL;
    }
    qsort(lat, got, sizeof *lat, cmp_u64);
    size_t p = (size_t)ceil(0.99 * got);
    const char *kind = k == NF_SIM_QUEUE_RELIABLE ? "reliable" : "unreliable";
    char label[64];
    snprintf(label, sizeof label, "%s, %u senders", kind, n);
    json_array_append_new(
        rows,
        json_pack("{s:s, s:s, s:I, s:I, s:I, s:I, s:f, s:I, s:I, s:f, s:I, s:I}", "case", label,
                  "kind", kind, "senders", (json_int_t)n, "ring_entries", (json_int_t)entries,
                  "messages", (json_int_t)total, "delivered", (json_int_t)got, "delivered_frac",
                  (double)got / total, "dropped", (json_int_t)r.dropped, "retries",
                  (json_int_t)r.retries, "lat_mean", got ? sum / got : 0.0, "lat_p99",
                  (json_int_t)(got ? lat[p ? p - 1 : 0] : 0), "cycles", (json_int_t)r.cycles));
    return NF_EXIT_OK;
}

int exp_queues(const exp_opts *o, json_t *rows) {
    /* as exp dual-rail; rings and host at the defaults but for the ring's size */
    nf_fabric *f;
    nf_hops *h;
    nf_sim *s;
    int rc = exp_sunway_sim(o, &f, &h, &s);
    if (rc) return rc;
    static const uint32_t senders_full[] = {16, 32, 64}, senders_quick[] = {16, 64};
    static const unsigned entries[] = {4, 16, 64, 256};
    const uint32_t *senders = o->quick ? senders_quick : senders_full;
    size_t ns = o->quick ? 2 : 3, ne = sizeof entries / sizeof entries[0];
    uint64_t *lat = malloc(64 * MSGS_PER_SENDER * sizeof *lat);
    if (!lat) rc = nf_app_report(NF_ENOMEM, NULL);
    for (size_t a = 0; a < ns && rc == NF_EXIT_OK; a++)
        for (size_t b = 0; b < ne && rc == NF_EXIT_OK; b++)
            for (int k = 0; k < 2 && rc == NF_EXIT_OK; k++) {
                exp_progress((double)((a * ne + b) * 2 + (size_t)k) / (double)(ns * ne * 2),
                             "queues: %u senders, ring of %u", senders[a], entries[b]);
                rc = incast(s, rows, senders[a], entries[b],
                            k ? NF_SIM_QUEUE_RELIABLE : NF_SIM_QUEUE_UNRELIABLE, lat);
            }
    free(lat);
    nf_sim_free(s);
    nf_hops_free(h);
    nf_fabric_free(f);
    return rc;
}
