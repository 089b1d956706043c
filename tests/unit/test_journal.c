/* SPDX-License-Identifier: MIT */
/* The journal (nf_journal_*): CRC-32C against published values and a bitwise reference, the frame
 * layout byte by byte, round trips of many records, a torn or corrupt tail cut at every byte of the
 * last frame, damage in the middle refused and the file left alone, the forward search through
 * zeros and garbage, salvage around damage, a full disk (a tiny tmpfs) during a sync and during a
 * compaction, planted symbolic links and a state directory others can write to, files that are not
 * ours, the directory lock (same process and a child), compaction and its failures, a write failing
 * half-way (RLIMIT_FSIZE), the sync in three steps (a batch written while records are appended,
 * and put back when it fails), and allocation-failure sweeps. Every test works in its own directory
 * under /tmp, removed afterwards. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "testutil.h"

#include "netfab/journal.h"
#include "util/crc32c.h"
#include "util/rng.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* ---- helpers --------------------------------------------------------------------------------- */

#define MAXREC NF_JOURNAL_MAX_REC

typedef struct tdir {
    char root[64];  /* mkdtemp directory, removed by the teardown */
    char dir[128];  /* root/state: the journal directory, created by nf_journal_open */
    char path[160]; /* dir/journal */
    char mnt[96];   /* root/mnt when a test mounted a tmpfs there, unmounted by the teardown */
} tdir;

static int setup(void **state) {
    tdir *t = calloc(1, sizeof *t);
    strcpy(t->root, "/tmp/nf_journal_XXXXXX");
    if (!mkdtemp(t->root)) return -1;
    snprintf(t->dir, sizeof t->dir, "%s/state", t->root);
    snprintf(t->path, sizeof t->path, "%s/journal", t->dir);
    *state = t;
    return 0;
}

static void rm_tree(const char *path) {
    struct stat st;
    if (lstat(path, &st) != 0) return;
    if (S_ISDIR(st.st_mode)) {
        DIR *d = opendir(path);
        struct dirent *e;
        while (d && (e = readdir(d)) != NULL) {
            if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0) continue;
            char sub[512];
            snprintf(sub, sizeof sub, "%s/%s", path, e->d_name);
            rm_tree(sub);
        }
        if (d) closedir(d);
        rmdir(path);
    } else {
        unlink(path);
    }
}

static int teardown(void **state) {
    tdir *t = *state;
    if (t->mnt[0]) umount2(t->mnt, MNT_DETACH);
    rm_tree(t->root);
    free(t);
    return 0;
}

static long file_size(const char *path) {
    struct stat st;
    return stat(path, &st) == 0 ? (long)st.st_size : -1;
}

static bool exists(const char *path) {
    struct stat st;
    return lstat(path, &st) == 0;
}

static uint8_t *slurp(const char *path, size_t *len) {
    FILE *fp = fopen(path, "rb");
    assert_non_null(fp);
    fseek(fp, 0, SEEK_END);
    long n = ftell(fp);
    fseek(fp, 0, SEEK_SET);
    uint8_t *b = malloc((size_t)n + 1);
    assert_int_equal(fread(b, 1, (size_t)n, fp), (size_t)n);
    fclose(fp);
    *len = (size_t)n;
    return b;
}

static void spill(const char *path, const void *b, size_t len) {
    FILE *fp = fopen(path, "wb");
    assert_non_null(fp);
    assert_int_equal(fwrite(b, 1, len, fp), len);
    fclose(fp);
}

/* Record i of a test: len bytes drawn from a stream seeded with (seed, i). */
static void fill(uint8_t *b, uint32_t len, uint64_t seed, uint32_t i) {
    nf__rng r;
    nf__rng_seed(&r, seed * 1000003u + i);
    for (uint32_t k = 0; k < len; k++)
        b[k] = (uint8_t)nf__rng_next(&r);
}

static void append_gen(nf_journal *j, uint32_t len, uint64_t seed, uint32_t i) {
    uint8_t *b = malloc(len);
    fill(b, len, seed, i);
    int rc = nf_journal_append(j, b, len);
    if (rc) fail_msg("append of %u bytes: %d", len, rc);
    free(b);
}

/* What a replay delivered; stop_at (when non-zero) makes the callback return 7 at that record. */
typedef struct coll {
    uint32_t n, cap, stop_at;
    uint8_t **rec;
    uint32_t *len;
} coll;

static int collect(void *ud, const uint8_t *rec, uint32_t len) {
    coll *c = ud;
    if (c->n == c->cap) {
        c->cap = c->cap ? 2 * c->cap : 64;
        c->rec = realloc(c->rec, c->cap * sizeof *c->rec);
        c->len = realloc(c->len, c->cap * sizeof *c->len);
    }
    c->rec[c->n] = malloc(len);
    memcpy(c->rec[c->n], rec, len);
    c->len[c->n] = len;
    c->n++;
    return c->stop_at && c->n == c->stop_at ? 7 : 0;
}

static void coll_free(coll *c) {
    for (uint32_t i = 0; i < c->n; i++)
        free(c->rec[i]);
    free(c->rec);
    free(c->len);
    memset(c, 0, sizeof *c);
}

/* Record i must be the generated record (seed, gen_i) of length len. */
static void check_rec(const coll *c, uint32_t i, uint32_t len, uint64_t seed, uint32_t gen_i) {
    assert_true(i < c->n);
    if (c->len[i] != len) fail_msg("record %u has %u bytes, want %u", i, c->len[i], len);
    uint8_t *want = malloc(len);
    fill(want, len, seed, gen_i);
    if (memcmp(c->rec[i], want, len) != 0) fail_msg("record %u differs", i);
    free(want);
}

static nf_journal *open_ok(const char *dir) {
    nf_journal *j = NULL;
    nf_diag d;
    int rc = nf_journal_open(dir, &j, &d);
    if (rc) fail_msg("open %s: %d %s: %s", dir, rc, d.file, d.msg);
    assert_non_null(j);
    return j;
}

/* Opens dir and replays it into c; returns the journal, *torn the bytes cut. */
static nf_journal *open_replay(const char *dir, coll *c, uint64_t *torn) {
    nf_journal *j = open_ok(dir);
    nf_diag d;
    int rc = nf_journal_replay(j, collect, c, torn, &d);
    if (rc) fail_msg("replay %s: %d %s", dir, rc, d.msg);
    return j;
}

/* The file at path holds exactly the n bytes of want. */
static bool same_file(const char *path, const uint8_t *want, size_t n) {
    size_t m;
    uint8_t *b = slurp(path, &m);
    bool same = m == n && memcmp(b, want, n) == 0;
    free(b);
    return same;
}

/* msg contains want. */
static void expect_in(const char *msg, const char *want) {
    if (!strstr(msg, want)) fail_msg("message '%s' lacks '%s'", msg, want);
}

/* The journal's size on disk and as j counts it is bytes, and j holds records records. */
static void expect_size(const tdir *t, nf_journal *j, uint64_t bytes, uint32_t records) {
    assert_int_equal(file_size(t->path), bytes);
    assert_int_equal(nf_journal_bytes(j), bytes);
    assert_int_equal(nf_journal_records(j), records);
}

/* Reopens dir and replays it whole: no torn tail, exactly n records, record i the generated
 * record (seed, i) of lens[i] bytes (len bytes when lens is NULL). */
static void replay_expect(const char *dir, uint32_t n, const uint32_t *lens, uint32_t len,
                          uint64_t seed) {
    coll c = {0};
    uint64_t torn = 99;
    nf_journal *j = open_replay(dir, &c, &torn);
    assert_int_equal(torn, 0);
    assert_int_equal(c.n, n);
    for (uint32_t i = 0; i < n; i++)
        check_rec(&c, i, lens ? lens[i] : len, seed, i);
    nf_journal_close(j);
    coll_free(&c);
}

