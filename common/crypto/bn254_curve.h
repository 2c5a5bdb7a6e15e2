/*
 * bn254_curve.h — BN254 G1 (y^2 = x^3 + 3 over Fp, cofactor 1) and G2
 * (y^2 = x^3 + 3/xi over Fp2, xi = 9 + u: the D-type sextic twist), as
 * snarkjs "bn128" and Ethereum's EIP-196/197 define them.
 *
 * Affine points are the zkey layout: x then y, coordinates as
 * czk_bn254_fp / czk_bn254_fp2 (Montgomery, LE).  The point at infinity in
 * affine form is ALL-ZERO BYTES (snarkjs convention; (0, 0) is on neither
 * curve).  Projective points are Jacobian (X/Z^2, Y/Z^3); Z == 0 is infinity.
 * Scalars are czk_bn254_fr in STANDARD form (plain integers; any value
 * below 2^256 is accepted).
 *
 * Timing, as curve.h for BLS12-381: _add, _add_aff, _dbl, _to_aff,
 * _batch_to_aff, _eq, _mul_vt, _in_subgroup and the fixed-base tables branch
 * on the data: public points and scalars only.  The _ct functions take time
 * independent of the points and the scalar (complete formulas, masked table
 * scans, Fermat inversion) and give the same results: use them wherever a
 * secret is involved.  _mul and _mul_aff are the constant-time code (the
 * names BLS12-381's callers use).  Jacobian outputs of the _ct functions put
 * infinity as (1, 1, 0), as _set_inf does.
 */
#ifndef CZK_BN254_CURVE_H
#define CZK_BN254_CURVE_H

#include "common/crypto/bn254_field.h"

typedef struct czk_bn254_g1_aff { czk_bn254_fp x, y; } czk_bn254_g1_aff;
typedef struct czk_bn254_g1 { czk_bn254_fp x, y, z; } czk_bn254_g1;
typedef struct czk_bn254_g2_aff { czk_bn254_fp2 x, y; } czk_bn254_g2_aff;
typedef struct czk_bn254_g2 { czk_bn254_fp2 x, y, z; } czk_bn254_g2;

_Static_assert(sizeof(czk_bn254_g1_aff) == 64, "BN254 G1 affine must match the zkey layout");
_Static_assert(sizeof(czk_bn254_g2_aff) == 128, "BN254 G2 affine must match the zkey layout");

/* G1 = (1, 2); G2 = the EIP-197 / snarkjs generator (Montgomery coordinates) */
extern const czk_bn254_g1_aff CZK_BN254_G1_GEN;
extern const czk_bn254_g2_aff CZK_BN254_G2_GEN;
/* the twist constant b' = 3 / (9 + u) (Montgomery) */
extern const czk_bn254_fp2 CZK_BN254_G2_B;

/* ---- G1 ---- */
bool czk_bn254_g1_aff_is_inf(const czk_bn254_g1_aff *p);
bool czk_bn254_g1_aff_on_curve(const czk_bn254_g1_aff *p);    /* infinity counts; canonical coords */
bool czk_bn254_g1_aff_in_subgroup(const czk_bn254_g1_aff *p); /* cofactor 1: on the curve */
bool czk_bn254_g1_aff_eq(const czk_bn254_g1_aff *a, const czk_bn254_g1_aff *b);
void czk_bn254_g1_aff_neg(czk_bn254_g1_aff *r, const czk_bn254_g1_aff *p);
void czk_bn254_g1_set_inf(czk_bn254_g1 *r);
bool czk_bn254_g1_is_inf(const czk_bn254_g1 *p);
void czk_bn254_g1_from_aff(czk_bn254_g1 *r, const czk_bn254_g1_aff *p);
void czk_bn254_g1_to_aff(czk_bn254_g1_aff *r, const czk_bn254_g1 *p);
/* normalise n points with one inversion; scratch: n czk_bn254_fp */
void czk_bn254_g1_batch_to_aff(czk_bn254_g1_aff *out, const czk_bn254_g1 *in, size_t n,
                               czk_bn254_fp *scratch);
