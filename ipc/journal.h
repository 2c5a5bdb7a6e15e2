/*
 * journal.h — gpud's durable, append-only record log (docs/design.md section 6),
 * and the job-id high-water mark kept beside it.
 *
 * A journal file is a czk_journal_file_header followed by records
 * (czk_journal_rec_header + payload + zero padding to 8 bytes; layout.h).
 * Each record carries its length, a strictly increasing sequence number and a
 * crc32 (zlib's crc32, polynomial 0xEDB88320) over header and payload.
 *
 * A journal never forgets silently.  Reading a file, a record is GOOD when
 * its header is whole, magic is CZK_JOURNAL_REC_MAGIC, type != 0,
 * len <= CZK_JOURNAL_MAX_PAYLOAD, the payload is whole, the crc matches, its
 * seq is greater than the previous good record's and its padding bytes (those
 * present: the file may end inside the padding of the last record) are zero.
 * At the first record B (offset O) that is not good:
 *
 *   B is a TORN TAIL (what a crash during the last append leaves) when all of
 *     1. no good record (seq greater than the last good one) starts at any
 *        8-aligned offset after O: nothing was written after B;
 *     2. if B's header is whole with the right magic, type != 0 and a
 *        plausible len, every byte after B's claimed end
 *        O + pad8(24 + len) is zero: the file holds nothing beyond B;
 *     3. the file ends at most pad8(24 + CZK_JOURNAL_MAX_PAYLOAD) bytes after
 *        O: no record is longer than that.
 *   Otherwise B is CORRUPTION: open refuses the file (-EBADMSG) naming B's
 *   offset and the seq it follows, and the operator runs
 *       czk journal check FILE          (lists every problem)
 *       czk journal salvage FILE OUT    (keeps every provably good record)
 *   then moves OUT over FILE once the dropped records are accounted for.
 *
 * So damage anywhere but in the last record is an error, and damage in the
 * last record is handled like a torn write (the record is dropped; it was
 * never fsynced, or its fsync failed, unless the disk itself lost it).
 *
 * Group commit.  Records may be appended without a sync (flags 0) and made
 * durable together by one later fdatasync: czk_journal_sync, or a sync of
 * czk_journal_sync_fd on another thread reported with czk_journal_synced.
 * A crash while such a group awaits its sync can leave any subset of its
 * pages on the disk, so damage with good records after it is possible.  Each
 * record therefore carries its lag (layout.h): seq minus the highest seq
 * known durable when it was written.  One more case of a TORN TAIL: B's
 * damage is followed by good records, and every one of them (and every
 * crc-valid record after O) was written while nothing after the last good
 * seq before B was known durable (seq - lag <= that seq).  Then no sync
 * covering B had completed before any of them was written, so nothing
 * after O was promised, and open drops everything from O on.  Records of
 * older builds have lag 0, read as 1 (each was synced on its own).
 *
 * The file header: a file shorter than the header, or whose header is all
 * zero and nothing follows, is a TORN CREATION; open accepts it (rewrites the
 * header) only with CZK_JOURNAL_CREATE, i.e. when the caller's state says no
 * journal has held records yet (czk_idmark_pristine below).  Any other bad
 * header is refused.  A missing file is created only with CZK_JOURNAL_CREATE.
 *
 * Records may also be missing from the end without leaving a trace (a file
 * cut exactly between two records, or replaced by an older copy): the
 * caller's id mark remembers a seq the journal reached (czk_idmark_floor)
 * and open refuses a file whose highest seq, max(last good seq,
 * header base_seq - 1), is below it.
 *
 * Usage (gpud):
 *   czk_idmark_open(&m, "STATE/next_job_id", 64, &err);
 *   czk_journal_open_ex(&j, "STATE/journal",
 *                       czk_idmark_pristine(m) ? CZK_JOURNAL_CREATE : 0,
 *                       czk_idmark_floor(m), replay_cb, ctx, &err);
 *       -> validates the whole file first (above), then calls replay_cb for
 *          every good record in order, then trims a torn tail
 *   czk_idmark_raise(m, highest job id seen in the journal + 1, &err);
 *   czk_idmark_next(m, czk_journal_next_seq(j) - 1, &job_id, &err);
 *   czk_journal_append(j, REC_ACCEPT, buf, len, CZK_JOURNAL_SYNC, &seq, &err);
 *   czk_journal_compact(j, keep_cb, ctx, &err);
 *       -> rewrites the file with only the records keep_cb keeps (same seq,
 *          type and payload), via a temporary file, fsync, rename, fsync of
 *          the directory; a crash at any point leaves the old or the new file
 *   czk_idmark_set_floor(m, czk_journal_next_seq(j) - 1, &err);  at shutdown
 *   czk_journal_close(j); czk_idmark_close(m);
 *
 * Append failures (ENOSPC, EDQUOT, EIO): the record is cut off again
 * (ftruncate back to the previous end, fdatasync) and the error returned:
 * the record is NOT in the journal and the caller must treat the operation
 * as not done (answer the submit with an error, stop accepting new work until
 * an append succeeds again).  A failed fdatasync (of an append with
 * CZK_JOURNAL_SYNC, czk_journal_sync or a reported one) says nothing about
 * which pages reached the disk: the file is cut back to the durable mark,
 * every record after it is gone (czk_journal_next_seq() tells from where),
 * and the error is returned.  If a cut fails the handle is poisoned: every
 * later append returns -EIO without writing, and only a new open (which
 * re-validates the file; a half-written record is then a torn tail)
 * recovers.  czk_journal_failed() says whether that happened.
 *
 * The payload format is the caller's (gpud uses msgpack).  One journal is
 * used by one thread of one process, except that another thread may
 * fdatasync czk_journal_sync_fd() while that thread appends; nothing here is
 * shared between processes except the file, which only gpud writes (flock
 * enforces one writer).  Open fdatasyncs the file, so whatever it replays
 * is durable.
 */
