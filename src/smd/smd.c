/* SPDX-License-Identifier: MIT */
/* The group manager service and its client (smd.h). The server loop: wait (poll) for datagrams,
 * the wake-up pipe or the next group deadline; expire deadlines; read a batch of datagrams and
 * answer each into a reply batch; make the journal durable; only then send the replies. So an
 * acknowledged event is always on disk, and a crash loses only events nobody was told about.
 * Answers to requests that change state are kept by (source, transaction id) in a ring, so a
 * retransmission gets the same answer instead of a second application. */
#define _GNU_SOURCE /* recvmmsg, sendmmsg */
#include "netfab/smd.h"

#include "netfab/journal.h"
#include "smd/keys.h"
#include "util/afile.h"
#include "util/diag.h"
#include "util/mem.h"
#include "util/u64map.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define BATCH 64               /* datagrams read per system call */
#define MAX_GATHER 4096        /* datagrams read (and answered) per journal sync at most */
#define TAKE_SLICE_NS 2000000L /* reading the socket stops this often to look at the writer */
#define CACHE_SLOTS 16384      /* answers kept for retransmissions */
#define COMPACT_MIN (1 << 20)  /* journal bytes before a compaction is considered */

static uint64_t mono_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* "A.B.C.D:PORT" into addr. */
static int parse_addr(const char *s, struct sockaddr_in *addr) {
    const char *colon = s ? strrchr(s, ':') : NULL;
    if (!colon || colon == s || (size_t)(colon - s) >= 64) return NF_EINVAL;
    char host[64];
    memcpy(host, s, (size_t)(colon - s));
    host[colon - s] = '\0';
    char *end;
    errno = 0;
    unsigned long port = strtoul(colon + 1, &end, 10);
    if (!colon[1] || *end || errno || port > 65535) return NF_EINVAL;
    memset(addr, 0, sizeof *addr);
    addr->sin_family = AF_INET;
    addr->sin_port = htons((uint16_t)port);
    if (inet_pton(AF_INET, host, &addr->sin_addr) != 1) return NF_EINVAL;
    return NF_OK;
}

/* ---- the server ----------------------------------------------------------------------------- */

typedef struct cached {
    uint64_t key; /* source address << 16 | port, hashed with the tid: the map's key */
    uint32_t ip;
    uint16_t port;
    uint64_t tid;
    uint8_t req[NF_MAD_SIZE]; /* the request: the same tid with other bytes is another request */
    uint8_t mad[NF_MAD_SIZE];
    bool used;
} cached;

/* A reply waiting for the end of the batch. change: it answers a join or a leave, so it may go
 * only once the journal is durable (then it is cached for retransmissions under tid, req its
 * request). */
typedef struct reply {
    struct sockaddr_in to;
    bool change;
    uint64_t tid;
    uint8_t req[NF_MAD_SIZE];
    uint8_t mad[NF_MAD_SIZE];
} reply;

/* A GetTable answer being sent under RMPP: the table as it stood when the request came, sent a
 * window at a time as the client acknowledges (docs/protocol.md, "GetTable responses"). */
typedef struct transfer {
    bool used;
    struct sockaddr_in to;
    nf_mad hdr; /* the response's headers */
    nf_mcgstate_rec *recs;
    size_t n;
    uint32_t segs;
    uint64_t idle_until; /* forgotten without an acknowledgement by then */
} transfer;

/* A dump request waiting for the dump process. */
typedef struct waiter {
    struct sockaddr_in to;
    nf_mad q;
} waiter;

#define MAX_TRANSFERS 16       /* GetTable answers in progress, all clients together */
#define MAX_TRANSFERS_SOURCE 4 /* ... from one source address and port */
#define TRANSFER_IDLE_MS 5000  /* a transfer without an acknowledgement this long is dropped */
#define MAX_WINDOW 64          /* segments one acknowledgement may ask for */
#define MAX_DUMP_WAITERS 16    /* dump requests waiting for the next dump */
#define RETRY_SPACE_MS 1000    /* a journal short of space is tried again this often */

struct nf_smd {
    const nf_fabric *f;
    nf_smd_opts o;
    char *dump_prefix;
    int fd;
    unsigned port;
    nf_mcgm *m;
    nf_journal *j;
    int log_rc; /* first journal append failure */
    uint64_t compacted_bytes;
    bool keyed;
    nf__smd_keys keys;
    cached *cache;
    uint32_t cache_next;
    nf__u64map cache_map;
    reply *out;
    size_t n_out, cap_out;
    transfer xfer[MAX_TRANSFERS];
    pid_t dump_pid; /* the dump process running, or 0 */
    waiter dump_now[MAX_DUMP_WAITERS], dump_next[MAX_DUMP_WAITERS];
    unsigned n_now, n_next;  /* requests answered when the running / the next dump ends */
    bool next_dump;          /* another dump is to start when the running one ends */
    bool no_space;           /* the journal could not be written for want of space */
    uint64_t space_retry_ms; /* when to try it again */
    uint8_t rx[BATCH][NF_MAD_SIZE + 1]; /* a batch in; one byte more: oversized datagrams show */
    unsigned n_taken;                   /* datagrams read for the batch being gathered */
    bool unsynced;                      /* records queued since the last batch was sealed */
    reply *held;                        /* the replies of the batch in flight */
    size_t n_held, cap_held;
    bool threaded, in_flight; /* the writer thread runs; it is writing a batch */
    pthread_t w_thread;
    pthread_mutex_t w_mu; /* guards the w_ fields below, shared with the writer */
    pthread_cond_t w_cv;
    bool w_go, w_quit, w_done; /* a batch to write; stop; the batch is written, w_rc its outcome */
    int w_rc;
    int done_fd[2];     /* the writer says here that a batch is written */
    bool replay_failed; /* the manager refused a journal record */
    bool stop;
    nf_smd_stats st;
};

