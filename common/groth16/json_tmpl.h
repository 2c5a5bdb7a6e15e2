/*
 * json_tmpl.h — snarkjs proof.json / public.json / verification_key.json for
 * one curve, included by json.c with the names of g16_names_*.h after its
 * curve-independent helpers (want_array, check_tag, read_file, dump,
 * write_atomic, ...).  Private to json.c; json.h is the contract.
 */

static int CV(json_get_fp)(CV(fp) *out, const json_t *v, const char *name, const jpath *p, czk_error *e)
{
    const char *s = NULL;
    int rc = want_string(v, &s, name, p, e);
    if (rc < 0)
        return rc;
    rc = CV(fp_from_dec)(out, s);
    if (rc == -ERANGE)
        return czk_errorf(e, -EINVAL, "%s: %s: coordinate is not below the base field modulus q", name, p->s);
    if (rc < 0)
        return czk_errorf(e, -EINVAL, "%s: %s: not a decimal string (\"%.40s%s\")", name, p->s, s,
                          strlen(s) > 40 ? "..." : "");
    return 0;
}

static int CV(json_get_fp2)(CV(fp2) *out, const json_t *v, const char *name, const jpath *p, czk_error *e)
{
    jpath q;
    int rc = want_array(v, 2, 2, name, p, e);
    if (rc < 0)
        return rc;
    jp_sub(&q, p, 0);
    if ((rc = CV(json_get_fp)(&out->c0, json_array_get(v, 0), name, &q, e)) < 0)
        return rc;
    jp_sub(&q, p, 1);
    return CV(json_get_fp)(&out->c1, json_array_get(v, 1), name, &q, e);
}

static int CV(json_get_fr_std)(CV(fr) *out, const json_t *v, const char *name, const jpath *p, czk_error *e)
{
    const char *s = NULL;
    CV(fr) m;
    int rc = want_string(v, &s, name, p, e);
    if (rc < 0)
        return rc;
    rc = CV(fr_from_dec)(&m, s);
    if (rc == -ERANGE)
        return czk_errorf(e, -EINVAL, "%s: %s: value is not below the scalar field order r", name, p->s);
    if (rc < 0)
        return czk_errorf(e, -EINVAL, "%s: %s: not a decimal string (\"%.40s%s\")", name, p->s, s,
                          strlen(s) > 40 ? "..." : "");
    CV(fr_from_mont)(out, &m);
    return 0;
}

static bool CV(json_fp_is_u64)(const CV(fp) *a, uint64_t v)
{
    CV(fp) t;
    CV(fp_from_u64)(&t, v);
    return CV(fp_eq)(a, &t);
}

static int CV(json_get_g1)(CV(g1_aff) *out, const json_t *v, const char *name, const jpath *p, czk_error *e)
{
    CV(fp) z;
    jpath q;
    int rc = want_array(v, 2, 3, name, p, e);
    if (rc < 0)
        return rc;
    jp_sub(&q, p, 0);
    if ((rc = CV(json_get_fp)(&out->x, json_array_get(v, 0), name, &q, e)) < 0)
        return rc;
    jp_sub(&q, p, 1);
    if ((rc = CV(json_get_fp)(&out->y, json_array_get(v, 1), name, &q, e)) < 0)
        return rc;
    if (json_array_size(v) == 3) {
        jp_sub(&q, p, 2);
        if ((rc = CV(json_get_fp)(&z, json_array_get(v, 2), name, &q, e)) < 0)
            return rc;
        if (CV(fp_is_zero)(&z)) {
            if (!CV(fp_is_zero)(&out->x) || !CV(json_fp_is_u64)(&out->y, 1))
                return czk_errorf(e, -EINVAL, "%s: %s: z is 0 but the point is not infinity [\"0\", \"1\", \"0\"]",
                                  name, p->s);
            memset(out, 0, sizeof(*out));
            return 0;
        }
        if (!CV(json_fp_is_u64)(&z, 1))
            return czk_errorf(e, -EINVAL, "%s: %s: z must be \"1\" (affine) or \"0\" (infinity)", name, p->s);
    }
    /* all-zero bytes mean infinity in memory, so (0, 0) must not slip through */
    if (CV(g1_aff_is_inf)(out) || !CV(g1_aff_on_curve)(out))
        return czk_errorf(e, -EINVAL, "%s: %s: point is not on the curve " CV_G1_EQ, name, p->s);
    if (!CV(g1_aff_in_subgroup)(out))
        return czk_errorf(e, -EINVAL, "%s: %s: point is not in the order-r subgroup G1", name, p->s);
    return 0;
}

