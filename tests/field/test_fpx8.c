/*
 * test_fpx8.c — the 8-lane AVX-512 IFMA Fp code (common/crypto/fpx8.h) against GMP
 * and against the scalar czk_fp functions, on random residues and edge
 * values: 0, 1, q-1, q-2, values near 2^380, products whose Montgomery
 * result is 0, 1 or q-1, sums equal to q, differences that wrap; the test
 * counts how often the final conditional subtraction was needed and fails
 * unless both branches were taken many times.  Skips (77) when the CPU has
 * no AVX-512 IFMA or CZK_NO_IFMA is set.
 * Usage: test_fpx8 [iterations of 8 lanes]
 */
#include <errno.h>
#include <string.h>

#include "common/crypto/field.h"
#include "common/crypto/fpx8.h"
#include "test_util.h"

#define Q_HEX "1a0111ea397fe69a4b1ba7b6434bacd764774b84f38512bf6730d2a0f6b0f6241eabfffeb153ffffb9feffffffffaaab"

static mpz_t q, rinv, rr;

/* raw Montgomery limbs <- integer (already < q) */
static void set_raw(czk_fp *x, const mpz_t v) { t_mpz_to_limbs(x->l, v, 6); }

/* a raw residue with a bias towards edge values */
static void rand_raw(mpz_t v)
{
    unsigned pick = (unsigned)(t_rand64() % 16);
    switch (pick) {
    case 0: mpz_set_ui(v, 0); mpz_setbit(v, 380); mpz_sub_ui(v, v, t_rand64() % 4); break;
    case 1: mpz_set_ui(v, 0); mpz_setbit(v, 380); mpz_add_ui(v, v, t_rand64() % 4); break;
    case 2: mpz_sub_ui(v, q, 1 + t_rand64() % 3); break;
    /* limbs of all ones / all zeros in radix 2^52: carries and borrows
     * ripple through them (the vector code's rare serial paths) */
    case 3: mpz_set_ui(v, 0); mpz_setbit(v, 52 * (1 + t_rand64() % 7)); mpz_sub_ui(v, v, 1 + t_rand64() % 2); break;
    case 4: mpz_set_ui(v, 0); mpz_setbit(v, 52 * (1 + t_rand64() % 7)); mpz_add_ui(v, v, t_rand64() % 2); break;
    default: t_rand_mod(v, q, 6); break;
    }
}

static int mont_overflow(const mpz_t a, const mpz_t b)
{
    /* the unreduced Montgomery result (ab + m q) / 2^384, m = -ab/q mod 2^384,
     * is >= q: the final subtraction is needed */
    mpz_t t, m, R;
    int over;
    mpz_inits(t, m, R, NULL);
    mpz_setbit(R, 384);
    mpz_mul(t, a, b);
    mpz_invert(m, q, R);
    mpz_mul(m, m, t);
    mpz_neg(m, m);
    mpz_mod(m, m, R);
    mpz_addmul(t, m, q);
    mpz_fdiv_q_2exp(t, t, 384);
    over = mpz_cmp(t, q) >= 0;
    mpz_clears(t, m, R, NULL);
    return over;
}

