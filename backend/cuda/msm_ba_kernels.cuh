/*
 * msm_ba_kernels.cuh — the device code of the batch-affine bucket sums
 * (msm_ba.cuh describes the algorithm): the kernels, their helpers and the
 * scratch size of the shared inversion's tree, with no launches and no CUDA
 * runtime calls, so that tests/cuda/test_cuda_ba_emul can compile them for the
 * CPU (tests/cuda/emu/cuda_emu.h) and check them against the CPU curve code
 * where no GPU is present.
 */
#ifndef CZK_CUDA_MSM_BA_KERNELS_CUH
#define CZK_CUDA_MSM_BA_KERNELS_CUH

#include "backend/cuda/ec_pair.cuh"

#define SENT 0xffffffffu /* the sort key of a zero digit: sorts last, no bucket */
#define BINV_K 32u   /* most elements per thread in a step of batch_inv's tree (binv_k) */
#define BA_RESID 512u /* most points per run k_ba_finish is left to sum */
#define BA_STOP_K 4000u /* a level that adds fewer thousand pairs may be the last (CZK_CUDA_MSM_BA_STOP) */

/* The points an MSM's first level reads, by index i: r0[i] below split,
 * r1[i - split] from there.  A fixed-base table's row 0 is its bases
 * themselves, so the table holds rows 1.. only: r0 the bases, r1 the table,
 * split the bases' count (the table's row stride).  Without a table, and for
 * the outputs of a batch-affine level, r0 = r1 and split = 0 (src_of). */
template <class P> struct base_src {
    const P *r0, *r1;
    uint32_t split;
};
template <class P> static inline base_src<P> src_of(const P *p) { return base_src<P>{p, p, 0}; }
template <class P> FF_DEV const P *src_at(const base_src<P> &s, uint32_t i)
{
    return i < s.split ? s.r0 + i : s.r1 + (i - s.split);
}

/* The levels' stop rule, shared by ba_buckets and the window rules' estimate
 * of it (msm_kernels.cuh, ba_levels_est).  Level lv over at most bound
 * inputs in R runs, the longest of maxc points, runs when it is the first,
 * or adds stop_k thousand pairs or more, or would leave a run of BA_RESID
 * points or more to k_ba_finish (which sums a run on one thread). */
static inline bool ba_level_runs(unsigned lv, size_t bound, size_t R, size_t maxc, unsigned stop_k)
{
    const size_t add = bound > R ? (bound - R) / 2 : 0;
    return lv == 0 || add >= (size_t)stop_k * 1000 || ((maxc - 1) >> lv) >= BA_RESID;
}

/* the outputs of a level over at most bound inputs in R runs, at most:
 * ceil(inputs / 2) per run */
static inline size_t ba_level_bound(size_t bound, size_t R)
{
    return (bound + R) / 2 + 1 < bound ? (bound + R) / 2 + 1 : bound;
}

/* ---- the level's run bookkeeping ---- */

/* out_cnt[r] = ceil(in_cnt[r] / 2) */
static __global__ void k_ba_half(const uint32_t *in_cnt, uint32_t R, uint32_t *out_cnt)
{
    uint32_t r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r < R)
        out_cnt[r] = (in_cnt[r] + 1) >> 1;
}

/* counters[0] = number of pairs with a real key among keys[0..m) (the first
 * SENT, keys sorted); one thread */
static __global__ void k_ba_real(const uint32_t *keys, uint32_t m, uint32_t *counters)
{
    uint32_t lo = 0, hi = m;
    while (lo < hi) {
        uint32_t mid = lo + ((hi - lo) >> 1);
        if (keys[mid] == SENT)
            hi = mid;
        else
            lo = mid + 1;
    }
    counters[0] = lo;
}

