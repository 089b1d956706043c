/* The journal (journal.h): CRC-framed records appended in batches to dir/journal, a replay that
 * reads the file in large chunks and cuts a torn tail off, compaction by writing a temporary file
 * and renaming it over the journal, and the directory lock. Format and guarantees: docs/journal.md.
 */
#include "netfab/journal.h"
#include "util/crc32c.h"
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
#define SNAP_FLUSH (4u << 20) /* a snapshot writes its queue out once it holds this much */
#define QUEUE_KEEP (4u << 20) /* a larger queue buffer is released after a sync */

static const uint8_t magic[6] = {'N', 'F', 'J', 'R', 'N', 'L'};

struct nf_journal {
    int fd;           /* dir/journal (dir/journal.tmp for a snapshot) */
    int lock_fd;      /* dir/lock, holding the flock; -1 for a snapshot */
    bool snap;        /* the temporary journal nf_journal_compact hands to emit */
    bool scanned;     /* the frames were validated and a torn tail cut: appends may follow */
    bool used;        /* replayed, appended to or compacted: replay is no longer allowed */
    uint64_t bytes;   /* file offset where the next batch goes: the end of the last good frame */
    uint64_t records; /* records in the file since open or the last compaction */
    uint8_t *q;       /* queued frames, not yet written */
    size_t qlen, qcap;
    uint64_t qrecs;                /* frames in q */
    int last_errno;                /* errno of the last failed write or sync */
    char *dir, *path, *tmp, *lock; /* dir, dir/journal, dir/journal.tmp, dir/lock */
};

/* ---- helpers --------------------------------------------------------------------------------- */

__attribute__((format(printf, 4, 5))) static int fail(nf_diag *diag, int rc, const char *path,
                                                      const char *fmt, ...) {
    if (diag) {
        snprintf(diag->file, sizeof diag->file, "%s", path);
        diag->line = 0;
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(diag->msg, sizeof diag->msg, fmt, ap);
        va_end(ap);
    }
    return rc;
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

/* A rename or a new file is durable only once the directory holding it is synced. */
static int fsync_dir(const char *dir) {
    int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0) return -1;
    int rc = fsync(fd);
    int e = errno;
    close(fd);
    errno = e;
    return rc;
}

/* Writes the queue at j->bytes and, when durable, flushes it to stable storage. Success moves the
 * queue into the file; failure keeps it and cuts the file back to j->bytes, so no piece of the
 * batch stays there for a replay to read (the next attempt writes at the same offset anyway). */
