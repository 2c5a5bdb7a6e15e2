/*
 * ff.cuh — field arithmetic on the device for the two curves: BLS12-381 Fp
 * (381 bits, 12 x 32-bit limbs, fp_t), Fr (255 bits, 8 limbs, fr_t) and
 * Fp2 = Fp[u]/(u^2+1) (fp2_t); BN254 Fp and Fr (254 bits, 8 limbs each,
 * bn_fp_t and bn_fr_t) and Fp2 = Fp[u]/(u^2+1) (bn_fp2_t).
 *
 * Representation is the host contract of common/crypto/field.h and
 * bn254_field.h reinterpreted as 32-bit words: Montgomery form (R = 2^384 for
 * BLS12-381 Fp, 2^256 for the 8-limb fields), least significant word first,
 * fully reduced.  A czk_fp (czk_bn254_fp) array in host memory is therefore a
 * fp_t (bn_fp_t) array on the device byte for byte.
 *
 * The operations are templates over the field type, which take the word
 * count, modulus, one and -p^-1 mod 2^32 from ff_traits<F>; Fp2 is one
 * template over its base field.
 *
 * Multiplication is Montgomery CIOS with the even/odd column split
 * (mont_mul_eo: two independent carry chains per row, which ptxas turns into
 * IMAD.WIDE.U32.X / IMAD.HI.U32.X with carries in predicates, about a third of
 * the instructions of the plain CIOS of the first rounds, kept as
 * mont_mul_cios behind -DCZK_CUDA_FF_CIOS=1); squaring computes the
 * off-diagonal products once (mont_sqr_eo).  For Fp2 products there is also
 * a lazily reduced Karatsuba (fp2_mul_lazy: three plain 2N-word products,
 * mul_wide_eo, and two reductions, mont_redc_eo).  Every modulus here is
 * below 2^(32N-1) (BLS12-381: 381 < 383 and 255 < 255 + 1 bits; BN254: 254
 * < 255 bits), so one conditional subtraction finishes.  The carry primitives
 * are volatile asm so the front end keeps the chains in order; on the host
 * they are emulated, and tests/cuda/test_cuda_ff_emul checks the algorithms
 * against GMP without a GPU.
 */
#ifndef CZK_CUDA_FF_CUH
#define CZK_CUDA_FF_CUH

#include <stdint.h>

struct fp_t { uint32_t v[12]; };
struct fr_t { uint32_t v[8]; };
/* Fp2 = B[u]/(u^2+1) over the base field B: c0 + c1 u, c0 first (zkey order) */
template <class B> struct fp2x { B c0, c1; };
typedef fp2x<fp_t> fp2_t;
/* BN254: distinct types so overloads keep the curves apart */
struct bn_fp_t { uint32_t v[8]; };
struct bn_fr_t { uint32_t v[8]; };
typedef fp2x<bn_fp_t> bn_fp2_t;

static_assert(sizeof(fp_t) == 48, "fp_t layout");
static_assert(sizeof(fr_t) == 32, "fr_t layout");
static_assert(sizeof(fp2_t) == 96, "fp2_t layout");
static_assert(sizeof(bn_fp_t) == 32 && sizeof(bn_fr_t) == 32, "BN254 field layout");
static_assert(sizeof(bn_fp2_t) == 64, "BN254 fp2 layout");

/* moduli, Montgomery one, -p^-1 mod 2^32 (values checked against common/crypto/field_impl.h) */
__constant__ static const uint32_t c_fp_mod[12] = {
    0xffffaaab, 0xb9feffff, 0xb153ffff, 0x1eabfffe, 0xf6b0f624, 0x6730d2a0,
    0xf38512bf, 0x64774b84, 0x434bacd7, 0x4b1ba7b6, 0x397fe69a, 0x1a0111ea};
__constant__ static const uint32_t c_fp_one[12] = {
    0x0002fffd, 0x76090000, 0xc40c0002, 0xebf4000b, 0x53c758ba, 0x5f489857,
    0x70525745, 0x77ce5853, 0xa256ec6d, 0x5c071a97, 0xfa80e493, 0x15f65ec3};
__constant__ static const uint32_t c_fr_mod[8] = {
    0x00000001, 0xffffffff, 0xfffe5bfe, 0x53bda402,
    0x09a1d805, 0x3339d808, 0x299d7d48, 0x73eda753};
__constant__ static const uint32_t c_fr_one[8] = {
    0xfffffffe, 0x00000001, 0x00034802, 0x5884b7fa,
    0xecbc4ff5, 0x998c4fef, 0xacc5056f, 0x1824b159};
/* R^2 mod p (R = 2^(32 N)): inv_vt's start, so its result is Montgomery */
__constant__ static const uint32_t c_fp_r2[12] = {
    0x1c341746, 0xf4df1f34, 0x09d104f1, 0x0a76e6a6, 0x4c95b6d5, 0x8de5476c,
    0x939d83c0, 0x67eb88a9, 0xb519952d, 0x9a793e85, 0x92cae3aa, 0x11988fe5};
__constant__ static const uint32_t c_fr_r2[8] = {
    0xf3f29c6d, 0xc999e990, 0x87925c23, 0x2b6cedcb, 0x7254398f, 0x05d31496, 0x9f59ff11, 0x0748d9d9};
#define CZK_FP_NINV32 0xfffcfffdu
#define CZK_FR_NINV32 0xffffffffu
/* BN254 (values checked against common/crypto/bn254_fp.c, bn254_fr.c; the
 * -p^-1 by tests/cuda/test_cuda_ff_emul) */
__constant__ static const uint32_t c_bn_fp_mod[8] = {
    0xd87cfd47, 0x3c208c16, 0x6871ca8d, 0x97816a91, 0x8181585d, 0xb85045b6, 0xe131a029, 0x30644e72};
__constant__ static const uint32_t c_bn_fp_one[8] = {
    0xc58f0d9d, 0xd35d438d, 0xf5c70b3d, 0x0a78eb28, 0x7879462c, 0x666ea36f, 0x9a07df2f, 0x0e0a77c1};
__constant__ static const uint32_t c_bn_fr_mod[8] = {
    0xf0000001, 0x43e1f593, 0x79b97091, 0x2833e848, 0x8181585d, 0xb85045b6, 0xe131a029, 0x30644e72};
__constant__ static const uint32_t c_bn_fr_one[8] = {
    0x4ffffffb, 0xac96341c, 0x9f60cd29, 0x36fc7695, 0x7879462e, 0x666ea36f, 0x9a07df2f, 0x0e0a77c1};
__constant__ static const uint32_t c_bn_fp_r2[8] = {
    0x538afa89, 0xf32cfc5b, 0xd44501fb, 0xb5e71911, 0x0a417ff6, 0x47ab1eff, 0xcab8351f, 0x06d89f71};
