/*
 * test_bn254_fpx8.c — BN254's 8-lane AVX-512 IFMA field code, 5 limbs of 52
 * bits (common/crypto/bn254_fpx8.h, fpx_tmpl.h), against the scalar
 * czk_bn254_fp / czk_bn254_fp2 functions (checked against GMP by
 * test_bn254_field) and against GMP directly for the products.
 * Inputs: random residues, and per lane with some probability an edge value
 * (0, 1, Montgomery one, q - 1, q - 2, 2^(52 k) +- 1 so carries and borrows
 * ripple through whole limbs, values near 2^253), a b chosen so that the
 * Montgomery product is 0, 1 or q - 1, b = q - a +- small (sums at q),
 * b = a +- small (equal top limbs: the exact comparison paths).  The test
 * counts how often the products' final subtraction of q was needed (about
 * 2.5% of random products: q / 2^256 = 0.19) and
 * fails unless both outcomes happened many times.  Fp2 products and
 * squares, and chains of 40 dependent products (czk_bn254_fpx8_mul_n), are
 * compared with the scalar code too.
 * Skips (77) when the CPU has no AVX-512 IFMA or CZK_NO_IFMA is set.
 * Usage: test_bn254_fpx8 [iterations of 8 lanes]
 */
#include <errno.h>
#include <string.h>

#include "common/crypto/bn254_fpx8.h"
#include "tests/bn254/bn_util.h"

/* an integer below p with a bias towards edge values */
static void pick_raw(mpz_t v)
{
    switch (t_rand64() % 20) {
    case 0: mpz_set_ui(v, 0); break;
    case 1: mpz_set_ui(v, 1); break;
    case 2: mpz_mod(v, bn_R, bn_p); break; /* Montgomery one */
    case 3: mpz_sub_ui(v, bn_p, 1 + t_rand64() % 2); break;
    case 4: mpz_set_ui(v, 0); mpz_setbit(v, 52 * (1 + t_rand64() % 4)); mpz_sub_ui(v, v, 1 + t_rand64() % 2); break;
    case 5: mpz_set_ui(v, 0); mpz_setbit(v, 52 * (1 + t_rand64() % 4)); mpz_add_ui(v, v, t_rand64() % 2); break;
    case 6: mpz_set_ui(v, 0); mpz_setbit(v, 253); mpz_sub_ui(v, v, t_rand64() % 4); break;
    default: t_rand_mod(v, bn_p, 4); break;
    }
}

static void raw_set(czk_bn254_fp *x, const mpz_t v) { t_mpz_to_limbs(x->l, v, 4); }

static mpz_t pneg; /* -p^-1 mod 2^256 */

/* the Montgomery product's final subtraction is needed: (a b + m p) / 2^256
 * >= p for m = a b pneg mod 2^256 */
static int mont_over(const mpz_t a, const mpz_t b)
{
    mpz_t t, m;
    int over;

    mpz_inits(t, m, NULL);
    mpz_mul(t, a, b);
    mpz_mul(m, t, pneg);
    mpz_fdiv_r_2exp(m, m, 256);
    mpz_addmul(t, m, bn_p);
    mpz_fdiv_q_2exp(t, t, 256);
    over = mpz_cmp(t, bn_p) >= 0;
    mpz_clears(t, m, NULL);
    return over;
}

/* lane i's operands: a random pair with the relations of the header mixed in */
static void pick_pair(mpz_t a, mpz_t b)
{
    pick_raw(a);
    pick_raw(b);
    switch (t_rand64() % 12) {
    case 0: /* Montgomery product 0, 1 or q - 1: b = c R^2 / a (raw a R^-1 b = c R) */
        if (mpz_sgn(a)) {
            unsigned long c = t_rand64() % 3;
            mpz_invert(b, a, bn_p);
            mpz_mul(b, b, bn_R);
            mpz_mul(b, b, bn_R);
            if (c == 0)
                mpz_set_ui(b, 0);
            else if (c == 2)
                mpz_neg(b, b);
            mpz_mod(b, b, bn_p);
        }
        break;
    case 1: /* a + b at or near p */
        mpz_sub(b, bn_p, a);
        mpz_add_ui(b, b, t_rand64() % 3);
        mpz_sub_ui(b, b, 1);
        mpz_mod(b, b, bn_p);
        break;
    case 2: /* a - b small, equal top limbs */
        mpz_add_ui(b, a, t_rand64() % 3);
        mpz_sub_ui(b, b, 1);
        mpz_mod(b, b, bn_p);
        break;
    default: break;
    }
}

