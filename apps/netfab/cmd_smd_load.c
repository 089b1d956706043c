/* SPDX-License-Identifier: MIT */
/* `netfab smd-load`: plays every rank of a job against a running group manager. Every member
 * port of every group sends its join (SubnAdmSet MCMemberRecord with MemberCount), all at once in
 * a shuffled order, with up to --window requests in flight; rank 0 of each group (its first
 * member) polls MCGStateRecord after its own join until the group is Ready (usable) or destroyed.
 * Requests are lost with probability --loss before they leave (the client retransmits with the
 * same transaction id), and a fraction --crash of the endpoints never sends anything. Reports
 * joins per second, the time until every group that can be Ready is, the time each group waited
 * from its first join until its rank 0 saw it Ready (mean and largest) beside the server's side
 * (until its last join was answered: the server routes a group in the join that completes it,
 * before answering it) and the lag between the two (the polling's cost), and the fraction of the
 * groups' time they were not usable: over each group's life from its first join to the end of
 * the job, taken as the moment the last group was resolved plus --hold seconds of work. */
#define _GNU_SOURCE
#include "cmd.h"
#include "opts.h"
#include "progress.h"
#include "netfab/gen.h"
#include "netfab/groups.h"
#include "netfab/smd.h"
#include "smd/keys.h"
#include "util/u64map.h"

#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* xorshift64*: the loss and crash draws, from the seed */
static uint64_t rng;
static double rnd01(void) {
    rng ^= rng >> 12;
    rng ^= rng << 25;
    rng ^= rng >> 27;
    return (double)((rng * 0x2545F4914F6CDD1DULL) >> 11) / 9007199254740992.0;
}

enum { K_JOIN = 0, K_POLL = 1 };

typedef struct pend {
    uint64_t tid;
    uint32_t group, member; /* member index for a join */
    uint8_t kind;
    uint8_t live;
    uint32_t attempts;
    double due; /* retransmission time */
} pend;

typedef struct ev { /* a timer: retransmit pending p, or start a poll for group g */
    double at;
    uint32_t id;
    uint8_t is_poll;
} ev;

typedef struct gstate {
    double first_sent, ready_at;
    /* the server's side: its members' joins not yet answered OK, and when the last was (the
     * server routes a group in the join that completes it, before answering that join) */
    uint32_t joins_left;
    double server_ready_at;
    uint8_t done; /* 1 ready, 2 destroyed/gone */
    uint8_t rank0_dead;
} gstate;

#define IO_BATCH 64 /* datagrams per sendmmsg or recvmmsg */

typedef struct loader {
    nf_smc *c;
    uint8_t tx[IO_BATCH][NF_MAD_SIZE]; /* requests queued, sent by send_queued */
    unsigned n_tx;
    const nf_fabric *f;
    const nf_groups *g;
    const nf__smd_keys *keys; /* each port's key, or NULL: the manager has no keys */
    uint64_t nonce;
    double loss;
    uint32_t window, inflight;
    double retry_s, poll_s;
    pend *p;
    size_t n_p, cap_p;
    uint32_t *free_p;
    size_t n_free;
    nf__u64map by_tid;
    ev *heap;
    size_t n_heap, cap_heap;
    gstate *gs;
    uint64_t joins, retransmits, lost, errors;
    uint32_t resolved; /* groups whose outcome is known */
    double t0, last_join;
} loader;

static void heap_push(loader *L, ev e) {
    if (L->n_heap == L->cap_heap) {
        L->cap_heap = L->cap_heap ? 2 * L->cap_heap : 1024;
        L->heap = realloc(L->heap, L->cap_heap * sizeof *L->heap);
        if (!L->heap) abort(); /* the CLI's own bookkeeping: no way on without it */
    }
    size_t i = L->n_heap++;
    while (i && L->heap[(i - 1) / 2].at > e.at) {
        L->heap[i] = L->heap[(i - 1) / 2];
        i = (i - 1) / 2;
    }
    L->heap[i] = e;
}

