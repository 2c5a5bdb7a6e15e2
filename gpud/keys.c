/*
 * keys.c — czk-gpud's start-up after its sockets answer: the backend is
 * created on a start-up thread, and every circuit's key points are loaded on
 * a thread of their own.  Both tell the loop through a posted task
 * (czk_loop_post: the loop's eventfd, no polling).  docs/design.md, "Start-up
 * and the proving keys", has the order and the states.
 *
 * A circuit's loader thread:
 *  1. opens the zkey and compares the file with its verified-key record
 *     (state_dir/keys/NAME.verified, docs/file-formats.md): the record is
 *     trusted only when the file's identity (dev, inode, size, mtime ns,
 *     ctime ns) and the key id of the header read at start equal the
 *     record's;
 *  2. reads the whole file once (czk_zkey_load_fd with the point sections),
 *     XXH3-128 of every byte computed as it is read, and checks the points on
 *     their curves unless the record is trusted;
 *  3. when it trusted the record, compares the digest (and the key id of
 *     what it read) with the record's; any difference runs the full point
 *     checks, so a record never makes bytes trusted that differ from the
 *     bytes that passed the checks when it was written;
 *  4. after checking the points itself: writes a new record (tmp file, fsync,
 *     rename, fsync of the directory), unless the file's identity changed
 *     while it was read;
 *  5. waits for the backend and hands it the points (add_key); a backend
 *     without keeps_host_points gets its own copy, and the host copy is freed.
 * Each step is timed; the loop logs one line per circuit with the split
 * (read, check, upload) and which path was taken.
 *
 * Ownership: the loop thread owns the circuits' state (key_state, key_why,
 * points, the metrics); a loader thread writes only its own gpud_keyload and
 * its circuit's progress atomics, reads only the configuration and its
 * copies of what it needs, and posts its done task once as its last action;
 * the loop joins it in that task.  The backend goes from the start-up thread
 * to the loaders under keys->mu (they wait on keys->cv) and to the loop by
 * the start-up thread's posted task.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <xxhash.h>

#include "common/base/clock.h"
#include "common/base/fsutil.h"
#include "common/base/log.h"
#include "common/runtime/daemon.h"
#include "common/runtime/fault.h"
#include "gpud/gpud.h"

#define RECORD_MAGIC "czk-verified-key 1"
#define RECORD_MAX 1024

/* a verified-key record (docs/file-formats.md, "Verified-key records") */
typedef struct key_record {
    uint8_t id[CZK_SHA256_LEN];
    uint64_t dev, ino, size;
    int64_t mtime_ns, ctime_ns;
    uint8_t digest[16]; /* XXH3-128, canonical (big-endian) form */
} key_record;

struct gpud_keyload {
    czk_loop_task done_task;
    gpud *g;
    unsigned idx;
    pthread_t th;
    /* copies of what the thread reads */
    char name[64];
    char path[CZK_CONFIG_PATH_MAX];
    char rec_path[CZK_CONFIG_PATH_MAX + 96];
    char rec_dir[CZK_CONFIG_PATH_MAX + 16];
    uint8_t header_id[CZK_SHA256_LEN];
    uint64_t points_bytes;
    /* the thread's, until done_task: */
    XXH3_state_t *xs;
    uint64_t fsize, base, t_read_end;
    int rc;
    char why[CZK_STATUS_KEY_REASON];
    char path_taken[160];
    czk_zkey *z;      /* the points, while the thread has them; handed to the circuit when kept (the
                         backend keeps this address) */
    int keep;         /* the backend keeps host points: z moves to the circuit */
    double read_s, check_s, upload_s;
};

struct gpud_keys {
    gpud *g;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int state; /* under mu: 0 being created, 1 created, -1 failed */
    const czk_backend_ops *ops;
    czk_backend *backend;
    czk_error err;
    _Atomic int stop;
    pthread_t th;
    int th_started;
    uint64_t t0;
    czk_loop_task backend_task;
    int handed; /* loop: the backend is g->backend */
    czk_backend_config bc;
    const czk_zkey **zkeys;
    czk_backend_region *regions;
    unsigned char tables_on[CZK_CONFIG_MAX_CIRCUITS]; /* bc.tables_on */
};

