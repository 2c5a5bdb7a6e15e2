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
 * The Miller loop's steps are pairing_tmpl.h's (shared with BLS12-381).
 * Representation: Montgomery form throughout (bn254_field.h); inputs are
 * affine points of bn254_curve.h, infinity = all-zero bytes.
 */
#include "common/crypto/bn254_pairing.h"

#include <pthread.h>
#include <string.h>

#define BN_U 4965661367192848881ULL /* the BN parameter u (positive) */

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

/* b' a */
static void mul_b(czk_bn254_fp2 *r, const czk_bn254_fp2 *a) { czk_bn254_fp2_mul(r, a, &CZK_BN254_G2_B); }

#define PT czk_bn254
#define PT_FP2 czk_bn254_fp2
#define PT_FP12 czk_bn254_fp12
#define PT_FP2_ONE CZK_BN254_FP2_ONE
#define PT_FP12_ONE CZK_BN254_FP12_ONE
#define PT_G1A czk_bn254_g1_aff
#define PT_G2A czk_bn254_g2_aff
#define PT_G1 czk_bn254_g1
#define PT_G2 czk_bn254_g2
#define PT_MUL_B(r, a) mul_b(r, a)
/* the D-twist's line ly + lx w + lc w^3 = ly + lx w + lc v w */
#define PT_MUL_LINE(f, lc, lx, ly) czk_bn254_fp12_mul_034(f, f, ly, lx, lc)
#define PT_LOOP_TOP (ate_naf_len - 2) /* the NAF digits below the top one */
#define PT_DIGIT(b) ate_naf[b]
#define PT_SIGNED_DIGITS
#define PT_INIT() pthread_once(&ate_once, ate_init)
#define PT_EXP_ABS BN_U
#include "common/crypto/pairing_tmpl.h"

/* T = (6u+2) Q; then the lines through T and Q1 = pi(Q), and through
 * T + Q1 and Q2 = -pi^2(Q) = (x xi^((p^2-1)/3), y) */
static void miller_end(czk_bn254_fp12 *f, g2_proj *t, const czk_bn254_g1_aff *p,
                       const czk_bn254_g2_aff *q, const size_t *idx, size_t m)
{
    czk_bn254_g2_aff q1, q2;
    czk_bn254_fp2 lc, lx, ly;

    for (size_t j = 0; j < m; j++) {
        const czk_bn254_g2_aff *qj = &q[idx[j]];
        czk_bn254_fp2_conj(&q1.x, &qj->x);
        czk_bn254_fp2_mul(&q1.x, &q1.x, &pi_x);
        czk_bn254_fp2_conj(&q1.y, &qj->y);
        czk_bn254_fp2_mul(&q1.y, &q1.y, &pi_y);
        czk_bn254_fp2_mul(&q2.x, &qj->x, &pi2_x);
        q2.y = qj->y;
        add_step(&t[j], &q1, &lc, &lx, &ly);
        ell(f, &p[idx[j]], &lc, &lx, &ly);
        add_step(&t[j], &q2, &lc, &lx, &ly);
        ell(f, &p[idx[j]], &lc, &lx, &ly);
    }
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

    exp_by_neg_x(&A, &e);                       /* e^(-u) */
    czk_bn254_fp12_cyclotomic_sqr(&B, &A);      /* e^(-2u) */
    czk_bn254_fp12_cyclotomic_sqr(&C, &B);      /* e^(-4u) */
    czk_bn254_fp12_mul(&D, &C, &B);             /* e^(-6u) */
    exp_by_neg_x(&E, &D);                       /* e^(6u^2) */
    czk_bn254_fp12_cyclotomic_sqr(&F, &E);      /* e^(12u^2) */
    exp_by_neg_x(&G, &F);                       /* e^(-12u^3) */
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
