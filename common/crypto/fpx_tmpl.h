/*
 * fpx_tmpl.h — eight lanes of one prime field Fp (and of Fp2 = Fp[u]/(u^2 + 1)
 * on top) in radix 2^52 with AVX-512 IFMA, written once for any limb count.
 * Included by fpx8.h (BLS12-381: 8 limbs) and bn254_fpx8.h (BN254: 5 limbs),
 * which describe the field before including it.  Private to common/: not a
 * contract header.
 *
 * Parameters (the includer defines them; this file undefines them):
 *   FPX_T, FP2X_T    the lane types to define (Fp, Fp2)
 *   FPX(n), FP2X(n)  their function names (e.g. czk_fpx8_##n)
 *   FPX_FE, FPX_FE2  the scalar types (4 or 6 64-bit words, Montgomery form)
 *   FPX_NL           limbs of 52 bits
 *   FPX_NW           64-bit words of FPX_FE
 *   FPX_Q, FPX_2Q    static uint64_t[FPX_NL] arrays: q and 2q in radix 2^52
 *   FPX_QINV         -q^-1 mod 2^52
 *   FPX_TOP_BITS     bits of the last Montgomery step: the scalar field's
 *                    Montgomery radix is R = 2^(52 (FPX_NL - 1) + FPX_TOP_BITS)
 *   FPX_WIDE         1 when a product's window (t / 2^(52 (FPX_NL - 1)) for
 *                    t = a b + m q) can exceed 2^(52 FPX_NL): then its top limb
 *                    takes part in the final shift; 0 when it is always zero
 *   FPX_SUB_OP_LAZY  1 when a product of values below 3q and 2q comes out
 *                    below 2q (6 q^2 / R < q), so that FPX(sub_op) may stay
 *                    lazy; 0 makes FPX(sub_op) canonical
 *   FPX_NO_FP2       (optional) no Fp2 on top (a scalar field such as Fr):
 *                    FP2X_T, FP2X(n) and FPX_FE2 are then not used
 *   FPX_DEFINE_OOL   (optional) also define the out-of-line functions and
 *                    the array wrappers here (fpx_ool_tmpl.h): one .c file
 *                    per field does
 *
 * Representation: FPX_T holds 8 field elements "lane-sliced": l[k] is a
 * vector of the 8 elements' limb k, each limb normalised (< 2^52).  The
 * values are the scalar code's Montgomery residues (x R mod q), so
 * conversion is bit shuffling only.  The Montgomery product divides by R:
 * FPX_NL - 1 reduction steps of 52 bits and one of FPX_TOP_BITS, then a
 * right shift of the limbs by FPX_TOP_BITS.
 *
 * Bounds.  For a b < k q^2 the product comes out below (k q / R + 1) q; the
 * "full" products subtract q once, so they need a b < q R (BLS12-381: about
 * 9.8 q^2, BN254: 5.29 q^2).  Inputs and outputs are canonical (below q)
 * unless a function says "lazy"; every function allows its output to
 * alias its inputs.  Every function is compiled for avx512f/ifma/vl/bw/dq
 * (CZK_IFMA); call them only after czk_fpx8_enabled() returned true.
 */

#ifdef CZK_HAVE_FPX8

typedef struct FPX_T { __m512i l[FPX_NL]; } FPX_T;

/*
 * Carries.  After an addition or subtraction limb by limb, one parallel pass
 * (each limb keeps its low 52 bits and takes the signed carry of the limb
 * below) almost always normalises: only a carry that ripples on through a
 * limb of all ones (or a borrow through a zero limb) leaves a limb outside
 * [0, 2^52), which is tested for and then fixed by the serial pass.  Values
 * are taken mod 2^(52 n): every caller's value lies in [0, 2^(52 n)).
 */
CZK_IFMA_INLINE void FPX(norm_serial_)(__m512i *v, int n)
{
    const __m512i m52 = _mm512_set1_epi64((long long)CZK_FPX8_M52);
    __m512i c = _mm512_setzero_si512();
    int k;

    CZK_FPX8_UNROLL
    for (k = 0; k < n; k++) {
        __m512i x = _mm512_add_epi64(v[k], c);
        c = _mm512_srai_epi64(x, 52);
        v[k] = _mm512_and_si512(x, m52);
    }
}

