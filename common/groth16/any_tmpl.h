/*
 * any_tmpl.h — the per-curve halves of any.c, included once per curve with
 * the names of g16_names_*.h and ANY(x) naming the static functions
 * (any_bls_x, any_bn_x); KEY(k) and OUT(m) select the curve's union member.
 * Private to any.c.
 */

/* the public signals as field elements (malloc'd), NULL with e set */
static CV(fr) *ANY(pub_values)(const uint8_t *pub, uint32_t n, czk_error *e)
{
    CV(fr) *v = calloc(n ? n : 1, sizeof(*v));

    if (!v) {
        czk_errorf(e, -ENOMEM, "out of memory for %u public signals", n);
        return NULL;
    }
    for (uint32_t i = 0; i < n; i++)
        if (CV(fr_from_bytes_le)(&v[i], pub + 32 * (size_t)i) < 0) {
            czk_errorf(e, -EBADMSG, "public signal %u is not below the %s scalar field modulus", i, CV_NAME);
            free(v);
            return NULL;
        }
    return v;
}

static int ANY(public_dump)(const uint8_t *pub, uint32_t n, char **text, czk_error *e)
{
    CV(fr) *v = ANY(pub_values)(pub, n, e);

    if (!v)
        return e->code;
    *text = JS(public_dump)(v, n);
    free(v);
    return *text ? 0 : czk_errorf(e, -ENOMEM, "out of memory for the public signals text");
}

static int ANY(prove)(const czk_groth16_any_key *k, const czk_groth16_any_msm_out *m, const uint8_t *pub, int verify,
                      char **text, czk_error *e)
{
    G16(proof) proof;
    CV(fr) *v = NULL;
    int rc;

    if ((rc = G16(finalize_random)(&KEY(k).params, &OUT(m), &proof)) < 0)
        return czk_errorf(e, rc, "could not draw r, s from the OS random generator");
    if (verify) {
        czk_error ve = {0};
        if (!(v = ANY(pub_values)(pub, k->n_public, e)))
            return e->code;
        rc = G16(verify)(&KEY(k).vk, &proof, v, k->n_public, &ve);
        free(v);
        if (rc < 0)
            return czk_errorf(e, -EBADMSG, "the proof does not verify: %s",
                              ve.msg[0] ? ve.msg : "pairing check failed");
    }
    if (!(*text = JS(proof_dump)(&proof)))
        return czk_errorf(e, -ENOMEM, "out of memory for the proof text");
    return 0;
}

static int ANY(proof_verifies)(const czk_groth16_any_key *k, const char *ptext, size_t plen, const uint8_t *pub)
{
    G16(proof) proof;
    czk_error e = {0};
    CV(fr) *v;
    int ok;

    if (JS(proof_parse)(&proof, ptext, plen, "proof.json", &e) < 0 || !(v = ANY(pub_values)(pub, k->n_public, &e)))
        return 0;
    ok = G16(verify)(&KEY(k).vk, &proof, v, k->n_public, &e) == 0;
    free(v);
    return ok;
}
