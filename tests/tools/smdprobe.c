/* SPDX-License-Identifier: MIT */
/* A test and benchmark tool that speaks to `netfab smd` the way a hostile or careless client
 * would: one hand-made request and every datagram that comes back (req), or a flood of joins
 * for new groups for a while (flood). Built on the library's public codec and client socket.
 *   smdprobe req SERVER [--method set|delete|get|gettable] [--attr member|state|dump]
 *                [--tid N] [--mgid GID] [--port-guid G] [--count N] [--join-state J]
 *                [--key K] [--wait MS]
 *                [--next OPTIONS ...]
 *     prints one line per datagram received within MS (default 300; a request other than
 *     GetTable stops at its first answer): status, method, RMPP segment and flags; then
 *     "replies N bytes B". Exit 0 when something came back. Each
 *     --next starts another request from the same socket (same source address and port).
 *   smdprobe flood SERVER --seconds S --port-guid G --count N [--key K] [--first K]
 *                [--guids FILE]
 *     joins of new MGIDs (ff12:a01b::K, K = first, first+1, ...), 64 in flight; prints
 *     "sent N answered N ok N no_resources N denied N other N". With --guids (one port GUID
 *     a line), each new group is joined by the first N ports of the file, so it completes
 *     (what a client that may act for any port can do).
 *   smdprobe fuzz SERVER --count N [--seed S] [--key K]
 *     N datagrams made from valid requests (joins, leaves, state queries, GetTable, dumps, RMPP
 *     ACKs/STOPs for the GetTables in flight) with random bytes changed, random lengths and
 *     random headers, sent as fast as answers come back; then a state query must be answered.
 *     Prints "sent N answers N" and exits 0 when the manager still answers. */
#define _GNU_SOURCE
#include "netfab/smd.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static const char *opt(int argc, char **argv, const char *name, const char *def) {
    for (int i = 0; i + 1 < argc; i++)
        if (strcmp(argv[i], name) == 0) return argv[i + 1];
    return def;
}

static uint64_t num(int argc, char **argv, const char *name, uint64_t def) {
    const char *s = opt(argc, argv, name, NULL);
    return s ? strtoull(s, NULL, 0) : def;
}

static int req(nf_smc *c, int argc, char **argv) {
    const char *method = opt(argc, argv, "--method", "set"),
               *attr = opt(argc, argv, "--attr", "member");
    uint8_t m = strcmp(method, "delete") == 0     ? NF_MAD_DELETE
                : strcmp(method, "get") == 0      ? NF_MAD_GET
                : strcmp(method, "gettable") == 0 ? NF_MAD_GETTABLE
                                                  : NF_MAD_SET;
    uint16_t a = strcmp(attr, "state") == 0  ? NF_SA_ATTR_MCGSTATE
                 : strcmp(attr, "dump") == 0 ? NF_SA_ATTR_DUMP
                                             : NF_SA_ATTR_MCMEMBER;
    nf_mad q;
    nf_smc_request(&q, m, a, num(argc, argv, "--tid", nf_smc_next_tid(c)));
    q.sm_key = num(argc, argv, "--key", 0);
    nf_gid mgid = {{0}};
    const char *mg = opt(argc, argv, "--mgid", "ff12:401b::1");
    if (nf_gid_parse(mg, &mgid)) {
        fprintf(stderr, "smdprobe: bad MGID %s\n", mg);
        return 2;
    }
    if (a == NF_SA_ATTR_MCMEMBER) {
        nf_mcmember_rec r = {
            .mgid = mgid,
            .port_gid = nf_gid_make(NF_GID_DEFAULT_PREFIX, num(argc, argv, "--port-guid", 0)),
            .join_state = (uint8_t)num(argc, argv, "--join-state", NF_JOIN_FULL),
            .member_count = (uint32_t)num(argc, argv, "--count", 2)};
        nf_mcmember_encode(&r, q.data);
    } else if (a == NF_SA_ATTR_MCGSTATE) {
        nf_mcgstate_rec r = {.mgid = mgid};
        nf_mcgstate_encode(&r, q.data);
    }
    if (nf_smc_send(c, &q)) return 1;
    int wait = (int)num(argc, argv, "--wait", 300);
    double until = now_s() + wait / 1000.0;
    unsigned n = 0;
    for (;;) {
        double left = until - now_s();
        if (left <= 0) break;
        nf_mad r;
        int rc = nf_smc_recv(c, (int)(left * 1000) + 1, &r);
        if (rc == NF_ETIMEDOUT) break;
        if (rc) continue;
        n++;
        if (m != NF_MAD_GETTABLE) until = 0; /* one answer is all a non-table request gets */
        printf("status 0x%04x method 0x%02x tid %" PRIu64 " seg %u flags %u data2 %u\n", r.status,
               r.method, r.tid, r.rmpp_data1, r.rmpp_flags, r.rmpp_data2);
    }
    printf("replies %u bytes %u\n", n, n * NF_MAD_SIZE);
    return n ? 0 : 1;
}

