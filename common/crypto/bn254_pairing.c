/*
 * bn254_pairing.c — the optimal ate pairing on BN254 (bn254_pairing.h): a
 * multi-Miller loop over the NAF of 6u + 2 (u = 4965661367192848881 > 0)
 * with G2 points in homogeneous projective coordinates on the twist, the two
 * Frobenius line steps (Q1 = pi(Q), Q2 = -pi^2(Q)), and the final
 * exponentiation exactly as snarkjs/ffjavascript (wasmcurves build_bn128.js)
 * computes it, so that results equal ffjavascript's curve.pairing.
 *
 * Twist: G2 lives on E': y^2 = x^3 + b' over Fp2, b' = 3/xi (the D-type
 * twist), mapped into E(Fp12) by psi(x, y) = (x w^2, y w^3) since w^6 = xi.
 * The line through points of E' with slope L, evaluated at P = (xp, yp) in
 * G1, is
 *     yp + (-L xp) w + (L xT - yT) w^3,     w^3 = v w,
 * the sparse element o0 + o1 w + o3 v w of czk_bn254_fp12_mul_034.  Each line
 * is scaled by an Fp2 factor (which the final exponentiation removes, as it
 * does the vertical lines the NAF's subtractions would bring) so that no
 * inversion is needed.
 *
 * Representation: Montgomery form throughout (bn254_field.h); inputs are
 * affine points of bn254_curve.h, infinity = all-zero bytes.
 */
#include "common/crypto/bn254_pairing.h"

#include <pthread.h>
#include <string.h>

#define BN_U 4965661367192848881ULL /* the BN parameter u (positive) */

typedef struct g2_proj { czk_bn254_fp2 x, y, z; } g2_proj;

/* the NAF digits of 6u + 2, least significant first (66 digits) */
static int8_t ate_naf[70];
static int ate_naf_len;
/* xi^((p-1)/3), xi^((p-1)/2) (pi on the twist) and xi^((p^2-1)/3) (pi^2) */
static czk_bn254_fp2 pi_x, pi_y, pi2_x;
static pthread_once_t ate_once = PTHREAD_ONCE_INIT;

/* a^e for e = (p - 1) / d by long division of p - 1 (p is odd: no borrow) */
static void fp2_pow_pm1_div(czk_bn254_fp2 *r, const czk_bn254_fp2 *a, unsigned d)
{
    uint64_t e[CZK_BN254_LIMBS], p1[CZK_BN254_LIMBS];
    unsigned __int128 rem = 0;
    czk_bn254_fp2 acc = CZK_BN254_FP2_ONE;

    memcpy(p1, CZK_BN254_FP_MOD.l, sizeof(p1));
    p1[0] -= 1;
    for (int i = CZK_BN254_LIMBS - 1; i >= 0; i--) {
        unsigned __int128 cur = (rem << 64) | p1[i];
        e[i] = (uint64_t)(cur / d);
        rem = cur % d;
    }
    for (int i = CZK_BN254_LIMBS - 1; i >= 0; i--) {
        for (int b = 63; b >= 0; b--) {
            czk_bn254_fp2_sqr(&acc, &acc);
            if ((e[i] >> b) & 1)
                czk_bn254_fp2_mul(&acc, &acc, a);
        }
    }
    *r = acc;
}

static void ate_init(void)
{
    unsigned __int128 e = (unsigned __int128)BN_U * 6 + 2;
    czk_bn254_fp2 xi, c;

    ate_naf_len = 0;
    while (e > 0) {
        int d = 0;
        if (e & 1) {
            d = 2 - (int)(e & 3); /* +1 or -1 */
            e = d > 0 ? e - 1 : e + 1;
        }
        ate_naf[ate_naf_len++] = (int8_t)d;
        e >>= 1;
    }
    czk_bn254_fp2_mul_xi(&xi, &CZK_BN254_FP2_ONE);
    fp2_pow_pm1_div(&pi_x, &xi, 3);
    fp2_pow_pm1_div(&pi_y, &xi, 2);
    /* xi^((p^2-1)/3) = pi_x^(p+1) = conj(pi_x) pi_x, an element of Fp */
    czk_bn254_fp2_conj(&c, &pi_x);
    czk_bn254_fp2_mul(&pi2_x, &pi_x, &c);
}

/*
 * T = 2T, and the tangent line at T scaled by 2YZ:
 *   o0 = 2YZ yp,  o1 = -3X^2 xp,  o3 = Y^2 - 3b'Z^2
 * (with Y^2 Z = X^3 + b'Z^3, (L xT - yT) 2YZ = Y^2 - 3b'Z^2).
 * New point (2T's coordinates times a common factor):
 *   X3 = 2XY(Y^2 - 9b'Z^2), Y3 = (Y^2 + 9b'Z^2)^2 - 108 b'^2 Z^4, Z3 = 8 Y^3 Z.
 */
