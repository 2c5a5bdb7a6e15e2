/*
 * test_fin_output.c — the finalizer's output files (finalizer/output.c):
 *   - a written partition is found again as FIN_MATCH, with its texts, only
 *     for exactly its identity; another job id, partition, circuit,
 *     verification-key digest or other public signals is FIN_STALE, as are
 *     files without identity.json and a public.json edited behind
 *     identity.json's back;
 *   - fin_output_move_aside moves the partition and the job's summary to
 *     output_dir/.stale, after which the partition is absent and can be
 *     written again;
 *   - files are 0640 and directories 0750;
 *   - on a full filesystem (a small tmpfs, root only) a write fails with an
 *     error fin_output_retryable accepts, commits nothing, and succeeds once
 *     space returns.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include "finalizer/finalizer.h"
#include "tutil.h"

static char vk_a[65], vk_b[65];

static void rand_text(char *buf, size_t n)
{
    for (size_t i = 0; i + 1 < n; i++)
        buf[i] = (char)('0' + t_range(0, 9));
    buf[n - 1] = 0;
}

static int check(const char *dir, const fin_identity *id, const char *want_proof)
{
    char *p = NULL, *u = NULL, why[200] = "";
    size_t pl, ul;
    czk_error e = {0};
    int r = fin_output_check(dir, id, &p, &pl, &u, &ul, why, sizeof(why), &e);
    if (r == FIN_MATCH)
        CHECK(!strcmp(p, want_proof) && !strcmp(u, id->public_text) && pl == strlen(p) && ul == strlen(u));
    if (r == FIN_STALE)
        CHECK(why[0] != 0);
    free(p);
    free(u);
    return r;
}

static void mode_is(const char *path, unsigned mode)
{
    struct stat st;
    CHECK(stat(path, &st) == 0);
    if ((st.st_mode & 07777) != mode) {
        fprintf(stderr, "%s: mode %o, expected %o\n", path, st.st_mode & 07777, mode);
        exit(1);
    }
}

int main(void)
{
    char dir[64], path[512], proof[300], pub[120], pub2[120];
    fin_timings t;
    fin_identity id, other;
    czk_error e = {0};
    uint64_t job;

    t_seed("test_fin_output");
    umask(022);
    snprintf(dir, sizeof(dir), "%s/czk-finout-XXXXXX", access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp");
    CHECK(mkdtemp(dir));
    rand_text(vk_a, sizeof(vk_a));
    rand_text(vk_b, sizeof(vk_b));
    rand_text(proof, sizeof(proof));
    rand_text(pub, sizeof(pub));
    rand_text(pub2, sizeof(pub2));
    job = t_range(1, 1u << 30);

    memset(&t, 0, sizeof(t));
    t.job = job;
    t.partition = 1;
    t.n_partitions = 2;
    t.circuit = "linear";
    id = (fin_identity){job, 1, "linear", vk_a, pub};
    CHECK(check(dir, &id, proof) == FIN_ABSENT);
    CHECK_RC(fin_output_write(dir, &t, &id, proof, pub, &e));
    CHECK(check(dir, &id, proof) == FIN_MATCH);
    snprintf(path, sizeof(path), "%s/%" PRIu64, dir, job);
    mode_is(path, 0750);
    snprintf(path, sizeof(path), "%s/%" PRIu64 "/1", dir, job);
    mode_is(path, 0750);
    snprintf(path, sizeof(path), "%s/%" PRIu64 "/1/proof.json", dir, job);
    mode_is(path, 0640);
    snprintf(path, sizeof(path), "%s/%" PRIu64 "/1/identity.json", dir, job);
    mode_is(path, 0640);

    /* every identity field that differs makes the files stale */
    other = id;
    other.job = job + 1; /* checked under the same directory: rename it there */
    {
        char from[512], to[512];
        snprintf(from, sizeof(from), "%s/%" PRIu64, dir, job);
        snprintf(to, sizeof(to), "%s/%" PRIu64, dir, job + 1);
        CHECK(rename(from, to) == 0);
        CHECK(check(dir, &other, proof) == FIN_STALE); /* a reused job id */
        CHECK(rename(to, from) == 0);
    }
    other = id;
    other.circuit = "range";
    CHECK(check(dir, &other, proof) == FIN_STALE);
    other = id;
    other.vk_sha256 = vk_b;
    CHECK(check(dir, &other, proof) == FIN_STALE);
    other = id;
    other.public_text = pub2;
    CHECK(check(dir, &other, proof) == FIN_STALE);
    CHECK(check(dir, &id, proof) == FIN_MATCH);

    /* public.json changed behind identity.json's back */
    {
        char up[512];
        FILE *fp;
        snprintf(up, sizeof(up), "%s/%" PRIu64 "/1/public.json", dir, job);
        fp = fopen(up, "w");
        CHECK(fp && fputs(pub2, fp) >= 0);
        fclose(fp);
        other = id;
        other.public_text = pub2;
        CHECK(check(dir, &other, proof) == FIN_STALE);
    }
    /* no identity.json: cannot be proven, stale */
    CHECK_RC(fin_output_write(dir, &t, &id, proof, pub, &e));
    CHECK(unlink(path) == 0);
    CHECK(check(dir, &id, proof) == FIN_STALE);

    /* move aside: partition and summary go to .stale; the partition can be written again */
    {
        char sp[512];
        FILE *fp;
        snprintf(sp, sizeof(sp), "%s/%" PRIu64 "/summary.json", dir, job);
        fp = fopen(sp, "w");
        CHECK(fp && fputs("{}", fp) >= 0);
        fclose(fp);
        CHECK_RC(fin_output_move_aside(dir, job, 1, &e));
        CHECK(access(sp, F_OK) != 0);
        CHECK(check(dir, &id, proof) == FIN_ABSENT);
        snprintf(sp, sizeof(sp), "%s/.stale", dir);
        mode_is(sp, 0750);
        {
            char cmd[700];
            snprintf(cmd, sizeof(cmd), "test $(ls %s | grep -c '^%" PRIu64 "\\.') -eq 2", sp, job);
            CHECK(system(cmd) == 0);
        }
        CHECK_RC(fin_output_write(dir, &t, &id, proof, pub, &e));
        CHECK(check(dir, &id, proof) == FIN_MATCH);
        snprintf(sp, sizeof(sp), "rm -rf %s", dir);
        CHECK(system(sp) == 0);
    }

    /* a full filesystem: retryable, nothing committed, then it fits */
    if (geteuid() == 0 && mkdtemp(strcpy(dir, "/tmp/czk-finfull-XXXXXX")) &&
        mount("czk-finfull", dir, "tmpfs", 0, "size=64k,mode=0750") == 0) {
        char filler[200], big[8192];
        int fd, r;
        snprintf(filler, sizeof(filler), "%s/filler", dir);
        fd = open(filler, O_WRONLY | O_CREAT, 0600);
        CHECK(fd >= 0);
        memset(big, 'x', sizeof(big));
        while (write(fd, big, sizeof(big)) > 0)
            ;
        close(fd);
        r = fin_output_write(dir, &t, &id, proof, pub, &e);
        CHECK(r < 0 && fin_output_retryable(r));
        CHECK(check(dir, &id, proof) == FIN_ABSENT);
        CHECK(unlink(filler) == 0);
        CHECK_RC(fin_output_write(dir, &t, &id, proof, pub, &e));
        CHECK(check(dir, &id, proof) == FIN_MATCH);
        CHECK(umount(dir) == 0);
        rmdir(dir);
    } else {
        fprintf(stderr, "test_fin_output: no tmpfs to fill (not root, or mount refused): full-disk part skipped\n");
    }
    fprintf(stderr, "test_fin_output: ok\n");
    return 0;
}
