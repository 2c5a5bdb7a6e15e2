#!/bin/sh
# slot_checksum.sh — a READY slot's payload is checked once, by gpud's worker
# before the copy (adoption after a restart checks only the slot headers).
# A slot whose bytes changed after READY (fault gpud.corrupt_slot flips one
# byte) is not proved: its partition is synthesised again and the job
# completes exactly once with proofs snarkjs accepts.  A partition whose slot
# keeps failing the check fails after two new syntheses, naming the checksum.
# usage: slot_checksum.sh CZK GPUD SYNTH FIN TOOL SRC
. "$(dirname "$0")/lib.sh"
require_snarkjs

write_config </dev/null
start_gpud gpud.corrupt_slot:fail@1
start_fin
start_synth 0
wait_up 1 || exit 1

log "round 1: the first slot a worker takes has one byte flipped"
submit r1 multi 3 normal || { bad "submit r1: $(cat "$T/sub.r1")"; exit 1; }
J1=$(job_of "$T/sub.r1")
wait_complete "$J1" 60
grep -q "failed the checksum before the copy.*synthesising it again (1 of 2)" "$T/logs/gpud.log" ||
    bad "round 1: no partition was synthesised again after the checksum failed"
expect_job "$J1" multi 3
check_all # job 1: each partition journaled and written once, snarkjs accepts every proof

log "round 2: every slot fails the check: the partition fails after two new syntheses"
kill9 "$GPUD_PID"
start_gpud gpud.corrupt_slot:fail
wait_up 1 || exit 1
submit r2 linear 1 normal || { bad "submit r2: $(cat "$T/sub.r2")"; exit 1; }
J2=$(job_of "$T/sub.r2")
state2() { "$CZK" status --config "$CONF" --json --job "$J2" 2>/dev/null | grep -A3 '"job": {' | grep -q '"state": "failed"'; }
for _ in $(seq 1 300); do state2 && break; sleep 0.2; done
state2 || bad "round 2: job $J2 did not end failed"
# round 1's warning already names the checksum: match job 2's own lines
grep -q "\<job $J2 partition [0-9]*: .*synthesising it again (2 of 2)" "$T/logs/gpud.log" ||
    bad "round 2: not synthesised twice before failing"
grep -q "\<job $J2 partition [0-9]* failed: .*payload crc mismatch" "$T/logs/gpud.log" ||
    bad "round 2: the failure does not name the checksum"

[ "$fail" = 0 ] && echo "ok"
exit $fail
