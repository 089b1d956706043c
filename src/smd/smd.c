/* The group manager service and its client (smd.h). The server loop: wait (poll) for datagrams,
 * the wake-up pipe or the next group deadline; expire deadlines; read a batch of datagrams and
 * answer each into a reply batch; make the journal durable; only then send the replies. So an
 * acknowledged event is always on disk, and a crash loses only events nobody was told about.
 * Answers to requests that change state are kept by (source, transaction id) in a ring, so a
 * retransmission gets the same answer instead of a second application. */
#define _GNU_SOURCE /* recvmmsg, sendmmsg */
#include "netfab/smd.h"

#include "netfab/journal.h"
#include "util/diag.h"
#include "util/mem.h"
#include "util/u64map.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define BATCH 64              /* datagrams read per poll wake-up */
#define CACHE_SLOTS 16384     /* answers kept for retransmissions */
#define COMPACT_MIN (1 << 20) /* journal bytes before a compaction is considered */

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
    uint8_t mad[NF_MAD_SIZE];
    bool used;
} cached;

typedef struct reply {
    struct sockaddr_in to;
    uint8_t mad[NF_MAD_SIZE];
} reply;

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
    cached *cache;
    uint32_t cache_next;
    nf__u64map cache_map;
    reply *out;
    size_t n_out, cap_out;
    nf_mcgstate_rec *table;
    size_t cap_table;
    uint8_t rx[BATCH][NF_MAD_SIZE + 1]; /* a batch in; one byte more: oversized datagrams show */
    bool stop;
    nf_smd_stats st;
};

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