__constant__ static const uint32_t c_bn_fr_r2[8] = {
    0xae216da7, 0x1bb8e645, 0xe35c59e3, 0x53fe3ab1, 0x53bb8085, 0x8c49833d, 0x7f4e44a5, 0x0216d0b1};
#define CZK_BN_FP_NINV32 0xe4866389u
#define CZK_BN_FR_NINV32 0xefffffffu

#define FF_DEV static __device__ __forceinline__
/* the generic N-word helpers below are also host code, where the PTX carry
 * instructions are emulated (tests/cuda/test_cuda_ff_emul checks them on the CPU) */
#define FF_HD static __host__ __device__ __forceinline__
#ifdef __CUDA_ARCH__
#define FF_UNROLL _Pragma("unroll")
#else
#define FF_UNROLL
#endif

/* ---- PTX carry-chain primitives ----
 * On the device each is one PTX instruction; the carry flag (CC) passes
 * between consecutive statements, so every statement that reads or writes it
 * is asm volatile (the front end keeps them in order; ptxas turns CC into
 * predicate registers and may interleave independent chains).  On the host
 * the same names run on an emulated flag, so the algorithms can be checked
 * without a GPU. */
#ifdef __CUDA_ARCH__
#define FF_PTX3(name, insn)                                                    \
    static __device__ __forceinline__ uint32_t name(uint32_t a, uint32_t b, uint32_t c) \
    {                                                                          \
        uint32_t r;                                                            \
        asm volatile(insn " %0, %1, %2, %3;" : "=r"(r) : "r"(a), "r"(b), "r"(c)); \
        return r;                                                              \
    }
#define FF_PTX2(name, insn)                                                    \
    static __device__ __forceinline__ uint32_t name(uint32_t a, uint32_t b)   \
    {                                                                          \
        uint32_t r;                                                            \
        asm volatile(insn " %0, %1, %2;" : "=r"(r) : "r"(a), "r"(b));         \
        return r;                                                              \
    }
FF_PTX3(ff_mad_lo_cc, "mad.lo.cc.u32")
FF_PTX3(ff_madc_lo_cc, "madc.lo.cc.u32")
FF_PTX3(ff_mad_hi_cc, "mad.hi.cc.u32")
FF_PTX3(ff_madc_hi_cc, "madc.hi.cc.u32")
FF_PTX3(ff_madc_hi, "madc.hi.u32")
FF_PTX2(ff_add_cc, "add.cc.u32")
FF_PTX2(ff_addc_cc, "addc.cc.u32")
FF_PTX2(ff_addc, "addc.u32")
FF_PTX2(ff_sub_cc, "sub.cc.u32")
FF_PTX2(ff_subc_cc, "subc.cc.u32")
FF_PTX2(ff_subc, "subc.u32")
/* the borrow as a mask (0 or 2^32 - 1): subc with immediate zeros */
static __device__ __forceinline__ uint32_t ff_borrow_mask()
{
    uint32_t r;
    asm volatile("subc.u32 %0, 0, 0;" : "=r"(r));
    return r;
}
#undef FF_PTX2
#undef FF_PTX3
#else
static thread_local uint32_t ff_emu_cc; /* the emulated carry flag (0 or 1) */
static inline uint32_t ff_emu_set(uint64_t x)
{
    ff_emu_cc = (uint32_t)(x >> 32) & 1u;
    return (uint32_t)x;
}
static inline uint64_t ff_lo(uint32_t a, uint32_t b) { return (uint32_t)((uint64_t)a * b); }
static inline uint64_t ff_hi(uint32_t a, uint32_t b) { return ((uint64_t)a * b) >> 32; }
static inline uint32_t ff_mad_lo_cc(uint32_t a, uint32_t b, uint32_t c) { return ff_emu_set(ff_lo(a, b) + c); }
static inline uint32_t ff_madc_lo_cc(uint32_t a, uint32_t b, uint32_t c) { return ff_emu_set(ff_lo(a, b) + c + ff_emu_cc); }
static inline uint32_t ff_mad_hi_cc(uint32_t a, uint32_t b, uint32_t c) { return ff_emu_set(ff_hi(a, b) + c); }
static inline uint32_t ff_madc_hi_cc(uint32_t a, uint32_t b, uint32_t c) { return ff_emu_set(ff_hi(a, b) + c + ff_emu_cc); }
static inline uint32_t ff_madc_hi(uint32_t a, uint32_t b, uint32_t c) { return (uint32_t)(ff_hi(a, b) + c + ff_emu_cc); }
static inline uint32_t ff_add_cc(uint32_t a, uint32_t b) { return ff_emu_set((uint64_t)a + b); }
static inline uint32_t ff_addc_cc(uint32_t a, uint32_t b) { return ff_emu_set((uint64_t)a + b + ff_emu_cc); }
static inline uint32_t ff_addc(uint32_t a, uint32_t b) { return a + b + ff_emu_cc; }
static inline uint32_t ff_sub_cc(uint32_t a, uint32_t b)
{
    ff_emu_cc = a < b;
    return a - b;
}
static inline uint32_t ff_subc_cc(uint32_t a, uint32_t b)
{
    uint64_t d = (uint64_t)a - b - ff_emu_cc;
    ff_emu_cc = (uint32_t)(d >> 63);
    return (uint32_t)d;
}
static inline uint32_t ff_subc(uint32_t a, uint32_t b) { return a - b - ff_emu_cc; }
static inline uint32_t ff_borrow_mask() { return 0u - ff_emu_cc; }
#endif

FF_HD uint32_t __umulhi_hd(uint32_t a, uint32_t b)
{
#ifdef __CUDA_ARCH__
    return __umulhi(a, b);
#else
    return (uint32_t)(((uint64_t)a * b) >> 32);
#endif
}

/* ---- generic N-word Montgomery helpers ---- */

/* r = a + b over M words, the carry out dropped (callers' bounds keep the sum
 * below 2^(32M)); r may alias a or b */
template <int M> FF_HD void add_words(uint32_t *r, const uint32_t *a, const uint32_t *b)
{
    r[0] = ff_add_cc(a[0], b[0]);
FF_UNROLL
    for (int k = 1; k < M - 1; k++)
        r[k] = ff_addc_cc(a[k], b[k]);
    r[M - 1] = ff_addc(a[M - 1], b[M - 1]);
}

/* r = t - p if t >= p, else t (t < 2p) */
template <int N> FF_HD void cond_sub_p(uint32_t *r, const uint32_t *t, const uint32_t *mod)
{
    uint32_t s[N], br;
    s[0] = ff_sub_cc(t[0], mod[0]);
FF_UNROLL
    for (int j = 1; j < N; j++)
        s[j] = ff_subc_cc(t[j], mod[j]);
    br = ff_subc(0u, 0u);
FF_UNROLL
    for (int j = 0; j < N; j++)
        r[j] = br ? t[j] : s[j];
}

