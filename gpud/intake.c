/*
 * intake.c — czk-gpud's intake thread: copies the witnesses of a SUBMIT from
 * the client's file descriptors into the spool (state_dir/spool/<job>/), fsyncs
 * them, and validates the copies, so the event loop never waits for a client's
 * disk, and computes each witness's SHA-256 from the bytes it copies (the
 * digests bind the request id, jobs.c).  A check_only request (a repeated
 * request id) is only hashed, nothing is written.
 * The request's done_task (set by jobs.c) then runs on the loop,
 * which journals ACCEPT and answers (jobs.c, gpud_submit_finish).  gpud
 * never opens a path on a client's behalf: it only
 * reads the fds the client passed (SCM_RIGHTS).
 *
 * The witnesses of one request are copied by up to [gpud] intake_threads
 * threads at once (the intake thread and helpers it starts for that request):
 * a large witness costs its copy into the page cache, the hash, a re-read to
 * validate it and an fsync, and one thread of that per partition leaves the
 * GPU waiting for the spool (docs/bench-gpu-pipeline.md, "Intake").  A
 * failure is reported for the lowest failing partition, as one thread would.
 *
 * Hand-off: the loop queues a gpud_submit_req under intake_mu; the thread owns
 * the request (its fds, rc, why) until it posts done_task back to the loop.
 * Besides the request, the thread reads only the configuration and
 * g->spool_dir, which do not change after start-up.  What it needs of the
 * circuit (name, number of variables, curve) the loop copied into the
 * request when it made it (jobs.c, gpud_submit_req_new): g->circuits is the
 * loop's, and a key reload rewrites a circuit's header there while SUBMITs
 * are being spooled (reload.c, keys.c's gpud_keys_replace).  A key reload
 * keeps the sizes and the curve, so a request made before it checks what
 * the new key needs too.
 *
 * gpud_intake_stop (shutdown) does not wait for a request's remaining
 * partitions: each thread checks intake_stop before a partition and between
 * the 64 KiB pieces of a witness, and a request stopped so is dropped
 * (nothing of it was journaled).
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/base/digest.h"
#include "common/base/fsutil.h"
#include "common/formats/binfile.h"
#include "common/runtime/daemon.h"
#include "common/runtime/fault.h"
#include "common/crypto/field.h"
#include "common/base/log.h"
#include "gpud/gpud.h"

/* the name the witness readers put in front of their messages; stripped,
 * since the reason names the partition instead */
#define WTNS_NAME "witness"

static const char *strip_name(const char *msg)
{
    size_t k = strlen(WTNS_NAME);
    return !strncmp(msg, WTNS_NAME ": ", k + 2) ? msg + k + 2 : msg;
}

/* is the witness over another field?  Then say which one (the container and
 * everything else are checked by czk_wtns_open_fd); 1 with *why set, else 0 */
static int foreign_prime(const uint8_t *map, size_t size, czk_curve_id curve, uint32_t part, char *why, size_t n)
{
    const czk_binfile_section *s1;
    czk_binfile bf;
    czk_error e = {0};
    const uint8_t *p;
    char what[64];
    uint32_t n8;

    if (czk_binfile_parse(&bf, map, size, WTNS_NAME, "wtns", 2, &e) < 0 || !(s1 = czk_binfile_find(&bf, 1)) ||
        s1->size < 4)
        return 0;
    p = czk_binfile_payload(&bf, s1);
    n8 = czk_le32(p);
    const void *r = curve == CZK_CURVE_BN254 ? (const void *)&CZK_BN254_FR_MOD : (const void *)&CZK_FR_MOD;
    if (s1->size < 4 + (uint64_t)n8 || (n8 == 32 && !memcmp(p + 4, r, 32)))
        return 0;
    czk_binfile_describe_prime(what, sizeof(what), p + 4, n8);
    snprintf(why, n, "partition %u: not a %s witness (prime is %s)", part, czk_curve_name(curve), what);
    return 1;
}

