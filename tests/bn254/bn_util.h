/*
 * bn_util.h — what the BN254 tests share: the moduli and the Montgomery
 * factor as GMP integers (from the decimal constants of the curve's
 * definition, not from the library), conversions between the library's
 * Montgomery limbs and GMP values, and a GMP reference for Fp2 and for
 * affine point arithmetic on G1 (over Fp) and G2 (over Fp2), so that the
 * library is checked against arithmetic written independently of it.
 */
#ifndef CZK_TESTS_BN254_BN_UTIL_H
#define CZK_TESTS_BN254_BN_UTIL_H

#include <gmp.h>
#include <stdbool.h>
#include <string.h>

#include "common/crypto/bn254_curve.h"
#include "tests/field/test_util.h"

#define BN_P_DEC "21888242871839275222246405745257275088696311157297823662689037894645226208583"
#define BN_R_DEC "21888242871839275222246405745257275088548364400416034343698204186575808495617"

static mpz_t bn_p, bn_r, bn_R, bn_Rinv_p, bn_Rinv_r;

static inline void bn_init(void)
{
    mpz_inits(bn_p, bn_r, bn_R, bn_Rinv_p, bn_Rinv_r, NULL);
    mpz_set_str(bn_p, BN_P_DEC, 10);
    mpz_set_str(bn_r, BN_R_DEC, 10);
    mpz_setbit(bn_R, 256);
    mpz_invert(bn_Rinv_p, bn_R, bn_p);
    mpz_invert(bn_Rinv_r, bn_R, bn_r);
}

/* Montgomery limbs <-> value, modulus m with R^-1 mod m in rinv */
static inline void bn_mont_set(uint64_t *l, const mpz_t v, const mpz_t m)
{
    mpz_t t;
    mpz_init(t);
    mpz_mul_2exp(t, v, 256);
    mpz_mod(t, t, m);
    t_mpz_to_limbs(l, t, 4);
    mpz_clear(t);
}
static inline void bn_mont_get(mpz_t v, const uint64_t *l, const mpz_t m, const mpz_t rinv)
{
    t_limbs_to_mpz(v, l, 4);
    mpz_mul(v, v, rinv);
    mpz_mod(v, v, m);
}
static inline void fp_set(czk_bn254_fp *x, const mpz_t v) { bn_mont_set(x->l, v, bn_p); }
static inline void fp_get(mpz_t v, const czk_bn254_fp *x) { bn_mont_get(v, x->l, bn_p, bn_Rinv_p); }
static inline void fr_set(czk_bn254_fr *x, const mpz_t v) { bn_mont_set(x->l, v, bn_r); }
static inline void fr_get(mpz_t v, const czk_bn254_fr *x) { bn_mont_get(v, x->l, bn_r, bn_Rinv_r); }

/* ---- GMP Fp2 = Fp[u]/(u^2 + 1) ---- */
typedef struct { mpz_t c0, c1; } g_fp2;
static inline void g2_init(g_fp2 *a) { mpz_inits(a->c0, a->c1, NULL); }
static inline void g2_clear(g_fp2 *a) { mpz_clears(a->c0, a->c1, NULL); }
static inline void g2_set(g_fp2 *r, const g_fp2 *a) { mpz_set(r->c0, a->c0); mpz_set(r->c1, a->c1); }
static inline void g2_rand(g_fp2 *a) { t_rand_mod(a->c0, bn_p, 4); t_rand_mod(a->c1, bn_p, 4); }
static inline int g2_eq(const g_fp2 *a, const g_fp2 *b) { return mpz_cmp(a->c0, b->c0) == 0 && mpz_cmp(a->c1, b->c1) == 0; }
static inline int g2_is_zero(const g_fp2 *a) { return mpz_sgn(a->c0) == 0 && mpz_sgn(a->c1) == 0; }
static inline void g2_add(g_fp2 *r, const g_fp2 *a, const g_fp2 *b)
{
    mpz_add(r->c0, a->c0, b->c0); mpz_mod(r->c0, r->c0, bn_p);
    mpz_add(r->c1, a->c1, b->c1); mpz_mod(r->c1, r->c1, bn_p);
}
static inline void g2_sub(g_fp2 *r, const g_fp2 *a, const g_fp2 *b)
{
    mpz_sub(r->c0, a->c0, b->c0); mpz_mod(r->c0, r->c0, bn_p);
    mpz_sub(r->c1, a->c1, b->c1); mpz_mod(r->c1, r->c1, bn_p);
}
/* schoolbook: (a0 b0 - a1 b1) + (a0 b1 + a1 b0) u */
static inline void g2_mul(g_fp2 *r, const g_fp2 *a, const g_fp2 *b)
{
    mpz_t t0, t1, t2;
    mpz_inits(t0, t1, t2, NULL);
    mpz_mul(t0, a->c0, b->c0);
    mpz_mul(t1, a->c1, b->c1);
    mpz_sub(t0, t0, t1);
    mpz_mul(t1, a->c0, b->c1);
    mpz_mul(t2, a->c1, b->c0);
    mpz_add(t1, t1, t2);
    mpz_mod(r->c0, t0, bn_p);
    mpz_mod(r->c1, t1, bn_p);
    mpz_clears(t0, t1, t2, NULL);
}
/* (a0 - a1 u) / (a0^2 + a1^2); a != 0 */
static inline void g2_inv(g_fp2 *r, const g_fp2 *a)
{
    mpz_t n, t;
    mpz_inits(n, t, NULL);
    mpz_mul(n, a->c0, a->c0);
    mpz_mul(t, a->c1, a->c1);
    mpz_add(n, n, t);
    mpz_mod(n, n, bn_p);
    mpz_invert(n, n, bn_p);
    mpz_mul(t, a->c1, n);
    mpz_neg(t, t);
    mpz_mod(r->c1, t, bn_p);
    mpz_mul(t, a->c0, n);
    mpz_mod(r->c0, t, bn_p);
    mpz_clears(n, t, NULL);
}
static inline void fp2_set(czk_bn254_fp2 *x, const g_fp2 *v) { fp_set(&x->c0, v->c0); fp_set(&x->c1, v->c1); }
static inline void fp2_get(g_fp2 *v, const czk_bn254_fp2 *x) { fp_get(v->c0, &x->c0); fp_get(v->c1, &x->c1); }

