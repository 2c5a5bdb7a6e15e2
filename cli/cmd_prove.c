/*
 * cmd_prove.c — the single-process, snarkjs-compatible commands:
 *   czk prove ZKEY WTNS PROOF_JSON PUBLIC_JSON
 *   czk verify VKEY_JSON PUBLIC_JSON PROOF_JSON   (0 valid, 1 invalid, 2 error)
 *   czk vkey ZKEY                                 (verification_key.json on stdout)
 * No daemons involved: proving runs all three Groth16 stages in this process.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli/cli.h"
#include "common/groth16.h"
#include "common/json.h"
#include "common/log.h"
#include "common/verify.h"

static double now_s(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

int czk_cmd_prove(int argc, char **argv)
{
    const char *zkey_path, *wtns_path, *proof_path, *public_path;
    czk_zkey z;
    czk_wtns w;
    czk_groth16_vk vk = { 0 };
    czk_groth16_proof proof;
    czk_fr *pub = NULL;
    czk_error e = { 0 };
    double t0 = now_s();
    int rc = CZK_EXIT_ERROR;

    if (argc != 5)
        return czk_cli_usage(argv[0]);
    zkey_path = argv[1];
    wtns_path = argv[2];
    proof_path = argv[3];
    public_path = argv[4];

    if (czk_zkey_open(&z, zkey_path, &e))
        return czk_cli_fail(argv[0], &e);
    if (czk_wtns_open(&w, wtns_path, &e)) {
        czk_cli_fail(argv[0], &e);
        goto out_zkey;
    }
    pub = malloc(((size_t)z.n_public + 1) * sizeof(*pub));
    if (!pub) {
        czk_cli_failf(argv[0], "out of memory for %u public signals", z.n_public);
        goto out;
    }
    czk_info("prove: \"%s\" (domain 2^%u, %u vars, %u public) with \"%s\"", zkey_path,
             z.log_domain, z.n_vars, z.n_public, wtns_path);
    if (czk_groth16_prove(&z, zkey_path, &w, wtns_path, NULL, NULL, &proof, pub, czk_cli_threads,
                          &e)) {
        czk_cli_fail(argv[0], &e);
        goto out;
    }
    czk_info("prove: proof computed in %.3f s", now_s() - t0);
    /* check before release, as the finalizer does: a wrong proof is never written */
    if (czk_groth16_vk_from_zkey(&vk, &z, &e)) {
        czk_cli_fail(argv[0], &e);
        goto out;
    }
    if (czk_groth16_verify(&vk, &proof, pub, z.n_public, &e)) {
        czk_cli_failf(argv[0], "the proof computed from \"%s\" and \"%s\" does not verify (%s): "
                      "the witness does not satisfy the circuit of this key",
                      zkey_path, wtns_path, e.msg);
        goto out;
    }
    if (czk_json_proof_write(proof_path, &proof, &e) ||
        czk_json_public_write(public_path, pub, z.n_public, &e)) {
        czk_cli_fail(argv[0], &e);
        goto out;
    }
    czk_info("prove: wrote \"%s\" and \"%s\" in %.3f s", proof_path, public_path, now_s() - t0);
    rc = CZK_EXIT_OK;
out:
    czk_groth16_vk_free(&vk);
    free(pub);
    czk_wtns_close(&w);
out_zkey:
    czk_zkey_close(&z);
    return rc;
}

int czk_cmd_verify(int argc, char **argv)
{
    czk_groth16_vk vk = { 0 };
    czk_groth16_proof proof;
    czk_fr *pub = NULL;
    size_t n_pub = 0;
    czk_error e = { 0 };
    int rc;

    if (argc != 4)
        return czk_cli_usage(argv[0]);
    if (czk_json_vk_read(&vk, argv[1], &e))
        return czk_cli_fail(argv[0], &e);
    if (czk_json_public_read(&pub, &n_pub, argv[2], &e) ||
        czk_json_proof_read(&proof, argv[3], &e)) {
        rc = czk_cli_fail(argv[0], &e);
        goto out;
    }
    if (czk_groth16_verify(&vk, &proof, pub, n_pub, &e)) {
        /* the files were well-formed: whatever the verifier rejects is an invalid proof */
        fprintf(stderr, "czk verify: INVALID proof \"%s\": %s\n", argv[3], e.msg);
        rc = CZK_EXIT_FALSE;
        goto out;
    }
    printf("OK\n");
    rc = CZK_EXIT_OK;
out:
    free(pub);
    czk_groth16_vk_free(&vk);
    return rc;
}

int czk_cmd_vkey(int argc, char **argv)
{
    czk_zkey z;
    czk_groth16_vk vk = { 0 };
    czk_error e = { 0 };
    char *text = NULL;
    int rc = CZK_EXIT_ERROR;

    if (argc != 2)
        return czk_cli_usage(argv[0]);
    if (czk_zkey_open(&z, argv[1], &e))
        return czk_cli_fail(argv[0], &e);
    if (czk_groth16_vk_from_zkey(&vk, &z, &e)) {
        czk_cli_fail(argv[0], &e);
        goto out;
    }
    text = czk_json_vk_dump(&vk);
    if (!text) {
        czk_cli_failf(argv[0], "out of memory formatting the key of \"%s\"", argv[1]);
        goto out;
    }
    if (fputs(text, stdout) == EOF || fflush(stdout) == EOF) {
        czk_cli_failf(argv[0], "cannot write to stdout: %s", strerror(errno));
        goto out;
    }
    rc = CZK_EXIT_OK;
out:
    free(text);
    czk_groth16_vk_free(&vk);
    czk_zkey_close(&z);
    return rc;
}