static void dbl_step(g2_proj *t, czk_bn254_fp2 *o0, czk_bn254_fp2 *o1, czk_bn254_fp2 *o3)
{
    czk_bn254_fp2 xx, yy, zz, w, w3, s, yz;

    czk_bn254_fp2_sqr(&xx, &t->x);
    czk_bn254_fp2_sqr(&yy, &t->y);
    czk_bn254_fp2_sqr(&zz, &t->z);
    czk_bn254_fp2_mul(&w, &zz, &CZK_BN254_G2_B);
    czk_bn254_fp2_dbl(&s, &w);
    czk_bn254_fp2_add(&w, &w, &s);          /* W = 3b'Z^2 */
    czk_bn254_fp2_mul(&yz, &t->y, &t->z);

    czk_bn254_fp2_sub(o3, &yy, &w);
    czk_bn254_fp2_dbl(o1, &xx);
    czk_bn254_fp2_add(o1, o1, &xx);
    czk_bn254_fp2_neg(o1, o1);              /* -3X^2 (times xp by the caller) */
    czk_bn254_fp2_dbl(o0, &yz);             /* 2YZ (times yp by the caller) */

    czk_bn254_fp2_dbl(&w3, &w);
    czk_bn254_fp2_add(&w3, &w3, &w);        /* 3W = 9b'Z^2 */

    czk_bn254_fp2_mul(&s, &t->x, &t->y);
    czk_bn254_fp2_dbl(&s, &s);              /* 2XY */
    czk_bn254_fp2_sub(&t->x, &yy, &w3);
    czk_bn254_fp2_mul(&t->x, &t->x, &s);

    czk_bn254_fp2_mul(&t->z, &yy, &yz);     /* Y^3 Z */
    czk_bn254_fp2_dbl(&t->z, &t->z);
    czk_bn254_fp2_dbl(&t->z, &t->z);
    czk_bn254_fp2_dbl(&t->z, &t->z);

    czk_bn254_fp2_add(&s, &yy, &w3);
    czk_bn254_fp2_sqr(&s, &s);              /* (Y^2 + 3W)^2 */
    czk_bn254_fp2_sqr(&w, &w);
    czk_bn254_fp2_dbl(&w, &w);
    czk_bn254_fp2_dbl(&w, &w);              /* 4W^2 */
    czk_bn254_fp2_sub(&s, &s, &w);
    czk_bn254_fp2_sub(&s, &s, &w);
    czk_bn254_fp2_sub(&t->y, &s, &w);       /* - 12 W^2 = -108 b'^2 Z^4 */
}

/*
 * T = T + Q (Q affine, T != +-Q), and the line through T and Q scaled by
 * L = X - xq Z, with H = Y - yq Z (slope H / L):
 *   o0 = L yp,  o1 = -H xp,  o3 = H xq - L yq.
 * New point: D = H^2 Z + L^3 - 2 L^2 X, X3 = L D,
 *            Y3 = H (L^2 X - D) - L^3 Y, Z3 = L^3 Z.
 */
static void add_step(g2_proj *t, const czk_bn254_g2_aff *q, czk_bn254_fp2 *o0, czk_bn254_fp2 *o1,
                     czk_bn254_fp2 *o3)
{
    czk_bn254_fp2 h, l, l2, l3, l2x, d, s;

    czk_bn254_fp2_mul(&h, &q->y, &t->z);
    czk_bn254_fp2_sub(&h, &t->y, &h);
    czk_bn254_fp2_mul(&l, &q->x, &t->z);
    czk_bn254_fp2_sub(&l, &t->x, &l);

    czk_bn254_fp2_mul(o3, &h, &q->x);
    czk_bn254_fp2_mul(&s, &l, &q->y);
    czk_bn254_fp2_sub(o3, o3, &s);
    czk_bn254_fp2_neg(o1, &h);
    *o0 = l;

    czk_bn254_fp2_sqr(&l2, &l);
    czk_bn254_fp2_mul(&l3, &l2, &l);
    czk_bn254_fp2_mul(&l2x, &l2, &t->x);
    czk_bn254_fp2_sqr(&d, &h);
    czk_bn254_fp2_mul(&d, &d, &t->z);
    czk_bn254_fp2_add(&d, &d, &l3);
    czk_bn254_fp2_sub(&d, &d, &l2x);
    czk_bn254_fp2_sub(&d, &d, &l2x);

    czk_bn254_fp2_mul(&t->x, &l, &d);
    czk_bn254_fp2_sub(&s, &l2x, &d);
    czk_bn254_fp2_mul(&s, &s, &h);
    czk_bn254_fp2_mul(&l2x, &l3, &t->y);    /* reuse: L^3 Y */
    czk_bn254_fp2_sub(&t->y, &s, &l2x);
    czk_bn254_fp2_mul(&t->z, &t->z, &l3);
}