/* shutdown asked the intake to stop (gpud_intake_stop) */
static int stopping(const gpud *g)
{
    return __atomic_load_n(&g->intake_stop, __ATOMIC_RELAXED);
}

/* validates the spooled copy.  Reasons name the partition and what is wrong,
 * never the spool path (the client knows its files by partition index) */
static int check_spooled(const gpud_submit_req *rq, uint32_t part, const char *path, char *why, size_t n)
{
    const uint8_t *map = NULL;
    size_t size = 0;
    czk_wtns w;
    czk_error e = {0};
    int fd, r;

    if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0) {
        r = -errno;
        snprintf(why, n, "partition %u: could not reopen the spooled witness: %s", part, strerror(errno));
        return r;
    }
    if (czk_binfile_map_fd(&map, &size, fd, WTNS_NAME, &e) == 0) {
        r = map ? foreign_prime(map, size, rq->curve, part, why, n) : 0;
        czk_binfile_unmap(map, size);
        if (r) {
            close(fd);
            return -EINVAL;
        }
    }
    r = czk_wtns_open_fd_curves(&w, fd, WTNS_NAME, CZK_CURVES_ALL, &e);
    close(fd);
    if (r < 0) {
        snprintf(why, n, "partition %u: not a valid witness: %s", part, strip_name(e.msg));
        return r;
    }
    if (w.n_witness != rq->n_vars) {
        snprintf(why, n, "partition %u: witness has %u values but circuit \"%s\" has %u variables (a witness of "
                 "another circuit?)", part, w.n_witness, rq->cname, rq->n_vars);
        r = -EINVAL;
    }
    czk_wtns_close(&w);
    return r;
}

/* copies the client's witness (an open fd, never a path) into the spool and
 * validates the copy, so what is checked is what will be proved; digest gets
 * the SHA-256 of the bytes copied.  A check_only request: hashes, writes
 * nothing. */
static int spool_one(gpud *g, const gpud_submit_req *rq, uint32_t part, uint8_t digest[CZK_SHA256_LEN], char *why,
                     size_t n)
{
    char path[CZK_CONFIG_PATH_MAX + 64], tmp[CZK_CONFIG_PATH_MAX + 80];
    uint64_t cap = (uint64_t)rq->n_vars * 32 + 4096, off = 0;
    uint64_t job = rq->job;
    int fd = rq->fds[part], check_only = rq->check_only;
    uint8_t buf[1 << 16];
    czk_sha256 *sha;
    struct stat st;
    int out = -1, r = 0;

    if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
        snprintf(why, n, "partition %u: the witness is not a regular file", part);
        return -EINVAL;
    }
    if ((uint64_t)st.st_size > cap) {
        snprintf(why, n, "partition %u: the witness is %lld bytes, more than a %s witness can be (%llu)", part,
                 (long long)st.st_size, rq->cname, (unsigned long long)cap);
        return -EFBIG;
    }
    if (czk_sha256_new(&sha) < 0) {
        snprintf(why, n, "partition %u: out of memory", part);
        return -ENOMEM;
    }
    gpud_spool_path(g, job, part, path, sizeof(path));
    snprintf(tmp, sizeof(tmp), "%s.tmp", path);
    if (!check_only && (out = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0640)) < 0) {
        r = -errno;
        snprintf(why, n, "partition %u: could not create the spool file: %s", part, strerror(errno));
        czk_sha256_final(sha, digest);
        return r;
    }
    for (;;) {
        ssize_t k;
        if (stopping(g)) {
            r = -ECANCELED;
            snprintf(why, n, "partition %u: czk-gpud is stopping", part);
            break;
        }
        k = pread(fd, buf, sizeof(buf), (off_t)off);
        if (k < 0 && errno == EINTR)
            continue;
        if (k < 0) {
            r = -errno;
            snprintf(why, n, "partition %u: could not read the witness: %s", part, strerror(errno));
            break;
        }
        if (k == 0)
            break;
        if (off + (uint64_t)k > cap) {
            r = -EFBIG;
            snprintf(why, n, "partition %u: the witness grew beyond %llu bytes while being read", part,
                     (unsigned long long)cap);
            break;
        }
        czk_sha256_update(sha, buf, (size_t)k);
        if (out >= 0 && (r = czk_write_all(out, buf, (size_t)k)) < 0) {
            /* a short write is followed by one that fails with the reason */
            snprintf(why, n, "partition %u: could not write the spool file: %s%s", part, strerror(-r),
                     r == -ENOSPC || r == -EDQUOT ? " (state_dir is full)" : "");
            if (r != -ENOSPC && r != -EDQUOT)
                r = -EIO;
            break;
        }
        off += (uint64_t)k;
    }
    czk_sha256_final(sha, digest);
    if (check_only)
        return r;
    if (r == 0 && fsync(out) < 0) {
        r = -errno;
        snprintf(why, n, "partition %u: could not fsync the spool file: %s", part, strerror(errno));
    }
    close(out);
    if (r == 0 && rename(tmp, path) < 0) {
        r = -errno;
        snprintf(why, n, "partition %u: could not rename the spool file: %s", part, strerror(errno));
    }
    if (r < 0) {
        unlink(tmp);
        return r;
    }
    return check_spooled(rq, part, path, why, n);
}

