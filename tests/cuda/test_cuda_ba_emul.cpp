/*
 * test_cuda_ba_emul.cpp — the batch-affine bucket-sum kernels of
 * backend/cuda/msm_ba_kernels.cuh run on the CPU (tests/cuda/emu/cuda_emu.h:
 * the kernels compiled by the host compiler, each thread a coroutine, warp
 * shuffles and __syncthreads emulated) and checked against the CPU curve code,
 * for BLS12-381 and BN254, G1 and G2 (G2's additions on lane pairs).  Needs no
 * GPU, so CI checks the kernels' logic (operand codes, cases, the shared
 * inversion, the walk back, lane-pair agreement) where the GPU tests skip.
 *
 * Each case builds runs of random points with the special pairs adjacent
 * (P + P, P + (-P), infinity on either side or both, odd tails), at the first
 * level through sorted values (base index and sign) and at later levels from
 * the previous level's output, then sums every run level by level as
 * msm_ba.cuh's driver does (k_ba_pre, the k_binv_* tree, k_ba_add), checking
 * every output against the CPU's sum of its two inputs; k_ba_finish's XYZZ
 * bucket sums (also a chunk continuing the previous chunk's bucket) and the
 * bookkeeping kernels (k_ba_half, k_ba_heads, k_ba_real, k_ba_max) as well.
 * Outputs per thread K = 1, 3 and 64, so walks of one and of many outputs.
 * G2 levels run with every kernel choice msm_ba.cuh's knobs select
 * (k_ba_pre_p2 or k_ba_pre, k_ba_add_p2 with p2_mul_lz or p2_mul), the
 * inversion at the top of the tree by inv and inv_vt in turn; inv_vt itself
 * is checked on random and edge values (a · a^-1 = 1 by the CPU's product,
 * equal to inv's), and the one-block top of the tree (k_binv_top) on its own
 * at sizes from 1 to the most it takes.  The first level also reads its
 * points split over two arrays, as over a fixed-base table (row 0 the bases,
 * the rest the table).  The scratch sizing (ba_chunk, ba_even) is checked
 * for its defining properties, and ff.cuh's Montgomery one and R^2 of the
 * four fields against the CPU's conversions.  The window reduction's kernels
 * (msm_wsum_kernels.cuh, every form the driver's knobs select) run their
 * levels over random buckets and are checked against the CPU's
 * sum_i (i + 1) B_i.
 */
#define _Static_assert static_assert
extern "C" {
#include "common/crypto/bn254_curve.h"
#include "common/crypto/curve.h"
}
#include <string.h>

#include <vector>

#include "tests/cuda/emu/cuda_emu.h"

#include "backend/cuda/msm_ba_kernels.cuh"
#include "backend/cuda/msm_wsum_kernels.cuh"
#include "tests/common/test_util.h"

/* ---- the CPU side of each group: points, sums, field products ---- */

#define GROUP(NAME, DEV, J, A, FE, FR, GEN, MUL_AFF, ADD, DBL, NEG, TO_AFF, FMUL, FR_TOP)                        \
    struct NAME {                                                                                                  \
        typedef DEV F;                                                                                             \
        typedef J jac;                                                                                             \
        typedef A aff;                                                                                             \
        typedef FE fe;                                                                                             \
        static_assert(sizeof(aff) == sizeof(aff_t<F>), "CPU and device affine layouts");                          \
        static_assert(sizeof(fe) == sizeof(F), "CPU and device field layouts");                                   \
        static void rand_point(jac *r)                                                                             \
        {                                                                                                          \
            FR k;                                                                                                  \
            for (size_t i = 0; i < sizeof(k.l) / sizeof(k.l[0]); i++)                                              \
                k.l[i] = t_rand64();                                                                               \
            k.l[sizeof(k.l) / sizeof(k.l[0]) - 1] &= FR_TOP;                                                       \
            MUL_AFF(r, &GEN, &k);                                                                                  \
        }                                                                                                          \
        static void add(jac *r, const jac *a, const jac *b) { ADD(r, a, b); }                                      \
        static void dbl(jac *r, const jac *a) { DBL(r, a); }                                                       \
        static void neg(jac *r, const jac *a) { NEG(r, a); }                                                       \
        static void to_aff(aff *r, const jac *a) { TO_AFF(r, a); }                                                 \
        static void fmul(fe *r, const fe *a, const fe *b) { FMUL(r, a, b); }                                       \
    }

GROUP(bls_g1, fp_t, czk_g1, czk_g1_aff, czk_fp, czk_fr, CZK_G1_GEN, czk_g1_mul_aff, czk_g1_add, czk_g1_dbl,
      czk_g1_neg, czk_g1_to_aff, czk_fp_mul, 0x3fffffffffffffffULL);
GROUP(bls_g2, fp2_t, czk_g2, czk_g2_aff, czk_fp2, czk_fr, CZK_G2_GEN, czk_g2_mul_aff, czk_g2_add, czk_g2_dbl,
      czk_g2_neg, czk_g2_to_aff, czk_fp2_mul, 0x3fffffffffffffffULL);
GROUP(bn_g1, bn_fp_t, czk_bn254_g1, czk_bn254_g1_aff, czk_bn254_fp, czk_bn254_fr, CZK_BN254_G1_GEN,
      czk_bn254_g1_mul_aff, czk_bn254_g1_add, czk_bn254_g1_dbl, czk_bn254_g1_neg, czk_bn254_g1_to_aff,
      czk_bn254_fp_mul, 0x1fffffffffffffffULL);
GROUP(bn_g2, bn_fp2_t, czk_bn254_g2, czk_bn254_g2_aff, czk_bn254_fp2, czk_bn254_fr, CZK_BN254_G2_GEN,
      czk_bn254_g2_mul_aff, czk_bn254_g2_add, czk_bn254_g2_dbl, czk_bn254_g2_neg, czk_bn254_g2_to_aff,
      czk_bn254_fp2_mul, 0x1fffffffffffffffULL);

