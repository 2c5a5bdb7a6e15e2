#!/bin/sh
# synth_timeout.sh — the assignment lease ([gpud] synth_timeout_s): a synth
# whose fill worker hangs (alive, so no EOF) loses its partition to the other
# synth after the timeout, and the job completes exactly once with proofs
# snarkjs accepts; the hung synth's slot stays out of use (quarantined) until
# that synth answers for it (round 1: its fill wakes up, sees the RELEASE and
# answers READY -ECANCELED) or disconnects (round 2: kill -9); afterwards no
# slot is in use or quarantined.  Without the lease round 1's job could only
# finish when the hung fill wakes, and round 2's never.
# usage: synth_timeout.sh CZK GPUD SYNTH FIN TOOL SRC
. "$(dirname "$0")/lib.sh"
require_snarkjs

SLOTS=2 GPUD_EXTRA="synth_timeout_s = 1" write_config </dev/null

# poll_log FILE PATTERN SECONDS
poll_log() {
    for _ in $(seq 1 $(($3 * 5))); do grep -q "$2" "$1" && return 0; sleep 0.2; done
    return 1
}
# pool_is NAME VALUE: pool 0's field in `czk status --json`
pool_is() { [ "$(st pools.0.$1)" = "$2" ]; }

start_gpud; start_fin
# synth 0's first fill sleeps 6 s after taking its slot (a hung worker that recovers)
start_synth 0 synth.before_fill:sleep=6000@1
wait_up 1 || exit 1
start_synth 1
wait_up 2 || exit 1

log "round 1: synth 0 hangs 6 s in its first fill, the lease is 1 s"
submit r1 multi 3 normal || { bad "submit r1: $(cat "$T/sub.r1")"; exit 1; }
J1=$(job_of "$T/sub.r1")
wait_complete "$J1" 60
grep -q "without READY (synth_timeout_s = 1)" "$T/logs/gpud.log" || bad "round 1: no assignment was taken back"
n=$(st synth_timeouts_total)
[ "${n:-0}" -ge 1 ] || bad "round 1: synth_timeouts_total is ${n:-missing}"
poll_log "$T/logs/gpud.log" "quarantine ended (synth pid $SYNTH0_PID answered" 30 ||
    bad "round 1: the quarantined slot did not come back when synth 0 answered"
pool_is quarantined 0 || bad "round 1: pool 0 still has $(st pools.0.quarantined) quarantined slot(s)"
pool_is in_use 0 || bad "round 1: pool 0 still has $(st pools.0.in_use) slot(s) in use"

log "round 2: a new synth 0 hangs for good, then is killed"
kill9 "$SYNTH0_PID"
start_synth 0 synth.before_fill:sleep=600000@1
wait_up 2 || exit 1
before=$(st synth_timeouts_total)
submit r2 multi 3 normal || { bad "submit r2: $(cat "$T/sub.r2")"; exit 1; }
J2=$(job_of "$T/sub.r2")
wait_complete "$J2" 60
n=$(st synth_timeouts_total)
[ "${n:-0}" -gt "${before:-0}" ] || bad "round 2: no assignment was taken back ($before -> $n)"
pool_is quarantined 1 || bad "round 2: expected one quarantined slot, status says $(st pools.0.quarantined)"
"$CZK" status --config "$CONF" | grep -q "1 quarantined" || bad "round 2: czk status does not show the quarantined slot"
kill9 "$SYNTH0_PID"
SYNTH0_PID=""
poll_log "$T/logs/gpud.log" "quarantine ended (its synth disconnected)" 30 ||
    bad "round 2: the quarantined slot did not come back when synth 0 died"
pool_is quarantined 0 || bad "round 2: pool 0 still has $(st pools.0.quarantined) quarantined slot(s)"
pool_is in_use 0 || bad "round 2: pool 0 still has $(st pools.0.in_use) slot(s) in use"

expect_job "$J1" multi 3
expect_job "$J2" multi 3
check_all
[ "$fail" = 0 ] && echo "ok"
exit $fail