static int flood(nf_smc *c, int argc, char **argv) {
    double seconds = strtod(opt(argc, argv, "--seconds", "1"), NULL);
    uint64_t guid = num(argc, argv, "--port-guid", 0), key = num(argc, argv, "--key", 0);
    uint32_t count = (uint32_t)num(argc, argv, "--count", 2);
    uint64_t k = num(argc, argv, "--first", 1);
    uint64_t *guids = NULL;
    size_t n_guids = 0, next_member = 0;
    const char *gf = opt(argc, argv, "--guids", NULL);
    if (gf) {
        FILE *fp = fopen(gf, "r");
        char line[128];
        while (fp && fgets(line, sizeof line, fp)) {
            uint64_t *t = realloc(guids, (n_guids + 1) * sizeof *guids);
            if (!t) break;
            guids = t;
            guids[n_guids++] = strtoull(line, NULL, 0);
        }
        if (fp) fclose(fp);
        if (n_guids < count) {
            fprintf(stderr, "smdprobe: %s has %zu GUIDs, fewer than --count %u\n", gf, n_guids,
                    count);
            free(guids);
            return 2;
        }
    }
    uint64_t sent = 0, answered = 0, ok = 0, nores = 0, denied = 0, other = 0;
    unsigned inflight = 0;
    double end = now_s() + seconds;
    while (now_s() < end || inflight) {
        while (inflight < 64 && now_s() < end) {
            nf_mad q;
            nf_smc_request(&q, NF_MAD_SET, NF_SA_ATTR_MCMEMBER, nf_smc_next_tid(c));
            q.sm_key = key;
            uint64_t who = guid;
            if (guids) { /* member next_member of group k */
                who = guids[next_member];
                if (++next_member == count) next_member = 0;
            }
            nf_mcmember_rec r = {
                .mgid = nf_gid_make(0xff12a01b00000000ULL, guids && next_member ? k : k++),
                .port_gid = nf_gid_make(NF_GID_DEFAULT_PREFIX, who),
                .join_state = NF_JOIN_FULL,
                .member_count = count};
            nf_mcmember_encode(&r, q.data);
            nf_smc_send(c, &q);
            sent++;
            inflight++;
        }
        nf_mad r;
        int rc = nf_smc_recv(c, 200, &r);
        if (rc == NF_ETIMEDOUT) { /* lost: count it out */
            inflight = 0;
            continue;
        }
        if (rc) continue;
        answered++;
        if (inflight) inflight--;
        if (r.status == 0)
            ok++;
        else if (r.status == NF_SA_STATUS_NO_RESOURCES)
            nores++;
        else if (r.status == NF_SA_STATUS_DENIED)
            denied++;
        else
            other++;
    }
    printf("sent %" PRIu64 " answered %" PRIu64 " ok %" PRIu64 " no_resources %" PRIu64
           " denied %" PRIu64 " other %" PRIu64 "\n",
           sent, answered, ok, nores, denied, other);
    free(guids);
    return 0;
}

static uint64_t rng_state = 0x9E3779B97F4A7C15ULL;
static uint64_t rnd(void) { /* xorshift64* */
    rng_state ^= rng_state >> 12;
    rng_state ^= rng_state << 25;
    rng_state ^= rng_state >> 27;
    return rng_state * 0x2545F4914F6CDD1DULL;
}

