#!/bin/sh
# reload.sh — a circuit's key replaced on disk and switched in by SIGHUP to
# czk-gpud while jobs run (gpud/reload.c, docs/design.md "Reloading a key"):
#  - the job accepted before the SIGHUP is proved entirely with the old key,
#    the job accepted after it entirely with the new one (each proof checked
#    by snarkjs against its key's verification key, and a proof of the new
#    job is refused by the old key's);
#  - the synth and the finalizer load the new key from their own file when
#    gpud announces it, without a restart of any daemon;
#  - a key of other sizes is refused with a clear error and the running key
#    keeps proving; a SIGHUP with nothing changed changes nothing;
#  - every partition written and journaled exactly once.
# usage: reload.sh CZK GPUD SYNTH FIN TOOL SRC
. "$(dirname "$0")/lib.sh"
require_snarkjs

reload_setup
start_gpud
start_fin
start_synth 0
wait_up 1 || exit 1

log "a SIGHUP with nothing changed changes nothing"
kill -HUP "$GPUD_PID"
sleep 1.5
grep -q "reloading to key id" "$T/logs/gpud.log" && bad "a SIGHUP without a changed file started a reload"

log "job 1 (old key) accepted, then the key is replaced by rename and gpud gets SIGHUP, then job 2"
# the synth is stopped (SIGSTOP, not a restart: it keeps the old key loaded)
# until job 2's status is read, so job 1 cannot be done by then
kill -STOP "$SYNTH0_PID"
submit j1 multi 12 normal || { bad "submit j1: $(cat "$T/sub.j1")"; exit 1; }
J1=$(job_of "$T/sub.j1")
cp "$K/multi2.zkey" "$K/multi.zkey.tmp" && mv "$K/multi.zkey.tmp" "$K/multi.zkey"
kill -HUP "$GPUD_PID"
for _ in $(seq 1 50); do grep -q "reloading to key id" "$T/logs/gpud.log" && break; sleep 0.1; done
grep -q "reloading to key id" "$T/logs/gpud.log" || { bad "gpud did not start the reload"; kill -CONT "$SYNTH0_PID"; exit 1; }
submit j2 multi 3 normal || { bad "submit j2: $(cat "$T/sub.j2")"; kill -CONT "$SYNTH0_PID"; exit 1; }
J2=$(job_of "$T/sub.j2")
# job 2 waits (STATUS says why) while job 1 is not done
"$CZK" status --config "$CONF" --json --job "$J1" 2>/dev/null | grep -A3 '"job": {' | grep -q '"state": "active"' ||
    bad "job $J1 is not active with the synth stopped"
"$CZK" status --config "$CONF" --job "$J2" 2>&1 | grep -q "is being reloaded" ||
    bad "job $J2 does not say that it waits for the reload"
kill -CONT "$SYNTH0_PID"
wait_complete "$J1" 120
wait_complete "$J2" 120
grep -q "the jobs accepted before the reload are done: loading key id" "$T/logs/gpud.log" ||
    bad "gpud did not log the switch"
grep -q "reloaded $K/multi.zkey (key id" "$T/logs/synth0.log" || bad "the synth did not reload the key"
grep -q "reloaded $K/multi.zkey, the key czk-gpud now uses" "$T/logs/fin.log" || bad "the finalizer did not reload the key"
expect_job "$J1" "$T/fx1" 12
expect_job "$J2" "$T/fx2" 3

log "a proof of job 2 is refused by the old key's verification key (the switch did happen)"
echo "$T/fx1/verification_key.json $T/out/$J2/0/public.json $T/out/$J2/0/proof.json" >"$T/cross.list"
if node "$SRC/tests/pipeline/verify_batch.js" "$SNARKJS_DIR" <"$T/cross.list" >"$T/cross.out" 2>&1; then
    bad "job $J2's proof verifies with the old key"
fi

log "a key of other sizes is refused and the running key keeps proving"
cp "$FIX/linear/circuit.zkey" "$K/multi.zkey.tmp" && mv "$K/multi.zkey.tmp" "$K/multi.zkey"
kill -HUP "$GPUD_PID"
for _ in $(seq 1 50); do grep -q "reload to key id .* refused: it has" "$T/logs/gpud.log" && break; sleep 0.1; done
grep -q "reload to key id .* refused: it has .*restart" "$T/logs/gpud.log" ||
    bad "a key of other sizes was not refused with a reason"
submit j3 multi 2 normal || { bad "submit j3: $(cat "$T/sub.j3")"; exit 1; }
J3=$(job_of "$T/sub.j3")
expect_job "$J3" "$T/fx2" 2
check_all # every job complete, written and journaled once, snarkjs accepts each proof with its key

[ "$fail" = 0 ] && echo "ok"
exit $fail