/* an affine point as the kernels see it (all-zero infinity) and back */
template <class G> static aff_t<typename G::F> dev_aff(const typename G::jac &p)
{
    typename G::aff a;
    G::to_aff(&a, &p);
    aff_t<typename G::F> d;
    memcpy(&d, &a, sizeof d);
    return d;
}

template <class G> static bool aff_same(const aff_t<typename G::F> &a, const aff_t<typename G::F> &b)
{
    return memcmp(&a, &b, sizeof a) == 0;
}

static unsigned grid(size_t n, unsigned t) { return (unsigned)((n + t - 1) / t); }

/* ---- the launches of one level, as msm_ba.cuh's driver makes them ---- */

/* x[0..n) <- 1 / x[i]: the tree of batch_inv (msm_ba.cuh); its top
 * inversion by inv and by inv_vt in turn (CZK_CUDA_MSM_BA_INV), its steps
 * of binv_k's width, of BINV_K (CZK_CUDA_MSM_BINV_FIXED) and of 5 in turn
 * (every width binv_k picks at sizes too large to emulate: the kernels take
 * any), and its top in one block (k_binv_top) from binv_top<F>::n elements,
 * from 7 (steps, then a top of several steps), or only for the last one
 * (CZK_CUDA_MSM_BINV_TOP=0) in turn; the scratch is binv_scratch's, which
 * must hold the widest tree */
static bool emu_vt;
static unsigned emu_width, emu_top;
template <class F> static void emu_batch_inv(F *x, uint32_t n, F *scr, bool top = true)
{
    if (top) {
        emu_width = (emu_width + 1) % 3;
        emu_top = (emu_top + 1) % 3;
    }
    const uint32_t top_n = emu_top == 0 ? binv_top<F>::n : emu_top == 1 ? 7 : 1;
    if (n <= top_n) {
        emu_vt = !emu_vt;
        emu_launch(dim3(1), dim3(BINV_TOP_THREADS), [&] { k_binv_top<F>(x, n, emu_vt); });
        return;
    }
    const uint32_t K = emu_width == 0 ? binv_k(n, false) : emu_width == 1 ? BINV_K : 5, up = (n + K - 1) / K;
    F *pre = scr, *u = scr + n;
    emu_launch(dim3(grid(up, 128)), dim3(128), [&] { k_binv_up<F>(x, n, K, pre, u); });
    emu_batch_inv<F>(u, up, u + up, false);
    emu_launch(dim3(grid(up, 128)), dim3(128), [&] { k_binv_down<F>(x, n, K, pre, u); });
}

/* The kernel choices of a level (msm_ba.cuh's knobs): variant 0 the
 * defaults (G2: k_ba_pre_p2 and k_ba_add_p2<B, true>), variant 1 G2's
 * alternatives (k_ba_pre on one thread per walker, k_ba_add_p2<B, false>:
 * CZK_CUDA_MSM_BA_PRE2=0, CZK_CUDA_MSM_P2_LAZY=0); G1 has one kernel of each. */
template <bool GATHER, class F>
static void emu_ba_pre(int, const base_src<aff_t<F>> &src, const uint32_t *vals, const ba_lvl &L, uint32_t K, uint32_t T, F *P,
                       F *TP, uint2 *OPS)
{
    emu_launch(dim3(grid(T, 128)), dim3(128), [&] { k_ba_pre<F, GATHER>(src, vals, L, K, T, P, TP, OPS); });
}
template <bool GATHER, class B>
static void emu_ba_pre(int variant, const base_src<aff_t<fp2x<B>>> &src, const uint32_t *vals, const ba_lvl &L, uint32_t K,
                       uint32_t T, fp2x<B> *P, fp2x<B> *TP, uint2 *OPS)
{
    if (variant == 0)
        emu_launch(dim3(grid(2 * (size_t)T, 128)), dim3(128),
                   [&] { k_ba_pre_p2<B, GATHER>(src, vals, L, K, T, P, TP, OPS); });
    else
        emu_launch(dim3(grid(T, 128)), dim3(128), [&] { k_ba_pre<fp2x<B>, GATHER>(src, vals, L, K, T, P, TP, OPS); });
}

/* k_ba_add: G1 one output per thread, G2 on lane pairs */
template <class F>
static void emu_ba_add(int, const base_src<aff_t<F>> &src, const ba_lvl &L, uint32_t K, uint32_t T, const F *P, const F *TP,
                       const uint2 *OPS, aff_t<F> *dst)
{
    emu_launch(dim3(grid(T, 128)), dim3(128), [&] { k_ba_add<F>(src, L, K, T, P, TP, OPS, dst); });
}
template <class B>
static void emu_ba_add(int variant, const base_src<aff_t<fp2x<B>>> &src, const ba_lvl &L, uint32_t K, uint32_t T,
                       const fp2x<B> *P, const fp2x<B> *TP, const uint2 *OPS, aff_t<fp2x<B>> *dst)
{
    if (variant == 0)
        emu_launch(dim3(grid(2 * (size_t)T, 128)), dim3(128),
                   [&] { k_ba_add_p2<B, true>(src, L, K, T, P, TP, OPS, dst); });
    else
        emu_launch(dim3(grid(2 * (size_t)T, 128)), dim3(128),
                   [&] { k_ba_add_p2<B, false>(src, L, K, T, P, TP, OPS, dst); });
}

/* the host's view of a level: runs, their inputs and outputs */
struct level {
    std::vector<uint32_t> in_start, in_cnt, out_start, out_cnt, run;
    uint32_t outputs() const { return out_start.back() + out_cnt.back(); }
    ba_lvl dev() const
    {
        return ba_lvl{in_start.data(), in_cnt.data(), out_start.data(), out_cnt.data(), run.data(),
                      (uint32_t)in_cnt.size()};
    }
};

