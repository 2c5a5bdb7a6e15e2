/*
 * trace.c — per-process stage tracing (trace.h, docs/tracing.md): a bounded
 * lock-free multi-producer ring flushed by one thread into an append-only
 * file, the reader, the Chrome/Perfetto JSON export, and the busy/idle
 * arithmetic of gpud's STATUS.
 *
 * Ring (Vyukov's bounded queue, one consumer): cell i carries a sequence
 * number.  A producer claims position p by CAS on `head` when cell p's
 * sequence equals p, fills the record and publishes it by storing p + 1
 * (release).  The flusher consumes position p when the sequence is p + 1,
 * copies the record and hands the cell back for position p + size by storing
 * p + size (release).  A producer that finds the cell of its position still
 * unconsumed (sequence < p) drops the record and counts it: nothing waits.
 * Only the flushing thread touches `tail`, the file and the write buffer.
 */
#include "common/base/clock.h"
#include "common/runtime/trace.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "common/base/log.h"

typedef struct trace_cell {
    _Atomic uint64_t seq;
    czk_trace_rec r;
} trace_cell;

static struct {
    _Atomic int enabled;
    trace_cell *ring;
    uint64_t size; /* power of two */
    _Atomic uint64_t head;
    uint64_t tail;              /* flusher */
    _Atomic uint64_t dropped;
    int fd;                     /* flusher */
    uint64_t bytes;             /* flusher: size of the current file */
    czk_trace_rec *wbuf;        /* flusher: batch for write() */
    int last_errno;             /* flusher: last failure logged */
    char path[512];
    char prog[32];
    uint32_t pid;
} T = {.fd = -1};

static __thread uint32_t my_tid;

uint64_t czk_trace_now(void) { return czk_mono_ns(); }

static int64_t real_minus_mono(void)
{
    struct timespec r, m;
    clock_gettime(CLOCK_REALTIME, &r);
    clock_gettime(CLOCK_MONOTONIC, &m);
    return ((int64_t)r.tv_sec - (int64_t)m.tv_sec) * 1000000000ll + ((int64_t)r.tv_nsec - (int64_t)m.tv_nsec);
}

const char *czk_trace_stage_name(unsigned stage, char buf[16])
{
    static const char *const names[CZK_TRACE_STAGE_MAX + 1] = {
        NULL,    "synth",  "ready",  "copy",  "h",        "msm_a",    "msm_b1",
        "msm_b2", "msm_c", "msm_h", "compute", "result_sent", "finalize", "slot_verify", "h2d",
    };
    if (stage >= 1 && stage <= CZK_TRACE_STAGE_MAX)
        return names[stage];
    snprintf(buf, 16, "stage%u", stage);
    return buf;
}

void czk_trace_dir(const char *state_dir, char *buf, size_t n) { snprintf(buf, n, "%s/trace", state_dir); }

int czk_trace_enabled(void) { return atomic_load_explicit(&T.enabled, memory_order_acquire); }

const char *czk_trace_path(void) { return czk_trace_enabled() ? T.path : ""; }

uint64_t czk_trace_dropped(void) { return atomic_load_explicit(&T.dropped, memory_order_relaxed); }

static int mkdir_p(const char *dir)
{
    char tmp[512];
    size_t len = strlen(dir);
    if (len == 0 || len >= sizeof(tmp))
        return -ENAMETOOLONG;
    memcpy(tmp, dir, len + 1);
    for (char *p = tmp + 1; *p; p++) {
        if (*p != '/')
            continue;
        *p = 0;
        if (mkdir(tmp, 0750) < 0 && errno != EEXIST)
            return -errno;
        *p = '/';
    }
    if (mkdir(tmp, 0750) < 0 && errno != EEXIST)
        return -errno;
    return 0;
}

/* creates (or empties) T.path and writes the header: a file is one process's
 * records (an older file with our pid is from a process that is gone) */
