/*
 * test_journal_tools.c — check and salvage, and the job-id mark:
 *   - check on a clean journal reports nothing; on a journal with records
 *     damaged in the middle it reports each damaged region (offset, the seq
 *     it follows) and counts them as refused;
 *   - salvage writes a journal holding exactly the undamaged records, in
 *     order, that opens cleanly and continues with seqs above all of them;
 *     salvage of a clean journal keeps everything;
 *   - the id mark hands out increasing ids across reopen (skipping the
 *     unused rest of a reserved block, never reusing one), survives the
 *     journal's deletion (open without CREATE then refuses a missing
 *     journal), records a floor that makes a truncated journal refused,
 *     refuses a damaged mark file, and czk_idmark_set repairs it.
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

#define NREC 30

static rec recs[NREC];

typedef struct seen {
    int n, mismatch;
    uint64_t seqs[NREC];
} seen;

/* replay callback: records must be the undamaged ones, in order */
static int check_cb(const czk_journal_rec *r, void *ctx)
{
    seen *s = ctx;
    int k;
    for (k = 0; k < NREC && recs[k].seq != r->seq; k++)
        ;
    if (k == NREC || recs[k].damaged || recs[k].type != r->type || recs[k].len != r->len ||
        memcmp(recs[k].data, r->data, r->len))
        s->mismatch++;
    if (s->n < NREC)
        s->seqs[s->n] = r->seq;
    s->n++;
    return 0;
}

typedef struct problems {
    int n;
    czk_journal_problem p[NREC];
} problems;

static void problem_cb(const czk_journal_problem *p, void *ctx)
{
    problems *ps = ctx;
    if (ps->n < NREC)
        ps->p[ps->n] = *p;
    ps->n++;
}

static void flip(const char *path, uint64_t off)
{
    int fd = open(path, O_RDWR);
    uint8_t b;
    CHECK(fd >= 0 && pread(fd, &b, 1, (off_t)off) == 1);
    b ^= (uint8_t)t_range(1, 255);
    CHECK(pwrite(fd, &b, 1, (off_t)off) == 1);
    close(fd);
}