/* v[0..n-1] = the limbs of sum_k t[k] 2^(52 k) mod 2^(52 n), normalised
 * (t's limbs signed 64-bit values) */
CZK_IFMA_INLINE void FPX(carry_)(__m512i *v, const __m512i *t, int n)
{
    const __m512i m52 = _mm512_set1_epi64((long long)CZK_FPX8_M52);
    __m512i bad = _mm512_setzero_si512();
    int k;

    v[0] = _mm512_and_si512(t[0], m52);
    CZK_FPX8_UNROLL
    for (k = 1; k < n; k++) {
        v[k] = _mm512_add_epi64(_mm512_and_si512(t[k], m52), _mm512_srai_epi64(t[k - 1], 52));
        bad = _mm512_or_si512(bad, v[k]);
    }
    if (CZK_FPX8_UNLIKELY(_mm512_test_epi64_mask(bad, _mm512_set1_epi64(~(long long)CZK_FPX8_M52))))
        FPX(norm_serial_)(v, n);
}

CZK_IFMA_INLINE void FPX(norm_)(FPX_T *r, const __m512i t[FPX_NL])
{
    __m512i v[FPX_NL];
    int k;

    FPX(carry_)(v, t, FPX_NL);
    CZK_FPX8_UNROLL
    for (k = 0; k < FPX_NL; k++)
        r->l[k] = v[k];
}

/* lane-wise r = u - q if u >= q else u, for normalised u.  The top limbs
 * decide unless they are equal (rare), when the exact borrow chain does. */
CZK_IFMA_INLINE void FPX(reduce1_)(FPX_T *r, const __m512i u[FPX_NL])
{
    const __m512i qt = _mm512_set1_epi64((long long)FPX_Q[FPX_NL - 1]);
    __mmask8 ge = _mm512_cmpge_epu64_mask(u[FPX_NL - 1], qt);
    __m512i t[FPX_NL];
    int k;

    if (CZK_FPX8_UNLIKELY(_mm512_cmpeq_epu64_mask(u[FPX_NL - 1], qt))) {
        const __m512i m52 = _mm512_set1_epi64((long long)CZK_FPX8_M52);
        __m512i br = _mm512_setzero_si512();
        CZK_FPX8_UNROLL
        for (k = 0; k < FPX_NL; k++) {
            __m512i x = _mm512_add_epi64(_mm512_sub_epi64(u[k], _mm512_set1_epi64((long long)FPX_Q[k])), br);
            br = _mm512_srai_epi64(x, 52);
            t[k] = _mm512_and_si512(x, m52);
        }
        ge = (__mmask8)~_mm512_movepi64_mask(br); /* no borrow out: u >= q */
        CZK_FPX8_UNROLL
        for (k = 0; k < FPX_NL; k++)
            r->l[k] = _mm512_mask_blend_epi64(ge, u[k], t[k]);
        return;
    }
    if (!ge) {
        CZK_FPX8_UNROLL
        for (k = 0; k < FPX_NL; k++)
            r->l[k] = u[k];
        return;
    }
    CZK_FPX8_UNROLL
    for (k = 0; k < FPX_NL; k++)
        t[k] = _mm512_mask_sub_epi64(u[k], ge, u[k], _mm512_set1_epi64((long long)FPX_Q[k]));
    FPX(norm_)(r, t);
}

/* the end of a Montgomery product: w[0..FPX_NL] are the unsigned column sums
 * from column FPX_NL - 1 up, after the last (FPX_TOP_BITS) step cleared the
 * low bits of w[0]: normalise, shift right by FPX_TOP_BITS, and subtract q
 * once when `full` */
