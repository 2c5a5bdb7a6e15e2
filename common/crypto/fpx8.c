/*
 * fpx8.c — BLS12-381's out-of-line 8-lane AVX-512 IFMA Fp and Fp2 products
 * (fpx8.h), for the large MSM loops, and the array wrappers of the tests and
 * benchmarks: fpx_ool_tmpl.h instantiated through CZK_FPX8_DEFINE.  The
 * run-time dispatch, czk_fpx8_enabled(), is in the header; tests and
 * benchmarks set CZK_NO_IFMA=1 to compare the vector path with the scalar one.
 */
#include <errno.h>

#define CZK_FPX8_DEFINE 1
#include "common/crypto/fpx8.h"