/* counters[1] = max cnt[0..R) (R >= 1); one block of 256 */
static __global__ void k_ba_max(const uint32_t *cnt, const uint32_t *Rp, uint32_t *counters)
{
    __shared__ uint32_t sm[256];
    const uint32_t R = *Rp;
    uint32_t m = 0;
    for (uint32_t r = threadIdx.x; r < R; r += 256)
        m = cnt[r] > m ? cnt[r] : m;
    sm[threadIdx.x] = m;
    __syncthreads();
    for (unsigned w = 128; w; w >>= 1) {
        if (threadIdx.x < w && sm[threadIdx.x + w] > sm[threadIdx.x])
            sm[threadIdx.x] = sm[threadIdx.x + w];
        __syncthreads();
    }
    if (threadIdx.x == 0)
        counters[1] = sm[0];
}

/* ---- one level ---- */

/* the runs of a level: R runs, run r has in_cnt[r] inputs from in_start[r]
 * and out_cnt[r] outputs from out_start[r] (exclusive sums); run[o] is the
 * run of output o (o < out_start[R-1] + out_cnt[R-1]) */
struct ba_lvl {
    const uint32_t *in_start, *in_cnt, *out_start, *out_cnt, *run;
    uint32_t R;
};

FF_DEV uint32_t ba_outputs(const ba_lvl &L) { return L.out_start[L.R - 1] + L.out_cnt[L.R - 1]; }

/* flag[out_start[r]] = 1 for r >= 1 (flag zeroed before): run[] is its
 * inclusive sum */
static __global__ void k_ba_heads(const uint32_t *out_start, uint32_t R, uint32_t *flag)
{
    uint32_t r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r >= 1 && r < R)
        flag[out_start[r]] = 1;
}

/* An operand code: the input's index times 2 plus a negation bit (at the
 * first level the sorted value itself: base index and digit sign); SENT for
 * a missing second operand. */
template <class F> FF_DEV aff_t<F> ba_point(const base_src<aff_t<F>> &src, uint32_t code)
{
    aff_t<F> p = ld_global(src_at(src, code >> 1));
    if ((code & 1) && !aff_is_inf(p))
        neg(p.y, p.y);
    return p;
}

/* output o's operand codes */
template <bool GATHER> FF_DEV uint2 ba_codes(const uint32_t *vals, const ba_lvl &L, uint32_t o)
{
    const uint32_t r = L.run[o], j = o - L.out_start[r];
    const uint32_t i = L.in_start[r] + 2 * j;
    const bool has2 = 2 * j + 1 < L.in_cnt[r];
    uint2 c;
    c.x = GATHER ? vals[i] : 2 * i;
    c.y = !has2 ? SENT : GATHER ? vals[i + 1] : 2 * (i + 1);
    return c;
}

/* what output (r, j) of a level does with its operands p (input 2j) and q
 * (input 2j + 1, when has2) */
enum { BA_COPY_P, BA_COPY_Q, BA_INF, BA_ADD, BA_DBL };

template <class F> FF_DEV int ba_case(const aff_t<F> &p, const aff_t<F> &q, bool has2)
{
    if (!has2 || aff_is_inf(q))
        return BA_COPY_P;
    if (aff_is_inf(p))
        return BA_COPY_Q;
    if (!eq(p.x, q.x))
        return BA_ADD;
    if (eq(p.y, q.y) && !is_zero(p.y))
        return BA_DBL;
    return BA_INF;
}

/* the sum of a case without a slope: p, q or infinity (also a lane's
 * component of them) */
template <class A> FF_DEV A ba_noslope(int cs, const A &p, const A &q)
{
    if (cs == BA_COPY_P)
        return p;
    if (cs == BA_COPY_Q)
        return q;
    A z;
    set_zero(z.x);
    set_zero(z.y);
    return z;
}

/* the denominator of the case: x2 − x1, 2 y1, or 1 */
template <class F> FF_DEV void ba_den(F &d, int cs, const aff_t<F> &p, const aff_t<F> &q)
{
    if (cs == BA_ADD)
        sub(d, q.x, p.x);
    else if (cs == BA_DBL)
        dbl(d, p.y);
    else
        set_one(d);
}

