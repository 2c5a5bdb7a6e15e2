/*
 * bn254_field_impl.h — private, header-only fast paths of bn254_field.h for
 * the bn254_*.c files: the same n-limb helpers as BLS12-381 (field_impl.h:
 * masked add/sub/neg, CIOS Montgomery multiplication, the 4-limb
 * mulx/adcx/adox body czk_mont4_mul_asm_) instantiated for BN254's two
 * 4-limb moduli.
 *
 * The CIOS "no final carry" form needs the modulus' top limb below
 * 2^63 - 1; both BN254 moduli have top limb 0x30644e72e131a029 (checked
 * below at compile time and by tests/bn254 against GMP).
 * Same representation as bn254_field.h: Montgomery, R = 2^256, fully reduced.
 */
#ifndef CZK_BN254_FIELD_IMPL_H
#define CZK_BN254_FIELD_IMPL_H

#include "common/crypto/bn254_field.h"
#include "common/crypto/field_impl.h"

static const uint64_t czk_bn254_p_[4] = {0x3c208c16d87cfd47ULL, 0x97816a916871ca8dULL,
                                         0xb85045b68181585dULL, 0x30644e72e131a029ULL};
static const uint64_t czk_bn254_r_[4] = {0x43e1f593f0000001ULL, 0x2833e84879b97091ULL,
                                         0xb85045b68181585dULL, 0x30644e72e131a029ULL};
/* -m^-1 mod 2^64 */
static const uint64_t czk_bn254_pinv_ = 0x87d20782e4866389ULL;
static const uint64_t czk_bn254_rinv_ = 0xc2e1f593efffffffULL;

_Static_assert(0x30644e72e131a029ULL < 0x7ffffffffffffffeULL,
               "no-final-carry CIOS needs the top limb of p and r below 2^63 - 1");

/* ---- Fp ---- */
CZK_INLINE void czk_bn254_fp_add_i(czk_bn254_fp *r, const czk_bn254_fp *a, const czk_bn254_fp *b)
{ czk_mod_add_(r->l, a->l, b->l, czk_bn254_p_, 4); }
CZK_INLINE void czk_bn254_fp_sub_i(czk_bn254_fp *r, const czk_bn254_fp *a, const czk_bn254_fp *b)
{ czk_mod_sub_(r->l, a->l, b->l, czk_bn254_p_, 4); }
CZK_INLINE void czk_bn254_fp_dbl_i(czk_bn254_fp *r, const czk_bn254_fp *a)
{ czk_mod_add_(r->l, a->l, a->l, czk_bn254_p_, 4); }
CZK_INLINE void czk_bn254_fp_neg_i(czk_bn254_fp *r, const czk_bn254_fp *a)
{ czk_mod_neg_(r->l, a->l, czk_bn254_p_, 4); }
CZK_INLINE void czk_bn254_fp_mul_i(czk_bn254_fp *r, const czk_bn254_fp *a, const czk_bn254_fp *b)
{
#ifdef CZK_FIELD_ASM
    uint64_t t[4];
    czk_mont4_mul_asm_(t, a->l, b->l, czk_bn254_p_, &czk_bn254_pinv_);
    czk_mod_reduce1_(r->l, t, czk_bn254_p_, 4);
#else
    czk_mont_mul_(r->l, a->l, b->l, czk_bn254_p_, czk_bn254_pinv_, 4);
#endif
}
CZK_INLINE void czk_bn254_fp_sqr_i(czk_bn254_fp *r, const czk_bn254_fp *a) { czk_bn254_fp_mul_i(r, a, a); }
CZK_INLINE int czk_bn254_fp_is_zero_i(const czk_bn254_fp *a)
{ return (a->l[0] | a->l[1] | a->l[2] | a->l[3]) == 0; }
CZK_INLINE int czk_bn254_fp_eq_i(const czk_bn254_fp *a, const czk_bn254_fp *b)
{
    return ((a->l[0] ^ b->l[0]) | (a->l[1] ^ b->l[1]) | (a->l[2] ^ b->l[2]) |
            (a->l[3] ^ b->l[3])) == 0;
}