static int CV(json_get_g2)(CV(g2_aff) *out, const json_t *v, const char *name, const jpath *p, czk_error *e)
{
    CV(fp2) z;
    jpath q;
    int rc = want_array(v, 2, 3, name, p, e);
    if (rc < 0)
        return rc;
    jp_sub(&q, p, 0);
    if ((rc = CV(json_get_fp2)(&out->x, json_array_get(v, 0), name, &q, e)) < 0)
        return rc;
    jp_sub(&q, p, 1);
    if ((rc = CV(json_get_fp2)(&out->y, json_array_get(v, 1), name, &q, e)) < 0)
        return rc;
    if (json_array_size(v) == 3) {
        jp_sub(&q, p, 2);
        if ((rc = CV(json_get_fp2)(&z, json_array_get(v, 2), name, &q, e)) < 0)
            return rc;
        if (CV(fp2_is_zero)(&z)) {
            if (!CV(fp2_is_zero)(&out->x) || !CV(json_fp_is_u64)(&out->y.c0, 1) || !CV(fp_is_zero)(&out->y.c1))
                return czk_errorf(e, -EINVAL,
                                  "%s: %s: z is 0 but the point is not infinity [[\"0\",\"0\"], [\"1\",\"0\"], [\"0\",\"0\"]]",
                                  name, p->s);
            memset(out, 0, sizeof(*out));
            return 0;
        }
        if (!CV(json_fp_is_u64)(&z.c0, 1) || !CV(fp_is_zero)(&z.c1))
            return czk_errorf(e, -EINVAL, "%s: %s: z must be [\"1\", \"0\"] (affine) or [\"0\", \"0\"] (infinity)",
                              name, p->s);
    }
    if (CV(g2_aff_is_inf)(out) || !CV(g2_aff_on_curve)(out))
        return czk_errorf(e, -EINVAL, "%s: %s: point is not on the curve " CV_G2_EQ, name, p->s);
    if (!CV(g2_aff_in_subgroup)(out))
        return czk_errorf(e, -EINVAL, "%s: %s: point is not in the order-r subgroup G2", name, p->s);
    return 0;
}

int JS(proof_parse)(G16(proof) *out, const char *text, size_t len, const char *name, czk_error *e)
{
    G16(proof) pr;
    json_t *root;
    jpath p;
    int rc = load_object(&root, text, len, name, e);
    if (rc < 0)
        return rc;
    if ((rc = check_tag(root, "protocol", "groth16", true, name, e)) < 0 ||
        (rc = check_tag(root, "curve", CV_SNARKJS, false, name, e)) < 0)
        goto out;
    const json_t *v = member(root, "pi_a", &p);
    if ((rc = CV(json_get_g1)(&pr.a, v, name, &p, e)) < 0)
        goto out;
    v = member(root, "pi_b", &p);
    if ((rc = CV(json_get_g2)(&pr.b, v, name, &p, e)) < 0)
        goto out;
    v = member(root, "pi_c", &p);
    if ((rc = CV(json_get_g1)(&pr.c, v, name, &p, e)) < 0)
        goto out;
    *out = pr;
out:
    json_decref(root);
    return rc;
}

int JS(public_parse)(CV(fr) **pub, size_t *n, const char *text, size_t len, const char *name, czk_error *e)
{
    json_t *root;
    jpath p = {"public signals"};
    CV(fr) *v = NULL;
    int rc = load(&root, text, len, name, e);
    if (rc < 0)
        return rc;
    if ((rc = want_array(root, 0, CZK_JSON_MAX_PUBLIC, name, &p, e)) < 0)
        goto out;
    size_t cnt = json_array_size(root);
    if (cnt) {
        v = malloc(cnt * sizeof(*v));
        if (!v) {
            rc = czk_errorf(e, -ENOMEM, "%s: cannot allocate %zu public signals", name, cnt);
            goto out;
        }
    }
    for (size_t i = 0; i < cnt; i++) {
        jpath q;
        snprintf(q.s, sizeof(q.s), "[%zu]", i);
        if ((rc = CV(json_get_fr_std)(&v[i], json_array_get(root, i), name, &q, e)) < 0)
            goto out;
    }
    *pub = v;
    *n = cnt;
    v = NULL;
out:
    free(v);
    json_decref(root);
    return rc;
}