/* Thread t of T takes outputs t, t + T, ..., t + (K-1) T (below the level's
 * output count), so a warp's loads and stores are of consecutive outputs. */
template <class F, bool GATHER>
__global__ void __launch_bounds__(128) k_ba_pre(const base_src<aff_t<F>> src, const uint32_t *vals, ba_lvl L, uint32_t K,
                                                uint32_t T, F *P, F *TP, uint2 *OPS)
{
    const uint32_t t = blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= T)
        return;
    const uint32_t O = ba_outputs(L);
    F acc;
    set_one(acc);
    for (uint32_t k = 0, o = t; k < K && o < O; k++, o += T) {
        const uint2 c = ba_codes<GATHER>(vals, L, o);
        OPS[o] = c;
        F d;
        if (c.y != SENT) {
            /* x alone decides, unless an operand may be infinity (x = 0) or the x agree */
            const F x1 = ld_global(&src_at(src, c.x >> 1)->x), x2 = ld_global(&src_at(src, c.y >> 1)->x);
            if (is_zero(x1) || is_zero(x2) || eq(x1, x2)) {
                const aff_t<F> p = ba_point(src, c.x), q = ba_point(src, c.y);
                ba_den(d, ba_case(p, q, true), p, q);
            } else {
                sub(d, x2, x1);
            }
        } else {
            set_one(d);
        }
        mul(acc, acc, d);
        st_global(P + o, acc);
    }
    st_global(TP + t, acc);
}

/* the last output o of walker t of T in k_ba_add (its outputs t, t + T, ...,
 * at most K of them, below the level's count); false: it has none */
FF_DEV bool ba_last(const ba_lvl &L, uint32_t K, uint32_t T, uint32_t t, uint32_t &o)
{
    if (t >= T)
        return false;
    const uint32_t O = ba_outputs(L);
    if (t >= O)
        return false;
    uint32_t k = (O - 1 - t) / T;
    if (k > K - 1)
        k = K - 1;
    o = t + k * T;
    return true;
}

/* G1 (G2: k_ba_add_p2) */
template <class F>
__global__ void __launch_bounds__(128) k_ba_add(const base_src<aff_t<F>> src, ba_lvl L, uint32_t K, uint32_t T, const F *P,
                                                const F *TPinv, const uint2 *OPS, aff_t<F> *dst)
{
    const uint32_t t = blockIdx.x * blockDim.x + threadIdx.x;
    uint32_t o;
    if (!ba_last(L, K, T, t, o))
        return;
    F acc = ld_global(TPinv + t); /* 1 / P[o] */
    for (;; o -= T) {
        const uint2 c = OPS[o];
        const bool has2 = c.y != SENT;
        const aff_t<F> p = ba_point(src, c.x);
        const aff_t<F> q = has2 ? ba_point(src, c.y) : p;
        const int cs = ba_case(p, q, has2);
        aff_t<F> s;
        if (cs == BA_ADD || cs == BA_DBL) {
            F id, d, lam, t1;
            if (o >= T) {
                mul(id, acc, ld_global(P + (o - T)));
                ba_den(d, cs, p, q);
                mul(acc, acc, d);
            } else {
                id = acc;
            }
            if (cs == BA_ADD) {
                sub(lam, q.y, p.y);
            } else {
                sqr(t1, p.x);
                dbl(lam, t1);
                add(lam, lam, t1);
            }
            mul(lam, lam, id);
            sqr(t1, lam);
            sub(t1, t1, p.x);
            sub(s.x, t1, q.x); /* q.x = p.x for a doubling */
            sub(t1, p.x, s.x);
            mul(t1, t1, lam);
            sub(s.y, t1, p.y);
        } else {
            s = ba_noslope(cs, p, q);
        }
        st_global(dst + o, s);
        if (o < T)
            break;
    }
}

/* ---- k_ba_add for G2 on lane pairs (ec_pair.cuh) ----
 * Pair t (threads 2t, 2t + 1) does what thread t of k_ba_add does, each lane
 * holding one component of every Fp2 value: half the registers per thread,
 * so more warps per SM.  Cases and branches are agreed over the pair. */

