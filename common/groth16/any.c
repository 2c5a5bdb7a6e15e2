/*
 * any.c — Groth16 on the curve of the key (any.h): dispatch to the
 * BLS12-381 and BN254 instances of the templates.
 */
#include "common/groth16/any.h"

#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "common/groth16/json.h"

_Static_assert(sizeof(czk_fr) == 32 && sizeof(czk_bn254_fr) == 32, "32-byte scalars on both curves");

#include "common/groth16/g16_names_bls12_381.h"
#define ANY(x) any_bls_##x
#define KEY(k) ((k)->u.bls)
#define OUT(m) ((m)->u.bls)
#include "common/groth16/any_tmpl.h"
#undef ANY
#undef KEY
#undef OUT
#include "common/groth16/g16_names_bn254.h"
#define ANY(x) any_bn_##x
#define KEY(k) ((k)->u.bn)
#define OUT(m) ((m)->u.bn)
#include "common/groth16/any_tmpl.h"
#undef ANY
#undef KEY
#undef OUT
#include "common/groth16/g16_names_undef.h"

static int is_bn(czk_curve_id c) { return c == CZK_CURVE_BN254; }

size_t czk_groth16_any_point_bytes(czk_curve_id c, unsigned k)
{
    int g2 = k == CZK_G16_PT_B2;

    if (k >= CZK_G16_N_PTS)
        return 0;
    if (c == CZK_CURVE_BLS12_381)
        return g2 ? sizeof(czk_g2_aff) : sizeof(czk_g1_aff);
    if (c == CZK_CURVE_BN254)
        return g2 ? sizeof(czk_bn254_g2_aff) : sizeof(czk_bn254_g1_aff);
    return 0;
}

const void *czk_groth16_any_point(const czk_groth16_any_msm_out *m, unsigned k)
{
    static const size_t bls[CZK_G16_N_PTS] = {offsetof(czk_groth16_msm_out, a), offsetof(czk_groth16_msm_out, b1),
                                              offsetof(czk_groth16_msm_out, b2), offsetof(czk_groth16_msm_out, c)};
    static const size_t bn[CZK_G16_N_PTS] = {
        offsetof(czk_groth16_bn254_msm_out, a), offsetof(czk_groth16_bn254_msm_out, b1),
        offsetof(czk_groth16_bn254_msm_out, b2), offsetof(czk_groth16_bn254_msm_out, c)};
    return (const uint8_t *)&m->u + (is_bn(m->curve) ? bn[k % CZK_G16_N_PTS] : bls[k % CZK_G16_N_PTS]);
}

int czk_groth16_any_msm_out_set(czk_groth16_any_msm_out *m, czk_curve_id c, const uint8_t *const pts[CZK_G16_N_PTS],
                                const uint32_t len[CZK_G16_N_PTS], czk_error *e)
{
    static const char *const names[CZK_G16_N_PTS] = {"A", "B1", "B2", "C"};

    memset(m, 0, sizeof(*m));
    m->curve = c;
    for (unsigned k = 0; k < CZK_G16_N_PTS; k++) {
        size_t want = czk_groth16_any_point_bytes(c, k);
        if (len[k] != want)
            return czk_errorf(e, -EBADMSG, "the %s result is %u bytes, a %s point is %zu", names[k], len[k],
                              czk_curve_name(c), want);
        memcpy((void *)czk_groth16_any_point(m, k), pts[k], want);
    }
    return 0;
}

void czk_groth16_any_msm_out_swap_ac(czk_groth16_any_msm_out *m)
{
    if (is_bn(m->curve)) {
        czk_bn254_g1_aff t = m->u.bn.a;
        m->u.bn.a = m->u.bn.c;
        m->u.bn.c = t;
    } else {
        czk_g1_aff t = m->u.bls.a;
        m->u.bls.a = m->u.bls.c;
        m->u.bls.c = t;
    }
}