/* ------------------------------------------------------------ records --- */

static void put_hex(char *out, const uint8_t *p, size_t n)
{
    czk_hex(p, n, out);
}

static int get_hex(const char *s, uint8_t *out, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        unsigned v;
        if (sscanf(s + 2 * i, "%2x", &v) != 1)
            return -EINVAL;
        out[i] = (uint8_t)v;
    }
    return s[2 * n] == 0 || s[2 * n] == '\n' ? 0 : -EINVAL;
}

static void identity_of(const struct stat *st, key_record *r)
{
    r->dev = (uint64_t)st->st_dev;
    r->ino = (uint64_t)st->st_ino;
    r->size = (uint64_t)st->st_size;
    r->mtime_ns = (int64_t)st->st_mtim.tv_sec * 1000000000 + st->st_mtim.tv_nsec;
    r->ctime_ns = (int64_t)st->st_ctim.tv_sec * 1000000000 + st->st_ctim.tv_nsec;
}

static int identity_eq(const key_record *a, const key_record *b)
{
    return a->dev == b->dev && a->ino == b->ino && a->size == b->size && a->mtime_ns == b->mtime_ns &&
           a->ctime_ns == b->ctime_ns;
}

/* 0 and *r, -ENOENT (no record), or -EINVAL (unreadable: logged, ignored) */
static int record_read(const gpud_keyload *L, key_record *r)
{
    char buf[RECORD_MAX], idhex[CZK_SHA256_HEX + 8], dhex[40];
    unsigned long long dev, ino, size;
    long long mt, ct;
    FILE *f = fopen(L->rec_path, "re");
    size_t n;

    if (!f) {
        if (errno != ENOENT)
            czk_warn("circuit %s: cannot read its verified-key record \"%s\": %s; the points are checked", L->name,
                     L->rec_path, strerror(errno));
        return -ENOENT;
    }
    n = fread(buf, 1, sizeof(buf) - 1, f);
    fclose(f);
    buf[n] = 0;
    memset(r, 0, sizeof(*r));
    if (sscanf(buf,
               RECORD_MAGIC "\nkey_id %72s\ndev %llu\nino %llu\nsize %llu\nmtime_ns %lld\nctime_ns %lld\n"
                            "xxh3_128 %39s\n",
               idhex, &dev, &ino, &size, &mt, &ct, dhex) != 7 ||
        get_hex(idhex, r->id, sizeof(r->id)) < 0 || get_hex(dhex, r->digest, sizeof(r->digest)) < 0) {
        czk_warn("circuit %s: its verified-key record \"%s\" is not readable as one; the points are checked and "
                 "the record written again",
                 L->name, L->rec_path);
        return -EINVAL;
    }
    r->dev = dev;
    r->ino = ino;
    r->size = size;
    r->mtime_ns = mt;
    r->ctime_ns = ct;
    return 0;
}

/* tmp file, fsync, rename, fsync of the directory; -errno with e set */
static int record_write(const gpud_keyload *L, const key_record *r, czk_error *e)
{
    char tmp[sizeof(L->rec_path) + 8], idhex[CZK_SHA256_HEX], dhex[40], text[RECORD_MAX];
    int fd, n, err = 0;

    if (czk_mkdir_durable(L->rec_dir, 0750, e) < 0)
        return e->code ? e->code : -EIO;
    put_hex(idhex, r->id, sizeof(r->id));
    put_hex(dhex, r->digest, sizeof(r->digest));
    n = snprintf(text, sizeof(text),
                 RECORD_MAGIC "\nkey_id %s\ndev %" PRIu64 "\nino %" PRIu64 "\nsize %" PRIu64 "\nmtime_ns %" PRId64
                              "\nctime_ns %" PRId64 "\nxxh3_128 %s\n",
                 idhex, r->dev, r->ino, r->size, r->mtime_ns, r->ctime_ns, dhex);
    snprintf(tmp, sizeof(tmp), "%s.tmp", L->rec_path);
    fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0640);
    if (fd < 0)
        return czk_errorf(e, -errno, "cannot create \"%s\": %s", tmp, strerror(errno));
    err = -czk_write_all(fd, text, (size_t)n);
    if (!err && fsync(fd) < 0)
        err = errno;
    close(fd);
    if (!err && rename(tmp, L->rec_path) < 0)
        err = errno;
    if (err) {
        unlink(tmp);
        return czk_errorf(e, -err, "cannot write \"%s\": %s", L->rec_path, strerror(err));
    }
    return czk_fsync_dir(L->rec_dir, e);
}

