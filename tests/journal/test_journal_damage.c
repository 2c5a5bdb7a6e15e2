/*
 * test_journal_damage.c — the torn-tail rule of ipc/journal.h, exhaustively
 * on a small journal of random records:
 *   - every single-bit flip of every byte: in the file header or in any
 *     record but the last, replay and open refuse the file (-EBADMSG, nothing
 *     replayed, the message names the seq it follows and the offset); in the
 *     last record, the outcome is exactly what the rule says (torn: the other
 *     records replay and nothing else; corrupt: refused);
 *   - truncation at every byte offset: open replays exactly the records whose
 *     header and payload lie before the cut, or refuses; with the id mark's
 *     floor at the last seq, every cut that loses a record is refused
 *     (-ESTALE); a file shorter than its header is a torn creation, accepted
 *     only with CZK_JOURNAL_CREATE.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ipc/journal.h"
#include "tutil.h"
#include "jutil.h"

#define NREC 12
#define MAXLEN 48 /* payload bytes at most: the whole file stays small */

static rec recs[NREC];
static uint8_t file[HDR + NREC * (RHDR + MAXLEN + 8)]; /* with room to spare: a read that fills it failed */
static size_t file_len;

typedef struct seen {
    int n, mismatch;
} seen;

/* replay callback: the k-th record replayed must be recs[k] */
static int check_cb(const czk_journal_rec *r, void *ctx)
{
    seen *s = ctx;
    const rec *w = s->n < NREC ? &recs[s->n] : NULL;
    if (!w || w->seq != r->seq || w->type != r->type || w->len != r->len || memcmp(w->data, r->data, r->len) ||
        w->off != r->offset)
        s->mismatch++;
    s->n++;
    return 0;
}

static void put(const char *path, const uint8_t *buf, size_t len)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    CHECK(fd >= 0);
    CHECK(write(fd, buf, len) == (ssize_t)len);
    close(fd);
}

static int nonzero(const uint8_t *p, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (p[i])
            return 1;
    return 0;
}

/*
 * The rule for a flip inside the last record (journal.h), computed on the
 * damaged bytes: 1 = torn tail (dropped), 0 = corruption (refused).
 */
static int last_flip_is_torn(const uint8_t *buf, size_t len, uint64_t b)
{
    const rec *l = &recs[NREC - 1];
    uint64_t o = l->off;
    czk_journal_rec_header h;

    if (b >= o + RHDR + l->len)
        return 0; /* padding: the record is whole and crc-valid, no torn write leaves that */
    memcpy(&h, buf + o, RHDR);
    if (h.magic != CZK_JOURNAL_REC_MAGIC || h.type == 0 || h.len > CZK_JOURNAL_MAX_PAYLOAD)
        return 1; /* header implausible: nothing more to check */
    if (o + RHDR + h.len > len)
        return 1; /* payload cut short */
    if (pad8(o + RHDR + h.len) < len && nonzero(buf + pad8(o + RHDR + h.len), len - pad8(o + RHDR + h.len)))
        return 0; /* data after the record's claimed end */
    return 1;
}

