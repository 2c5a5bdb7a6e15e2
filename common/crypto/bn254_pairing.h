/*
 * bn254_pairing.h — BN254's tower Fp6 = Fp2[v]/(v^3 - xi), xi = 9 + u,
 * Fp12 = Fp6[w]/(w^2 - v) (so w^6 = xi), the optimal ate pairing and its
 * final exponentiation, computed so that czk_bn254_pairing equals
 * snarkjs/ffjavascript's bn128 curve.pairing bit for bit (hence
 * e(alpha1, beta2) equals vk_alphabeta_12 of a snarkjs bn128 key).
 *
 * Element layout (ffjavascript's too): an Fp12 element is c0 + c1*w with
 * c0, c1 in Fp6, an Fp6 element c0 + c1*v + c2*v^2, so the Fp2 coefficient
 * of w^k is c(k%2).c(k/2).  Montgomery form throughout (bn254_field.h).
 * All functions allow r to alias their inputs.  Nothing here is constant
 * time: pairings serve verification, on public values.
 */
#ifndef CZK_BN254_PAIRING_H
#define CZK_BN254_PAIRING_H

#include "common/crypto/bn254_curve.h"

typedef struct czk_bn254_fp6 { czk_bn254_fp2 c0, c1, c2; } czk_bn254_fp6;
typedef struct czk_bn254_fp12 { czk_bn254_fp6 c0, c1; } czk_bn254_fp12;

/* ---- Fp6 ---- */
extern const czk_bn254_fp6 CZK_BN254_FP6_ZERO;
extern const czk_bn254_fp6 CZK_BN254_FP6_ONE;
void czk_bn254_fp6_add(czk_bn254_fp6 *r, const czk_bn254_fp6 *a, const czk_bn254_fp6 *b);
void czk_bn254_fp6_sub(czk_bn254_fp6 *r, const czk_bn254_fp6 *a, const czk_bn254_fp6 *b);
void czk_bn254_fp6_neg(czk_bn254_fp6 *r, const czk_bn254_fp6 *a);
void czk_bn254_fp6_mul(czk_bn254_fp6 *r, const czk_bn254_fp6 *a, const czk_bn254_fp6 *b);
void czk_bn254_fp6_sqr(czk_bn254_fp6 *r, const czk_bn254_fp6 *a);
void czk_bn254_fp6_mul_v(czk_bn254_fp6 *r, const czk_bn254_fp6 *a); /* times v */
int czk_bn254_fp6_inv(czk_bn254_fp6 *r, const czk_bn254_fp6 *a);    /* -EDOM when a == 0 */
bool czk_bn254_fp6_is_zero(const czk_bn254_fp6 *a);
bool czk_bn254_fp6_eq(const czk_bn254_fp6 *a, const czk_bn254_fp6 *b);

/* ---- Fp12 ---- */
extern const czk_bn254_fp12 CZK_BN254_FP12_ZERO;
extern const czk_bn254_fp12 CZK_BN254_FP12_ONE;
void czk_bn254_fp12_add(czk_bn254_fp12 *r, const czk_bn254_fp12 *a, const czk_bn254_fp12 *b);
void czk_bn254_fp12_sub(czk_bn254_fp12 *r, const czk_bn254_fp12 *a, const czk_bn254_fp12 *b);
void czk_bn254_fp12_mul(czk_bn254_fp12 *r, const czk_bn254_fp12 *a, const czk_bn254_fp12 *b);
void czk_bn254_fp12_sqr(czk_bn254_fp12 *r, const czk_bn254_fp12 *a);
int czk_bn254_fp12_inv(czk_bn254_fp12 *r, const czk_bn254_fp12 *a); /* -EDOM when a == 0 */
void czk_bn254_fp12_conj(czk_bn254_fp12 *r, const czk_bn254_fp12 *a); /* a^(p^6) */
bool czk_bn254_fp12_eq(const czk_bn254_fp12 *a, const czk_bn254_fp12 *b);
bool czk_bn254_fp12_is_one(const czk_bn254_fp12 *a);
/* r = a^(p^k), k = 0..11 */
void czk_bn254_fp12_frobenius(czk_bn254_fp12 *r, const czk_bn254_fp12 *a, unsigned k);
/* r = a^e, e a plain integer of e_limbs 64-bit limbs (least significant first) */
void czk_bn254_fp12_pow(czk_bn254_fp12 *r, const czk_bn254_fp12 *a, const uint64_t *e, size_t e_limbs);
/* r = a * (o0 + o1 w + o3 v w): the sparse product with a D-twist line value */
void czk_bn254_fp12_mul_034(czk_bn254_fp12 *r, const czk_bn254_fp12 *a, const czk_bn254_fp2 *o0,
                            const czk_bn254_fp2 *o1, const czk_bn254_fp2 *o3);
/* squaring in the cyclotomic subgroup (after the easy part of the final
 * exponentiation), Granger-Scott; wrong for other elements */
void czk_bn254_fp12_cyclotomic_sqr(czk_bn254_fp12 *r, const czk_bn254_fp12 *a);

/* ---- pairing ----
 * Miller loop of prod_i e(P_i, Q_i) over the NAF of 6u + 2 (u =
 * 4965661367192848881) with the two Frobenius line steps at the end;
 * infinity pairs contribute 1.  Points must be on their curves and Q in G2
 * (the loop does not check: czk_bn254_g2_aff_in_subgroup does).
 * czk_bn254_final_exp(f) = f^((p^6 - 1)(p^2 + 1) h) with h the hard-part
 * exponent of wasmcurves (ffjavascript), written out in bn254_pairing.c:
 * h = 2u(6u^2 + 3u + 1) (p^4 - p^2 + 1)/r, the textbook exponent times a
 * factor coprime to r (tests/bn254 checks both). */
void czk_bn254_miller_loop(czk_bn254_fp12 *r, const czk_bn254_g1_aff *p, const czk_bn254_g2_aff *q,
                           size_t n);
void czk_bn254_final_exp(czk_bn254_fp12 *r, const czk_bn254_fp12 *f);
void czk_bn254_pairing(czk_bn254_fp12 *r, const czk_bn254_g1_aff *p, const czk_bn254_g2_aff *q);
/* true when prod_i e(P_i, Q_i) == 1 (Groth16 verification) */
bool czk_bn254_pairing_product_is_one(const czk_bn254_g1_aff *p, const czk_bn254_g2_aff *q, size_t n);

#endif