/* ------------------------------------------------------------ loaders --- */

static void load_digest(void *ctx, const void *p, size_t n)
{
    gpud_keyload *L = ctx;
    XXH3_128bits_update(L->xs, p, n);
}

static int load_progress(void *ctx, uint64_t read, uint64_t checked)
{
    gpud_keyload *L = ctx;
    gpud_circuit *c = &L->g->circuits[L->idx];

    if (read >= L->fsize && !L->t_read_end)
        L->t_read_end = czk_mono_ns();
    atomic_store(&c->key_done, L->base + read + checked);
    return atomic_load(&L->g->keys->stop);
}

/* fills L->why from e (or fmt) and returns rc */
static int load_fail(gpud_keyload *L, int rc, const char *msg)
{
    snprintf(L->why, sizeof(L->why), "%.*s", (int)sizeof(L->why) - 1, msg && msg[0] ? msg : strerror(-rc));
    L->rc = rc < 0 ? rc : -EIO;
    return L->rc;
}

/* waits for the start-up thread's backend: 0, or -ECANCELED / the create's error */
static int wait_backend(struct gpud_keys *K, const czk_backend_ops **ops, czk_backend **b)
{
    int st;
    pthread_mutex_lock(&K->mu);
    while (K->state == 0 && !atomic_load(&K->stop))
        pthread_cond_wait(&K->cv, &K->mu);
    st = K->state;
    *ops = K->ops;
    *b = K->backend;
    pthread_mutex_unlock(&K->mu);
    return st == 1 ? 0 : st < 0 ? -ENODEV : -ECANCELED;
}

/*
 * The restart path: when the record vouches for the file (trusted) and the
 * fd store handed back device memory made from this key (the cuda backend
 * names it "key-<gpu>-<first 24 hex digits of the key id>", backend/keymem.h),
 * waits for the backend and lets it take that memory back: nothing is read
 * or uploaded.  Returns 1 when the circuit has its key that way, 0 when the
 * file must be loaded, or -errno from wait_backend.
 */
static int resume_key(gpud_keyload *L, gpud_circuit *c, const czk_backend_ops **ops, czk_backend **b)
{
    char suffix[CZK_KEYMEM_SUFFIX];
    czk_error e = {0};
    uint64_t t0 = czk_mono_ns();
    int rc;

    czk_keymem_suffix(L->header_id, suffix);
    if (czk_daemon_fdstore_has_suffix(suffix) == 0)
        return 0;
    if ((rc = wait_backend(L->g->keys, ops, b)) < 0)
        return rc;
    if (!(*ops)->resume_key)
        return 0;
    rc = (*ops)->resume_key(*b, L->idx, &c->zkey, &e);
    if (rc < 0) {
        czk_warn("circuit %s: the key memory kept by the previous czk-gpud cannot be used (%s): loading the key "
                 "from %s",
                 L->name, e.msg, L->path);
        return 0;
    }
    if (rc == 0)
        return 0;
    L->upload_s = (double)(czk_mono_ns() - t0) * 1e-9;
    snprintf(L->path_taken, sizeof(L->path_taken),
             "verified-key record matched and the previous czk-gpud's device copy was kept (fd store): nothing read "
             "or uploaded");
    L->keep = (*ops)->keeps_host_points;
    atomic_store(&c->key_done, atomic_load(&c->key_total));
    L->rc = 0;
    return 1;
}

