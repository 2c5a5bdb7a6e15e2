/*
 * test_util.h — helpers shared by the field and curve tests: GMP <-> limb
 * conversion and random residues, on top of tests/common/test_util.h (the
 * CHECK macro and the seeded splitmix64 generator).
 */
#ifndef CZK_TEST_UTIL_H
#define CZK_TEST_UTIL_H

#include <gmp.h>
#include <stdint.h>

#include "tests/common/test_util.h"

static inline void t_limbs_to_mpz(mpz_t z, const uint64_t *l, int n)
{
    mpz_import(z, (size_t)n, -1, sizeof(uint64_t), 0, 0, l);
}

/* z must be 0 <= z < 2^(64n) */
static inline void t_mpz_to_limbs(uint64_t *l, const mpz_t z, int n)
{
    size_t cnt = 0;
    for (int i = 0; i < n; i++)
        l[i] = 0;
    mpz_export(l, &cnt, -1, sizeof(uint64_t), 0, 0, z);
}

/* uniform-ish random integer below m (random 64n bits reduced mod m), with a
 * bias towards edge values one time in eight */
static inline void t_rand_mod(mpz_t z, const mpz_t m, int n)
{
    uint64_t l[8];
    unsigned pick = (unsigned)(t_rand64() % 64);
    switch (pick) {
    case 0: mpz_set_ui(z, 0); return;
    case 1: mpz_set_ui(z, 1); return;
    case 2: mpz_sub_ui(z, m, 1); return;
    case 3: mpz_sub_ui(z, m, 2); return;
    case 4: mpz_set_ui(z, 1); mpz_mul_2exp(z, z, mpz_sizeinbase(m, 2) - 1); mpz_mod(z, z, m); return;
    case 5: mpz_set_ui(z, 1); mpz_mul_2exp(z, z, mpz_sizeinbase(m, 2) - 1); mpz_sub_ui(z, z, 1); return;
    case 6: mpz_set_ui(z, t_rand64()); return;
    case 7: mpz_fdiv_q_2exp(z, m, 1); return;
    default: break;
    }
    for (int i = 0; i < n; i++)
        l[i] = t_rand64();
    t_limbs_to_mpz(z, l, n);
    mpz_mod(z, z, m);
}

#endif