int main(int argc, char **argv)
{
    long iters = argc > 1 ? atol(argv[1]) : 20000, it;
    czk_fp a[8], b[8], r[8], s[8];
    mpz_t va[8], vb[8], want;
    long over = 0, under = 0, add_wrap = 0, sub_wrap = 0;
    int i;

    t_seed("test_fpx8");
    if (czk_fpx8_mul8(r, a, b) == -ENOTSUP) {
        printf("test_fpx8: skipped: no AVX-512 IFMA on this CPU or CZK_NO_IFMA set\n");
        return 77;
    }
    mpz_inits(q, rinv, rr, want, NULL);
    mpz_set_str(q, Q_HEX, 16);
    mpz_setbit(rr, 384);
    mpz_mod(rr, rr, q);
    mpz_invert(rinv, rr, q);
    for (i = 0; i < 8; i++)
        mpz_inits(va[i], vb[i], NULL);

    for (it = 0; it < iters; it++) {
        for (i = 0; i < 8; i++) {
            rand_raw(va[i]);
            rand_raw(vb[i]);
            /* every so often force a Montgomery product of 0, 1 or q-1:
             * b = c R / a */
            if (t_rand64() % 8 == 0 && mpz_sgn(va[i])) {
                unsigned c = (unsigned)(t_rand64() % 3);
                mpz_invert(vb[i], va[i], q);
                mpz_mul(vb[i], vb[i], rr);
                if (c == 0)
                    mpz_set_ui(vb[i], 0);
                else if (c == 2)
                    mpz_neg(vb[i], vb[i]);
                mpz_mod(vb[i], vb[i], q);
            }
            /* and sums equal or close to q, differences of equal or close
             * values (equal top limbs: the exact comparison paths) */
            if (t_rand64() % 16 == 0) {
                mpz_sub(vb[i], q, va[i]);
                if (t_rand64() & 1)
                    mpz_add_ui(vb[i], vb[i], t_rand64() % 3);
                else
                    mpz_sub_ui(vb[i], vb[i], t_rand64() % 3);
                mpz_mod(vb[i], vb[i], q);
            }
            if (t_rand64() % 16 == 0) {
                mpz_set(vb[i], va[i]);
                if (t_rand64() & 1)
                    mpz_add_ui(vb[i], vb[i], t_rand64() % 3);
                else
                    mpz_sub_ui(vb[i], vb[i], t_rand64() % 3);
                mpz_mod(vb[i], vb[i], q);
            }
            set_raw(&a[i], va[i]);
            set_raw(&b[i], vb[i]);
        }

        CHECK(czk_fpx8_mul8(r, a, b) == 0, "mul8 rc");
        for (i = 0; i < 8; i++) {
            mpz_mul(want, va[i], vb[i]);
            mpz_mul(want, want, rinv);
            mpz_mod(want, want, q);
            set_raw(&s[i], want);
            CHECK(memcmp(&r[i], &s[i], sizeof(czk_fp)) == 0, "mul lane %d it %ld vs GMP", i, it);
            czk_fp_mul(&s[i], &a[i], &b[i]);
            CHECK(memcmp(&r[i], &s[i], sizeof(czk_fp)) == 0, "mul lane %d it %ld vs czk_fp_mul", i, it);
            if (mont_overflow(va[i], vb[i]))
                over++;
            else
                under++;
        }

        CHECK(czk_fpx8_sqr8(r, a) == 0, "sqr8 rc");
        for (i = 0; i < 8; i++) {
            mpz_mul(want, va[i], va[i]);
            mpz_mul(want, want, rinv);
            mpz_mod(want, want, q);
            set_raw(&s[i], want);
            CHECK(memcmp(&r[i], &s[i], sizeof(czk_fp)) == 0, "sqr lane %d it %ld vs GMP", i, it);
        }

        CHECK(czk_fpx8_add8(r, a, b) == 0, "add8 rc");
        for (i = 0; i < 8; i++) {
            mpz_add(want, va[i], vb[i]);
            add_wrap += mpz_cmp(want, q) >= 0;
            mpz_mod(want, want, q);
            set_raw(&s[i], want);
            CHECK(memcmp(&r[i], &s[i], sizeof(czk_fp)) == 0, "add lane %d it %ld vs GMP", i, it);
            czk_fp_add(&s[i], &a[i], &b[i]);
            CHECK(memcmp(&r[i], &s[i], sizeof(czk_fp)) == 0, "add lane %d it %ld vs czk_fp_add", i, it);
        }

        CHECK(czk_fpx8_sub8(r, a, b) == 0, "sub8 rc");
        for (i = 0; i < 8; i++) {
            mpz_sub(want, va[i], vb[i]);
            sub_wrap += mpz_sgn(want) < 0;
            mpz_mod(want, want, q);
            set_raw(&s[i], want);
            CHECK(memcmp(&r[i], &s[i], sizeof(czk_fp)) == 0, "sub lane %d it %ld vs GMP", i, it);
            czk_fp_sub(&s[i], &a[i], &b[i]);
            CHECK(memcmp(&r[i], &s[i], sizeof(czk_fp)) == 0, "sub lane %d it %ld vs czk_fp_sub", i, it);
        }

        CHECK(czk_fpx8_neg8(r, a) == 0, "neg8 rc");
        for (i = 0; i < 8; i++) {
            mpz_neg(want, va[i]);
            mpz_mod(want, want, q);
            set_raw(&s[i], want);
            CHECK(memcmp(&r[i], &s[i], sizeof(czk_fp)) == 0, "neg lane %d it %ld vs GMP", i, it);
        }
        if (t_failures)
            break;
    }
    /* both outcomes of every final reduction were exercised */
    CHECK(over > iters / 4 && under > iters, "mul final subtraction taken %ld, skipped %ld", over, under);
    CHECK(add_wrap > iters / 2 && sub_wrap > iters / 2, "add wrapped %ld, sub wrapped %ld", add_wrap, sub_wrap);
    printf("test_fpx8: %ld x 8 lanes, mul final subtraction taken %ld / skipped %ld, add wraps %ld, sub wraps %ld: %s\n",
           iters, over, under, add_wrap, sub_wrap, t_failures ? "FAILED" : "ok");
    for (i = 0; i < 8; i++)
        mpz_clears(va[i], vb[i], NULL);
    mpz_clears(q, rinv, rr, want, NULL);
    return t_failures ? 1 : 0;
}
