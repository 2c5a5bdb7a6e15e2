/*
 * test_trace.c — common/trace: records written by several threads come back
 * exactly once with every field; a full ring drops and counts; the reader
 * skips a torn trailing record and rejects files that are not traces; the
 * Chrome JSON export parses with jansson and carries each record's stage,
 * pid/tid, job/partition and duration as recorded; the busy/gap arithmetic
 * agrees with a bitmap oracle on random overlapping spans.
 *
 *   test_trace SCRATCH_DIR
 */
#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "common/runtime/trace.h"
#include "tests/backend/bk_test.h"

/* ---------------------------------------------------------- round trip --- */

#define NTHREADS 4
#define PER_THREAD 3000

static atomic_int producers_done;

typedef struct {
    int id;
    uint64_t seed;
} prod_arg;

/* record k of thread t: all fields derived from (t, k, seed) so the reader can check them */
static void expected(int t, uint32_t k, uint64_t seed, uint64_t *job, uint32_t *part, unsigned *stage,
                     uint64_t *b, uint64_t *e)
{
    uint64_t x = seed ^ ((uint64_t)t << 40) ^ k;
    x *= 0x9e3779b97f4a7c15ull;
    *job = ((uint64_t)t << 32) | k; /* unique: identifies the record */
    *part = (uint32_t)(x >> 40);
    *stage = 1 + (unsigned)(x % CZK_TRACE_STAGE_MAX);
    *b = 1000000000000ull + (x >> 20);
    *e = *b + (x & 0xfffff);
}

static void *producer(void *p)
{
    prod_arg *a = p;
    for (uint32_t k = 0; k < PER_THREAD; k++) {
        uint64_t job, b, e;
        uint32_t part;
        unsigned stage;
        expected(a->id, k, a->seed, &job, &part, &stage, &b, &e);
        czk_trace_add(job, part, stage, b, e);
        if (k % 64 == 0)
            sched_yield();
    }
    atomic_fetch_add(&producers_done, 1);
    return NULL;
}

static void test_roundtrip(const char *dir)
{
    pthread_t th[NTHREADS];
    prod_arg args[NTHREADS];
    czk_error e = {0};
    czk_trace_file f;
    uint64_t seed = t_rand64();
    static unsigned char seen[NTHREADS][PER_THREAD];
    long flushed = 0;
    int r;

    r = czk_trace_open(dir, "test-trace", 1024, &e);
    CHECK(r == 0, "open: %s", e.msg);
    CHECK(czk_trace_enabled(), "enabled after open");
    for (int t = 0; t < NTHREADS; t++) {
        args[t].id = t;
        args[t].seed = seed;
        CHECK(pthread_create(&th[t], NULL, producer, &args[t]) == 0, "pthread_create");
    }
    /* flush while the producers run, as a daemon's loop does; the ring (1024)
     * is smaller than what is produced (12000): drops are allowed when we do
     * not keep up, but every record is either in the file or counted */
    while (atomic_load(&producers_done) < NTHREADS) {
        r = czk_trace_flush();
        CHECK(r >= 0, "flush: %d", r);
        flushed += r;
    }
    for (int t = 0; t < NTHREADS; t++)
        pthread_join(th[t], NULL);
    r = czk_trace_flush();
    CHECK(r >= 0, "flush: %d", r);
    flushed += r;
    uint64_t dropped = czk_trace_dropped();
    char path[600];
    snprintf(path, sizeof(path), "%s", czk_trace_path());
    czk_trace_close();
    CHECK(!czk_trace_enabled(), "disabled after close");
    czk_trace_add(1, 1, CZK_TRACE_H, 1, 2); /* a no-op now, must not crash */
    CHECK(flushed + (long)dropped == NTHREADS * PER_THREAD, "flushed %ld + dropped %llu != %d", flushed,
          (unsigned long long)dropped, NTHREADS * PER_THREAD);

    r = czk_trace_read(path, &f, &e);
    CHECK(r == 0, "read: %s", e.msg);
    CHECK(!memcmp(f.hdr.magic, CZK_TRACE_MAGIC, 8) && f.hdr.pid == (uint32_t)getpid() &&
              !strcmp(f.hdr.prog, "test-trace"),
          "header: pid %u prog %s", f.hdr.pid, f.hdr.prog);
    CHECK((long)f.n == flushed, "read %zu records, flushed %ld", f.n, flushed);
    uint32_t tids[NTHREADS] = {0};
    for (size_t i = 0; i < f.n; i++) {
        const czk_trace_rec *x = &f.recs[i];
        int t = (int)(x->job >> 32);
        uint32_t k = (uint32_t)x->job;
        uint64_t job, b, en;
        uint32_t part;
        unsigned stage;
        CHECK(t < NTHREADS && k < PER_THREAD, "record %zu: job %llx is nobody's", i, (unsigned long long)x->job);
        CHECK(!seen[t][k], "record of thread %d #%u twice", t, k);
        seen[t][k] = 1;
        expected(t, k, seed, &job, &part, &stage, &b, &en);
        CHECK(x->partition == part && x->stage == stage && x->begin_ns == b && x->end_ns == en && x->flags == 0,
              "record %zu: fields differ from what was recorded", i);
        CHECK(x->pid == (uint32_t)getpid() && x->tid != 0, "record %zu: pid %u tid %u", i, x->pid, x->tid);
        if (!tids[t])
            tids[t] = x->tid;
        CHECK(tids[t] == x->tid, "thread %d has two tids", t);
        if (i > 0 && (int)(f.recs[i - 1].job >> 32) == t)
            CHECK((uint32_t)f.recs[i - 1].job < k, "thread %d: records out of order", t);
    }
    for (int t = 0; t < NTHREADS; t++)
        for (int u = t + 1; u < NTHREADS; u++)
            CHECK(!tids[t] || tids[t] != tids[u], "threads %d and %d share tid %u", t, u, tids[t]);
    czk_trace_file_free(&f);
    fprintf(stderr, "round trip: %ld records from %d threads, %llu dropped\n", flushed, NTHREADS,
            (unsigned long long)dropped);
}