/* the even/odd rows' final division by 2^32: t = O + (E >> 1 word) */
template <int N> FF_HD void eo_fold(uint32_t *t, const uint32_t *O, const uint32_t *E)
{
    t[0] = ff_add_cc(O[0], E[1]);
FF_UNROLL
    for (int j = 1; j < N - 1; j++)
        t[j] = ff_addc_cc(O[j], E[j + 1]);
    t[N - 1] = ff_addc(O[N - 1], 0u);
}

/* a Montgomery reduction row of the even/odd split (T += m p with T = E +
 * O 2^32): the odd chain's words 2.. (O += p_odd m) and the even chain's
 * words 2.. (E += p_even m) with its carry into O[N-1]; each continues the
 * carry of the chain's first two words, which the caller computes (they
 * differ: plain products, a special low modulus, or a carry in from the
 * division step) */
template <int N> FF_HD void eo_red_odd(uint32_t *O, uint32_t m, const uint32_t *mod)
{
FF_UNROLL
    for (int j = 2; j < N; j += 2) {
        O[j] = ff_madc_lo_cc(mod[j + 1], m, O[j]);
        if (j + 2 < N)
            O[j + 1] = ff_madc_hi_cc(mod[j + 1], m, O[j + 1]);
        else
            O[j + 1] = ff_madc_hi(mod[j + 1], m, O[j + 1]);
    }
}

template <int N> FF_HD void eo_red_even(uint32_t *E, uint32_t *O, uint32_t m, const uint32_t *mod)
{
FF_UNROLL
    for (int j = 2; j < N; j += 2) {
        E[j] = ff_madc_lo_cc(mod[j], m, E[j]);
        E[j + 1] = ff_madc_hi_cc(mod[j], m, E[j + 1]);
    }
    O[N - 1] = ff_addc(O[N - 1], 0u);
}

/* Plain CIOS (the first two rounds' multiply, kept for comparisons: build with
 * -DCZK_CUDA_FF_CIOS=1): per word of b, four carry chains
 * t += lo(a bi), t += hi(a bi), t += lo(m p), t += hi(m p), then a word shift. */
template <int N>
FF_HD void mont_mul_cios(uint32_t *r, const uint32_t *a, const uint32_t *b, const uint32_t *mod, uint32_t ninv)
{
    uint32_t t[N + 2];
FF_UNROLL
    for (int j = 0; j < N + 2; j++)
        t[j] = 0;
FF_UNROLL
    for (int i = 0; i < N; i++) {
        const uint32_t bi = b[i];
        t[0] = ff_mad_lo_cc(a[0], bi, t[0]);
FF_UNROLL
        for (int j = 1; j < N; j++)
            t[j] = ff_madc_lo_cc(a[j], bi, t[j]);
        t[N] = ff_addc_cc(t[N], 0u);
        t[N + 1] = ff_addc(t[N + 1], 0u);
        t[1] = ff_mad_hi_cc(a[0], bi, t[1]);
FF_UNROLL
        for (int j = 1; j < N; j++)
            t[j + 1] = ff_madc_hi_cc(a[j], bi, t[j + 1]);
        t[N + 1] = ff_addc(t[N + 1], 0u);
        const uint32_t m = t[0] * ninv;
        t[0] = ff_mad_lo_cc(mod[0], m, t[0]);
FF_UNROLL
        for (int j = 1; j < N; j++)
            t[j] = ff_madc_lo_cc(mod[j], m, t[j]);
        t[N] = ff_addc_cc(t[N], 0u);
        t[N + 1] = ff_addc(t[N + 1], 0u);
        t[1] = ff_mad_hi_cc(mod[0], m, t[1]);
FF_UNROLL
        for (int j = 1; j < N; j++)
            t[j + 1] = ff_madc_hi_cc(mod[j], m, t[j + 1]);
        t[N + 1] = ff_addc(t[N + 1], 0u);
FF_UNROLL
        for (int j = 0; j < N + 1; j++)
            t[j] = t[j + 1];
        t[N + 1] = 0;
    }
    cond_sub_p<N>(r, t, mod);
}

/* Even/odd CIOS Montgomery multiplication (the column split of sppark's
 * mont_t, derived again here).  The running value is T = E + O * 2^32 with
 * E[k] at 2^(32k) and O[k] at 2^(32(k+1)): products a_j b_i with j even land
 * on E[j], E[j+1] and those with j odd on O[j-1], O[j], so each row is two
 * carry chains that do not depend on each other, and so is its reduction
 * (E += p_even m, O += p_odd m, m = E[0] (-1/p)).  After the reduction E[0]
 * is 0; dividing by 2^32 swaps the roles: the new E is O plus E[1] in its low
 * word, the new O is E shifted down by two words, which the next row's odd
 * chain folds in as its addends (mad_rshift).
 * Bounds (N words, p < 2^(32N-1), a, b < p): before each division
 * T < 2^33 p < 2^(32(N+1)), so the odd chains' carries out of 2^(32(N+1))
 * are zero and the even chains' carries out of 2^(32N) fit in O[N-1]; after
 * it T < 2p, and one conditional subtraction finishes. */
