#!/bin/sh
# smoke.sh — czk-gpud + czk-synth + czk-finalizer end to end with the cpu
# backend: a 2-partition job proves and snarkjs verifies both proofs; the
# client gets the same proof texts in its events; request ids deduplicate;
# bad submissions are rejected with a reason and leave nothing behind; STATUS
# reports the work; SIGTERM stops every daemon cleanly.
# usage: smoke.sh GPUD SYNTH FINALIZER CLIENT SOURCE_DIR
GPUD=$1 SYNTH=$2 FIN=$3 CLIENT=$4 SRC=$5
. "$SRC/tests/daemons/lib.sh"

mport=$((20000 + $$ % 20000))
write_config <<EOF2
[gpud]
metrics_port = $mport
EOF2
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

# Prometheus metrics
if command -v curl >/dev/null; then
    m=$(curl -s "http://127.0.0.1:$mport/metrics")
    echo "$m" | grep -q '^czk_gpud_proofs_total 3' || bad "metrics do not count 3 proofs: $(echo "$m" | head -5)"
    echo "$m" | grep -q 'czk_gpud_stage_seconds_count{stage="gpu"} 3' ||
        bad "metrics have no gpu latency histogram with 3 observations"
fi

# restart gpud with two fault points: spooling takes 0.8 s, results are corrupted
kill -TERM "$GPUD_PID"; wait_exit "$GPUD_PID" 20 >/dev/null
CZK_FAULT=gpud.corrupt_result:fail,gpud.spool:sleep=800 start_gpud
wait_socket || exit 1

# a client that dies while its witnesses are spooled: nothing journaled, nothing kept
timeout 0.3 "$CLIENT" "$RT/czk.sock" submit gone multi 1 "$FIX/multi/witness.wtns" >/dev/null 2>&1
sleep 1.2
ls "$T/state/spool" | grep -q . && bad "the spool of a vanished client's submission was kept"
grep -q 'submit "gone": the client went away' "$T/gpud.log" || bad "gpud did not drop the vanished client's submission"

# a wrong MSM result is caught by the finalizer's pairing check: the partition
# fails with the reason, nothing is written (the request id of the vanished
# client is new: nothing of it was journaled)
out=$("$CLIENT" "$RT/czk.sock" submit gone multi 1 --wait "$FIX/multi/witness.wtns"); rc=$?
echo "$out"
echo "$out" | head -1 | grep -q "duplicate" && bad "the vanished client's request id was journaled"
[ $rc = 4 ] || bad "a job with a corrupted result ended with exit $rc, expected 4 (failed)"
job3=$(echo "$out" | sed -n 's/^accepted \([0-9]*\).*/\1/p')
echo "$out" | grep -q "does not verify" || bad "the failure event does not say the proof does not verify"
[ -e "$T/out/$job3" ] && bad "a proof that failed verification was written"
st=$("$CLIENT" "$RT/czk.sock" status)
echo "$st" | grep -Eq '"failures_total"(=>|:) ?1[,}]' || bad "status does not count the failure: $st"

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