static ev heap_pop(loader *L) {
    ev top = L->heap[0], last = L->heap[--L->n_heap];
    size_t i = 0;
    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= L->n_heap) break;
        if (c + 1 < L->n_heap && L->heap[c + 1].at < L->heap[c].at) c++;
        if (L->heap[c].at >= last.at) break;
        L->heap[i] = L->heap[c];
        i = c;
    }
    if (L->n_heap) L->heap[i] = last;
    return top;
}

static nf_gid group_mgid(const loader *L, uint32_t k) {
    return nf_gid_make(0xff12401b00000000ULL | (L->nonce & 0xFFFFFFFFu), k);
}

static uint64_t member_guid(const loader *L, uint32_t k, uint32_t i) {
    nf_node ca = L->g->member[L->g->off[k] + i];
    return L->f->port_guid[nf_port_index(L->f, ca, 1)];
}

/* Sends the queued requests (sendmmsg). One that cannot go (the server's queue full, nobody
 * listening yet) is a lost request: it is retransmitted. */
static void send_queued(loader *L) {
    struct mmsghdr msg[IO_BATCH];
    struct iovec iov[IO_BATCH];
    for (unsigned k = 0; k < L->n_tx; k++) {
        iov[k] = (struct iovec){.iov_base = L->tx[k], .iov_len = NF_MAD_SIZE};
        msg[k] = (struct mmsghdr){.msg_hdr = {.msg_iov = &iov[k], .msg_iovlen = 1}};
    }
    for (unsigned i = 0; i < L->n_tx;) {
        int n = sendmmsg(nf_smc_fd(L->c), msg + i, L->n_tx - i, 0);
        if (n < 0 && errno == EINTR) continue;
        i += n > 0 ? (unsigned)n : 1;
    }
    L->n_tx = 0;
}

/* Sends (or, with probability loss, pretends to send) pending request id: queued, sent when
 * IO_BATCH are queued or by the caller's send_queued. */
static void transmit(loader *L, uint32_t id, double now) {
    pend *p = &L->p[id];
    nf_mad q;
    if (p->kind == K_JOIN) {
        nf_smc_request(&q, NF_MAD_SET, NF_SA_ATTR_MCMEMBER, p->tid);
        nf_mcmember_rec r = {
            .mgid = group_mgid(L, p->group),
            .port_gid = nf_gid_make(NF_GID_DEFAULT_PREFIX, member_guid(L, p->group, p->member)),
            .join_state = NF_JOIN_FULL,
            .member_count = L->g->off[p->group + 1] - L->g->off[p->group]};
        nf_mcmember_encode(&r, q.data);
        if (L->keys) nf__smd_keys_port(L->keys, nf_gid_guid(&r.port_gid), &q.sm_key);
    } else {
        nf_smc_request(&q, NF_MAD_GET, NF_SA_ATTR_MCGSTATE, p->tid);
        nf_mcgstate_rec r = {.mgid = group_mgid(L, p->group)};
        nf_mcgstate_encode(&r, q.data);
    }
    if (p->attempts++) L->retransmits++;
    if (L->loss > 0 && rnd01() < L->loss)
        L->lost++;
    else {
        nf_mad_encode(&q, L->tx[L->n_tx++]);
        if (L->n_tx == IO_BATCH) send_queued(L);
    }
    p->due = now + L->retry_s;
    heap_push(L, (ev){.at = p->due, .id = id});
}

static uint32_t new_pend(loader *L, uint8_t kind, uint32_t group, uint32_t member, double now) {
    uint32_t id;
    if (L->n_free) {
        id = L->free_p[--L->n_free];
    } else {
        if (L->n_p == L->cap_p) {
            L->cap_p = L->cap_p ? 2 * L->cap_p : 1024;
            L->p = realloc(L->p, L->cap_p * sizeof *L->p);
            L->free_p = realloc(L->free_p, L->cap_p * sizeof *L->free_p);
            if (!L->p || !L->free_p) abort();
        }
        id = (uint32_t)L->n_p++;
    }
    pend *p = &L->p[id];
    *p = (pend){
        .tid = nf_smc_next_tid(L->c), .group = group, .member = member, .kind = kind, .live = 1};
    if (nf__u64map_put(&L->by_tid, p->tid, id)) abort();
    L->inflight++;
    transmit(L, id, now);
    return id;
}

