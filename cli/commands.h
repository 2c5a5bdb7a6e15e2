/*
 * commands.h — the table of `czk` subcommands, one entry each:
 *   CZK_CLI_CMD(name-on-the-command-line, c_identifier, "SYNOPSIS",
 *               "what it does", "its options, one line each")
 * main.c includes this twice (prototypes, then the dispatch table); the
 * subcommand itself lives in its own file as
 *   int czk_cmd_<c_identifier>(int argc, char **argv)   (argv[0] = its name)
 * returning the process exit status.  Adding a subcommand = one entry here
 * plus its file (cli/CMakeLists.txt globs the .c files of cli/).
 *
 * The option lines are what `czk CMD --help` prints: every option the
 * command accepts, each written "--name" as on the command line.  The
 * manual page man/czk.1.scd lists the same options for each command and
 * tests/cli/man.sh fails when the two differ; contrib/bash-completion/czk
 * completes them (tests/cli/completion.sh checks it against --help).
 */
#ifndef CZK_CLI_CLIENT_OPTS
#define CZK_CLI_CLIENT_OPTS                                                                        \
    "  --config FILE         read runtime_dir (and output_dir) from FILE (default\n"                \
    "                        /etc/czk/czk.conf when it is readable)\n"                               \
    "  --runtime-dir DIR     czk-gpud's runtime directory, the one holding czk.sock\n"               \
    "                        (default: runtime_dir of the configuration, $CZK_RUNTIME_DIR, ...)\n"
#endif

CZK_CLI_CMD("prove", prove, "[--backend cpu|cuda|auto] [--msm-tables] ZKEY WTNS PROOF_JSON PUBLIC_JSON",
            "prove one witness in-process (snarkjs-compatible output; BLS12-381 or BN254, from the key)",
            "  --backend B           cpu, cuda or auto (default: cuda when a GPU is usable, else cpu);\n"
            "                        czk -v prove logs the backend chosen\n"
            "  --msm-tables          cuda: build the fixed-base MSM tables first, as czk-gpud does\n"
            "                        (seconds; pays only over many proofs: for measurements)\n")
CZK_CLI_CMD("verify", verify, "VKEY_JSON PUBLIC_JSON PROOF_JSON",
            "verify a proof: exit 0 valid, 1 invalid, 2 error", "")
CZK_CLI_CMD("vkey", vkey, "ZKEY [OUT_JSON]",
            "write the verification_key.json of a proving key to OUT_JSON (default: standard output)", "")
CZK_CLI_CMD("setup", setup, "[--backend cpu|cuda|auto] R1CS ZKEY",
            "DEVELOPMENT setup with fresh random secrets (tests/benchmarks only)",
            "  --backend B           where the key's point multiplications run: cpu, cuda (GPU 0 of\n"
            "                        CUDA_VISIBLE_DEVICES; fails without one) or auto (default: cuda\n"
            "                        when a GPU is usable, the CPU for any part the GPU fails)\n")
CZK_CLI_CMD("gen-circuit", gen_circuit,
            "--constraints N [--publics K] [--bits F] [--seed S] [--curve C] OUT_R1CS OUT_WTNS",
            "generate a satisfiable synthetic circuit and its witness",
            "  --constraints N       number of constraints (required, 1..2^32-1)\n"
            "  --publics K           public signals (default 1)\n"
            "  --bits F              share of witness values that are 0 or 1, in [0, 1] (default 0.5)\n"
            "  --seed S              random seed (default: drawn and logged with -v)\n"
            "  --curve C             bls12381 (default) or bn254 (also: bn128)\n")