/* the operations under test: the 8-lane wrapper and the scalar function;
 * unary ones ignore b */
struct op {
    const char *name;
    int (*vec)(czk_bn254_fp r[8], const czk_bn254_fp a[8], const czk_bn254_fp b[8]);
    void (*ref)(czk_bn254_fp *r, const czk_bn254_fp *a, const czk_bn254_fp *b);
};

static int vec_sqr(czk_bn254_fp r[8], const czk_bn254_fp a[8], const czk_bn254_fp b[8])
{
    (void)b;
    return czk_bn254_fpx8_sqr8(r, a);
}
static int vec_neg(czk_bn254_fp r[8], const czk_bn254_fp a[8], const czk_bn254_fp b[8])
{
    (void)b;
    return czk_bn254_fpx8_neg8(r, a);
}
static void ref_sqr(czk_bn254_fp *r, const czk_bn254_fp *a, const czk_bn254_fp *b)
{
    (void)b;
    czk_bn254_fp_sqr(r, a);
}
static void ref_neg(czk_bn254_fp *r, const czk_bn254_fp *a, const czk_bn254_fp *b)
{
    (void)b;
    czk_bn254_fp_neg(r, a);
}

static const struct op ops[] = {
    {"mul", czk_bn254_fpx8_mul8, czk_bn254_fp_mul},
    {"sqr", vec_sqr, ref_sqr},
    {"add", czk_bn254_fpx8_add8, czk_bn254_fp_add},
    {"sub", czk_bn254_fpx8_sub8, czk_bn254_fp_sub},
    {"neg", vec_neg, ref_neg},
};

struct counts { long over, under, add_wrap, sub_wrap; };

/* 8 lanes of every operation against the scalar code, the products also
 * against GMP */
static void test_fp(long iters, struct counts *c)
{
    czk_bn254_fp a[8], b[8], r[8], s;
    mpz_t va[8], vb[8], want;
    long it;
    int i;

    mpz_init(want);
    for (i = 0; i < 8; i++)
        mpz_inits(va[i], vb[i], NULL);
    for (it = 0; it < iters && !t_failures; it++) {
        for (i = 0; i < 8; i++) {
            pick_pair(va[i], vb[i]);
            raw_set(&a[i], va[i]);
            raw_set(&b[i], vb[i]);
            mpz_add(want, va[i], vb[i]);
            c->add_wrap += mpz_cmp(want, bn_p) >= 0;
            c->sub_wrap += mpz_cmp(va[i], vb[i]) < 0;
            if (mont_over(va[i], vb[i]))
                c->over++;
            else
                c->under++;
        }
        for (size_t o = 0; o < sizeof(ops) / sizeof(ops[0]); o++) {
            CHECK(ops[o].vec(r, a, b) == 0, "%s8 rc", ops[o].name);
            for (i = 0; i < 8; i++) {
                ops[o].ref(&s, &a[i], &b[i]);
                CHECK(!memcmp(&r[i], &s, sizeof(s)), "%s lane %d it %ld vs the scalar code", ops[o].name, i, it);
            }
            if (o)
                continue;
            for (i = 0; i < 8; i++) { /* mul: a b / 2^256 mod p in GMP too */
                mpz_mul(want, va[i], vb[i]);
                mpz_mul(want, want, bn_Rinv_p);
                mpz_mod(want, want, bn_p);
                raw_set(&s, want);
                CHECK(!memcmp(&r[i], &s, sizeof(s)), "mul lane %d it %ld vs GMP", i, it);
            }
        }
    }
    for (i = 0; i < 8; i++)
        mpz_clears(va[i], vb[i], NULL);
    mpz_clear(want);
}