/* Opening dir must fail with code, leave the handle NULL and (when file is given) name file in
 * the diagnostic, which is returned in *d. */
static void open_fails(const char *dir, int code, const char *file, nf_diag *d) {
    nf_journal *j = (nf_journal *)&j;
    assert_int_equal(nf_journal_open(dir, &j, d), code);
    assert_null(j);
    if (file) assert_string_equal(d->file, file);
}

/* CRC-32C bit by bit, straight from the definition: the reference for the table-driven one. */
static uint32_t ref_crc(const uint8_t *p, size_t n) {
    uint32_t c = 0xffffffffu;
    for (size_t i = 0; i < n; i++) {
        c ^= p[i];
        for (int k = 0; k < 8; k++)
            c = (c & 1) ? (c >> 1) ^ 0x82f63b78u : c >> 1;
    }
    return ~c;
}

static void le32(uint8_t *p, uint32_t v) {
    for (int i = 0; i < 4; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

/* ---- CRC-32C --------------------------------------------------------------------------------- */

static void test_crc32c(void **state) {
    (void)state;
    /* the check value of the catalogue of CRCs, and the iSCSI test vectors of RFC 3720 B.4 */
    assert_int_equal(nf__crc32c(0, "123456789", 9), 0xe3069283u);
    uint8_t v[32];
    memset(v, 0, sizeof v);
    assert_int_equal(nf__crc32c(0, v, 32), 0x8a9136aau);
    memset(v, 0xff, sizeof v);
    assert_int_equal(nf__crc32c(0, v, 32), 0x62a8ab43u);
    for (int i = 0; i < 32; i++)
        v[i] = (uint8_t)i;
    assert_int_equal(nf__crc32c(0, v, 32), 0x46dd794eu);
    for (int i = 0; i < 32; i++)
        v[i] = (uint8_t)(31 - i);
    assert_int_equal(nf__crc32c(0, v, 32), 0x113fdb5cu);
    assert_int_equal(nf__crc32c(0, "", 0), 0);
    assert_int_equal(ref_crc((const uint8_t *)"123456789", 9), 0xe3069283u);

    /* every table entry: from all-ones state one byte b gives ~table[b] */
    for (unsigned b = 0; b < 256; b++) {
        uint8_t byte = (uint8_t)b;
        uint32_t c = b;
        for (int k = 0; k < 8; k++)
            c = (c & 1) ? (c >> 1) ^ 0x82f63b78u : c >> 1;
        assert_int_equal(~nf__crc32c(0xffffffffu, &byte, 1), c);
    }

    /* random data against the bitwise reference, and chaining at every split */
    uint8_t buf[1000];
    fill(buf, sizeof buf, 99, 0);
    uint32_t whole = nf__crc32c(0, buf, sizeof buf);
    assert_int_equal(whole, ref_crc(buf, sizeof buf));
    for (size_t cut = 0; cut <= sizeof buf; cut++)
        assert_int_equal(nf__crc32c(nf__crc32c(0, buf, cut), buf + cut, sizeof buf - cut), whole);
}

/* ---- format and round trip ------------------------------------------------------------------- */

static void test_frame_layout(void **state) {
    tdir *t = *state;
    nf_journal *j = open_ok(t->dir); /* creates the directory and the file */
    struct stat st;
    assert_int_equal(stat(t->dir, &st), 0);
    assert_int_equal(st.st_mode & 0777, 0700);
    size_t n;
    uint8_t *b = slurp(t->path, &n);
    assert_int_equal(n, 8);
    assert_memory_equal(b, "NFJRNL\x01\x00", 8);
    free(b);
    assert_int_equal(nf_journal_bytes(j), 8);

    uint64_t torn = 99;
    coll c = {0};
    assert_int_equal(nf_journal_replay(j, collect, &c, &torn, NULL), 0);
    assert_int_equal(c.n, 0);
    assert_int_equal(torn, 0);

    uint8_t big[300];
    fill(big, sizeof big, 1, 0);
    assert_int_equal(nf_journal_append(j, "abc", 3), 0);
    assert_int_equal(nf_journal_append(j, big, sizeof big), 0);
    assert_int_equal(nf_journal_bytes(j), 8); /* nothing written before sync */
    assert_int_equal(file_size(t->path), 8);
    assert_int_equal(nf_journal_sync(j), 0);
    assert_int_equal(nf_journal_bytes(j), 8 + 11 + 308);
    assert_int_equal(nf_journal_records(j), 2);
    assert_int_equal(nf_journal_sync(j), 0); /* nothing queued: a no-op */

    uint8_t want[8 + 11 + 308];
    memcpy(want, "NFJRNL\x01\x00", 8);
    le32(want + 8, 3);
    memcpy(want + 16, "abc", 3);
    uint8_t crcin[4 + 300];
    memcpy(crcin, want + 8, 4);
    memcpy(crcin + 4, "abc", 3);
    le32(want + 12, ref_crc(crcin, 7));
    le32(want + 19, 300);
    memcpy(crcin, want + 19, 4);
    memcpy(crcin + 4, big, 300);
    le32(want + 23, ref_crc(crcin, 304));
    memcpy(want + 27, big, 300);
    b = slurp(t->path, &n);
    assert_int_equal(n, sizeof want);
    assert_memory_equal(b, want, sizeof want);
    free(b);
    nf_journal_close(j);
    coll_free(&c);
}

static void test_roundtrip(void **state) {
    tdir *t = *state;
    enum { N = 600 };
    static uint32_t lens[N];
    nf__rng r;
    nf__rng_seed(&r, 2024);
    for (uint32_t i = 0; i < N; i++)
        lens[i] = i % 97 == 5 ? 1 + nf__rng_below(&r, 200000) : 1 + nf__rng_below(&r, 3000);
    lens[0] = 1;
    lens[1] = MAXREC;
    lens[300] = MAXREC;
    lens[301] = 1;
    lens[N - 1] = MAXREC;

    nf_journal *j = open_ok(t->dir);
    coll c = {0};
    assert_int_equal(nf_journal_replay(j, collect, &c, NULL, NULL), 0);
    uint64_t total = 8;
    for (uint32_t i = 0; i < N; i++) {
        append_gen(j, lens[i], 5, i);
        total += 8 + lens[i];
        if (i % 37 == 36) assert_int_equal(nf_journal_sync(j), 0);
    }
    nf_journal_close(j); /* syncs the last batch */
    assert_int_equal(file_size(t->path), total);

    /* replay reads in large chunks: count read system calls when the kernel reports them */
    unsigned long long syscr0 = 0, syscr1 = 0;
    FILE *io = fopen("/proc/self/io", "r");
    char line[128];
    while (io && fgets(line, sizeof line, io))
        sscanf(line, "syscr: %llu", &syscr0);
    if (io) fclose(io);

    uint64_t torn = 99;
    j = open_replay(t->dir, &c, &torn);
    io = fopen("/proc/self/io", "r");
    while (io && fgets(line, sizeof line, io))
        sscanf(line, "syscr: %llu", &syscr1);
    if (io) {
        fclose(io);
        /* one read per chunk of about 1 MiB, a few for the header and /proc itself */
        if (syscr1 - syscr0 > total / (1u << 20) + 10)
            fail_msg("replay of %llu bytes took %llu reads", (unsigned long long)total,
                     syscr1 - syscr0);
    }
    assert_int_equal(torn, 0);
    assert_int_equal(c.n, N);
    for (uint32_t i = 0; i < N; i++)
        check_rec(&c, i, lens[i], 5, i);
    assert_int_equal(nf_journal_records(j), N);
    assert_int_equal(nf_journal_bytes(j), total);
    nf_journal_close(j);
    coll_free(&c);
}

/* ---- torn and corrupt tails ------------------------------------------------------------------ */

static const uint32_t tail_lens[] = {10, 1, 500, 77, 3, 40};
#define NTAIL (sizeof tail_lens / sizeof tail_lens[0])

/* Writes the six records, returns the file's bytes and the offset of each frame's end. */
static uint8_t *write_six(const tdir *t, size_t *len, uint64_t ends[NTAIL]) {
    nf_journal *j = open_ok(t->dir);
    uint64_t off = 8;
    for (uint32_t i = 0; i < NTAIL; i++) {
        append_gen(j, tail_lens[i], 3, i);
        ends[i] = off += 8 + tail_lens[i];
    }
    nf_journal_close(j);
    return slurp(t->path, len);
}

/* The file now holds a damaged copy: replay must give the first keep records, cut the file at the
 * end of the last of them, report the rest as torn, and a later append must replay cleanly. */
static void expect_cut(const tdir *t, uint32_t keep, uint64_t good, uint64_t size) {
    coll c = {0};
    uint64_t torn = 99;
    nf_journal *j = open_replay(t->dir, &c, &torn);
    if (c.n != keep)
        fail_msg("file of %llu bytes: %u records, want %u", (unsigned long long)size, c.n, keep);
    for (uint32_t i = 0; i < keep; i++)
        check_rec(&c, i, tail_lens[i], 3, i);
    assert_int_equal(torn, size - good);
    expect_size(t, j, good, keep);
    coll_free(&c);

    append_gen(j, 33, 4, 0);
    assert_int_equal(nf_journal_sync(j), 0);
    nf_journal_close(j);
    j = open_replay(t->dir, &c, &torn);
    assert_int_equal(torn, 0);
    assert_int_equal(c.n, keep + 1);
    check_rec(&c, keep, 33, 4, 0);
    nf_journal_close(j);
    coll_free(&c);
}

static void test_torn_tail(void **state) {
    tdir *t = *state;
    size_t n;
    uint64_t ends[NTAIL];
    uint8_t *orig = write_six(t, &n, ends);
    assert_int_equal(n, ends[NTAIL - 1]);
    uint64_t start = ends[NTAIL - 2]; /* the last frame is [start, n) */

    /* a crash at every byte inside the last frame */
    for (uint64_t cut = start + 1; cut < n; cut++) {
        spill(t->path, orig, cut);
        expect_cut(t, NTAIL - 1, start, cut);
    }
    /* one byte of the last frame changed: length, CRC or payload */
    for (uint64_t pos = start; pos < n; pos++) {
        orig[pos] ^= 0x5a;
        spill(t->path, orig, n);
        orig[pos] ^= 0x5a;
        expect_cut(t, NTAIL - 1, start, n);
    }
    /* a frame of length 0, and one longer than the limit with enough bytes after it */
    uint8_t *longer = malloc(n + 200);
    memcpy(longer, orig, n);
    memset(longer + n, 0, 200);
    spill(t->path, longer, n + 8);
    expect_cut(t, NTAIL, n, n + 8);
    le32(longer + n, MAXREC + 1);
    spill(t->path, longer, n + 200);
    expect_cut(t, NTAIL, n, n + 200);
    /* only a few bytes of the next frame header */
    spill(t->path, longer, n + 3);
    expect_cut(t, NTAIL, n, n + 3);
    free(longer);
    free(orig);
}

/* Appending without a replay still lands after the last good frame. */
static void test_append_without_replay(void **state) {
    tdir *t = *state;
    size_t n;
    uint64_t ends[NTAIL];
    uint8_t *orig = write_six(t, &n, ends);
    spill(t->path, orig, n - 5);
    nf_journal *j = open_ok(t->dir);
    append_gen(j, 20, 4, 1);
    assert_int_equal(nf_journal_sync(j), 0);
    assert_int_equal(nf_journal_records(j), NTAIL);
    nf_journal_close(j);
    coll c = {0};
    uint64_t torn = 99;
    j = open_replay(t->dir, &c, &torn);
    assert_int_equal(torn, 0);
    assert_int_equal(c.n, NTAIL);
    check_rec(&c, NTAIL - 2, tail_lens[NTAIL - 2], 3, NTAIL - 2);
    check_rec(&c, NTAIL - 1, 20, 4, 1);
    nf_journal_close(j);
    coll_free(&c);
    free(orig);
}

static void test_replay_rules(void **state) {
    tdir *t = *state;
    size_t n;
    uint64_t ends[NTAIL];
    uint8_t *orig = write_six(t, &n, ends);
    spill(t->path, orig, n - 1); /* torn, but the callback stops before the tail is seen */

    nf_journal *j = open_ok(t->dir);
    coll c = {.stop_at = 3};
    uint64_t torn = 99;
    assert_int_equal(nf_journal_replay(j, collect, &c, &torn, NULL), 7);
    assert_int_equal(c.n, 3);
    assert_int_equal(file_size(t->path), n - 1);                                 /* nothing cut */
    assert_int_equal(nf_journal_replay(j, collect, &c, &torn, NULL), NF_EINVAL); /* once */
    assert_int_equal(c.n, 3);
    coll_free(&c);

    assert_int_equal(nf_journal_append(j, "x", 0), NF_EINVAL);
    assert_int_equal(nf_journal_append(j, NULL, 1), NF_EINVAL);
    uint8_t *huge = calloc(1, MAXREC + 1);
    assert_int_equal(nf_journal_append(j, huge, MAXREC + 1), NF_EINVAL);
    assert_int_equal(nf_journal_append(j, huge, MAXREC), 0);
    free(huge);
    nf_journal_close(j); /* the sync cuts the torn tail before writing */
    nf_journal_close(NULL);

    j = open_replay(t->dir, &c, &torn);
    assert_int_equal(torn, 0);
    assert_int_equal(c.n, NTAIL);
    assert_int_equal(c.len[NTAIL - 1], MAXREC);
    nf_journal_close(j);
    coll_free(&c);

    /* replay after an append is refused */
    j = open_ok(t->dir);
    assert_int_equal(nf_journal_append(j, "y", 1), 0);
    assert_int_equal(nf_journal_replay(j, collect, &c, &torn, NULL), NF_EINVAL);
    assert_int_equal(torn, 0);
    nf_journal_close(j);
    free(orig);
}

/* ---- files that are not ours, open errors, the lock ------------------------------------------ */

static void expect_not_ours(const tdir *t, const void *content, size_t len, const char *want) {
    spill(t->path, content, len);
    nf_diag d;
    memset(&d, 0x55, sizeof d);
    open_fails(t->dir, NF_EPARSE, t->path, &d);
    assert_int_equal(d.line, 0);
    if (!strstr(d.msg, t->path) || !strstr(d.msg, want))
        fail_msg("message '%s' lacks the path or '%s'", d.msg, want);
    if (!same_file(t->path, (const uint8_t *)content, len))
        fail_msg("the file that is not ours was changed");
}

static void test_not_ours(void **state) {
    tdir *t = *state;
    assert_int_equal(mkdir(t->dir, 0700), 0);
    const char *text = "hello, this is not a journal\n";
    expect_not_ours(t, text, strlen(text), "not a netfab journal");
    expect_not_ours(t, "xy", 2, "not a netfab journal");
    expect_not_ours(t, "NFJRNL\x02\x00\x05\x00\x00\x00", 10, "version 2");

    /* the lock was released by the failed opens */
    char lock[200];
    snprintf(lock, sizeof lock, "%s/lock", t->dir);
    int fd = open(lock, O_RDWR);
    assert_true(fd >= 0);
    assert_int_equal(flock(fd, LOCK_EX | LOCK_NB), 0);
    close(fd);

    /* a prefix of the header is ours, torn while it was being created */
    spill(t->path, "NFJ", 3);
    nf_journal *j = open_ok(t->dir);
    size_t n;
    uint8_t *b = slurp(t->path, &n);
    assert_int_equal(n, 8);
    assert_memory_equal(b, "NFJRNL\x01\x00", 8);
    free(b);
    nf_journal_close(j);

    /* an empty file gets the header */
    spill(t->path, "", 0);
    j = open_ok(t->dir);
    assert_int_equal(file_size(t->path), 8);
    nf_journal_close(j);
}

static void test_open_errors(void **state) {
    tdir *t = *state;
    char dir[200];
    nf_diag d;
    snprintf(dir, sizeof dir, "%s/no/such", t->root);
    open_fails(dir, NF_EIO, dir, &d);
    expect_in(d.msg, strerror(ENOENT));

    snprintf(dir, sizeof dir, "%s/plain", t->root);
    spill(dir, "x", 1);
    open_fails(dir, NF_EIO, NULL, &d);
    expect_in(d.msg, strerror(ENOTDIR));

    /* the journal is a directory */
    assert_int_equal(mkdir(t->dir, 0700), 0);
    assert_int_equal(mkdir(t->path, 0700), 0);
    open_fails(t->dir, NF_EIO, t->path, &d);
    open_fails("", NF_EINVAL, NULL, NULL);
}

static void test_lock(void **state) {
    tdir *t = *state;
    nf_journal *a = open_ok(t->dir);
    nf_diag d;
    open_fails(t->dir, NF_ELOCKED, NULL, &d);
    expect_in(d.msg, "another process holds");
    expect_in(d.msg, t->dir);
    open_fails(t->dir, NF_ELOCKED, NULL, NULL); /* diag may be NULL */

    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        nf_journal *c = NULL;
        _exit(nf_journal_open(t->dir, &c, NULL) == NF_ELOCKED && c == NULL ? 0 : 1);
    }
    int status;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFEXITED(status));
    assert_int_equal(WEXITSTATUS(status), 0);

    nf_journal_close(a);
    nf_journal_close(open_ok(t->dir));
}

