/*
 * test_cuda_setup.c — the setup's fixed-base multiples on the GPU
 * (czk_cuda_gen_mul) against the CPU's generic scalar multiplication
 * (tests/setup_ref.h), both
 * curves, G1 and G2:
 *   - random scalars and edge ones (0, 1, 2, r - 1, r - 2, one nonzero byte
 *     at each position, all bytes 0xff below r, powers of two), every result
 *     compared, infinity as all-zero bytes;
 *   - more scalars than one device chunk (2^20 + 37), sampled around the
 *     chunk boundary and at both ends;
 *   - a whole development setup with fixed secrets, on the CPU and with the
 *     GPU as its accelerator (common/groth16/setup.h): the keys are byte for
 *     byte the same;
 *   - an unknown curve and NULL arguments are refused with -EINVAL.
 * usage: test_cuda_setup [SCRATCH_DIR]   (exits 77 without a GPU)
 */
#include "tests/cuda/cuda_test_util.h"

#include <stdbool.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/groth16/gencircuit.h"
#include "common/groth16/setup.h"
#include "tests/setup_ref.h"

/* one curve's CPU side, through void pointers */
struct curve_ops {
    const char *name;
    unsigned cuda_curve;
    czk_curve_id id;
    size_t aff[2];
    const void *gen[2];
    void (*rand_fr)(void *std);
    void (*to_mont)(void *m, const void *std);
    void (*neg)(void *r, const void *a);
    void (*from_u64)(void *r, uint64_t v);
    int (*setup)(const char *r1cs, const char *zkey, const czk_setup_accel *accel, czk_error *e);
};

static void bls_rand(void *x) { tu_rand_fr(x); }
static void bls_to_mont(void *m, const void *s) { czk_fr_to_mont(m, s); }
static void bls_neg(void *r, const void *a) { czk_fr_neg(r, a); }
static void bls_u64(void *r, uint64_t v) { czk_fr_from_u64(r, v); }
static void bn_rand(void *x) { tu_rand_bn_fr(x); }
static void bn_to_mont(void *m, const void *s) { czk_bn254_fr_to_mont(m, s); }
static void bn_neg(void *r, const void *a) { czk_bn254_fr_neg(r, a); }
static void bn_u64(void *r, uint64_t v) { czk_bn254_fr_from_u64(r, v); }

/* the secrets of a setup: random, the same for the CPU and the GPU key */
static czk_setup_secrets bls_sec;
static czk_setup_bn254_secrets bn_sec;
static int bls_setup(const char *r1cs, const char *zkey, const czk_setup_accel *accel, czk_error *e)
{
    return czk_setup_with_secrets(r1cs, zkey, &bls_sec, 0, accel, e);
}
static int bn_setup(const char *r1cs, const char *zkey, const czk_setup_accel *accel, czk_error *e)
{
    return czk_setup_bn254_with_secrets(r1cs, zkey, &bn_sec, 0, accel, e);
}

static const struct curve_ops curves[2] = {
    { "bls12-381", CZK_CUDA_CURVE_BLS12_381, CZK_CURVE_BLS12_381, { sizeof(czk_g1_aff), sizeof(czk_g2_aff) },
      { &CZK_G1_GEN, &CZK_G2_GEN }, bls_rand, bls_to_mont, bls_neg, bls_u64, bls_setup },
    { "bn254", CZK_CUDA_CURVE_BN254, CZK_CURVE_BN254, { sizeof(czk_bn254_g1_aff), sizeof(czk_bn254_g2_aff) },
      { &CZK_BN254_G1_GEN, &CZK_BN254_G2_GEN }, bn_rand, bn_to_mont, bn_neg, bn_u64, bn_setup },
};

/* n scalars (standard form into std, Montgomery into mont): the edge ones first, then random */
static size_t edge_scalars(const struct curve_ops *c, uint8_t *std, size_t n)
{
    size_t k = 0;
    uint8_t one[32];

#define NEXT() (std + 32 * k++)
    memset(NEXT(), 0, 32);
    c->from_u64(NEXT(), 1);
    c->from_u64(NEXT(), 2);
    c->from_u64(one, 1);
    c->neg(NEXT(), one); /* r - 1 */
    c->from_u64(one, 2);
    c->neg(NEXT(), one); /* r - 2 */
    for (unsigned j = 0; j < 32; j++) { /* one nonzero byte at position j */
        uint8_t *s = NEXT();
        memset(s, 0, 32);
        s[j] = j == 31 ? 0x2f : 0xff;
    }
    {
        uint8_t *s = NEXT(); /* every byte 0xff below r */
        memset(s, 0xff, 32);
        s[31] = 0x2f;
    }
    for (unsigned b = 0; b < 254; b += 23) {
        uint8_t *s = NEXT();
        memset(s, 0, 32);
        s[b / 8] = (uint8_t)(1u << (b % 8));
    }
#undef NEXT
    CHECK(k <= n, "edge scalars: %zu > %zu", k, n);
    for (size_t i = k; i < n; i++)
        c->rand_fr(std + 32 * i);
    return k;
}

