/*
 * prove_buffers_tmpl.h — the body of test_prove_buffers.c for one curve,
 * included there with the names of g16_names_bls12_381.h and of
 * g16_names_bn254.h.
 */

/* key and witness of a generated circuit with a domain of 2^log_n: the proof
 * of G16(prove) (its own a, b, c buffer) equals the one of the stages run on
 * a plain heap buffer, for the same random r, s, and verifies */
static void CV(check_prove)(const char *dir, unsigned log_n)
{
    char r1cs[4200], wtns[4200], zkey[4200];
    czk_gencircuit_opts o = {.n_constraints = (1u << log_n) - 16, .n_public = 1, .bit_fraction = 0,
                             .seed = 0x9e3779b9u + log_n, .curve = CV_ID};
    czk_zkey z;
    czk_wtns wt;
    const czk_wtns *w = &wt; /* WTW(w) wants a pointer named w */
    czk_error e = {0};
    G16(proof) p1, p2;
    G16(msm_out) m;
    G16(params) par;
    G16(vk) vk = {0};
    CV(fr) r, s, pub[1], *abc;
    size_t n;

    snprintf(r1cs, sizeof(r1cs), "%s/%s.r1cs", dir, CV_NAME);
    snprintf(wtns, sizeof(wtns), "%s/%s.wtns", dir, CV_NAME);
    snprintf(zkey, sizeof(zkey), "%s/%s.zkey", dir, CV_NAME);
    if (czk_gencircuit(&o, r1cs, wtns, &e) || czk_setup_dev(r1cs, zkey, 0, NULL, &e))
        DIE("%s: %s", CV_NAME, e.msg);
    if (czk_zkey_open_curves(&z, zkey, CZK_CURVES_ALL, &e) || czk_wtns_open_curves(&wt, wtns, CZK_CURVES_ALL, &e))
        DIE("%s: %s", CV_NAME, e.msg);
    CHECK(z.domain_size == 1u << log_n, "%s: domain %u, expected 2^%u", CV_NAME, z.domain_size, log_n);
    n = z.domain_size;
    if (CV(fr_random)(&r) || CV(fr_random)(&s))
        DIE("getrandom failed");

    CHECK(G16(prove)(&z, zkey, w, wtns, &r, &s, &p1, pub, 0, &e) == 0, "%s: prove: %s", CV_NAME, e.msg);

    abc = aligned_alloc(64, 3 * n * sizeof(CV(fr)));
    if (!abc)
        DIE("out of memory");
    CHECK(G16(build_abc)(&z, WTW(w), abc, abc + n, abc + 2 * n, 0) == 0, "%s: build_abc", CV_NAME);
    CHECK(G16(compute)(&z, abc, abc + n, abc + 2 * n, WTW(w), &m, 0) == 0, "%s: compute", CV_NAME);
    G16(params_from_zkey)(&par, &z);
    G16(finalize)(&par, &m, &r, &s, &p2);
    free(abc);
    CHECK(memcmp(&p1, &p2, sizeof(p1)) == 0, "%s, domain 2^%u: prove and the stages give different proofs",
          CV_NAME, log_n);
    CHECK(memcmp(pub, WTW(w) + 1, sizeof(pub)) == 0, "%s: public signal is not w[1]", CV_NAME);

    if (G16(vk_from_zkey)(&vk, &z, &e))
        DIE("%s: %s", CV_NAME, e.msg);
    CHECK(G16(verify)(&vk, &p1, pub, 1, &e) == 0, "%s: the proof does not verify: %s", CV_NAME, e.msg);
    G16(vk_free)(&vk);
    czk_wtns_close(&wt);
    czk_zkey_close(&z);
    unlink(r1cs);
    unlink(wtns);
    unlink(zkey);
}
