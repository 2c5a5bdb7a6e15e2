/*
 * test_bn254_oracle.c — BN254 against an independent implementation:
 * ffjavascript's bn128 (the wasm curve snarkjs uses), through oracle.js.
 * For seeded random scalars a, b (and a = b = 1) it compares a G1, b G2 and
 * every Fp12 coefficient of e(a G1, b G2) with the oracle's, in
 * ffjavascript's tower order (c0.c0.c0, c0.c0.c1, c0.c1.c0, ... c1.c2.c1).
 * Skips (77) when node or interop/node_modules/ffjavascript is absent
 * (scripts/deps.sh installs them).
 * Usage: test_bn254_oracle NODE ORACLE_JS NODE_MODULES_DIR [pairs]
 */
#include <errno.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/crypto/bn254_pairing.h"
#include "tests/bn254/bn_util.h"

#define LINES_PER_PAIR 18

static int read_line(FILE *f, char *buf, size_t n)
{
    if (!fgets(buf, (int)n, f))
        return -1;
    buf[strcspn(buf, "\r\n")] = '\0';
    return 0;
}

static void check_fp(FILE *f, const czk_bn254_fp *x, const char *what, int pair)
{
    char want[256], got[CZK_BN254_DEC_MAX];
    if (read_line(f, want, sizeof(want)) < 0) {
        CHECK(0, "oracle output ended early at %s pair=%d", what, pair);
        return;
    }
    czk_bn254_fp_to_dec(got, x);
    CHECK(strcmp(got, want) == 0, "%s pair=%d: czk %s, ffjavascript %s", what, pair, got, want);
}

int main(int argc, char **argv)
{
    if (argc < 4) {
        fprintf(stderr, "usage: test_bn254_oracle NODE ORACLE_JS NODE_MODULES_DIR [pairs]\n");
        return 2;
    }
    const char *node = argv[1], *oracle = argv[2], *mods = argv[3];
    int pairs = argc > 4 ? atoi(argv[4]) : 4;
    char path[4096];
    struct stat st;

    snprintf(path, sizeof(path), "%s/ffjavascript/package.json", mods);
    if (node[0] == '\0' || access(node, X_OK) != 0 || stat(path, &st) != 0) {
        printf("test_bn254_oracle: node or %s/ffjavascript not found: skipped\n", mods);
        return 77;
    }
    if (strpbrk(node, "'") || strpbrk(oracle, "'") || strpbrk(mods, "'")) {
        fprintf(stderr, "test_bn254_oracle: paths must not contain quotes\n");
        return 2;
    }
    t_seed("test_bn254_oracle");
    bn_init();
    if (pairs < 1)
        pairs = 1;

    czk_bn254_fr *ka = calloc((size_t)pairs, sizeof(*ka)), *kb = calloc((size_t)pairs, sizeof(*kb));
    size_t cmd_len = 3 * sizeof(path) + (size_t)pairs * 2 * 80;
    char *cmd = malloc(cmd_len);
    mpz_t v;
    mpz_init(v);
    int off = snprintf(cmd, cmd_len, "'%s' '%s' '%s'", node, oracle, mods);
    for (int i = 0; i < pairs; i++) {
        char *d;
        if (i == 0) {
            ka[i].l[0] = 1;
            kb[i].l[0] = 1;
        } else {
            /* non-zero: ffjavascript's pairing does not special-case the
             * point at infinity (it returns 0 where e(P, 0) = 1) */
            do
                rand_scalar(&ka[i], v);
            while (mpz_sgn(v) == 0);
            do
                rand_scalar(&kb[i], v);
            while (mpz_sgn(v) == 0);
        }
        t_limbs_to_mpz(v, ka[i].l, 4);
        d = mpz_get_str(NULL, 10, v);
        off += snprintf(cmd + off, cmd_len - (size_t)off, " %s", d);
        free(d);
        t_limbs_to_mpz(v, kb[i].l, 4);
        d = mpz_get_str(NULL, 10, v);
        off += snprintf(cmd + off, cmd_len - (size_t)off, " %s", d);
        free(d);
    }

    FILE *f = popen(cmd, "r");
    if (!f) {
        fprintf(stderr, "test_bn254_oracle: could not run node: %s\n", strerror(errno));
        return 1;
    }
    for (int i = 0; i < pairs; i++) {
        czk_bn254_g1 j1;
        czk_bn254_g2 j2;
        czk_bn254_g1_aff P;
        czk_bn254_g2_aff Q;
        czk_bn254_fp12 e;

        czk_bn254_g1_mul_aff(&j1, &CZK_BN254_G1_GEN, &ka[i]);
        czk_bn254_g1_to_aff(&P, &j1);
        czk_bn254_g2_mul_aff(&j2, &CZK_BN254_G2_GEN, &kb[i]);
        czk_bn254_g2_to_aff(&Q, &j2);
        czk_bn254_pairing(&e, &P, &Q);

        check_fp(f, &P.x, "G1 x", i);
        check_fp(f, &P.y, "G1 y", i);
        check_fp(f, &Q.x.c0, "G2 x.c0", i);
        check_fp(f, &Q.x.c1, "G2 x.c1", i);
        check_fp(f, &Q.y.c0, "G2 y.c0", i);
        check_fp(f, &Q.y.c1, "G2 y.c1", i);
        const czk_bn254_fp6 *h6[2] = {&e.c0, &e.c1};
        for (int j = 0; j < 2; j++) {
            const czk_bn254_fp2 *h2[3] = {&h6[j]->c0, &h6[j]->c1, &h6[j]->c2};
            for (int k = 0; k < 3; k++) {
                char what[32];
                snprintf(what, sizeof(what), "GT c%d.c%d.c0", j, k);
                check_fp(f, &h2[k]->c0, what, i);
                snprintf(what, sizeof(what), "GT c%d.c%d.c1", j, k);
                check_fp(f, &h2[k]->c1, what, i);
            }
        }
    }
    int st_rc = pclose(f);
    CHECK(st_rc == 0, "oracle.js exit status %d", st_rc);
    free(cmd);
    free(ka);
    free(kb);
    mpz_clear(v);
    if (t_failures) {
        fprintf(stderr, "test_bn254_oracle: %d failures\n", t_failures);
        return 1;
    }
    printf("test_bn254_oracle: %d pairings equal ffjavascript's\n", pairs);
    return 0;
}