/* operand `code`, this lane's component (negating 0 leaves infinity 0) */
template <class B> FF_DEV aff_t<B> p2_ba_point(const p2ctx &pk, const base_src<aff_t<fp2x<B>>> &src, uint32_t code)
{
    aff_t<B> p = p2_ld_aff(pk, src_at(src, code >> 1), 0);
    if (code & 1)
        neg(p.y, p.y);
    return p;
}

/* a = b in Fp2, agreed over the pair */
template <class B> FF_DEV bool p2_eq(const p2ctx &pk, const B &a, const B &b)
{
    const unsigned e = eq(a, b) ? 1u : 0u;
    return (e & __shfl_xor_sync(pk.mask, e, 1)) != 0;
}

template <class B> FF_DEV int p2_ba_case(const p2ctx &pk, const aff_t<B> &p, const aff_t<B> &q, bool has2)
{
    if (!has2 || p2_aff_is_inf(pk, q))
        return BA_COPY_P;
    if (p2_aff_is_inf(pk, p))
        return BA_COPY_Q;
    if (!p2_eq(pk, p.x, q.x))
        return BA_ADD;
    if (p2_eq(pk, p.y, q.y) && !p2_is_zero(pk, p.y))
        return BA_DBL;
    return BA_INF;
}

/* ba_den on a lane pair: this lane's component of the denominator */
template <class B> FF_DEV void p2_ba_den(const p2ctx &pk, B &d, int cs, const aff_t<B> &p, const aff_t<B> &q)
{
    if (cs == BA_ADD)
        sub(d, q.x, p.x);
    else if (cs == BA_DBL)
        dbl(d, p.y);
    else
        p2_set_one(pk, d);
}

/* k_ba_pre for G2 on lane pairs: pair t does what thread t of k_ba_pre
 * does, each lane one component of the denominators and of their running
 * product (p2_mul_lz); lane 0 records the operand codes */
template <class B, bool GATHER>
__global__ void __launch_bounds__(128) k_ba_pre_p2(const base_src<aff_t<fp2x<B>>> src, const uint32_t *vals, ba_lvl L,
                                                   uint32_t K, uint32_t T, fp2x<B> *P, fp2x<B> *TP, uint2 *OPS)
{
    const uint32_t t = (blockIdx.x * blockDim.x + threadIdx.x) >> 1;
    const p2ctx pk = p2_ctx();
    if (t >= T)
        return;
    const uint32_t O = ba_outputs(L);
    B *Pc = reinterpret_cast<B *>(P) + pk.c;
    B acc;
    p2_set_one(pk, acc);
    for (uint32_t k = 0, o = t; k < K && o < O; k++, o += T) {
        const uint2 c = ba_codes<GATHER>(vals, L, o);
        if (pk.c == 0)
            OPS[o] = c;
        B d;
        if (c.y != SENT) {
            /* this lane's component of each x */
            const B x1 = ld_global(reinterpret_cast<const B *>(src_at(src, c.x >> 1)) + pk.c),
                    x2 = ld_global(reinterpret_cast<const B *>(src_at(src, c.y >> 1)) + pk.c);
            if (p2_is_zero(pk, x1) || p2_is_zero(pk, x2) || p2_eq(pk, x1, x2)) {
                const aff_t<B> p = p2_ba_point(pk, src, c.x), q = p2_ba_point(pk, src, c.y);
                p2_ba_den(pk, d, p2_ba_case(pk, p, q, true), p, q);
            } else {
                sub(d, x2, x1);
            }
        } else {
            p2_set_one(pk, d);
        }
        p2_mul_lz(pk, acc, acc, d);
        st_global(Pc + 2 * (size_t)o, acc);
    }
    st_global(reinterpret_cast<B *>(TP) + 2 * (size_t)t + pk.c, acc);
}

/* 3 blocks per SM for BLS12-381 (168 registers, 12 warps, against 251 and
 * 8 warps for one G2 output per thread), 4 for BN254 (120 registers).  LZ:
 * the two dependent products of the sum by p2_mul_lz (one reduction per
 * lane), else by p2_mul. */
