/*
 * bn254_fp2.c — BN254's quadratic extension Fp2 = Fp[u]/(u^2 + 1)
 * (bn254_field.h), coordinates c0 + c1*u in Montgomery form.  The
 * functions every Fp2 has come from fp2_tmpl.h (shared with BLS12-381);
 * this file holds the constants and the multiplication by xi = 9 + u, the
 * non-residue of the sextic tower.
 */
#include <errno.h>

#include "common/crypto/bn254_field_impl.h"

const czk_bn254_fp2 CZK_BN254_FP2_ZERO = {{{0, 0, 0, 0}}, {{0, 0, 0, 0}}};
const czk_bn254_fp2 CZK_BN254_FP2_ONE = {{{0xd35d438dc58f0d9dULL, 0x0a78eb28f5c70b3dULL,
                                           0x666ea36f7879462cULL, 0x0e0a77c19a07df2fULL}},
                                         {{0, 0, 0, 0}}};

#define F2 czk_bn254_fp2
#define F2B czk_bn254_fp
#define F2_ZERO CZK_BN254_FP2_ZERO
#define F2B_ZERO CZK_BN254_FP_ZERO
#define F2B_M czk_bn254_p_
#define F2B_N 4
#include "common/crypto/fp2_tmpl.h"

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
