/*
 * par.c — fork-join parallel-for over POSIX threads (see par.h).
 *
 * czk_par_for splits [0, n) into at most `threads` contiguous chunks, runs
 * chunk 0 on the calling thread and the others on freshly created threads,
 * then joins them all.  Each chunk is owned by exactly one thread and the
 * callback's writes are published to the caller by pthread_join, so callers
 * need no lock as long as chunks write disjoint data.  Creating threads per
 * call costs tens of microseconds, so callers parallelise only loops that
 * are long enough (NTT stages, MSM windows), not tiny ones.
 *
 * When a thread cannot be created the chunk it would have run is run on the
 * calling thread instead (slower, same result), with one warning logged.
 */
#include "common/crypto/par.h"

#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/base/log.h"

#define PAR_MAX_THREADS 1024

struct par_job {
    czk_par_fn fn;
    void *ctx;
    size_t begin, end;
    unsigned worker;
};

static int env_threads(void)
{
    const char *s = getenv("CZK_THREADS");
    char *end;
    long v;

    if (!s || !*s)
        return 0;
    errno = 0;
    v = strtol(s, &end, 10);
    if (errno || *end || v <= 0 || v > PAR_MAX_THREADS) {
        static int warned;
        if (!__atomic_exchange_n(&warned, 1, __ATOMIC_RELAXED))
            czk_warn("ignoring CZK_THREADS=\"%s\": expected an integer in 1..%d", s, PAR_MAX_THREADS);
        return 0;
    }
    return (int)v;
}

int czk_par_threads(int nthreads)
{
    long cpus;
    int e;

    if (nthreads > 0)
        return nthreads > PAR_MAX_THREADS ? PAR_MAX_THREADS : nthreads;
    e = env_threads();
    if (e > 0)
        return e;
    cpus = sysconf(_SC_NPROCESSORS_ONLN);
    if (cpus < 1)
        return 1;
    return cpus > PAR_MAX_THREADS ? PAR_MAX_THREADS : (int)cpus;
}

static void *par_main(void *arg)
{
    struct par_job *j = arg;

    j->fn(j->ctx, j->begin, j->end, j->worker);
    return NULL;
}

int czk_par_for(size_t n, int nthreads, czk_par_fn fn, void *ctx)
{
    struct par_job local[16], *jobs = local;
    pthread_t tid_local[16], *tids = tid_local;
    unsigned char started_local[16], *started = started_local;
    size_t t, i, chunk, rem, pos;

    if (!fn)
        return -EINVAL;
    if (n == 0)
        return 0;
    t = (size_t)czk_par_threads(nthreads);
    if (t > n)
        t = n;
    if (t <= 1) {
        fn(ctx, 0, n, 0);
        return 0;
    }
    if (t > 16) {
        jobs = calloc(t, sizeof(*jobs));
        tids = calloc(t, sizeof(*tids));
        started = calloc(t, 1);
        if (!jobs || !tids || !started) {
            free(jobs);
            free(tids);
            free(started);
            return -ENOMEM;
        }
    }
    chunk = n / t;
    rem = n % t;
    pos = 0;
    for (i = 0; i < t; i++) {
        size_t len = chunk + (i < rem ? 1 : 0);
        jobs[i] = (struct par_job){fn, ctx, pos, pos + len, (unsigned)i};
        pos += len;
    }
    for (i = 1; i < t; i++) {
        int rc = pthread_create(&tids[i], NULL, par_main, &jobs[i]);
        started[i] = rc == 0;
        if (rc) {
            static int warned;
            if (!__atomic_exchange_n(&warned, 1, __ATOMIC_RELAXED))
                czk_warn("could not create a worker thread: %s; running its share on the caller",
                         strerror(rc));
        }
    }
    par_main(&jobs[0]);
    for (i = 1; i < t; i++) {
        if (started[i])
            pthread_join(tids[i], NULL);
        else
            par_main(&jobs[i]);
    }
    if (jobs != local) {
        free(jobs);
        free(tids);
        free(started);
    }
    return 0;
}
