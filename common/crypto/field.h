/*
 * field.h — BLS12-381 base field Fp (381-bit) and scalar field Fr (255-bit),
 * and the quadratic extension Fp2 = Fp[u]/(u^2 + 1).
 *
 * Representation (the contract every module relies on):
 *   - limbs are uint64_t, least significant first (little-endian limb order);
 *   - czk_fp holds x * 2^384 mod q   (Montgomery form, R = 2^384), fully reduced;
 *   - czk_fr holds x * 2^256 mod r   (Montgomery form, R = 2^256), fully reduced,
 *     unless a function says "standard form" (witness values, MSM scalars).
 * On a little-endian machine the bytes of a czk_fp are exactly the 48 bytes a
 * snarkjs zkey stores for a coordinate ("LEM"), so zkey point sections are
 * usable in place.  czk_fp2 = c0 + c1*u, laid out c0 then c1 (zkey order).
 *
 * All functions are straight-line, allocation-free and allow r to alias a/b.
 *
 * Timing: add, sub, dbl, neg, mul, sqr and the Montgomery conversions run in
 * time independent of their operands (masks, no data-dependent branches or
 * addresses).  czk_*_pow depends on the exponent only.  czk_fp_inv,
 * czk_fr_inv, czk_fp2_inv and the batch inversion are VARIABLE-TIME (binary
 * GCD): use them on public values only.  The *_ct functions are the
 * constant-time counterparts for secrets (blinding scalars, toxic waste):
 * Fermat inversion a^(m-2) with a fixed window over the public exponent, so
 * neither branches nor memory addresses depend on a; they give the same
 * results as the variable-time functions and map 0 to 0.
 */
#ifndef CZK_FIELD_H
#define CZK_FIELD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define CZK_FP_LIMBS 6
#define CZK_FR_LIMBS 4
#define CZK_FP_BYTES 48
#define CZK_FR_BYTES 32
#define CZK_FP_DEC_MAX 120 /* buffer size for a decimal string incl. NUL */
#define CZK_FR_DEC_MAX 80

typedef struct czk_fp { uint64_t l[CZK_FP_LIMBS]; } czk_fp;
typedef struct czk_fr { uint64_t l[CZK_FR_LIMBS]; } czk_fr;
typedef struct czk_fp2 { czk_fp c0, c1; } czk_fp2;

_Static_assert(sizeof(czk_fp) == 48, "czk_fp must match the zkey layout");
_Static_assert(sizeof(czk_fr) == 32, "czk_fr must match the zkey layout");
_Static_assert(sizeof(czk_fp2) == 96, "czk_fp2 must match the zkey layout");

/* constants (Montgomery form unless named _STD / _MOD) */
extern const czk_fp CZK_FP_MOD;   /* q, plain integer */
extern const czk_fp CZK_FP_ZERO;
extern const czk_fp CZK_FP_ONE;   /* R mod q */
extern const czk_fr CZK_FR_MOD;   /* r, plain integer */
extern const czk_fr CZK_FR_ZERO;
extern const czk_fr CZK_FR_ONE;   /* R mod r */

/* ---- Fp ---- */
void czk_fp_add(czk_fp *r, const czk_fp *a, const czk_fp *b);
void czk_fp_sub(czk_fp *r, const czk_fp *a, const czk_fp *b);
void czk_fp_dbl(czk_fp *r, const czk_fp *a);
void czk_fp_neg(czk_fp *r, const czk_fp *a);
void czk_fp_mul(czk_fp *r, const czk_fp *a, const czk_fp *b);
void czk_fp_sqr(czk_fp *r, const czk_fp *a);
int czk_fp_inv(czk_fp *r, const czk_fp *a);   /* -EDOM when a == 0 (r set to 0); variable time */
void czk_fp_inv_ct(czk_fp *r, const czk_fp *a); /* a^(q-2): 1/a, 0 for a == 0; constant time */
int czk_fp_sqrt(czk_fp *r, const czk_fp *a);  /* -EDOM when a is a non-residue */
void czk_fp_pow(czk_fp *r, const czk_fp *a, const uint64_t *e, size_t e_limbs);
bool czk_fp_is_zero(const czk_fp *a);
bool czk_fp_eq(const czk_fp *a, const czk_fp *b);
void czk_fp_from_u64(czk_fp *r, uint64_t v);         /* -> Montgomery */
void czk_fp_to_mont(czk_fp *r, const czk_fp *std);   /* standard -> Montgomery (std < q) */
void czk_fp_from_mont(czk_fp *std, const czk_fp *a); /* Montgomery -> standard */
bool czk_fp_is_canonical(const czk_fp *raw);         /* raw integer < q */
/* 48 bytes LE of the standard-form integer; -ERANGE when >= q */
int czk_fp_from_bytes_le(czk_fp *r, const uint8_t b[CZK_FP_BYTES]);
void czk_fp_to_bytes_le(uint8_t b[CZK_FP_BYTES], const czk_fp *a);
/* decimal strings of the standard-form integer (snarkjs JSON).
 * from_dec: -EINVAL on a non-digit / empty / too long, -ERANGE when >= q. */
