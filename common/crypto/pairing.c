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
 * Representation: Montgomery form throughout (field.h); inputs are affine
 * points of curve.h, infinity = all-zero bytes.
 */
#include "common/crypto/pairing.h"

#include <string.h>

#define ATE_X 0xd201000000010000ULL /* |x|; x is negative */

typedef struct g2_proj { czk_fp2 x, y, z; } g2_proj;

/* 4 xi (the twist's b') times a */
static void mul_b2(czk_fp2 *r, const czk_fp2 *a)
{
    czk_fp2_mul_nr(r, a);
    czk_fp2_dbl(r, r);
    czk_fp2_dbl(r, r);
}

/*
 * T = 2T, and the tangent line at T scaled by 2YZ:
 *   o0 = Y^2 - 3b'Z^2,  o1 = -3X^2 xp,  o4 = 2YZ yp.
 * New point (the x, y of 2T times a common factor 4):
 *   X3 = 2XY(Y^2 - 9b'Z^2), Y3 = (Y^2 + 9b'Z^2)^2 - 108 b'^2 Z^4, Z3 = 8 Y^3 Z.
 */
static void dbl_step(g2_proj *t, czk_fp2 *o0, czk_fp2 *o1, czk_fp2 *o4)
{
    czk_fp2 xx, yy, zz, w, w3, s, yz;

    czk_fp2_sqr(&xx, &t->x);
    czk_fp2_sqr(&yy, &t->y);
    czk_fp2_sqr(&zz, &t->z);
    mul_b2(&w, &zz);
    czk_fp2_dbl(&s, &w);
    czk_fp2_add(&w, &w, &s);               /* W = 3b'Z^2 */
    czk_fp2_mul(&yz, &t->y, &t->z);

    czk_fp2_sub(o0, &yy, &w);
    czk_fp2_dbl(o1, &xx);
    czk_fp2_add(o1, o1, &xx);
    czk_fp2_neg(o1, o1);                   /* -3X^2 (times xp by the caller) */
    czk_fp2_dbl(o4, &yz);                  /* 2YZ (times yp by the caller) */

    czk_fp2_dbl(&w3, &w);
    czk_fp2_add(&w3, &w3, &w);             /* 3W = 9b'Z^2 */

    czk_fp2_mul(&s, &t->x, &t->y);
    czk_fp2_dbl(&s, &s);                   /* 2XY */
    czk_fp2_sub(&t->x, &yy, &w3);
    czk_fp2_mul(&t->x, &t->x, &s);

    czk_fp2_mul(&t->z, &yy, &yz);          /* Y^3 Z */
    czk_fp2_dbl(&t->z, &t->z);
    czk_fp2_dbl(&t->z, &t->z);
    czk_fp2_dbl(&t->z, &t->z);

    czk_fp2_add(&s, &yy, &w3);
    czk_fp2_sqr(&s, &s);                   /* (Y^2 + 3W)^2 */
    czk_fp2_sqr(&w, &w);                   /* W^2 */
    czk_fp2_dbl(&w, &w);
    czk_fp2_dbl(&w, &w);                   /* 4W^2 */
    czk_fp2_sub(&s, &s, &w);
    czk_fp2_sub(&s, &s, &w);
    czk_fp2_sub(&t->y, &s, &w);            /* - 12 W^2 = -108 b'^2 Z^4 */
}

/*
 * T = T + Q (Q affine, T != +-Q), and the line through T and Q scaled by
 * L = X - xq Z, with H = Y - yq Z (slope H / L):
 *   o0 = H xq - L yq,  o1 = -H xp,  o4 = L yp.
 * New point: D = H^2 Z + L^3 - 2 L^2 X, X3 = L D,
 *            Y3 = H (L^2 X - D) - L^3 Y, Z3 = L^3 Z.
 */
static void add_step(g2_proj *t, const czk_g2_aff *q, czk_fp2 *o0, czk_fp2 *o1, czk_fp2 *o4)
{
    czk_fp2 h, l, l2, l3, l2x, d, s;

    czk_fp2_mul(&h, &q->y, &t->z);
    czk_fp2_sub(&h, &t->y, &h);
    czk_fp2_mul(&l, &q->x, &t->z);
    czk_fp2_sub(&l, &t->x, &l);

    czk_fp2_mul(o0, &h, &q->x);
    czk_fp2_mul(&s, &l, &q->y);
    czk_fp2_sub(o0, o0, &s);
    czk_fp2_neg(o1, &h);
    *o4 = l;

    czk_fp2_sqr(&l2, &l);
    czk_fp2_mul(&l3, &l2, &l);
    czk_fp2_mul(&l2x, &l2, &t->x);
    czk_fp2_sqr(&d, &h);
    czk_fp2_mul(&d, &d, &t->z);
    czk_fp2_add(&d, &d, &l3);
    czk_fp2_sub(&d, &d, &l2x);
    czk_fp2_sub(&d, &d, &l2x);

    czk_fp2_mul(&t->x, &l, &d);
    czk_fp2_sub(&s, &l2x, &d);
    czk_fp2_mul(&s, &s, &h);
    czk_fp2_mul(&l2x, &l3, &t->y);         /* reuse: L^3 Y */
    czk_fp2_sub(&t->y, &s, &l2x);
    czk_fp2_mul(&t->z, &t->z, &l3);
}

