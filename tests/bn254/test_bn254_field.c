/*
 * test_bn254_field.c — BN254 Fp, Fr and Fp2 (common/crypto/bn254_field.h)
 * against GMP on random and edge inputs: add/sub/dbl/neg/mul/sqr, inversion
 * (variable-time and _ct), powers, square roots, bytes and decimal
 * conversions, Fr's 2^28-th root of unity, random elements; the Montgomery
 * constants of the library are compared with values derived here by GMP.
 * Usage: test_bn254_field [iterations]
 */
#include <errno.h>
#include <stdlib.h>

#include "tests/bn254/bn_util.h"

/* the library's constants against GMP derivations */
static void test_constants(void)
{
    mpz_t v, w;
    mpz_inits(v, w, NULL);

    t_limbs_to_mpz(v, CZK_BN254_FP_MOD.l, 4);
    CHECK(mpz_cmp(v, bn_p) == 0, "CZK_BN254_FP_MOD is p");
    t_limbs_to_mpz(v, CZK_BN254_FR_MOD.l, 4);
    CHECK(mpz_cmp(v, bn_r) == 0, "CZK_BN254_FR_MOD is r");
    /* the no-final-carry CIOS condition: top limb below 2^63 - 1 */
    CHECK(CZK_BN254_FP_MOD.l[3] < 0x7ffffffffffffffeULL, "p top limb %llx",
          (unsigned long long)CZK_BN254_FP_MOD.l[3]);
    CHECK(CZK_BN254_FR_MOD.l[3] < 0x7ffffffffffffffeULL, "r top limb");
    CHECK(mpz_probab_prime_p(bn_p, 30) && mpz_probab_prime_p(bn_r, 30), "p and r prime");

    mpz_mod(w, bn_R, bn_p);
    t_limbs_to_mpz(v, CZK_BN254_FP_ONE.l, 4);
    CHECK(mpz_cmp(v, w) == 0, "CZK_BN254_FP_ONE = 2^256 mod p");
    t_limbs_to_mpz(v, CZK_BN254_FP2_ONE.c0.l, 4);
    CHECK(mpz_cmp(v, w) == 0 && czk_bn254_fp_is_zero(&CZK_BN254_FP2_ONE.c1), "FP2_ONE");
    mpz_mod(w, bn_R, bn_r);
    t_limbs_to_mpz(v, CZK_BN254_FR_ONE.l, 4);
    CHECK(mpz_cmp(v, w) == 0, "CZK_BN254_FR_ONE = 2^256 mod r");

    /* R^2 and R^3 are private: check them through to_mont and inv */
    czk_bn254_fp x, y;
    czk_bn254_fp raw = {{7, 0, 0, 0}};
    czk_bn254_fp_to_mont(&x, &raw);
    mpz_set_ui(w, 7);
    mpz_mul(w, w, bn_R);
    mpz_mod(w, w, bn_p);
    t_limbs_to_mpz(v, x.l, 4);
    CHECK(mpz_cmp(v, w) == 0, "to_mont(7) = 7 R mod p");
    czk_bn254_fp_from_mont(&y, &x);
    CHECK(y.l[0] == 7 && !y.l[1] && !y.l[2] && !y.l[3], "from_mont(to_mont(7))");

    /* Fr: p - 1 = 2^28 t; the root of unity has order exactly 2^28 and is
     * 5^t with 5 a non-residue */
    mpz_t t;
    mpz_init(t);
    mpz_sub_ui(t, bn_r, 1);
    unsigned long s = mpz_scan1(t, 0);
    CHECK(s == CZK_BN254_FR_TWO_ADICITY, "2-adicity of r - 1 is %lu", s);
    mpz_tdiv_q_2exp(t, t, s);
    mpz_set_ui(w, 5);
    CHECK(mpz_legendre(w, bn_r) == -1, "5 is a non-residue mod r");
    mpz_powm(w, w, t, bn_r);
    fr_get(v, &CZK_BN254_FR_ROOT_2_28);
    CHECK(mpz_cmp(v, w) == 0, "ROOT_2_28 = 5^((r-1)/2^28)");
    czk_bn254_fr z = CZK_BN254_FR_ROOT_2_28;
    for (int i = 0; i < 27; i++)
        czk_bn254_fr_sqr(&z, &z);
    CHECK(!czk_bn254_fr_eq(&z, &CZK_BN254_FR_ONE), "root^(2^27) != 1");
    czk_bn254_fr_sqr(&z, &z);
    CHECK(czk_bn254_fr_eq(&z, &CZK_BN254_FR_ONE), "root^(2^28) == 1");
    mpz_clears(v, w, t, NULL);
}

