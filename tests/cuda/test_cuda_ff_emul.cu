/*
 * test_cuda_ff_emul.cu — the device Montgomery multiplications of
 * gpud/cuda/ff.cuh (even/odd CIOS, the plain CIOS and the dedicated
 * squaring) run on the CPU, with the
 * PTX carry instructions emulated, against GMP: a b 2^(-32N) mod p for Fp
 * (N = 12) and Fr (N = 8) on random and edge inputs.  Needs no GPU, so CI
 * checks the algorithms (carry placement, bounds) even where the GPU tests skip.
 */
#include <gmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "gpud/cuda/ff.cuh"

static int fails;

template <int N> static void to_limbs(uint32_t *w, const mpz_t x)
{
    memset(w, 0, N * 4);
    size_t cnt = 0;
    mpz_export(w, &cnt, -1, 4, 0, 0, x);
}

template <int N> static void from_limbs(mpz_t x, const uint32_t *w) { mpz_import(x, N, -1, 4, 0, 0, w); }

static uint64_t rng = 0x9e3779b97f4a7c15ull;
static uint64_t next_rand(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

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
    gmp_randseed_ui(st, (unsigned long)time(NULL));
    int bad_eo = 0, bad_cios = 0, bad_sqr = 0;
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
            mpz_sub_ui(b, p, 1 + (next_rand() & 0xffff));
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
    printf("%s: %d products and squares, mismatches: even/odd %d, cios %d, square %d\n", name, iters, bad_eo,
           bad_cios, bad_sqr);
    fails += bad_eo + bad_cios + bad_sqr;
    gmp_randclear(st);
    mpz_clears(p, a, b, e, got, R, Rinv, t, NULL);
}

int main(void)
{
    check_field<12>("fp", "1a0111ea397fe69a4b1ba7b6434bacd764774b84f38512bf6730d2a0f6b0f6241eabfffeb153ffffb9feffffffffaaab",
                    CZK_FP_NINV32, 200000);
    check_field<8>("fr", "73eda753299d7d483339d80809a1d80553bda402fffe5bfeffffffff00000001", CZK_FR_NINV32, 200000);
    return fails ? 1 : 0;
}