int main(void)
{
    char dir[64], path[256], out[300], out2[300], mark[300], txt[200];
    czk_journal *j;
    czk_journal_info info;
    czk_idmark *m;
    czk_error e;
    problems ps;
    seen s;
    uint64_t kept, id, prev;
    int bad[3];

    t_seed("test_journal_tools");
    jt_tmpdir(dir, sizeof(dir), "jtools");
    snprintf(path, sizeof(path), "%s/journal", dir);
    snprintf(out, sizeof(out), "%s/salvaged", dir);
    snprintf(out2, sizeof(out2), "%s/salvaged2", dir);
    snprintf(mark, sizeof(mark), "%s/next_job_id", dir);

    for (int i = 0; i < NREC; i++)
        recs[i].len = (uint32_t)t_range(1, sizeof(recs[i].data));
    jt_write(path, recs, NREC);

    /* clean: check finds nothing; salvage keeps everything */
    memset(&ps, 0, sizeof(ps));
    CHECK(czk_journal_check(path, problem_cb, &ps, &info, &e) == 0 && ps.n == 0 && info.records == NREC);
    CHECK_RC(czk_journal_salvage(path, out, problem_cb, &ps, &kept, &e));
    CHECK(kept == NREC && ps.n == 0);
    memset(&s, 0, sizeof(s));
    CHECK_RC(czk_journal_open_ex(&j, out, 0, NREC, check_cb, &s, &e));
    CHECK(s.n == NREC && s.mismatch == 0 && czk_journal_next_seq(j) == NREC + 1);
    czk_journal_close(j);
    CHECK(czk_journal_salvage(path, out, NULL, NULL, &kept, &e) == -EEXIST); /* never overwrites */
    unlink(out);

    /* damage three records that are not neighbours and not the last */
    bad[0] = (int)t_range(0, 7);
    bad[1] = (int)t_range(10, 17);
    bad[2] = (int)t_range(20, NREC - 3);
    for (int k = 0; k < 3; k++) {
        rec *r = &recs[bad[k]];
        r->damaged = 1;
        flip(path, r->off + t_range(0, RHDR + r->len - 1));
    }
    memset(&ps, 0, sizeof(ps));
    CHECK(czk_journal_check(path, problem_cb, &ps, &info, &e) == 3 && ps.n == 3);
    CHECK(info.records == (uint64_t)bad[0]);
    for (int k = 0; k < 3; k++) {
        rec *r = &recs[bad[k]];
        CHECK(ps.p[k].kind == CZK_JOURNAL_CORRUPT && ps.p[k].offset == r->off &&
              ps.p[k].length == pad8(RHDR + r->len) && ps.p[k].after_seq == r->seq - 1);
    }
    CHECK(czk_journal_open_ex(&j, path, 0, 0, NULL, NULL, &e) == -EBADMSG);

    /* salvage: exactly the undamaged records, and the new journal opens */
    memset(&ps, 0, sizeof(ps));
    CHECK_RC(czk_journal_salvage(path, out, problem_cb, &ps, &kept, &e));
    CHECK(kept == NREC - 3 && ps.n == 3);
    memset(&ps, 0, sizeof(ps));
    CHECK(czk_journal_check(out, problem_cb, &ps, NULL, &e) == 0 && ps.n == 0);
    memset(&s, 0, sizeof(s));
    CHECK_RC(czk_journal_open_ex(&j, out, 0, NREC, check_cb, &s, &e));
    CHECK(s.n == NREC - 3 && s.mismatch == 0 && czk_journal_next_seq(j) == NREC + 1);
    for (int k = 1; k < s.n; k++)
        CHECK(s.seqs[k] > s.seqs[k - 1]);
    czk_journal_close(j);

    /* garbage in the file header: salvage still recovers every record */
    flip(path, t_range(0, HDR - 1));
    memset(&ps, 0, sizeof(ps));
    CHECK(czk_journal_check(path, problem_cb, &ps, NULL, &e) == 4 && ps.p[0].kind == CZK_JOURNAL_BAD_HEADER);
    CHECK_RC(czk_journal_salvage(path, out2, NULL, NULL, &kept, &e));
    CHECK(kept == NREC - 3);
    unlink(out2);

    /* the id mark: blocks of 4 */
    CHECK_RC(czk_idmark_open(&m, mark, 4, &e));
    CHECK(czk_idmark_pristine(m) && czk_idmark_floor(m) == 0);
    prev = 0;
    for (int i = 0; i < 10; i++) {
        CHECK_RC(czk_idmark_next(m, (uint64_t)i + 5, &id, &e));
        CHECK(id == prev + 1);
        prev = id;
    }
    CHECK(!czk_idmark_pristine(m) && czk_idmark_floor(m) == 13); /* the third block was reserved at seq 13 */
    czk_idmark_close(m);
    /* the journal is deleted: the mark survives it, ids continue, the missing journal is refused */
    unlink(path);
    CHECK_RC(czk_idmark_open(&m, mark, 4, &e));
    CHECK(!czk_idmark_pristine(m));
    CHECK_RC(czk_idmark_next(m, 0, &id, &e));
    CHECK(id == 13); /* 11 and 12 were reserved: skipped, never reused */
    CHECK(czk_journal_open_ex(&j, path, czk_idmark_pristine(m) ? CZK_JOURNAL_CREATE : 0, czk_idmark_floor(m), NULL,
                              NULL, &e) == -ENOENT);
    /* the salvaged journal (reached seq NREC >= floor) is accepted; one below the floor is not */
    CHECK_RC(czk_journal_open_ex(&j, out, 0, czk_idmark_floor(m), NULL, NULL, &e));
    czk_journal_close(j);
    CHECK_RC(czk_idmark_set_floor(m, NREC + 1, &e));
    CHECK(czk_journal_open_ex(&j, out, 0, czk_idmark_floor(m), NULL, NULL, &e) == -ESTALE);
    /* raise: above every id the journal holds */
    CHECK_RC(czk_idmark_raise(m, 1000, &e));
    CHECK_RC(czk_idmark_next(m, 0, &id, &e));
    CHECK(id == 1000 && czk_idmark_peek(m) == 1001);
    czk_idmark_close(m);
    CHECK_RC(czk_idmark_open(&m, mark, 4, &e));
    CHECK(czk_idmark_peek(m) > 1000 && czk_idmark_floor(m) == NREC + 1);
    czk_idmark_close(m);

    /* a damaged mark is refused; czk_idmark_set writes a good one */
    {
        int fd = open(mark, O_RDWR);
        ssize_t n = read(fd, txt, sizeof(txt) - 1);
        CHECK(n > 20);
        txt[n] = 0;
        CHECK(strstr(txt, "next=") && strstr(txt, "crc="));
        flip(mark, t_range(0, (uint64_t)n - 2));
        close(fd);
    }
    CHECK(czk_idmark_open(&m, mark, 4, &e) == -EBADMSG && strstr(e.msg, "czk journal idmark"));
    CHECK_RC(czk_idmark_set(mark, 5000, 7, &e));
    CHECK_RC(czk_idmark_open(&m, mark, 4, &e));
    CHECK(czk_idmark_peek(m) == 5000 && czk_idmark_floor(m) == 7);
    czk_idmark_close(m);

    unlink(out);
    unlink(mark);
    rmdir(dir);
    fprintf(stderr, "test_journal_tools: ok\n");
    return 0;
}
