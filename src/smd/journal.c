/* SPDX-License-Identifier: MIT */
/* The journal (journal.h): CRC-framed records appended in batches to dir/journal, a replay that
 * reads the file in large chunks, cuts a torn tail off and refuses damage in the middle, a salvage
 * that reads around damage, compaction by writing a temporary file and renaming it over the
 * journal, and the directory lock. Format and guarantees: docs/journal.md.
 */
#include "netfab/journal.h"
#include "util/crc32c.h"
#include "util/diag.h"
#include "util/mem.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#define HDR_LEN 8u   /* file header: "NFJRNL", u16 version */
#define FRAME_HDR 8u /* frame header: u32 payload length, u32 CRC-32C */
#define VERSION 1u
#define READ_CHUNK (NF_JOURNAL_MAX_REC + FRAME_HDR + 65536u) /* any frame fits in one buffer */
#define SNAP_FLUSH (4u << 20)  /* a snapshot writes its queue out once it holds this much */
#define QUEUE_KEEP (4u << 20)  /* a larger queue buffer is released after a sync */
#define SEARCH_RING (1u << 21) /* bytes the forward search keeps: more than a frame and a read */
#define SEARCH_READ 65536u     /* bytes the forward search reads at a time */
#define COPY_CHUNK (1u << 20)  /* salvage copies the damaged file in pieces of this size */
#define MAX_COPIES 9999u       /* journal.damaged.1 .. journal.damaged.9999 */
#define CRC_POLY 0x82f63b78u   /* CRC-32C, reflected */

/* The names of the state files, opened relative to the directory's descriptor. */
#define F_JOURNAL "journal"
#define F_TMP "journal.tmp"
#define F_LOCK "lock"

static const uint8_t magic[6] = {'N', 'F', 'J', 'R', 'N', 'L'};

struct nf_journal {
    int fd;      /* dir/journal (dir/journal.tmp for a snapshot) */
    int dfd;     /* the directory, every state file is opened relative to it; -1 for a snapshot */
    int lock_fd; /* dir/lock, holding the flock; -1 for a snapshot */
    int last_errno;   /* errno of the last failed system call on the files, 0 when none failed */
    bool snap;        /* the temporary journal nf_journal_compact hands to emit */
    bool scanned;     /* the frames were validated and a torn tail cut: appends may follow */
    bool used;        /* replayed, salvaged, appended to or compacted: no more replay */
    bool salvaged;    /* salvaged around damage: only a compaction may write */
    uint64_t bytes;   /* file offset where the next batch goes: the end of the last good frame */
    uint64_t records; /* records in the file since open or the last compaction */
    uint8_t *q;       /* queued frames, not yet written */
    size_t qlen, qcap;
    uint64_t qrecs; /* frames in q */
    uint8_t *b;     /* the batch sealed by nf_journal_sync_begin, being written */
    size_t blen, bcap;
    uint64_t brecs;          /* frames in b */
    int b_errno;             /* errno of nf_journal_sync_write's failure */
    bool sealed;             /* between nf_journal_sync_begin and nf_journal_sync_end */
    char *dir, *path, *lock; /* dir, dir/journal, dir/lock (for messages) */
};

/* ---- helpers --------------------------------------------------------------------------------- */

/* A failure about one of the journal's files: the path goes in diag's file. */
#define fail(diag, rc, path, ...) nf__fail_at((diag), (rc), (path), 0, __VA_ARGS__)

/* The code for a failed system call: a full disk or quota is NF_ENOSPC, anything else NF_EIO.
 * errno is kept in j for nf_journal_last_errno (and left as it was). */
static int sys_err(nf_journal *j) {
    int e = errno;
    j->last_errno = e;
    return e == ENOSPC || e == EDQUOT ? NF_ENOSPC : NF_EIO;
}

static void put_le32(uint8_t *p, uint32_t v) {
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
    p[2] = (uint8_t)(v >> 16);
    p[3] = (uint8_t)(v >> 24);
}

