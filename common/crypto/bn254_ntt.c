/*
 * bn254_ntt.c — radix-2 NTT over BN254's Fr (bn254_ntt.h).  The transform
 * is ntt_tmpl.h, shared with BLS12-381 (ntt.c).
 */
#include "common/crypto/bn254_ntt.h"

#include "common/base/log.h"
#include "common/crypto/bn254_field_impl.h"
#include "common/crypto/frx8.h"
#include "common/crypto/par.h"

#define NT(name) czk_bn254_##name
#define NT_PFX "bn254 "
#define NT_FR czk_bn254_fr
#define NT_MUL czk_bn254_fr_mul_i
#define NT_ADD czk_bn254_fr_add_i
#define NT_SUB czk_bn254_fr_sub_i
#define NT_SQR czk_bn254_fr_sqr
#define NT_POW czk_bn254_fr_pow
#define NT_INV czk_bn254_fr_inv
#define NT_FROM_U64 czk_bn254_fr_from_u64
#define NT_ZERO CZK_BN254_FR_ZERO
#define NT_MOD CZK_BN254_FR_MOD
#define NT_LIMBS CZK_BN254_LIMBS
#define NT_TWO_ADICITY CZK_BN254_FR_TWO_ADICITY
#define NT_MAX_LOG CZK_BN254_NTT_MAX_LOG
#ifdef CZK_HAVE_FPX8
#define NT_X8_T czk_bn254_frx8
#define NT_X8(name) czk_bn254_frx8_##name
#endif
#include "common/crypto/ntt_tmpl.h"
