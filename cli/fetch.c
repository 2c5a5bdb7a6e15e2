/*
 * fetch.c — the proofs of a partition into --out DIR, for `czk submit` and
 * `czk fetch` (the contract is fetch.h): the DIR checks, the atomic writes,
 * the FETCH exchange with czk-gpud (docs/ipc.md, FETCH/FETCHED) and the
 * fallback to output_dir for a gpud that does not know FETCH.  The files
 * are written with the client's own rights; gpud opens its output_dir, which
 * a member of client_group cannot read, and hands over read-only fds.
 */
#include "cli/fetch.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "common/base/log.h"

#define OUT_DIR_MODE 0750          /* the user's own files, readable by their group at most */
#define OUT_FILE_MODE 0640
#define FETCH_TIMEOUT_MS 30000     /* FETCH: gpud answers at once (two opens) */
#define FETCH_BUSY_TRIES 50        /* FETCH answered -EBUSY (a reply was still unread): ask again, */
#define FETCH_BUSY_WAIT_MS 20      /* this long apart */
#define PROOF_FILE_MAX (16u << 20) /* proof.json / public.json read back: larger is refused */

/* ------------------------------------------------------------ output --- */

int czk_fetch_out_check(const char *dir, char *why, size_t n)
{
    char first[4 * 256];
    struct dirent *d;
    DIR *h = opendir(dir);
    int r = 0;

    if (!h) {
        if (errno == ENOENT || errno == ENOTDIR)
            return 0;
        r = -errno;
        snprintf(why, n, "cannot read output directory \"%s\": %s", dir, strerror(-r));
        return r;
    }
    while ((d = readdir(h))) {
        if (!strcmp(d->d_name, ".") || !strcmp(d->d_name, ".."))
            continue;
        czk_esc(d->d_name, first, sizeof(first));
        snprintf(why, n,
                 "output directory \"%s\" is not empty (it holds \"%s\"): choose a new one, or add --force to "
                 "write into it",
                 dir, first);
        r = -ENOTEMPTY;
        break;
    }
    closedir(h);
    return r;
}

int czk_fetch_out_mkdir(const char *dir)
{
    char tmp[CZK_CONFIG_PATH_MAX + 64];
    size_t n = strlen(dir);

    if (n >= sizeof(tmp))
        return -ENAMETOOLONG;
    memcpy(tmp, dir, n + 1);
    for (char *p = tmp + 1; *p; p++) {
        if (*p != '/')
            continue;
        *p = 0;
        if (mkdir(tmp, OUT_DIR_MODE) < 0 && errno != EEXIST)
            return -errno;
        *p = '/';
    }
    if (mkdir(tmp, OUT_DIR_MODE) < 0 && errno != EEXIST)
        return -errno;
    return 0;
}

/* writes dir/name atomically (temp file, fsync, rename), mode OUT_FILE_MODE
 * less the umask; the temp file is created afresh (O_EXCL, no symlink followed) */
static int write_file(const char *dir, const char *name, const uint8_t *data, size_t len, char *why, size_t n)
{
    char path[CZK_CONFIG_PATH_MAX + 96], tmp[CZK_CONFIG_PATH_MAX + 128];
    int fd, r = 0;

    snprintf(path, sizeof(path), "%s/%s", dir, name);
    snprintf(tmp, sizeof(tmp), "%s/.%s.%d.tmp", dir, name, (int)getpid());
    fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, OUT_FILE_MODE);
    if (fd < 0 && errno == EEXIST && unlink(tmp) == 0) /* left by an earlier run with our pid */
        fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, OUT_FILE_MODE);
    if (fd < 0) {
        r = -errno;
        snprintf(why, n, "could not create \"%s\": %s", tmp, strerror(-r));
        return r;
    }
    for (size_t off = 0; off < len;) {
        ssize_t k = write(fd, data + off, len - off);
        if (k < 0 && errno == EINTR)
            continue;
        if (k < 0) {
            r = -errno;
            snprintf(why, n, "could not write \"%s\": %s", tmp, strerror(-r));
            break;
        }
        off += (size_t)k;
    }
    if (r == 0 && fsync(fd) < 0) {
        r = -errno;
        snprintf(why, n, "could not fsync \"%s\": %s", tmp, strerror(-r));
    }
    close(fd);
    if (r == 0 && rename(tmp, path) < 0) {
        r = -errno;
        snprintf(why, n, "could not rename \"%s\" to \"%s\": %s", tmp, path, strerror(-r));
    }
    if (r < 0)
        unlink(tmp);
    return r;
}

