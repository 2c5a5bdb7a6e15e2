/*
 * journal.c — append-only record log with per-record crc32 (see journal.h).
 * Only gpud's main thread writes its journal; no other process opens it for
 * writing, so there is no locking.
 */
#include "common/base/fsutil.h"
#include "common/base/crc.h"
#include "common/base/clock.h"
#include "ipc/journal.h"

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>
#include <zlib.h>

#include "common/base/log.h"

struct czk_journal {
    int fd;
    char path[PATH_MAX];
    uint64_t end;      /* append offset */
    uint64_t next_seq;
    czk_journal_info info;
};

static uint32_t rec_crc(const czk_journal_rec_header *h, const void *payload)
{
    czk_journal_rec_header c = *h;
    uint32_t crc = czk_crc32_init();
    c.crc = 0;
    crc = czk_crc32(crc, &c, sizeof(c));
    return czk_crc32(crc, payload, h->len);
}

static uint32_t file_header_crc(const czk_journal_file_header *h)
{
    return czk_crc32(czk_crc32_init(), h, offsetof(czk_journal_file_header, crc));
}

static uint64_t pad8(uint64_t n) { return (n + 7) & ~(uint64_t)7; }

static int read_all(int fd, uint8_t **out, size_t *len, const char *path, czk_error *err)
{
    struct stat st;
    uint8_t *buf;
    size_t got = 0;

    if (fstat(fd, &st) < 0)
        return czk_errorf(err, -errno, "could not stat journal \"%s\": %s", path, strerror(errno));
    buf = malloc(st.st_size ? (size_t)st.st_size : 1);
    if (!buf)
        return czk_errorf(err, -ENOMEM, "no memory to read journal \"%s\" (%lld bytes)", path, (long long)st.st_size);
    while (got < (size_t)st.st_size) {
        ssize_t n = pread(fd, buf + got, (size_t)st.st_size - got, (off_t)got);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0) {
            int e = errno;
            free(buf);
            return czk_errorf(err, -e, "could not read journal \"%s\": %s", path, strerror(e));
        }
        if (n == 0)
            break;
        got += (size_t)n;
    }
    *out = buf;
    *len = got;
    return 0;
}

/* Walks records in buf; fills info; calls fn for every complete record. */
static int replay_buf(const uint8_t *buf, size_t len, const char *path, czk_journal_replay_fn fn, void *ctx,
                      czk_journal_info *info, czk_error *err)
{
    czk_journal_file_header fh;
    uint64_t pos, last_seq = 0;

    memset(info, 0, sizeof(*info));
    if (len < sizeof(fh))
        return czk_errorf(err, -EBADMSG, "journal \"%s\" is %zu bytes, shorter than its header", path, len);
    memcpy(&fh, buf, sizeof(fh));
    if (fh.magic != CZK_JOURNAL_MAGIC || fh.header_size != sizeof(fh) || fh.crc != file_header_crc(&fh))
        return czk_errorf(err, -EBADMSG, "\"%s\" is not a czk journal (bad magic, size or header crc)", path);
    if (fh.version != CZK_JOURNAL_VERSION)
        return czk_errorf(err, -EPROTO, "journal \"%s\" has layout version %u, this build reads %u", path, fh.version,
                          CZK_JOURNAL_VERSION);
    pos = sizeof(fh);
    while (pos < len) {
        czk_journal_rec_header h;
        czk_journal_rec rec;
        if (len - pos < sizeof(h))
            break;
        memcpy(&h, buf + pos, sizeof(h));
        if (h.magic != CZK_JOURNAL_REC_MAGIC || h.type == 0 || h.len > CZK_JOURNAL_MAX_PAYLOAD)
            break;
        if (len - pos - sizeof(h) < h.len)
            break;
        if (h.crc != rec_crc(&h, buf + pos + sizeof(h)) || h.seq <= last_seq)
            break;
        rec.type = h.type;
        rec.flags = h.flags;
        rec.seq = h.seq;
        rec.offset = pos;
        rec.data = buf + pos + sizeof(h);
        rec.len = h.len;
        if (fn) {
            int r = fn(&rec, ctx);
            if (r < 0)
                return czk_errorf(err, r, "journal \"%s\": replay stopped by caller at seq %llu", path,
                                  (unsigned long long)h.seq);
        }
        last_seq = h.seq;
        info->records++;
        /* the padding of the last record may be torn off: the record counts */
        pos += sizeof(h) + h.len;
        pos = pad8(pos) <= len ? pad8(pos) : len;
    }
    info->last_seq = last_seq;
    info->good_end = pos;
    info->torn_bytes = len - pos;
    return 0;
}

