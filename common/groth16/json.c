/*
 * json.c — snarkjs proof.json / public.json / verification_key.json reading
 * and writing with jansson; see json.h for the encoding and the checks.
 */
#include "common/base/fsutil.h"
#include "common/groth16/json.h"

#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define JSON_MAX_FILE (256u << 20)

/* ------------------------------------------------------------ reading ---- */

/* where a value sits, for messages: "pi_b[1][0]" */
typedef struct jpath { char s[96]; } jpath;

static void jp_sub(jpath *out, const jpath *base, size_t idx)
{
    /* paths are short ("IC[12]", "vk_alphabeta_12[1][2][0]"); keep room for
     * the index so nothing is truncated */
    size_t n = strnlen(base->s, sizeof(base->s) - 24);
    memcpy(out->s, base->s, n);
    snprintf(out->s + n, 24, "[%zu]", idx);
}

static const char *jtype(const json_t *v)
{
    switch (json_typeof(v)) {
    case JSON_OBJECT: return "an object";
    case JSON_ARRAY: return "an array";
    case JSON_STRING: return "a string";
    case JSON_INTEGER: return "an integer";
    case JSON_REAL: return "a number";
    case JSON_TRUE:
    case JSON_FALSE: return "a boolean";
    case JSON_NULL: return "null";
    }
    return "something else";
}

static int want_array(const json_t *v, size_t min, size_t max, const char *name, const jpath *p, czk_error *e)
{
    if (!v)
        return czk_errorf(e, -EINVAL, "%s: %s: missing", name, p->s);
    if (!json_is_array(v))
        return czk_errorf(e, -EINVAL, "%s: %s: expected an array, got %s", name, p->s, jtype(v));
    size_t n = json_array_size(v);
    if (n < min || n > max) {
        if (min == max)
            return czk_errorf(e, -EINVAL, "%s: %s: expected an array of %zu elements, got %zu", name, p->s, min, n);
        return czk_errorf(e, -EINVAL, "%s: %s: expected an array of %zu to %zu elements, got %zu", name, p->s,
                          min, max, n);
    }
    return 0;
}

static int want_string(const json_t *v, const char **s, const char *name, const jpath *p, czk_error *e)
{
    if (!v)
        return czk_errorf(e, -EINVAL, "%s: %s: missing", name, p->s);
    if (!json_is_string(v))
        return czk_errorf(e, -EINVAL, "%s: %s: expected a decimal string, got %s", name, p->s, jtype(v));
    *s = json_string_value(v);
    if (strlen(*s) != json_string_length(v))
        return czk_errorf(e, -EINVAL, "%s: %s: string contains a NUL character", name, p->s);
    return 0;
}

static int get_fp(czk_fp *out, const json_t *v, const char *name, const jpath *p, czk_error *e)
{
    const char *s = NULL;
    int rc = want_string(v, &s, name, p, e);
    if (rc < 0)
        return rc;
    rc = czk_fp_from_dec(out, s);
    if (rc == -ERANGE)
        return czk_errorf(e, -EINVAL, "%s: %s: coordinate is not below the base field modulus q", name, p->s);
    if (rc < 0)
        return czk_errorf(e, -EINVAL, "%s: %s: not a decimal string (\"%.40s%s\")", name, p->s, s,
                          strlen(s) > 40 ? "..." : "");
    return 0;
}

static int get_fp2(czk_fp2 *out, const json_t *v, const char *name, const jpath *p, czk_error *e)
{
    jpath q;
    int rc = want_array(v, 2, 2, name, p, e);
    if (rc < 0)
        return rc;
    jp_sub(&q, p, 0);
    if ((rc = get_fp(&out->c0, json_array_get(v, 0), name, &q, e)) < 0)
        return rc;
    jp_sub(&q, p, 1);
    return get_fp(&out->c1, json_array_get(v, 1), name, &q, e);
}