static void end_pend(loader *L, uint32_t id) {
    pend *p = &L->p[id];
    nf__u64map_del(&L->by_tid, p->tid);
    p->live = 0;
    L->free_p[L->n_free++] = id;
    L->inflight--;
}

/* A group's outcome: 1 Ready, 2 destroyed or gone, 3 never observed (rank 0 crashed). */
static void resolve(loader *L, gstate *g, uint8_t how) {
    g->done = how;
    L->resolved++;
}

static void answered(loader *L, const nf_mad *a, double now) {
    uint32_t id;
    if (!nf__u64map_get(&L->by_tid, a->tid, &id)) return; /* a late duplicate */
    pend *p = &L->p[id];
    gstate *g = &L->gs[p->group];
    uint32_t k = p->group;
    if (p->kind == K_JOIN) {
        if (a->status) L->errors++;
        if (a->status == NF_MAD_STATUS_OK && g->joins_left && --g->joins_left == 0)
            g->server_ready_at = now;
        L->joins++;
        L->last_join = now;
        bool rank0 = p->member == 0;
        end_pend(L, id);
        if (a->status == NF_SA_STATUS_DENIED && !g->done) resolve(L, g, 2);
        if (rank0 && !g->done) heap_push(L, (ev){.at = now, .id = k, .is_poll = 1});
        return;
    }
    nf_mcgstate_rec r;
    nf_mcgstate_decode(a->data, &r);
    end_pend(L, id);
    if (g->done) return;
    if (a->status == NF_MAD_STATUS_OK && r.state == NF_MCG_READY) {
        g->ready_at = now;
        resolve(L, g, 1);
    } else if (a->status == NF_SA_STATUS_NO_RECORDS || r.state == NF_MCG_DESTROYING ||
               r.state == NF_MCG_RECEIVING_LEAVE) {
        resolve(L, g, 2);
    } else {
        heap_push(L, (ev){.at = now + L->poll_s, .id = k, .is_poll = 1});
    }
}

/* Waits up to timeout_ms for answers, then reads every answer waiting (recvmmsg) and takes it.
 * NF_EIO on a socket error. */
static int take_answers(loader *L, int timeout_ms) {
    int fd = nf_smc_fd(L->c);
    struct pollfd p = {.fd = fd, .events = POLLIN};
    int r = poll(&p, 1, timeout_ms);
    if (r < 0 && errno != EINTR) return NF_EIO;
    if (r <= 0) return NF_OK;
    uint8_t b[IO_BATCH][NF_MAD_SIZE + 1];
    struct mmsghdr msg[IO_BATCH];
    struct iovec iov[IO_BATCH];
    for (;;) {
        for (unsigned k = 0; k < IO_BATCH; k++) {
            iov[k] = (struct iovec){.iov_base = b[k], .iov_len = sizeof b[k]};
            msg[k] = (struct mmsghdr){.msg_hdr = {.msg_iov = &iov[k], .msg_iovlen = 1}};
        }
        int got = recvmmsg(fd, msg, IO_BATCH, MSG_DONTWAIT, NULL);
        if (got < 0 && errno == EINTR) continue;
        if (got < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == ECONNREFUSED))
            return NF_OK; /* ECONNREFUSED: a request found nobody listening, as if lost */
        if (got < 0) return NF_EIO;
        double now = now_s();
        for (int k = 0; k < got; k++) {
            nf_mad a;
            if (nf_mad_decode(b[k], msg[k].msg_len, &a) == NF_OK && (a.method & 0x80))
                answered(L, &a, now);
        }
        if (got < IO_BATCH) return NF_OK;
    }
}

