/*
 * curve_test_tmpl.h — the half of test_bn254_curve.c that is the same on G1
 * and G2: scalar multiples (constant-time and variable-time) against GMP,
 * additions, mixed additions, doubling and their _ct forms, negation, batch
 * normalisation.  Included once per group; the includer defines:
 *   CT_G      the group's Jacobian type, also its function prefix (czk_bn254_g1),
 *   CT_AFF    its affine type, CT_FIELD its coordinate field type, CT_GEN
 *             its generator, CT_GP_FROM / CT_GP_EQ the GMP oracle's
 *             conversions (bn_util.h),
 *   CT_SUF    the suffix of the test function (g1 makes test_g1),
 *   CT_NAME   the group's name in messages.
 * It undefines them at the end.
 */
#define CT_CAT_(a, b) a##b
#define CT_CAT(a, b) CT_CAT_(a, b)
#define CTG(name) CT_CAT(CT_G, name)

static void CT_CAT(test_, CT_SUF)(int iters)
{
    g_pt gen, a, b, c;
    mpz_t s, t;
    gp_init(&gen); gp_init(&a); gp_init(&b); gp_init(&c);
    mpz_inits(s, t, NULL);
    CT_GP_FROM(&gen, &CT_GEN);

    for (int it = 0; it < iters; it++) {
        czk_bn254_fr ks, kt;
        CT_G P, Q, R, R2;
        CT_AFF pa, qa, ra, ra2;

        /* P = s G, Q = t G in the library (constant time) and in GMP */
        rand_scalar(&ks, s);
        rand_scalar(&kt, t);
        CTG(_mul_aff_ct)(&P, &CT_GEN, &ks);
        CTG(_mul_aff)(&Q, &CT_GEN, &kt);
        CTG(_to_aff)(&pa, &P);
        CTG(_to_aff)(&qa, &Q);
        gp_mul(&a, &gen, s);
        gp_mul(&b, &gen, t);
        CHECK(CT_GP_EQ(&a, &pa), CT_NAME " s G (ct) vs GMP it=%d", it);
        CHECK(CT_GP_EQ(&b, &qa), CT_NAME " t G vs GMP it=%d", it);
        CHECK(CTG(_aff_in_subgroup)(&pa), CT_NAME " s G in the group it=%d", it);

        /* variable-time multiplication of a random point by a random scalar */
        CTG(_mul_vt)(&R, &P, &kt);
        CTG(_mul_ct)(&R2, &P, &kt);
        CTG(_to_aff)(&ra, &R);
        CTG(_to_aff_ct)(&ra2, &R2);
        gp_mul(&c, &a, t);
        CHECK(CT_GP_EQ(&c, &ra), CT_NAME " mul_vt vs GMP it=%d", it);
        CHECK(CTG(_aff_eq)(&ra, &ra2), CT_NAME " mul_ct == mul_vt it=%d", it);

        /* addition, mixed addition, doubling, and their _ct forms */
        CTG(_add)(&R, &P, &Q);
        CTG(_add_ct)(&R2, &P, &Q);
        gp_add(&c, &a, &b);
        CTG(_to_aff)(&ra, &R);
        CHECK(CT_GP_EQ(&c, &ra), CT_NAME " add vs GMP it=%d", it);
        CHECK(CTG(_eq)(&R, &R2), CT_NAME " add_ct == add it=%d", it);
        memset(&R, 0xa5, sizeof(R)); /* R, R2 hold P + Q from add, add_ct */
        memset(&R2, 0xa5, sizeof(R2));
        CTG(_add_aff)(&R, &P, &qa);
        CTG(_add_aff_ct)(&R2, &P, &qa);
        CTG(_to_aff)(&ra, &R);
        CHECK(CT_GP_EQ(&c, &ra) && CTG(_eq)(&R, &R2), CT_NAME " add_aff it=%d", it);
        CTG(_dbl)(&R, &P);
        CTG(_add)(&R2, &P, &P);
        gp_add(&c, &a, &a);
        CTG(_to_aff)(&ra, &R);
        CHECK(CT_GP_EQ(&c, &ra) && CTG(_eq)(&R, &R2), CT_NAME " dbl / P + P it=%d", it);
        memset(&R2, 0xa5, sizeof(R2)); /* R2 holds P + P from add */
        CTG(_add_ct)(&R2, &P, &P);
        CHECK(CTG(_eq)(&R, &R2), CT_NAME " add_ct(P, P) == dbl it=%d", it);
        CTG(_neg)(&R, &P);
        CTG(_add)(&R, &R, &P);
        CHECK(CTG(_is_inf)(&R), CT_NAME " P - P = 0 it=%d", it);
        CTG(_add_aff_ct)(&R2, &R, &pa); /* inf + P */
        CHECK(CTG(_eq)(&R2, &P), CT_NAME " 0 + P (ct) it=%d", it);

        /* batch normalisation */
        CT_G in[3] = {P, Q, R};
        CT_AFF out[3];
        CT_FIELD scratch[3];
        CTG(_batch_to_aff)(out, in, 3, scratch);
        CHECK(CTG(_aff_eq)(&out[0], &pa) && CTG(_aff_eq)(&out[1], &qa) &&
                  CTG(_aff_is_inf)(&out[2]), CT_NAME " batch_to_aff it=%d", it);
    }
    gp_clear(&gen); gp_clear(&a); gp_clear(&b); gp_clear(&c);
    mpz_clears(s, t, NULL);
}

#undef CTG
#undef CT_G
#undef CT_AFF
#undef CT_FIELD
#undef CT_GEN
#undef CT_GP_FROM
#undef CT_GP_EQ
#undef CT_SUF
#undef CT_NAME