/* the partitions of one request, shared by the threads that spool them */
typedef struct spool_work {
    gpud *g;
    gpud_submit_req *r;
    uint32_t next;   /* the next partition to take (atomic) */
    uint32_t failed; /* the lowest failing partition so far (atomic; nparts: none) */
    int *rc;         /* per partition */
    char (*why)[CZK_MSG_STR_LONG];
} spool_work;

static void *spool_worker(void *arg)
{
    spool_work *sw = arg;
    gpud_submit_req *r = sw->r;

    for (;;) {
        uint32_t i = __atomic_fetch_add(&sw->next, 1, __ATOMIC_RELAXED);
        if (i >= r->nparts || i > __atomic_load_n(&sw->failed, __ATOMIC_RELAXED))
            return NULL; /* done, or past a failure: its report is the lowest one's */
        if (stopping(sw->g)) {
            sw->rc[i] = -ECANCELED;
            snprintf(sw->why[i], sizeof(sw->why[i]), "partition %u: czk-gpud is stopping", i);
        } else
            sw->rc[i] = spool_one(sw->g, r, i, r->wsha + (size_t)i * CZK_SHA256_LEN, sw->why[i], sizeof(sw->why[i]));
        if (sw->rc[i] < 0) {
            uint32_t f = __atomic_load_n(&sw->failed, __ATOMIC_RELAXED);
            while (i < f && !__atomic_compare_exchange_n(&sw->failed, &f, i, 0, __ATOMIC_RELAXED, __ATOMIC_RELAXED))
                ;
        }
    }
}

/* every partition through spool_one on up to intake_threads threads (this
 * one included); r->rc / r->why: the lowest failing partition's */
static void spool_parts(gpud *g, gpud_submit_req *r)
{
    spool_work sw = {.g = g, .r = r, .next = 0, .failed = r->nparts};
    unsigned nth = g->cfg.intake_threads > 1 ? (unsigned)g->cfg.intake_threads : 1, started = 0;
    pthread_t th[64];

    if (nth > r->nparts)
        nth = r->nparts;
    if (nth > 64)
        nth = 64;
    sw.rc = calloc(r->nparts, sizeof(*sw.rc));
    sw.why = calloc(r->nparts, sizeof(*sw.why));
    if (!sw.rc || !sw.why) {
        free(sw.rc);
        free(sw.why);
        r->rc = -ENOMEM;
        snprintf(r->why, sizeof(r->why), "out of memory");
        return;
    }
    for (unsigned t = 1; t < nth; t++)
        if (pthread_create(&th[started], NULL, spool_worker, &sw) == 0)
            started++; /* fewer helpers: the work still gets done, on fewer threads */
    spool_worker(&sw);
    for (unsigned t = 0; t < started; t++)
        pthread_join(th[t], NULL);
    r->rc = 0;
    if (sw.failed < r->nparts) {
        r->rc = sw.rc[sw.failed];
        snprintf(r->why, sizeof(r->why), "%s", sw.why[sw.failed]);
    }
    free(sw.rc);
    free(sw.why);
}

