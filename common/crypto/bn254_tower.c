/*
 * bn254_tower.c — BN254's extension tower above Fp2 (bn254_pairing.h):
 * Fp6 = Fp2[v]/(v^3 - xi), xi = 9 + u, and Fp12 = Fp6[w]/(w^2 - v), so
 * w^6 = xi.  The same algorithms as BLS12-381's tower (pairing_tower.c),
 * whose non-residue is 1 + u: Karatsuba at each level, the "complex" Fp12
 * squaring, inversion down the tower to one Fp2 inversion, Granger-Scott
 * cyclotomic squaring, and the Frobenius map
 *     a = sum_k a_k w^k  ->  a^p = sum_k conj(a_k) gamma_k w^k,
 * gamma_k = xi^(k(p-1)/6), derived from p at first use (pthread_once)
 * rather than typed in; the tests check the map against exponentiation by p.
 * Representation: Montgomery form throughout (bn254_field.h).
 */
#include "common/crypto/bn254_pairing.h"

#include <errno.h>
#include <pthread.h>
#include <string.h>

const czk_bn254_fp6 CZK_BN254_FP6_ZERO;
const czk_bn254_fp12 CZK_BN254_FP12_ZERO;
/* 2^256 mod p (CZK_BN254_FP_ONE), written out because C cannot use another
 * object's value in a constant initialiser; the tests check it */
#define BN_FP_ONE_LIMBS                                                           \
    { 0xd35d438dc58f0d9dULL, 0x0a78eb28f5c70b3dULL, 0x666ea36f7879462cULL,        \
      0x0e0a77c19a07df2fULL }
const czk_bn254_fp6 CZK_BN254_FP6_ONE = { .c0 = { .c0 = { BN_FP_ONE_LIMBS } } };
const czk_bn254_fp12 CZK_BN254_FP12_ONE = { .c0 = { .c0 = { .c0 = { BN_FP_ONE_LIMBS } } } };

/* ---------------------------------------------------------------- Fp6 ---- */

void czk_bn254_fp6_add(czk_bn254_fp6 *r, const czk_bn254_fp6 *a, const czk_bn254_fp6 *b)
{
    czk_bn254_fp2_add(&r->c0, &a->c0, &b->c0);
    czk_bn254_fp2_add(&r->c1, &a->c1, &b->c1);
    czk_bn254_fp2_add(&r->c2, &a->c2, &b->c2);
}

void czk_bn254_fp6_sub(czk_bn254_fp6 *r, const czk_bn254_fp6 *a, const czk_bn254_fp6 *b)
{
    czk_bn254_fp2_sub(&r->c0, &a->c0, &b->c0);
    czk_bn254_fp2_sub(&r->c1, &a->c1, &b->c1);
    czk_bn254_fp2_sub(&r->c2, &a->c2, &b->c2);
}

void czk_bn254_fp6_neg(czk_bn254_fp6 *r, const czk_bn254_fp6 *a)
{
    czk_bn254_fp2_neg(&r->c0, &a->c0);
    czk_bn254_fp2_neg(&r->c1, &a->c1);
    czk_bn254_fp2_neg(&r->c2, &a->c2);
}

