/*
 * prove_tmpl.h — the curve-specific part of `czk prove`, `czk verify` and
 * `czk vkey` (cmd_prove.c), included there once with the names of
 * common/groth16/g16_names_bls12_381.h and once with BN254's.  Private to
 * cmd_prove.c.
 */

/*
 * CZK_TEST_RS="r,s" (decimal, each < r the group order): fixed blinding
 * scalars, TEST ONLY -- a proof with known r, s reveals the witness.  Lets the
 * tests compare `--backend cuda` with `--backend cpu` proof for proof
 * (docs/tracing.md, tests/backend).  Returns 1 when set (r, s in Montgomery
 * form), 0 when unset, -EINVAL with e set when malformed.
 */
static int CV(cli_test_rs)(CV(fr) *r, CV(fr) *s, czk_error *e)
{
    const char *v = getenv("CZK_TEST_RS");
    char buf[2 * CV_FR_DEC_MAX + 2], *comma;
    CV(fr) rs, ss;

    if (!v || !v[0])
        return 0;
    if (strlen(v) >= sizeof(buf) || !(comma = strchr(strcpy(buf, v), ',')))
        return czk_errorf(e, -EINVAL, "CZK_TEST_RS must be \"r,s\" (two decimal scalars), not \"%s\"", v);
    *comma = 0;
    if (CV(fr_from_dec)(&rs, buf) < 0 || CV(fr_from_dec)(&ss, comma + 1) < 0)
        return czk_errorf(e, -EINVAL, "CZK_TEST_RS: \"%s\" is not two decimal scalars below the " CV_NAME " group order", v);
    CV(fr_to_mont)(r, &rs);
    CV(fr_to_mont)(s, &ss);
    fprintf(stderr, "czk prove: WARNING: CZK_TEST_RS is set: fixed blinding r, s (test only; such a proof is "
                    "not zero-knowledge)\n");
    return 1;
}

/*
 * The staged path gpud runs, in this process: build a, b, c (the synth's
 * stage) into one slot-like buffer, hand it to the backend (copy_in, compute),
 * then finalize.  *ran_cpu is set instead when the backend that opened is the
 * cpu one (auto without a GPU): the caller then proves as before.
 */