#ifndef CZK_IPC_JOURNAL_H
#define CZK_IPC_JOURNAL_H

#include <stddef.h>
#include <stdint.h>

#include "common/base/error.h"
#include "ipc/layout.h"

#define CZK_JOURNAL_SYNC 0x1u /* append: fdatasync before returning */

#define CZK_JOURNAL_CREATE 0x1u /* open: a missing file or a torn creation may be (re)initialised */

typedef struct czk_journal czk_journal;

typedef struct czk_journal_rec {
    uint16_t type;
    uint32_t flags;
    uint64_t seq;
    uint64_t offset;     /* byte offset of the record header in the file */
    const uint8_t *data; /* payload, valid only during the callback */
    uint32_t len;
} czk_journal_rec;

/* Return 0 to continue, a negative value to stop replay with that error. */
typedef int (*czk_journal_replay_fn)(const czk_journal_rec *rec, void *ctx);
/* Return 1 to keep the record in the compacted file, 0 to drop it, < 0 to abort. */
typedef int (*czk_journal_keep_fn)(const czk_journal_rec *rec, void *ctx);

typedef struct czk_journal_info {
    uint64_t records;    /* good records replayed */
    uint64_t last_seq;   /* seq of the last good record, 0 if none */
    uint64_t high_seq;   /* max(last_seq, header base_seq - 1): every seq <= this was issued */
    uint64_t good_end;   /* file offset just past the last good record */
    uint64_t torn_bytes; /* bytes of the torn tail after good_end, 0 if clean */
} czk_journal_info;

/* One damaged region found by czk_journal_check / czk_journal_salvage. */
enum czk_journal_problem_kind {
    CZK_JOURNAL_BAD_HEADER = 1, /* the file header is not a valid journal header */
    CZK_JOURNAL_TORN_CREATE,    /* short or all-zero header, nothing else: a torn creation */
    CZK_JOURNAL_TORN_TAIL,      /* the rule above: open trims it */
    CZK_JOURNAL_CORRUPT,        /* damage open refuses */
};

typedef struct czk_journal_problem {
    enum czk_journal_problem_kind kind;
    uint64_t offset;    /* first byte of the damaged region */
    uint64_t length;    /* its bytes (up to the next good record or the end) */
    uint64_t after_seq; /* seq of the last good record before it, 0 if none */
    uint64_t seq;       /* the seq the damaged header claims, 0 if unreadable */
    char what[96];      /* what is wrong, e.g. "crc mismatch" */
} czk_journal_problem;

typedef void (*czk_journal_problem_fn)(const czk_journal_problem *p, void *ctx);

/* Opens path and replays it (flags: CZK_JOURNAL_CREATE); min_seq: the file
 * must reach at least this seq (czk_idmark_floor; 0: no requirement).
 * Corruption, a bad header, a missing file without CREATE, a file below
 * min_seq: -EBADMSG / -ENOENT / -ESTALE with a message naming the offset and
 * seq and the recovery command; replay_cb is not called then. */
