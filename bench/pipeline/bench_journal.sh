#!/usr/bin/env bash
# Journal benchmark: pipeline throughput when the state disk's fdatasync is
# slow, with gpud's group commit (the syncs on a thread of their own, one per
# group of records) against every record synced on the loop thread
# (CZK_GPUD_JOURNAL_INLINE=1, how gpud worked before the group commit),
# measured in the same run on the same jobs.
#
#   bench/pipeline/bench_journal.sh [options]
#     --build DIR        a test build (CZK_FAULT_INJECTION=ON: scripts/test.sh's
#                        <repo>/build, the default): the sync delay is the fault
#                        point gpud.journal_sync:sleep=MS
#     --circuit NAME     a fixture of tests/fixtures (default linear: small
#                        partitions, so the journal is what limits)
#     --jobs J           jobs submitted at once (default 8)
#     --partitions P     partitions per job (default 8)
#     --delays "D..."    fdatasync delays in ms (default "0 5 20")
#     --reps R           runs per cell, modes interleaved; the median is shown (default 3)
#     --work DIR         scratch directory (default <repo>/build-bench/journal)
#
# Each (mode, delay) runs the daemons afresh (cpu backend), submits J jobs of
# P partitions at once with `czk submit --wait` and takes the wall time from
# the first submit to the last job done; each cell is the median of R runs.  Every proof is checked with
# `czk verify`.  Prints a markdown table: proofs per second per mode and the
# ratio group / inline (copy it into docs/bench-pipeline.md with the date, the
# machine and the command).
set -euo pipefail

repo=$(cd "$(dirname "$0")/../.." && pwd)
ME=bench_journal.sh
. "$repo/bench/pipeline/pipeline_lib.sh"
BUILD=$repo/build CIRCUIT=linear JOBS=8 PARTS=8 DELAYS="0 5 20" REPS=3 WORK=$repo/build-bench/journal
while [ $# -gt 0 ]; do
    case "$1" in
    --build) BUILD=$2; shift 2 ;;
    --circuit) CIRCUIT=$2; shift 2 ;;
    --jobs) JOBS=$2; shift 2 ;;
    --partitions) PARTS=$2; shift 2 ;;
    --delays) DELAYS=$2; shift 2 ;;
    --reps) REPS=$2; shift 2 ;;
    --work) WORK=$2; shift 2 ;;
    -h|--help) sed -n '2,25p' "$0"; exit 0 ;;
    *) echo "bench_journal.sh: unknown option $1 (--help)" >&2; exit 2 ;;
    esac
done
mkdir -p "$WORK" && WORK=$(cd "$WORK" && pwd) || exit 2 # the config takes absolute paths only
pl_bins "$BUILD"
grep -q "CZK_FAULT_INJECTION:BOOL=ON" "$BUILD/CMakeCache.txt" 2>/dev/null ||
    { echo "bench_journal.sh: $BUILD is not a test build (cmake -DCZK_FAULT_INJECTION=ON)" >&2; exit 1; }
CDIR=$repo/tests/fixtures/$CIRCUIT
[ -f "$CDIR/circuit.zkey" ] || { echo "bench_journal.sh: no fixture $CDIR" >&2; exit 1; }
mkdir -p "$WORK"
"$CZK" vkey "$CDIR/circuit.zkey" >"$WORK/vkey.json"
N=$((JOBS * PARTS))
unset CZK_FAULT

# run MODE DELAY: prints the wall seconds of one batch
run() {
    local mode=$1 delay=$2 R=$WORK/$1-$2 fault="" inline=""
    rm -rf "$R"; mkdir -p "$R/logs"
    cat >"$R/czk.conf" <<CONF
[czk]
runtime_dir = $R/rt
state_dir = $R/state
output_dir = $R/out
log_level = 5
[gpud]
backend = cpu
slots_per_pool = 4
max_partitions_per_job = $PARTS
metrics_port = 0
[circuit.$CIRCUIT]
zkey = $CDIR/circuit.zkey
CONF
    [ "$delay" -gt 0 ] && fault="gpud.journal_sync:sleep=$delay"
    [ "$mode" = inline ] && inline=1
    pl_start "$R/czk.conf" "$R/logs" 1 CZK_FAULT="$fault" CZK_GPUD_JOURNAL_INLINE="$inline"
    local wt=() t0 t1
    for _ in $(seq 1 "$PARTS"); do wt+=("$CDIR/witness.wtns"); done
    t0=$(now)
    pl_submit "$R/czk.conf" "$CIRCUIT" "$JOBS" "${wt[@]}" "$R"
    t1=$(now)
    pl_stop
    pl_verify "$WORK/vkey.json" "$R/out" "$N"
    echo "$t0 $t1" | awk '{ printf "%.3f", $2 - $1 }'
}

declare -A WALL
median() { tr ' ' '\n' | grep . | sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
for d in $DELAYS; do
    declare -A T=([inline]="" [group]="")
    for r in $(seq 1 "$REPS"); do
        for m in inline group; do
            log "$m, fdatasync $d ms, run $r of $REPS: $JOBS jobs x $PARTS partitions"
            T[$m]="${T[$m]} $(run "$m" "$d")"
        done
    done
    for m in inline group; do WALL[$m.$d]=$(echo "${T[$m]}" | median); done
done

cpus=$(nproc)
model=$(sed -n 's/^model name[^:]*: //p' /proc/cpuinfo | head -1)
echo
echo "## czk journal benchmark — $(date -u +%Y-%m-%dT%H:%MZ), commit $(git -C "$repo" rev-parse --short HEAD 2>/dev/null || echo '?')"
echo
echo "machine: $model, $cpus CPUs; circuit $CIRCUIT, cpu backend, $N proofs per run"
echo "command: bench/pipeline/bench_journal.sh --circuit $CIRCUIT --jobs $JOBS --partitions $PARTS --delays \"$DELAYS\" --reps $REPS"
echo
echo "| fdatasync delay | inline: wall s (median) | proofs/s | group commit: wall s (median) | proofs/s | group / inline |"
echo "|---|---|---|---|---|---|"
for d in $DELAYS; do
    a=${WALL[inline.$d]} b=${WALL[group.$d]}
    echo "$d $a $b $N" | awk '{ printf "| %s ms | %.2f | %.1f | %.2f | %.1f | %.2f |\n", $1, $2, $4 / $2, $3, $4 / $3, $2 / $3 }'
done