int JS(vk_parse)(G16(vk) *out, const char *text, size_t len, const char *name, czk_error *e)
{
    G16(vk) vk;
    json_t *root;
    const json_t *v;
    jpath p;
    int rc = load_object(&root, text, len, name, e);
    if (rc < 0)
        return rc;
    memset(&vk, 0, sizeof(vk));
    if ((rc = check_tag(root, "protocol", "groth16", true, name, e)) < 0 ||
        (rc = check_tag(root, "curve", CV_SNARKJS, true, name, e)) < 0)
        goto out;

    v = member(root, "nPublic", &p);
    if (!v) {
        rc = czk_errorf(e, -EINVAL, "%s: nPublic: missing", name);
        goto out;
    }
    if (!json_is_integer(v)) {
        rc = czk_errorf(e, -EINVAL, "%s: nPublic: expected an integer, got %s", name, jtype(v));
        goto out;
    }
    json_int_t np = json_integer_value(v);
    if (np < 0 || np >= (json_int_t)CZK_JSON_MAX_PUBLIC) {
        rc = czk_errorf(e, -EINVAL, "%s: nPublic: %lld is out of range (0 .. %u)", name, (long long)np,
                        CZK_JSON_MAX_PUBLIC - 1);
        goto out;
    }
    vk.n_public = (uint32_t)np;

    v = member(root, "vk_alpha_1", &p);
    if ((rc = CV(json_get_g1)(&vk.alpha1, v, name, &p, e)) < 0)
        goto out;
    v = member(root, "vk_beta_2", &p);
    if ((rc = CV(json_get_g2)(&vk.beta2, v, name, &p, e)) < 0)
        goto out;
    v = member(root, "vk_gamma_2", &p);
    if ((rc = CV(json_get_g2)(&vk.gamma2, v, name, &p, e)) < 0)
        goto out;
    v = member(root, "vk_delta_2", &p);
    if ((rc = CV(json_get_g2)(&vk.delta2, v, name, &p, e)) < 0)
        goto out;

    /* vk_alphabeta_12: [c0, c1] of Fp6, each [c0, c1, c2] of Fp2 */
    v = member(root, "vk_alphabeta_12", &p);
    if ((rc = want_array(v, 2, 2, name, &p, e)) < 0)
        goto out;
    for (size_t i = 0; i < 2; i++) {
        CV(fp6) *f6 = i ? &vk.alphabeta.c1 : &vk.alphabeta.c0;
        CV(fp2) *f2[3] = {&f6->c0, &f6->c1, &f6->c2};
        const json_t *vi = json_array_get(v, i);
        jpath pi, pj;
        jp_sub(&pi, &p, i);
        if ((rc = want_array(vi, 3, 3, name, &pi, e)) < 0)
            goto out;
        for (size_t j = 0; j < 3; j++) {
            jp_sub(&pj, &pi, j);
            if ((rc = CV(json_get_fp2)(f2[j], json_array_get(vi, j), name, &pj, e)) < 0)
                goto out;
        }
    }

    v = member(root, "IC", &p);
    if ((rc = want_array(v, 1, CZK_JSON_MAX_PUBLIC, name, &p, e)) < 0)
        goto out;
    if (json_array_size(v) != (size_t)vk.n_public + 1) {
        rc = czk_errorf(e, -EINVAL, "%s: IC: has %zu points, nPublic %u needs %u", name, json_array_size(v),
                        vk.n_public, vk.n_public + 1);
        goto out;
    }
    vk.ic = malloc(((size_t)vk.n_public + 1) * sizeof(CV(g1_aff)));
    if (!vk.ic) {
        rc = czk_errorf(e, -ENOMEM, "%s: cannot allocate %u IC points", name, vk.n_public + 1);
        goto out;
    }
    for (size_t i = 0; i <= vk.n_public; i++) {
        jpath q;
        jp_sub(&q, &p, i);
        if ((rc = CV(json_get_g1)(&vk.ic[i], json_array_get(v, i), name, &q, e)) < 0)
            goto out;
    }
    *out = vk;
    vk.ic = NULL;
out:
    free(vk.ic);
    json_decref(root);
    return rc;
}

int JS(proof_read)(G16(proof) *p, const char *path, czk_error *e)
{
    char *t;
    size_t n;
    int rc = read_file(&t, &n, path, e);
    if (rc < 0)
        return rc;
    rc = JS(proof_parse)(p, t, n, path, e);
    free(t);
    return rc;
}

int JS(public_read)(CV(fr) **pub, size_t *cnt, const char *path, czk_error *e)
{
    char *t;
    size_t n;
    int rc = read_file(&t, &n, path, e);
    if (rc < 0)
        return rc;
    rc = JS(public_parse)(pub, cnt, t, n, path, e);
    free(t);
    return rc;
}

int JS(vk_read)(G16(vk) *vk, const char *path, czk_error *e)
{
    char *t;
    size_t n;
    int rc = read_file(&t, &n, path, e);
    if (rc < 0)
        return rc;
    rc = JS(vk_parse)(vk, t, n, path, e);
    free(t);
    return rc;
}