CZK_IFMA_INLINE void FPX(mont_out_)(FPX_T *r, const __m512i *w, int full)
{
    enum { NV = FPX_NL + FPX_WIDE, SH = FPX_TOP_BITS };
    const __m512i m52 = _mm512_set1_epi64((long long)CZK_FPX8_M52);
    __m512i v[FPX_NL + 1], u[FPX_NL];
    int i;

    FPX(carry_)(v, w, NV); /* column sums below 2^58: the signed shifts are unsigned ones */
    CZK_FPX8_UNROLL
    for (i = 0; i < FPX_NL - 1; i++)
        u[i] = _mm512_or_si512(_mm512_srli_epi64(v[i], SH), _mm512_and_si512(_mm512_slli_epi64(v[i + 1], 52 - SH), m52));
    u[FPX_NL - 1] = _mm512_srli_epi64(v[FPX_NL - 1], SH);
    if (FPX_WIDE)
        u[FPX_NL - 1] = _mm512_or_si512(u[FPX_NL - 1], _mm512_and_si512(_mm512_slli_epi64(v[NV - 1], 52 - SH), m52));
    if (full) {
        FPX(reduce1_)(r, u);
    } else {
        CZK_FPX8_UNROLL
        for (i = 0; i < FPX_NL; i++)
            r->l[i] = u[i];
    }
}

/* r = a * b / R (Montgomery product, the scalar code's residue), reduced
 * below q when `full` is set (a b < q R, see the bounds above).  Operand
 * scanning: for each limb a_i, t += a_i b, then one Montgomery step clears
 * t's low limb and the window moves up one limb; the last step clears
 * FPX_TOP_BITS bits only. */
CZK_IFMA_INLINE void FPX(mul_)(FPX_T *r, const FPX_T *a, const FPX_T *b, int full)
{
    const __m512i qinv = _mm512_set1_epi64((long long)FPX_QINV);
    const __m512i zero = _mm512_setzero_si512();
    __m512i t[FPX_NL + 1], bl[FPX_NL];
    int i, j;

    CZK_FPX8_UNROLL
    for (j = 0; j < FPX_NL; j++)
        bl[j] = b->l[j];
    CZK_FPX8_UNROLL
    for (j = 0; j <= FPX_NL; j++)
        t[j] = zero;
    CZK_FPX8_UNROLL
    for (i = 0; i < FPX_NL; i++) {
        const __m512i ai = a->l[i];
        __m512i m;
        CZK_FPX8_UNROLL
        for (j = 0; j < FPX_NL; j++) {
            t[j] = _mm512_madd52lo_epu64(t[j], ai, bl[j]);
            t[j + 1] = _mm512_madd52hi_epu64(t[j + 1], ai, bl[j]);
        }
        m = _mm512_madd52lo_epu64(zero, t[0], qinv);
        if (i == FPX_NL - 1)
            m = _mm512_and_si512(m, _mm512_set1_epi64((long long)((1ULL << FPX_TOP_BITS) - 1)));
        CZK_FPX8_UNROLL
        for (j = 0; j < FPX_NL; j++) {
            const __m512i qj = _mm512_set1_epi64((long long)FPX_Q[j]);
            t[j] = _mm512_madd52lo_epu64(t[j], m, qj);
            t[j + 1] = _mm512_madd52hi_epu64(t[j + 1], m, qj);
        }
        if (i < FPX_NL - 1) {
            t[1] = _mm512_add_epi64(t[1], _mm512_srli_epi64(t[0], 52));
            CZK_FPX8_UNROLL
            for (j = 0; j < FPX_NL; j++)
                t[j] = t[j + 1];
            t[FPX_NL] = zero;
        }
    }
    FPX(mont_out_)(r, t, full);
}

/* r = a * b / R mod q, canonical (a b < q R) */
CZK_IFMA_INLINE void FPX(mul)(FPX_T *r, const FPX_T *a, const FPX_T *b)
{
    FPX(mul_)(r, a, b, 1);
}

/* the same residue, lazy: below (a b / (q R) + 1) q */
CZK_IFMA_INLINE void FPX(mul_lazy)(FPX_T *r, const FPX_T *a, const FPX_T *b)
{
    FPX(mul_)(r, a, b, 0);
}

/* r = a^2 / R mod q, canonical (a^2 < q R): the cross products once, doubled,
 * then the same Montgomery steps as FPX(mul_) */
