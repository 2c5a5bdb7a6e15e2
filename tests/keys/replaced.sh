#!/bin/sh
# replaced.sh — a zkey replaced by rename (a new setup of the same circuit)
# and only the finalizer restarted: gpud and the finalizer refuse that
# circuit to each other at the handshake, each naming the circuit and both
# key ids; a job of it waits (never a proof made with two keys, never a
# failed pairing check) while the other circuit goes on; the finalizer
# restarted with the old key again finishes the job.
# usage: replaced.sh GPUD SYNTH FINALIZER CLIENT SOURCE_DIR CZK
GPUD=$1 SYNTH=$2 FIN=$3 CLIENT=$4 SRC=$5
. "$SRC/tests/keys/lib.sh"
CZKCLI=$6

write_key_config "$T/czk.conf" multi linear
start_gpud; start_synth; start_fin
wait_socket || exit 1
j1=$(submit_job before multi "$FIX/multi/witness.wtns")
wait_done "$j1" 60 || bad "job $j1 did not complete before the key changed"

# a new setup renamed over the zkey, only the finalizer restarted
cp "$K/multi.zkey" "$T/multi.old.zkey"
"$CZKCLI" setup "$FIX/multi/circuit.r1cs" "$K/multi.new.zkey" >"$T/setup.log" 2>&1 ||
    { bad "czk setup failed: $(tail -3 "$T/setup.log")"; exit 1; }
mv "$K/multi.new.zkey" "$K/multi.zkey"
old=$(sed -n 's/.*circuit multi: .*, key id \([0-9a-f]\{64\}\).*/\1/p' "$T/gpud.log" | head -1)
[ -n "$old" ] || bad "gpud did not log the key id of circuit multi at start-up"
kill -TERM "$FIN_PID"; wait_exit "$FIN_PID" 20 >/dev/null
start_fin
wait_log "$T/fin.log" 'circuit "multi" refused' 20 || bad "the restarted finalizer did not refuse circuit multi"
wait_log "$T/gpud.log" 'circuit "multi" refused for finalizer' 20 || bad "gpud did not refuse circuit multi for the finalizer"
new=$(sed -n 's/.*circuit multi: .*, key id \([0-9a-f]\{64\}\).*/\1/p' "$T/fin.log" | tail -1)
[ -n "$new" ] && [ "$new" != "$old" ] || bad "the finalizer's new key id ($new) is not another one than gpud's ($old)"
grep 'circuit "multi" refused' "$T/gpud.log" | grep "$old" | grep -q "$new" ||
    bad "gpud's refusal does not name both key ids"
grep 'circuit "multi" refused' "$T/fin.log" | grep "$old" | grep -q "$new" ||
    bad "the finalizer's refusal does not name both key ids"

j2=$(submit_job after multi "$FIX/multi/witness.wtns")
j3=$(submit_job other linear "$FIX/linear/witness.wtns")
wait_done "$j3" 60 || bad "the linear job $j3 did not complete while multi is refused"
check_partition "$j3" 0 linear
sleep 3
[ -e "$T/out/$j2" ] && bad "a proof of job $j2 was written with keys that disagree"
st=$("$CLIENT" "$RT/czk.sock" status "$j2")
echo "$st" | grep -Eq '"state"(=>|:) ?"(failed|complete)"' && bad "job $j2 ended instead of waiting: $st"
grep -q 'does not verify' "$T/fin.log" && bad "the disagreement surfaced as a failed pairing check"

# the finalizer back on the old key: the waiting job completes
mv "$T/multi.old.zkey" "$K/multi.zkey"
kill -TERM "$FIN_PID"; wait_exit "$FIN_PID" 20 >/dev/null
start_fin
wait_done "$j2" 60 || bad "job $j2 did not complete once the finalizer had gpud's key again"
check_partition "$j2" 0 multi
for p in "gpud $GPUD_PID" "synth $SYNTH_PID" "finalizer $FIN_PID"; do alive $p; done
[ "$fail" = 0 ] || exit 1
have_snarkjs || { echo "snarkjs not installed: proofs checked by the finalizer only"; exit 77; }
echo ok
