/*
 * test_cuda_ntt_emul.cpp — the NTT kernels of backend/cuda/ntt_kernels.cuh run
 * on the CPU (tests/cuda/emu/cuda_emu.h: compiled by the host compiler, each
 * thread a coroutine, __syncthreads and dynamic shared memory emulated) and
 * checked against the CPU NTT (common/crypto/ntt.h, bn254_ntt.h) and the CPU
 * prover's h, for BLS12-381's and BN254's Fr.  Needs no GPU, so CI checks the
 * kernels' index arithmetic (pass bases, the gathered bit reversal, the
 * twiddle indices of both directions, the tiled bit reversal, the coset
 * scaling) where the GPU tests skip.
 *
 * The launches follow ntt.cu's host code: the twiddle table as tw_init builds
 * it, the passes as ntt_passes / ntt_dit_gather split and launch them
 * (ntt_split, with ntt_launch's block shapes), with one and two butterflies
 * per thread and stage, at the real pass width (NTT_KMAX) and at narrower
 * ones (more passes at the small sizes an emulator can afford: the kernel is
 * the same for every width).  Transforms: the natural-order NTT both ways
 * (gathered first pass, and bit reversal then in-place passes), the inverse
 * (with the 1/n scaling), the odd coset, and h = a b - c on the odd coset.
 */
#define _Static_assert static_assert
extern "C" {
#include "common/crypto/bn254_ntt.h"
#include "common/crypto/ntt.h"
#include "common/groth16/any.h"
}
#include <string.h>

#include <vector>

#include "tests/cuda/emu/cuda_emu.h"

#include "backend/cuda/ntt_kernels.cuh"
#include "tests/common/test_util.h"

/* the CPU side of each field */
#define FIELD(NAME, DEV, FE, CANON, TOP, NTT, INTT, COSET, CURVE)                                                   \
    struct NAME {                                                                                                  \
        typedef DEV F;                                                                                             \
        typedef FE fe;                                                                                             \
        static_assert(sizeof(fe) == sizeof(F), "CPU and device layouts");                                         \
        static void rand(fe *x)                                                                                    \
        {                                                                                                          \
            do {                                                                                                   \
                for (int i = 0; i < 4; i++)                                                                        \
                    x->l[i] = t_rand64();                                                                          \
                x->l[3] &= TOP;                                                                                    \
            } while (!CANON(x));                                                                                   \
        }                                                                                                          \
        static int ntt(fe *a, unsigned lg) { return NTT(a, lg, 1); }                                              \
        static int intt(fe *a, unsigned lg) { return INTT(a, lg, 1); }                                            \
        static int coset(fe *a, unsigned lg) { return COSET(a, lg, 1); }                                          \
        static const czk_curve_id curve = CURVE;                                                                   \
    }

FIELD(bls_fr, fr_t, czk_fr, czk_fr_is_canonical, 0x7fffffffffffffffULL, czk_ntt, czk_intt, czk_ntt_to_odd_coset,
      CZK_CURVE_BLS12_381);
FIELD(bn_fr, bn_fr_t, czk_bn254_fr, czk_bn254_fr_is_canonical, 0x3fffffffffffffffULL, czk_bn254_ntt, czk_bn254_intt,
      czk_bn254_ntt_to_odd_coset, CZK_CURVE_BN254);

static unsigned grid(size_t n, unsigned t) { return (unsigned)((n + t - 1) / t); }

