/*
 * trace_check.c — checks a Chrome JSON trace written by `czk trace` (parsed
 * with jansson, an independent reader):
 *   trace_check FILE count             prints the number of ph "X" events
 *   trace_check FILE pipeline JOB N    every partition 0..N-1 of JOB has its
 *       stages in every process, in causal order: synth (czk-synth) ends
 *       before ready (czk-gpud), ready <= copy begin, copy end <= compute
 *       begin, compute end <= result_sent <= finalize begin (czk-finalizer);
 *       every event has a process_name, and durations are >= 0.
 *   trace_check FILE nooverlap STAGE   no two STAGE events of one process
 *       overlap in time (gpud's contexts of one device take turns), and at
 *       least two were found; prints the count
 * Exit 0 when the check holds, 1 with a message otherwise.
 */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { S_SYNTH, S_READY, S_COPY, S_COMPUTE, S_RESULT, S_FINALIZE, S_N };
static const char *const stage_names[S_N] = {"synth", "ready", "copy", "compute", "result_sent", "finalize"};
static const char *const stage_prog[S_N] = {"czk-synth", "czk-gpud", "czk-gpud", "czk-gpud", "czk-gpud", "czk-finalizer"};

typedef struct { int seen; double b, e; } ev;

static int fail(const char *fmt, const char *a, long x)
{
    fprintf(stderr, "trace_check: ");
    fprintf(stderr, fmt, a, x);
    fprintf(stderr, "\n");
    return 1;
}

typedef struct { long pid; double b, e; } span;

static int span_cmp(const void *a, const void *b)
{
    const span *x = a, *y = b;
    if (x->pid != y->pid)
        return x->pid < y->pid ? -1 : 1;
    return x->b < y->b ? -1 : x->b > y->b;
}

static int check_nooverlap(const char *file, const char *stage)
{
    json_error_t je;
    json_t *root, *evs, *o;
    size_t i, n = 0;
    span *sp;

    if (!(root = json_load_file(file, 0, &je)))
        return fail("%s is not valid JSON (line %ld)", file, je.line);
    evs = json_object_get(root, "traceEvents");
    if (!json_is_array(evs))
        return fail("%s: no traceEvents array%.0ld", file, 0);
    sp = calloc(json_array_size(evs) + 1, sizeof(*sp));
    json_array_foreach(evs, i, o) {
        const char *ph = json_string_value(json_object_get(o, "ph"));
        const char *name = json_string_value(json_object_get(o, "name"));
        if (!ph || strcmp(ph, "X") || !name || strcmp(name, stage))
            continue;
        sp[n].pid = (long)json_integer_value(json_object_get(o, "pid"));
        sp[n].b = json_number_value(json_object_get(o, "ts"));
        sp[n].e = sp[n].b + json_number_value(json_object_get(o, "dur"));
        n++;
    }
    if (n < 2)
        return fail("only %s%ld events of that stage: nothing to compare", "", (long)n);
    qsort(sp, n, sizeof(*sp), span_cmp);
    for (i = 1; i < n; i++)
        if (sp[i].pid == sp[i - 1].pid && sp[i].b + 0.0015 < sp[i - 1].e)
            return fail("%s events overlap (%ld us)", stage, (long)(sp[i - 1].e - sp[i].b));
    printf("ok: %zu %s events, none overlapping\n", n, stage);
    free(sp);
    json_decref(root);
    return 0;
}