static int fuzz(nf_smc *c, int argc, char **argv) {
    uint64_t count = num(argc, argv, "--count", 10000), key = num(argc, argv, "--key", 0);
    rng_state ^= num(argc, argv, "--seed", 1) * 0x9E3779B97F4A7C15ULL;
    static const uint8_t methods[] = {NF_MAD_GET, NF_MAD_SET, NF_MAD_DELETE, NF_MAD_GETTABLE,
                                      NF_MAD_GETTABLE_RESP, 0x13, 0x81};
    static const uint16_t attrs[] = {NF_SA_ATTR_MCMEMBER, NF_SA_ATTR_MCGSTATE, NF_SA_ATTR_DUMP,
                                     0x0011};
    uint64_t answers = 0, tids[8] = {0};
    for (uint64_t i = 0; i < count; i++) {
        nf_mad q;
        uint8_t method = methods[rnd() % sizeof methods];
        uint64_t tid = rnd() % 4 ? nf_smc_next_tid(c) : tids[rnd() % 8];
        nf_smc_request(&q, method, attrs[rnd() % 4], tid);
        q.sm_key = rnd() % 2 ? key : rnd();
        if (method == NF_MAD_GETTABLE) tids[rnd() % 8] = tid;
        if (method == NF_MAD_GETTABLE_RESP) { /* an RMPP packet about some transfer */
            q.attr_id = NF_SA_ATTR_MCGSTATE;
            q.rmpp_version = (uint8_t)(rnd() % 3);
            q.rmpp_type = (uint8_t)(rnd() % 5);
            q.rmpp_flags = (uint8_t)(rnd() % 8);
            q.rmpp_data1 = (uint32_t)(rnd() % 4 ? rnd() % 8 : rnd());
            q.rmpp_data2 = (uint32_t)(rnd() % 4 ? rnd() % 80 : rnd());
        }
        nf_mcmember_rec r = {.mgid = nf_gid_make(0xff12401b00000000ULL, rnd() % 16),
                             .port_gid = nf_gid_make(NF_GID_DEFAULT_PREFIX, rnd()),
                             .join_state = (uint8_t)(rnd() % 16),
                             .member_count = (uint32_t)(rnd() % 5)};
        nf_mcmember_encode(&r, q.data);
        uint8_t b[NF_MAD_SIZE + 64];
        nf_mad_encode(&q, b);
        for (uint64_t k = rnd() % 6; k > 0; k--) /* a few random bytes */
            b[rnd() % NF_MAD_SIZE] = (uint8_t)rnd();
        size_t len = rnd() % 8 ? NF_MAD_SIZE : (size_t)(rnd() % sizeof b);
        send(nf_smc_fd(c), b, len, 0);
        for (;;) { /* take what came back, without waiting long */
            nf_mad a;
            int rc = nf_smc_recv(c, i % 256 == 255 ? 20 : 0, &a);
            if (rc == NF_ETIMEDOUT) break;
            answers++;
        }
    }
    uint16_t st = 0xFFFF;
    nf_mcgstate_rec g;
    nf_gid mg = nf_gid_make(0xff12401b00000000ULL, 1);
    nf_smc_opts o = {.timeout_ms = 500, .retries = 10};
    int rc = nf_smc_state(c, &o, &mg, &st, &g);
    printf("sent %" PRIu64 " answers %" PRIu64 " then state query %s (status 0x%04x)\n", count,
           answers, rc ? "unanswered" : "answered", st);
    return rc ? 1 : 0;
}

int main(int argc, char **argv) {
    if (argc < 3) {
        fprintf(stderr, "usage: smdprobe req|flood|fuzz SERVER [options]\n");
        return 2;
    }
    nf_smc *c;
    nf_diag d;
    if (nf_smc_open(argv[2], &c, &d)) {
        fprintf(stderr, "smdprobe: %s\n", d.msg);
        return 2;
    }
    int rc = 0;
    if (strcmp(argv[1], "flood") == 0) {
        rc = flood(c, argc - 3, argv + 3);
    } else if (strcmp(argv[1], "fuzz") == 0) {
        rc = fuzz(c, argc - 3, argv + 3);
    } else { /* the requests between --next separators, in order */
        int first = 3;
        for (int i = 3; i <= argc; i++)
            if (i == argc || strcmp(argv[i], "--next") == 0) {
                rc |= req(c, i - first, argv + first);
                first = i + 1;
            }
    }
    nf_smc_close(c);
    return rc;
}
