#!/bin/sh
# e2e.sh — the whole pipeline with the cpu backend, driven by the operator's
# client: czk-gpud, two czk-synth and czk-finalizer in a temporary runtime and
# state directory with a generated config; a mix of jobs submitted at once
# (four circuits, multi-partition jobs, all three priorities, waiting and
# fire-and-forget clients, --out); every proof verified by snarkjs, the
# client's --out copies equal to the finalizer's files, each partition written
# and journaled once; `czk status` (table and --json) reports the work;
# `czk cancel` stops a running job and frees its slots at once.
# usage: e2e.sh CZK GPUD SYNTH FIN TOOL SRC
. "$(dirname "$0")/lib.sh"
require_snarkjs

SLOTS=3 write_config </dev/null
start_gpud; start_synth 0; start_synth 1; start_fin
wait_up 2 || exit 1
start_sampler

log "submitting 6 jobs at once (multi, linear, poseidon, range; 1-3 partitions; high/normal/low)"
submit a multi 3 high --wait --out "$T/client/a" & pa=$!
submit b linear 2 low --wait --out "$T/client/b" & pb=$!
submit c poseidon 2 normal --wait --out "$T/client/c" & pc=$!
submit d range 1 normal --wait --out "$T/client/d" & pd=$!
submit e multi 1 low & pe=$!
submit f range 2 high --request-id e2e-f --wait --out "$T/client/f" & pf=$!
for x in "a $pa" "b $pb" "c $pc" "d $pd" "e $pe" "f $pf"; do
    set -- $x
    wait_exit "$2" 180; rc=$?
    [ $rc = 0 ] || { bad "czk submit ($1) exited $rc:"; cat "$T/sub.$1" >&2; }
done
wait_complete "$(job_of "$T/sub.e")" 120 # the fire-and-forget one
expect_job "$(job_of "$T/sub.a")" multi 3 "$T/client/a"
expect_job "$(job_of "$T/sub.b")" linear 2 "$T/client/b"
expect_job "$(job_of "$T/sub.c")" poseidon 2 "$T/client/c"
expect_job "$(job_of "$T/sub.d")" range 1 "$T/client/d"
expect_job "$(job_of "$T/sub.e")" multi 1
expect_job "$(job_of "$T/sub.f")" range 2 "$T/client/f"
cat "$T/sub.a"
grep -q "^job [0-9]* partition 2: gpu" "$T/sub.a" || bad "--wait printed no progress line for partition 2 of job a"
grep -q "^job [0-9]* done: 3 partitions proved" "$T/sub.a" || bad "--wait printed no final line for job a"

log "the same request id again: the same job, nothing recomputed, --out filled from the event/output dir"
submit f2 range 2 high --request-id e2e-f --wait --out "$T/client/f2"; rc=$?
[ $rc = 0 ] || { bad "duplicate submit exited $rc"; cat "$T/sub.f2" >&2; }
grep -q "^job $(job_of "$T/sub.f") accepted (duplicate" "$T/sub.f2" || bad "duplicate request id: $(cat "$T/sub.f2")"
for p in 0 1; do
    cmp -s "$T/client/f2/$p/proof.json" "$T/out/$(job_of "$T/sub.f")/$p/proof.json" ||
        bad "duplicate submit --out: partition $p is not the written proof"
done

log "status"
"$CZK" status --config "$CONF" | tee "$T/status.txt"
grep -q "^jobs .*complete 6" "$T/status.txt" || bad "status table does not show 6 complete jobs"
grep -q "^slots .*0 of 3 slots in use" "$T/status.txt" || bad "status table does not show the idle pool"
grep -q "^throughput  11 proofs in the last minute" "$T/status.txt" || bad "status: not 11 proofs in the last minute"
"$CZK" status --config "$CONF" --json --job "$(job_of "$T/sub.a")" >"$T/status.json" || bad "status --json failed"
node -e 'const s=JSON.parse(require("fs").readFileSync(process.argv[1]));
  if (s.proofs_total !== 11 || s.job.state !== "complete" || s.job.partitions !== 3 || !(s.latency_s.gpu > 0))
    { console.error("unexpected status", s); process.exit(1); }' "$T/status.json" ||
    bad "status --json does not describe the work done"

log "cancel: a running job stops, its slots are free at once, its waiting client exits 1"
submit x multi 40 low --wait & px=$!
for _ in $(seq 1 100); do grep -q "^job [0-9]* accepted" "$T/sub.x" 2>/dev/null && break; sleep 0.05; done
jx=$(job_of "$T/sub.x")
# cancel once the first partition is proved: the job is then in every stage
for _ in $(seq 1 200); do grep -q "partition [0-9]*: done" "$T/sub.x" && break; sleep 0.02; done
"$CZK" cancel --config "$CONF" "$jx" >"$T/cancel.out" 2>&1; rc=$?
[ $rc = 0 ] && grep -q "job $jx cancelled" "$T/cancel.out" || bad "czk cancel exited $rc: $(cat "$T/cancel.out")"
# a slot being filled comes back when its synth has stopped writing (it
# answers the RELEASE at once): allow one second
for _ in $(seq 1 20); do s=$(status_json); echo "$s" | grep -q '"in_use": 0' && break; sleep 0.05; done
echo "$s" | grep -q '"in_use": 0' || bad "slots still in use 1 s after the cancel: $s"
echo "$s" | grep -q '"queued": 0' || bad "partitions still queued after the cancel"
wait_exit "$px" 30; rc=$?
[ $rc = 1 ] && grep -q "^job $jx cancelled" "$T/sub.x" || { bad "the waiting client of a cancelled job exited $rc:"; cat "$T/sub.x" >&2; }
nd=$(grep -c "partition [0-9]*: done" "$T/sub.x")
[ "$nd" -lt 40 ] || bad "all 40 partitions of the cancelled job were proved"
echo "cancelled job $jx after $nd of 40 partitions"
"$CZK" cancel --config "$CONF" "$jx" >"$T/cancel2.out" 2>&1; rc=$?
[ $rc = 2 ] && grep -q "already" "$T/cancel2.out" || bad "second cancel: exit $rc, $(cat "$T/cancel2.out")"
"$CZK" cancel --config "$CONF" 999999 >"$T/cancel3.out" 2>&1; rc=$?
[ $rc = 2 ] && grep -q "not known" "$T/cancel3.out" || bad "cancel of an unknown job: exit $rc, $(cat "$T/cancel3.out")"

log "after the cancel the pipeline still proves"
submit y poseidon 1 normal --wait --out "$T/client/y"; rc=$?
[ $rc = 0 ] || { bad "job after the cancel exited $rc"; cat "$T/sub.y" >&2; }
expect_job "$(job_of "$T/sub.y")" poseidon 1 "$T/client/y"

log "checks: snarkjs, exactly once"
check_all
# the oracle must be able to say no: a proof of another circuit's statement
cp "$T/out/$(job_of "$T/sub.a")/0/proof.json" "$T/tampered.json"
echo "$FIX/range/verification_key.json $FIX/range/public.json $T/tampered.json" |
    node "$SRC/tests/pipeline/verify_batch.js" "$SNARKJS_DIR" >/dev/null 2>&1 &&
    bad "verify_batch.js accepted a multi proof for the range circuit"
[ "$fail" = 0 ] && echo "ok"
exit $fail