#define BA_P2_BLOCKS(B) (ff_traits<B>::N > 8 ? 3 : 4)
template <class B, bool LZ = true>
__global__ void __launch_bounds__(128, BA_P2_BLOCKS(B))
    k_ba_add_p2(const base_src<aff_t<fp2x<B>>> src, ba_lvl L, uint32_t K, uint32_t T, const fp2x<B> *P, const fp2x<B> *TPinv,
                const uint2 *OPS, aff_t<fp2x<B>> *dst)
{
    const uint32_t t = (blockIdx.x * blockDim.x + threadIdx.x) >> 1;
    const p2ctx pk = p2_ctx();
    uint32_t o;
    if (!ba_last(L, K, T, t, o))
        return;
    const B *Pc = reinterpret_cast<const B *>(P) + pk.c; /* this lane's component of P[i]: Pc[2 i] */
    B acc = ld_global(reinterpret_cast<const B *>(TPinv) + 2 * (size_t)t + pk.c); /* 1 / P[o] */
    for (;; o -= T) {
        const uint2 c = OPS[o];
        const bool has2 = c.y != SENT;
        const aff_t<B> p = p2_ba_point(pk, src, c.x);
        const aff_t<B> q = has2 ? p2_ba_point(pk, src, c.y) : p;
        const int cs = p2_ba_case(pk, p, q, has2);
        aff_t<B> r;
        if (cs == BA_ADD || cs == BA_DBL) {
            B id, lam, t1;
            if (o >= T) {
                B d;
                p2_ba_den(pk, d, cs, p, q); /* an addition's or a doubling's */
                /* 1 / d_o = 1/P[o] · P[o − T], 1 / P[o − T] = 1/P[o] · d_o */
                p2_mul2<true>(pk, id, acc, acc, ld_global(Pc + 2 * (size_t)(o - T)), acc, d);
            } else {
                id = acc;
            }
            if (cs == BA_ADD) {
                sub(lam, q.y, p.y);
            } else {
                p2_sqr(pk, t1, p.x);
                dbl(lam, t1);
                add(lam, lam, t1);
            }
            p2_mulx<LZ>(pk, lam, lam, id);
            p2_sqr(pk, t1, lam);
            sub(t1, t1, p.x);
            sub(r.x, t1, q.x); /* q.x = p.x for a doubling */
            sub(t1, p.x, r.x);
            p2_mulx<LZ>(pk, t1, t1, lam);
            sub(r.y, t1, p.y);
        } else {
            r = ba_noslope(cs, p, q);
        }
        B *D = reinterpret_cast<B *>(dst + o);
        st_global(D + pk.c, r.x);
        st_global(D + 2 + pk.c, r.y);
        if (o < T)
            break;
    }
}

/* ---- the shared inversion: x[0..n) <- 1 / x[i] (all nonzero) ---- */

/* Elements per thread of the step of batch_inv's tree over n elements: the
 * largest power of two up to BINV_K that still leaves 2^17 threads or more
 * (enough to keep the GPU busy), at least 2.  A thread's products are one
 * serial chain, so the steps near the top, which have few threads, take
 * the chain's latency: pairs make those chains shortest (3 products a step
 * instead of 3 x 32).  fixed: BINV_K at every step (CZK_CUDA_MSM_BINV_FIXED,
 * A/B). */
static inline uint32_t binv_k(size_t n, bool fixed)
{
    if (fixed)
        return BINV_K;
    size_t k = 2;
    while (k < BINV_K && n / (2 * k) >= ((size_t)1 << 17))
        k *= 2;
    return (uint32_t)k;
}

/* scratch elements batch_inv needs for any n' <= n: pre and up of every
 * step.  A bound, not the sum for n itself: binv_k's widths make that sum
 * fall where a width doubles (a level of fewer threads than the chunk's
 * first can need more), while any tree of widths >= 2 needs at most
 * sum (n_i + n_(i+1)) + 1 with n_(i+1) <= (n_i + 1) / 2, i.e. under
 * 3 n + 2 (steps) + 1, steps <= 33. */