/* the same checks for Fp and Fr, through a small table of functions */
typedef struct {
    const char *name;
    const mpz_t *m;
    void (*set)(uint64_t *l, const mpz_t v);
    void (*get)(mpz_t v, const uint64_t *l);
    void (*add)(void *, const void *, const void *);
    void (*sub)(void *, const void *, const void *);
    void (*mul)(void *, const void *, const void *);
    void (*sqr)(void *, const void *);
    void (*dbl)(void *, const void *);
    void (*neg)(void *, const void *);
    int (*inv)(void *, const void *);
    void (*inv_ct)(void *, const void *);
    void (*pow)(void *, const void *, const uint64_t *, size_t);
    int (*sqrt)(void *, const void *);
    int (*from_bytes)(void *, const uint8_t *);
    void (*to_bytes)(uint8_t *, const void *);
    int (*from_dec)(void *, const char *);
    void (*to_dec)(char *, const void *);
} field_ops;

static void fp_set_l(uint64_t *l, const mpz_t v) { bn_mont_set(l, v, bn_p); }
static void fp_get_l(mpz_t v, const uint64_t *l) { bn_mont_get(v, l, bn_p, bn_Rinv_p); }
static void fr_set_l(uint64_t *l, const mpz_t v) { bn_mont_set(l, v, bn_r); }
static void fr_get_l(mpz_t v, const uint64_t *l) { bn_mont_get(v, l, bn_r, bn_Rinv_r); }