static level make_level(const std::vector<uint32_t> &cnt)
{
    level L;
    uint32_t is = 0, os = 0;
    for (uint32_t r = 0; r < cnt.size(); r++) {
        L.in_start.push_back(is);
        L.in_cnt.push_back(cnt[r]);
        L.out_start.push_back(os);
        L.out_cnt.push_back((cnt[r] + 1) / 2);
        for (uint32_t j = 0; j < (cnt[r] + 1) / 2; j++)
            L.run.push_back(r);
        is += cnt[r];
        os += (cnt[r] + 1) / 2;
    }
    return L;
}

/* the bookkeeping kernels on this level: out_cnt, the run of each output, the
 * largest run */
static void check_bookkeeping(const level &L, const char *name)
{
    const uint32_t R = (uint32_t)L.in_cnt.size(), O = L.outputs();
    std::vector<uint32_t> half(R), flag(O, 0), counters(8, 0);
    emu_launch(dim3(grid(R, 256)), dim3(256), [&] { k_ba_half(L.in_cnt.data(), R, half.data()); });
    CHECK(half == L.out_cnt, "%s: k_ba_half", name);
    emu_launch(dim3(grid(R, 256)), dim3(256), [&] { k_ba_heads(L.out_start.data(), R, flag.data()); });
    uint32_t acc = 0, bad = 0;
    for (uint32_t o = 0; o < O; o++) {
        acc += flag[o];
        bad += acc != L.run[o];
    }
    CHECK(bad == 0, "%s: k_ba_heads: %u outputs in the wrong run", name, bad);
    uint32_t mx = 0;
    for (uint32_t c : L.in_cnt)
        mx = c > mx ? c : mx;
    emu_launch(dim3(1), dim3(256), [&] { k_ba_max(L.in_cnt.data(), &R, counters.data()); });
    CHECK(counters[1] == mx, "%s: k_ba_max %u, the largest run has %u", name, counters[1], mx);
}

/* ---- one group ---- */