static void say(const nf_smd *s, const char *fmt, ...) NF__PRINTF(2, 3);
static void say(const nf_smd *s, const char *fmt, ...) {
    if (!s->o.log) return;
    char line[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    s->o.log(s->o.log_ud, line);
}

static void journal_log(void *ud, const uint8_t *rec, uint32_t len) {
    nf_smd *s = ud;
    if (!s->j) return;
    int rc = nf_journal_append(s->j, rec, len);
    if (rc && !s->log_rc) s->log_rc = rc;
    s->unsynced = true;
    s->st.journal_records++;
}

static int replay_one(void *ud, const uint8_t *rec, uint32_t len) {
    nf_smd *s = ud;
    s->st.replayed++;
    return nf_mcgm_replay(s->m, rec, len);
}

static int snap_emit(void *ud, const uint8_t *rec, uint32_t len) {
    return nf_journal_append((nf_journal *)ud, rec, len);
}

static int snap_all(void *ud, nf_journal *snap) {
    const nf_smd *s = ud;
    return nf_mcgm_snapshot(s->m, snap_emit, snap);
}

static int compact(nf_smd *s) {
    int rc = nf_journal_compact(s->j, snap_all, s);
    if (rc) return rc;
    s->compacted_bytes = nf_journal_bytes(s->j);
    s->st.compactions++;
    return NF_OK;
}

static void free_transfer(transfer *t) {
    nf__free(t->recs);
    memset(t, 0, sizeof *t);
}

/* A dump process still running when the server stops is given DUMP_GRACE_MS to finish (its
 * files are then complete), then killed (they are then absent: written through temporary
 * files); a dump stuck on a FIFO nobody reads cannot hold the shutdown. */
#define DUMP_GRACE_MS 5000
static void end_dump(nf_smd *s) {
    if (s->dump_pid <= 0) return;
    for (int i = 0; i < DUMP_GRACE_MS / 10; i++) {
        pid_t r = waitpid(s->dump_pid, NULL, WNOHANG);
        if (r == s->dump_pid || (r < 0 && errno != EINTR)) {
            s->dump_pid = 0;
            return;
        }
        struct timespec ts = {.tv_sec = 0, .tv_nsec = 10000000L};
        nanosleep(&ts, NULL);
    }
    kill(s->dump_pid, SIGKILL);
    waitpid(s->dump_pid, NULL, 0);
    s->dump_pid = 0;
}

void nf_smd_free(nf_smd *s) {
    if (!s) return;
    end_dump(s);
    if (s->fd >= 0) close(s->fd);
    nf_journal_close(s->j);
    nf_mcgm_free(s->m);
    nf__free(s->cache);
    nf__u64map_fini(&s->cache_map);
    nf__free(s->out);
    nf__free(s->held);
    for (unsigned i = 0; i < MAX_TRANSFERS; i++)
        free_transfer(&s->xfer[i]);
    nf__smd_keys_fini(&s->keys);
    nf__free(s->dump_prefix);
    nf__free(s);
}

static int open_state(nf_smd *s, nf_diag *diag);

static bool loopback(const struct sockaddr_in *a) {
    return (ntohl(a->sin_addr.s_addr) >> 24) == 127;
}

int nf_smd_new(const nf_fabric *f, const nf_hops *h, const nf_smd_opts *opts, nf_smd **out,
               nf_diag *diag) {
    *out = NULL;
    nf_smd *s = nf__calloc(1, sizeof *s);
    if (!s) return NF_ENOMEM;
    s->f = f;
    s->o = *opts;
    s->fd = -1;
    nf__u64map_init(&s->cache_map);
    nf__u64map_init(&s->keys.port);
    int rc;
    struct sockaddr_in addr;
    if (parse_addr(opts->listen, &addr)) {
        rc = nf__fail(diag, NF_EINVAL,
                      "bad listen address '%s' (want ADDR:PORT, ADDR an IPv4 address)",
                      opts->listen ? opts->listen : "");
        goto bad;
    }
    if (opts->keys_file) {
        if ((rc = nf__smd_keys_load(opts->keys_file, f, &s->keys, diag))) goto bad;
        s->keyed = true;
    } else if (!loopback(&addr)) {
        rc = nf__fail(diag, NF_EINVAL,
                      "refusing to listen on %s without --keys: any host that reaches it could "
                      "join, leave and dump for any port; give --keys FILE (per-port keys and the "
                      "manager's) or a loopback address (127.0.0.0/8)",
                      opts->listen);
        goto bad;
    }
    const char *pre = opts->dump_prefix;
    char buf[4096];
    if (!pre) {
        snprintf(buf, sizeof buf, "%s/smd", opts->state_dir ? opts->state_dir : ".");
        pre = opts->state_dir ? buf : "netfab-smd";
    }
    rc = NF_ENOMEM;
    if (!(s->dump_prefix = nf__strdup(pre))) goto bad;
    if (!(s->cache = nf__calloc(CACHE_SLOTS, sizeof *s->cache))) goto bad;
    rc = nf_mcgm_new(f, h, &opts->mcgm, journal_log, s, &s->m);
    if (rc) {
        nf__fail(diag, rc, "cannot start the group manager: %s", nf_strerror(rc));
        goto bad;
    }
    if (opts->state_dir && (rc = open_state(s, diag))) goto bad;
    s->fd = socket(AF_INET, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (s->fd < 0) {
        rc = nf__fail(diag, NF_EIO, "socket: %s", strerror(errno));
        goto bad;
    }
    int big = 8 << 20; /* a burst of thousands of joins must not overflow the queue */
    if (setsockopt(s->fd, SOL_SOCKET, SO_RCVBUFFORCE, &big, sizeof big))
        setsockopt(s->fd, SOL_SOCKET, SO_RCVBUF, &big, sizeof big);
    if (bind(s->fd, (struct sockaddr *)&addr, sizeof addr)) {
        rc = nf__fail(diag, NF_EIO, "bind %s: %s", opts->listen, strerror(errno));
        goto bad;
    }
    socklen_t al = sizeof addr;
    getsockname(s->fd, (struct sockaddr *)&addr, &al);
    s->port = ntohs(addr.sin_port);
    *out = s;
    return NF_OK;
bad:
    nf_smd_free(s);
    return rc;
}

unsigned nf_smd_port(const nf_smd *s) { return s->port; }
const nf_mcgm *nf_smd_manager(const nf_smd *s) { return s->m; }
void nf_smd_get_stats(const nf_smd *s, nf_smd_stats *out) { *out = s->st; }

/* One dump file, written complete or not at all (afile: an exclusively created temporary file,
 * synced, renamed over the target; a planted file or symlink is never written through). */
static int dump_one(nf_smd *s, const char *suffix, bool mft, nf_diag *diag) {
    size_t n = strlen(s->dump_prefix) + 16;
    char *path = nf__malloc(n);
    if (!path) return NF_ENOMEM;
    snprintf(path, n, "%s.%s", s->dump_prefix, suffix);
    nf__afile af;
    int rc = nf__afile_open_nofollow(&af, path);
    if (rc) {
        rc = nf__fail(diag, rc, "cannot write the dump %s: %s", path,
                      rc == NF_EIO ? (errno == ELOOP ? "a symbolic link (refused: a dump replaces "
                                                       "the file itself, never a link's target)"
                                                     : strerror(errno))
                                   : nf_strerror(rc));
        nf__free(path);
        return rc;
    }
    rc = mft ? nf_mcgm_write_dump(s->m, af.fp, NULL) : nf_mcgm_write_dump(s->m, NULL, af.fp);
    if (rc) {
        nf__afile_abort(&af);
        rc = nf__fail(diag, rc, "cannot write the dump %s: %s", path, nf_strerror(rc));
    } else if (nf__afile_commit(&af)) {
        int e = errno;
        rc = nf__fail(diag, e == ENOSPC || e == EDQUOT ? NF_ENOSPC : NF_EIO,
                      "cannot write the dump %s: %s", path, strerror(e));
    }
    nf__free(path);
    return rc;
}

/* Writes PREFIX.mcfdbs and PREFIX.groups, each through a temporary file renamed into place. */
int nf_smd_dump(nf_smd *s, nf_diag *diag) {
    int rc = dump_one(s, "mcfdbs", true, diag);
    if (!rc) rc = dump_one(s, "groups", false, diag);
    if (!rc)
        say(s, "dumped the live tables to %s.mcfdbs and %s.groups", s->dump_prefix, s->dump_prefix);
    return rc;
}

/* ---- answering ------------------------------------------------------------------------------ */

static reply *new_reply(nf_smd *s, const struct sockaddr_in *to) {
    if (NF_GROW(s->out, s->cap_out, s->n_out + 1)) return NULL;
    reply *r = &s->out[s->n_out++];
    r->to = *to;
    r->change = false;
    return r;
}

/* The answer: the request's headers and data (docs/protocol.md, "Responses"), as a response. */
static void answer_of(const nf_mad *req, uint8_t method, uint16_t status, nf_mad *a) {
    memset(a, 0, sizeof *a);
    a->base_version = NF_MAD_BASE_VERSION;
    a->mgmt_class = NF_MAD_CLASS_SA;
    a->class_version = NF_SA_CLASS_VERSION;
    a->method = method;
    a->status = status;
    a->tid = req->tid;
    a->attr_id = req->attr_id;
    a->attr_mod = req->attr_mod;
    a->sm_key = req->sm_key;
    a->comp_mask = req->comp_mask;
    memcpy(a->data, req->data, sizeof a->data);
}

static bool same_source(const struct sockaddr_in *a, const struct sockaddr_in *b) {
    return a->sin_addr.s_addr == b->sin_addr.s_addr && a->sin_port == b->sin_port;
}

static uint64_t cache_key(const struct sockaddr_in *from, uint64_t tid) {
    return nf__hash64(((uint64_t)ntohl(from->sin_addr.s_addr) << 16 | ntohs(from->sin_port)) ^
                      nf__hash64(tid));
}

static const cached *cache_find(const nf_smd *s, const struct sockaddr_in *from, uint64_t tid) {
    uint32_t i;
    if (!nf__u64map_get(&s->cache_map, cache_key(from, tid), &i)) return NULL;
    const cached *c = &s->cache[i];
    if (!c->used || c->tid != tid || c->ip != from->sin_addr.s_addr || c->port != from->sin_port)
        return NULL;
    return c;
}

static void cache_put(nf_smd *s, const reply *r) {
    cached *c = &s->cache[s->cache_next];
    if (c->used) nf__u64map_del(&s->cache_map, c->key);
    uint64_t key = cache_key(&r->to, r->tid);
    if (nf__u64map_put(&s->cache_map, key, s->cache_next)) { /* out of memory: just not kept */
        c->used = false;
        return;
    }
    c->key = key;
    c->ip = r->to.sin_addr.s_addr;
    c->port = r->to.sin_port;
    c->tid = r->tid;
    memcpy(c->req, r->req, NF_MAD_SIZE);
    memcpy(c->mad, r->mad, NF_MAD_SIZE);
    c->used = true;
    s->cache_next = (s->cache_next + 1) % CACHE_SLOTS;
}

/* Queues answer a. req: the request's datagram when a answers a change (cached once durable). */
static void send_one(nf_smd *s, const struct sockaddr_in *to, const nf_mad *a, const uint8_t *req) {
    reply *r = new_reply(s, to);
    if (!r) return; /* out of memory: the client will retransmit */
    nf_mad_encode(a, r->mad);
    if (req) {
        r->change = true;
        r->tid = a->tid;
        memcpy(r->req, req, NF_MAD_SIZE);
    }
    if (a->status) s->st.errors++;
    s->st.answered++;
}

static void refuse(nf_smd *s, const struct sockaddr_in *to, const nf_mad *q, uint8_t method,
                   uint16_t status) {
    nf_mad a;
    answer_of(q, method, status, &a);
    send_one(s, to, &a, NULL);
}

/* Who a request may act for (docs/protocol.md, "Keys"). Without keys every local client is
 * trusted. With keys, the manager key may do anything; a port's key acts for that port only. */
static bool is_manager(const nf_smd *s, const nf_mad *q) {
    return !s->keyed || q->sm_key == s->keys.manager;
}

static bool may_act_for(const nf_smd *s, const nf_mad *q, uint64_t port_guid) {
    if (is_manager(s, q)) return true;
    uint64_t key;
    return nf__smd_keys_port(&s->keys, port_guid, &key) && key == q->sm_key;
}

static void do_member(nf_smd *s, const struct sockaddr_in *from, const nf_mad *q,
                      const uint8_t *raw, bool join) {
    nf_mcmember_rec rec;
    nf_mcmember_decode(q->data, &rec);
    uint64_t now = mono_ms(), guid = nf_gid_guid(&rec.port_gid);
    nf_mcgstate_rec g;
    memset(&g, 0, sizeof g);
    uint16_t st;
    uint8_t method = join ? NF_MAD_GET_RESP : NF_MAD_DELETE_RESP;
    if (!may_act_for(s, q, guid)) {
        s->st.denied++;
        refuse(s, from, q, method, NF_SA_STATUS_DENIED);
        return;
    }
    if (s->no_space) { /* nothing new can be made durable: refuse it, change nothing */
        s->st.refused_no_space++;
        refuse(s, from, q, method, NF_SA_STATUS_NO_RESOURCES);
        return;
    }
    /* the owner a new group is counted against: the port the request acts for (proven by its
     * key, or taken on trust without keys); the manager's own requests are not limited */
    uint64_t owner = s->keyed && q->sm_key == s->keys.manager ? 0 : guid;
    if (join && !(rec.join_state & NF_JOIN_FULL))
        st = NF_SA_STATUS_REQ_INVALID; /* only full members count towards MemberCount */
    else if (join)
        st = nf_mcgm_join_as(s->m, owner, &rec.mgid, guid, rec.member_count, now, &g);
    else
        st = nf_mcgm_leave(s->m, &rec.mgid, guid, now, &g);
    nf_mad a;
    answer_of(q, method, st, &a);
    if (st == NF_MAD_STATUS_OK || st == NF_SA_STATUS_DENIED) {
        rec.mlid = g.mlid;
        rec.member_count = g.member_count;
    }
    nf_mcmember_encode(&rec, a.data);
    send_one(s, from, &a, raw);
}

static void do_state(nf_smd *s, const struct sockaddr_in *from, const nf_mad *q) {
    nf_mcgstate_rec rec, g;
    nf_mcgstate_decode(q->data, &rec);
    nf_mad a;
    answer_of(q, NF_MAD_GET_RESP, nf_mcgm_query(s->m, &rec.mgid, &g), &a);
    nf_mcgstate_encode(&g, a.data);
    send_one(s, from, &a, NULL);
}

/* Segment k (from 1) of transfer t. */
static void send_segment(nf_smd *s, const transfer *t, uint32_t k) {
    nf_mad a = t->hdr;
    a.rmpp_version = 1;
    a.rmpp_type = NF_RMPP_TYPE_DATA;
    a.rmpp_flags = NF_RMPP_FLAG_ACTIVE | (k == 1 ? NF_RMPP_FLAG_FIRST : 0) |
                   (k == t->segs ? NF_RMPP_FLAG_LAST : 0);
    a.rmpp_data1 = k;
    size_t first = (size_t)(k - 1) * NF_MCGSTATE_PER_SEGMENT, here = 0;
    if (first < t->n) here = t->n - first;
    if (here > NF_MCGSTATE_PER_SEGMENT) here = NF_MCGSTATE_PER_SEGMENT;
    a.rmpp_data2 = (uint32_t)(k == 1 ? t->n * NF_MCGSTATE_SIZE : here * NF_MCGSTATE_SIZE);
    a.attr_offset = NF_MCGSTATE_SIZE / 8;
    memset(a.data, 0, sizeof a.data);
    for (size_t i = 0; i < here; i++)
        nf_mcgstate_encode(&t->recs[first + i], a.data + i * NF_MCGSTATE_SIZE);
    send_one(s, &t->to, &a, NULL);
    s->st.segments++;
}

static transfer *find_transfer(nf_smd *s, const struct sockaddr_in *from, uint64_t tid) {
    for (unsigned i = 0; i < MAX_TRANSFERS; i++)
        if (s->xfer[i].used && s->xfer[i].hdr.tid == tid && same_source(&s->xfer[i].to, from))
            return &s->xfer[i];
    return NULL;
}

/* GetTable: the table is taken now and its first segment sent; the rest goes as the client
 * acknowledges (handle_rmpp). The same request again (its segment 1 was lost) sends segment 1
 * again. */
static void do_table(nf_smd *s, const struct sockaddr_in *from, const nf_mad *q) {
    if (!is_manager(s, q)) {
        s->st.denied++;
        refuse(s, from, q, NF_MAD_GETTABLE_RESP, NF_SA_STATUS_DENIED);
        return;
    }
    transfer *t = find_transfer(s, from, q->tid);
    if (t) {
        t->idle_until = mono_ms() + TRANSFER_IDLE_MS;
        send_segment(s, t, 1);
        return;
    }
    unsigned mine = 0;
    for (unsigned i = 0; i < MAX_TRANSFERS; i++) {
        if (s->xfer[i].used && same_source(&s->xfer[i].to, from)) mine++;
        if (!s->xfer[i].used && !t) t = &s->xfer[i];
    }
    size_t n = nf_mcgm_list(s->m, NULL, 0);
    nf_mcgstate_rec *recs =
        t && mine < MAX_TRANSFERS_SOURCE ? nf__malloc((n + 1) * sizeof *recs) : NULL;
    if (!recs) { /* too many transfers (or no memory): the client asks again later */
        s->st.busy++;
        refuse(s, from, q, NF_MAD_GETTABLE_RESP, NF_SA_STATUS_NO_RESOURCES);
        return;
    }
    t->used = true;
    t->to = *from;
    t->recs = recs;
    t->n = nf_mcgm_list(s->m, recs, n);
    if (t->n > n) t->n = n;
    t->segs = t->n ? (uint32_t)((t->n + NF_MCGSTATE_PER_SEGMENT - 1) / NF_MCGSTATE_PER_SEGMENT) : 1;
    answer_of(q, NF_MAD_GETTABLE_RESP, NF_MAD_STATUS_OK, &t->hdr);
    t->idle_until = mono_ms() + TRANSFER_IDLE_MS;
    s->st.transfers++;
    send_segment(s, t, 1);
}

/* An RMPP packet from a client about a GetTable answer: ACK (Data1 = the last segment it has in
 * order, Data2 = the last it wants now) sends segments Data1+1 .. Data2, at most MAX_WINDOW of
 * them, and an ACK of the last segment ends the transfer; STOP or ABORT end it. Anything else,
 * or a packet for no transfer, is dropped. */
static void handle_rmpp(nf_smd *s, const struct sockaddr_in *from, const nf_mad *q) {
    transfer *t = find_transfer(s, from, q->tid);
    if (!t || q->method != NF_MAD_GETTABLE_RESP || q->attr_id != NF_SA_ATTR_MCGSTATE) {
        s->st.dropped++;
        return;
    }
    if (q->rmpp_type == NF_RMPP_TYPE_STOP || q->rmpp_type == NF_RMPP_TYPE_ABORT) {
        free_transfer(t);
        return;
    }
    if (q->rmpp_type != NF_RMPP_TYPE_ACK || q->rmpp_data1 > t->segs ||
        q->rmpp_data2 < q->rmpp_data1) {
        s->st.dropped++;
        return;
    }
    if (q->rmpp_data1 == t->segs) { /* all of it arrived */
        free_transfer(t);
        return;
    }
    uint32_t last = q->rmpp_data2 < t->segs ? q->rmpp_data2 : t->segs;
    if (last - q->rmpp_data1 > MAX_WINDOW) last = q->rmpp_data1 + MAX_WINDOW;
    for (uint32_t k = q->rmpp_data1 + 1; k <= last; k++)
        send_segment(s, t, k);
    t->idle_until = mono_ms() + TRANSFER_IDLE_MS;
}

static void expire_transfers(nf_smd *s, uint64_t now) {
    for (unsigned i = 0; i < MAX_TRANSFERS; i++)
        if (s->xfer[i].used && s->xfer[i].idle_until <= now) {
            free_transfer(&s->xfer[i]);
            s->st.transfers_expired++;
        }
}

/* ---- dumps: written by a child process from a copy of the state, so service goes on ---------- */

/* The answer to dump request q: GetResp with status and no data. */
static void dump_answer(nf_smd *s, const struct sockaddr_in *to, const nf_mad *q, uint16_t status) {
    nf_mad a;
    answer_of(q, NF_MAD_GET_RESP, status, &a);
    memset(a.data, 0, sizeof a.data);
    send_one(s, to, &a, NULL);
}

static void start_dump(nf_smd *s) {
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) { /* the child: write the files, nothing else (no journal, no socket) */
        nf_diag d;
        int rc = nf_smd_dump(s, &d);
        if (rc) say(s, "%s", d.msg);
        _exit(rc ? 1 : 0);
    }
    if (pid < 0) {
        say(s, "cannot start a dump process: %s", strerror(errno));
        for (unsigned i = 0; i < s->n_next; i++)
            dump_answer(s, &s->dump_next[i].to, &s->dump_next[i].q, NF_SA_STATUS_NO_RESOURCES);
        s->n_next = 0;
        s->next_dump = false;
        return;
    }
    s->dump_pid = pid;
    memcpy(s->dump_now, s->dump_next, s->n_next * sizeof *s->dump_now);
    s->n_now = s->n_next;
    s->n_next = 0;
    s->next_dump = false;
    s->st.dumps++;
}

/* Asks for a dump: it starts now, or when the running one ends (requests coalesce). A request
 * (q not NULL) is answered when its dump is written. false when too many requests wait. */
static bool want_dump(nf_smd *s, const struct sockaddr_in *from, const nf_mad *q) {
    if (q) {
        if (s->n_next == MAX_DUMP_WAITERS) return false;
        s->dump_next[s->n_next++] = (waiter){.to = *from, .q = *q};
    }
    s->next_dump = true;
    if (!s->dump_pid) start_dump(s);
    return true;
}

/* The dump process ended (or not yet): answer its requests, start the next one. */
static void reap_dump(nf_smd *s) {
    if (!s->dump_pid) return;
    int status;
    pid_t r = waitpid(s->dump_pid, &status, WNOHANG);
    if (r == 0 || (r < 0 && errno == EINTR)) return;
    bool ok = r == s->dump_pid && WIFEXITED(status) && WEXITSTATUS(status) == 0;
    if (!ok) s->st.dump_failures++;
    for (unsigned i = 0; i < s->n_now; i++)
        dump_answer(s, &s->dump_now[i].to, &s->dump_now[i].q, ok ? 0 : NF_SA_STATUS_NO_RESOURCES);
    s->n_now = 0;
    s->dump_pid = 0;
    if (s->next_dump) start_dump(s);
}

static void do_dump(nf_smd *s, const struct sockaddr_in *from, const nf_mad *q) {
    if (!is_manager(s, q)) {
        s->st.denied++;
        refuse(s, from, q, NF_MAD_GET_RESP, NF_SA_STATUS_DENIED);
        return;
    }
    for (unsigned i = 0; i < s->n_next; i++) /* a retransmission: already waiting */
        if (s->dump_next[i].q.tid == q->tid && same_source(&s->dump_next[i].to, from)) return;
    for (unsigned i = 0; i < s->n_now; i++)
        if (s->dump_now[i].q.tid == q->tid && same_source(&s->dump_now[i].to, from)) return;
    if (!want_dump(s, from, q)) {
        s->st.busy++;
        dump_answer(s, from, q, NF_SA_STATUS_NO_RESOURCES);
    }
}

static void handle(nf_smd *s, const struct sockaddr_in *from, const uint8_t *buf, size_t len) {
    s->st.datagrams++;
    nf_mad q;
    int rc = nf_mad_decode(buf, len, &q);
    if (rc == NF_EPARSE) { /* no header: nothing to answer */
        s->st.dropped++;
        return;
    }
    if (q.method & 0x80) { /* a response: only a client's RMPP acknowledgement is ours to read */
        if (rc == NF_OK && q.rmpp_version == 1 && (q.rmpp_flags & NF_RMPP_FLAG_ACTIVE))
            handle_rmpp(s, from, &q);
        else
            s->st.dropped++;
        return;
    }
    uint8_t resp = q.method == NF_MAD_DELETE                          ? NF_MAD_DELETE_RESP
                   : q.method == NF_MAD_GETTABLE                      ? NF_MAD_GETTABLE_RESP
                   : q.method == NF_MAD_GET || q.method == NF_MAD_SET ? NF_MAD_GET_RESP
                                                                      : (uint8_t)(q.method | 0x80);
    if (q.base_version != NF_MAD_BASE_VERSION || q.mgmt_class != NF_MAD_CLASS_SA ||
        q.class_version != NF_SA_CLASS_VERSION) {
        refuse(s, from, &q, resp, NF_MAD_STATUS_BAD_VERSION);
        return;
    }
    if (rc == NF_ERANGE) { /* a truncated or oversized datagram */
        refuse(s, from, &q, resp, NF_MAD_STATUS_INVALID_FIELD);
        return;
    }
    if (q.method == NF_MAD_SET || q.method == NF_MAD_DELETE) {
        const cached *c = cache_find(s, from, q.tid);
        if (c && memcmp(c->req, buf, NF_MAD_SIZE) == 0) { /* a retransmission */
            reply *r = new_reply(s, from);
            if (r) memcpy(r->mad, c->mad, NF_MAD_SIZE);
            s->st.retransmits++;
            return;
        }
        if (c) { /* the transaction id of another request: answering it would be a guess */
            s->st.tid_reused++;
            refuse(s, from, &q, resp, NF_SA_STATUS_REQ_INVALID);
            return;
        }
    }
    bool known_method = q.method == NF_MAD_GET || q.method == NF_MAD_SET ||
                        q.method == NF_MAD_DELETE || q.method == NF_MAD_GETTABLE;
    if (!known_method) {
        refuse(s, from, &q, resp, NF_MAD_STATUS_BAD_METHOD);
    } else if (q.attr_id == NF_SA_ATTR_MCMEMBER && q.method == NF_MAD_SET) {
        do_member(s, from, &q, buf, true);
    } else if (q.attr_id == NF_SA_ATTR_MCMEMBER && q.method == NF_MAD_DELETE) {
        do_member(s, from, &q, buf, false);
    } else if (q.attr_id == NF_SA_ATTR_MCGSTATE && q.method == NF_MAD_GET) {
        do_state(s, from, &q);
    } else if (q.attr_id == NF_SA_ATTR_MCGSTATE && q.method == NF_MAD_GETTABLE) {
        do_table(s, from, &q);
    } else if (q.attr_id == NF_SA_ATTR_DUMP && q.method == NF_MAD_GET) {
        do_dump(s, from, &q);
    } else {
        refuse(s, from, &q, resp, NF_MAD_STATUS_BAD_ATTR);
    }
}

/* ---- the state directory --------------------------------------------------------------------- */

static int replay_checked(void *ud, const uint8_t *rec, uint32_t len) {
    nf_smd *s = ud;
    int rc = replay_one(ud, rec, len);
    if (rc) s->replay_failed = true;
    return rc;
}

/* Opens the journal, rebuilds the state from it and compacts it. A journal damaged before its
 * end is refused (the file untouched) unless repair_journal asks to salvage it. Compaction needs
 * room for a second copy: without it the manager starts on the journal as it is. */
static int open_state(nf_smd *s, nf_diag *diag) {
    const char *dir = s->o.state_dir;
    int rc = nf_journal_open(dir, &s->j, diag);
    if (rc) return rc;
    uint64_t torn = 0;
    nf_journal_salvage_report rep;
    memset(&rep, 0, sizeof rep);
    if (s->o.repair_journal) {
        rc = nf_journal_salvage(s->j, replay_one, s, &rep, diag);
        if (rc) return rc;
        torn = rep.torn;
        if (rep.regions || rep.rejected)
            say(s,
                "%s/journal repaired: %llu records read, %llu of them did not apply (lost), "
                "%llu damaged regions of %llu bytes unreadable (lost); the damaged file is kept "
                "as %s/%s",
                dir, (unsigned long long)rep.records, (unsigned long long)rep.rejected,
                (unsigned long long)rep.regions, (unsigned long long)rep.lost_bytes, dir,
                rep.copy[0] ? rep.copy : "(no copy)");
        else
            say(s, "%s/journal: no damage found, nothing to repair", dir);
    } else {
        rc = nf_journal_replay(s->j, replay_checked, s, &torn, diag);
        if (rc && s->replay_failed)
            return nf__fail(diag, rc,
                            "%s/journal: record %llu does not replay (%s): a journal of another "
                            "fabric or engine state? (--repair-journal keeps the records that "
                            "apply)",
                            dir, (unsigned long long)s->st.replayed, nf_strerror(rc));
        if (rc) return rc; /* damage: the journal's own message says where and what to do */
    }
    s->st.torn_bytes = torn;
    /* compaction first: after a salvage nothing may be appended before it, and what
     * replay_done logs (a group routed now) then goes into the new journal */
    rc = compact(s);
    if (rc == NF_ENOSPC && rep.copy[0]) /* a salvaged journal must be rewritten before use */
        return nf__fail(diag, rc,
                        "%s: no space to rewrite the repaired journal (%s); free some and start "
                        "again with --repair-journal",
                        dir, strerror(nf_journal_last_errno(s->j)));
    if (rc == NF_ENOSPC) {
        say(s, "%s: no space to compact the journal (%s); starting on the journal as it is", dir,
            strerror(nf_journal_last_errno(s->j)));
        s->compacted_bytes = nf_journal_bytes(s->j);
        rc = NF_OK;
    } else if (rc) {
        return nf__fail(diag, rc, "%s: cannot compact the journal: %s", dir, nf_strerror(rc));
    }
    s->st.journal_records = 0;
    return nf_mcgm_replay_done(s->m, mono_ms());
}

/* ---- the loop ------------------------------------------------------------------------------- */

/* Sends replies r[0..n) (sendmmsg). A reply that cannot go is a lost datagram: the client
 * retransmits. */
static void send_all(nf_smd *s, reply *r, size_t n) {
    for (size_t i = 0; i < n;) {
        struct mmsghdr msg[BATCH];
        struct iovec iov[BATCH];
        unsigned k = 0;
        for (; k < BATCH && i + k < n; k++) {
            iov[k] = (struct iovec){.iov_base = r[i + k].mad, .iov_len = NF_MAD_SIZE};
            msg[k] = (struct mmsghdr){.msg_hdr = {.msg_name = &r[i + k].to,
                                                  .msg_namelen = sizeof r[i + k].to,
                                                  .msg_iov = &iov[k],
                                                  .msg_iovlen = 1}};
        }
        int sent = sendmmsg(s->fd, msg, k, 0);
        if (sent <= 0) {
            if (sent < 0 && errno == EINTR) continue;
            if (sent < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
                struct pollfd p = {.fd = s->fd, .events = POLLOUT};
                poll(&p, 1, 100);
                continue;
            }
            i += k;
            continue;
        }
        i += (size_t)sent;
    }
}

/* Settles the batch whose replies are r[0..n) by the outcome rc of its sync (later: the journal
 * is short of space and no sync was tried), then sends the replies. Answers to changes are kept
 * for retransmissions only once durable. A journal short of space (ENOSPC, EDQUOT) does not stop
 * the manager: the changes of the batch are answered NO_RESOURCES instead of OK (their records
 * stay queued and are written when space returns; a client that asks again is answered then), new
 * changes are refused, queries go on. Any other failure stops the server before anything of the
 * batch is acknowledged (nothing is sent). */
static int settle(nf_smd *s, int rc, bool later, reply *r, size_t n, nf_diag *diag) {
    bool durable = true;
    if (s->j) {
        if (rc == NF_ENOSPC) {
            durable = false;
            if (!later) {
                if (!s->no_space)
                    say(s, "%s/journal: cannot write: %s; refusing changes until there is space",
                        s->o.state_dir, strerror(nf_journal_last_errno(s->j)));
                s->no_space = true;
                s->space_retry_ms = mono_ms() + RETRY_SPACE_MS;
                s->st.no_space_events++;
            }
        } else if (rc) {
            int e = nf_journal_last_errno(s->j);
            return nf__fail(diag, rc, "%s/journal: cannot write: %s", s->o.state_dir,
                            e ? strerror(e) : nf_strerror(rc));
        } else {
            if (s->no_space) say(s, "%s/journal: written again; accepting changes", s->o.state_dir);
            s->no_space = false;
            s->st.journal_syncs++;
        }
    }
    for (size_t i = 0; i < n; i++) {
        if (!r[i].change) continue;
        if (durable) {
            cache_put(s, &r[i]);
        } else { /* not durable: not acknowledged */
            uint16_t old = (uint16_t)(r[i].mad[4] << 8 | r[i].mad[5]);
            if (old == NF_MAD_STATUS_OK) s->st.errors++;
            r[i].mad[4] = NF_SA_STATUS_NO_RESOURCES >> 8;
            r[i].mad[5] = NF_SA_STATUS_NO_RESOURCES & 0xFF;
            s->st.refused_no_space++;
        }
    }
    send_all(s, r, n);
    return NF_OK;
}

/* Compacts the journal once it has grown past COMPACT_MIN and four times its last snapshot. No
 * batch may be in flight. */
static void maybe_compact(nf_smd *s) {
    if (s->j && !s->no_space && nf_journal_bytes(s->j) > COMPACT_MIN &&
        nf_journal_bytes(s->j) > 4 * s->compacted_bytes) {
        int rc = compact(s);
        if (rc == NF_ENOSPC) /* not now: the next time the journal has grown as much */
            s->compacted_bytes = nf_journal_bytes(s->j);
        if (rc)
            say(s, "journal compaction failed (%s); the journal keeps growing", nf_strerror(rc));
    }
}

/* Makes the journal durable, then sends the replies waiting in out (settle). Out of space, the
 * sync is tried again once a RETRY_SPACE_MS, not on every batch (no change is accepted
 * meanwhile, so nothing waits for it). No batch may be in flight. */
static int flush(nf_smd *s, nf_diag *diag) {
    int rc = NF_OK;
    bool later = false;
    if (s->j) {
        if (s->log_rc)
            return nf__fail(diag, NF_EIO, "%s/journal: cannot queue a record: %s", s->o.state_dir,
                            nf_strerror(s->log_rc));
        later = s->no_space && mono_ms() < s->space_retry_ms;
        rc = later ? NF_ENOSPC : nf_journal_sync(s->j);
    }
    rc = settle(s, rc, later, s->out, s->n_out, diag);
    s->n_out = 0;
    s->n_taken = 0;
    s->unsynced = false;
    if (rc) return rc;
    maybe_compact(s);
    return NF_OK;
}

/* ---- group commit: the journal written by a thread while requests go on ---------------------- */

/* The writer thread: writes each batch start_batch sealed (nf_journal_sync_write), then says so
 * through done_fd. It touches nothing but the sealed batch, the file and the hand-over fields. */
static void *writer(void *arg) {
    nf_smd *s = arg;
    pthread_mutex_lock(&s->w_mu);
    for (;;) {
        while (!s->w_go && !s->w_quit)
            pthread_cond_wait(&s->w_cv, &s->w_mu);
        if (!s->w_go) break;
        s->w_go = false;
        pthread_mutex_unlock(&s->w_mu);
        int rc = nf_journal_sync_write(s->j);
        pthread_mutex_lock(&s->w_mu);
        s->w_rc = rc;
        s->w_done = true;
        ssize_t k = write(s->done_fd[1], "", 1); /* the pipe is never full: one byte a batch */
        (void)k;
    }
    pthread_mutex_unlock(&s->w_mu);
    return NULL;
}

/* Starts the writer thread (signals blocked in it: they are the loop's). false when it cannot be
 * started: the loop then syncs in place (flush). */
static bool writer_start(nf_smd *s) {
    if (pipe2(s->done_fd, O_CLOEXEC | O_NONBLOCK)) return false;
    pthread_mutex_init(&s->w_mu, NULL);
    pthread_cond_init(&s->w_cv, NULL);
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, &old);
    int rc = pthread_create(&s->w_thread, NULL, writer, s);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (rc) {
        pthread_mutex_destroy(&s->w_mu);
        pthread_cond_destroy(&s->w_cv);
        close(s->done_fd[0]);
        close(s->done_fd[1]);
        return false;
    }
    s->threaded = true;
    return true;
}