#define OPS(F, setl, getl, mod)                                                         \
    {#F, &mod, setl, getl, (void (*)(void *, const void *, const void *))czk_bn254_##F##_add, \
     (void (*)(void *, const void *, const void *))czk_bn254_##F##_sub,                  \
     (void (*)(void *, const void *, const void *))czk_bn254_##F##_mul,                  \
     (void (*)(void *, const void *))czk_bn254_##F##_sqr,                                \
     (void (*)(void *, const void *))czk_bn254_##F##_dbl,                                \
     (void (*)(void *, const void *))czk_bn254_##F##_neg,                                \
     (int (*)(void *, const void *))czk_bn254_##F##_inv,                                 \
     (void (*)(void *, const void *))czk_bn254_##F##_inv_ct,                             \
     (void (*)(void *, const void *, const uint64_t *, size_t))czk_bn254_##F##_pow,      \
     (int (*)(void *, const void *))czk_bn254_##F##_sqrt,                                \
     (int (*)(void *, const uint8_t *))czk_bn254_##F##_from_bytes_le,                    \
     (void (*)(uint8_t *, const void *))czk_bn254_##F##_to_bytes_le,                     \
     (int (*)(void *, const char *))czk_bn254_##F##_from_dec,                            \
     (void (*)(char *, const void *))czk_bn254_##F##_to_dec}

static void test_field(const field_ops *o, int iters)
{
    mpz_t a, b, c, got, e;
    mpz_inits(a, b, c, got, e, NULL);
    const mpz_t *m = o->m;
    int sq = 0, nsq = 0;

    for (int it = 0; it < iters; it++) {
        uint64_t x[4], y[4], z[4], z2[4], el[4];
        t_rand_mod(a, *m, 4);
        t_rand_mod(b, *m, 4);
        o->set(x, a);
        o->set(y, b);

        o->add(z, x, y);
        mpz_add(c, a, b); mpz_mod(c, c, *m); o->get(got, z);
        CHECK(mpz_cmp(got, c) == 0, "%s add it=%d", o->name, it);
        o->sub(z, x, y);
        mpz_sub(c, a, b); mpz_mod(c, c, *m); o->get(got, z);
        CHECK(mpz_cmp(got, c) == 0, "%s sub it=%d", o->name, it);
        o->mul(z, x, y);
        mpz_mul(c, a, b); mpz_mod(c, c, *m); o->get(got, z);
        CHECK(mpz_cmp(got, c) == 0, "%s mul it=%d", o->name, it);
        o->sqr(z, x);
        mpz_mul(c, a, a); mpz_mod(c, c, *m); o->get(got, z);
        CHECK(mpz_cmp(got, c) == 0, "%s sqr it=%d", o->name, it);
        o->dbl(z, x);
        mpz_add(c, a, a); mpz_mod(c, c, *m); o->get(got, z);
        CHECK(mpz_cmp(got, c) == 0, "%s dbl it=%d", o->name, it);
        o->neg(z, x);
        mpz_neg(c, a); mpz_mod(c, c, *m); o->get(got, z);
        CHECK(mpz_cmp(got, c) == 0, "%s neg it=%d", o->name, it);
        /* the results are fully reduced: the raw limbs are below m */
        t_limbs_to_mpz(got, z, 4);
        CHECK(mpz_cmp(got, *m) < 0, "%s neg not reduced it=%d", o->name, it);

        /* aliasing r == a */
        memcpy(z, x, sizeof(z));
        o->mul(z, z, y);
        mpz_mul(c, a, b); mpz_mod(c, c, *m); o->get(got, z);
        CHECK(mpz_cmp(got, c) == 0, "%s mul aliased it=%d", o->name, it);

        memset(z, 0xa5, sizeof(z)); /* z is 0 from the aliased mul when a is: inv(0) must write it */
        memset(z2, 0xa5, sizeof(z2));
        int rc = o->inv(z, x);
        o->inv_ct(z2, x);
        if (mpz_sgn(a) == 0) {
            CHECK(rc == -EDOM && !(z[0] | z[1] | z[2] | z[3]), "%s inv(0)", o->name);
            CHECK(!(z2[0] | z2[1] | z2[2] | z2[3]), "%s inv_ct(0) = 0", o->name);
        } else {
            mpz_invert(c, a, *m);
            o->get(got, z);
            CHECK(rc == 0 && mpz_cmp(got, c) == 0, "%s inv it=%d", o->name, it);
            CHECK(memcmp(z, z2, sizeof(z)) == 0, "%s inv_ct == inv it=%d", o->name, it);
        }

        /* pow with a random exponent of 1..4 limbs */
        size_t el_n = 1 + (size_t)(t_rand64() % 4);
        for (size_t i = 0; i < 4; i++)
            el[i] = i < el_n ? t_rand64() : 0;
        t_limbs_to_mpz(e, el, (int)el_n);
        o->pow(z, x, el, el_n);
        mpz_powm(c, a, e, *m);
        o->get(got, z);
        CHECK(mpz_cmp(got, c) == 0, "%s pow it=%d", o->name, it);

        /* square roots: force a square one time in three */
        if (it % 3 == 0) {
            mpz_mul(a, a, a);
            mpz_mod(a, a, *m);
            o->set(x, a);
        }
        rc = o->sqrt(z, x);
        if (mpz_legendre(a, *m) >= 0) {
            sq++;
            o->get(got, z);
            mpz_mul(c, got, got);
            mpz_mod(c, c, *m);
            CHECK(rc == 0 && mpz_cmp(c, a) == 0, "%s sqrt of a square it=%d", o->name, it);
        } else {
            nsq++;
            CHECK(rc == -EDOM, "%s sqrt of a non-square must fail it=%d", o->name, it);
        }

        /* bytes: little-endian standard form */
        uint8_t bytes[32], want[32] = {0};
        size_t cnt = 0;
        o->to_bytes(bytes, x);
        mpz_export(want, &cnt, -1, 1, 0, 0, a);
        CHECK(memcmp(bytes, want, 32) == 0, "%s to_bytes_le it=%d", o->name, it);
        CHECK(o->from_bytes(z, bytes) == 0 && memcmp(z, x, sizeof(z)) == 0, "%s from_bytes_le it=%d",
              o->name, it);
        /* decimal */
        char dec[CZK_BN254_DEC_MAX], *gd = mpz_get_str(NULL, 10, a);
        o->to_dec(dec, x);
        CHECK(strcmp(dec, gd) == 0, "%s to_dec it=%d: %s vs %s", o->name, it, dec, gd);
        memset(z, 0xa5, sizeof(z)); /* z already holds x, from from_bytes */
        CHECK(o->from_dec(z, gd) == 0 && memcmp(z, x, sizeof(z)) == 0, "%s from_dec it=%d", o->name, it);
        free(gd);
    }
    /* out of range and malformed input */
    uint8_t bytes[32] = {0};
    size_t cnt = 0;
    uint64_t z[4];
    mpz_export(bytes, &cnt, -1, 1, 0, 0, *m);
    CHECK(o->from_bytes(z, bytes) == -ERANGE, "%s from_bytes(m) must be -ERANGE", o->name);
    char *md = mpz_get_str(NULL, 10, *m);
    CHECK(o->from_dec(z, md) == -ERANGE, "%s from_dec(m) must be -ERANGE", o->name);
    free(md);
    CHECK(o->from_dec(z, "12a") == -EINVAL && o->from_dec(z, "") == -EINVAL, "%s from_dec bad", o->name);
    CHECK(sq > 0 && nsq > 0, "%s sqrt: %d squares, %d non-squares", o->name, sq, nsq);
    mpz_clears(a, b, c, got, e, NULL);
}

static void test_fp2(int iters)
{
    g_fp2 a, b, c, g;
    g2_init(&a); g2_init(&b); g2_init(&c); g2_init(&g);
    int sq = 0, nsq = 0;

    for (int it = 0; it < iters; it++) {
        czk_bn254_fp2 x, y, z, z2;
        g2_rand(&a);
        g2_rand(&b);
        fp2_set(&x, &a);
        fp2_set(&y, &b);

        czk_bn254_fp2_add(&z, &x, &y); g2_add(&c, &a, &b); fp2_get(&g, &z);
        CHECK(g2_eq(&g, &c), "fp2 add it=%d", it);
        czk_bn254_fp2_sub(&z, &x, &y); g2_sub(&c, &a, &b); fp2_get(&g, &z);
        CHECK(g2_eq(&g, &c), "fp2 sub it=%d", it);
        czk_bn254_fp2_mul(&z, &x, &y); g2_mul(&c, &a, &b); fp2_get(&g, &z);
        CHECK(g2_eq(&g, &c), "fp2 mul it=%d", it);
        czk_bn254_fp2_sqr(&z, &x); g2_mul(&c, &a, &a); fp2_get(&g, &z);
        CHECK(g2_eq(&g, &c), "fp2 sqr it=%d", it);
        czk_bn254_fp2_dbl(&z, &x); g2_add(&c, &a, &a); fp2_get(&g, &z);
        CHECK(g2_eq(&g, &c), "fp2 dbl it=%d", it);
        czk_bn254_fp2_neg(&z, &x); g2_sub(&c, &c, &c); g2_sub(&c, &c, &a); fp2_get(&g, &z);
        CHECK(g2_eq(&g, &c), "fp2 neg it=%d", it);
        czk_bn254_fp2_conj(&z, &x); mpz_set(c.c0, a.c0); mpz_neg(c.c1, a.c1); mpz_mod(c.c1, c.c1, bn_p);
        fp2_get(&g, &z);
        CHECK(g2_eq(&g, &c), "fp2 conj it=%d", it);
        /* times xi = 9 + u */
        g_fp2 xi;
        g2_init(&xi);
        mpz_set_ui(xi.c0, 9);
        mpz_set_ui(xi.c1, 1);
        czk_bn254_fp2_mul_xi(&z, &x); g2_mul(&c, &a, &xi); fp2_get(&g, &z);
        CHECK(g2_eq(&g, &c), "fp2 mul_xi it=%d", it);
        g2_clear(&xi);
        czk_bn254_fp2_mul_fp(&z, &x, &y.c0);
        mpz_set(c.c0, b.c0); mpz_set_ui(c.c1, 0); g2_mul(&c, &a, &c); fp2_get(&g, &z);
        CHECK(g2_eq(&g, &c), "fp2 mul_fp it=%d", it);

        int rc = czk_bn254_fp2_inv(&z, &x);
        czk_bn254_fp2_inv_ct(&z2, &x);
        if (g2_is_zero(&a)) {
            CHECK(rc == -EDOM && czk_bn254_fp2_is_zero(&z) && czk_bn254_fp2_is_zero(&z2), "fp2 inv(0)");
        } else {
            g2_inv(&c, &a);
            fp2_get(&g, &z);
            CHECK(rc == 0 && g2_eq(&g, &c), "fp2 inv it=%d", it);
            CHECK(czk_bn254_fp2_eq(&z, &z2), "fp2 inv_ct == inv it=%d", it);
        }

        /* square roots: a is a square in Fp2 iff its norm is a square in Fp */
        if (it % 2 == 0) {
            g2_mul(&a, &a, &a);
            fp2_set(&x, &a);
        }
        mpz_t n, t;
        mpz_inits(n, t, NULL);
        mpz_mul(n, a.c0, a.c0);
        mpz_mul(t, a.c1, a.c1);
        mpz_add(n, n, t);
        mpz_mod(n, n, bn_p);
        rc = czk_bn254_fp2_sqrt(&z, &x);
        if (mpz_legendre(n, bn_p) >= 0) {
            sq++;
            fp2_get(&g, &z);
            g2_mul(&c, &g, &g);
            CHECK(rc == 0 && g2_eq(&c, &a), "fp2 sqrt of a square it=%d", it);
        } else {
            nsq++;
            CHECK(rc == -EDOM, "fp2 sqrt of a non-square must fail it=%d", it);
        }
        mpz_clears(n, t, NULL);
    }
    CHECK(sq > 0 && nsq > 0, "fp2 sqrt: %d squares, %d non-squares", sq, nsq);
    g2_clear(&a); g2_clear(&b); g2_clear(&c); g2_clear(&g);
}

static void test_fr_random(void)
{
    czk_bn254_fr a, b;
    mpz_t v;
    mpz_init(v);
    CHECK(czk_bn254_fr_random(&a) == 0 && czk_bn254_fr_random(&b) == 0, "fr_random");
    t_limbs_to_mpz(v, a.l, 4);
    CHECK(mpz_cmp(v, bn_r) < 0, "fr_random is reduced");
    CHECK(!czk_bn254_fr_eq(&a, &b), "two random scalars differ");
    mpz_clear(v);
}

int main(int argc, char **argv)
{
    int iters = argc > 1 ? atoi(argv[1]) : 2000;
    t_seed("test_bn254_field");
    bn_init();
    const field_ops fp = OPS(fp, fp_set_l, fp_get_l, bn_p);
    const field_ops fr = OPS(fr, fr_set_l, fr_get_l, bn_r);

    test_constants();
    test_field(&fp, iters);
    test_field(&fr, iters);
    test_fp2(iters);
    test_fr_random();
    if (t_failures) {
        fprintf(stderr, "test_bn254_field: %d failures\n", t_failures);
        return 1;
    }
    printf("test_bn254_field: ok\n");
    return 0;
}
