/*
 * curve.h — BLS12-381 G1 (y^2 = x^3 + 4 over Fp) and G2 (y^2 = x^3 + 4(1+u)
 * over Fp2, the M-twist).
 *
 * Affine points are the zkey layout: x then y, coordinates as czk_fp / czk_fp2
 * (Montgomery, LE).  The point at infinity in affine form is ALL-ZERO BYTES
 * (snarkjs convention; (0,0) is not on either curve so this is unambiguous).
 * Projective points are Jacobian (X/Z^2, Y/Z^3); Z == 0 is infinity.
 * Scalars passed to czk_g*_mul are czk_fr in STANDARD form (plain integers,
 * any value < 2^256 is accepted).
 *
 * Timing: czk_g*_add, _add_aff, _dbl, _to_aff, _batch_to_aff, _eq and the
 * fixed-base tables branch on the data (infinity, equal and opposite points,
 * the binary-GCD inversion, table rows chosen by the scalar): use them on
 * public points and scalars (MSM, verification, setup tables).  The _ct
 * functions take time independent of the points and the scalar (complete
 * formulas, masked table scans, Fermat inversion; no data-dependent branch or
 * memory address) and give results equal to their variable-time
 * counterparts: use them wherever a secret (the blinding r, s, values derived
 * from them, toxic waste) is involved.  Their Jacobian outputs put infinity
 * as (1, 1, 0), as _set_inf does.
 */
#ifndef CZK_CURVE_H
#define CZK_CURVE_H

#include "common/crypto/field.h"

typedef struct czk_g1_aff { czk_fp x, y; } czk_g1_aff;
typedef struct czk_g1 { czk_fp x, y, z; } czk_g1;
typedef struct czk_g2_aff { czk_fp2 x, y; } czk_g2_aff;
typedef struct czk_g2 { czk_fp2 x, y, z; } czk_g2;

_Static_assert(sizeof(czk_g1_aff) == 96, "G1 affine must match the zkey layout");
_Static_assert(sizeof(czk_g2_aff) == 192, "G2 affine must match the zkey layout");

extern const czk_g1_aff CZK_G1_GEN; /* standard generator (Montgomery coords) */
extern const czk_g2_aff CZK_G2_GEN;

/* ---- G1 ---- */
bool czk_g1_aff_is_inf(const czk_g1_aff *p);
bool czk_g1_aff_on_curve(const czk_g1_aff *p);     /* infinity counts as on curve */
bool czk_g1_aff_in_subgroup(const czk_g1_aff *p);  /* on curve and r*P == 0 (or a faster equivalent) */
bool czk_g1_aff_eq(const czk_g1_aff *a, const czk_g1_aff *b);
void czk_g1_aff_neg(czk_g1_aff *r, const czk_g1_aff *p);
void czk_g1_set_inf(czk_g1 *r);
bool czk_g1_is_inf(const czk_g1 *p);
void czk_g1_from_aff(czk_g1 *r, const czk_g1_aff *p);
void czk_g1_to_aff(czk_g1_aff *r, const czk_g1 *p);
/* normalise n points with one inversion; scratch: n czk_fp */
void czk_g1_batch_to_aff(czk_g1_aff *out, const czk_g1 *in, size_t n, czk_fp *scratch);
void czk_g1_dbl(czk_g1 *r, const czk_g1 *p);
void czk_g1_add(czk_g1 *r, const czk_g1 *a, const czk_g1 *b);       /* complete: handles a==b, inf */
void czk_g1_add_aff(czk_g1 *r, const czk_g1 *a, const czk_g1_aff *b); /* mixed, complete */
void czk_g1_neg(czk_g1 *r, const czk_g1 *p);
bool czk_g1_eq(const czk_g1 *a, const czk_g1 *b);
/* _mul and _mul_aff are the constant-time code below under their older names */
void czk_g1_mul(czk_g1 *r, const czk_g1 *p, const czk_fr *k_std);
void czk_g1_mul_aff(czk_g1 *r, const czk_g1_aff *p, const czk_fr *k_std);
/* constant time: fixed 4-bit window over all 256 bits, complete formulas */
void czk_g1_mul_ct(czk_g1 *r, const czk_g1 *p, const czk_fr *k_std);
void czk_g1_mul_aff_ct(czk_g1 *r, const czk_g1_aff *p, const czk_fr *k_std);
void czk_g1_add_ct(czk_g1 *r, const czk_g1 *a, const czk_g1 *b);        /* complete */
void czk_g1_add_aff_ct(czk_g1 *r, const czk_g1 *a, const czk_g1_aff *b); /* complete */
void czk_g1_to_aff_ct(czk_g1_aff *r, const czk_g1 *p);                  /* Fermat 1/Z */

/* ---- G2 ---- */
bool czk_g2_aff_is_inf(const czk_g2_aff *p);
bool czk_g2_aff_on_curve(const czk_g2_aff *p);
bool czk_g2_aff_in_subgroup(const czk_g2_aff *p);
bool czk_g2_aff_eq(const czk_g2_aff *a, const czk_g2_aff *b);
void czk_g2_aff_neg(czk_g2_aff *r, const czk_g2_aff *p);
void czk_g2_set_inf(czk_g2 *r);
bool czk_g2_is_inf(const czk_g2 *p);
void czk_g2_from_aff(czk_g2 *r, const czk_g2_aff *p);
void czk_g2_to_aff(czk_g2_aff *r, const czk_g2 *p);
void czk_g2_batch_to_aff(czk_g2_aff *out, const czk_g2 *in, size_t n, czk_fp2 *scratch);
void czk_g2_dbl(czk_g2 *r, const czk_g2 *p);
void czk_g2_add(czk_g2 *r, const czk_g2 *a, const czk_g2 *b);
void czk_g2_add_aff(czk_g2 *r, const czk_g2 *a, const czk_g2_aff *b);
void czk_g2_neg(czk_g2 *r, const czk_g2 *p);
bool czk_g2_eq(const czk_g2 *a, const czk_g2 *b);
void czk_g2_mul(czk_g2 *r, const czk_g2 *p, const czk_fr *k_std);
void czk_g2_mul_aff(czk_g2 *r, const czk_g2_aff *p, const czk_fr *k_std);
void czk_g2_mul_ct(czk_g2 *r, const czk_g2 *p, const czk_fr *k_std);
void czk_g2_mul_aff_ct(czk_g2 *r, const czk_g2_aff *p, const czk_fr *k_std);
void czk_g2_add_ct(czk_g2 *r, const czk_g2 *a, const czk_g2 *b);
void czk_g2_add_aff_ct(czk_g2 *r, const czk_g2 *a, const czk_g2_aff *b);
void czk_g2_to_aff_ct(czk_g2_aff *r, const czk_g2 *p);

/* ---- fixed-base multiplication (development setup: many scalars, one base) ----
 * A table of the base's multiples by window; build once, then each
 * multiplication is additions only. */
typedef struct czk_g1_fb czk_g1_fb;
typedef struct czk_g2_fb czk_g2_fb;
int czk_g1_fb_new(czk_g1_fb **t, const czk_g1_aff *base, unsigned window_bits);
void czk_g1_fb_mul(czk_g1 *r, const czk_g1_fb *t, const czk_fr *k_std);
void czk_g1_fb_free(czk_g1_fb *t);
int czk_g2_fb_new(czk_g2_fb **t, const czk_g2_aff *base, unsigned window_bits);
void czk_g2_fb_mul(czk_g2 *r, const czk_g2_fb *t, const czk_fr *k_std);
void czk_g2_fb_free(czk_g2_fb *t);

#endif