int main(int argc, char **argv)
{
    json_error_t je;
    json_t *root, *evs, *o;
    size_t i, nx = 0;
    long job = 0, nparts = 0;
    ev *tab = NULL;
    char procs[64][40];
    long pids[64];
    int nprocs = 0;

    if (argc < 3 || (strcmp(argv[2], "count") && (strcmp(argv[2], "pipeline") || argc != 5) &&
                     (strcmp(argv[2], "nooverlap") || argc != 4))) {
        fprintf(stderr, "usage: trace_check FILE count | FILE pipeline JOB NPARTS | FILE nooverlap STAGE\n");
        return 2;
    }
    if (!strcmp(argv[2], "nooverlap"))
        return check_nooverlap(argv[1], argv[3]);
    if (!(root = json_load_file(argv[1], 0, &je)))
        return fail("%s is not valid JSON (line %ld)", argv[1], je.line);
    evs = json_object_get(root, "traceEvents");
    if (!json_is_array(evs))
        return fail("%s: no traceEvents array%.0ld", argv[1], 0);
    if (!strcmp(argv[2], "pipeline")) {
        job = atol(argv[3]);
        nparts = atol(argv[4]);
        tab = calloc((size_t)nparts * S_N, sizeof(ev));
    }
    json_array_foreach(evs, i, o) {
        const char *ph = json_string_value(json_object_get(o, "ph"));
        long pid = (long)json_integer_value(json_object_get(o, "pid"));
        if (!ph)
            return fail("event %s%ld has no ph", "", (long)i);
        if (!strcmp(ph, "M")) {
            const char *n = json_string_value(json_object_get(json_object_get(o, "args"), "name"));
            if (n && nprocs < 64) {
                snprintf(procs[nprocs], sizeof(procs[0]), "%s", n);
                pids[nprocs++] = pid;
            }
            continue;
        }
        if (strcmp(ph, "X"))
            return fail("event with ph \"%s\" (%ld)", ph, (long)i);
        nx++;
        double ts = json_number_value(json_object_get(o, "ts")), dur = json_number_value(json_object_get(o, "dur"));
        if (dur < 0 || ts <= 0)
            return fail("event %s%ld: ts/dur out of range", "", (long)i);
        const char *prog = NULL;
        for (int k = 0; k < nprocs; k++)
            if (pids[k] == pid)
                prog = procs[k];
        if (!prog)
            return fail("event %s%ld: its pid has no process_name before it", "", (long)i);
        if (!tab)
            continue;
        json_t *args = json_object_get(o, "args");
        long j = (long)json_integer_value(json_object_get(args, "job"));
        long p = (long)json_integer_value(json_object_get(args, "partition"));
        const char *name = json_string_value(json_object_get(o, "name"));
        if (j != job || p < 0 || p >= nparts || !name)
            continue;
        for (int s = 0; s < S_N; s++)
            if (!strcmp(name, stage_names[s])) {
                if (strcmp(prog, stage_prog[s]))
                    return fail("stage %s recorded by %ld, wrong process", name, pid);
                ev *x = &tab[p * S_N + s];
                /* a partition may be attempted twice (requeue): keep the last */
                if (!x->seen || ts >= x->b) {
                    x->seen = 1;
                    x->b = ts;
                    x->e = ts + dur;
                }
            }
    }
    if (!tab) {
        printf("%zu\n", nx);
        json_decref(root);
        return 0;
    }
    for (long p = 0; p < nparts; p++) {
        ev *t = &tab[p * S_N];
        for (int s = 0; s < S_N; s++)
            if (!t[s].seen)
                return fail("no \"%s\" stage for partition %ld", stage_names[s], p);
        /* ts has µs with 3 decimals: compare with 1 ns slack */
        const double eps = 0.0015;
        if (t[S_SYNTH].e > t[S_READY].b + eps)
            return fail("%s: synth ends after gpud saw READY (partition %ld)", "order", p);
        if (t[S_READY].b > t[S_COPY].b + eps || t[S_COPY].e > t[S_COMPUTE].b + eps)
            return fail("%s: ready / copy / compute out of order (partition %ld)", "order", p);
        if (t[S_COMPUTE].e > t[S_RESULT].b + eps || t[S_RESULT].b > t[S_FINALIZE].b + eps)
            return fail("%s: compute / result_sent / finalize out of order (partition %ld)", "order", p);
    }
    printf("ok: %zu events, %ld partitions of job %ld in order\n", nx, nparts, job);
    free(tab);
    json_decref(root);
    return 0;
}
