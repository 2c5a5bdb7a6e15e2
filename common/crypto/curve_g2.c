/*
 * curve_g2.c — G2 of BLS12-381: y^2 = x^3 + 4(1 + u) over Fp2, the M-twist
 * (curve.h).  The generic point code comes from curve_pub_tmpl_impl.h; this
 * file holds the generator, the curve constant and the subgroup check.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "common/crypto/curve_impl.h"
#include "common/base/log.h"

/* standard generator (x.c0, x.c1, y.c0, y.c1), Montgomery coordinates */
const czk_g2_aff CZK_G2_GEN = {
    {{{0xf5f28fa202940a10ULL, 0xb3f5fb2687b4961aULL, 0xa1a893b53e2ae580ULL, 0x9894999d1a3caee9ULL,
       0x6f67b7631863366bULL, 0x058191924350bcd7ULL}},
     {{0xa5a9c0759e23f606ULL, 0xaaa0c59dbccd60c3ULL, 0x3bb17e18e2867806ULL, 0x1b1ab6cc8541b367ULL,
       0xc2b6ed0ef2158547ULL, 0x11922a097360edf3ULL}}},
    {{{0x4c730af860494c4aULL, 0x597cfa1f5e369c5aULL, 0xe7e6856caa0a635aULL, 0xbbefb5e96e0d495fULL,
       0x07d3a975f0ef25a2ULL, 0x0083fd8e7e80dae5ULL}},
     {{0xadc0fc92df64b05dULL, 0x18aa270a2b1461dcULL, 0x86adac6a3be4eba0ULL, 0x79495c4ec93da33aULL,
       0xe7175850a43ccaedULL, 0x0b2bc2a163de1bf2ULL}}}};

/* b' = 4 (1 + u), Montgomery */
static const czk_fp2 G2_B = {
    {{0xaa270000000cfff3ULL, 0x53cc0032fc34000aULL, 0x478fe97a6b0a807fULL, 0xb1d37ebee6ba24d7ULL,
      0x8ec9733bbf78ab2fULL, 0x09d645513d83de7eULL}},
    {{0xaa270000000cfff3ULL, 0x53cc0032fc34000aULL, 0x478fe97a6b0a807fULL, 0xb1d37ebee6ba24d7ULL,
      0x8ec9733bbf78ab2fULL, 0x09d645513d83de7eULL}}};

static bool fp2_canon_(const czk_fp2 *a) { return czk_fp_is_canonical(&a->c0) && czk_fp_is_canonical(&a->c1); }

/* 3b' = 12 (1 + u): times the non-residue, then 12 by additions */
static void g2_mul_b3_(czk_fp2 *r, const czk_fp2 *a)
{
    czk_fp2 t;
    czk_fp2_mul_nr(&t, a);
    czk_fp2_dbl_i(&t, &t);     /* 2 */
    czk_fp2_dbl_i(&t, &t);     /* 4 */
    czk_fp2_dbl_i(r, &t);      /* 8 */
    czk_fp2_add_i(r, r, &t);   /* 12 */
}

#define CG czk_g2
#define CA czk_g2_aff
#define CF czk_fp2
#define CF_ONE CZK_FP2_ONE
#define CF_CANON fp2_canon_
#define CG_NAME "g2"
#define CF_MUL_B3 g2_mul_b3_
#define CB G2_B
#include "common/crypto/curve_pub_tmpl_impl.h"

/* psi(x, y) = (conj(x) PSI_X, conj(y) PSI_Y), the q-power Frobenius carried
 * to the twist: PSI_X = 1/(1+u)^((q-1)/3), PSI_Y = 1/(1+u)^((q-1)/2) */
static const czk_fp2 G2_PSI_X = {
    {{0, 0, 0, 0, 0, 0}},
    {{0x890dc9e4867545c3ULL, 0x2af322533285a5d5ULL, 0x50880866309b7e2cULL, 0xa20d1b8c7e881024ULL,
      0x14e4f04fe2db9068ULL, 0x14e56d3f1564853aULL}}};
static const czk_fp2 G2_PSI_Y = {
    {{0x3e2f585da55c9ad1ULL, 0x4294213d86c18183ULL, 0x382844c88b623732ULL, 0x92ad2afd19103e18ULL,
      0x1d794e4fac7cf0b9ULL, 0x0bd592fc7d825ec8ULL}},
    {{0x7bcfa7a25aa30fdaULL, 0xdc17dec12a927e7cULL, 0x2f088dd86b4ebef1ULL, 0xd1ca2087da74d4a7ULL,
      0x2da2596696cebc1dULL, 0x0e2b7eedbbfd87d2ULL}}};

/* Scott (ePrint 2021/1130): a point P of E'(Fp2) is in G2 iff
 * psi(P) == [u] P, i.e. psi(P) + [|u|] P == 0 since u < 0. */
bool czk_g2_aff_in_subgroup(const czk_g2_aff *p)
{
    czk_g2 t;
    czk_g2_aff ps;
    czk_fp2 c;
    if (!czk_g2_aff_on_curve(p))
        return false;
    if (czk_g2_aff_is_inf_i(p))
        return true;
    czk_g2_from_aff_i(&t, p);
    czk_g2_mul_absu_(&t, &t);
    czk_fp2_conj(&c, &p->x);
    czk_fp2_mul(&ps.x, &c, &G2_PSI_X);
    czk_fp2_conj(&c, &p->y);
    czk_fp2_mul(&ps.y, &c, &G2_PSI_Y);
    czk_g2_add_aff_i(&t, &t, &ps);
    return czk_g2_is_inf_i(&t);
}