void czk_bn254_fp6_mul(czk_bn254_fp6 *r, const czk_bn254_fp6 *a, const czk_bn254_fp6 *b)
{
    czk_bn254_fp2 t0, t1, t2, s, u, c0, c1, c2;

    czk_bn254_fp2_mul(&t0, &a->c0, &b->c0);
    czk_bn254_fp2_mul(&t1, &a->c1, &b->c1);
    czk_bn254_fp2_mul(&t2, &a->c2, &b->c2);

    /* c0 = t0 + xi*((a1+a2)(b1+b2) - t1 - t2) */
    czk_bn254_fp2_add(&s, &a->c1, &a->c2);
    czk_bn254_fp2_add(&u, &b->c1, &b->c2);
    czk_bn254_fp2_mul(&c0, &s, &u);
    czk_bn254_fp2_sub(&c0, &c0, &t1);
    czk_bn254_fp2_sub(&c0, &c0, &t2);
    czk_bn254_fp2_mul_xi(&c0, &c0);
    czk_bn254_fp2_add(&c0, &c0, &t0);

    /* c1 = (a0+a1)(b0+b1) - t0 - t1 + xi*t2 */
    czk_bn254_fp2_add(&s, &a->c0, &a->c1);
    czk_bn254_fp2_add(&u, &b->c0, &b->c1);
    czk_bn254_fp2_mul(&c1, &s, &u);
    czk_bn254_fp2_sub(&c1, &c1, &t0);
    czk_bn254_fp2_sub(&c1, &c1, &t1);
    czk_bn254_fp2_mul_xi(&s, &t2);
    czk_bn254_fp2_add(&c1, &c1, &s);

    /* c2 = (a0+a2)(b0+b2) - t0 - t2 + t1 */
    czk_bn254_fp2_add(&s, &a->c0, &a->c2);
    czk_bn254_fp2_add(&u, &b->c0, &b->c2);
    czk_bn254_fp2_mul(&c2, &s, &u);
    czk_bn254_fp2_sub(&c2, &c2, &t0);
    czk_bn254_fp2_sub(&c2, &c2, &t2);
    czk_bn254_fp2_add(&c2, &c2, &t1);

    r->c0 = c0;
    r->c1 = c1;
    r->c2 = c2;
}

/* Chung-Hasan SQR2 */
void czk_bn254_fp6_sqr(czk_bn254_fp6 *r, const czk_bn254_fp6 *a)
{
    czk_bn254_fp2 s0, s1, s2, s3, s4, t;

    czk_bn254_fp2_sqr(&s0, &a->c0);
    czk_bn254_fp2_mul(&s1, &a->c0, &a->c1);
    czk_bn254_fp2_dbl(&s1, &s1);                 /* 2 a0 a1 */
    czk_bn254_fp2_sub(&t, &a->c0, &a->c1);
    czk_bn254_fp2_add(&t, &t, &a->c2);
    czk_bn254_fp2_sqr(&s2, &t);                  /* (a0 - a1 + a2)^2 */
    czk_bn254_fp2_mul(&s3, &a->c1, &a->c2);
    czk_bn254_fp2_dbl(&s3, &s3);                 /* 2 a1 a2 */
    czk_bn254_fp2_sqr(&s4, &a->c2);

    /* c0 = s0 + xi s3; c1 = s1 + xi s4; c2 = s1 + s2 + s3 - s0 - s4 */
    czk_bn254_fp2_mul_xi(&t, &s3);
    czk_bn254_fp2_add(&r->c0, &s0, &t);
    czk_bn254_fp2_add(&t, &s1, &s2);
    czk_bn254_fp2_add(&t, &t, &s3);
    czk_bn254_fp2_sub(&t, &t, &s0);
    czk_bn254_fp2_sub(&r->c2, &t, &s4);
    czk_bn254_fp2_mul_xi(&t, &s4);
    czk_bn254_fp2_add(&r->c1, &s1, &t);
}

void czk_bn254_fp6_mul_v(czk_bn254_fp6 *r, const czk_bn254_fp6 *a)
{
    czk_bn254_fp2 t;

    czk_bn254_fp2_mul_xi(&t, &a->c2);
    r->c2 = a->c1;
    r->c1 = a->c0;
    r->c0 = t;
}

