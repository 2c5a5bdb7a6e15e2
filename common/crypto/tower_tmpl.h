/*
 * tower_tmpl.h — the extension tower above Fp2 that a pairing lives in,
 * written once for BLS12-381 (pairing_tower.c) and BN254 (bn254_tower.c):
 * Fp6 = Fp2[v]/(v^3 - xi), Fp12 = Fp6[w]/(w^2 - v), so that w^6 = xi.
 * Multiplication is Karatsuba at each level, Fp6 squaring Chung-Hasan SQR2,
 * Fp12 squaring the "complex" method, inversion goes down the tower to one
 * Fp2 inversion, cyclotomic squaring is Granger-Scott.
 *
 * The Frobenius map uses the constants gamma_k = xi^(k(q-1)/6), k = 1..5:
 * with a = sum_k a_k w^k (a_k in Fp2), a^q = sum_k conj(a_k) gamma_k w^k.
 * They are derived from q at first use (pthread_once) instead of being typed
 * in, so a transcription error cannot hide here; the tests check the map
 * against exponentiation by q.
 *
 * Private to those two files: not a contract header.  The including file
 * includes the curve's pairing header (the types and prototypes this defines)
 * and defines:
 *   TW(name)         the curve's public name of a tower type or function:
 *                    TW(fp6_mul) -> czk_fp6_mul / czk_bn254_fp6_mul
 *   TWC(NAME)        the same for constants: TWC(FP12_ONE)
 *   TW_MUL_XI(r, a)  r = xi a in Fp2 (xi: the sextic non-residue)
 *   TW_FP_LIMBS      64-bit limbs of the base field
 *   TW_FP_MOD        the base field modulus q (plain integer, a .l[] struct)
 *   TW_FP_ONE_LIMBS  the Montgomery one of Fp as an initialiser list (C cannot
 *                    use another object's value in a constant initialiser; the
 *                    tests check it against the field's own one)
 *   TW_TWIST_M       defined for an M-type twist (sparse line product
 *                    TW(fp12_mul_014), BLS12-381); otherwise the D-type
 *                    TW(fp12_mul_034) (BN254)
 * Everything is in the Montgomery form of the curve's field header; every
 * function allows r to alias its inputs.
 */
#include <errno.h>
#include <pthread.h>
#include <string.h>

const TW(fp6) TWC(FP6_ZERO);
const TW(fp12) TWC(FP12_ZERO);
const TW(fp6) TWC(FP6_ONE) = { .c0 = { .c0 = { TW_FP_ONE_LIMBS } } };
const TW(fp12) TWC(FP12_ONE) = { .c0 = { .c0 = { .c0 = { TW_FP_ONE_LIMBS } } } };

/* ---------------------------------------------------------------- Fp6 ---- */

void TW(fp6_add)(TW(fp6) *r, const TW(fp6) *a, const TW(fp6) *b)
{
    TW(fp2_add)(&r->c0, &a->c0, &b->c0);
    TW(fp2_add)(&r->c1, &a->c1, &b->c1);
    TW(fp2_add)(&r->c2, &a->c2, &b->c2);
}

void TW(fp6_sub)(TW(fp6) *r, const TW(fp6) *a, const TW(fp6) *b)
{
    TW(fp2_sub)(&r->c0, &a->c0, &b->c0);
    TW(fp2_sub)(&r->c1, &a->c1, &b->c1);
    TW(fp2_sub)(&r->c2, &a->c2, &b->c2);
}

void TW(fp6_neg)(TW(fp6) *r, const TW(fp6) *a)
{
    TW(fp2_neg)(&r->c0, &a->c0);
    TW(fp2_neg)(&r->c1, &a->c1);
    TW(fp2_neg)(&r->c2, &a->c2);
}

