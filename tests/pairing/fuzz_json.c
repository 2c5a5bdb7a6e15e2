/*
 * fuzz_json.c — libFuzzer target for the snarkjs JSON readers (json.h).
 * The first input byte picks the reader (proof / public / vk), the rest is
 * the text.  Properties checked on every input:
 *   - a rejected input returns -EINVAL (or -ENOMEM) with a message;
 *   - an accepted input, written back with the writer and read again, gives
 *     the same values (and the writer's text is a fixed point).
 * Built with clang -fsanitize=fuzzer (target fuzz_json) and replayed by
 * test_json_mutate.c with any compiler.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/groth16/json.h"

#define FAIL(...)                                                        \
    do {                                                                 \
        fprintf(stderr, "fuzz_json: " __VA_ARGS__);                      \
        fprintf(stderr, "\n");                                           \
        abort();                                                         \
    } while (0)

static bool vk_same(const czk_groth16_vk *a, const czk_groth16_vk *b)
{
    if (a->n_public != b->n_public || !czk_g1_aff_eq(&a->alpha1, &b->alpha1) ||
        !czk_g2_aff_eq(&a->beta2, &b->beta2) || !czk_g2_aff_eq(&a->gamma2, &b->gamma2) ||
        !czk_g2_aff_eq(&a->delta2, &b->delta2) || !czk_fp12_eq(&a->alphabeta, &b->alphabeta))
        return false;
    return memcmp(a->ic, b->ic, ((size_t)a->n_public + 1) * sizeof(czk_g1_aff)) == 0;
}

static void check_reject(int rc, const czk_error *e, const char *what)
{
    if (rc != -EINVAL && rc != -ENOMEM)
        FAIL("%s: unexpected return code %d", what, rc);
    if (e->msg[0] == 0)
        FAIL("%s: rejected without a message", what);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    czk_error e;
    int rc;

    if (size < 1)
        return 0;
    const char *text = (const char *)data + 1;
    size_t len = size - 1;
    memset(&e, 0, sizeof(e));

    switch (data[0] % 3) {
    case 0: {
        czk_groth16_proof p, q;
        rc = czk_json_proof_parse(&p, text, len, "proof.json", &e);
        if (rc < 0) {
            check_reject(rc, &e, "proof");
            break;
        }
        char *out = czk_json_proof_dump(&p);
        if (!out)
            FAIL("proof: dump failed");
        if (czk_json_proof_parse(&q, out, strlen(out), "dump", &e) != 0)
            FAIL("proof: own output rejected: %s", e.msg);
        if (memcmp(&p, &q, sizeof(p)) != 0)
            FAIL("proof: round trip changed the values");
        free(out);
        break;
    }
    case 1: {
        czk_fr *pub = NULL, *pub2 = NULL;
        size_t n = 0, n2 = 0;
        rc = czk_json_public_parse(&pub, &n, text, len, "public.json", &e);
        if (rc < 0) {
            check_reject(rc, &e, "public");
            break;
        }
        char *out = czk_json_public_dump(pub, n);
        if (!out)
            FAIL("public: dump failed");
        if (czk_json_public_parse(&pub2, &n2, out, strlen(out), "dump", &e) != 0)
            FAIL("public: own output rejected: %s", e.msg);
        if (n != n2 || (n && memcmp(pub, pub2, n * sizeof(czk_fr)) != 0))
            FAIL("public: round trip changed the values");
        free(out);
        free(pub);
        free(pub2);
        break;
    }
    default: {
        czk_groth16_vk vk = {0}, vk2 = {0};
        rc = czk_json_vk_parse(&vk, text, len, "verification_key.json", &e);
        if (rc < 0) {
            check_reject(rc, &e, "vk");
            break;
        }
        char *out = czk_json_vk_dump(&vk);
        if (!out)
            FAIL("vk: dump failed");
        if (czk_json_vk_parse(&vk2, out, strlen(out), "dump", &e) != 0)
            FAIL("vk: own output rejected: %s", e.msg);
        if (!vk_same(&vk, &vk2))
            FAIL("vk: round trip changed the values");
        char *out2 = czk_json_vk_dump(&vk2);
        if (!out2 || strcmp(out, out2) != 0)
            FAIL("vk: writer output is not a fixed point");
        free(out);
        free(out2);
        czk_groth16_vk_free(&vk);
        czk_groth16_vk_free(&vk2);
        break;
    }
    }
    return 0;
}
