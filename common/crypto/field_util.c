/*
 * field_util.c — limb-count-generic helpers shared by the Fp and Fr code:
 * decimal conversion (snarkjs JSON) and comparison of plain n-limb integers
 * (least significant limb first).  Not on any hot path.
 */
#include <errno.h>
#include <string.h>

#include "common/crypto/field_impl.h"

#define CZK_FIELD_MAX_LIMBS 8

int czk_field_lt_(const uint64_t *a, const uint64_t *m, int n)
{
    for (int i = n - 1; i >= 0; i--) {
        if (a[i] != m[i])
            return a[i] < m[i];
    }
    return 0;
}

void czk_field_to_dec_(char *out, const uint64_t *a, int n)
{
    uint64_t t[CZK_FIELD_MAX_LIMBS];
    char rev[20 * CZK_FIELD_MAX_LIMBS + 1];
    size_t len = 0;
    int top = n;

    memcpy(t, a, (size_t)n * sizeof(uint64_t));
    while (top > 0 && t[top - 1] == 0)
        top--;
    if (top == 0) {
        out[0] = '0';
        out[1] = '\0';
        return;
    }
    /* divide by 10^19 repeatedly; each remainder gives 19 digits */
    const uint64_t chunk = 10000000000000000000ULL;
    while (top > 0) {
        czk_u128 rem = 0;
        for (int i = top - 1; i >= 0; i--) {
            czk_u128 cur = (rem << 64) | t[i];
            t[i] = (uint64_t)(cur / chunk);
            rem = cur % chunk;
        }
        while (top > 0 && t[top - 1] == 0)
            top--;
        uint64_t r = (uint64_t)rem;
        for (int d = 0; d < 19; d++) {
            rev[len++] = (char)('0' + r % 10);
            r /= 10;
            if (top == 0 && r == 0)
                break;
        }
    }
    while (len > 1 && rev[len - 1] == '0')
        len--;
    for (size_t i = 0; i < len; i++)
        out[i] = rev[len - 1 - i];
    out[len] = '\0';
}

int czk_field_from_dec_(uint64_t *out, const char *s, const uint64_t *m, int n, size_t max_digits)
{
    /* one spare limb: max_digits decimal digits always fit in n + 1 limbs
     * (callers pass max_digits < 19.2 * (n + 1)) */
    uint64_t t[CZK_FIELD_MAX_LIMBS + 1] = {0};
    size_t len = 0;

    if (s == NULL || s[0] == '\0')
        return -EINVAL;
    for (const char *p = s; *p; p++) {
        if (*p < '0' || *p > '9')
            return -EINVAL;
        if (++len > max_digits)
            return -EINVAL;
        uint64_t carry = (uint64_t)(*p - '0');
        for (int i = 0; i <= n; i++) {
            czk_u128 v = (czk_u128)t[i] * 10 + carry;
            t[i] = (uint64_t)v;
            carry = (uint64_t)(v >> 64);
        }
    }
    if (t[n] != 0 || !czk_field_lt_(t, m, n))
        return -ERANGE;
    memcpy(out, t, (size_t)n * sizeof(uint64_t));
    return 0;
}

/* ---- inversion: Pornin's optimised binary GCD ----
 * T. Pornin, "Optimized Binary GCD for Modular Inversion" (ePrint 2020/972),
 * variable-time variant with k = 32: each round runs 31 binary-GCD steps on
 * 64-bit approximations of a and b (low 31 bits and top 33 bits), recording
 * them as a 2x2 matrix of signed 32-bit factors, then applies the matrix to
 * the full values.  Invariants: a = u*y, b = v*y (mod m); when b reaches 1,
 * v = 1/y.  2*bits(m) - 1 steps always suffice, hence a fixed round count. */

typedef __int128 czk_i128;

/* bit length of the n-limb integer x */
static int bitlen_(const uint64_t *x, int n)
{
    for (int i = n - 1; i >= 0; i--)
        if (x[i])
            return 64 * i + 64 - __builtin_clzll(x[i]);
    return 0;
}

/* 64 bits of x starting at bit s (bits past the top are zero) */
static uint64_t bits_at_(const uint64_t *x, int n, int s)
{
    int w = s / 64, o = s % 64;
    uint64_t v = w < n ? x[w] >> o : 0;
    if (o && w + 1 < n)
        v |= x[w + 1] << (64 - o);
    return v;
}

/* out[0..n] (two's complement, n+1 limbs) = x*f + y*g */
static void lincomb_(uint64_t *out, const uint64_t *x, int64_t f, const uint64_t *y, int64_t g, int n)
{
    czk_i128 carry = 0;
    for (int i = 0; i < n; i++) {
        czk_i128 acc = (czk_i128)f * (czk_i128)x[i] + (czk_i128)g * (czk_i128)y[i] + carry;
        out[i] = (uint64_t)acc;
        carry = acc >> 64;
    }
    out[n] = (uint64_t)carry;
}

/* arithmetic shift right by s (0 < s < 64) of an m-limb two's complement value */
static void sar_(uint64_t *x, int m, int s)
{
    for (int i = 0; i < m - 1; i++)
        x[i] = (x[i] >> s) | (x[i + 1] << (64 - s));
    x[m - 1] = (uint64_t)((int64_t)x[m - 1] >> s);
}

