/*
 * field_fr.c — the BLS12-381 scalar field Fr (field.h): Montgomery arithmetic
 * on 4 little-endian 64-bit limbs, R = 2^256.  Hot operations come from
 * field_impl.h; this file adds inversion, batch inversion, powers, the
 * conversions and uniform random elements from getrandom(2).
 */
#include <errno.h>
#include <string.h>
#include <sys/random.h>

#include "common/crypto/field_impl.h"
#include "common/base/log.h"

const czk_fr CZK_FR_MOD = {{0xffffffff00000001ULL, 0x53bda402fffe5bfeULL, 0x3339d80809a1d805ULL,
                            0x73eda753299d7d48ULL}};
const czk_fr CZK_FR_ZERO = {{0, 0, 0, 0}};
const czk_fr CZK_FR_ONE = {{0x00000001fffffffeULL, 0x5884b7fa00034802ULL, 0x998c4fefecbc4ff5ULL,
                            0x1824b159acc5056fULL}};
static const czk_fr FR_R2 = {{0xc999e990f3f29c6dULL, 0x2b6cedcb87925c23ULL, 0x05d314967254398fULL,
                              0x0748d9d99f59ff11ULL}};
static const uint64_t FR_RM2[4] = {0xfffffffeffffffffULL, 0x53bda402fffe5bfeULL,
                                   0x3339d80809a1d805ULL, 0x73eda753299d7d48ULL};

void czk_fr_add(czk_fr *r, const czk_fr *a, const czk_fr *b) { czk_fr_add_i(r, a, b); }
void czk_fr_sub(czk_fr *r, const czk_fr *a, const czk_fr *b) { czk_fr_sub_i(r, a, b); }
void czk_fr_dbl(czk_fr *r, const czk_fr *a) { czk_fr_dbl_i(r, a); }
void czk_fr_neg(czk_fr *r, const czk_fr *a) { czk_fr_neg_i(r, a); }
void czk_fr_mul(czk_fr *r, const czk_fr *a, const czk_fr *b) { czk_fr_mul_i(r, a, b); }
void czk_fr_sqr(czk_fr *r, const czk_fr *a) { czk_fr_sqr_i(r, a); }
bool czk_fr_is_zero(const czk_fr *a) { return czk_fr_is_zero_i(a); }
bool czk_fr_eq(const czk_fr *a, const czk_fr *b) { return czk_fr_eq_i(a, b); }

/* as czk_fp_pow: the time depends on the exponent only */
void czk_fr_pow(czk_fr *r, const czk_fr *a, const uint64_t *e, size_t e_limbs)
{
    czk_fr tbl[16], acc = CZK_FR_ONE;
    bool started = false;

    tbl[0] = CZK_FR_ONE;
    tbl[1] = *a;
    for (int i = 2; i < 16; i++)
        czk_fr_mul_i(&tbl[i], &tbl[i - 1], a);
    for (size_t li = e_limbs; li-- > 0;) {
        for (int sh = 60; sh >= 0; sh -= 4) {
            unsigned nib = (unsigned)(e[li] >> sh) & 15;
            if (started) {
                czk_fr_sqr_i(&acc, &acc);
                czk_fr_sqr_i(&acc, &acc);
                czk_fr_sqr_i(&acc, &acc);
                czk_fr_sqr_i(&acc, &acc);
            }
            if (nib) {
                czk_fr_mul_i(&acc, &acc, &tbl[nib]);
                started = true;
            }
        }
    }
    *r = acc;
}

/* R^3 mod r, see czk_fp_inv */
static const czk_fr FR_R3 = {{0xc62c1807439b73afULL, 0x1b3e0d188cf06990ULL, 0x73d13c71c7b5f418ULL,
                              0x6e2a5bb9c8db33e9ULL}};

int czk_fr_inv(czk_fr *r, const czk_fr *a)
{
    czk_fr t;
    if (czk_fr_is_zero_i(a)) {
        *r = CZK_FR_ZERO;
        return -EDOM;
    }
    if (czk_field_inv_(t.l, a->l, czk_fr_r_, CZK_FR_RINV_, 4) == 0)
        czk_fr_mul_i(r, &t, &FR_R3);
    else
        czk_fr_pow(r, a, FR_RM2, 4); /* not reached for a prime modulus; kept as a safe path */
    return 0;
}

/* Fermat, as czk_fp_inv_ct: a^(r-2) over the public exponent */
void czk_fr_inv_ct(czk_fr *r, const czk_fr *a) { czk_fr_pow(r, a, FR_RM2, 4); }

/* Montgomery's trick: prefix products in scratch, one inversion, then walk
 * back.  Zero inputs are skipped (and give zero). out may alias in. */
void czk_fr_batch_inv(czk_fr *out, const czk_fr *in, size_t n, czk_fr *scratch)
{
    czk_fr acc = CZK_FR_ONE, inv;

    for (size_t i = 0; i < n; i++) {
        scratch[i] = acc;
        if (!czk_fr_is_zero_i(&in[i]))
            czk_fr_mul_i(&acc, &acc, &in[i]);
    }
    czk_fr_inv(&inv, &acc); /* acc is a product of non-zero values: never 0 */
    for (size_t i = n; i-- > 0;) {
        if (czk_fr_is_zero_i(&in[i])) {
            out[i] = CZK_FR_ZERO;
            continue;
        }
        czk_fr x = in[i];
        czk_fr_mul_i(&out[i], &inv, &scratch[i]);
        czk_fr_mul_i(&inv, &inv, &x);
    }
}

