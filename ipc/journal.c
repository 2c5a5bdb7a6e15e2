/*
 * journal.c — append-only record log with per-record crc32, the rules that
 * tell a torn tail from corruption, the check and salvage tools built on the
 * same scanner, and the job-id high-water mark (see journal.h).
 * Only gpud's main thread writes its journal and its id mark; no other
 * process opens them for writing (flock on the journal), so there is no
 * locking beyond that.
 */
#include "common/base/fsutil.h"
#include "common/base/crc.h"
#include "common/base/clock.h"
#include "ipc/journal.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#include "common/base/log.h"

#define HDR sizeof(czk_journal_file_header)
#define RHDR sizeof(czk_journal_rec_header)

struct czk_journal {
    int fd;
    int failed; /* a failed append could not be cut off: refuse appends */
    char path[PATH_MAX];
    uint64_t end;      /* append offset */
    uint64_t next_seq;
    czk_journal_mark durable; /* the last record known durable and the offset just past it */
    uint64_t cuts;            /* cut_back calls that succeeded (czk_journal_mark.cuts) */
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

/* reads len bytes at off, or up to the end of the file: the bytes read, or -errno */
static ssize_t pread_upto(int fd, uint8_t *buf, size_t len, uint64_t off)
{
    size_t got = 0;

    while (got < len) {
        ssize_t n = pread(fd, buf + got, len - got, (off_t)(off + got));
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            return -errno;
        if (n == 0)
            break;
        got += (size_t)n;
    }
    return (ssize_t)got;
}

static int read_all(int fd, uint8_t **out, size_t *len, const char *path, czk_error *err)
{
    struct stat st;
    uint8_t *buf;
    ssize_t got;

    if (fstat(fd, &st) < 0)
        return czk_errorf(err, -errno, "could not stat journal \"%s\": %s", path, strerror(errno));
    buf = malloc(st.st_size ? (size_t)st.st_size : 1);
    if (!buf)
        return czk_errorf(err, -ENOMEM, "no memory to read journal \"%s\" (%lld bytes)", path, (long long)st.st_size);
    if ((got = pread_upto(fd, buf, (size_t)st.st_size, 0)) < 0) {
        free(buf);
        return czk_errorf(err, (int)got, "could not read journal \"%s\": %s", path, strerror((int)-got));
    }
    *out = buf;
    *len = (size_t)got;
    return 0;
}

static int read_path(const char *path, uint8_t **out, size_t *len, czk_error *err)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC), r;
    if (fd < 0)
        return czk_errorf(err, -errno, "could not open journal \"%s\": %s", path, strerror(errno));
    r = read_all(fd, out, len, path, err);
    close(fd);
    return r;
}

/* ------------------------------------------------------------- scanner --- */

enum { REC_GOOD, REC_BAD, REC_BAD_VALID };

/* header whole, right magic, type != 0, len plausible */
static int header_plausible(const uint8_t *buf, size_t len, uint64_t pos, czk_journal_rec_header *h)
{
    if (len - pos < RHDR)
        return 0;
    memcpy(h, buf + pos, RHDR);
    return h->magic == CZK_JOURNAL_REC_MAGIC && h->type != 0 && h->len <= CZK_JOURNAL_MAX_PAYLOAD;
}

static int all_zero(const uint8_t *p, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (p[i])
            return 0;
    return 1;
}

/*
 * Classifies the record at pos: REC_GOOD (journal.h's definition), REC_BAD,
 * or REC_BAD_VALID: whole and crc-valid but out of sequence or with non-zero
 * padding, which no torn write leaves (always corruption).
 */
static int rec_check(const uint8_t *buf, size_t len, uint64_t pos, uint64_t last_seq, czk_journal_rec_header *h,
                     const char **why)
{
    uint64_t pend, pad_end;

    if (len - pos < RHDR) {
        *why = "record header cut short";
        return REC_BAD;
    }
    if (!header_plausible(buf, len, pos, h)) {
        *why = h->magic != CZK_JOURNAL_REC_MAGIC ? "bad record magic"
               : h->type == 0                   ? "record type 0"
                                                : "record length out of range";
        return REC_BAD;
    }
    if (len - pos - RHDR < h->len) {
        *why = "payload cut short";
        return REC_BAD;
    }
    if (h->crc != rec_crc(h, buf + pos + RHDR)) {
        *why = "crc mismatch";
        return REC_BAD;
    }
    if (h->seq <= last_seq) {
        *why = "seq not above the previous record's";
        return REC_BAD_VALID;
    }
    pend = pos + RHDR + h->len;
    pad_end = pad8(pend) < len ? pad8(pend) : len;
    if (!all_zero(buf + pend, (size_t)(pad_end - pend))) {
        *why = "non-zero padding";
        return REC_BAD_VALID;
    }
    return REC_GOOD;
}

enum { HDR_OK, HDR_TORN_CREATE, HDR_BAD, HDR_VERSION };

static int header_state(const uint8_t *buf, size_t len, czk_journal_file_header *fh)
{
    czk_journal_file_header want;

    memset(fh, 0, sizeof(*fh));
    memset(&want, 0, sizeof(want));
    want.magic = CZK_JOURNAL_MAGIC;
    want.version = CZK_JOURNAL_VERSION;
    want.header_size = HDR;
    if (len < HDR) {
        /* creation writes the header in one call: what is there is a prefix of it, or zeros */
        size_t n = len < 16 ? len : 16;
        return all_zero(buf, len) || !memcmp(buf, &want, n) ? HDR_TORN_CREATE : HDR_BAD;
    }
    memcpy(fh, buf, HDR);
    if (fh->magic == CZK_JOURNAL_MAGIC && fh->header_size == HDR && fh->crc == file_header_crc(fh))
        return fh->version == CZK_JOURNAL_VERSION ? HDR_OK : HDR_VERSION;
    return len == HDR && all_zero(buf, len) ? HDR_TORN_CREATE : HDR_BAD;
}

