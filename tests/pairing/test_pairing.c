/*
 * test_pairing.c — properties of the optimal ate pairing on random points:
 * bilinearity e(aP, bQ) == e(P, Q)^(ab), e(P1 + P2, Q) == e(P1, Q) e(P2, Q),
 * non-degeneracy e(G1, G2) != 1 and e(G1, G2)^r == 1, infinity gives 1,
 * the multi-Miller loop equals the product of single pairings, and
 * czk_pairing_product_is_one on e(aP, Q) e(-P, aQ) (true) and on a broken
 * product (false).  Exponents for the GT side are computed with GMP.
 * Also czk_groth16_verify on synthetic instances built from known discrete
 * logs (3 and 100 public signals: the scalar-multiplication and MSM paths).
 */
#include <errno.h>

#include "common/groth16/verify.h"
#include "pt_util.h"

static void fr_to_u64(uint64_t l[4], const czk_fr *k) { memcpy(l, k->l, 32); }

static void rand_g1(czk_g1_aff *r, czk_fr *k)
{
    czk_g1 t;
    pt_rand_scalar(k);
    czk_g1_mul_aff(&t, &CZK_G1_GEN, k);
    czk_g1_to_aff(r, &t);
}

static void rand_g2(czk_g2_aff *r, czk_fr *k)
{
    czk_g2 t;
    pt_rand_scalar(k);
    czk_g2_mul_aff(&t, &CZK_G2_GEN, k);
    czk_g2_to_aff(r, &t);
}

/* standard-form copy of a Montgomery scalar */
static czk_fr std_of(const czk_fr *m)
{
    czk_fr s;
    czk_fr_from_mont(&s, m);
    return s;
}

/*
 * A Groth16 instance made from known discrete logs, no circuit needed:
 * alpha1 = a G1, beta2 = b G2, gamma2 = G2, delta2 = d G2, IC_i = c_i G1,
 * pi_a = A G1, pi_b = B G2 and pi_c = C G1 with
 *     C = (A B - a b - (c_0 + sum c_i pub_i)) / d,
 * which is exactly the verification equation in the exponent.  n_pub = 100
 * takes the MSM path of czk_groth16_verify, n_pub = 3 the plain one.
 */
static void synthetic_groth16(size_t n_pub)
{
    czk_fr a, b, d, A, B, C, acc, t, *c, *pub;
    czk_groth16_vk vk = {0};
    czk_groth16_proof pr;
    czk_g1 j1;
    czk_g2 j2;
    czk_error e = {0};

    c = malloc((n_pub + 1) * sizeof(czk_fr));
    pub = malloc(n_pub * sizeof(czk_fr));
    vk.ic = malloc((n_pub + 1) * sizeof(czk_g1_aff));
    vk.n_public = (uint32_t)n_pub;
    czk_fr_random(&a); czk_fr_random(&b); czk_fr_random(&d);
    czk_fr_random(&A); czk_fr_random(&B);
    for (size_t i = 0; i <= n_pub; i++) {
        czk_fr_random(&c[i]);
        t = std_of(&c[i]);
        czk_g1_mul_aff(&j1, &CZK_G1_GEN, &t);
        czk_g1_to_aff(&vk.ic[i], &j1);
    }
    acc = c[0];
    for (size_t i = 0; i < n_pub; i++) {
        czk_fr m;
        pt_rand_scalar(&pub[i]);              /* standard form */
        czk_fr_to_mont(&m, &pub[i]);
        czk_fr_mul(&m, &m, &c[i + 1]);
        czk_fr_add(&acc, &acc, &m);
    }
    czk_fr_mul(&C, &A, &B);
    czk_fr_mul(&t, &a, &b);
    czk_fr_sub(&C, &C, &t);
    czk_fr_sub(&C, &C, &acc);
    czk_fr_inv(&t, &d);
    czk_fr_mul(&C, &C, &t);

    t = std_of(&a); czk_g1_mul_aff(&j1, &CZK_G1_GEN, &t); czk_g1_to_aff(&vk.alpha1, &j1);
    t = std_of(&b); czk_g2_mul_aff(&j2, &CZK_G2_GEN, &t); czk_g2_to_aff(&vk.beta2, &j2);
    vk.gamma2 = CZK_G2_GEN;
    t = std_of(&d); czk_g2_mul_aff(&j2, &CZK_G2_GEN, &t); czk_g2_to_aff(&vk.delta2, &j2);
    czk_pairing(&vk.alphabeta, &vk.alpha1, &vk.beta2);
    t = std_of(&A); czk_g1_mul_aff(&j1, &CZK_G1_GEN, &t); czk_g1_to_aff(&pr.a, &j1);
    t = std_of(&B); czk_g2_mul_aff(&j2, &CZK_G2_GEN, &t); czk_g2_to_aff(&pr.b, &j2);
    t = std_of(&C); czk_g1_mul_aff(&j1, &CZK_G1_GEN, &t); czk_g1_to_aff(&pr.c, &j1);

    int rc = czk_groth16_verify(&vk, &pr, pub, n_pub, &e);
    CHECK(rc == 0, "synthetic instance with %zu public signals verifies (rc %d: %s)", n_pub, rc, e.msg);
    pub[n_pub / 2].l[0] ^= 1;
    rc = czk_groth16_verify(&vk, &pr, pub, n_pub, &e);
    CHECK(rc == -EBADMSG, "synthetic instance (%zu signals) with a changed signal is rejected (rc %d)", n_pub, rc);
    pub[n_pub / 2].l[0] ^= 1;
    pr.c = vk.ic[0];
    rc = czk_groth16_verify(&vk, &pr, pub, n_pub, &e);
    CHECK(rc == -EBADMSG, "synthetic instance (%zu signals) with another pi_c is rejected (rc %d)", n_pub, rc);

    czk_groth16_vk_free(&vk);
    free(c);
    free(pub);
}

