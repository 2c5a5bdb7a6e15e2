/*
 * frx8.h — eight scalar-field (Fr) products at once with AVX-512 IFMA, for
 * both curves: fpx_tmpl.h instantiated without its Fp2 part for
 * BLS12-381's Fr (czk_frx8) and BN254's Fr (czk_bn254_frx8), with the
 * run-time switch and the attributes of fpx8.h (czk_fpx8_enabled(),
 * CZK_IFMA).  Private to common/: not a contract header.  Used by the
 * Groth16 prover's build_abc (a = A·w, b = B·w, c = a∘b: one product per
 * key coefficient and one per row).
 *
 * Both fields: 5 limbs of 52 bits (260 bits) holding the scalar code's
 * Montgomery residues (x 2^256 mod r), so loading and storing is bit
 * shuffling.  The product divides by R = 2^256 = 2^(4*52) * 2^48 (four
 * 52-bit reduction steps and one 48-bit step, then a 48-bit right shift),
 * as bn254_fpx8.h does for BN254's Fp; the exactness argument there holds
 * for any modulus below R.
 * Bounds (r / R: BLS12-381 0.45285, BN254 0.18903): a product of a, b with
 * a b < k r^2 comes out below (k r / R + 1) r and the full products subtract
 * r once, so canonical operands give canonical results (k = 1: below
 * 1.46 r).  The window of a product (column 4 up) holds up to
 * 2^48 (a b / R + r) < 2^304: more than 5 limbs, so FPX_WIDE 1.  A lazy
 * difference (below 3r) times a value below 3r would not come out below 2r
 * for either field, hence FPX_SUB_OP_LAZY 0 (canonical sub_op).  Column
 * sums stay below 2^57 as for BN254's Fp.  Only the products, sums,
 * differences and conversions of canonical values are used.
 */
#ifndef CZK_FRX8_H
#define CZK_FRX8_H

#include "common/crypto/bn254_field.h"
#include "common/crypto/field.h"
#include "common/crypto/fpx8.h"

/* r and 2r in radix 2^52 */
static const uint64_t czk_frx8_r_[5] __attribute__((aligned(64), unused)) = {
    0xfffff00000001ULL, 0x2fffe5bfefffULL, 0x9a1d80553bda4ULL, 0x7d483339d8080ULL, 0x73eda753299dULL};
static const uint64_t czk_frx8_2r_[5] __attribute__((aligned(64), unused)) = {
    0xffffe00000002ULL, 0x5fffcb7fdfffULL, 0x343b00aa77b48ULL, 0xfa906673b0101ULL, 0xe7db4ea6533aULL};
static const uint64_t czk_bn254_frx8_r_[5] __attribute__((aligned(64), unused)) = {
    0x1f593f0000001ULL, 0x4879b9709143eULL, 0x181585d2833e8ULL, 0xa029b85045b68ULL, 0x30644e72e131ULL};
static const uint64_t czk_bn254_frx8_2r_[5] __attribute__((aligned(64), unused)) = {
    0x3eb27e0000002ULL, 0x90f372e12287cULL, 0x302b0ba5067d0ULL, 0x405370a08b6d0ULL, 0x60c89ce5c263ULL};

/* ---- BLS12-381 Fr: czk_frx8 ---- */
#define FPX_T czk_frx8
#define FPX(n) czk_frx8_##n
#define FPX_FE czk_fr
#define FPX_NL 5
#define FPX_NW 4
#define FPX_Q czk_frx8_r_
#define FPX_2Q czk_frx8_2r_
#define FPX_QINV 0xffffeffffffffULL /* -r^-1 mod 2^52 */
#define FPX_TOP_BITS 48
#define FPX_WIDE 1
#define FPX_SUB_OP_LAZY 0
#define FPX_NO_FP2 1
#ifdef CZK_FRX8_DEFINE
#define FPX_DEFINE_OOL 1
#endif
#include "common/crypto/fpx_tmpl.h"

/* ---- BN254 Fr: czk_bn254_frx8 ---- */
#define FPX_T czk_bn254_frx8
#define FPX(n) czk_bn254_frx8_##n
#define FPX_FE czk_bn254_fr
#define FPX_NL 5
#define FPX_NW 4
#define FPX_Q czk_bn254_frx8_r_
#define FPX_2Q czk_bn254_frx8_2r_
#define FPX_QINV 0x1f593efffffffULL /* -r^-1 mod 2^52 */
#define FPX_TOP_BITS 48
#define FPX_WIDE 1
#define FPX_SUB_OP_LAZY 0
#define FPX_NO_FP2 1
#ifdef CZK_FRX8_DEFINE
#define FPX_DEFINE_OOL 1
#endif
#include "common/crypto/fpx_tmpl.h"

#endif