static void ell(czk_bn254_fp12 *f, const czk_bn254_g1_aff *p, czk_bn254_fp2 *o0, czk_bn254_fp2 *o1,
                czk_bn254_fp2 *o3)
{
    czk_bn254_fp2_mul_fp(o0, o0, &p->y);
    czk_bn254_fp2_mul_fp(o1, o1, &p->x);
    czk_bn254_fp12_mul_034(f, f, o0, o1, o3);
}

/* up to this many pairs share one Miller loop; more are done in batches */
#define ML_BATCH 16

static void miller_batch(czk_bn254_fp12 *f, const czk_bn254_g1_aff *p, const czk_bn254_g2_aff *q,
                         size_t n)
{
    g2_proj t[ML_BATCH];
    czk_bn254_g2_aff qneg[ML_BATCH], q1, q2;
    size_t idx[ML_BATCH], m = 0;
    czk_bn254_fp2 o0, o1, o3;

    for (size_t i = 0; i < n; i++) {
        if (czk_bn254_g1_aff_is_inf(&p[i]) || czk_bn254_g2_aff_is_inf(&q[i]))
            continue;
        idx[m] = i;
        t[m].x = q[i].x;
        t[m].y = q[i].y;
        t[m].z = CZK_BN254_FP2_ONE;
        czk_bn254_g2_aff_neg(&qneg[m], &q[i]);
        m++;
    }
    *f = CZK_BN254_FP12_ONE;
    if (m == 0)
        return;

    /* NAF digits below the top one, most significant first */
    for (int b = ate_naf_len - 2; b >= 0; b--) {
        if (b != ate_naf_len - 2)
            czk_bn254_fp12_sqr(f, f);
        for (size_t j = 0; j < m; j++) {
            dbl_step(&t[j], &o0, &o1, &o3);
            ell(f, &p[idx[j]], &o0, &o1, &o3);
        }
        if (ate_naf[b] != 0) {
            for (size_t j = 0; j < m; j++) {
                add_step(&t[j], ate_naf[b] > 0 ? &q[idx[j]] : &qneg[j], &o0, &o1, &o3);
                ell(f, &p[idx[j]], &o0, &o1, &o3);
            }
        }
    }
    /* T = (6u+2) Q; then the lines through T and Q1 = pi(Q), and through
     * T + Q1 and Q2 = -pi^2(Q) = (x xi^((p^2-1)/3), y) */
    for (size_t j = 0; j < m; j++) {
        const czk_bn254_g2_aff *qj = &q[idx[j]];
        czk_bn254_fp2_conj(&q1.x, &qj->x);
        czk_bn254_fp2_mul(&q1.x, &q1.x, &pi_x);
        czk_bn254_fp2_conj(&q1.y, &qj->y);
        czk_bn254_fp2_mul(&q1.y, &q1.y, &pi_y);
        czk_bn254_fp2_mul(&q2.x, &qj->x, &pi2_x);
        q2.y = qj->y;
        add_step(&t[j], &q1, &o0, &o1, &o3);
        ell(f, &p[idx[j]], &o0, &o1, &o3);
        add_step(&t[j], &q2, &o0, &o1, &o3);
        ell(f, &p[idx[j]], &o0, &o1, &o3);
    }
}

void czk_bn254_miller_loop(czk_bn254_fp12 *r, const czk_bn254_g1_aff *p, const czk_bn254_g2_aff *q,
                           size_t n)
{
    czk_bn254_fp12 acc = CZK_BN254_FP12_ONE, f;

    pthread_once(&ate_once, ate_init);
    for (size_t i = 0; i < n; i += ML_BATCH) {
        size_t k = n - i < ML_BATCH ? n - i : ML_BATCH;
        miller_batch(&f, p + i, q + i, k);
        czk_bn254_fp12_mul(&acc, &acc, &f);
    }
    *r = acc;
}

/* r = a^u for a in the cyclotomic subgroup */
static void cyclotomic_exp_u(czk_bn254_fp12 *r, const czk_bn254_fp12 *a)
{
    czk_bn254_fp12 acc = *a;

    for (int b = 62 - __builtin_clzll(BN_U); b >= 0; b--) {
        czk_bn254_fp12_cyclotomic_sqr(&acc, &acc);
        if ((BN_U >> b) & 1)
            czk_bn254_fp12_mul(&acc, &acc, a);
    }
    *r = acc;
}