/* ---- Fr ---- */
CZK_INLINE void czk_bn254_fr_add_i(czk_bn254_fr *r, const czk_bn254_fr *a, const czk_bn254_fr *b)
{ czk_mod_add_(r->l, a->l, b->l, czk_bn254_r_, 4); }
CZK_INLINE void czk_bn254_fr_sub_i(czk_bn254_fr *r, const czk_bn254_fr *a, const czk_bn254_fr *b)
{ czk_mod_sub_(r->l, a->l, b->l, czk_bn254_r_, 4); }
CZK_INLINE void czk_bn254_fr_dbl_i(czk_bn254_fr *r, const czk_bn254_fr *a)
{ czk_mod_add_(r->l, a->l, a->l, czk_bn254_r_, 4); }
CZK_INLINE void czk_bn254_fr_neg_i(czk_bn254_fr *r, const czk_bn254_fr *a)
{ czk_mod_neg_(r->l, a->l, czk_bn254_r_, 4); }
CZK_INLINE void czk_bn254_fr_mul_i(czk_bn254_fr *r, const czk_bn254_fr *a, const czk_bn254_fr *b)
{
#ifdef CZK_FIELD_ASM
    uint64_t t[4];
    czk_mont4_mul_asm_(t, a->l, b->l, czk_bn254_r_, &czk_bn254_rinv_);
    czk_mod_reduce1_(r->l, t, czk_bn254_r_, 4);
#else
    czk_mont_mul_(r->l, a->l, b->l, czk_bn254_r_, czk_bn254_rinv_, 4);
#endif
}
CZK_INLINE void czk_bn254_fr_sqr_i(czk_bn254_fr *r, const czk_bn254_fr *a) { czk_bn254_fr_mul_i(r, a, a); }
CZK_INLINE int czk_bn254_fr_is_zero_i(const czk_bn254_fr *a)
{ return (a->l[0] | a->l[1] | a->l[2] | a->l[3]) == 0; }
CZK_INLINE int czk_bn254_fr_eq_i(const czk_bn254_fr *a, const czk_bn254_fr *b)
{
    return ((a->l[0] ^ b->l[0]) | (a->l[1] ^ b->l[1]) | (a->l[2] ^ b->l[2]) |
            (a->l[3] ^ b->l[3])) == 0;
}

/* ---- Fp2 = Fp[u]/(u^2 + 1) ---- */
CZK_INLINE void czk_bn254_fp2_add_i(czk_bn254_fp2 *r, const czk_bn254_fp2 *a, const czk_bn254_fp2 *b)
{ czk_bn254_fp_add_i(&r->c0, &a->c0, &b->c0); czk_bn254_fp_add_i(&r->c1, &a->c1, &b->c1); }
CZK_INLINE void czk_bn254_fp2_sub_i(czk_bn254_fp2 *r, const czk_bn254_fp2 *a, const czk_bn254_fp2 *b)
{ czk_bn254_fp_sub_i(&r->c0, &a->c0, &b->c0); czk_bn254_fp_sub_i(&r->c1, &a->c1, &b->c1); }
CZK_INLINE void czk_bn254_fp2_dbl_i(czk_bn254_fp2 *r, const czk_bn254_fp2 *a)
{ czk_bn254_fp_dbl_i(&r->c0, &a->c0); czk_bn254_fp_dbl_i(&r->c1, &a->c1); }
CZK_INLINE void czk_bn254_fp2_neg_i(czk_bn254_fp2 *r, const czk_bn254_fp2 *a)
{ czk_bn254_fp_neg_i(&r->c0, &a->c0); czk_bn254_fp_neg_i(&r->c1, &a->c1); }
/* Karatsuba: 3 Fp multiplications */
CZK_INLINE void czk_bn254_fp2_mul_i(czk_bn254_fp2 *r, const czk_bn254_fp2 *a, const czk_bn254_fp2 *b)
{
    czk_bn254_fp v0, v1, s, t;
    czk_bn254_fp_mul_i(&v0, &a->c0, &b->c0);
    czk_bn254_fp_mul_i(&v1, &a->c1, &b->c1);
    czk_bn254_fp_add_i(&s, &a->c0, &a->c1);
    czk_bn254_fp_add_i(&t, &b->c0, &b->c1);
    czk_bn254_fp_mul_i(&s, &s, &t);
    czk_bn254_fp_sub_i(&s, &s, &v0);
    czk_bn254_fp_sub_i(&r->c1, &s, &v1);
    czk_bn254_fp_sub_i(&r->c0, &v0, &v1);
}
/* (a0 + a1 u)^2 = (a0 + a1)(a0 - a1) + 2 a0 a1 u */
CZK_INLINE void czk_bn254_fp2_sqr_i(czk_bn254_fp2 *r, const czk_bn254_fp2 *a)
{
    czk_bn254_fp s, d, p;
    czk_bn254_fp_add_i(&s, &a->c0, &a->c1);
    czk_bn254_fp_sub_i(&d, &a->c0, &a->c1);
    czk_bn254_fp_mul_i(&p, &a->c0, &a->c1);
    czk_bn254_fp_mul_i(&r->c0, &s, &d);
    czk_bn254_fp_dbl_i(&r->c1, &p);
}
CZK_INLINE int czk_bn254_fp2_is_zero_i(const czk_bn254_fp2 *a)
{ return czk_bn254_fp_is_zero_i(&a->c0) && czk_bn254_fp_is_zero_i(&a->c1); }
CZK_INLINE int czk_bn254_fp2_eq_i(const czk_bn254_fp2 *a, const czk_bn254_fp2 *b)
{ return czk_bn254_fp_eq_i(&a->c0, &b->c0) && czk_bn254_fp_eq_i(&a->c1, &b->c1); }

#endif