static int get_fr_std(czk_fr *out, const json_t *v, const char *name, const jpath *p, czk_error *e)
{
    const char *s = NULL;
    czk_fr m;
    int rc = want_string(v, &s, name, p, e);
    if (rc < 0)
        return rc;
    rc = czk_fr_from_dec(&m, s);
    if (rc == -ERANGE)
        return czk_errorf(e, -EINVAL, "%s: %s: value is not below the scalar field order r", name, p->s);
    if (rc < 0)
        return czk_errorf(e, -EINVAL, "%s: %s: not a decimal string (\"%.40s%s\")", name, p->s, s,
                          strlen(s) > 40 ? "..." : "");
    czk_fr_from_mont(out, &m);
    return 0;
}

static bool fp_is_u64(const czk_fp *a, uint64_t v)
{
    czk_fp t;
    czk_fp_from_u64(&t, v);
    return czk_fp_eq(a, &t);
}

static int get_g1(czk_g1_aff *out, const json_t *v, const char *name, const jpath *p, czk_error *e)
{
    czk_fp z;
    jpath q;
    int rc = want_array(v, 2, 3, name, p, e);
    if (rc < 0)
        return rc;
    jp_sub(&q, p, 0);
    if ((rc = get_fp(&out->x, json_array_get(v, 0), name, &q, e)) < 0)
        return rc;
    jp_sub(&q, p, 1);
    if ((rc = get_fp(&out->y, json_array_get(v, 1), name, &q, e)) < 0)
        return rc;
    if (json_array_size(v) == 3) {
        jp_sub(&q, p, 2);
        if ((rc = get_fp(&z, json_array_get(v, 2), name, &q, e)) < 0)
            return rc;
        if (czk_fp_is_zero(&z)) {
            if (!czk_fp_is_zero(&out->x) || !fp_is_u64(&out->y, 1))
                return czk_errorf(e, -EINVAL, "%s: %s: z is 0 but the point is not infinity [\"0\", \"1\", \"0\"]",
                                  name, p->s);
            memset(out, 0, sizeof(*out));
            return 0;
        }
        if (!fp_is_u64(&z, 1))
            return czk_errorf(e, -EINVAL, "%s: %s: z must be \"1\" (affine) or \"0\" (infinity)", name, p->s);
    }
    /* all-zero bytes mean infinity in memory, so (0, 0) must not slip through */
    if (czk_g1_aff_is_inf(out) || !czk_g1_aff_on_curve(out))
        return czk_errorf(e, -EINVAL, "%s: %s: point is not on the curve y^2 = x^3 + 4", name, p->s);
    if (!czk_g1_aff_in_subgroup(out))
        return czk_errorf(e, -EINVAL, "%s: %s: point is not in the order-r subgroup G1", name, p->s);
    return 0;
}

static int get_g2(czk_g2_aff *out, const json_t *v, const char *name, const jpath *p, czk_error *e)
{
    czk_fp2 z;
    jpath q;
    int rc = want_array(v, 2, 3, name, p, e);
    if (rc < 0)
        return rc;
    jp_sub(&q, p, 0);
    if ((rc = get_fp2(&out->x, json_array_get(v, 0), name, &q, e)) < 0)
        return rc;
    jp_sub(&q, p, 1);
    if ((rc = get_fp2(&out->y, json_array_get(v, 1), name, &q, e)) < 0)
        return rc;
    if (json_array_size(v) == 3) {
        jp_sub(&q, p, 2);
        if ((rc = get_fp2(&z, json_array_get(v, 2), name, &q, e)) < 0)
            return rc;
        if (czk_fp2_is_zero(&z)) {
            if (!czk_fp2_is_zero(&out->x) || !fp_is_u64(&out->y.c0, 1) || !czk_fp_is_zero(&out->y.c1))
                return czk_errorf(e, -EINVAL,
                                  "%s: %s: z is 0 but the point is not infinity [[\"0\",\"0\"], [\"1\",\"0\"], [\"0\",\"0\"]]",
                                  name, p->s);
            memset(out, 0, sizeof(*out));
            return 0;
        }
        if (!fp_is_u64(&z.c0, 1) || !czk_fp_is_zero(&z.c1))
            return czk_errorf(e, -EINVAL, "%s: %s: z must be [\"1\", \"0\"] (affine) or [\"0\", \"0\"] (infinity)",
                              name, p->s);
    }
    if (czk_g2_aff_is_inf(out) || !czk_g2_aff_on_curve(out))
        return czk_errorf(e, -EINVAL, "%s: %s: point is not on the curve y^2 = x^3 + 4(1 + u)", name, p->s);
    if (!czk_g2_aff_in_subgroup(out))
        return czk_errorf(e, -EINVAL, "%s: %s: point is not in the order-r subgroup G2", name, p->s);
    return 0;
}

