/*
 * cmd_prove.c — the single-process, snarkjs-compatible commands:
 *   czk prove [--backend cpu|cuda|auto] ZKEY WTNS PROOF_JSON PUBLIC_JSON
 *       cpu: all three stages on the CPU (czk_groth16_prove); cuda: the
 *       staged path of czk-gpud in-process (build a, b, c, then the backend's
 *       copy_in + compute, then finalize); auto (default): cuda when a GPU is
 *       usable, else cpu.  CZK_TEST_RS="r,s" fixes the blinding (tests only).
 *       The key's primes pick the curve: BLS12-381, or BN254 (bn128), which
 *       runs on the cpu prover (auto) since no backend has BN254 kernels yet.
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

/*
 * The staged path gpud runs, in this process: build a, b, c (the synth's
 * stage) into one slot-like buffer, hand it to the backend (copy_in, compute),
 * then finalize.  *ran_cpu is set instead when the backend that opened is the
 * cpu one (auto without a GPU): the caller then proves as before.
 */
static int prove_staged(const char *backend, const czk_zkey *z, const char *zkey_name, const czk_wtns *w,
                        const char *wtns_name, const czk_fr *r, const czk_fr *s, czk_groth16_proof *proof,
                        czk_fr *pub, int *ran_cpu, czk_error *e)
{
    size_t n = z->domain_size, nv = z->n_vars;
    size_t bytes = (3 * n + nv) * sizeof(czk_fr);
    const czk_backend_ops *ops = NULL;
    czk_backend *b = NULL;
    czk_backend_config bc;
    czk_backend_region reg;
    czk_backend_input in;
    czk_groth16_any_msm_out m;
    czk_groth16_params p;
    czk_fr *buf = NULL;
    double t0 = now_s(), t1, t2, t3;
    int rc = 0;

    *ran_cpu = 0;
    buf = aligned_alloc(4096, (bytes + 4095) & ~(size_t)4095);
    if (!buf)
        return czk_errorf(e, -ENOMEM, "proving with \"%s\": cannot allocate %zu MiB for a, b, c, w", zkey_name,
                          bytes >> 20);
    memset(&bc, 0, sizeof(bc));
    bc.n_circuits = 1;
    bc.zkeys = &z;
    bc.threads = czk_cli_threads;
    bc.contexts = 1;
    reg.base = buf;
    reg.len = (bytes + 4095) & ~(size_t)4095;
    bc.regions = &reg;
    bc.n_regions = 1;
    if (!strcmp(backend, "auto")) {
        /* the preferred backend built in; without a usable GPU, quietly the cpu path */
        ops = czk_backend_find("auto", e);
        if (ops == &czk_backend_cpu_ops) {
            czk_info("prove: backend cpu (auto: no GPU backend in this build)");
            *ran_cpu = 1;
            goto out;
        }
        if ((rc = ops->create(&b, &bc, e)) == -ENODEV || rc == -ENOMEM) {
            if (rc == -ENOMEM)
                czk_warn("%s: proving on the cpu", e->msg);
            else
                czk_info("prove: backend cpu (auto: %s)", e->msg[0] ? e->msg : "no usable GPU");
            memset(e, 0, sizeof(*e));
            *ran_cpu = 1;
            rc = 0;
            goto out;
        }
        if (rc < 0)
            goto out;
        czk_info("prove: backend %s (auto: a GPU is usable)", ops->name);
    } else if ((rc = czk_backend_open(backend, 0, &bc, &ops, &b, e)) < 0) {
        goto out;
    } else {
        czk_info("prove: backend %s", ops->name);
    }
    t1 = now_s();
    rc = czk_groth16_build_abc(z, w->w, buf, buf + n, buf + 2 * n, czk_cli_threads);
    if (rc) {
        czk_errorf(e, rc, "proving with \"%s\": building a, b, c failed: %s", zkey_name, strerror(-rc));
        goto out;
    }
    memcpy(buf + 3 * n, w->w, nv * sizeof(czk_fr));
    memset(&in, 0, sizeof(in));
    in.a = (const uint8_t *)buf;
    in.b = (const uint8_t *)(buf + n);
    in.c = (const uint8_t *)(buf + 2 * n);
    in.w = (const uint8_t *)(buf + 3 * n);
    in.domain_size = n;
    in.n_vars = nv;
    t2 = now_s();
    if ((rc = ops->copy_in(b, 0, 0, &in, e)) < 0)
        goto out;
    t3 = now_s();
    if ((rc = ops->compute(b, 0, 0, &m, pub, e)) < 0)
        goto out;
    czk_info("prove: %s backend: set-up %.3f s, build_abc %.3f s, copy %.3f s (%.1f GB/s), h + msm %.3f s", ops->name,
             t1 - t0, t2 - t1, t3 - t2, (double)(3 * n + nv) * sizeof(czk_fr) / (t3 - t2) / 1e9, now_s() - t3);
    czk_groth16_params_from_zkey(&p, z);
    if (r && s) {
        czk_groth16_finalize(&p, &m.u.bls, r, s, proof);
    } else if ((rc = czk_groth16_finalize_random(&p, &m.u.bls, proof))) {
        czk_errorf(e, rc, "cannot draw blinding scalars from getrandom: %s", strerror(-rc));
        goto out;
    }
out:
    if (b)
        ops->destroy(b);
    /* a, b, c and w are functions of the private witness */
    explicit_bzero(buf, bytes);
    free(buf);
    return rc;
}

/*
 * The non-cpu backends for a BN254 key: none has BN254 kernels yet, so auto
 * proves on the cpu (saying why) and an explicit --backend cuda is refused.
 */
static int bn254_staged(const char *backend, czk_error *e, int *ran_cpu)
{
    if (!strcmp(backend, "auto")) {
        czk_info("prove: backend cpu (auto: the GPU backend has no BN254 kernels yet)");
        *ran_cpu = 1;
        return 0;
    }
    *ran_cpu = 0;
    return czk_errorf(e, -ENOTSUP, "--backend %s: BN254 (bn128) keys are proved on the cpu only for now "
                      "(no BN254 GPU kernels yet); use --backend cpu or auto", backend);
}

#include "common/groth16/g16_names_bls12_381.h"
#define CLI_STAGED(backend, z, zp, w, wp, r, s, proof, pub, ran_cpu, e) \
    prove_staged(backend, z, zp, w, wp, r, s, proof, pub, ran_cpu, e)
#include "cli/prove_tmpl.h"
#undef CLI_STAGED
#include "common/groth16/g16_names_bn254.h"
#define CLI_STAGED(backend, z, zp, w, wp, r, s, proof, pub, ran_cpu, e) bn254_staged(backend, e, ran_cpu)
#include "cli/prove_tmpl.h"
#undef CLI_STAGED
#include "common/groth16/g16_names_undef.h"

int czk_cmd_prove(int argc, char **argv)
{
    static const struct option opts[] = {{"backend", required_argument, NULL, 'b'}, {NULL, 0, NULL, 0}};
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