CZK_IFMA_INLINE void FPX(sqr)(FPX_T *r, const FPX_T *a)
{
    const __m512i qinv = _mm512_set1_epi64((long long)FPX_QINV);
    const __m512i zero = _mm512_setzero_si512();
    __m512i t[2 * FPX_NL];
    int i, j;

    CZK_FPX8_UNROLL
    for (i = 0; i < 2 * FPX_NL; i++)
        t[i] = zero;
    CZK_FPX8_UNROLL
    for (i = 0; i < FPX_NL; i++)
        CZK_FPX8_UNROLL
        for (j = i + 1; j < FPX_NL; j++) {
            t[i + j] = _mm512_madd52lo_epu64(t[i + j], a->l[i], a->l[j]);
            t[i + j + 1] = _mm512_madd52hi_epu64(t[i + j + 1], a->l[i], a->l[j]);
        }
    CZK_FPX8_UNROLL
    for (i = 0; i < 2 * FPX_NL; i++)
        t[i] = _mm512_add_epi64(t[i], t[i]);
    CZK_FPX8_UNROLL
    for (i = 0; i < FPX_NL; i++) {
        t[2 * i] = _mm512_madd52lo_epu64(t[2 * i], a->l[i], a->l[i]);
        t[2 * i + 1] = _mm512_madd52hi_epu64(t[2 * i + 1], a->l[i], a->l[i]);
    }
    /* column sums stay below 2^58 */
    CZK_FPX8_UNROLL
    for (i = 0; i < FPX_NL; i++) {
        __m512i m = _mm512_madd52lo_epu64(zero, t[i], qinv);
        if (i == FPX_NL - 1)
            m = _mm512_and_si512(m, _mm512_set1_epi64((long long)((1ULL << FPX_TOP_BITS) - 1)));
        CZK_FPX8_UNROLL
        for (j = 0; j < FPX_NL; j++) {
            const __m512i qj = _mm512_set1_epi64((long long)FPX_Q[j]);
            t[i + j] = _mm512_madd52lo_epu64(t[i + j], m, qj);
            t[i + j + 1] = _mm512_madd52hi_epu64(t[i + j + 1], m, qj);
        }
        if (i < FPX_NL - 1)
            t[i + 1] = _mm512_add_epi64(t[i + 1], _mm512_srli_epi64(t[i], 52));
    }
    FPX(mont_out_)(r, &t[FPX_NL - 1], 1);
}

/* r = a + b mod q (a, b canonical) */
CZK_IFMA_INLINE void FPX(add)(FPX_T *r, const FPX_T *a, const FPX_T *b)
{
    __m512i t[FPX_NL];
    FPX_T u;
    int k;

    CZK_FPX8_UNROLL
    for (k = 0; k < FPX_NL; k++)
        t[k] = _mm512_add_epi64(a->l[k], b->l[k]);
    FPX(norm_)(&u, t);
    FPX(reduce1_)(r, u.l);
}

/* r = a - b mod q (a, b canonical): a - b, plus q where the top limbs say
 * a < b; equal top limbs (rare) take the exact borrow chain */
CZK_IFMA_INLINE void FPX(sub)(FPX_T *r, const FPX_T *a, const FPX_T *b)
{
    __m512i t[FPX_NL];
    __mmask8 neg;
    int k;

    if (CZK_FPX8_UNLIKELY(_mm512_cmpeq_epu64_mask(a->l[FPX_NL - 1], b->l[FPX_NL - 1]))) {
        const __m512i m52 = _mm512_set1_epi64((long long)CZK_FPX8_M52);
        __m512i br = _mm512_setzero_si512();
        CZK_FPX8_UNROLL
        for (k = 0; k < FPX_NL; k++) {
            __m512i x = _mm512_add_epi64(_mm512_sub_epi64(a->l[k], b->l[k]), br);
            br = _mm512_srai_epi64(x, 52);
            t[k] = x;
        }
        neg = _mm512_movepi64_mask(br);
        CZK_FPX8_UNROLL
        for (k = 0; k < FPX_NL; k++)
            t[k] = _mm512_and_si512(t[k], m52);
        /* t holds a - b (+ 2^(52 FPX_NL) where negative), normalised */
        CZK_FPX8_UNROLL
        for (k = 0; k < FPX_NL; k++)
            t[k] = _mm512_mask_add_epi64(t[k], neg, t[k], _mm512_set1_epi64((long long)FPX_Q[k]));
        FPX(norm_)(r, t);
        return;
    }
    neg = _mm512_cmplt_epu64_mask(a->l[FPX_NL - 1], b->l[FPX_NL - 1]);
    CZK_FPX8_UNROLL
    for (k = 0; k < FPX_NL; k++) {
        t[k] = _mm512_sub_epi64(a->l[k], b->l[k]);
        t[k] = _mm512_mask_add_epi64(t[k], neg, t[k], _mm512_set1_epi64((long long)FPX_Q[k]));
    }
    FPX(norm_)(r, t);
}