/* ---- compaction ------------------------------------------------------------------------------ */

typedef struct snapctx {
    nf_journal *live;
    uint64_t live_bytes; /* nf_journal_bytes(live) emit must see (the queue synced first) */
    uint32_t nrec, len;  /* emit appends nrec generated records of len bytes (seed 6) */
    int ret;             /* and returns this */
    bool misuse;         /* and tries what a snapshot refuses */
} snapctx;

static int emit(void *ud, nf_journal *snap) {
    snapctx *s = ud;
    if (s->live) assert_int_equal(nf_journal_bytes(s->live), s->live_bytes);
    if (s->misuse) {
        assert_int_equal(nf_journal_compact(snap, emit, ud), NF_EINVAL);
        assert_int_equal(nf_journal_replay(snap, collect, NULL, NULL, NULL), NF_EINVAL);
        nf_journal_close(snap); /* a no-op */
    }
    uint8_t *b = malloc(s->len);
    for (uint32_t i = 0; i < s->nrec; i++) {
        fill(b, s->len, 6, i);
        int rc = nf_journal_append(snap, b, s->len);
        if (rc) {
            free(b);
            return rc;
        }
    }
    free(b);
    return s->ret;
}

static void test_compact(void **state) {
    tdir *t = *state;
    nf_journal *j = open_ok(t->dir);
    for (uint32_t i = 0; i < 1000; i++)
        append_gen(j, 20 + i % 180, 8, i);
    assert_int_equal(nf_journal_sync(j), 0);
    append_gen(j, 50, 8, 1000); /* queued: compaction syncs it first */
    uint64_t before = nf_journal_bytes(j) + 58;
    snapctx s = {.live = j, .live_bytes = before, .nrec = 3, .len = 64, .misuse = true};
    assert_int_equal(nf_journal_compact(j, emit, &s), 0);
    assert_int_equal(nf_journal_records(j), 3);
    assert_int_equal(nf_journal_bytes(j), 8 + 3 * 72);
    assert_int_equal(file_size(t->path), 8 + 3 * 72);
    assert_true(file_size(t->path) < (long)before);
    char tmp[200];
    snprintf(tmp, sizeof tmp, "%s.tmp", t->path);
    assert_false(exists(tmp));

    append_gen(j, 9, 8, 2000);
    nf_journal_close(j);
    coll c = {0};
    uint64_t torn = 99;
    j = open_replay(t->dir, &c, &torn);
    assert_int_equal(torn, 0);
    assert_int_equal(c.n, 4);
    for (uint32_t i = 0; i < 3; i++)
        check_rec(&c, i, 64, 6, i);
    check_rec(&c, 3, 9, 8, 2000);
    coll_free(&c);

    /* a snapshot larger than its queue limit (written out while emit runs), then an empty one */
    s = (snapctx){.nrec = 9, .len = MAXREC};
    assert_int_equal(nf_journal_compact(j, emit, &s), 0);
    assert_int_equal(nf_journal_records(j), 9);
    nf_journal_close(j);
    j = open_replay(t->dir, &c, &torn);
    assert_int_equal(c.n, 9);
    for (uint32_t i = 0; i < 9; i++)
        check_rec(&c, i, MAXREC, 6, i);
    coll_free(&c);
    s = (snapctx){0};
    assert_int_equal(nf_journal_compact(j, emit, &s), 0);
    assert_int_equal(file_size(t->path), 8);
    assert_int_equal(nf_journal_records(j), 0);
    nf_journal_close(j);
}

