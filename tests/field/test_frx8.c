/*
 * test_frx8.c — the 8-lane AVX-512 IFMA Fr code of both curves
 * (common/crypto/frx8.h: czk_frx8 for BLS12-381, czk_bn254_frx8 for BN254)
 * against GMP and against the scalar czk_fr / czk_bn254_fr functions: the
 * Montgomery product a b 2^-256 mod r, the sum and the difference, on
 * random residues and edge values (0, 1, r-1, r-2, limbs of all ones or
 * zeros in radix 2^52, products whose result is 0, 1 or r-1, sums equal to
 * r, differences of equal values), and the array product czk_*_frx8_mul_n
 * that build_abc's c = a∘b pass uses.  Fails unless both outcomes of the
 * product's final subtraction and of the sum's and difference's wrap were
 * seen many times.  Skips (77) when the CPU has no AVX-512 IFMA or
 * CZK_NO_IFMA is set.
 * Usage: test_frx8 [iterations of 8 lanes per curve]
 */
#include <errno.h>
#include <string.h>

#include "common/crypto/frx8.h"
#include "test_util.h"

/* one field: the IFMA wrappers and the scalar functions over 4-word residues */
struct field {
    const char *name, *r_hex;
    int (*mul8)(void *r, const void *a, const void *b);
    int (*add8)(void *r, const void *a, const void *b);
    int (*sub8)(void *r, const void *a, const void *b);
    int (*mul_n)(void *r, const void *a, const void *b, size_t n, unsigned reps);
    void (*mul)(void *r, const void *a, const void *b);
    void (*add)(void *r, const void *a, const void *b);
    void (*sub)(void *r, const void *a, const void *b);
};

typedef struct { uint64_t l[4]; } fe;

static mpz_t r, rinv, rr;

/* a residue below r, biased towards edge values */
static void rand_res(mpz_t v)
{
    switch (t_rand64() % 12) {
    case 0: mpz_sub_ui(v, r, 1 + t_rand64() % 3); break;
    /* limbs of all ones / all zeros in radix 2^52: the rare serial carry paths */
    case 1: mpz_set_ui(v, 0); mpz_setbit(v, 52 * (1 + t_rand64() % 4)); mpz_sub_ui(v, v, 1 + t_rand64() % 2); break;
    case 2: mpz_set_ui(v, 0); mpz_setbit(v, 52 * (1 + t_rand64() % 4)); mpz_add_ui(v, v, t_rand64() % 2); break;
    default: t_rand_mod(v, r, 4); break;
    }
}

/* the unreduced Montgomery result (ab + m r) / 2^256 is >= r */
static int mont_overflow(const mpz_t a, const mpz_t b)
{
    mpz_t t, m, R;
    int over;

    mpz_inits(t, m, R, NULL);
    mpz_setbit(R, 256);
    mpz_mul(t, a, b);
    mpz_invert(m, r, R);
    mpz_mul(m, m, t);
    mpz_neg(m, m);
    mpz_mod(m, m, R);
    mpz_addmul(t, m, r);
    mpz_fdiv_q_2exp(t, t, 256);
    over = mpz_cmp(t, r) >= 0;
    mpz_clears(t, m, R, NULL);
    return over;
}