static int CV(prove_staged)(const char *backend, const czk_zkey *z, const char *zkey_name, const czk_wtns *w,
                             const CV(fr) *r, const CV(fr) *s, G16(proof) *proof, CV(fr) *pub, int *ran_cpu,
                             czk_error *e)
{
    size_t n = z->domain_size, nv = z->n_vars;
    size_t bytes = (3 * n + nv) * sizeof(CV(fr));
    const czk_backend_ops *ops = NULL;
    czk_backend *b = NULL;
    czk_backend_config bc;
    czk_backend_region reg;
    czk_backend_input in;
    czk_groth16_any_msm_out m;
    G16(params) p;
    CV(fr) *buf = NULL;
    double t0 = now_s(), t1, t2, t3;
    size_t written = 0; /* bytes of buf that may hold witness-derived values */
    int rc = 0;

    *ran_cpu = 0;
    buf = aligned_alloc(4096, (bytes + 4095) & ~(size_t)4095);
    if (!buf)
        return czk_errorf(e, -ENOMEM, "proving with \"%s\": cannot allocate %zu MiB for a, b, c, w", zkey_name,
                          bytes >> 20);
    memset(&bc, 0, sizeof(bc));
    bc.n_circuits = 1;
    bc.zkeys = &z;
    bc.threads = czk_cli_threads;
    bc.contexts = 1;
    reg.base = buf;
    reg.len = (bytes + 4095) & ~(size_t)4095;
    bc.regions = &reg;
    bc.n_regions = 1;
    if (prove_tables) {
        static const unsigned char on = 1;
        bc.tables_on = &on;
    }
    if (!strcmp(backend, "auto")) {
        /* the preferred backend built in; without a usable GPU, quietly the cpu path */
        ops = czk_backend_find("auto", e);
        if (ops == &czk_backend_cpu_ops) {
            czk_info("prove: backend cpu (auto: no GPU backend in this build)");
            *ran_cpu = 1;
            goto out;
        }
        if ((rc = ops->create(&b, &bc, e)) == -ENODEV || rc == -ENOMEM) {
            if (rc == -ENOMEM)
                czk_warn("%s: proving on the cpu", e->msg);
            else
                czk_info("prove: backend cpu (auto: %s)", e->msg[0] ? e->msg : "no usable GPU");
            memset(e, 0, sizeof(*e));
            *ran_cpu = 1;
            rc = 0;
            goto out;
        }
        if (rc < 0)
            goto out;
        czk_info("prove: backend %s (auto: a GPU is usable)", ops->name);
    } else if ((rc = czk_backend_open(backend, 0, &bc, &ops, &b, e)) < 0) {
        goto out;
    } else {
        czk_info("prove: backend %s", ops->name);
    }
    t1 = now_s();
    written = bytes;
    rc = G16(build_abc)(z, WTW(w), buf, buf + n, buf + 2 * n, czk_cli_threads);
    if (rc) {
        czk_errorf(e, rc, "proving with \"%s\": building a, b, c failed: %s", zkey_name, strerror(-rc));
        goto out;
    }
    memcpy(buf + 3 * n, WTW(w), nv * sizeof(CV(fr)));
    memset(&in, 0, sizeof(in));
    in.a = (const uint8_t *)buf;
    in.b = (const uint8_t *)(buf + n);
    in.c = (const uint8_t *)(buf + 2 * n);
    in.w = (const uint8_t *)(buf + 3 * n);
    in.domain_size = n;
    in.n_vars = nv;
    t2 = now_s();
    if ((rc = ops->copy_in(b, 0, 0, &in, e)) < 0)
        goto out;
    t3 = now_s();
    if ((rc = ops->compute(b, 0, 0, &m, (czk_fr *)pub, e)) < 0) /* backend.h: 32-byte scalars of either curve */
        goto out;
    czk_info("prove: %s backend: set-up %.3f s, build_abc %.3f s, copy %.3f s (%.1f GB/s), h + msm %.3f s", ops->name,
             t1 - t0, t2 - t1, t3 - t2, (double)(3 * n + nv) * sizeof(CV(fr)) / (t3 - t2) / 1e9, now_s() - t3);
    G16(params_from_zkey)(&p, z);
    if (r && s) {
        G16(finalize)(&p, &ANYU(m), r, s, proof);
    } else if ((rc = G16(finalize_random)(&p, &ANYU(m), proof))) {
        czk_errorf(e, rc, "cannot draw blinding scalars from getrandom: %s", strerror(-rc));
        goto out;
    }
out:
    if (b)
        ops->destroy(b);
    /* a, b, c and w are functions of the private witness; a buffer never
     * written (auto falling back to the cpu path) is not touched: wiping it
     * would fault all its pages in for nothing */
    explicit_bzero(buf, written);
    free(buf);
    return rc;
}

/*
 * `czk prove` once the key and the witness are open (and of this curve):
 * the proof, checked with the key's verification key before it is written,
 * then proof.json and public.json.  Returns a CZK_EXIT_ status.
 */
