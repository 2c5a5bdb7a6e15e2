/*
 * test_journal_group.c — group commit in ipc/journal.h: records appended
 * without a sync, made durable later by one fdatasync, each carrying its lag
 * (seq minus the highest seq known durable when it was written), and the
 * torn-tail rule that uses it:
 *   - the durable mark follows SYNC appends, czk_journal_sync and reported
 *     syncs, and every record's lag on disk is what the appends before it
 *     imply (read from the file bytes, at offsets computed from the lengths);
 *   - damage (a zeroed record: a page that never reached the disk; a flipped
 *     payload byte; a flipped header byte) in a group no completed sync
 *     covered, with later records of the group intact, is a torn tail:
 *     replay, open and check accept the file, replay exactly the records
 *     before it, and open cuts the file there and continues from its seq;
 *   - damage in a record that a completed sync covered, with records
 *     written after that sync present, is corruption (-EBADMSG, nothing
 *     replayed, the file left as it was);
 *   - a failed sync cuts the file back to the durable mark (next seq, file
 *     size, what a reopen replays), a successful one moves the mark, and a
 *     failure reported for a mark the durable mark already covers poisons
 *     the handle;
 *   - compaction writes every record as synced (lag 1) and leaves the whole
 *     file durable, so damage in it is then corruption;
 *   - records of older builds (lag 0) read as synced one by one.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/base/crc.h"
#include "ipc/journal.h"
#include "tutil.h"
#include "jutil.h"

#define MAXREC 16
#define MAXLEN 64 /* payload bytes at most: the whole file stays small */
#define LAG(n) ((uint32_t)(n) << CZK_JOURNAL_LAG_SHIFT)

static rec recs[MAXREC];
static uint32_t want_flags[MAXREC]; /* recs[i]'s flags as the file must hold them */
static int nrec;                    /* records in the journal under test */
static uint8_t file[HDR + MAXREC * (RHDR + MAXLEN + 8) + 64]; /* room to spare: a read that fills it failed */
static size_t file_len;
static char dir[64], path[256], copy[300];

typedef struct seen {
    int n, mismatch;
    const rec *extra; /* expected at index extra_at instead of recs[extra_at] */
    uint32_t extra_flags;
    int extra_at;
} seen;

/* replay callback: the k-th record replayed must be recs[k] (or the extra one) */
static int check_cb(const czk_journal_rec *r, void *ctx)
{
    seen *s = ctx;
    const rec *w = NULL;
    uint32_t fl = 0;
    if (s->extra && s->n == s->extra_at) {
        w = s->extra;
        fl = s->extra_flags;
    } else if (s->n < nrec) {
        w = &recs[s->n];
        fl = want_flags[s->n];
    }
    if (!w || w->seq != r->seq || w->type != r->type || w->len != r->len || memcmp(w->data, r->data, r->len) ||
        w->off != r->offset || fl != r->flags)
        s->mismatch++;
    s->n++;
    return 0;
}

typedef struct problems {
    int n;
    czk_journal_problem p[MAXREC];
} problems;

static void problem_cb(const czk_journal_problem *p, void *ctx)
{
    problems *ps = ctx;
    if (ps->n < MAXREC)
        ps->p[ps->n] = *p;
    ps->n++;
}

