/*
 * test_build_abc.c — build_abc (a = A·w, b = B·w, c = a∘b, the synthesizer's
 * arithmetic) of both curves against GMP, on keys of generated circuits
 * (czk gen-circuit's shapes: bit, linear and product rows, coefficients 1,
 * -1 and full width) of several sizes, none a multiple of 8 coefficients,
 * with 1, 2 and 3 threads: every row of a, b and c (the buffers are filled
 * with garbage first, so an unwritten row fails) equals the sums computed
 * with GMP from the key's coefficients (value = coef R^2) and the witness.
 * ctest runs it twice: with the AVX-512 IFMA products where the CPU has
 * them, and with CZK_NO_IFMA=1 (the scalar products).
 *     test_build_abc SCRATCH_DIR
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/crypto/frx8.h"
#include "common/groth16/any.h"
#include "common/groth16/gencircuit.h"
#include "common/groth16/setup.h"
#include "tests/field/test_util.h"

typedef struct { uint64_t l[4]; } fe;

static void check(const char *dir, czk_curve_id curve, uint32_t n_constraints, double bits, uint64_t seed)
{
    const char *name = curve == CZK_CURVE_BN254 ? "BN254" : "BLS12-381";
    const char *r_hex = curve == CZK_CURVE_BN254
                            ? "30644e72e131a029b85045b68181585d2833e84879b9709143e1f593f0000001"
                            : "73eda753299d7d483339d80809a1d80553bda402fffe5bfeffffffff00000001";
    char r1cs[4200], wtns[4200], zkey[4200];
    czk_gencircuit_opts o = {.n_constraints = n_constraints, .n_public = 2, .bit_fraction = bits,
                             .seed = seed, .curve = curve};
    czk_error e = {0};
    czk_zkey z;
    czk_wtns wt;
    mpz_t r, R, rinv2, v, t, *A, *B;
    fe *abc, got;
    size_t n, i;

    snprintf(r1cs, sizeof(r1cs), "%s/%s.r1cs", dir, name);
    snprintf(wtns, sizeof(wtns), "%s/%s.wtns", dir, name);
    snprintf(zkey, sizeof(zkey), "%s/%s.zkey", dir, name);
    if (czk_gencircuit(&o, r1cs, wtns, &e) || czk_setup_dev(r1cs, zkey, 0, NULL, &e))
        DIE("%s: %s", name, e.msg);
    if (czk_zkey_open_curves(&z, zkey, CZK_CURVES_ALL, &e) || czk_wtns_open_curves(&wt, wtns, CZK_CURVES_ALL, &e))
        DIE("%s: %s", name, e.msg);
    n = z.domain_size;
    const fe *w = curve == CZK_CURVE_BN254 ? (const fe *)wt.w_bn : (const fe *)wt.w;

    /* GMP: A[row] = sum coef w (standard form), coef = value R^-2 */
    mpz_inits(r, R, rinv2, v, t, NULL);
    mpz_set_str(r, r_hex, 16);
    mpz_setbit(R, 256);
    mpz_mod(R, R, r);
    mpz_invert(rinv2, R, r);
    mpz_mul(rinv2, rinv2, rinv2);
    mpz_mod(rinv2, rinv2, r);
    A = malloc(n * sizeof(mpz_t));
    B = malloc(n * sizeof(mpz_t));
    abc = malloc(3 * n * sizeof(fe));
    if (!A || !B || !abc)
        DIE("out of memory");
    for (i = 0; i < n; i++)
        mpz_inits(A[i], B[i], NULL);
    for (i = 0; i < z.n_coefs; i++) {
        const czk_zkey_coef *k = &z.coefs[i];
        uint64_t val[4];

        memcpy(val, &k->value, sizeof(val));
        t_limbs_to_mpz(v, val, 4);
        mpz_mul(v, v, rinv2);
        t_limbs_to_mpz(t, w[k->signal].l, 4);
        mpz_mul(v, v, t);
        mpz_t *dst = k->matrix == 0 ? A : B;
        mpz_add(dst[k->constraint], dst[k->constraint], v);
    }
    for (i = 0; i < n; i++) {
        mpz_mod(A[i], A[i], r);
        mpz_mod(B[i], B[i], r);
    }

    for (int threads = 1; threads <= 3; threads++) {
        long bad = 0;

        memset(abc, 0xa5, 3 * n * sizeof(fe));
        CHECK(czk_groth16_any_build_abc(&z, w, abc, abc + n, abc + 2 * n, threads) == 0, "%s: build_abc", name);
        for (i = 0; i < n && bad < 5; i++) {
            /* a, b are Montgomery: A R; c = a b / R = A B R */
            mpz_mul(v, A[i], R);
            mpz_mod(v, v, r);
            t_mpz_to_limbs(got.l, v, 4);
            if (memcmp(&abc[i], &got, sizeof(fe))) {
                CHECK(0, "%s 2^%zu, %d threads: a[%zu] is not A·w", name, n, threads, i);
                bad++;
            }
            mpz_mul(t, B[i], R);
            mpz_mod(t, t, r);
            t_mpz_to_limbs(got.l, t, 4);
            if (memcmp(&abc[n + i], &got, sizeof(fe))) {
                CHECK(0, "%s 2^%zu, %d threads: b[%zu] is not B·w", name, n, threads, i);
                bad++;
            }
            mpz_mul(v, v, B[i]);
            mpz_mod(v, v, r);
            t_mpz_to_limbs(got.l, v, 4);
            if (memcmp(&abc[2 * n + i], &got, sizeof(fe))) {
                CHECK(0, "%s 2^%zu, %d threads: c[%zu] is not a∘b", name, n, threads, i);
                bad++;
            }
        }
    }
    printf("test_build_abc: %s, %u constraints (domain %zu), %u coefficients, bits %.2f: checked\n", name,
           n_constraints, n, z.n_coefs, bits);
    for (i = 0; i < n; i++)
        mpz_clears(A[i], B[i], NULL);
    free(A);
    free(B);
    free(abc);
    mpz_clears(r, R, rinv2, v, t, NULL);
    czk_wtns_close(&wt);
    czk_zkey_close(&z);
    unlink(r1cs);
    unlink(wtns);
    unlink(zkey);
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: test_build_abc SCRATCH_DIR\n");
        return 2;
    }
    if (mkdir(argv[1], 0755) < 0 && errno != EEXIST)
        DIE("cannot create %s: %s", argv[1], strerror(errno));
    t_seed("test_build_abc");
    printf("test_build_abc: products in %s\n", czk_fpx8_enabled() ? "IFMA lanes" : "scalar code");
    for (int c = 0; c < 2; c++) {
        const czk_curve_id curve = c ? CZK_CURVE_BN254 : CZK_CURVE_BLS12_381;
        /* sizes whose coefficient counts are not multiples of 8; the domains
         * (up to 2^13) give every thread count chunks of many groups of 8 */
        check(argv[1], curve, 13, 0.5, t_rand64());
        check(argv[1], curve, 1000 + (uint32_t)(t_rand64() % 23), 0.0, t_rand64());
        check(argv[1], curve, 5000 + (uint32_t)(t_rand64() % 23), 0.3, t_rand64());
    }
    if (t_failures) {
        fprintf(stderr, "test_build_abc: %d checks failed\n", t_failures);
        return 1;
    }
    printf("test_build_abc: ok\n");
    return 0;
}
