/*
 * test_cuda_ff_emul.cu — the device Montgomery multiplications of
 * backend/cuda/ff.cuh (even/odd CIOS, the plain CIOS and the dedicated
 * squaring) and the modular additions and subtractions run on the CPU, with
 * the PTX carry instructions emulated, against GMP: a b 2^(-32N) mod p,
 * a + b and a - b mod p for BLS12-381 Fp (N = 12) and Fr (N = 8) and BN254 Fp
 * and Fr (N = 8) on random and edge inputs (0, 1, p - 1, ...); the pieces of
 * the lazily reduced Fp2 product (plain wide product, reduction of a wide
 * value, fp2_mul_lazy) and the one-thread Karatsuba Fp2 product (three
 * Montgomery products and the modular additions, as mul(fp2x) composes them)
 * for both Fp.  Needs no GPU, so CI
 * checks the algorithms (carry placement, bounds) even where the GPU tests skip.
 */
#include <gmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend/cuda/ff.cuh"
#include "tests/common/test_util.h"

static int fails;

template <int N> static void to_limbs(uint32_t *w, const mpz_t x)
{
    memset(w, 0, N * 4);
    size_t cnt = 0;
    mpz_export(w, &cnt, -1, 4, 0, 0, x);
}

template <int N> static void from_limbs(mpz_t x, const uint32_t *w) { mpz_import(x, N, -1, 4, 0, 0, w); }