static int open_file(czk_error *e)
{
    czk_trace_file_hdr h;
    int fd = open(T.path, O_WRONLY | O_CREAT | O_TRUNC | O_APPEND | O_CLOEXEC, 0640);

    if (fd < 0)
        return czk_errorf(e, -errno, "cannot open trace file \"%s\": %s", T.path, strerror(errno));
    memset(&h, 0, sizeof(h));
    memcpy(h.magic, CZK_TRACE_MAGIC, 8);
    h.version = CZK_TRACE_VERSION;
    h.rec_size = sizeof(czk_trace_rec);
    h.pid = T.pid;
    h.real_minus_mono = real_minus_mono();
    snprintf(h.prog, sizeof(h.prog), "%s", T.prog);
    if (write(fd, &h, sizeof(h)) != (ssize_t)sizeof(h)) {
        int r = errno ? -errno : -EIO;
        close(fd);
        return czk_errorf(e, r, "cannot write trace file \"%s\": %s", T.path, strerror(-r));
    }
    T.fd = fd;
    T.bytes = sizeof(h);
    return 0;
}

int czk_trace_open(const char *dir, const char *prog, unsigned ring, czk_error *e)
{
    uint64_t size = 16384;
    int r;

    if (czk_trace_enabled())
        return czk_errorf(e, -EALREADY, "trace already open (\"%s\")", T.path);
    if (ring) {
        size = 64;
        while (size < ring)
            size <<= 1;
    }
    if ((r = mkdir_p(dir)) < 0)
        return czk_errorf(e, r, "cannot create trace directory \"%s\": %s", dir, strerror(-r));
    T.pid = (uint32_t)getpid();
    snprintf(T.prog, sizeof(T.prog), "%s", prog);
    if ((size_t)snprintf(T.path, sizeof(T.path), "%s/%s-%u.trace", dir, prog, T.pid) >= sizeof(T.path))
        return czk_errorf(e, -ENAMETOOLONG, "trace directory name too long: \"%s\"", dir);
    free(T.ring); /* from an earlier open/close (tests) */
    free(T.wbuf);
    T.ring = calloc(size, sizeof(trace_cell));
    T.wbuf = calloc(size, sizeof(czk_trace_rec));
    if (!T.ring || !T.wbuf) {
        free(T.ring);
        free(T.wbuf);
        T.ring = NULL;
        T.wbuf = NULL;
        return czk_errorf(e, -ENOMEM, "out of memory for a trace ring of %" PRIu64 " records", size);
    }
    if ((r = open_file(e)) < 0) {
        free(T.ring);
        free(T.wbuf);
        T.ring = NULL;
        T.wbuf = NULL;
        return r;
    }
    for (uint64_t i = 0; i < size; i++)
        atomic_init(&T.ring[i].seq, i);
    T.size = size;
    atomic_store(&T.head, 0);
    T.tail = 0;
    atomic_store(&T.dropped, 0);
    T.last_errno = 0;
    atomic_store_explicit(&T.enabled, 1, memory_order_release);
    return 0;
}

void czk_trace_close(void)
{
    if (!czk_trace_enabled())
        return;
    czk_trace_flush();
    atomic_store_explicit(&T.enabled, 0, memory_order_release);
    /* producers still racing this close find enabled == 0 before touching the
     * ring; the ring itself is kept (a few hundred KiB) so that one that
     * passed the check just before cannot write into freed memory */
    close(T.fd);
    T.fd = -1;
}

void czk_trace_add(uint64_t job, uint32_t partition, unsigned stage, uint64_t begin_ns, uint64_t end_ns)
{
    uint64_t pos;
    trace_cell *c;

    if (!atomic_load_explicit(&T.enabled, memory_order_acquire))
        return;
    if (!my_tid)
        my_tid = (uint32_t)syscall(SYS_gettid);
    pos = atomic_load_explicit(&T.head, memory_order_relaxed);
    for (;;) {
        uint64_t seq;
        c = &T.ring[pos & (T.size - 1)];
        seq = atomic_load_explicit(&c->seq, memory_order_acquire);
        if (seq == pos) {
            if (atomic_compare_exchange_weak_explicit(&T.head, &pos, pos + 1, memory_order_relaxed,
                                                      memory_order_relaxed))
                break;
        } else if (seq < pos) {
            atomic_fetch_add_explicit(&T.dropped, 1, memory_order_relaxed);
            return;
        } else {
            pos = atomic_load_explicit(&T.head, memory_order_relaxed);
        }
    }
    c->r.job = job;
    c->r.partition = partition;
    c->r.stage = (uint16_t)stage;
    c->r.flags = 0;
    c->r.begin_ns = begin_ns;
    c->r.end_ns = end_ns < begin_ns ? begin_ns : end_ns;
    c->r.pid = T.pid;
    c->r.tid = my_tid;
    atomic_store_explicit(&c->seq, pos + 1, memory_order_release);
}

