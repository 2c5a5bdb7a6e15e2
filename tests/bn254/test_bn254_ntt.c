/*
 * test_bn254_ntt.c — the NTT over BN254's Fr (common/crypto/bn254_ntt.h)
 * against GMP:
 *   - roots of unity: root(28) is 5^((r-1)/2^28) computed in GMP and equals
 *     CZK_BN254_FR_ROOT_2_28; every root(k) has order exactly 2^k;
 *   - czk_bn254_ntt / czk_bn254_intt against the naive O(n^2) DFT in GMP on
 *     random inputs at 2^0..2^8 and 2^10 (1 and 2 threads);
 *   - forward then inverse is the identity at 2^16 (past the cache block
 *     and the parallel threshold), with 1 and 2 threads giving the same
 *     transform;
 *   - czk_bn254_ntt_to_odd_coset against GMP (interpolate, evaluate at
 *     w_2n^(2j+1)) at 2^1..2^8 and 2^10, and czk_bn254_ntt_scale_powers;
 *   - the size limits (-EINVAL).
 * Usage: test_bn254_ntt
 */
#include <errno.h>
#include <stdlib.h>

#include "common/crypto/bn254_ntt.h"
#include "tests/bn254/bn_util.h"

static mpz_t groots[CZK_BN254_FR_TWO_ADICITY + 1]; /* GMP: primitive 2^k-th roots */

static void rand_vec(czk_bn254_fr *a, mpz_t *g, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        t_rand_mod(g[i], bn_r, 4);
        fr_set(&a[i], g[i]);
    }
}

static mpz_t *mpz_vec(size_t n)
{
    mpz_t *v = malloc(n * sizeof(mpz_t));
    for (size_t i = 0; i < n; i++)
        mpz_init(v[i]);
    return v;
}

static void mpz_vec_free(mpz_t *v, size_t n)
{
    for (size_t i = 0; i < n; i++)
        mpz_clear(v[i]);
    free(v);
}

/* out[j] = sum_i in[i] w^(i j) mod r (naive), w given */
static void naive_dft(mpz_t *out, mpz_t *in, size_t n, const mpz_t w)
{
    mpz_t wj, x, acc;
    mpz_inits(wj, x, acc, NULL);
    mpz_set_ui(wj, 1);
    for (size_t j = 0; j < n; j++) {
        /* Horner in w^j: sum_i in[i] (w^j)^i */
        mpz_set_ui(acc, 0);
        for (size_t i = n; i-- > 0;) {
            mpz_mul(acc, acc, wj);
            mpz_add(acc, acc, in[i]);
            mpz_mod(acc, acc, bn_r);
        }
        mpz_set(out[j], acc);
        mpz_mul(wj, wj, w);
        mpz_mod(wj, wj, bn_r);
    }
    mpz_clears(wj, x, acc, NULL);
}

static int vec_eq(const czk_bn254_fr *a, mpz_t *g, size_t n)
{
    mpz_t v;
    int ok = 1;
    mpz_init(v);
    for (size_t i = 0; i < n && ok; i++) {
        fr_get(v, &a[i]);
        ok = mpz_cmp(v, g[i]) == 0;
    }
    mpz_clear(v);
    return ok;
}

static void test_roots(void)
{
    mpz_t e, v;
    czk_bn254_fr w;

    mpz_inits(e, v, NULL);
    mpz_sub_ui(e, bn_r, 1);
    CHECK(mpz_scan1(e, 0) == CZK_BN254_FR_TWO_ADICITY, "2-adicity of r - 1 is 28");
    mpz_fdiv_q_2exp(e, e, CZK_BN254_FR_TWO_ADICITY);
    mpz_init_set_ui(groots[CZK_BN254_FR_TWO_ADICITY], 5);
    mpz_powm(groots[CZK_BN254_FR_TWO_ADICITY], groots[CZK_BN254_FR_TWO_ADICITY], e, bn_r);
    for (int k = CZK_BN254_FR_TWO_ADICITY; k > 0; k--) {
        mpz_init(groots[k - 1]);
        mpz_powm_ui(groots[k - 1], groots[k], 2, bn_r);
    }
    CHECK(mpz_cmp_ui(groots[0], 1) == 0, "w^(2^28) = 1");
    CHECK(mpz_cmp_ui(groots[1], 1) != 0, "w has order exactly 2^28");
    fr_get(v, &CZK_BN254_FR_ROOT_2_28);
    CHECK(mpz_cmp(v, groots[CZK_BN254_FR_TWO_ADICITY]) == 0, "CZK_BN254_FR_ROOT_2_28 = 5^((r-1)/2^28)");
    for (unsigned k = 0; k <= CZK_BN254_FR_TWO_ADICITY; k++) {
        czk_bn254_fr_root_of_unity(&w, k);
        fr_get(v, &w);
        CHECK(mpz_cmp(v, groots[k]) == 0, "czk_bn254_fr_root_of_unity(%u) vs GMP", k);
    }
    czk_bn254_fr_root_of_unity(&w, CZK_BN254_FR_TWO_ADICITY + 1);
    CHECK(czk_bn254_fr_is_zero(&w), "no 2^29-th root: zero");
    mpz_clears(e, v, NULL);
}

