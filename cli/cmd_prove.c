/*
 * cmd_prove.c — the single-process, snarkjs-compatible commands:
 *   czk prove [--backend cpu|cuda|auto] [--msm-tables] ZKEY WTNS PROOF_JSON PUBLIC_JSON
 *       cpu: all three stages on the CPU (czk_groth16_prove); cuda: the
 *       staged path of czk-gpud in-process (build a, b, c, then the backend's
 *       copy_in + compute, then finalize); auto (default): cuda when a GPU is
 *       usable, else cpu.  CZK_TEST_RS="r,s" fixes the blinding (tests only).
 *       The key's primes pick the curve: BLS12-381 or BN254 (bn128), on
 *       either backend.  --msm-tables (cuda): build the fixed-base MSM
 *       tables first, as czk-gpud does (costs more than it saves for one
 *       proof; for measuring a partition as the daemon computes it).
 *   czk verify VKEY_JSON PUBLIC_JSON PROOF_JSON   (0 valid, 1 invalid, 2 error; the
 *       verification key's "curve" picks the curve)
 *   czk vkey ZKEY [OUT_JSON]                      (verification_key.json; stdout without OUT_JSON)
 * No daemons involved: proving runs all three Groth16 stages in this process.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "common/base/clock.h"
#include "common/base/fsutil.h"
#include "cli/cli.h"
#include "common/groth16/groth16.h"
#include "common/groth16/json.h"
#include "common/base/log.h"
#include "common/groth16/verify.h"
#include "backend/backend.h"

static double now_s(void) { return (double)czk_mono_ns() * 1e-9; }

/* --msm-tables: the staged path builds the backend's fixed-base tables */
static int prove_tables;

#include "common/groth16/g16_names_bls12_381.h"
#include "cli/prove_tmpl.h"
#include "common/groth16/g16_names_bn254.h"
#include "cli/prove_tmpl.h"
#include "common/groth16/g16_names_undef.h"

int czk_cmd_prove(int argc, char **argv)
{
    static const struct option opts[] = {
        {"backend", required_argument, NULL, 'b'}, {"msm-tables", no_argument, NULL, 't'}, {NULL, 0, NULL, 0}};
    const char *zkey_path, *wtns_path, *proof_path, *public_path, *backend = "auto";
    int c;
    czk_zkey z;
    czk_wtns w;
    czk_error e = { 0 };
    double t0 = now_s();
    int rc = CZK_EXIT_ERROR;

    while ((c = czk_cli_getopt(argc, argv, opts)) != -1) {
        if (c == 'b')
            backend = optarg;
        else if (c == 't')
            prove_tables = 1;
        else
            return czk_cli_opt_status();
    }
    if (argc - optind != 4)
        return czk_cli_usage_error(argv[0], "expected 4 files (ZKEY WTNS PROOF_JSON PUBLIC_JSON), got %d",
                                   argc - optind);
    if (strcmp(backend, "cpu") && strcmp(backend, "cuda") && strcmp(backend, "auto"))
        return czk_cli_usage_error(argv[0], "--backend must be cpu, cuda or auto, not \"%s\"", backend);
    zkey_path = argv[optind];
    wtns_path = argv[optind + 1];
    proof_path = argv[optind + 2];
    public_path = argv[optind + 3];

    /* the key's primes pick the curve; the witness must be of the same one */
    if (czk_zkey_open_curves(&z, zkey_path, CZK_CURVES_ALL, &e))
        return czk_cli_fail(argv[0], &e);
    if (czk_wtns_open_curves(&w, wtns_path, CZK_CURVES_ALL, &e)) {
        czk_cli_fail(argv[0], &e);
        goto out_zkey;
    }
    if (czk_groth16_check_witness(&z, zkey_path, &w, wtns_path, &e)) {
        czk_cli_fail(argv[0], &e);
        goto out;
    }
    if (z.curve == CZK_CURVE_BN254)
        rc = czk_bn254_cli_prove(argv[0], backend, &z, zkey_path, &w, wtns_path, proof_path, public_path, t0);
    else
        rc = czk_cli_prove(argv[0], backend, &z, zkey_path, &w, wtns_path, proof_path, public_path, t0);
out:
    czk_wtns_close(&w);
out_zkey:
    czk_zkey_close(&z);
    return rc;
}

