/*
 * msm_ba.cuh — batch-affine bucket sums for the Pippenger MSM (msm_kernels.cuh).
 *
 * Input: the sorted (key, value) pairs of msm_run's step 2.  Output: the dense
 * XYZZ bucket array, every bucket the sum of its points (infinity where none).
 *
 * The pairs are taken in chunks (as many as the workspace's scratch holds:
 * ba_init, ba_chunk).  In a chunk, each bucket's run of points is summed as a
 * binary tree, one level at a time: a level replaces every run of k points by
 * ceil(k/2), point 2j + 1 added to point 2j, the last one copied when k is
 * odd.  Every addition of a level is independent, so all of them share one
 * inversion (Montgomery's trick across the whole level), and each costs an
 * affine addition: the slope λ = (y2 − y1)/(x2 − x1), x3 = λ² − x1 − x2,
 * y3 = λ(x1 − x3) − y1, i.e. 3 products, plus 3 for the shared inversion
 * (6 against the 8 products and 2 squarings of a mixed XYZZ addition).
 *
 * A level is three steps:
 *   k_ba_pre   thread t of T takes outputs t, t + T, ... (K of them, so a
 *              warp touches consecutive outputs), records each one's operand
 *              codes (OPS), computes its denominator d (x2 − x1; 2 y1 for a
 *              doubling; 1 for a copy, an infinity operand or P + (−P)) and
 *              stores the running product of its d's (P[o]) and the whole
 *              product (TP[t]);
 *   batch_inv  TP[0..T) inverted in place, by the same trick in a tree of
 *              chunks of BINV_K (one Fermat inversion for the level);
 *   k_ba_add   thread t walks its outputs backwards: 1/d_o = 1/P[o] · P[o−T],
 *              1/P[o−T] = 1/P[o] · d_o, and writes the sum (G2: lane pair t,
 *              k_ba_add_p2, each lane one component of every Fp2 value).
 * The first level reads the points through the sorted values from the bases
 * (sign bit: negate y); later levels read the previous level's output.
 * Infinity is the all-zero affine point (not on either curve).  The denominator
 * is never zero: a d that would be (x1 = x2 with y1 ≠ y2, or y1 = 0 for a
 * doubling) means the sum is infinity and d = 1 is used instead, so one bad
 * pair cannot spoil the level's shared inversion.
 * Each level costs about one single-thread inversion on top of its additions,
 * so once a level would add fewer than CZK_CUDA_MSM_BA_STOP thousand pairs
 * (most runs are down to one point) the levels stop, and k_ba_finish sums
 * what is left of each run in XYZZ and writes it into its bucket; the first
 * run of a chunk that continues the previous chunk's last bucket is added to
 * it instead.
 * Not constant time (neither is the rest of the MSM): the work depends on
 * how the digits fall into buckets.
 */
#ifndef CZK_CUDA_MSM_BA_CUH
#define CZK_CUDA_MSM_BA_CUH