static json_t *CV(json_fp)(const CV(fp) *a)
{
    char buf[CV_FP_DEC_MAX];
    CV(fp_to_dec)(buf, a);
    return json_string(buf);
}

static json_t *CV(json_fp2)(const CV(fp2) *a)
{
    json_t *arr = json_array();
    json_array_append_new(arr, CV(json_fp)(&a->c0));
    json_array_append_new(arr, CV(json_fp)(&a->c1));
    return arr;
}

static json_t *CV(json_g1)(const CV(g1_aff) *p)
{
    json_t *arr = json_array();
    if (CV(g1_aff_is_inf)(p)) {
        json_array_append_new(arr, json_string("0"));
        json_array_append_new(arr, json_string("1"));
        json_array_append_new(arr, json_string("0"));
        return arr;
    }
    json_array_append_new(arr, CV(json_fp)(&p->x));
    json_array_append_new(arr, CV(json_fp)(&p->y));
    json_array_append_new(arr, json_string("1"));
    return arr;
}

static json_t *CV(json_g2)(const CV(g2_aff) *p)
{
    json_t *arr = json_array();
    if (CV(g2_aff_is_inf)(p)) {
        json_array_append_new(arr, jstr2("0", "0"));
        json_array_append_new(arr, jstr2("1", "0"));
        json_array_append_new(arr, jstr2("0", "0"));
        return arr;
    }
    json_array_append_new(arr, CV(json_fp2)(&p->x));
    json_array_append_new(arr, CV(json_fp2)(&p->y));
    json_array_append_new(arr, jstr2("1", "0"));
    return arr;
}

char *JS(proof_dump)(const G16(proof) *p)
{
    json_t *root = json_object();
    json_object_set_new(root, "pi_a", CV(json_g1)(&p->a));
    json_object_set_new(root, "pi_b", CV(json_g2)(&p->b));
    json_object_set_new(root, "pi_c", CV(json_g1)(&p->c));
    json_object_set_new(root, "protocol", json_string("groth16"));
    json_object_set_new(root, "curve", json_string(CV_SNARKJS));
    return dump(root, 1 + N_G1 * 2 + N_G2 + 2);
}

char *JS(public_dump)(const CV(fr) *pub_std, size_t n)
{
    json_t *root = json_array();
    for (size_t i = 0; i < n; i++) {
        char buf[CV_FR_DEC_MAX];
        CV(fr) m;
        CV(fr_to_mont)(&m, &pub_std[i]);
        CV(fr_to_dec)(buf, &m);
        json_array_append_new(root, json_string(buf));
    }
    return dump(root, 1 + n);
}

char *JS(vk_dump)(const G16(vk) *vk)
{
    json_t *root = json_object(), *ab = json_array(), *ic = json_array();
    json_object_set_new(root, "protocol", json_string("groth16"));
    json_object_set_new(root, "curve", json_string(CV_SNARKJS));
    json_object_set_new(root, "nPublic", json_integer(vk->n_public));
    json_object_set_new(root, "vk_alpha_1", CV(json_g1)(&vk->alpha1));
    json_object_set_new(root, "vk_beta_2", CV(json_g2)(&vk->beta2));
    json_object_set_new(root, "vk_gamma_2", CV(json_g2)(&vk->gamma2));
    json_object_set_new(root, "vk_delta_2", CV(json_g2)(&vk->delta2));
    for (int i = 0; i < 2; i++) {
        const CV(fp6) *f6 = i ? &vk->alphabeta.c1 : &vk->alphabeta.c0;
        json_t *a6 = json_array();
        json_array_append_new(a6, CV(json_fp2)(&f6->c0));
        json_array_append_new(a6, CV(json_fp2)(&f6->c1));
        json_array_append_new(a6, CV(json_fp2)(&f6->c2));
        json_array_append_new(ab, a6);
    }
    json_object_set_new(root, "vk_alphabeta_12", ab);
    for (size_t i = 0; i <= vk->n_public; i++)
        json_array_append_new(ic, CV(json_g1)(&vk->ic[i]));
    json_object_set_new(root, "IC", ic);
    return dump(root, 1 + 3 + N_G1 + 3 * N_G2 + (1 + 2 * (1 + 3 * 3)) + 1 + N_G1 * ((size_t)vk->n_public + 1));
}

int JS(proof_write)(const char *path, const G16(proof) *p, czk_error *e)
{
    return write_atomic(path, JS(proof_dump)(p), e);
}

int JS(public_write)(const char *path, const CV(fr) *pub_std, size_t n, czk_error *e)
{
    return write_atomic(path, JS(public_dump)(pub_std, n), e);
}

int JS(vk_write)(const char *path, const G16(vk) *vk, czk_error *e)
{
    return write_atomic(path, JS(vk_dump)(vk), e);
}