template <class G> struct ba_case_run {
    typedef typename G::F F;
    typedef typename G::jac J;
    typedef aff_t<F> A;
    const char *name;
    int variants; /* kernel variants of a level (emu_ba_pre, emu_ba_add) */
    std::vector<J> pool; /* random points */

    J rand_pool() { return pool[t_rand64() % pool.size()]; }

    /* run counts: mostly short, a few long, and singletons */
    static std::vector<uint32_t> rand_counts(uint32_t R)
    {
        std::vector<uint32_t> c(R);
        for (auto &x : c) {
            const unsigned k = (unsigned)(t_rand64() % 16);
            x = k < 3 ? 1 : k < 13 ? 2 + (uint32_t)(t_rand64() % 7) : 9 + (uint32_t)(t_rand64() % 40);
        }
        return c;
    }

    /* a level's inputs: point i of the level is E[i]; at the first level
     * through vals (base index * 2 + sign) into the bases */
    void first_level(const std::vector<uint32_t> &cnt, std::vector<A> &bases, std::vector<uint32_t> &vals,
                     std::vector<J> &E)
    {
        const uint32_t M = make_level(cnt).in_start.back() + cnt.back();
        const uint32_t NB = M / 2 + 8;
        std::vector<J> bj(NB);
        bases.resize(NB);
        for (uint32_t b = 0; b < NB; b++) {
            bj[b] = rand_pool();
            bases[b] = dev_aff<G>(bj[b]);
        }
        /* two infinity bases */
        J inf;
        memset(&inf, 0, sizeof inf);
        memset(&bases[0], 0, sizeof bases[0]);
        memset(&bases[1], 0, sizeof bases[1]);
        bj[0] = bj[1] = inf;
        vals.resize(M);
        E.resize(M);
        for (uint32_t i = 0; i < M; i++)
            vals[i] = (uint32_t)(2 + t_rand64() % (NB - 2)) * 2 + (uint32_t)(t_rand64() & 1);
        /* special pairs at even offsets of the runs: P + P, P + (-P), inf + P,
         * P + inf, inf + inf */
        const level L = make_level(cnt);
        for (uint32_t r = 0; r < cnt.size(); r++) {
            if (cnt[r] < 2)
                continue;
            const uint32_t i = L.in_start[r] + 2 * (uint32_t)(t_rand64() % (cnt[r] / 2));
            switch (r % 6) {
            case 0: vals[i + 1] = vals[i]; break;
            case 1: vals[i + 1] = vals[i] ^ 1; break;
            case 2: vals[i] = (uint32_t)(t_rand64() & 3); break;
            case 3: vals[i + 1] = (uint32_t)(t_rand64() & 3); break;
            case 4:
                vals[i] = 0;
                vals[i + 1] = 3;
                break;
            default: break;
            }
        }
        for (uint32_t i = 0; i < M; i++) {
            if (vals[i] >> 1 < 2)
                E[i] = inf;
            else if (vals[i] & 1)
                G::neg(&E[i], &bj[vals[i] >> 1]);
            else
                E[i] = bj[vals[i] >> 1];
        }
    }

    /* one level from src (codes through vals when GATHER), checked output by
     * output against the CPU; returns the outputs (dst) and their expected
     * points (next) */
    template <bool GATHER>
    void run_level(const level &L, const base_src<A> &src, const uint32_t *vals, const std::vector<J> &E, uint32_t K,
                   std::vector<A> &dst, std::vector<J> &next, unsigned lv)
    {
        for (int variant = 0; variant < variants; variant++)
            run_level_v<GATHER>(variant, L, src, vals, E, K, dst, next, lv);
    }
    template <bool GATHER>
    void run_level_v(int variant, const level &L, const base_src<A> &src, const uint32_t *vals, const std::vector<J> &E,
                     uint32_t K, std::vector<A> &dst, std::vector<J> &next, unsigned lv)
    {
        const uint32_t O = L.outputs(), T = (O + K - 1) / K;
        /* the inversion's scratch as binv_scratch sizes it, then a canary
         * that a tree needing more would overwrite */
        const size_t ns = binv_scratch(T);
        std::vector<F> P(O), TP(T), scr(ns + 4);
        memset(&scr[ns], 0xa5, 4 * sizeof(F));
        const std::vector<F> canary(scr.begin() + ns, scr.end());
        std::vector<uint2> OPS(O);
        dst.assign(O, A());
        const ba_lvl dl = L.dev();
        emu_ba_pre<GATHER>(variant, src, vals, dl, K, T, P.data(), TP.data(), OPS.data());
        emu_batch_inv<F>(TP.data(), T, scr.data());
        CHECK(memcmp(&scr[ns], canary.data(), 4 * sizeof(F)) == 0, "%s: batch_inv of %u wrote past binv_scratch's %zu",
              name, T, ns);
        emu_ba_add(variant, src, dl, K, T, (const F *)P.data(), (const F *)TP.data(), (const uint2 *)OPS.data(),
                   dst.data());
        next.resize(O);
        uint32_t bad = 0;
        for (uint32_t r = 0; r < L.in_cnt.size(); r++)
            for (uint32_t j = 0; j < L.out_cnt[r]; j++) {
                const uint32_t i = L.in_start[r] + 2 * j, o = L.out_start[r] + j;
                J s = E[i];
                if (2 * j + 1 < L.in_cnt[r])
                    G::add(&s, &E[i], &E[i + 1]);
                next[o] = s;
                if (!aff_same<G>(dst[o], dev_aff<G>(s)) && bad++ < 3)
                    CHECK(0,
                          "%s variant %d K=%u level %u: output %u (run %u, pair %u of %u inputs) differs from the "
                          "CPU sum",
                          name, variant, K, lv, o, r, j, L.in_cnt[r]);
            }
        CHECK(bad == 0, "%s variant %d K=%u level %u: %u of %u outputs wrong", name, variant, K, lv, bad, O);
    }

    /* k_ba_finish: the XYZZ sum of each run into its bucket (run 0 added to
     * the bucket the previous chunk wrote when the chunk continues it) */
    void check_finish(const level &L, const std::vector<A> &pts, const std::vector<J> &E)
    {
        const uint32_t R = (uint32_t)L.in_cnt.size(), NBK = 2 * R + 3;
        std::vector<uint32_t> run_keys(R), keys(4, SENT);
        for (uint32_t r = 0; r < R; r++)
            run_keys[r] = 2 * r + 1 + (uint32_t)(t_rand64() & 1);
        /* the chunk starts at sorted offset 4, continuing the bucket of run 0 */
        const uint32_t off = 4;
        keys[off - 1] = run_keys[0];
        std::vector<xyzz_t<F>> buckets(NBK);
        memset(buckets.data(), 0, NBK * sizeof(xyzz_t<F>));
        const J prev = rand_pool();
        const A pa = dev_aff<G>(prev);
        buckets[run_keys[0]].x = pa.x;
        buckets[run_keys[0]].y = pa.y;
        set_one(buckets[run_keys[0]].zz);
        set_one(buckets[run_keys[0]].zzz);
        emu_launch(dim3(grid(R, 128)), dim3(128), [&] {
            k_ba_finish<F>(pts.data(), L.in_start.data(), L.in_cnt.data(), &R, run_keys.data(), keys.data(), off,
                           buckets.data());
        });
        uint32_t bad = 0;
        for (uint32_t r = 0; r < R; r++) {
            J s;
            memset(&s, 0, sizeof s);
            bool first = true;
            if (r == 0) {
                s = prev;
                first = false;
            }
            for (uint32_t i = L.in_start[r]; i < L.in_start[r] + L.in_cnt[r]; i++) {
                if (first)
                    s = E[i];
                else
                    G::add(&s, &s, &E[i]);
                first = false;
            }
            if (!xyzz_is(buckets[run_keys[r]], dev_aff<G>(s)) && bad++ < 3)
                CHECK(0, "%s: k_ba_finish bucket of run %u (%u points) differs from the CPU sum", name, r,
                      L.in_cnt[r]);
        }
        CHECK(bad == 0, "%s: k_ba_finish: %u of %u buckets wrong", name, bad, R);
    }

    /* XYZZ b represents affine a: x = X / ZZ, y = Y / ZZZ, ZZ^3 = ZZZ^2;
     * infinity: ZZ = 0 (so a finite a needs ZZ != 0: the cross products
     * below hold for any a when b is all zero) */
    static bool xyzz_is(const xyzz_t<F> &b, const A &a)
    {
        static const F zero = F();
        const bool inf = memcmp(&a, &zero, sizeof zero) == 0 && memcmp(&a.y, &zero, sizeof zero) == 0;
        const bool b_inf = memcmp(&b.zz, &zero, sizeof zero) == 0;
        if (inf || b_inf)
            return inf == b_inf;
        typename G::fe t, u, v, w;
        const typename G::fe *X = (const typename G::fe *)&b.x, *Y = (const typename G::fe *)&b.y,
                             *ZZ = (const typename G::fe *)&b.zz, *ZZZ = (const typename G::fe *)&b.zzz,
                             *x = (const typename G::fe *)&a.x, *y = (const typename G::fe *)&a.y;
        G::fmul(&t, x, ZZ);
        G::fmul(&u, y, ZZZ);
        G::fmul(&v, ZZ, ZZ);
        G::fmul(&v, &v, ZZ);
        G::fmul(&w, ZZZ, ZZZ);
        return memcmp(&t, X, sizeof t) == 0 && memcmp(&u, Y, sizeof u) == 0 && memcmp(&v, &w, sizeof v) == 0;
    }

    /* inv_vt (the level's inversion with CZK_CUDA_MSM_BA_INV=1) on the
     * coordinates of random points and on 0, 1, -1: a · r = 1 by the CPU's
     * product, and r = inv's (Fermat) */
    void check_inv()
    {
        std::vector<F> xs;
        for (const J &p : pool) {
            const A a = dev_aff<G>(p);
            xs.push_back(a.x);
            xs.push_back(a.y);
        }
        F one, m1, zero;
        emu_launch(dim3(1), dim3(1), [&] {
            set_one(one);
            neg(m1, one);
        });
        memset(&zero, 0, sizeof zero);
        xs.push_back(one);
        xs.push_back(m1);
        unsigned bad = 0;
        for (const F &x : xs) {
            F r, f;
            emu_launch(dim3(1), dim3(1), [&] {
                inv_vt(r, x);
                inv(f, x);
            });
            typename G::fe prod;
            G::fmul(&prod, (const typename G::fe *)&x, (const typename G::fe *)&r);
            bad += memcmp(&prod, &one, sizeof one) != 0 || memcmp(&r, &f, sizeof r) != 0;
        }
        F r0;
        emu_launch(dim3(1), dim3(1), [&] { inv_vt(r0, zero); });
        CHECK(bad == 0 && memcmp(&r0, &zero, sizeof zero) == 0, "%s: inv_vt wrong for %u of %zu values (or for 0)",
              name, bad, xs.size());

        /* k_binv_top over n of these values (odd counts pass elements up
         * unpaired), by inv_vt and by inv: every x[i] · r[i] = 1 */
        for (uint32_t n : {1u, 2u, 3u, 5u, 31u, 64u, 257u, (uint32_t)binv_top<F>::n})
            for (bool vt : {true, false}) {
                std::vector<F> v(n);
                for (uint32_t i = 0; i < n; i++)
                    v[i] = xs[(i * 7 + n) % xs.size()];
                std::vector<F> r = v;
                emu_launch(dim3(1), dim3(BINV_TOP_THREADS), [&] { k_binv_top<F>(r.data(), n, vt); });
                unsigned wrong = 0;
                for (uint32_t i = 0; i < n; i++) {
                    typename G::fe prod;
                    G::fmul(&prod, (const typename G::fe *)&v[i], (const typename G::fe *)&r[i]);
                    wrong += memcmp(&prod, &one, sizeof one) != 0;
                }
                CHECK(wrong == 0, "%s: k_binv_top over %u (vt %d): %u of them wrong", name, n, vt, wrong);
            }
    }

    void run(uint32_t R)
    {
        pool.resize(64);
        for (auto &p : pool)
            G::rand_point(&p);
        check_inv();
        for (uint32_t K : {1u, 3u, 64u}) {
            std::vector<uint32_t> cnt = rand_counts(R);
            level L = make_level(cnt);
            check_bookkeeping(L, name);
            std::vector<A> bases, cur, nxt;
            std::vector<uint32_t> vals;
            std::vector<J> E, EN;
            first_level(cnt, bases, vals, E);
            if (K == 1) {
                run_level<true>(L, src_of(bases.data()), vals.data(), E, K, cur, EN, 0);
            } else {
                /* as over a fixed-base table: indexes from split read a
                 * separate array (the table's rows past row 0, the bases);
                 * both arrays go on with other points, which a wrong
                 * index would read */
                const uint32_t split = (uint32_t)(2 + t_rand64() % (bases.size() - 3));
                std::vector<A> head(bases.begin(), bases.begin() + split), rest(bases.begin() + split, bases.end());
                while (head.size() < 2 * bases.size())
                    head.push_back(dev_aff<G>(rand_pool()));
                while (rest.size() < 2 * bases.size())
                    rest.push_back(dev_aff<G>(rand_pool()));
                run_level<true>(L, base_src<A>{head.data(), rest.data(), split}, vals.data(), E, K, cur, EN, 0);
            }
            check_finish(make_level(L.out_cnt), cur, EN);
            /* later levels until every run has one point */
            unsigned lv = 1;
            for (;;) {
                bool more = false;
                for (uint32_t c : L.out_cnt)
                    more |= c > 1;
                if (!more)
                    break;
                L = make_level(L.out_cnt);
                E.swap(EN);
                run_level<false>(L, src_of(cur.data()), NULL, E, K, nxt, EN, lv++);
                cur.swap(nxt);
            }
        }
        /* later levels with the special pairs of their own: a level whose
         * inputs are P, P, P, -P, inf, P, P, inf, inf, inf, Q */
        std::vector<J> E(11);
        J inf;
        memset(&inf, 0, sizeof inf);
        E[0] = E[1] = E[2] = E[5] = E[6] = pool[0];
        G::neg(&E[3], &pool[0]);
        E[4] = E[7] = E[8] = E[9] = inf;
        E[10] = pool[1];
        std::vector<A> src(11), out;
        for (int i = 0; i < 11; i++)
            src[i] = dev_aff<G>(E[i]);
        std::vector<J> EN;
        for (uint32_t K : {1u, 2u, 64u})
            run_level<false>(make_level({2, 2, 2, 2, 2, 1}), src_of(src.data()), NULL, E, K, out, EN, 1);
        run_level<false>(make_level({11}), src_of(src.data()), NULL, E, 3, out, EN, 1);
    }
};