/* a full ring drops (and counts) instead of waiting */
static void test_drop(const char *dir)
{
    czk_error e = {0};
    czk_trace_file f;
    char path[600];
    int r = czk_trace_open(dir, "test-drop", 64, &e);
    CHECK(r == 0, "open: %s", e.msg);
    for (int i = 0; i < 100; i++)
        czk_trace_add((uint64_t)i, 0, CZK_TRACE_COPY, 10, 20);
    CHECK(czk_trace_dropped() == 36, "dropped %llu, expected 36", (unsigned long long)czk_trace_dropped());
    CHECK(czk_trace_flush() == 64, "flush of a full ring");
    czk_trace_add(1000, 0, CZK_TRACE_COPY, 10, 20); /* room again */
    snprintf(path, sizeof(path), "%s", czk_trace_path());
    czk_trace_close(); /* flushes the last one */
    r = czk_trace_read(path, &f, &e);
    CHECK(r == 0, "read: %s", e.msg);
    CHECK(f.n == 65, "%zu records, expected 65", f.n);
    for (size_t i = 0; i < 64; i++)
        CHECK(f.recs[i].job == i, "record %zu is job %llu: the first 64 must be kept", i,
              (unsigned long long)f.recs[i].job);
    CHECK(f.recs[64].job == 1000, "last record");
    czk_trace_file_free(&f);

    /* a torn trailing record (writer died mid-write) is ignored */
    FILE *fp = fopen(path, "ab");
    CHECK(fp && fwrite("0123456789", 1, 10, fp) == 10 && fclose(fp) == 0, "append garbage");
    r = czk_trace_read(path, &f, &e);
    CHECK(r == 0 && f.n == 65, "torn tail: r %d n %zu", r, f.n);
    czk_trace_file_free(&f);
}

/* ---------------------------------------------------------------- JSON --- */

