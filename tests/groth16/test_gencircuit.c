/*
 * test_gencircuit.c — czk_gencircuit output read back with the format
 * readers and checked with GMP: header counts, every constraint
 * (A·w)(B·w) == C·w mod r, 1..4 terms per non-empty linear combination, the
 * share of boolean wires near the requested fraction, w[0] = 1,
 * determinism per seed; and the checker itself rejects a corrupted witness.
 * usage: test_groth16_gencircuit SCRATCH_DIR
 */
#include "tests/groth16/g16_test.h"

#include <errno.h>
#include <sys/stat.h>

#include "common/formats/formats.h"
#include "common/groth16/gencircuit.h"

struct sat { const czk_fr *w; size_t unsat, bad_terms; };

static int sat_row(void *ctx, uint32_t idx, const czk_r1cs_term *a, uint32_t na,
                   const czk_r1cs_term *b, uint32_t nb, const czk_r1cs_term *c, uint32_t nc)
{
    struct sat *s = ctx;
    mpz_t va, vb, vc;

    mpz_inits(va, vb, vc, NULL);
    g_lc_value(va, a, na, s->w);
    g_lc_value(vb, b, nb, s->w);
    g_lc_value(vc, c, nc, s->w);
    mpz_mul(va, va, vb);
    mpz_mod(va, va, g_r);
    s->unsat += mpz_cmp(va, vc) != 0;
    s->bad_terms += na > 4 || nb > 4 || nc > 4 || na + nb + nc == 0;
    mpz_clears(va, vb, vc, NULL);
    return 0;
}

static bool same_file(const char *p, const char *q)
{
    FILE *a = fopen(p, "rb"), *b = fopen(q, "rb");
    bool same = a && b;
    int x, y;

    while (same) {
        x = getc(a);
        y = getc(b);
        same = x == y;
        if (x == EOF || y == EOF)
            break;
    }
    if (a)
        fclose(a);
    if (b)
        fclose(b);
    return same;
}

static void run(const char *dir, uint32_t n, uint32_t k, double bits, uint64_t seed)
{
    char r1cs_path[4096], wtns_path[4096], r2[4096], w2[4096];
    czk_gencircuit_opts o = { .n_constraints = n, .n_public = k, .bit_fraction = bits, .seed = seed };
    czk_error e = { 0 };
    czk_r1cs r1cs;
    czk_wtns w;
    struct sat s = { 0 };
    size_t nbits = 0;
    czk_fr one_std = { { 1, 0, 0, 0 } };

    snprintf(r1cs_path, sizeof(r1cs_path), "%s/g.r1cs", dir);
    snprintf(wtns_path, sizeof(wtns_path), "%s/g.wtns", dir);
    snprintf(r2, sizeof(r2), "%s/g2.r1cs", dir);
    snprintf(w2, sizeof(w2), "%s/g2.wtns", dir);
    if (czk_gencircuit(&o, r1cs_path, wtns_path, &e) || czk_r1cs_open(&r1cs, r1cs_path, &e) ||
        czk_wtns_open(&w, wtns_path, &e))
        DIE("%s", e.msg);
    CHECK(r1cs.n_constraints == n && r1cs.n_wires == n + k + 3 && r1cs.n_pub_in == k &&
          r1cs.n_pub_out == 0 && r1cs.n_prv_in == CZK_GENCIRCUIT_PRIVATE_INPUTS &&
          w.n_witness == r1cs.n_wires,
          "counts: constraints %u wires %u pubIn %u pubOut %u prvIn %u witness %u",
          r1cs.n_constraints, r1cs.n_wires, r1cs.n_pub_in, r1cs.n_pub_out, r1cs.n_prv_in,
          w.n_witness);
    CHECK(czk_fr_eq(&w.w[0], &one_std), "w[0] != 1");
    s.w = w.w;
    czk_r1cs_foreach(&r1cs, sat_row, &s);
    CHECK(s.unsat == 0, "%zu of %u constraints unsatisfied (n %u k %u bits %g seed %llu)", s.unsat,
          n, n, k, bits, (unsigned long long)seed);
    CHECK(s.bad_terms == 0, "%zu constraints with bad term counts", s.bad_terms);
    for (uint32_t i = k + 3; i < w.n_witness; i++) {
        const czk_fr *v = &w.w[i];

        nbits += v->l[1] == 0 && v->l[2] == 0 && v->l[3] == 0 && v->l[0] <= 1;
    }
    /* full-width values are almost never 0 or 1; tolerance ~5 standard deviations */
    double share = (double)nbits / n, tol = 5 * 0.5 / __builtin_sqrt((double)n) + 0.01;
    CHECK(share >= bits - tol && share <= bits + tol, "bit share %.3f, asked for %.3f", share, bits);

    /* the checker can fail: corrupt one full-width wire */
    {
        czk_fr *bad = malloc(w.n_witness * sizeof(czk_fr));
        struct sat s2 = { 0 };

        memcpy(bad, w.w, w.n_witness * sizeof(czk_fr));
        czk_fr_add(&bad[w.n_witness - 1], &bad[w.n_witness - 1], &one_std);
        czk_fr_add(&bad[w.n_witness - 1], &bad[w.n_witness - 1], &one_std);
        s2.w = bad;
        czk_r1cs_foreach(&r1cs, sat_row, &s2);
        CHECK(s2.unsat > 0, "a corrupted witness satisfies the circuit");
        free(bad);
    }
    czk_r1cs_close(&r1cs);
    czk_wtns_close(&w);

    /* same seed, same files; another seed, another witness */
    if (czk_gencircuit(&o, r2, w2, &e))
        DIE("%s", e.msg);
    CHECK(same_file(r1cs_path, r2) && same_file(wtns_path, w2), "same seed, different files");
    o.seed = seed + 1;
    if (czk_gencircuit(&o, r2, w2, &e))
        DIE("%s", e.msg);
    CHECK(!same_file(wtns_path, w2), "different seeds, same witness");
}

int main(int argc, char **argv)
{
    czk_gencircuit_opts o = { .n_constraints = 0, .n_public = 1, .bit_fraction = 0.5 };
    czk_error e = { 0 };

    if (argc != 2)
        DIE("usage: %s SCRATCH_DIR", argv[0]);
    if (mkdir(argv[1], 0755) && errno != EEXIST)
        DIE("cannot create %s: %s", argv[1], strerror(errno));
    g_init_r();
    t_seed("groth16_gencircuit");
    run(argv[1], 2000, 4, 0.5, t_rand64());
    run(argv[1], 500, 0, 0.0, t_rand64());
    run(argv[1], 500, 1, 1.0, t_rand64());
    run(argv[1], 1, 2, 0.25, t_rand64());
    CHECK(czk_gencircuit(&o, "/nonexistent/x.r1cs", "/nonexistent/x.wtns", &e) < 0,
          "0 constraints accepted");
    o.n_constraints = 10;
    o.bit_fraction = 1.5;
    CHECK(czk_gencircuit(&o, "/nonexistent/x.r1cs", "/nonexistent/x.wtns", &e) < 0,
          "bit fraction 1.5 accepted");
    o.bit_fraction = 0.5;
    CHECK(czk_gencircuit(&o, "/nonexistent/x.r1cs", "/nonexistent/x.wtns", &e) < 0 &&
          strstr(e.msg, "/nonexistent"), "unwritable path not reported by name: %s", e.msg);
    if (t_failures)
        fprintf(stderr, "%d failures\n", t_failures);
    return t_failures ? 1 : 0;
}