int czk_journal_open_ex(czk_journal **out, const char *path, unsigned flags, uint64_t min_seq,
                        czk_journal_replay_fn fn, void *ctx, czk_error *err);

/* czk_journal_open_ex(out, path, CZK_JOURNAL_CREATE, 0, fn, ctx, err) */
int czk_journal_open(czk_journal **out, const char *path, czk_journal_replay_fn fn, void *ctx, czk_error *err);

/* Read-only replay of a journal file (tools, tests); never modifies it.
 * Applies the same rules as open (corruption: -EBADMSG, nothing replayed;
 * a torn tail is reported in info->torn_bytes and not replayed). */
int czk_journal_replay_file(const char *path, czk_journal_replay_fn fn, void *ctx, czk_journal_info *info,
                            czk_error *err);

/* Read-only scan that reports every damaged region to fn (may be NULL) in
 * file order.  Returns the number of regions open would refuse (BAD_HEADER,
 * CORRUPT; 0: open accepts the file), or -errno when it cannot be read.
 * info (may be NULL) describes the good records before the first problem. */
int czk_journal_check(const char *path, czk_journal_problem_fn fn, void *ctx, czk_journal_info *info,
                      czk_error *err);

/* Writes a new journal at out_path (must not exist; mode 0600) holding every
 * provably good record of in_path (crc valid, seq greater than the previous
 * kept one, found at any 8-aligned offset after damage), with the input's
 * base_seq or last kept seq + 1, whichever is higher; reports each dropped
 * region to fn.  *kept (may be NULL) gets the number of records written. */
int czk_journal_salvage(const char *in_path, const char *out_path, czk_journal_problem_fn fn, void *ctx,
                        uint64_t *kept, czk_error *err);

/* Appends one record; type != 0, len <= CZK_JOURNAL_MAX_PAYLOAD.  flags
 * CZK_JOURNAL_SYNC: fdatasync before returning, so the record and every one
 * before it are durable; 0: durable with the next sync.  A write failure
 * leaves no part of the record in the file; a sync failure cuts the file
 * back to the durable mark (see above). */
int czk_journal_append(czk_journal *j, uint16_t type, const void *data, uint32_t len, unsigned flags,
                       uint64_t *seq_out, czk_error *err);

/* fdatasync of everything appended so far; failure: as an append's. */
int czk_journal_sync(czk_journal *j, czk_error *err);

/* A point in the journal: the seq of its last record (0: none), the offset
 * just past it, and how many cuts the handle had made then (a mark from
 * before a cut names records that are gone). */
typedef struct czk_journal_mark {
    uint64_t seq;
    uint64_t end;
    uint64_t cuts;
} czk_journal_mark;

/* the journal's tail now: what a sync started now makes durable */
czk_journal_mark czk_journal_tail(const czk_journal *j);
/* the highest seq known durable (what open replayed, then what syncs covered) */
uint64_t czk_journal_durable_seq(const czk_journal *j);
/* the descriptor another thread may fdatasync (and nothing else) while the
 * owner appends: a sync started when the tail was `upto`, whose result the
 * owner then reports with czk_journal_synced (0 or -errno).  rc 0 makes
 * everything up to `upto` durable (unless a cut came after `upto` was taken:
 * then nothing moves); rc < 0 cuts back as above and returns it.
 * One such sync at a time, and none across czk_journal_compact/close. */
int czk_journal_sync_fd(const czk_journal *j);
int czk_journal_synced(czk_journal *j, czk_journal_mark upto, int rc, czk_error *err);

/* Compaction: the file rewritten with the records keep keeps (same seq,
 * type and payload; a temporary file PATH.compact, synced, renamed over
 * PATH, the directory fsynced: a crash at any point leaves the old file or
 * the new one).  In three steps, so that the long part (a read of the whole
 * file, the keep calls, the writes) can run on another thread while the
 * owner goes on appending:
 *   czk_journal_compact_begin(j, &cp, &err);   owner: notes where the file
 *       ends now;
 *   czk_journal_compact_run(cp, keep, ctx, &err);   any one thread, once:
 *       reads the file up to that end through its own descriptor, writes
 *       what keep keeps to PATH.compact and syncs it (keep runs there);
 *   czk_journal_compact_finish(j, cp, &err);   owner, no sync of
 *       czk_journal_sync_fd in flight: copies the records appended since
 *       begin as they are, syncs, renames and goes on in the new file, where
 *       every record is durable; a failure before the rename leaves the
 *       journal as it was (-ESTALE: a failed sync cut it back meanwhile,
 *       so the new file could hold records that are gone); a failed fsync
 *       of the directory after the rename poisons the journal
 *       (czk_journal_failed), since a crash could undo the rename;
 *   czk_journal_compact_free(cp);   always (removes PATH.compact unless
 *       finish renamed it); after a finish it closes the replaced file's
 *       last descriptor, where the file system frees that file's blocks
 *       (about 7 ms for 16 MiB on ext4): call it off the owner's thread.
 * czk_journal_compact does the four in a row.  Only one at a time. */
