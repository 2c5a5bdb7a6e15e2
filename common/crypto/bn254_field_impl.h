/*
 * bn254_field_impl.h — private, header-only fast paths of bn254_field.h for
 * the bn254_*.c files: the templates of BLS12-381's (field_tmpl_impl.h and
 * fp2_tmpl_impl.h over the n-limb helpers of field_impl.h: masked
 * add/sub/neg, CIOS Montgomery multiplication, the 4-limb mulx/adcx/adox
 * body czk_mont4_mul_asm_) instantiated for BN254's two 4-limb moduli.
 *
 * The CIOS "no final carry" form needs the modulus' top limb below
 * 2^63 - 1; both BN254 moduli have top limb 0x30644e72e131a029 (checked
 * below at compile time and by tests/bn254 against GMP).
 * Same representation as bn254_field.h: Montgomery, R = 2^256, fully reduced.
 */
#ifndef CZK_BN254_FIELD_IMPL_H
#define CZK_BN254_FIELD_IMPL_H

#include "common/crypto/bn254_field.h"
#include "common/crypto/field_impl.h"

static const uint64_t czk_bn254_p_[4] = {0x3c208c16d87cfd47ULL, 0x97816a916871ca8dULL,
                                         0xb85045b68181585dULL, 0x30644e72e131a029ULL};
static const uint64_t czk_bn254_r_[4] = {0x43e1f593f0000001ULL, 0x2833e84879b97091ULL,
                                         0xb85045b68181585dULL, 0x30644e72e131a029ULL};
/* -m^-1 mod 2^64 */
static const uint64_t czk_bn254_pinv_ = 0x87d20782e4866389ULL;
static const uint64_t czk_bn254_rinv_ = 0xc2e1f593efffffffULL;

_Static_assert(0x30644e72e131a029ULL < 0x7ffffffffffffffeULL,
               "no-final-carry CIOS needs the top limb of p and r below 2^63 - 1");

/* ---- Fp, Fr and Fp2 = Fp[u]/(u^2 + 1): field_tmpl_impl.h, fp2_tmpl_impl.h ---- */
#define FI czk_bn254_fp
#define FI_N 4
#define FI_M czk_bn254_p_
#define FI_MINV czk_bn254_pinv_
#define FI_MUL_ASM(t, a, b) czk_mont4_mul_asm_(t, a, b, czk_bn254_p_, &czk_bn254_pinv_)
#include "common/crypto/field_tmpl_impl.h"

#define FI czk_bn254_fr
#define FI_N 4
#define FI_M czk_bn254_r_
#define FI_MINV czk_bn254_rinv_
#define FI_MUL_ASM(t, a, b) czk_mont4_mul_asm_(t, a, b, czk_bn254_r_, &czk_bn254_rinv_)
#include "common/crypto/field_tmpl_impl.h"

#define F2 czk_bn254_fp2
#define F2B czk_bn254_fp
#include "common/crypto/fp2_tmpl_impl.h"

#endif
