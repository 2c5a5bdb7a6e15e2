/*
 * cmd_setup.c — `czk setup` (development proving key) and `czk gen-circuit`
 * (synthetic circuit + witness): the tools to make test circuits and test
 * keys at any size, for BLS12-381 or BN254 (setup: the r1cs's prime picks;
 * gen-circuit: --curve).  setup --backend: where the key's point
 * multiplications run (a GPU by default when there is one; common/groth16/setup.h).
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include "cli/cli.h"
#include "common/groth16/gencircuit.h"
#include "common/base/log.h"
#include "common/groth16/setup.h"
#include "backend/backend.h"

int czk_cmd_setup(int argc, char **argv)
{
    static const struct option opts[] = { { "backend", required_argument, NULL, 'b' }, { NULL, 0, NULL, 0 } };
    const char *backend = "auto";
    czk_setup_accel accel = { 0 };
    czk_error e = { 0 };
    int c;

    while ((c = czk_cli_getopt(argc, argv, opts)) != -1) {
        if (c == 'b')
            backend = optarg;
        else
            return czk_cli_opt_status();
    }
    if (strcmp(backend, "cpu") && strcmp(backend, "cuda") && strcmp(backend, "auto"))
        return czk_cli_usage_error(argv[0], "--backend must be cpu, cuda or auto, not \"%s\"", backend);
    if (argc - optind != 2)
        return czk_cli_usage_error(argv[0], "expected R1CS ZKEY, got %d argument%s", argc - optind,
                                   argc - optind == 1 ? "" : "s");
    int r = czk_backend_setup_accel(backend, &accel, &e);
    if (r < 0)
        return czk_cli_failf(argv[0], "--backend %s: %s", backend, e.msg);
    if (r > 0)
        czk_info("setup: point multiplications on %s (--backend %s)", accel.name, backend);
    fprintf(stderr,
            "czk setup: *** DEVELOPMENT KEY: for tests and benchmarks only, NOT FOR PRODUCTION ***\n"
            "czk setup: the secrets are random and wiped after use, but nothing proves that;\n"
            "czk setup: production keys must come from a ceremony (snarkjs powersoftau + zkey contribute)\n");
    if (czk_setup_dev(argv[optind], argv[optind + 1], czk_cli_threads, accel.gen_mul ? &accel : NULL, &e))
        return czk_cli_fail(argv[0], &e);
    return CZK_EXIT_OK;
}

int czk_cmd_gen_circuit(int argc, char **argv)
{
    static const struct option opts[] = {
        { "constraints", required_argument, NULL, 'n' },
        { "publics", required_argument, NULL, 'k' },
        { "bits", required_argument, NULL, 'b' },
        { "seed", required_argument, NULL, 's' },
        { "curve", required_argument, NULL, 'c' },
        { NULL, 0, NULL, 0 },
    };
    czk_gencircuit_opts o = { .n_public = 1, .bit_fraction = 0.5 };
    czk_error e = { 0 };
    bool have_n = false, have_seed = false;
    uint64_t v;
    char *end;
    int c;

    while ((c = czk_cli_getopt(argc, argv, opts)) != -1) {
        switch (c) {
        case 'n':
            if (czk_cli_parse_u64(optarg, 0, UINT32_MAX, &v) || v == 0)
                return czk_cli_failf(argv[0], "--constraints \"%s\": expected an integer in 1..2^32-1",
                                     optarg);
            o.n_constraints = (uint32_t)v;
            have_n = true;
            break;
        case 'k':
            if (czk_cli_parse_u64(optarg, 0, UINT32_MAX, &v))
                return czk_cli_failf(argv[0], "--publics \"%s\": expected a non-negative integer",
                                     optarg);
            o.n_public = (uint32_t)v;
            break;
        case 'b':
            errno = 0;
            o.bit_fraction = strtod(optarg, &end);
            if (errno || end == optarg || *end || !(o.bit_fraction >= 0 && o.bit_fraction <= 1))
                return czk_cli_failf(argv[0], "--bits \"%s\": expected a fraction in [0, 1]", optarg);
            break;
        case 'c':
            /* snarkjs' and circom's names, and the curves' own */
            if (!strcmp(optarg, "bls12381") || !strcmp(optarg, "bls12-381"))
                o.curve = CZK_CURVE_BLS12_381;
            else if (!strcmp(optarg, "bn254") || !strcmp(optarg, "bn128"))
                o.curve = CZK_CURVE_BN254;
            else
                return czk_cli_usage_error(argv[0], "--curve must be bls12381 or bn254 (bn128), not \"%s\"",
                                           optarg);
            break;
        case 's':
            if (czk_cli_parse_u64(optarg, 0, UINT64_MAX, &o.seed))
                return czk_cli_failf(argv[0], "--seed \"%s\": expected a non-negative integer", optarg);
            have_seed = true;
            break;
        default:
            return czk_cli_opt_status();
        }
    }
    if (!have_n)
        return czk_cli_usage_error(argv[0], "--constraints N is required");
    if (argc - optind != 2)
        return czk_cli_usage_error(argv[0], "expected OUT_R1CS OUT_WTNS, got %d argument%s", argc - optind,
                                   argc - optind == 1 ? "" : "s");
    if (!have_seed && getrandom(&o.seed, sizeof(o.seed), 0) != sizeof(o.seed))
        return czk_cli_failf(argv[0], "cannot draw a seed from getrandom: %s", strerror(errno));
    czk_info("gen-circuit: %s, seed %" PRIu64 " (pass --seed to reproduce)", czk_curve_name(o.curve), o.seed);
    if (czk_gencircuit(&o, argv[optind], argv[optind + 1], &e))
        return czk_cli_fail(argv[0], &e);
    return CZK_EXIT_OK;
}
