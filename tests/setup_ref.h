/*
 * setup_ref.h — CPU references for the tests of the setup's fixed-base
 * multiples (common/groth16/setup.h's czk_setup_accel, backend/cuda's
 * czk_cuda_gen_mul and its mock):
 *   czk_test_gen_mul_ref: out[i] = k[i] base by common/crypto's generic (not
 *     table) multiplication, k Montgomery, out affine in the zkey layout, a
 *     zero scalar all-zero bytes;
 *   czk_test_same_file: two files hold the same bytes.
 */
#ifndef CZK_TESTS_SETUP_REF_H
#define CZK_TESTS_SETUP_REF_H

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "common/crypto/bn254_curve.h"
#include "common/crypto/curve.h"

#define CZK_TEST_GEN_MUL_ONE(FR, FROM_MONT, IS_ZERO, J, AFF, MUL, TO_AFF)       \
    do {                                                                        \
        AFF *r_ = (AFF *)out + i;                                               \
        FR s_;                                                                  \
        J p_;                                                                   \
        FROM_MONT(&s_, (const FR *)k_mont + i);                                 \
        if (IS_ZERO(&s_)) {                                                     \
            memset(r_, 0, sizeof(*r_));                                         \
        } else {                                                                \
            MUL(&p_, base, &s_);                                                \
            TO_AFF(r_, &p_);                                                    \
        }                                                                       \
    } while (0)

static inline void czk_test_gen_mul_ref(int bn254, int g2, const void *base, const void *k_mont, size_t n, void *out)
{
    for (size_t i = 0; i < n; i++) {
        if (bn254 && g2)
            CZK_TEST_GEN_MUL_ONE(czk_bn254_fr, czk_bn254_fr_from_mont, czk_bn254_fr_is_zero, czk_bn254_g2,
                                 czk_bn254_g2_aff, czk_bn254_g2_mul_aff, czk_bn254_g2_to_aff);
        else if (bn254)
            CZK_TEST_GEN_MUL_ONE(czk_bn254_fr, czk_bn254_fr_from_mont, czk_bn254_fr_is_zero, czk_bn254_g1,
                                 czk_bn254_g1_aff, czk_bn254_g1_mul_aff, czk_bn254_g1_to_aff);
        else if (g2)
            CZK_TEST_GEN_MUL_ONE(czk_fr, czk_fr_from_mont, czk_fr_is_zero, czk_g2, czk_g2_aff, czk_g2_mul_aff,
                                 czk_g2_to_aff);
        else
            CZK_TEST_GEN_MUL_ONE(czk_fr, czk_fr_from_mont, czk_fr_is_zero, czk_g1, czk_g1_aff, czk_g1_mul_aff,
                                 czk_g1_to_aff);
    }
}

static inline bool czk_test_same_file(const char *a, const char *b)
{
    FILE *fa = fopen(a, "rb"), *fb = fopen(b, "rb");
    bool same = fa && fb;

    while (same) {
        int x = fgetc(fa), y = fgetc(fb);

        if (x != y)
            same = false;
        if (x == EOF)
            break;
    }
    if (fa)
        fclose(fa);
    if (fb)
        fclose(fb);
    return same;
}

#endif
