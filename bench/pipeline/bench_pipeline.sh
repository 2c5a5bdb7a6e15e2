#!/usr/bin/env bash
# Pipeline benchmark: throughput (proofs per minute) of czk-gpud + czk-synth +
# czk-finalizer against `czk prove` run sequentially on the same partitions in
# the same run, plus the per-stage latency breakdown of the pipeline.
#
#   bench/pipeline/bench_pipeline.sh [options]
#     --build DIR        build directory with cli/czk, gpud/czk-gpud, ... (default <repo>/build)
#     --circuit NAME     a fixture of tests/fixtures (default multi), or
#     --constraints N    a synthetic circuit of N constraints (czk gen-circuit + czk setup,
#                        cached in the work directory)
#     --jobs J           jobs submitted at once (default 8)
#     --partitions P     partitions per job (default 4)
#     --backend B        gpud backend: cpu, cuda, auto (default auto)
#     --synths S         czk-synth instances (default 1)
#     --slots N          slots per pool (default 4)
#     --threads N        threads for gpud, each synth and `czk prove` (default: all CPUs)
#     --work DIR         scratch directory (default <repo>/build-bench/pipeline)
#
# What is measured, in one run, on the same witnesses:
#   sequential  `czk prove ZKEY WTNS ...` once per partition, one after the other
#               (the single-process prover: load the key, prove, write), J*P times
#   pipeline    daemons already running (the key load is paid once at start, as in
#               production); J jobs of P partitions submitted at once with
#               `czk submit --wait`; wall time from the first submit to the last
#               job done
# Per-stage latency: mean seconds a partition spends queued, in synthesis, on the
# backend (gpu stage) and in the finalizer, from `czk status --json` (latency_s)
# and the finalizer's summary.json files.  Every proof of both runs is checked
# with `czk verify`; with snarkjs installed a sample is checked by snarkjs too.
# Prints a markdown table (copy it into docs/bench-pipeline.md with the date,
# the machine and the command).
set -euo pipefail

repo=$(cd "$(dirname "$0")/../.." && pwd)
ME=bench_pipeline.sh
. "$repo/bench/pipeline/pipeline_lib.sh"
BUILD=$repo/build CIRCUIT=multi CONSTRAINTS="" JOBS=8 PARTS=4 BACKEND=auto SYNTHS=1 SLOTS=4
THREADS=0 WORK=$repo/build-bench/pipeline
while [ $# -gt 0 ]; do
    case "$1" in
    --build) BUILD=$2; shift 2 ;;
    --circuit) CIRCUIT=$2; shift 2 ;;
    --constraints) CONSTRAINTS=$2; shift 2 ;;
    --jobs) JOBS=$2; shift 2 ;;
    --partitions) PARTS=$2; shift 2 ;;
    --backend) BACKEND=$2; shift 2 ;;
    --synths) SYNTHS=$2; shift 2 ;;
    --slots) SLOTS=$2; shift 2 ;;
    --threads) THREADS=$2; shift 2 ;;
    --work) WORK=$2; shift 2 ;;
    -h|--help) sed -n '2,32p' "$0"; exit 0 ;;
    *) echo "bench_pipeline.sh: unknown option $1 (--help)" >&2; exit 2 ;;
    esac
done
mkdir -p "$WORK" && WORK=$(cd "$WORK" && pwd) || exit 2 # the config takes absolute paths only
pl_bins "$BUILD"
SNARKJS=$repo/interop/node_modules/.bin/snarkjs
mkdir -p "$WORK"

# ---- the circuit
if [ -n "$CONSTRAINTS" ]; then
    NAME=gen$CONSTRAINTS
    CDIR=$WORK/$NAME
    if [ ! -f "$CDIR/circuit.zkey" ]; then
        log "generating a circuit of $CONSTRAINTS constraints and its key"
        mkdir -p "$CDIR"
        "$CZK" gen-circuit --constraints "$CONSTRAINTS" --seed 1 "$CDIR/circuit.r1cs" "$CDIR/witness.wtns"
        "$CZK" setup "$CDIR/circuit.r1cs" "$CDIR/circuit.zkey"
    fi
else
    NAME=$CIRCUIT
    CDIR=$repo/tests/fixtures/$CIRCUIT
    [ -f "$CDIR/circuit.zkey" ] || { echo "bench_pipeline.sh: no fixture $CDIR" >&2; exit 1; }
fi
ZKEY=$CDIR/circuit.zkey WTNS=$CDIR/witness.wtns
"$CZK" vkey "$ZKEY" >"$WORK/vkey.json"
N=$((JOBS * PARTS))

# ---- sequential baseline
rm -rf "$WORK/seq"; mkdir -p "$WORK/seq"
log "sequential: $N x czk prove"
t0=$(now)
for i in $(seq 1 "$N"); do
    "$CZK" --threads "$THREADS" prove "$ZKEY" "$WTNS" "$WORK/seq/proof$i.json" "$WORK/seq/public$i.json" \
        >/dev/null 2>"$WORK/seq/err"