/* lazy r = (neg ? -a : a) + 2q - b per lane: below 3q when a, b < q (and
 * below 4q for neg = 0, a < 2q, b <= 2q) */
CZK_IFMA_INLINE void FPX(csub_lazy)(FPX_T *r, const FPX_T *a, __mmask8 neg, const FPX_T *b)
{
    const __m512i zero = _mm512_setzero_si512();
    __m512i t[FPX_NL];
    int k;

    CZK_FPX8_UNROLL
    for (k = 0; k < FPX_NL; k++) {
        __m512i sa = _mm512_mask_sub_epi64(a->l[k], neg, zero, a->l[k]);
        t[k] = _mm512_sub_epi64(_mm512_add_epi64(sa, _mm512_set1_epi64((long long)FPX_2Q[k])), b->l[k]);
    }
    FPX(norm_)(r, t);
}

/* lazy r = a + 2q - b, not reduced: below 4q when a < 2q and b <= 2q */
CZK_IFMA_INLINE void FPX(sub_lazy)(FPX_T *r, const FPX_T *a, const FPX_T *b)
{
    FPX(csub_lazy)(r, a, 0, b);
}

/* r = a - b (a, b canonical) as a product operand: below 3q where
 * FPX_SUB_OP_LAZY (its products with values below 2q stay below 2q),
 * canonical otherwise */
CZK_IFMA_INLINE void FPX(sub_op)(FPX_T *r, const FPX_T *a, const FPX_T *b)
{
    if (FPX_SUB_OP_LAZY)
        FPX(sub_lazy)(r, a, b);
    else
        FPX(sub)(r, a, b);
}

/* lazy r = a + b, not reduced (below 2q for canonical a, b) */
CZK_IFMA_INLINE void FPX(add_lazy)(FPX_T *r, const FPX_T *a, const FPX_T *b)
{
    __m512i t[FPX_NL];
    int k;

    CZK_FPX8_UNROLL
    for (k = 0; k < FPX_NL; k++)
        t[k] = _mm512_add_epi64(a->l[k], b->l[k]);
    FPX(norm_)(r, t);
}

/* r = a mod q for a < 3q (two conditional subtractions) */
CZK_IFMA_INLINE void FPX(canon3)(FPX_T *r, const FPX_T *a)
{
    FPX_T t;
    FPX(reduce1_)(&t, a->l);
    FPX(reduce1_)(r, t.l);
}

/* r = -a mod q in the lanes of mask (0 stays 0), a elsewhere (a canonical) */
CZK_IFMA_INLINE void FPX(cneg)(FPX_T *r, const FPX_T *a, __mmask8 mask)
{
    __m512i nz = _mm512_setzero_si512(), t[FPX_NL];
    FPX_T d;
    int k;

    CZK_FPX8_UNROLL
    for (k = 0; k < FPX_NL; k++) {
        t[k] = _mm512_sub_epi64(_mm512_set1_epi64((long long)FPX_Q[k]), a->l[k]);
        nz = _mm512_or_si512(nz, a->l[k]);
    }
    FPX(norm_)(&d, t);
    mask &= _mm512_test_epi64_mask(nz, nz);
    CZK_FPX8_UNROLL
    for (k = 0; k < FPX_NL; k++)
        r->l[k] = _mm512_mask_blend_epi64(mask, a->l[k], d.l[k]);
}

