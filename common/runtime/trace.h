/*
 * trace.h — per-partition stage tracing for every czk process (docs/tracing.md).
 *
 * Each process keeps one fixed-size ring of fixed-size binary records (job,
 * partition, stage, begin/end CLOCK_MONOTONIC ns, pid, tid).  Any thread
 * appends with czk_trace_add() (lock-free, no allocation, no system call but
 * gettid once per thread); one thread (a daemon's event loop, from a timer)
 * calls czk_trace_flush(), which appends what is buffered to
 * state_dir/trace/<prog>-<pid>.trace with one write().  When the ring is full
 * a record is dropped and counted, never waited for: tracing cannot stall the
 * hot path.  Before czk_trace_open() (and after a failed open) recording is a
 * no-op, so library code may trace unconditionally.
 *
 * CLOCK_MONOTONIC is the same clock in every process of a host, so the files
 * of gpud, the synths and the finalizer line up without conversion;
 * `czk trace` merges them into one Chrome/Perfetto JSON trace.
 *
 * File layout (little-endian, append-only): a 64-byte czk_trace_file_hdr,
 * then 40-byte czk_trace_rec records.  A file over CZK_TRACE_MAX_BYTES is
 * renamed to <name>.old (replacing an older one) and a new file is started.
 *
 * Also here: the busy/idle arithmetic behind gpud's STATUS keys
 * gpu_busy_pct and gpu_max_gap_ms (czk_trace_busy over a czk_trace_hist of
 * compute spans), a pure function so it can be tested on synthetic spans.
 */
#ifndef CZK_COMMON_TRACE_H
#define CZK_COMMON_TRACE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "common/base/error.h"

/* stages; the numbers are part of the file format (append only) */
enum czk_trace_stage {
    CZK_TRACE_SYNTH = 1,   /* czk-synth: fill of the slot (read witness, build a, b, c, copy w) */
    CZK_TRACE_READY = 2,   /* czk-gpud: READY received (instant) */
    CZK_TRACE_COPY = 3,    /* czk-gpud: copy-in (host memcpy or H2D DMA to completion) */
    CZK_TRACE_H = 4,       /* czk-gpud: NTTs and h */
    CZK_TRACE_MSM_A = 5,   /* czk-gpud: A·w */
    CZK_TRACE_MSM_B1 = 6,  /* czk-gpud: B1·w */
    CZK_TRACE_MSM_B2 = 7,  /* czk-gpud: B2·w (G2) */
    CZK_TRACE_MSM_C = 8,   /* czk-gpud: C·w[nPublic+1..] */
    CZK_TRACE_MSM_H = 9,   /* czk-gpud: H·h */
    CZK_TRACE_COMPUTE = 10, /* czk-gpud: the whole compute of a partition (h + MSMs) */
    CZK_TRACE_RESULT = 11, /* czk-gpud: RESULT sent to the finalizer (instant) */
    CZK_TRACE_FINALIZE = 12, /* czk-finalizer: assemble, verify, write */
    CZK_TRACE_VERIFY = 13, /* czk-gpud: slot header and payload checksum check before the copy */
    CZK_TRACE_H2D = 14,    /* czk-gpud: the H2D DMA alone (device timing; ends when copy-in saw it complete) */
    CZK_TRACE_STAGE_MAX = 14
};

/* "synth", "ready", ... ; "stage<N>" for numbers this build does not know */
const char *czk_trace_stage_name(unsigned stage, char buf[16]);

#define CZK_TRACE_MAGIC "CZKTRC01"
#define CZK_TRACE_VERSION 1u
#define CZK_TRACE_MAX_BYTES (64ull << 20)

typedef struct czk_trace_file_hdr {
    char magic[8];          /* CZK_TRACE_MAGIC */
    uint32_t version;       /* CZK_TRACE_VERSION */
    uint32_t rec_size;      /* sizeof(czk_trace_rec) */
    uint32_t pid;
    uint32_t reserved;
    int64_t real_minus_mono; /* CLOCK_REALTIME - CLOCK_MONOTONIC at open, ns */
    char prog[32];          /* NUL-terminated */
} czk_trace_file_hdr;
_Static_assert(sizeof(czk_trace_file_hdr) == 64, "trace file header is 64 bytes");
_Static_assert(offsetof(czk_trace_file_hdr, real_minus_mono) == 24, "trace header layout");
_Static_assert(offsetof(czk_trace_file_hdr, prog) == 32, "trace header layout");

