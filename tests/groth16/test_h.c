/*
 * test_h.c — czk_groth16_compute_h against a direct polynomial computation in
 * GMP: for random evaluations a, b on the size-n domain (snarkjs roots) and
 * c = a∘b, interpolate A, B, C naively (O(n^2) inverse DFT), evaluate them at
 * the odd powers of the 2n-th root, and compare h_j = A B - C there with the
 * prover's h (standard form).  Also checks that the polynomial A B - C
 * vanishes on the domain (so its odd-coset values are the whole quotient
 * information) and that a perturbed c changes h: h is then A B - C' for the
 * perturbed c' (so compute_h reads c rather than recomputing a∘b) and differs
 * from the unperturbed A B - C everywhere.
 */
#include "tests/groth16/g16_test.h"

#include "common/groth16/groth16.h"

/* value at x of the polynomial whose evaluations on <w> (size n) are ev */
static void eval_at(mpz_t out, mpz_t *ev, size_t n, const mpz_t w, const mpz_t x)
{
    mpz_t coef, winv, wik, xk, ninv, t;

    mpz_inits(coef, winv, wik, xk, ninv, t, NULL);
    mpz_invert(winv, w, g_r);
    mpz_set_ui(ninv, n);
    mpz_invert(ninv, ninv, g_r);
    mpz_set_ui(out, 0);
    mpz_set_ui(xk, 1);
    for (size_t k = 0; k < n; k++) {
        /* coef_k = (1/n) sum_i ev_i w^(-ik) */
        mpz_powm_ui(wik, winv, k, g_r);
        mpz_set_ui(coef, 0);
        mpz_set_ui(t, 1);
        for (size_t i = 0; i < n; i++) {
            mpz_addmul(coef, ev[i], t);
            mpz_mul(t, t, wik);
            mpz_mod(t, t, g_r);
        }
        mpz_mul(coef, coef, ninv);
        mpz_mod(coef, coef, g_r);
        mpz_addmul(out, coef, xk);
        mpz_mul(xk, xk, x);
        mpz_mod(xk, xk, g_r);
    }
    mpz_mod(out, out, g_r);
    mpz_clears(coef, winv, wik, xk, ninv, t, NULL);
}

static void run(unsigned log_n, int nthreads, bool perturb)
{
    size_t n = (size_t)1 << log_n;
    czk_fr *a = malloc(n * sizeof(czk_fr)), *b = malloc(n * sizeof(czk_fr));
    czk_fr *c = malloc(n * sizeof(czk_fr)), *h = malloc(n * sizeof(czk_fr));
    mpz_t *ea = malloc(n * sizeof(mpz_t)), *eb = malloc(n * sizeof(mpz_t)), *ec = malloc(n * sizeof(mpz_t));
    mpz_t w, w2, x, va, vb, vc, got;
    size_t bad = SIZE_MAX;

    mpz_inits(w, w2, x, va, vb, vc, got, NULL);
    for (size_t i = 0; i < n; i++) {
        czk_fr s;

        g_rand_fr_std(&s);
        czk_fr_to_mont(&a[i], &s);
        g_rand_fr_std(&s);
        czk_fr_to_mont(&b[i], &s);
        czk_fr_mul(&c[i], &a[i], &b[i]);
        mpz_inits(ea[i], eb[i], ec[i], NULL);
        g_mont_to_mpz(ea[i], &a[i]);
        g_mont_to_mpz(eb[i], &b[i]);
        g_mont_to_mpz(ec[i], &c[i]);
    }
    if (perturb) {
        bad = t_rand64() % n;
        czk_fr_add(&c[bad], &c[bad], &CZK_FR_ONE);
    }
    memset(h, 0xa5, n * sizeof(czk_fr)); /* a compute_h that writes nothing must fail */
    CHECK(czk_groth16_compute_h(a, b, c, h, log_n, nthreads) == 0, "compute_h failed");
    g_root(w, log_n);
    g_root(w2, log_n + 1);
    size_t mismatches = 0, wrong = 0;
    for (size_t j = 0; j < n; j++) {
        mpz_powm_ui(x, w2, 2 * j + 1, g_r);
        eval_at(va, ea, n, w, x);
        eval_at(vb, eb, n, w, x);
        eval_at(vc, ec, n, w, x);
        mpz_mul(va, va, vb);
        mpz_sub(va, va, vc);
        mpz_mod(va, va, g_r);
        g_fr_to_mpz(got, &h[j]);
        if (mpz_cmp(va, got))
            mismatches++;
        if (perturb) {
            /* A B - C' where c' = c + 1 at bad: bump ec[bad] for the one evaluation */
            mpz_add(va, va, vc);
            mpz_add_ui(ec[bad], ec[bad], 1);
            eval_at(vc, ec, n, w, x);
            mpz_sub_ui(ec[bad], ec[bad], 1);
            mpz_sub(va, va, vc);
            mpz_mod(va, va, g_r);
            if (mpz_cmp(va, got))
                wrong++;
        }
    }
    if (perturb)
        CHECK(mismatches == n && wrong == 0,
              "log_n %u: perturbing c[%zu] changed only %zu of %zu h values, %zu differ from GMP on c'",
              log_n, bad, mismatches, n, wrong);
    else
        CHECK(mismatches == 0, "log_n %u threads %d: %zu of %zu h values differ from GMP", log_n,
              nthreads, mismatches, n);
    /* A B - C vanishes on the domain: interpolating at w^i gives back a_i b_i - c_i = 0 */
    if (!perturb) {
        mpz_powm_ui(x, w, 1, g_r);
        eval_at(va, ea, n, w, x);
        eval_at(vb, eb, n, w, x);
        eval_at(vc, ec, n, w, x);
        mpz_mul(va, va, vb);
        mpz_sub(va, va, vc);
        mpz_mod(va, va, g_r);
        CHECK(mpz_sgn(va) == 0, "oracle: A B - C does not vanish at w (oracle broken)");
    }
    for (size_t i = 0; i < n; i++)
        mpz_clears(ea[i], eb[i], ec[i], NULL);
    mpz_clears(w, w2, x, va, vb, vc, got, NULL);
    free(a); free(b); free(c); free(h); free(ea); free(eb); free(ec);
}

int main(void)
{
    g_init_r();
    t_seed("groth16_h");
    for (unsigned k = 1; k <= 6; k++)
        run(k, 1 + (int)(k & 1), false);
    run(5, 2, true);
    if (t_failures)
        fprintf(stderr, "%d failures\n", t_failures);
    return t_failures ? 1 : 0;
}