template <int N> static void check_field(const char *name, const char *phex, uint32_t ninv_macro, int iters)
{
    mpz_t p, a, b, e, got, R, Rinv, t;
    mpz_inits(p, a, b, e, got, R, Rinv, t, NULL);
    mpz_set_str(p, phex, 16);
    uint32_t mod[N];
    to_limbs<N>(mod, p);
    /* -p^-1 mod 2^32 */
    mpz_set_ui(t, 1);
    mpz_mul_2exp(t, t, 32);
    mpz_invert(e, p, t);
    mpz_sub(e, t, e);
    if (mpz_get_ui(e) != ninv_macro) {
        printf("FAIL %s: -p^-1 mod 2^32 is %lx, header says %x\n", name, mpz_get_ui(e), ninv_macro);
        fails++;
    }
    mpz_set_ui(R, 1);
    mpz_mul_2exp(R, R, 32 * N);
    mpz_invert(Rinv, R, p);
    gmp_randstate_t st;
    gmp_randinit_default(st);
    gmp_randseed_ui(st, (unsigned long)t_rand64());
    int bad_eo = 0, bad_cios = 0, bad_sqr = 0, bad_add = 0, bad_kara = 0;
    for (int it = 0; it < iters; it++) {
        int k = it % 8;
        /* edge values first, then random; an input is always < p */
        if (it < 64) {
            const long ev[8] = {0, 1, -1, 2, -2, 3, 1 << 16, -(1 << 16)};
            mpz_set_si(a, ev[it % 8]);
            mpz_set_si(b, ev[(it / 8) % 8]);
            mpz_mod(a, a, p);
            mpz_mod(b, b, p);
        } else if (k == 0) { /* high words all ones below p */
            mpz_urandomm(a, st, p);
            mpz_sub_ui(b, p, 1 + (t_rand64() & 0xffff));
        } else {
            mpz_urandomm(a, st, p);
            mpz_urandomm(b, st, p);
        }
        uint32_t aw[N], bw[N], rw[N];
        to_limbs<N>(aw, a);
        to_limbs<N>(bw, b);
        mpz_mul(e, a, b);
        mpz_mul(e, e, Rinv);
        mpz_mod(e, e, p);
        mont_mul_eo<N>(rw, aw, bw, mod, ninv_macro);
        from_limbs<N>(got, rw);
        if (mpz_cmp(got, e) != 0 && bad_eo++ < 3)
            gmp_printf("FAIL %s even/odd: a=%Zx b=%Zx got %Zx want %Zx\n", name, a, b, got, e);
        memset(rw, 0xa5, sizeof(rw)); /* rw holds the even/odd product */
        mont_mul_kara<N>(rw, aw, bw, mod, ninv_macro);
        from_limbs<N>(got, rw);
        if (mpz_cmp(got, e) != 0 && bad_kara++ < 3)
            gmp_printf("FAIL %s Karatsuba: a=%Zx b=%Zx got %Zx want %Zx\n", name, a, b, got, e);
        /* a + b, a - b, b - a mod p */
        for (int op = 0; op < 3; op++) {
            const uint32_t *xw = op == 2 ? bw : aw, *yw = op == 2 ? aw : bw;
            if (op == 0) {
                mpz_add(t, a, b);
                mod_add_n<N>(rw, xw, yw, mod);
            } else {
                mpz_sub(t, op == 1 ? a : b, op == 1 ? b : a);
                mod_sub_n<N>(rw, xw, yw, mod);
            }
            mpz_mod(t, t, p);
            from_limbs<N>(got, rw);
            if (mpz_cmp(got, t) != 0 && bad_add++ < 3)
                gmp_printf("FAIL %s %s (op %d): a=%Zx b=%Zx got %Zx want %Zx\n", name, op ? "sub" : "add", op, a, b,
                           got, t);
        }
        mont_mul_cios<N>(rw, aw, bw, mod, ninv_macro);
        from_limbs<N>(got, rw);
        if (mpz_cmp(got, e) != 0 && bad_cios++ < 3)
            gmp_printf("FAIL %s cios: a=%Zx b=%Zx got %Zx want %Zx\n", name, a, b, got, e);
        /* squaring path (a == b) */
        mpz_mul(e, a, a);
        mpz_mul(e, e, Rinv);
        mpz_mod(e, e, p);
        mont_mul_eo<N>(rw, aw, aw, mod, ninv_macro);
        from_limbs<N>(got, rw);
        if (mpz_cmp(got, e) != 0 && bad_eo++ < 3)
            gmp_printf("FAIL %s even/odd square: a=%Zx got %Zx want %Zx\n", name, a, got, e);
        memset(rw, 0xa5, sizeof(rw)); /* rw holds the same square from mont_mul_eo */
        mont_sqr_eo<N>(rw, aw, mod, ninv_macro);
        from_limbs<N>(got, rw);
        if (mpz_cmp(got, e) != 0 && bad_sqr++ < 3)
            gmp_printf("FAIL %s dedicated square: a=%Zx got %Zx want %Zx\n", name, a, got, e);
        /* and of b (near p in every eighth case) */
        mpz_mul(e, b, b);
        mpz_mul(e, e, Rinv);
        mpz_mod(e, e, p);
        mont_sqr_eo<N>(rw, bw, mod, ninv_macro);
        from_limbs<N>(got, rw);
        if (mpz_cmp(got, e) != 0 && bad_sqr++ < 3)
            gmp_printf("FAIL %s dedicated square: b=%Zx got %Zx want %Zx\n", name, b, got, e);
    }
    printf("%s: %d products, squares, sums and differences, mismatches: even/odd %d, Karatsuba %d, cios %d, "
           "square %d, add/sub %d\n", name, iters, bad_eo, bad_kara, bad_cios, bad_sqr, bad_add);
    fails += bad_eo + bad_kara + bad_cios + bad_sqr + bad_add;
    gmp_randclear(st);
    mpz_clears(p, a, b, e, got, R, Rinv, t, NULL);
}

/* an Fp2 result (r0, r1) differs from (e, f) */
template <int N> static bool fp2_differs(mpz_t got, const uint32_t *r0, const uint32_t *r1, const mpz_t e, const mpz_t f)
{
    from_limbs<N>(got, r0);
    bool bad = mpz_cmp(got, e) != 0;
    from_limbs<N>(got, r1);
    return bad || mpz_cmp(got, f) != 0;
}

/* the lazy-reduction pieces: the plain 2N-word product of any N-word values,
 * the Montgomery reduction of any W < p 2^(32N), and the Fp2 Karatsuba
 * product built from them (c0 = (x0 y0 - x1 y1) / R, c1 = (x0 y1 + x1 y0) / R) */