static void neg_(uint64_t *x, int m)
{
    uint64_t c = 1;
    for (int i = 0; i < m; i++) {
        uint64_t t = ~x[i] + c;
        c = c && t == 0;
        x[i] = t;
    }
}

/* x (m limbs, two's complement) += sign * mod (mod has m-1 limbs) */
static void addmod_(uint64_t *x, const uint64_t *mod, int m, int sign)
{
    uint64_t c = 0;
    if (sign > 0) {
        for (int i = 0; i < m; i++)
            x[i] = czk_addc_(x[i], i < m - 1 ? mod[i] : 0, &c);
    } else {
        for (int i = 0; i < m; i++)
            x[i] = czk_subb_(x[i], i < m - 1 ? mod[i] : 0, &c);
    }
}

/* x (n+1 limbs, signed) in (-4m, 4m) -> [0, m) in out (n limbs) */
static void normalise_(uint64_t *out, uint64_t *x, const uint64_t *mod, int n)
{
    while ((int64_t)x[n] < 0)
        addmod_(x, mod, n + 1, +1);
    while (x[n] != 0 || !czk_field_lt_(x, mod, n))
        addmod_(x, mod, n + 1, -1);
    memcpy(out, x, (size_t)n * sizeof(uint64_t));
}

/* (x*f + y*g) / 2^31 mod m for x, y in [0, m), |f|, |g| <= 2^31 */
static void update_uv_(uint64_t *out, const uint64_t *x, int64_t f, const uint64_t *y, int64_t g,
                       const uint64_t *mod, uint64_t minv, int n)
{
    uint64_t t[CZK_FIELD_MAX_LIMBS + 1], km[CZK_FIELD_MAX_LIMBS + 1];
    lincomb_(t, x, f, y, g, n);
    /* add k*m with k = -t/m mod 2^31 so that the sum is divisible by 2^31 */
    uint64_t k = (t[0] * minv) & 0x7fffffffULL, c = 0, hi = 0;
    for (int i = 0; i < n; i++) {
        czk_u128 p = (czk_u128)k * mod[i] + hi;
        km[i] = (uint64_t)p;
        hi = (uint64_t)(p >> 64);
    }
    km[n] = hi;
    for (int i = 0; i <= n; i++)
        t[i] = czk_addc_(t[i], km[i], &c);
    sar_(t, n + 1, 31);
    normalise_(out, t, mod, n);
}

int czk_field_inv_(uint64_t *out, const uint64_t *y, const uint64_t *mod, uint64_t minv, int n)
{
    uint64_t a[CZK_FIELD_MAX_LIMBS], b[CZK_FIELD_MAX_LIMBS], u[CZK_FIELD_MAX_LIMBS] = {1},
             v[CZK_FIELD_MAX_LIMBS] = {0}, t[CZK_FIELD_MAX_LIMBS + 1];
    int rounds = (2 * bitlen_(mod, n) - 1 + 30) / 31;

    memcpy(a, y, (size_t)n * sizeof(uint64_t));
    memcpy(b, mod, (size_t)n * sizeof(uint64_t));
    for (int rd = 0; rd < rounds; rd++) {
        int la = bitlen_(a, n), lb = bitlen_(b, n);
        int len = la > lb ? la : lb;
        if (len < 64)
            len = 64;
        uint64_t ab = (a[0] & 0x7fffffffULL) | (bits_at_(a, n, len - 33) << 31);
        uint64_t bb = (b[0] & 0x7fffffffULL) | (bits_at_(b, n, len - 33) << 31);
        int64_t f0 = 1, g0 = 0, f1 = 0, g1 = 1;
        for (int j = 0; j < 31; j++) {
            if (ab & 1) {
                if (ab < bb) {
                    uint64_t s = ab; ab = bb; bb = s;
                    int64_t sf = f0; f0 = f1; f1 = sf;
                    int64_t sg = g0; g0 = g1; g1 = sg;
                }
                ab = (ab - bb) >> 1;
                f0 -= f1;
                g0 -= g1;
            } else {
                ab >>= 1;
            }
            f1 *= 2;
            g1 *= 2;
        }
        /* a, b <- (a f0 + b g0) / 2^31, (a f1 + b g1) / 2^31, made non-negative */
        uint64_t na[CZK_FIELD_MAX_LIMBS + 1];
        lincomb_(na, a, f0, b, g0, n);
        lincomb_(t, a, f1, b, g1, n);
        sar_(na, n + 1, 31);
        sar_(t, n + 1, 31);
        if ((int64_t)na[n] < 0) {
            neg_(na, n + 1);
            f0 = -f0;
            g0 = -g0;
        }
        if ((int64_t)t[n] < 0) {
            neg_(t, n + 1);
            f1 = -f1;
            g1 = -g1;
        }
        memcpy(a, na, (size_t)n * sizeof(uint64_t));
        memcpy(b, t, (size_t)n * sizeof(uint64_t));
        uint64_t nu[CZK_FIELD_MAX_LIMBS];
        update_uv_(nu, u, f0, v, g0, mod, minv, n);
        update_uv_(v, u, f1, v, g1, mod, minv, n);
        memcpy(u, nu, (size_t)n * sizeof(uint64_t));
    }
    /* b must have reached gcd(y, m) = 1 */
    if (b[0] != 1 || bitlen_(b, n) != 1)
        return -EDOM;
    memcpy(out, v, (size_t)n * sizeof(uint64_t));
    return 0;
}