static void writer_stop(nf_smd *s) {
    if (!s->threaded) return;
    pthread_mutex_lock(&s->w_mu);
    s->w_quit = true;
    pthread_cond_signal(&s->w_cv);
    pthread_mutex_unlock(&s->w_mu);
    pthread_join(s->w_thread, NULL);
    pthread_mutex_destroy(&s->w_mu);
    pthread_cond_destroy(&s->w_cv);
    close(s->done_fd[0]);
    close(s->done_fd[1]);
    s->threaded = false;
}

/* Seals what the journal has queued and hands it to the writer; the replies in out wait in held
 * until it is durable (end_batch). Meanwhile requests go on into the next batch. Out of space
 * before the retry time, the batch is settled at once (flush). No batch may be in flight. */
static int start_batch(nf_smd *s, nf_diag *diag) {
    if (s->log_rc || (s->no_space && mono_ms() < s->space_retry_ms)) return flush(s, diag);
    int rc = nf_journal_sync_begin(s->j);
    if (rc) { /* damage found when the frames were checked: nothing is acknowledged */
        rc = settle(s, rc, false, s->out, s->n_out, diag);
        s->n_out = 0;
        return rc;
    }
    reply *r = s->held;
    size_t cap = s->cap_held;
    s->held = s->out;
    s->cap_held = s->cap_out;
    s->n_held = s->n_out;
    s->out = r;
    s->cap_out = cap;
    s->n_out = 0;
    s->n_taken = 0;
    s->unsynced = false;
    s->in_flight = true;
    pthread_mutex_lock(&s->w_mu);
    s->w_go = true;
    pthread_cond_signal(&s->w_cv);
    pthread_mutex_unlock(&s->w_mu);
    return NF_OK;
}