int czk_fp_from_dec(czk_fp *r, const char *s);
void czk_fp_to_dec(char out[CZK_FP_DEC_MAX], const czk_fp *a);
bool czk_fp_sgn0(const czk_fp *a); /* standard form is odd */

/* ---- Fr ---- */
void czk_fr_add(czk_fr *r, const czk_fr *a, const czk_fr *b);
void czk_fr_sub(czk_fr *r, const czk_fr *a, const czk_fr *b);
void czk_fr_dbl(czk_fr *r, const czk_fr *a);
void czk_fr_neg(czk_fr *r, const czk_fr *a);
/* Montgomery product a*b/R mod r.  With a in Montgomery and b in standard
 * form the result is the standard form of the product (snarkjs relies on this). */
void czk_fr_mul(czk_fr *r, const czk_fr *a, const czk_fr *b);
void czk_fr_sqr(czk_fr *r, const czk_fr *a);
int czk_fr_inv(czk_fr *r, const czk_fr *a);   /* -EDOM when a == 0; variable time */
void czk_fr_inv_ct(czk_fr *r, const czk_fr *a); /* a^(r-2): 1/a, 0 for a == 0; constant time */
void czk_fr_pow(czk_fr *r, const czk_fr *a, const uint64_t *e, size_t e_limbs);
/* Montgomery batch inversion; zeros stay zero.  scratch: n elements. */
void czk_fr_batch_inv(czk_fr *out, const czk_fr *in, size_t n, czk_fr *scratch);
/* the same with one czk_fr_inv_ct and masks for the zeros: the time depends
 * on n only (for secret inputs, e.g. tau - x in the development setup) */
void czk_fr_batch_inv_ct(czk_fr *out, const czk_fr *in, size_t n, czk_fr *scratch);
bool czk_fr_is_zero(const czk_fr *a);
bool czk_fr_eq(const czk_fr *a, const czk_fr *b);
void czk_fr_from_u64(czk_fr *r, uint64_t v);
void czk_fr_to_mont(czk_fr *r, const czk_fr *std);
void czk_fr_from_mont(czk_fr *std, const czk_fr *a);
bool czk_fr_is_canonical(const czk_fr *raw);
int czk_fr_from_bytes_le(czk_fr *r, const uint8_t b[CZK_FR_BYTES]);
void czk_fr_to_bytes_le(uint8_t b[CZK_FR_BYTES], const czk_fr *a);
int czk_fr_from_dec(czk_fr *r, const char *s);
void czk_fr_to_dec(char out[CZK_FR_DEC_MAX], const czk_fr *a);
/* uniform random element from getrandom(2) (Montgomery form); -errno on failure */
int czk_fr_random(czk_fr *r);

/* ---- Fp2 = Fp[u]/(u^2+1) ---- */
extern const czk_fp2 CZK_FP2_ZERO;
extern const czk_fp2 CZK_FP2_ONE;
void czk_fp2_add(czk_fp2 *r, const czk_fp2 *a, const czk_fp2 *b);
void czk_fp2_sub(czk_fp2 *r, const czk_fp2 *a, const czk_fp2 *b);
void czk_fp2_dbl(czk_fp2 *r, const czk_fp2 *a);
void czk_fp2_neg(czk_fp2 *r, const czk_fp2 *a);
void czk_fp2_mul(czk_fp2 *r, const czk_fp2 *a, const czk_fp2 *b);
void czk_fp2_sqr(czk_fp2 *r, const czk_fp2 *a);
void czk_fp2_mul_fp(czk_fp2 *r, const czk_fp2 *a, const czk_fp *b);
void czk_fp2_mul_nr(czk_fp2 *r, const czk_fp2 *a); /* times the non-residue (1 + u) */
void czk_fp2_conj(czk_fp2 *r, const czk_fp2 *a);
int czk_fp2_inv(czk_fp2 *r, const czk_fp2 *a);     /* -EDOM when a == 0; variable time */
void czk_fp2_inv_ct(czk_fp2 *r, const czk_fp2 *a); /* through the norm and czk_fp_inv_ct; 0 -> 0 */
int czk_fp2_sqrt(czk_fp2 *r, const czk_fp2 *a);    /* -EDOM when a is a non-residue */
bool czk_fp2_is_zero(const czk_fp2 *a);
bool czk_fp2_eq(const czk_fp2 *a, const czk_fp2 *b);

#endif