typedef int (*good_fn)(const czk_journal_rec *rec, void *ctx);

/* the highest seq known durable when the record was written (journal.h, "lag") */
static uint64_t rec_durable_then(const czk_journal_rec_header *h)
{
    uint64_t lag = h->flags >> CZK_JOURNAL_LAG_SHIFT;
    return h->seq - (lag ? lag : 1);
}

/*
 * 1 when every record from q to the end that is whole and crc-valid is in
 * sequence after `last` and was written while no record after `last` was
 * known durable: damage just after `last` is then in records no completed
 * sync covered (a torn group), not in records a promise was made on.
 */
static int unsynced_after(const uint8_t *buf, size_t len, uint64_t q, uint64_t last)
{
    uint64_t prev = last;
    while (q < len) {
        czk_journal_rec_header h;
        const char *why;
        int k = rec_check(buf, len, q, prev, &h, &why);
        if (k == REC_BAD_VALID)
            return 0;
        if (k != REC_GOOD) {
            q += 8;
            continue;
        }
        if (rec_durable_then(&h) > last)
            return 0;
        prev = h.seq;
        q = pad8(q + RHDR + h.len);
    }
    return 1;
}

typedef struct scan_res {
    czk_journal_file_header fh;
    int hdr;               /* HDR_* */
    czk_journal_info info; /* the good prefix, before the first problem */
    uint64_t refused;      /* regions open refuses */
    uint64_t kept;         /* good records anywhere (salvage) */
    uint64_t last_kept;    /* seq of the last good record anywhere */
    czk_journal_problem first; /* the first problem (kind 0: none) */
} scan_res;

/*
 * Walks buf.  Every good record goes to good (prefix_only: only those before
 * the first problem, and the walk stops at the first refused problem);
 * every damaged region goes to pfn.  A good callback's negative return
 * stops the scan with that value.
 */
static int scan(const uint8_t *buf, size_t len, int prefix_only, good_fn good, void *gctx,
                czk_journal_problem_fn pfn, void *pctx, scan_res *res)
{
    uint64_t pos = HDR, last = 0;
    int clean = 1;

    memset(res, 0, sizeof(*res));
    res->hdr = header_state(buf, len, &res->fh);
    if (res->hdr != HDR_OK) {
        czk_journal_problem p;
        memset(&p, 0, sizeof(p));
        p.kind = res->hdr == HDR_TORN_CREATE ? CZK_JOURNAL_TORN_CREATE : CZK_JOURNAL_BAD_HEADER;
        p.length = len < HDR ? len : HDR;
        snprintf(p.what, sizeof(p.what), "%s",
                 res->hdr == HDR_TORN_CREATE ? "file header never completely written (torn creation)"
                 : res->hdr == HDR_VERSION   ? "unsupported journal layout version"
                                             : "bad file header (magic, size or crc)");
        res->first = p;
        if (p.kind != CZK_JOURNAL_TORN_CREATE)
            res->refused++;
        if (pfn)
            pfn(&p, pctx);
        if (prefix_only || res->hdr == HDR_TORN_CREATE || len < HDR)
            return 0;
        clean = 0;
    }
    while (pos < len) {
        czk_journal_rec_header h;
        const char *why = NULL;
        int k = rec_check(buf, len, pos, last, &h, &why);
        czk_journal_problem p;
        uint64_t q;
        int found = 0;

        if (k == REC_GOOD) {
            czk_journal_rec rec = {h.type, h.flags, h.seq, pos, buf + pos + RHDR, h.len};
            if (good && (clean || !prefix_only)) {
                int r = good(&rec, gctx);
                if (r < 0)
                    return r;
            }
            last = h.seq;
            pos = pad8(pos + RHDR + h.len) <= len ? pad8(pos + RHDR + h.len) : len;
            res->kept++;
            res->last_kept = h.seq;
            if (clean) {
                res->info.records++;
                res->info.last_seq = h.seq;
                res->info.good_end = pos;
            }
            continue;
        }
        memset(&p, 0, sizeof(p));
        p.offset = pos;
        p.after_seq = last;
        if (k == REC_BAD_VALID || header_plausible(buf, len, pos, &h))
            p.seq = h.seq;
        snprintf(p.what, sizeof(p.what), "%s", why);
        for (q = pos + 8; q < len; q += 8) {
            czk_journal_rec_header h2;
            const char *w2;
            if (rec_check(buf, len, q, last, &h2, &w2) == REC_GOOD) {
                found = 1;
                break;
            }
        }
        if (q > len)
            q = len;
        p.length = q - pos;
        if (found && k != REC_BAD_VALID && unsynced_after(buf, len, pos + 8, last)) {
            /* a crash while a group of records awaited its sync: the pages
             * may have reached the disk in any order */
            p.kind = CZK_JOURNAL_TORN_TAIL;
            p.length = len - pos;
            q = len;
            snprintf(p.what, sizeof(p.what), "%s, in records no completed sync covered", why);
        } else if (found || k == REC_BAD_VALID) {
            p.kind = CZK_JOURNAL_CORRUPT;
            if (found && k != REC_BAD_VALID)
                snprintf(p.what, sizeof(p.what), "%s, and good records follow", why);
        } else if (len - pos > pad8(RHDR + CZK_JOURNAL_MAX_PAYLOAD)) {
            p.kind = CZK_JOURNAL_CORRUPT;
            snprintf(p.what, sizeof(p.what), "%s, %" PRIu64 " bytes to the end: longer than any record", why,
                     (uint64_t)(len - pos));
        } else if (header_plausible(buf, len, pos, &h) && pad8(pos + RHDR + h.len) < len &&
                   !all_zero(buf + pad8(pos + RHDR + h.len), (size_t)(len - pad8(pos + RHDR + h.len)))) {
            p.kind = CZK_JOURNAL_CORRUPT;
            snprintf(p.what, sizeof(p.what), "%s, and data follows the record's end", why);
        } else {
            p.kind = CZK_JOURNAL_TORN_TAIL;
        }
        if (clean)
            res->first = p;
        if (clean && p.kind == CZK_JOURNAL_TORN_TAIL)
            res->info.torn_bytes = len - pos;
        clean = 0;
        if (p.kind == CZK_JOURNAL_CORRUPT)
            res->refused++;
        if (pfn)
            pfn(&p, pctx);
        if (prefix_only && p.kind == CZK_JOURNAL_CORRUPT)
            break;
        pos = q;
    }
    if (clean)
        res->info.good_end = pos > HDR ? pos : HDR;
    else if (!res->info.good_end)
        res->info.good_end = HDR;
    res->info.high_seq = res->info.last_seq;
    if (res->hdr == HDR_OK && res->fh.base_seq > 0 && res->fh.base_seq - 1 > res->info.high_seq)
        res->info.high_seq = res->fh.base_seq - 1;
    return 0;
}

