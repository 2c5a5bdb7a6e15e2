/*
 * fsutil.c — directory fsync helpers (see fsutil.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/base/fsutil.h"

/* fsync of what path names, opened with flags; what: its kind in messages */
static int fsync_path(const char *path, int flags, const char *what, czk_error *e)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC | flags), r = 0;
    if (fd < 0)
        return czk_errorf(e, -errno, "could not open %s\"%s\": %s", what, path, strerror(errno));
    if (fsync(fd) < 0)
        r = czk_errorf(e, -errno, "could not fsync %s\"%s\": %s", what, path, strerror(errno));
    close(fd);
    return r;
}

int czk_fsync_dir(const char *dir, czk_error *e) { return fsync_path(dir, O_DIRECTORY, "directory ", e); }

int czk_fsync_file(const char *path, czk_error *e) { return fsync_path(path, O_NOFOLLOW, "", e); }

int czk_fsync_parent(const char *path, czk_error *e)
{
    char dir[PATH_MAX];
    const char *slash = strrchr(path, '/');

    if (!slash)
        return czk_fsync_dir(".", e);
    if (slash == path)
        return czk_fsync_dir("/", e);
    if ((size_t)(slash - path) >= sizeof(dir))
        return czk_errorf(e, -ENAMETOOLONG, "path too long: \"%.64s...\"", path);
    memcpy(dir, path, (size_t)(slash - path));
    dir[slash - path] = 0;
    return czk_fsync_dir(dir, e);
}

int czk_mkdir_durable(const char *dir, unsigned mode, czk_error *e)
{
    struct stat st;

    if (mkdir(dir, (mode_t)mode) == 0)
        return czk_fsync_parent(dir, e);
    if (errno != EEXIST)
        return czk_errorf(e, -errno, "could not create directory \"%s\": %s", dir, strerror(errno));
    /* there already: perhaps made before a crash that came before its fsync */
    if (stat(dir, &st) < 0)
        return czk_errorf(e, -errno, "could not stat \"%s\": %s", dir, strerror(errno));
    if (!S_ISDIR(st.st_mode))
        return czk_errorf(e, -ENOTDIR, "could not create directory \"%s\": a file of another type is there", dir);
    return czk_fsync_parent(dir, e);
}

int czk_write_all(int fd, const void *buf, size_t n)
{
    const char *p = buf;
    while (n > 0) {
        ssize_t k = write(fd, p, n);
        if (k < 0 && errno == EINTR)
            continue;
        if (k < 0)
            return -errno;
        if (k == 0)
            return -EIO;
        p += k;
        n -= (size_t)k;
    }
    return 0;
}
