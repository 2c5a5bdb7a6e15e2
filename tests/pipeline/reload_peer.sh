#!/bin/sh
# reload_peer.sh — a synth restarted while a reload waits for the jobs
# accepted before it (gpud/reload.c): the restarted synth loads the new key
# from its file, no connected synth holds the old one any more, and gpud
# switches at once instead of waiting forever.  The old job's partitions that
# were not computed yet are proved with the new key (as after a restart of
# czk-gpud); every proof of it verifies with one of the two keys, some with the
# new one; the job accepted after the SIGHUP verifies with the new key; every
# partition is written once.
# usage: reload_peer.sh CZK GPUD SYNTH FIN TOOL SRC
. "$(dirname "$0")/lib.sh"
require_snarkjs

reload_setup
start_gpud
start_fin
# the first synth fills slowly, so that job 1 still has partitions to compute
# when it is killed (with fast proofs it could otherwise finish before)
start_synth 0 synth.before_fill:sleep=100
wait_up 1 || exit 1

log "job 1 accepted, the key replaced and SIGHUP, then the synth is killed and restarted (it loads the new key)"
submit j1 multi 16 normal || { bad "submit j1: $(cat "$T/sub.j1")"; exit 1; }
J1=$(job_of "$T/sub.j1")
cp "$K/multi2.zkey" "$K/multi.zkey.tmp" && mv "$K/multi.zkey.tmp" "$K/multi.zkey"
kill -HUP "$GPUD_PID"
for _ in $(seq 1 50); do grep -q "reloading to key id" "$T/logs/gpud.log" && break; sleep 0.1; done
grep -q "reloading to key id" "$T/logs/gpud.log" || { bad "gpud did not start the reload"; exit 1; }
kill9 "$SYNTH0_PID"
start_synth 0
for _ in $(seq 1 300); do grep -q "no connected synth holds the current key any more.*switching now" "$T/logs/gpud.log" && break; sleep 0.1; done
grep -q "no connected synth holds the current key any more.*switching now" "$T/logs/gpud.log" ||
    bad "gpud did not switch when the only synth came back with the new key"
submit j2 multi 2 normal || { bad "submit j2: $(cat "$T/sub.j2")"; exit 1; }
J2=$(job_of "$T/sub.j2")
wait_complete "$J1" 180
expect_job "$J2" "$T/fx2" 2
check_all # job 2: complete, written and journaled once, snarkjs accepts it with the new key

log "every proof of job 1 verifies with one of the two keys, some with the new one; each written once"
: >"$T/j1.old" ; : >"$T/j1.new"
p=0
while [ $p -lt 16 ]; do
    d=$T/out/$J1/$p
    echo "$FIX/multi/verification_key.json $d/public.json $d/proof.json" >>"$T/j1.old"
    echo "$T/fx2/verification_key.json $d/public.json $d/proof.json" >>"$T/j1.new"
    n=$(grep -c "job $J1 partition $p: proof verified and written" "$T/logs/fin.log")
    [ "$n" = 1 ] || bad "job $J1 partition $p: written $n times (must be once)"
    p=$((p + 1))
done
node "$SRC/tests/pipeline/verify_batch.js" "$SNARKJS_DIR" <"$T/j1.old" >"$T/j1.old.out" 2>&1
node "$SRC/tests/pipeline/verify_batch.js" "$SNARKJS_DIR" <"$T/j1.new" >"$T/j1.new.out" 2>&1
p=0
while [ $p -lt 16 ]; do
    f=$T/out/$J1/$p/proof.json
    grep -qx "OK $f" "$T/j1.old.out" || grep -qx "OK $f" "$T/j1.new.out" ||
        bad "job $J1 partition $p: its proof verifies with neither key"
    p=$((p + 1))
done
grep -q "^OK " "$T/j1.new.out" || bad "no partition of job $J1 was proved with the new key after the switch"
log "$(grep -c '^OK ' "$T/j1.old.out") partition(s) of job $J1 with the old key, $(grep -c '^OK ' "$T/j1.new.out") with the new"

[ "$fail" = 0 ] && echo "ok"
exit $fail