/* FPX_NW 64-bit limb vectors (limb k of 8 scalar elements) -> radix 2^52:
 * limb k is bits [52 k, 52 k + 52), from word 52 k / 64 and maybe the next */
CZK_IFMA_INLINE void FPX(from_words_)(FPX_T *r, const __m512i x[FPX_NW])
{
    const __m512i m52 = _mm512_set1_epi64((long long)CZK_FPX8_M52);
    int k;

    CZK_FPX8_UNROLL
    for (k = 0; k < FPX_NL; k++) {
        const int w = 52 * k / 64, s = 52 * k % 64;
        __m512i v = s ? _mm512_srli_epi64(x[w], (unsigned)s) : x[w];
        if (s > 12 && w + 1 < FPX_NW)
            v = _mm512_or_si512(v, _mm512_slli_epi64(x[w + 1], (unsigned)(64 - s)));
        r->l[k] = 52 * k + 52 > 64 * FPX_NW ? v : _mm512_and_si512(v, m52);
    }
}

/* radix 2^52 -> FPX_NW 64-bit limb vectors (a below 2^(64 FPX_NW)) */
CZK_IFMA_INLINE void FPX(to_words_)(__m512i x[FPX_NW], const FPX_T *a)
{
    int w, k;

    CZK_FPX8_UNROLL
    for (w = 0; w < FPX_NW; w++) {
        __m512i v = _mm512_setzero_si512();
        CZK_FPX8_UNROLL
        for (k = 0; k < FPX_NL; k++) {
            const int lo = 52 * k - 64 * w; /* limb k's bit 0 within word w */
            if (lo >= 64 || lo <= -52)
                continue;
            v = _mm512_or_si512(v, lo >= 0 ? _mm512_slli_epi64(a->l[k], (unsigned)lo)
                                           : _mm512_srli_epi64(a->l[k], (unsigned)-lo));
        }
        x[w] = v;
    }
}

/* r = the scalar element at p[i] + off for each lane i: 8 row loads and a
 * transpose (cheaper than hardware gathers on the machines measured) */
CZK_IFMA_INLINE void FPX(gather_p)(FPX_T *r, const char *const p[8], size_t off)
{
    __m512i rows[8], cols[8];
    int i;

    CZK_FPX8_UNROLL
    for (i = 0; i < 8; i++)
        rows[i] = _mm512_maskz_loadu_epi64((__mmask8)((1u << FPX_NW) - 1), p[i] + off);
    czk_fpx8_transpose_(cols, rows);
    FPX(from_words_)(r, cols);
}

/* the scalar element at p[i] + off = lane i of a, for the lanes in mask */
CZK_IFMA_INLINE void FPX(scatter_p)(char *const p[8], size_t off, __mmask8 mask, const FPX_T *a)
{
    __m512i rows[8], cols[8];
    int i;

    FPX(to_words_)(cols, a);
    CZK_FPX8_UNROLL
    for (i = FPX_NW; i < 8; i++)
        cols[i] = _mm512_setzero_si512();
    czk_fpx8_transpose_(rows, cols);
    CZK_FPX8_UNROLL
    for (i = 0; i < 8; i++)
        if (mask & (1u << i))
            _mm512_mask_storeu_epi64(p[i] + off, (__mmask8)((1u << FPX_NW) - 1), rows[i]);
}

/* r = a[0..7] (contiguous scalar elements) */
CZK_IFMA_INLINE void FPX(load)(FPX_T *r, const FPX_FE a[8])
{
    const char *p[8];
    CZK_FPX8_UNROLL
    for (int i = 0; i < 8; i++)
        p[i] = (const char *)&a[i];
    FPX(gather_p)(r, p, 0);
}

/* r[0..7] = a */
CZK_IFMA_INLINE void FPX(store)(FPX_FE r[8], const FPX_T *a)
{
    char *p[8];
    CZK_FPX8_UNROLL
    for (int i = 0; i < 8; i++)
        p[i] = (char *)&r[i];
    FPX(scatter_p)(p, 0, 0xff, a);
}