/* Ends the batch in flight if the writer is done with it (wait: until it is): the journal takes
 * the outcome, then its replies are settled and sent (send: false drops them, for a server
 * stopping on an error), and the journal compacted if due. */
static int end_batch(nf_smd *s, bool wait, bool send, nf_diag *diag) {
    if (!s->in_flight) return NF_OK;
    bool done;
    int rc;
    for (;;) {
        char b[16];
        while (read(s->done_fd[0], b, sizeof b) > 0) {
        }
        pthread_mutex_lock(&s->w_mu);
        done = s->w_done;
        rc = s->w_rc;
        s->w_done = false;
        pthread_mutex_unlock(&s->w_mu);
        if (done || !wait) break;
        struct pollfd p = {.fd = s->done_fd[0], .events = POLLIN};
        poll(&p, 1, -1);
    }
    if (!done) return NF_OK;
    s->in_flight = false;
    int e = nf_journal_sync_end(s->j, rc);
    if (e)
        return nf__fail(diag, e, "%s/journal: cannot keep a batch that failed to write: %s",
                        s->o.state_dir, nf_strerror(e));
    if (!send) {
        s->n_held = 0;
        return NF_OK;
    }
    rc = settle(s, rc, false, s->held, s->n_held, diag);
    s->n_held = 0;
    if (rc) return rc;
    maybe_compact(s);
    return NF_OK;
}