typedef struct czk_trace_rec {
    uint64_t job;
    uint32_t partition;
    uint16_t stage;         /* enum czk_trace_stage */
    uint16_t flags;         /* 0; reserved */
    uint64_t begin_ns;      /* CLOCK_MONOTONIC */
    uint64_t end_ns;        /* == begin_ns for instants */
    uint32_t pid;
    uint32_t tid;
} czk_trace_rec;
_Static_assert(sizeof(czk_trace_rec) == 40, "trace record is 40 bytes");
_Static_assert(offsetof(czk_trace_rec, partition) == 8, "trace record layout");
_Static_assert(offsetof(czk_trace_rec, stage) == 12, "trace record layout");
_Static_assert(offsetof(czk_trace_rec, begin_ns) == 16, "trace record layout");
_Static_assert(offsetof(czk_trace_rec, end_ns) == 24, "trace record layout");
_Static_assert(offsetof(czk_trace_rec, pid) == 32, "trace record layout");
_Static_assert(offsetof(czk_trace_rec, tid) == 36, "trace record layout");

/* ---- recording (one trace per process) ---- */

/* CLOCK_MONOTONIC in ns */
uint64_t czk_trace_now(void);

/* Creates dir (mode 0750) when missing and opens dir/<prog>-<pid>.trace for
 * appending; `ring` records are buffered (rounded up to a power of two,
 * 0: 16384).  Use czk_trace_dir() for the conventional state_dir/trace. */
int czk_trace_open(const char *dir, const char *prog, unsigned ring, czk_error *e);
/* state_dir + "/trace" into buf */
void czk_trace_dir(const char *state_dir, char *buf, size_t n);
/* flushes and closes; recording becomes a no-op again */
void czk_trace_close(void);
/* 1 when czk_trace_open succeeded and the trace is not closed */
int czk_trace_enabled(void);

/* Any thread: buffer one record (instants: end == begin). */
void czk_trace_add(uint64_t job, uint32_t partition, unsigned stage, uint64_t begin_ns, uint64_t end_ns);

/* One thread at a time (the loop): append buffered records to the file.
 * Returns the number written or -errno (the records are then lost, the
 * failure is logged once per errno value). */
int czk_trace_flush(void);
/* records dropped because the ring was full */
uint64_t czk_trace_dropped(void);
/* path of the open file ("" when none) */
const char *czk_trace_path(void);

/* ---- reading and export (czk trace, tests) ---- */

typedef struct czk_trace_file {
    char path[512];
    czk_trace_file_hdr hdr;
    czk_trace_rec *recs;
    size_t n;
} czk_trace_file;

/* reads a whole file (a partial trailing record, from a writer that died
 * mid-write, is ignored); -EINVAL with e naming the file when not a trace */
int czk_trace_read(const char *path, czk_trace_file *f, czk_error *e);
void czk_trace_file_free(czk_trace_file *f);

/* every *.trace and *.trace.old file of dir; files that are not traces are
 * skipped with a warning; *files is NULL when *n == 0 */
int czk_trace_read_dir(const char *dir, czk_trace_file **files, size_t *n, czk_error *e);
void czk_trace_files_free(czk_trace_file *files, size_t n);

/* Writes a Chrome/Perfetto JSON trace: {"traceEvents": [...],
 * "displayTimeUnit": "ms"} with one "M" process_name event per file and one
 * ph "X" event per record whose end_ns >= since_ns (0: all): name = stage,
 * cat = program, pid/tid, ts/dur in µs (CLOCK_MONOTONIC), args {job,
 * partition}.  Returns the number of X events or -errno. */
long czk_trace_export_json(const czk_trace_file *files, size_t n, uint64_t since_ns, FILE *out, czk_error *e);

/* ---- busy time over a window (gpud STATUS: gpu_busy_pct, gpu_max_gap_ms) ---- */

typedef struct czk_trace_span {
    uint64_t begin_ns, end_ns;
} czk_trace_span;

#define CZK_TRACE_HIST 4096

/* the last CZK_TRACE_HIST spans of one stage, owned by one thread */
typedef struct czk_trace_hist {
    czk_trace_span s[CZK_TRACE_HIST];
    unsigned pos, n;
} czk_trace_hist;

void czk_trace_hist_add(czk_trace_hist *h, uint64_t begin_ns, uint64_t end_ns);

/* Over the window [t0, t1]: busy_pct = 100 * |union of spans ∩ window| / (t1 - t0),
 * max_gap_ns = the longest part of the window covered by no span (leading and
 * trailing idle time included: a device idle for the whole window reports the
 * window).  spans may overlap (several contexts) and come in any order; the
 * history's spans and the `extra` ones (still running: end = t1) are both
 * counted.  -ENOMEM or -EINVAL (t1 <= t0). */
int czk_trace_busy(const czk_trace_hist *h, const czk_trace_span *extra, size_t n_extra, uint64_t t0,
                   uint64_t t1, double *busy_pct, uint64_t *max_gap_ns);
/* the same over a plain array (sorted in place) */
void czk_trace_busy_spans(czk_trace_span *s, size_t n, uint64_t t0, uint64_t t1, double *busy_pct,
                          uint64_t *max_gap_ns);

#endif