static void test_compact_fails(void **state) {
    tdir *t = *state;
    nf_journal *j = open_ok(t->dir);
    for (uint32_t i = 0; i < 50; i++)
        append_gen(j, 30, 9, i);
    assert_int_equal(nf_journal_sync(j), 0);
    size_t n;
    uint8_t *orig = slurp(t->path, &n);
    char tmp[200];
    snprintf(tmp, sizeof tmp, "%s.tmp", t->path);

    /* emit fails after appending: its value comes back, nothing changed */
    snapctx s = {.nrec = 2, .len = 100, .ret = 42};
    assert_int_equal(nf_journal_compact(j, emit, &s), 42);
    /* the temporary file cannot be made */
    assert_int_equal(mkdir(tmp, 0700), 0);
    s.ret = 0;
    assert_int_equal(nf_journal_compact(j, emit, &s), NF_EIO);
    assert_int_equal(rmdir(tmp), 0);

    assert_false(exists(tmp));
    if (!same_file(t->path, orig, n)) fail_msg("the failed compaction changed the journal");
    expect_size(t, j, n, 50);

    append_gen(j, 30, 9, 50); /* j still writes to the old journal */
    nf_journal_close(j);
    replay_expect(t->dir, 51, NULL, 30, 9);
    free(orig);
}

/* ---- a write failing half-way ---------------------------------------------------------------- */

/* RLIMIT_FSIZE makes the kernel write part of the batch and then refuse (EFBIG): the sync must
 * fail, leave no piece of the batch in the file, keep the queue, and succeed once room returns. */
static void test_sync_write_fails(void **state) {
    tdir *t = *state;
    nf_journal *j = open_ok(t->dir);
    assert_int_equal(nf_journal_replay(j, collect, &(coll){0}, NULL, NULL), 0);
    for (uint32_t i = 0; i < 3; i++)
        append_gen(j, 40, 10, i);
    assert_int_equal(nf_journal_sync(j), 0);
    long good = file_size(t->path);
    assert_int_equal(good, 8 + 3 * 48);

    struct rlimit old, lim;
    assert_int_equal(getrlimit(RLIMIT_FSIZE, &old), 0);
    void (*oldsig)(int) = signal(SIGXFSZ, SIG_IGN);
    append_gen(j, 100, 10, 3);
    append_gen(j, 100, 10, 4);
    for (long room = 0; room <= 150; room += 30) {
        lim = old;
        lim.rlim_cur = (rlim_t)(good + room);
        assert_int_equal(setrlimit(RLIMIT_FSIZE, &lim), 0);
        int rc = nf_journal_sync(j);
        assert_int_equal(setrlimit(RLIMIT_FSIZE, &old), 0);
        assert_int_equal(rc, NF_EIO);
        expect_size(t, j, (uint64_t)good, 3);
    }
    signal(SIGXFSZ, oldsig);
    assert_int_equal(nf_journal_sync(j), 0);
    expect_size(t, j, (uint64_t)good + 2 * 108, 5);
    nf_journal_close(j);
    replay_expect(t->dir, 5, (const uint32_t[]){40, 40, 40, 100, 100}, 0, 10);
}