void TW(fp6_mul)(TW(fp6) *r, const TW(fp6) *a, const TW(fp6) *b)
{
    TW(fp2) t0, t1, t2, s, u, c0, c1, c2;

    TW(fp2_mul)(&t0, &a->c0, &b->c0);
    TW(fp2_mul)(&t1, &a->c1, &b->c1);
    TW(fp2_mul)(&t2, &a->c2, &b->c2);

    /* c0 = t0 + xi*((a1+a2)(b1+b2) - t1 - t2) */
    TW(fp2_add)(&s, &a->c1, &a->c2);
    TW(fp2_add)(&u, &b->c1, &b->c2);
    TW(fp2_mul)(&c0, &s, &u);
    TW(fp2_sub)(&c0, &c0, &t1);
    TW(fp2_sub)(&c0, &c0, &t2);
    TW_MUL_XI(&c0, &c0);
    TW(fp2_add)(&c0, &c0, &t0);

    /* c1 = (a0+a1)(b0+b1) - t0 - t1 + xi*t2 */
    TW(fp2_add)(&s, &a->c0, &a->c1);
    TW(fp2_add)(&u, &b->c0, &b->c1);
    TW(fp2_mul)(&c1, &s, &u);
    TW(fp2_sub)(&c1, &c1, &t0);
    TW(fp2_sub)(&c1, &c1, &t1);
    TW_MUL_XI(&s, &t2);
    TW(fp2_add)(&c1, &c1, &s);

    /* c2 = (a0+a2)(b0+b2) - t0 - t2 + t1 */
    TW(fp2_add)(&s, &a->c0, &a->c2);
    TW(fp2_add)(&u, &b->c0, &b->c2);
    TW(fp2_mul)(&c2, &s, &u);
    TW(fp2_sub)(&c2, &c2, &t0);
    TW(fp2_sub)(&c2, &c2, &t2);
    TW(fp2_add)(&c2, &c2, &t1);

    r->c0 = c0;
    r->c1 = c1;
    r->c2 = c2;
}

/* Chung-Hasan SQR2 */
void TW(fp6_sqr)(TW(fp6) *r, const TW(fp6) *a)
{
    TW(fp2) s0, s1, s2, s3, s4, t;

    TW(fp2_sqr)(&s0, &a->c0);
    TW(fp2_mul)(&s1, &a->c0, &a->c1);
    TW(fp2_dbl)(&s1, &s1);                 /* 2 a0 a1 */
    TW(fp2_sub)(&t, &a->c0, &a->c1);
    TW(fp2_add)(&t, &t, &a->c2);
    TW(fp2_sqr)(&s2, &t);                  /* (a0 - a1 + a2)^2 */
    TW(fp2_mul)(&s3, &a->c1, &a->c2);
    TW(fp2_dbl)(&s3, &s3);                 /* 2 a1 a2 */
    TW(fp2_sqr)(&s4, &a->c2);

    /* c0 = s0 + xi s3; c1 = s1 + xi s4; c2 = s1 + s2 + s3 - s0 - s4 */
    TW_MUL_XI(&t, &s3);
    TW(fp2_add)(&r->c0, &s0, &t);
    TW(fp2_add)(&t, &s1, &s2);
    TW(fp2_add)(&t, &t, &s3);
    TW(fp2_sub)(&t, &t, &s0);
    TW(fp2_sub)(&r->c2, &t, &s4);
    TW_MUL_XI(&t, &s4);
    TW(fp2_add)(&r->c1, &s1, &t);
}

void TW(fp6_mul_v)(TW(fp6) *r, const TW(fp6) *a)
{
    TW(fp2) t;

    TW_MUL_XI(&t, &a->c2);
    r->c2 = a->c1;
    r->c1 = a->c0;
    r->c0 = t;
}

