# Sourced by the pipeline benchmarks (bench_pipeline.sh, bench_journal.sh): the
# daemons of one run, its jobs and the check of its proofs.  Bash; the caller
# runs with `set -euo pipefail` and sets ME (its name, for messages).
#
#   pl_bins BUILD          CZK GPUD SYNTH FIN := the binaries of BUILD (exits if one is missing)
#   pl_start CONF LOGS S [VAR=VALUE...]
#                          starts czk-gpud (with the VAR=VALUE environment), S czk-synth
#                          and czk-finalizer on CONF, logs under LOGS, and returns once
#                          `czk status` shows S synths and the finalizer (60 s at most)
#   pl_stop                stops what pl_start started (also on exit)
#   pl_submit CONF CIRCUIT JOBS WTNS... OUT
#                          JOBS jobs of the given witnesses (one per partition) submitted
#                          at once with `czk submit --wait`, logs OUT/sub<j>.log; returns
#                          when all are done, exits if one failed
#   pl_verify VKEY OUTDIR N
#                          every proof.json under OUTDIR/<job>/<partition>/ verifies
#                          against VKEY with `czk verify`, and there are N of them

pl_die() {
    echo "$ME: $*" >&2
    pl_stop
    exit 1
}
log() { printf '[bench %s] %s\n' "$(date +%H:%M:%S)" "$*" >&2; }
now() { date +%s.%N; }

pl_bins() {
    CZK=$1/cli/czk GPUD=$1/gpud/czk-gpud SYNTH=$1/synth/czk-synth FIN=$1/finalizer/czk-finalizer
    local b
    for b in "$CZK" "$GPUD" "$SYNTH" "$FIN"; do
        [ -x "$b" ] || pl_die "$b not built (cmake --build $1)"
    done
}

PL_PIDS=()
pl_stop() {
    local p
    for p in "${PL_PIDS[@]}"; do kill -TERM "$p" 2>/dev/null || true; done
    wait 2>/dev/null || true
    PL_PIDS=()
}
trap pl_stop EXIT

pl_start() {
    local conf=$1 logs=$2 synths=$3 s st
    shift 3
    env "$@" "$GPUD" --config "$conf" >"$logs/gpud.log" 2>&1 &
    PL_PIDS+=($!)
    for s in $(seq 1 "$synths"); do
        "$SYNTH" --config "$conf" --numa-node 0 >"$logs/synth$s.log" 2>&1 &
        PL_PIDS+=($!)
    done
    "$FIN" --config "$conf" >"$logs/fin.log" 2>&1 &
    PL_PIDS+=($!)
    for _ in $(seq 1 600); do
        st=$("$CZK" status --config "$conf" --json 2>/dev/null) &&
            echo "$st" | grep -q "\"synths\": $synths" && echo "$st" | grep -q '"finalizer": 1' && return 0
        sleep 0.1
    done
    pl_die "the daemons did not come up in 60 s (logs in $logs)"
}

pl_submit() {
    local conf=$1 circuit=$2 jobs=$3 j p
    shift 3
    local out=${!#} subs=()
    local wt=("${@:1:$#-1}")
    for j in $(seq 1 "$jobs"); do
        "$CZK" submit --config "$conf" --circuit "$circuit" --wait "${wt[@]}" >"$out/sub$j.log" 2>&1 &
        subs+=($!)
    done
    for p in "${subs[@]}"; do
        wait "$p" || { cat "$out"/sub*.log >&2; pl_die "a job failed (logs above)"; }
    done
}

pl_verify() {
    local vkey=$1 dir=$2 want=$3 n=0 f
    for f in "$dir"/*/*/proof.json; do
        [ -f "$f" ] || continue
        "$CZK" verify "$vkey" "$(dirname "$f")/public.json" "$f" >/dev/null || pl_die "$f does not verify"
        n=$((n + 1))
    done
    [ "$n" = "$want" ] || pl_die "$n proofs under $dir, expected $want"
}
