/*
 * curve_g1.c — G1 of BLS12-381: y^2 = x^3 + 4 over Fp (curve.h).  The
 * generic point code comes from curve_pub_tmpl_impl.h; this file holds the
 * generator, the curve constant and the subgroup check.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "common/crypto/curve_impl.h"
#include "common/base/log.h"

/* standard generator, Montgomery coordinates */
const czk_g1_aff CZK_G1_GEN = {
    {{0x5cb38790fd530c16ULL, 0x7817fc679976fff5ULL, 0x154f95c7143ba1c1ULL, 0xf0ae6acdf3d0e747ULL,
      0xedce6ecc21dbf440ULL, 0x120177419e0bfb75ULL}},
    {{0xbaac93d50ce72271ULL, 0x8c22631a7918fd8eULL, 0xdd595f13570725ceULL, 0x51ac582950405194ULL,
      0x0e1c8c3fad0059c0ULL, 0x0bbc3efc5008a26aULL}}};

/* b = 4, Montgomery */
static const czk_fp G1_B = {{0xaa270000000cfff3ULL, 0x53cc0032fc34000aULL, 0x478fe97a6b0a807fULL,
                             0xb1d37ebee6ba24d7ULL, 0x8ec9733bbf78ab2fULL, 0x09d645513d83de7eULL}};

/* 3b = 12 by additions */
static void g1_mul_b3_(czk_fp *r, const czk_fp *a)
{
    czk_fp t;
    czk_fp_dbl_i(&t, a);     /* 2a */
    czk_fp_dbl_i(&t, &t);    /* 4a */
    czk_fp_dbl_i(r, &t);     /* 8a */
    czk_fp_add_i(r, r, &t);  /* 12a */
}

#define CG czk_g1
#define CA czk_g1_aff
#define CF czk_fp
#define CF_ONE CZK_FP_ONE
#define CF_CANON czk_fp_is_canonical
#define CG_NAME "g1"
#define CF_MUL_B3 g1_mul_b3_
#define CB G1_B
#include "common/crypto/curve_pub_tmpl_impl.h"

/* beta, a primitive cube root of unity in Fp (Montgomery), chosen so that
 * phi(x, y) = (beta x, y) acts on G1 as multiplication by -u^2 mod r */
static const czk_fp G1_BETA = {{0x30f1361b798a64e8ULL, 0xf3b8ddab7ece5a2aULL, 0x16a8ca3ac61577f7ULL,
                                0xc26a2ff874fd029bULL, 0x3636b76660701c6eULL, 0x051ba4ab241b6160ULL}};

/* Scott, "A note on group membership tests for G1, G2 and GT on BLS
 * pairing-friendly curves" (ePrint 2021/1130): a point P of E(Fp) is in G1
 * iff phi(P) == [-u^2] P, i.e. phi(P) + [u^2] P == 0.  Two multiplications
 * by the 64-bit |u| instead of one by the 255-bit r. */
bool czk_g1_aff_in_subgroup(const czk_g1_aff *p)
{
    czk_g1 t;
    czk_g1_aff phi;
    if (!czk_g1_aff_on_curve(p))
        return false;
    if (czk_g1_aff_is_inf_i(p))
        return true;
    czk_g1_from_aff_i(&t, p);
    czk_g1_mul_absu_(&t, &t);
    czk_g1_mul_absu_(&t, &t);
    czk_fp_mul(&phi.x, &p->x, &G1_BETA);
    phi.y = p->y;
    czk_g1_add_aff_i(&t, &t, &phi);
    return czk_g1_is_inf_i(&t);
}