int TW(fp6_inv)(TW(fp6) *r, const TW(fp6) *a)
{
    TW(fp2) A, B, C, F, t;
    int rc;

    /* A = a0^2 - xi a1 a2, B = xi a2^2 - a0 a1, C = a1^2 - a0 a2,
     * F = a0 A + xi (a2 B + a1 C), a^-1 = (A + B v + C v^2) / F */
    TW(fp2_sqr)(&A, &a->c0);
    TW(fp2_mul)(&t, &a->c1, &a->c2);
    TW_MUL_XI(&t, &t);
    TW(fp2_sub)(&A, &A, &t);

    TW(fp2_sqr)(&B, &a->c2);
    TW_MUL_XI(&B, &B);
    TW(fp2_mul)(&t, &a->c0, &a->c1);
    TW(fp2_sub)(&B, &B, &t);

    TW(fp2_sqr)(&C, &a->c1);
    TW(fp2_mul)(&t, &a->c0, &a->c2);
    TW(fp2_sub)(&C, &C, &t);

    TW(fp2_mul)(&F, &a->c2, &B);
    TW(fp2_mul)(&t, &a->c1, &C);
    TW(fp2_add)(&F, &F, &t);
    TW_MUL_XI(&F, &F);
    TW(fp2_mul)(&t, &a->c0, &A);
    TW(fp2_add)(&F, &F, &t);

    rc = TW(fp2_inv)(&F, &F);
    if (rc < 0) {
        *r = TWC(FP6_ZERO);
        return -EDOM;
    }
    TW(fp2_mul)(&r->c0, &A, &F);
    TW(fp2_mul)(&r->c1, &B, &F);
    TW(fp2_mul)(&r->c2, &C, &F);
    return 0;
}

bool TW(fp6_is_zero)(const TW(fp6) *a)
{
    return TW(fp2_is_zero)(&a->c0) && TW(fp2_is_zero)(&a->c1) && TW(fp2_is_zero)(&a->c2);
}

bool TW(fp6_eq)(const TW(fp6) *a, const TW(fp6) *b)
{
    return TW(fp2_eq)(&a->c0, &b->c0) && TW(fp2_eq)(&a->c1, &b->c1) && TW(fp2_eq)(&a->c2, &b->c2);
}

/* a * (b0 + b1 v) */
static void fp6_mul_01(TW(fp6) *r, const TW(fp6) *a, const TW(fp2) *b0, const TW(fp2) *b1)
{
    TW(fp2) t0, t1, s, u, c0, c1, c2;

    TW(fp2_mul)(&t0, &a->c0, b0);
    TW(fp2_mul)(&t1, &a->c1, b1);

    TW(fp2_mul)(&c0, &a->c2, b1);          /* c0 = t0 + xi a2 b1 */
    TW_MUL_XI(&c0, &c0);
    TW(fp2_add)(&c0, &c0, &t0);

    TW(fp2_add)(&s, &a->c0, &a->c1);       /* c1 = (a0+a1)(b0+b1) - t0 - t1 */
    TW(fp2_add)(&u, b0, b1);
    TW(fp2_mul)(&c1, &s, &u);
    TW(fp2_sub)(&c1, &c1, &t0);
    TW(fp2_sub)(&c1, &c1, &t1);

    TW(fp2_mul)(&c2, &a->c2, b0);          /* c2 = a2 b0 + t1 */
    TW(fp2_add)(&c2, &c2, &t1);

    r->c0 = c0;
    r->c1 = c1;
    r->c2 = c2;
}

#ifdef TW_TWIST_M
/* a * (b1 v) */
static void fp6_mul_1(TW(fp6) *r, const TW(fp6) *a, const TW(fp2) *b1)
{
    TW(fp2) c0, c1, c2;

    TW(fp2_mul)(&c0, &a->c2, b1);
    TW_MUL_XI(&c0, &c0);
    TW(fp2_mul)(&c1, &a->c0, b1);
    TW(fp2_mul)(&c2, &a->c1, b1);
    r->c0 = c0;
    r->c1 = c1;
    r->c2 = c2;
}
#endif

/* --------------------------------------------------------------- Fp12 ---- */

void TW(fp12_add)(TW(fp12) *r, const TW(fp12) *a, const TW(fp12) *b)
{
    TW(fp6_add)(&r->c0, &a->c0, &b->c0);
    TW(fp6_add)(&r->c1, &a->c1, &b->c1);
}