/* the error open and replay_file return for a file they refuse */
static int refuse(const char *path, const scan_res *s, czk_error *err)
{
    const czk_journal_problem *p = &s->first;
    if (s->hdr == HDR_VERSION)
        return czk_errorf(err, -EPROTO, "journal \"%s\" has layout version %u, this build reads %u", path,
                          s->fh.version, CZK_JOURNAL_VERSION);
    if (p->kind == CZK_JOURNAL_BAD_HEADER)
        return czk_errorf(err, -EBADMSG,
                          "\"%s\" is not a czk journal (%s); inspect it with \"czk journal check %s\"", path,
                          p->what, path);
    char claims[48] = "";
    if (p->seq)
        snprintf(claims, sizeof(claims), ", claims seq %" PRIu64, p->seq);
    return czk_errorf(err, -EBADMSG,
                      "journal \"%s\" is corrupt at offset %" PRIu64 " (record after seq %" PRIu64 "%s): %s; %" PRIu64
                      " damaged region(s) in all; refusing to guess: list them with \"czk journal check %s\", keep "
                      "every provable record with \"czk journal salvage %s NEW\" and move NEW over it",
                      path, p->offset, p->after_seq, claims, p->what, s->refused, path, path);
}

/* ------------------------------------------------------------- reading --- */

typedef struct cb_ctx {
    czk_journal_replay_fn fn;
    void *ctx;
    const char *path;
    czk_error *err;
} cb_ctx;

static int replay_good(const czk_journal_rec *rec, void *arg)
{
    cb_ctx *c = arg;
    int r = c->fn(rec, c->ctx);
    if (r < 0)
        return czk_errorf(c->err, r, "journal \"%s\": replay stopped by caller at seq %" PRIu64, c->path, rec->seq);
    return 0;
}

/* validates the whole file first, then replays its good prefix */
static int validate_and_replay(const uint8_t *buf, size_t len, const char *path, uint64_t min_seq,
                               czk_journal_replay_fn fn, void *ctx, scan_res *s, czk_error *err)
{
    cb_ctx c = {fn, ctx, path, err};
    int r;

    if ((r = scan(buf, len, 1, NULL, NULL, NULL, NULL, s)) < 0)
        return r;
    if (s->hdr == HDR_TORN_CREATE)
        return 0;
    if (s->refused)
        return refuse(path, s, err);
    if (s->info.high_seq < min_seq)
        return czk_errorf(err, -ESTALE,
                          "journal \"%s\" ends at seq %" PRIu64 " but the id mark records that it reached seq %" PRIu64
                          ": records are missing (truncated, or replaced by an older copy); restore it, or check "
                          "it with \"czk journal check %s\"",
                          path, s->info.high_seq, min_seq, path);
    if (fn) {
        scan_res again;
        /* replay exactly the prefix validated above */
        if ((r = scan(buf, (size_t)s->info.good_end, 1, replay_good, &c, NULL, NULL, &again)) < 0)
            return r;
    }
    return 0;
}

int czk_journal_replay_file(const char *path, czk_journal_replay_fn fn, void *ctx, czk_journal_info *info,
                            czk_error *err)
{
    scan_res s;
    uint8_t *buf;
    size_t len;
    int r;

    if ((r = read_path(path, &buf, &len, err)) < 0)
        return r;
    r = validate_and_replay(buf, len, path, 0, fn, ctx, &s, err);
    free(buf);
    if (r == 0 && s.hdr == HDR_TORN_CREATE) {
        memset(&s.info, 0, sizeof(s.info));
        s.info.torn_bytes = len;
    }
    if (info)
        *info = s.info;
    return r;
}

int czk_journal_check(const char *path, czk_journal_problem_fn fn, void *ctx, czk_journal_info *info,
                      czk_error *err)
{
    scan_res s;
    uint8_t *buf;
    size_t len;
    int r;

    if ((r = read_path(path, &buf, &len, err)) < 0)
        return r;
    r = scan(buf, len, 0, NULL, NULL, fn, ctx, &s);
    free(buf);
    if (info)
        *info = s.info;
    return r < 0 ? r : (int)(s.refused > INT32_MAX ? INT32_MAX : s.refused);
}

/* ------------------------------------------------------------- writing --- */

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