/* After the socket was read: without the writer, flush; with it, start a batch when none is in
 * flight and there is something to answer or to write, or a journal short of space is due to be
 * tried again (its records are still queued). */
static int pump(nf_smd *s, nf_diag *diag) {
    if (!s->threaded) return flush(s, diag);
    bool retry = s->no_space && mono_ms() >= s->space_retry_ms;
    if (s->in_flight) return NF_OK;
    if (!s->n_out && !s->unsynced && !s->log_rc && !retry) {
        s->n_taken = 0; /* datagrams that asked for nothing (dropped): a new batch */
        return NF_OK;
    }
    return start_batch(s, diag);
}

static void wake(nf_smd *s) {
    char b[64];
    ssize_t n;
    while ((n = read(s->o.wake_fd, b, sizeof b)) > 0)
        for (ssize_t i = 0; i < n; i++) {
            if (b[i] == 'T') s->stop = true;
            if (b[i] == 'H') want_dump(s, NULL, NULL);
        }
}

/* Reads and answers what is waiting on the socket: batches of BATCH datagrams until the socket
 * is empty, MAX_GATHER datagrams were read for the batch being gathered, or TAKE_SLICE_NS passed
 * (so a durable batch's replies do not wait behind a long run of slow requests). One sync then
 * covers them all: under load the requests that arrived while the previous batch was being written
 * share the next, however many clients sent them; MAX_GATHER bounds the answers held per batch. */