static inline size_t binv_scratch(size_t n) { return 3 * n + 128; }

/* ---- scratch sizes (host; msm_ba.cuh sizes and chunks by these) ---- */

/* outputs of the levels of a chunk of ch pairs into nb buckets, at most:
 * every run of k points gives ceil(k / 2), so level 0 has at most half =
 * (ch + nb) / 2 + 1 outputs and level 1 at most (half + nb) / 2 + 1 (the
 * even levels write buffer 0, the odd ones buffer 1) */
static inline size_t ba_half(size_t ch, size_t nb) { return (ch + nb) / 2 + 1; }
static inline size_t ba_quarter(size_t ch, size_t nb) { return (ba_half(ch, nb) + nb) / 2 + 1; }

/* scratch bytes for chunks of ch pairs into nb buckets, field elements of
 * fb bytes, K outputs per thread: the two point buffers, the prefix products
 * P and operand codes of level 0's outputs, TP and batch_inv's tree */
static inline size_t ba_need(size_t ch, size_t nb, size_t fb, unsigned K)
{
    const size_t half = ba_half(ch, nb), tmax = (half + K - 1) / K;
    return (half + ba_quarter(ch, nb)) * 2 * fb + half * (fb + sizeof(uint2)) + (tmax + binv_scratch(tmax)) * fb + 256;
}

/* the largest chunk (at most `pairs`, at least 2 nb or all the pairs) that
 * `bytes` of scratch hold; 0: none */
static inline size_t ba_chunk(size_t bytes, size_t pairs, size_t nb, size_t fb, unsigned K)
{
    size_t lo = pairs < 2 * nb ? pairs : 2 * nb, hi = pairs;
    if (ba_need(lo, nb, fb, K) > bytes)
        return 0;
    while (lo < hi) {
        const size_t mid = lo + (hi - lo + 1) / 2;
        if (ba_need(mid, nb, fb, K) <= bytes)
            lo = mid;
        else
            hi = mid - 1;
    }
    return lo;
}

/* scratch for `pairs` pairs of field elements of fb bytes in as few chunks
 * as cap bytes allow, those chunks of equal size: no more than cap, and
 * less when the last chunk of cap-sized ones would be short (cap when not
 * even 2 nb pairs fit) */
static inline size_t ba_even(size_t cap, size_t pairs, size_t nb, size_t fb, unsigned K)
{
    const size_t ch = ba_chunk(cap, pairs, nb, fb, K);
    if (!ch)
        return cap;
    const size_t k = (pairs + ch - 1) / ch;
    return ba_need((pairs + k - 1) / k, nb, fb, K);
}

/* pre[i] = x[uK] ... x[i] within thread u's chunk of K, up[u] = the chunk's product */
template <class F> __global__ void k_binv_up(const F *x, uint32_t n, uint32_t K, F *pre, F *up)
{
    const uint32_t u = blockIdx.x * blockDim.x + threadIdx.x, i0 = u * K;
    if (i0 >= n)
        return;
    const uint32_t e = n - i0 > K ? i0 + K : n;
    F acc = x[i0];
    pre[i0] = acc;
    for (uint32_t i = i0 + 1; i < e; i++) {
        mul(acc, acc, x[i]);
        pre[i] = acc;
    }
    up[u] = acc;
}

/* the top of batch_inv's tree, one block: n <= binv_top<F>::n elements
 * (the products of every step, about n of them, in 48 KiB of shared memory),
 * BINV_TOP_THREADS threads */
#define BINV_TOP_THREADS 256u
template <class F> struct binv_top {
    static constexpr uint32_t n = 49152 / sizeof(F) - 16;
};

