/*
 * test_json_mutate.c — replays the fuzz_json.c target (any compiler) over
 * random mutations of real snarkjs files: proof.json, public.json and
 * verification_key.json of every fixture under tests/fixtures, plus a few
 * hand-written seeds.  Mutations: flip a byte, overwrite with a JSON
 * character or digit, delete / duplicate / swap a range, truncate.  The
 * target aborts on a property violation (see fuzz_json.c); the unmutated
 * seeds must be accepted.
 *   test_json_mutate [iterations]
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "common/groth16/json.h"
#include "pt_util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

typedef struct seed { uint8_t kind; bool valid; char *text; size_t len; } seed;

static seed seeds[64];
static size_t n_seeds;

static void add_seed(uint8_t kind, bool valid, const char *text, size_t len)
{
    if (n_seeds == sizeof(seeds) / sizeof(seeds[0]))
        return;
    seeds[n_seeds].kind = kind;
    seeds[n_seeds].valid = valid;
    seeds[n_seeds].text = malloc(len + 1);
    memcpy(seeds[n_seeds].text, text, len);
    seeds[n_seeds].len = len;
    n_seeds++;
}

static void add_file(uint8_t kind, bool valid, const char *path)
{
    FILE *f = fopen(path, "rb");
    char buf[1 << 16];
    size_t n;
    if (!f)
        return;
    n = fread(buf, 1, sizeof(buf), f);
    fclose(f);
    add_seed(kind, valid, buf, n);
}

/* the seed parses (used for the valid BLS12-381 seeds) */
static int accepted(const seed *s, czk_error *e)
{
    int rc;
    if (s->kind == 0) {
        czk_groth16_proof p;
        rc = czk_json_proof_parse(&p, s->text, s->len, "seed", e);
    } else if (s->kind == 1) {
        czk_fr *pub = NULL;
        size_t n;
        rc = czk_json_public_parse(&pub, &n, s->text, s->len, "seed", e);
        free(pub);
    } else {
        czk_groth16_vk vk = {0};
        rc = czk_json_vk_parse(&vk, s->text, s->len, "seed", e);
        czk_groth16_vk_free(&vk);
    }
    return rc == 0;
}

static void run(uint8_t kind, const char *text, size_t len)
{
    uint8_t *in = malloc(len + 1);
    in[0] = kind;
    memcpy(in + 1, text, len);
    LLVMFuzzerTestOneInput(in, len + 1);
    free(in);
}

int main(int argc, char **argv)
{
    static const char *fx[] = {"multi", "linear", "poseidon", "range", "tiny_bn128"};
    static const char *files[] = {"proof.json", "public.json", "verification_key.json"};
    static const char alphabet[] = "0123456789[]{},:\" -+.eE\\nul";
    int iters = argc > 1 ? atoi(argv[1]) : 3000;
    char path[1024];

    t_seed("test_json_mutate");
    for (size_t i = 0; i < sizeof(fx) / sizeof(fx[0]); i++)
        for (uint8_t k = 0; k < 3; k++) {
            snprintf(path, sizeof(path), "%s/%s/%s", pt_fixture_dir(), fx[i], files[k]);
            add_file(k, strcmp(fx[i], "tiny_bn128") != 0 || k == 1, path);
        }
    {
        static const char *hand[] = {
            "[]", "[\"0\"]",
            "{\"pi_a\":[\"0\",\"1\",\"0\"],\"pi_b\":[[\"0\",\"0\"],[\"1\",\"0\"],[\"0\",\"0\"]],"
            "\"pi_c\":[\"0\",\"1\",\"0\"],\"protocol\":\"groth16\"}"};
        add_seed(1, true, hand[0], strlen(hand[0]));
        add_seed(1, true, hand[1], strlen(hand[1]));
        add_seed(0, true, hand[2], strlen(hand[2]));
    }
    fprintf(stderr, "test_json_mutate: %zu seeds\n", n_seeds);

    for (size_t i = 0; i < n_seeds; i++) {
        czk_error e = {0};
        CHECK(!seeds[i].valid || accepted(&seeds[i], &e), "seed %zu must be accepted: %s", i, e.msg);
        run(seeds[i].kind, seeds[i].text, seeds[i].len);
    }

    for (int it = 0; it < iters; it++) {
        const seed *s = &seeds[t_rand64() % n_seeds];
        size_t cap = s->len * 2 + 64, len = s->len;
        char *t = malloc(cap);
        memcpy(t, s->text, len);
        int muts = 1 + (int)(t_rand64() % 4);
        for (int m = 0; m < muts && len > 0; m++) {
            size_t a = t_rand64() % len, b = a + t_rand64() % (len - a < 32 ? len - a : 32);
            switch (t_rand64() % 6) {
            case 0: t[a] ^= (char)(1u << (t_rand64() % 8)); break;
            case 1: t[a] = alphabet[t_rand64() % (sizeof(alphabet) - 1)]; break;
            case 2: memmove(t + a, t + b, len - b); len -= b - a; break;           /* delete */
            case 3:                                                                /* duplicate */
                if (len + (b - a) <= cap) {
                    memmove(t + b + (b - a), t + b, len - b);
                    memcpy(t + b, t + a, b - a);
                    len += b - a;
                }
                break;
            case 4: len = a; break;                                                /* truncate */
            default: {                                                             /* swap two bytes */
                size_t c = t_rand64() % len;
                char x = t[a];
                t[a] = t[c];
                t[c] = x;
            }
            }
        }
        run(s->kind, t, len);
        free(t);
    }
    for (size_t i = 0; i < n_seeds; i++)
        free(seeds[i].text);
    if (t_failures)
        return 1;
    fprintf(stderr, "test_json_mutate: ok (%d mutated inputs, no property violated)\n", iters);
    return 0;
}
