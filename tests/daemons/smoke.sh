#!/bin/sh
# smoke.sh — czk-gpud + czk-synth + czk-finalizer end to end with the cpu
# backend: a 2-partition job proves and snarkjs verifies both proofs; the
# client gets the same proof texts in its events; request ids deduplicate;
# bad submissions are rejected with a reason and leave nothing behind; STATUS
# reports the work; SIGTERM stops every daemon cleanly.
# usage: smoke.sh GPUD SYNTH FINALIZER CLIENT SOURCE_DIR
GPUD=$1 SYNTH=$2 FIN=$3 CLIENT=$4 SRC=$5
. "$SRC/tests/daemons/lib.sh"

write_config </dev/null
start_gpud; start_synth; start_fin
wait_socket || exit 1

# one job, two partitions, waiting for the events, proofs also sent to the client
out=$("$CLIENT" "$RT/czk.sock" submit req-1 multi 1 --wait --out "$T/client" \
      "$FIX/multi/witness.wtns" "$FIX/multi/witness.wtns")
rc=$?
echo "$out"
[ $rc = 0 ] || bad "submit --wait exited $rc"
job=$(echo "$out" | sed -n 's/^accepted \([0-9]*\).*/\1/p')
[ -n "$job" ] || { bad "no job id"; exit 1; }
for p in 0 1; do
    check_partition "$job" $p multi
    cmp -s "$T/client/$p/proof.json" "$T/out/$job/$p/proof.json" ||
        bad "the proof text in the client's DONE event differs from the written proof.json (partition $p)"
done
[ -f "$T/out/$job/summary.json" ] || bad "no summary.json for job $job"
grep -q '"partitions": 2' "$T/out/$job/summary.json" || bad "summary.json does not say 2 partitions"
# two partitions from the same witness, blinded independently: different proofs
cmp -s "$T/out/$job/0/proof.json" "$T/out/$job/1/proof.json" && bad "two partitions produced identical proofs (r, s not random?)"

# a request id seen before: same job, nothing queued
out=$("$CLIENT" "$RT/czk.sock" submit req-1 multi 1 "$FIX/multi/witness.wtns" "$FIX/multi/witness.wtns")
[ "$out" = "accepted $job duplicate" ] || bad "duplicate request id answered \"$out\""

# rejections name what is wrong
out=$("$CLIENT" "$RT/czk.sock" submit req-2 nosuch 1 "$FIX/multi/witness.wtns"); rc=$?
[ $rc = 3 ] && echo "$out" | grep -q 'unknown circuit' || bad "unknown circuit: \"$out\""
out=$("$CLIENT" "$RT/czk.sock" submit req-3 multi 1 "$FIX/multi/witness.wtns" "$FIX/linear/witness.wtns"); rc=$?
[ $rc = 3 ] && echo "$out" | grep -q 'partition 1' || bad "wrong witness: \"$out\""
out=$("$CLIENT" "$RT/czk.sock" submit req-4 multi 1 "$FIX/multi/circuit.zkey"); rc=$?
[ $rc = 3 ] && echo "$out" | grep -q 'partition 0' || bad "not a witness: \"$out\""
w=$FIX/linear/witness.wtns
out=$("$CLIENT" "$RT/czk.sock" submit req-5 linear 1 "$w" "$w" "$w" "$w" "$w"); rc=$?
[ $rc = 3 ] && echo "$out" | grep -q 'max_partitions_per_job' || bad "cap: \"$out\""
ls "$T/state/spool" | grep -q . && bad "a rejected job left files in the spool: $(ls "$T/state/spool")"

# a second circuit in the high-priority lane
out=$("$CLIENT" "$RT/czk.sock" submit req-6 linear 0 --wait "$FIX/linear/witness.wtns"); rc=$?
[ $rc = 0 ] || bad "linear job exited $rc: $out"
job2=$(echo "$out" | sed -n 's/^accepted \([0-9]*\).*/\1/p')
check_partition "$job2" 0 linear
[ -d "$T/state/spool/$job2" ] && bad "the spool of a complete job was not removed"

# status and cancel of a finished job
st=$("$CLIENT" "$RT/czk.sock" status "$job")
echo "$st"
echo "$st" | grep -Eq '"proofs_total"(=>|:) ?3[,}]' || bad "status does not count 3 proofs: $st"
echo "$st" | grep -Eq '"state"(=>|:) ?"complete"' || bad "status does not show job $job complete"
out=$("$CLIENT" "$RT/czk.sock" cancel "$job"); rc=$?
[ $rc = 5 ] && echo "$out" | grep -q 'already' || bad "cancel of a finished job: \"$out\""

# clean shutdown on SIGTERM
for p in $GPUD_PID $SYNTH_PID $FIN_PID; do kill -TERM "$p"; done
for p in $GPUD_PID $SYNTH_PID $FIN_PID; do
    wait_exit "$p" 20; rc=$?
    [ $rc = 0 ] || bad "daemon pid $p exited $rc on SIGTERM"
done
GPUD_PID= SYNTH_PID= FIN_PID=
[ "$fail" = 0 ] || exit 1
have_snarkjs || { echo "snarkjs not installed: proofs checked by the finalizer only"; exit 77; }
echo "ok"