static void ell(czk_fp12 *f, const czk_g1_aff *p, czk_fp2 *o0, czk_fp2 *o1, czk_fp2 *o4)
{
    czk_fp2_mul_fp(o1, o1, &p->x);
    czk_fp2_mul_fp(o4, o4, &p->y);
    czk_fp12_mul_014(f, f, o0, o1, o4);
}

/* up to this many pairs share one Miller loop; more are done in batches */
#define ML_BATCH 16

static void miller_batch(czk_fp12 *f, const czk_g1_aff *p, const czk_g2_aff *q, size_t n)
{
    g2_proj t[ML_BATCH];
    size_t idx[ML_BATCH], m = 0;
    czk_fp2 o0, o1, o4;

    for (size_t i = 0; i < n; i++) {
        if (czk_g1_aff_is_inf(&p[i]) || czk_g2_aff_is_inf(&q[i]))
            continue;
        idx[m] = i;
        t[m].x = q[i].x;
        t[m].y = q[i].y;
        t[m].z = CZK_FP2_ONE;
        m++;
    }
    *f = CZK_FP12_ONE;
    if (m == 0)
        return;

    /* bits of |x| below the top one, most significant first */
    for (int b = 62; b >= 0; b--) {
        if (b != 62)
            czk_fp12_sqr(f, f);
        for (size_t j = 0; j < m; j++) {
            dbl_step(&t[j], &o0, &o1, &o4);
            ell(f, &p[idx[j]], &o0, &o1, &o4);
        }
        if ((ATE_X >> b) & 1) {
            for (size_t j = 0; j < m; j++) {
                add_step(&t[j], &q[idx[j]], &o0, &o1, &o4);
                ell(f, &p[idx[j]], &o0, &o1, &o4);
            }
        }
    }
    czk_fp12_conj(f, f); /* x < 0 */
}

void czk_miller_loop(czk_fp12 *r, const czk_g1_aff *p, const czk_g2_aff *q, size_t n)
{
    czk_fp12 acc = CZK_FP12_ONE, f;

    for (size_t i = 0; i < n; i += ML_BATCH) {
        size_t k = n - i < ML_BATCH ? n - i : ML_BATCH;
        miller_batch(&f, p + i, q + i, k);
        czk_fp12_mul(&acc, &acc, &f);
    }
    *r = acc;
}

/* r = a^x (x = -0xd201000000010000) for a in the cyclotomic subgroup */
static void cyclotomic_exp_x(czk_fp12 *r, const czk_fp12 *a)
{
    czk_fp12 acc = *a;

    for (int b = 62; b >= 0; b--) {
        czk_fp12_cyclotomic_sqr(&acc, &acc);
        if ((ATE_X >> b) & 1)
            czk_fp12_mul(&acc, &acc, a);
    }
    czk_fp12_conj(r, &acc);
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
    cyclotomic_exp_x(&t3, &t2);
    czk_fp12_cyclotomic_sqr(&t4, &t3);
    czk_fp12_mul(&t5, &t1, &t3);
    cyclotomic_exp_x(&t1, &t5);
    cyclotomic_exp_x(&t0, &t1);
    cyclotomic_exp_x(&t6, &t0);
    czk_fp12_mul(&t6, &t6, &t4);
    cyclotomic_exp_x(&t4, &t6);
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

void czk_pairing(czk_fp12 *r, const czk_g1_aff *p, const czk_g2_aff *q)
{
    czk_fp12 f;

    czk_miller_loop(&f, p, q, 1);
    czk_final_exp(r, &f);
}

bool czk_pairing_product_is_one(const czk_g1_aff *p, const czk_g2_aff *q, size_t n)
{
    czk_fp12 f;

    czk_miller_loop(&f, p, q, n);
    czk_final_exp(&f, &f);
    return czk_fp12_is_one(&f);
}
