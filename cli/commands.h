/*
 * commands.h — the table of `czk` subcommands, one line each:
 *   CZK_CLI_CMD(name-on-the-command-line, c_identifier, "ARGS", "what it does")
 * main.c includes this twice (prototypes, then the dispatch table); the
 * subcommand itself lives in its own file as
 *   int czk_cmd_<c_identifier>(int argc, char **argv)   (argv[0] = its name)
 * returning the process exit status.  Adding a subcommand = one line here
 * plus its file (cli/CMakeLists.txt globs the .c files of cli/).
 */
CZK_CLI_CMD("prove", prove, "[--backend cpu|cuda|auto] ZKEY WTNS PROOF_JSON PUBLIC_JSON",
            "prove one witness in-process (snarkjs-compatible output)")
CZK_CLI_CMD("verify", verify, "VKEY_JSON PUBLIC_JSON PROOF_JSON",
            "verify a proof: exit 0 valid, 1 invalid, 2 error")
CZK_CLI_CMD("vkey", vkey, "ZKEY",
            "print the verification_key.json of a proving key")
CZK_CLI_CMD("setup", setup, "R1CS ZKEY",
            "DEVELOPMENT setup with fresh random secrets (tests/benchmarks only)")
CZK_CLI_CMD("gen-circuit", gen_circuit,
            "--constraints N [--publics K] [--bits F] [--seed S] OUT_R1CS OUT_WTNS",
            "generate a satisfiable synthetic circuit and its witness")
CZK_CLI_CMD("submit", submit, "--circuit NAME [--priority high|normal|low] [--request-id ID] [--wait] [--out DIR] WTNS...", "hand a job (one partition per witness) to czk-gpud; --wait follows it")
CZK_CLI_CMD("status", status, "[--json] [--job JOB] [--config FILE] [--runtime-dir DIR]", "jobs and partitions per stage, pool slots, stage latency, proofs per minute")
CZK_CLI_CMD("cancel", cancel, "JOB... [--config FILE] [--runtime-dir DIR]", "cancel your own jobs; their pool slots are freed at once")
CZK_CLI_CMD("trace", trace, "[--since SECONDS] [--out FILE] [--config FILE] [--state-dir DIR]", "merge the daemons' per-partition stage traces (state_dir/trace) into one Chrome/Perfetto JSON trace")