/* all 8 lanes = x */
CZK_IFMA_INLINE void FPX(set1)(FPX_T *r, const FPX_FE *x)
{
    __m512i v[FPX_NW];
    int k;

    CZK_FPX8_UNROLL
    for (k = 0; k < FPX_NW; k++)
        v[k] = _mm512_set1_epi64((long long)x->l[k]);
    FPX(from_words_)(r, v);
}

/* lanes of mask from b, the others from a */
CZK_IFMA_INLINE void FPX(blend)(FPX_T *r, __mmask8 mask, const FPX_T *a, const FPX_T *b)
{
    int k;

    CZK_FPX8_UNROLL
    for (k = 0; k < FPX_NL; k++)
        r->l[k] = _mm512_mask_blend_epi64(mask, a->l[k], b->l[k]);
}

/* lane mask of the zero elements (a canonical) */
CZK_IFMA_INLINE __mmask8 FPX(is_zero)(const FPX_T *a)
{
    __m512i o = a->l[0];
    int k;

    CZK_FPX8_UNROLL
    for (k = 1; k < FPX_NL; k++)
        o = _mm512_or_si512(o, a->l[k]);
    return _mm512_testn_epi64_mask(o, o);
}

/* lane mask of a = b (canonical) */
CZK_IFMA_INLINE __mmask8 FPX(eq)(const FPX_T *a, const FPX_T *b)
{
    __m512i o = _mm512_xor_si512(a->l[0], b->l[0]);
    int k;

    CZK_FPX8_UNROLL
    for (k = 1; k < FPX_NL; k++)
        o = _mm512_or_si512(o, _mm512_xor_si512(a->l[k], b->l[k]));
    return _mm512_testn_epi64_mask(o, o);
}

/* out of line copies (fpx_ool_tmpl.h) for large callers (instruction cache) */
CZK_IFMA void FPX(mul_ool)(FPX_T *r, const FPX_T *a, const FPX_T *b);
CZK_IFMA void FPX(mul_lazy_ool)(FPX_T *r, const FPX_T *a, const FPX_T *b);
CZK_IFMA void FPX(sqr_ool)(FPX_T *r, const FPX_T *a);

#ifndef FPX_NO_FP2
/* ---- 8 lanes of Fp2 = Fp[u]/(u^2 + 1) ---- */

typedef struct FP2X_T { FPX_T c0, c1; } FP2X_T;

CZK_IFMA_INLINE void FP2X(add)(FP2X_T *r, const FP2X_T *a, const FP2X_T *b)
{
    FPX(add)(&r->c0, &a->c0, &b->c0);
    FPX(add)(&r->c1, &a->c1, &b->c1);
}

CZK_IFMA_INLINE void FP2X(sub)(FP2X_T *r, const FP2X_T *a, const FP2X_T *b)
{
    FPX(sub)(&r->c0, &a->c0, &b->c0);
    FPX(sub)(&r->c1, &a->c1, &b->c1);
}

/* r = a b and r = a^2, canonical in and out: Karatsuba products
 * (fpx_ool_tmpl.h), out of line with their Fp products out of line too: the
 * G2 flush with everything inlined outgrew the instruction cache */
CZK_IFMA void FP2X(mul_ool)(FP2X_T *r, const FP2X_T *a, const FP2X_T *b);
CZK_IFMA void FP2X(sqr_ool)(FP2X_T *r, const FP2X_T *a);

/* lane mask of the zero elements (a canonical) */
CZK_IFMA_INLINE __mmask8 FP2X(is_zero)(const FP2X_T *a)
{
    return FPX(is_zero)(&a->c0) & FPX(is_zero)(&a->c1);
}

CZK_IFMA_INLINE __mmask8 FP2X(eq)(const FP2X_T *a, const FP2X_T *b)
{
    return FPX(eq)(&a->c0, &b->c0) & FPX(eq)(&a->c1, &b->c1);
}

CZK_IFMA_INLINE void FP2X(cneg)(FP2X_T *r, const FP2X_T *a, __mmask8 mask)
{
    FPX(cneg)(&r->c0, &a->c0, mask);
    FPX(cneg)(&r->c1, &a->c1, mask);
}

CZK_IFMA_INLINE void FP2X(csub)(FP2X_T *r, const FP2X_T *a, __mmask8 neg, const FP2X_T *b)
{
    FP2X_T t;
    FP2X(cneg)(&t, a, neg);
    FP2X(sub)(r, &t, b);
}

