/*
 * oracle.h — an independent affine curve implementation with GMP, used by the
 * curve tests as the oracle: points over Fp2 = Fp[u]/(u^2+1) in plain
 * (non-Montgomery) integers, y^2 = x^3 + b, textbook chord-and-tangent
 * formulas and double-and-add.  G1 points are Fp2 points with zero c1 parts.
 */
#ifndef CZK_TEST_ORACLE_H
#define CZK_TEST_ORACLE_H

#include <gmp.h>

#define Q_HEX "1a0111ea397fe69a4b1ba7b6434bacd764774b84f38512bf6730d2a0f6b0f6241eabfffeb153ffffb9feffffffffaaab"
#define R_HEX "73eda753299d7d483339d80809a1d80553bda402fffe5bfeffffffff00000001"

typedef struct { mpz_t a, b; } o_f2;     /* a + b u */
typedef struct { o_f2 x, y; int inf; } o_pt;

static mpz_t o_q, o_R, o_Rinv, o_r;

static void o_init(void)
{
    mpz_inits(o_q, o_R, o_Rinv, o_r, NULL);
    mpz_set_str(o_q, Q_HEX, 16);
    mpz_set_str(o_r, R_HEX, 16);
    mpz_setbit(o_R, 384);
    mpz_mod(o_R, o_R, o_q);
    mpz_invert(o_Rinv, o_R, o_q);
}

static void o_f2_init(o_f2 *x) { mpz_inits(x->a, x->b, NULL); }
static void o_f2_clear(o_f2 *x) { mpz_clears(x->a, x->b, NULL); }
static void o_pt_init(o_pt *p) { o_f2_init(&p->x); o_f2_init(&p->y); p->inf = 1; }
static void o_pt_clear(o_pt *p) { o_f2_clear(&p->x); o_f2_clear(&p->y); }
static void o_f2_set(o_f2 *r, const o_f2 *x) { mpz_set(r->a, x->a); mpz_set(r->b, x->b); }
static void o_pt_set(o_pt *r, const o_pt *p) { o_f2_set(&r->x, &p->x); o_f2_set(&r->y, &p->y); r->inf = p->inf; }
static int o_f2_eq(const o_f2 *x, const o_f2 *y) { return mpz_cmp(x->a, y->a) == 0 && mpz_cmp(x->b, y->b) == 0; }
static int o_f2_is_zero(const o_f2 *x) { return mpz_sgn(x->a) == 0 && mpz_sgn(x->b) == 0; }

static void o_f2_add(o_f2 *r, const o_f2 *x, const o_f2 *y)
{
    mpz_add(r->a, x->a, y->a); mpz_mod(r->a, r->a, o_q);
    mpz_add(r->b, x->b, y->b); mpz_mod(r->b, r->b, o_q);
}
static void o_f2_sub(o_f2 *r, const o_f2 *x, const o_f2 *y)
{
    mpz_sub(r->a, x->a, y->a); mpz_mod(r->a, r->a, o_q);
    mpz_sub(r->b, x->b, y->b); mpz_mod(r->b, r->b, o_q);
}
static void o_f2_mul(o_f2 *r, const o_f2 *x, const o_f2 *y)
{
    mpz_t a, b;
    mpz_inits(a, b, NULL);
    mpz_mul(a, x->a, y->a); mpz_submul(a, x->b, y->b); mpz_mod(a, a, o_q);
    mpz_mul(b, x->a, y->b); mpz_addmul(b, x->b, y->a); mpz_mod(b, b, o_q);
    mpz_swap(r->a, a); mpz_swap(r->b, b);
    mpz_clears(a, b, NULL);
}
static void o_f2_inv(o_f2 *r, const o_f2 *x)
{
    mpz_t n, a, b;
    mpz_inits(n, a, b, NULL);
    mpz_mul(n, x->a, x->a); mpz_addmul(n, x->b, x->b); mpz_mod(n, n, o_q);
    mpz_invert(n, n, o_q);
    mpz_mul(a, x->a, n); mpz_mod(a, a, o_q);
    mpz_mul(b, x->b, n); mpz_neg(b, b); mpz_mod(b, b, o_q);
    mpz_swap(r->a, a); mpz_swap(r->b, b);
    mpz_clears(n, a, b, NULL);
}