int czk_cmd_verify(int argc, char **argv)
{
    czk_error e = { 0 };
    czk_curve_id curve;

    if (czk_cli_operands(argc, argv, 3, 3, "VKEY_JSON PUBLIC_JSON PROOF_JSON") < 0)
        return czk_cli_opt_status();
    /* the verification key's "curve" picks the curve */
    if (czk_json_curve_read(&curve, argv[optind], &e))
        return czk_cli_fail(argv[0], &e);
    if (curve == CZK_CURVE_BN254)
        return czk_bn254_cli_verify(argv[0], argv[optind], argv[optind + 1], argv[optind + 2]);
    return czk_cli_verify(argv[0], argv[optind], argv[optind + 1], argv[optind + 2]);
}

/*
 * Writes text to path the way a key file should appear: complete or not at
 * all (a temporary file next to it, fsync, rename), mode 0644 less the umask.
 */
static int write_text(const char *path, const char *text, czk_error *e)
{
    char tmp[4096];
    size_t len = strlen(text);
    int fd, r = 0;

    if (snprintf(tmp, sizeof(tmp), "%s.tmp.%d", path, (int)getpid()) >= (int)sizeof(tmp))
        return czk_errorf(e, -ENAMETOOLONG, "output path \"%.80s...\" is too long", path);
    fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
    if (fd < 0)
        return czk_errorf(e, -errno, "cannot create \"%s\": %s", tmp, strerror(errno));
    for (size_t off = 0; off < len;) {
        ssize_t k = write(fd, text + off, len - off);
        if (k < 0 && errno == EINTR)
            continue;
        if (k < 0) {
            r = czk_errorf(e, -errno, "cannot write \"%s\": %s", tmp, strerror(errno));
            break;
        }
        off += (size_t)k;
    }
    if (r == 0 && fsync(fd) < 0)
        r = czk_errorf(e, -errno, "cannot fsync \"%s\": %s", tmp, strerror(errno));
    if (close(fd) < 0 && r == 0)
        r = czk_errorf(e, -errno, "cannot write \"%s\": %s", tmp, strerror(errno));
    if (r == 0 && rename(tmp, path) < 0)
        r = czk_errorf(e, -errno, "cannot rename \"%s\" to \"%s\": %s", tmp, path, strerror(errno));
    if (r < 0) {
        unlink(tmp);
        return r;
    }
    return czk_fsync_parent(path, e);
}

int czk_cmd_vkey(int argc, char **argv)
{
    czk_zkey z;
    czk_error e = { 0 };
    const char *zkey_path, *out_path;
    char *text = NULL;
    int rc = CZK_EXIT_ERROR;

    if (czk_cli_operands(argc, argv, 1, 2, "ZKEY [OUT_JSON]") < 0)
        return czk_cli_opt_status();
    zkey_path = argv[optind];
    out_path = argc - optind == 2 && strcmp(argv[optind + 1], "-") ? argv[optind + 1] : NULL;
    if (czk_zkey_open_curves(&z, zkey_path, CZK_CURVES_ALL, &e))
        return czk_cli_fail(argv[0], &e);
    text = z.curve == CZK_CURVE_BN254 ? czk_bn254_cli_vkey_text(&z, zkey_path, &e)
                                      : czk_cli_vkey_text(&z, zkey_path, &e);
    if (!text) {
        czk_cli_fail(argv[0], &e);
        goto out;
    }
    if (out_path) {
        if (write_text(out_path, text, &e) < 0) {
            czk_cli_fail(argv[0], &e);
            goto out;
        }
        czk_info("vkey: wrote \"%s\"", out_path);
    } else if (fputs(text, stdout) == EOF || fflush(stdout) == EOF) {
        czk_cli_failf(argv[0], "cannot write to stdout: %s", strerror(errno));
        goto out;
    }
    rc = CZK_EXIT_OK;
out:
    free(text);
    czk_zkey_close(&z);
    return rc;
}