static void test_json(const char *dir)
{
    enum { N1 = 200, N2 = 50 };
    czk_trace_file files[2];
    czk_error e = {0};
    char jpath[600];
    json_error_t je;
    uint64_t since;

    memset(files, 0, sizeof(files));
    /* two synthetic processes, records at realistic CLOCK_MONOTONIC values */
    memcpy(files[0].hdr.magic, CZK_TRACE_MAGIC, 8);
    files[0].hdr.pid = 4242;
    snprintf(files[0].hdr.prog, sizeof(files[0].hdr.prog), "czk-gpud");
    memcpy(files[1].hdr.magic, CZK_TRACE_MAGIC, 8);
    files[1].hdr.pid = 777;
    snprintf(files[1].hdr.prog, sizeof(files[1].hdr.prog), "czk-synth");
    files[0].n = N1;
    files[1].n = N2;
    files[0].recs = calloc(N1, sizeof(czk_trace_rec));
    files[1].recs = calloc(N2, sizeof(czk_trace_rec));
    CHECK(files[0].recs && files[1].recs, "oom");
    for (int f = 0; f < 2; f++)
        for (size_t i = 0; i < files[f].n; i++) {
            czk_trace_rec *r = &files[f].recs[i];
            r->job = t_rand64() % 100000;
            r->partition = (uint32_t)(t_rand64() % 1000);
            r->stage = (uint16_t)(1 + t_rand64() % CZK_TRACE_STAGE_MAX);
            r->begin_ns = 5000000000000ull + t_rand64() % 100000000000ull;
            r->end_ns = r->begin_ns + (i % 7 == 0 ? 0 : t_rand64() % 3000000000ull);
            r->pid = files[f].hdr.pid;
            r->tid = files[f].hdr.pid + (uint32_t)(t_rand64() % 4);
        }
    /* the median end time: about half the records are newer */
    since = 5000000000000ull + 50000000000ull;
    size_t want = 0;
    for (int f = 0; f < 2; f++)
        for (size_t i = 0; i < files[f].n; i++)
            want += files[f].recs[i].end_ns >= since;

    snprintf(jpath, sizeof(jpath), "%s/trace.json", dir);
    FILE *out = fopen(jpath, "w");
    CHECK(out, "fopen %s", jpath);
    long n = czk_trace_export_json(files, 2, since, out, &e);
    CHECK(fclose(out) == 0 && n == (long)want, "export: %ld events, expected %zu (%s)", n, want, e.msg);

    json_t *root = json_load_file(jpath, 0, &je);
    CHECK(root, "trace.json is not valid JSON: line %d: %s", je.line, je.text);
    json_t *ev = json_object_get(root, "traceEvents");
    CHECK(json_is_array(ev), "traceEvents is not an array");
    size_t nx = 0, nm = 0, fi[2] = {0, 0};
    size_t idx;
    json_t *o;
    json_array_foreach(ev, idx, o) {
        const char *ph = json_string_value(json_object_get(o, "ph"));
        int pid = (int)json_integer_value(json_object_get(o, "pid"));
        int f = pid == 4242 ? 0 : 1;
        CHECK(ph && (pid == 4242 || pid == 777), "event %zu: ph/pid", idx);
        if (!strcmp(ph, "M")) {
            const char *nm_ = json_string_value(json_object_get(json_object_get(o, "args"), "name"));
            CHECK(nm_ && !strcmp(nm_, f ? "czk-synth" : "czk-gpud"), "process_name of pid %d", pid);
            nm++;
            continue;
        }
        CHECK(!strcmp(ph, "X"), "event %zu: ph %s", idx, ph);
        /* events of one file come in record order: find the next record that passes the filter */
        while (fi[f] < files[f].n && files[f].recs[fi[f]].end_ns < since)
            fi[f]++;
        CHECK(fi[f] < files[f].n, "more events than records for pid %d", pid);
        const czk_trace_rec *r = &files[f].recs[fi[f]++];
        char buf[16];
        double ts = json_number_value(json_object_get(o, "ts"));
        double dur = json_number_value(json_object_get(o, "dur"));
        json_t *args = json_object_get(o, "args");
        CHECK(!strcmp(json_string_value(json_object_get(o, "name")), czk_trace_stage_name(r->stage, buf)),
              "event %zu: name", idx);
        CHECK(!strcmp(json_string_value(json_object_get(o, "cat")), f ? "czk-synth" : "czk-gpud"), "cat");
        CHECK(json_integer_value(json_object_get(o, "tid")) == r->tid, "event %zu: tid", idx);
        CHECK((uint64_t)json_integer_value(json_object_get(args, "job")) == r->job &&
                  json_integer_value(json_object_get(args, "partition")) == r->partition,
              "event %zu: job/partition", idx);
        /* µs; ts ~5e9 µs keeps ns precision in a double to about 1e-6 µs */
        CHECK(fabs(ts - (double)r->begin_ns / 1000.0) < 1e-3, "event %zu: ts %.3f vs %llu ns", idx, ts,
              (unsigned long long)r->begin_ns);
        CHECK(fabs(dur - (double)(r->end_ns - r->begin_ns) / 1000.0) < 1e-6, "event %zu: dur %.3f vs %llu ns", idx,
              dur, (unsigned long long)(r->end_ns - r->begin_ns));
        nx++;
    }
    CHECK(nm == 2 && nx == want, "%zu M and %zu X events, expected 2 and %zu", nm, nx, want);
    json_decref(root);
    free(files[0].recs);
    free(files[1].recs);
}

/* read_dir: every .trace/.trace.old file, others ignored, broken ones skipped */
static void test_read_dir(const char *dir)
{
    char sub[600], p[700];
    czk_trace_file *files;
    size_t n;
    czk_error e = {0};
    int r;

    snprintf(sub, sizeof(sub), "%s/dir", dir);
    r = czk_trace_open(sub, "czk-a", 0, &e); /* creates the directory */
    CHECK(r == 0, "open: %s", e.msg);
    czk_trace_add(7, 3, CZK_TRACE_SYNTH, 100, 250);
    czk_trace_close();
    snprintf(p, sizeof(p), "%s/notes.txt", sub);
    FILE *fp = fopen(p, "w");
    CHECK(fp && fputs("not a trace", fp) >= 0 && fclose(fp) == 0, "write %s", p);
    snprintf(p, sizeof(p), "%s/bogus-1.trace", sub);
    fp = fopen(p, "w");
    CHECK(fp && fputs("this is not a trace file at all, but long enough for a header ....", fp) >= 0 &&
              fclose(fp) == 0,
          "write %s", p);
    r = czk_trace_read_dir(sub, &files, &n, &e);
    CHECK(r == 0 && n == 1, "read_dir: r %d n %zu (%s)", r, n, e.msg);
    CHECK(files[0].n == 1 && files[0].recs[0].job == 7 && files[0].recs[0].end_ns == 250 &&
              !strcmp(files[0].hdr.prog, "czk-a"),
          "read_dir contents");
    czk_trace_files_free(files, n);
}