int czk_fetch_out_write(const char *dir, uint32_t p, const uint8_t *proof, size_t plen, const uint8_t *pub,
                        size_t ulen, char *why, size_t n)
{
    char pdir[CZK_CONFIG_PATH_MAX + 32];
    int r;

    if ((size_t)snprintf(pdir, sizeof(pdir), "%s/%u", dir, p) >= sizeof(pdir)) {
        snprintf(why, n, "could not create \"%s/%u\": the path is too long", dir, p);
        return -ENAMETOOLONG;
    }
    if ((r = czk_fetch_out_mkdir(pdir)) < 0) {
        snprintf(why, n, "could not create \"%s\": %s", pdir, strerror(-r));
        return r;
    }
    /* public.json first, proof.json last: proof.json present means complete */
    if ((r = write_file(pdir, "public.json", pub, ulen, why, n)) < 0)
        return r;
    return write_file(pdir, "proof.json", proof, plen, why, n);
}

/* ------------------------------------------------------------- input --- */

/* reads fd whole from offset 0 (at most PROOF_FILE_MAX bytes: -EFBIG) into
 * a new buffer; the caller frees *data */
static int read_fd_small(int fd, uint8_t **data, size_t *len)
{
    uint8_t *b = NULL;
    size_t n = 0, cap = 0;

    for (;;) {
        ssize_t k;
        if (n == cap) {
            uint8_t *nb;
            if (cap >= PROOF_FILE_MAX) {
                free(b);
                return -EFBIG;
            }
            cap = cap ? cap * 2 : 8192;
            if (!(nb = realloc(b, cap))) {
                free(b);
                return -ENOMEM;
            }
            b = nb;
        }
        k = pread(fd, b + n, cap - n, (off_t)n);
        if (k < 0 && errno == EINTR)
            continue;
        if (k < 0) {
            int r = -errno;
            free(b);
            return r;
        }
        if (k == 0)
            break;
        n += (size_t)k;
    }
    *data = b;
    *len = n;
    return 0;
}

static int read_small(const char *path, uint8_t **data, size_t *len)
{
    int fd = open(path, O_RDONLY | O_NOCTTY | O_NONBLOCK | O_CLOEXEC), r;

    if (fd < 0)
        return -errno;
    r = read_fd_small(fd, data, len);
    close(fd);
    return r;
}

/* the two files of a FETCHED: regular files of the announced sizes, read
 * whole; 0 (the caller frees the buffers) or -errno with why[] filled */
static int read_fetched(const czk_msg_fetched *f, const int *fds, uint8_t **proof, size_t *plen, uint8_t **pub,
                        size_t *ulen, char *why, size_t n)
{
    static const char *const names[CZK_FETCHED_FDS] = {"proof.json", "public.json"};
    const uint64_t want[CZK_FETCHED_FDS] = {f->proof_size, f->public_size};
    uint8_t **data[CZK_FETCHED_FDS] = {proof, pub};
    size_t *len[CZK_FETCHED_FDS] = {plen, ulen};

    for (int i = 0; i < CZK_FETCHED_FDS; i++) {
        struct stat st;
        int r;
        if (fstat(fds[i], &st) < 0 || !S_ISREG(st.st_mode)) {
            snprintf(why, n, "czk-gpud handed over a %s that is not a regular file", names[i]);
            return -EPROTO;
        }
        if (want[i] > PROOF_FILE_MAX) {
            snprintf(why, n, "its %s is %llu bytes, more than the %u this client reads", names[i],
                     (unsigned long long)want[i], PROOF_FILE_MAX);
            return -EFBIG;
        }
        if ((r = read_fd_small(fds[i], data[i], len[i])) < 0) {
            snprintf(why, n, "could not read the %s czk-gpud handed over: %s", names[i], strerror(-r));
            return r;
        }
        if (*len[i] != want[i]) {
            snprintf(why, n, "the %s czk-gpud handed over is %zu bytes, it announced %llu", names[i], *len[i],
                     (unsigned long long)want[i]);
            return -EIO;
        }
    }
    return 0;
}

/* ------------------------------------------------------------- fetch --- */

static int failed(czk_fetcher *f, czk_fetch_fail where, int r)
{
    f->fail = where;
    return r;
}

/* gpud did not know FETCH: output_dir/<job>/<p>/ read with the client's own
 * rights (the output_dir of its configuration) */
static int copy_from_output_dir(czk_fetcher *f, uint32_t p, char *why, size_t n)
{
    char pp[CZK_CONFIG_PATH_MAX + 64], up[CZK_CONFIG_PATH_MAX + 64];
    uint8_t *proof = NULL, *pub = NULL;
    size_t plen = 0, ulen = 0;
    int r;

    snprintf(pp, sizeof(pp), "%s/%llu/%u/proof.json", f->cl->cfg.output_dir, (unsigned long long)f->job, p);
    snprintf(up, sizeof(up), "%s/%llu/%u/public.json", f->cl->cfg.output_dir, (unsigned long long)f->job, p);
    if ((r = read_small(pp, &proof, &plen)) < 0 || (r = read_small(up, &pub, &ulen)) < 0) {
        snprintf(why, n, "\"%s\" cannot be read: %s", !proof ? pp : up, strerror(-r));
        r = failed(f, CZK_FETCH_NO_FILES, r);
    } else if ((r = czk_fetch_out_write(f->out_dir, p, proof, plen, pub, ulen, why, n)) < 0) {
        r = failed(f, CZK_FETCH_WRITE, r);
    }
    free(proof);
    free(pub);
    return r;
}