int main(void)
{
    char dir[64], path[256], cut[300], msg[64];
    czk_journal *j;
    czk_journal_info info;
    czk_error e;
    seen s;
    uint64_t flips = 0, torn = 0, refused = 0, cuts = 0;

    t_seed("test_journal_damage");
    jt_tmpdir(dir, sizeof(dir), "jdamage");
    snprintf(path, sizeof(path), "%s/journal", dir);
    snprintf(cut, sizeof(cut), "%s/cut", dir);

    for (int i = 0; i < NREC; i++)
        recs[i].len = (uint32_t)t_range(0, MAXLEN);
    recs[3].len = 0;                                                    /* an empty payload in the middle */
    recs[NREC - 1].len = (uint32_t)(8 * t_range(1, 4) + t_range(1, 7)); /* the last one has padding */
    jt_write(path, recs, NREC);
    {
        int fd = open(path, O_RDONLY);
        ssize_t n = read(fd, file, sizeof(file));
        close(fd);
        CHECK(n > 0 && (size_t)n < sizeof(file));
        file_len = (size_t)n;
    }
    CHECK(recs[NREC - 1].off + pad8(RHDR + recs[NREC - 1].len) == file_len);

    /* every bit of every byte */
    for (uint64_t b = 0; b < file_len; b++) {
        int ri = -1;
        for (int i = 0; i < NREC; i++)
            if (b >= recs[i].off)
                ri = i;
        for (int bit = 0; bit < 8; bit++) {
            static uint8_t dam[sizeof(file)];
            int r, expect_torn;
            memcpy(dam, file, file_len);
            dam[b] ^= (uint8_t)(1u << bit);
            put(cut, dam, file_len);
            memset(&s, 0, sizeof(s));
            r = czk_journal_replay_file(cut, check_cb, &s, &info, &e);
            expect_torn = ri == NREC - 1 && last_flip_is_torn(dam, file_len, b);
            flips++;
            if (expect_torn) {
                torn++;
                if (r != 0 || s.n != NREC - 1 || s.mismatch || info.records != NREC - 1 ||
                    info.torn_bytes != file_len - recs[NREC - 1].off) {
                    fprintf(stderr, "flip byte %" PRIu64 " bit %d (last record): r %d, %d records, torn %" PRIu64
                                    ": expected a torn tail\n",
                            b, bit, r, s.n, info.torn_bytes);
                    return 1;
                }
                continue;
            }
            refused++;
            if (r != -EBADMSG || s.n != 0) {
                fprintf(stderr, "flip byte %" PRIu64 " bit %d (record %d): r %d, %d records replayed: expected a "
                                "refusal\n",
                        b, bit, ri, r, s.n);
                return 1;
            }
            if (ri >= 0) {
                /* names the record: the seq before it and its offset */
                snprintf(msg, sizeof(msg), "offset %" PRIu64 " (record after seq %d", recs[ri].off, ri);
                if (!strstr(e.msg, msg)) {
                    fprintf(stderr, "flip byte %" PRIu64 ": message \"%s\" does not name \"%s\"\n", b, e.msg, msg);
                    return 1;
                }
            }
            /* a sample also goes through open, which must refuse it the same way */
            if (t_range(0, 15) == 0) {
                memset(&s, 0, sizeof(s));
                CHECK(czk_journal_open_ex(&j, cut, 0, 0, check_cb, &s, &e) == -EBADMSG && s.n == 0);
            }
        }
    }

    /* every truncation */
    for (uint64_t c = 0; c <= file_len; c++) {
        int whole = 0, r;
        for (int i = 0; i < NREC; i++)
            if (recs[i].off + RHDR + recs[i].len <= c)
                whole++;
        put(cut, file, c);
        cuts++;
        if (c < HDR) {
            /* a torn creation: refused unless the caller may create */
            CHECK(czk_journal_open_ex(&j, cut, 0, 0, NULL, NULL, &e) == -EBADMSG);
            put(cut, file, c);
            memset(&s, 0, sizeof(s));
            CHECK_RC(czk_journal_open_ex(&j, cut, CZK_JOURNAL_CREATE, 0, check_cb, &s, &e));
            CHECK(s.n == 0 && czk_journal_next_seq(j) == 1);
            czk_journal_close(j);
            CHECK_RC(czk_journal_replay_file(cut, NULL, NULL, &info, &e)); /* a valid empty journal now */
            CHECK(info.records == 0 && info.torn_bytes == 0);
            continue;
        }
        memset(&s, 0, sizeof(s));
        r = czk_journal_open_ex(&j, cut, 0, 0, check_cb, &s, &e);
        if (r != 0 || s.n != whole || s.mismatch) {
            fprintf(stderr, "cut at %" PRIu64 ": r %d, %d records (expected %d), %d mismatches\n", c, r, s.n, whole,
                    s.mismatch);
            return 1;
        }
        CHECK(czk_journal_next_seq(j) == (uint64_t)whole + 1);
        czk_journal_close(j);
        /* with the floor at the last seq, a cut that loses records is refused */
        put(cut, file, c);
        memset(&s, 0, sizeof(s));
        r = czk_journal_open_ex(&j, cut, 0, NREC, check_cb, &s, &e);
        if (whole == NREC) {
            CHECK(r == 0 && s.n == NREC);
            czk_journal_close(j);
        } else {
            if (!(r == -ESTALE && s.n == 0 && strstr(e.msg, "records are missing"))) {
                fprintf(stderr, "cut at %" PRIu64 " with floor %d: r %d, %d records: %s\n", c, NREC, r, s.n, e.msg);
                return 1;
            }
        }
    }

    /* a 40-byte all-zero header is a torn creation; 41 zero bytes are not */
    {
        static const uint8_t zeros[HDR + 1];
        put(cut, zeros, HDR);
        CHECK(czk_journal_open_ex(&j, cut, 0, 0, NULL, NULL, &e) == -EBADMSG);
        CHECK_RC(czk_journal_open_ex(&j, cut, CZK_JOURNAL_CREATE, 0, NULL, NULL, &e));
        czk_journal_close(j);
        put(cut, zeros, HDR + 1);
        CHECK(czk_journal_open_ex(&j, cut, CZK_JOURNAL_CREATE, 0, NULL, NULL, &e) == -EBADMSG);
    }
    /* a missing journal is created only with CZK_JOURNAL_CREATE */
    unlink(cut);
    CHECK(czk_journal_open_ex(&j, cut, 0, 0, NULL, NULL, &e) == -ENOENT && access(cut, F_OK) != 0);

    unlink(cut);
    unlink(path);
    rmdir(dir);
    fprintf(stderr, "test_journal_damage: ok (%" PRIu64 " flips: %" PRIu64 " torn, %" PRIu64 " refused; %" PRIu64
                    " cuts)\n",
            flips, torn, refused, cuts);
    return 0;
}