void TW(fp12_sub)(TW(fp12) *r, const TW(fp12) *a, const TW(fp12) *b)
{
    TW(fp6_sub)(&r->c0, &a->c0, &b->c0);
    TW(fp6_sub)(&r->c1, &a->c1, &b->c1);
}

void TW(fp12_mul)(TW(fp12) *r, const TW(fp12) *a, const TW(fp12) *b)
{
    TW(fp6) t0, t1, s, u;

    TW(fp6_mul)(&t0, &a->c0, &b->c0);
    TW(fp6_mul)(&t1, &a->c1, &b->c1);
    TW(fp6_add)(&s, &a->c0, &a->c1);
    TW(fp6_add)(&u, &b->c0, &b->c1);
    TW(fp6_mul)(&s, &s, &u);
    TW(fp6_sub)(&s, &s, &t0);
    TW(fp6_sub)(&r->c1, &s, &t1);          /* (a0+a1)(b0+b1) - t0 - t1 */
    TW(fp6_mul_v)(&t1, &t1);
    TW(fp6_add)(&r->c0, &t0, &t1);         /* t0 + v t1 */
}

void TW(fp12_sqr)(TW(fp12) *r, const TW(fp12) *a)
{
    TW(fp6) t, s, u;

    /* (a0 + a1 w)^2 = a0^2 + v a1^2 + 2 a0 a1 w;
     * a0^2 + v a1^2 = (a0 + a1)(a0 + v a1) - t - v t with t = a0 a1 */
    TW(fp6_mul)(&t, &a->c0, &a->c1);
    TW(fp6_add)(&s, &a->c0, &a->c1);
    TW(fp6_mul_v)(&u, &a->c1);
    TW(fp6_add)(&u, &u, &a->c0);
    TW(fp6_mul)(&s, &s, &u);
    TW(fp6_sub)(&s, &s, &t);
    TW(fp6_mul_v)(&u, &t);
    TW(fp6_sub)(&r->c0, &s, &u);
    TW(fp6_add)(&r->c1, &t, &t);
}

int TW(fp12_inv)(TW(fp12) *r, const TW(fp12) *a)
{
    TW(fp6) t0, t1;

    /* (a0 + a1 w)^-1 = (a0 - a1 w) / (a0^2 - v a1^2) */
    TW(fp6_sqr)(&t0, &a->c0);
    TW(fp6_sqr)(&t1, &a->c1);
    TW(fp6_mul_v)(&t1, &t1);
    TW(fp6_sub)(&t0, &t0, &t1);
    if (TW(fp6_inv)(&t0, &t0) < 0) {
        *r = TWC(FP12_ZERO);
        return -EDOM;
    }
    TW(fp6_mul)(&r->c0, &a->c0, &t0);
    TW(fp6_mul)(&r->c1, &a->c1, &t0);
    TW(fp6_neg)(&r->c1, &r->c1);
    return 0;
}

void TW(fp12_conj)(TW(fp12) *r, const TW(fp12) *a)
{
    r->c0 = a->c0;
    TW(fp6_neg)(&r->c1, &a->c1);
}

bool TW(fp12_eq)(const TW(fp12) *a, const TW(fp12) *b)
{
    return TW(fp6_eq)(&a->c0, &b->c0) && TW(fp6_eq)(&a->c1, &b->c1);
}

bool TW(fp12_is_one)(const TW(fp12) *a)
{
    return TW(fp12_eq)(a, &TWC(FP12_ONE));
}

