/*
 * jutil.h — what the journal tests share: a fresh temporary directory and a
 * journal of random records written through ipc/journal.h, with each record's
 * payload, seq and offset kept for the checks.  Header-only; include it after
 * tutil.h (CHECK, CHECK_RC, t_range, t_fill).
 */
#ifndef CZK_TESTS_JOURNAL_JUTIL_H
#define CZK_TESTS_JOURNAL_JUTIL_H

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "ipc/journal.h"

#define HDR sizeof(czk_journal_file_header)
#define RHDR sizeof(czk_journal_rec_header)

typedef struct rec {
    uint16_t type;
    uint32_t len;      /* chosen by the test, at most sizeof(data) */
    uint64_t seq, off; /* where the journal must have put it */
    int damaged;       /* set by a test that damages it */
    uint8_t data[300];
} rec;

static inline uint64_t pad8(uint64_t n) { return (n + 7) & ~7ull; }

/* jt_tmpdir: a new directory czk-NAME-XXXXXX in /dev/shm (or /tmp) into DIR */
static inline void jt_tmpdir(char *dir, size_t size, const char *name)
{
    snprintf(dir, size, "%s/czk-%s-XXXXXX", access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp", name);
    CHECK(mkdtemp(dir));
}

/*
 * jt_write: creates the journal PATH and appends recs[0 .. n) to it, each
 * synced, with the len the caller set and a random type and payload.  Each
 * record's seq is i + 1 and its off follows from the lengths alone (records
 * back to back after the file header, each padded to 8 bytes), not from what
 * the journal reports.
 */
static inline void jt_write(const char *path, rec *recs, int n)
{
    czk_journal *j;
    czk_error e;

    CHECK_RC(czk_journal_open_ex(&j, path, CZK_JOURNAL_CREATE, 0, NULL, NULL, &e));
    for (int i = 0; i < n; i++) {
        rec *r = &recs[i];
        CHECK(r->len <= sizeof(r->data));
        r->type = (uint16_t)t_range(1, 65535);
        t_fill(r->data, r->len);
        r->off = i ? recs[i - 1].off + pad8(RHDR + recs[i - 1].len) : HDR;
        CHECK_RC(czk_journal_append(j, r->type, r->data, r->len, CZK_JOURNAL_SYNC, &r->seq, &e));
        CHECK(r->seq == (uint64_t)i + 1);
    }
    czk_journal_close(j);
}

#endif