template <int N>
FF_HD void mont_mul_eo(uint32_t *r, const uint32_t *a, const uint32_t *b, const uint32_t *mod, uint32_t ninv)
{
    uint32_t E[N], O[N];
    /* row 0: plain products, no carries (lo/hi pairs do not overlap) */
FF_UNROLL
    for (int j = 0; j < N; j += 2) {
        E[j] = a[j] * b[0];
        E[j + 1] = __umulhi_hd(a[j], b[0]);
        O[j] = a[j + 1] * b[0];
        O[j + 1] = __umulhi_hd(a[j + 1], b[0]);
    }
FF_UNROLL
    for (int i = 0; i < N; i++) {
        if (i > 0) {
            /* divide by 2^32 and add a b_i: E' = O + E[1], O' = E >> 2 words + a_odd b_i */
            const uint32_t bi = b[i];
            uint32_t e1 = E[1];
            E[0] = ff_add_cc(O[0], e1);
            uint32_t Ep[N];
FF_UNROLL
            for (int j = 0; j < N; j++)
                Ep[j] = E[j];
FF_UNROLL
            for (int j = 1; j < N; j++)
                E[j] = O[j];
            /* odd chain: O'[j-1] = lo(a_j bi) + E[j+1], O'[j] = hi(a_j bi) + E[j+2] (E[N], E[N+1] = 0) */
FF_UNROLL
            for (int j = 1; j < N; j += 2) {
                O[j - 1] = ff_madc_lo_cc(a[j], bi, j + 1 < N ? Ep[j + 1] : 0u);
                if (j + 2 < N)
                    O[j] = ff_madc_hi_cc(a[j], bi, Ep[j + 2]);
                else
                    O[j] = ff_madc_hi(a[j], bi, 0u);
            }
            /* even chain: E += a_even bi, carry into O[N-1] */
            E[0] = ff_mad_lo_cc(a[0], bi, E[0]);
            E[1] = ff_madc_hi_cc(a[0], bi, E[1]);
FF_UNROLL
            for (int j = 2; j < N; j += 2) {
                E[j] = ff_madc_lo_cc(a[j], bi, E[j]);
                E[j + 1] = ff_madc_hi_cc(a[j], bi, E[j + 1]);
            }
            O[N - 1] = ff_addc(O[N - 1], 0u);
        }
        /* reduction; for a modulus ending in words 1, 2^32 - 1 (Fr) the two
         * lowest products need no multiplier: m * 1 = (m, 0) and
         * m (2^32 - 1) = (-m, m - [m != 0]) (additions on the integer ALU
         * instead of the multiply pipe, which bounds the NTT) */
        const uint32_t m = E[0] * ninv;
        const bool low_special = mod[0] == 1u && mod[1] == 0xffffffffu;
        if (low_special) {
            O[0] = ff_add_cc(O[0], 0u - m);
            O[1] = ff_addc_cc(O[1], m - (m != 0u ? 1u : 0u));
        } else {
            O[0] = ff_mad_lo_cc(mod[1], m, O[0]);
            O[1] = ff_madc_hi_cc(mod[1], m, O[1]);
        }
        eo_red_odd<N>(O, m, mod);
        if (low_special) {
            E[0] = ff_add_cc(E[0], m);
            E[1] = ff_addc_cc(E[1], 0u);
        } else {
            E[0] = ff_mad_lo_cc(mod[0], m, E[0]);
            E[1] = ff_madc_hi_cc(mod[0], m, E[1]);
        }
        eo_red_even<N>(E, O, m, mod);
    }
    /* final division: T = O + (E >> 1 word) < 2p; subtract p once if T >= p */
    uint32_t t[N];
    eo_fold<N>(t, O, E);
    cond_sub_p<N>(r, t, mod);
}

/* r = a + b mod p (a, b < p); the same PTX as inline asm, through the carry
 * primitives so the host can run it too */
template <int N>
FF_HD void mod_add_n(uint32_t *r, const uint32_t *a, const uint32_t *b, const uint32_t *mod)
{
    uint32_t t[N], s[N], br;
    t[0] = ff_add_cc(a[0], b[0]);
FF_UNROLL
    for (int j = 1; j < N; j++)
        t[j] = ff_addc_cc(a[j], b[j]);
    /* a + b < 2p < 2^(32N): no carry out */
    s[0] = ff_sub_cc(t[0], mod[0]);
FF_UNROLL
    for (int j = 1; j < N; j++)
        s[j] = ff_subc_cc(t[j], mod[j]);
    br = ff_borrow_mask();
FF_UNROLL
    for (int j = 0; j < N; j++)
        r[j] = br ? t[j] : s[j];
}

/* r = a - b mod p (a, b < p) */
template <int N>
FF_HD void mod_sub_n(uint32_t *r, const uint32_t *a, const uint32_t *b, const uint32_t *mod)
{
    uint32_t t[N], br;
    t[0] = ff_sub_cc(a[0], b[0]);
FF_UNROLL
    for (int j = 1; j < N; j++)
        t[j] = ff_subc_cc(a[j], b[j]);
    br = ff_borrow_mask();
    /* borrow: add p back (masked) */
    uint32_t m[N];
FF_UNROLL
    for (int j = 0; j < N; j++)
        m[j] = mod[j] & br;
    t[0] = ff_add_cc(t[0], m[0]);
FF_UNROLL
    for (int j = 1; j < N - 1; j++)
        t[j] = ff_addc_cc(t[j], m[j]);
    t[N - 1] = ff_addc(t[N - 1], m[N - 1]);
FF_UNROLL
    for (int j = 0; j < N; j++)
        r[j] = t[j];
}

template <int N>
FF_DEV bool is_zero_n(const uint32_t *a)
{
    uint32_t x = 0;
#pragma unroll
    for (int j = 0; j < N; j++)
        x |= a[j];
    return x == 0;
}

template <int N>
FF_DEV bool eq_n(const uint32_t *a, const uint32_t *b)
{
    uint32_t x = 0;
#pragma unroll
    for (int j = 0; j < N; j++)
        x |= a[j] ^ b[j];
    return x == 0;
}

/* Montgomery reduction r = W 2^(-32N) mod p of a 2N-word W < p 2^(32N),
 * fully reduced: E/O rows as in mont_mul_eo with the a b_i chain replaced by
 * the shift alone (the carry of E[0] + O... passes into the next row's odd
 * chain).  Before each division T < 2^(32N) + 2^32 p < 2^(32(N+1)), so the odd
 * chains' carries out are zero; (W_low + m p) 2^(-32N) <= p and the high half
 * of W is at most p - 1, so the sum is below 2p and one conditional
 * subtraction finishes. */
template <int N>
FF_HD void mont_redc_eo(uint32_t *r, const uint32_t *W, const uint32_t *mod, uint32_t ninv)
{
    /* reduction of W[0..N-1]; T = E + O 2^32 */
    uint32_t E[N], O[N];
FF_UNROLL
    for (int j = 0; j < N; j++)
        E[j] = W[j];
FF_UNROLL
    for (int i = 0; i < N; i++) {
        if (i > 0) {
            /* divide by 2^32: E' = O + E[1] (carry into the odd chain below), O' = E >> 2 words */
            uint32_t Ep[N];
FF_UNROLL
            for (int j = 0; j < N; j++)
                Ep[j] = E[j];
            E[0] = ff_add_cc(O[0], Ep[1]);
FF_UNROLL
            for (int j = 1; j < N; j++)
                E[j] = O[j];
FF_UNROLL
            for (int j = 0; j < N; j++)
                O[j] = j + 2 < N ? Ep[j + 2] : 0u;
        }
        const uint32_t m = E[0] * ninv;
        if (i == 0) {
FF_UNROLL
            for (int j = 1; j < N; j += 2) {
                O[j - 1] = mod[j] * m;
                O[j] = __umulhi_hd(mod[j], m);
            }
        } else {
            O[0] = ff_madc_lo_cc(mod[1], m, O[0]);
            O[1] = ff_madc_hi_cc(mod[1], m, O[1]);
            eo_red_odd<N>(O, m, mod);
        }
        E[0] = ff_mad_lo_cc(mod[0], m, E[0]);
        E[1] = ff_madc_hi_cc(mod[0], m, E[1]);
        eo_red_even<N>(E, O, m, mod);
    }
    /* T = O + (E >> 1 word), plus the high half of W; subtract p once if T >= p */
    uint32_t t[N];
    eo_fold<N>(t, O, E);
    add_words<N>(t, t, W + N);
    cond_sub_p<N>(r, t, mod);
}