static void spool_job(gpud *g, gpud_submit_req *r)
{
    char dir[CZK_CONFIG_PATH_MAX + 40];
    czk_error e = {0};

    snprintf(dir, sizeof(dir), "%s/%llu", g->spool_dir, (unsigned long long)r->job);
    if (r->check_only) {
        spool_parts(g, r);
        return;
    }
    if ((r->rc = czk_daemon_mkdirs(dir, 0750, &e)) < 0) {
        snprintf(r->why, sizeof(r->why), "could not create the spool: %s", e.msg);
        return;
    }
    spool_parts(g, r);
    if (r->rc < 0)
        return;
    if ((r->rc = czk_fsync_dir(dir, NULL)) < 0 || (r->rc = czk_fsync_dir(g->spool_dir, NULL)) < 0)
        snprintf(r->why, sizeof(r->why), "could not fsync the spool: %s", strerror(-r->rc));
    if (r->rc == 0 && (r->rc = czk_fault("gpud.spool")) < 0)
        snprintf(r->why, sizeof(r->why), "fault injected while spooling");
}

static void *intake_main(void *arg)
{
    gpud *g = arg;
    for (;;) {
        gpud_submit_req *r;
        pthread_mutex_lock(&g->intake_mu);
        while (!g->iq_head && !g->intake_stop)
            pthread_cond_wait(&g->intake_cv, &g->intake_mu);
        if (g->intake_stop) {
            pthread_mutex_unlock(&g->intake_mu);
            return NULL;
        }
        r = g->iq_head;
        g->iq_head = r->qnext;
        if (!g->iq_head)
            g->iq_tail = NULL;
        pthread_mutex_unlock(&g->intake_mu);
        gpud_intake_run(g, r);
        czk_loop_post(g->loop, &r->done_task);
    }
}

void gpud_intake_run(gpud *g, gpud_submit_req *r)
{
    spool_job(g, r);
    for (uint32_t i = 0; i < r->nparts; i++)
        if (r->fds[i] >= 0) {
            close(r->fds[i]);
            r->fds[i] = -1;
        }
}

void gpud_intake_queue(gpud *g, gpud_submit_req *r)
{
    r->qnext = NULL;
    pthread_mutex_lock(&g->intake_mu);
    if (g->iq_tail)
        g->iq_tail->qnext = r;
    else
        g->iq_head = r;
    g->iq_tail = r;
    pthread_cond_signal(&g->intake_cv);
    pthread_mutex_unlock(&g->intake_mu);
}

int gpud_intake_start(gpud *g, czk_error *e)
{
    int r;
    pthread_mutex_init(&g->intake_mu, NULL);
    pthread_cond_init(&g->intake_cv, NULL);
    if ((r = pthread_create(&g->intake_th, NULL, intake_main, g)) != 0)
        return czk_errorf(e, -r, "could not start the intake thread: %s", strerror(r));
    g->intake_started = 1;
    return 0;
}

/* requests still queued are dropped: nothing of them was journaled, and the
 * spool sweep at the next start removes their files */
void gpud_intake_stop(gpud *g)
{
    if (!g->intake_started)
        return;
    pthread_mutex_lock(&g->intake_mu);
    __atomic_store_n(&g->intake_stop, 1, __ATOMIC_RELAXED); /* also read without intake_mu: stopping() */
    pthread_cond_signal(&g->intake_cv);
    pthread_mutex_unlock(&g->intake_mu);
    pthread_join(g->intake_th, NULL);
    g->intake_started = 0;
    while (g->iq_head) {
        gpud_submit_req *r = g->iq_head;
        g->iq_head = r->qnext;
        for (uint32_t i = 0; i < r->nparts; i++)
            if (r->fds[i] >= 0)
                close(r->fds[i]);
    }
}