static void load_key(gpud_keyload *L)
{
    gpud *g = L->g;
    struct gpud_keys *K = g->keys;
    gpud_circuit *c = &g->circuits[L->idx];
    czk_zkey_load_opts o;
    key_record rec, now, after;
    const czk_backend_ops *ops;
    czk_backend *b;
    czk_error e = {0};
    struct stat st;
    XXH128_hash_t h;
    uint64_t t0, t1, t2;
    int fd, have_rec, trusted = 0, checked_here = 0, rc;

    if (czk_fault("gpud.start.key_load") < 0) {
        load_fail(L, -EIO, "fault injected at gpud.start.key_load");
        return;
    }
    t0 = czk_mono_ns();
    fd = open(L->path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        rc = czk_errorf(&e, -errno, "%s: cannot open: %s", L->path, strerror(errno));
        load_fail(L, rc, e.msg);
        return;
    }
    if (fstat(fd, &st) < 0) {
        rc = czk_errorf(&e, -errno, "%s: cannot stat: %s", L->path, strerror(errno));
        close(fd);
        load_fail(L, rc, e.msg);
        return;
    }
    identity_of(&st, &now);
    L->fsize = (uint64_t)st.st_size;
    have_rec = record_read(L, &rec) == 0;
    if (have_rec && identity_eq(&rec, &now) && !memcmp(rec.id, L->header_id, sizeof(rec.id)))
        trusted = 1;
    if (trusted && (rc = resume_key(L, c, &ops, &b)) != 0) {
        close(fd);
        if (rc < 0)
            load_fail(L, rc, rc == -ECANCELED ? "czk-gpud is stopping" : "the compute backend could not be created");
        return;
    }
    atomic_store(&c->key_total, L->fsize + (trusted ? 0 : L->points_bytes) + L->points_bytes);
    memset(&o, 0, sizeof(o));
    o.what = CZK_ZKEY_POINTS;
    o.curves = CZK_CURVES_ALL;
    o.skip_point_checks = trusted;
    o.digest = load_digest;
    o.progress = load_progress;
    o.ctx = L;
    XXH3_128bits_reset(L->xs);
    rc = czk_zkey_load_fd(L->z, fd, L->path, &o, &e);
    t1 = czk_mono_ns();
    if (!L->t_read_end)
        L->t_read_end = t1;
    L->read_s = (double)(L->t_read_end - t0) * 1e-9;
    L->check_s = (double)(t1 - L->t_read_end) * 1e-9;
    if (rc == 0 && memcmp(L->z->ident.id, L->header_id, sizeof(L->header_id)) != 0)
        rc = czk_errorf(&e, -ESTALE, "%s: the file changed after czk-gpud read its header (another key id now): "
                        "restart czk-gpud", L->path);
    h = XXH3_128bits_digest(L->xs);
    if (rc == 0 && trusted) {
        uint8_t d[16];
        XXH128_canonicalFromHash((XXH128_canonical_t *)d, h);
        if (memcmp(d, rec.digest, sizeof(d)) != 0) {
            czk_warn("circuit %s: %s has the identity its verified-key record names but another content digest: "
                     "running the full point checks",
                     L->name, L->path);
            trusted = 0;
            atomic_store(&c->key_total, L->fsize + 2 * L->points_bytes);
            L->base = L->fsize; /* read already; the checks count from here */
            rc = czk_zkey_check_points(L->z, L->path, &o, &e);
            t2 = czk_mono_ns();
            L->check_s = (double)(t2 - t1) * 1e-9;
            checked_here = 1;
            snprintf(L->path_taken, sizeof(L->path_taken),
                     "verified-key record did not match (content digest differs): points checked");
        } else {
            snprintf(L->path_taken, sizeof(L->path_taken),
                     "verified-key record matched (identity, key id, content digest): point checks skipped");
        }
    } else if (rc == 0) {
        checked_here = 1;
        snprintf(L->path_taken, sizeof(L->path_taken), "points checked (%s)",
                 have_rec ? "the verified-key record is for another file or key" : "no verified-key record");
    }
    /* the record: only for bytes this thread checked, of a file that did not
     * change while it read it */
    if (rc == 0 && checked_here) {
        if (fstat(fd, &st) == 0 && (identity_of(&st, &after), identity_eq(&after, &now))) {
            czk_error re = {0};
            key_record out = now;
            memcpy(out.id, L->z->ident.id, sizeof(out.id));
            XXH128_canonicalFromHash((XXH128_canonical_t *)out.digest, h);
            czk_fault("gpud.start.before_key_record");
            if (record_write(L, &out, &re) < 0)
                czk_warn("circuit %s: could not write its verified-key record: %s; the next start checks the "
                         "points again",
                         L->name, re.msg);
            else
                czk_fault("gpud.start.after_key_record");
        } else {
            czk_warn("circuit %s: %s changed while it was read: no verified-key record written", L->name, L->path);
        }
    }
    close(fd);
    if (rc < 0) {
        load_fail(L, rc, e.msg);
        return;
    }
    atomic_store(&c->key_done, L->fsize + (checked_here ? L->points_bytes : 0));
    if ((rc = wait_backend(K, &ops, &b)) < 0) {
        load_fail(L, rc, rc == -ECANCELED ? "czk-gpud is stopping" : "the compute backend could not be created");
        return;
    }
    t1 = czk_mono_ns();
    if (czk_fault("gpud.start.key_upload") < 0)
        rc = czk_errorf(&e, -EIO, "fault injected at gpud.start.key_upload");
    else
        rc = ops->add_key(b, L->idx, L->z, &e);
    L->upload_s = (double)(czk_mono_ns() - t1) * 1e-9;
    if (rc < 0) {
        load_fail(L, rc, e.msg);
        return;
    }
    L->keep = ops->keeps_host_points;
    if (!L->keep)
        czk_zkey_close(L->z); /* the backend has its own copy */
    atomic_store(&c->key_done, atomic_load(&c->key_total));
    L->rc = 0;
}