int czk_journal_replay_file(const char *path, czk_journal_replay_fn fn, void *ctx, czk_journal_info *info,
                            czk_error *err)
{
    uint8_t *buf;
    size_t len;
    int fd, r;

    fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return czk_errorf(err, -errno, "could not open journal \"%s\": %s", path, strerror(errno));
    r = read_all(fd, &buf, &len, path, err);
    close(fd);
    if (r < 0)
        return r;
    r = replay_buf(buf, len, path, fn, ctx, info, err);
    free(buf);
    return r;
}

static int write_full(int fd, const struct iovec *iov, int n, uint64_t off, const char *path, czk_error *err)
{
    struct iovec v[4];
    int i = 0;
    memcpy(v, iov, sizeof(*iov) * (size_t)n);
    while (i < n) {
        ssize_t w = pwritev(fd, v + i, n - i, (off_t)off);
        if (w < 0 && errno == EINTR)
            continue;
        if (w < 0)
            return czk_errorf(err, -errno, "could not write journal \"%s\": %s", path, strerror(errno));
        off += (uint64_t)w;
        while (i < n && (size_t)w >= v[i].iov_len)
            w -= (ssize_t)v[i++].iov_len;
        if (i < n) {
            v[i].iov_base = (uint8_t *)v[i].iov_base + w;
            v[i].iov_len -= (size_t)w;
        }
    }
    return 0;
}

static int write_file_header(int fd, uint64_t base_seq, const char *path, czk_error *err)
{
    czk_journal_file_header fh;
    struct iovec iov;

    memset(&fh, 0, sizeof(fh));
    fh.magic = CZK_JOURNAL_MAGIC;
    fh.version = CZK_JOURNAL_VERSION;
    fh.header_size = sizeof(fh);
    fh.created_ns = czk_real_ns();
    fh.base_seq = base_seq;
    fh.crc = file_header_crc(&fh);
    iov.iov_base = &fh;
    iov.iov_len = sizeof(fh);
    return write_full(fd, &iov, 1, 0, path, err);
}