/* czk_fr_batch_inv without branches: a zero input multiplies by one instead
 * (selected by mask) and its output is masked to zero; the inversion is
 * czk_fr_inv_ct.  out may alias in. */
void czk_fr_batch_inv_ct(czk_fr *out, const czk_fr *in, size_t n, czk_fr *scratch)
{
    czk_fr acc = CZK_FR_ONE, inv, f, x;

    for (size_t i = 0; i < n; i++) {
        uint64_t zero = czk_ct_zero_mask_(in[i].l, 4);

        scratch[i] = acc;
        f = in[i];
        czk_ct_cmov_(f.l, CZK_FR_ONE.l, zero, 4);
        czk_fr_mul_i(&acc, &acc, &f);
    }
    czk_fr_inv_ct(&inv, &acc); /* a product of non-zero values (zeros were replaced by one) */
    for (size_t i = n; i-- > 0;) {
        uint64_t zero = czk_ct_zero_mask_(in[i].l, 4);

        f = in[i];
        czk_ct_cmov_(f.l, CZK_FR_ONE.l, zero, 4);
        czk_fr_mul_i(&x, &inv, &scratch[i]);
        czk_fr_mul_i(&inv, &inv, &f);
        czk_ct_cmov_(x.l, CZK_FR_ZERO.l, zero, 4);
        out[i] = x;
    }
    explicit_bzero(&acc, sizeof(acc));
    explicit_bzero(&inv, sizeof(inv));
    explicit_bzero(&f, sizeof(f));
    explicit_bzero(&x, sizeof(x));
}

void czk_fr_from_u64(czk_fr *r, uint64_t v)
{
    czk_fr t = {{v, 0, 0, 0}};
    czk_fr_mul_i(r, &t, &FR_R2);
}

void czk_fr_to_mont(czk_fr *r, const czk_fr *std) { czk_fr_mul_i(r, std, &FR_R2); }

void czk_fr_from_mont(czk_fr *std, const czk_fr *a)
{
    static const czk_fr one_plain = {{1, 0, 0, 0}};
    czk_fr_mul_i(std, a, &one_plain);
}

bool czk_fr_is_canonical(const czk_fr *raw) { return czk_field_lt_(raw->l, czk_fr_r_, 4); }

int czk_fr_from_bytes_le(czk_fr *r, const uint8_t b[CZK_FR_BYTES])
{
    czk_fr t;
    for (int i = 0; i < 4; i++) {
        uint64_t v = 0;
        for (int j = 7; j >= 0; j--)
            v = (v << 8) | b[8 * i + j];
        t.l[i] = v;
    }
    if (!czk_fr_is_canonical(&t))
        return -ERANGE;
    czk_fr_to_mont(r, &t);
    return 0;
}

void czk_fr_to_bytes_le(uint8_t b[CZK_FR_BYTES], const czk_fr *a)
{
    czk_fr t;
    czk_fr_from_mont(&t, a);
    for (int i = 0; i < 4; i++)
        for (int j = 0; j < 8; j++)
            b[8 * i + j] = (uint8_t)(t.l[i] >> (8 * j));
}

int czk_fr_from_dec(czk_fr *r, const char *s)
{
    czk_fr t;
    int rc = czk_field_from_dec_(t.l, s, czk_fr_r_, 4, CZK_FR_DEC_MAX - 1);
    if (rc < 0)
        return rc;
    czk_fr_to_mont(r, &t);
    return 0;
}

void czk_fr_to_dec(char out[CZK_FR_DEC_MAX], const czk_fr *a)
{
    char buf[20 * 4 + 1];
    czk_fr t;
    czk_fr_from_mont(&t, a);
    czk_field_to_dec_(buf, t.l, 4); /* < r < 10^78: at most 77 digits */
    memcpy(out, buf, strlen(buf) + 1);
}

/* Rejection sampling on 255-bit strings: r > 2^254, so each draw is accepted
 * with probability r / 2^255 > 1/2 and the result is exactly uniform. */
int czk_fr_random(czk_fr *r)
{
    for (;;) {
        uint8_t buf[CZK_FR_BYTES];
        size_t got = 0;
        while (got < sizeof(buf)) {
            ssize_t n = getrandom(buf + got, sizeof(buf) - got, 0);
            if (n < 0) {
                if (errno == EINTR)
                    continue;
                int rc = -errno;
                czk_err("could not draw a random scalar: getrandom: %s", strerror(errno));
                return rc;
            }
            got += (size_t)n;
        }
        buf[31] &= 0x7f;
        czk_fr t;
        for (int i = 0; i < 4; i++) {
            uint64_t v = 0;
            for (int j = 7; j >= 0; j--)
                v = (v << 8) | buf[8 * i + j];
            t.l[i] = v;
        }
        explicit_bzero(buf, sizeof(buf));
        if (czk_fr_is_canonical(&t)) {
            czk_fr_to_mont(r, &t);
            explicit_bzero(&t, sizeof(t));
            return 0;
        }
    }
}