static int write_out(nf_journal *j, bool durable) {
    if (j->qlen == 0) return NF_OK;
    if (pwrite_all(j->fd, j->q, j->qlen, j->bytes) != 0 || (durable && fdatasync(j->fd) != 0)) {
        j->last_errno = errno;
        int e = ftruncate(j->fd, (off_t)j->bytes); /* if this fails too, the next write covers it */
        (void)e;
        return j->last_errno == ENOSPC || j->last_errno == EDQUOT ? NF_ENOSPC : NF_EIO;
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
    if (fstat(j->fd, &st) != 0) return fail(diag, NF_EIO, j->path, "stat: %s", strerror(errno));
    uint8_t h[HDR_LEN], want[HDR_LEN];
    make_header(want);
    size_t have = st.st_size < (off_t)HDR_LEN ? (size_t)st.st_size : HDR_LEN;
    ssize_t got = pread_full(j->fd, h, have, 0);
    if (got < 0) return fail(diag, NF_EIO, j->path, "cannot read: %s", strerror(errno));
    if ((size_t)got < have) have = (size_t)got;
    if (have < HDR_LEN) {
        if (memcmp(h, want, have) != 0)
            return fail(diag, NF_EPARSE, j->path,
                        "%s is not a netfab journal (%zu bytes, no NFJRNL magic); left untouched",
                        j->path, have);
        if (pwrite_all(j->fd, want, HDR_LEN, 0) != 0 || fsync(j->fd) != 0 || fsync_dir(j->dir) != 0)
            return fail(diag, NF_EIO, j->path, "cannot write the header: %s", strerror(errno));
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

static void release(nf_journal *j) {
    if (j->fd >= 0) close(j->fd);
    if (j->lock_fd >= 0) close(j->lock_fd); /* drops the flock */
    nf__free(j->q);
    nf__free(j->dir);
    nf__free(j->path);
    nf__free(j->tmp);
    nf__free(j->lock);
    nf__free(j);
}

int nf_journal_open(const char *dir, nf_journal **out, nf_diag *diag) {
    *out = NULL;
    if (!dir || !*dir) return fail(diag, NF_EINVAL, "", "no journal directory given");
    nf_journal *j = nf__calloc(1, sizeof *j);
    if (!j) return NF_ENOMEM;
    j->fd = j->lock_fd = -1;
    j->dir = nf__strdup(dir);
    j->path = join(dir, "journal");
    j->tmp = join(dir, "journal.tmp");
    j->lock = join(dir, "lock");
    int rc = NF_ENOMEM;
    if (!j->dir || !j->path || !j->tmp || !j->lock) goto out;

    if (mkdir(dir, 0700) != 0 && errno != EEXIST) {
        rc = fail(diag, NF_EIO, dir, "cannot create directory %s: %s", dir, strerror(errno));
        goto out;
    }
    /* flock locks belong to the open file description: a second open of the same directory fails
     * even within this process. Closing lock_fd releases the lock. */
    j->lock_fd = open(j->lock, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
    if (j->lock_fd < 0) {
        rc = fail(diag, NF_EIO, j->lock, "cannot open %s: %s", j->lock, strerror(errno));
        goto out;
    }
    if (flock(j->lock_fd, LOCK_EX | LOCK_NB) != 0) {
        if (errno == EWOULDBLOCK)
            rc = fail(diag, NF_ELOCKED, j->lock, "another process holds %s", dir);
        else
            rc = fail(diag, NF_EIO, j->lock, "cannot lock %s: %s", j->lock, strerror(errno));
        goto out;
    }
    j->fd = open(j->path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
    if (j->fd < 0) {
        rc = fail(diag, NF_EIO, j->path, "cannot open %s: %s", j->path, strerror(errno));
        goto out;
    }
    if ((rc = check_header(j, diag))) goto out;
    *out = j;
    return NF_OK;
out:
    if (rc == NF_ENOMEM) fail(diag, rc, dir, "out of memory");
    release(j);
    return rc;
}

/* ---- replay ---------------------------------------------------------------------------------- */

/* Validates the frames after the header, calling fn (when given) for each good one, and cuts the
 * file after the last good frame.
 *
 * The buffer holds READ_CHUNK bytes (or the whole file when smaller), so any frame fits in it
 * whole. buf[0] is at file offset base; frames are parsed from buf[pos..have); when the next one is
 * not whole in the buffer, the unparsed rest moves to the front and the buffer is refilled with
 * one read. Every frame before base + pos is good. The scan ends at the end of the file, or at the
 * first bad frame: a length of 0 or over NF_JOURNAL_MAX_REC, a CRC mismatch, or a frame the file
 * ends inside of. */
static int scan(nf_journal *j, int (*fn)(void *ud, const uint8_t *rec, uint32_t len), void *ud,
                uint64_t *torn, nf_diag *diag) {
    struct stat st;
    if (fstat(j->fd, &st) != 0) return fail(diag, NF_EIO, j->path, "stat: %s", strerror(errno));
    uint64_t end = (uint64_t)st.st_size;
    if (end < HDR_LEN) return fail(diag, NF_EPARSE, j->path, "shorter than the journal header");
    uint64_t data = end - HDR_LEN;
    size_t cap = data < READ_CHUNK ? (size_t)data : READ_CHUNK;
    uint8_t *buf = NULL;
    if (cap > 0 && !(buf = nf__malloc(cap))) return fail(diag, NF_ENOMEM, j->path, "out of memory");

    uint64_t base = HDR_LEN, nrec = 0;
    size_t have = 0, pos = 0;
    int rc = NF_OK;
    while (cap > 0) {
        size_t left = have - pos;
        if (left >= FRAME_HDR) {
            uint32_t len = get_le32(buf + pos);
            if (len == 0 || len > NF_JOURNAL_MAX_REC) break;
            if (left - FRAME_HDR >= len) {
                if (get_le32(buf + pos + 4) != frame_crc(len, buf + pos + FRAME_HDR)) break;
                if (fn && (rc = fn(ud, buf + pos + FRAME_HDR, len)) != 0) {
                    nf__free(buf); /* the rest of the file is not looked at: nothing is cut */
                    return rc;
                }
                nrec++;
                pos += FRAME_HDR + len;
                continue;
            }
        }
        memmove(buf, buf + pos, left);
        base += pos;
        pos = 0;
        have = left;
        if (base + have >= end) break;
        ssize_t got = pread_full(j->fd, buf + have, cap - have, base + have);
        if (got < 0) {
            rc = fail(diag, NF_EIO, j->path, "cannot read: %s", strerror(errno));
            break;
        }
        if (got == 0) break;
        have += (size_t)got;
    }
    nf__free(buf);
    if (rc) return rc;

    uint64_t good = base + pos;
    if (good < end && (ftruncate(j->fd, (off_t)good) != 0 || fsync(j->fd) != 0))
        return fail(diag, NF_EIO, j->path, "cannot cut the torn tail: %s", strerror(errno));
    if (torn) *torn = end - good;
    j->bytes = good;
    j->records = nrec;
    j->scanned = true;
    return NF_OK;
}

int nf_journal_replay(nf_journal *j, int (*fn)(void *ud, const uint8_t *rec, uint32_t len),
                      void *ud, uint64_t *torn, nf_diag *diag) {
    if (torn) *torn = 0;
    if (!j || !fn || j->snap || j->used) return NF_EINVAL;
    j->used = true;
    return scan(j, fn, ud, torn, diag);
}

/* ---- append, sync ---------------------------------------------------------------------------- */

int nf_journal_append(nf_journal *j, const void *rec, uint32_t len) {
    if (!j || !rec || len == 0 || len > NF_JOURNAL_MAX_REC) return NF_EINVAL;
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
    if (!j) return NF_EINVAL;
    if (j->qlen == 0) return NF_OK;
    /* Appending without a replay: the tail is still checked, so the batch lands after the last
     * good frame and not behind a torn one. */
    if (!j->scanned) {
        int rc = scan(j, NULL, NULL, NULL, NULL);
        if (rc) return rc == NF_ENOMEM ? rc : NF_EIO;
    }
    return write_out(j, true);
}

/* ---- compaction ------------------------------------------------------------------------------ */

/* The snapshot is a journal without lock or directory, bound to dir/journal.tmp; emit's appends
 * queue there and are written when the queue grows large or emit returns. Until the rename the old
 * journal is untouched, and j is switched to the new file only after it. */
int nf_journal_compact(nf_journal *j, int (*emit)(void *ud, nf_journal *snap), void *ud) {
    if (!j || !emit || j->snap) return NF_EINVAL;
    int rc = nf_journal_sync(j);
    if (rc) return rc;
    j->used = true;

    nf_journal s = {.fd = -1, .lock_fd = -1, .snap = true, .scanned = true, .used = true};
    s.fd = open(j->tmp, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (s.fd < 0) return NF_EIO;
    uint8_t h[HDR_LEN];
    make_header(h);
    rc = NF_EIO;
    if (pwrite_all(s.fd, h, HDR_LEN, 0) != 0) goto undo;
    s.bytes = HDR_LEN;
    if ((rc = emit(ud, &s)) != 0 || (rc = write_out(&s, false)) != 0) goto undo;
    rc = NF_EIO;
    if (fsync(s.fd) != 0 || rename(j->tmp, j->path) != 0) goto undo;

    /* The new journal is in place: from here j uses it, whatever happens. */
    rc = fsync_dir(j->dir) != 0 ? NF_EIO : NF_OK;
    close(j->fd);
    j->fd = s.fd;
    j->bytes = s.bytes;
    j->records = s.records;
    j->scanned = true;
    nf__free(s.q);
    return rc;
undo:
    close(s.fd);
    unlink(j->tmp);
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
