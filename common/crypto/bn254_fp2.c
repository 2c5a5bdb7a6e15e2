/*
 * bn254_fp2.c — BN254's quadratic extension Fp2 = Fp[u]/(u^2 + 1)
 * (bn254_field.h), coordinates c0 + c1*u in Montgomery form.  Multiplication
 * and squaring are the Karatsuba / complex forms of bn254_field_impl.h;
 * inversion goes through the norm, square roots through the norm and one Fp
 * square root (valid because p = 3 mod 4: -1 is a non-residue in Fp).
 */
#include <errno.h>

#include "common/crypto/bn254_field_impl.h"

const czk_bn254_fp2 CZK_BN254_FP2_ZERO = {{{0, 0, 0, 0}}, {{0, 0, 0, 0}}};
const czk_bn254_fp2 CZK_BN254_FP2_ONE = {{{0xd35d438dc58f0d9dULL, 0x0a78eb28f5c70b3dULL,
                                           0x666ea36f7879462cULL, 0x0e0a77c19a07df2fULL}},
                                         {{0, 0, 0, 0}}};

void czk_bn254_fp2_add(czk_bn254_fp2 *r, const czk_bn254_fp2 *a, const czk_bn254_fp2 *b) { czk_bn254_fp2_add_i(r, a, b); }
void czk_bn254_fp2_sub(czk_bn254_fp2 *r, const czk_bn254_fp2 *a, const czk_bn254_fp2 *b) { czk_bn254_fp2_sub_i(r, a, b); }
void czk_bn254_fp2_dbl(czk_bn254_fp2 *r, const czk_bn254_fp2 *a) { czk_bn254_fp2_dbl_i(r, a); }
void czk_bn254_fp2_neg(czk_bn254_fp2 *r, const czk_bn254_fp2 *a) { czk_bn254_fp2_neg_i(r, a); }
void czk_bn254_fp2_mul(czk_bn254_fp2 *r, const czk_bn254_fp2 *a, const czk_bn254_fp2 *b) { czk_bn254_fp2_mul_i(r, a, b); }
void czk_bn254_fp2_sqr(czk_bn254_fp2 *r, const czk_bn254_fp2 *a) { czk_bn254_fp2_sqr_i(r, a); }
bool czk_bn254_fp2_is_zero(const czk_bn254_fp2 *a) { return czk_bn254_fp2_is_zero_i(a); }
bool czk_bn254_fp2_eq(const czk_bn254_fp2 *a, const czk_bn254_fp2 *b) { return czk_bn254_fp2_eq_i(a, b); }

void czk_bn254_fp2_mul_fp(czk_bn254_fp2 *r, const czk_bn254_fp2 *a, const czk_bn254_fp *b)
{
    czk_bn254_fp_mul_i(&r->c0, &a->c0, b);
    czk_bn254_fp_mul_i(&r->c1, &a->c1, b);
}

/* 9 x by additions */
static void fp_mul9(czk_bn254_fp *r, const czk_bn254_fp *a)
{
    czk_bn254_fp t;
    czk_bn254_fp_dbl_i(&t, a);
    czk_bn254_fp_dbl_i(&t, &t);
    czk_bn254_fp_dbl_i(&t, &t);
    czk_bn254_fp_add_i(r, &t, a);
}

/* (a0 + a1 u)(9 + u) = (9 a0 - a1) + (a0 + 9 a1) u */
void czk_bn254_fp2_mul_xi(czk_bn254_fp2 *r, const czk_bn254_fp2 *a)
{
    czk_bn254_fp t0, t1;
    fp_mul9(&t0, &a->c0);
    czk_bn254_fp_sub_i(&t0, &t0, &a->c1);
    fp_mul9(&t1, &a->c1);
    czk_bn254_fp_add_i(&t1, &t1, &a->c0);
    r->c0 = t0;
    r->c1 = t1;
}

void czk_bn254_fp2_conj(czk_bn254_fp2 *r, const czk_bn254_fp2 *a)
{
    r->c0 = a->c0;
    czk_bn254_fp_neg_i(&r->c1, &a->c1);
}

