/*
 * test_finalize_ct.c — czk_groth16_finalize (constant time) gives byte for
 * byte the proof of the variable-time formulas it replaced, evaluated here
 * with the branching Jacobian code of curve.h (double-and-add over
 * czk_g*_dbl / czk_g*_add, czk_g*_to_aff with the binary-GCD inversion):
 *   pi_a = alpha1 + A + r delta1,  pi_b = beta2 + B2 + s delta2,
 *   pi_c = C + s pi_a + r (beta1 + B1 + s delta1) - r s delta1.
 * Random keys and MSM results, random r, s and the edges r, s in {0, 1, r-1};
 * MSM results at infinity, A = -alpha1 (pi_a = inf with r = 0), alpha1 =
 * delta1 (a doubling inside the sums), C chosen so that pi_c = inf.
 * usage: test_finalize_ct [iterations]
 */
#include <string.h>

#include "common/crypto/curve.h"
#include "common/groth16/groth16.h"
#include "tests/common/test_util.h"

#define REF_MUL(G, J)                                                    \
    static void G##_ref_mul(J *r, const J *p, const czk_fr *k)         \
    {                                                                  \
        J acc;                                                         \
        G##_set_inf(&acc);                                             \
        for (int bit = 255; bit >= 0; bit--) {                         \
            G##_dbl(&acc, &acc);                                       \
            if ((k->l[bit / 64] >> (bit % 64)) & 1)                    \
                G##_add(&acc, &acc, p);                                \
        }                                                              \
        *r = acc;                                                      \
    }
REF_MUL(czk_g1, czk_g1)
REF_MUL(czk_g2, czk_g2)

/* the finalize of before the constant-time rewrite, on the variable-time code */
static void ref_finalize(const czk_groth16_params *p, const czk_groth16_msm_out *m,
                         const czk_fr *r, const czk_fr *s, czk_groth16_proof *proof)
{
    czk_fr r_std, s_std, rs, rs_std;
    czk_g1 pi_a, b1, pi_c, t, q;
    czk_g2 pi_b, t2, q2;

    czk_fr_from_mont(&r_std, r);
    czk_fr_from_mont(&s_std, s);
    czk_fr_mul(&rs, r, s);
    czk_fr_from_mont(&rs_std, &rs);

    czk_g1_from_aff(&pi_a, &p->alpha1);
    czk_g1_add_aff(&pi_a, &pi_a, &m->a);
    czk_g1_from_aff(&q, &p->delta1);
    czk_g1_ref_mul(&t, &q, &r_std);
    czk_g1_add(&pi_a, &pi_a, &t);

    czk_g2_from_aff(&pi_b, &p->beta2);
    czk_g2_add_aff(&pi_b, &pi_b, &m->b2);
    czk_g2_from_aff(&q2, &p->delta2);
    czk_g2_ref_mul(&t2, &q2, &s_std);
    czk_g2_add(&pi_b, &pi_b, &t2);

    czk_g1_from_aff(&b1, &p->beta1);
    czk_g1_add_aff(&b1, &b1, &m->b1);
    czk_g1_ref_mul(&t, &q, &s_std);
    czk_g1_add(&b1, &b1, &t);

    czk_g1_from_aff(&pi_c, &m->c);
    czk_g1_ref_mul(&t, &pi_a, &s_std);
    czk_g1_add(&pi_c, &pi_c, &t);
    czk_g1_ref_mul(&t, &b1, &r_std);
    czk_g1_add(&pi_c, &pi_c, &t);
    czk_g1_ref_mul(&t, &q, &rs_std);
    czk_g1_neg(&t, &t);
    czk_g1_add(&pi_c, &pi_c, &t);

    czk_g1_to_aff(&proof->a, &pi_a);
    czk_g2_to_aff(&proof->b, &pi_b);
    czk_g1_to_aff(&proof->c, &pi_c);
}