static int write_rec(int fd, uint64_t off, const czk_journal_rec_header *h, const void *data, const char *path,
                     czk_error *err)
{
    static const uint8_t zeros[8];
    struct iovec iov[3];
    uint64_t total = RHDR + h->len;

    iov[0].iov_base = (void *)h;
    iov[0].iov_len = RHDR;
    iov[1].iov_base = (void *)data;
    iov[1].iov_len = h->len;
    iov[2].iov_base = (void *)zeros;
    iov[2].iov_len = pad8(total) - total;
    return write_full(fd, iov, 3, off, path, err);
}

/* (re)initialises fd as an empty journal whose seqs continue after base_seq - 1 */
static int init_file(int fd, uint64_t base_seq, const char *path, czk_error *err)
{
    int r;
    if (ftruncate(fd, 0) < 0)
        return czk_errorf(err, -errno, "could not truncate journal \"%s\": %s", path, strerror(errno));
    if ((r = write_file_header(fd, base_seq, path, err)) < 0)
        return r;
    if (fsync(fd) < 0)
        return czk_errorf(err, -errno, "could not fsync journal \"%s\": %s", path, strerror(errno));
    return czk_fsync_parent(path, err);
}

int czk_journal_open_ex(czk_journal **out, const char *path, unsigned flags, uint64_t min_seq,
                        czk_journal_replay_fn fn, void *ctx, czk_error *err)
{
    czk_journal *j;
    uint8_t *buf = NULL;
    size_t len = 0;
    scan_res s;
    int r;

    *out = NULL;
    if (strlen(path) >= PATH_MAX - 16)
        return czk_errorf(err, -ENAMETOOLONG, "journal path \"%s\" is too long", path);
    j = calloc(1, sizeof(*j));
    if (!j)
        return czk_errorf(err, -ENOMEM, "no memory for journal");
    snprintf(j->path, sizeof(j->path), "%s", path);
    j->fd = open(path, O_RDWR | O_CLOEXEC);
    if (j->fd < 0 && errno == ENOENT && (flags & CZK_JOURNAL_CREATE)) {
        j->fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
        if (j->fd < 0) {
            r = czk_errorf(err, -errno, "could not create journal \"%s\": %s", path, strerror(errno));
            goto fail;
        }
        if ((r = init_file(j->fd, 1, path, err)) < 0)
            goto fail;
        czk_info("created journal \"%s\"", path);
    } else if (j->fd < 0 && errno == ENOENT) {
        r = czk_errorf(err, -ENOENT,
                       "journal \"%s\" is missing, but the id mark records that jobs were accepted: refusing to "
                       "start with an empty one (restore the journal, or see docs/daemons.md on recovery)",
                       path);
        goto fail;
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
    r = validate_and_replay(buf, len, path, min_seq, fn, ctx, &s, err);
    free(buf);
    if (r < 0)
        goto fail;
    if (s.hdr == HDR_TORN_CREATE) {
        if (!(flags & CZK_JOURNAL_CREATE) || min_seq > 0) {
            r = czk_errorf(err, -EBADMSG,
                           "journal \"%s\" is %zu bytes, shorter than a whole header, but the id mark records that "
                           "jobs were accepted: refusing to start with an empty one (inspect it with \"czk journal "
                           "check %s\")",
                           path, len, path);
            goto fail;
        }
        czk_warn("journal \"%s\": %zu bytes of a journal whose creation was interrupted; starting it again", path,
                 len);
        if ((r = init_file(j->fd, 1, path, err)) < 0)
            goto fail;
        memset(&s.info, 0, sizeof(s.info));
        s.info.good_end = HDR;
    }
    j->info = s.info;
    if (j->info.torn_bytes) {
        czk_warn("journal \"%s\": dropping a torn tail of %" PRIu64 " bytes after seq %" PRIu64 " (offset %" PRIu64
                 ")",
                 path, j->info.torn_bytes, j->info.last_seq, j->info.good_end);
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
    j->next_seq = j->info.high_seq + 1;
    /* records a killed writer left in the page cache are acted on by replay:
     * make them durable before anything depends on them */
    if (fdatasync(j->fd) < 0) {
        r = czk_errorf(err, -errno, "could not fdatasync journal \"%s\": %s", path, strerror(errno));
        goto fail;
    }
    j->durable = (czk_journal_mark){j->info.high_seq, j->end, 0};
    *out = j;
    return 0;
fail:
    if (j->fd >= 0)
        close(j->fd);
    free(j);
    return r;
}

int czk_journal_open(czk_journal **out, const char *path, czk_journal_replay_fn fn, void *ctx, czk_error *err)
{
    return czk_journal_open_ex(out, path, CZK_JOURNAL_CREATE, 0, fn, ctx, err);
}

/* cuts the file back to `to` (a record that could not be written, or
 * everything not yet durable); poisons the handle when that fails too */
static void cut_back(czk_journal *j, czk_journal_mark to)
{
    if (ftruncate(j->fd, (off_t)to.end) == 0 && fdatasync(j->fd) == 0) {
        j->end = to.end;
        j->next_seq = to.seq + 1;
        j->cuts++;
        return;
    }
    j->failed = 1;
    czk_err("journal \"%s\": could not cut it back to offset %" PRIu64 " after a failed write or sync (%s): "
            "refusing further appends; restart gpud (open re-validates the journal)",
            j->path, to.end, strerror(errno));
}

static int poisoned(const czk_journal *j, czk_error *err)
{
    return czk_errorf(err, -EIO, "journal \"%s\" is in an unknown state after a failed append; restart gpud",
                      j->path);
}

/* a sync of everything up to `upto` failed with rc (-errno): nothing after
 * the durable mark can be trusted to be on the disk, so it goes */
static int sync_failed(czk_journal *j, czk_journal_mark upto, int rc, czk_error *err)
{
    if (upto.seq <= j->durable.seq && upto.cuts == j->cuts) {
        /* a sync that started later succeeded first: its success says
         * nothing about the pages this one lost */
        j->failed = 1;
        czk_err("journal \"%s\": a sync up to seq %" PRIu64 " failed (%s) after a later one succeeded: refusing "
                "further appends; restart gpud (open re-validates the journal)",
                j->path, upto.seq, strerror(-rc));
        return poisoned(j, err);
    }
    cut_back(j, j->durable);
    return czk_errorf(err, rc, "could not fdatasync journal \"%s\" up to seq %" PRIu64 ": %s; records after seq %" PRIu64
                      " dropped", j->path, upto.seq, strerror(-rc), j->durable.seq);
}

int czk_journal_append(czk_journal *j, uint16_t type, const void *data, uint32_t len, unsigned flags,
                       uint64_t *seq_out, czk_error *err)
{
    czk_journal_rec_header h;
    czk_journal_mark before = czk_journal_tail(j);
    uint64_t lag;
    int r;

    if (j->failed)
        return poisoned(j, err);
    if (type == 0 || len > CZK_JOURNAL_MAX_PAYLOAD || (len && !data))
        return czk_errorf(err, -EINVAL, "journal record type %u with %u bytes is not valid", type, len);
    lag = j->next_seq - j->durable.seq;
    if (lag > CZK_JOURNAL_LAG_MAX)
        lag = CZK_JOURNAL_LAG_MAX; /* claims more was durable: open only gets stricter */
    memset(&h, 0, sizeof(h));
    h.magic = CZK_JOURNAL_REC_MAGIC;
    h.type = type;
    h.len = len;
    h.seq = j->next_seq;
    h.flags = (flags & CZK_JOURNAL_SYNC) | (uint32_t)(lag << CZK_JOURNAL_LAG_SHIFT);
    h.crc = rec_crc(&h, data);
    if ((r = write_rec(j->fd, j->end, &h, data, j->path, err)) < 0) {
        /* leave no part of the record behind: the caller treats it as not written */
        cut_back(j, before);
        return r;
    }
    j->end += pad8(RHDR + len);
    j->next_seq++;
    if (flags & CZK_JOURNAL_SYNC) {
        czk_journal_mark upto = czk_journal_tail(j);
        if (fdatasync(j->fd) < 0)
            return sync_failed(j, upto, -errno, err);
        j->durable = upto;
    }
    if (seq_out)
        *seq_out = h.seq;
    return 0;
}

int czk_journal_sync(czk_journal *j, czk_error *err)
{
    czk_journal_mark upto = czk_journal_tail(j);

    if (j->failed)
        return poisoned(j, err);
    if (fdatasync(j->fd) < 0)
        return sync_failed(j, upto, -errno, err);
    if (upto.seq > j->durable.seq)
        j->durable = upto;
    return 0;
}

czk_journal_mark czk_journal_tail(const czk_journal *j)
{
    return (czk_journal_mark){j->next_seq - 1, j->end, j->cuts};
}

uint64_t czk_journal_durable_seq(const czk_journal *j) { return j->durable.seq; }

int czk_journal_sync_fd(const czk_journal *j) { return j->fd; }

int czk_journal_synced(czk_journal *j, czk_journal_mark upto, int rc, czk_error *err)
{
    if (j->failed)
        return poisoned(j, err);
    if (rc < 0)
        return sync_failed(j, upto, rc, err);
    if (upto.seq > j->durable.seq && upto.cuts == j->cuts)
        j->durable = upto;
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
    uint8_t *out;    /* kept records not yet written, from file offset out_off */
    size_t out_len;
    uint64_t out_off;
} compact_ctx;

#define COMPACT_BUF (1u << 20)

/* kept records go out in writes of up to COMPACT_BUF, not one per record */
static int compact_flush(compact_ctx *c)
{
    struct iovec iov = {c->out, c->out_len};
    int r;

    if (!c->out_len)
        return 0;
    r = write_full(c->fd, &iov, 1, c->out_off, c->tmp, c->err);
    c->out_off += c->out_len;
    c->out_len = 0;
    return r;
}

static int compact_one(const czk_journal_rec *rec, void *arg)
{
    compact_ctx *c = arg;
    czk_journal_rec_header h;
    int k = c->keep ? c->keep(rec, c->ctx) : 1;

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
    /* the new file is synced whole before it takes the journal's name */
    h.flags = CZK_JOURNAL_SYNC | (1u << CZK_JOURNAL_LAG_SHIFT);
    h.crc = rec_crc(&h, rec->data);
    size_t need = pad8(RHDR + rec->len);
    if (c->out_len + need > COMPACT_BUF && compact_flush(c) < 0)
        return c->err ? c->err->code : -EIO;
    if (need > COMPACT_BUF) {
        if (write_rec(c->fd, c->off, &h, rec->data, c->tmp, c->err) < 0)
            return c->err ? c->err->code : -EIO;
        c->out_off = c->off + need;
    } else {
        memcpy(c->out + c->out_len, &h, RHDR);
        memcpy(c->out + c->out_len + RHDR, rec->data, rec->len);
        memset(c->out + c->out_len + RHDR + rec->len, 0, need - RHDR - rec->len);
        c->out_len += need;
    }
    c->off += need;
    c->kept++;
    return 0;
}

struct czk_journal_compaction {
    char path[PATH_MAX];     /* the journal's */
    char tmp[PATH_MAX + 16]; /* path.compact, locked, -1 fd once renamed or removed */
    int fd;
    int old_fd;         /* after finish: the replaced file's descriptor, closed by free */
    uint64_t upto;      /* the journal's end at begin: run rewrites [0, upto) */
    uint64_t base_seq;  /* the new file's header: the journal's next seq at begin */
    uint64_t out_end;   /* after run: the end of the new file */
    uint64_t cuts;      /* the journal's cuts at begin: one since then took records run may have kept */
    uint64_t kept, dropped;
    int ran;            /* run succeeded */
};

int czk_journal_compact_begin(czk_journal *j, czk_journal_compaction **out, czk_error *err)
{
    czk_journal_compaction *cp;

    *out = NULL;
    if (j->failed)
        return czk_errorf(err, -EIO, "journal \"%s\" is in an unknown state after a failed append; restart gpud",
                          j->path);
    if (!(cp = calloc(1, sizeof(*cp))))
        return czk_errorf(err, -ENOMEM, "no memory to compact journal \"%s\"", j->path);
    snprintf(cp->path, sizeof(cp->path), "%s", j->path);
    snprintf(cp->tmp, sizeof(cp->tmp), "%s.compact", j->path);
    cp->fd = cp->old_fd = -1;
    cp->upto = j->end;
    cp->cuts = j->cuts;
    cp->base_seq = j->next_seq; /* seqs never go back, even when the last records are dropped */
    *out = cp;
    return 0;
}

/* reads [0, upto) of path through a descriptor of its own */
static int read_upto(const char *path, uint64_t upto, uint8_t **out, czk_error *err)
{
    uint8_t *buf = malloc(upto ? (size_t)upto : 1);
    ssize_t got;
    int fd = open(path, O_RDONLY | O_CLOEXEC);

    if (fd < 0 || !buf) {
        int e = fd < 0 ? errno : ENOMEM;
        free(buf);
        if (fd >= 0)
            close(fd);
        return czk_errorf(err, -e, "could not read journal \"%s\" to compact it: %s", path, strerror(e));
    }
    got = pread_upto(fd, buf, (size_t)upto, 0);
    close(fd);
    if (got < 0 || (uint64_t)got < upto) {
        free(buf);
        return czk_errorf(err, got < 0 ? (int)got : -EIO, "could not read journal \"%s\" to compact it: %s", path,
                          got < 0 ? strerror((int)-got) : "it is shorter than it was");
    }
    *out = buf;
    return 0;
}

int czk_journal_compact_run(czk_journal_compaction *cp, czk_journal_keep_fn keep, void *ctx, czk_error *err)
{
    compact_ctx c;
    scan_res s;
    uint8_t *buf = NULL;
    int r;

    cp->fd = open(cp->tmp, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (cp->fd < 0)
        return czk_errorf(err, -errno, "could not create \"%s\": %s", cp->tmp, strerror(errno));
    /* locked before it takes the journal's name */
    if (flock(cp->fd, LOCK_EX | LOCK_NB) < 0)
        return czk_errorf(err, -errno, "could not lock \"%s\": %s", cp->tmp, strerror(errno));
    if ((r = write_file_header(cp->fd, cp->base_seq, cp->tmp, err)) < 0)
        return r;
    if ((r = read_upto(cp->path, cp->upto, &buf, err)) < 0)
        return r;
    memset(&c, 0, sizeof(c));
    c.keep = keep;
    c.ctx = ctx;
    c.fd = cp->fd;
    c.off = HDR;
    c.tmp = cp->tmp;
    c.err = err;
    c.out_off = HDR;
    if (!(c.out = malloc(COMPACT_BUF))) {
        free(buf);
        return czk_errorf(err, -ENOMEM, "no memory to compact journal \"%s\"", cp->path);
    }
    /* the file was validated at open and only appended to since */
    r = scan(buf, (size_t)cp->upto, 1, compact_one, &c, NULL, NULL, &s);
    free(buf);
    if (r == 0 && s.refused)
        r = refuse(cp->path, &s, err);
    if (r == 0)
        r = compact_flush(&c);
    free(c.out);
    if (r < 0)
        return r;
    if (fdatasync(cp->fd) < 0)
        return czk_errorf(err, -errno, "could not fdatasync \"%s\": %s", cp->tmp, strerror(errno));
    cp->out_end = c.off;
    cp->kept = c.kept;
    cp->dropped = c.dropped;
    cp->ran = 1;
    return 0;
}

int czk_journal_compact_finish(czk_journal *j, czk_journal_compaction *cp, czk_error *err)
{
    uint64_t tail = j->end - cp->upto;
    uint8_t *buf = NULL;
    int r;

    if (!cp->ran || cp->fd < 0)
        return czk_errorf(err, -EINVAL, "journal \"%s\": compaction finished without a successful run", j->path);
    if (j->failed)
        return czk_errorf(err, -EIO, "journal \"%s\" is in an unknown state after a failed append; restart gpud",
                          j->path);
    if (j->cuts != cp->cuts || j->end < cp->upto || strcmp(j->path, cp->path))
        return czk_errorf(err, -ESTALE, "journal \"%s\" was cut back after a failed sync while it was compacted",
                          j->path);
    /* the records appended since begin, as they are */
    if (tail) {
        struct iovec iov;
        ssize_t got;

        if (!(buf = malloc((size_t)tail)))
            return czk_errorf(err, -ENOMEM, "no memory to compact journal \"%s\"", j->path);
        if ((got = pread_upto(j->fd, buf, (size_t)tail, cp->upto)) < 0 || (uint64_t)got < tail) {
            r = czk_errorf(err, got < 0 ? (int)got : -EIO, "could not read journal \"%s\": %s", j->path,
                           got < 0 ? strerror((int)-got) : "short read");
            free(buf);
            return r;
        }
        iov.iov_base = buf;
        iov.iov_len = (size_t)tail;
        r = write_full(cp->fd, &iov, 1, cp->out_end, cp->tmp, err);
        free(buf);
        if (r < 0)
            return r;
    }
    if (fdatasync(cp->fd) < 0)
        return czk_errorf(err, -errno, "could not fdatasync \"%s\": %s", cp->tmp, strerror(errno));
    if (rename(cp->tmp, j->path) < 0)
        return czk_errorf(err, -errno, "could not rename \"%s\" over \"%s\": %s", cp->tmp, j->path, strerror(errno));
    cp->old_fd = j->fd; /* its close frees the old file's blocks: left to free */
    j->fd = cp->fd;
    cp->fd = -1;
    j->end = cp->out_end + tail;
    j->durable = czk_journal_tail(j);
    czk_debug("compacted journal \"%s\": kept %" PRIu64 " records, dropped %" PRIu64 ", %" PRIu64
              " bytes written meanwhile moved over", j->path, cp->kept, cp->dropped, tail);
    /* the rename happened: the journal is the new file from here.  A rename
     * whose directory entry is not durable may be undone by a crash, and
     * with it the records moved over: what is on the disk is unknown, so
     * the journal refuses appends until a restart re-validates it */
    r = czk_fsync_parent(j->path, err);
    if (r < 0) {
        j->failed = 1;
        czk_err("journal \"%s\": compacted, but the rename may not be durable (%s): refusing further appends; "
                "restart gpud (open re-validates the journal)", j->path, err ? err->msg : strerror(-r));
    }
    return r;
}

void czk_journal_compact_counts(const czk_journal_compaction *cp, uint64_t *kept, uint64_t *dropped)
{
    if (kept)
        *kept = cp->kept;
    if (dropped)
        *dropped = cp->dropped;
}

void czk_journal_compact_free(czk_journal_compaction *cp)
{
    if (!cp)
        return;
    if (cp->fd >= 0) {
        close(cp->fd);
        unlink(cp->tmp);
    }
    if (cp->old_fd >= 0)
        close(cp->old_fd);
    free(cp);
}

int czk_journal_compact(czk_journal *j, czk_journal_keep_fn keep, void *ctx, czk_error *err)
{
    czk_journal_compaction *cp;
    int r = czk_journal_compact_begin(j, &cp, err);

    if (r == 0)
        r = czk_journal_compact_run(cp, keep, ctx, err);
    if (r == 0)
        r = czk_journal_compact_finish(j, cp, err);
    czk_journal_compact_free(cp);
    return r;
}

const czk_journal_info *czk_journal_get_info(const czk_journal *j) { return &j->info; }

uint64_t czk_journal_next_seq(const czk_journal *j) { return j->next_seq; }

int czk_journal_failed(const czk_journal *j) { return j->failed; }

void czk_journal_close(czk_journal *j)
{
    if (!j)
        return;
    close(j->fd);
    free(j);
}

/* ------------------------------------------------------------- salvage --- */

typedef struct salvage_ctx {
    int fd;
    uint64_t off;
    const char *path;
    czk_error *err;
} salvage_ctx;

static int salvage_one(const czk_journal_rec *rec, void *arg)
{
    salvage_ctx *c = arg;
    czk_journal_rec_header h;
    int r;

    memset(&h, 0, sizeof(h));
    h.magic = CZK_JOURNAL_REC_MAGIC;
    h.type = rec->type;
    h.len = rec->len;
    h.seq = rec->seq;
    h.flags = rec->flags;
    h.crc = rec_crc(&h, rec->data);
    if ((r = write_rec(c->fd, c->off, &h, rec->data, c->path, c->err)) < 0)
        return r;
    c->off += pad8(RHDR + rec->len);
    return 0;
}

int czk_journal_salvage(const char *in_path, const char *out_path, czk_journal_problem_fn fn, void *ctx,
                        uint64_t *kept, czk_error *err)
{
    salvage_ctx c;
    scan_res s;
    uint8_t *buf;
    size_t len;
    uint64_t base;
    int fd, r;

    if (kept)
        *kept = 0;
    if ((r = read_path(in_path, &buf, &len, err)) < 0)
        return r;
    fd = open(out_path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (fd < 0) {
        r = czk_errorf(err, -errno, "could not create \"%s\": %s", out_path, strerror(errno));
        free(buf);
        return r;
    }
    c.fd = fd;
    c.off = HDR;
    c.path = out_path;
    c.err = err;
    if ((r = scan(buf, len, 0, salvage_one, &c, fn, ctx, &s)) < 0)
        goto fail;
    base = s.last_kept + 1;
    if (s.hdr == HDR_OK && s.fh.base_seq > base)
        base = s.fh.base_seq;
    if ((r = write_file_header(fd, base, out_path, err)) < 0)
        goto fail;
    if (fsync(fd) < 0) {
        r = czk_errorf(err, -errno, "could not fsync \"%s\": %s", out_path, strerror(errno));
        goto fail;
    }
    if ((r = czk_fsync_parent(out_path, err)) < 0)
        goto fail;
    close(fd);
    free(buf);
    if (kept)
        *kept = s.kept;
    return 0;
fail:
    close(fd);
    unlink(out_path);
    free(buf);
    return r;
}

/* ------------------------------------------------------------- id mark --- */

struct czk_idmark {
    char path[PATH_MAX];
    uint64_t next;  /* next id handed out */
    uint64_t limit; /* the file's value: ids below it may have been handed out */
    uint64_t floor; /* the journal reached this seq */
    uint32_t block;
};

#define IDMARK_FMT "czk-idmark 1 next=%" PRIu64 " floor=%" PRIu64

static int idmark_write(czk_idmark *m, uint64_t limit, uint64_t floor, czk_error *err)
{
    char tmp[PATH_MAX + 8], text[160];
    int fd, n, r = 0;

    n = snprintf(text, sizeof(text), IDMARK_FMT, limit, floor);
    n += snprintf(text + n, sizeof(text) - (size_t)n, " crc=%08x\n",
                  czk_crc32(czk_crc32_init(), text, (size_t)n));
    snprintf(tmp, sizeof(tmp), "%s.tmp", m->path);
    fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd < 0)
        return czk_errorf(err, -errno, "could not create \"%s\": %s", tmp, strerror(errno));
    if (write(fd, text, (size_t)n) != n)
        r = czk_errorf(err, errno ? -errno : -EIO, "could not write \"%s\": %s", tmp,
                       errno ? strerror(errno) : "short write");
    else if (fsync(fd) < 0)
        r = czk_errorf(err, -errno, "could not fsync \"%s\": %s", tmp, strerror(errno));
    close(fd);
    if (r == 0 && rename(tmp, m->path) < 0)
        r = czk_errorf(err, -errno, "could not rename \"%s\" to \"%s\": %s", tmp, m->path, strerror(errno));
    if (r < 0) {
        unlink(tmp);
        return r;
    }
    if ((r = czk_fsync_parent(m->path, err)) < 0)
        return r;
    m->limit = limit;
    m->floor = floor;
    return 0;
}

static int idmark_parse(const char *text, size_t len, uint64_t *limit, uint64_t *floor)
{
    char copy[160], *crc_at;
    unsigned crc;
    int end = 0;

    if (len == 0 || len >= sizeof(copy) || text[len - 1] != '\n')
        return -EBADMSG;
    memcpy(copy, text, len);
    copy[len] = 0;
    if (!(crc_at = strstr(copy, " crc=")))
        return -EBADMSG;
    if (sscanf(crc_at, " crc=%8x\n%n", &crc, &end) != 1 || (size_t)(crc_at - copy) + (size_t)end != len)
        return -EBADMSG;
    if (crc != czk_crc32(czk_crc32_init(), copy, (size_t)(crc_at - copy)))
        return -EBADMSG;
    *crc_at = 0;
    end = 0;
    if (sscanf(copy, "czk-idmark 1 next=%" SCNu64 " floor=%" SCNu64 "%n", limit, floor, &end) != 2 ||
        copy[end] != 0 || *limit == 0)
        return -EBADMSG;
    return 0;
}

int czk_idmark_open(czk_idmark **out, const char *path, uint32_t block, czk_error *err)
{
    czk_idmark *m;
    char text[160];
    ssize_t n;
    int fd, r;

    *out = NULL;
    if (block == 0 || block > CZK_IDMARK_MAX_BLOCK)
        return czk_errorf(err, -EINVAL, "id mark block %u is out of range (1..%u)", block, CZK_IDMARK_MAX_BLOCK);
    if (strlen(path) >= PATH_MAX - 8)
        return czk_errorf(err, -ENAMETOOLONG, "id mark path \"%s\" is too long", path);
    if (!(m = calloc(1, sizeof(*m))))
        return czk_errorf(err, -ENOMEM, "no memory for the id mark");
    snprintf(m->path, sizeof(m->path), "%s", path);
    m->block = block;
    fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0 && errno == ENOENT) {
        if ((r = idmark_write(m, 1, 0, err)) < 0)
            goto fail;
        czk_info("created job id mark \"%s\"", path);
    } else if (fd < 0) {
        r = czk_errorf(err, -errno, "could not open id mark \"%s\": %s", path, strerror(errno));
        goto fail;
    } else {
        n = read(fd, text, sizeof(text));
        close(fd);
        if (n < 0) {
            r = czk_errorf(err, -errno, "could not read id mark \"%s\": %s", path, strerror(errno));
            goto fail;
        }
        if (idmark_parse(text, (size_t)n, &m->limit, &m->floor) < 0) {
            r = czk_errorf(err, -EBADMSG,
                           "job id mark \"%s\" is damaged: refusing to guess the next job id; replace it with a "
                           "new one with \"czk journal idmark %s N\" where N is above every job id "
                           "ever handed out (the journal's, the spool's and output_dir's)",
                           path, path);
            goto fail;
        }
    }
    m->next = m->limit;
    *out = m;
    return 0;
fail:
    free(m);
    return r;
}

int czk_idmark_next(czk_idmark *m, uint64_t journal_seq, uint64_t *id, czk_error *err)
{
    int r;
    if (m->next >= m->limit) {
        uint64_t floor = journal_seq > m->floor ? journal_seq : m->floor;
        if ((r = idmark_write(m, m->next + m->block, floor, err)) < 0)
            return r;
    }
    *id = m->next++;
    return 0;
}

int czk_idmark_raise(czk_idmark *m, uint64_t min_next, czk_error *err)
{
    int r;
    if (min_next <= m->next)
        return 0;
    if (min_next > m->limit && (r = idmark_write(m, min_next, m->floor, err)) < 0)
        return r;
    m->next = min_next;
    return 0;
}

int czk_idmark_set_floor(czk_idmark *m, uint64_t seq, czk_error *err)
{
    if (seq <= m->floor)
        return 0;
    return idmark_write(m, m->limit, seq, err);
}

int czk_idmark_set(const char *path, uint64_t next, uint64_t floor, czk_error *err)
{
    czk_idmark m;
    if (next == 0)
        return czk_errorf(err, -EINVAL, "a job id mark of 0 is not valid (ids start at 1)");
    if (strlen(path) >= PATH_MAX - 8)
        return czk_errorf(err, -ENAMETOOLONG, "id mark path \"%s\" is too long", path);
    memset(&m, 0, sizeof(m));
    snprintf(m.path, sizeof(m.path), "%s", path);
    return idmark_write(&m, next, floor, err);
}

uint64_t czk_idmark_floor(const czk_idmark *m) { return m->floor; }

int czk_idmark_pristine(const czk_idmark *m) { return m->limit == 1 && m->floor == 0; }

uint64_t czk_idmark_peek(const czk_idmark *m) { return m->next; }

void czk_idmark_close(czk_idmark *m) { free(m); }