/* key of an object, with its path */
static const json_t *member(const json_t *o, const char *key, jpath *p)
{
    snprintf(p->s, sizeof(p->s), "%s", key);
    return json_object_get(o, key);
}

static int check_tag(const json_t *root, const char *key, const char *want, bool required,
                     const char *name, czk_error *e)
{
    jpath p;
    const json_t *v = member(root, key, &p);
    if (!v) {
        if (required)
            return czk_errorf(e, -EINVAL, "%s: %s: missing (expected \"%s\")", name, key, want);
        return 0;
    }
    if (!json_is_string(v))
        return czk_errorf(e, -EINVAL, "%s: %s: expected the string \"%s\", got %s", name, key, want, jtype(v));
    if (strcmp(json_string_value(v), want) != 0)
        return czk_errorf(e, -EINVAL, "%s: %s: \"%.40s\" is not supported (expected \"%s\")", name, key,
                          json_string_value(v), want);
    return 0;
}

static int load(json_t **root, const char *text, size_t len, const char *name, czk_error *e)
{
    json_error_t err;

    *root = json_loadb(text, len, JSON_REJECT_DUPLICATES, &err);
    if (!*root)
        return czk_errorf(e, -EINVAL, "%s: invalid JSON at line %d column %d: %s", name, err.line, err.column,
                          err.text);
    return 0;
}

static int load_object(json_t **root, const char *text, size_t len, const char *name, czk_error *e)
{
    int rc = load(root, text, len, name, e);
    if (rc < 0)
        return rc;
    if (!json_is_object(*root)) {
        rc = czk_errorf(e, -EINVAL, "%s: expected a JSON object at the top level, got %s", name, jtype(*root));
        json_decref(*root);
        *root = NULL;
    }
    return rc;
}

int czk_json_proof_parse(czk_groth16_proof *out, const char *text, size_t len, const char *name, czk_error *e)
{
    czk_groth16_proof pr;
    json_t *root;
    jpath p;
    int rc = load_object(&root, text, len, name, e);
    if (rc < 0)
        return rc;
    if ((rc = check_tag(root, "protocol", "groth16", true, name, e)) < 0 ||
        (rc = check_tag(root, "curve", "bls12381", false, name, e)) < 0)
        goto out;
    const json_t *v = member(root, "pi_a", &p);
    if ((rc = get_g1(&pr.a, v, name, &p, e)) < 0)
        goto out;
    v = member(root, "pi_b", &p);
    if ((rc = get_g2(&pr.b, v, name, &p, e)) < 0)
        goto out;
    v = member(root, "pi_c", &p);
    if ((rc = get_g1(&pr.c, v, name, &p, e)) < 0)
        goto out;
    *out = pr;
out:
    json_decref(root);
    return rc;
}

