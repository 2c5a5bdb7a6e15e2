/*
 * g16_test.h — helpers for the Groth16 prover/setup/gen-circuit tests, on
 * top of tests/common/test_util.h (CHECK, DIE, the seeded generator): GMP
 * conversions of Fr values, the BLS12-381 r and snarkjs roots of unity
 * computed with GMP (an oracle independent of common/crypto/ntt.c), and a
 * direct pairing check.
 */
#ifndef CZK_G16_TEST_H
#define CZK_G16_TEST_H

#include <gmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/crypto/curve.h"
#include "common/crypto/field.h"
#include "common/formats/formats.h"
#include "common/crypto/pairing.h"
#include "tests/common/test_util.h"

static mpz_t g_r;   /* the scalar field modulus */

static inline void g_fr_to_mpz(mpz_t z, const czk_fr *a)
{
    mpz_import(z, CZK_FR_LIMBS, -1, sizeof(uint64_t), 0, 0, a->l);
}

static inline void g_mpz_to_fr(czk_fr *a, const mpz_t z)
{
    memset(a, 0, sizeof(*a));
    mpz_export(a->l, NULL, -1, sizeof(uint64_t), 0, 0, z);
}

/* Montgomery czk_fr -> its value as an integer < r (via GMP, not from_mont) */
static inline void g_mont_to_mpz(mpz_t z, const czk_fr *a)
{
    mpz_t rinv;

    mpz_init_set_ui(rinv, 1);
    mpz_mul_2exp(rinv, rinv, 256);
    mpz_invert(rinv, rinv, g_r);
    g_fr_to_mpz(z, a);
    mpz_mul(z, z, rinv);
    mpz_mod(z, z, g_r);
    mpz_clear(rinv);
}

/* uniform random element, standard form */
static inline void g_rand_fr_std(czk_fr *a)
{
    mpz_t z;
    uint64_t l[6];

    for (int i = 0; i < 6; i++)
        l[i] = t_rand64();
    mpz_init(z);
    mpz_import(z, 6, -1, sizeof(uint64_t), 0, 0, l);
    mpz_mod(z, z, g_r);
    g_mpz_to_fr(a, z);
    mpz_clear(z);
}

/* out = sum of coef * w[wire] over the n terms of an r1cs linear combination, mod r
 * (coefficients and w in standard form; the terms may be unaligned in the mapping) */
static inline void g_lc_value(mpz_t out, const czk_r1cs_term *t, uint32_t n, const czk_fr *w)
{
    mpz_t c, v;

    mpz_inits(c, v, NULL);
    mpz_set_ui(out, 0);
    for (uint32_t i = 0; i < n; i++) {
        czk_r1cs_term term;
        czk_fr coef;

        memcpy(&term, &t[i], sizeof(term));
        memcpy(&coef, &term.coef, sizeof(coef));
        g_fr_to_mpz(c, &coef);
        g_fr_to_mpz(v, &w[term.wire]);
        mpz_addmul(out, c, v);
    }
    mpz_mod(out, out, g_r);
    mpz_clears(c, v, NULL);
}

static inline void g_init_r(void)
{
    mpz_init_set_str(g_r, "73eda753299d7d483339d80809a1d80553bda402fffe5bfeffffffff00000001", 16);
}

/* snarkjs root of unity of order 2^k: (5^((r-1)/2^32))^(2^(32-k)) mod r */
static inline void g_root(mpz_t w, unsigned k)
{
    mpz_t t;

    mpz_init(t);
    mpz_sub_ui(t, g_r, 1);
    mpz_fdiv_q_2exp(t, t, 32);
    mpz_set_ui(w, 5);
    mpz_powm(w, w, t, g_r);
    for (unsigned i = k; i < 32; i++) {
        mpz_mul(w, w, w);
        mpz_mod(w, w, g_r);
    }
    mpz_clear(t);
}

/* the snarkjs verification equation evaluated directly with pairing.h:
 * e(-A, B) e(cpub, gamma2) e(C, delta2) e(alpha1, beta2) == 1 */
static inline bool g_pairing_verify(const czk_g1_aff *ic, size_t n_pub, const czk_fr *pub_std,
                                    const czk_g1_aff *alpha1, const czk_g2_aff *beta2,
                                    const czk_g2_aff *gamma2, const czk_g2_aff *delta2,
                                    const czk_g1_aff *pa, const czk_g2_aff *pb, const czk_g1_aff *pc)
{
    czk_g1 acc, t;
    czk_g1_aff p[4];
    czk_g2_aff q[4];

    czk_g1_from_aff(&acc, &ic[0]);
    for (size_t i = 0; i < n_pub; i++) {
        czk_g1_mul_aff(&t, &ic[i + 1], &pub_std[i]);
        czk_g1_add(&acc, &acc, &t);
    }
    czk_g1_aff_neg(&p[0], pa);
    q[0] = *pb;
    czk_g1_to_aff(&p[1], &acc);
    q[1] = *gamma2;
    p[2] = *pc;
    q[2] = *delta2;
    p[3] = *alpha1;
    q[3] = *beta2;
    return czk_pairing_product_is_one(p, q, 4);
}

#endif