int czk_bn254_fp6_inv(czk_bn254_fp6 *r, const czk_bn254_fp6 *a)
{
    czk_bn254_fp2 A, B, C, F, t;
    int rc;

    /* A = a0^2 - xi a1 a2, B = xi a2^2 - a0 a1, C = a1^2 - a0 a2,
     * F = a0 A + xi (a2 B + a1 C), a^-1 = (A + B v + C v^2) / F */
    czk_bn254_fp2_sqr(&A, &a->c0);
    czk_bn254_fp2_mul(&t, &a->c1, &a->c2);
    czk_bn254_fp2_mul_xi(&t, &t);
    czk_bn254_fp2_sub(&A, &A, &t);

    czk_bn254_fp2_sqr(&B, &a->c2);
    czk_bn254_fp2_mul_xi(&B, &B);
    czk_bn254_fp2_mul(&t, &a->c0, &a->c1);
    czk_bn254_fp2_sub(&B, &B, &t);

    czk_bn254_fp2_sqr(&C, &a->c1);
    czk_bn254_fp2_mul(&t, &a->c0, &a->c2);
    czk_bn254_fp2_sub(&C, &C, &t);

    czk_bn254_fp2_mul(&F, &a->c2, &B);
    czk_bn254_fp2_mul(&t, &a->c1, &C);
    czk_bn254_fp2_add(&F, &F, &t);
    czk_bn254_fp2_mul_xi(&F, &F);
    czk_bn254_fp2_mul(&t, &a->c0, &A);
    czk_bn254_fp2_add(&F, &F, &t);

    rc = czk_bn254_fp2_inv(&F, &F);
    if (rc < 0) {
        *r = CZK_BN254_FP6_ZERO;
        return -EDOM;
    }
    czk_bn254_fp2_mul(&r->c0, &A, &F);
    czk_bn254_fp2_mul(&r->c1, &B, &F);
    czk_bn254_fp2_mul(&r->c2, &C, &F);
    return 0;
}

bool czk_bn254_fp6_is_zero(const czk_bn254_fp6 *a)
{
    return czk_bn254_fp2_is_zero(&a->c0) && czk_bn254_fp2_is_zero(&a->c1) && czk_bn254_fp2_is_zero(&a->c2);
}

bool czk_bn254_fp6_eq(const czk_bn254_fp6 *a, const czk_bn254_fp6 *b)
{
    return czk_bn254_fp2_eq(&a->c0, &b->c0) && czk_bn254_fp2_eq(&a->c1, &b->c1) && czk_bn254_fp2_eq(&a->c2, &b->c2);
}

/* a * (b0 + b1 v) */
static void fp6_mul_01(czk_bn254_fp6 *r, const czk_bn254_fp6 *a, const czk_bn254_fp2 *b0, const czk_bn254_fp2 *b1)
{
    czk_bn254_fp2 t0, t1, s, u, c0, c1, c2;

    czk_bn254_fp2_mul(&t0, &a->c0, b0);
    czk_bn254_fp2_mul(&t1, &a->c1, b1);

    czk_bn254_fp2_mul(&c0, &a->c2, b1);          /* c0 = t0 + xi a2 b1 */
    czk_bn254_fp2_mul_xi(&c0, &c0);
    czk_bn254_fp2_add(&c0, &c0, &t0);

    czk_bn254_fp2_add(&s, &a->c0, &a->c1);       /* c1 = (a0+a1)(b0+b1) - t0 - t1 */
    czk_bn254_fp2_add(&u, b0, b1);
    czk_bn254_fp2_mul(&c1, &s, &u);
    czk_bn254_fp2_sub(&c1, &c1, &t0);
    czk_bn254_fp2_sub(&c1, &c1, &t1);

    czk_bn254_fp2_mul(&c2, &a->c2, b0);          /* c2 = a2 b0 + t1 */
    czk_bn254_fp2_add(&c2, &c2, &t1);

    r->c0 = c0;
    r->c1 = c1;
    r->c2 = c2;
}

/* --------------------------------------------------------------- Fp12 ---- */

void czk_bn254_fp12_add(czk_bn254_fp12 *r, const czk_bn254_fp12 *a, const czk_bn254_fp12 *b)
{
    czk_bn254_fp6_add(&r->c0, &a->c0, &b->c0);
    czk_bn254_fp6_add(&r->c1, &a->c1, &b->c1);
}

void czk_bn254_fp12_sub(czk_bn254_fp12 *r, const czk_bn254_fp12 *a, const czk_bn254_fp12 *b)
{
    czk_bn254_fp6_sub(&r->c0, &a->c0, &b->c0);
    czk_bn254_fp6_sub(&r->c1, &a->c1, &b->c1);
}