typedef struct job {
    uint32_t group, member;
} job;

int nf_cmd_smd_load(int argc, char **argv) {
    const char *server = NULL, *topo = NULL, *pattern = NULL, *keys_file = NULL;
    nf_workload_opts wo = {.procs_per_node = 1, .seed = 1};
    double loss = 0, crash = 0, retry_ms = 100, poll_ms = 10, hold = 1, deadline = 300;
    unsigned window = 512;
    bool json = false;
    static const char *const mappings[] = {"aware", "random", NULL};
    const nf_opt rows[] = {
        {.name = "server",
         .arg = "ADDR:PORT",
         .kind = NF_OPT_STR,
         NF_OPT_TO(server),
         .help = "the group manager (netfab smd --listen)"},
        {.name = "topo",
         .arg = "SPEC",
         .kind = NF_OPT_STR,
         NF_OPT_TO(topo),
         .help = "the manager's fabric (its --topo)"},
        {.name = "groups",
         .arg = "PATTERN",
         .kind = NF_OPT_STR,
         NF_OPT_TO(pattern),
         .help = "the job's groups (netfab mcast --help)"},
        {.name = "procs-per-node",
         .arg = "N",
         .kind = NF_OPT_UINT,
         NF_OPT_TO(wo.procs_per_node),
         .lo = 1,
         .hi = 1024,
         .help = "ranks per endpoint (default 1)"},
        {.name = "mapping",
         .kind = NF_OPT_CHOICE,
         NF_OPT_TO(wo.mapping),
         .choices = mappings,
         .help = "ranks laid on endpoints in order (aware, the default) or shuffled (random)"},
        {.name = "seed",
         .arg = "S",
         .kind = NF_OPT_SEED,
         NF_OPT_TO(wo.seed),
         .help = "seed of the groups, the mapping and the loss and crash draws (default 1)"},
        {.name = "loss",
         .arg = "P",
         .kind = NF_OPT_REAL,
         NF_OPT_TO(loss),
         .rlo = 0,
         .rhi = 1,
         .open = NF_OPT_OPEN_HI,
         .help = "drop each request with probability P (0 to below 1) before it is sent"},
        {.name = "crash",
         .arg = "F",
         .kind = NF_OPT_REAL,
         NF_OPT_TO(crash),
         .rlo = 0,
         .rhi = 1,
         .help = "a fraction F (0..1) of the endpoints never sends anything"},
        {.name = "window",
         .arg = "N",
         .kind = NF_OPT_UINT,
         NF_OPT_TO(window),
         .lo = 1,
         .hi = 1 << 20,
         .help = "requests in flight at most (default 512)"},
        {.name = "retry",
         .arg = "MS",
         .kind = NF_OPT_REAL,
         NF_OPT_TO(retry_ms),
         .rlo = 1,
         .rhi = 1e9,
         .help = "retransmission timeout (default 100)"},
        {.name = "poll",
         .arg = "MS",
         .kind = NF_OPT_REAL,
         NF_OPT_TO(poll_ms),
         .rlo = 1,
         .rhi = 1e9,
         .help = "rank 0's polling interval (default 10)"},
        {.name = "hold",
         .arg = "S",
         .kind = NF_OPT_REAL,
         NF_OPT_TO(hold),
         .rlo = 0,
         .rhi = 1e9,
         .help = "the job's work after its groups are ready, for the unusable fraction: "
                 "unusable time / (each group's life until the end of that work) (default 1)"},
        {.name = "deadline",
         .arg = "S",
         .kind = NF_OPT_REAL,
         NF_OPT_TO(deadline),
         .rlo = 0,
         .rhi = 1e9,
         .open = NF_OPT_OPEN_LO,
         .help = "give up after S seconds (default 300)"},
        {.name = "keys",
         .arg = "FILE",
         .kind = NF_OPT_STR,
         NF_OPT_TO(keys_file),
         .help = "the manager's keys file: each join carries its port's key"},
        {.name = "json",
         .kind = NF_OPT_FLAG,
         NF_OPT_TO(json),
         .help = "one JSON object: groups, ready, destroyed, joins, joins_per_s, all_ready_s, "
                 "wait_mean_s, wait_max_s, unusable_fraction, retransmits, lost, errors"},
    };
    const nf_cmd_spec spec = {
        .name = "smd-load",
        .synopsis = "netfab smd-load --server ADDR:PORT --topo SPEC --groups PATTERN\n"
                    "                       [--procs-per-node N] [--mapping aware|random] "
                    "[--seed S]\n"
                    "                       [--loss P] [--crash F] [--window N] [--retry MS]\n"
                    "                       [--poll MS] [--hold S] [--deadline S] [--keys FILE] "
                    "[--json]\n",
        .description =
            "Plays every rank of a job against the group manager at ADDR:PORT (started with the\n"
            "same --topo). Each member port of each group joins once (ranks sharing an endpoint\n"
            "share its port); rank 0 of each group polls its state until Ready.\n",
        .group = {{"options", rows, sizeof rows / sizeof rows[0]}},
        .examples = "  netfab smd-load --server 127.0.0.1:4791 --topo torus:30x20x20,c=2 \\\n"
                    "      --groups grid3d:40x30x20 --loss 0.01\n"};
    int argi, ex = nf_opt_parse(&spec, argc, argv, &argi);
    if (ex) return ex == NF_OPT_HELP ? NF_EXIT_OK : ex;
    const char *need[] = {"--server ADDR:PORT", "--topo SPEC", "--groups PATTERN"};
    bool have[] = {server, topo, pattern};
    if ((ex = nf_app_require("smd-load", 3, need, have))) return ex;
    nf_diag d = {{0}, 0, {0}};
    nf_fabric *f;
    int rc = nf_app_fabric(topo, 0, &f, NULL);
    if (rc) return rc;
    nf__smd_keys keys;
    if (keys_file && (rc = nf__smd_keys_load(keys_file, f, &keys, &d))) {
        nf_fabric_free(f);
        return nf_app_report(rc, &d);
    }
    nf_groups *g;
    if ((rc = nf_groups_build(f, pattern, &wo, &g, &d))) {
        if (keys_file) nf__smd_keys_fini(&keys);
        nf_fabric_free(f);
        return nf_app_report(rc, &d);
    }
    loader L = {.f = f,
                .g = g,
                .keys = keys_file ? &keys : NULL,
                .loss = loss,
                .window = (uint32_t)window,
                .retry_s = retry_ms / 1000,
                .poll_s = poll_ms / 1000};
    nf__u64map_init(&L.by_tid);
    if ((rc = nf_smc_open(server, &L.c, &d))) {
        nf_groups_free(g);
        if (keys_file) nf__smd_keys_fini(&keys);
        nf_fabric_free(f);
        return nf_app_report(rc, &d);
    }
    rng = wo.seed * 0x9E3779B97F4A7C15ULL + 1;
    L.nonce = (uint64_t)getpid() << 16 ^ (uint64_t)time(NULL);
    /* crashed endpoints, then the jobs of the live ones, shuffled */
    uint8_t *dead = calloc(f->n_nodes, 1);
    L.gs = calloc(g->n + 1, sizeof *L.gs);
    size_t total = g->off[g->n], nj = 0;
    job *jobs = malloc((total + 1) * sizeof *jobs);
    if (!dead || !L.gs || !jobs) abort();
    for (nf_node n = f->n_switches; n < f->n_nodes; n++)
        dead[n] = crash > 0 && rnd01() < crash;
    for (uint32_t k = 0; k < g->n; k++) {
        for (uint32_t i = g->off[k]; i < g->off[k + 1]; i++) {
            if (dead[g->member[i]]) {
                if (i == g->off[k]) L.gs[k].rank0_dead = 1;
                continue;
            }
            jobs[nj++] = (job){k, i - g->off[k]};
            L.gs[k].joins_left++;
        }
    }
    for (size_t i = nj; i > 1; i--) {
        size_t j = (size_t)(rnd01() * (double)i);
        if (j >= i) j = i - 1;
        job t = jobs[i - 1];
        jobs[i - 1] = jobs[j];
        jobs[j] = t;
    }
    L.t0 = now_s();
    for (uint32_t k = 0; k < g->n; k++)
        L.gs[k].first_sent = -1;
    size_t next = 0;
    double last_progress = 0;
    nf_progress bar;
    nf_progress_begin(&bar, "netfab smd-load");
    for (uint32_t k = 0; k < g->n; k++) /* a group with rank 0 crashed is never observed */
        if (L.gs[k].rank0_dead) resolve(&L, &L.gs[k], 3);
    bool timed_out = false;
    while (L.resolved < g->n || L.inflight) {
        double now = now_s();
        if (now - L.t0 > deadline) {
            timed_out = true;
            break;
        }
        while (next < nj && L.inflight < L.window) {
            job jb = jobs[next++];
            if (L.gs[jb.group].first_sent < 0) L.gs[jb.group].first_sent = now - L.t0;
            new_pend(&L, K_JOIN, jb.group, jb.member, now);
        }
        /* timers due: retransmissions and polls */
        while (L.n_heap && L.heap[0].at <= now) {
            ev e = heap_pop(&L);
            if (e.is_poll) {
                if (!L.gs[e.id].done && L.inflight < L.window + 64)
                    new_pend(&L, K_POLL, e.id, 0, now);
                else if (!L.gs[e.id].done)
                    heap_push(&L, (ev){.at = now + L.poll_s, .id = e.id, .is_poll = 1});
                continue;
            }
            pend *p = &L.p[e.id];
            if (p->live && p->due == e.at) transmit(&L, e.id, now);
        }
        double wait = L.n_heap ? L.heap[0].at - now_s() : 0.05;
        if (wait < 0) wait = 0;
        if (next < nj && L.inflight < L.window) wait = 0;
        send_queued(&L);
        rc = take_answers(&L, (int)(wait * 1000));
        now = now_s();
        if (rc == NF_EIO) {
            fprintf(stderr, "netfab smd-load: %s: socket error: %s\n", server, strerror(errno));
            break;
        }
        if (bar.tty && now - last_progress > 0.1) { /* acknowledged joins, then groups resolved */
            char what[96];
            snprintf(what, sizeof what, "netfab smd-load: %llu/%zu joins, %u/%u groups",
                     (unsigned long long)L.joins, nj, L.resolved, g->n);
            nf_progress_label(&bar, what);
            nf_progress_set(&bar, ((double)L.joins + L.resolved) / ((double)nj + g->n + 1e-9));
            last_progress = now;
        }
    }
    nf_progress_end(&bar);
    double t_end = now_s() - L.t0 + hold; /* the job's end: resolved, then its work */
    uint32_t ready = 0, destroyed = 0, unobserved = 0, waited = 0, server_n = 0;
    double all_ready = 0, unusable = 0, span = 0, wait_sum = 0, wait_max = 0;
    double server_sum = 0, server_max = 0, lag_sum = 0, lag_max = 0;
    for (uint32_t k = 0; k < g->n; k++) {
        gstate *s = &L.gs[k];
        if (s->done == 1) {
            ready++;
            double r = s->ready_at - L.t0;
            if (r > all_ready) all_ready = r;
            double w = r - s->first_sent;
            wait_sum += w;
            if (w > wait_max) wait_max = w;
            waited++;
            if (s->server_ready_at > 0) { /* every join answered: the server's time, the lag */
                double sw = s->server_ready_at - L.t0 - s->first_sent;
                double lag =
                    s->ready_at > s->server_ready_at ? s->ready_at - s->server_ready_at : 0;
                server_sum += sw, lag_sum += lag, server_n++;
                if (sw > server_max) server_max = sw;
                if (lag > lag_max) lag_max = lag;
            }
        }
        destroyed += s->done == 2;
        unobserved += s->done == 3;
        if (s->first_sent < 0) continue;
        double usable_from = s->done == 1 ? s->ready_at - L.t0 : t_end;
        unusable += usable_from - s->first_sent;
        span += t_end - s->first_sent;
    }
    double wait_mean = waited ? wait_sum / waited : 0;
    double server_mean = server_n ? server_sum / server_n : 0,
           lag_mean = server_n ? lag_sum / server_n : 0;
    double join_time = L.last_join > 0 ? L.last_join - L.t0 : 0;
    double jps = join_time > 0 ? (double)L.joins / join_time : 0;
    double frac = span > 0 ? unusable / span : 0;
    if (json) {
        json_t *o =
            json_pack("{s:i, s:i, s:i, s:i, s:I, s:f, s:f, s:f, s:f, s:f, s:I, s:I, s:I, s:f, s:f, "
                      "s:f, s:b}",
                      "groups", (int)g->n, "ready", (int)ready, "destroyed", (int)destroyed,
                      "unobserved", (int)unobserved, "joins", (json_int_t)L.joins, "joins_per_s",
                      jps, "all_ready_s", all_ready, "wait_mean_s", wait_mean, "wait_max_s",
                      wait_max, "unusable_fraction", frac, "retransmits", (json_int_t)L.retransmits,
                      "lost", (json_int_t)L.lost, "errors", (json_int_t)L.errors, "loss", loss,
                      "crash", crash, "hold_s", hold, "timed_out", timed_out);
        /* the server's side beside rank 0's: routed when its last join was answered */
        json_object_set_new(o, "poll_ms", json_real(poll_ms));
        json_object_set_new(o, "server_wait_mean_s", json_real(server_mean));
        json_object_set_new(o, "server_wait_max_s", json_real(server_max));
        json_object_set_new(o, "poll_lag_mean_s", json_real(lag_mean));
        json_object_set_new(o, "poll_lag_max_s", json_real(lag_max));
        json_dumpf(o, stdout, JSON_INDENT(2));
        putchar('\n');
        json_decref(o);
    } else {
        printf("groups %u: %u Ready, %u destroyed, %u unobserved (rank 0 crashed)\n", g->n, ready,
               destroyed, unobserved);
        printf("joins %llu in %.3f s: %.0f joins/s; %llu retransmissions, %llu requests lost, "
               "%llu error answers\n",
               (unsigned long long)L.joins, join_time, jps, (unsigned long long)L.retransmits,
               (unsigned long long)L.lost, (unsigned long long)L.errors);
        printf("all Ready after %.3f s; a group waited %.3f s on average, %.3f s at most, from "
               "its first join until its rank 0 (polling every %g ms) saw it Ready\n",
               all_ready, wait_mean, wait_max, poll_ms);
        printf("the server had them Ready (their last join answered) %.3f s on average, %.3f s "
               "at most, after their first join; rank 0 saw it %.3f s later on average, %.3f s "
               "at most\n",
               server_mean, server_max, lag_mean, lag_max);
        printf("groups unusable %.1f%% of their time (with %.1f s of work after the joins)%s\n",
               100 * frac, hold, timed_out ? "; gave up at the deadline" : "");
    }
    free(dead);
    free(jobs);
    free(L.gs);
    free(L.p);
    free(L.free_p);
    free(L.heap);
    nf__u64map_fini(&L.by_tid);
    nf_smc_close(L.c);
    nf_groups_free(g);
    if (keys_file) nf__smd_keys_fini(&keys);
    nf_fabric_free(f);
    return timed_out ? NF_EXIT_FAIL : NF_EXIT_OK;
}