/* the sentinel search of k_ba_real */
static void check_real(void)
{
    for (uint32_t m : {1u, 2u, 7u, 100u})
        for (uint32_t real = 0; real <= m; real += (m > 7 ? 17 : 1)) {
            std::vector<uint32_t> keys(m, SENT), counters(8, 0);
            for (uint32_t i = 0; i < real; i++)
                keys[i] = i;
            emu_launch(dim3(1), dim3(1), [&] { k_ba_real(keys.data(), m, counters.data()); });
            CHECK(counters[0] == real, "k_ba_real: %u real keys of %u, found %u", real, m, counters[0]);
        }
}

/* chunks of ch pairs that `pairs` needs in `bytes` of scratch (0: none fits) */
static size_t chunks_in(size_t bytes, size_t pairs, size_t nb, size_t fb, unsigned K)
{
    const size_t ch = ba_chunk(bytes, pairs, nb, fb, K);
    return ch ? (pairs + ch - 1) / ch : 0;
}

/* the scratch sizing ba_init uses: ba_chunk is the largest chunk that fits
 * (one more pair does not), and ba_even keeps the chunk count that cap gives
 * while no byte less would (one byte less: more chunks), never above cap */
static void check_scratch_sizes(void)
{
    const size_t MiB = (size_t)1 << 20;
    struct {
        size_t pairs, nb, fb, cap;
    } c[] = {
        {12u << 24, 1u << 21, 96, 24576 * MiB}, /* BLS12-381 G2 table MSM at 2^24: 2 chunks */
        {12u << 24, 1u << 21, 48, 24576 * MiB}, /* its G1 twin: 1 chunk */
        {12u << 24, 1u << 21, 64, 24576 * MiB}, /* BN254 G2 at 2^24: just over the cap */
        {(size_t)12 << 26, 1u << 21, 48, 24576 * MiB},
        {(size_t)12 << 22, 1u << 21, 96, 24576 * MiB}, /* fits whole */
        {1000, 64, 48, 1000}, /* not even 2 nb pairs fit */
    };
    for (auto &k : c)
        for (unsigned K : {1u, 64u}) {
            const size_t ch = ba_chunk(k.cap, k.pairs, k.nb, k.fb, K), e = ba_even(k.cap, k.pairs, k.nb, k.fb, K);
            if (!ch) {
                CHECK(e == k.cap, "ba_even: nothing fits %zu bytes, got %zu", k.cap, e);
                continue;
            }
            CHECK(ba_need(ch, k.nb, k.fb, K) <= k.cap && (ch == k.pairs || ba_need(ch + 1, k.nb, k.fb, K) > k.cap),
                  "ba_chunk: %zu pairs in %zu bytes is not the largest chunk", ch, k.cap);
            const size_t n_cap = chunks_in(k.cap, k.pairs, k.nb, k.fb, K), n_e = chunks_in(e, k.pairs, k.nb, k.fb, K),
                         n_less = chunks_in(e - 1, k.pairs, k.nb, k.fb, K);
            CHECK(e <= k.cap && n_e == n_cap && (n_less == 0 || n_less > n_cap),
                  "ba_even: %zu pairs, cap %zu: %zu bytes give %zu chunks (cap %zu), one byte less %zu", k.pairs, k.cap,
                  e, n_e, n_cap, n_less);
        }
    /* ba_init's sizing for a BLS12-381 context of 2^24 with G2 and tables:
     * the plain plan (c=16: 17 windows of 2^15 buckets) and the full table
     * (c=22: 12 windows, 2^21 buckets), G1 and G2; every shape keeps the
     * chunk count of the 24 GiB cap, and at least 4 GiB of it are left over */
    const size_t cap = 24576 * MiB;
    const size_t sh[4][3] = {{(size_t)17 << 24, (size_t)17 << 15, 48}, {(size_t)12 << 24, (size_t)1 << 21, 48},
                             {(size_t)17 << 24, (size_t)17 << 15, 96}, {(size_t)12 << 24, (size_t)1 << 21, 96}};
    size_t b = 0;
    for (auto &x : sh) {
        const size_t e = ba_even(cap, x[0], x[1], x[2], 64);
        b = e > b ? e : b;
    }
    CHECK(b + 4096 * MiB <= cap, "ba_init at 2^24: %zu MiB of scratch", b / MiB);
    for (auto &x : sh)
        CHECK(chunks_in(b, x[0], x[1], x[2], 64) == chunks_in(cap, x[0], x[1], x[2], 64),
              "ba_init at 2^24: %zu pairs of %zu-byte elements in %zu chunks, %zu under the cap", x[0], x[2],
              chunks_in(b, x[0], x[1], x[2], 64), chunks_in(cap, x[0], x[1], x[2], 64));
}

