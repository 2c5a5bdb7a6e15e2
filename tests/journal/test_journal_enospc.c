/*
 * test_journal_enospc.c — appends on a full filesystem (a 256 KiB tmpfs
 * mounted for the test; needs root, skipped otherwise): an append that does
 * not fit fails with -ENOSPC, leaves the file at its previous size and the
 * handle usable; a reopen replays exactly the appended records; once space
 * returns appends continue with the next seq.  The id mark on the same full
 * filesystem fails to reserve a block without handing out an id.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ipc/journal.h"
#include "tutil.h"

#define MAXREC 200

static uint8_t payload[MAXREC][3000];
static uint32_t lens[MAXREC];

typedef struct seen {
    int n, mismatch;
} seen;

static int check_cb(const czk_journal_rec *r, void *ctx)
{
    seen *s = ctx;
    if (s->n >= MAXREC || r->seq != (uint64_t)s->n + 1 || r->len != lens[s->n] || memcmp(r->data, payload[s->n], r->len))
        s->mismatch++;
    s->n++;
    return 0;
}

int main(void)
{
    char dir[64], path[256], filler[256], mark[256];
    czk_journal *j;
    czk_idmark *m;
    czk_error e;
    struct stat st;
    seen s;
    int n = 0, r = 0, fd;
    uint64_t id;

    if (geteuid() != 0) {
        fprintf(stderr, "test_journal_enospc: needs root to mount a small tmpfs: skipped\n");
        return 77;
    }
    t_seed("test_journal_enospc");
    snprintf(dir, sizeof(dir), "/tmp/czk-jfull-XXXXXX");
    CHECK(mkdtemp(dir));
    if (mount("czk-jfull", dir, "tmpfs", 0, "size=256k,mode=0700") < 0) {
        fprintf(stderr, "test_journal_enospc: cannot mount a tmpfs here (%s): skipped\n", strerror(errno));
        rmdir(dir);
        return 77;
    }
    snprintf(path, sizeof(path), "%s/journal", dir);
    snprintf(filler, sizeof(filler), "%s/filler", dir);
    snprintf(mark, sizeof(mark), "%s/next_job_id", dir);

    CHECK_RC(czk_idmark_open(&m, mark, 1, &e));
    CHECK_RC(czk_journal_open_ex(&j, path, CZK_JOURNAL_CREATE, 0, NULL, NULL, &e));
    /* take all but ~40 KiB: the journal fills the rest */
    {
        static uint8_t blk[4096];
        fd = open(filler, O_WRONLY | O_CREAT, 0600);
        CHECK(fd >= 0);
        for (int i = 0; i < (256 - 40) / 4; i++)
            if (write(fd, blk, sizeof(blk)) != (ssize_t)sizeof(blk))
                break;
        close(fd);
    }
    for (n = 0; n < MAXREC; n++) {
        uint64_t seq;
        struct stat before;
        lens[n] = (uint32_t)t_range(1000, sizeof(payload[n]));
        t_fill(payload[n], lens[n]);
        CHECK(stat(path, &before) == 0);
        r = czk_journal_append(j, 7, payload[n], lens[n], CZK_JOURNAL_SYNC, &seq, &e);
        if (r < 0) {
            CHECK(stat(path, &st) == 0);
            CHECK(st.st_size == before.st_size); /* the partial record was cut off */
            break;
        }
        CHECK(seq == (uint64_t)n + 1);
    }
    CHECK(r == -ENOSPC && n > 0 && n < MAXREC && strstr(e.msg, "could not write journal"));
    CHECK(!czk_journal_failed(j));
    /* still full: the next attempt fails the same way */
    CHECK(czk_journal_append(j, 7, payload[n], lens[n], CZK_JOURNAL_SYNC, NULL, &e) == -ENOSPC);
    /* the id mark cannot reserve a block either, and hands out nothing */
    {
        uint64_t before = czk_idmark_peek(m);
        int k;
        /* use up the free space completely, then try */
        fd = open(filler, O_WRONLY | O_APPEND);
        CHECK(fd >= 0);
        while (write(fd, payload[0], 512) == 512)
            ;
        close(fd);
        k = czk_idmark_next(m, 0, &id, &e);
        CHECK(k == -ENOSPC && czk_idmark_peek(m) == before);
    }
    czk_journal_close(j);

    /* a reopen (space still short) replays exactly the records appended */
    memset(&s, 0, sizeof(s));
    CHECK_RC(czk_journal_open_ex(&j, path, 0, 0, check_cb, &s, &e));
    CHECK(s.n == n && s.mismatch == 0 && czk_journal_get_info(j)->torn_bytes == 0);

    /* space returns: appends continue with the next seq, the mark with the next id */
    CHECK(unlink(filler) == 0);
    {
        uint64_t seq;
        CHECK_RC(czk_journal_append(j, 7, payload[n], lens[n], CZK_JOURNAL_SYNC, &seq, &e));
        CHECK(seq == (uint64_t)n + 1);
        n++;
    }
    CHECK_RC(czk_idmark_next(m, (uint64_t)n, &id, &e));
    CHECK(id == 1);
    czk_journal_close(j);
    czk_idmark_close(m);
    memset(&s, 0, sizeof(s));
    CHECK_RC(czk_journal_replay_file(path, check_cb, &s, NULL, &e));
    CHECK(s.n == n && s.mismatch == 0);

    CHECK(umount(dir) == 0);
    rmdir(dir);
    fprintf(stderr, "test_journal_enospc: ok (%d records fit)\n", n - 1);
    return 0;
}
