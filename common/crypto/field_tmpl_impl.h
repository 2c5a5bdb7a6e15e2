/*
 * field_tmpl_impl.h — template of the inline operations of one prime field
 * (Montgomery form, fully reduced, n 64-bit limbs least significant first),
 * instantiated by field_impl.h for BLS12-381's Fp and Fr and by
 * bn254_field_impl.h for BN254's Fp and Fr.  The includer defines:
 *   FI        the field type, also the function prefix (czk_fp makes czk_fp_add_i ...),
 *   FI_N      the number of limbs (a constant), FI_M the modulus limbs,
 *   FI_MINV   -m^-1 mod 2^64 (a constant expression, for the portable multiplication),
 *   FI_MUL_ASM(t, a, b)  optional: the mulx/adx Montgomery body (field_impl.h)
 *             leaving t < 2m; used when CZK_FIELD_ASM is defined.
 * It defines FI_add_i, _sub_i, _dbl_i, _neg_i, _mul_i, _sqr_i, _is_zero_i and
 * _eq_i (same timing and aliasing rules as field_impl.h: masks, no
 * data-dependent branch), then undefines its inputs.
 */
#define FI_CAT_(a, b) a##b
#define FI_CAT(a, b) FI_CAT_(a, b)
#define FIF(name) FI_CAT(FI, name)

CZK_INLINE void FIF(_add_i)(FI *r, const FI *a, const FI *b)
{ czk_mod_add_(r->l, a->l, b->l, FI_M, FI_N); }
CZK_INLINE void FIF(_sub_i)(FI *r, const FI *a, const FI *b)
{ czk_mod_sub_(r->l, a->l, b->l, FI_M, FI_N); }
CZK_INLINE void FIF(_dbl_i)(FI *r, const FI *a)
{ czk_mod_add_(r->l, a->l, a->l, FI_M, FI_N); }
CZK_INLINE void FIF(_neg_i)(FI *r, const FI *a)
{ czk_mod_neg_(r->l, a->l, FI_M, FI_N); }
CZK_INLINE void FIF(_mul_i)(FI *r, const FI *a, const FI *b)
{
#if defined(CZK_FIELD_ASM) && defined(FI_MUL_ASM)
    uint64_t t[FI_N];
    FI_MUL_ASM(t, a->l, b->l);
    czk_mod_reduce1_(r->l, t, FI_M, FI_N);
#else
    czk_mont_mul_(r->l, a->l, b->l, FI_M, FI_MINV, FI_N);
#endif
}
/* a dedicated squaring (half the cross products) measured slower than the
 * multiplication here, so squaring is a multiplication */
CZK_INLINE void FIF(_sqr_i)(FI *r, const FI *a) { FIF(_mul_i)(r, a, a); }
/* the limbs OR-ed in one expression (not a loop): the compiler schedules it
 * as the straight-line code the hot loops were measured with */
#if FI_N == 4
#define FI_FOLD_(E) (E(0) | E(1) | E(2) | E(3))
#elif FI_N == 6
#define FI_FOLD_(E) (E(0) | E(1) | E(2) | E(3) | E(4) | E(5))
#else
#error "field_tmpl_impl.h: FI_N must be 4 or 6"
#endif
#define FI_LIMB_(i) a->l[i]
#define FI_XLIMB_(i) (a->l[i] ^ b->l[i])
CZK_INLINE int FIF(_is_zero_i)(const FI *a) { return FI_FOLD_(FI_LIMB_) == 0; }
CZK_INLINE int FIF(_eq_i)(const FI *a, const FI *b) { return FI_FOLD_(FI_XLIMB_) == 0; }

#undef FI_FOLD_
#undef FI_LIMB_
#undef FI_XLIMB_
#undef FIF
#undef FI
#undef FI_N
#undef FI_M
#undef FI_MINV
#undef FI_MUL_ASM
