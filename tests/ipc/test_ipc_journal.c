/*
 * test_ipc_journal.c — the journal: random records survive close/reopen;
 * a copy truncated at every byte offset of its last record replays every
 * complete record and nothing else, and reopening it trims the torn tail so
 * the next append follows the last good record; a corrupted byte in a
 * record that is not the last is refused (nothing replayed); compaction keeps
 * exactly the chosen records, appends continue after it, and seqs never go
 * back even when compaction dropped the last records.  The exhaustive damage
 * rules are in tests/journal/.
 */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ipc/journal.h"
#include "tutil.h"

#define NREC 40

typedef struct rec {
    uint16_t type;
    uint32_t len;
    uint64_t seq;
    uint8_t data[3000];
} rec;

static rec recs[NREC + 8];
static int nrecs;

typedef struct seen {
    int n;
    int mismatch;
    uint64_t seqs[NREC + 8];
} seen;

/* replay callback: record i must equal recs[idx[i]] */
static int check_cb(const czk_journal_rec *r, void *ctx)
{
    seen *s = ctx;
    int k;
    for (k = 0; k < nrecs && recs[k].seq != r->seq; k++)
        ;
    if (k == nrecs || recs[k].type != r->type || recs[k].len != r->len || memcmp(recs[k].data, r->data, r->len))
        s->mismatch++;
    s->seqs[s->n++] = r->seq;
    return 0;
}

