/*
 * ff.cuh — BLS12-381 field arithmetic on the device: Fp (381 bits, 12 x 32-bit
 * limbs), Fr (255 bits, 8 x 32-bit limbs) and Fp2 = Fp[u]/(u^2+1).
 *
 * Representation is the host contract of common/field.h reinterpreted as
 * 32-bit words: Montgomery form (R = 2^384 for Fp, 2^256 for Fr), least
 * significant word first, fully reduced.  A czk_fp array in host memory is
 * therefore a fp_t array on the device byte for byte.
 *
 * Multiplication is CIOS Montgomery: per word of b, four carry chains of
 * PTX mad.lo.cc / madc.hi.cc (t += a*b_i low and high halves, then
 * t += m*p low and high halves) and a word shift.  Both moduli are below
 * 2^(32N-1), so the running value stays below 2p and one conditional
 * subtraction finishes.  Every inline asm statement that reads or writes the
 * carry flag is volatile so the front end keeps the chains in order.
 */
#ifndef CZK_CUDA_FF_CUH
#define CZK_CUDA_FF_CUH

#include <stdint.h>

struct fp_t { uint32_t v[12]; };
struct fr_t { uint32_t v[8]; };
struct fp2_t { fp_t c0, c1; };

static_assert(sizeof(fp_t) == 48, "fp_t layout");
static_assert(sizeof(fr_t) == 32, "fr_t layout");
static_assert(sizeof(fp2_t) == 96, "fp2_t layout");

/* moduli, Montgomery one, -p^-1 mod 2^32 (values checked against common/field_impl.h) */
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
#define CZK_FP_NINV32 0xfffcfffdu
#define CZK_FR_NINV32 0xffffffffu

#define FF_DEV static __device__ __forceinline__

/* ---- generic N-word Montgomery helpers ---- */

template <int N>
FF_DEV void mont_mul_n(uint32_t *r, const uint32_t *a, const uint32_t *b,
                       const uint32_t *mod, uint32_t ninv)
{
    uint32_t t[N + 2];
#pragma unroll
    for (int j = 0; j < N + 2; j++)
        t[j] = 0;
#pragma unroll
    for (int i = 0; i < N; i++) {
        const uint32_t bi = b[i];
        /* t[0..N+1] += lo(a*bi) */
        asm volatile("mad.lo.cc.u32 %0, %1, %2, %0;" : "+r"(t[0]) : "r"(a[0]), "r"(bi));
#pragma unroll
        for (int j = 1; j < N; j++)
            asm volatile("madc.lo.cc.u32 %0, %1, %2, %0;" : "+r"(t[j]) : "r"(a[j]), "r"(bi));
        asm volatile("addc.cc.u32 %0, %0, 0;" : "+r"(t[N]));
        asm volatile("addc.u32 %0, %0, 0;" : "+r"(t[N + 1]));
        /* t[1..N+1] += hi(a*bi) */
        asm volatile("mad.hi.cc.u32 %0, %1, %2, %0;" : "+r"(t[1]) : "r"(a[0]), "r"(bi));
#pragma unroll
        for (int j = 1; j < N; j++)
            asm volatile("madc.hi.cc.u32 %0, %1, %2, %0;" : "+r"(t[j + 1]) : "r"(a[j]), "r"(bi));
        asm volatile("addc.u32 %0, %0, 0;" : "+r"(t[N + 1]));
        /* reduction: t += m*p, t[0] becomes 0 */
        const uint32_t m = t[0] * ninv;
        asm volatile("mad.lo.cc.u32 %0, %1, %2, %0;" : "+r"(t[0]) : "r"(mod[0]), "r"(m));
#pragma unroll
        for (int j = 1; j < N; j++)
            asm volatile("madc.lo.cc.u32 %0, %1, %2, %0;" : "+r"(t[j]) : "r"(mod[j]), "r"(m));
        asm volatile("addc.cc.u32 %0, %0, 0;" : "+r"(t[N]));
        asm volatile("addc.u32 %0, %0, 0;" : "+r"(t[N + 1]));
        asm volatile("mad.hi.cc.u32 %0, %1, %2, %0;" : "+r"(t[1]) : "r"(mod[0]), "r"(m));
#pragma unroll
        for (int j = 1; j < N; j++)
            asm volatile("madc.hi.cc.u32 %0, %1, %2, %0;" : "+r"(t[j + 1]) : "r"(mod[j]), "r"(m));
        asm volatile("addc.u32 %0, %0, 0;" : "+r"(t[N + 1]));
#pragma unroll
        for (int j = 0; j < N + 1; j++)
            t[j] = t[j + 1];
        t[N + 1] = 0;
    }
    /* t < 2p < 2^(32N): subtract p once if t >= p */
    uint32_t s[N], br;
    asm volatile("sub.cc.u32 %0, %1, %2;" : "=r"(s[0]) : "r"(t[0]), "r"(mod[0]));
#pragma unroll
    for (int j = 1; j < N; j++)
        asm volatile("subc.cc.u32 %0, %1, %2;" : "=r"(s[j]) : "r"(t[j]), "r"(mod[j]));
    asm volatile("subc.u32 %0, 0, 0;" : "=r"(br));
#pragma unroll
    for (int j = 0; j < N; j++)
        r[j] = br ? t[j] : s[j];
}

