/* An append-only journal of opaque records in a state directory, made durable in batches (the
 * multicast group manager logs every group event before it acknowledges it). Records are framed
 * with their length and a CRC, so a torn last record (a crash in the middle of a write) is found
 * and cut off on replay. A snapshot replaces the journal atomically (compaction). One process per
 * directory: open takes an exclusive lock. File format: docs/journal.md. */
#ifndef NETFAB_JOURNAL_H
#define NETFAB_JOURNAL_H

#include "core.h"

#define NF_JOURNAL_MAX_REC (1u << 20) /* largest record payload, bytes */

typedef struct nf_journal nf_journal;

/* Opens the journal dir/journal, creating the directory (mode 0700; its parent must exist) and
 * the file when missing, and takes an exclusive lock on dir/lock. Returns NF_OK; NF_ELOCKED when
 * another process (or another open in this one) holds the lock; NF_EIO (with the path and the
 * system's reason in diag) when the directory or file cannot be made or opened; NF_EPARSE when
 * the file does not start with the journal's magic and version (the file is left alone);
 * NF_EINVAL for an empty dir. */
int nf_journal_open(const char *dir, nf_journal **out, nf_diag *diag);

/* Calls fn(ud, rec, len) for every complete record from the start, in order (rec is valid during
 * the call only). A torn or corrupt tail (a partial frame, a length over NF_JOURNAL_MAX_REC, a CRC
 * mismatch) ends the replay: it is cut off the file so that appends continue after the last good
 * record, and its size in bytes is put in *torn (0 when there is none; torn may be NULL). A bad
 * frame in the middle of the file drops everything after it the same way: a *torn far larger
 * than one batch of records says so. fn returning non-zero stops the replay and that value is
 * returned. At most once, before the first append or compaction: NF_EINVAL otherwise. Without a
 * replay, the first sync still cuts a torn tail (unreported) before it writes. */
int nf_journal_replay(nf_journal *j, int (*fn)(void *ud, const uint8_t *rec, uint32_t len),
                      void *ud, uint64_t *torn, nf_diag *diag);

/* Queues a record (1..NF_JOURNAL_MAX_REC bytes). Nothing is durable before nf_journal_sync.
 * NF_EINVAL for a bad length, NF_ENOMEM; on a snapshot (inside compaction) also NF_EIO, as a big
 * snapshot is written out every 4 MiB. */
int nf_journal_append(nf_journal *j, const void *rec, uint32_t len);

/* Writes the queued records and waits for them to reach stable storage (fdatasync): once it
 * returns NF_OK they survive a crash. NF_EIO on a failed write (the file is cut back to its last
 * good frame and the queue is kept); NF_ENOMEM from the first sync's tail check. */
int nf_journal_sync(nf_journal *j);

/* Replaces the whole journal by the records emit(ud, snap) appends to snap (a snapshot of the live
 * state): written to dir/journal.tmp, synced, renamed over dir/journal, the directory synced.
 * Records queued in j and not yet synced are synced first. emit must only append to snap (not
 * close, replay or compact it). On a failure before the rename the old journal stays as it was
 * and the error is returned (emit's non-zero return included); if only the final sync of the
 * directory fails, the new journal is in place and in use, and NF_EIO is returned. */
int nf_journal_compact(nf_journal *j, int (*emit)(void *ud, nf_journal *snap), void *ud);

/* Bytes in the journal file and records in it (synced ones: replayed, appended since, or the
 * snapshot's after a compaction). */
uint64_t nf_journal_bytes(const nf_journal *j);
uint64_t nf_journal_records(const nf_journal *j);

/* The errno of the last failed write or sync (0: none). */
int nf_journal_last_errno(const nf_journal *j);

/* Syncs what is queued (errors ignored), releases the lock, frees j. NULL is a no-op. */
void nf_journal_close(nf_journal *j);

#endif