static void test_naive(unsigned log_n, int nthreads)
{
    size_t n = (size_t)1 << log_n;
    czk_bn254_fr *a = malloc(n * sizeof(*a));
    mpz_t *in = mpz_vec(n), *out = mpz_vec(n), winv;

    rand_vec(a, in, n);
    naive_dft(out, in, n, groots[log_n]);
    CHECK(czk_bn254_ntt(a, log_n, nthreads) == 0, "ntt 2^%u", log_n);
    CHECK(vec_eq(a, out, n), "ntt 2^%u (%d threads) vs naive DFT", log_n, nthreads);

    /* inverse: DFT with w^-1, times 1/n */
    rand_vec(a, in, n);
    mpz_init(winv);
    mpz_invert(winv, groots[log_n], bn_r);
    naive_dft(out, in, n, winv);
    mpz_set_ui(winv, (unsigned long)n);
    mpz_invert(winv, winv, bn_r);
    for (size_t i = 0; i < n; i++) {
        mpz_mul(out[i], out[i], winv);
        mpz_mod(out[i], out[i], bn_r);
    }
    CHECK(czk_bn254_intt(a, log_n, nthreads) == 0, "intt 2^%u", log_n);
    CHECK(vec_eq(a, out, n), "intt 2^%u (%d threads) vs naive inverse DFT", log_n, nthreads);
    mpz_clear(winv);
    mpz_vec_free(in, n);
    mpz_vec_free(out, n);
    free(a);
}

static void test_roundtrip(unsigned log_n)
{
    size_t n = (size_t)1 << log_n;
    czk_bn254_fr *a = malloc(n * sizeof(*a)), *b = malloc(n * sizeof(*b)), *c = malloc(n * sizeof(*c));
    mpz_t v;

    mpz_init(v);
    for (size_t i = 0; i < n; i++) {
        t_rand_mod(v, bn_r, 4);
        fr_set(&a[i], v);
    }
    memcpy(b, a, n * sizeof(*a));
    memcpy(c, a, n * sizeof(*a));
    CHECK(czk_bn254_ntt(b, log_n, 1) == 0 && czk_bn254_ntt(c, log_n, 2) == 0, "ntt 2^%u", log_n);
    CHECK(memcmp(b, c, n * sizeof(*b)) == 0, "ntt 2^%u: 1 and 2 threads agree", log_n);
    /* 3 threads split the stages beyond the cache blocks at butterflies that
     * are not multiples of 8: the lanes' scalar tails run */
    memcpy(c, a, n * sizeof(*a));
    CHECK(czk_bn254_ntt(c, log_n, 3) == 0, "ntt 2^%u (3 threads)", log_n);
    CHECK(memcmp(b, c, n * sizeof(*b)) == 0, "ntt 2^%u: 1 and 3 threads agree", log_n);
    CHECK(memcmp(b, a, n * sizeof(*b)) != 0, "ntt 2^%u changed the vector", log_n);
    /* spot check two outputs against direct evaluation in GMP */
    for (size_t j = 1; j < n; j += n / 2 - 1) {
        mpz_t wj, acc, x;
        mpz_inits(wj, acc, x, NULL);
        mpz_powm_ui(wj, groots[log_n], (unsigned long)j, bn_r);
        for (size_t i = n; i-- > 0;) {
            fr_get(x, &a[i]);
            mpz_mul(acc, acc, wj);
            mpz_add(acc, acc, x);
            mpz_mod(acc, acc, bn_r);
        }
        fr_get(x, &b[j]);
        CHECK(mpz_cmp(acc, x) == 0, "ntt 2^%u output %zu vs GMP", log_n, j);
        mpz_clears(wj, acc, x, NULL);
    }
    CHECK(czk_bn254_intt(b, log_n, 2) == 0 && czk_bn254_intt(c, log_n, 1) == 0, "intt 2^%u", log_n);
    CHECK(memcmp(b, a, n * sizeof(*b)) == 0, "intt(ntt(a)) = a at 2^%u (2 threads)", log_n);
    CHECK(memcmp(c, a, n * sizeof(*c)) == 0, "intt(ntt(a)) = a at 2^%u (1 thread)", log_n);
    mpz_clear(v);
    free(a);
    free(b);
    free(c);
}