/* Fp2 products and squares against czk_bn254_fp2_mul / _sqr */
static void test_fp2(long iters)
{
    czk_bn254_fp2 a[8], b[8], r[8], q[8], s;
    mpz_t x, y;
    long it;
    int i;

    mpz_inits(x, y, NULL);
    for (it = 0; it < iters && !t_failures; it++) {
        for (i = 0; i < 16; i++) {
            czk_bn254_fp2 *pa = &a[i / 2], *pb = &b[i / 2];
            pick_pair(x, y);
            raw_set(i % 2 ? &pa->c1 : &pa->c0, x);
            raw_set(i % 2 ? &pb->c1 : &pb->c0, y);
        }
        CHECK(czk_bn254_fp2x8_mul8(r, a, b) == 0 && czk_bn254_fp2x8_sqr8(q, a) == 0, "fp2 rc");
        for (i = 0; i < 8; i++) {
            czk_bn254_fp2_mul(&s, &a[i], &b[i]);
            CHECK(!memcmp(&r[i], &s, sizeof(s)), "fp2 mul lane %d it %ld", i, it);
            czk_bn254_fp2_sqr(&s, &a[i]);
            CHECK(!memcmp(&q[i], &s, sizeof(s)), "fp2 sqr lane %d it %ld", i, it);
        }
    }
    mpz_clears(x, y, NULL);
}

/* 24 elements, each multiplied 40 times by its partner: the vector result
 * feeds the next product */
static void test_chain(void)
{
    enum { N = 24, REPS = 40 };
    czk_bn254_fp a[N], b[N], r[N], s;
    mpz_t x, y;
    int i, k;

    mpz_inits(x, y, NULL);
    for (i = 0; i < N; i++) {
        pick_pair(x, y);
        raw_set(&a[i], x);
        raw_set(&b[i], y);
    }
    CHECK(czk_bn254_fpx8_mul_n(r, a, b, N, REPS) == 0, "mul_n rc");
    CHECK(czk_bn254_fpx8_mul_n(r, a, b, N - 1, REPS) == -EINVAL, "mul_n n not a multiple of 8");
    for (i = 0; i < N; i++) {
        s = a[i];
        for (k = 0; k < REPS; k++)
            czk_bn254_fp_mul(&s, &s, &b[i]);
        CHECK(!memcmp(&r[i], &s, sizeof(s)), "chain %d", i);
    }
    mpz_clears(x, y, NULL);
}

int main(int argc, char **argv)
{
    long iters = argc > 1 ? atol(argv[1]) : 20000;
    struct counts c = {0, 0, 0, 0};
    czk_bn254_fp z[8] = {{{0}}};

    t_seed("test_bn254_fpx8");
    if (czk_bn254_fpx8_mul8(z, z, z) == -ENOTSUP) {
        printf("test_bn254_fpx8: skipped: no AVX-512 IFMA on this CPU or CZK_NO_IFMA set\n");
        return 77;
    }
    bn_init();
    mpz_init(pneg);
    mpz_invert(pneg, bn_p, bn_R);
    mpz_sub(pneg, bn_R, pneg);
    test_fp(iters, &c);
    test_fp2(iters / 4);
    test_chain();
    CHECK(c.over > iters / 10 && c.under > iters, "mul final subtraction taken %ld, skipped %ld", c.over, c.under);
    CHECK(c.add_wrap > iters / 4 && c.sub_wrap > iters / 4, "add wrapped %ld, sub wrapped %ld", c.add_wrap,
          c.sub_wrap);
    printf("test_bn254_fpx8: %ld x 8 lanes, final subtraction taken %ld / skipped %ld, add wraps %ld, "
           "sub wraps %ld: %s\n", iters, c.over, c.under, c.add_wrap, c.sub_wrap, t_failures ? "FAILED" : "ok");
    mpz_clear(pneg);
    return t_failures ? 1 : 0;
}
