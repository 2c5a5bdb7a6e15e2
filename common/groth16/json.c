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

/* ------------------------------------------------------------ writing ---- */

/* jansson's *_new functions return NULL on ENOMEM and the *_new setters
 * accept NULL (returning -1), so errors propagate to the final check. */

static json_t *jstr2(const char *a, const char *b)
{
    json_t *arr = json_array();
    json_array_append_new(arr, json_string(a));
    json_array_append_new(arr, json_string(b));
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

int czk_json_curve_parse(czk_curve_id *curve, const char *text, size_t len, const char *name, czk_error *e)
{
    json_t *root;
    const json_t *v;
    int rc = load_object(&root, text, len, name, e);

    if (rc < 0)
        return rc;
    v = json_object_get(root, "curve");
    if (!v) {
        *curve = CZK_CURVE_BLS12_381;
    } else if (json_is_string(v) && !strcmp(json_string_value(v), "bls12381")) {
        *curve = CZK_CURVE_BLS12_381;
    } else if (json_is_string(v) && !strcmp(json_string_value(v), "bn128")) {
        *curve = CZK_CURVE_BN254;
    } else if (json_is_string(v)) {
        char shown[44];
        size_t i;
        const char *c = json_string_value(v);
        /* the file's text, printable characters only */
        for (i = 0; c[i] && i < 40; i++)
            shown[i] = c[i] >= 0x20 && c[i] < 0x7f ? c[i] : '?';
        shown[i] = 0;
        rc = czk_errorf(e, -EINVAL, "%s: curve: \"%s%s\" is not supported (expected \"bls12381\" or \"bn128\")",
                        name, shown, c[i] ? "..." : "");
    } else {
        rc = czk_errorf(e, -EINVAL, "%s: curve: expected a string, got %s", name, jtype(v));
    }
    json_decref(root);
    return rc;
}

int czk_json_curve_read(czk_curve_id *curve, const char *path, czk_error *e)
{
    char *t;
    size_t n;
    int rc = read_file(&t, &n, path, e);
    if (rc < 0)
        return rc;
    rc = czk_json_curve_parse(curve, t, n, path, e);
    free(t);
    return rc;
}

#include "common/groth16/g16_names_bls12_381.h"
#include "common/groth16/json_tmpl.h"
#include "common/groth16/g16_names_bn254.h"
#include "common/groth16/json_tmpl.h"
#include "common/groth16/g16_names_undef.h"
