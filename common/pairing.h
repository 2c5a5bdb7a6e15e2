/*
 * pairing.h — Fp6 = Fp2[v]/(v^3 - (1+u)), Fp12 = Fp6[w]/(w^2 - v), the optimal
 * ate pairing on BLS12-381 and its final exponentiation (the same as
 * snarkjs/ffjavascript, so e(alpha1, beta2) equals vk_alphabeta_12).
 */
#ifndef CZK_PAIRING_H
#define CZK_PAIRING_H

#include "common/curve.h"

typedef struct czk_fp6 { czk_fp2 c0, c1, c2; } czk_fp6;
typedef struct czk_fp12 { czk_fp6 c0, c1; } czk_fp12;

extern const czk_fp12 CZK_FP12_ONE;
void czk_fp12_mul(czk_fp12 *r, const czk_fp12 *a, const czk_fp12 *b);
void czk_fp12_sqr(czk_fp12 *r, const czk_fp12 *a);
int czk_fp12_inv(czk_fp12 *r, const czk_fp12 *a);
void czk_fp12_conj(czk_fp12 *r, const czk_fp12 *a);
bool czk_fp12_eq(const czk_fp12 *a, const czk_fp12 *b);
bool czk_fp12_is_one(const czk_fp12 *a);

/* Miller loop of prod_i e(P_i, Q_i) (infinity pairs contribute 1), then final exp. */
void czk_miller_loop(czk_fp12 *r, const czk_g1_aff *p, const czk_g2_aff *q, size_t n);
void czk_final_exp(czk_fp12 *r, const czk_fp12 *f);
void czk_pairing(czk_fp12 *r, const czk_g1_aff *p, const czk_g2_aff *q);
/* true when prod_i e(P_i, Q_i) == 1 */
bool czk_pairing_product_is_one(const czk_g1_aff *p, const czk_g2_aff *q, size_t n);

#endif
