/*
 * field_tmpl.h — template of the public functions every prime field of
 * field.h and bn254_field.h has, included once per field: by field_fp.c and
 * field_fr.c (BLS12-381) and by bn254_fp.c and bn254_fr.c (BN254).
 * Montgomery form, fully reduced, n 64-bit limbs least significant first.
 * The includer includes its field's implementation header (the _i
 * operations of field_tmpl_impl.h) and defines:
 *   BF          the field type, also the function prefix (czk_fp makes czk_fp_add ...),
 *   BF_N        limbs, BF_BYTES the byte size, BF_DEC_MAX the decimal buffer size,
 *   BF_M        the modulus limbs, BF_MINV -m^-1 mod 2^64,
 *   BF_ZERO, BF_ONE  0 and R mod m, BF_R2 R^2 mod m, BF_R3 R^3 mod m (lvalues),
 *   BF_MM2      m - 2 (the Fermat exponent, BF_N limbs);
 * and optionally:
 *   BF_SQRT_EXP (m + 1) / 4 for m = 3 mod 4: defines _sqrt as a^((m+1)/4),
 *               checked by squaring;
 *   BF_RANDOM_TOP and BF_RANDOM_WHAT: defines _random, rejection sampling
 *               on uniform byte strings whose top byte is masked with
 *               BF_RANDOM_TOP (the mask must leave m / 2^bits > 1/2, so a
 *               draw is accepted with probability above one half);
 *               BF_RANDOM_WHAT names the value in the log line.
 * It undefines its inputs at the end.
 */
#define BF_CAT_(a, b) a##b
#define BF_CAT(a, b) BF_CAT_(a, b)
#define BFF(name) BF_CAT(BF, name)

void BFF(_add)(BF *r, const BF *a, const BF *b) { BFF(_add_i)(r, a, b); }
void BFF(_sub)(BF *r, const BF *a, const BF *b) { BFF(_sub_i)(r, a, b); }
void BFF(_dbl)(BF *r, const BF *a) { BFF(_dbl_i)(r, a); }
void BFF(_neg)(BF *r, const BF *a) { BFF(_neg_i)(r, a); }
void BFF(_mul)(BF *r, const BF *a, const BF *b) { BFF(_mul_i)(r, a, b); }
void BFF(_sqr)(BF *r, const BF *a) { BFF(_sqr_i)(r, a); }
bool BFF(_is_zero)(const BF *a) { return BFF(_is_zero_i)(a); }
bool BFF(_eq)(const BF *a, const BF *b) { return BFF(_eq_i)(a, b); }

/* fixed 4-bit window, most significant first; the exponent is a plain
 * integer.  Branches and table indices come from the exponent only, never
 * from a, so with a public exponent the time does not depend on the base
 * (_inv_ct relies on this). */
void BFF(_pow)(BF *r, const BF *a, const uint64_t *e, size_t e_limbs)
{
    BF tbl[16], acc = BF_ONE;
    bool started = false;

    tbl[0] = BF_ONE;
    tbl[1] = *a;
    for (int i = 2; i < 16; i++)
        BFF(_mul_i)(&tbl[i], &tbl[i - 1], a);
    for (size_t li = e_limbs; li-- > 0;) {
        for (int sh = 60; sh >= 0; sh -= 4) {
            unsigned nib = (unsigned)(e[li] >> sh) & 15;
            if (started) {
                BFF(_sqr_i)(&acc, &acc);
                BFF(_sqr_i)(&acc, &acc);
                BFF(_sqr_i)(&acc, &acc);
                BFF(_sqr_i)(&acc, &acc);
            }
            if (nib) {
                BFF(_mul_i)(&acc, &acc, &tbl[nib]);
                started = true;
            }
        }
    }
    *r = acc;
}

/* the binary GCD of field_util.c inverts the raw integer a R, giving
 * 1/(a R); a Montgomery product with R^3 makes that R/a, the Montgomery
 * form of 1/a */
int BFF(_inv)(BF *r, const BF *a)
{
    BF t;
    if (BFF(_is_zero_i)(a)) {
        *r = BF_ZERO;
        return -EDOM;
    }
    if (czk_field_inv_(t.l, a->l, BF_M, BF_MINV, BF_N) == 0)
        BFF(_mul_i)(r, &t, &BF_R3);
    else
        BFF(_pow)(r, a, BF_MM2, BF_N); /* not reached for a prime modulus; kept as a safe path */
    return 0;
}