int main(int argc, char **argv)
{
    int iters = argc > 1 ? atoi(argv[1]) : 3;
    mpz_t r, ab, ta, tb;
    czk_fp12 g, x, y, z;
    uint64_t l[8];

    mpz_inits(r, ab, ta, tb, NULL);
    mpz_set_str(r, PT_R_HEX, 16);
    t_seed("test_pairing");

    /* non-degeneracy and order */
    czk_pairing(&g, &CZK_G1_GEN, &CZK_G2_GEN);
    CHECK(!czk_fp12_is_one(&g), "e(G1, G2) != 1");
    pt_mpz_to_limbs(l, r, 4);
    czk_fp12_pow(&x, &g, l, 4);
    CHECK(czk_fp12_is_one(&x), "e(G1, G2)^r == 1");

    /* infinity */
    {
        czk_g1_aff inf1;
        czk_g2_aff inf2;
        memset(&inf1, 0, sizeof(inf1));
        memset(&inf2, 0, sizeof(inf2));
        czk_pairing(&x, &inf1, &CZK_G2_GEN);
        CHECK(czk_fp12_is_one(&x), "e(0, G2) == 1");
        czk_pairing(&x, &CZK_G1_GEN, &inf2);
        CHECK(czk_fp12_is_one(&x), "e(G1, 0) == 1");
    }

    for (int it = 0; it < iters; it++) {
        czk_g1_aff P, aP, P2, Psum, negP;
        czk_g2_aff Q, bQ, aQ;
        czk_fr kp, kq, a, b, k2;
        czk_g1 t1;
        czk_g2 t2;

        rand_g1(&P, &kp);
        rand_g2(&Q, &kq);
        pt_rand_scalar(&a);
        pt_rand_scalar(&b);
        czk_g1_mul_aff(&t1, &P, &a);
        czk_g1_to_aff(&aP, &t1);
        czk_g2_mul_aff(&t2, &Q, &b);
        czk_g2_to_aff(&bQ, &t2);
        CHECK(czk_g1_aff_in_subgroup(&aP) && czk_g2_aff_in_subgroup(&bQ), "test points are in G1/G2");

        /* e(aP, bQ) == e(P, Q)^(ab mod r) */
        czk_pairing(&x, &aP, &bQ);
        czk_pairing(&g, &P, &Q);
        pt_limbs_to_mpz(ta, a.l, 4);
        pt_limbs_to_mpz(tb, b.l, 4);
        mpz_mul(ab, ta, tb);
        mpz_mod(ab, ab, r);
        pt_mpz_to_limbs(l, ab, 4);
        czk_fp12_pow(&y, &g, l, 4);
        CHECK(czk_fp12_eq(&x, &y), "e(aP, bQ) == e(P, Q)^(ab) (iteration %d)", it);
        CHECK(!czk_fp12_eq(&x, &g), "e(aP, bQ) != e(P, Q) for random a, b");

        /* e(P, Q)^a == e(aP, Q) and e(P, aQ) */
        fr_to_u64(l, &a);
        czk_fp12_pow(&y, &g, l, 4);
        czk_pairing(&x, &aP, &Q);
        CHECK(czk_fp12_eq(&x, &y), "e(aP, Q) == e(P, Q)^a");
        czk_g2_mul_aff(&t2, &Q, &a);
        czk_g2_to_aff(&aQ, &t2);
        czk_pairing(&z, &P, &aQ);
        CHECK(czk_fp12_eq(&z, &y), "e(P, aQ) == e(P, Q)^a");

        /* additivity in the first argument */
        rand_g1(&P2, &k2);
        czk_g1_from_aff(&t1, &P);
        czk_g1_add_aff(&t1, &t1, &P2);
        czk_g1_to_aff(&Psum, &t1);
        czk_pairing(&x, &Psum, &Q);
        czk_pairing(&y, &P2, &Q);
        czk_fp12_mul(&y, &y, &g);
        CHECK(czk_fp12_eq(&x, &y), "e(P1 + P2, Q) == e(P1, Q) e(P2, Q)");

        /* multi-Miller loop == product of the Miller loops (after final exp) */
        {
            czk_g1_aff ps[3] = {P, aP, P2};
            czk_g2_aff qs[3] = {Q, bQ, aQ};
            czk_fp12 m, prod = CZK_FP12_ONE;
            for (int i = 0; i < 3; i++) {
                czk_pairing(&m, &ps[i], &qs[i]);
                czk_fp12_mul(&prod, &prod, &m);
            }
            czk_miller_loop(&m, ps, qs, 3);
            czk_final_exp(&m, &m);
            CHECK(czk_fp12_eq(&m, &prod), "multi-Miller loop == product of pairings");
        }

        /* product checks: e(aP, Q) * e(-P, aQ) == 1, but not with bQ */
        czk_g1_aff_neg(&negP, &P);
        {
            czk_g1_aff ps[2] = {aP, negP};
            czk_g2_aff qs[2] = {Q, aQ};
            CHECK(czk_pairing_product_is_one(ps, qs, 2), "e(aP, Q) e(-P, aQ) == 1");
            qs[1] = bQ;
            CHECK(!czk_pairing_product_is_one(ps, qs, 2), "e(aP, Q) e(-P, bQ) != 1");
        }
    }

    synthetic_groth16(3);
    synthetic_groth16(100);

    mpz_clears(r, ab, ta, tb, NULL);
    if (t_failures) {
        fprintf(stderr, "test_pairing: %d checks failed\n", t_failures);
        return 1;
    }
    fprintf(stderr, "test_pairing: ok\n");
    return 0;
}
