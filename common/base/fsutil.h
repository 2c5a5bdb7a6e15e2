/*
 * fsutil.h — durability helpers written once: making a directory entry
 * (a new file, a rename, a new directory) survive a crash needs an fsync of
 * the directory that holds it.
 *
 * All return 0 or -errno; with a non-NULL czk_error they also fill it with
 * a message that names the directory.
 */
#ifndef CZK_BASE_FSUTIL_H
#define CZK_BASE_FSUTIL_H

#include <stddef.h>

#include "common/base/error.h"

/* fsync the directory dir itself */
int czk_fsync_dir(const char *dir, czk_error *e);

/* fsync the directory that holds path (".": a path without a slash) */
int czk_fsync_parent(const char *path, czk_error *e);

/* fsync the file at path (opened read-only, not following a symbolic link) */
int czk_fsync_file(const char *path, czk_error *e);

/*
 * mkdir(dir, mode) and fsync its parent.  An existing directory is success,
 * and its parent is fsynced too: a crash between an earlier mkdir and its
 * fsync leaves a directory that is there now but may not survive a power
 * loss, and only this call can tell.  So every call costs one fsync of the
 * parent; a caller on a hot path remembers which directories it already
 * made durable instead of calling again.
 */
int czk_mkdir_durable(const char *dir, unsigned mode, czk_error *e);

/* writes all n bytes of buf to fd, retrying on EINTR and after a short
 * write (whose cause the next write reports, e.g. ENOSPC); 0 or -errno */
int czk_write_all(int fd, const void *buf, size_t n);

#endif
