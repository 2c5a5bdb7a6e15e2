/*
 * field_fr.c — the BLS12-381 scalar field Fr (field.h): Montgomery arithmetic
 * on 4 little-endian 64-bit limbs, R = 2^256.  The functions every prime
 * field has (field_tmpl.h, shared with BN254, with uniform random elements
 * from getrandom(2)) over the inline operations of field_impl.h; this file
 * holds the constants and the batch inversions.
 */
#include <errno.h>
#include <string.h>
#include <sys/random.h>

#include "common/crypto/field_impl.h"
#include "common/base/log.h"

const czk_fr CZK_FR_MOD = {{0xffffffff00000001ULL, 0x53bda402fffe5bfeULL, 0x3339d80809a1d805ULL,
                            0x73eda753299d7d48ULL}};
const czk_fr CZK_FR_ZERO = {{0, 0, 0, 0}};
const czk_fr CZK_FR_ONE = {{0x00000001fffffffeULL, 0x5884b7fa00034802ULL, 0x998c4fefecbc4ff5ULL,
                            0x1824b159acc5056fULL}};
static const czk_fr FR_R2 = {{0xc999e990f3f29c6dULL, 0x2b6cedcb87925c23ULL, 0x05d314967254398fULL,
                              0x0748d9d99f59ff11ULL}};
static const uint64_t FR_RM2[4] = {0xfffffffeffffffffULL, 0x53bda402fffe5bfeULL,
                                   0x3339d80809a1d805ULL, 0x73eda753299d7d48ULL};

/* R^3 mod r, see field_tmpl.h's _inv */
static const czk_fr FR_R3 = {{0xc62c1807439b73afULL, 0x1b3e0d188cf06990ULL, 0x73d13c71c7b5f418ULL,
                              0x6e2a5bb9c8db33e9ULL}};

/* _random: r > 2^254, so a 255-bit string is below r with probability
 * r / 2^255 > 1/2 */
#define BF czk_fr
#define BF_N 4
#define BF_BYTES CZK_FR_BYTES
#define BF_DEC_MAX CZK_FR_DEC_MAX
#define BF_M czk_fr_r_
#define BF_MINV CZK_FR_RINV_
#define BF_ZERO CZK_FR_ZERO
#define BF_ONE CZK_FR_ONE
#define BF_R2 FR_R2
#define BF_R3 FR_R3
#define BF_MM2 FR_RM2
#define BF_RANDOM_TOP 0x7f
#define BF_RANDOM_WHAT "scalar"
#include "common/crypto/field_tmpl.h"

/* Montgomery's trick: prefix products in scratch, one inversion, then walk
 * back.  Zero inputs are skipped (and give zero). out may alias in. */
void czk_fr_batch_inv(czk_fr *out, const czk_fr *in, size_t n, czk_fr *scratch)
{
    czk_fr acc = CZK_FR_ONE, inv;

    for (size_t i = 0; i < n; i++) {
        scratch[i] = acc;
        if (!czk_fr_is_zero_i(&in[i]))
            czk_fr_mul_i(&acc, &acc, &in[i]);
    }
    czk_fr_inv(&inv, &acc); /* acc is a product of non-zero values: never 0 */
    for (size_t i = n; i-- > 0;) {
        if (czk_fr_is_zero_i(&in[i])) {
            out[i] = CZK_FR_ZERO;
            continue;
        }
        czk_fr x = in[i];
        czk_fr_mul_i(&out[i], &inv, &scratch[i]);
        czk_fr_mul_i(&inv, &inv, &x);
    }
}

/* czk_fr_batch_inv without branches: a zero input multiplies by one instead
 * (selected by mask) and its output is masked to zero; the inversion is
 * czk_fr_inv_ct.  out may alias in. */
void czk_fr_batch_inv_ct(czk_fr *out, const czk_fr *in, size_t n, czk_fr *scratch)
{
    czk_fr acc = CZK_FR_ONE, inv, f, x;

    for (size_t i = 0; i < n; i++) {
        uint64_t zero = czk_ct_zero_mask_(in[i].l, 4);

        scratch[i] = acc;
        f = in[i];
        czk_ct_cmov_(f.l, CZK_FR_ONE.l, zero, 4);
        czk_fr_mul_i(&acc, &acc, &f);
    }
    czk_fr_inv_ct(&inv, &acc); /* a product of non-zero values (zeros were replaced by one) */
    for (size_t i = n; i-- > 0;) {
        uint64_t zero = czk_ct_zero_mask_(in[i].l, 4);

        f = in[i];
        czk_ct_cmov_(f.l, CZK_FR_ONE.l, zero, 4);
        czk_fr_mul_i(&x, &inv, &scratch[i]);
        czk_fr_mul_i(&inv, &inv, &f);
        czk_ct_cmov_(x.l, CZK_FR_ZERO.l, zero, 4);
        out[i] = x;
    }
    explicit_bzero(&acc, sizeof(acc));
    explicit_bzero(&inv, sizeof(inv));
    explicit_bzero(&f, sizeof(f));
    explicit_bzero(&x, sizeof(x));
}