template <int N> static void check_wide(const char *name, const char *phex, uint32_t ninv, int iters)
{
    mpz_t p, a, b, c, d, e, f, got, R, Rinv, top;
    mpz_inits(p, a, b, c, d, e, f, got, R, Rinv, top, NULL);
    mpz_set_str(p, phex, 16);
    uint32_t mod[N];
    to_limbs<N>(mod, p);
    mpz_set_ui(R, 1);
    mpz_mul_2exp(R, R, 32 * N);
    mpz_invert(Rinv, R, p);
    mpz_mul(top, p, R); /* redc input bound p R */
    gmp_randstate_t st;
    gmp_randinit_default(st);
    gmp_randseed_ui(st, (unsigned long)t_rand64());
    int bad_wide = 0, bad_redc = 0, bad_fp2 = 0;
    for (int it = 0; it < iters; it++) {
        /* wide product: any N-word values, all-ones and zero among them */
        if (it < 4) {
            mpz_set_ui(a, it & 1 ? 0 : 1);
            mpz_mul_2exp(a, a, 32 * N);
            mpz_sub_ui(a, a, it & 1 ? 0 : 1);
            mpz_set(b, a);
            if (it >= 2)
                mpz_set_ui(b, 0xffffffffu);
        } else {
            mpz_urandomb(a, st, 32 * N - (it % 3 == 0 ? 0 : (int)(t_rand64() % 64)));
            mpz_urandomb(b, st, 32 * N);
        }
        uint32_t aw[N], bw[N], ww[2 * N], rw[N], r1w[N];
        to_limbs<N>(aw, a);
        to_limbs<N>(bw, b);
        mul_wide_eo<N>(ww, aw, bw);
        mpz_mul(e, a, b);
        from_limbs<2 * N>(got, ww);
        if (mpz_cmp(got, e) != 0 && bad_wide++ < 3)
            gmp_printf("FAIL %s wide product: a=%Zx b=%Zx got %Zx want %Zx\n", name, a, b, got, e);
        memset(ww, 0xa5, sizeof(ww)); /* ww holds the even/odd product */
        mul_wide_kara<N>(ww, aw, bw);
        from_limbs<2 * N>(got, ww);
        if (mpz_cmp(got, e) != 0 && bad_wide++ < 3)
            gmp_printf("FAIL %s Karatsuba wide product: a=%Zx b=%Zx got %Zx want %Zx\n", name, a, b, got, e);
        /* reduction of W < p R: random, p R - 1, p R - 2^(32N) (low half zero), small */
        int k = it % 8;
        if (k == 0)
            mpz_sub_ui(c, top, 1);
        else if (k == 1)
            mpz_sub(c, top, R);
        else if (k == 2)
            mpz_set_ui(c, it);
        else
            mpz_urandomm(c, st, top);
        to_limbs<2 * N>(ww, c);
        mont_redc_eo<N>(rw, ww, mod, ninv);
        mpz_mul(e, c, Rinv);
        mpz_mod(e, e, p);
        from_limbs<N>(got, rw);
        if (mpz_cmp(got, e) != 0 && bad_redc++ < 3)
            gmp_printf("FAIL %s redc: W=%Zx got %Zx want %Zx\n", name, c, got, e);
        /* Fp2 lazy Karatsuba: operands < p, p - 1 and 0 among them */
        mpz_t *ops[4] = {&a, &b, &c, &d};
        for (int j = 0; j < 4; j++) {
            unsigned sel = (unsigned)(t_rand64() % 8);
            if (sel == 0)
                mpz_sub_ui(*ops[j], p, 1);
            else if (sel == 1)
                mpz_set_ui(*ops[j], 0);
            else if (sel == 2)
                mpz_sub_ui(*ops[j], p, 1 + (t_rand64() & 0xffff));
            else
                mpz_urandomm(*ops[j], st, p);
        }
        uint32_t x0[N], x1[N], y0[N], y1[N];
        to_limbs<N>(x0, a);
        to_limbs<N>(x1, b);
        to_limbs<N>(y0, c);
        to_limbs<N>(y1, d);
        fp2_mul_lazy<N>(rw, r1w, x0, x1, y0, y1, mod, ninv);
        mpz_mul(e, a, c);
        mpz_submul(e, b, d);
        mpz_mul(e, e, Rinv);
        mpz_mod(e, e, p);
        mpz_mul(f, a, d);
        mpz_addmul(f, b, c);
        mpz_mul(f, f, Rinv);
        mpz_mod(f, f, p);
        if (fp2_differs<N>(got, rw, r1w, e, f) && bad_fp2++ < 3)
            gmp_printf("FAIL %s fp2 lazy: x=(%Zx, %Zx) y=(%Zx, %Zx)\n", name, a, b, c, d);
        /* the one-thread Karatsuba of mul(fp2x): t0 = x0 y0, t1 = x1 y1,
         * s = (x0 + x1)(y0 + y1) mod p, c0 = t0 - t1, c1 = s - t0 - t1 */
        {
            uint32_t t0[N], t1[N], s0[N], s1[N];
            memset(rw, 0xa5, sizeof(rw)); /* rw, r1w hold fp2_mul_lazy's (equal) result */
            memset(r1w, 0xa5, sizeof(r1w));
            mont_mul_n<N>(t0, x0, y0, mod, ninv);
            mont_mul_n<N>(t1, x1, y1, mod, ninv);
            mod_add_n<N>(s0, x0, x1, mod);
            mod_add_n<N>(s1, y0, y1, mod);
            mont_mul_n<N>(s0, s0, s1, mod, ninv);
            mod_sub_n<N>(rw, t0, t1, mod);
            mod_sub_n<N>(s0, s0, t0, mod);
            mod_sub_n<N>(r1w, s0, t1, mod);
            if (fp2_differs<N>(got, rw, r1w, e, f) && bad_fp2++ < 3)
                gmp_printf("FAIL %s fp2 karatsuba: x=(%Zx, %Zx) y=(%Zx, %Zx)\n", name, a, b, c, d);
        }
        /* aliasing: results over the first operand */
        fp2_mul_lazy<N>(x0, x1, x0, x1, y0, y1, mod, ninv);
        if (fp2_differs<N>(got, x0, x1, e, f) && bad_fp2++ < 3)
            gmp_printf("FAIL %s fp2 lazy in place: x=(%Zx, %Zx) y=(%Zx, %Zx)\n", name, a, b, c, d);
    }
    printf("%s: %d wide products, reductions and Fp2 products, mismatches: wide %d, redc %d, fp2 %d\n", name,
           iters, bad_wide, bad_redc, bad_fp2);
    fails += bad_wide + bad_redc + bad_fp2;
    gmp_randclear(st);
    mpz_clears(p, a, b, c, d, e, f, got, R, Rinv, top, NULL);
}