static void check_field(const struct field *f, long iters)
{
    fe a[8], b[8], o[8], s[8];
    mpz_t va[8], vb[8], want;
    long over = 0, under = 0, add_wrap = 0, sub_wrap = 0, it;
    int i;

    mpz_inits(want, NULL);
    mpz_set_str(r, f->r_hex, 16);
    mpz_set_ui(rr, 0);
    mpz_setbit(rr, 256);
    mpz_mod(rr, rr, r);
    mpz_invert(rinv, rr, r);
    for (i = 0; i < 8; i++)
        mpz_inits(va[i], vb[i], NULL);

    for (it = 0; it < iters && !t_failures; it++) {
        for (i = 0; i < 8; i++) {
            rand_res(va[i]);
            rand_res(vb[i]);
            if (t_rand64() % 8 == 0 && mpz_sgn(va[i])) { /* product 0, 1 or r-1: b = c R / a */
                unsigned c = (unsigned)(t_rand64() % 3);
                mpz_invert(vb[i], va[i], r);
                mpz_mul(vb[i], vb[i], rr);
                if (c == 0)
                    mpz_set_ui(vb[i], 0);
                else if (c == 2)
                    mpz_neg(vb[i], vb[i]);
                mpz_mod(vb[i], vb[i], r);
            }
            if (t_rand64() % 16 == 0) { /* sums equal or close to r */
                mpz_sub(vb[i], r, va[i]);
                mpz_add_ui(vb[i], vb[i], t_rand64() % 3);
                mpz_sub_ui(vb[i], vb[i], 1);
                mpz_mod(vb[i], vb[i], r);
            }
            if (t_rand64() % 16 == 0) { /* differences of equal or close values */
                mpz_add_ui(vb[i], va[i], t_rand64() % 3);
                mpz_sub_ui(vb[i], vb[i], 1);
                mpz_mod(vb[i], vb[i], r);
            }
            t_mpz_to_limbs(a[i].l, va[i], 4);
            t_mpz_to_limbs(b[i].l, vb[i], 4);
        }

        CHECK(f->mul8(o, a, b) == 0, "%s mul8 rc", f->name);
        for (i = 0; i < 8; i++) {
            mpz_mul(want, va[i], vb[i]);
            mpz_mul(want, want, rinv);
            mpz_mod(want, want, r);
            t_mpz_to_limbs(s[i].l, want, 4);
            CHECK(memcmp(&o[i], &s[i], sizeof(fe)) == 0, "%s mul lane %d it %ld vs GMP", f->name, i, it);
            f->mul(&s[i], &a[i], &b[i]);
            CHECK(memcmp(&o[i], &s[i], sizeof(fe)) == 0, "%s mul lane %d it %ld vs scalar", f->name, i, it);
            if (mont_overflow(va[i], vb[i]))
                over++;
            else
                under++;
        }

        CHECK(f->add8(o, a, b) == 0, "%s add8 rc", f->name);
        for (i = 0; i < 8; i++) {
            mpz_add(want, va[i], vb[i]);
            add_wrap += mpz_cmp(want, r) >= 0;
            mpz_mod(want, want, r);
            t_mpz_to_limbs(s[i].l, want, 4);
            CHECK(memcmp(&o[i], &s[i], sizeof(fe)) == 0, "%s add lane %d it %ld vs GMP", f->name, i, it);
            f->add(&s[i], &a[i], &b[i]);
            CHECK(memcmp(&o[i], &s[i], sizeof(fe)) == 0, "%s add lane %d it %ld vs scalar", f->name, i, it);
        }

        CHECK(f->sub8(o, a, b) == 0, "%s sub8 rc", f->name);
        for (i = 0; i < 8; i++) {
            mpz_sub(want, va[i], vb[i]);
            sub_wrap += mpz_sgn(want) < 0;
            mpz_mod(want, want, r);
            t_mpz_to_limbs(s[i].l, want, 4);
            CHECK(memcmp(&o[i], &s[i], sizeof(fe)) == 0, "%s sub lane %d it %ld vs GMP", f->name, i, it);
            f->sub(&s[i], &a[i], &b[i]);
            CHECK(memcmp(&o[i], &s[i], sizeof(fe)) == 0, "%s sub lane %d it %ld vs scalar", f->name, i, it);
        }
    }
    /* both outcomes of every final reduction were exercised */
    CHECK(over > iters / 4 && under > iters, "%s mul final subtraction taken %ld, skipped %ld", f->name, over, under);
    CHECK(add_wrap > iters / 2 && sub_wrap > iters / 2, "%s add wrapped %ld, sub wrapped %ld", f->name, add_wrap,
          sub_wrap);

    /* the array product over 104 elements (13 groups of 8) against the scalar one */
    {
        enum { N = 104 };
        static fe x[N], y[N], z[N];
        fe want1;

        for (i = 0; i < N; i++) {
            rand_res(va[0]);
            rand_res(vb[0]);
            t_mpz_to_limbs(x[i].l, va[0], 4);
            t_mpz_to_limbs(y[i].l, vb[0], 4);
        }
        CHECK(f->mul_n(z, x, y, N, 1) == 0, "%s mul_n rc", f->name);
        for (i = 0; i < N; i++) {
            f->mul(&want1, &x[i], &y[i]);
            CHECK(memcmp(&z[i], &want1, sizeof(fe)) == 0, "%s mul_n element %d vs scalar", f->name, i);
        }
        CHECK(f->mul_n(z, x, y, N - 3, 1) == -EINVAL, "%s mul_n of a length not a multiple of 8", f->name);
    }
    printf("test_frx8: %s: %ld x 8 lanes, mul final subtraction taken %ld / skipped %ld, add wraps %ld, "
           "sub wraps %ld\n", f->name, iters, over, under, add_wrap, sub_wrap);
    for (i = 0; i < 8; i++)
        mpz_clears(va[i], vb[i], NULL);
    mpz_clears(want, NULL);
}

#define FIELD(NAME, HEX, X, S)                                                                        \
    {                                                                                                 \
        NAME, HEX, (int (*)(void *, const void *, const void *))X##_mul8,                            \
            (int (*)(void *, const void *, const void *))X##_add8,                                    \
            (int (*)(void *, const void *, const void *))X##_sub8,                                    \
            (int (*)(void *, const void *, const void *, size_t, unsigned))X##_mul_n,                 \
            (void (*)(void *, const void *, const void *))S##_mul,                                    \
            (void (*)(void *, const void *, const void *))S##_add,                                    \
            (void (*)(void *, const void *, const void *))S##_sub                                     \
    }

int main(int argc, char **argv)
{
    static const struct field fields[] = {
        FIELD("BLS12-381 Fr", "73eda753299d7d483339d80809a1d80553bda402fffe5bfeffffffff00000001", czk_frx8, czk_fr),
        FIELD("BN254 Fr", "30644e72e131a029b85045b68181585d2833e84879b9709143e1f593f0000001", czk_bn254_frx8,
              czk_bn254_fr),
    };
    long iters = argc > 1 ? atol(argv[1]) : 20000;
    fe a[8] = {{{0}}};

    t_seed("test_frx8");
    if (czk_frx8_mul8((czk_fr *)a, (czk_fr *)a, (czk_fr *)a) == -ENOTSUP) {
        printf("test_frx8: skipped: no AVX-512 IFMA on this CPU or CZK_NO_IFMA set\n");
        return 77;
    }
    mpz_inits(r, rinv, rr, NULL);
    for (size_t k = 0; k < sizeof(fields) / sizeof(fields[0]); k++)
        check_field(&fields[k], iters);
    mpz_clears(r, rinv, rr, NULL);
    printf("test_frx8: %s\n", t_failures ? "FAILED" : "ok");
    return t_failures ? 1 : 0;
}