/* ---- damage in the middle -------------------------------------------------------------------- */

/* The file holds a damaged copy of the six records with a valid frame after the damage: replay
 * must deliver the records before it, fail with NF_EPARSE and a message naming the file, the
 * offsets and the repair option, and leave every byte of the file as it was. */
static void expect_refused(const tdir *t, const uint8_t *b, size_t n, uint32_t keep, uint64_t at,
                           uint64_t next) {
    spill(t->path, b, n);
    nf_journal *j = open_ok(t->dir);
    coll c = {0};
    uint64_t torn = 99;
    nf_diag d;
    assert_int_equal(nf_journal_replay(j, collect, &c, &torn, &d), NF_EPARSE);
    assert_int_equal(torn, 0);
    assert_int_equal(c.n, keep);
    for (uint32_t i = 0; i < keep; i++)
        check_rec(&c, i, tail_lens[i], 3, i);
    assert_string_equal(d.file, t->path);
    char want[64];
    expect_in(d.msg, t->path);
    snprintf(want, sizeof want, "at byte %llu,", (unsigned long long)at);
    expect_in(d.msg, want);
    snprintf(want, sizeof want, "after %u good records", keep);
    expect_in(d.msg, want);
    snprintf(want, sizeof want, "next valid frame is at byte %llu", (unsigned long long)next);
    expect_in(d.msg, want);
    expect_in(d.msg, "left untouched");
    expect_in(d.msg, "--repair-journal");
    /* nothing may land behind the damage either */
    assert_int_equal(nf_journal_append(j, "z", 1), 0);
    assert_int_equal(nf_journal_sync(j), NF_EPARSE);
    nf_journal_close(j);
    coll_free(&c);
    if (!same_file(t->path, b, n)) fail_msg("the damaged journal was changed");

    /* appending without a replay: the first sync finds the damage and writes nothing */
    j = open_ok(t->dir);
    append_gen(j, 20, 4, 1);
    assert_int_equal(nf_journal_sync(j), NF_EPARSE);
    nf_journal_close(j);
    if (!same_file(t->path, b, n)) fail_msg("the damaged journal was changed by a sync");
}

static void test_damage_refused(void **state) {
    tdir *t = *state;
    size_t n;
    uint64_t ends[NTAIL];
    uint8_t *orig = write_six(t, &n, ends);
    uint8_t *b = malloc(n);

    /* one flipped bit in the payload, the CRC or the length of record 2 */
    uint64_t offs[] = {ends[1] + 8 + 100, ends[1] + 5, ends[1], ends[1] + 2, ends[1] + 3};
    for (size_t k = 0; k < sizeof offs / sizeof offs[0]; k++) {
        memcpy(b, orig, n);
        b[offs[k]] ^= 1;
        expect_refused(t, b, n, 2, ends[1], ends[2]);
    }
    /* a length of 0, and records 2 and 3 zeroed whole */
    memcpy(b, orig, n);
    le32(b + ends[1], 0);
    expect_refused(t, b, n, 2, ends[1], ends[2]);
    memcpy(b, orig, n);
    memset(b + ends[1], 0, ends[3] - ends[1]);
    expect_refused(t, b, n, 2, ends[1], ends[3]);
    /* the first frame, and the one before the last */
    memcpy(b, orig, n);
    b[8 + 8 + 4] ^= 0x80;
    expect_refused(t, b, n, 0, 8, ends[0]);
    memcpy(b, orig, n);
    b[ends[3] + 9] ^= 0x10;
    expect_refused(t, b, n, 4, ends[3], ends[4]);

    /* the same damage in the last frame is a torn tail: cut */
    memcpy(b, orig, n);
    b[ends[4] + 9] ^= 0x10;
    spill(t->path, b, n);
    expect_cut(t, NTAIL - 1, ends[4], n);
    free(b);
    free(orig);
}

/* The forward search streams through a large file: a journal of about 3 MiB of records whose
 * middle is overwritten by 3 MiB of zeros or of random bytes (more than the search's ring, so it
 * wraps), and a tail of random bytes holding one valid frame near its end. */
static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void test_damage_search(void **state) {
    tdir *t = *state;
    enum { N = 300 };
    nf_journal *j = open_ok(t->dir);
    uint64_t ends[N], off = 8;
    for (uint32_t i = 0; i < N; i++) {
        uint32_t len = i == 150 ? MAXREC : 1 + (i * 7919u) % 20000u;
        append_gen(j, len, 13, i);
        ends[i] = off += 8 + len;
    }
    nf_journal_close(j);
    size_t n;
    uint8_t *orig = slurp(t->path, &n);
    uint8_t *b = malloc(n + (6u << 20));
    /* damage from inside record 40 to inside record 250 */
    uint64_t from = ends[39] + 3, to = ends[249] - 2;
    assert_true(to - from > (2u << 20));
    for (int garbage = 0; garbage <= 1; garbage++) {
        memcpy(b, orig, n);
        if (garbage)
            fill(b + from, (uint32_t)(to - from), 77, 0);
        else
            memset(b + from, 0, to - from);
        spill(t->path, b, n);
        j = open_ok(t->dir);
        coll c = {0};
        nf_diag d;
        double t0 = now_s();
        assert_int_equal(nf_journal_replay(j, collect, &c, NULL, &d), NF_EPARSE);
        print_message("    %s over %.1f MiB: refused in %.3f s\n",
                      garbage ? "random bytes" : "zeros", (double)(to - from) / (1 << 20),
                      now_s() - t0);
        assert_int_equal(c.n, 40);
        char want[64];
        snprintf(want, sizeof want, "next valid frame is at byte %llu",
                 (unsigned long long)ends[249]);
        expect_in(d.msg, want);
        nf_journal_close(j);
        coll_free(&c);
        if (!same_file(t->path, b, n)) fail_msg("the damaged journal was changed");
    }

    /* 5 MiB of random bytes after the journal: a torn tail, searched to its end and cut; then with
     * one valid frame (of the largest size) planted 4 MiB into it: damage, found exactly there */
    size_t tail = 5u << 20;
    memcpy(b, orig, n);
    fill(b + n, (uint32_t)tail, 78, 0);
    spill(t->path, b, n + tail);
    coll c = {0};
    uint64_t torn = 0;
    double t0 = now_s();
    j = open_replay(t->dir, &c, &torn);
    print_message("    random tail of %zu MiB: cut in %.3f s\n", tail >> 20, now_s() - t0);
    assert_int_equal(torn, tail);
    assert_int_equal(c.n, N);
    nf_journal_close(j);
    coll_free(&c);

    uint64_t plant = n + (4u << 20) + 5;
    uint8_t *rec = malloc(MAXREC);
    fill(rec, MAXREC, 79, 0);
    le32(b + plant, MAXREC);
    memcpy(b + plant + 8, rec, MAXREC);
    uint32_t crc = nf__crc32c(nf__crc32c(0, b + plant, 4), rec, MAXREC);
    le32(b + plant + 4, crc);
    size_t total = plant + 8 + MAXREC;
    spill(t->path, b, total);
    j = open_ok(t->dir);
    nf_diag d;
    assert_int_equal(nf_journal_replay(j, collect, &c, NULL, &d), NF_EPARSE);
    char want[64];
    snprintf(want, sizeof want, "next valid frame is at byte %llu", (unsigned long long)plant);
    expect_in(d.msg, want);
    nf_journal_close(j);
    coll_free(&c);
    /* salvage reads the planted record after the garbage */
    j = open_ok(t->dir);
    nf_journal_salvage_report rep;
    assert_int_equal(nf_journal_salvage(j, collect, &c, &rep, &d), 0);
    assert_int_equal(rep.records, N + 1);
    assert_int_equal(rep.regions, 1);
    assert_int_equal(rep.lost_bytes, plant - n);
    assert_int_equal(c.len[N], MAXREC);
    assert_memory_equal(c.rec[N], rec, MAXREC);
    nf_journal_close(j);
    coll_free(&c);
    free(rec);
    free(b);
    free(orig);
}