/* x[i] <- 1 / x[i] for i < n <= binv_top<F>::n (none 0) in one block: a
 * tree of pair products up (its steps in shared memory; an odd element out
 * passes up as it is), the top's one inversion by thread 0 (vt: inv_vt,
 * variable time; else inv), then each node's inverse times its sibling down
 * to x.  A tree of n elements has at most n - 1 + ceil(log2 n) nodes above
 * its leaves. */
template <class F> __global__ void __launch_bounds__(BINV_TOP_THREADS) k_binv_top(F *x, uint32_t n, bool vt)
{
    __shared__ F t[binv_top<F>::n + 16];
    uint32_t off[16], cnt[16]; /* step l's nodes: t[off[l] ..] (step 0: x), cnt[l] of them */
    const uint32_t tid = threadIdx.x;
    int L = 0;
    cnt[0] = n;
    off[0] = 0;
    for (uint32_t o = 0; cnt[L] > 1; L++) {
        const F *src = L ? t + off[L] : x;
        const uint32_t m = cnt[L], h = (m + 1) / 2;
        for (uint32_t j = tid; j < h; j += blockDim.x) {
            if (2 * j + 1 < m)
                mul(t[o + j], src[2 * j], src[2 * j + 1]);
            else
                t[o + j] = src[2 * j];
        }
        off[L + 1] = o;
        cnt[L + 1] = h;
        o += h;
        __syncthreads();
    }
    if (tid == 0) {
        F *top = L ? t + off[L] : x, r;
        if (vt)
            inv_vt(r, *top);
        else
            inv(r, *top);
        *top = r;
    }
    __syncthreads();
    for (int l = L; l > 0; l--) {
        const F *par = t + off[l];
        F *ch = l > 1 ? t + off[l - 1] : x;
        const uint32_t m = cnt[l - 1];
        for (uint32_t j = tid; j < cnt[l]; j += blockDim.x) {
            const F iv = par[j];
            if (2 * j + 1 < m) {
                const F a = ch[2 * j], b = ch[2 * j + 1];
                mul(ch[2 * j], iv, b);
                mul(ch[2 * j + 1], iv, a);
            } else {
                ch[2 * j] = iv;
            }
        }
        __syncthreads();
    }
}

/* upinv[u] = 1 / (chunk u's product): x[i] <- 1 / x[i] over the chunk of K */
template <class F> __global__ void k_binv_down(F *x, uint32_t n, uint32_t K, const F *pre, const F *upinv)
{
    const uint32_t u = blockIdx.x * blockDim.x + threadIdx.x, i0 = u * K;
    if (i0 >= n)
        return;
    const uint32_t e = n - i0 > K ? i0 + K : n;
    F acc = upinv[u];
    for (uint32_t i = e - 1; i > i0; i--) {
        F xi = x[i], r;
        mul(r, acc, pre[i - 1]);
        x[i] = r;
        mul(acc, acc, xi);
    }
    x[i0] = acc;
}

/* ---- the chunk's runs into the buckets ---- */

/* bucket run_keys[r] = the sum of run r's points pts[start[r] .. + cnt[r])
 * (the few the levels left, summed in XYZZ); run 0 is added to its bucket
 * when the chunk at sorted offset off continues the previous chunk's last
 * bucket */
template <class F>
__global__ void k_ba_finish(const aff_t<F> *pts, const uint32_t *start, const uint32_t *cnt, const uint32_t *Rp,
                            const uint32_t *run_keys, const uint32_t *keys, uint32_t off, xyzz_t<F> *buckets)
{
    const uint32_t r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r >= *Rp)
        return;
    xyzz_t<F> q;
    xyzz_set_inf(q);
    for (uint32_t i = start[r], e = i + cnt[r]; i < e; i++) {
        const aff_t<F> a = ld_global(pts + i);
        if (!aff_is_inf(a))
            xyzz_add_aff(q, a);
    }
    const uint32_t key = run_keys[r];
    if (r == 0 && off > 0 && keys[off - 1] == key) {
        xyzz_t<F> b = buckets[key];
        xyzz_add(b, q);
        q = b;
    }
    st_global(buckets + key, q);
}

#endif