CZK_CLI_CMD("submit", submit,
            "--circuit NAME [--priority high|normal|low] [--request-id ID] [--wait] [--out DIR [--force]]\n"
            "          [--timeout S] [--reconnect-timeout S] [--config FILE] [--runtime-dir DIR] WTNS...",
            "hand a job (one partition per witness) to czk-gpud; --wait follows it",
            "  --circuit NAME        a [circuit.NAME] of the daemons' configuration (required)\n"
            "  --priority P          scheduling lane: high, normal (default) or low\n"
            "  --request-id ID       deduplicates: the same ID again answers with the same job\n"
            "                        (printable ASCII, at most 128 bytes; default: 128 random bits)\n"
            "  --wait                follow the job to the end, one progress line per partition\n"
            "  --out DIR             write DIR/<partition>/proof.json, public.json (implies --wait);\n"
            "                        DIR must be empty or absent\n"
            "  --force               with --out: write into a DIR that is not empty\n"
            "  --timeout S           while waiting, give up after S seconds (exit 1; the job goes on)\n"
            "  --reconnect-timeout S while waiting, how long to retry when czk-gpud restarts (120)\n"
            CZK_CLI_CLIENT_OPTS
            "exit status: 0 accepted (with --wait: all proved), 1 a partition failed, the job was\n"
            "cancelled or --timeout passed, 2 error or rejection\n")
CZK_CLI_CMD("fetch", fetch,
            "--out DIR [--force] [--wait [--timeout S]] [--config FILE] [--runtime-dir DIR]\n"
            "          JOB [PARTITION...]",
            "write the proofs of a job you submitted into DIR (every partition, or those named)",
            "  --out DIR             write DIR/<partition>/proof.json, public.json (required);\n"
            "                        DIR must be empty or absent\n"
            "  --force               write into a DIR that is not empty\n"
            "  --wait                when the job is still active, wait for it to finish first\n"
            "  --timeout S           give up waiting after S seconds (implies --wait; exit 1)\n"
            CZK_CLI_CLIENT_OPTS
            "exit status: 0 every partition asked for written, 1 a partition is not done, failed or\n"
            "was cancelled (or --timeout passed), 2 error (an unknown job among them)\n")
CZK_CLI_CMD("status", status, "[--json] [--job JOB] [--config FILE] [--runtime-dir DIR] [JOB]",
            "jobs and partitions per stage, pool slots, stage latency, proofs per minute",
            "  --json                print czk-gpud's status as one JSON object\n"
            "  --job JOB             include that job (also when it is finished)\n"
            CZK_CLI_CLIENT_OPTS)
CZK_CLI_CMD("cancel", cancel, "[--config FILE] [--runtime-dir DIR] JOB...",
            "cancel your own jobs; their pool slots are freed at once",
            CZK_CLI_CLIENT_OPTS)
CZK_CLI_CMD("trace", trace,
            "[--since SECONDS] [--out FILE] [--state-dir DIR] [--config FILE] [--runtime-dir DIR]",
            "merge the daemons' per-partition stage traces (state_dir/trace) into one Chrome/Perfetto JSON trace",
            "  --since SECONDS       only stages that ended in the last SECONDS (default: everything)\n"
            "  --out FILE            write the JSON there (default: standard output)\n"
            "  --state-dir DIR       the daemons' state directory (traces in DIR/trace)\n"
            "  --config FILE         find czk-gpud with FILE; its state_dir when no czk-gpud answers\n"
            "  --runtime-dir DIR     ask the czk-gpud of DIR for its state directory\n"
            "the directory: --state-dir; else the state_dir of the running czk-gpud, found as\n"
            "czk status finds it; else the state_dir of --config FILE or /etc/czk/czk.conf; else\n"
            "the built-in default ($CZK_STATE_DIR, ...)\n")
CZK_CLI_CMD("journal", journal, "check FILE | salvage FILE OUT | idmark FILE NEXT",
            "check and repair czk-gpud's journal and job-id mark (run while czk-gpud is stopped)",
            "  check FILE            list every damaged region; exit 0 clean or torn tail only,\n"
            "                        1 corrupt, 2 error\n"
            "  salvage FILE OUT      write OUT (new) with every record whose crc is valid and whose\n"
            "                        seq is in order\n"
            "  idmark FILE NEXT      write the job-id mark FILE so that the next id handed out is NEXT\n")
CZK_CLI_CMD("version", version, "", "print the version, the git commit and the compute backends built in", "")