/* scratch of batch_inv's tree over n with widths width(n) at each step */
template <class W> static size_t tree_need(size_t n, W width)
{
    size_t s = 0;
    while (n > 1) {
        const size_t K = width(n), up = (n + K - 1) / K;
        s += n + up;
        n = up;
    }
    return s + 1;
}

/* binv_k: a power of two in 2..BINV_K, wider only while the step keeps 2^17
 * threads, as wide as that allows; binv_scratch(n) holds the tree of binv_k,
 * of BINV_K and of pairs over every n' <= n (the driver sizes it for a
 * chunk's first level and runs later levels of fewer threads: binv_k's own
 * sum is not monotonic, e.g. 2.75 M elements for 2.2 M, 3.1 M for 2.09 M) */
static void check_binv_k(void)
{
    for (size_t n : {(size_t)2, (size_t)1000, (size_t)1 << 18, ((size_t)1 << 19) + 1, (size_t)1 << 20, (size_t)1300000,
                     (size_t)1 << 22, (size_t)1 << 26}) {
        const uint32_t k = binv_k(n, false);
        const size_t th = (size_t)1 << 17;
        CHECK(k >= 2 && k <= BINV_K && (k & (k - 1)) == 0 && (k == 2 || n / k >= th) &&
                  (k == BINV_K || n / (2 * (size_t)k) < th) && binv_k(n, true) == BINV_K,
              "binv_k(%zu) = %u", n, k);
    }
    size_t most = 0; /* the largest need of any n' <= n so far */
    for (size_t n = 1; n <= ((size_t)5 << 20); n += 1 + n / 4096) {
        const size_t need[3] = {tree_need(n, [](size_t m) { return (size_t)binv_k(m, false); }),
                                tree_need(n, [](size_t) { return (size_t)BINV_K; }),
                                tree_need(n, [](size_t) { return (size_t)2; })};
        for (size_t x : need)
            most = x > most ? x : most;
        if (binv_scratch(n) < most) {
            CHECK(0, "binv_scratch(%zu) = %zu, a tree over at most %zu elements needs %zu", n, binv_scratch(n), n,
                  most);
            break;
        }
    }
}