/* Montgomery squaring a^2 2^(-32N): the off-diagonal products a_i a_j (i < j)
 * once, doubled, plus the squares a_i^2, then a separate reduction of the
 * 2N-word square; 78 word products instead of 144 for a * a (N = 12).
 *  - Off-diagonal rows: row i adds a_i a_j at words i+j, i+j+1.  The j - i odd
 *    products of a row are one carry chain into WA, the j - i even ones one
 *    into WB (within a chain the (lo, hi) word pairs do not overlap), so the
 *    two chains are independent.  A chain's carry goes to the word after its
 *    end, which holds at most the previous row's carry (the chain ends of two
 *    consecutive rows differ by one word): no further carry.
 *  - W = 2 (WA + WB) + sum a_i^2 2^(64i) = a^2 < p 2^(32N), reduced by
 *    mont_redc_eo. */
FF_HD uint32_t ff_shl1(uint32_t lo, uint32_t hi)
{
#ifdef __CUDA_ARCH__
    return __funnelshift_l(lo, hi, 1);
#else
    return (hi << 1) | (lo >> 31);
#endif
}

template <int N>
FF_HD void mont_sqr_eo(uint32_t *r, const uint32_t *a, const uint32_t *mod, uint32_t ninv)
{
    uint32_t WA[2 * N], WB[2 * N];
FF_UNROLL
    for (int k = 0; k < 2 * N; k++) {
        WA[k] = 0;
        WB[k] = 0;
    }
    /* row 0: plain products */
FF_UNROLL
    for (int j = 1; j < N; j += 2) {
        WA[j] = a[0] * a[j];
        WA[j + 1] = __umulhi_hd(a[0], a[j]);
    }
FF_UNROLL
    for (int j = 2; j < N; j += 2) {
        WB[j] = a[0] * a[j];
        WB[j + 1] = __umulhi_hd(a[0], a[j]);
    }
FF_UNROLL
    for (int i = 1; i < N - 1; i++) {
        /* j - i odd: j = i+1, i+3, ... */
        {
            int jl = i + 1;
FF_UNROLL
            for (int j = i + 1; j < N; j += 2) {
                if (j == i + 1)
                    WA[i + j] = ff_mad_lo_cc(a[i], a[j], WA[i + j]);
                else
                    WA[i + j] = ff_madc_lo_cc(a[i], a[j], WA[i + j]);
                WA[i + j + 1] = ff_madc_hi_cc(a[i], a[j], WA[i + j + 1]);
                jl = j;
            }
            WA[i + jl + 2] = ff_addc(WA[i + jl + 2], 0u);
        }
        /* j - i even: j = i+2, i+4, ... */
        if (i + 2 < N) {
            int jl = i + 2;
FF_UNROLL
            for (int j = i + 2; j < N; j += 2) {
                if (j == i + 2)
                    WB[i + j] = ff_mad_lo_cc(a[i], a[j], WB[i + j]);
                else
                    WB[i + j] = ff_madc_lo_cc(a[i], a[j], WB[i + j]);
                WB[i + j + 1] = ff_madc_hi_cc(a[i], a[j], WB[i + j + 1]);
                jl = j;
            }
            WB[i + jl + 2] = ff_addc(WB[i + jl + 2], 0u);
        }
    }
    /* W = 2 (WA + WB) + squares */
    uint32_t W[2 * N];
    WA[0] = ff_add_cc(WA[0], WB[0]);
FF_UNROLL
    for (int k = 1; k < 2 * N - 1; k++)
        WA[k] = ff_addc_cc(WA[k], WB[k]);
    WA[2 * N - 1] = ff_addc(WA[2 * N - 1], WB[2 * N - 1]);
    W[0] = WA[0] << 1;
FF_UNROLL
    for (int k = 1; k < 2 * N; k++)
        W[k] = ff_shl1(WA[k - 1], WA[k]);
    W[0] = ff_mad_lo_cc(a[0], a[0], W[0]);
    W[1] = ff_madc_hi_cc(a[0], a[0], W[1]);
FF_UNROLL
    for (int i = 1; i < N; i++) {
        W[2 * i] = ff_madc_lo_cc(a[i], a[i], W[2 * i]);
        if (i + 1 < N)
            W[2 * i + 1] = ff_madc_hi_cc(a[i], a[i], W[2 * i + 1]);
        else
            W[2 * i + 1] = ff_madc_hi(a[i], a[i], W[2 * i + 1]);
    }
    mont_redc_eo<N>(r, W, mod, ninv);
}

/* Plain product W = a b (2N words, no reduction) of any N-word a, b.  Row i
 * adds a_j b_i at words i+j, i+j+1 as one 64-bit IMAD.WIDE into an aligned
 * register pair, so the products go to two partial sums by the parity of
 * i+j: P (pairs at even words) and Q (pairs at odd words); each row is one
 * carry chain into P and one into Q, independent of each other, and a word
 * pair keeps its parity in every row (splitting by the parity of j instead
 * costs a register move per product).  A chain's carry goes to the word after
 * its end, which holds at most the carry of an earlier row: no further carry.
 * P and Q are partial sums of a b < 2^(64N), so a carry out of the top word
 * is zero; W = P + Q. */
template <int N>
FF_HD void mul_wide_eo(uint32_t *W, const uint32_t *a, const uint32_t *b)
{
    uint32_t P[2 * N], Q[2 * N];
FF_UNROLL
    for (int k = 0; k < 2 * N; k++) {
        P[k] = 0;
        Q[k] = 0;
    }
    /* row 0: plain products (the (lo, hi) pairs of a chain do not overlap) */
FF_UNROLL
    for (int j = 0; j < N; j += 2) {
        P[j] = a[j] * b[0];
        P[j + 1] = __umulhi_hd(a[j], b[0]);
        Q[j + 1] = a[j + 1] * b[0];
        Q[j + 2] = __umulhi_hd(a[j + 1], b[0]);
    }
FF_UNROLL
    for (int i = 1; i < N; i++) {
        const uint32_t bi = b[i];
        /* P: j with i + j even */
FF_UNROLL
        for (int j = i & 1; j < N; j += 2) {
            if (j == (i & 1))
                P[i + j] = ff_mad_lo_cc(a[j], bi, P[i + j]);
            else
                P[i + j] = ff_madc_lo_cc(a[j], bi, P[i + j]);
            P[i + j + 1] = ff_madc_hi_cc(a[j], bi, P[i + j + 1]);
        }
        if (i + N + (i & 1) < 2 * N)
            P[i + N + (i & 1)] = ff_addc(P[i + N + (i & 1)], 0u);
        /* Q: j with i + j odd */
FF_UNROLL
        for (int j = 1 - (i & 1); j < N; j += 2) {
            if (j == 1 - (i & 1))
                Q[i + j] = ff_mad_lo_cc(a[j], bi, Q[i + j]);
            else
                Q[i + j] = ff_madc_lo_cc(a[j], bi, Q[i + j]);
            Q[i + j + 1] = ff_madc_hi_cc(a[j], bi, Q[i + j + 1]);
        }
        if (i + N + 1 - (i & 1) < 2 * N)
            Q[i + N + 1 - (i & 1)] = ff_addc(Q[i + N + 1 - (i & 1)], 0u);
    }
    W[0] = P[0]; /* Q[0] is 0 */
    add_words<2 * N - 1>(W + 1, P + 1, Q + 1);
}