int czk_json_public_parse(czk_fr **pub, size_t *n, const char *text, size_t len, const char *name, czk_error *e)
{
    json_t *root;
    jpath p = {"public signals"};
    czk_fr *v = NULL;
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
        if ((rc = get_fr_std(&v[i], json_array_get(root, i), name, &q, e)) < 0)
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

int czk_json_vk_parse(czk_groth16_vk *out, const char *text, size_t len, const char *name, czk_error *e)
{
    czk_groth16_vk vk;
    json_t *root;
    const json_t *v;
    jpath p;
    int rc = load_object(&root, text, len, name, e);
    if (rc < 0)
        return rc;
    memset(&vk, 0, sizeof(vk));
    if ((rc = check_tag(root, "protocol", "groth16", true, name, e)) < 0 ||
        (rc = check_tag(root, "curve", "bls12381", true, name, e)) < 0)
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
    if ((rc = get_g1(&vk.alpha1, v, name, &p, e)) < 0)
        goto out;
    v = member(root, "vk_beta_2", &p);
    if ((rc = get_g2(&vk.beta2, v, name, &p, e)) < 0)
        goto out;
    v = member(root, "vk_gamma_2", &p);
    if ((rc = get_g2(&vk.gamma2, v, name, &p, e)) < 0)
        goto out;
    v = member(root, "vk_delta_2", &p);
    if ((rc = get_g2(&vk.delta2, v, name, &p, e)) < 0)
        goto out;

    /* vk_alphabeta_12: [c0, c1] of Fp6, each [c0, c1, c2] of Fp2 */
    v = member(root, "vk_alphabeta_12", &p);
    if ((rc = want_array(v, 2, 2, name, &p, e)) < 0)
        goto out;
    for (size_t i = 0; i < 2; i++) {
        czk_fp6 *f6 = i ? &vk.alphabeta.c1 : &vk.alphabeta.c0;
        czk_fp2 *f2[3] = {&f6->c0, &f6->c1, &f6->c2};
        const json_t *vi = json_array_get(v, i);
        jpath pi, pj;
        jp_sub(&pi, &p, i);
        if ((rc = want_array(vi, 3, 3, name, &pi, e)) < 0)
            goto out;
        for (size_t j = 0; j < 3; j++) {
            jp_sub(&pj, &pi, j);
            if ((rc = get_fp2(f2[j], json_array_get(vi, j), name, &pj, e)) < 0)
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
    vk.ic = malloc(((size_t)vk.n_public + 1) * sizeof(czk_g1_aff));
    if (!vk.ic) {
        rc = czk_errorf(e, -ENOMEM, "%s: cannot allocate %u IC points", name, vk.n_public + 1);
        goto out;
    }
    for (size_t i = 0; i <= vk.n_public; i++) {
        jpath q;
        jp_sub(&q, &p, i);
        if ((rc = get_g1(&vk.ic[i], json_array_get(v, i), name, &q, e)) < 0)
            goto out;
    }
    *out = vk;
    vk.ic = NULL;
out:
    free(vk.ic);
    json_decref(root);
    return rc;
}

static int read_file(char **text, size_t *len, const char *path, czk_error *e)
{
    struct stat st;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return czk_errorf(e, -errno, "%s: cannot open: %s", path, strerror(errno));
    if (fstat(fd, &st) < 0) {
        int err = errno;
        close(fd);
        return czk_errorf(e, -err, "%s: cannot stat: %s", path, strerror(err));
    }
    if (!S_ISREG(st.st_mode) || (uint64_t)st.st_size > JSON_MAX_FILE) {
        close(fd);
        return czk_errorf(e, -EINVAL, "%s: not a regular file of at most %u MiB", path, JSON_MAX_FILE >> 20);
    }
    size_t n = (size_t)st.st_size, got = 0;
    char *buf = malloc(n + 1);
    if (!buf) {
        close(fd);
        return czk_errorf(e, -ENOMEM, "%s: cannot allocate %zu bytes", path, n + 1);
    }
    while (got < n) {
        ssize_t r = read(fd, buf + got, n - got);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0) {
            int err = r < 0 ? errno : EIO;
            free(buf);
            close(fd);
            return czk_errorf(e, -err, "%s: cannot read: %s", path, r < 0 ? strerror(err) : "file shrank");
        }
        got += (size_t)r;
    }
    close(fd);
    buf[n] = 0;
    *text = buf;
    *len = n;
    return 0;
}

int czk_json_proof_read(czk_groth16_proof *p, const char *path, czk_error *e)
{
    char *t;
    size_t n;
    int rc = read_file(&t, &n, path, e);
    if (rc < 0)
        return rc;
    rc = czk_json_proof_parse(p, t, n, path, e);
    free(t);
    return rc;
}

int czk_json_public_read(czk_fr **pub, size_t *cnt, const char *path, czk_error *e)
{
    char *t;
    size_t n;
    int rc = read_file(&t, &n, path, e);
    if (rc < 0)
        return rc;
    rc = czk_json_public_parse(pub, cnt, t, n, path, e);
    free(t);
    return rc;
}

int czk_json_vk_read(czk_groth16_vk *vk, const char *path, czk_error *e)
{
    char *t;
    size_t n;
    int rc = read_file(&t, &n, path, e);
    if (rc < 0)
        return rc;
    rc = czk_json_vk_parse(vk, t, n, path, e);
    free(t);
    return rc;
}

/* ------------------------------------------------------------ writing ---- */

/* jansson's *_new functions return NULL on ENOMEM and the *_new setters
 * accept NULL (returning -1), so errors propagate to the final check. */

static json_t *jfp(const czk_fp *a)
{
    char buf[CZK_FP_DEC_MAX];
    czk_fp_to_dec(buf, a);
    return json_string(buf);
}

static json_t *jfp2(const czk_fp2 *a)
{
    json_t *arr = json_array();
    json_array_append_new(arr, jfp(&a->c0));
    json_array_append_new(arr, jfp(&a->c1));
    return arr;
}

static json_t *jstr2(const char *a, const char *b)
{
    json_t *arr = json_array();
    json_array_append_new(arr, json_string(a));
    json_array_append_new(arr, json_string(b));
    return arr;
}

static json_t *jg1(const czk_g1_aff *p)
{
    json_t *arr = json_array();
    if (czk_g1_aff_is_inf(p)) {
        json_array_append_new(arr, json_string("0"));
        json_array_append_new(arr, json_string("1"));
        json_array_append_new(arr, json_string("0"));
        return arr;
    }
    json_array_append_new(arr, jfp(&p->x));
    json_array_append_new(arr, jfp(&p->y));
    json_array_append_new(arr, json_string("1"));
    return arr;
}

static json_t *jg2(const czk_g2_aff *p)
{
    json_t *arr = json_array();
    if (czk_g2_aff_is_inf(p)) {
        json_array_append_new(arr, jstr2("0", "0"));
        json_array_append_new(arr, jstr2("1", "0"));
        json_array_append_new(arr, jstr2("0", "0"));
        return arr;
    }
    json_array_append_new(arr, jfp2(&p->x));
    json_array_append_new(arr, jfp2(&p->y));
    json_array_append_new(arr, jstr2("1", "0"));
    return arr;
}

/* element counts of a complete tree: guards against a silently dropped
 * (out-of-memory) member */
static size_t jcount(const json_t *v)
{
    size_t n = 1;
    if (json_is_array(v)) {
        for (size_t i = 0; i < json_array_size(v); i++)
            n += jcount(json_array_get(v, i));
    } else if (json_is_object(v)) {
        const char *k;
        json_t *x;
        json_object_foreach((json_t *)v, k, x) n += jcount(x);
    }
    return n;
}

static char *dump(json_t *root, size_t want_count)
{
    char *s = NULL;
    if (root && jcount(root) == want_count)
        s = json_dumps(root, JSON_INDENT(1) | JSON_PRESERVE_ORDER);
    json_decref(root);
    return s;
}

/* nodes: G1 = 1 + 3, G2 = 1 + 3 * 3 */
#define N_G1 4
#define N_G2 10

char *czk_json_proof_dump(const czk_groth16_proof *p)
{
    json_t *root = json_object();
    json_object_set_new(root, "pi_a", jg1(&p->a));
    json_object_set_new(root, "pi_b", jg2(&p->b));
    json_object_set_new(root, "pi_c", jg1(&p->c));
    json_object_set_new(root, "protocol", json_string("groth16"));
    json_object_set_new(root, "curve", json_string("bls12381"));
    return dump(root, 1 + N_G1 * 2 + N_G2 + 2);
}

char *czk_json_public_dump(const czk_fr *pub_std, size_t n)
{
    json_t *root = json_array();
    for (size_t i = 0; i < n; i++) {
        char buf[CZK_FR_DEC_MAX];
        czk_fr m;
        czk_fr_to_mont(&m, &pub_std[i]);
        czk_fr_to_dec(buf, &m);
        json_array_append_new(root, json_string(buf));
    }
    return dump(root, 1 + n);
}

char *czk_json_vk_dump(const czk_groth16_vk *vk)
{
    json_t *root = json_object(), *ab = json_array(), *ic = json_array();
    json_object_set_new(root, "protocol", json_string("groth16"));
    json_object_set_new(root, "curve", json_string("bls12381"));
    json_object_set_new(root, "nPublic", json_integer(vk->n_public));
    json_object_set_new(root, "vk_alpha_1", jg1(&vk->alpha1));
    json_object_set_new(root, "vk_beta_2", jg2(&vk->beta2));
    json_object_set_new(root, "vk_gamma_2", jg2(&vk->gamma2));
    json_object_set_new(root, "vk_delta_2", jg2(&vk->delta2));
    for (int i = 0; i < 2; i++) {
        const czk_fp6 *f6 = i ? &vk->alphabeta.c1 : &vk->alphabeta.c0;
        json_t *a6 = json_array();
        json_array_append_new(a6, jfp2(&f6->c0));
        json_array_append_new(a6, jfp2(&f6->c1));
        json_array_append_new(a6, jfp2(&f6->c2));
        json_array_append_new(ab, a6);
    }
    json_object_set_new(root, "vk_alphabeta_12", ab);
    for (size_t i = 0; i <= vk->n_public; i++)
        json_array_append_new(ic, jg1(&vk->ic[i]));
    json_object_set_new(root, "IC", ic);
    return dump(root, 1 + 3 + N_G1 + 3 * N_G2 + (1 + 2 * (1 + 3 * 3)) + 1 + N_G1 * ((size_t)vk->n_public + 1));
}

static int write_atomic(const char *path, char *text, czk_error *e)
{
    char tmp[4096];
    size_t len, done = 0;
    int fd, rc = 0;

    if (!text)
        return czk_errorf(e, -ENOMEM, "%s: out of memory while formatting JSON", path);
    len = strlen(text);
    if ((size_t)snprintf(tmp, sizeof(tmp), "%s.tmp.%d", path, (int)getpid()) >= sizeof(tmp)) {
        free(text);
        return czk_errorf(e, -ENAMETOOLONG, "%s: path too long", path);
    }
    fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) {
        rc = -errno;
        free(text);
        return czk_errorf(e, rc, "%s: cannot create: %s", tmp, strerror(-rc));
    }
    while (done < len) {
        ssize_t w = write(fd, text + done, len - done);
        if (w < 0 && errno == EINTR)
            continue;
        if (w < 0) {
            rc = czk_errorf(e, -errno, "%s: cannot write: %s", tmp, strerror(errno));
            break;
        }
        done += (size_t)w;
    }
    free(text);
    if (!rc && fsync(fd) < 0)
        rc = czk_errorf(e, -errno, "%s: cannot fsync: %s", tmp, strerror(errno));
    if (close(fd) < 0 && !rc)
        rc = czk_errorf(e, -errno, "%s: cannot close: %s", tmp, strerror(errno));
    if (!rc && rename(tmp, path) < 0)
        rc = czk_errorf(e, -errno, "%s: cannot rename %s over it: %s", path, tmp, strerror(errno));
    if (rc) {
        unlink(tmp);
        return rc;
    }
    rc = czk_fsync_parent(path, NULL);
    if (rc < 0)
        return czk_errorf(e, rc, "%s: written, but cannot fsync its directory: %s", path, strerror(-rc));
    return 0;
}

int czk_json_proof_write(const char *path, const czk_groth16_proof *p, czk_error *e)
{
    return write_atomic(path, czk_json_proof_dump(p), e);
}

int czk_json_public_write(const char *path, const czk_fr *pub_std, size_t n, czk_error *e)
{
    return write_atomic(path, czk_json_public_dump(pub_std, n), e);
}

int czk_json_vk_write(const char *path, const czk_groth16_vk *vk, czk_error *e)
{
    return write_atomic(path, czk_json_vk_dump(vk), e);
}