/* ---------------------------------------------------------------- busy --- */

static void test_busy(void)
{
    /* fixed cases first */
    {
        czk_trace_span s[] = {{150, 250}, {0, 120}, {200, 300}, {900, 2000}};
        double pct;
        uint64_t gap;
        /* window [100, 1000]: busy [100,120] + [150,300] + [900,1000] = 20 + 150 + 100 = 270 of 900 */
        czk_trace_busy_spans(s, 4, 100, 1000, &pct, &gap);
        CHECK(fabs(pct - 30.0) < 1e-9 && gap == 600, "fixed: pct %.6f gap %llu", pct, (unsigned long long)gap);
        czk_trace_busy_spans(s, 0, 100, 1000, &pct, &gap);
        CHECK(pct == 0.0 && gap == 900, "empty: pct %.3f gap %llu", pct, (unsigned long long)gap);
    }
    /* random spans vs a bitmap oracle (1 unit = 1 ns, window 20000 ns) */
    static unsigned char bm[30000];
    static czk_trace_hist h;
    for (int round = 0; round < 300; round++) {
        uint64_t base = 1000000000ull + t_rand64() % 1000000ull;
        uint64_t t0 = base + 5000, t1 = t0 + 20000;
        unsigned n = (unsigned)(t_rand64() % 40);
        czk_trace_span extra[3];
        size_t n_extra = t_rand64() % 3;
        memset(bm, 0, sizeof(bm));
        memset(&h, 0, sizeof(h));
        for (unsigned i = 0; i < n + n_extra; i++) {
            uint64_t b = base + t_rand64() % 30000, len = t_rand64() % (t_rand64() % 2 ? 300 : 4000);
            uint64_t e = b + len;
            if (i < n)
                czk_trace_hist_add(&h, b, e);
            else {
                extra[i - n].begin_ns = b;
                extra[i - n].end_ns = t1; /* still running */
                e = t1;
            }
            for (uint64_t t = b; t < e && t < base + 30000; t++)
                bm[t - base] = 1;
        }
        uint64_t busy = 0, gap = 0, run = 0;
        for (uint64_t t = t0; t < t1; t++) {
            if (bm[t - base]) {
                busy++;
                run = 0;
            } else if (++run > gap) {
                gap = run;
            }
        }
        double pct;
        uint64_t g;
        CHECK(czk_trace_busy(&h, extra, n_extra, t0, t1, &pct, &g) == 0, "busy");
        CHECK(fabs(pct - 100.0 * (double)busy / 20000.0) < 1e-9 && g == gap,
              "round %d (%u spans): pct %.4f gap %llu, oracle %.4f %llu", round, n, pct, (unsigned long long)g,
              100.0 * (double)busy / 20000.0, (unsigned long long)gap);
    }
    /* the history keeps the last CZK_TRACE_HIST spans */
    memset(&h, 0, sizeof(h));
    for (unsigned i = 0; i < CZK_TRACE_HIST + 10; i++)
        czk_trace_hist_add(&h, i * 10, i * 10 + 5);
    double pct;
    uint64_t g;
    CHECK(czk_trace_busy(&h, NULL, 0, 0, (CZK_TRACE_HIST + 10) * 10, &pct, &g) == 0, "busy");
    /* spans 0..9 were overwritten: the first 100 ns are the longest idle gap */
    CHECK(g == 100 && fabs(pct - 100.0 * CZK_TRACE_HIST * 5 / ((CZK_TRACE_HIST + 10) * 10.0)) < 1e-9,
          "history wrap: gap %llu pct %.4f", (unsigned long long)g, pct);
    CHECK(czk_trace_busy(&h, NULL, 0, 10, 10, &pct, &g) == -EINVAL, "empty window");
}

int main(int argc, char **argv)
{
    char dir[512];
    if (argc != 2) {
        fprintf(stderr, "usage: test_trace SCRATCH_DIR\n");
        return 2;
    }
    t_seed("test_trace");
    snprintf(dir, sizeof(dir), "%s/trace-%d", argv[1], (int)getpid());
    mkdir(argv[1], 0755);
    test_roundtrip(dir);
    test_drop(dir);
    test_json(dir);
    test_read_dir(dir);
    test_busy();
    fprintf(stderr, "ok\n");
    return 0;
}
