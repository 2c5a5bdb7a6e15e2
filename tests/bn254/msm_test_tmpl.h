/*
 * msm_test_tmpl.h — the half of test_bn254_msm.c that is the same on G1 and
 * G2, included once per group.  The includer defines:
 *   MT_G      the group's Jacobian type, also its function prefix (czk_bn254_g1),
 *   MT_AFF    its affine type, MT_FIELD its coordinate field type,
 *   MT_GEN    its generator, MT_MSM its MSM function,
 *   MT_GP_FROM / MT_GP_EQ  the GMP oracle's conversions (bn_util.h),
 *   MT_SUF    the suffix of the functions it defines (g1 makes
 *             make_bases_g1 and test_g1), MT_NAME the group's name in messages.
 * It undefines them at the end.
 */
#define MT_CAT_(a, b) a##b
#define MT_CAT(a, b) MT_CAT_(a, b)
#define MTG(name) MT_CAT(MT_G, name)
#define MTF(name) MT_CAT(name##_, MT_SUF)

/* bases a_i G: a_0 random, a_{i+1} = a_i + d; some replaced (pick_kind):
 * src[i] is the index of the base that base i copies or negates, else i */
static void MTF(make_bases)(MT_AFF *out, mpz_t *a, size_t *src, size_t n)
{
    MT_G *jac = malloc(n * sizeof(*jac)), cur, step;
    MT_FIELD *scr = malloc(n * sizeof(*scr));
    czk_bn254_fr k;
    mpz_t d, x;

    mpz_inits(d, x, NULL);
    t_rand_mod(x, bn_r, 4);
    t_rand_mod(d, bn_r, 4);
    t_mpz_to_limbs(k.l, x, 4);
    MTG(_mul_aff)(&cur, &MT_GEN, &k);
    t_mpz_to_limbs(k.l, d, 4);
    MTG(_mul_aff)(&step, &MT_GEN, &k);
    for (size_t i = 0; i < n; i++) {
        jac[i] = cur;
        mpz_set(a[i], x);
        MTG(_add)(&cur, &cur, &step);
        mpz_add(x, x, d);
        mpz_mod(x, x, bn_r);
    }
    MTG(_batch_to_aff)(out, jac, n, scr);
    for (size_t i = 0; i < n; i++) {
        size_t j = i ? (size_t)(t_rand64() % i) : 0;
        src[i] = i;
        switch (pick_kind(i)) {
        case 1:
            memset(&out[i], 0, sizeof(out[i]));
            mpz_set_ui(a[i], 0);
            break;
        case 2:
            out[i] = out[j];
            mpz_set(a[i], a[j]);
            src[i] = j;
            break;
        case 3:
            MTG(_aff_neg)(&out[i], &out[j]);
            if (MTG(_aff_is_inf)(&out[j]))
                memset(&out[i], 0, sizeof(out[i]));
            mpz_sub(a[i], bn_r, a[j]);
            mpz_mod(a[i], a[i], bn_r);
            src[i] = j;
            break;
        default:
            break;
        }
    }
    mpz_clears(d, x, NULL);
    free(jac);
    free(scr);
}

static void MTF(test)(size_t n, int nthreads, int gmp_terms)
{
    MT_AFF *bases = malloc(n * sizeof(*bases)), got_aff, want_aff;
    czk_bn254_fr *sc = malloc(n * sizeof(*sc)), e;
    MT_G got, want, sum, t;
    mpz_t *a = malloc(n * sizeof(mpz_t)), k, acc;
    size_t *src = malloc(n * sizeof(*src));

    mpz_inits(k, acc, NULL);
    for (size_t i = 0; i < n; i++)
        mpz_init(a[i]);
    MTF(make_bases)(bases, a, src, n);
    MTG(_set_inf)(&sum);
    for (size_t i = 0; i < n; i++) {
        pick_scalar(&sc[i], k, i);
        if (src[i] != i && t_rand64() % 2) {
            /* a copy (or the negation) of an earlier base with its scalar:
             * the same buckets in every window, so additions of P to P
             * (doubling) and of -P to P (infinity) reach the flush */
            sc[i] = sc[src[i]];
            t_limbs_to_mpz(k, sc[i].l, 4);
        }
        mpz_addmul(acc, k, a[i]);
        MTG(_from_aff)(&t, &bases[i]);
        MTG(_mul_vt)(&t, &t, &sc[i]);
        MTG(_add)(&sum, &sum, &t);
    }
    mpz_mod(acc, acc, bn_r);
    t_mpz_to_limbs(e.l, acc, 4);
    MTG(_mul_aff)(&want, &MT_GEN, &e);
    CHECK(MT_MSM(&got, bases, sc, n, nthreads) == 0, "msm " MT_NAME " n=%zu", n);
    MTG(_to_aff)(&got_aff, &got);
    MTG(_to_aff)(&want_aff, &want);
    CHECK(MTG(_aff_eq)(&got_aff, &want_aff), "msm " MT_NAME " n=%zu (%d threads) = (sum k_i a_i) G", n, nthreads);
    CHECK(MTG(_eq)(&got, &sum), "msm " MT_NAME " n=%zu (%d threads) = sum of mul_vt", n, nthreads);
    if (gmp_terms) {
        g_pt s, p, q;
        gp_init(&s);
        gp_init(&p);
        gp_init(&q);
        for (size_t i = 0; i < n; i++) {
            t_limbs_to_mpz(k, sc[i].l, 4);
            MT_GP_FROM(&p, &bases[i]);
            gp_mul(&q, &p, k);
            gp_add(&s, &s, &q);
        }
        CHECK(MT_GP_EQ(&s, &got_aff), "msm " MT_NAME " n=%zu = GMP double-and-add sum", n);
        gp_clear(&s);
        gp_clear(&p);
        gp_clear(&q);
    }
    for (size_t i = 0; i < n; i++)
        mpz_clear(a[i]);
    mpz_clears(k, acc, NULL);
    free(a);
    free(src);
    free(bases);
    free(sc);
}

#undef MTG
#undef MTF
#undef MT_G
#undef MT_AFF
#undef MT_FIELD
#undef MT_GEN
#undef MT_MSM
#undef MT_GP_FROM
#undef MT_GP_EQ
#undef MT_SUF
#undef MT_NAME