static void test_coset(unsigned log_n, int nthreads)
{
    size_t n = (size_t)1 << log_n;
    czk_bn254_fr *a = malloc(n * sizeof(*a));
    mpz_t *in = mpz_vec(n), *coef = mpz_vec(n), *shifted = mpz_vec(n), *out = mpz_vec(n), winv, ninv, p;

    rand_vec(a, in, n);
    /* coefficients: inverse DFT of the evaluations at the powers of w_n */
    mpz_inits(winv, ninv, p, NULL);
    mpz_invert(winv, groots[log_n], bn_r);
    naive_dft(coef, in, n, winv);
    mpz_set_ui(ninv, (unsigned long)n);
    mpz_invert(ninv, ninv, bn_r);
    /* evaluations at w_2n^(2j+1) = w_2n * w_n^j: DFT of c_i w_2n^i */
    mpz_set_ui(p, 1);
    for (size_t i = 0; i < n; i++) {
        mpz_mul(shifted[i], coef[i], ninv);
        mpz_mul(shifted[i], shifted[i], p);
        mpz_mod(shifted[i], shifted[i], bn_r);
        mpz_mul(p, p, groots[log_n + 1]);
        mpz_mod(p, p, bn_r);
    }
    naive_dft(out, shifted, n, groots[log_n]);
    CHECK(czk_bn254_ntt_to_odd_coset(a, log_n, nthreads) == 0, "odd coset 2^%u", log_n);
    CHECK(vec_eq(a, out, n), "odd coset 2^%u (%d threads) vs GMP", log_n, nthreads);

    /* scale_powers: a[i] *= g^i for a random g */
    {
        czk_bn254_fr g;
        mpz_t gg;
        mpz_init(gg);
        rand_vec(a, in, n);
        do
            t_rand_mod(gg, bn_r, 4);
        while (mpz_cmp_ui(gg, 1) <= 0);
        fr_set(&g, gg);
        mpz_set_ui(p, 1);
        for (size_t i = 0; i < n; i++) {
            mpz_mul(out[i], in[i], p);
            mpz_mod(out[i], out[i], bn_r);
            mpz_mul(p, p, gg);
            mpz_mod(p, p, bn_r);
        }
        CHECK(czk_bn254_ntt_scale_powers(a, n, &g, nthreads) == 0, "scale_powers %zu", n);
        CHECK(vec_eq(a, out, n), "scale_powers %zu (%d threads) vs GMP", n, nthreads);
        mpz_clear(gg);
    }
    mpz_clears(winv, ninv, p, NULL);
    mpz_vec_free(in, n);
    mpz_vec_free(coef, n);
    mpz_vec_free(shifted, n);
    mpz_vec_free(out, n);
    free(a);
}

static void test_limits(void)
{
    czk_bn254_fr one[2] = {CZK_BN254_FR_ONE, CZK_BN254_FR_ONE};

    CHECK(czk_bn254_ntt(one, CZK_BN254_NTT_MAX_LOG + 1, 1) == -EINVAL, "ntt beyond 2^28");
    CHECK(czk_bn254_intt(NULL, 1, 1) == -EINVAL, "intt of NULL");
    CHECK(czk_bn254_ntt_to_odd_coset(one, CZK_BN254_FR_TWO_ADICITY, 1) == -EINVAL,
          "odd coset at 2^28 needs a 2^29-th root");
    CHECK(czk_bn254_ntt_scale_powers(one, 2, NULL, 1) == -EINVAL, "scale_powers without g");
}

int main(void)
{
    t_seed("test_bn254_ntt");
    bn_init();
    test_roots();
    for (unsigned k = 0; k <= 8; k++)
        test_naive(k, (int)(k % 2) + 1);
    test_naive(10, 2);
    test_roundtrip(16);
    for (unsigned k = 1; k <= 8; k++)
        test_coset(k, (int)(k % 2) + 1);
    test_coset(10, 2);
    test_limits();
    if (t_failures) {
        fprintf(stderr, "test_bn254_ntt: %d failures\n", t_failures);
        return 1;
    }
    printf("test_bn254_ntt: ok\n");
    return 0;
}
