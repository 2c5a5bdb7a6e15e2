/*
 * pairing.c — the optimal ate pairing on BLS12-381: a multi-Miller loop over
 * |x| = 0xd201000000010000 (x < 0, so the result is conjugated) with G2 points
 * kept in homogeneous projective coordinates on the twist, and the final
 * exponentiation exactly as snarkjs/ffjavascript (wasmcurves
 * build_bls12381.js, after zkcrypto/bls12_381) computes it, so that
 * e(alpha1, beta2) equals vk_alphabeta_12 of a snarkjs verification key.
 *
 * Twist: G2 lives on E': y^2 = x^3 + 4 xi over Fp2 (xi = 1 + u), mapped to
 * E(Fp12) by psi(x, y) = (x / w^2, y / w^3).  A line through points of E'
 * with slope L, evaluated at P = (xp, yp) in G1 and multiplied by w^3 (an
 * element of the subfield Fp4, which the final exponentiation removes), is
 *     (L xT - yT) + (-L xp) w^2 + yp w^3,
 * i.e. the sparse element o0 + o1 v + o4 v w of czk_fp12_mul_014.  Each line
 * is further scaled by an Fp2 factor (removed by the final exponentiation
 * too) so that no inversion is needed.
 *
 * The Miller loop's steps are pairing_tmpl.h's (shared with BN254).
 * Representation: Montgomery form throughout (field.h); inputs are affine
 * points of curve.h, infinity = all-zero bytes.
 */
#include "common/crypto/pairing.h"

#include <string.h>

#define ATE_X 0xd201000000010000ULL /* |x|; x is negative */

/* 4 xi (the twist's b') times a */
static void mul_b2(czk_fp2 *r, const czk_fp2 *a)
{
    czk_fp2_mul_nr(r, a);
    czk_fp2_dbl(r, r);
    czk_fp2_dbl(r, r);
}

#define PT czk
#define PT_FP2 czk_fp2
#define PT_FP12 czk_fp12
#define PT_FP2_ONE CZK_FP2_ONE
#define PT_FP12_ONE CZK_FP12_ONE
#define PT_G1A czk_g1_aff
#define PT_G2A czk_g2_aff
#define PT_G1 czk_g1
#define PT_G2 czk_g2
#define PT_MUL_B(r, a) mul_b2(r, a)
/* the M-twist's line lc + lx w^2 + ly w^3 = lc + lx v + ly v w */
#define PT_MUL_LINE(f, lc, lx, ly) czk_fp12_mul_014(f, f, lc, lx, ly)
#define PT_LOOP_TOP 62 /* the bits of |x| below the top one */
#define PT_DIGIT(b) ((ATE_X >> (b)) & 1)
#define PT_EXP_ABS ATE_X
#include "common/crypto/pairing_tmpl.h"

/* x < 0: the Miller function of |x| is conjugated */
static void miller_end(czk_fp12 *f, g2_proj *t, const czk_g1_aff *p, const czk_g2_aff *q,
                       const size_t *idx, size_t m)
{
    (void)t, (void)p, (void)q, (void)idx, (void)m;
    czk_fp12_conj(f, f);
}

/*
 * The same sequence of operations as wasmcurves' bls12381_finalExponentiation
 * (itself zkcrypto/bls12_381's final_exponentiation): the easy part
 * f^((q^6 - 1)(q^2 + 1)), then the hard part as a chain of exponentiations
 * by x and Frobenius maps.  Which power of the "textbook" pairing this is
 * does not matter for verification (any fixed power coprime to r works); it
 * matters for vk_alphabeta_12, so we follow snarkjs step by step.  It is
 * f^(3 (q^12 - 1) / r); tests/pairing/test_fp12.c checks that against the
 * exponent computed with GMP, and test_groth16_verify.c checks e(alpha1,
 * beta2) against vk_alphabeta_12 of real snarkjs keys.
 */
void czk_final_exp(czk_fp12 *r, const czk_fp12 *f)
{
    czk_fp12 t0, t1, t2, t3, t4, t5, t6;

    czk_fp12_conj(&t0, f);                 /* f^(q^6) */
    if (czk_fp12_inv(&t1, f) < 0) {        /* f == 0: not a Miller loop value */
        *r = CZK_FP12_ZERO;
        return;
    }
    czk_fp12_mul(&t2, &t0, &t1);
    t1 = t2;
    czk_fp12_frobenius(&t2, &t2, 2);
    czk_fp12_mul(&t2, &t2, &t1);           /* t2 = f^((q^6-1)(q^2+1)) */

    czk_fp12_cyclotomic_sqr(&t1, &t2);
    czk_fp12_conj(&t1, &t1);
    exp_by_neg_x(&t3, &t2);
    czk_fp12_cyclotomic_sqr(&t4, &t3);
    czk_fp12_mul(&t5, &t1, &t3);
    exp_by_neg_x(&t1, &t5);
    exp_by_neg_x(&t0, &t1);
    exp_by_neg_x(&t6, &t0);
    czk_fp12_mul(&t6, &t6, &t4);
    exp_by_neg_x(&t4, &t6);
    czk_fp12_conj(&t5, &t5);
    czk_fp12_mul(&t4, &t4, &t5);
    czk_fp12_mul(&t4, &t4, &t2);
    czk_fp12_conj(&t5, &t2);
    czk_fp12_mul(&t1, &t1, &t2);
    czk_fp12_frobenius(&t1, &t1, 3);
    czk_fp12_mul(&t6, &t6, &t5);
    czk_fp12_frobenius(&t6, &t6, 1);
    czk_fp12_mul(&t3, &t3, &t0);
    czk_fp12_frobenius(&t3, &t3, 2);
    czk_fp12_mul(&t3, &t3, &t1);
    czk_fp12_mul(&t3, &t3, &t6);
    czk_fp12_mul(r, &t3, &t4);
}