/* ---- the window reduction (msm_wsum_kernels.cuh) ----
 * The levels of one kernel form by wsum_levels, the driver's schedule (the
 * first level seg buckets a group, weights from 1; then blocks of 8, each
 * level's T scaled by the block sizes before it), over ncls windows of nb random
 * XYZZ buckets: random points with random Z, infinity, a bucket equal to the
 * next one (another Z: the doubling inside an addition) and the next one's
 * negative (a sum that is infinity).  Each window's result is checked
 * against sum_i (i + 1) B_i by the CPU's double-and-add. */
template <class G> struct wsum_case {
    typedef typename G::F F;
    typedef typename G::jac J;
    typedef aff_t<F> A;
    typedef xyzz_t<F> P;
    const char *name;
    std::vector<J> pool;

    /* p in XYZZ with Z = the x of a random pool point: (x Z^2, y Z^3, Z^2, Z^3) */
    P to_xyzz(const J &p)
    {
        P r;
        memset(&r, 0, sizeof r);
        const A a = dev_aff<G>(p), za = dev_aff<G>(pool[t_rand64() % pool.size()]);
        static const F zero = F();
        if (memcmp(&a.x, &zero, sizeof zero) == 0 && memcmp(&a.y, &zero, sizeof zero) == 0)
            return r; /* infinity: ZZ = 0 */
        typedef typename G::fe fe;
        const fe *z = (const fe *)&za.x;
        G::fmul((fe *)&r.zz, z, z);
        G::fmul((fe *)&r.zzz, (const fe *)&r.zz, z);
        G::fmul((fe *)&r.x, (const fe *)&a.x, (const fe *)&r.zz);
        G::fmul((fe *)&r.y, (const fe *)&a.y, (const fe *)&r.zzz);
        return r;
    }

    /* the levels as the driver runs them, by form v: 0 the one-group-per-point
     * kernel (k_bucket_lvl; G2 on lazy lane pairs), 1 k_bucket_lvl_pp,
     * 2 G1: k_bucket_lvl_pp for 3 blocks an SM, G2: k_bucket_lvl on lane
     * pairs not lazy, 3 G2 only: one thread per point (k_bucket_lvl), 4 G2
     * only: k_bucket_lvl_pp not lazy */
    void levels(int v, const std::vector<P> &buckets, unsigned ncls, unsigned nb, unsigned seg, std::vector<P> &out)
    {
        std::vector<P> b0(2 * buckets.size()), b1(2 * buckets.size());
        P *const parts[2] = {b0.data(), b1.data()};
        const P *sums = NULL;
        wsum_levels<P>(buckets.data(), ncls, nb, seg, parts, &sums,
                       [&](const P *S_in, const P *Q_in, uint32_t n_in, unsigned L, unsigned w1, unsigned shift,
                           uint32_t m_out, P *S_out, P *Q_out) {
                           launch(v, S_in, Q_in, n_in, L, w1, shift, m_out, S_out, Q_out);
                           return 0;
                       });
        out.assign(sums, sums + ncls);
    }
    static void launch(int v, const P *S_in, const P *Q_in, uint32_t n_in, unsigned L, unsigned w1, unsigned shift,
                       uint32_t m_out, P *S_out, P *Q_out)
    {
        launch_(v, S_in, Q_in, n_in, L, w1, shift, m_out, S_out, Q_out, (F *)0);
    }
    /* one level in either form, the grid derived from the form's lanes a
     * point as the driver's lvl_form does */
    template <class O>
    static void plain(const P *S_in, const P *Q_in, uint32_t n_in, unsigned L, unsigned w1, unsigned shift,
                      uint32_t m_out, P *S_out, P *Q_out)
    {
        emu_launch(dim3(grid(lvl_lanes<O> * (size_t)m_out, 128)), dim3(128),
                   [&] { k_bucket_lvl<O>(S_in, Q_in, n_in, L, w1, shift, m_out, S_out, Q_out); });
    }
    template <class O, int MINB = 1>
    static void pp(const P *S_in, const P *Q_in, uint32_t n_in, unsigned L, unsigned w1, unsigned shift,
                   uint32_t m_out, P *S_out, P *Q_out)
    {
        emu_launch(dim3(grid(lvl_pp_lanes<O> * (size_t)m_out, 128)), dim3(128),
                   [&] { k_bucket_lvl_pp<O, MINB>(S_in, Q_in, n_in, L, w1, shift, m_out, S_out, Q_out); });
    }
    template <class B>
    static void launch_(int v, const P *S_in, const P *Q_in, uint32_t n_in, unsigned L, unsigned w1, unsigned shift,
                        uint32_t m_out, P *S_out, P *Q_out, B *)
    {
        if (v == 0)
            plain<wsum_g1<B>>(S_in, Q_in, n_in, L, w1, shift, m_out, S_out, Q_out);
        else if (v == 1)
            pp<wsum_g1<B>>(S_in, Q_in, n_in, L, w1, shift, m_out, S_out, Q_out);
        else
            pp<wsum_g1<B>, 3>(S_in, Q_in, n_in, L, w1, shift, m_out, S_out, Q_out);
    }
    template <class B>
    static void launch_(int v, const P *S_in, const P *Q_in, uint32_t n_in, unsigned L, unsigned w1, unsigned shift,
                        uint32_t m_out, P *S_out, P *Q_out, fp2x<B> *)
    {
        if (v == 0)
            plain<wsum_g2<B, true>>(S_in, Q_in, n_in, L, w1, shift, m_out, S_out, Q_out);
        else if (v == 1)
            pp<wsum_g2<B, true>>(S_in, Q_in, n_in, L, w1, shift, m_out, S_out, Q_out);
        else if (v == 2)
            plain<wsum_g2<B, false>>(S_in, Q_in, n_in, L, w1, shift, m_out, S_out, Q_out);
        else if (v == 3)
            plain<wsum_g1<fp2x<B>>>(S_in, Q_in, n_in, L, w1, shift, m_out, S_out, Q_out);
        else
            pp<wsum_g2<B, false>>(S_in, Q_in, n_in, L, w1, shift, m_out, S_out, Q_out);
    }

    void run(unsigned npool, unsigned ncls, unsigned nb, const std::vector<unsigned> &segs, int forms)
    {
        for (unsigned i = 0; i < npool; i++) {
            J p;
            G::rand_point(&p);
            pool.push_back(p);
        }
        /* the buckets, built from the last one down so each may copy or
         * negate its successor */
        std::vector<J> bj(ncls * nb);
        std::vector<P> buckets(ncls * nb);
        J inf;
        memset(&inf, 0, sizeof inf);
        for (unsigned w = 0; w < ncls; w++)
            for (int i = (int)nb - 1; i >= 0; i--) {
                const size_t at = (size_t)w * nb + i;
                const unsigned k = (unsigned)(t_rand64() % 20);
                const bool has_next = i + 1 < (int)nb;
                if (k < 3)
                    G::dbl(&bj[at], &inf); /* infinity, as the CPU writes it */
                else if (k < 6 && has_next)
                    bj[at] = bj[at + 1];
                else if (k < 8 && has_next)
                    G::neg(&bj[at], &bj[at + 1]);
                else
                    bj[at] = pool[t_rand64() % npool];
                buckets[at] = to_xyzz(bj[at]);
            }
        /* sum_i (i + 1) B_i by double-and-add of each bucket */
        std::vector<A> want(ncls);
        for (unsigned w = 0; w < ncls; w++) {
            J sum = inf;
            for (unsigned i = 0; i < nb; i++) {
                J m = inf, b = bj[(size_t)w * nb + i];
                for (unsigned e = i + 1; e; e >>= 1) {
                    if (e & 1)
                        G::add(&m, &m, &b);
                    G::dbl(&b, &b);
                }
                G::add(&sum, &sum, &m);
            }
            want[w] = dev_aff<G>(sum);
        }
        for (unsigned seg : segs)
            for (int v = 0; v < forms; v++) {
                std::vector<P> got;
                levels(v, buckets, ncls, nb, seg, got);
                unsigned bad = 0;
                for (unsigned w = 0; w < ncls; w++)
                    if (!ba_case_run<G>::xyzz_is(got[w], want[w]))
                        bad++;
                CHECK(bad == 0, "%s: window reduction form %d, %u buckets from %u a group: %u of %u windows wrong", name,
                      v, nb, seg, bad, ncls);
            }
    }
};