static void take(nf_smd *s) {
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    struct mmsghdr msg[BATCH];
    struct iovec iov[BATCH];
    struct sockaddr_in from[BATCH];
    while (s->n_taken < MAX_GATHER) {
        for (unsigned k = 0; k < BATCH; k++) {
            iov[k] = (struct iovec){.iov_base = s->rx[k], .iov_len = sizeof s->rx[k]};
            msg[k] = (struct mmsghdr){.msg_hdr = {.msg_name = &from[k],
                                                  .msg_namelen = sizeof from[k],
                                                  .msg_iov = &iov[k],
                                                  .msg_iovlen = 1}};
        }
        int got = recvmmsg(s->fd, msg, BATCH, MSG_DONTWAIT, NULL);
        if (got < 0 && errno == EINTR) continue;
        if (got <= 0) return;
        for (int k = 0; k < got; k++) {
            size_t len = msg[k].msg_len;
            if (msg[k].msg_hdr.msg_flags & MSG_TRUNC) len = NF_MAD_SIZE + 1;
            if (msg[k].msg_hdr.msg_namelen != sizeof from[k]) continue;
            handle(s, &from[k], s->rx[k], len);
        }
        s->n_taken += (unsigned)got;
        if (got < BATCH) return;
        clock_gettime(CLOCK_MONOTONIC, &t1);
        if ((t1.tv_sec - t0.tv_sec) * 1000000000L + (t1.tv_nsec - t0.tv_nsec) > TAKE_SLICE_NS)
            return; /* slow requests (routes): the loop sees the writer's news in between */
    }
}

