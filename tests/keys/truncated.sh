#!/bin/sh
# truncated.sh — a zkey truncated, then overwritten with random bytes, in
# place under the running daemons: none of them dies (no SIGBUS, no SIGSEGV:
# each proves with the copy it loaded), each reports the change with the key
# id it loaded, and jobs of that circuit still prove and verify.
# usage: truncated.sh GPUD SYNTH FINALIZER CLIENT SOURCE_DIR [CZK]
GPUD=$1 SYNTH=$2 FIN=$3 CLIENT=$4 SRC=$5
. "$SRC/tests/keys/lib.sh"

write_key_config "$T/czk.conf" multi linear
start_gpud; start_synth; start_fin
wait_socket || exit 1
j1=$(submit_job t1 multi "$FIX/multi/witness.wtns")
wait_done "$j1" 60 || bad "job $j1 did not complete"

truncate -s 100 "$K/multi.zkey"
for d in gpud synth fin; do
    wait_log "$T/$d.log" 'multi.zkey changed on disk: modified in place' 10 ||
        bad "$d did not report the truncated zkey"
done
j2=$(submit_job t2 multi "$FIX/multi/witness.wtns" "$FIX/multi/witness.wtns")
wait_done "$j2" 60 || bad "job $j2 did not complete after the zkey was truncated"
check_partition "$j2" 0 multi
check_partition "$j2" 1 multi

head -c 700000 /dev/urandom | dd of="$K/multi.zkey" conv=notrunc status=none
j3=$(submit_job t3 multi "$FIX/multi/witness.wtns")
wait_done "$j3" 60 || bad "job $j3 did not complete after the zkey was overwritten"
check_partition "$j3" 0 multi
kill -HUP "$GPUD_PID" "$SYNTH_PID" "$FIN_PID" 2>/dev/null
sleep 2.5
for p in "gpud $GPUD_PID" "synth $SYNTH_PID" "finalizer $FIN_PID"; do alive $p; done
grep -q 'no longer readable as a zkey' "$T/synth.log" || bad "the synth did not report the overwritten zkey"
grep -q 'SIGHUP: re-checking' "$T/synth.log" || bad "the synth did not re-check on SIGHUP"
grep -q 'SIGHUP: re-checking' "$T/fin.log" || bad "the finalizer did not re-check on SIGHUP"
[ "$fail" = 0 ] || exit 1
have_snarkjs || { echo "snarkjs not installed: proofs checked by the finalizer only"; exit 77; }
echo ok