/* ff.cuh's constants of field D against the CPU's field C: the Montgomery
 * one is R mod p (its standard form is 1), and R^2 mod p (inv_vt's start)
 * is R mod p, read as a standard value, in Montgomery form */
template <class D, class C>
static void check_consts(const char *name, void (*to_mont)(C *, const C *), void (*from_mont)(C *, const C *))
{
    static_assert(sizeof(D) == sizeof(C), "device and CPU field layouts");
    C one, std1, r2, want;
    memcpy(&one, ff_traits<D>::one(), sizeof one);
    memcpy(&r2, ff_traits<D>::r2(), sizeof r2);
    from_mont(&std1, &one);
    C unit;
    const uint32_t low = 1;
    memset(&unit, 0, sizeof unit);
    memcpy(&unit, &low, sizeof low);
    to_mont(&want, &one);
    CHECK(memcmp(&std1, &unit, sizeof unit) == 0, "%s: ff.cuh's one is not R mod p", name);
    CHECK(memcmp(&r2, &want, sizeof want) == 0, "%s: ff.cuh's r2 is not R^2 mod p", name);
}

int main(void)
{
    t_seed("test_cuda_ba_emul");
    check_consts<fp_t, czk_fp>("BLS12-381 Fp", czk_fp_to_mont, czk_fp_from_mont);
    check_consts<fr_t, czk_fr>("BLS12-381 Fr", czk_fr_to_mont, czk_fr_from_mont);
    check_consts<bn_fp_t, czk_bn254_fp>("BN254 Fp", czk_bn254_fp_to_mont, czk_bn254_fp_from_mont);
    check_consts<bn_fr_t, czk_bn254_fr>("BN254 Fr", czk_bn254_fr_to_mont, czk_bn254_fr_from_mont);
    check_real();
    check_scratch_sizes();
    check_binv_k();
    ba_case_run<bls_g1>{"BLS12-381 G1", 1, {}}.run(400);
    ba_case_run<bn_g1>{"BN254 G1", 1, {}}.run(400);
    ba_case_run<bls_g2>{"BLS12-381 G2", 2, {}}.run(160);
    ba_case_run<bn_g2>{"BN254 G2", 2, {}}.run(160);
    wsum_case<bls_g1>{"BLS12-381 G1", {}}.run(64, 3, 64, {1, 2, 8, 16, 32, 64}, 3);
    wsum_case<bn_g1>{"BN254 G1", {}}.run(64, 3, 64, {1, 4, 16}, 3);
    wsum_case<bls_g2>{"BLS12-381 G2", {}}.run(32, 3, 32, {1, 8, 32}, 5);
    wsum_case<bn_g2>{"BN254 G2", {}}.run(32, 2, 16, {2, 16}, 5);
    wsum_case<bls_g1>{"BLS12-381 G1 (4 buckets)", {}}.run(16, 5, 4, {1, 2, 4}, 3);
    if (t_failures) {
        fprintf(stderr, "test_cuda_ba_emul: %d failures\n", t_failures);
        return 1;
    }
    printf("test_cuda_ba_emul: ok\n");
    return 0;
}