/* one FETCH of partition p and its answer (fetch.h); -EOPNOTSUPP when gpud
 * does not know FETCH (it closed the connection) */
static int fetch_once(czk_fetcher *f, uint32_t p, char *why, size_t n)
{
    char esc[CZK_MSG_STR_LONG]; /* czk_esc cuts what does not fit, marked "..." */
    uint8_t *proof = NULL, *pub = NULL;
    size_t plen = 0, ulen = 0;
    czk_client *cl = f->cl;
    czk_error e = {0};
    czk_msg m;
    int r = 0, busy = 0;

    for (int attempt = 0; attempt < 2; attempt++) {
        int fds[CZK_FETCHED_FDS], nfds = 0;
        if (cl->fd < 0) {
            if (f->status_pending)
                *f->status_pending = false;
            if ((r = czk_client_connect(cl, &e)) < 0)
                break;
        }
        memset(&m, 0, sizeof(m));
        m.type = CZK_MSG_FETCH;
        m.u.fetch.job_id = f->job;
        m.u.fetch.partition = p;
        r = czk_client_send(cl, &m, NULL, 0, &e);
        while (r == 0) {
            r = czk_client_recv_fds(cl, &m, fds, CZK_FETCHED_FDS, &nfds, FETCH_TIMEOUT_MS, &e);
            if (r < 0)
                break;
            if (m.type == CZK_MSG_STATUS_REPLY ||
                (m.type == CZK_MSG_ERROR && f->status_pending && *f->status_pending)) {
                if (f->status_pending) /* the answer to the caller's STATUS */
                    *f->status_pending = false;
                continue;
            }
            if (m.type == CZK_MSG_FETCHED || m.type == CZK_MSG_ERROR)
                break;
            /* EVENTs (and anything else gpud may send unasked) are not the answer */
        }
        if (r == 0 && m.type == CZK_MSG_ERROR) {
            if (m.u.error.code == -EBADMSG) {
                /* the FETCH we sent is well formed: only a gpud that does not
                 * know the type calls it malformed (and closes the connection) */
                czk_client_close(cl);
                return -EOPNOTSUPP;
            }
            if (m.u.error.code == -EBUSY && busy++ < FETCH_BUSY_TRIES) {
                /* everything gpud sent before this answer is read now */
                struct timespec ts = {0, FETCH_BUSY_WAIT_MS * 1000000L};
                nanosleep(&ts, NULL);
                attempt--;
                continue;
            }
            czk_esc(m.u.error.message, esc, sizeof(esc)); /* from gpud: no terminal control reaches the user */
            snprintf(why, n, "czk-gpud says: %s", esc);
            return failed(f, CZK_FETCH_REFUSED, m.u.error.code);
        }
        if (r == 0) {
            if (m.u.fetched.job_id != f->job || m.u.fetched.partition != p) {
                for (int i = 0; i < nfds; i++)
                    close(fds[i]);
                czk_client_close(cl); /* out of step with gpud: the next FETCH starts afresh */
                snprintf(why, n, "czk-gpud answered with the files of job %llu partition %u",
                         (unsigned long long)m.u.fetched.job_id, m.u.fetched.partition);
                return failed(f, CZK_FETCH_NO_ANSWER, -EPROTO);
            }
            r = read_fetched(&m.u.fetched, fds, &proof, &plen, &pub, &ulen, why, n);
            for (int i = 0; i < nfds; i++)
                close(fds[i]);
            if (r < 0)
                r = failed(f, CZK_FETCH_NO_ANSWER, r);
            else if ((r = czk_fetch_out_write(f->out_dir, p, proof, plen, pub, ulen, why, n)) < 0)
                r = failed(f, CZK_FETCH_WRITE, r);
            free(proof);
            free(pub);
            return r;
        }
        /* no answer (a timeout, a record refused) or no connection: a later
         * answer to this FETCH must not be taken for the next one's */
        czk_client_close(cl);
        if (!czk_client_dropped(r))
            break;
    }
    snprintf(why, n, "%s", e.msg[0] ? e.msg : strerror(-r));
    return failed(f, CZK_FETCH_NO_ANSWER, r);
}

int czk_fetch_partition(czk_fetcher *f, uint32_t p, char *why, size_t n)
{
    int r;

    if (!f->old_gpud) {
        if ((r = fetch_once(f, p, why, n)) != -EOPNOTSUPP)
            return r;
        f->old_gpud = true;
    }
    return copy_from_output_dir(f, p, why, n);
}
