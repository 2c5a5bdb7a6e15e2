#!/bin/sh
# sched.sh — scheduling rules of czk-gpud with one slot and slow fills
# (CZK_FAULT makes each fill take 0.6 s):
#   - a high-priority job submitted behind a low-priority one goes first at
#     the next partition boundary (lane 0 before lane 2);
#   - max_queued_partitions answers REJECTED "queue full" instead of queueing;
#   - CANCEL stops a job at once: EVENT CANCELLED, no proof files, spool gone,
#     and the jobs behind it still complete.
# usage: sched.sh GPUD SYNTH FINALIZER CLIENT SOURCE_DIR
GPUD=$1 SYNTH=$2 FIN=$3 CLIENT=$4 SRC=$5
. "$SRC/tests/daemons/lib.sh"
L=$FIX/linear/witness.wtns

write_config </dev/null
sed -i -e 's/^slots_per_pool = 2/slots_per_pool = 1/' -e 's/^\[gpud\]$/[gpud]\nmax_queued_partitions = 6/' "$T/czk.conf"
start_gpud; start_fin
CZK_FAULT=synth.before_fill:sleep=600 start_synth
wait_socket || exit 1
sleep 0.3 # the synth connects

low=$("$CLIENT" "$RT/czk.sock" submit low linear 2 "$L" "$L" "$L" "$L")
high=$("$CLIENT" "$RT/czk.sock" submit high linear 0 "$L")
full=$("$CLIENT" "$RT/czk.sock" submit full linear 1 "$L" "$L" "$L" "$L"); rc=$?
can=$("$CLIENT" "$RT/czk.sock" submit can linear 1 "$L" "$L")
[ "$low" = "accepted 1" ] && [ "$high" = "accepted 2" ] || bad "submissions: \"$low\" \"$high\""
[ $rc = 3 ] && echo "$full" | grep -q "queue full" || bad "queue cap: \"$full\""
[ "$can" = "accepted 3" ] || bad "submission to cancel: \"$can\""
out=$("$CLIENT" "$RT/czk.sock" cancel 3); rc=$?
[ $rc = 0 ] && [ "$out" = cancelled ] || bad "cancel: \"$out\" (exit $rc)"
[ -d "$T/state/spool/3" ] && bad "the cancelled job's spool is still there"
out=$("$CLIENT" "$RT/czk.sock" cancel 3); rc=$?
[ $rc = 5 ] || bad "a second cancel was not refused: \"$out\""

"$CLIENT" "$RT/czk.sock" watch 1 >/dev/null || bad "low-priority job did not complete"
"$CLIENT" "$RT/czk.sock" watch 2 >/dev/null || bad "high-priority job did not complete"
"$CLIENT" "$RT/czk.sock" watch 3 >/dev/null; rc=$?
[ $rc = 4 ] || bad "watch of the cancelled job exited $rc, expected 4"
[ -e "$T/out/3" ] && bad "the cancelled job has output files"

# order in which proofs were written: job 2 right after job 1's first partition
order=$(sed -n 's/.*job \([0-9]*\) partition \([0-9]*\): proof verified and written/\1.\2/p' "$T/fin.log" | tr '\n' ' ')
echo "write order: $order"
[ "$order" = "1.0 2.0 1.1 1.2 1.3 " ] || bad "lane 0 did not go first at the partition boundary: $order"
for p in 0 1 2 3; do check_partition 1 $p linear; done
check_partition 2 0 linear

# cancel while the only partition is being filled: the synth stops, the slot
# comes back, and the next job uses it
"$CLIENT" "$RT/czk.sock" submit mid linear 1 "$L" >/dev/null
sleep 0.2
out=$("$CLIENT" "$RT/czk.sock" cancel 4); rc=$?
[ $rc = 0 ] || bad "cancel during a fill: \"$out\" (exit $rc)"
out=$("$CLIENT" "$RT/czk.sock" submit after linear 1 --wait "$L"); rc=$?
[ $rc = 0 ] || bad "the job after a cancelled fill did not complete: $out"
check_partition 5 0 linear
[ -e "$T/out/4" ] && bad "the job cancelled during its fill has output files"
st=$("$CLIENT" "$RT/czk.sock" status)
echo "$st" | grep -Eq '"cancelled"(=>|:) ?2' || bad "status does not count the two cancelled jobs: $st"
echo "$st" | grep -Eq '"in_use"(=>|:) ?0' || bad "a slot is still in use after everything finished: $st"
[ "$fail" = 0 ] || exit 1
have_snarkjs || exit 77
echo "ok"