static int CV(cli_prove)(const char *argv0, const char *backend, const czk_zkey *z, const char *zkey_path,
                         const czk_wtns *w, const char *wtns_path, const char *proof_path,
                         const char *public_path, double t0)
{
    G16(vk) vk = { 0 };
    G16(proof) proof;
    CV(fr) *pub = NULL, r_fix, s_fix;
    czk_error e = { 0 };
    int fixed, ran_cpu = 1, rc = CZK_EXIT_ERROR;

    if ((fixed = CV(cli_test_rs)(&r_fix, &s_fix, &e)) < 0)
        return czk_cli_fail(argv0, &e);
    pub = malloc(((size_t)z->n_public + 1) * sizeof(*pub));
    if (!pub) {
        czk_cli_failf(argv0, "out of memory for %u public signals", z->n_public);
        goto out;
    }
    czk_info("prove: \"%s\" (%s, domain 2^%u, %u vars, %u public) with \"%s\"", zkey_path, CV_NAME,
             z->log_domain, z->n_vars, z->n_public, wtns_path);
    if (!strcmp(backend, "cpu"))
        czk_info("prove: backend cpu");
    /* cuda (or auto with a usable GPU): the staged path gpud runs; cpu: all in one */
    if (strcmp(backend, "cpu") &&
        CV(prove_staged)(backend, z, zkey_path, w, fixed ? &r_fix : NULL, fixed ? &s_fix : NULL, &proof, pub,
                         &ran_cpu, &e)) {
        czk_cli_fail(argv0, &e);
        goto out;
    }
    if (ran_cpu && G16(prove)(z, zkey_path, w, wtns_path, fixed ? &r_fix : NULL, fixed ? &s_fix : NULL, &proof,
                              pub, czk_cli_threads, &e)) {
        czk_cli_fail(argv0, &e);
        goto out;
    }
    czk_info("prove: proof computed in %.3f s", now_s() - t0);
    /* check before release, as the finalizer does: a wrong proof is never written */
    if (G16(vk_from_zkey)(&vk, z, &e)) {
        czk_cli_fail(argv0, &e);
        goto out;
    }
    if (G16(verify)(&vk, &proof, pub, z->n_public, &e)) {
        czk_cli_failf(argv0, "the proof computed from \"%s\" and \"%s\" does not verify (%s): "
                      "the witness does not satisfy the circuit of this key",
                      zkey_path, wtns_path, e.msg);
        goto out;
    }
    if (JS(proof_write)(proof_path, &proof, &e) || JS(public_write)(public_path, pub, z->n_public, &e)) {
        czk_cli_fail(argv0, &e);
        goto out;
    }
    czk_info("prove: wrote \"%s\" and \"%s\" in %.3f s", proof_path, public_path, now_s() - t0);
    rc = CZK_EXIT_OK;
out:
    explicit_bzero(&r_fix, sizeof(r_fix));
    explicit_bzero(&s_fix, sizeof(s_fix));
    G16(vk_free)(&vk);
    free(pub);
    return rc;
}

/* `czk verify` once the verification key's "curve" named this curve */
static int CV(cli_verify)(const char *argv0, const char *vk_path, const char *pub_path, const char *proof_path)
{
    G16(vk) vk = { 0 };
    G16(proof) proof;
    CV(fr) *pub = NULL;
    size_t n_pub = 0;
    czk_error e = { 0 };
    int rc;

    if (JS(vk_read)(&vk, vk_path, &e))
        return czk_cli_fail(argv0, &e);
    if (JS(public_read)(&pub, &n_pub, pub_path, &e) || JS(proof_read)(&proof, proof_path, &e)) {
        rc = czk_cli_fail(argv0, &e);
        goto out;
    }
    if (G16(verify)(&vk, &proof, pub, n_pub, &e)) {
        /* the files were well-formed: whatever the verifier rejects is an invalid proof */
        fprintf(stderr, "czk verify: INVALID proof \"%s\": %s\n", proof_path, e.msg);
        rc = CZK_EXIT_FALSE;
        goto out;
    }
    printf("OK\n");
    rc = CZK_EXIT_OK;
out:
    free(pub);
    G16(vk_free)(&vk);
    return rc;
}

/* the verification_key.json text of an open zkey of this curve (malloc'd), or NULL with e set */
static char *CV(cli_vkey_text)(const czk_zkey *z, const char *zkey_path, czk_error *e)
{
    G16(vk) vk = { 0 };
    char *text = NULL;

    if (G16(vk_from_zkey)(&vk, z, e) == 0 && !(text = JS(vk_dump)(&vk)))
        czk_errorf(e, -ENOMEM, "out of memory formatting the key of \"%s\"", zkey_path);
    G16(vk_free)(&vk);
    return text;
}