/* The loop: timers, the socket, the wake-up pipe and the writer's word that a batch is durable. */
static int serve(nf_smd *s, nf_diag *diag) {
    while (!s->stop) {
        uint64_t now = mono_ms();
        nf_mcgm_tick(s->m, now);
        expire_transfers(s, now);
        reap_dump(s);
        uint64_t next = nf_mcgm_next_deadline(s->m);
        int timeout = next == UINT64_MAX ? -1
                      : next <= now      ? 0
                                         : (int)(next - now > 60000 ? 60000 : next - now);
        for (unsigned i = 0; i < MAX_TRANSFERS; i++)
            if (s->xfer[i].used) {
                uint64_t left = s->xfer[i].idle_until > now ? s->xfer[i].idle_until - now : 0;
                if (timeout < 0 || left < (uint64_t)timeout) timeout = (int)left;
            }
        if (s->dump_pid && (timeout < 0 || timeout > 20)) timeout = 20;
        if (s->no_space) {
            uint64_t left = s->space_retry_ms > now ? s->space_retry_ms - now : 0;
            if (timeout < 0 || left < (uint64_t)timeout) timeout = (int)left;
        }
        if (((s->n_out || s->unsynced) && !s->in_flight) || s->log_rc) timeout = 0;
        /* a full batch waits for the one in flight: the socket's queue holds the rest */
        bool full = s->n_taken >= MAX_GATHER;
        struct pollfd p[3] = {{.fd = s->fd, .events = full ? 0 : POLLIN},
                              {.fd = s->o.wake_fd, .events = POLLIN},
                              {.fd = s->in_flight ? s->done_fd[0] : -1, .events = POLLIN}};
        int r = poll(p, 3, timeout);
        if (r < 0 && errno != EINTR) return nf__fail(diag, NF_EIO, "poll: %s", strerror(errno));
        if (r > 0 && s->o.wake_fd >= 0 && (p[1].revents & (POLLIN | POLLHUP))) wake(s);
        int rc;
        if (r > 0 && s->in_flight && (p[2].revents & POLLIN) &&
            (rc = end_batch(s, false, true, diag)))
            return rc;
        if (r > 0 && (p[0].revents & POLLIN)) take(s);
        if ((rc = pump(s, diag))) return rc;
    }
    return NF_OK;
}

int nf_smd_run(nf_smd *s, nf_diag *diag) {
    if (s->o.wake_fd >= 0) fcntl(s->o.wake_fd, F_SETFL, fcntl(s->o.wake_fd, F_GETFL) | O_NONBLOCK);
    if (s->j) writer_start(s); /* without it, each batch is synced in place */
    int rc = serve(s, diag);
    nf_diag later; /* a failure after the first is not reported */
    int e = end_batch(s, true, rc == NF_OK, rc ? &later : diag); /* the batch in flight, if any */
    if (!rc) rc = e;
    if (!rc) rc = flush(s, diag);
    writer_stop(s);
    end_dump(s); /* a dump in progress: finished, or killed after a grace period */
    return rc;
}

/* ---- the client ----------------------------------------------------------------------------- */

struct nf_smc {
    int fd;
    uint64_t tid;
    uint64_t refused, heard; /* receives refused (nobody listens) and datagrams received */
};

/* A request that got no answer: NF_EREFUSED when, since the counts were refused0 and heard0,
 * the server's host refused datagrams and nothing came from it, else NF_ETIMEDOUT. */
static int no_answer(const nf_smc *c, uint64_t refused0, uint64_t heard0) {
    return c->refused > refused0 && c->heard == heard0 ? NF_EREFUSED : NF_ETIMEDOUT;
}

int nf_smc_open(const char *server, nf_smc **out, nf_diag *diag) {
    *out = NULL;
    struct sockaddr_in addr;
    if (parse_addr(server, &addr))
        return nf__fail(diag, NF_EINVAL, "bad server address '%s' (want ADDR:PORT)",
                        server ? server : "");
    nf_smc *c = nf__calloc(1, sizeof *c);
    if (!c) return NF_ENOMEM;
    c->fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (c->fd < 0 || connect(c->fd, (struct sockaddr *)&addr, sizeof addr)) {
        int rc = nf__fail(diag, NF_EIO, "%s: %s", server, strerror(errno));
        if (c->fd >= 0) close(c->fd);
        nf__free(c);
        return rc;
    }
    int big = 4 << 20;
    if (setsockopt(c->fd, SOL_SOCKET, SO_RCVBUFFORCE, &big, sizeof big))
        setsockopt(c->fd, SOL_SOCKET, SO_RCVBUF, &big, sizeof big);
    /* transaction ids start from the clock and the pid, so two clients' ids differ */
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    c->tid = nf__hash64((uint64_t)ts.tv_nsec ^ (uint64_t)ts.tv_sec << 30 ^ (uint64_t)getpid());
    *out = c;
    return NF_OK;
}

void nf_smc_close(nf_smc *c) {
    if (!c) return;
    close(c->fd);
    nf__free(c);
}

int nf_smc_fd(const nf_smc *c) { return c->fd; }
uint64_t nf_smc_next_tid(nf_smc *c) { return ++c->tid; }

void nf_smc_request(nf_mad *m, uint8_t method, uint16_t attr, uint64_t tid) {
    memset(m, 0, sizeof *m);
    m->base_version = NF_MAD_BASE_VERSION;
    m->mgmt_class = NF_MAD_CLASS_SA;
    m->class_version = NF_SA_CLASS_VERSION;
    m->method = method;
    m->tid = tid;
    m->attr_id = attr;
}

int nf_smc_send(nf_smc *c, const nf_mad *m) {
    uint8_t b[NF_MAD_SIZE];
    nf_mad_encode(m, b);
    for (;;) {
        ssize_t n = send(c->fd, b, sizeof b, 0);
        if (n == (ssize_t)sizeof b) return NF_OK;
        if (n < 0 && errno == EINTR) continue;
        /* ECONNREFUSED: nobody listens (yet); the datagram is lost like any other */
        if (n < 0 && (errno == ECONNREFUSED || errno == EAGAIN || errno == ENOBUFS)) return NF_OK;
        return NF_EIO;
    }
}

int nf_smc_recv(nf_smc *c, int timeout_ms, nf_mad *out) {
    uint8_t b[NF_MAD_SIZE + 1];
    for (;;) {
        struct pollfd p = {.fd = c->fd, .events = POLLIN};
        int r = poll(&p, 1, timeout_ms);
        if (r < 0 && errno == EINTR) continue;
        if (r < 0) return NF_EIO;
        if (r == 0) return NF_ETIMEDOUT;
        ssize_t n = recv(c->fd, b, sizeof b, MSG_DONTWAIT);
        if (n < 0 && (errno == EINTR || errno == EAGAIN || errno == ECONNREFUSED)) {
            if (errno == ECONNREFUSED) { /* as if lost; the request calls say it at the end */
                c->refused++;
                return NF_ETIMEDOUT;
            }
            continue;
        }
        if (n < 0) return NF_EIO;
        c->heard++;
        return nf_mad_decode(b, (size_t)n, out) == NF_OK ? NF_OK : NF_EPARSE;
    }
}

static void opts_of(const nf_smc_opts *o, uint32_t *timeout, uint32_t *retries) {
    *timeout = o && o->timeout_ms ? o->timeout_ms : 200;
    *retries = o && (o->timeout_ms || o->retries) ? o->retries : 10;
}

