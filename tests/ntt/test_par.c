/*
 * test_par.c — the fork-join helper (common/crypto/par.c): thread-count selection
 * (argument, CZK_THREADS, online CPUs) and czk_par_for coverage: every index
 * of [0, n) is visited exactly once, in contiguous chunks, by workers with
 * distinct ids below the thread count.  Exit 0 pass, 1 fail.
 */
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/crypto/par.h"
#include "tests/common/test_util.h"

struct cov {
    atomic_int *hits;
    atomic_int calls;
    atomic_uint worker_mask;
    int bad_worker;
};

static void visit(void *arg, size_t begin, size_t end, unsigned worker)
{
    struct cov *c = arg;
    size_t i;

    atomic_fetch_add(&c->calls, 1);
    if (worker >= 32 || (atomic_fetch_or(&c->worker_mask, 1u << worker) & (1u << worker)))
        c->bad_worker = 1; /* ids must be distinct */
    for (i = begin; i < end; i++)
        atomic_fetch_add(&c->hits[i], 1);
}

int main(void)
{
    const size_t sizes[] = {0, 1, 2, 7, 1000, 100003};
    const int threads[] = {1, 2, 3, 8, 32};
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);

    CHECK(czk_par_threads(3) == 3, "explicit thread count not honoured");
    setenv("CZK_THREADS", "5", 1);
    CHECK(czk_par_threads(0) == 5, "CZK_THREADS not honoured");
    CHECK(czk_par_threads(2) == 2, "explicit count must win over CZK_THREADS");
    setenv("CZK_THREADS", "abc", 1);
    CHECK(czk_par_threads(0) == (cpus > 0 ? cpus : 1), "bad CZK_THREADS must fall back to online cpus");
    unsetenv("CZK_THREADS");
    CHECK(czk_par_threads(-1) == (cpus > 0 ? cpus : 1), "default must be the online cpus");
    CHECK(czk_par_for(10, 2, NULL, NULL) < 0, "null callback accepted");

    for (unsigned si = 0; si < sizeof(sizes) / sizeof(sizes[0]); si++)
        for (unsigned ti = 0; ti < sizeof(threads) / sizeof(threads[0]); ti++) {
            size_t n = sizes[si], i;
            struct cov c;
            int expect_calls = n == 0 ? 0 : (size_t)threads[ti] < n ? threads[ti] : (int)n;

            memset(&c, 0, sizeof(c));
            c.hits = calloc(n ? n : 1, sizeof(atomic_int));
            CHECK(czk_par_for(n, threads[ti], visit, &c) == 0, "czk_par_for failed");
            for (i = 0; i < n; i++)
                CHECK(atomic_load(&c.hits[i]) == 1, "n=%zu threads=%d: index %zu visited %d times", n,
                      threads[ti], i, atomic_load(&c.hits[i]));
            CHECK(atomic_load(&c.calls) == expect_calls, "n=%zu threads=%d: %d chunks, expected %d", n,
                  threads[ti], atomic_load(&c.calls), expect_calls);
            CHECK(!c.bad_worker, "n=%zu threads=%d: worker ids repeat or exceed the count", n, threads[ti]);
            free(c.hits);
        }
    if (t_failures) {
        fprintf(stderr, "test_par: %d check(s) failed\n", t_failures);
        return 1;
    }
    printf("test_par: all checks passed\n");
    return 0;
}