static void *loader_main(void *arg)
{
    gpud_keyload *L = arg;
    load_key(L);
    if (L->rc < 0)
        czk_zkey_close(L->z);
    czk_loop_post(L->g->loop, &L->done_task); /* the last touch of L by this thread */
    return NULL;
}

/* loop thread: a loader is done */
static void on_loaded(czk_loop_task *t, void *ctx)
{
    gpud_keyload *L = ctx;
    gpud *g = L->g;
    gpud_circuit *c = &g->circuits[L->idx];
    (void)t;

    pthread_join(L->th, NULL);
    c->load = NULL;
    c->key_load_s = (double)(gpud_now(g) - c->key_t0) * 1e-9;
    czk_metric_set_f(c->m_load_s, c->key_load_s);
    if (L->rc == 0) {
        c->key_state = GPUD_KEY_READY;
        if (L->keep) {
            c->points = L->z;
            L->z = NULL;
        }
        czk_metric_set(c->m_ready, 1);
        czk_info("circuit %s: key ready in %.3f s: read %.3f s (%.0f MB/s), check %.3f s, upload %.3f s; %s", c->name,
                 c->key_load_s, L->read_s, L->read_s > 0 ? (double)L->fsize / L->read_s * 1e-6 : 0.0, L->check_s,
                 L->upload_s, L->path_taken);
    } else {
        c->key_state = GPUD_KEY_FAILED;
        memcpy(c->key_why, L->why, sizeof(c->key_why)); /* same size, NUL-terminated */
        if (!atomic_load(&g->keys->stop))
            czk_err("circuit %s: its key failed to load after %.3f s: %s; jobs for it are refused, and its active "
                    "jobs wait, until the zkey is fixed and czk-gpud restarted",
                    c->name, c->key_load_s, L->why);
    }
    XXH3_freeState(L->xs);
    free(L->z); /* closed by the thread unless kept */
    free(L);
    /* every loader done: key memory in the fd store that no circuit took back
     * (a circuit removed from the configuration, or a key replaced) goes */
    unsigned loading = 0;
    for (unsigned i = 0; i < g->n_circuits; i++)
        loading += g->circuits[i].load != NULL;
    if (!loading)
        czk_daemon_fdstore_drop_untaken("key-");
    gpud_sched_dirty(g);
}

/* -------------------------------------------------------- the backend --- */

