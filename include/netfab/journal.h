/* SPDX-License-Identifier: MIT */
/* An append-only journal of opaque records in a state directory, made durable in batches (the
 * multicast group manager logs every group event before it acknowledges it). Records are framed
 * with their length and a CRC, so a torn last record (a crash in the middle of a write) is found
 * and cut off on replay, and damage in the middle of the file is refused rather than cut (a salvage
 * reads around it on request). A snapshot replaces the journal atomically (compaction). One
 * process per directory: open takes an exclusive lock. File format: docs/journal.md. */
#ifndef NETFAB_JOURNAL_H
#define NETFAB_JOURNAL_H

#include "core.h"

#define NF_JOURNAL_MAX_REC (1u << 20) /* largest record payload, bytes */

typedef struct nf_journal nf_journal;

/* Opens the journal dir/journal, creating the directory (mode 0700; its parent must exist) and
 * the file when missing, and takes an exclusive lock on dir/lock. dir may be a symbolic link to a
 * directory, but the directory must be owned by the effective uid and not writable by group or
 * others, and dir/journal and dir/lock must not be symbolic links: NF_EINVAL otherwise (the diag
 * says why and how to fix it, e.g. chmod 700). Returns NF_OK; NF_ELOCKED when another process (or
 * another open in this one) holds the lock; NF_EIO, or NF_ENOSPC for a full disk or quota (with
 * the path and the system's reason in diag), when the directory or a file cannot be made or
 * opened; NF_EPARSE when the file does not start with the journal's magic and version (the file is
 * left alone); NF_EINVAL for an empty dir. */
NF_API int nf_journal_open(const char *dir, nf_journal **out, nf_diag *diag);

/* Calls fn(ud, rec, len) for every complete record from the start, in order (rec is valid during
 * the call only). At the first bad frame (a length of 0 or over NF_JOURNAL_MAX_REC, a frame the
 * file ends inside of, a CRC mismatch) the rest of the file is searched for a valid frame:
 * - none: the bad frame starts a torn tail (a crash in the middle of a write). It is cut off the
 *   file so that appends continue after the last good record, and its size in bytes is put in
 *   *torn (0 when there is none; torn may be NULL).
 * - one: the file is damaged. NF_EPARSE is returned, with the file, the offset of the damage, the
 *   number of good records before it (fn has seen them) and the offset of the next valid frame
 *   in diag, and the file is not modified; nf_journal_salvage on a new handle reads around it.
 * fn returning non-zero stops the replay and that value is returned (nothing is cut). At most
 * once, before the first append or compaction, and not after nf_journal_salvage: NF_EINVAL
 * otherwise. Without a replay, the first sync still checks the frames: it cuts a torn tail
 * (unreported) and fails with NF_EPARSE on damage. */
NF_API int nf_journal_replay(nf_journal *j, int (*fn)(void *ud, const uint8_t *rec, uint32_t len),
                             void *ud, uint64_t *torn, nf_diag *diag);

/* What nf_journal_salvage found. */
typedef struct nf_journal_salvage_report {
    uint64_t records;    /* readable records, all handed to fn */
    uint64_t rejected;   /* of those, the ones fn returned non-zero for */
    uint64_t regions;    /* damaged regions skipped (each followed by a valid frame) */
    uint64_t lost_bytes; /* bytes in those regions: unreadable */
    uint64_t torn;       /* bytes of a torn tail at the end (a crash, not damage) */
    char copy[32];       /* the damaged file's copy in the directory, "journal.damaged.N"; "" when
                            there was no damage and no copy was made */
} nf_journal_salvage_report;

/* Replay for a damaged journal (the operator's repair), used instead of nf_journal_replay. When
 * the file is damaged it is first copied to dir/journal.damaged.N (N the first free number; the
 * copy and the directory synced), then fn is called for every readable record: the good prefix,
 * and after each damaged region the records from the next valid frame on. fn returning non-zero
 * means the record could not be applied: it is counted in rep->rejected and the salvage goes on.
 * The journal file itself is not changed; the caller must then nf_journal_compact it (a snapshot
 * of the state rebuilt) before anything else is written: until then nf_journal_append and
 * nf_journal_sync return NF_EINVAL. A journal without damage is salvaged like a replay: a torn
 * tail is cut (rep->torn), no copy is made, rep->regions and rep->lost_bytes are 0, and no
 * compaction is required. rep (may be NULL) is filled on success. Returns NF_OK; NF_EIO or
 * NF_ENOSPC when the copy cannot be made (nothing was handed to fn then); NF_ENOMEM; NF_EINVAL
 * if fn is NULL or the journal was already replayed, salvaged, appended to or compacted. */