int main(void)
{
    t_seed("test_cuda_ff_emul"); /* GMP's generators are seeded from it too: CZK_TEST_SEED replays a run */
    /* BLS12-381 Fp (12 words); the 8-word fields: BLS12-381 Fr, BN254 (snarkjs bn128) Fp and Fr;
     * wide products and lazy Fp2 for each Fp (and BLS12-381 Fr, as before) */
    static const char *bls_p = "1a0111ea397fe69a4b1ba7b6434bacd764774b84f38512bf6730d2a0f6b0f6241eabfffeb153ffffb9feffffffffaaab";
    check_field<12>("fp", bls_p, CZK_FP_NINV32, 200000);
    check_wide<12>("fp", bls_p, CZK_FP_NINV32, 100000);
    static const struct {
        const char *name, *p;
        uint32_t ninv;
        int iters, wide_iters;
    } f8[] = {
        {"fr", "73eda753299d7d483339d80809a1d80553bda402fffe5bfeffffffff00000001", CZK_FR_NINV32, 200000, 100000},
        {"bn254 fp", "30644e72e131a029b85045b68181585d97816a916871ca8d3c208c16d87cfd47", CZK_BN_FP_NINV32, 60000, 40000},
        {"bn254 fr", "30644e72e131a029b85045b68181585d2833e84879b9709143e1f593f0000001", CZK_BN_FR_NINV32, 60000, 0},
    };
    for (const auto &f : f8) {
        check_field<8>(f.name, f.p, f.ninv, f.iters);
        if (f.wide_iters)
            check_wide<8>(f.name, f.p, f.ninv, f.wide_iters);
    }
    return fails ? 1 : 0;
}