template <class C> struct ntt_emul {
    typedef typename C::F F;
    typedef typename C::fe fe;
    const char *name;
    unsigned kmax = NTT_KMAX; /* stages per pass */
    int bpt = 1;              /* butterflies per thread and stage (ntt_bpt) */
    std::vector<F> consts, tw;

    explicit ntt_emul(const char *n) : name(n) {}

    /* tw_init: the constants, then tw[h + j] = w_{2h}^j level by level */
    void tables(unsigned log)
    {
        const size_t n = (size_t)1 << log;
        consts.assign(66, F());
        tw.assign(2 * n, F());
        F *c = consts.data(), *t = tw.data();
        emu_launch(dim3(1), dim3(1), [&] { k_ntt_consts<F>(c); });
        emu_launch(dim3(1), dim3(1), [&] { k_tw_one<F>(t); });
        unsigned lg = 0;
        for (size_t h = 1; h < n; h *= 2, lg++)
            emu_launch(dim3(grid(h, 256)), dim3(256), [&] { k_tw_level<F>(t, c, h, lg + 2); });
    }

    /* ntt_launch: 2^(k-1) butterflies a stage over blockDim threads */
    template <bool DIT, bool INV, bool GATHER> void pass(const F *src, F *dst, unsigned lo, unsigned k, unsigned log_n)
    {
        const unsigned threads = 1u << (k - 1);
        const unsigned blocks = (unsigned)(((size_t)1 << log_n) >> k);
        const size_t shm = ((size_t)8 << k) * sizeof(uint32_t);
        const F *w = tw.data();
        if (bpt == 2 && k >= 2)
            emu_launch(dim3(blocks), dim3(threads / 2), shm,
                       [&] { k_ntt_pass<F, DIT, INV, 2, GATHER>(src, dst, w, lo, k, log_n); });
        else
            emu_launch(dim3(blocks), dim3(threads), shm,
                       [&] { k_ntt_pass<F, DIT, INV, 1, GATHER>(src, dst, w, lo, k, log_n); });
    }

    /* ntt_passes: in place, DIT from the low bits up, DIF from the high bits down */
    template <bool DIT, bool INV> void passes(F *a, unsigned log_n)
    {
        unsigned ks[32], los[32], lo = 0;
        const int p = ntt_split(log_n, ks, kmax);
        for (int i = 0; i < p; i++) {
            los[i] = lo;
            lo += ks[i];
        }
        for (int q = 0; q < p; q++) {
            const int i = DIT ? q : p - 1 - q;
            pass<DIT, INV, false>(a, a, los[i], ks[i], log_n);
        }
    }

    /* ntt_dit_gather: a -> tmp (gathering), tmp in place, tmp -> a */
    template <bool INV> void dit_gather(F *a, F *tmp, unsigned log_n)
    {
        unsigned ks[32], lo = 0;
        const int p = ntt_split(log_n, ks, kmax);
        for (int q = 0; q < p; q++) {
            const F *src = q == 0 ? a : tmp;
            F *dst = q == p - 1 ? a : tmp;
            if (q == 0)
                pass<true, INV, true>(src, dst, lo, ks[q], log_n);
            else
                pass<true, INV, false>(src, dst, lo, ks[q], log_n);
            lo += ks[q];
        }
    }

    /* bitrev: tiles from 2^(2 BR_R) up, else one swap per thread */
    void bitrev(F *a, unsigned log_n, bool tiles)
    {
        const size_t n = (size_t)1 << log_n;
        fr_t *x = reinterpret_cast<fr_t *>(a);
        if (tiles && log_n >= 2 * BR_R)
            emu_launch(dim3((unsigned)(n >> (2 * BR_R))), dim3(1u << (2 * BR_R)), [&] { k_bitrev_tiles(x, log_n); });
        else
            emu_launch(dim3(grid(n, 256)), dim3(256), [&] { k_bitrev(x, log_n, n); });
    }

    void odd_coset(F *a, unsigned log_n)
    {
        const size_t n = (size_t)1 << log_n;
        passes<false, true>(a, log_n);
        const F *w = tw.data(), *c = consts.data();
        emu_launch(dim3(grid(n, 256)), dim3(256), [&] { k_coset_scale<F>(a, w, c, log_n, n); });
        passes<true, false>(a, log_n);
    }

    void same(const std::vector<F> &got, const std::vector<fe> &want, const char *what, unsigned lg)
    {
        size_t bad = 0, first = 0;
        for (size_t i = 0; i < want.size(); i++)
            if (memcmp(&got[i], &want[i], sizeof(fe)) != 0 && !bad++)
                first = i;
        CHECK(bad == 0, "%s %s 2^%u (passes of at most %u, %d butterflies per thread): %zu of %zu differ, first at %zu",
              name, what, lg, kmax, bpt, bad, want.size(), first);
    }

    void sizes(unsigned max_log, bool with_h)
    {
        for (unsigned lg = 1; lg <= max_log; lg++) {
            const size_t n = (size_t)1 << lg;
            std::vector<fe> a(n), c(n);
            for (auto &x : a)
                C::rand(&x);
            std::vector<F> g(n), tmp(n);
            /* forward, natural order: gathered first pass */
            memcpy(g.data(), a.data(), n * sizeof(F));
            dit_gather<false>(g.data(), tmp.data(), lg);
            c = a;
            CHECK(C::ntt(c.data(), lg) == 0, "cpu ntt");
            same(g, c, "ntt (gathered)", lg);
            /* forward: bit reversal (tiled, and one swap a thread), then in place */
            for (int tiles = 0; tiles < 2; tiles++) {
                memcpy(g.data(), a.data(), n * sizeof(F));
                bitrev(g.data(), lg, tiles);
                passes<true, false>(g.data(), lg);
                same(g, c, tiles ? "ntt (tiled bit reversal)" : "ntt (bit reversal by swaps)", lg);
            }
            /* inverse with the scaling by 1/n */
            memcpy(g.data(), a.data(), n * sizeof(F));
            dit_gather<true>(g.data(), tmp.data(), lg);
            {
                F *x = g.data();
                const F *k = consts.data();
                emu_launch(dim3(grid(n, 256)), dim3(256), [&] { k_scale<F>(x, k, lg, n); });
            }
            c = a;
            CHECK(C::intt(c.data(), lg) == 0, "cpu intt");
            same(g, c, "intt", lg);
            /* odd coset */
            memcpy(g.data(), a.data(), n * sizeof(F));
            odd_coset(g.data(), lg);
            c = a;
            CHECK(C::coset(c.data(), lg) == 0, "cpu odd coset");
            same(g, c, "odd coset", lg);
            if (!with_h)
                continue;
            /* h = a b - c on the odd coset, standard form */
            std::vector<fe> b(n), cc(n), h(n);
            for (size_t i = 0; i < n; i++) {
                C::rand(&b[i]);
                C::rand(&cc[i]);
            }
            std::vector<F> ga(n), gb(n), gc(n);
            memcpy(ga.data(), a.data(), n * sizeof(F));
            memcpy(gb.data(), b.data(), n * sizeof(F));
            memcpy(gc.data(), cc.data(), n * sizeof(F));
            odd_coset(ga.data(), lg);
            odd_coset(gb.data(), lg);
            odd_coset(gc.data(), lg);
            {
                F *x = ga.data();
                const F *y = gb.data(), *z = gc.data();
                emu_launch(dim3(grid(n, 256)), dim3(256), [&] { k_h_join<F>(x, y, z, n); });
            }
            c = a;
            CHECK(czk_groth16_any_compute_h(C::curve, c.data(), b.data(), cc.data(), h.data(), lg, 1) == 0, "cpu h");
            same(ga, h, "h", lg);
        }
    }

    void run(unsigned max_log)
    {
        tables(max_log);
        for (int b = 1; b <= 2; b++) {
            bpt = b;
            kmax = NTT_KMAX;
            sizes(max_log, b == 1);
            kmax = 3;
            sizes(max_log - 2, false);
        }
    }
};

int main(void)
{
    t_seed("test_cuda_ntt_emul");
    ntt_emul<bls_fr>("BLS12-381 Fr").run(12);
    ntt_emul<bn_fr>("BN254 Fr").run(12);
    if (t_failures) {
        fprintf(stderr, "test_cuda_ntt_emul: %d failures\n", t_failures);
        return 1;
    }
    printf("test_cuda_ntt_emul: ok\n");
    return 0;
}