static void copy_prefix(const char *src, const char *dst, off_t len)
{
    static uint8_t buf[1 << 20];
    int in = open(src, O_RDONLY), out = open(dst, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    ssize_t n;
    CHECK(in >= 0 && out >= 0);
    n = pread(in, buf, sizeof(buf), 0);
    CHECK(n >= len);
    CHECK(write(out, buf, (size_t)len) == len);
    close(in);
    close(out);
}

static void append(czk_journal *j, unsigned flags)
{
    czk_error e;
    rec *r = &recs[nrecs];
    r->type = (uint16_t)t_range(1, 65535);
    r->len = (uint32_t)(t_range(0, 4) == 0 ? 0 : t_range(1, sizeof(r->data)));
    t_fill(r->data, r->len);
    CHECK_RC(czk_journal_append(j, r->type, r->data, r->len, flags, &r->seq, &e));
    nrecs++;
}

static int keep_odd(const czk_journal_rec *r, void *ctx) { return (int)(r->seq & 1); }
static int keep_none(const czk_journal_rec *r, void *ctx) { return 0; }

int main(void)
{
    /* tmpfs when available: fsync on a busy disk costs seconds and proves nothing here */
    char dir[64], path[256], cut[300];
    czk_journal *j;
    czk_journal_info info;
    czk_error e;
    seen s;
    struct stat st;
    uint64_t last_off, last_end;

    t_seed("test_ipc_journal");
    snprintf(dir, sizeof(dir), "%s/czk-journal-XXXXXX", access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp");
    CHECK(mkdtemp(dir));
    snprintf(path, sizeof(path), "%s/journal", dir);
    snprintf(cut, sizeof(cut), "%s/cut", dir);

    /* create, append, close, reopen: everything replays in order */
    CHECK_RC(czk_journal_open(&j, path, NULL, NULL, &e));
    for (int i = 0; i < NREC; i++)
        append(j, (i % 5 == 0) ? CZK_JOURNAL_SYNC : 0);
    CHECK_RC(czk_journal_sync(j, &e));
    czk_journal_close(j);
    memset(&s, 0, sizeof(s));
    CHECK_RC(czk_journal_open(&j, path, check_cb, &s, &e));
    CHECK(s.n == NREC && s.mismatch == 0);
    for (int i = 0; i < NREC; i++)
        CHECK(s.seqs[i] == (uint64_t)i + 1);
    CHECK(czk_journal_get_info(j)->torn_bytes == 0);
    CHECK(czk_journal_next_seq(j) == NREC + 1);
    {
        /* a second writer on the same journal is refused */
        czk_journal *j2;
        CHECK(czk_journal_open(&j2, path, NULL, NULL, &e) == -EBUSY && strstr(e.msg, "locked"));
    }
    czk_journal_close(j);

    /* find the last record's offset and end */
    CHECK(stat(path, &st) == 0);
    last_end = (uint64_t)st.st_size;
    last_off = last_end - ((sizeof(czk_journal_rec_header) + recs[NREC - 1].len + 7) & ~7ull);

    /* truncated at every byte offset of the last record */
    for (uint64_t off = last_off; off <= last_end; off++) {
        uint64_t payload_end = last_off + sizeof(czk_journal_rec_header) + recs[NREC - 1].len;
        int expect = off >= payload_end ? NREC : NREC - 1;
        copy_prefix(path, cut, (off_t)off);
        memset(&s, 0, sizeof(s));
        CHECK_RC(czk_journal_replay_file(cut, check_cb, &s, &info, &e));
        if (s.n != expect || s.mismatch) {
            fprintf(stderr, "cut at %llu: %d records (expected %d), %d mismatches\n", (unsigned long long)off, s.n,
                    expect, s.mismatch);
            return 1;
        }
        CHECK(info.records == (uint64_t)expect);
        CHECK(info.torn_bytes == (expect == NREC ? 0 : off - last_off));
    }

    /* reopen a torn copy: the tail is trimmed and the next append follows */
    {
        uint64_t off = last_off + t_range(1, sizeof(czk_journal_rec_header) + recs[NREC - 1].len - 1);
        int saved = nrecs;
        copy_prefix(path, cut, (off_t)off);
        memset(&s, 0, sizeof(s));
        CHECK_RC(czk_journal_open(&j, cut, check_cb, &s, &e));
        CHECK(s.n == NREC - 1 && czk_journal_get_info(j)->torn_bytes == off - last_off);
        nrecs = NREC - 1; /* the torn record is gone */
        append(j, CZK_JOURNAL_SYNC);
        CHECK(recs[nrecs - 1].seq == NREC); /* reuses the torn record's seq */
        czk_journal_close(j);
        memset(&s, 0, sizeof(s));
        CHECK_RC(czk_journal_replay_file(cut, check_cb, &s, &info, &e));
        CHECK(s.n == NREC && s.mismatch == 0 && info.torn_bytes == 0);
        (void)saved;
    }

    /* a flipped byte in record 10 of NREC: refused, nothing replayed */
    {
        int fd;
        uint8_t b;
        uint64_t off = sizeof(czk_journal_file_header);
        for (int i = 0; i < 9; i++)
            off += (sizeof(czk_journal_rec_header) + recs[i].len + 7) & ~7ull;
        copy_prefix(path, cut, (off_t)last_end);
        fd = open(cut, O_RDWR);
        off += t_range(0, sizeof(czk_journal_rec_header) + recs[9].len - 1);
        CHECK(pread(fd, &b, 1, (off_t)off) == 1);
        b ^= (uint8_t)t_range(1, 255);
        CHECK(pwrite(fd, &b, 1, (off_t)off) == 1);
        close(fd);
        memset(&s, 0, sizeof(s));
        CHECK(czk_journal_replay_file(cut, check_cb, &s, &info, &e) == -EBADMSG);
        CHECK(s.n == 0 && strstr(e.msg, "after seq 9") && strstr(e.msg, "czk journal salvage"));
        CHECK(czk_journal_open(&j, cut, check_cb, &s, &e) == -EBADMSG && s.n == 0);
    }

    /* a file that is not a journal is refused */
    {
        int fd = open(cut, O_WRONLY | O_TRUNC);
        CHECK(write(fd, "not a journal at all, really not one", 36) == 36);
        close(fd);
        CHECK(czk_journal_replay_file(cut, NULL, NULL, &info, &e) == -EBADMSG);
    }

    /* compaction keeps the odd seqs; appends continue with fresh seqs */
    nrecs = NREC;
    for (int i = 0; i < NREC; i++)
        CHECK(recs[i].seq == (uint64_t)i + 1);
    CHECK_RC(czk_journal_open(&j, path, NULL, NULL, &e));
    CHECK_RC(czk_journal_compact(j, keep_odd, NULL, &e));
    {
        czk_journal *j2; /* the compacted file is still locked */
        CHECK(czk_journal_open(&j2, path, NULL, NULL, &e) == -EBUSY);
    }
    append(j, CZK_JOURNAL_SYNC);
    CHECK(recs[nrecs - 1].seq == NREC + 1);
    czk_journal_close(j);
    memset(&s, 0, sizeof(s));
    CHECK_RC(czk_journal_replay_file(path, check_cb, &s, &info, &e));
    CHECK(s.mismatch == 0 && s.n == NREC / 2 + 1);
    for (int i = 0; i < NREC / 2; i++)
        CHECK(s.seqs[i] == (uint64_t)(2 * i + 1));
    CHECK(s.seqs[NREC / 2] == NREC + 1);
    /* compacted down to nothing: a reopen still continues after the newest seq */
    CHECK_RC(czk_journal_open(&j, path, NULL, NULL, &e));
    CHECK_RC(czk_journal_compact(j, keep_none, NULL, &e));
    czk_journal_close(j);
    memset(&s, 0, sizeof(s));
    CHECK_RC(czk_journal_open(&j, path, check_cb, &s, &e));
    CHECK(s.n == 0 && czk_journal_next_seq(j) == NREC + 2);
    czk_journal_close(j);
    CHECK(access(path, F_OK) == 0);
    {
        char tmp[300];
        snprintf(tmp, sizeof(tmp), "%s.compact", path);
        CHECK(access(tmp, F_OK) != 0); /* no temporary left behind */
    }

    unlink(cut);
    unlink(path);
    rmdir(dir);
    fprintf(stderr, "test_ipc_journal: ok\n");
    return 0;
}
