/*
 * commit.h — group commit of a journal (journal.h) with its fdatasync off the
 * loop thread: a record's promise is made once the record is durable, and
 * the loop never waits for the disk on the way.
 *
 *   czk_commit_append(c, type, data, len, fn, ctx, &seq, &err);
 *       writes the record (no sync) and returns; fn(owner, ctx, seq, 0) runs
 *       once a sync covering it has succeeded, fn(owner, ctx, seq, rc) with
 *       rc < 0 if that sync failed (the journal was then cut back to its
 *       durable mark: the record is not in it).  fn may be NULL: the record
 *       is simply durable with the next sync.
 *
 * One sync thread runs one fdatasync at a time; every record appended while
 * one runs goes with the next (a group), so a slow disk costs latency, not
 * throughput, and never blocks the loop.  Callbacks run in seq order, only
 * from a task of the loop (never inside a czk_commit_* call but
 * czk_commit_flush), so the caller of an append may hold pointers across it.
 *
 *   czk_commit_append_sync(c, type, data, len, &seq, &err);
 *       the inline form, for rare records whose caller must know the outcome
 *       before it goes on (gpud: ACCEPT, CANCEL, PROBE, a partition's
 *       failure): waits for the sync in flight, writes the record and syncs
 *       it on the calling thread.  Records before it are then durable too,
 *       but their callbacks still run later, from the loop: a caller whose
 *       effects must follow theirs calls czk_commit_flush first.
 *   czk_commit_flush(c, &err);
 *       everything durable now, and every decided callback run before it
 *       returns: call it only where no pointer a callback may free is held.
 *       Its return is its own sync's; an earlier sync's failure reached the
 *       observer and the callbacks.
 *
 *   czk_commit_compact_begin(c, &cp, &err);
 *       compaction while the owner runs (journal.h's three steps): every
 *       record synced and every callback run (again while callbacks append),
 *       so that the owner's memory reflects the whole journal when it
 *       decides what to keep; then czk_journal_compact_begin.  A safe point,
 *       as czk_commit_flush; it holds the caller for one sync.
 *       The caller then runs czk_journal_compact_run(cp, ...) on a thread of
 *       its own (keep must not read what the loop changes: a snapshot), and
 *       back on the loop, at a safe point:
 *   czk_commit_compact_finish(c, cp, &err);
 *       waits for the sync in flight, czk_journal_compact_finish (a copy of
 *       the records appended meanwhile, one sync, a rename); every record is
 *       then durable and the callbacks waiting for that run from the loop, as
 *       after a sync (the observer sees it as one).  When the rename may not
 *       be durable (the journal is poisoned) every waiting callback gets the
 *       error, as after a failed sync.  Then
 *       czk_journal_compact_free(cp), whatever the outcome.
 *   czk_commit_compact(c, keep, ctx, &err);
 *       the three in a row on the calling thread (the rewrite included).
 *
 * Without a loop (loop NULL: unit tests that drive gpud by hand) every
 * append is synced inline and its callback runs before czk_commit_append
 * returns.
 *
 * A write failure (ENOSPC ...) returns the error from the append itself and
 * fn is not called; so does -ENOMEM, when there is no room to queue fn: that
 * is found before the record is written, so nothing is written then (a
 * record in the journal always has its callback).  A failed sync cuts the
 * journal back (journal.h): every record after the durable mark is gone and
 * each pending callback gets the error, after the observer (below) has seen
 * it.  A poisoned journal (czk_journal_failed) fails every later append.
 *
 * Threads: everything here is called on the loop thread (the journal's
 * owner); the sync thread only runs the sync function on
 * czk_journal_sync_fd() and posts the result back (czk_loop_post).
 */
#ifndef CZK_IPC_COMMIT_H
#define CZK_IPC_COMMIT_H

#include <stdint.h>

#include "common/base/error.h"
#include "ipc/journal.h"
#include "ipc/loop.h"

typedef struct czk_commit czk_commit;

/* a record's outcome: rc 0 durable, < 0 not in the journal; owner: as given
 * to czk_commit_create */
typedef void (*czk_commit_fn)(void *owner, void *ctx, uint64_t seq, int rc);
/* the sync itself: 0 or -errno (default: fdatasync(fd)); runs on the sync
 * thread, or on the loop thread for the inline forms */
typedef int (*czk_commit_sync_fn)(int fd, void *ctx);
/* after every sync, on the loop thread, before the callbacks: its result
 * (rc, with what failed in msg when rc < 0), how long it took and how many
 * records it made durable (rc < 0: how many the cut took) */
typedef void (*czk_commit_observe_fn)(void *ctx, int rc, const char *msg, uint64_t ns, uint64_t records);

typedef struct czk_commit_stats {
    uint64_t appends; /* records written through this handle */
    uint64_t syncs;   /* syncs that succeeded */
    uint64_t failed;  /* syncs that failed */
    uint64_t pending; /* callbacks awaiting a sync */
} czk_commit_stats;

/* j stays the caller's (closed after czk_commit_destroy); loop may be NULL */
int czk_commit_create(czk_commit **out, czk_journal *j, czk_loop *loop, void *owner, czk_error *err);
/* before the first append */
void czk_commit_set_sync_fn(czk_commit *c, czk_commit_sync_fn fn, void *ctx);
void czk_commit_set_observer(czk_commit *c, czk_commit_observe_fn fn, void *ctx);

int czk_commit_append(czk_commit *c, uint16_t type, const void *data, uint32_t len, czk_commit_fn fn, void *ctx,
                      uint64_t *seq, czk_error *err);
int czk_commit_append_sync(czk_commit *c, uint16_t type, const void *data, uint32_t len, uint64_t *seq,
                           czk_error *err);
int czk_commit_flush(czk_commit *c, czk_error *err);
int czk_commit_compact_begin(czk_commit *c, czk_journal_compaction **cp, czk_error *err);
int czk_commit_compact_finish(czk_commit *c, czk_journal_compaction *cp, czk_error *err);
int czk_commit_compact(czk_commit *c, czk_journal_keep_fn keep, void *ctx, czk_error *err);

void czk_commit_get_stats(const czk_commit *c, czk_commit_stats *s);

/* stops the sync thread (after the sync in flight, whose result is then
 * dropped: call czk_commit_flush first); pending callbacks are not run.
 * After the loop's last run: the result task may still be posted. */
void czk_commit_destroy(czk_commit *c);

#endif