/* ---- salvage --------------------------------------------------------------------------------- */

/* emit for a compaction after a salvage: appends the records collected in a coll. */
static int emit_coll(void *ud, nf_journal *snap) {
    const coll *c = ud;
    for (uint32_t i = 0; i < c->n; i++) {
        int rc = nf_journal_append(snap, c->rec[i], c->len[i]);
        if (rc) return rc;
    }
    return 0;
}

static void test_salvage(void **state) {
    tdir *t = *state;
    size_t n;
    uint64_t ends[NTAIL];
    uint8_t *orig = write_six(t, &n, ends);
    uint8_t *b = malloc(n + 100);
    memcpy(b, orig, n);
    b[ends[1] + 8 + 100] ^= 1; /* record 2 damaged */
    spill(t->path, b, n);

    /* fn rejects the second record it sees (stop_at): counted, and the salvage goes on */
    nf_journal *j = open_ok(t->dir);
    coll c = {.stop_at = 2};
    nf_journal_salvage_report rep;
    nf_diag d;
    assert_int_equal(nf_journal_salvage(j, collect, &c, &rep, &d), 0);
    assert_int_equal(rep.records, NTAIL - 1);
    assert_int_equal(rep.rejected, 1);
    assert_int_equal(rep.regions, 1);
    assert_int_equal(rep.lost_bytes, ends[2] - ends[1]);
    assert_int_equal(rep.torn, 0);
    assert_string_equal(rep.copy, "journal.damaged.1");
    assert_int_equal(c.n, NTAIL - 1);
    for (uint32_t i = 0, k = 0; i < NTAIL; i++)
        if (i != 2) check_rec(&c, k++, tail_lens[i], 3, i);
    char copy[200];
    snprintf(copy, sizeof copy, "%s/journal.damaged.1", t->dir);
    if (!same_file(copy, b, n)) fail_msg("the copy differs from the damaged journal");
    if (!same_file(t->path, b, n)) fail_msg("salvage changed the journal");
    struct stat st;
    assert_int_equal(stat(copy, &st), 0);
    assert_int_equal(st.st_mode & 0777, 0600);

    /* nothing is written behind the damage before the compaction */
    assert_int_equal(nf_journal_replay(j, collect, &c, NULL, NULL), NF_EINVAL);
    assert_int_equal(nf_journal_salvage(j, collect, &c, &rep, NULL), NF_EINVAL);
    assert_int_equal(nf_journal_append(j, "x", 1), NF_EINVAL);
    assert_int_equal(nf_journal_sync(j), NF_EINVAL);
    if (!same_file(t->path, b, n)) fail_msg("an append after the salvage reached the journal");
    assert_int_equal(nf_journal_compact(j, emit_coll, &c), 0);
    append_gen(j, 33, 4, 0);
    assert_int_equal(nf_journal_sync(j), 0);
    nf_journal_close(j);
    coll r = {0};
    uint64_t torn = 99;
    j = open_replay(t->dir, &r, &torn);
    assert_int_equal(torn, 0);
    assert_int_equal(r.n, NTAIL);
    for (uint32_t i = 0, k = 0; i < NTAIL; i++)
        if (i != 2) check_rec(&r, k++, tail_lens[i], 3, i);
    check_rec(&r, NTAIL - 1, 33, 4, 0);
    nf_journal_close(j);
    coll_free(&r);
    coll_free(&c);

    /* two damaged regions and a torn tail; journal.damaged.1 is taken and journal.damaged.2 is
     * a planted link to a victim: the copy goes to .3 and the victim is untouched */
    memcpy(b, orig, n);
    b[ends[0] + 8] ^= 4;               /* record 1 (its only payload byte) */
    memset(b + ends[2] + 2, 0xee, 30); /* record 3 */
    memcpy(b + n, orig + ends[4], 20); /* a torn copy of the last frame */
    spill(t->path, b, n + 20);
    char victim[200], link2[200];
    snprintf(victim, sizeof victim, "%s/victim", t->root);
    snprintf(link2, sizeof link2, "%s/journal.damaged.2", t->dir);
    spill(victim, "precious", 8);
    assert_int_equal(symlink(victim, link2), 0);
    j = open_ok(t->dir);
    assert_int_equal(nf_journal_salvage(j, collect, &c, &rep, &d), 0);
    assert_string_equal(rep.copy, "journal.damaged.3");
    assert_int_equal(rep.records, 4); /* records 0, 2, 4, 5 */
    assert_int_equal(rep.regions, 2);
    assert_int_equal(rep.lost_bytes, (ends[1] - ends[0]) + (ends[3] - ends[2]));
    assert_int_equal(rep.torn, 20);
    check_rec(&c, 0, tail_lens[0], 3, 0);
    check_rec(&c, 1, tail_lens[2], 3, 2);
    check_rec(&c, 2, tail_lens[4], 3, 4);
    check_rec(&c, 3, tail_lens[5], 3, 5);
    assert_true(same_file(victim, (const uint8_t *)"precious", 8));
    nf_journal_close(j);
    coll_free(&c);

    /* no damage: like a replay (the torn tail cut, no copy, nothing lost, no compaction needed) */
    memcpy(b, orig, n);
    spill(t->path, b, n - 3);
    j = open_ok(t->dir);
    memset(&rep, 0x55, sizeof rep);
    assert_int_equal(nf_journal_salvage(j, collect, &c, &rep, &d), 0);
    assert_int_equal(rep.records, NTAIL - 1);
    assert_int_equal(rep.rejected, 0);
    assert_int_equal(rep.regions, 0);
    assert_int_equal(rep.lost_bytes, 0);
    assert_int_equal(rep.torn, n - 3 - ends[4]);
    assert_string_equal(rep.copy, "");
    assert_int_equal(file_size(t->path), ends[4]);
    char copy4[200];
    snprintf(copy4, sizeof copy4, "%s/journal.damaged.4", t->dir);
    assert_false(exists(copy4));
    append_gen(j, 33, 4, 0);
    assert_int_equal(nf_journal_sync(j), 0);
    nf_journal_close(j);
    coll_free(&c);
    j = open_replay(t->dir, &c, &torn);
    assert_int_equal(c.n, NTAIL);
    assert_int_equal(torn, 0);
    nf_journal_close(j);
    coll_free(&c);

    /* salvage after a replay, or an append, is refused; fn is required */
    j = open_ok(t->dir);
    assert_int_equal(nf_journal_salvage(j, NULL, NULL, &rep, NULL), NF_EINVAL);
    assert_int_equal(nf_journal_append(j, "y", 1), 0);
    assert_int_equal(nf_journal_salvage(j, collect, &c, &rep, NULL), NF_EINVAL);
    nf_journal_close(j);
    free(b);
    free(orig);
}

/* ---- a full disk ----------------------------------------------------------------------------- */

/* Mounts a 64 KiB tmpfs at root/mnt and makes root/mnt/state the journal directory. Skips the test
 * when mounting is not allowed (not root, no CAP_SYS_ADMIN). */
static void tiny_fs(tdir *t) {
    char mnt[96];
    snprintf(mnt, sizeof mnt, "%s/mnt", t->root);
    assert_int_equal(mkdir(mnt, 0700), 0);
    if (mount("tmpfs", mnt, "tmpfs", 0, "size=64k,mode=0700") != 0) {
        print_message("    cannot mount a tmpfs on %s (%s): test skipped\n", mnt, strerror(errno));
        skip();
    }
    snprintf(t->mnt, sizeof t->mnt, "%s", mnt);
    snprintf(t->dir, sizeof t->dir, "%s/state", mnt);
    snprintf(t->path, sizeof t->path, "%s/journal", t->dir);
}