/* Plain product W = a b (2N words) by one level of Karatsuba over the
 * halves (N = 2H, H even): with a = a0 + a1 2^(32H), b likewise,
 *     a b = a0 b0 + (a0 b1 + a1 b0) 2^(32H) + a1 b1 2^(64H),
 *     a0 b1 + a1 b0 = (a0 + a1)(b0 + b1) - a0 b0 - a1 b1,
 * three H-word products (mul_wide_eo) instead of four: 3/4 of the schoolbook
 * multiplies, for about 5N more additions, which run on the integer ALU
 * while the products keep the multiply pipe busy.  The half sums carry a
 * bit each (sa + ca 2^(32H)): their product is sa sb + (ca sb + cb sa)
 * 2^(32H) + ca cb 2^(64H), and the middle term is below 2^(64H+1) (N + 1
 * words).  Any N-word a, b. */
template <int N>
FF_HD void mul_wide_kara(uint32_t *W, const uint32_t *a, const uint32_t *b)
{
    constexpr int H = N / 2;
    static_assert(N % 4 == 0, "mul_wide_kara: N a multiple of 4");
    uint32_t sa[H], sb[H], X[N + 1];
    mul_wide_eo<H>(W, a, b);
    mul_wide_eo<H>(W + N, a + H, b + H);
    sa[0] = ff_add_cc(a[0], a[H]);
FF_UNROLL
    for (int j = 1; j < H; j++)
        sa[j] = ff_addc_cc(a[j], a[H + j]);
    const uint32_t ca = ff_addc(0u, 0u);
    sb[0] = ff_add_cc(b[0], b[H]);
FF_UNROLL
    for (int j = 1; j < H; j++)
        sb[j] = ff_addc_cc(b[j], b[H + j]);
    const uint32_t cb = ff_addc(0u, 0u);
    mul_wide_eo<H>(X, sa, sb);
    X[N] = ca & cb;
    /* the carry bits' terms: + (ca sb + cb sa) 2^(32H) */
    const uint32_t ma = 0u - ca, mb = 0u - cb;
    X[H] = ff_add_cc(X[H], sb[0] & ma);
FF_UNROLL
    for (int j = 1; j < H; j++)
        X[H + j] = ff_addc_cc(X[H + j], sb[j] & ma);
    X[N] = ff_addc(X[N], 0u);
    X[H] = ff_add_cc(X[H], sa[0] & mb);
FF_UNROLL
    for (int j = 1; j < H; j++)
        X[H + j] = ff_addc_cc(X[H + j], sa[j] & mb);
    X[N] = ff_addc(X[N], 0u);
    /* X -= a0 b0, X -= a1 b1 (X stays >= 0: it ends as a0 b1 + a1 b0) */
    X[0] = ff_sub_cc(X[0], W[0]);
FF_UNROLL
    for (int j = 1; j < N; j++)
        X[j] = ff_subc_cc(X[j], W[j]);
    X[N] = ff_subc(X[N], 0u);
    X[0] = ff_sub_cc(X[0], W[N]);
FF_UNROLL
    for (int j = 1; j < N; j++)
        X[j] = ff_subc_cc(X[j], W[N + j]);
    X[N] = ff_subc(X[N], 0u);
    /* W += X 2^(32H); a b < 2^(64N): no carry out of the top word */
    W[H] = ff_add_cc(W[H], X[0]);
FF_UNROLL
    for (int j = 1; j <= N; j++)
        W[H + j] = ff_addc_cc(W[H + j], X[j]);
FF_UNROLL
    for (int k = H + N + 1; k < 2 * N - 1; k++)
        W[k] = ff_addc_cc(W[k], 0u);
    W[2 * N - 1] = ff_addc(W[2 * N - 1], 0u);
}

/* Montgomery product a b 2^(-32N) mod p (a, b < p) as a Karatsuba wide
 * product and a separate reduction: 3/4 of the product's multiplies, the
 * reduction's unchanged */
template <int N>
FF_HD void mont_mul_kara(uint32_t *r, const uint32_t *a, const uint32_t *b, const uint32_t *mod, uint32_t ninv)
{
    uint32_t W[2 * N];
    mul_wide_kara<N>(W, a, b);
    mont_redc_eo<N>(r, W, mod, ninv);
}

/* Fp2 product with two reductions instead of three (Karatsuba with lazy
 * reduction): for x = x0 + x1 u, y = y0 + y1 u (all words < p < 2^(32N-1)),
 * W0 = x0 y0, W1 = x1 y1 and W2 = (x0 + x1)(y0 + y1) without reduction (the
 * sums are not reduced: below 2p < 2^(32N));
 *   c0 = redc(W0 - W1), plus p 2^(32N) when negative: in [0, p 2^(32N));
 *   c1 = redc(W2 - W0 - W1) = redc(x0 y1 + x1 y0), below 2 p^2 < p 2^(32N).
 * r0, r1 may alias the inputs. */
template <int N>
FF_HD void fp2_mul_lazy(uint32_t *r0, uint32_t *r1, const uint32_t *x0, const uint32_t *x1, const uint32_t *y0,
                        const uint32_t *y1, const uint32_t *mod, uint32_t ninv)
{
    uint32_t sx[N], sy[N];
    add_words<N>(sx, x0, x1);
    add_words<N>(sy, y0, y1);
    uint32_t W0[2 * N], W1[2 * N], D[2 * N];
    mul_wide_eo<N>(W0, x0, y0);
    mul_wide_eo<N>(W1, x1, y1);
    /* D = W0 - W1 (mod 2^(64N)), W0 = W0 + W1 (< 2 p^2, no carry out) */
    D[0] = ff_sub_cc(W0[0], W1[0]);
FF_UNROLL
    for (int k = 1; k < 2 * N; k++)
        D[k] = ff_subc_cc(W0[k], W1[k]);
    const uint32_t br = ff_subc(0u, 0u);
    add_words<2 * N>(W0, W0, W1);
    /* borrow: add p 2^(32N) (the sum wraps back into [0, p 2^(32N))) */
    D[N] = ff_add_cc(D[N], mod[0] & br);
FF_UNROLL
    for (int j = 1; j < N - 1; j++)
        D[N + j] = ff_addc_cc(D[N + j], mod[j] & br);
    D[2 * N - 1] = ff_addc(D[2 * N - 1], mod[N - 1] & br);
    mont_redc_eo<N>(r0, D, mod, ninv);
    mul_wide_eo<N>(W1, sx, sy);
    W1[0] = ff_sub_cc(W1[0], W0[0]);
FF_UNROLL
    for (int k = 1; k < 2 * N - 1; k++)
        W1[k] = ff_subc_cc(W1[k], W0[k]);
    W1[2 * N - 1] = ff_subc(W1[2 * N - 1], W0[2 * N - 1]);
    mont_redc_eo<N>(r1, W1, mod, ninv);
}