/* r = a^(-u) (the conjugate is the inverse in the cyclotomic subgroup) */
static void exp_by_neg_u(czk_bn254_fp12 *r, const czk_bn254_fp12 *a)
{
    cyclotomic_exp_u(r, a);
    czk_bn254_fp12_conj(r, r);
}

/*
 * The sequence of wasmcurves' bn128 _finalExponentiation (after libff /
 * arkworks): the easy part f^((p^6 - 1)(p^2 + 1)), then the hard part as a
 * chain of exponentiations by -u and Frobenius maps, whose exponent is
 *   h = (12u^3 + 12u^2 + 6u + 1) + p (12u^3 + 6u^2 + 4u)
 *       + p^2 (12u^3 + 6u^2 + 6u) + p^3 (12u^3 + 6u^2 + 4u - 1).
 * Which power of the textbook pairing this is does not matter for
 * verification; it matters for vk_alphabeta_12, so we follow snarkjs step
 * by step (tests/bn254 checks the exponent with GMP and the values against
 * ffjavascript).
 */
void czk_bn254_final_exp(czk_bn254_fp12 *r, const czk_bn254_fp12 *f)
{
    czk_bn254_fp12 e, t, A, B, C, D, E, F, G, K, L, M, N;

    czk_bn254_fp12_conj(&t, f);                 /* f^(p^6) */
    if (czk_bn254_fp12_inv(&e, f) < 0) {        /* f == 0: not a Miller loop value */
        *r = CZK_BN254_FP12_ZERO;
        return;
    }
    czk_bn254_fp12_mul(&e, &t, &e);             /* f^(p^6 - 1) */
    czk_bn254_fp12_frobenius(&t, &e, 2);
    czk_bn254_fp12_mul(&e, &t, &e);             /* ^(p^2 + 1) */

    exp_by_neg_u(&A, &e);                       /* e^(-u) */
    czk_bn254_fp12_cyclotomic_sqr(&B, &A);      /* e^(-2u) */
    czk_bn254_fp12_cyclotomic_sqr(&C, &B);      /* e^(-4u) */
    czk_bn254_fp12_mul(&D, &C, &B);             /* e^(-6u) */
    exp_by_neg_u(&E, &D);                       /* e^(6u^2) */
    czk_bn254_fp12_cyclotomic_sqr(&F, &E);      /* e^(12u^2) */
    exp_by_neg_u(&G, &F);                       /* e^(-12u^3) */
    czk_bn254_fp12_conj(&t, &D);                /* e^(6u) */
    czk_bn254_fp12_conj(&G, &G);                /* e^(12u^3) */
    czk_bn254_fp12_mul(&K, &G, &E);             /* 12u^3 + 6u^2 */
    czk_bn254_fp12_mul(&K, &K, &t);             /* K: 12u^3 + 6u^2 + 6u */
    czk_bn254_fp12_mul(&L, &K, &B);             /* L: 12u^3 + 6u^2 + 4u */
    czk_bn254_fp12_mul(&M, &K, &E);             /* 12u^3 + 12u^2 + 6u */
    czk_bn254_fp12_mul(&N, &M, &e);             /* N: 12u^3 + 12u^2 + 6u + 1 */
    czk_bn254_fp12_frobenius(&t, &L, 1);
    czk_bn254_fp12_mul(&N, &t, &N);             /* N + p L */
    czk_bn254_fp12_frobenius(&t, &K, 2);
    czk_bn254_fp12_mul(&N, &t, &N);             /* + p^2 K */
    czk_bn254_fp12_conj(&t, &e);                /* e^(-1) */
    czk_bn254_fp12_mul(&t, &t, &L);             /* L - 1 */
    czk_bn254_fp12_frobenius(&t, &t, 3);
    czk_bn254_fp12_mul(r, &t, &N);              /* + p^3 (L - 1) */
}

void czk_bn254_pairing(czk_bn254_fp12 *r, const czk_bn254_g1_aff *p, const czk_bn254_g2_aff *q)
{
    czk_bn254_fp12 f;

    czk_bn254_miller_loop(&f, p, q, 1);
    czk_bn254_final_exp(r, &f);
}

bool czk_bn254_pairing_product_is_one(const czk_bn254_g1_aff *p, const czk_bn254_g2_aff *q, size_t n)
{
    czk_bn254_fp12 f;

    czk_bn254_miller_loop(&f, p, q, n);
    czk_bn254_final_exp(&f, &f);
    return czk_bn254_fp12_is_one(&f);
}