/* r = p + q (affine, complete) */
static void o_pt_add(o_pt *r, const o_pt *p, const o_pt *q)
{
    if (p->inf) { o_pt_set(r, q); return; }
    if (q->inf) { o_pt_set(r, p); return; }
    o_f2 l, t, x3, y3;
    o_f2_init(&l); o_f2_init(&t); o_f2_init(&x3); o_f2_init(&y3);
    if (o_f2_eq(&p->x, &q->x)) {
        o_f2_add(&t, &p->y, &q->y);
        if (o_f2_is_zero(&t)) { /* q = -p */
            r->inf = 1;
            goto out;
        }
        /* tangent: l = 3x^2 / 2y */
        o_f2_mul(&l, &p->x, &p->x);
        o_f2_add(&t, &l, &l);
        o_f2_add(&l, &t, &l);
        o_f2_add(&t, &p->y, &p->y);
        o_f2_inv(&t, &t);
        o_f2_mul(&l, &l, &t);
    } else {
        o_f2_sub(&l, &q->y, &p->y);
        o_f2_sub(&t, &q->x, &p->x);
        o_f2_inv(&t, &t);
        o_f2_mul(&l, &l, &t);
    }
    o_f2_mul(&x3, &l, &l);
    o_f2_sub(&x3, &x3, &p->x);
    o_f2_sub(&x3, &x3, &q->x);
    o_f2_sub(&t, &p->x, &x3);
    o_f2_mul(&y3, &l, &t);
    o_f2_sub(&y3, &y3, &p->y);
    o_f2_set(&r->x, &x3);
    o_f2_set(&r->y, &y3);
    r->inf = 0;
out:
    o_f2_clear(&l); o_f2_clear(&t); o_f2_clear(&x3); o_f2_clear(&y3);
}

/* r = k p, double-and-add from the top bit */
static void o_pt_mul(o_pt *r, const o_pt *p, const mpz_t k)
{
    o_pt acc;
    o_pt_init(&acc);
    for (long i = (long)mpz_sizeinbase(k, 2) - 1; i >= 0 && mpz_sgn(k) > 0; i--) {
        o_pt_add(&acc, &acc, &acc);
        if (mpz_tstbit(k, (mp_bitcnt_t)i))
            o_pt_add(&acc, &acc, p);
    }
    o_pt_set(r, &acc);
    o_pt_clear(&acc);
}

/* y^2 == x^3 + b */
static int o_pt_on_curve(const o_pt *p, const o_f2 *b)
{
    if (p->inf)
        return 1;
    o_f2 l, rr;
    o_f2_init(&l); o_f2_init(&rr);
    o_f2_mul(&l, &p->y, &p->y);
    o_f2_mul(&rr, &p->x, &p->x);
    o_f2_mul(&rr, &rr, &p->x);
    o_f2_add(&rr, &rr, b);
    int ok = o_f2_eq(&l, &rr);
    o_f2_clear(&l); o_f2_clear(&rr);
    return ok;
}

/* Montgomery czk_fp limbs <-> plain value */
static void o_from_mont(mpz_t v, const uint64_t *l)
{
    mpz_import(v, 6, -1, sizeof(uint64_t), 0, 0, l);
    mpz_mul(v, v, o_Rinv);
    mpz_mod(v, v, o_q);
}
static void o_to_mont(uint64_t *l, const mpz_t v)
{
    mpz_t t;
    size_t cnt;
    mpz_init(t);
    mpz_mul(t, v, o_R);
    mpz_mod(t, t, o_q);
    for (int i = 0; i < 6; i++)
        l[i] = 0;
    mpz_export(l, &cnt, -1, sizeof(uint64_t), 0, 0, t);
    mpz_clear(t);
}

#endif