static void rotate(void)
{
    char old[sizeof(T.path) + 8];
    czk_error e = {0};

    snprintf(old, sizeof(old), "%s.old", T.path);
    close(T.fd);
    T.fd = -1;
    if (rename(T.path, old) < 0)
        czk_warn("cannot rename trace file \"%s\" to \"%s\": %s (starting it over)", T.path, old, strerror(errno));
    if (open_file(&e) < 0) {
        czk_warn("%s: tracing stops", e.msg);
        atomic_store_explicit(&T.enabled, 0, memory_order_release);
    }
}

int czk_trace_flush(void)
{
    size_t n = 0;
    ssize_t w;

    if (!czk_trace_enabled() || T.fd < 0)
        return 0;
    for (;;) {
        trace_cell *c = &T.ring[T.tail & (T.size - 1)];
        if (atomic_load_explicit(&c->seq, memory_order_acquire) != T.tail + 1)
            break;
        T.wbuf[n++] = c->r;
        atomic_store_explicit(&c->seq, T.tail + T.size, memory_order_release);
        T.tail++;
        if (n == T.size)
            break;
    }
    if (n == 0)
        return 0;
    w = write(T.fd, T.wbuf, n * sizeof(czk_trace_rec));
    if (w != (ssize_t)(n * sizeof(czk_trace_rec))) {
        int err = w < 0 ? errno : EIO;
        if (w > 0) /* a short write: keep the file a whole number of records */
            if (ftruncate(T.fd, (off_t)T.bytes) < 0)
                err = errno;
        if (err != T.last_errno)
            czk_warn("cannot append %zu records to trace file \"%s\": %s", n, T.path, strerror(err));
        T.last_errno = err;
        return -err;
    }
    T.last_errno = 0;
    T.bytes += (uint64_t)w;
    if (T.bytes >= CZK_TRACE_MAX_BYTES)
        rotate();
    return (int)n;
}

/* ------------------------------------------------------------ reading --- */

int czk_trace_read(const char *path, czk_trace_file *f, czk_error *e)
{
    FILE *fp = fopen(path, "rb");
    struct stat st;
    size_t n;

    memset(f, 0, sizeof(*f));
    snprintf(f->path, sizeof(f->path), "%s", path);
    if (!fp)
        return czk_errorf(e, -errno, "cannot open trace file \"%s\": %s", path, strerror(errno));
    if (fstat(fileno(fp), &st) < 0 || fread(&f->hdr, sizeof(f->hdr), 1, fp) != 1) {
        fclose(fp);
        return czk_errorf(e, -EINVAL, "\"%s\" is not a czk trace file (shorter than its header)", path);
    }
    if (memcmp(f->hdr.magic, CZK_TRACE_MAGIC, 8) || f->hdr.version != CZK_TRACE_VERSION ||
        f->hdr.rec_size != sizeof(czk_trace_rec)) {
        fclose(fp);
        return czk_errorf(e, -EINVAL, "\"%s\" is not a czk trace file of version %u (magic, version or record size)",
                          path, CZK_TRACE_VERSION);
    }
    f->hdr.prog[sizeof(f->hdr.prog) - 1] = 0;
    n = ((size_t)st.st_size - sizeof(f->hdr)) / sizeof(czk_trace_rec);
    f->recs = malloc((n ? n : 1) * sizeof(czk_trace_rec));
    if (!f->recs) {
        fclose(fp);
        return czk_errorf(e, -ENOMEM, "out of memory reading %zu records of \"%s\"", n, path);
    }
    f->n = fread(f->recs, sizeof(czk_trace_rec), n, fp);
    fclose(fp);
    return 0;
}