NF_API int nf_journal_salvage(nf_journal *j, int (*fn)(void *ud, const uint8_t *rec, uint32_t len),
                              void *ud, nf_journal_salvage_report *rep, nf_diag *diag);

/* Queues a record (1..NF_JOURNAL_MAX_REC bytes). Nothing is durable before nf_journal_sync.
 * NF_EINVAL for a bad length or after a salvage that found damage (until the compaction),
 * NF_ENOMEM; on a snapshot (inside compaction) also NF_EIO or NF_ENOSPC, as a big snapshot is
 * written out every 4 MiB. */
NF_API int nf_journal_append(nf_journal *j, const void *rec, uint32_t len);

/* Writes the queued records and waits for them to reach stable storage (fdatasync): once it
 * returns NF_OK they survive a crash. On a failed write or fdatasync the file is cut back to its
 * last good frame and the queue is kept, so a later sync writes the same batch again at the same
 * offset: NF_ENOSPC when the system said ENOSPC or EDQUOT, NF_EIO otherwise (the errno itself:
 * nf_journal_last_errno). NF_EINVAL after a salvage that found damage, until the compaction.
 * Without a replay, the first sync checks the frames first: NF_EPARSE on damage, NF_ENOMEM. */
NF_API int nf_journal_sync(nf_journal *j);

/* nf_journal_sync in three steps, so that records may be appended while a batch is written
 * (group commit with a writer thread). nf_journal_sync_begin seals the queued records into the
 * batch to write (the queue starts empty again; the frames are checked first as by
 * nf_journal_sync: NF_EPARSE, NF_ENOMEM, NF_EINVAL after a salvage). nf_journal_sync_write
 * writes the batch and waits for stable storage; it reads only the batch and the file, so it may
 * run in another thread while the owner calls nf_journal_append, and nothing else. Its result
 * goes to nf_journal_sync_end, which ends the batch: NF_OK, the batch is in the file; a failure
 * (NF_ENOSPC, NF_EIO as nf_journal_sync gives them) puts its records back before those queued
 * since, so the next sync writes them all, in order (end returns NF_ENOMEM if that cannot be
 * done: the batch is then lost and nothing appended since may be trusted to be durable). Between
 * begin and end no other function but nf_journal_append may be called on j. */
NF_API int nf_journal_sync_begin(nf_journal *j);
NF_API int nf_journal_sync_write(nf_journal *j);
NF_API int nf_journal_sync_end(nf_journal *j, int rc);

/* Replaces the whole journal by the records emit(ud, snap) appends to snap (a snapshot of the live
 * state): written to dir/journal.tmp (a stale one, or a symbolic link planted there, is removed
 * first, never followed), synced, renamed over dir/journal, the directory synced. Records queued
 * in j and not yet synced are synced first. emit must only append to snap (not close, replay or
 * compact it). On a failure before the rename, journal.tmp is removed, the old journal and j stay
 * as they were and the error is returned: emit's non-zero return, NF_ENOSPC when the disk or
 * quota is full, NF_EIO for other system errors. If only the final sync of the directory fails,
 * the new journal is in place and in use, and NF_EIO is returned. After a salvage this is what
 * makes the journal writable again. */
NF_API int nf_journal_compact(nf_journal *j, int (*emit)(void *ud, nf_journal *snap), void *ud);

/* Bytes in the journal file and records in it (synced ones: replayed, appended since, or the
 * snapshot's after a compaction; after a salvage, the file's size and the records read). */
NF_API uint64_t nf_journal_bytes(const nf_journal *j);
NF_API uint64_t nf_journal_records(const nf_journal *j);

/* The errno of the last failed system call on the journal's files (write, fsync, open, ...), for
 * strerror; 0 when none failed. Not reset by later successes. */
NF_API int nf_journal_last_errno(const nf_journal *j);

/* Syncs what is queued (errors ignored), releases the lock, frees j. NULL is a no-op. */
NF_API void nf_journal_close(nf_journal *j);

#endif
