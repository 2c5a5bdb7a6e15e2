/*
 * test_curve_ct.c — the constant-time point functions of curve.h (_mul_ct,
 * _mul_aff_ct, _add_ct, _add_aff_ct, _to_aff_ct) for G1 and G2 against the
 * variable-time code: a double-and-add over the branching Jacobian dbl / add,
 * czk_g*_add and czk_g*_to_aff, plus the GMP oracle (oracle.h) for k G.
 * Scalars 0, 1, 2, r - 1, r, r + 1, 2^255, 2^256 - 1 and random; points
 * random with random Z, the generator, infinity as (1, 1, 0), (X, Y, 0) and
 * (0, 0, 0); sums P + Q, P + P, P + (-P), with infinity, aliased.
 * usage: test_curve_ct [iterations]
 */
#include <string.h>

#include "common/crypto/curve.h"
#include "../field/test_util.h"
#include "tests/common/curve_oracle.h"

/* an oracle.h helper this test does not need */
static int (*const unused_on_curve_)(const o_pt *, const o_f2 *) __attribute__((unused)) = o_pt_on_curve;

#define TG czk_g1
#define TJ czk_g1
#define TA czk_g1_aff
#define TF czk_fp
#define TF_MUL czk_fp_mul
#define TF_SQR czk_fp_sqr
#define TGEN CZK_G1_GEN
#define T_TO_O g1_to_o
#include "test_curve_ct_tmpl.h"
#undef TG
#undef TJ
#undef TA
#undef TF
#undef TF_MUL
#undef TF_SQR
#undef TGEN
#undef T_TO_O

#define TG czk_g2
#define TJ czk_g2
#define TA czk_g2_aff
#define TF czk_fp2
#define TF_MUL czk_fp2_mul
#define TF_SQR czk_fp2_sqr
#define TGEN CZK_G2_GEN
#define T_TO_O g2_to_o
#include "test_curve_ct_tmpl.h"

int main(int argc, char **argv)
{
    int iters = argc > 1 ? atoi(argv[1]) : 40;
    t_seed("test_curve_ct");
    o_init();
    test_ct_czk_g1(iters);
    test_ct_czk_g2(iters / 2 > 14 ? iters / 2 : 14);
    if (t_failures) {
        fprintf(stderr, "test_curve_ct: %d checks failed\n", t_failures);
        return 1;
    }
    printf("test_curve_ct: ok\n");
    return 0;
}
