/*
 * fp2_tmpl.h — template of the public functions every Fp2 = Fp[u]/(u^2 + 1)
 * of field.h and bn254_field.h has, included by field_fp2.c (BLS12-381) and
 * bn254_fp2.c (BN254).  Coordinates c0 + c1*u in Montgomery form.
 * Multiplication and squaring are the Karatsuba / complex forms of
 * fp2_tmpl_impl.h; inversion goes through the norm, square roots through the
 * norm and one Fp square root (valid for p = 3 mod 4, where -1 is a
 * non-residue in Fp: both curves' base fields).  The includer includes its
 * field's implementation header and defines:
 *   F2        the Fp2 type, also the function prefix (czk_fp2),
 *   F2B       the base field type, also its prefix (czk_fp),
 *   F2_ZERO   the Fp2 zero (an lvalue), F2B_ZERO the base field's,
 *   F2B_M     the base modulus limbs, F2B_N their count.
 * The multiplication by the tower's non-residue differs between the curves
 * and stays in the .c files.  It undefines its inputs at the end.
 */
#define F2_CAT_(a, b) a##b
#define F2_CAT(a, b) F2_CAT_(a, b)
#define F2F(name) F2_CAT(F2, name)
#define F2BF(name) F2_CAT(F2B, name)

void F2F(_add)(F2 *r, const F2 *a, const F2 *b) { F2F(_add_i)(r, a, b); }
void F2F(_sub)(F2 *r, const F2 *a, const F2 *b) { F2F(_sub_i)(r, a, b); }
void F2F(_dbl)(F2 *r, const F2 *a) { F2F(_dbl_i)(r, a); }
void F2F(_neg)(F2 *r, const F2 *a) { F2F(_neg_i)(r, a); }
void F2F(_mul)(F2 *r, const F2 *a, const F2 *b) { F2F(_mul_i)(r, a, b); }
void F2F(_sqr)(F2 *r, const F2 *a) { F2F(_sqr_i)(r, a); }
bool F2F(_is_zero)(const F2 *a) { return F2F(_is_zero_i)(a); }
bool F2F(_eq)(const F2 *a, const F2 *b) { return F2F(_eq_i)(a, b); }

void F2F(_mul_fp)(F2 *r, const F2 *a, const F2B *b)
{
    F2BF(_mul_i)(&r->c0, &a->c0, b);
    F2BF(_mul_i)(&r->c1, &a->c1, b);
}

void F2F(_conj)(F2 *r, const F2 *a)
{
    r->c0 = a->c0;
    F2BF(_neg_i)(&r->c1, &a->c1);
}

/* 1/(a0 + a1 u) = (a0 - a1 u) / (a0^2 + a1^2) */
int F2F(_inv)(F2 *r, const F2 *a)
{
    F2B t0, t1;
    F2BF(_sqr_i)(&t0, &a->c0);
    F2BF(_sqr_i)(&t1, &a->c1);
    F2BF(_add_i)(&t0, &t0, &t1);
    if (F2BF(_inv)(&t0, &t0) < 0) {
        *r = F2_ZERO;
        return -EDOM;
    }
    F2BF(_mul_i)(&r->c0, &a->c0, &t0);
    F2BF(_mul_i)(&t1, &a->c1, &t0);
    F2BF(_neg_i)(&r->c1, &t1);
    return 0;
}

/* the same through the base field's _inv_ct: no branch on a; a == 0 gives 0 */
void F2F(_inv_ct)(F2 *r, const F2 *a)
{
    F2B t0, t1;
    F2BF(_sqr_i)(&t0, &a->c0);
    F2BF(_sqr_i)(&t1, &a->c1);
    F2BF(_add_i)(&t0, &t0, &t1);
    F2BF(_inv_ct)(&t0, &t0);
    F2BF(_mul_i)(&t1, &a->c1, &t0);
    F2BF(_mul_i)(&r->c0, &a->c0, &t0);
    F2BF(_neg_i)(&r->c1, &t1);
}

/* x / 2 mod p; works on Montgomery values unchanged (halving is linear) */
static void fp_half(F2B *r, const F2B *a)
{
    uint64_t t[F2B_N + 1], c = 0, mask = -(a->l[0] & 1);
    for (int i = 0; i < F2B_N; i++)
        t[i] = czk_addc_(a->l[i], F2B_M[i] & mask, &c);
    t[F2B_N] = c;
    for (int i = 0; i < F2B_N; i++)
        r->l[i] = (t[i] >> 1) | (t[i + 1] << 63);
}

/*
 * sqrt(a0 + a1 u): with s = sqrt(a0^2 + a1^2) (the norm must be a square),
 * x0^2 = (a0 +- s)/2 for one of the signs, and x1 = a1 / (2 x0).
 * a1 == 0 is handled apart: sqrt(a0) or u * sqrt(-a0).
 */
int F2F(_sqrt)(F2 *r, const F2 *a)
{
    F2B x0, x1, t, n;
    F2 res, chk;

    if (F2BF(_is_zero_i)(&a->c1)) {
        if (F2BF(_sqrt)(&x0, &a->c0) == 0) {
            res.c0 = x0;
            res.c1 = F2B_ZERO;
        } else {
            F2BF(_neg_i)(&t, &a->c0);
            if (F2BF(_sqrt)(&x1, &t) < 0)
                return -EDOM; /* cannot happen: -1 is a non-residue */
            res.c0 = F2B_ZERO;
            res.c1 = x1;
        }
        *r = res;
        return 0;
    }
    F2BF(_sqr_i)(&n, &a->c0);
    F2BF(_sqr_i)(&t, &a->c1);
    F2BF(_add_i)(&n, &n, &t);
    if (F2BF(_sqrt)(&n, &n) < 0)
        return -EDOM;
    F2BF(_add_i)(&t, &a->c0, &n);
    fp_half(&t, &t);
    if (F2BF(_sqrt)(&x0, &t) < 0) {
        F2BF(_sub_i)(&t, &a->c0, &n);
        fp_half(&t, &t);
        if (F2BF(_sqrt)(&x0, &t) < 0)
            return -EDOM;
    }
    F2BF(_dbl_i)(&t, &x0);
    if (F2BF(_inv)(&t, &t) < 0)
        return -EDOM; /* x0 == 0 would need a1 == 0, handled above */
    F2BF(_mul_i)(&x1, &a->c1, &t);
    res.c0 = x0;
    res.c1 = x1;
    F2F(_sqr_i)(&chk, &res);
    if (!F2F(_eq_i)(&chk, a))
        return -EDOM;
    *r = res;
    return 0;
}

#undef F2F
#undef F2BF
#undef F2
#undef F2B
#undef F2_ZERO
#undef F2B_ZERO
#undef F2B_M
#undef F2B_N
