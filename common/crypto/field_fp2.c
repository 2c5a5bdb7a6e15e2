/*
 * field_fp2.c — the quadratic extension Fp2 = Fp[u]/(u^2 + 1) (field.h),
 * coordinates c0 + c1*u in Montgomery form.  The functions every Fp2 has
 * come from fp2_tmpl.h (shared with BN254); this file holds the constants
 * and the multiplication by the tower's non-residue 1 + u.
 */
#include <errno.h>

#include "common/crypto/field_impl.h"

const czk_fp2 CZK_FP2_ZERO = {{{0, 0, 0, 0, 0, 0}}, {{0, 0, 0, 0, 0, 0}}};
const czk_fp2 CZK_FP2_ONE = {{{0x760900000002fffdULL, 0xebf4000bc40c0002ULL, 0x5f48985753c758baULL,
                               0x77ce585370525745ULL, 0x5c071a97a256ec6dULL, 0x15f65ec3fa80e493ULL}},
                             {{0, 0, 0, 0, 0, 0}}};

#define F2 czk_fp2
#define F2B czk_fp
#define F2_ZERO CZK_FP2_ZERO
#define F2B_ZERO CZK_FP_ZERO
#define F2B_M czk_fp_q_
#define F2B_N 6
#include "common/crypto/fp2_tmpl.h"

/* (a0 + a1 u)(1 + u) = (a0 - a1) + (a0 + a1) u */
void czk_fp2_mul_nr(czk_fp2 *r, const czk_fp2 *a)
{
    czk_fp t0, t1;
    czk_fp_sub_i(&t0, &a->c0, &a->c1);
    czk_fp_add_i(&t1, &a->c0, &a->c1);
    r->c0 = t0;
    r->c1 = t1;
}
