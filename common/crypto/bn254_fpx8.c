/*
 * bn254_fpx8.c — BN254's out-of-line 8-lane AVX-512 IFMA Fp and Fp2 products
 * (bn254_fpx8.h) and the array wrappers of the tests and benchmarks:
 * fpx_ool_tmpl.h instantiated through CZK_BN254_FPX8_DEFINE.
 */
#include <errno.h>

#define CZK_BN254_FPX8_DEFINE 1
#include "common/crypto/bn254_fpx8.h"