int czk_journal_open(czk_journal **out, const char *path, czk_journal_replay_fn fn, void *ctx, czk_error *err)
{
    czk_journal *j;
    uint8_t *buf = NULL;
    size_t len = 0;
    int r;

    *out = NULL;
    if (strlen(path) >= PATH_MAX - 16)
        return czk_errorf(err, -ENAMETOOLONG, "journal path \"%s\" is too long", path);
    j = calloc(1, sizeof(*j));
    if (!j)
        return czk_errorf(err, -ENOMEM, "no memory for journal");
    snprintf(j->path, sizeof(j->path), "%s", path);
    j->fd = open(path, O_RDWR | O_CLOEXEC);
    if (j->fd < 0 && errno == ENOENT) {
        j->fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
        if (j->fd < 0) {
            r = czk_errorf(err, -errno, "could not create journal \"%s\": %s", path, strerror(errno));
            goto fail;
        }
        if ((r = write_file_header(j->fd, 1, path, err)) < 0)
            goto fail;
        if (fsync(j->fd) < 0) {
            r = czk_errorf(err, -errno, "could not fsync journal \"%s\": %s", path, strerror(errno));
            goto fail;
        }
        if ((r = czk_fsync_parent(path, err)) < 0)
            goto fail;
        czk_info("created journal \"%s\"", path);
    } else if (j->fd < 0) {
        r = czk_errorf(err, -errno, "could not open journal \"%s\": %s", path, strerror(errno));
        goto fail;
    }
    /* one writer: a second gpud on the same journal is refused, not interleaved */
    if (flock(j->fd, LOCK_EX | LOCK_NB) < 0) {
        r = czk_errorf(err, errno == EWOULDBLOCK ? -EBUSY : -errno, "journal \"%s\" is locked by another process: %s",
                       path, strerror(errno));
        goto fail;
    }
    if ((r = read_all(j->fd, &buf, &len, path, err)) < 0)
        goto fail;
    r = replay_buf(buf, len, path, fn, ctx, &j->info, err);
    free(buf);
    if (r < 0)
        goto fail;
    if (j->info.torn_bytes) {
        czk_warn("journal \"%s\": dropping a torn tail of %llu bytes after seq %llu (offset %llu)", path,
                 (unsigned long long)j->info.torn_bytes, (unsigned long long)j->info.last_seq,
                 (unsigned long long)j->info.good_end);
        if (ftruncate(j->fd, (off_t)j->info.good_end) < 0 || fdatasync(j->fd) < 0) {
            r = czk_errorf(err, -errno, "could not truncate the torn tail of journal \"%s\": %s", path,
                           strerror(errno));
            goto fail;
        }
    }
    j->end = j->info.good_end;
    /* the padding of the last record may have been cut: restore alignment */
    if (j->end != pad8(j->end)) {
        if (ftruncate(j->fd, (off_t)pad8(j->end)) < 0) {
            r = czk_errorf(err, -errno, "could not pad journal \"%s\": %s", path, strerror(errno));
            goto fail;
        }
        j->end = pad8(j->end);
    }
    j->next_seq = j->info.last_seq + 1;
    *out = j;
    return 0;
fail:
    if (j->fd >= 0)
        close(j->fd);
    free(j);
    return r;
}

int czk_journal_append(czk_journal *j, uint16_t type, const void *data, uint32_t len, unsigned flags,
                       uint64_t *seq_out, czk_error *err)
{
    static const uint8_t zeros[8];
    czk_journal_rec_header h;
    struct iovec iov[3];
    uint64_t total;
    int r;

    if (type == 0 || len > CZK_JOURNAL_MAX_PAYLOAD || (len && !data))
        return czk_errorf(err, -EINVAL, "journal record type %u with %u bytes is not valid", type, len);
    memset(&h, 0, sizeof(h));
    h.magic = CZK_JOURNAL_REC_MAGIC;
    h.type = type;
    h.len = len;
    h.seq = j->next_seq;
    h.flags = flags & CZK_JOURNAL_SYNC;
    h.crc = rec_crc(&h, data);
    total = sizeof(h) + len;
    iov[0].iov_base = &h;
    iov[0].iov_len = sizeof(h);
    iov[1].iov_base = (void *)data;
    iov[1].iov_len = len;
    iov[2].iov_base = (void *)zeros;
    iov[2].iov_len = pad8(total) - total;
    r = write_full(j->fd, iov, 3, j->end, j->path, err);
    if (r < 0) {
        /* leave no partial record behind for the next append to follow */
        if (ftruncate(j->fd, (off_t)j->end) < 0)
            czk_err("could not cut a failed append from journal \"%s\": %s", j->path, strerror(errno));
        return r;
    }
    if ((flags & CZK_JOURNAL_SYNC) && fdatasync(j->fd) < 0)
        return czk_errorf(err, -errno, "could not fdatasync journal \"%s\" at seq %llu: %s", j->path,
                          (unsigned long long)h.seq, strerror(errno));
    j->end += pad8(total);
    j->next_seq++;
    if (seq_out)
        *seq_out = h.seq;
    return 0;
}

int czk_journal_sync(czk_journal *j, czk_error *err)
{
    if (fdatasync(j->fd) < 0)
        return czk_errorf(err, -errno, "could not fdatasync journal \"%s\": %s", j->path, strerror(errno));
    return 0;
}

