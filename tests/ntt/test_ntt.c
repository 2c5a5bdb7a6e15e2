/*
 * test_ntt.c — the NTT over Fr (common/crypto/ntt.c) against GMP oracles:
 *   - roots of unity: 5^((r-1)/2^32) squared down, computed with GMP, equal the
 *     constants documented for snarkjs (w[32], w[10], w[12], w[16], w[18],
 *     w[19]) and czk_fr_root_of_unity; each w[k] is a primitive 2^k-th root;
 *   - czk_ntt / czk_intt vs the naive O(n^2) DFT in GMP at sizes 2^0..2^8;
 *   - czk_ntt at 2^12..2^16 (beyond the cache-block size) vs direct GMP
 *     evaluation at sampled output positions; intt(ntt(x)) == x; 1 and 2
 *     threads give identical output;
 *   - czk_ntt_to_odd_coset vs GMP: interpolate, then evaluate at w_2n^(2j+1);
 *   - czk_ntt_scale_powers vs GMP.
 * Exit 0 pass, 1 fail.  CZK_TEST_SEED replays a run.
 */
#include <gmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/crypto/field.h"
#include "common/crypto/ntt.h"
#include "tests/common/test_util.h"

static mpz_t R; /* the scalar field modulus r */

static void fr_to_mpz(mpz_t z, const czk_fr *mont)
{
    czk_fr s;
    czk_fr_from_mont(&s, mont);
    mpz_import(z, 4, -1, sizeof(uint64_t), 0, 0, s.l);
}

static void mpz_to_fr(czk_fr *mont, const mpz_t z)
{
    czk_fr s;
    size_t cnt;
    memset(&s, 0, sizeof(s));
    mpz_export(s.l, &cnt, -1, sizeof(uint64_t), 0, 0, z);
    czk_fr_to_mont(mont, &s);
}

static void rand_fr(czk_fr *a)
{
    mpz_t z;
    uint64_t l[4] = {t_rand64(), t_rand64(), t_rand64(), t_rand64()};
    mpz_init(z);
    mpz_import(z, 4, -1, sizeof(uint64_t), 0, 0, l);
    mpz_mod(z, z, R);
    mpz_to_fr(a, z);
    mpz_clear(z);
}

/* w[k] via GMP: 5^((r-1)/2^32), squared 32-k times */
static void gmp_root(mpz_t w, unsigned k)
{
    mpz_t t;
    mpz_init(t);
    mpz_sub_ui(t, R, 1);
    mpz_fdiv_q_2exp(t, t, 32);
    mpz_set_ui(w, 5);
    mpz_powm(w, w, t, R);
    for (unsigned i = k; i < 32; i++)
        mpz_powm_ui(w, w, 2, R);
    mpz_clear(t);
}

static void test_roots(void)
{
    static const struct { unsigned k; const char *hex; } doc[] = {
        {32, "0212d79e5b416b6f0fd56dc8d168d6c0c4024ff270b3e0941b788f500b912f1f"},
        {10, "2f27b09858f43cef3ed6d55a6350721d79efd6b0570bf109d58a5af42d010ff9"},
        {12, "110cebd0c8e9101be155cb4893f9e9ac565af17137d56fc0450d9f977ea8ee05"},
        {16, "6709c6cd56aa725b0409ee987a02402c0caba63a29c01b06137b458acfc35f7a"},
        {18, "5ef5e8db0b8ac903fd7f05ba4610300c4f730e7ddd3ccc96bf87b689b9009408"},
        {19, "3a689e83aa0a1d802e1d9a1922cc3253a672867368812f7f6499688417cd0c14"},
    };
    mpz_t w, d, x, e;
    czk_fr c;
    unsigned k, i;

    mpz_inits(w, d, x, e, NULL);
    for (i = 0; i < sizeof(doc) / sizeof(doc[0]); i++) {
        mpz_set_str(d, doc[i].hex, 16);
        gmp_root(w, doc[i].k);
        CHECK(mpz_cmp(w, d) == 0, "gmp w[%u] differs from the documented constant", doc[i].k);
        czk_fr_root_of_unity(&c, doc[i].k);
        fr_to_mpz(x, &c);
        CHECK(mpz_cmp(x, d) == 0, "czk_fr_root_of_unity(%u) differs from the documented constant",
              doc[i].k);
    }
    for (k = 0; k <= 32; k++) {
        gmp_root(w, k);
        czk_fr_root_of_unity(&c, k);
        fr_to_mpz(x, &c);
        CHECK(mpz_cmp(x, w) == 0, "czk_fr_root_of_unity(%u) differs from gmp", k);
        /* primitive: w^(2^k) = 1 and, for k >= 1, w^(2^(k-1)) = -1 */
        mpz_ui_pow_ui(e, 2, k);
        mpz_powm(d, w, e, R);
        CHECK(mpz_cmp_ui(d, 1) == 0, "w[%u]^(2^%u) != 1", k, k);
        if (k) {
            mpz_fdiv_q_2exp(e, e, 1);
            mpz_powm(d, w, e, R);
            mpz_add_ui(d, d, 1);
            CHECK(mpz_cmp(d, R) == 0, "w[%u]^(2^%u) != -1", k, k - 1);
        }
    }
    mpz_clears(w, d, x, e, NULL);
}