static void *backend_main(void *arg)
{
    struct gpud_keys *K = arg;
    gpud *g = K->g;
    const czk_backend_ops *ops = NULL;
    czk_backend *b = NULL;
    czk_error e = {0};
    int r;

    /* new pools are pre-faulted here, after the sockets answer, and before
     * the backend page-locks them; no slot is assigned before a key is ready,
     * which needs the backend */
    r = 0;
    for (unsigned i = 0; i < g->n_pools && r == 0; i++) {
        czk_error pe = {0};
        if ((r = czk_pool_prefault(&g->pools[i].pool, &pe)) < 0)
            czk_errorf(&e, r, "pool %u: %s", g->pools[i].id, pe.msg);
    }
    czk_fault("gpud.start.backend_create");
    /* a configured cuda backend without a GPU falls back to cpu; a key too
     * big for the device fails only its circuit (add_key) */
    if (r == 0)
        r = czk_backend_open(g->cfg.backend, 1, &K->bc, &ops, &b, &e);
    pthread_mutex_lock(&K->mu);
    K->state = r < 0 ? -1 : 1;
    K->ops = ops;
    K->backend = b;
    K->err = e;
    if (r < 0 && !K->err.msg[0])
        snprintf(K->err.msg, sizeof(K->err.msg), "%s", strerror(-r));
    pthread_cond_broadcast(&K->cv);
    pthread_mutex_unlock(&K->mu);
    czk_loop_post(g->loop, &K->backend_task);
    return NULL;
}

/* loop thread: the start-up thread is done */
static void on_backend(czk_loop_task *t, void *ctx)
{
    struct gpud_keys *K = ctx;
    gpud *g = K->g;
    czk_error e = {0};
    int r;
    (void)t;

    pthread_join(K->th, NULL);
    K->th_started = 0;
    if (K->state < 0) {
        czk_err("could not create the %s backend: %s", g->cfg.backend, K->err.msg);
        czk_daemon_status("failed: %s", K->err.msg);
        g->exit_status = 1;
        czk_loop_stop(g->loop);
        return;
    }
    g->bops = K->ops;
    g->backend = K->backend;
    K->handed = 1;
    if ((r = gpud_workers_start(g, &e)) < 0) {
        czk_err("%s", e.msg);
        czk_daemon_status("failed: %s", e.msg);
        g->exit_status = 1;
        czk_loop_stop(g->loop);
        return;
    }
    czk_info("backend %s ready after %.3f s: %u context(s)", g->bops->name,
             (double)(gpud_now(g) - K->t0) * 1e-9, g->n_workers);
    gpud_sched_dirty(g);
}

/* ----------------------------------------------------------- start/stop --- */

/* starts circuit i's loader thread (its header is c->zkey); -ENOMEM, or 0
 * (a thread that cannot start fails the circuit, logged) */
static int loader_start(gpud *g, unsigned i)
{
    gpud_circuit *c = &g->circuits[i];
    gpud_keyload *L;
    int r;

    c->key_t0 = gpud_now(g);
    L = calloc(1, sizeof(*L));
    if (!L || !(L->xs = XXH3_createState()) || !(L->z = calloc(1, sizeof(*L->z)))) {
        if (L)
            XXH3_freeState(L->xs);
        free(L);
        return -ENOMEM;
    }
    L->g = g;
    L->idx = i;
    L->done_task.fn = on_loaded;
    L->done_task.ctx = L;
    snprintf(L->name, sizeof(L->name), "%s", c->name);
    snprintf(L->path, sizeof(L->path), "%s", g->cfg.circuits[i].zkey);
    snprintf(L->rec_dir, sizeof(L->rec_dir), "%s/keys", g->cfg.state_dir);
    snprintf(L->rec_path, sizeof(L->rec_path), "%s/%s.verified", L->rec_dir, c->name);
    memcpy(L->header_id, c->zkey.ident.id, sizeof(L->header_id));
    L->points_bytes = czk_zkey_points_bytes(&c->zkey);
    atomic_store(&c->key_done, 0);
    atomic_store(&c->key_total, c->zkey.ident.stamp.size + 2 * L->points_bytes);
    if ((r = pthread_create(&L->th, NULL, loader_main, L)) != 0) {
        XXH3_freeState(L->xs);
        free(L->z);
        free(L);
        c->key_state = GPUD_KEY_FAILED;
        snprintf(c->key_why, sizeof(c->key_why), "could not start its loader thread: %s", strerror(r));
        czk_err("circuit %s: %s", c->name, c->key_why);
        return 0;
    }
    c->load = L;
    return 0;
}

