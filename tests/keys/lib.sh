# lib.sh — shared by the keys tests: tests/daemons/lib.sh (temporary tree,
# starting/stopping the daemons, check_partition) with the zkeys copied into
# the test's tree so a test may replace, truncate or overwrite them, and a
# second config whose circuits are listed in the other order.
# Sourced with: GPUD SYNTH FIN CLIENT SRC set.
. "$SRC/tests/daemons/lib.sh"
K=$T/keys
mkdir -p "$K"
cp "$FIX/multi/circuit.zkey" "$K/multi.zkey"
cp "$FIX/linear/circuit.zkey" "$K/linear.zkey"

# write_key_config FILE ORDER...: the daemons' config (config_base) with
# [circuit.*] in the given order, each with its zkey copied into $K
write_key_config() {
    f=$1; shift
    { config_base; for c; do printf '[circuit.%s]\nzkey = %s/%s.zkey\n' "$c" "$K" "$c"; done; } >"$f"
}

# submit_job REQ CIRCUIT WTNS...: prints the job id (empty on failure)
submit_job() {
    req=$1 circ=$2; shift 2
    "$CLIENT" "$RT/czk.sock" submit "$req" "$circ" 1 "$@" | sed -n 's/^accepted \([0-9]*\).*/\1/p'
}

# wait_done JOB SECS: 0 once the job's summary.json exists
wait_done() {
    for _ in $(seq 1 $(($2 * 10))); do
        [ -f "$T/out/$1/summary.json" ] && return 0
        sleep 0.1
    done
    return 1
}

# wait_log FILE PATTERN SECS
wait_log() {
    for _ in $(seq 1 $(($3 * 10))); do
        grep -q "$2" "$1" 2>/dev/null && return 0
        sleep 0.1
    done
    return 1
}

# alive NAME PID: the process is still running (not dead of a signal)
alive() {
    kill -0 "$2" 2>/dev/null && return 0
    wait "$2"; rc=$?
    bad "$1 (pid $2) is gone, exit status $rc$([ $rc -gt 128 ] && echo " (signal $((rc - 128)))")"
    return 1
}