void nf_smd_free(nf_smd *s) {
    if (!s) return;
    if (s->fd >= 0) close(s->fd);
    nf_journal_close(s->j);
    nf_mcgm_free(s->m);
    nf__free(s->cache);
    nf__u64map_fini(&s->cache_map);
    nf__free(s->out);
    nf__free(s->table);
    nf__free(s->dump_prefix);
    nf__free(s);
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
    int rc;
    struct sockaddr_in addr;
    if (parse_addr(opts->listen, &addr)) {
        rc = nf__fail(diag, NF_EINVAL,
                      "bad listen address '%s' (want ADDR:PORT, ADDR an IPv4 address)",
                      opts->listen ? opts->listen : "");
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
    if (opts->state_dir) {
        if ((rc = nf_journal_open(opts->state_dir, &s->j, diag))) goto bad;
        uint64_t torn = 0;
        rc = nf_journal_replay(s->j, replay_one, s, &torn, diag);
        s->st.torn_bytes = torn;
        if (rc) {
            nf__fail(diag, rc,
                     "%s/journal: record %llu does not replay (%s): a journal of another fabric or "
                     "engine state?",
                     opts->state_dir, (unsigned long long)s->st.replayed, nf_strerror(rc));
            goto bad;
        }
        if ((rc = nf_mcgm_replay_done(s->m, mono_ms()))) goto bad;
        if ((rc = compact(s))) {
            nf__fail(diag, rc, "%s: cannot compact the journal: %s", opts->state_dir,
                     nf_strerror(rc));
            goto bad;
        }
        s->st.journal_records = 0;
    }
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

/* Writes PREFIX.mcfdbs and PREFIX.groups through temporary files renamed into place. */
int nf_smd_dump(nf_smd *s, nf_diag *diag) {
    size_t n = strlen(s->dump_prefix) + 16;
    char *a = nf__malloc(n), *b = nf__malloc(n), *at = nf__malloc(n), *bt = nf__malloc(n);
    int rc = NF_ENOMEM;
    FILE *fa = NULL, *fb = NULL;
    if (!a || !b || !at || !bt) goto done;
    snprintf(a, n, "%s.mcfdbs", s->dump_prefix);
    snprintf(b, n, "%s.groups", s->dump_prefix);
    snprintf(at, n, "%s.mcfdbs.tmp", s->dump_prefix);
    snprintf(bt, n, "%s.groups.tmp", s->dump_prefix);
    fa = fopen(at, "w");
    fb = fopen(bt, "w");
    if (!fa || !fb) {
        rc = nf__fail(diag, NF_EIO, "%s: %s", !fa ? at : bt, strerror(errno));
        goto done;
    }
    rc = nf_mcgm_write_dump(s->m, fa, fb);
    if (fclose(fa)) rc = rc ? rc : NF_EIO;
    if (fclose(fb)) rc = rc ? rc : NF_EIO;
    fa = fb = NULL;
    if (!rc && (rename(at, a) || rename(bt, b))) rc = NF_EIO;
    if (rc)
        nf__fail(diag, rc, "cannot write the dump %s.*: %s", s->dump_prefix, nf_strerror(rc));
    else
        say(s, "dumped the live tables to %s and %s", a, b);
done:
    if (fa) fclose(fa);
    if (fb) fclose(fb);
    nf__free(a);
    nf__free(b);
    nf__free(at);
    nf__free(bt);
    return rc;
}

/* ---- answering ------------------------------------------------------------------------------ */

static reply *new_reply(nf_smd *s, const struct sockaddr_in *to) {
    if (NF_GROW(s->out, s->cap_out, s->n_out + 1)) return NULL;
    reply *r = &s->out[s->n_out++];
    r->to = *to;
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

static void cache_put(nf_smd *s, const struct sockaddr_in *from, uint64_t tid, const uint8_t *mad) {
    cached *c = &s->cache[s->cache_next];
    if (c->used) nf__u64map_del(&s->cache_map, c->key);
    uint64_t key = cache_key(from, tid);
    if (nf__u64map_put(&s->cache_map, key, s->cache_next)) { /* out of memory: just not kept */
        c->used = false;
        return;
    }
    c->key = key;
    c->ip = from->sin_addr.s_addr;
    c->port = from->sin_port;
    c->tid = tid;
    memcpy(c->mad, mad, NF_MAD_SIZE);
    c->used = true;
    s->cache_next = (s->cache_next + 1) % CACHE_SLOTS;
}

static void send_one(nf_smd *s, const struct sockaddr_in *to, const nf_mad *a, bool keep) {
    reply *r = new_reply(s, to);
    if (!r) return; /* out of memory: the client will retransmit */
    nf_mad_encode(a, r->mad);
    if (keep) cache_put(s, to, a->tid, r->mad);
    if (a->status) s->st.errors++;
    s->st.answered++;
}

static void do_member(nf_smd *s, const struct sockaddr_in *from, const nf_mad *q, bool join) {
    nf_mcmember_rec rec;
    nf_mcmember_decode(q->data, &rec);
    uint64_t now = mono_ms();
    nf_mcgstate_rec g;
    uint16_t st;
    if (join && !(rec.join_state & NF_JOIN_FULL))
        st = NF_SA_STATUS_REQ_INVALID; /* only full members count towards MemberCount */
    else if (join)
        st = nf_mcgm_join(s->m, &rec.mgid, nf_gid_guid(&rec.port_gid), rec.member_count, now, &g);
    else
        st = nf_mcgm_leave(s->m, &rec.mgid, nf_gid_guid(&rec.port_gid), now, &g);
    nf_mad a;
    answer_of(q, join ? NF_MAD_GET_RESP : NF_MAD_DELETE_RESP, st, &a);
    if (st == NF_MAD_STATUS_OK || st == NF_SA_STATUS_DENIED) {
        rec.mlid = g.mlid;
        rec.member_count = g.member_count;
    }
    nf_mcmember_encode(&rec, a.data);
    send_one(s, from, &a, true);
}

static void do_state(nf_smd *s, const struct sockaddr_in *from, const nf_mad *q) {
    nf_mcgstate_rec rec, g;
    nf_mcgstate_decode(q->data, &rec);
    nf_mad a;
    answer_of(q, NF_MAD_GET_RESP, nf_mcgm_query(s->m, &rec.mgid, &g), &a);
    nf_mcgstate_encode(&g, a.data);
    send_one(s, from, &a, false);
}

/* GetTable: every group, NF_MCGSTATE_PER_SEGMENT records per datagram (RMPP DATA segments). */
static void do_table(nf_smd *s, const struct sockaddr_in *from, const nf_mad *q) {
    size_t n = nf_mcgm_list(s->m, NULL, 0);
    if (n > s->cap_table) {
        nf_mcgstate_rec *t = nf__realloc(s->table, n * sizeof *t);
        if (!t) {
            nf_mad a;
            answer_of(q, NF_MAD_GETTABLE_RESP, NF_SA_STATUS_NO_RESOURCES, &a);
            send_one(s, from, &a, false);
            return;
        }
        s->table = t;
        s->cap_table = n;
    }
    n = nf_mcgm_list(s->m, s->table, n);
    size_t segs = n ? (n + NF_MCGSTATE_PER_SEGMENT - 1) / NF_MCGSTATE_PER_SEGMENT : 1;
    for (size_t k = 0; k < segs; k++) {
        nf_mad a;
        answer_of(q, NF_MAD_GETTABLE_RESP, NF_MAD_STATUS_OK, &a);
        a.rmpp_version = 1;
        a.rmpp_type = NF_RMPP_TYPE_DATA;
        a.rmpp_flags = NF_RMPP_FLAG_ACTIVE | (k == 0 ? NF_RMPP_FLAG_FIRST : 0) |
                       (k + 1 == segs ? NF_RMPP_FLAG_LAST : 0);
        a.rmpp_data1 = (uint32_t)(k + 1);
        size_t first = k * NF_MCGSTATE_PER_SEGMENT, here = n - first;
        if (here > NF_MCGSTATE_PER_SEGMENT) here = NF_MCGSTATE_PER_SEGMENT;
        if (!n) here = 0;
        a.rmpp_data2 = (uint32_t)(k == 0 ? n * NF_MCGSTATE_SIZE : here * NF_MCGSTATE_SIZE);
        a.attr_offset = NF_MCGSTATE_SIZE / 8;
        memset(a.data, 0, sizeof a.data);
        for (size_t i = 0; i < here; i++)
            nf_mcgstate_encode(&s->table[first + i], a.data + i * NF_MCGSTATE_SIZE);
        send_one(s, from, &a, false);
    }
}

static void handle(nf_smd *s, const struct sockaddr_in *from, const uint8_t *buf, size_t len) {
    s->st.datagrams++;
    nf_mad q;
    int rc = nf_mad_decode(buf, len, &q);
    if (rc == NF_EPARSE || (q.method & 0x80)) { /* no header, or an answer: never answer it */
        s->st.dropped++;
        return;
    }
    nf_mad a;
    uint8_t resp = q.method == NF_MAD_DELETE                          ? NF_MAD_DELETE_RESP
                   : q.method == NF_MAD_GETTABLE                      ? NF_MAD_GETTABLE_RESP
                   : q.method == NF_MAD_GET || q.method == NF_MAD_SET ? NF_MAD_GET_RESP
                                                                      : (uint8_t)(q.method | 0x80);
    if (q.base_version != NF_MAD_BASE_VERSION || q.mgmt_class != NF_MAD_CLASS_SA ||
        q.class_version != NF_SA_CLASS_VERSION) {
        answer_of(&q, resp, NF_MAD_STATUS_BAD_VERSION, &a);
        send_one(s, from, &a, false);
        return;
    }
    if (rc == NF_ERANGE) { /* a truncated or oversized datagram */
        answer_of(&q, resp, NF_MAD_STATUS_INVALID_FIELD, &a);
        send_one(s, from, &a, false);
        return;
    }
    const cached *c = cache_find(s, from, q.tid);
    if (c && (q.method == NF_MAD_SET || q.method == NF_MAD_DELETE)) {
        reply *r = new_reply(s, from);
        if (r) memcpy(r->mad, c->mad, NF_MAD_SIZE);
        s->st.retransmits++;
        return;
    }
    bool known_method = q.method == NF_MAD_GET || q.method == NF_MAD_SET ||
                        q.method == NF_MAD_DELETE || q.method == NF_MAD_GETTABLE;
    if (!known_method) {
        answer_of(&q, resp, NF_MAD_STATUS_BAD_METHOD, &a);
        send_one(s, from, &a, false);
    } else if (q.attr_id == NF_SA_ATTR_MCMEMBER && q.method == NF_MAD_SET) {
        do_member(s, from, &q, true);
    } else if (q.attr_id == NF_SA_ATTR_MCMEMBER && q.method == NF_MAD_DELETE) {
        do_member(s, from, &q, false);
    } else if (q.attr_id == NF_SA_ATTR_MCGSTATE && q.method == NF_MAD_GET) {
        do_state(s, from, &q);
    } else if (q.attr_id == NF_SA_ATTR_MCGSTATE && q.method == NF_MAD_GETTABLE) {
        do_table(s, from, &q);
    } else if (q.attr_id == NF_SA_ATTR_DUMP && q.method == NF_MAD_GET) {
        nf_diag d;
        int drc = nf_smd_dump(s, &d);
        if (drc) say(s, "%s", d.msg);
        answer_of(&q, resp, drc ? NF_SA_STATUS_NO_RESOURCES : NF_MAD_STATUS_OK, &a);
        memset(a.data, 0, sizeof a.data); /* a dump answer carries no data */
        send_one(s, from, &a, false);
    } else {
        answer_of(&q, resp, NF_MAD_STATUS_BAD_ATTR, &a);
        send_one(s, from, &a, false);
    }
}

/* ---- the loop ------------------------------------------------------------------------------- */

/* Makes the journal durable, then sends the replies. A journal that cannot be written stops the
 * server before anything it holds is acknowledged. */
static int flush(nf_smd *s, nf_diag *diag) {
    if (s->j) {
        if (s->log_rc)
            return nf__fail(diag, NF_EIO, "%s/journal: cannot queue a record: %s", s->o.state_dir,
                            nf_strerror(s->log_rc));
        int rc = nf_journal_sync(s->j);
        if (rc)
            return nf__fail(diag, NF_EIO, "%s/journal: cannot write: %s", s->o.state_dir,
                            nf_strerror(rc));
        s->st.journal_syncs++;
    }
    for (size_t i = 0; i < s->n_out;) {
        struct mmsghdr msg[BATCH];
        struct iovec iov[BATCH];
        unsigned k = 0;
        for (; k < BATCH && i + k < s->n_out; k++) {
            iov[k] = (struct iovec){.iov_base = s->out[i + k].mad, .iov_len = NF_MAD_SIZE};
            msg[k] = (struct mmsghdr){.msg_hdr = {.msg_name = &s->out[i + k].to,
                                                  .msg_namelen = sizeof s->out[i + k].to,
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
            i += k; /* a reply that cannot go is a lost datagram: the client retransmits */
            continue;
        }
        i += (size_t)sent;
    }
    s->n_out = 0;
    if (s->j && nf_journal_bytes(s->j) > COMPACT_MIN &&
        nf_journal_bytes(s->j) > 4 * s->compacted_bytes) {
        int rc = compact(s);
        if (rc)
            say(s, "journal compaction failed (%s); the journal keeps growing", nf_strerror(rc));
    }
    return NF_OK;
}

static void wake(nf_smd *s, nf_diag *diag) {
    char b[64];
    ssize_t n;
    while ((n = read(s->o.wake_fd, b, sizeof b)) > 0)
        for (ssize_t i = 0; i < n; i++) {
            if (b[i] == 'T') s->stop = true;
            if (b[i] == 'H') nf_smd_dump(s, diag);
        }
}

int nf_smd_run(nf_smd *s, nf_diag *diag) {
    if (s->o.wake_fd >= 0) fcntl(s->o.wake_fd, F_SETFL, fcntl(s->o.wake_fd, F_GETFL) | O_NONBLOCK);
    while (!s->stop) {
        uint64_t now = mono_ms();
        nf_mcgm_tick(s->m, now);
        uint64_t next = nf_mcgm_next_deadline(s->m);
        int timeout = next == UINT64_MAX ? -1
                      : next <= now      ? 0
                                         : (int)(next - now > 60000 ? 60000 : next - now);
        if (s->n_out || s->log_rc) timeout = 0;
        struct pollfd p[2] = {{.fd = s->fd, .events = POLLIN},
                              {.fd = s->o.wake_fd, .events = POLLIN}};
        int np = s->o.wake_fd >= 0 ? 2 : 1;
        int r = poll(p, (nfds_t)np, timeout);
        if (r < 0 && errno != EINTR) return nf__fail(diag, NF_EIO, "poll: %s", strerror(errno));
        if (r > 0 && np == 2 && (p[1].revents & (POLLIN | POLLHUP))) wake(s, diag);
        if (r > 0 && (p[0].revents & POLLIN)) {
            struct mmsghdr msg[BATCH];
            struct iovec iov[BATCH];
            struct sockaddr_in from[BATCH];
            for (unsigned k = 0; k < BATCH; k++) {
                iov[k] = (struct iovec){.iov_base = s->rx[k], .iov_len = sizeof s->rx[k]};
                msg[k] = (struct mmsghdr){.msg_hdr = {.msg_name = &from[k],
                                                      .msg_namelen = sizeof from[k],
                                                      .msg_iov = &iov[k],
                                                      .msg_iovlen = 1}};
            }
            int got = recvmmsg(s->fd, msg, BATCH, MSG_DONTWAIT, NULL);
            for (int k = 0; k < got; k++) {
                size_t len = msg[k].msg_len;
                if (msg[k].msg_hdr.msg_flags & MSG_TRUNC) len = NF_MAD_SIZE + 1;
                if (msg[k].msg_hdr.msg_namelen != sizeof from[k]) continue;
                handle(s, &from[k], s->rx[k], len);
            }
        }
        int rc = flush(s, diag);
        if (rc) return rc;
    }
    return flush(s, diag);
}

/* ---- the client ----------------------------------------------------------------------------- */

struct nf_smc {
    int fd;
    uint64_t tid;
};

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
            if (errno == ECONNREFUSED) return NF_ETIMEDOUT; /* as if lost */
            continue;
        }
        if (n < 0) return NF_EIO;
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
    return NF_ETIMEDOUT;
}

static int member_request(nf_smc *c, const nf_smc_opts *o, uint8_t method, const nf_gid *mgid,
                          const nf_gid *port_gid, uint32_t count, uint16_t *status,
                          nf_mcmember_rec *answer) {
    nf_mad q, a;
    nf_smc_request(&q, method, NF_SA_ATTR_MCMEMBER, nf_smc_next_tid(c));
    nf_mcmember_rec r = {
        .mgid = *mgid, .port_gid = *port_gid, .join_state = NF_JOIN_FULL, .member_count = count};
    q.comp_mask = 0x3 | 1u << 16; /* the IBA bits of MGID, PortGID, JoinState */
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
    int rc = exchange(c, o, &q, &a);
    if (rc == NF_OK) *status = a.status;
    return rc;
}

/* GetTable: collect segments 1..last; any gap after the timeout sends the request again. */
int nf_smc_table(nf_smc *c, const nf_smc_opts *o, uint16_t *status, nf_mcgstate_rec **out,
                 size_t *n) {
    *out = NULL;
    *n = 0;
    uint32_t timeout, retries;
    opts_of(o, &timeout, &retries);
    nf_mad q, a;
    nf_smc_request(&q, NF_MAD_GETTABLE, NF_SA_ATTR_MCGSTATE, nf_smc_next_tid(c));
    for (uint32_t attempt = 0; attempt <= retries; attempt++) {
        int rc = nf_smc_send(c, &q);
        if (rc) return rc;
        size_t total = SIZE_MAX, got_segs = 0, segs = SIZE_MAX;
        nf_mcgstate_rec *recs = NULL;
        uint8_t *have = NULL;
        uint64_t until = mono_ms() + timeout;
        while (got_segs < segs) {
            uint64_t now = mono_ms();
            if (now >= until) break;
            rc = nf_smc_recv(c, (int)(until - now), &a);
            if (rc == NF_ETIMEDOUT) break;
            if (rc == NF_EIO) {
                free(recs);
                free(have);
                return rc;
            }
            if (rc || a.tid != q.tid || a.method != NF_MAD_GETTABLE_RESP) continue;
            if (a.status) { /* an error answer is one datagram */
                free(recs);
                free(have);
                *status = a.status;
                return NF_OK;
            }
            if (a.rmpp_type != NF_RMPP_TYPE_DATA || a.rmpp_data1 == 0) continue;
            if ((a.rmpp_flags & NF_RMPP_FLAG_FIRST) && total == SIZE_MAX) {
                if (a.rmpp_data2 % NF_MCGSTATE_SIZE) continue;
                total = a.rmpp_data2 / NF_MCGSTATE_SIZE;
                segs = total ? (total + NF_MCGSTATE_PER_SEGMENT - 1) / NF_MCGSTATE_PER_SEGMENT : 1;
                recs = calloc(total + 1, sizeof *recs);
                have = calloc(segs + 1, 1);
                if (!recs || !have) {
                    free(recs);
                    free(have);
                    return NF_ENOMEM;
                }
                until = mono_ms() + timeout; /* a large table: time per segment, not in all */
            }
            if (total == SIZE_MAX) {
                /* a later segment before the first: its records wait for the next attempt */
                continue;
            }
            size_t k = a.rmpp_data1 - 1;
            if (k >= segs || have[k]) continue;
            size_t first = k * NF_MCGSTATE_PER_SEGMENT, here = total - first;
            if (here > NF_MCGSTATE_PER_SEGMENT) here = NF_MCGSTATE_PER_SEGMENT;
            for (size_t i = 0; i < here; i++)
                nf_mcgstate_decode(a.data + i * NF_MCGSTATE_SIZE, &recs[first + i]);
            have[k] = 1;
            got_segs++;
            until = mono_ms() + timeout;
        }
        free(have);
        if (total != SIZE_MAX && got_segs == segs) {
            *status = NF_MAD_STATUS_OK;
            *out = recs;
            *n = total;
            return NF_OK;
        }
        free(recs);
        q.tid = nf_smc_next_tid(c); /* a fresh id: segments of the old attempt are ignored */
    }
    return NF_ETIMEDOUT;
}