/* 1/(a0 + a1 u) = (a0 - a1 u) / (a0^2 + a1^2) */
int czk_bn254_fp2_inv(czk_bn254_fp2 *r, const czk_bn254_fp2 *a)
{
    czk_bn254_fp t0, t1;
    czk_bn254_fp_sqr_i(&t0, &a->c0);
    czk_bn254_fp_sqr_i(&t1, &a->c1);
    czk_bn254_fp_add_i(&t0, &t0, &t1);
    if (czk_bn254_fp_inv(&t0, &t0) < 0) {
        *r = CZK_BN254_FP2_ZERO;
        return -EDOM;
    }
    czk_bn254_fp_mul_i(&r->c0, &a->c0, &t0);
    czk_bn254_fp_mul_i(&t1, &a->c1, &t0);
    czk_bn254_fp_neg_i(&r->c1, &t1);
    return 0;
}

/* the same through czk_bn254_fp_inv_ct: no branch on a; 0 gives 0 */
void czk_bn254_fp2_inv_ct(czk_bn254_fp2 *r, const czk_bn254_fp2 *a)
{
    czk_bn254_fp t0, t1;
    czk_bn254_fp_sqr_i(&t0, &a->c0);
    czk_bn254_fp_sqr_i(&t1, &a->c1);
    czk_bn254_fp_add_i(&t0, &t0, &t1);
    czk_bn254_fp_inv_ct(&t0, &t0);
    czk_bn254_fp_mul_i(&t1, &a->c1, &t0);
    czk_bn254_fp_mul_i(&r->c0, &a->c0, &t0);
    czk_bn254_fp_neg_i(&r->c1, &t1);
}

/* x / 2 mod p; works on Montgomery values unchanged (halving is linear) */
static void fp_half(czk_bn254_fp *r, const czk_bn254_fp *a)
{
    uint64_t t[5], c = 0, mask = -(a->l[0] & 1);
    for (int i = 0; i < 4; i++)
        t[i] = czk_addc_(a->l[i], czk_bn254_p_[i] & mask, &c);
    t[4] = c;
    for (int i = 0; i < 4; i++)
        r->l[i] = (t[i] >> 1) | (t[i + 1] << 63);
}

/*
 * sqrt(a0 + a1 u): with s = sqrt(a0^2 + a1^2) (the norm must be a square),
 * x0^2 = (a0 +- s)/2 for one of the signs, and x1 = a1 / (2 x0).
 * a1 == 0 is handled apart: sqrt(a0) or u * sqrt(-a0).
 */
int czk_bn254_fp2_sqrt(czk_bn254_fp2 *r, const czk_bn254_fp2 *a)
{
    czk_bn254_fp x0, x1, t, n;
    czk_bn254_fp2 res, chk;

    if (czk_bn254_fp_is_zero_i(&a->c1)) {
        if (czk_bn254_fp_sqrt(&x0, &a->c0) == 0) {
            res.c0 = x0;
            res.c1 = CZK_BN254_FP_ZERO;
        } else {
            czk_bn254_fp_neg_i(&t, &a->c0);
            if (czk_bn254_fp_sqrt(&x1, &t) < 0)
                return -EDOM; /* cannot happen: -1 is a non-residue */
            res.c0 = CZK_BN254_FP_ZERO;
            res.c1 = x1;
        }
        *r = res;
        return 0;
    }
    czk_bn254_fp_sqr_i(&n, &a->c0);
    czk_bn254_fp_sqr_i(&t, &a->c1);
    czk_bn254_fp_add_i(&n, &n, &t);
    if (czk_bn254_fp_sqrt(&n, &n) < 0)
        return -EDOM;
    czk_bn254_fp_add_i(&t, &a->c0, &n);
    fp_half(&t, &t);
    if (czk_bn254_fp_sqrt(&x0, &t) < 0) {
        czk_bn254_fp_sub_i(&t, &a->c0, &n);
        fp_half(&t, &t);
        if (czk_bn254_fp_sqrt(&x0, &t) < 0)
            return -EDOM;
    }
    czk_bn254_fp_dbl_i(&t, &x0);
    if (czk_bn254_fp_inv(&t, &t) < 0)
        return -EDOM; /* x0 == 0 would need a1 == 0, handled above */
    czk_bn254_fp_mul_i(&x1, &a->c1, &t);
    res.c0 = x0;
    res.c1 = x1;
    czk_bn254_fp2_sqr_i(&chk, &res);
    if (!czk_bn254_fp2_eq_i(&chk, a))
        return -EDOM;
    *r = res;
    return 0;
}