#ifndef CZK_CUDA_FF_CIOS
#define CZK_CUDA_FF_CIOS 0
#endif
template <int N>
FF_HD void mont_mul_n(uint32_t *r, const uint32_t *a, const uint32_t *b, const uint32_t *mod, uint32_t ninv)
{
    if (CZK_CUDA_FF_CIOS)
        mont_mul_cios<N>(r, a, b, mod, ninv);
    else
        mont_mul_eo<N>(r, a, b, mod, ninv);
}

template <int N>
FF_HD void mont_sqr_n(uint32_t *r, const uint32_t *a, const uint32_t *mod, uint32_t ninv)
{
    if (CZK_CUDA_FF_CIOS)
        mont_mul_cios<N>(r, a, a, mod, ninv);
    else
        mont_sqr_eo<N>(r, a, mod, ninv);
}

/* ---- the prime fields (Fp, Fr of both curves): ff_traits<F> gives N words,
 * the modulus, the Montgomery one and -p^-1 mod 2^32; the operations below
 * are generic over it. ---- */
template <class F> struct ff_traits {};
#define FF_TRAITS(T, NW, MOD, ONE, R2, NINV)                                         \
    template <> struct ff_traits<T> {                                                 \
        static constexpr int N = NW;                                                  \
        static constexpr uint32_t ninv = NINV;                                        \
        static __device__ __forceinline__ const uint32_t *mod() { return MOD; }       \
        static __device__ __forceinline__ const uint32_t *one() { return ONE; }       \
        static __device__ __forceinline__ const uint32_t *r2() { return R2; }         \
    };
FF_TRAITS(fp_t, 12, c_fp_mod, c_fp_one, c_fp_r2, CZK_FP_NINV32)
FF_TRAITS(fr_t, 8, c_fr_mod, c_fr_one, c_fr_r2, CZK_FR_NINV32)
FF_TRAITS(bn_fp_t, 8, c_bn_fp_mod, c_bn_fp_one, c_bn_fp_r2, CZK_BN_FP_NINV32)
FF_TRAITS(bn_fr_t, 8, c_bn_fr_mod, c_bn_fr_one, c_bn_fr_r2, CZK_BN_FR_NINV32)
#undef FF_TRAITS

/* N = ff_traits<F>::N: substitution fails (the overload drops out) for
 * types without traits, such as fp2x.  All operands Montgomery, fully reduced. */
#define FF_GEN template <class F, int N = ff_traits<F>::N> FF_DEV
FF_GEN void mul(F &r, const F &a, const F &b) { mont_mul_n<N>(r.v, a.v, b.v, ff_traits<F>::mod(), ff_traits<F>::ninv); }
FF_GEN void sqr(F &r, const F &a) { mont_sqr_n<N>(r.v, a.v, ff_traits<F>::mod(), ff_traits<F>::ninv); }
FF_GEN void add(F &r, const F &a, const F &b) { mod_add_n<N>(r.v, a.v, b.v, ff_traits<F>::mod()); }
FF_GEN void sub(F &r, const F &a, const F &b) { mod_sub_n<N>(r.v, a.v, b.v, ff_traits<F>::mod()); }
FF_GEN void dbl(F &r, const F &a) { mod_add_n<N>(r.v, a.v, a.v, ff_traits<F>::mod()); }
FF_GEN bool is_zero(const F &a) { return is_zero_n<N>(a.v); }
FF_GEN bool eq(const F &a, const F &b) { return eq_n<N>(a.v, b.v); }
FF_GEN void set_zero(F &r)
{
#pragma unroll
    for (int j = 0; j < N; j++)
        r.v[j] = 0;
}
FF_GEN void set_one(F &r)
{
#pragma unroll
    for (int j = 0; j < N; j++)
        r.v[j] = ff_traits<F>::one()[j];
}
FF_GEN void neg(F &r, const F &a)
{
    F z;
    set_zero(z);
    sub(r, z, a);
}
/* Montgomery -> standard form: multiply by the plain integer 1 */
FF_GEN void from_mont(F &r, const F &a)
{
    F one;
    set_zero(one);
    one.v[0] = 1;
    mul(r, a, one);
}
/* r = a^-1 by Fermat (a^(p-2)) with 4-bit windows of the exponent; 0 for
 * a = 0.  Not constant time in the exponent only (the public modulus): for
 * public points (fixed-base tables; the batch-affine levels with
 * CZK_CUDA_MSM_BA_INV=0, which by default use inv_vt below). */
FF_GEN void inv(F &r, const F &a)
{
    F tab[16], acc;
    set_one(tab[0]);
    tab[1] = a;
    for (int i = 2; i < 16; i++)
        mul(tab[i], tab[i - 1], a);
    const uint32_t *m = ff_traits<F>::mod();
    bool started = false;
    set_one(acc);
    for (int w = N - 1; w >= 0; w--) {
        const uint32_t e = m[w] - (w == 0 ? 2u : 0u); /* p is odd and its low word > 2 */
        for (int nib = 7; nib >= 0; nib--) {
            const uint32_t d = (e >> (4 * nib)) & 15;
            if (started)
                for (int i = 0; i < 4; i++)
                    sqr(acc, acc);
            if (d) {
                if (started)
                    mul(acc, acc, tab[d]);
                else
                    acc = tab[d];
                started = true;
            }
        }
    }
    r = acc;
}

/* r = a^-1 by the binary extended Euclidean algorithm; 0 for a = 0.
 * VARIABLE TIME in a (its steps follow a's bits): only for values whose
 * handling is data-dependent already (the batch-affine levels' one
 * inversion, msm_ba.cuh).  Shifts, additions and subtractions, and one
 * word-by-number product per run of halvings.  The algorithm runs on the
 * Montgomery representation X = a R as an integer, with x1 starting at
 * R^2 mod p: x1 X = R^2 u (mod p) throughout, so x1 ends as R^2 / X = a^-1 R,
 * the Montgomery form of a^-1.  A run of k trailing zero bits of u (or v)
 * is shifted out at once and x1 (x2) divided by 2^k mod p as a Montgomery
 * reduction does: with m = -x p^-1 mod 2^k, x + m p is divisible by 2^k and
 * (x + m p) / 2^k < p. */
