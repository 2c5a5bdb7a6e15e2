/*
 * journal.h — gpud's durable, append-only record log (DESIGN.md "Durability").
 *
 * A journal file is a czk_journal_file_header followed by records
 * (czk_journal_rec_header + payload + padding to 8 bytes; layout.h).  Each
 * record carries its length, a strictly increasing sequence number and a
 * crc32 (zlib's crc32, polynomial 0xEDB88320) over header and payload.
 *
 * Usage (gpud):
 *   czk_journal *j;
 *   czk_journal_open(&j, "/var/lib/czk/journal", replay_cb, ctx, &err);
 *       -> calls replay_cb for every complete record in order, stops cleanly at
 *          a torn tail (short header, short payload, bad magic or crc) and
 *          truncates the file there so new records follow the last good one
 *   czk_journal_append(j, REC_ACCEPT, buf, len, CZK_JOURNAL_SYNC, &seq, &err);
 *       -> CZK_JOURNAL_SYNC: fdatasync before returning (use for records that
 *          promise durability: job accepted, partition done); without it the
 *          record is written but may be lost with the machine
 *   czk_journal_compact(j, keep_cb, ctx, &err);
 *       -> rewrites the file with only the records keep_cb keeps (same seq,
 *          type and payload), via a temporary file, fsync, rename, fsync of
 *          the directory; a crash at any point leaves the old or the new file
 *   czk_journal_close(j);
 *
 * The payload format is the caller's (gpud uses msgpack).  One journal is
 * used by one thread of one process; nothing here is shared between
 * processes except the file, which only gpud writes.
 */
#ifndef CZK_IPC_JOURNAL_H
#define CZK_IPC_JOURNAL_H

#include <stddef.h>
#include <stdint.h>

#include "common/base/error.h"
#include "ipc/layout.h"

#define CZK_JOURNAL_SYNC 0x1u

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
    uint64_t records;    /* complete records replayed */
    uint64_t last_seq;   /* seq of the last complete record, 0 if none */
    uint64_t good_end;   /* file offset just past the last complete record */
    uint64_t torn_bytes; /* bytes after good_end (the torn tail), 0 if clean */
} czk_journal_info;

/* Opens or creates path (mode 0600), replays it, trims a torn tail. */
int czk_journal_open(czk_journal **out, const char *path, czk_journal_replay_fn fn, void *ctx, czk_error *err);

/* Read-only replay of a journal file (tools, tests); never modifies it. */
int czk_journal_replay_file(const char *path, czk_journal_replay_fn fn, void *ctx, czk_journal_info *info,
                            czk_error *err);

/* Appends one record; type != 0, len <= CZK_JOURNAL_MAX_PAYLOAD. */
int czk_journal_append(czk_journal *j, uint16_t type, const void *data, uint32_t len, unsigned flags,
                       uint64_t *seq_out, czk_error *err);

/* fdatasync of everything appended so far. */
int czk_journal_sync(czk_journal *j, czk_error *err);

int czk_journal_compact(czk_journal *j, czk_journal_keep_fn keep, void *ctx, czk_error *err);

/* What open found (records replayed, torn tail) and the current end. */
const czk_journal_info *czk_journal_get_info(const czk_journal *j);
uint64_t czk_journal_next_seq(const czk_journal *j);

void czk_journal_close(czk_journal *j);

#endif