typedef struct compact_ctx {
    czk_journal_keep_fn keep;
    void *ctx;
    int fd;
    uint64_t off;
    uint64_t kept, dropped;
    const char *tmp;
    czk_error *err;
} compact_ctx;

static int compact_one(const czk_journal_rec *rec, void *arg)
{
    static const uint8_t zeros[8];
    compact_ctx *c = arg;
    czk_journal_rec_header h;
    struct iovec iov[3];
    uint64_t total;
    int k = c->keep(rec, c->ctx);

    if (k < 0)
        return k;
    if (k == 0) {
        c->dropped++;
        return 0;
    }
    memset(&h, 0, sizeof(h));
    h.magic = CZK_JOURNAL_REC_MAGIC;
    h.type = rec->type;
    h.len = rec->len;
    h.seq = rec->seq;
    h.flags = rec->flags;
    h.crc = rec_crc(&h, rec->data);
    total = sizeof(h) + rec->len;
    iov[0].iov_base = &h;
    iov[0].iov_len = sizeof(h);
    iov[1].iov_base = (void *)rec->data;
    iov[1].iov_len = rec->len;
    iov[2].iov_base = (void *)zeros;
    iov[2].iov_len = pad8(total) - total;
    if (write_full(c->fd, iov, 3, c->off, c->tmp, c->err) < 0)
        return c->err ? c->err->code : -EIO;
    c->off += pad8(total);
    c->kept++;
    return 0;
}

int czk_journal_compact(czk_journal *j, czk_journal_keep_fn keep, void *ctx, czk_error *err)
{
    char tmp[PATH_MAX + 16];
    czk_journal_info info;
    compact_ctx c;
    uint8_t *buf;
    size_t len;
    int fd, r;

    snprintf(tmp, sizeof(tmp), "%s.compact", j->path);
    fd = open(tmp, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd < 0)
        return czk_errorf(err, -errno, "could not create \"%s\": %s", tmp, strerror(errno));
    /* locked before it takes the journal's name */
    if (flock(fd, LOCK_EX | LOCK_NB) < 0) {
        r = czk_errorf(err, -errno, "could not lock \"%s\": %s", tmp, strerror(errno));
        goto fail;
    }
    if ((r = write_file_header(fd, j->next_seq, tmp, err)) < 0)
        goto fail;
    if ((r = read_all(j->fd, &buf, &len, j->path, err)) < 0)
        goto fail;
    memset(&c, 0, sizeof(c));
    c.keep = keep;
    c.ctx = ctx;
    c.fd = fd;
    c.off = sizeof(czk_journal_file_header);
    c.tmp = tmp;
    c.err = err;
    r = replay_buf(buf, len, j->path, compact_one, &c, &info, err);
    free(buf);
    if (r < 0)
        goto fail;
    if (fsync(fd) < 0) {
        r = czk_errorf(err, -errno, "could not fsync \"%s\": %s", tmp, strerror(errno));
        goto fail;
    }
    if (rename(tmp, j->path) < 0) {
        r = czk_errorf(err, -errno, "could not rename \"%s\" over \"%s\": %s", tmp, j->path, strerror(errno));
        goto fail;
    }
    if ((r = czk_fsync_parent(j->path, err)) < 0) {
        /* the rename happened; continue on the new file */
        close(j->fd);
        j->fd = fd;
        j->end = c.off;
        return r;
    }
    close(j->fd);
    j->fd = fd;
    j->end = c.off;
    czk_info("compacted journal \"%s\": kept %llu records, dropped %llu", j->path, (unsigned long long)c.kept,
             (unsigned long long)c.dropped);
    return 0;
fail:
    close(fd);
    unlink(tmp);
    return r;
}

const czk_journal_info *czk_journal_get_info(const czk_journal *j) { return &j->info; }

uint64_t czk_journal_next_seq(const czk_journal *j) { return j->next_seq; }

void czk_journal_close(czk_journal *j)
{
    if (!j)
        return;
    close(j->fd);
    free(j);
}
