/*
 * bn254_field.h — BN254 (snarkjs "bn128", Ethereum alt_bn128) base field Fp
 * and scalar field Fr, both 254-bit, and Fp2 = Fp[u]/(u^2 + 1).
 *
 *   p = 21888242871839275222246405745257275088696311157297823662689037894645226208583
 *   r = 21888242871839275222246405745257275088548364400416034343698204186575808495617
 *
 * Representation (the contract every module relies on):
 *   - limbs are uint64_t, least significant first;
 *   - czk_bn254_fp holds x * 2^256 mod p and czk_bn254_fr holds x * 2^256 mod r
 *     (Montgomery form, R = 2^256), fully reduced, unless a function says
 *     "standard form" (witness values, scalars);
 *   - on a little-endian machine the 32 bytes of a czk_bn254_fp are exactly
 *     what a snarkjs bn128 zkey stores for a coordinate (Montgomery, LE: n8 =
 *     32, R = 2^256 in ffjavascript too), and the 32 bytes of a standard-form
 *     czk_bn254_fr are what a .wtns stores for a witness value;
 *   - czk_bn254_fp2 = c0 + c1*u, laid out c0 then c1 (zkey order).
 * The types are distinct from BLS12-381's (field.h) so the compiler keeps
 * the curves apart.
 *
 * All functions are straight-line, allocation-free and allow r to alias a/b.
 *
 * Timing: add, sub, dbl, neg, mul, sqr and the Montgomery conversions run in
 * time independent of their operands.  _pow depends on the exponent only.
 * _inv (binary GCD) and the square roots are VARIABLE-TIME: public values
 * only.  The _inv_ct functions are Fermat a^(m-2) over the public exponent
 * (same results as _inv, 0 maps to 0): use them for secrets.
 */
#ifndef CZK_BN254_FIELD_H
#define CZK_BN254_FIELD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define CZK_BN254_LIMBS 4
#define CZK_BN254_BYTES 32
#define CZK_BN254_DEC_MAX 80 /* buffer size for a decimal string incl. NUL */
#define CZK_BN254_FR_TWO_ADICITY 28

typedef struct czk_bn254_fp { uint64_t l[CZK_BN254_LIMBS]; } czk_bn254_fp;
typedef struct czk_bn254_fr { uint64_t l[CZK_BN254_LIMBS]; } czk_bn254_fr;
typedef struct czk_bn254_fp2 { czk_bn254_fp c0, c1; } czk_bn254_fp2;

_Static_assert(sizeof(czk_bn254_fp) == 32, "czk_bn254_fp must match the zkey layout");
_Static_assert(sizeof(czk_bn254_fr) == 32, "czk_bn254_fr must match the zkey layout");
_Static_assert(sizeof(czk_bn254_fp2) == 64, "czk_bn254_fp2 must match the zkey layout");

/* constants (Montgomery form unless named _MOD) */
extern const czk_bn254_fp CZK_BN254_FP_MOD;  /* p, plain integer */
extern const czk_bn254_fp CZK_BN254_FP_ZERO;
extern const czk_bn254_fp CZK_BN254_FP_ONE;  /* 2^256 mod p */
extern const czk_bn254_fr CZK_BN254_FR_MOD;  /* r, plain integer */
extern const czk_bn254_fr CZK_BN254_FR_ZERO;
extern const czk_bn254_fr CZK_BN254_FR_ONE;  /* 2^256 mod r */
/* 5^((r-1)/2^28): a primitive 2^28-th root of unity (5 is the smallest
 * non-residue, the generator snarkjs' FFT uses) */
extern const czk_bn254_fr CZK_BN254_FR_ROOT_2_28;

/* ---- Fp ---- */
void czk_bn254_fp_add(czk_bn254_fp *r, const czk_bn254_fp *a, const czk_bn254_fp *b);
void czk_bn254_fp_sub(czk_bn254_fp *r, const czk_bn254_fp *a, const czk_bn254_fp *b);
void czk_bn254_fp_dbl(czk_bn254_fp *r, const czk_bn254_fp *a);
void czk_bn254_fp_neg(czk_bn254_fp *r, const czk_bn254_fp *a);
void czk_bn254_fp_mul(czk_bn254_fp *r, const czk_bn254_fp *a, const czk_bn254_fp *b);
void czk_bn254_fp_sqr(czk_bn254_fp *r, const czk_bn254_fp *a);
int czk_bn254_fp_inv(czk_bn254_fp *r, const czk_bn254_fp *a);    /* -EDOM when a == 0 (r = 0) */
void czk_bn254_fp_inv_ct(czk_bn254_fp *r, const czk_bn254_fp *a); /* a^(p-2); 0 -> 0 */
int czk_bn254_fp_sqrt(czk_bn254_fp *r, const czk_bn254_fp *a);   /* -EDOM on a non-residue */
void czk_bn254_fp_pow(czk_bn254_fp *r, const czk_bn254_fp *a, const uint64_t *e, size_t e_limbs);
bool czk_bn254_fp_is_zero(const czk_bn254_fp *a);
bool czk_bn254_fp_eq(const czk_bn254_fp *a, const czk_bn254_fp *b);
void czk_bn254_fp_from_u64(czk_bn254_fp *r, uint64_t v);
void czk_bn254_fp_to_mont(czk_bn254_fp *r, const czk_bn254_fp *std);   /* std < p */
void czk_bn254_fp_from_mont(czk_bn254_fp *std, const czk_bn254_fp *a);
bool czk_bn254_fp_is_canonical(const czk_bn254_fp *raw);               /* raw < p */
/* 32 bytes LE of the standard-form integer; -ERANGE when >= p */
int czk_bn254_fp_from_bytes_le(czk_bn254_fp *r, const uint8_t b[CZK_BN254_BYTES]);
void czk_bn254_fp_to_bytes_le(uint8_t b[CZK_BN254_BYTES], const czk_bn254_fp *a);
/* decimal of the standard form (snarkjs JSON); from_dec: -EINVAL on a
 * non-digit / empty / too long string, -ERANGE when >= p */
