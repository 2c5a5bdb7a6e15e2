/*
 * frx8.c — the out-of-line 8-lane AVX-512 IFMA Fr products of both curves
 * (frx8.h) and the array wrappers of the tests and benchmarks:
 * fpx_ool_tmpl.h instantiated through CZK_FRX8_DEFINE.
 */
#include <errno.h>

#define CZK_FRX8_DEFINE 1
#include "common/crypto/frx8.h"