#ifdef TW_TWIST_M
void TW(fp12_mul_014)(TW(fp12) *r, const TW(fp12) *a, const TW(fp2) *o0, const TW(fp2) *o1,
                      const TW(fp2) *o4)
{
    TW(fp6) t0, t1, s;
    TW(fp2) o14;

    /* sparse b = (o0 + o1 v) + (o4 v) w */
    fp6_mul_01(&t0, &a->c0, o0, o1);
    fp6_mul_1(&t1, &a->c1, o4);
    TW(fp6_add)(&s, &a->c0, &a->c1);
    TW(fp2_add)(&o14, o1, o4);
    fp6_mul_01(&s, &s, o0, &o14);
    TW(fp6_sub)(&s, &s, &t0);
    TW(fp6_sub)(&r->c1, &s, &t1);
    TW(fp6_mul_v)(&t1, &t1);
    TW(fp6_add)(&r->c0, &t0, &t1);
}
#else
void TW(fp12_mul_034)(TW(fp12) *r, const TW(fp12) *a, const TW(fp2) *o0, const TW(fp2) *o1,
                      const TW(fp2) *o3)
{
    TW(fp6) t0, t1, s;
    TW(fp2) o01;

    /* sparse b = o0 + (o1 + o3 v) w: t0 = a0 o0, t1 = a1 (o1 + o3 v),
     * c1 = (a0 + a1)(o0 + o1 + o3 v) - t0 - t1, c0 = t0 + v t1 */
    TW(fp2_mul)(&t0.c0, &a->c0.c0, o0);
    TW(fp2_mul)(&t0.c1, &a->c0.c1, o0);
    TW(fp2_mul)(&t0.c2, &a->c0.c2, o0);
    fp6_mul_01(&t1, &a->c1, o1, o3);
    TW(fp6_add)(&s, &a->c0, &a->c1);
    TW(fp2_add)(&o01, o0, o1);
    fp6_mul_01(&s, &s, &o01, o3);
    TW(fp6_sub)(&s, &s, &t0);
    TW(fp6_sub)(&r->c1, &s, &t1);
    TW(fp6_mul_v)(&t1, &t1);
    TW(fp6_add)(&r->c0, &t0, &t1);
}
#endif

/* (a + b s)^2 in Fp4 = Fp2[s]/(s^2 - xi): returns (a^2 + xi b^2, 2ab) */
static void fp4_sqr(TW(fp2) *c0, TW(fp2) *c1, const TW(fp2) *a, const TW(fp2) *b)
{
    TW(fp2) t0, t1, t2;

    TW(fp2_sqr)(&t0, a);
    TW(fp2_sqr)(&t1, b);
    TW_MUL_XI(&t2, &t1);
    TW(fp2_add)(c0, &t2, &t0);
    TW(fp2_add)(&t2, a, b);
    TW(fp2_sqr)(&t2, &t2);
    TW(fp2_sub)(&t2, &t2, &t0);
    TW(fp2_sub)(c1, &t2, &t1);
}

/* Granger-Scott, "Faster squaring in the cyclotomic subgroup of sixth degree
 * extensions" (PKC 2010), in the layout of zkcrypto/bls12_381. */
void TW(fp12_cyclotomic_sqr)(TW(fp12) *r, const TW(fp12) *f)
{
    TW(fp2) z0 = f->c0.c0, z4 = f->c0.c1, z3 = f->c0.c2;
    TW(fp2) z2 = f->c1.c0, z1 = f->c1.c1, z5 = f->c1.c2;
    TW(fp2) t0, t1, t2, t3;

    fp4_sqr(&t0, &t1, &z0, &z1);
    TW(fp2_sub)(&z0, &t0, &z0);            /* z0 = 2(t0 - z0) + t0 */
    TW(fp2_dbl)(&z0, &z0);
    TW(fp2_add)(&z0, &z0, &t0);
    TW(fp2_add)(&z1, &t1, &z1);            /* z1 = 2(t1 + z1) + t1 */
    TW(fp2_dbl)(&z1, &z1);
    TW(fp2_add)(&z1, &z1, &t1);

    fp4_sqr(&t0, &t1, &z2, &z3);
    fp4_sqr(&t2, &t3, &z4, &z5);

    TW(fp2_sub)(&z4, &t0, &z4);            /* z4 = 2(t0 - z4) + t0 */
    TW(fp2_dbl)(&z4, &z4);
    TW(fp2_add)(&z4, &z4, &t0);
    TW(fp2_add)(&z5, &t1, &z5);            /* z5 = 2(t1 + z5) + t1 */
    TW(fp2_dbl)(&z5, &z5);
    TW(fp2_add)(&z5, &z5, &t1);

    TW_MUL_XI(&t0, &t3);              /* z2 = 2(xi t3 + z2) + xi t3 */
    TW(fp2_add)(&z2, &t0, &z2);
    TW(fp2_dbl)(&z2, &z2);
    TW(fp2_add)(&z2, &z2, &t0);
    TW(fp2_sub)(&z3, &t2, &z3);            /* z3 = 2(t2 - z3) + t2 */
    TW(fp2_dbl)(&z3, &z3);
    TW(fp2_add)(&z3, &z3, &t2);

    r->c0.c0 = z0;
    r->c0.c1 = z4;
    r->c0.c2 = z3;
    r->c1.c0 = z2;
    r->c1.c1 = z1;
    r->c1.c2 = z5;
}