/* out_j = sum_i in_i * w^(i j) mod r */
static void gmp_dft(mpz_t *out, mpz_t *in, size_t n, const mpz_t w)
{
    mpz_t wj, p, t;
    mpz_inits(wj, p, t, NULL);
    mpz_set_ui(wj, 1);
    for (size_t j = 0; j < n; j++) {
        /* Horner in x = w^j */
        mpz_set_ui(p, 0);
        for (size_t i = n; i-- > 0;) {
            mpz_mul(p, p, wj);
            mpz_add(p, p, in[i]);
            mpz_mod(p, p, R);
        }
        mpz_set(out[j], p);
        mpz_mul(wj, wj, w);
        mpz_mod(wj, wj, R);
    }
    mpz_clears(wj, p, t, NULL);
}

/* polynomial sum_i c_i x^i at x */
static void gmp_eval(mpz_t out, mpz_t *c, size_t n, const mpz_t x)
{
    mpz_set_ui(out, 0);
    for (size_t i = n; i-- > 0;) {
        mpz_mul(out, out, x);
        mpz_add(out, out, c[i]);
        mpz_mod(out, out, R);
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

static void test_small(void)
{
    for (unsigned log_n = 0; log_n <= 8; log_n++) {
        size_t n = (size_t)1 << log_n;
        czk_fr *a = malloc(n * sizeof(czk_fr)), *b = malloc(n * sizeof(czk_fr));
        mpz_t *in = mpz_vec(n), *out = mpz_vec(n), w, winv, ninv, x;
        mpz_inits(w, winv, ninv, x, NULL);

        for (size_t i = 0; i < n; i++) {
            rand_fr(&a[i]);
            fr_to_mpz(in[i], &a[i]);
        }
        memcpy(b, a, n * sizeof(czk_fr));
        gmp_root(w, log_n);
        gmp_dft(out, in, n, w);
        CHECK(czk_ntt(a, log_n, 1) == 0, "czk_ntt 2^%u failed", log_n);
        for (size_t i = 0; i < n; i++) {
            fr_to_mpz(x, &a[i]);
            CHECK(mpz_cmp(x, out[i]) == 0, "ntt 2^%u: element %zu differs from the naive dft", log_n, i);
        }
        /* inverse: (1/n) * DFT with w^-1 */
        mpz_invert(winv, w, R);
        mpz_set_ui(ninv, n);
        mpz_invert(ninv, ninv, R);
        gmp_dft(out, in, n, winv);
        CHECK(czk_intt(b, log_n, 2) == 0, "czk_intt 2^%u failed", log_n);
        for (size_t i = 0; i < n; i++) {
            mpz_mul(out[i], out[i], ninv);
            mpz_mod(out[i], out[i], R);
            fr_to_mpz(x, &b[i]);
            CHECK(mpz_cmp(x, out[i]) == 0, "intt 2^%u: element %zu differs from the naive inverse dft",
                  log_n, i);
        }
        mpz_clears(w, winv, ninv, x, NULL);
        mpz_vec_free(in, n);
        mpz_vec_free(out, n);
        free(a);
        free(b);
    }
}

static void test_large(void)
{
    for (unsigned log_n = 12; log_n <= 16; log_n++) {
        size_t n = (size_t)1 << log_n;
        czk_fr *a = malloc(n * sizeof(czk_fr)), *b = malloc(n * sizeof(czk_fr));
        czk_fr *orig = malloc(n * sizeof(czk_fr));
        mpz_t *in = mpz_vec(n), w, x, y, v;
        mpz_inits(w, x, y, v, NULL);

        for (size_t i = 0; i < n; i++) {
            rand_fr(&orig[i]);
            fr_to_mpz(in[i], &orig[i]);
        }
        memcpy(a, orig, n * sizeof(czk_fr));
        memcpy(b, orig, n * sizeof(czk_fr));
        CHECK(czk_ntt(a, log_n, 1) == 0, "czk_ntt 2^%u (1 thread) failed", log_n);
        CHECK(czk_ntt(b, log_n, 2) == 0, "czk_ntt 2^%u (2 threads) failed", log_n);
        CHECK(memcmp(a, b, n * sizeof(czk_fr)) == 0, "ntt 2^%u: 1 and 2 threads differ", log_n);
        /* 3 threads split the stages beyond the cache blocks at butterflies
         * that are not multiples of 8: the lanes' scalar tails run */
        memcpy(b, orig, n * sizeof(czk_fr));
        CHECK(czk_ntt(b, log_n, 3) == 0, "czk_ntt 2^%u (3 threads) failed", log_n);
        CHECK(memcmp(a, b, n * sizeof(czk_fr)) == 0, "ntt 2^%u: 1 and 3 threads differ", log_n);
        /* sampled outputs against direct evaluation at w^j */
        gmp_root(w, log_n);
        for (int s = 0; s < 6; s++) {
            size_t j = s == 0 ? 0 : s == 1 ? n - 1 : (size_t)(t_rand64() % n);
            mpz_powm_ui(x, w, j, R);
            gmp_eval(v, in, n, x);
            fr_to_mpz(y, &a[j]);
            CHECK(mpz_cmp(y, v) == 0, "ntt 2^%u: output %zu differs from direct evaluation", log_n, j);
        }
        CHECK(czk_intt(a, log_n, 2) == 0, "czk_intt 2^%u failed", log_n);
        CHECK(memcmp(a, orig, n * sizeof(czk_fr)) == 0, "intt(ntt(x)) != x at 2^%u", log_n);
        CHECK(czk_intt(b, log_n, 1) == 0, "czk_intt 2^%u failed", log_n);
        CHECK(memcmp(b, orig, n * sizeof(czk_fr)) == 0, "intt(ntt(x)) != x at 2^%u (1 thread)", log_n);
        mpz_clears(w, x, y, v, NULL);
        mpz_vec_free(in, n);
        free(a);
        free(b);
        free(orig);
    }
}

static void test_odd_coset(void)
{
    unsigned sizes[] = {0, 1, 2, 3, 4, 5, 6, 13};
    for (unsigned si = 0; si < sizeof(sizes) / sizeof(sizes[0]); si++) {
        unsigned log_n = sizes[si];
        size_t n = (size_t)1 << log_n;
        czk_fr *a = malloc(n * sizeof(czk_fr)), *b = malloc(n * sizeof(czk_fr));
        mpz_t *ev = mpz_vec(n), *co = mpz_vec(n), w, winv, w2, ninv, x, v, y;
        mpz_inits(w, winv, w2, ninv, x, v, y, NULL);

        for (size_t i = 0; i < n; i++) {
            rand_fr(&a[i]);
            fr_to_mpz(ev[i], &a[i]);
        }
        memcpy(b, a, n * sizeof(czk_fr));
        /* coefficients by naive interpolation */
        gmp_root(w, log_n);
        mpz_invert(winv, w, R);
        mpz_set_ui(ninv, n);
        mpz_invert(ninv, ninv, R);
        if (log_n <= 8) {
            gmp_dft(co, ev, n, winv);
            for (size_t i = 0; i < n; i++) {
                mpz_mul(co[i], co[i], ninv);
                mpz_mod(co[i], co[i], R);
            }
        }
        CHECK(czk_ntt_to_odd_coset(a, log_n, 1) == 0, "odd coset 2^%u failed", log_n);
        CHECK(czk_ntt_to_odd_coset(b, log_n, 2) == 0, "odd coset 2^%u failed (2 threads)", log_n);
        CHECK(memcmp(a, b, n * sizeof(czk_fr)) == 0, "odd coset 2^%u: 1 and 2 threads differ", log_n);
        gmp_root(w2, log_n + 1);
        if (log_n <= 8) {
            for (size_t j = 0; j < n; j++) {
                mpz_powm_ui(x, w2, 2 * j + 1, R);
                gmp_eval(v, co, n, x);
                fr_to_mpz(y, &a[j]);
                CHECK(mpz_cmp(y, v) == 0, "odd coset 2^%u: point %zu differs from direct evaluation",
                      log_n, j);
            }
        } else {
            /* large: the Lagrange form on the odd coset, where x^n = -1:
             * P(x) = sum_i ev_i (x^n - 1) w^i / (n (x - w^i)) = -2/n sum_i ev_i w^i / (x - w^i) */
            mpz_t wi, t;
            mpz_inits(wi, t, NULL);
            for (int s = 0; s < 3; s++) {
                size_t j = s == 0 ? 0 : s == 1 ? n - 1 : (size_t)(t_rand64() % n);
                mpz_powm_ui(x, w2, 2 * j + 1, R);
                mpz_set_ui(v, 0);
                mpz_set_ui(wi, 1);
                for (size_t i = 0; i < n; i++) {
                    mpz_sub(t, x, wi);
                    mpz_mod(t, t, R);
                    mpz_invert(t, t, R);
                    mpz_mul(t, t, wi);
                    mpz_mod(t, t, R);
                    mpz_mul(t, t, ev[i]);
                    mpz_add(v, v, t);
                    mpz_mod(v, v, R);
                    mpz_mul(wi, wi, w);
                    mpz_mod(wi, wi, R);
                }
                mpz_mul(v, v, ninv);
                mpz_mul_si(v, v, -2);
                mpz_mod(v, v, R);
                fr_to_mpz(y, &a[j]);
                CHECK(mpz_cmp(y, v) == 0, "odd coset 2^%u: point %zu differs from the lagrange form",
                      log_n, j);
            }
            mpz_clears(wi, t, NULL);
        }
        mpz_clears(w, winv, w2, ninv, x, v, y, NULL);
        mpz_vec_free(ev, n);
        mpz_vec_free(co, n);
        free(a);
        free(b);
    }
}

static void test_scale(void)
{
    size_t sizes[] = {1, 7, 100, 5000};
    for (unsigned si = 0; si < 4; si++) {
        size_t n = sizes[si];
        czk_fr *a = malloc(n * sizeof(czk_fr)), g;
        mpz_t *in = mpz_vec(n), gz, p, x;
        mpz_inits(gz, p, x, NULL);
        for (size_t i = 0; i < n; i++) {
            rand_fr(&a[i]);
            fr_to_mpz(in[i], &a[i]);
        }
        rand_fr(&g);
        fr_to_mpz(gz, &g);
        CHECK(czk_ntt_scale_powers(a, n, &g, 2) == 0, "scale_powers failed");
        mpz_set_ui(p, 1);
        for (size_t i = 0; i < n; i++) {
            mpz_mul(x, in[i], p);
            mpz_mod(x, x, R);
            mpz_set(in[i], x);
            fr_to_mpz(x, &a[i]);
            CHECK(mpz_cmp(x, in[i]) == 0, "scale_powers n=%zu: element %zu differs", n, i);
            mpz_mul(p, p, gz);
            mpz_mod(p, p, R);
        }
        mpz_clears(gz, p, x, NULL);
        mpz_vec_free(in, n);
        free(a);
    }
}

static void test_errors(void)
{
    czk_fr a[2];
    CHECK(czk_ntt(NULL, 1, 1) == -22, "null vector accepted");
    CHECK(czk_ntt(a, CZK_NTT_MAX_LOG + 1, 1) == -22, "oversized transform accepted");
}

int main(void)
{
    t_seed("test_ntt");
    mpz_init(R);
    mpz_import(R, 4, -1, sizeof(uint64_t), 0, 0, CZK_FR_MOD.l);

    test_roots();
    test_small();
    test_large();
    test_odd_coset();
    test_scale();
    test_errors();
    mpz_clear(R);
    if (t_failures) {
        fprintf(stderr, "test_ntt: %d check(s) failed\n", t_failures);
        return 1;
    }
    printf("test_ntt: all checks passed\n");
    return 0;
}