template <int N>
FF_DEV void mod_add_n(uint32_t *r, const uint32_t *a, const uint32_t *b, const uint32_t *mod)
{
    uint32_t t[N], s[N], br;
    asm volatile("add.cc.u32 %0, %1, %2;" : "=r"(t[0]) : "r"(a[0]), "r"(b[0]));
#pragma unroll
    for (int j = 1; j < N; j++)
        asm volatile("addc.cc.u32 %0, %1, %2;" : "=r"(t[j]) : "r"(a[j]), "r"(b[j]));
    /* a + b < 2p < 2^(32N): no carry out */
    asm volatile("sub.cc.u32 %0, %1, %2;" : "=r"(s[0]) : "r"(t[0]), "r"(mod[0]));
#pragma unroll
    for (int j = 1; j < N; j++)
        asm volatile("subc.cc.u32 %0, %1, %2;" : "=r"(s[j]) : "r"(t[j]), "r"(mod[j]));
    asm volatile("subc.u32 %0, 0, 0;" : "=r"(br));
#pragma unroll
    for (int j = 0; j < N; j++)
        r[j] = br ? t[j] : s[j];
}

template <int N>
FF_DEV void mod_sub_n(uint32_t *r, const uint32_t *a, const uint32_t *b, const uint32_t *mod)
{
    uint32_t t[N], br;
    asm volatile("sub.cc.u32 %0, %1, %2;" : "=r"(t[0]) : "r"(a[0]), "r"(b[0]));
#pragma unroll
    for (int j = 1; j < N; j++)
        asm volatile("subc.cc.u32 %0, %1, %2;" : "=r"(t[j]) : "r"(a[j]), "r"(b[j]));
    asm volatile("subc.u32 %0, 0, 0;" : "=r"(br));
    /* borrow: add p back (masked) */
    uint32_t m[N];
#pragma unroll
    for (int j = 0; j < N; j++)
        m[j] = mod[j] & br;
    asm volatile("add.cc.u32 %0, %0, %1;" : "+r"(t[0]) : "r"(m[0]));
#pragma unroll
    for (int j = 1; j < N - 1; j++)
        asm volatile("addc.cc.u32 %0, %0, %1;" : "+r"(t[j]) : "r"(m[j]));
    asm volatile("addc.u32 %0, %0, %1;" : "+r"(t[N - 1]) : "r"(m[N - 1]));
#pragma unroll
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

/* ---- Fp ---- */
FF_DEV void mul(fp_t &r, const fp_t &a, const fp_t &b) { mont_mul_n<12>(r.v, a.v, b.v, c_fp_mod, CZK_FP_NINV32); }
FF_DEV void sqr(fp_t &r, const fp_t &a) { mont_mul_n<12>(r.v, a.v, a.v, c_fp_mod, CZK_FP_NINV32); }
FF_DEV void add(fp_t &r, const fp_t &a, const fp_t &b) { mod_add_n<12>(r.v, a.v, b.v, c_fp_mod); }
FF_DEV void sub(fp_t &r, const fp_t &a, const fp_t &b) { mod_sub_n<12>(r.v, a.v, b.v, c_fp_mod); }
FF_DEV void dbl(fp_t &r, const fp_t &a) { mod_add_n<12>(r.v, a.v, a.v, c_fp_mod); }
FF_DEV bool is_zero(const fp_t &a) { return is_zero_n<12>(a.v); }
FF_DEV bool eq(const fp_t &a, const fp_t &b) { return eq_n<12>(a.v, b.v); }
FF_DEV void set_zero(fp_t &r)
{
#pragma unroll
    for (int j = 0; j < 12; j++)
        r.v[j] = 0;
}
FF_DEV void set_one(fp_t &r)
{
#pragma unroll
    for (int j = 0; j < 12; j++)
        r.v[j] = c_fp_one[j];
}
FF_DEV void neg(fp_t &r, const fp_t &a)
{
    fp_t z;
    set_zero(z);
    sub(r, z, a);
}

/* ---- Fr ---- */
FF_DEV void mul(fr_t &r, const fr_t &a, const fr_t &b) { mont_mul_n<8>(r.v, a.v, b.v, c_fr_mod, CZK_FR_NINV32); }
FF_DEV void sqr(fr_t &r, const fr_t &a) { mont_mul_n<8>(r.v, a.v, a.v, c_fr_mod, CZK_FR_NINV32); }
FF_DEV void add(fr_t &r, const fr_t &a, const fr_t &b) { mod_add_n<8>(r.v, a.v, b.v, c_fr_mod); }
FF_DEV void sub(fr_t &r, const fr_t &a, const fr_t &b) { mod_sub_n<8>(r.v, a.v, b.v, c_fr_mod); }
FF_DEV bool is_zero(const fr_t &a) { return is_zero_n<8>(a.v); }
FF_DEV void set_zero(fr_t &r)
{
#pragma unroll
    for (int j = 0; j < 8; j++)
        r.v[j] = 0;
}
FF_DEV void set_one(fr_t &r)
{
#pragma unroll
    for (int j = 0; j < 8; j++)
        r.v[j] = c_fr_one[j];
}
FF_DEV void neg(fr_t &r, const fr_t &a)
{
    fr_t z;
    set_zero(z);
    sub(r, z, a);
}
/* Montgomery -> standard form: multiply by the plain integer 1 */
FF_DEV void from_mont(fr_t &r, const fr_t &a)
{
    fr_t one;
    set_zero(one);
    one.v[0] = 1;
    mul(r, a, one);
}

/* ---- Fp2 = Fp[u]/(u^2+1) ---- */
FF_DEV void add(fp2_t &r, const fp2_t &a, const fp2_t &b) { add(r.c0, a.c0, b.c0); add(r.c1, a.c1, b.c1); }
FF_DEV void sub(fp2_t &r, const fp2_t &a, const fp2_t &b) { sub(r.c0, a.c0, b.c0); sub(r.c1, a.c1, b.c1); }
FF_DEV void dbl(fp2_t &r, const fp2_t &a) { dbl(r.c0, a.c0); dbl(r.c1, a.c1); }
FF_DEV void neg(fp2_t &r, const fp2_t &a) { neg(r.c0, a.c0); neg(r.c1, a.c1); }
FF_DEV bool is_zero(const fp2_t &a) { return is_zero(a.c0) && is_zero(a.c1); }
FF_DEV bool eq(const fp2_t &a, const fp2_t &b) { return eq(a.c0, b.c0) && eq(a.c1, b.c1); }
FF_DEV void set_zero(fp2_t &r) { set_zero(r.c0); set_zero(r.c1); }
FF_DEV void set_one(fp2_t &r) { set_one(r.c0); set_zero(r.c1); }
/* Karatsuba: (a0 + a1 u)(b0 + b1 u) = a0b0 - a1b1 + ((a0+a1)(b0+b1) - a0b0 - a1b1) u */
FF_DEV void mul(fp2_t &r, const fp2_t &a, const fp2_t &b)
{
    fp_t t0, t1, s0, s1;
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
FF_DEV void sqr(fp2_t &r, const fp2_t &a)
{
    fp_t s, d, m;
    add(s, a.c0, a.c1);
    sub(d, a.c0, a.c1);
    mul(m, a.c0, a.c1);
    mul(r.c0, s, d);
    dbl(r.c1, m);
}

#endif
