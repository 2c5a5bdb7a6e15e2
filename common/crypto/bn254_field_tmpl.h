/*
 * bn254_field_tmpl.h — template of the public functions that BN254's Fp and
 * Fr share (bn254_field.h), included once by bn254_fp.c and once by
 * bn254_fr.c.  4 limbs, Montgomery with R = 2^256.  The includer defines:
 *   BF        the field type (czk_bn254_fp), BF_PFX its function prefix,
 *   BF_M      the modulus limbs, BF_MINV -m^-1 mod 2^64,
 *   BF_ONE    R mod m (an lvalue), BF_R2 R^2 mod m, BF_R3 R^3 mod m,
 *   BF_MM2    m - 2 (the Fermat exponent, 4 limbs),
 *   BF_ADD_I ... BF_EQ_I  the inline operations of bn254_field_impl.h.
 */
#define BF_CAT_(a, b) a##b
#define BF_CAT(a, b) BF_CAT_(a, b)
#define BFF(name) BF_CAT(BF_PFX, name)

void BFF(_add)(BF *r, const BF *a, const BF *b) { BF_ADD_I(r, a, b); }
void BFF(_sub)(BF *r, const BF *a, const BF *b) { BF_SUB_I(r, a, b); }
void BFF(_dbl)(BF *r, const BF *a) { BF_DBL_I(r, a); }
void BFF(_neg)(BF *r, const BF *a) { BF_NEG_I(r, a); }
void BFF(_mul)(BF *r, const BF *a, const BF *b) { BF_MUL_I(r, a, b); }
void BFF(_sqr)(BF *r, const BF *a) { BF_MUL_I(r, a, a); }
bool BFF(_is_zero)(const BF *a) { return BF_ISZERO_I(a); }
bool BFF(_eq)(const BF *a, const BF *b) { return BF_EQ_I(a, b); }

/* fixed 4-bit window, most significant first; branches and table indices
 * come from the (plain integer) exponent only, never from a, so with a
 * public exponent the time does not depend on the base (_inv_ct relies on it) */
void BFF(_pow)(BF *r, const BF *a, const uint64_t *e, size_t e_limbs)
{
    BF tbl[16], acc = BF_ONE;
    bool started = false;

    tbl[0] = BF_ONE;
    tbl[1] = *a;
    for (int i = 2; i < 16; i++)
        BF_MUL_I(&tbl[i], &tbl[i - 1], a);
    for (size_t li = e_limbs; li-- > 0;) {
        for (int sh = 60; sh >= 0; sh -= 4) {
            unsigned nib = (unsigned)(e[li] >> sh) & 15;
            if (started) {
                BF_MUL_I(&acc, &acc, &acc);
                BF_MUL_I(&acc, &acc, &acc);
                BF_MUL_I(&acc, &acc, &acc);
                BF_MUL_I(&acc, &acc, &acc);
            }
            if (nib) {
                BF_MUL_I(&acc, &acc, &tbl[nib]);
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
    if (BF_ISZERO_I(a)) {
        memset(r, 0, sizeof(*r));
        return -EDOM;
    }
    if (czk_field_inv_(t.l, a->l, BF_M, BF_MINV, 4) == 0)
        BF_MUL_I(r, &t, &BF_R3);
    else
        BFF(_pow)(r, a, BF_MM2, 4); /* not reached for a prime modulus; a safe path */
    return 0;
}

/* Fermat: a^(m-2), 0 for a == 0; 253 squarings and 64 multiplications
 * whatever a is */
void BFF(_inv_ct)(BF *r, const BF *a) { BFF(_pow)(r, a, BF_MM2, 4); }

void BFF(_from_u64)(BF *r, uint64_t v)
{
    BF t = {{v, 0, 0, 0}};
    BF_MUL_I(r, &t, &BF_R2);
}

void BFF(_to_mont)(BF *r, const BF *std) { BF_MUL_I(r, std, &BF_R2); }

void BFF(_from_mont)(BF *std, const BF *a)
{
    static const BF one_plain = {{1, 0, 0, 0}};
    BF_MUL_I(std, a, &one_plain);
}

bool BFF(_is_canonical)(const BF *raw) { return czk_field_lt_(raw->l, BF_M, 4); }

int BFF(_from_bytes_le)(BF *r, const uint8_t b[CZK_BN254_BYTES])
{
    BF t;
    for (int i = 0; i < 4; i++) {
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

void BFF(_to_bytes_le)(uint8_t b[CZK_BN254_BYTES], const BF *a)
{
    BF t;
    BFF(_from_mont)(&t, a);
    for (int i = 0; i < 4; i++)
        for (int j = 0; j < 8; j++)
            b[8 * i + j] = (uint8_t)(t.l[i] >> (8 * j));
}

int BFF(_from_dec)(BF *r, const char *s)
{
    BF t;
    int rc = czk_field_from_dec_(t.l, s, BF_M, 4, CZK_BN254_DEC_MAX - 1);
    if (rc < 0)
        return rc;
    BFF(_to_mont)(r, &t);
    return 0;
}

void BFF(_to_dec)(char out[CZK_BN254_DEC_MAX], const BF *a)
{
    char buf[20 * 4 + 1]; /* what czk_field_to_dec_ may touch */
    BF t;
    BFF(_from_mont)(&t, a);
    czk_field_to_dec_(buf, t.l, 4); /* < 2^254 < 10^77: at most 77 digits */
    memcpy(out, buf, strlen(buf) + 1);
}

#undef BFF
