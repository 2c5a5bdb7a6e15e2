/*
 * ntt.c — radix-2 NTT over BLS12-381's Fr with snarkjs's roots of unity
 * (ntt.h).  The transform is ntt_tmpl.h, shared with BN254 (bn254_ntt.c).
 */
#include "common/crypto/ntt.h"

#include "common/base/log.h"
#include "common/crypto/field_impl.h"
#include "common/crypto/frx8.h"
#include "common/crypto/par.h"

#define NT(name) czk_##name
#define NT_PFX ""
#define NT_FR czk_fr
#define NT_MUL czk_fr_mul_i
#define NT_ADD czk_fr_add_i
#define NT_SUB czk_fr_sub_i
#define NT_SQR czk_fr_sqr
#define NT_POW czk_fr_pow
#define NT_INV czk_fr_inv
#define NT_FROM_U64 czk_fr_from_u64
#define NT_ZERO CZK_FR_ZERO
#define NT_MOD CZK_FR_MOD
#define NT_LIMBS CZK_FR_LIMBS
#define NT_TWO_ADICITY 32
#define NT_MAX_LOG CZK_NTT_MAX_LOG
#ifdef CZK_HAVE_FPX8
#define NT_X8_T czk_frx8
#define NT_X8(name) czk_frx8_##name
#endif
#include "common/crypto/ntt_tmpl.h"