static uint32_t get_le32(const uint8_t *p) {
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static void make_header(uint8_t h[HDR_LEN]) {
    memcpy(h, magic, sizeof magic);
    h[6] = (uint8_t)VERSION;
    h[7] = (uint8_t)(VERSION >> 8);
}

/* The CRC of a frame covers its length field and its payload. */
static uint32_t frame_crc(uint32_t len, const uint8_t *payload) {
    uint8_t lb[4];
    put_le32(lb, len);
    return nf__crc32c(nf__crc32c(0, lb, sizeof lb), payload, len);
}

static bool len_ok(uint32_t len) { return len >= 1 && len <= NF_JOURNAL_MAX_REC; }

static char *join(const char *dir, const char *name) {
    size_t nd = strlen(dir), nn = strlen(name);
    char *s = nf__malloc(nd + 1 + nn + 1);
    if (!s) return NULL;
    memcpy(s, dir, nd);
    s[nd] = '/';
    memcpy(s + nd + 1, name, nn + 1);
    return s;
}

/* Writes p[0..n) at off, looping over partial writes and EINTR. 0, or -1 with errno set. */
static int pwrite_all(int fd, const void *p, size_t n, uint64_t off) {
    const uint8_t *b = p;
    while (n > 0) {
        ssize_t w = pwrite(fd, b, n, (off_t)off);
        if (w < 0 && errno == EINTR) continue;
        if (w < 0) return -1;
        if (w == 0) {
            errno = EIO;
            return -1;
        }
        b += w;
        n -= (size_t)w;
        off += (uint64_t)w;
    }
    return 0;
}

/* Reads up to n bytes at off, short only at the end of the file. The count, or -1 with errno. */
static ssize_t pread_full(int fd, void *p, size_t n, uint64_t off) {
    uint8_t *b = p;
    size_t got = 0;
    while (got < n) {
        ssize_t r = pread(fd, b + got, n - got, (off_t)(off + got));
        if (r < 0 && errno == EINTR) continue;
        if (r < 0) return -1;
        if (r == 0) break;
        got += (size_t)r;
    }
    return (ssize_t)got;
}

/* Writes the queue at j->bytes and, when durable, flushes it to stable storage. Success moves the
 * queue into the file; failure keeps it and cuts the file back to j->bytes, so no piece of the
 * batch stays there for a replay to read (the next attempt writes at the same offset anyway). */
static int write_out(nf_journal *j, bool durable) {
    if (j->qlen == 0) return NF_OK;
    if (pwrite_all(j->fd, j->q, j->qlen, j->bytes) != 0 || (durable && fdatasync(j->fd) != 0)) {
        int rc = sys_err(j);
        int e = ftruncate(j->fd, (off_t)j->bytes); /* if this fails too, the next write covers it */
        (void)e;
        return rc;
    }
    j->bytes += j->qlen;
    j->records += j->qrecs;
    j->qlen = 0;
    j->qrecs = 0;
    if (j->qcap > QUEUE_KEEP) {
        nf__free(j->q);
        j->q = NULL;
        j->qcap = 0;
    }
    return NF_OK;
}

/* ---- open ------------------------------------------------------------------------------------ */

/* Checks the file header. A file holding a prefix of the header (empty, or torn while it was being
 * created) is ours: the header is written whole. Anything else without the magic is not touched. */
static int check_header(nf_journal *j, nf_diag *diag) {
    struct stat st;
    if (fstat(j->fd, &st) != 0) return fail(diag, sys_err(j), j->path, "stat: %s", strerror(errno));
    uint8_t h[HDR_LEN], want[HDR_LEN];
    make_header(want);
    size_t have = st.st_size < (off_t)HDR_LEN ? (size_t)st.st_size : HDR_LEN;
    ssize_t got = pread_full(j->fd, h, have, 0);
    if (got < 0) return fail(diag, sys_err(j), j->path, "cannot read: %s", strerror(errno));
    if ((size_t)got < have) have = (size_t)got;
    if (have < HDR_LEN) {
        if (memcmp(h, want, have) != 0)
            return fail(diag, NF_EPARSE, j->path,
                        "%s is not a netfab journal (%zu bytes, no NFJRNL magic); left untouched",
                        j->path, have);
        if (pwrite_all(j->fd, want, HDR_LEN, 0) != 0 || fsync(j->fd) != 0 || fsync(j->dfd) != 0)
            return fail(diag, sys_err(j), j->path, "cannot write the header: %s", strerror(errno));
        j->bytes = HDR_LEN;
        return NF_OK;
    }
    if (memcmp(h, magic, sizeof magic) != 0)
        return fail(diag, NF_EPARSE, j->path,
                    "%s is not a netfab journal (no NFJRNL magic); left untouched", j->path);
    unsigned version = (unsigned)h[6] | (unsigned)h[7] << 8;
    if (version != VERSION)
        return fail(diag, NF_EPARSE, j->path,
                    "%s is journal format version %u; this build reads %u", j->path, version,
                    VERSION);
    j->bytes = (uint64_t)st.st_size;
    return NF_OK;
}

/* The directory must belong to this user and be writable by nobody else: whoever can write to it
 * can plant a link or a file of their own under one of the journal's names. The directory checked
 * is the one opened (a symbolic link on the way to it is the operator's choice). */
static int check_dir(nf_journal *j, nf_diag *diag) {
    struct stat st;
    if (fstat(j->dfd, &st) != 0)
        return fail(diag, sys_err(j), j->dir, "stat %s: %s", j->dir, strerror(errno));
    unsigned mode = (unsigned)st.st_mode & 07777;
    if (st.st_uid != geteuid())
        return fail(diag, NF_EINVAL, j->dir,
                    "state directory %s (mode %04o) is owned by uid %u, not by this process (uid "
                    "%u): its owner could replace the journal's files; use a directory of your own "
                    "(chown it, then chmod 700 %s)",
                    j->dir, mode, (unsigned)st.st_uid, (unsigned)geteuid(), j->dir);
    if (st.st_mode & (S_IWGRP | S_IWOTH))
        return fail(
            diag, NF_EINVAL, j->dir,
            "state directory %s has mode %04o: it is writable by group or others, who "
            "could plant links or files under the journal's names; fix it with chmod 700 %s",
            j->dir, mode, j->dir);
    return NF_OK;
}

/* Opens a state file of the directory, never through a symbolic link, and only a regular file. */
static int open_state(nf_journal *j, const char *name, const char *path, int *fd, nf_diag *diag) {
    *fd = openat(j->dfd, name, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (*fd < 0 && errno == ELOOP) {
        j->last_errno = errno;
        return fail(diag, NF_EINVAL, path,
                    "%s is a symbolic link: the journal's files are never opened through one "
                    "(remove it; netfab makes the file)",
                    path);
    }
    if (*fd < 0) return fail(diag, sys_err(j), path, "cannot open %s: %s", path, strerror(errno));
    struct stat st;
    if (fstat(*fd, &st) != 0)
        return fail(diag, sys_err(j), path, "stat %s: %s", path, strerror(errno));
    if (!S_ISREG(st.st_mode))
        return fail(diag, NF_EINVAL, path, "%s is not a regular file (remove it)", path);
    return NF_OK;
}

static void release(nf_journal *j) {
    if (j->fd >= 0) close(j->fd);
    if (j->lock_fd >= 0) close(j->lock_fd); /* drops the flock */
    if (j->dfd >= 0) close(j->dfd);
    nf__free(j->q);
    nf__free(j->b);
    nf__free(j->dir);
    nf__free(j->path);
    nf__free(j->lock);
    nf__free(j);
}

int nf_journal_open(const char *dir, nf_journal **out, nf_diag *diag) {
    *out = NULL;
    if (!dir || !*dir) return fail(diag, NF_EINVAL, "", "no journal directory given");
    nf_journal *j = nf__calloc(1, sizeof *j);
    if (!j) return NF_ENOMEM;
    j->fd = j->lock_fd = j->dfd = -1;
    j->dir = nf__strdup(dir);
    j->path = join(dir, F_JOURNAL);
    j->lock = join(dir, F_LOCK);
    int rc = NF_ENOMEM;
    if (!j->dir || !j->path || !j->lock) goto out;

    if (mkdir(dir, 0700) != 0 && errno != EEXIST) {
        rc = fail(diag, sys_err(j), dir, "cannot create directory %s: %s", dir, strerror(errno));
        goto out;
    }
    j->dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (j->dfd < 0) {
        rc = fail(diag, sys_err(j), dir, "cannot open directory %s: %s", dir, strerror(errno));
        goto out;
    }
    if ((rc = check_dir(j, diag))) goto out;
    /* flock locks belong to the open file description: a second open of the same directory fails
     * even within this process. Closing lock_fd releases the lock. */
    if ((rc = open_state(j, F_LOCK, j->lock, &j->lock_fd, diag))) goto out;
    if (flock(j->lock_fd, LOCK_EX | LOCK_NB) != 0) {
        if (errno == EWOULDBLOCK)
            rc = fail(diag, NF_ELOCKED, j->lock, "another process holds %s", dir);
        else
            rc = fail(diag, sys_err(j), j->lock, "cannot lock %s: %s", j->lock, strerror(errno));
        goto out;
    }
    if ((rc = open_state(j, F_JOURNAL, j->path, &j->fd, diag))) goto out;
    if ((rc = check_header(j, diag))) goto out;
    *out = j;
    return NF_OK;
out:
    if (rc == NF_ENOMEM) fail(diag, rc, dir, "out of memory");
    release(j);
    return rc;
}

/* ---- the search for the next valid frame ----------------------------------------------------- */

/* After a bad frame, the search looks at every later offset p for a valid frame: a length in
 * 1..NF_JOURNAL_MAX_REC, the frame inside the file, and a matching CRC. Most offsets fail the
 * length test at once (zeros, and all but 1 in 4096 random words); for the others the CRC over up
 * to 1 MiB would cost up to 128 bytes of CRC per byte of garbage if done directly. Instead the
 * search keeps the CRC register Q(x) of the bytes from an origin o up to x (register started at 0,
 * no final xor), and uses that the register is linear over GF(2): running register c over n bytes
 * B gives R(0, B) ^ c * x^(8n) mod P. So the register of the bytes [a, b) is
 * Q(b) ^ Q(a) * x^(8(b-a)), and a frame's CRC (register started at all ones over the 4 length
 * bytes, then the payload [p+8, p+8+n)) is
 *     ~(Q(p+8+n) ^ (Q(p+8) ^ R(~0, length bytes)) * x^(8n))
 * which costs about 21 multiplications in GF(2^32) per candidate instead of n table steps; each
 * byte is run through the table at most once. The file is read in SEARCH_READ pieces into a ring
 * of R bytes (R a power of two, at most SEARCH_RING), with Q for the same offsets in a second
 * ring; the read head h never runs more than R - 1 bytes past p, so the bytes from p and Q after
 * p are still in the rings, and R > 8 + NF_JOURNAL_MAX_REC + SEARCH_READ makes room for a whole
 * frame ahead of p. Memory is 5 R bytes (10 MiB at most), whatever the file's size. */

/* a * b in GF(2)[x] / P, bit 31 holding the coefficient of x^0 (the CRC's reflected order). */
static uint32_t gf_mul(uint32_t a, uint32_t b) {
    uint32_t r = 0;
    for (; a; a <<= 1) {
        if (a & 0x80000000u) r ^= b;
        b = b & 1 ? (b >> 1) ^ CRC_POLY : b >> 1;
    }
    return r;
}

typedef struct search {
    uint32_t step[256]; /* register after 8 zero bits from the byte: the CRC table */
    uint32_t pw[21];    /* x^(8 * 2^k) for k = 0..20 (lengths up to 2^20) */
    uint8_t *rb;        /* ring of file bytes */
    uint32_t *rq;       /* ring of Q values */
    uint64_t mask;      /* ring size - 1 */
} search;

static void search_tables(search *s) {
    for (uint32_t b = 0; b < 256; b++) {
        uint32_t c = b;
        for (int k = 0; k < 8; k++)
            c = c & 1 ? (c >> 1) ^ CRC_POLY : c >> 1;
        s->step[b] = c;
    }
    uint32_t x8 = 0x80000000u; /* 1, times x eight times */
    for (int k = 0; k < 8; k++)
        x8 = x8 & 1 ? (x8 >> 1) ^ CRC_POLY : x8 >> 1;
    s->pw[0] = x8;
    for (int k = 1; k < 21; k++)
        s->pw[k] = gf_mul(s->pw[k - 1], s->pw[k - 1]);
}

/* x^(8n) mod P */
static uint32_t x_pow8(const search *s, uint32_t n) {
    uint32_t r = 0x80000000u;
    for (int k = 0; n; k++, n >>= 1)
        if (n & 1) r = gf_mul(r, s->pw[k]);
    return r;
}

/* Sets *next to the offset of the first valid frame in [from, end), or to end when there is none.
 */
static int find_next(nf_journal *j, uint64_t from, uint64_t end, uint64_t *next, nf_diag *diag) {
    *next = end;
    if (from >= end || end - from < FRAME_HDR) return NF_OK;
    uint64_t ring = 16;
    while (ring < SEARCH_RING && ring <= end - from)
        ring *= 2;
    search s;
    search_tables(&s);
    s.mask = ring - 1;
    s.rb = nf__malloc((size_t)ring);
    s.rq = nf__malloc((size_t)ring * sizeof *s.rq);
    int rc = NF_OK;
    if (!s.rb || !s.rq) {
        rc = fail(diag, NF_ENOMEM, j->path, "out of memory");
        goto out;
    }
    uint64_t p = from, h = from, qh = from; /* Q is known for offsets [origin, qh] */
    s.rq[from & s.mask] = 0;
    while (p < end && end - p >= FRAME_HDR) {
        uint64_t need = p + FRAME_HDR;
        uint32_t len = 0;
        if (h >= need) {
            uint8_t hb[FRAME_HDR];
            for (unsigned i = 0; i < FRAME_HDR; i++)
                hb[i] = s.rb[(p + i) & s.mask];
            len = get_le32(hb);
            if (!len_ok(len) || len > end - need) {
                p++;
                continue;
            }
            need += len;
            if (h >= need) {
                if (qh < p) { /* restart the register here: only differences of Q are used */
                    qh = p;
                    s.rq[p & s.mask] = 0;
                }
                for (uint32_t c = s.rq[qh & s.mask]; qh < need; qh++) {
                    c = s.step[(c ^ s.rb[qh & s.mask]) & 0xffu] ^ (c >> 8);
                    s.rq[(qh + 1) & s.mask] = c;
                }
                uint32_t lr = 0xffffffffu;
                for (unsigned i = 0; i < 4; i++)
                    lr = s.step[(lr ^ hb[i]) & 0xffu] ^ (lr >> 8);
                uint32_t reg = s.rq[need & s.mask] ^
                               gf_mul(s.rq[(p + FRAME_HDR) & s.mask] ^ lr, x_pow8(&s, len));
                if (~reg == get_le32(hb + 4)) {
                    *next = p;
                    break;
                }
                p++;
                continue;
            }
        }
        /* read on: bytes [h, ...) into the ring, not past p + ring - 1 */
        uint64_t n = end - h, room = p + ring - 1 - h, wrap = ring - (h & s.mask);
        if (n > SEARCH_READ) n = SEARCH_READ;
        if (n > room) n = room;
        if (n > wrap) n = wrap;
        ssize_t got = pread_full(j->fd, s.rb + (h & s.mask), (size_t)n, h);
        if (got < 0) {
            rc = fail(diag, sys_err(j), j->path, "cannot read: %s", strerror(errno));
            break;
        }
        if (got == 0) end = h; /* the file is shorter than it was */
        h += (uint64_t)got;
    }
out:
    nf__free(s.rb);
    nf__free(s.rq);
    return rc;
}

/* ---- reading the frames ---------------------------------------------------------------------- */

/* What a walk over the frames found. Offsets are file offsets; end means "none". */
typedef struct walk {
    uint64_t end;  /* the file's size */
    uint64_t bad;  /* the first bad frame */
    uint64_t next; /* the first valid frame after it; end when none (then bad starts a torn tail) */
    uint64_t tail; /* where the torn tail starts: the end of the last readable frame */
    uint64_t records;  /* frames read (before bad unless resynchronising) */
    uint64_t rejected; /* frames fn returned non-zero for (resynchronising) */
    uint64_t regions;  /* damaged regions skipped (resynchronising) */
    uint64_t lost;     /* bytes in them */
} walk;

/* Reads the frames after the header, calling fn (when given) for each good one, and fills w. The
 * file is not changed.
 *
 * The buffer holds READ_CHUNK bytes (or the whole file when smaller), so any frame fits in it
 * whole. buf[0] is at file offset base; frames are parsed from buf[pos..have); when the next one is
 * not whole in the buffer, the unparsed rest moves to the front and the buffer is refilled with
 * one read. A bad frame is a length of 0 or over NF_JOURNAL_MAX_REC, a CRC mismatch, or a frame
 * the file ends inside of. At a bad frame the rest of the file is searched for a valid frame: when
 * there is none the bad frame starts a torn tail and the walk ends. Otherwise the file is damaged
 * there; without resync the walk ends, with it the damaged bytes are counted and reading goes on
 * at the valid frame. Without resync, fn returning non-zero ends the walk and is returned; with
 * it, the record is counted as rejected. */
static int walk_frames(nf_journal *j, int (*fn)(void *ud, const uint8_t *rec, uint32_t len),
                       void *ud, bool resync, walk *w, nf_diag *diag) {
    memset(w, 0, sizeof *w);
    struct stat st;
    if (fstat(j->fd, &st) != 0) return fail(diag, sys_err(j), j->path, "stat: %s", strerror(errno));
    uint64_t end = (uint64_t)st.st_size;
    if (end < HDR_LEN) return fail(diag, NF_EPARSE, j->path, "shorter than the journal header");
    w->end = w->bad = w->next = w->tail = end;
    uint64_t data = end - HDR_LEN;
    size_t cap = data < READ_CHUNK ? (size_t)data : READ_CHUNK;
    uint8_t *buf = NULL;
    if (cap > 0 && !(buf = nf__malloc(cap))) return fail(diag, NF_ENOMEM, j->path, "out of memory");

    uint64_t base = HDR_LEN;
    size_t have = 0, pos = 0;
    int rc = NF_OK;
    while (cap > 0) {
        size_t left = have - pos;
        bool eof = base + have >= end, bad = false;
        if (left >= FRAME_HDR) {
            uint32_t len = get_le32(buf + pos);
            if (!len_ok(len)) {
                bad = true;
            } else if (left - FRAME_HDR >= len) {
                if (get_le32(buf + pos + 4) != frame_crc(len, buf + pos + FRAME_HDR)) {
                    bad = true;
                } else {
                    int r = fn ? fn(ud, buf + pos + FRAME_HDR, len) : 0;
                    if (r && !resync) {
                        nf__free(buf); /* the rest of the file is not looked at */
                        return r;
                    }
                    if (r) w->rejected++;
                    w->records++;
                    pos += FRAME_HDR + len;
                    continue;
                }
            } else {
                bad = eof; /* the file ends inside the frame */
            }
        } else if (eof) {
            if (left == 0) break; /* every frame read */
            bad = true;           /* the file ends inside a frame header */
        }
        if (bad) {
            uint64_t at = base + pos, next;
            if ((rc = find_next(j, at + 1, end, &next, diag))) break;
            if (w->bad == end) {
                w->bad = at;
                w->next = next;
            }
            if (next == end) {
                w->tail = at;
                break;
            }
            if (!resync) break;
            w->regions++;
            w->lost += next - at;
            base = next;
            have = pos = 0;
            continue;
        }
        memmove(buf, buf + pos, left);
        base += pos;
        pos = 0;
        have = left;
        ssize_t got = pread_full(j->fd, buf + have, cap - have, base + have);
        if (got < 0) {
            rc = fail(diag, sys_err(j), j->path, "cannot read: %s", strerror(errno));
            break;
        }
        if (got == 0) end = base + have; /* the file is shorter than it was: a tail */
        have += (size_t)got;
    }
    nf__free(buf);
    return rc;
}

/* Cuts the torn tail w found (when there is one) and makes the walk's end the append offset. */
static int cut_tail(nf_journal *j, const walk *w, nf_diag *diag) {
    if (w->tail < w->end && (ftruncate(j->fd, (off_t)w->tail) != 0 || fsync(j->fd) != 0))
        return fail(diag, sys_err(j), j->path, "cannot cut the torn tail: %s", strerror(errno));
    j->bytes = w->tail;
    j->records = w->records;
    j->scanned = true;
    return NF_OK;
}

/* The check before appending (and the replay): every frame good up to a torn tail, which is cut.
 * Damage (a bad frame with a valid one after it) leaves the file untouched and fails. */
static int scan(nf_journal *j, int (*fn)(void *ud, const uint8_t *rec, uint32_t len), void *ud,
                uint64_t *torn, nf_diag *diag) {
    walk w;
    int rc = walk_frames(j, fn, ud, false, &w, diag);
    if (rc) return rc;
    if (w.next < w.end)
        return fail(diag, NF_EPARSE, j->path,
                    "%s is damaged at byte %llu, after %llu good records; the next valid frame "
                    "is at byte %llu. The file was left untouched. To keep the records that can "
                    "be read, restart with --repair-journal (the damaged file is kept as a copy)",
                    j->path, (unsigned long long)w.bad, (unsigned long long)w.records,
                    (unsigned long long)w.next);
    if ((rc = cut_tail(j, &w, diag))) return rc;
    if (torn) *torn = w.end - w.tail;
    return NF_OK;
}

int nf_journal_replay(nf_journal *j, int (*fn)(void *ud, const uint8_t *rec, uint32_t len),
                      void *ud, uint64_t *torn, nf_diag *diag) {
    if (torn) *torn = 0;
    if (!j || !fn || j->snap || j->used) return NF_EINVAL;
    j->used = true;
    return scan(j, fn, ud, torn, diag);
}

/* ---- salvage --------------------------------------------------------------------------------- */

/* Copies the journal to the first free dir/journal.damaged.N (made with O_EXCL, so nothing in
 * place is followed or overwritten), synced with its directory entry. Its name goes to name. */
static int keep_copy(nf_journal *j, uint64_t end, char *name, size_t name_cap, nf_diag *diag) {
    name[0] = '\0';
    uint8_t *buf = nf__malloc(COPY_CHUNK);
    if (!buf) return fail(diag, NF_ENOMEM, j->path, "out of memory");
    int fd = -1, rc = NF_OK;
    char nm[32];
    for (unsigned n = 1; fd < 0 && n <= MAX_COPIES; n++) {
        snprintf(nm, sizeof nm, "journal.damaged.%u", n);
        fd = openat(j->dfd, nm, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
        if (fd < 0 && errno != EEXIST) break;
    }
    if (fd < 0) {
        if (errno == EEXIST)
            rc = fail(diag, NF_EIO, j->dir,
                      "%s holds %u copies of damaged journals already (journal.damaged.*): move "
                      "them away",
                      j->dir, MAX_COPIES);
        else
            rc = fail(diag, sys_err(j), j->dir, "cannot create %s/%s: %s", j->dir, nm,
                      strerror(errno));
        nf__free(buf);
        return rc;
    }
    for (uint64_t off = 0; off < end && !rc;) {
        size_t n = end - off < COPY_CHUNK ? (size_t)(end - off) : COPY_CHUNK;
        ssize_t got = pread_full(j->fd, buf, n, off);
        if (got <= 0) {
            if (got == 0) errno = EIO;
            rc = fail(diag, sys_err(j), j->path, "cannot read: %s", strerror(errno));
        } else if (pwrite_all(fd, buf, (size_t)got, off) != 0) {
            rc = fail(diag, sys_err(j), j->dir, "cannot write %s/%s: %s", j->dir, nm,
                      strerror(errno));
        }
        off += got > 0 ? (uint64_t)got : 0;
    }
    if (!rc && (fsync(fd) != 0 || fsync(j->dfd) != 0))
        rc = fail(diag, sys_err(j), j->dir, "cannot sync %s/%s: %s", j->dir, nm, strerror(errno));
    close(fd);
    nf__free(buf);
    if (rc) {
        unlinkat(j->dfd, nm, 0);
        return rc;
    }
    snprintf(name, name_cap, "%s", nm);
    return NF_OK;
}

int nf_journal_salvage(nf_journal *j, int (*fn)(void *ud, const uint8_t *rec, uint32_t len),
                       void *ud, nf_journal_salvage_report *rep, nf_diag *diag) {
    nf_journal_salvage_report r;
    memset(&r, 0, sizeof r);
    if (rep) *rep = r;
    if (!j || !fn || j->snap || j->used) return NF_EINVAL;
    j->used = true;
    /* First find out whether there is damage at all, so the copy exists before fn sees a record.
     */
    walk w;
    int rc = walk_frames(j, NULL, NULL, false, &w, diag);
    if (rc) return rc;
    bool damaged = w.next < w.end;
    if (damaged && (rc = keep_copy(j, w.end, r.copy, sizeof r.copy, diag))) return rc;

    if ((rc = walk_frames(j, fn, ud, true, &w, diag))) return rc;
    r.records = w.records;
    r.rejected = w.rejected;
    r.regions = w.regions;
    r.lost_bytes = w.lost;
    r.torn = w.end - w.tail;
    if (rep) *rep = r;
    if (w.regions == 0) return cut_tail(j, &w, diag); /* no damage after all: as a replay */
    /* The file stays as it is (the compaction replaces it); nothing may be written behind the
     * damage before that. */
    j->salvaged = true;
    j->bytes = w.end;
    j->records = w.records;
    return NF_OK;
}

/* ---- append, sync ---------------------------------------------------------------------------- */

int nf_journal_append(nf_journal *j, const void *rec, uint32_t len) {
    if (!j || !rec || !len_ok(len) || j->salvaged) return NF_EINVAL;
    if (NF_GROW(j->q, j->qcap, j->qlen + FRAME_HDR + len)) return NF_ENOMEM;
    uint8_t *f = j->q + j->qlen;
    memcpy(f + FRAME_HDR, rec, len);
    put_le32(f, len);
    put_le32(f + 4, frame_crc(len, f + FRAME_HDR));
    j->qlen += FRAME_HDR + len;
    j->qrecs++;
    j->used = true;
    /* A snapshot may be much larger than a batch: it goes to its file as it grows. */
    if (j->snap && j->qlen >= SNAP_FLUSH) return write_out(j, false);
    return NF_OK;
}

int nf_journal_sync(nf_journal *j) {
    if (!j || j->salvaged || j->sealed) return NF_EINVAL;
    if (j->qlen == 0) return NF_OK;
    /* Appending without a replay: the frames are still checked, so the batch lands after the last
     * good frame and not behind a torn one, and never behind damage. */
    if (!j->scanned) {
        int rc = scan(j, NULL, NULL, NULL, NULL);
        if (rc) return rc;
    }
    return write_out(j, true);
}

int nf_journal_sync_begin(nf_journal *j) {
    if (!j || j->salvaged || j->sealed || j->snap) return NF_EINVAL;
    if (!j->scanned) {
        int rc = scan(j, NULL, NULL, NULL, NULL);
        if (rc) return rc;
    }
    uint8_t *b = j->b; /* the batch buffer is empty: swap it with the queue */
    size_t cap = j->bcap;
    j->b = j->q;
    j->bcap = j->qcap;
    j->blen = j->qlen;
    j->brecs = j->qrecs;
    j->q = b;
    j->qcap = cap;
    j->qlen = 0;
    j->qrecs = 0;
    j->sealed = true;
    return NF_OK;
}

int nf_journal_sync_write(nf_journal *j) {
    if (!j || !j->sealed) return NF_EINVAL;
    if (j->blen == 0) return NF_OK;
    if (pwrite_all(j->fd, j->b, j->blen, j->bytes) != 0 || fdatasync(j->fd) != 0) {
        int e = errno;
        j->b_errno = e;
        int t = ftruncate(j->fd, (off_t)j->bytes); /* as write_out: nothing of it stays */
        (void)t;
        return e == ENOSPC || e == EDQUOT ? NF_ENOSPC : NF_EIO;
    }
    return NF_OK;
}

int nf_journal_sync_end(nf_journal *j, int rc) {
    if (!j || !j->sealed) return NF_EINVAL;
    j->sealed = false;
    if (rc == NF_OK) {
        j->bytes += j->blen;
        j->records += j->brecs;
        j->blen = 0;
        j->brecs = 0;
        if (j->bcap > QUEUE_KEEP) {
            nf__free(j->b);
            j->b = NULL;
            j->bcap = 0;
        }
        return NF_OK;
    }
    if (j->b_errno) j->last_errno = j->b_errno;
    j->b_errno = 0;
    /* the batch goes back in front of the queue: b = batch + queue becomes the queue */
    if (NF_GROW(j->b, j->bcap, j->blen + j->qlen)) return NF_ENOMEM;
    if (j->qlen) memcpy(j->b + j->blen, j->q, j->qlen);
    uint8_t *q = j->q;
    size_t cap = j->qcap;
    j->q = j->b;
    j->qcap = j->bcap;
    j->qlen = j->blen + j->qlen;
    j->qrecs += j->brecs;
    j->b = q;
    j->bcap = cap;
    j->blen = 0;
    j->brecs = 0;
    return NF_OK;
}

/* ---- compaction ------------------------------------------------------------------------------ */

/* The snapshot is a journal without lock or directory, bound to dir/journal.tmp; emit's appends
 * queue there and are written when the queue grows large or emit returns. Until the rename the old
 * journal is untouched, and j is switched to the new file only after it. A journal.tmp left by a
 * crash, or planted, is unlinked first (a symbolic link is removed itself, its target is not
 * touched) and the new one is made with O_EXCL | O_NOFOLLOW, so nothing in place is followed. */
int nf_journal_compact(nf_journal *j, int (*emit)(void *ud, nf_journal *snap), void *ud) {
    if (!j || !emit || j->snap || j->sealed) return NF_EINVAL;
    int rc;
    if (!j->salvaged && (rc = nf_journal_sync(j)) != 0) return rc; /* salvaged: nothing queued */
    j->used = true;

    nf_journal s = {
        .fd = -1, .dfd = -1, .lock_fd = -1, .snap = true, .scanned = true, .used = true};
    /* Usually ENOENT; if it fails otherwise (a directory, say), the O_EXCL open fails next. */
    (void)unlinkat(j->dfd, F_TMP, 0);
    s.fd = openat(j->dfd, F_TMP, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (s.fd < 0) return sys_err(j);
    uint8_t h[HDR_LEN];
    make_header(h);
    if (pwrite_all(s.fd, h, HDR_LEN, 0) != 0) {
        rc = sys_err(j);
        goto undo;
    }
    s.bytes = HDR_LEN;
    if ((rc = emit(ud, &s)) != 0 || (rc = write_out(&s, false)) != 0) {
        if (s.last_errno) j->last_errno = s.last_errno;
        goto undo;
    }
    if (fsync(s.fd) != 0 || renameat(j->dfd, F_TMP, j->dfd, F_JOURNAL) != 0) {
        rc = sys_err(j);
        goto undo;
    }

    /* The new journal is in place: from here j uses it, whatever happens. */
    rc = fsync(j->dfd) != 0 ? sys_err(j) : NF_OK;
    close(j->fd);
    j->fd = s.fd;
    j->bytes = s.bytes;
    j->records = s.records;
    j->scanned = true;
    j->salvaged = false;
    nf__free(s.q);
    return rc;
undo:
    close(s.fd);
    unlinkat(j->dfd, F_TMP, 0);
    nf__free(s.q);
    return rc;
}

/* ---- the rest -------------------------------------------------------------------------------- */

uint64_t nf_journal_bytes(const nf_journal *j) { return j ? j->bytes : 0; }

uint64_t nf_journal_records(const nf_journal *j) { return j ? j->records : 0; }

int nf_journal_last_errno(const nf_journal *j) { return j ? j->last_errno : 0; }

void nf_journal_close(nf_journal *j) {
    if (!j || j->snap) return; /* a snapshot belongs to nf_journal_compact */
    (void)nf_journal_sync(j);
    release(j);
}