static void check_many(const struct curve_ops *c, int g2, size_t n, size_t sample)
{
    const size_t pt = c->aff[g2];
    uint8_t *std = malloc(32 * n), *mont = malloc(32 * n), *got = malloc(pt * n), *want = malloc(pt);
    CHECK(std && mont && got && want, "out of memory");
    edge_scalars(c, std, n);
    for (size_t i = 0; i < n; i++)
        c->to_mont(mont + 32 * i, std + 32 * i);
    memset(got, 0xa5, pt * n);
    int rc = czk_cuda_gen_mul(0, c->cuda_curve, g2, c->gen[g2], mont, n, got);
    CHECK(rc == 0, "%s G%d: czk_cuda_gen_mul of %zu: %d %s", c->name, g2 + 1, n, rc, czk_cuda_last_error());
    size_t checked = 0;
    for (size_t i = 0; i < n; i++) {
        /* all of them, or the sample: both ends and around each chunk boundary (2^20) */
        const size_t m = i & (((size_t)1 << 20) - 1);
        if (sample && i >= sample && n - i > sample && m >= sample && ((size_t)1 << 20) - m > sample)
            continue;
        czk_test_gen_mul_ref(c->id == CZK_CURVE_BN254, g2, c->gen[g2], mont + 32 * i, 1, want);
        CHECK(!memcmp(want, got + pt * i, pt), "%s G%d: multiple %zu of %zu differs from the CPU's", c->name,
              g2 + 1, i, n);
        checked++;
    }
    fprintf(stderr, "%s G%d: %zu multiples, %zu checked against the CPU\n", c->name, g2 + 1, n, checked);
    free(std);
    free(mont);
    free(got);
    free(want);
}

static int cuda_gen_mul(void *arg, czk_curve_id curve, int g2, const void *base, const void *k, size_t n, void *out)
{
    (void)arg;
    return czk_cuda_gen_mul(0, curve == CZK_CURVE_BN254 ? CZK_CUDA_CURVE_BN254 : CZK_CUDA_CURVE_BLS12_381, g2, base,
                            k, n, out);
}

static void check_setup(const struct curve_ops *c, const char *dir)
{
    char r1cs[4096], wtns[4096], cpu[4096], gpu[4096];
    czk_gencircuit_opts o = { .n_constraints = 3000, .n_public = 3, .bit_fraction = 0.5, .seed = tu_rand(),
                              .curve = c->id };
    czk_setup_accel accel = { .name = "GPU 0", .gen_mul = cuda_gen_mul };
    czk_error e = { 0 };

    CHECK(snprintf(r1cs, sizeof(r1cs), "%s/%s.r1cs", dir, c->name) < (int)sizeof(r1cs) &&
              snprintf(wtns, sizeof(wtns), "%s/%s.wtns", dir, c->name) < (int)sizeof(wtns) &&
              snprintf(cpu, sizeof(cpu), "%s/%s-cpu.zkey", dir, c->name) < (int)sizeof(cpu) &&
              snprintf(gpu, sizeof(gpu), "%s/%s-gpu.zkey", dir, c->name) < (int)sizeof(gpu),
          "paths under %s too long", dir);
    CHECK(czk_gencircuit(&o, r1cs, wtns, &e) == 0, "%s", e.msg);
    CHECK(c->setup(r1cs, cpu, NULL, &e) == 0, "%s CPU setup: %s", c->name, e.msg);
    CHECK(c->setup(r1cs, gpu, &accel, &e) == 0, "%s GPU setup: %s", c->name, e.msg);
    CHECK(czk_test_same_file(cpu, gpu), "%s: the key set up on the GPU differs from the CPU's", c->name);
    fprintf(stderr, "%s: setup of %u constraints, the GPU's key equals the CPU's\n", c->name, o.n_constraints);
    unlink(r1cs);
    unlink(wtns);
    unlink(cpu);
    unlink(gpu);
}

int main(int argc, char **argv)
{
    int ndev = 0;
    char dir[4096];

    if (czk_cuda_device_count(&ndev) || ndev == 0) {
        fprintf(stderr, "no GPU: skipped\n");
        return 77;
    }
    tu_seed();
    snprintf(dir, sizeof(dir), "%s", argc > 1 ? argv[1] : "test_cuda_setup.d");
    CHECK(mkdir(dir, 0755) == 0 || errno == EEXIST, "cannot create %s: %s", dir, strerror(errno));

    uint8_t k[32] = { 1 }, out[192];
    CHECK(czk_cuda_gen_mul(0, 7, 0, &CZK_G1_GEN, k, 1, out) == -EINVAL, "unknown curve accepted");
    CHECK(czk_cuda_gen_mul(0, CZK_CUDA_CURVE_BN254, 0, NULL, k, 1, out) == -EINVAL, "NULL base accepted");
    CHECK(czk_cuda_gen_mul(0, CZK_CUDA_CURVE_BN254, 0, &CZK_BN254_G1_GEN, k, 0, NULL) == 0, "n = 0 refused");

    for (int ci = 0; ci < 2; ci++) {
        const struct curve_ops *c = &curves[ci];
        if (c->id == CZK_CURVE_BN254)
            CHECK(czk_setup_bn254_secrets_random(&bn_sec) == 0, "secrets");
        else
            CHECK(czk_setup_secrets_random(&bls_sec) == 0, "secrets");
        check_many(c, 0, 3000, 0);
        check_many(c, 1, 1000, 0);
        check_many(c, 0, ((size_t)1 << 20) + 37, 100);
        check_setup(c, dir);
    }
    rmdir(dir);
    fprintf(stderr, "test_cuda_setup: passed\n");
    return 0;
}
