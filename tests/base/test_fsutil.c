/*
 * test_fsutil.c — common/base/fsutil.c: which directories and files each
 * helper fsyncs.  The test defines fsync() itself, so the calls fsutil.c makes
 * (linked statically from czkbase) land here: each records the path of its fd
 * (/proc/self/fd) and then syncs for real.  Checked:
 *   - czk_mkdir_durable fsyncs the parent when it creates the directory, and
 *     also when the directory is already there (a crash between an earlier
 *     mkdir and its fsync must be repaired by the next call);
 *   - it refuses a file in the directory's place and a missing parent, naming
 *     the directory, and fsyncs nothing then;
 *   - czk_fsync_file / czk_fsync_dir / czk_fsync_parent sync exactly what they
 *     name; czk_fsync_file does not follow a symbolic link.
 * Directory names are random (seeded, printed, CZK_TEST_SEED replays).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "common/base/fsutil.h"

static char synced[16][PATH_MAX];
static int n_synced;
static int fail;

int fsync(int fd)
{
    char link[64];
    ssize_t n;

    snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
    if (n_synced < 16) {
        n = readlink(link, synced[n_synced], PATH_MAX - 1);
        synced[n_synced][n > 0 ? n : 0] = 0;
        n_synced++;
    }
    return (int)syscall(SYS_fsync, fd);
}

#define CHECK(cond, ...)                                                                                             \
    do {                                                                                                             \
        if (!(cond)) {                                                                                               \
            fprintf(stderr, "FAIL %s:%d: ", __FILE__, __LINE__);                                                     \
            fprintf(stderr, __VA_ARGS__);                                                                            \
            fprintf(stderr, "\n");                                                                                   \
            fail = 1;                                                                                                \
        }                                                                                                            \
    } while (0)

/* exactly the one path want was fsynced since the last reset */
static void expect_synced(const char *what, const char *want)
{
    CHECK(n_synced == 1 && !strcmp(synced[0], want), "%s: fsynced %d paths (first \"%s\"), want exactly \"%s\"", what,
          n_synced, n_synced ? synced[0] : "", want);
    n_synced = 0;
}

int main(void)
{
    const char *s = getenv("CZK_TEST_SEED");
    unsigned seed = s ? (unsigned)strtoul(s, NULL, 0) : (unsigned)time(NULL) ^ (unsigned)getpid();
    char base[] = "/tmp/czk-fsutil.XXXXXX", real[PATH_MAX], dir[PATH_MAX + 64], sub[PATH_MAX + 128],
         file[PATH_MAX + 64], lnk[PATH_MAX + 64];
    czk_error e;
    int r, fd;

    printf("seed %u (CZK_TEST_SEED=%u replays)\n", seed, seed);
    srand(seed);
    if (!mkdtemp(base) || !realpath(base, real)) {
        perror("mkdtemp");
        return 1;
    }
    snprintf(dir, sizeof(dir), "%s/d%08x", real, (unsigned)rand());
    snprintf(sub, sizeof(sub), "%s/s%08x", dir, (unsigned)rand());
    snprintf(file, sizeof(file), "%s/f%08x", real, (unsigned)rand());
    snprintf(lnk, sizeof(lnk), "%s/l%08x", real, (unsigned)rand());

    /* created: its parent is fsynced */
    n_synced = 0;
    memset(&e, 0xa5, sizeof(e));
    r = czk_mkdir_durable(dir, 0750, &e);
    CHECK(r == 0, "mkdir_durable(new) = %d", r);
    expect_synced("mkdir_durable of a new directory", real);

    /* already there: the parent is fsynced again (the repair after a crash) */
    r = czk_mkdir_durable(dir, 0750, &e);
    CHECK(r == 0, "mkdir_durable(existing) = %d", r);
    expect_synced("mkdir_durable of an existing directory", real);

    /* one level down: the parent is dir, not real */
    r = czk_mkdir_durable(sub, 0750, NULL);
    CHECK(r == 0, "mkdir_durable(sub) = %d", r);
    expect_synced("mkdir_durable of a subdirectory", dir);

    /* a missing parent: -ENOENT naming the directory, nothing synced */
    {
        char deep[PATH_MAX + 200];
        snprintf(deep, sizeof(deep), "%s/missing%u/x", real, (unsigned)rand());
        memset(&e, 0, sizeof(e));
        r = czk_mkdir_durable(deep, 0750, &e);
        CHECK(r == -ENOENT, "mkdir_durable(missing parent) = %d, want -ENOENT", r);
        CHECK(strstr(e.msg, deep) != NULL, "the error does not name the directory: %s", e.msg);
        CHECK(n_synced == 0, "a failed mkdir_durable fsynced %d paths", n_synced);
        n_synced = 0;
    }

    /* a file where the directory should be: refused, nothing synced */
    fd = open(file, O_WRONLY | O_CREAT | O_EXCL, 0600);
    CHECK(fd >= 0, "create %s: %s", file, strerror(errno));
    if (fd >= 0)
        close(fd);
    memset(&e, 0, sizeof(e));
    r = czk_mkdir_durable(file, 0750, &e);
    CHECK(r == -ENOTDIR, "mkdir_durable(over a file) = %d, want -ENOTDIR", r);
    CHECK(strstr(e.msg, file) != NULL, "the error does not name the path: %s", e.msg);
    CHECK(n_synced == 0, "mkdir_durable over a file fsynced %d paths", n_synced);
    n_synced = 0;

    /* the others sync what they name */
    r = czk_fsync_file(file, NULL);
    CHECK(r == 0, "fsync_file = %d", r);
    expect_synced("czk_fsync_file", file);
    r = czk_fsync_dir(sub, NULL);
    CHECK(r == 0, "fsync_dir = %d", r);
    expect_synced("czk_fsync_dir", sub);
    r = czk_fsync_parent(sub, NULL);
    CHECK(r == 0, "fsync_parent = %d", r);
    expect_synced("czk_fsync_parent", dir);

    /* a symbolic link is not followed by czk_fsync_file */
    CHECK(symlink(file, lnk) == 0, "symlink: %s", strerror(errno));
    r = czk_fsync_file(lnk, NULL);
    CHECK(r == -ELOOP, "fsync_file(symlink) = %d, want -ELOOP", r);
    CHECK(n_synced == 0, "fsync_file through a symlink fsynced %d paths", n_synced);
    n_synced = 0;

    unlink(lnk);
    unlink(file);
    rmdir(sub);
    rmdir(dir);
    rmdir(real);
    if (!fail)
        printf("ok\n");
    return fail;
}