void czk_trace_file_free(czk_trace_file *f)
{
    free(f->recs);
    f->recs = NULL;
    f->n = 0;
}

static int is_trace_name(const char *s)
{
    size_t l = strlen(s);
    return (l > 6 && !strcmp(s + l - 6, ".trace")) || (l > 10 && !strcmp(s + l - 10, ".trace.old"));
}

static int cmp_name(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

int czk_trace_read_dir(const char *dir, czk_trace_file **files, size_t *n, czk_error *e)
{
    DIR *d = opendir(dir);
    struct dirent *de;
    char **names = NULL;
    size_t nn = 0, cap = 0;
    czk_trace_file *out = NULL;
    int r = 0;

    *files = NULL;
    *n = 0;
    if (!d)
        return czk_errorf(e, -errno, "cannot open trace directory \"%s\": %s", dir, strerror(errno));
    while ((de = readdir(d))) {
        if (!is_trace_name(de->d_name))
            continue;
        if (nn == cap) {
            char **t = realloc(names, (cap = cap ? cap * 2 : 16) * sizeof(*names));
            if (!t) {
                r = czk_errorf(e, -ENOMEM, "out of memory listing \"%s\"", dir);
                goto out;
            }
            names = t;
        }
        if (!(names[nn] = strdup(de->d_name))) {
            r = czk_errorf(e, -ENOMEM, "out of memory listing \"%s\"", dir);
            goto out;
        }
        nn++;
    }
    if (nn)
        qsort(names, nn, sizeof(*names), cmp_name);
    out = calloc(nn ? nn : 1, sizeof(*out));
    if (!out) {
        r = czk_errorf(e, -ENOMEM, "out of memory reading \"%s\"", dir);
        goto out;
    }
    for (size_t i = 0; i < nn; i++) {
        char path[1024];
        czk_error fe = {0};
        snprintf(path, sizeof(path), "%s/%s", dir, names[i]);
        if (czk_trace_read(path, &out[*n], &fe) < 0) {
            if (fe.code == -ENOMEM) {
                r = czk_errorf(e, -ENOMEM, "%s", fe.msg);
                goto out;
            }
            czk_warn("%s: skipped", fe.msg);
            continue;
        }
        (*n)++;
    }
    *files = out;
    out = NULL;
out:
    if (out) {
        czk_trace_files_free(out, *n);
        *n = 0;
    }
    for (size_t i = 0; i < nn; i++)
        free(names[i]);
    free(names);
    closedir(d);
    return r;
}

void czk_trace_files_free(czk_trace_file *files, size_t n)
{
    for (size_t i = 0; files && i < n; i++)
        czk_trace_file_free(&files[i]);
    free(files);
}

/* a program name from a file header, JSON-safe */
static void json_name(char *dst, size_t n, const char *src)
{
    size_t j = 0;
    for (size_t i = 0; src[i] && j + 1 < n; i++) {
        unsigned char c = (unsigned char)src[i];
        dst[j++] = (c < 0x20 || c >= 0x7f || c == '"' || c == '\\') ? '_' : (char)c;
    }
    dst[j] = 0;
}

long czk_trace_export_json(const czk_trace_file *files, size_t n, uint64_t since_ns, FILE *out, czk_error *e)
{
    long count = 0;
    int first = 1;

    fputs("{\"displayTimeUnit\":\"ms\",\"traceEvents\":[\n", out);
    for (size_t i = 0; i < n; i++) {
        char prog[40];
        json_name(prog, sizeof(prog), files[i].hdr.prog);
        fprintf(out, "%s{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":%u,\"tid\":%u,\"args\":{\"name\":\"%s\"}}",
                first ? "" : ",\n", files[i].hdr.pid, files[i].hdr.pid, prog);
        first = 0;
    }
    for (size_t i = 0; i < n; i++) {
        char prog[40];
        json_name(prog, sizeof(prog), files[i].hdr.prog);
        for (size_t k = 0; k < files[i].n; k++) {
            const czk_trace_rec *r = &files[i].recs[k];
            char buf[16];
            uint64_t dur = r->end_ns >= r->begin_ns ? r->end_ns - r->begin_ns : 0;
            if (r->end_ns < since_ns)
                continue;
            /* µs with ns precision: %llu.%03llu keeps every digit (a double would round) */
            fprintf(out,
                    "%s{\"name\":\"%s\",\"cat\":\"%s\",\"ph\":\"X\",\"pid\":%u,\"tid\":%u,"
                    "\"ts\":%llu.%03llu,\"dur\":%llu.%03llu,\"args\":{\"job\":%llu,\"partition\":%u}}",
                    first ? "" : ",\n", czk_trace_stage_name(r->stage, buf), prog, r->pid, r->tid,
                    (unsigned long long)(r->begin_ns / 1000), (unsigned long long)(r->begin_ns % 1000),
                    (unsigned long long)(dur / 1000), (unsigned long long)(dur % 1000), (unsigned long long)r->job,
                    r->partition);
            first = 0;
            count++;
        }
    }
    fputs("\n]}\n", out);
    if (fflush(out) == EOF || ferror(out))
        return czk_errorf(e, -EIO, "cannot write the JSON trace: %s", strerror(errno ? errno : EIO));
    return count;
}

/* ---------------------------------------------------------- busy time --- */

void czk_trace_hist_add(czk_trace_hist *h, uint64_t begin_ns, uint64_t end_ns)
{
    h->s[h->pos].begin_ns = begin_ns;
    h->s[h->pos].end_ns = end_ns < begin_ns ? begin_ns : end_ns;
    h->pos = (h->pos + 1) % CZK_TRACE_HIST;
    if (h->n < CZK_TRACE_HIST)
        h->n++;
}

static int cmp_span(const void *a, const void *b)
{
    const czk_trace_span *x = a, *y = b;
    return x->begin_ns < y->begin_ns ? -1 : x->begin_ns > y->begin_ns;
}

void czk_trace_busy_spans(czk_trace_span *s, size_t n, uint64_t t0, uint64_t t1, double *busy_pct,
                          uint64_t *max_gap_ns)
{
    uint64_t busy = 0, gap = 0, cur = t0; /* cur: the window is accounted for up to here */

    if (t1 <= t0) {
        *busy_pct = 0;
        *max_gap_ns = 0;
        return;
    }
    if (n)
        qsort(s, n, sizeof(*s), cmp_span);
    for (size_t i = 0; i < n; i++) {
        uint64_t b = s[i].begin_ns < t0 ? t0 : s[i].begin_ns;
        uint64_t e = s[i].end_ns > t1 ? t1 : s[i].end_ns;
        if (e <= b || e <= cur)
            continue; /* outside the window or inside what is already counted */
        if (b > cur) {
            if (b - cur > gap)
                gap = b - cur;
            busy += e - b;
        } else {
            busy += e - cur;
        }
        cur = e;
    }
    if (t1 - cur > gap)
        gap = t1 - cur;
    *busy_pct = 100.0 * (double)busy / (double)(t1 - t0);
    *max_gap_ns = gap;
}

int czk_trace_busy(const czk_trace_hist *h, const czk_trace_span *extra, size_t n_extra, uint64_t t0,
                   uint64_t t1, double *busy_pct, uint64_t *max_gap_ns)
{
    size_t n = h->n + n_extra;
    czk_trace_span *s;

    if (t1 <= t0)
        return -EINVAL;
    s = malloc((n ? n : 1) * sizeof(*s));
    if (!s)
        return -ENOMEM;
    memcpy(s, h->s, h->n * sizeof(*s)); /* the ring's first n cells are the valid ones */
    for (size_t i = 0; i < n_extra; i++)
        s[h->n + i] = extra[i];
    czk_trace_busy_spans(s, n, t0, t1, busy_pct, max_gap_ns);
    free(s);
    return 0;
}