/* ---- GMP affine points on y^2 = x^3 + b over Fp2 (G1 uses c1 = 0) ----
 * inf marks the point at infinity; textbook chord-and-tangent formulas */
typedef struct { g_fp2 x, y; int inf; } g_pt;
static inline void gp_init(g_pt *p) { g2_init(&p->x); g2_init(&p->y); p->inf = 1; }
static inline void gp_clear(g_pt *p) { g2_clear(&p->x); g2_clear(&p->y); }
static inline void gp_set(g_pt *r, const g_pt *a) { g2_set(&r->x, &a->x); g2_set(&r->y, &a->y); r->inf = a->inf; }

static inline void gp_add(g_pt *r, const g_pt *a, const g_pt *b)
{
    if (a->inf) { gp_set(r, b); return; }
    if (b->inf) { gp_set(r, a); return; }
    g_fp2 l, t, x3, y3;
    g2_init(&l); g2_init(&t); g2_init(&x3); g2_init(&y3);
    if (g2_eq(&a->x, &b->x)) {
        g2_add(&t, &a->y, &b->y);
        if (g2_is_zero(&t)) { /* P + (-P) */
            r->inf = 1;
            goto out;
        }
        /* tangent: l = 3x^2 / 2y */
        g2_mul(&l, &a->x, &a->x);
        g2_add(&t, &l, &l);
        g2_add(&l, &t, &l);
        g2_add(&t, &a->y, &a->y);
        g2_inv(&t, &t);
        g2_mul(&l, &l, &t);
    } else {
        g2_sub(&l, &b->y, &a->y);
        g2_sub(&t, &b->x, &a->x);
        g2_inv(&t, &t);
        g2_mul(&l, &l, &t);
    }
    g2_mul(&x3, &l, &l);
    g2_sub(&x3, &x3, &a->x);
    g2_sub(&x3, &x3, &b->x);
    g2_sub(&t, &a->x, &x3);
    g2_mul(&y3, &l, &t);
    g2_sub(&y3, &y3, &a->y);
    g2_set(&r->x, &x3);
    g2_set(&r->y, &y3);
    r->inf = 0;
out:
    g2_clear(&l); g2_clear(&t); g2_clear(&x3); g2_clear(&y3);
}

/* double-and-add, most significant bit first */
static inline void gp_mul(g_pt *r, const g_pt *a, const mpz_t k)
{
    g_pt acc;
    gp_init(&acc);
    for (long b = (long)mpz_sizeinbase(k, 2) - 1; b >= 0; b--) {
        gp_add(&acc, &acc, &acc);
        if (mpz_tstbit(k, (mp_bitcnt_t)b))
            gp_add(&acc, &acc, a);
    }
    gp_set(r, &acc);
    gp_clear(&acc);
}

static inline void gp_from_g1(g_pt *r, const czk_bn254_g1_aff *p)
{
    r->inf = czk_bn254_g1_aff_is_inf(p);
    fp_get(r->x.c0, &p->x);
    fp_get(r->y.c0, &p->y);
    mpz_set_ui(r->x.c1, 0);
    mpz_set_ui(r->y.c1, 0);
}
static inline int gp_eq_g1(const g_pt *a, const czk_bn254_g1_aff *p)
{
    g_pt t;
    gp_init(&t);
    gp_from_g1(&t, p);
    int eq = a->inf ? t.inf : (!t.inf && g2_eq(&a->x, &t.x) && g2_eq(&a->y, &t.y));
    gp_clear(&t);
    return eq;
}
static inline void gp_from_g2(g_pt *r, const czk_bn254_g2_aff *p)
{
    r->inf = czk_bn254_g2_aff_is_inf(p);
    fp2_get(&r->x, &p->x);
    fp2_get(&r->y, &p->y);
}
static inline int gp_eq_g2(const g_pt *a, const czk_bn254_g2_aff *p)
{
    g_pt t;
    gp_init(&t);
    gp_from_g2(&t, p);
    int eq = a->inf ? t.inf : (!t.inf && g2_eq(&a->x, &t.x) && g2_eq(&a->y, &t.y));
    gp_clear(&t);
    return eq;
}

/* a random scalar below r, standard form limbs (plus its GMP value) */
static inline void rand_scalar(czk_bn254_fr *k, mpz_t v)
{
    t_rand_mod(v, bn_r, 4);
    t_mpz_to_limbs(k->l, v, 4);
}

#endif