CZK_IFMA_INLINE void FP2X(blend)(FP2X_T *r, __mmask8 mask, const FP2X_T *a, const FP2X_T *b)
{
    FPX(blend)(&r->c0, mask, &a->c0, &b->c0);
    FPX(blend)(&r->c1, mask, &a->c1, &b->c1);
}

CZK_IFMA_INLINE void FP2X(set1)(FP2X_T *r, const FPX_FE2 *x)
{
    FPX(set1)(&r->c0, &x->c0);
    FPX(set1)(&r->c1, &x->c1);
}

CZK_IFMA_INLINE void FP2X(gather_p)(FP2X_T *r, const char *const p[8], size_t off)
{
    FPX(gather_p)(&r->c0, p, off);
    FPX(gather_p)(&r->c1, p, off + sizeof(FPX_FE));
}

CZK_IFMA_INLINE void FP2X(scatter_p)(char *const p[8], size_t off, __mmask8 mask, const FP2X_T *a)
{
    FPX(scatter_p)(p, off, mask, &a->c0);
    FPX(scatter_p)(p, off + sizeof(FPX_FE), mask, &a->c1);
}

CZK_IFMA_INLINE void FP2X(store)(FPX_FE2 r[8], const FP2X_T *a)
{
    char *p[8];
    int i;
    CZK_FPX8_UNROLL
    for (i = 0; i < 8; i++)
        p[i] = (char *)&r[i];
    FP2X(scatter_p)(p, 0, 0xff, a);
}

CZK_IFMA_INLINE void FP2X(load)(FP2X_T *r, const FPX_FE2 a[8])
{
    const char *p[8];
    int i;
    CZK_FPX8_UNROLL
    for (i = 0; i < 8; i++)
        p[i] = (const char *)&a[i];
    FP2X(gather_p)(r, p, 0);
}

#endif /* !FPX_NO_FP2 */

#endif /* CZK_HAVE_FPX8 */

/* AoS wrappers for tests and benchmarks (fpx_ool_tmpl.h): r[i] = a[i] op b[i]
 * for i < 8.  They return -ENOTSUP (and leave r alone) where
 * czk_fpx8_enabled() is false. */
int FPX(mul8)(FPX_FE r[8], const FPX_FE a[8], const FPX_FE b[8]);
int FPX(sqr8)(FPX_FE r[8], const FPX_FE a[8]);
int FPX(add8)(FPX_FE r[8], const FPX_FE a[8], const FPX_FE b[8]);
int FPX(sub8)(FPX_FE r[8], const FPX_FE a[8], const FPX_FE b[8]);
int FPX(neg8)(FPX_FE r[8], const FPX_FE a[8]);
/* r[i] = a[i] * b[i] for i < n (n a multiple of 8), `reps` times over, as
 * independent 8-lane products (throughput benchmark); -ENOTSUP as above,
 * -EINVAL for n not a multiple of 8 */
int FPX(mul_n)(FPX_FE *r, const FPX_FE *a, const FPX_FE *b, size_t n, unsigned reps);
#ifndef FPX_NO_FP2
/* r[i] = a[i] * b[i] and r[i] = a[i]^2 in Fp2 for i < 8 (canonical) */
int FP2X(mul8)(FPX_FE2 r[8], const FPX_FE2 a[8], const FPX_FE2 b[8]);
int FP2X(sqr8)(FPX_FE2 r[8], const FPX_FE2 a[8]);
#endif

#ifdef FPX_DEFINE_OOL
#include "common/crypto/fpx_ool_tmpl.h"
#undef FPX_DEFINE_OOL
#endif

#undef FPX_T
#undef FP2X_T
#undef FPX
#undef FP2X
#undef FPX_FE
#undef FPX_FE2
#undef FPX_NL
#undef FPX_NW
#undef FPX_Q
#undef FPX_2Q
#undef FPX_QINV
#undef FPX_TOP_BITS
#undef FPX_WIDE
#undef FPX_SUB_OP_LAZY
#undef FPX_NO_FP2