void czk_bn254_fp12_mul(czk_bn254_fp12 *r, const czk_bn254_fp12 *a, const czk_bn254_fp12 *b)
{
    czk_bn254_fp6 t0, t1, s, u;

    czk_bn254_fp6_mul(&t0, &a->c0, &b->c0);
    czk_bn254_fp6_mul(&t1, &a->c1, &b->c1);
    czk_bn254_fp6_add(&s, &a->c0, &a->c1);
    czk_bn254_fp6_add(&u, &b->c0, &b->c1);
    czk_bn254_fp6_mul(&s, &s, &u);
    czk_bn254_fp6_sub(&s, &s, &t0);
    czk_bn254_fp6_sub(&r->c1, &s, &t1);          /* (a0+a1)(b0+b1) - t0 - t1 */
    czk_bn254_fp6_mul_v(&t1, &t1);
    czk_bn254_fp6_add(&r->c0, &t0, &t1);         /* t0 + v t1 */
}

void czk_bn254_fp12_sqr(czk_bn254_fp12 *r, const czk_bn254_fp12 *a)
{
    czk_bn254_fp6 t, s, u;

    /* (a0 + a1 w)^2 = a0^2 + v a1^2 + 2 a0 a1 w;
     * a0^2 + v a1^2 = (a0 + a1)(a0 + v a1) - t - v t with t = a0 a1 */
    czk_bn254_fp6_mul(&t, &a->c0, &a->c1);
    czk_bn254_fp6_add(&s, &a->c0, &a->c1);
    czk_bn254_fp6_mul_v(&u, &a->c1);
    czk_bn254_fp6_add(&u, &u, &a->c0);
    czk_bn254_fp6_mul(&s, &s, &u);
    czk_bn254_fp6_sub(&s, &s, &t);
    czk_bn254_fp6_mul_v(&u, &t);
    czk_bn254_fp6_sub(&r->c0, &s, &u);
    czk_bn254_fp6_add(&r->c1, &t, &t);
}

int czk_bn254_fp12_inv(czk_bn254_fp12 *r, const czk_bn254_fp12 *a)
{
    czk_bn254_fp6 t0, t1;

    /* (a0 + a1 w)^-1 = (a0 - a1 w) / (a0^2 - v a1^2) */
    czk_bn254_fp6_sqr(&t0, &a->c0);
    czk_bn254_fp6_sqr(&t1, &a->c1);
    czk_bn254_fp6_mul_v(&t1, &t1);
    czk_bn254_fp6_sub(&t0, &t0, &t1);
    if (czk_bn254_fp6_inv(&t0, &t0) < 0) {
        *r = CZK_BN254_FP12_ZERO;
        return -EDOM;
    }
    czk_bn254_fp6_mul(&r->c0, &a->c0, &t0);
    czk_bn254_fp6_mul(&r->c1, &a->c1, &t0);
    czk_bn254_fp6_neg(&r->c1, &r->c1);
    return 0;
}

void czk_bn254_fp12_conj(czk_bn254_fp12 *r, const czk_bn254_fp12 *a)
{
    r->c0 = a->c0;
    czk_bn254_fp6_neg(&r->c1, &a->c1);
}

bool czk_bn254_fp12_eq(const czk_bn254_fp12 *a, const czk_bn254_fp12 *b)
{
    return czk_bn254_fp6_eq(&a->c0, &b->c0) && czk_bn254_fp6_eq(&a->c1, &b->c1);
}

bool czk_bn254_fp12_is_one(const czk_bn254_fp12 *a)
{
    return czk_bn254_fp12_eq(a, &CZK_BN254_FP12_ONE);
}