int czk_bn254_fp_from_dec(czk_bn254_fp *r, const char *s);
void czk_bn254_fp_to_dec(char out[CZK_BN254_DEC_MAX], const czk_bn254_fp *a);

/* ---- Fr ---- */
void czk_bn254_fr_add(czk_bn254_fr *r, const czk_bn254_fr *a, const czk_bn254_fr *b);
void czk_bn254_fr_sub(czk_bn254_fr *r, const czk_bn254_fr *a, const czk_bn254_fr *b);
void czk_bn254_fr_dbl(czk_bn254_fr *r, const czk_bn254_fr *a);
void czk_bn254_fr_neg(czk_bn254_fr *r, const czk_bn254_fr *a);
/* Montgomery product a*b/R mod r (Montgomery times standard = standard) */
void czk_bn254_fr_mul(czk_bn254_fr *r, const czk_bn254_fr *a, const czk_bn254_fr *b);
void czk_bn254_fr_sqr(czk_bn254_fr *r, const czk_bn254_fr *a);
int czk_bn254_fr_inv(czk_bn254_fr *r, const czk_bn254_fr *a);    /* -EDOM when a == 0 */
void czk_bn254_fr_inv_ct(czk_bn254_fr *r, const czk_bn254_fr *a); /* a^(r-2); 0 -> 0 */
/* Tonelli-Shanks (r - 1 = 2^28 t); -EDOM on a non-residue; variable time */
int czk_bn254_fr_sqrt(czk_bn254_fr *r, const czk_bn254_fr *a);
void czk_bn254_fr_pow(czk_bn254_fr *r, const czk_bn254_fr *a, const uint64_t *e, size_t e_limbs);
bool czk_bn254_fr_is_zero(const czk_bn254_fr *a);
bool czk_bn254_fr_eq(const czk_bn254_fr *a, const czk_bn254_fr *b);
void czk_bn254_fr_from_u64(czk_bn254_fr *r, uint64_t v);
void czk_bn254_fr_to_mont(czk_bn254_fr *r, const czk_bn254_fr *std);
void czk_bn254_fr_from_mont(czk_bn254_fr *std, const czk_bn254_fr *a);
bool czk_bn254_fr_is_canonical(const czk_bn254_fr *raw);
int czk_bn254_fr_from_bytes_le(czk_bn254_fr *r, const uint8_t b[CZK_BN254_BYTES]);
void czk_bn254_fr_to_bytes_le(uint8_t b[CZK_BN254_BYTES], const czk_bn254_fr *a);
int czk_bn254_fr_from_dec(czk_bn254_fr *r, const char *s);
void czk_bn254_fr_to_dec(char out[CZK_BN254_DEC_MAX], const czk_bn254_fr *a);
/* uniform random element from getrandom(2) (Montgomery form); -errno on failure */
int czk_bn254_fr_random(czk_bn254_fr *r);

/* ---- Fp2 = Fp[u]/(u^2 + 1) ---- */
extern const czk_bn254_fp2 CZK_BN254_FP2_ZERO;
extern const czk_bn254_fp2 CZK_BN254_FP2_ONE;
void czk_bn254_fp2_add(czk_bn254_fp2 *r, const czk_bn254_fp2 *a, const czk_bn254_fp2 *b);
void czk_bn254_fp2_sub(czk_bn254_fp2 *r, const czk_bn254_fp2 *a, const czk_bn254_fp2 *b);
void czk_bn254_fp2_dbl(czk_bn254_fp2 *r, const czk_bn254_fp2 *a);
void czk_bn254_fp2_neg(czk_bn254_fp2 *r, const czk_bn254_fp2 *a);
void czk_bn254_fp2_mul(czk_bn254_fp2 *r, const czk_bn254_fp2 *a, const czk_bn254_fp2 *b);
void czk_bn254_fp2_sqr(czk_bn254_fp2 *r, const czk_bn254_fp2 *a);
void czk_bn254_fp2_mul_fp(czk_bn254_fp2 *r, const czk_bn254_fp2 *a, const czk_bn254_fp *b);
/* times xi = 9 + u, the non-residue of the sextic tower (bn254_pairing.h) */
void czk_bn254_fp2_mul_xi(czk_bn254_fp2 *r, const czk_bn254_fp2 *a);
void czk_bn254_fp2_conj(czk_bn254_fp2 *r, const czk_bn254_fp2 *a);
int czk_bn254_fp2_inv(czk_bn254_fp2 *r, const czk_bn254_fp2 *a);    /* -EDOM when a == 0 */
void czk_bn254_fp2_inv_ct(czk_bn254_fp2 *r, const czk_bn254_fp2 *a); /* norm + Fermat; 0 -> 0 */
int czk_bn254_fp2_sqrt(czk_bn254_fp2 *r, const czk_bn254_fp2 *a);   /* -EDOM on a non-residue */
bool czk_bn254_fp2_is_zero(const czk_bn254_fp2 *a);
bool czk_bn254_fp2_eq(const czk_bn254_fp2 *a, const czk_bn254_fp2 *b);

#endif