int czk_groth16_any_build_abc(const czk_zkey *z, const void *w, void *a, void *b, void *c, int nthreads)
{
    if (is_bn(z->curve))
        return czk_groth16_bn254_build_abc(z, w, a, b, c, nthreads);
    return czk_groth16_build_abc(z, w, a, b, c, nthreads);
}

int czk_groth16_any_compute_h(czk_curve_id curve, void *a, void *b, void *c, void *h, unsigned log_n, int nthreads)
{
    if (is_bn(curve))
        return czk_groth16_bn254_compute_h(a, b, c, h, log_n, nthreads);
    return czk_groth16_compute_h(a, b, c, h, log_n, nthreads);
}

int czk_groth16_any_msms(const czk_zkey *z, const void *w, const void *h, czk_groth16_any_msm_out *out, int nthreads)
{
    memset(out, 0, sizeof(*out));
    out->curve = z->curve;
    if (is_bn(z->curve))
        return czk_groth16_bn254_msms(z, w, h, &out->u.bn, nthreads);
    return czk_groth16_msms(z, w, h, &out->u.bls, nthreads);
}

int czk_groth16_any_key_from_zkey(czk_groth16_any_key *k, const czk_zkey *z, czk_error *e)
{
    memset(k, 0, sizeof(*k));
    k->curve = z->curve;
    k->n_public = z->n_public;
    if (is_bn(z->curve)) {
        czk_groth16_bn254_params_from_zkey(&k->u.bn.params, z);
        return czk_groth16_bn254_vk_from_zkey(&k->u.bn.vk, z, e);
    }
    czk_groth16_params_from_zkey(&k->u.bls.params, z);
    return czk_groth16_vk_from_zkey(&k->u.bls.vk, z, e);
}

void czk_groth16_any_key_free(czk_groth16_any_key *k)
{
    if (is_bn(k->curve))
        czk_groth16_bn254_vk_free(&k->u.bn.vk);
    else
        czk_groth16_vk_free(&k->u.bls.vk);
}

char *czk_groth16_any_vk_dump(const czk_groth16_any_key *k)
{
    return is_bn(k->curve) ? czk_json_bn254_vk_dump(&k->u.bn.vk) : czk_json_vk_dump(&k->u.bls.vk);
}

void czk_groth16_any_pub_to_bytes(czk_curve_id c, uint8_t *out, const void *pub, uint32_t n)
{
    for (uint32_t i = 0; i < n; i++)
        if (is_bn(c))
            czk_bn254_fr_to_bytes_le(out + 32 * (size_t)i, (const czk_bn254_fr *)pub + i);
        else
            czk_fr_to_bytes_le(out + 32 * (size_t)i, (const czk_fr *)pub + i);
}

int czk_groth16_any_public_dump(czk_curve_id c, const uint8_t *pub, uint32_t n, char **text, czk_error *e)
{
    *text = NULL;
    return is_bn(c) ? any_bn_public_dump(pub, n, text, e) : any_bls_public_dump(pub, n, text, e);
}

int czk_groth16_any_prove(const czk_groth16_any_key *k, const czk_groth16_any_msm_out *m, const uint8_t *pub,
                          int verify, char **text, czk_error *e)
{
    *text = NULL;
    if (m->curve != k->curve)
        return czk_errorf(e, -EINVAL, "a %s result for a %s key", czk_curve_name(m->curve), czk_curve_name(k->curve));
    return is_bn(k->curve) ? any_bn_prove(k, m, pub, verify, text, e) : any_bls_prove(k, m, pub, verify, text, e);
}

int czk_groth16_any_proof_verifies(const czk_groth16_any_key *k, const char *ptext, size_t plen, const uint8_t *pub)
{
    return is_bn(k->curve) ? any_bn_proof_verifies(k, ptext, plen, pub) : any_bls_proof_verifies(k, ptext, plen, pub);
}
