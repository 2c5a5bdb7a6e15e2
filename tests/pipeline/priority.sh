#!/bin/sh
# priority.sh — the scheduler's lanes seen from the client: a queue of low
# priority jobs is submitted, then normal ones, then one high priority job;
# the high job finishes before the low jobs that were still queued when it
# arrived, and the normal jobs before the queued low ones (completion times
# from the finalizer's summary.json).  One slot, and a synth slowed to 150 ms a
# fill, so the queue is real.
# usage: priority.sh CZK GPUD SYNTH FIN TOOL SRC
. "$(dirname "$0")/lib.sh"
require_snarkjs

SLOTS=1 write_config </dev/null
# every fill takes at least 150 ms (fault point sleep): the queue stays real
# however fast the machine proves, so the order is decided by the lanes
start_gpud; start_synth 0 synth.before_fill:sleep=150; start_fin
wait_up 1 || exit 1

NLOW=6
i=1
while [ $i -le $NLOW ]; do
    submit low$i multi 2 low || { bad "low job $i: $(cat "$T/sub.low$i")"; exit 1; }
    i=$((i + 1))
done
for i in 1 2; do
    submit normal$i multi 1 normal || { bad "normal job $i: $(cat "$T/sub.normal$i")"; exit 1; }
done
done_before=$(st proofs_total)
submit high range 1 high --wait --out "$T/client/high"; rc=$?
[ $rc = 0 ] || { bad "high job exited $rc"; cat "$T/sub.high" >&2; }
log "when the high job was submitted $done_before of $((NLOW * 2 + 2)) partitions were proved"

i=1
while [ $i -le $NLOW ]; do expect_job "$(job_of "$T/sub.low$i")" multi 2; i=$((i + 1)); done
for i in 1 2; do expect_job "$(job_of "$T/sub.normal$i")" multi 1; done
expect_job "$(job_of "$T/sub.high")" range 1 "$T/client/high"
check_all

completed() { sed -n 's/.*"completed_ns": *\([0-9]*\).*/\1/p' "$T/out/$(job_of "$T/sub.$1")/summary.json"; }
th=$(completed high)
tn=$(completed normal2)
after_high=0 after_normal=0
i=1
while [ $i -le $NLOW ]; do
    tl=$(completed low$i)
    [ "$tl" -gt "$th" ] && after_high=$((after_high + 1))
    [ "$tl" -gt "$tn" ] && after_normal=$((after_normal + 1))
    i=$((i + 1))
done
log "low jobs finished after the high job: $after_high of $NLOW; after the last normal job: $after_normal"
# at most two low jobs can be ahead of the queue (one partition in the slot,
# one being computed) plus those already proved when the high job came
[ "$after_high" -ge 3 ] || bad "the high priority job did not overtake the queued low ones ($after_high of $NLOW after it)"
[ "$after_normal" -ge 2 ] || bad "the normal jobs did not overtake the queued low ones ($after_normal of $NLOW after them)"
[ "$(completed normal1)" -lt "$(completed low$NLOW)" ] || bad "normal job 1 finished after the last low job"
[ "$fail" = 0 ] && echo "ok"
exit $fail