int gpud_keys_replace(gpud *g, unsigned i, czk_zkey *nz, czk_error *e)
{
    gpud_circuit *c = &g->circuits[i];
    char id[CZK_ZKEY_ID_HEX];
    int r;

    if (!g->bops || !g->bops->remove_key || c->load) {
        czk_zkey_close(nz);
        return czk_errorf(e, -EBUSY, "the key cannot be replaced now (backend %s, loader %s)",
                          g->bops ? "without remove_key" : "starting", c->load ? "running" : "idle");
    }
    g->bops->remove_key(g->backend, i);
    if (c->points) {
        czk_zkey_close(c->points);
        free(c->points);
        c->points = NULL;
    }
    {
        /* the new header takes the old one's place before the old one is
         * closed (czk_zkey_close zeroes what it closes), so c->zkey never
         * reads as an empty key; only the loop reads it (the intake thread
         * has its own copy of the sizes, intake.c).  Same sizes: the
         * backend's config entry (&c->zkey) still holds */
        czk_zkey old = c->zkey;
        c->zkey = *nz;
        memset(nz, 0, sizeof(*nz));
        czk_zkey_close(&old);
    }
    c->key_state = GPUD_KEY_LOADING;
    c->key_why[0] = 0;
    czk_metric_set(c->m_ready, 0);
    czk_zkey_id_hex(&c->zkey, id);
    czk_info("circuit %s: the jobs accepted before the reload are done: loading key id %s", c->name, id);
    if ((r = loader_start(g, i)) < 0) {
        c->key_state = GPUD_KEY_FAILED;
        snprintf(c->key_why, sizeof(c->key_why), "out of memory for its loader");
        return czk_errorf(e, r, "could not start the loader of the new key: out of memory");
    }
    return 0;
}

int gpud_keys_start(gpud *g, czk_error *e)
{
    struct gpud_keys *K = calloc(1, sizeof(*K));
    unsigned n_regions = 0;
    int r;

    if (!K)
        return czk_errorf(e, -ENOMEM, "out of memory");
    g->keys = K;
    K->g = g;
    K->t0 = gpud_now(g);
    pthread_mutex_init(&K->mu, NULL);
    pthread_cond_init(&K->cv, NULL);
    K->backend_task.fn = on_backend;
    K->backend_task.ctx = K;
    for (unsigned i = 0; i < g->n_pools; i++)
        n_regions += g->pools[i].pool.hdr->slot_count;
    K->zkeys = calloc(g->n_circuits ? g->n_circuits : 1, sizeof(*K->zkeys));
    K->regions = calloc(n_regions ? n_regions : 1, sizeof(*K->regions));
    if (!K->zkeys || !K->regions)
        return czk_errorf(e, -ENOMEM, "out of memory");
    for (unsigned i = 0; i < g->n_circuits; i++)
        K->zkeys[i] = g->circuits[i].header_ok ? &g->circuits[i].zkey : NULL;
    K->bc.n_circuits = g->n_circuits;
    K->bc.zkeys = K->zkeys;
    K->bc.defer_keys = 1;
    K->bc.threads = g->cfg.gpud_threads;
    K->bc.contexts = (unsigned)g->cfg.gpud_contexts;
    for (unsigned i = 0; i < g->n_circuits; i++)
        K->tables_on[i] = strcmp(g->cfg.circuits[i].msm_tables, "off") != 0;
    K->bc.tables_on = K->tables_on;
    K->bc.table_reserve = (size_t)g->cfg.msm_table_reserve_mb << 20;
    /* The backend may page-lock the pools for DMA.  One region per slot: CUDA
     * refuses (cudaErrorInvalidValue) an async copy whose source straddles two
     * separately registered ranges, and a copy never leaves its slot. */
    n_regions = 0;
    for (unsigned i = 0; i < g->n_pools; i++)
        for (uint32_t s = 0; s < g->pools[i].pool.hdr->slot_count; s++) {
            K->regions[n_regions].base = czk_slot_data(&g->pools[i].pool, s);
            K->regions[n_regions].len = g->pools[i].pool.hdr->slot_stride;
            n_regions++;
        }
    K->bc.regions = K->regions;
    K->bc.n_regions = n_regions;
    if ((r = pthread_create(&K->th, NULL, backend_main, K)) != 0)
        return czk_errorf(e, -r, "could not start the backend's start-up thread: %s", strerror(r));
    K->th_started = 1;
    for (unsigned i = 0; i < g->n_circuits; i++)
        if (g->circuits[i].header_ok && (r = loader_start(g, i)) == -ENOMEM)
            return czk_errorf(e, r, "out of memory");
    return 0;
}

