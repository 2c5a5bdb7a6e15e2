/*
 * verify_tmpl.h — Groth16 verification and the verification key of a zkey
 * for one curve, included by verify.c with the names of g16_names_*.h
 * (verify_api_tmpl.h declares them).  Private to verify.c.
 */

void G16(vk_free)(G16(vk) *vk)
{
    if (!vk)
        return;
    free(vk->ic);
    memset(vk, 0, sizeof(*vk));
}

int G16(vk_from_zkey)(G16(vk) *vk, const czk_zkey *z, czk_error *e)
{
    size_t n_ic = (size_t)z->n_public + 1;

    memset(vk, 0, sizeof(*vk));
    if (z->curve != CV_ID)
        return czk_errorf(e, -EINVAL, "verification key: the proving key is for %s, not %s",
                          czk_curve_name(z->curve), CV_NAME);
    vk->ic = malloc(n_ic * sizeof(CV(g1_aff)));
    if (!vk->ic)
        return czk_errorf(e, -ENOMEM, "verification key: cannot allocate %zu IC points", n_ic);
    memcpy(vk->ic, ZKP(z)->ic, n_ic * sizeof(CV(g1_aff)));
    vk->n_public = z->n_public;
    vk->alpha1 = ZKP(z)->alpha1;
    vk->beta2 = ZKP(z)->beta2;
    vk->gamma2 = ZKP(z)->gamma2;
    vk->delta2 = ZKP(z)->delta2;
    CV(pairing)(&vk->alphabeta, &vk->alpha1, &vk->beta2);
    return 0;
}

int G16(verify)(const G16(vk) *vk, const G16(proof) *proof, const CV(fr) *pub_std, size_t n_pub, czk_error *e)
{
    CV(g1_aff) p[4];
    CV(g2_aff) q[4];
    CV(g1) acc, t;

    if (n_pub != vk->n_public)
        return czk_errorf(e, -EINVAL, "verify: %zu public signals given, the verification key has nPublic %u",
                          n_pub, vk->n_public);
    for (size_t i = 0; i < n_pub; i++) {
        if (!CV(fr_is_canonical)(&pub_std[i]))
            return czk_errorf(e, -EINVAL, "verify: public signal %zu is not below the scalar field order r", i);
    }
    if (!CV(g1_aff_in_subgroup)(&proof->a))
        return czk_errorf(e, -EBADMSG, "verify: pi_a is not a point of G1 (off the curve or outside the order-r subgroup)");
    if (!CV(g2_aff_in_subgroup)(&proof->b))
        return czk_errorf(e, -EBADMSG, "verify: pi_b is not a point of G2 (off the curve or outside the order-r subgroup)");
    if (!CV(g1_aff_in_subgroup)(&proof->c))
        return czk_errorf(e, -EBADMSG, "verify: pi_c is not a point of G1 (off the curve or outside the order-r subgroup)");

    /* cpub = IC_0 + sum IC_i * pub_i (an MSM once there are many signals;
     * one thread: the caller may itself be one of many verifying threads) */
    if (n_pub > VERIFY_MSM_MIN) {
        int rc = CV(msm_g1)(&acc, vk->ic + 1, pub_std, n_pub, 1);
        if (rc < 0)
            return czk_errorf(e, rc, "verify: public-input MSM over %zu points failed", n_pub);
        CV(g1_add_aff)(&acc, &acc, &vk->ic[0]);
    } else {
        CV(g1_from_aff)(&acc, &vk->ic[0]);
        for (size_t i = 0; i < n_pub; i++) {
            CV(g1_mul_aff)(&t, &vk->ic[i + 1], &pub_std[i]);
            CV(g1_add)(&acc, &acc, &t);
        }
    }

    if (CV(g1_aff_is_inf)(&proof->a))
        p[0] = proof->a;
    else
        CV(g1_aff_neg)(&p[0], &proof->a);
    q[0] = proof->b;
    CV(g1_to_aff)(&p[1], &acc);
    q[1] = vk->gamma2;
    p[2] = proof->c;
    q[2] = vk->delta2;
    p[3] = vk->alpha1;
    q[3] = vk->beta2;
    if (!CV(pairing_product_is_one)(p, q, 4))
        return czk_errorf(e, -EBADMSG, "verify: invalid proof (the pairing check failed)");
    return 0;
}