/* Fermat: a^(m-2) = 1/a for a != 0 and 0 for a == 0, through the fixed
 * window of _pow over the public exponent m - 2 (the same squarings and
 * multiplications whatever a is) */
void BFF(_inv_ct)(BF *r, const BF *a) { BFF(_pow)(r, a, BF_MM2, BF_N); }

#ifdef BF_SQRT_EXP
int BFF(_sqrt)(BF *r, const BF *a)
{
    BF s, chk;
    BFF(_pow)(&s, a, BF_SQRT_EXP, BF_N);
    BFF(_sqr_i)(&chk, &s);
    if (!BFF(_eq_i)(&chk, a))
        return -EDOM;
    *r = s;
    return 0;
}
#endif

void BFF(_from_u64)(BF *r, uint64_t v)
{
    BF t = {{v}};
    BFF(_mul_i)(r, &t, &BF_R2);
}

void BFF(_to_mont)(BF *r, const BF *std) { BFF(_mul_i)(r, std, &BF_R2); }

void BFF(_from_mont)(BF *std, const BF *a)
{
    static const BF one_plain = {{1}};
    BFF(_mul_i)(std, a, &one_plain);
}

bool BFF(_is_canonical)(const BF *raw) { return czk_field_lt_(raw->l, BF_M, BF_N); }

int BFF(_from_bytes_le)(BF *r, const uint8_t b[BF_BYTES])
{
    BF t;
    for (int i = 0; i < BF_N; i++) {
        uint64_t v = 0;
        for (int j = 7; j >= 0; j--)
            v = (v << 8) | b[8 * i + j];
        t.l[i] = v;
    }
    if (!BFF(_is_canonical)(&t))
        return -ERANGE;
    BFF(_to_mont)(r, &t);
    return 0;
}

void BFF(_to_bytes_le)(uint8_t b[BF_BYTES], const BF *a)
{
    BF t;
    BFF(_from_mont)(&t, a);
    for (int i = 0; i < BF_N; i++)
        for (int j = 0; j < 8; j++)
            b[8 * i + j] = (uint8_t)(t.l[i] >> (8 * j));
}

int BFF(_from_dec)(BF *r, const char *s)
{
    BF t;
    int rc = czk_field_from_dec_(t.l, s, BF_M, BF_N, BF_DEC_MAX - 1);
    if (rc < 0)
        return rc;
    BFF(_to_mont)(r, &t);
    return 0;
}

void BFF(_to_dec)(char out[BF_DEC_MAX], const BF *a)
{
    char buf[20 * BF_N + 1]; /* what czk_field_to_dec_ may touch */
    BF t;
    BFF(_from_mont)(&t, a);
    czk_field_to_dec_(buf, t.l, BF_N); /* < m: fewer than BF_DEC_MAX digits */
    memcpy(out, buf, strlen(buf) + 1);
}

#ifdef BF_RANDOM_TOP
int BFF(_random)(BF *r)
{
    for (;;) {
        uint8_t buf[BF_BYTES];
        size_t got = 0;
        while (got < sizeof(buf)) {
            ssize_t n = getrandom(buf + got, sizeof(buf) - got, 0);
            if (n < 0) {
                if (errno == EINTR)
                    continue;
                int rc = -errno;
                czk_err("could not draw a random " BF_RANDOM_WHAT ": getrandom: %s", strerror(errno));
                return rc;
            }
            got += (size_t)n;
        }
        buf[BF_BYTES - 1] &= BF_RANDOM_TOP;
        BF t;
        for (int i = 0; i < BF_N; i++) {
            uint64_t v = 0;
            for (int j = 7; j >= 0; j--)
                v = (v << 8) | buf[8 * i + j];
            t.l[i] = v;
        }
        explicit_bzero(buf, sizeof(buf));
        if (BFF(_is_canonical)(&t)) {
            BFF(_to_mont)(r, &t);
            explicit_bzero(&t, sizeof(t));
            return 0;
        }
    }
}
#endif

#undef BFF
#undef BF
#undef BF_N
#undef BF_BYTES
#undef BF_DEC_MAX
#undef BF_M
#undef BF_MINV
#undef BF_ZERO
#undef BF_ONE
#undef BF_R2
#undef BF_R3
#undef BF_MM2
#undef BF_SQRT_EXP
#undef BF_RANDOM_TOP
#undef BF_RANDOM_WHAT