typedef struct czk_journal_compaction czk_journal_compaction;
int czk_journal_compact_begin(czk_journal *j, czk_journal_compaction **cp, czk_error *err);
int czk_journal_compact_run(czk_journal_compaction *cp, czk_journal_keep_fn keep, void *ctx, czk_error *err);
int czk_journal_compact_finish(czk_journal *j, czk_journal_compaction *cp, czk_error *err);
/* after run: the records run kept and dropped */
void czk_journal_compact_counts(const czk_journal_compaction *cp, uint64_t *kept, uint64_t *dropped);
void czk_journal_compact_free(czk_journal_compaction *cp);
int czk_journal_compact(czk_journal *j, czk_journal_keep_fn keep, void *ctx, czk_error *err);

/* What open found (records replayed, torn tail) and the current end. */
const czk_journal_info *czk_journal_get_info(const czk_journal *j);
uint64_t czk_journal_next_seq(const czk_journal *j);
/* 1 when a failed append could not be cut off, or a compaction's rename may
 * not be durable: appends are refused until reopened */
int czk_journal_failed(const czk_journal *j);

void czk_journal_close(czk_journal *j);

/*
 * The job-id high-water mark: a small file (text, one line with a crc) that
 * lives beside the journal and outlives it, so deleting, truncating,
 * corrupting or compacting the journal can never make an id be handed out
 * twice.  Ids are reserved in blocks: the file holds the first id NOT yet
 * reserved and is replaced atomically (temp file, fsync, rename, fsync of the
 * directory) only when a block is used up, so one submit in `block` pays an
 * fsync.  Ids of a block not used before a restart are skipped, never reused.
 *
 * It also holds the journal floor: a seq the journal is known to have
 * reached, written with every block reservation and by czk_idmark_set_floor;
 * open refuses a journal below it.
 *
 * A missing file is created (next id 1, floor 0) and written at once; a file
 * that exists but cannot be parsed or fails its crc is an error (-EBADMSG):
 * the operator must set it by hand above every id ever handed out.
 * Used by gpud's main thread only.
 */
typedef struct czk_idmark czk_idmark;

#define CZK_IDMARK_MAX_BLOCK 1000000u

/* block: ids reserved per fsync (1..CZK_IDMARK_MAX_BLOCK) */
int czk_idmark_open(czk_idmark **out, const char *path, uint32_t block, czk_error *err);
/* the next id (>= 1, never returned before); journal_seq: the journal's last
 * durable seq, recorded as the floor when a block is reserved.  Fails with
 * -errno (the id is not handed out) when the file cannot be written. */
int czk_idmark_next(czk_idmark *m, uint64_t journal_seq, uint64_t *id, czk_error *err);
/* makes every later id >= min_next (used after replay: above every id the
 * journal holds); writes the file when that moves the reservation */
int czk_idmark_raise(czk_idmark *m, uint64_t min_next, czk_error *err);
/* records that the journal has reached seq (never lowers the floor) */
int czk_idmark_set_floor(czk_idmark *m, uint64_t seq, czk_error *err);
/* the floor (pass to czk_journal_open_ex as min_seq) */
uint64_t czk_idmark_floor(const czk_idmark *m);
/* 1 while no id has ever been reserved and the floor is 0: a journal may
 * be created (nothing could have been lost) */
int czk_idmark_pristine(const czk_idmark *m);
/* the id czk_idmark_next would return now */
uint64_t czk_idmark_peek(const czk_idmark *m);
void czk_idmark_close(czk_idmark *m);
/* writes the mark file at path outright (operator recovery: `czk journal
 * idmark`); next >= 1.  Not for use while gpud runs. */
int czk_idmark_set(const char *path, uint64_t next, uint64_t floor, czk_error *err);

#endif