void czk_bn254_fp12_mul_034(czk_bn254_fp12 *r, const czk_bn254_fp12 *a, const czk_bn254_fp2 *o0,
                            const czk_bn254_fp2 *o1, const czk_bn254_fp2 *o3)
{
    czk_bn254_fp6 t0, t1, s;
    czk_bn254_fp2 o01;

    /* sparse b = o0 + (o1 + o3 v) w: t0 = a0 o0, t1 = a1 (o1 + o3 v),
     * c1 = (a0 + a1)(o0 + o1 + o3 v) - t0 - t1, c0 = t0 + v t1 */
    czk_bn254_fp2_mul(&t0.c0, &a->c0.c0, o0);
    czk_bn254_fp2_mul(&t0.c1, &a->c0.c1, o0);
    czk_bn254_fp2_mul(&t0.c2, &a->c0.c2, o0);
    fp6_mul_01(&t1, &a->c1, o1, o3);
    czk_bn254_fp6_add(&s, &a->c0, &a->c1);
    czk_bn254_fp2_add(&o01, o0, o1);
    fp6_mul_01(&s, &s, &o01, o3);
    czk_bn254_fp6_sub(&s, &s, &t0);
    czk_bn254_fp6_sub(&r->c1, &s, &t1);
    czk_bn254_fp6_mul_v(&t1, &t1);
    czk_bn254_fp6_add(&r->c0, &t0, &t1);
}

/* (a + b s)^2 in Fp4 = Fp2[s]/(s^2 - xi): returns (a^2 + xi b^2, 2ab) */
static void fp4_sqr(czk_bn254_fp2 *c0, czk_bn254_fp2 *c1, const czk_bn254_fp2 *a, const czk_bn254_fp2 *b)
{
    czk_bn254_fp2 t0, t1, t2;

    czk_bn254_fp2_sqr(&t0, a);
    czk_bn254_fp2_sqr(&t1, b);
    czk_bn254_fp2_mul_xi(&t2, &t1);
    czk_bn254_fp2_add(c0, &t2, &t0);
    czk_bn254_fp2_add(&t2, a, b);
    czk_bn254_fp2_sqr(&t2, &t2);
    czk_bn254_fp2_sub(&t2, &t2, &t0);
    czk_bn254_fp2_sub(c1, &t2, &t1);
}

/* Granger-Scott, "Faster squaring in the cyclotomic subgroup of sixth degree
 * extensions" (PKC 2010), in the layout of zkcrypto/bls12_381. */
void czk_bn254_fp12_cyclotomic_sqr(czk_bn254_fp12 *r, const czk_bn254_fp12 *f)
{
    czk_bn254_fp2 z0 = f->c0.c0, z4 = f->c0.c1, z3 = f->c0.c2;
    czk_bn254_fp2 z2 = f->c1.c0, z1 = f->c1.c1, z5 = f->c1.c2;
    czk_bn254_fp2 t0, t1, t2, t3;

    fp4_sqr(&t0, &t1, &z0, &z1);
    czk_bn254_fp2_sub(&z0, &t0, &z0);            /* z0 = 2(t0 - z0) + t0 */
    czk_bn254_fp2_dbl(&z0, &z0);
    czk_bn254_fp2_add(&z0, &z0, &t0);
    czk_bn254_fp2_add(&z1, &t1, &z1);            /* z1 = 2(t1 + z1) + t1 */
    czk_bn254_fp2_dbl(&z1, &z1);
    czk_bn254_fp2_add(&z1, &z1, &t1);

    fp4_sqr(&t0, &t1, &z2, &z3);
    fp4_sqr(&t2, &t3, &z4, &z5);

    czk_bn254_fp2_sub(&z4, &t0, &z4);            /* z4 = 2(t0 - z4) + t0 */
    czk_bn254_fp2_dbl(&z4, &z4);
    czk_bn254_fp2_add(&z4, &z4, &t0);
    czk_bn254_fp2_add(&z5, &t1, &z5);            /* z5 = 2(t1 + z5) + t1 */
    czk_bn254_fp2_dbl(&z5, &z5);
    czk_bn254_fp2_add(&z5, &z5, &t1);

    czk_bn254_fp2_mul_xi(&t0, &t3);              /* z2 = 2(xi t3 + z2) + xi t3 */
    czk_bn254_fp2_add(&z2, &t0, &z2);
    czk_bn254_fp2_dbl(&z2, &z2);
    czk_bn254_fp2_add(&z2, &z2, &t0);
    czk_bn254_fp2_sub(&z3, &t2, &z3);            /* z3 = 2(t2 - z3) + t2 */
    czk_bn254_fp2_dbl(&z3, &z3);
    czk_bn254_fp2_add(&z3, &z3, &t2);

    r->c0.c0 = z0;
    r->c0.c1 = z4;
    r->c0.c2 = z3;
    r->c1.c0 = z2;
    r->c1.c1 = z1;
    r->c1.c2 = z5;
}