/* Sends q until an answer with its transaction id arrives. */
static int exchange(nf_smc *c, const nf_smc_opts *o, const nf_mad *q, nf_mad *a) {
    uint32_t timeout, retries;
    opts_of(o, &timeout, &retries);
    uint64_t refused0 = c->refused, heard0 = c->heard;
    for (uint32_t attempt = 0; attempt <= retries; attempt++) {
        int rc = nf_smc_send(c, q);
        if (rc) return rc;
        uint64_t until = mono_ms() + timeout;
        for (;;) {
            uint64_t now = mono_ms();
            if (now >= until) break;
            rc = nf_smc_recv(c, (int)(until - now), a);
            if (rc == NF_ETIMEDOUT) break;
            if (rc == NF_EIO) return rc;
            if (rc == NF_OK && a->tid == q->tid && (a->method & 0x80)) return NF_OK;
            /* a stale answer to an earlier attempt of another request, or garbage: ignore */
        }
    }
    return no_answer(c, refused0, heard0);
}

static int member_request(nf_smc *c, const nf_smc_opts *o, uint8_t method, const nf_gid *mgid,
                          const nf_gid *port_gid, uint32_t count, uint16_t *status,
                          nf_mcmember_rec *answer) {
    nf_mad q, a;
    nf_smc_request(&q, method, NF_SA_ATTR_MCMEMBER, nf_smc_next_tid(c));
    nf_mcmember_rec r = {
        .mgid = *mgid, .port_gid = *port_gid, .join_state = NF_JOIN_FULL, .member_count = count};
    q.comp_mask = 0x3 | 1u << 16; /* the IBA bits of MGID, PortGID, JoinState */
    q.sm_key = o ? o->sm_key : 0;
    nf_mcmember_encode(&r, q.data);
    int rc = exchange(c, o, &q, &a);
    if (rc) return rc;
    *status = a.status;
    if (answer) nf_mcmember_decode(a.data, answer);
    return NF_OK;
}

int nf_smc_join(nf_smc *c, const nf_smc_opts *o, const nf_gid *mgid, const nf_gid *port_gid,
                uint32_t member_count, uint16_t *status, nf_mcmember_rec *answer) {
    return member_request(c, o, NF_MAD_SET, mgid, port_gid, member_count, status, answer);
}

int nf_smc_leave(nf_smc *c, const nf_smc_opts *o, const nf_gid *mgid, const nf_gid *port_gid,
                 uint16_t *status, nf_mcmember_rec *answer) {
    return member_request(c, o, NF_MAD_DELETE, mgid, port_gid, 0, status, answer);
}

int nf_smc_state(nf_smc *c, const nf_smc_opts *o, const nf_gid *mgid, uint16_t *status,
                 nf_mcgstate_rec *answer) {
    nf_mad q, a;
    nf_smc_request(&q, NF_MAD_GET, NF_SA_ATTR_MCGSTATE, nf_smc_next_tid(c));
    q.sm_key = o ? o->sm_key : 0;
    nf_mcgstate_rec r = {.mgid = *mgid};
    nf_mcgstate_encode(&r, q.data);
    int rc = exchange(c, o, &q, &a);
    if (rc) return rc;
    *status = a.status;
    if (answer) nf_mcgstate_decode(a.data, answer);
    return NF_OK;
}

int nf_smc_dump(nf_smc *c, const nf_smc_opts *o, uint16_t *status) {
    nf_mad q, a;
    nf_smc_request(&q, NF_MAD_GET, NF_SA_ATTR_DUMP, nf_smc_next_tid(c));
    q.sm_key = o ? o->sm_key : 0;
    int rc = exchange(c, o, &q, &a);
    if (rc == NF_OK) *status = a.status;
    return rc;
}

/* GetTable under RMPP (docs/protocol.md, "GetTable responses"): the request until segment 1
 * comes, then an ACK of the segments held in order that asks for the next window, until the
 * last. A window that does not arrive whole within the timeout is asked for again by the same
 * ACK; after the retries the request fails. */
int nf_smc_table(nf_smc *c, const nf_smc_opts *o, uint16_t *status, nf_mcgstate_rec **out,
                 size_t *n) {
    *out = NULL;
    *n = 0;
    uint32_t timeout, retries;
    opts_of(o, &timeout, &retries);
    uint32_t window = o && o->window ? o->window : 32;
    nf_mad q, a, ack;
    nf_smc_request(&q, NF_MAD_GETTABLE, NF_SA_ATTR_MCGSTATE, nf_smc_next_tid(c));
    q.sm_key = o ? o->sm_key : 0;
    nf_mcgstate_rec *recs = NULL;
    uint8_t *have = NULL;
    size_t total = 0;
    uint32_t segs = 0, upto = 0, asked = 0; /* segments: all, held in order, asked for */
    int rc = NF_ETIMEDOUT;
    uint64_t refused0 = c->refused, heard0 = c->heard;
    for (uint32_t attempt = 0; attempt <= retries;) {
        if (segs == 0) {
            rc = nf_smc_send(c, &q);
        } else {
            nf_smc_request(&ack, NF_MAD_GETTABLE_RESP, NF_SA_ATTR_MCGSTATE, q.tid);
            ack.sm_key = q.sm_key;
            ack.rmpp_version = 1;
            ack.rmpp_type = NF_RMPP_TYPE_ACK;
            ack.rmpp_flags = NF_RMPP_FLAG_ACTIVE;
            ack.rmpp_data1 = upto;
            asked = upto + window < segs ? upto + window : segs;
            ack.rmpp_data2 = asked;
            rc = nf_smc_send(c, &ack);
            if (rc == NF_OK && upto == segs) break; /* the final acknowledgement: done */
        }
        if (rc) break;
        rc = NF_ETIMEDOUT;
        bool progress = false;
        uint64_t until = mono_ms() + timeout;
        while (segs == 0 || upto < asked) {
            uint64_t now = mono_ms();
            if (now >= until) break;
            int r = nf_smc_recv(c, (int)(until - now), &a);
            if (r == NF_ETIMEDOUT) break;
            if (r == NF_EIO) {
                rc = r;
                goto out;
            }
            if (r || a.tid != q.tid || a.method != NF_MAD_GETTABLE_RESP) continue;
            if (a.status) { /* an error answer is one datagram */
                *status = a.status;
                rc = NF_OK;
                goto out;
            }
            if (a.rmpp_type != NF_RMPP_TYPE_DATA || a.rmpp_data1 == 0) continue;
            if (segs == 0) {
                if (!(a.rmpp_flags & NF_RMPP_FLAG_FIRST) || a.rmpp_data1 != 1 ||
                    a.rmpp_data2 % NF_MCGSTATE_SIZE)
                    continue;
                total = a.rmpp_data2 / NF_MCGSTATE_SIZE;
                segs = total ? (uint32_t)((total + NF_MCGSTATE_PER_SEGMENT - 1) /
                                          NF_MCGSTATE_PER_SEGMENT)
                             : 1;
                recs = nf__calloc(total + 1, sizeof *recs);
                have = nf__calloc((size_t)segs + 1, 1);
                if (!recs || !have) {
                    rc = NF_ENOMEM;
                    goto out;
                }
                asked = 1;
            }
            size_t k = a.rmpp_data1 - 1;
            if (k >= segs || have[k]) continue;
            size_t first = k * NF_MCGSTATE_PER_SEGMENT, here = total - first;
            if (here > NF_MCGSTATE_PER_SEGMENT) here = NF_MCGSTATE_PER_SEGMENT;
            for (size_t i = 0; i < here; i++)
                nf_mcgstate_decode(a.data + i * NF_MCGSTATE_SIZE, &recs[first + i]);
            have[k] = 1;
            while (upto < segs && have[upto])
                upto++;
            progress = true;
            until = mono_ms() + timeout;
        }
        if (progress)
            attempt = 0; /* the server is there: retries count windows that made no progress */
        else
            attempt++;
    }
    if (segs && upto == segs && rc == NF_OK) {
        *status = NF_MAD_STATUS_OK;
        *out = recs;
        *n = total;
        nf__free(have);
        return NF_OK;
    }
    if (rc == NF_OK || rc == NF_ETIMEDOUT) rc = no_answer(c, refused0, heard0);
out:
    nf__free(recs);
    nf__free(have);
    return rc;
}