void czk_bn254_g1_dbl(czk_bn254_g1 *r, const czk_bn254_g1 *p);
void czk_bn254_g1_add(czk_bn254_g1 *r, const czk_bn254_g1 *a, const czk_bn254_g1 *b);
void czk_bn254_g1_add_aff(czk_bn254_g1 *r, const czk_bn254_g1 *a, const czk_bn254_g1_aff *b);
void czk_bn254_g1_neg(czk_bn254_g1 *r, const czk_bn254_g1 *p);
bool czk_bn254_g1_eq(const czk_bn254_g1 *a, const czk_bn254_g1 *b);
void czk_bn254_g1_mul_vt(czk_bn254_g1 *r, const czk_bn254_g1 *p, const czk_bn254_fr *k_std);
void czk_bn254_g1_mul(czk_bn254_g1 *r, const czk_bn254_g1 *p, const czk_bn254_fr *k_std);
void czk_bn254_g1_mul_aff(czk_bn254_g1 *r, const czk_bn254_g1_aff *p, const czk_bn254_fr *k_std);
void czk_bn254_g1_mul_ct(czk_bn254_g1 *r, const czk_bn254_g1 *p, const czk_bn254_fr *k_std);
void czk_bn254_g1_mul_aff_ct(czk_bn254_g1 *r, const czk_bn254_g1_aff *p, const czk_bn254_fr *k_std);
void czk_bn254_g1_add_ct(czk_bn254_g1 *r, const czk_bn254_g1 *a, const czk_bn254_g1 *b);
void czk_bn254_g1_add_aff_ct(czk_bn254_g1 *r, const czk_bn254_g1 *a, const czk_bn254_g1_aff *b);
void czk_bn254_g1_to_aff_ct(czk_bn254_g1_aff *r, const czk_bn254_g1 *p);

/* ---- G2 ---- */
bool czk_bn254_g2_aff_is_inf(const czk_bn254_g2_aff *p);
bool czk_bn254_g2_aff_on_curve(const czk_bn254_g2_aff *p);
/* on the twist and of order r (the twist's cofactor is 2p - r) */
bool czk_bn254_g2_aff_in_subgroup(const czk_bn254_g2_aff *p);
bool czk_bn254_g2_aff_eq(const czk_bn254_g2_aff *a, const czk_bn254_g2_aff *b);
void czk_bn254_g2_aff_neg(czk_bn254_g2_aff *r, const czk_bn254_g2_aff *p);
void czk_bn254_g2_set_inf(czk_bn254_g2 *r);
bool czk_bn254_g2_is_inf(const czk_bn254_g2 *p);
void czk_bn254_g2_from_aff(czk_bn254_g2 *r, const czk_bn254_g2_aff *p);
void czk_bn254_g2_to_aff(czk_bn254_g2_aff *r, const czk_bn254_g2 *p);
void czk_bn254_g2_batch_to_aff(czk_bn254_g2_aff *out, const czk_bn254_g2 *in, size_t n,
                               czk_bn254_fp2 *scratch);
void czk_bn254_g2_dbl(czk_bn254_g2 *r, const czk_bn254_g2 *p);
void czk_bn254_g2_add(czk_bn254_g2 *r, const czk_bn254_g2 *a, const czk_bn254_g2 *b);
void czk_bn254_g2_add_aff(czk_bn254_g2 *r, const czk_bn254_g2 *a, const czk_bn254_g2_aff *b);
void czk_bn254_g2_neg(czk_bn254_g2 *r, const czk_bn254_g2 *p);
bool czk_bn254_g2_eq(const czk_bn254_g2 *a, const czk_bn254_g2 *b);
void czk_bn254_g2_mul_vt(czk_bn254_g2 *r, const czk_bn254_g2 *p, const czk_bn254_fr *k_std);
void czk_bn254_g2_mul(czk_bn254_g2 *r, const czk_bn254_g2 *p, const czk_bn254_fr *k_std);
void czk_bn254_g2_mul_aff(czk_bn254_g2 *r, const czk_bn254_g2_aff *p, const czk_bn254_fr *k_std);
void czk_bn254_g2_mul_ct(czk_bn254_g2 *r, const czk_bn254_g2 *p, const czk_bn254_fr *k_std);
void czk_bn254_g2_mul_aff_ct(czk_bn254_g2 *r, const czk_bn254_g2_aff *p, const czk_bn254_fr *k_std);
void czk_bn254_g2_add_ct(czk_bn254_g2 *r, const czk_bn254_g2 *a, const czk_bn254_g2 *b);
void czk_bn254_g2_add_aff_ct(czk_bn254_g2 *r, const czk_bn254_g2 *a, const czk_bn254_g2_aff *b);
void czk_bn254_g2_to_aff_ct(czk_bn254_g2_aff *r, const czk_bn254_g2 *p);

/* ---- fixed-base multiplication (setup tables), as curve.h ---- */
typedef struct czk_bn254_g1_fb czk_bn254_g1_fb;
typedef struct czk_bn254_g2_fb czk_bn254_g2_fb;
int czk_bn254_g1_fb_new(czk_bn254_g1_fb **t, const czk_bn254_g1_aff *base, unsigned window_bits);
void czk_bn254_g1_fb_mul(czk_bn254_g1 *r, const czk_bn254_g1_fb *t, const czk_bn254_fr *k_std);
void czk_bn254_g1_fb_free(czk_bn254_g1_fb *t);
int czk_bn254_g2_fb_new(czk_bn254_g2_fb **t, const czk_bn254_g2_aff *base, unsigned window_bits);
void czk_bn254_g2_fb_mul(czk_bn254_g2 *r, const czk_bn254_g2_fb *t, const czk_bn254_fr *k_std);
void czk_bn254_g2_fb_free(czk_bn254_g2_fb *t);

#endif
