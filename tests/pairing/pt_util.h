/*
 * pt_util.h — helpers shared by the pairing tests (CHECK and the seeded
 * generator are tests/common/test_util.h's): random field elements,
 * conversion between czk_fp / czk_fp12 and GMP integers, and locating the
 * snarkjs fixtures (CZK_FIXTURES or the source tree).
 */
#ifndef CZK_PT_UTIL_H
#define CZK_PT_UTIL_H

#include <gmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "common/crypto/pairing.h"
#include "tests/common/test_util.h"

#define PT_Q_HEX "1a0111ea397fe69a4b1ba7b6434bacd764774b84f38512bf6730d2a0f6b0f6241eabfffeb153ffffb9feffffffffaaab"
#define PT_R_HEX "73eda753299d7d483339d80809a1d80553bda402fffe5bfeffffffff00000001"

static inline void pt_rand_fp(czk_fp *r)
{
    for (;;) {
        czk_fp t;
        for (int i = 0; i < 6; i++)
            t.l[i] = t_rand64();
        t.l[5] &= (1ULL << 61) - 1; /* q < 2^381 */
        if (czk_fp_is_canonical(&t)) {
            czk_fp_to_mont(r, &t);
            return;
        }
    }
}

static inline void pt_rand_fp2(czk_fp2 *r)
{
    pt_rand_fp(&r->c0);
    pt_rand_fp(&r->c1);
}

static inline void pt_rand_fp12(czk_fp12 *r)
{
    czk_fp2 *c[6] = {&r->c0.c0, &r->c0.c1, &r->c0.c2, &r->c1.c0, &r->c1.c1, &r->c1.c2};
    for (int i = 0; i < 6; i++)
        pt_rand_fp2(c[i]);
}

/* standard-form scalar below r (for curve multiplications) */
static inline void pt_rand_scalar(czk_fr *k_std)
{
    for (;;) {
        for (int i = 0; i < 4; i++)
            k_std->l[i] = t_rand64();
        k_std->l[3] &= (1ULL << 63) - 1;
        if (czk_fr_is_canonical(k_std))
            return;
    }
}

static inline void pt_limbs_to_mpz(mpz_t r, const uint64_t *l, size_t n)
{
    mpz_import(r, n, -1, sizeof(uint64_t), 0, 0, l);
}

/* limbs of r (r >= 0), n limbs, zero padded; returns 0 when it does not fit */
static inline int pt_mpz_to_limbs(uint64_t *l, const mpz_t r, size_t n)
{
    size_t cnt = (mpz_sizeinbase(r, 2) + 63) / 64;
    if (cnt > n)
        return 0;
    memset(l, 0, n * sizeof(uint64_t));
    mpz_export(l, NULL, -1, sizeof(uint64_t), 0, 0, r);
    return 1;
}

static inline void pt_fp_to_mpz(mpz_t r, const czk_fp *a)
{
    czk_fp s;
    czk_fp_from_mont(&s, a);
    pt_limbs_to_mpz(r, s.l, 6);
}

/* directory of the snarkjs fixtures: $CZK_FIXTURES or <source>/tests/fixtures */
static inline const char *pt_fixture_dir(void)
{
    const char *env = getenv("CZK_FIXTURES");
#ifdef CZK_SOURCE_DIR
    return env ? env : CZK_SOURCE_DIR "/tests/fixtures";
#else
    return env ? env : "tests/fixtures";
#endif
}

#endif
