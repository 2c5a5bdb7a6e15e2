/*
 * par.h — a small fork-join helper for data-parallel loops (NTT, MSM, prover).
 * czk_par_for splits [0, n) into contiguous chunks over up to nthreads threads
 * (nthreads <= 0: all online CPUs, overridable with env CZK_THREADS) and waits.
 */
#ifndef CZK_PAR_H
#define CZK_PAR_H

#include <stddef.h>

typedef void (*czk_par_fn)(void *ctx, size_t begin, size_t end, unsigned worker);
int czk_par_threads(int nthreads);  /* the thread count czk_par_for would use */
int czk_par_for(size_t n, int nthreads, czk_par_fn fn, void *ctx);

#endif