FF_DEV int vt_ctz(uint32_t w) /* w != 0 */
{
#ifdef __CUDA_ARCH__
    return __ffs(w) - 1;
#else
    return __builtin_ctz(w);
#endif
}
/* x <- (top:x) >> k, 1 <= k <= 31 */
template <int N> FF_DEV void vt_shr(uint32_t *x, uint32_t top, int k)
{
#pragma unroll
    for (int j = 0; j < N - 1; j++)
        x[j] = (x[j] >> k) | (x[j + 1] << (32 - k));
    x[N - 1] = (x[N - 1] >> k) | (top << (32 - k));
}
/* x <- x / 2^k mod p (x < p, 1 <= k <= 31, ninv = -p^-1 mod 2^32) */
template <int N> FF_DEV void vt_div2k(uint32_t *x, const uint32_t *p, uint32_t ninv, int k)
{
    const uint32_t m = (x[0] * ninv) & ((1u << k) - 1);
    uint64_t s = 0;
#pragma unroll
    for (int j = 0; j < N; j++) {
        s += (uint64_t)x[j] + (uint64_t)m * p[j];
        x[j] = (uint32_t)s;
        s >>= 32;
    }
    vt_shr<N>(x, (uint32_t)s, k);
}
/* u's trailing zero bits out of u, x <- x / 2^(their count) mod p (u != 0) */
template <int N> FF_DEV void vt_strip(uint32_t *u, uint32_t *x, const uint32_t *p, uint32_t ninv)
{
    while (!(u[0] & 1)) {
        const int k = u[0] ? vt_ctz(u[0]) : 31;
        vt_shr<N>(u, 0, k);
        vt_div2k<N>(x, p, ninv, k);
    }
}
template <int N> FF_DEV bool vt_geq(const uint32_t *u, const uint32_t *v)
{
    for (int j = N - 1; j >= 0; j--)
        if (u[j] != v[j])
            return u[j] > v[j];
    return true;
}
/* u <- u - v (u >= v) */
template <int N> FF_DEV void vt_sub(uint32_t *u, const uint32_t *v)
{
    int64_t s = 0;
#pragma unroll
    for (int j = 0; j < N; j++) {
        s += (int64_t)u[j] - v[j];
        u[j] = (uint32_t)s;
        s >>= 32;
    }
}
template <int N> FF_DEV bool vt_is_one(const uint32_t *u)
{
    uint32_t x = u[0] ^ 1u;
#pragma unroll
    for (int j = 1; j < N; j++)
        x |= u[j];
    return x == 0;
}
FF_GEN void inv_vt(F &r, const F &a)
{
    const uint32_t *p = ff_traits<F>::mod(), *r2 = ff_traits<F>::r2(), ninv = ff_traits<F>::ninv;
    if (is_zero(a)) {
        r = a;
        return;
    }
    uint32_t u[N], v[N], x1[N], x2[N];
#pragma unroll
    for (int j = 0; j < N; j++) {
        u[j] = a.v[j];
        v[j] = p[j];
        x1[j] = r2[j];
        x2[j] = 0;
    }
    while (!vt_is_one<N>(u) && !vt_is_one<N>(v)) {
        vt_strip<N>(u, x1, p, ninv);
        vt_strip<N>(v, x2, p, ninv);
        if (vt_geq<N>(u, v)) {
            vt_sub<N>(u, v);
            mod_sub_n<N>(x1, x1, x2, p);
        } else {
            vt_sub<N>(v, u);
            mod_sub_n<N>(x2, x2, x1, p);
        }
    }
    const uint32_t *z = vt_is_one<N>(u) ? x1 : x2;
#pragma unroll
    for (int j = 0; j < N; j++)
        r.v[j] = z[j];
}
#undef FF_GEN

/* ---- Fp2 = B[u]/(u^2+1), any base field B ---- */
#define FF2 template <class B> FF_DEV
FF2 void add(fp2x<B> &r, const fp2x<B> &a, const fp2x<B> &b) { add(r.c0, a.c0, b.c0); add(r.c1, a.c1, b.c1); }
FF2 void sub(fp2x<B> &r, const fp2x<B> &a, const fp2x<B> &b) { sub(r.c0, a.c0, b.c0); sub(r.c1, a.c1, b.c1); }
FF2 void dbl(fp2x<B> &r, const fp2x<B> &a) { dbl(r.c0, a.c0); dbl(r.c1, a.c1); }
FF2 void neg(fp2x<B> &r, const fp2x<B> &a) { neg(r.c0, a.c0); neg(r.c1, a.c1); }
FF2 bool is_zero(const fp2x<B> &a) { return is_zero(a.c0) && is_zero(a.c1); }
FF2 bool eq(const fp2x<B> &a, const fp2x<B> &b) { return eq(a.c0, b.c0) && eq(a.c1, b.c1); }
FF2 void set_zero(fp2x<B> &r) { set_zero(r.c0); set_zero(r.c1); }
FF2 void set_one(fp2x<B> &r) { set_one(r.c0); set_zero(r.c1); }
/* Karatsuba: (a0 + a1 u)(b0 + b1 u) = a0b0 - a1b1 + ((a0+a1)(b0+b1) - a0b0 - a1b1) u */
FF2 void mul(fp2x<B> &r, const fp2x<B> &a, const fp2x<B> &b)
{
    B t0, t1, s0, s1;
    mul(t0, a.c0, b.c0);
    mul(t1, a.c1, b.c1);
    add(s0, a.c0, a.c1);
    add(s1, b.c0, b.c1);
    mul(s0, s0, s1);
    sub(r.c0, t0, t1);
    sub(s0, s0, t0);
    sub(r.c1, s0, t1);
}
/* (a0 + a1 u)^2 = (a0+a1)(a0-a1) + 2 a0 a1 u */
FF2 void sqr(fp2x<B> &r, const fp2x<B> &a)
{
    B s, d, m;
    add(s, a.c0, a.c1);
    sub(d, a.c0, a.c1);
    mul(m, a.c0, a.c1);
    mul(r.c0, s, d);
    dbl(r.c1, m);
}
/* (a0 + a1 u)^-1 = (a0 - a1 u) / (a0^2 + a1^2), the base field's inversion
 * by inv, or by inv_vt (VARIABLE TIME) with VT */
template <bool VT, class B> FF_DEV void inv_fp2(fp2x<B> &r, const fp2x<B> &a)
{
    B t0, t1;
    sqr(t0, a.c0);
    sqr(t1, a.c1);
    add(t0, t0, t1);
    if (VT)
        inv_vt(t1, t0);
    else
        inv(t1, t0);
    mul(r.c0, a.c0, t1);
    mul(t0, a.c1, t1);
    neg(r.c1, t0);
}
FF2 void inv(fp2x<B> &r, const fp2x<B> &a) { inv_fp2<false>(r, a); }
FF2 void inv_vt(fp2x<B> &r, const fp2x<B> &a) { inv_fp2<true>(r, a); }
#undef FF2

#endif