void czk_bn254_fp12_pow(czk_bn254_fp12 *r, const czk_bn254_fp12 *a, const uint64_t *e, size_t e_limbs)
{
    czk_bn254_fp12 acc = CZK_BN254_FP12_ONE, base = *a;
    size_t top = e_limbs;

    while (top > 0 && e[top - 1] == 0)
        top--;
    for (size_t i = top; i-- > 0;) {
        for (int b = 63; b >= 0; b--) {
            czk_bn254_fp12_sqr(&acc, &acc);
            if ((e[i] >> b) & 1)
                czk_bn254_fp12_mul(&acc, &acc, &base);
        }
    }
    *r = acc;
}

/* ---------------------------------------------------------- Frobenius ---- */

/* gamma[k] = xi^(k (q-1)/6), k = 0..5 */
static czk_bn254_fp2 frob_gamma[6];
static pthread_once_t frob_once = PTHREAD_ONCE_INIT;

static void frob_init(void)
{
    uint64_t e[CZK_BN254_LIMBS], p1[CZK_BN254_LIMBS];
    unsigned __int128 rem = 0;

    /* e = (p - 1) / 6 by long division (p - 1 has no borrow: p is odd) */
    memcpy(p1, CZK_BN254_FP_MOD.l, sizeof(p1));
    p1[0] -= 1;
    for (int i = CZK_BN254_LIMBS - 1; i >= 0; i--) {
        unsigned __int128 cur = (rem << 64) | p1[i];
        e[i] = (uint64_t)(cur / 6);
        rem = cur % 6;
    }

    czk_bn254_fp2 xi, acc = CZK_BN254_FP2_ONE;
    czk_bn254_fp2_mul_xi(&xi, &CZK_BN254_FP2_ONE); /* xi = 9 + u */
    for (int i = CZK_BN254_LIMBS - 1; i >= 0; i--) {
        for (int b = 63; b >= 0; b--) {
            czk_bn254_fp2_sqr(&acc, &acc);
            if ((e[i] >> b) & 1)
                czk_bn254_fp2_mul(&acc, &acc, &xi);
        }
    }
    frob_gamma[0] = CZK_BN254_FP2_ONE;
    for (int k = 1; k < 6; k++)
        czk_bn254_fp2_mul(&frob_gamma[k], &frob_gamma[k - 1], &acc);
}

static void fp12_frobenius1(czk_bn254_fp12 *r, const czk_bn254_fp12 *a)
{
    czk_bn254_fp2 *rc[6] = {&r->c0.c0, &r->c1.c0, &r->c0.c1, &r->c1.c1, &r->c0.c2, &r->c1.c2};
    const czk_bn254_fp2 *ac[6] = {&a->c0.c0, &a->c1.c0, &a->c0.c1, &a->c1.c1, &a->c0.c2, &a->c1.c2};

    for (int k = 0; k < 6; k++) {
        czk_bn254_fp2_conj(rc[k], ac[k]);
        if (k > 0)
            czk_bn254_fp2_mul(rc[k], rc[k], &frob_gamma[k]);
    }
}

void czk_bn254_fp12_frobenius(czk_bn254_fp12 *r, const czk_bn254_fp12 *a, unsigned k)
{
    czk_bn254_fp12 t = *a;

    pthread_once(&frob_once, frob_init);
    k %= 12;
    if (k == 6) {
        czk_bn254_fp12_conj(r, a);
        return;
    }
    for (unsigned i = 0; i < k; i++)
        fp12_frobenius1(&t, &t);
    *r = t;
}