#define BINV_K 32u   /* elements per thread in each step of batch_inv's tree */
#define BA_RESID 512u /* most points per run k_ba_finish is left to sum */

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
template <class F> FF_DEV aff_t<F> ba_point(const aff_t<F> *src, uint32_t code)
{
    aff_t<F> p = ld_global(src + (code >> 1));
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
__global__ void __launch_bounds__(128) k_ba_pre(const aff_t<F> *src, const uint32_t *vals, ba_lvl L, uint32_t K,
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
            const F x1 = ld_global(&src[c.x >> 1].x), x2 = ld_global(&src[c.y >> 1].x);
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
__global__ void __launch_bounds__(128) k_ba_add(const aff_t<F> *src, ba_lvl L, uint32_t K, uint32_t T, const F *P,
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
template <class B> FF_DEV aff_t<B> p2_ba_point(const p2ctx &pk, const aff_t<fp2x<B>> *src, uint32_t code)
{
    aff_t<B> p = p2_ld_aff(pk, src, code >> 1);
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

/* 3 blocks per SM for BLS12-381 (168 registers, 12 warps, against 251 and
 * 8 warps for one G2 output per thread), 4 for BN254 (120 registers) */
#define BA_P2_BLOCKS(B) (ff_traits<B>::N > 8 ? 3 : 4)
template <class B>
__global__ void __launch_bounds__(128, BA_P2_BLOCKS(B))
    k_ba_add_p2(const aff_t<fp2x<B>> *src, ba_lvl L, uint32_t K, uint32_t T, const fp2x<B> *P, const fp2x<B> *TPinv,
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
                B d; /* the denominator: x2 − x1, or 2 y1 for a doubling */
                if (cs == BA_ADD)
                    sub(d, q.x, p.x);
                else
                    dbl(d, p.y);
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
            p2_mul(pk, lam, lam, id);
            p2_sqr(pk, t1, lam);
            sub(t1, t1, p.x);
            sub(r.x, t1, q.x); /* q.x = p.x for a doubling */
            sub(t1, p.x, r.x);
            p2_mul(pk, t1, t1, lam);
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

/* k_ba_add's launch: G1 one output per thread, G2 on lane pairs */
template <class F>
static void ba_add_launch(const aff_t<F> *src, const ba_lvl &L, uint32_t K, uint32_t T, const F *P, const F *TP,
                          const uint2 *OPS, aff_t<F> *dst, cudaStream_t s)
{
    k_ba_add<F><<<grid_for(T, 128), 128, 0, s>>>(src, L, K, T, P, TP, OPS, dst);
}
template <class B>
static void ba_add_launch(const aff_t<fp2x<B>> *src, const ba_lvl &L, uint32_t K, uint32_t T, const fp2x<B> *P,
                          const fp2x<B> *TP, const uint2 *OPS, aff_t<fp2x<B>> *dst, cudaStream_t s)
{
    k_ba_add_p2<B><<<grid_for(2 * (size_t)T, 128), 128, 0, s>>>(src, L, K, T, P, TP, OPS, dst);
}

/* ---- the shared inversion: x[0..n) <- 1 / x[i] (all nonzero) ---- */

/* pre[i] = x[uK] ... x[i] within thread u's chunk, up[u] = the chunk's product */
template <class F> __global__ void k_binv_up(const F *x, uint32_t n, F *pre, F *up)
{
    const uint32_t u = blockIdx.x * blockDim.x + threadIdx.x, i0 = u * BINV_K;
    if (i0 >= n)
        return;
    const uint32_t e = n - i0 > BINV_K ? i0 + BINV_K : n;
    F acc = x[i0];
    pre[i0] = acc;
    for (uint32_t i = i0 + 1; i < e; i++) {
        mul(acc, acc, x[i]);
        pre[i] = acc;
    }
    up[u] = acc;
}

/* x[0] <- 1 / x[0] (one thread) */
template <class F> __global__ void k_binv_one(F *x)
{
    F r;
    inv(r, x[0]);
    x[0] = r;
}

/* upinv[u] = 1 / (chunk u's product): x[i] <- 1 / x[i] over the chunk */
template <class F> __global__ void k_binv_down(F *x, uint32_t n, const F *pre, const F *upinv)
{
    const uint32_t u = blockIdx.x * blockDim.x + threadIdx.x, i0 = u * BINV_K;
    if (i0 >= n)
        return;
    const uint32_t e = n - i0 > BINV_K ? i0 + BINV_K : n;
    F acc = upinv[u];
    for (uint32_t i = e - 1; i > i0; i--) {
        F xi = x[i], r;
        mul(r, acc, pre[i - 1]);
        x[i] = r;
        mul(acc, acc, xi);
    }
    x[i0] = acc;
}

/* scratch elements batch_inv needs for n: pre and up of every step */
static size_t binv_scratch(size_t n)
{
    size_t s = 0;
    while (n > 1) {
        const size_t up = (n + BINV_K - 1) / BINV_K;
        s += n + up;
        n = up;
    }
    return s + 1;
}

template <class F> static void batch_inv(F *x, uint32_t n, F *scr, cudaStream_t s)
{
    if (n == 1) {
        k_binv_one<F><<<1, 1, 0, s>>>(x);
        return;
    }
    const uint32_t up = (n + BINV_K - 1) / BINV_K;
    F *pre = scr, *u = scr + n;
    k_binv_up<F><<<grid_for(up, 128), 128, 0, s>>>(x, n, pre, u);
    batch_inv<F>(u, up, u + up, s);
    k_binv_down<F><<<grid_for(up, 128), 128, 0, s>>>(x, n, pre, u);
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

/* ---- the driver ---- */

/* outputs per thread of a level (CZK_CUDA_MSM_BA_K, benchmarks; read once) */
static unsigned ba_k(void)
{
    static const unsigned K = env_uint("CZK_CUDA_MSM_BA_K", 64);
    return K ? K : 64;
}

/* outputs of the levels of a chunk of ch pairs into nb buckets, at most:
 * every run of k points gives ceil(k / 2), so level 0 has at most half =
 * (ch + nb) / 2 + 1 outputs and level 1 at most (half + nb) / 2 + 1 (the
 * even levels write buffer 0, the odd ones buffer 1) */
static size_t ba_half(size_t ch, size_t nb) { return (ch + nb) / 2 + 1; }
static size_t ba_quarter(size_t ch, size_t nb) { return (ba_half(ch, nb) + nb) / 2 + 1; }

/* scratch bytes for chunks of ch pairs into nb buckets, field elements of
 * fb bytes: the two point buffers, the prefix products P and operand codes
 * of level 0's outputs, TP and batch_inv's tree */
static size_t ba_need(size_t ch, size_t nb, size_t fb)
{
    const size_t half = ba_half(ch, nb), tmax = (half + ba_k() - 1) / ba_k();
    return (half + ba_quarter(ch, nb)) * 2 * fb + half * (fb + sizeof(uint2)) + (tmax + binv_scratch(tmax)) * fb + 256;
}

/* the largest chunk (at most `pairs`, at least 2 nb or all the pairs) that
 * `bytes` of scratch hold; 0: none */
static size_t ba_chunk(size_t bytes, size_t pairs, size_t nb, size_t fb)
{
    size_t lo = pairs < 2 * nb ? pairs : 2 * nb, hi = pairs;
    if (ba_need(lo, nb, fb) > bytes)
        return 0;
    while (lo < hi) {
        const size_t mid = lo + (hi - lo + 1) / 2;
        if (ba_need(mid, nb, fb) <= bytes)
            lo = mid;
        else
            hi = mid - 1;
    }
    return lo;
}

/* the scratch of ws (init): a chunk of all cap_pairs pairs of points with
 * field elements of fb bytes, capped at CZK_CUDA_MSM_BA_MB MiB (default
 * CZK_CUDA_MSM_BA_MB_DEFAULT) and at a quarter of the device memory free,
 * halved while the device cannot give it (to 1/16); without it (or with CZK_CUDA_MSM_BA=0) every MSM runs the XYZZ
 * first level */
#define CZK_CUDA_MSM_BA_MB_DEFAULT 24576u
static int ba_init(czk_msm_ws *ws, size_t fb)
{
    ws->ba_mem = NULL;
    ws->ba_bytes = 0;
    if (!env_uint("CZK_CUDA_MSM_BA", 1))
        return 0;
    for (int i = 0; i < 2; i++) {
        CZK_CU(cudaMalloc((void **)&ws->ba_cnt[i], (ws->cap_buckets + 1) * 4));
        CZK_CU(cudaMalloc((void **)&ws->ba_start[i], (ws->cap_buckets + 1) * 4));
    }
    size_t cap = (size_t)env_uint("CZK_CUDA_MSM_BA_MB", CZK_CUDA_MSM_BA_MB_DEFAULT) << 20;
    size_t dev_free = 0, dev_total = 0;
    if (cudaMemGetInfo(&dev_free, &dev_total) == cudaSuccess && cap > dev_free / 4)
        cap = dev_free / 4; /* keys and tables come after the context */
    const size_t want = ba_need(ws->cap_pairs, ws->cap_buckets, fb);
    size_t b = want < cap ? want : cap;
    const size_t least = b / 16;
    for (; b >= least && b > 0; b /= 2) {
        if (cudaMalloc(&ws->ba_mem, b) == cudaSuccess) {
            ws->ba_bytes = b;
            return 0;
        }
        cudaGetLastError();
        ws->ba_mem = NULL;
    }
    return 0;
}

static void ba_free(czk_msm_ws *ws)
{
    cudaFree(ws->ba_mem);
    for (int i = 0; i < 2; i++) {
        cudaFree(ws->ba_cnt[i]);
        cudaFree(ws->ba_start[i]);
    }
}

/* the chunk for an MSM of plan p over points with field F in ws's scratch
 * (0: it has none big enough; msm_run runs the XYZZ first level) */
template <class F> static size_t ba_plan(const czk_msm_ws *ws, const msm_plan &p)
{
    return ws->ba_bytes ? ba_chunk(ws->ba_bytes, p.pairs, p.nbuckets, sizeof(F)) : 0;
}

/* the buckets of plan p (ws->buckets) from the sorted pairs (ws->keys[1],
 * ws->vals[1]), in chunks of ch pairs */
template <class F>
static int ba_buckets(czk_cuda_ctx *ctx, const aff_t<F> *bases, const msm_plan &p, size_t ch, bool prof,
                      cudaStream_t s)
{
    czk_msm_ws *ws = &ctx->msm;
    xyzz_t<F> *buckets = (xyzz_t<F> *)ws->buckets;
    static const unsigned stop_k = env_uint("CZK_CUDA_MSM_BA_STOP", 4000);
    const unsigned K = ba_k();
    const size_t nb = p.nbuckets;
    const size_t half = ba_half(ch, nb); /* outputs of a level, at most */
    const size_t tmax = (half + K - 1) / K; /* threads of a level */
    uint32_t *cnt[2] = {ws->ba_cnt[0], ws->ba_cnt[1]}, *start[2] = {ws->ba_start[0], ws->ba_start[1]};
    aff_t<F> *buf[2] = {(aff_t<F> *)ws->ba_mem, (aff_t<F> *)ws->ba_mem + half};
    F *P = (F *)(buf[1] + ba_quarter(ch, nb)), *TP = P + half, *scr = TP + tmax;
    uint2 *OPS = (uint2 *)(scr + binv_scratch(tmax));
    uint32_t *hc = ws->host_counters;

    CZK_CU(cudaMemsetAsync(buckets, 0, nb * sizeof(xyzz_t<F>), s));
    k_ba_real<<<1, 1, 0, s>>>(ws->keys[1], (uint32_t)p.pairs, ws->counters + 6);
    CZK_CU(cudaMemcpyAsync(hc + 6, ws->counters + 6, 4, cudaMemcpyDeviceToHost, s));
    CZK_CU(cudaStreamSynchronize(s));
    const uint32_t M = hc[6];
    double tl = prof ? prof_ms() : 0;
    for (uint32_t off = 0; off < M; off += (uint32_t)ch) {
        const uint32_t m = M - off > ch ? (uint32_t)ch : M - off;
        size_t tmp = ws->cub_bytes;
        CZK_CU(cub::DeviceRunLengthEncode::Encode(ws->cub_tmp, tmp, ws->keys[1] + off, ws->run_keys, cnt[0],
                                                  ws->counters, (int)m, s));
        k_ba_max<<<1, 256, 0, s>>>(cnt[0], ws->counters, ws->counters);
        CZK_CU(cudaMemcpyAsync(hc, ws->counters, 2 * 4, cudaMemcpyDeviceToHost, s));
        CZK_CU(cudaStreamSynchronize(s));
        const uint32_t R = hc[0], maxc = hc[1];
        if (R > nb)
            return czk_cuda_errf_(-EIO, "msm: %u bucket runs in a chunk, %zu buckets", R, nb);
        tmp = ws->cub_bytes;
        CZK_CU(cub::DeviceScan::ExclusiveSum(ws->cub_tmp, tmp, cnt[0], start[0], (int)R, s));
        unsigned levels = 1;
        while (((uint64_t)1 << levels) < maxc)
            levels++;
        const aff_t<F> *src = bases;
        size_t bound = m;
        int a = 0;
        for (unsigned lv = 0; lv < levels; lv++) {
            /* the last levels add few points (most runs are down to one):
             * leave what remains to k_ba_finish once a level would add fewer
             * than stop_k thousand pairs and every run has fewer than BA_RESID
             * points left (k_ba_finish sums a run on one thread: a run of the
             * short top window can hold 2^26 / 2^7 points) */
            if (lv > 0 && (bound - R) / 2 < (size_t)stop_k * 1000 && ((maxc - 1) >> lv) < BA_RESID)
                break;
            k_ba_half<<<grid_for(R, 256), 256, 0, s>>>(cnt[a], R, cnt[1 - a]);
            tmp = ws->cub_bytes;
            CZK_CU(cub::DeviceScan::ExclusiveSum(ws->cub_tmp, tmp, cnt[1 - a], start[1 - a], (int)R, s));
            if ((bound + R) / 2 + 1 < bound)
                bound = (bound + R) / 2 + 1; /* level outputs: at most ceil(inputs / 2) per run */
            const uint32_t T = (uint32_t)((bound + K - 1) / K);
            /* the run of each output: the sorted keys and values of step 1
             * (free after the sort) hold the head flags and their sums */
            uint32_t *flag = ws->keys[0], *run = ws->vals[0];
            CZK_CU(cudaMemsetAsync(flag, 0, bound * 4, s));
            k_ba_heads<<<grid_for(R, 256), 256, 0, s>>>(start[1 - a], R, flag);
            tmp = 0;
            CZK_CU(cub::DeviceScan::InclusiveSum(NULL, tmp, flag, run, (int)bound, s));
            if (tmp > ws->cub_bytes)
                return czk_cuda_errf_(-ENOMEM, "msm: scan of %zu outputs needs %zu bytes of scratch, %zu", bound, tmp,
                                      ws->cub_bytes);
            tmp = ws->cub_bytes;
            CZK_CU(cub::DeviceScan::InclusiveSum(ws->cub_tmp, tmp, flag, run, (int)bound, s));
            const ba_lvl L = {start[a], cnt[a], start[1 - a], cnt[1 - a], run, R};
            aff_t<F> *dst = buf[lv & 1];
            const uint32_t *vals = ws->vals[1] + off;
            if (lv == 0)
                k_ba_pre<F, true><<<grid_for(T, 128), 128, 0, s>>>(src, vals, L, K, T, P, TP, OPS);
            else
                k_ba_pre<F, false><<<grid_for(T, 128), 128, 0, s>>>(src, vals, L, K, T, P, TP, OPS);
            batch_inv<F>(TP, T, scr, s);
            ba_add_launch(src, L, K, T, P, TP, OPS, dst, s);
            CZK_CU_LAUNCH("k_ba level");
            src = dst;
            a = 1 - a;
            if (prof) {
                CZK_CU(cudaStreamSynchronize(s));
                double t_ = prof_ms();
                fprintf(stderr, "msm ba chunk %u level %u: %.3f ms (R=%u, max %u)\n", off, lv, t_ - tl, R, maxc);
                tl = t_;
            }
        }
        k_ba_finish<F><<<grid_for(R, 128), 128, 0, s>>>(src, start[a], cnt[a], ws->counters, ws->run_keys,
                                                        ws->keys[1], off, buckets);
        CZK_CU_LAUNCH("k_ba_finish");
    }
    return 0;
}

#endif