void gpud_keys_stop(gpud *g)
{
    struct gpud_keys *K = g->keys;

    if (!K)
        return;
    atomic_store(&K->stop, 1);
    pthread_mutex_lock(&K->mu);
    pthread_cond_broadcast(&K->cv);
    pthread_mutex_unlock(&K->mu);
    /* a loader stops at its next 64 MiB; its done task, posted or not, does not run any more */
    for (unsigned i = 0; i < g->n_circuits; i++) {
        gpud_keyload *L = g->circuits[i].load;
        if (!L)
            continue;
        pthread_join(L->th, NULL);
        g->circuits[i].load = NULL;
        if (L->rc == 0 && L->keep) {
            g->circuits[i].points = L->z; /* the backend reads it until it is destroyed */
        } else {
            czk_zkey_close(L->z);
            free(L->z);
        }
        XXH3_freeState(L->xs);
        free(L);
    }
    if (K->th_started) {
        pthread_join(K->th, NULL);
        K->th_started = 0;
    }
    if (!K->handed && K->state == 1) {
        /* created, but the loop stopped before it took it: main destroys it */
        g->bops = K->ops;
        g->backend = K->backend;
        K->handed = 1;
    }
}

void gpud_keys_close(gpud *g)
{
    struct gpud_keys *K = g->keys;

    if (!K)
        return;
    pthread_mutex_destroy(&K->mu);
    pthread_cond_destroy(&K->cv);
    free(K->zkeys);
    free(K->regions);
    free(K);
    g->keys = NULL;
}

const char *gpud_keys_state(const gpud *g)
{
    return g->bops ? "running" : "starting";
}

void gpud_keys_status(const gpud *g, czk_status_reply *sr)
{
    static const char *names[] = {"loading", "ready", "failed"};
    uint64_t now = gpud_now((gpud *)g);

    snprintf(sr->state, sizeof(sr->state), "%s", gpud_keys_state(g));
    sr->n_circuits = 0;
    for (unsigned i = 0; i < g->n_circuits && sr->n_circuits < CZK_STATUS_MAX_CIRCUITS; i++) {
        const gpud_circuit *c = &g->circuits[i];
        czk_status_circuit *o = &sr->circuits[sr->n_circuits++];
        memset(o, 0, sizeof(*o));
        czk_esc(c->name, o->name, sizeof(o->name));
        if (c->header_ok) {
            czk_zkey_id_hex(&c->zkey, o->key_id);
            snprintf(o->curve, sizeof(o->curve), "%s", czk_curve_snarkjs(c->zkey.curve));
        }
        snprintf(o->state, sizeof(o->state), "%s", names[c->key_state]);
        o->progress = gpud_key_progress(c);
        if (c->key_state == GPUD_KEY_LOADING)
            o->load_s = c->key_t0 && now > c->key_t0 ? (double)(now - c->key_t0) * 1e-9 : 0.0;
        else
            o->load_s = c->key_load_s;
        if (c->key_state == GPUD_KEY_FAILED)
            snprintf(o->reason, sizeof(o->reason), "%s", c->key_why);
    }
}

void gpud_keys_metrics(gpud *g)
{
    char label[96];

    for (unsigned i = 0; i < g->n_circuits; i++) {
        gpud_circuit *c = &g->circuits[i];
        /* circuit names are [-_.0-9A-Za-z] (the configuration allows no other): no label escaping needed */
        snprintf(label, sizeof(label), "circuit=\"%s\"", c->name);
        c->m_ready = czk_metrics_add(g->metrics, CZK_METRIC_GAUGE, "czk_gpud_circuit_ready", label,
                                     "1 once the circuit's proving key is loaded and its partitions are scheduled");
        czk_metric_set(c->m_ready, c->key_state == GPUD_KEY_READY);
        c->m_load_s = czk_metrics_add(g->metrics, CZK_METRIC_GAUGE, "czk_gpud_key_load_seconds", label,
                                      "how long the circuit's key took to load (read, check, upload), ready or "
                                      "failed");
        czk_metric_set_f(c->m_load_s, c->key_load_s);
    }
}
