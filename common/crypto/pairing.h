/*
 * pairing.h — Fp6 = Fp2[v]/(v^3 - (1+u)), Fp12 = Fp6[w]/(w^2 - v), the optimal
 * ate pairing on BLS12-381 and its final exponentiation (the same as
 * snarkjs/ffjavascript, so e(alpha1, beta2) equals vk_alphabeta_12).
 */
#ifndef CZK_PAIRING_H
#define CZK_PAIRING_H

#include "common/crypto/curve.h"

typedef struct czk_fp6 { czk_fp2 c0, c1, c2; } czk_fp6;
typedef struct czk_fp12 { czk_fp6 c0, c1; } czk_fp12;

extern const czk_fp12 CZK_FP12_ONE;
void czk_fp12_mul(czk_fp12 *r, const czk_fp12 *a, const czk_fp12 *b);
void czk_fp12_sqr(czk_fp12 *r, const czk_fp12 *a);
int czk_fp12_inv(czk_fp12 *r, const czk_fp12 *a);
void czk_fp12_conj(czk_fp12 *r, const czk_fp12 *a);
bool czk_fp12_eq(const czk_fp12 *a, const czk_fp12 *b);
bool czk_fp12_is_one(const czk_fp12 *a);

/* Miller loop of prod_i e(P_i, Q_i) (infinity pairs contribute 1), then final exp.
 * czk_final_exp(f) = f^(3 (q^12 - 1) / r): wasmcurves' (zkcrypto's) hard part
 * computes 3 times the textbook exponent, and snarkjs' vk_alphabeta_12 is that
 * value, so czk_pairing == snarkjs' curve.pairing bit for bit.  Points must be
 * on their curves and Q in G2 (the loop does not check). */
void czk_miller_loop(czk_fp12 *r, const czk_g1_aff *p, const czk_g2_aff *q, size_t n);
void czk_final_exp(czk_fp12 *r, const czk_fp12 *f);
void czk_pairing(czk_fp12 *r, const czk_g1_aff *p, const czk_g2_aff *q);
/* true when prod_i e(P_i, Q_i) == 1 */
bool czk_pairing_product_is_one(const czk_g1_aff *p, const czk_g2_aff *q, size_t n);

/* ---- additions (pairing_tower.c): the rest of the tower, used by the
 * pairing, the verifier and the tests.  Element layout: an Fp12 element is
 * c0 + c1*w with c0, c1 in Fp6, an Fp6 element c0 + c1*v + c2*v^2, so the
 * Fp2 coefficient of w^k is c(k%2).c(k/2).  All functions allow r to alias. */
extern const czk_fp6 CZK_FP6_ZERO;
extern const czk_fp6 CZK_FP6_ONE;
void czk_fp6_add(czk_fp6 *r, const czk_fp6 *a, const czk_fp6 *b);
void czk_fp6_sub(czk_fp6 *r, const czk_fp6 *a, const czk_fp6 *b);
void czk_fp6_neg(czk_fp6 *r, const czk_fp6 *a);
void czk_fp6_mul(czk_fp6 *r, const czk_fp6 *a, const czk_fp6 *b);
void czk_fp6_sqr(czk_fp6 *r, const czk_fp6 *a);
void czk_fp6_mul_v(czk_fp6 *r, const czk_fp6 *a); /* times v */
int czk_fp6_inv(czk_fp6 *r, const czk_fp6 *a);    /* -EDOM when a == 0 */
bool czk_fp6_is_zero(const czk_fp6 *a);
bool czk_fp6_eq(const czk_fp6 *a, const czk_fp6 *b);

extern const czk_fp12 CZK_FP12_ZERO;
void czk_fp12_add(czk_fp12 *r, const czk_fp12 *a, const czk_fp12 *b);
void czk_fp12_sub(czk_fp12 *r, const czk_fp12 *a, const czk_fp12 *b);
/* r = a^(q^k), k = 0..11 */
void czk_fp12_frobenius(czk_fp12 *r, const czk_fp12 *a, unsigned k);
/* r = a^e, e a plain integer of e_limbs 64-bit limbs (least significant first) */
void czk_fp12_pow(czk_fp12 *r, const czk_fp12 *a, const uint64_t *e, size_t e_limbs);
/* r = a * (o0 + o1*v + o4*v*w): the sparse product with a line value */
void czk_fp12_mul_014(czk_fp12 *r, const czk_fp12 *a, const czk_fp2 *o0, const czk_fp2 *o1,
                      const czk_fp2 *o4);
/* squaring for elements of the cyclotomic subgroup (after the easy part of
 * the final exponentiation), Granger-Scott; wrong for other elements */
void czk_fp12_cyclotomic_sqr(czk_fp12 *r, const czk_fp12 *a);

#endif
