/*
 * test_util.h — helpers shared by the field and curve tests: a seeded
 * splitmix64 generator, GMP <-> limb conversion, and a CHECK macro that
 * reports the failing expression and counts failures.
 */
#ifndef CZK_TEST_UTIL_H
#define CZK_TEST_UTIL_H

#include <gmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static int t_failures;

#define CHECK(cond, ...)                                                          \
    do {                                                                          \
        if (!(cond)) {                                                            \
            if (t_failures++ < 20) {                                              \
                fprintf(stderr, "%s:%d: check failed: %s: ", __FILE__, __LINE__, #cond); \
                fprintf(stderr, __VA_ARGS__);                                     \
                fprintf(stderr, "\n");                                            \
            }                                                                     \
        }                                                                         \
    } while (0)

static uint64_t t_rng_state;

static inline uint64_t t_rand64(void)
{
    uint64_t z = (t_rng_state += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

/* seed from CZK_TEST_SEED or the clock; printed so a failure can be replayed */
static inline void t_seed(const char *name)
{
    const char *s = getenv("CZK_TEST_SEED");
    t_rng_state = s ? strtoull(s, NULL, 0) : (uint64_t)time(NULL) ^ ((uint64_t)clock() << 32);
    printf("%s: seed 0x%llx (set CZK_TEST_SEED to replay)\n", name, (unsigned long long)t_rng_state);
}

static inline void t_limbs_to_mpz(mpz_t z, const uint64_t *l, int n)
{
    mpz_import(z, (size_t)n, -1, sizeof(uint64_t), 0, 0, l);
}

/* z must be 0 <= z < 2^(64n) */
static inline void t_mpz_to_limbs(uint64_t *l, const mpz_t z, int n)
{
    size_t cnt = 0;
    for (int i = 0; i < n; i++)
        l[i] = 0;
    mpz_export(l, &cnt, -1, sizeof(uint64_t), 0, 0, z);
}

/* uniform-ish random integer below m (random 64n bits reduced mod m), with a
 * bias towards edge values one time in eight */
static inline void t_rand_mod(mpz_t z, const mpz_t m, int n)
{
    uint64_t l[8];
    unsigned pick = (unsigned)(t_rand64() % 64);
    switch (pick) {
    case 0: mpz_set_ui(z, 0); return;
    case 1: mpz_set_ui(z, 1); return;
    case 2: mpz_sub_ui(z, m, 1); return;
    case 3: mpz_sub_ui(z, m, 2); return;
    case 4: mpz_set_ui(z, 1); mpz_mul_2exp(z, z, mpz_sizeinbase(m, 2) - 1); mpz_mod(z, z, m); return;
    case 5: mpz_set_ui(z, 1); mpz_mul_2exp(z, z, mpz_sizeinbase(m, 2) - 1); mpz_sub_ui(z, z, 1); return;
    case 6: mpz_set_ui(z, t_rand64()); return;
    case 7: mpz_fdiv_q_2exp(z, m, 1); return;
    default: break;
    }
    for (int i = 0; i < n; i++)
        l[i] = t_rand64();
    t_limbs_to_mpz(z, l, n);
    mpz_mod(z, z, m);
}

#endif