void TW(fp12_pow)(TW(fp12) *r, const TW(fp12) *a, const uint64_t *e, size_t e_limbs)
{
    TW(fp12) acc = TWC(FP12_ONE), base = *a;
    size_t top = e_limbs;

    while (top > 0 && e[top - 1] == 0)
        top--;
    for (size_t i = top; i-- > 0;) {
        for (int b = 63; b >= 0; b--) {
            TW(fp12_sqr)(&acc, &acc);
            if ((e[i] >> b) & 1)
                TW(fp12_mul)(&acc, &acc, &base);
        }
    }
    *r = acc;
}

/* ---------------------------------------------------------- Frobenius ---- */

/* gamma[k] = xi^(k (q-1)/6), k = 0..5 */
static TW(fp2) frob_gamma[6];
static pthread_once_t frob_once = PTHREAD_ONCE_INIT;

static void frob_init(void)
{
    uint64_t e[TW_FP_LIMBS];
    /* e = (q - 1) / 6 by long division (q - 1 has no borrow: q is odd) */
    unsigned __int128 rem = 0;
    uint64_t q1[TW_FP_LIMBS];

    memcpy(q1, TW_FP_MOD.l, sizeof(q1));
    q1[0] -= 1;
    for (int i = TW_FP_LIMBS - 1; i >= 0; i--) {
        unsigned __int128 cur = (rem << 64) | q1[i];
        e[i] = (uint64_t)(cur / 6);
        rem = cur % 6;
    }

    TW(fp2) xi, acc = TWC(FP2_ONE);
    TW_MUL_XI(&xi, &TWC(FP2_ONE));
    for (int i = TW_FP_LIMBS - 1; i >= 0; i--) {
        for (int b = 63; b >= 0; b--) {
            TW(fp2_sqr)(&acc, &acc);
            if ((e[i] >> b) & 1)
                TW(fp2_mul)(&acc, &acc, &xi);
        }
    }
    frob_gamma[0] = TWC(FP2_ONE);
    for (int k = 1; k < 6; k++)
        TW(fp2_mul)(&frob_gamma[k], &frob_gamma[k - 1], &acc);
}

static void fp12_frobenius1(TW(fp12) *r, const TW(fp12) *a)
{
    TW(fp2) *rc[6] = {&r->c0.c0, &r->c1.c0, &r->c0.c1, &r->c1.c1, &r->c0.c2, &r->c1.c2};
    const TW(fp2) *ac[6] = {&a->c0.c0, &a->c1.c0, &a->c0.c1, &a->c1.c1, &a->c0.c2, &a->c1.c2};

    for (int k = 0; k < 6; k++) {
        TW(fp2_conj)(rc[k], ac[k]);
        if (k > 0)
            TW(fp2_mul)(rc[k], rc[k], &frob_gamma[k]);
    }
}

void TW(fp12_frobenius)(TW(fp12) *r, const TW(fp12) *a, unsigned k)
{
    TW(fp12) t = *a;

    pthread_once(&frob_once, frob_init);
    k %= 12;
    if (k == 6) {
        TW(fp12_conj)(r, a);
        return;
    }
    for (unsigned i = 0; i < k; i++)
        fp12_frobenius1(&t, &t);
    *r = t;
}