static void rand_std(czk_fr *k)
{
    for (int i = 0; i < 4; i++)
        k->l[i] = t_rand64();
    k->l[3] &= 0x3fffffffffffffffULL; /* < r */
}

static void g1_rand(czk_g1_aff *a)
{
    czk_fr k;
    czk_g1 p;
    rand_std(&k);
    czk_g1_mul_aff(&p, &CZK_G1_GEN, &k);
    czk_g1_to_aff(a, &p);
}

static void g2_rand(czk_g2_aff *a)
{
    czk_fr k;
    czk_g2 p;
    rand_std(&k);
    czk_g2_mul_aff(&p, &CZK_G2_GEN, &k);
    czk_g2_to_aff(a, &p);
}

/* Montgomery form of an edge or random blinding scalar */
static void blind(czk_fr *x, int pick)
{
    czk_fr std;
    switch (pick) {
    case 0: memset(&std, 0, sizeof(std)); break;
    case 1: memset(&std, 0, sizeof(std)); std.l[0] = 1; break;
    case 2: std = CZK_FR_MOD; std.l[0] -= 1; break;
    default: rand_std(&std); break;
    }
    czk_fr_to_mont(x, &std);
}

int main(int argc, char **argv)
{
    int iters = argc > 1 ? atoi(argv[1]) : 40;
    int ninf = 0;

    t_seed("test_finalize_ct");
    for (int it = 0; it < iters; it++) {
        czk_groth16_params p;
        czk_groth16_msm_out m;
        czk_groth16_proof got, want;
        czk_fr r, s;

        g1_rand(&p.alpha1);
        g1_rand(&p.beta1);
        g1_rand(&p.delta1);
        g2_rand(&p.beta2);
        g2_rand(&p.delta2);
        g1_rand(&m.a);
        g1_rand(&m.b1);
        g1_rand(&m.c);
        g2_rand(&m.b2);
        blind(&r, it < 12 ? it % 4 : 3);
        blind(&s, it < 12 ? it / 4 : 3);
        switch (it % 6) {
        case 1: /* MSM results at infinity */
            memset(&m.a, 0, sizeof(m.a));
            memset(&m.b1, 0, sizeof(m.b1));
            memset(&m.b2, 0, sizeof(m.b2));
            memset(&m.c, 0, sizeof(m.c));
            break;
        case 2: /* alpha1 + A = inf */
            czk_g1_aff_neg(&m.a, &p.alpha1);
            czk_g2_aff_neg(&m.b2, &p.beta2);
            break;
        case 3: /* alpha1 = delta1: alpha1 + r delta1 doubles when r = 1 */
            p.alpha1 = p.delta1;
            memset(&m.a, 0, sizeof(m.a));
            break;
        case 4: { /* C = -(s pi_a + r b1 - r s delta1): pi_c = inf */
            czk_groth16_proof z;
            czk_g1 c;
            memset(&m.c, 0, sizeof(m.c));
            ref_finalize(&p, &m, &r, &s, &z);
            czk_g1_from_aff(&c, &z.c);
            czk_g1_neg(&c, &c);
            czk_g1_to_aff(&m.c, &c);
            break;
        }
        default: break;
        }
        ref_finalize(&p, &m, &r, &s, &want);
        czk_groth16_finalize(&p, &m, &r, &s, &got);
        CHECK(memcmp(&got, &want, sizeof(got)) == 0, "finalize differs from the variable-time formulas it=%d",
              it);
        CHECK(czk_g1_aff_on_curve(&got.a) && czk_g2_aff_on_curve(&got.b) && czk_g1_aff_on_curve(&got.c),
              "proof points on the curve it=%d", it);
        ninf += czk_g1_aff_is_inf(&got.a) + czk_g1_aff_is_inf(&got.c);
    }
    CHECK(ninf >= 2, "the edge cases gave %d points at infinity", ninf);
    if (t_failures) {
        fprintf(stderr, "test_finalize_ct: %d checks failed\n", t_failures);
        return 1;
    }
    printf("test_finalize_ct: ok\n");
    return 0;
}