static void put(const char *p, const uint8_t *buf, size_t len)
{
    int fd = open(p, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    CHECK(fd >= 0);
    CHECK(write(fd, buf, len) == (ssize_t)len);
    close(fd);
}

static size_t slurp(const char *p, uint8_t *buf, size_t cap)
{
    int fd = open(p, O_RDONLY);
    ssize_t n;
    CHECK(fd >= 0);
    n = read(fd, buf, cap);
    close(fd);
    CHECK(n >= 0 && (size_t)n < cap);
    return (size_t)n;
}

static uint64_t fsize(const char *p)
{
    struct stat st;
    CHECK(stat(p, &st) == 0);
    return (uint64_t)st.st_size;
}

static czk_journal_rec_header hdr_at(const uint8_t *buf, size_t len, uint64_t off)
{
    czk_journal_rec_header h;
    CHECK(off + RHDR <= len);
    memcpy(&h, buf + off, RHDR);
    return h;
}

/* the record crc as layout.h defines it, computed here */
static uint32_t own_crc(const czk_journal_rec_header *h, const uint8_t *payload)
{
    czk_journal_rec_header c = *h;
    c.crc = 0;
    return czk_crc32(czk_crc32(czk_crc32_init(), &c, RHDR), payload, h->len);
}

static uint64_t rec_end(int i) { return recs[i].off + pad8(RHDR + recs[i].len); }

/* appends recs[i] with a fresh random type and payload of len bytes; its seq
 * must be i + 1 and its offset follows from the lengths before it */
static void add(czk_journal *j, int i, uint32_t len, unsigned flags)
{
    rec *r = &recs[i];
    czk_journal_mark m;
    czk_error e;
    CHECK(len <= MAXLEN);
    r->len = len;
    r->type = (uint16_t)t_range(1, 65535);
    t_fill(r->data, len);
    r->off = i ? rec_end(i - 1) : HDR;
    r->damaged = 0;
    CHECK_RC(czk_journal_append(j, r->type, r->data, r->len, flags, &r->seq, &e));
    CHECK(r->seq == (uint64_t)i + 1);
    m = czk_journal_tail(j);
    CHECK(m.seq == r->seq && m.end == rec_end(i));
    CHECK(czk_journal_next_seq(j) == r->seq + 1);
}

static uint32_t rand_len(void) { return (uint32_t)t_range(1, MAXLEN); }

/* the flags the record at off holds on disk (and it is the record expected) */
static uint32_t disk_flags(int i)
{
    uint8_t buf[sizeof(file)];
    size_t len = slurp(path, buf, sizeof(buf));
    czk_journal_rec_header h = hdr_at(buf, len, recs[i].off);
    CHECK(h.magic == CZK_JOURNAL_REC_MAGIC && h.seq == recs[i].seq && h.type == recs[i].type && h.len == recs[i].len);
    CHECK(!memcmp(buf + recs[i].off + RHDR, recs[i].data, recs[i].len));
    return h.flags;
}

/*
 * build: a new journal at path from plan: 'S' appends with CZK_JOURNAL_SYNC,
 * 'u' without, '|' calls czk_journal_sync.  Tracks the durable mark and each
 * record's expected flags independently of the journal, checks them against
 * it and the file, and leaves the file's bytes in file / file_len.
 */
static void build(const char *plan)
{
    czk_journal *j;
    czk_error e;
    uint64_t durable = 0;

    unlink(path);
    CHECK_RC(czk_journal_open_ex(&j, path, CZK_JOURNAL_CREATE, 0, NULL, NULL, &e));
    nrec = 0;
    for (const char *p = plan; *p; p++) {
        if (*p == '|') {
            CHECK_RC(czk_journal_sync(j, &e));
            durable = (uint64_t)nrec;
        } else {
            unsigned fl = *p == 'S' ? CZK_JOURNAL_SYNC : 0;
            CHECK(nrec < MAXREC);
            add(j, nrec, rand_len(), fl);
            want_flags[nrec] = fl | LAG(recs[nrec].seq - durable);
            if (fl)
                durable = recs[nrec].seq;
            nrec++;
        }
        CHECK(czk_journal_durable_seq(j) == durable);
    }
    czk_journal_close(j);
    file_len = slurp(path, file, sizeof(file));
    CHECK(file_len == rec_end(nrec - 1));
    for (int i = 0; i < nrec; i++) {
        czk_journal_rec_header h = hdr_at(file, file_len, recs[i].off);
        CHECK(h.seq == recs[i].seq && h.flags == want_flags[i]);
    }
}

/* damage modes: zero the record (a page that never reached the disk), flip
 * one payload byte, flip one byte of the header's seq, flags or crc */
enum { ZERO, FLIP_PAYLOAD, FLIP_HEADER, NMODES };
static const char *mode_name[NMODES] = {"zeroed", "payload flip", "header flip"};

static void damage(uint8_t *buf, const rec *r, int mode)
{
    if (mode == ZERO)
        memset(buf + r->off, 0, pad8(RHDR + r->len));
    else if (mode == FLIP_PAYLOAD)
        buf[r->off + RHDR + t_range(0, r->len - 1)] ^= (uint8_t)t_range(1, 255);
    else
        buf[r->off + t_range(8, RHDR - 1)] ^= (uint8_t)t_range(1, 255);
}

/*
 * The file buf (recs[k] damaged, recs[0 .. nrec) otherwise as written) is a
 * torn tail: replay, check and open (with the id mark's floor min_seq)
 * accept it and see exactly recs[0 .. k); open cuts it at recs[k].off and
 * the next append gets recs[k]'s seq, durable and replayed after it.
 */
static void expect_torn(int k, const uint8_t *buf, size_t len, uint64_t min_seq, const char *what)
{
    czk_journal *j;
    czk_journal_info info;
    czk_error e;
    seen s;
    problems ps;
    rec extra;
    uint8_t back[sizeof(file)];
    uint64_t off = recs[k].off;
    int r;

    /* read-only replay */
    put(copy, buf, len);
    memset(&s, 0, sizeof(s));
    memset(&info, 0, sizeof(info));
    r = czk_journal_replay_file(copy, check_cb, &s, &info, &e);
    if (r != 0 || s.n != k || s.mismatch || info.records != (uint64_t)k || info.last_seq != (uint64_t)k ||
        info.good_end != off || info.torn_bytes != len - off) {
        fprintf(stderr,
                "%s record %d of %d: replay r %d (%s), %d records (%d mismatched), info records %" PRIu64
                " good_end %" PRIu64 " torn %" PRIu64 ": expected a torn tail at %" PRIu64 " of %zu bytes\n",
                what, k + 1, nrec, r, r ? e.msg : "", s.n, s.mismatch, info.records, info.good_end, info.torn_bytes,
                off, len);
        exit(1);
    }
    CHECK(slurp(copy, back, sizeof(back)) == len && !memcmp(back, buf, len)); /* never modifies it */

    /* check: one problem, a torn tail from the damaged record to the end */
    memset(&ps, 0, sizeof(ps));
    r = czk_journal_check(copy, problem_cb, &ps, &info, &e);
    if (r != 0 || ps.n != 1 || ps.p[0].kind != CZK_JOURNAL_TORN_TAIL || ps.p[0].offset != off ||
        ps.p[0].length != len - off || ps.p[0].after_seq != (uint64_t)k || info.records != (uint64_t)k ||
        info.torn_bytes != len - off) {
        fprintf(stderr, "%s record %d of %d: check r %d, %d problems, first kind %d offset %" PRIu64 " length %" PRIu64
                        " after seq %" PRIu64 " (%s): expected one torn tail\n",
                what, k + 1, nrec, r, ps.n, ps.n ? (int)ps.p[0].kind : 0, ps.n ? ps.p[0].offset : 0,
                ps.n ? ps.p[0].length : 0, ps.n ? ps.p[0].after_seq : 0, ps.n ? ps.p[0].what : "");
        exit(1);
    }

    /* open: the same records, the tail cut off, seqs continue from the damaged one */
    memset(&s, 0, sizeof(s));
    r = czk_journal_open_ex(&j, copy, 0, min_seq, check_cb, &s, &e);
    if (r != 0 || s.n != k || s.mismatch) {
        fprintf(stderr, "%s record %d of %d: open r %d (%s), %d records (%d mismatched): expected %d\n", what, k + 1,
                nrec, r, r ? e.msg : "", s.n, s.mismatch, k);
        exit(1);
    }
    CHECK(czk_journal_get_info(j)->records == (uint64_t)k && czk_journal_get_info(j)->torn_bytes == len - off);
    CHECK(fsize(copy) == off);
    CHECK(czk_journal_next_seq(j) == (uint64_t)k + 1);
    CHECK(czk_journal_durable_seq(j) == (uint64_t)k);
    memset(&extra, 0, sizeof(extra));
    extra.len = rand_len();
    extra.type = (uint16_t)t_range(1, 65535);
    t_fill(extra.data, extra.len);
    extra.off = off;
    CHECK_RC(czk_journal_append(j, extra.type, extra.data, extra.len, 0, &extra.seq, &e));
    CHECK(extra.seq == recs[k].seq);
    czk_journal_close(j);

    /* the new record follows the kept ones, written with lag 1 (open made everything durable) */
    memset(&s, 0, sizeof(s));
    s.extra = &extra;
    s.extra_at = k;
    s.extra_flags = LAG(1);
    CHECK_RC(czk_journal_replay_file(copy, check_cb, &s, &info, &e));
    CHECK(s.n == k + 1 && s.mismatch == 0 && info.torn_bytes == 0);
    CHECK(fsize(copy) == off + pad8(RHDR + extra.len));
}

/*
 * The file buf (recs[k] damaged) is corruption: replay and open refuse it
 * (-EBADMSG naming the offset and the seq it follows), replay nothing, and
 * leave it as it was; check counts one refused region there.
 */
static void expect_refused(int k, const uint8_t *buf, size_t len, const char *what)
{
    czk_journal *j;
    czk_journal_info info;
    czk_error e;
    seen s;
    problems ps;
    uint8_t back[sizeof(file)];
    char msg[80];
    const char *at;
    int r;

    snprintf(msg, sizeof(msg), "offset %" PRIu64 " (record after seq %d", recs[k].off, k);
    put(copy, buf, len);
    memset(&s, 0, sizeof(s));
    r = czk_journal_replay_file(copy, check_cb, &s, &info, &e);
    at = r ? strstr(e.msg, msg) : NULL;
    if (r != -EBADMSG || s.n != 0 || !at || (at[strlen(msg)] != ')' && at[strlen(msg)] != ',')) {
        fprintf(stderr, "%s record %d of %d: replay r %d, %d records (%s): expected a refusal naming \"%s\"\n", what,
                k + 1, nrec, r, s.n, r ? e.msg : "", msg);
        exit(1);
    }
    memset(&ps, 0, sizeof(ps));
    r = czk_journal_check(copy, problem_cb, &ps, &info, &e);
    if (r != 1 || ps.n != 1 || ps.p[0].kind != CZK_JOURNAL_CORRUPT || ps.p[0].offset != recs[k].off ||
        ps.p[0].after_seq != (uint64_t)k || info.records != (uint64_t)k || info.torn_bytes != 0) {
        fprintf(stderr, "%s record %d of %d: check r %d, %d problems, first kind %d offset %" PRIu64
                        ": expected one corrupt region at %" PRIu64 "\n",
                what, k + 1, nrec, r, ps.n, ps.n ? (int)ps.p[0].kind : 0, ps.n ? ps.p[0].offset : 0, recs[k].off);
        exit(1);
    }
    memset(&s, 0, sizeof(s));
    r = czk_journal_open_ex(&j, copy, 0, 0, check_cb, &s, &e);
    if (r != -EBADMSG || s.n != 0) {
        fprintf(stderr, "%s record %d of %d: open r %d, %d records: expected a refusal\n", what, k + 1, nrec, r, s.n);
        exit(1);
    }
    CHECK(slurp(copy, back, sizeof(back)) == len && !memcmp(back, buf, len));
}

static void try_damage(int k, int torn, uint64_t min_seq, const char *name)
{
    static uint8_t dam[sizeof(file)];
    char what[96];
    for (int mode = 0; mode < NMODES; mode++) {
        memcpy(dam, file, file_len);
        damage(dam, &recs[k], mode);
        snprintf(what, sizeof(what), "%s, %s", name, mode_name[mode]);
        if (torn)
            expect_torn(k, dam, file_len, min_seq, what);
        else
            expect_refused(k, dam, file_len, what);
    }
}

/* 1. the durable mark and the lag each record carries */
static void test_durable(void)
{
    static const uint32_t want[9] = {
        CZK_JOURNAL_SYNC | LAG(1), CZK_JOURNAL_SYNC | LAG(1), CZK_JOURNAL_SYNC | LAG(1), /* synced one by one */
        LAG(1), LAG(2), LAG(3), LAG(4),                                                   /* seq - 3 */
        CZK_JOURNAL_SYNC | LAG(1),                                                        /* after czk_journal_sync */
        LAG(1),
    };
    czk_journal *j;
    czk_journal_mark m;
    czk_error e;
    seen s;
    size_t len;

    unlink(path);
    CHECK_RC(czk_journal_open_ex(&j, path, CZK_JOURNAL_CREATE, 0, NULL, NULL, &e));
    CHECK(czk_journal_durable_seq(j) == 0 && czk_journal_next_seq(j) == 1);
    for (int i = 0; i < 3; i++) {
        add(j, i, rand_len(), CZK_JOURNAL_SYNC);
        CHECK(czk_journal_durable_seq(j) == (uint64_t)i + 1);
    }
    for (int i = 3; i < 7; i++) {
        add(j, i, rand_len(), 0);
        CHECK(czk_journal_durable_seq(j) == 3);
    }
    CHECK(czk_journal_next_seq(j) == 8);
    m = czk_journal_tail(j);
    CHECK(m.seq == 7 && m.end == rec_end(6) && fsize(path) == rec_end(6));
    CHECK_RC(czk_journal_sync(j, &e));
    CHECK(czk_journal_durable_seq(j) == 7 && czk_journal_next_seq(j) == 8);
    CHECK_RC(czk_journal_sync(j, &e)); /* nothing new: nothing moves */
    CHECK(czk_journal_durable_seq(j) == 7 && czk_journal_next_seq(j) == 8);
    add(j, 7, rand_len(), CZK_JOURNAL_SYNC);
    CHECK(czk_journal_durable_seq(j) == 8);
    add(j, 8, rand_len(), 0);
    CHECK(czk_journal_durable_seq(j) == 8);
    czk_journal_close(j);

    /* the headers on disk, at the offsets the lengths give */
    len = slurp(path, file, sizeof(file));
    CHECK(len == rec_end(8));
    for (int i = 0; i < 9; i++) {
        czk_journal_rec_header h = hdr_at(file, len, recs[i].off);
        if (h.magic != CZK_JOURNAL_REC_MAGIC || h.seq != (uint64_t)i + 1 || h.type != recs[i].type ||
            h.len != recs[i].len || h.flags != want[i] || h.crc != own_crc(&h, file + recs[i].off + RHDR)) {
            fprintf(stderr, "record %d at %" PRIu64 ": seq %" PRIu64 " flags %#x (lag %u), expected flags %#x\n",
                    i + 1, recs[i].off, h.seq, h.flags, h.flags >> CZK_JOURNAL_LAG_SHIFT, want[i]);
            exit(1);
        }
    }

    /* reopen: everything replays with its flags; open made it all durable */
    nrec = 9;
    memcpy(want_flags, want, sizeof(want));
    memset(&s, 0, sizeof(s));
    CHECK_RC(czk_journal_open_ex(&j, path, 0, 9, check_cb, &s, &e));
    CHECK(s.n == 9 && s.mismatch == 0);
    CHECK(czk_journal_durable_seq(j) == 9 && czk_journal_next_seq(j) == 10);
    add(j, 9, rand_len(), 0);
    CHECK(czk_journal_durable_seq(j) == 9);
    czk_journal_close(j);
    CHECK(disk_flags(9) == LAG(1));
}

/* 2. damage in a group that no completed sync covered: a torn tail */
static void test_torn_group(void)
{
    build("SSSSSuuuuuu");
    CHECK(want_flags[4] == (CZK_JOURNAL_SYNC | LAG(1)) && want_flags[5] == LAG(1) && want_flags[10] == LAG(6));
    for (int k = 5; k < nrec; k++)
        try_damage(k, 1, 5, "5 synced + 6 unsynced");
    /* the synced records before the group, with records after them: corruption */
    for (int k = 0; k < 5; k++)
        try_damage(k, 0, 0, "5 synced + 6 unsynced, synced record");

    /* a journal none of whose records was synced: damage in the first drops them all */
    build("uuuuuu");
    CHECK(want_flags[0] == LAG(1) && want_flags[5] == LAG(6));
    for (int k = 0; k < nrec; k++)
        try_damage(k, 1, 0, "6 unsynced");
}

/* 3. damage in records a completed sync covered, with later records: corruption */
static void test_synced_group(void)
{
    build("SSSSSuuu|uu");
    CHECK(want_flags[5] == LAG(1) && want_flags[7] == LAG(3) && want_flags[8] == LAG(1) && want_flags[9] == LAG(2));
    for (int k = 0; k < 5; k++)
        try_damage(k, 0, 0, "5 synced, 3 + sync, 2: a synced record");
    for (int k = 5; k < 8; k++)
        try_damage(k, 0, 0, "5 synced, 3 + sync, 2: the synced group");
    for (int k = 8; k < 10; k++)
        try_damage(k, 1, 8, "5 synced, 3 + sync, 2: the group after the sync");
}

/* 4. reported syncs: failure cuts back to the durable mark, success moves it,
 * a failure for a mark already durable poisons the handle */
static void test_reported(void)
{
    czk_journal *j;
    czk_journal_mark m, m4, m5, m6;
    czk_error e;
    seen s;
    uint64_t size;
    int fd;

    unlink(path);
    CHECK_RC(czk_journal_open_ex(&j, path, CZK_JOURNAL_CREATE, 0, NULL, NULL, &e));
    for (int i = 0; i < 3; i++)
        add(j, i, rand_len(), CZK_JOURNAL_SYNC);
    for (int i = 3; i < 6; i++)
        add(j, i, rand_len(), 0);
    m = czk_journal_tail(j);
    CHECK(m.seq == 6 && m.end == rec_end(5));
    CHECK(czk_journal_durable_seq(j) == 3);

    /* the sync of the current tail failed: records 4-6 go */
    CHECK(czk_journal_synced(j, m, -EIO, &e) == -EIO && e.code == -EIO);
    CHECK(czk_journal_failed(j) == 0);
    CHECK(czk_journal_next_seq(j) == 4 && czk_journal_durable_seq(j) == 3);
    CHECK(fsize(path) == rec_end(2));
    m = czk_journal_tail(j);
    CHECK(m.seq == 3 && m.end == rec_end(2));

    /* appends continue from the durable mark, with lag 1 */
    add(j, 3, rand_len(), 0);
    add(j, 4, rand_len(), 0);
    CHECK(czk_journal_durable_seq(j) == 3);
    m5 = czk_journal_tail(j);
    CHECK(m5.seq == 5 && m5.end == rec_end(4));
    m4 = m5; /* the same handle, after the same cuts */
    m4.seq = 4;
    m4.end = rec_end(3);

    /* another thread's sync of everything up to record 5 succeeded */
    fd = czk_journal_sync_fd(j);
    CHECK(fd >= 0 && fdatasync(fd) == 0);
    CHECK(czk_journal_synced(j, m5, 0, &e) == 0);
    CHECK(czk_journal_durable_seq(j) == 5 && czk_journal_failed(j) == 0);
    CHECK(czk_journal_synced(j, m4, 0, &e) == 0); /* an older success never moves it back */
    CHECK(czk_journal_durable_seq(j) == 5);

    /* a sync of record 6 fails while 7 is being appended: both go, the error is returned as is */
    add(j, 5, rand_len(), 0);
    m6 = czk_journal_tail(j);
    add(j, 6, rand_len(), 0);
    CHECK(czk_journal_synced(j, m6, -ENOSPC, &e) == -ENOSPC);
    CHECK(czk_journal_failed(j) == 0);
    CHECK(czk_journal_next_seq(j) == 6 && czk_journal_durable_seq(j) == 5);
    CHECK(fsize(path) == rec_end(4));
    /* a success reported late for a mark from before the cut names records
     * that are gone: nothing moves */
    CHECK(czk_journal_synced(j, m6, 0, &e) == 0 && czk_journal_durable_seq(j) == 5);
    CHECK(czk_journal_tail(j).seq == 5 && czk_journal_failed(j) == 0);
    czk_journal_close(j);

    /* the file holds records 1-3 and the two written after the cut */
    nrec = 5;
    for (int i = 0; i < 3; i++)
        want_flags[i] = CZK_JOURNAL_SYNC | LAG(1);
    want_flags[3] = LAG(1);
    want_flags[4] = LAG(2);
    memset(&s, 0, sizeof(s));
    CHECK_RC(czk_journal_replay_file(path, check_cb, &s, NULL, &e));
    CHECK(s.n == 5 && s.mismatch == 0);

    /* a failure reported for a mark below the durable mark: poisoned */
    memset(&s, 0, sizeof(s));
    CHECK_RC(czk_journal_open_ex(&j, path, 0, 5, check_cb, &s, &e));
    CHECK(s.n == 5 && s.mismatch == 0 && czk_journal_durable_seq(j) == 5);
    m5 = czk_journal_tail(j); /* this handle's mark of record 5 */
    add(j, 5, rand_len(), 0);
    want_flags[5] = LAG(1);
    m6 = czk_journal_tail(j);
    CHECK(fdatasync(czk_journal_sync_fd(j)) == 0);
    CHECK(czk_journal_synced(j, m6, 0, &e) == 0 && czk_journal_durable_seq(j) == 6);
    CHECK(czk_journal_synced(j, m5, -EIO, &e) == -EIO);
    CHECK(czk_journal_failed(j) == 1);
    size = fsize(path);
    {
        uint8_t b[8] = {1};
        uint64_t seq = 0;
        CHECK(czk_journal_append(j, 1, b, sizeof(b), 0, &seq, &e) == -EIO && seq == 0);
        CHECK(czk_journal_append(j, 1, b, sizeof(b), CZK_JOURNAL_SYNC, &seq, &e) == -EIO && seq == 0);
    }
    CHECK(czk_journal_sync(j, &e) == -EIO);
    CHECK(fsize(path) == size); /* nothing written */
    czk_journal_close(j);

    /* a new open recovers; a failure for exactly the durable mark also poisons */
    nrec = 6;
    memset(&s, 0, sizeof(s));
    CHECK_RC(czk_journal_open_ex(&j, path, 0, 6, check_cb, &s, &e));
    CHECK(s.n == 6 && s.mismatch == 0 && czk_journal_failed(j) == 0 && czk_journal_durable_seq(j) == 6);
    add(j, 6, rand_len(), CZK_JOURNAL_SYNC);
    want_flags[6] = CZK_JOURNAL_SYNC | LAG(1);
    m = czk_journal_tail(j);
    CHECK(m.seq == 7 && czk_journal_durable_seq(j) == 7);
    CHECK(czk_journal_synced(j, m, -EIO, &e) == -EIO);
    CHECK(czk_journal_failed(j) == 1);
    {
        uint8_t b[8] = {1};
        CHECK(czk_journal_append(j, 1, b, sizeof(b), 0, NULL, &e) == -EIO);
    }
    czk_journal_close(j);
    nrec = 7;
    memset(&s, 0, sizeof(s));
    CHECK_RC(czk_journal_replay_file(path, check_cb, &s, NULL, &e));
    CHECK(s.n == 7 && s.mismatch == 0);
}

static int keep_all(const czk_journal_rec *r, void *ctx)
{
    int *n = ctx;
    (*n)++;
    return 1;
}

/* 5. compaction writes every record as synced, and all of it is durable */
static void test_compact(void)
{
    static uint8_t pre[sizeof(file)], dam[sizeof(file)];
    static uint32_t pre_flags[MAXREC];
    czk_journal *j;
    czk_journal_mark m;
    czk_journal_file_header fh;
    czk_error e;
    seen s;
    size_t pre_len;
    int calls = 0;

    unlink(path);
    CHECK_RC(czk_journal_open_ex(&j, path, CZK_JOURNAL_CREATE, 0, NULL, NULL, &e));
    for (int i = 0; i < 3; i++) {
        add(j, i, rand_len(), CZK_JOURNAL_SYNC);
        pre_flags[i] = CZK_JOURNAL_SYNC | LAG(1);
    }
    for (int i = 3; i < 7; i++) {
        add(j, i, rand_len(), 0);
        pre_flags[i] = LAG(i - 2);
    }
    CHECK(czk_journal_durable_seq(j) == 3);
    pre_len = slurp(path, pre, sizeof(pre));
    CHECK(pre_len == rec_end(6));
    CHECK_RC(czk_journal_compact(j, keep_all, &calls, &e));
    CHECK(calls == 7);
    CHECK(czk_journal_next_seq(j) == 8 && czk_journal_durable_seq(j) == czk_journal_next_seq(j) - 1);
    m = czk_journal_tail(j);
    CHECK(m.seq == 7 && m.end == rec_end(6) && fsize(path) == rec_end(6));

    file_len = slurp(path, file, sizeof(file));
    CHECK(file_len == rec_end(6));
    memcpy(&fh, file, HDR);
    CHECK(fh.magic == CZK_JOURNAL_MAGIC && fh.base_seq == 8);
    for (int i = 0; i < 7; i++) {
        czk_journal_rec_header h = hdr_at(file, file_len, recs[i].off);
        CHECK(h.magic == CZK_JOURNAL_REC_MAGIC && h.seq == recs[i].seq && h.type == recs[i].type &&
              h.len == recs[i].len && !memcmp(file + recs[i].off + RHDR, recs[i].data, recs[i].len));
        if (h.flags != (CZK_JOURNAL_SYNC | LAG(1))) {
            fprintf(stderr, "compacted record %d: flags %#x, expected %#x\n", i + 1, h.flags,
                    CZK_JOURNAL_SYNC | LAG(1));
            exit(1);
        }
        want_flags[i] = h.flags;
    }

    /* the next append sees everything durable: lag 1, right after the compacted records */
    add(j, 7, rand_len(), 0);
    want_flags[7] = LAG(1);
    CHECK(czk_journal_durable_seq(j) == 7);
    czk_journal_close(j);
    CHECK(disk_flags(7) == LAG(1));
    nrec = 8;
    memset(&s, 0, sizeof(s));
    CHECK_RC(czk_journal_replay_file(path, check_cb, &s, NULL, &e));
    CHECK(s.n == 8 && s.mismatch == 0);
    file_len = slurp(path, file, sizeof(file));

    /* record 5 damaged: before compaction a torn group, after it corruption */
    for (int mode = 0; mode < NMODES; mode++) {
        memcpy(want_flags, pre_flags, sizeof(pre_flags));
        nrec = 7;
        memcpy(dam, pre, pre_len);
        damage(dam, &recs[4], mode);
        expect_torn(4, dam, pre_len, 3, "before compaction");
        for (int i = 0; i < 7; i++)
            want_flags[i] = CZK_JOURNAL_SYNC | LAG(1);
        want_flags[7] = LAG(1);
        nrec = 8;
        memcpy(dam, file, file_len);
        damage(dam, &recs[4], mode);
        expect_refused(4, dam, file_len, "after compaction");
    }
}

/* rewrites every record's flags in file (crc recomputed) */
static void set_flags(uint32_t (*fl)(int i))
{
    for (int i = 0; i < nrec; i++) {
        czk_journal_rec_header h = hdr_at(file, file_len, recs[i].off);
        CHECK(h.crc == own_crc(&h, file + recs[i].off + RHDR)); /* the crc is what layout.h says */
        h.flags = fl(i);
        h.crc = own_crc(&h, file + recs[i].off + RHDR);
        memcpy(file + recs[i].off, &h, RHDR);
        want_flags[i] = h.flags;
    }
}

static uint32_t old_flags(int i) { return CZK_JOURNAL_SYNC; }
static uint32_t none_durable_flags(int i) { return LAG(recs[i].seq); }

/* 6. records of older builds (lag 0) were each synced on their own */
static void test_old_format(void)
{
    czk_journal *j;
    czk_error e;
    seen s;

    build("SSSSSS");
    set_flags(old_flags);

    /* undamaged, it replays and opens; appends then carry a lag again */
    put(copy, file, file_len);
    memset(&s, 0, sizeof(s));
    CHECK_RC(czk_journal_replay_file(copy, check_cb, &s, NULL, &e));
    CHECK(s.n == 6 && s.mismatch == 0);
    memset(&s, 0, sizeof(s));
    CHECK_RC(czk_journal_open_ex(&j, copy, 0, 6, check_cb, &s, &e));
    CHECK(s.n == 6 && s.mismatch == 0 && czk_journal_durable_seq(j) == 6 && czk_journal_next_seq(j) == 7);
    {
        uint8_t b[8] = {0};
        uint8_t buf[sizeof(file)];
        size_t len;
        uint64_t seq;
        CHECK_RC(czk_journal_append(j, 7, b, sizeof(b), 0, &seq, &e));
        CHECK(seq == 7);
        czk_journal_close(j);
        len = slurp(copy, buf, sizeof(buf));
        CHECK(len == file_len + pad8(RHDR + sizeof(b)) && hdr_at(buf, len, file_len).flags == LAG(1));
    }

    /* record 3 of 6 damaged: refused (lag 0 reads as 1); the last one: torn */
    try_damage(2, 0, 0, "old format");
    try_damage(5, 1, 0, "old format, last record");

    /* the same file with lags saying nothing was durable: the same damage is a torn tail */
    set_flags(none_durable_flags);
    try_damage(2, 1, 0, "nothing durable (control)");
}

int main(void)
{
    t_seed("test_journal_group");
    jt_tmpdir(dir, sizeof(dir), "jgroup");
    snprintf(path, sizeof(path), "%s/journal", dir);
    snprintf(copy, sizeof(copy), "%s/copy", dir);

    test_durable();
    test_torn_group();
    test_synced_group();
    test_reported();
    test_compact();
    test_old_format();

    unlink(copy);
    unlink(path);
    CHECK(rmdir(dir) == 0); /* nothing left behind (no compaction temp file) */
    fprintf(stderr, "test_journal_group: ok\n");
    return 0;
}
