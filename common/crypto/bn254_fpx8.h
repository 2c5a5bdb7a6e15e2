/*
 * bn254_fpx8.h — eight BN254 Fp (and Fp2) operations at once with AVX-512
 * IFMA: BN254's instance of fpx_tmpl.h, czk_bn254_fpx8 and czk_bn254_fp2x8,
 * with the run-time switch and the attributes of fpx8.h (czk_fpx8_enabled(),
 * CZK_IFMA).  Private to common/: not a contract header.  Used by BN254's
 * MSMs (bn254_msm.c, msm_ifma.c).
 *
 * 5 limbs of 52 bits (260 bits) holding czk_bn254_fp's Montgomery residues
 * (x 2^256 mod q), so loading and storing is bit shuffling.  The product
 * divides by R = 2^256 = 2^(4*52) * 2^48: four 52-bit reduction steps and
 * one 48-bit step (m = t0 (-q^-1) mod 2^48 makes t + m q divisible by 2^48
 * at column 4, so by 2^256 in all), then a 48-bit right shift.  Why it is
 * exact: t = a b + sum_i m_i q 2^(52 i) with m_0..m_3 < 2^52, m_4 < 2^48, so
 * t = a b + M q with M < 2^256 = R and t = 0 mod R, hence t / R = a b R^-1
 * mod q and t / R < a b / R + q.
 * Bounds (q / R = 0.18903): a product of a, b with a b < k q^2 comes out
 * below (0.18903 k + 1) q; the full products subtract q once, so they need
 * a b < 5.29 q^2 (e.g. operands below 2q and 2.6q).  The lazy difference
 * a + 2q - b (below 3q) times a value below 3q would come out below 2.7q,
 * hence FPX_SUB_OP_LAZY 0: czk_bn254_fpx8_sub_op is the canonical difference.
 * The window of a product (column 4 up) holds t / 2^208 < 2^48 (a b / R + q)
 * < 2^303 for operands below 3q: more than 5 limbs, so its sixth limb takes
 * part in the final shift (FPX_WIDE 1); the shifted result has 5 limbs.
 * Column sums: at most 4 products of 52-bit halves per step and 5 steps,
 * below 2^57, no overflow.
 */
#ifndef CZK_BN254_FPX8_H
#define CZK_BN254_FPX8_H

#include "common/crypto/bn254_field.h"
#include "common/crypto/fpx8.h"

/* q and 2q in radix 2^52, -q^-1 mod 2^52 */
static const uint64_t czk_bn254_fpx8_q_[5] __attribute__((aligned(64), unused)) = {
    0x8c16d87cfd47ULL, 0x916871ca8d3c2ULL, 0x181585d97816aULL, 0xa029b85045b68ULL, 0x30644e72e131ULL};
static const uint64_t czk_bn254_fpx8_2q_[5] __attribute__((aligned(64), unused)) = {
    0x1182db0f9fa8eULL, 0x22d0e3951a784ULL, 0x302b0bb2f02d5ULL, 0x405370a08b6d0ULL, 0x60c89ce5c263ULL};

#define FPX_T czk_bn254_fpx8
#define FP2X_T czk_bn254_fp2x8
#define FPX(n) czk_bn254_fpx8_##n
#define FP2X(n) czk_bn254_fp2x8_##n
#define FPX_FE czk_bn254_fp
#define FPX_FE2 czk_bn254_fp2
#define FPX_NL 5
#define FPX_NW 4
#define FPX_Q czk_bn254_fpx8_q_
#define FPX_2Q czk_bn254_fpx8_2q_
#define FPX_QINV 0x20782e4866389ULL
#define FPX_TOP_BITS 48
#define FPX_WIDE 1
#define FPX_SUB_OP_LAZY 0
#ifdef CZK_BN254_FPX8_DEFINE
#define FPX_DEFINE_OOL 1
#endif
#include "common/crypto/fpx_tmpl.h"

#endif