/* Fills the tiny file system with mnt/fill; returns its size. */
static long fill_fs(const tdir *t, char *fill_path, size_t cap) {
    snprintf(fill_path, cap, "%s/fill", t->mnt);
    int fd = open(fill_path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    assert_true(fd >= 0);
    char blk[512];
    memset(blk, 0xab, sizeof blk);
    long total = 0;
    for (;;) {
        ssize_t w = write(fd, blk, sizeof blk);
        if (w <= 0) break;
        total += w;
    }
    assert_int_equal(errno, ENOSPC);
    close(fd);
    return total;
}

static void test_sync_enospc(void **state) {
    tdir *t = *state;
    tiny_fs(t);
    nf_journal *j = open_ok(t->dir);
    assert_int_equal(nf_journal_replay(j, collect, &(coll){0}, NULL, NULL), 0);
    for (uint32_t i = 0; i < 3; i++)
        append_gen(j, 40, 14, i);
    assert_int_equal(nf_journal_sync(j), 0);
    long good = file_size(t->path);
    assert_int_equal(nf_journal_last_errno(j), 0);

    /* a batch of 10 KiB: more than the rest of the journal's page */
    for (uint32_t i = 3; i < 13; i++)
        append_gen(j, 1000, 14, i);
    char fill_path[200];
    fill_fs(t, fill_path, sizeof fill_path);
    for (int attempt = 0; attempt < 2; attempt++) {
        assert_int_equal(nf_journal_sync(j), NF_ENOSPC);
        assert_int_equal(nf_journal_last_errno(j), ENOSPC);
        expect_size(t, j, (uint64_t)good, 3);
    }
    /* room again: the kept batch is written once, after the last good frame */
    assert_int_equal(unlink(fill_path), 0);
    assert_int_equal(nf_journal_sync(j), 0);
    expect_size(t, j, (uint64_t)good + 10 * 1008, 13);
    nf_journal_close(j);
    uint32_t lens[13];
    for (uint32_t i = 0; i < 13; i++)
        lens[i] = i < 3 ? 40 : 1000;
    replay_expect(t->dir, 13, lens, 0, 14);
}

/* The sync in three steps (group commit): a record appended while a batch is written follows
 * it; nothing but appends may come in between; a batch that fails (a real ENOSPC) goes back before
 * the records appended since, and the next sync writes them all once, in order. */
static void test_sync_split(void **state) {
    tdir *t = *state;
    tiny_fs(t);
    nf_journal *j = open_ok(t->dir);
    assert_int_equal(nf_journal_replay(j, collect, &(coll){0}, NULL, NULL), 0);
    long start = file_size(t->path);
    for (uint32_t i = 0; i < 3; i++)
        append_gen(j, 40, 15, i);
    assert_int_equal(nf_journal_sync_begin(j), 0);
    append_gen(j, 40, 15, 3); /* while records 0..2 are written */
    assert_int_equal(nf_journal_sync(j), NF_EINVAL);
    assert_int_equal(nf_journal_sync_begin(j), NF_EINVAL);
    assert_int_equal(nf_journal_sync_write(j), 0);
    assert_int_equal(nf_journal_sync_end(j, 0), 0);
    expect_size(t, j, (uint64_t)start + 3 * 48, 3);
    long good = file_size(t->path);

    for (uint32_t i = 4; i < 14; i++) /* 10 KiB: more than the rest of the journal's page */
        append_gen(j, 1000, 15, i);
    char fill_path[200];
    fill_fs(t, fill_path, sizeof fill_path);
    assert_int_equal(nf_journal_sync_begin(j), 0);
    append_gen(j, 40, 15, 14);
    assert_int_equal(nf_journal_sync_write(j), NF_ENOSPC);
    assert_int_equal(nf_journal_sync_end(j, NF_ENOSPC), 0);
    assert_int_equal(nf_journal_last_errno(j), ENOSPC);
    expect_size(t, j, (uint64_t)good, 3);

    assert_int_equal(unlink(fill_path), 0);
    assert_int_equal(nf_journal_sync(j), 0);
    expect_size(t, j, (uint64_t)good + 48 + 10 * 1008 + 48, 15);
    nf_journal_close(j);
    uint32_t lens[15];
    for (uint32_t i = 0; i < 15; i++)
        lens[i] = i >= 4 && i < 14 ? 1000 : 40;
    replay_expect(t->dir, 15, lens, 0, 15);
}

static void test_compact_enospc(void **state) {
    tdir *t = *state;
    tiny_fs(t);
    nf_journal *j = open_ok(t->dir);
    for (uint32_t i = 0; i < 12; i++)
        append_gen(j, 1000, 15, i);
    assert_int_equal(nf_journal_sync(j), 0);
    size_t n;
    uint8_t *orig = slurp(t->path, &n);
    char tmp[200], fill_path[200];
    snprintf(tmp, sizeof tmp, "%s.tmp", t->path);
    snapctx s = {.nrec = 30, .len = 1000};

    /* full: journal.tmp gets no page at all; then 12 KiB free: the snapshot fails half-way */
    long size = fill_fs(t, fill_path, sizeof fill_path);
    for (int room = 0; room <= 1; room++) {
        if (room) assert_int_equal(truncate(fill_path, size - 12288), 0);
        assert_int_equal(nf_journal_compact(j, emit, &s), NF_ENOSPC);
        assert_int_equal(nf_journal_last_errno(j), ENOSPC);
        assert_false(exists(tmp));
        if (!same_file(t->path, orig, n)) fail_msg("the failed compaction changed the journal");
        expect_size(t, j, n, 12);
    }
    /* the old journal is still in use */
    assert_int_equal(unlink(fill_path), 0);
    append_gen(j, 1000, 15, 12);
    assert_int_equal(nf_journal_sync(j), 0);
    nf_journal_close(j);
    replay_expect(t->dir, 13, NULL, 1000, 15);
    free(orig);
}

/* ---- links and permissions ------------------------------------------------------------------- */

static void test_symlinks(void **state) {
    tdir *t = *state;
    char victim[200], tmp[200], lock[200], other[200], via[200];
    snprintf(victim, sizeof victim, "%s/victim", t->root);
    snprintf(tmp, sizeof tmp, "%s/journal.tmp", t->dir);
    snprintf(lock, sizeof lock, "%s/lock", t->dir);
    spill(victim, "precious bytes", 14);

    /* a link planted as journal.tmp: compaction removes the link, not what it points to */
    nf_journal *j = open_ok(t->dir);
    for (uint32_t i = 0; i < 5; i++)
        append_gen(j, 50, 16, i);
    nf_journal_close(j);
    assert_int_equal(symlink(victim, tmp), 0);
    coll c = {0};
    j = open_replay(t->dir, &c, NULL);
    snapctx s = {.nrec = 2, .len = 64};
    assert_int_equal(nf_journal_compact(j, emit, &s), 0);
    nf_journal_close(j);
    coll_free(&c);
    if (!same_file(victim, (const uint8_t *)"precious bytes", 14))
        fail_msg("the victim was written through the link");
    assert_false(exists(tmp));
    j = open_replay(t->dir, &c, NULL);
    assert_int_equal(c.n, 2);
    nf_journal_close(j);
    coll_free(&c);

    /* the journal or the lock a link: refused, the target untouched */
    nf_diag d;
    const char *names[] = {t->path, lock};
    for (int k = 0; k < 2; k++) {
        char moved[220];
        snprintf(moved, sizeof moved, "%s.moved", names[k]);
        assert_int_equal(rename(names[k], moved), 0);
        assert_int_equal(symlink(victim, names[k]), 0);
        open_fails(t->dir, NF_EINVAL, names[k], &d);
        expect_in(d.msg, "symbolic link");
        if (!same_file(victim, (const uint8_t *)"precious bytes", 14))
            fail_msg("the victim was opened");
        assert_int_equal(unlink(names[k]), 0);
        assert_int_equal(rename(moved, names[k]), 0);
    }

    /* a journal that is not a regular file */
    assert_int_equal(unlink(t->path), 0);
    assert_int_equal(mkfifo(t->path, 0600), 0);
    open_fails(t->dir, NF_EINVAL, NULL, &d);
    expect_in(d.msg, "not a regular file");
    assert_int_equal(unlink(t->path), 0);

    /* the directory itself may be reached through a link */
    snprintf(other, sizeof other, "%s/real", t->root);
    snprintf(via, sizeof via, "%s/via", t->root);
    assert_int_equal(mkdir(other, 0700), 0);
    assert_int_equal(symlink(other, via), 0);
    j = open_ok(via);
    append_gen(j, 10, 16, 0);
    nf_journal_close(j);
    snprintf(other, sizeof other, "%s/real/journal", t->root);
    assert_int_equal(file_size(other), 8 + 18);
}

/* A state directory that others can write to, or that belongs to someone else, is refused with a
 * message giving the mode and the fix; nothing is created in it. */
static void expect_bad_dir(const tdir *t, mode_t mode, const char *want) {
    assert_int_equal(chmod(t->dir, mode), 0);
    nf_diag d;
    open_fails(t->dir, NF_EINVAL, t->dir, &d);
    char m[16];
    snprintf(m, sizeof m, "mode %04o", (unsigned)mode);
    expect_in(d.msg, m);
    expect_in(d.msg, want);
    expect_in(d.msg, "chmod 700");
    expect_in(d.msg, t->dir);
    char lock[200];
    snprintf(lock, sizeof lock, "%s/lock", t->dir);
    assert_false(exists(lock));
    assert_false(exists(t->path));
}

static void test_dir_perms(void **state) {
    tdir *t = *state;
    assert_int_equal(mkdir(t->dir, 0700), 0);
    expect_bad_dir(t, 0777, "writable by group or others");
    expect_bad_dir(t, 01777, "writable by group or others");
    expect_bad_dir(t, 0770, "writable by group or others");
    expect_bad_dir(t, 0702, "writable by group or others");
    if (geteuid() == 0) { /* only root can give a directory away */
        assert_int_equal(chown(t->dir, 4242, (gid_t)-1), 0);
        expect_bad_dir(t, 0700, "owned by uid 4242");
        assert_int_equal(chown(t->dir, 0, (gid_t)-1), 0);
    }
    /* readable by others is the operator's business */
    assert_int_equal(chmod(t->dir, 0755), 0);
    nf_journal *j = open_ok(t->dir);
    nf_journal_close(j);
}

/* ---- allocation failures --------------------------------------------------------------------- */

static const uint32_t sweep_lens[] = {1, 30, 200, 5000, 70000, 3, MAXREC, 9, 400000, 17};
#define NSWEEP (sizeof sweep_lens / sizeof sweep_lens[0])

/* The k-th allocation of the appends fails: the failing append says NF_ENOMEM and the records
 * queued before it are written whole by the next sync. */
static void test_alloc_append(void **state) {
    tdir *t = *state;
    nf_allocator failing = {sweep_malloc, sweep_realloc, sweep_free, NULL};
    for (long k = 0;; k++) {
        char dir[200];
        snprintf(dir, sizeof dir, "%s/a%ld", t->root, k);
        nf_journal *j = open_ok(dir);
        assert_int_equal(nf_journal_replay(j, collect, &(coll){0}, NULL, NULL), 0);
        uint8_t *b = malloc(MAXREC);
        uint32_t done = 0;
        int rc = 0;
        sweep_budget = k;
        nf_set_allocator(&failing);
        for (; done < NSWEEP; done++) {
            fill(b, sweep_lens[done], 11, done);
            if ((rc = nf_journal_append(j, b, sweep_lens[done])) != 0) break;
        }
        nf_set_allocator(NULL);
        free(b);
        if (done < NSWEEP) assert_int_equal(rc, NF_ENOMEM);
        assert_int_equal(nf_journal_sync(j), 0);
        assert_int_equal(nf_journal_records(j), done);
        nf_journal_close(j);
        replay_expect(dir, done, sweep_lens, 0, 11);
        rm_tree(dir);
        if (done == NSWEEP) break;
        assert_true(k < 1000);
    }
}

/* The whole life of a journal under the k-th allocation failing: every failure is NF_ENOMEM, and
 * nothing leaks (the sanitizer build checks). */
static int life(const char *dir) {
    nf_journal *j = NULL;
    coll c = {0};
    int rc = nf_journal_open(dir, &j, NULL);
    if (rc) return rc;
    if ((rc = nf_journal_replay(j, collect, &c, NULL, NULL)) != 0) goto out;
    uint8_t b[700];
    for (uint32_t i = 0; i < 5; i++) {
        fill(b, sizeof b, 12, i);
        if ((rc = nf_journal_append(j, b, sizeof b)) != 0) goto out;
    }
    if ((rc = nf_journal_sync(j)) != 0) goto out;
    snapctx s = {.nrec = 20, .len = 500};
    rc = nf_journal_compact(j, emit, &s);
out:
    nf_journal_close(j);
    coll_free(&c);
    return rc;
}

static void test_alloc_life(void **state) {
    tdir *t = *state;
    nf_allocator failing = {sweep_malloc, sweep_realloc, sweep_free, NULL};
    long k;
    for (k = 0;; k++) {
        char dir[200];
        snprintf(dir, sizeof dir, "%s/l%ld", t->root, k);
        sweep_budget = k;
        nf_set_allocator(&failing);
        int rc = life(dir);
        nf_set_allocator(NULL);
        rm_tree(dir);
        if (rc == 0) break;
        if (rc != NF_ENOMEM) fail_msg("allocation %ld failing gave %d", k, rc);
        assert_true(k < 1000);
    }
    assert_true(k >= 5); /* the journal, its paths and the queue were all reached */
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_crc32c),
        cmocka_unit_test_setup_teardown(test_frame_layout, setup, teardown),
        cmocka_unit_test_setup_teardown(test_roundtrip, setup, teardown),
        cmocka_unit_test_setup_teardown(test_torn_tail, setup, teardown),
        cmocka_unit_test_setup_teardown(test_append_without_replay, setup, teardown),
        cmocka_unit_test_setup_teardown(test_damage_refused, setup, teardown),
        cmocka_unit_test_setup_teardown(test_damage_search, setup, teardown),
        cmocka_unit_test_setup_teardown(test_salvage, setup, teardown),
        cmocka_unit_test_setup_teardown(test_replay_rules, setup, teardown),
        cmocka_unit_test_setup_teardown(test_not_ours, setup, teardown),
        cmocka_unit_test_setup_teardown(test_open_errors, setup, teardown),
        cmocka_unit_test_setup_teardown(test_lock, setup, teardown),
        cmocka_unit_test_setup_teardown(test_compact, setup, teardown),
        cmocka_unit_test_setup_teardown(test_compact_fails, setup, teardown),
        cmocka_unit_test_setup_teardown(test_sync_write_fails, setup, teardown),
        cmocka_unit_test_setup_teardown(test_sync_enospc, setup, teardown),
        cmocka_unit_test_setup_teardown(test_sync_split, setup, teardown),
        cmocka_unit_test_setup_teardown(test_compact_enospc, setup, teardown),
        cmocka_unit_test_setup_teardown(test_symlinks, setup, teardown),
        cmocka_unit_test_setup_teardown(test_dir_perms, setup, teardown),
        cmocka_unit_test_setup_teardown(test_alloc_append, setup, teardown),
        cmocka_unit_test_setup_teardown(test_alloc_life, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