done
t1=$(now)
SEQ_S=$(echo "$t0 $t1" | awk '{ printf "%.3f", $2 - $1 }')
for i in $(seq 1 "$N"); do
    "$CZK" verify "$WORK/vkey.json" "$WORK/seq/public$i.json" "$WORK/seq/proof$i.json" >/dev/null ||
        { echo "bench_pipeline.sh: sequential proof $i does not verify" >&2; exit 1; }
done

# ---- the pipeline
R=$WORK/run
rm -rf "$R"; mkdir -p "$R/logs"
cat >"$R/czk.conf" <<CONF
[czk]
runtime_dir = $R/rt
state_dir = $R/state
output_dir = $R/out
log_level = 6
[gpud]
backend = $BACKEND
threads = $THREADS
slots_per_pool = $SLOTS
max_partitions_per_job = $PARTS
metrics_port = 0
[synth]
threads = $THREADS
[circuit.$NAME]
zkey = $ZKEY
CONF
t_start=$(now)
pl_start "$R/czk.conf" "$R/logs" "$SYNTHS"
t_up=$(now)
STARTUP_S=$(echo "$t_start $t_up" | awk '{ printf "%.2f", $2 - $1 }')
BACKEND_USED=$("$CZK" status --config "$R/czk.conf" --json | sed -n 's/^  "backend": "\(.*\)",/\1/p')
log "pipeline: $JOBS jobs x $PARTS partitions, backend $BACKEND_USED, $SYNTHS synth(s), $SLOTS slots (daemons up in $STARTUP_S s)"
wt=()
for _ in $(seq 1 "$PARTS"); do wt+=("$WTNS"); done
t0=$(now)
pl_submit "$R/czk.conf" "$NAME" "$JOBS" "${wt[@]}" "$R"
t1=$(now)
PIPE_S=$(echo "$t0 $t1" | awk '{ printf "%.3f", $2 - $1 }')
"$CZK" status --config "$R/czk.conf" --json >"$R/status.json"
"$CZK" status --config "$R/czk.conf" >"$R/status.txt"
lat() { sed -n "/\"latency_s\"/,/}/s/^ *\"$1\": \([0-9.e+-]*\).*/\1/p" "$R/status.json"; }
pl_verify "$WORK/vkey.json" "$R/out" "$N"
if [ -x "$SNARKJS" ] && [ -z "$CONSTRAINTS" ]; then
    f=$(ls "$R"/out/*/0/proof.json | head -1)
    "$SNARKJS" groth16 verify "$CDIR/verification_key.json" "$(dirname "$f")/public.json" "$f" | grep -q OK ||
        { echo "bench_pipeline.sh: snarkjs rejects $f" >&2; exit 1; }
fi
# job wall times (submit -> complete) from the finalizer's summaries
JOB_WALL=$(cat "$R"/out/*/summary.json | sed -n 's/.*"wall_s": *\([0-9.e+-]*\).*/\1/p' |
           awk '{ s += $1; if ($1 > m) m = $1 } END { printf "%.2f / %.2f", s / NR, m }')

cpus=$(nproc)
model=$(sed -n 's/^model name[^:]*: //p' /proc/cpuinfo | head -1)
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1 || true)
echo
echo "## czk pipeline benchmark — $(date -u +%Y-%m-%dT%H:%MZ)"
echo
echo "machine: $model, $cpus CPUs${gpu:+, $gpu}; circuit $NAME ($(basename "$ZKEY"))"
CIRC_ARG="--circuit $CIRCUIT"; [ -n "$CONSTRAINTS" ] && CIRC_ARG="--constraints $CONSTRAINTS"
echo "command: bench/pipeline/bench_pipeline.sh $CIRC_ARG --jobs $JOBS --partitions $PARTS --backend $BACKEND --synths $SYNTHS --slots $SLOTS --threads $THREADS"
echo
echo "| run | proofs | wall (s) | proofs per minute |"
echo "|---|---|---|---|"
echo "| sequential \`czk prove\` | $N | $SEQ_S | $(echo "$N $SEQ_S" | awk '{ printf "%.1f", 60 * $1 / $2 }') |"
echo "| pipeline ($BACKEND_USED backend, $SYNTHS synth, $SLOTS slots) | $N | $PIPE_S | $(echo "$N $PIPE_S" | awk '{ printf "%.1f", 60 * $1 / $2 }') |"
echo
echo "speed-up: $(echo "$SEQ_S $PIPE_S" | awk '{ printf "%.2f", $1 / $2 }')x; daemons up in $STARTUP_S s (paid once)"
echo
echo "| stage (pipeline, mean per partition) | seconds |"
echo "|---|---|"
for s in queue synth gpu finalize; do echo "| $s | $(lat $s | awk '{ printf "%.4f", $1 }') |"; done
echo "| job wall, submit to complete (mean / max) | $JOB_WALL |"
