#!/bin/sh
# restart.sh — each daemon dies at a chosen moment (fault points, CZK_FAULT)
# and is started again; every accepted job still completes, each partition's
# proof is written exactly once and snarkjs accepts it.
#   1. czk-gpud exits right after journaling ACCEPT (before ACCEPTED): the
#      job is in the journal, the restarted gpud runs it
#   2. czk-gpud exits when the finalizer's first DONE of a job arrives, before
#      journaling it: replay requeues the partitions without DONE, and the
#      finalizer answers the recomputed one from its files (no second write)
#   3. czk-finalizer exits before renaming proof.json: gpud re-sends on reconnect
#   4. czk-synth exits in the middle of a fill: the slot is reclaimed and the
#      partition requeued for the restarted synth
# usage: restart.sh GPUD SYNTH FINALIZER CLIENT SOURCE_DIR
GPUD=$1 SYNTH=$2 FIN=$3 CLIENT=$4 SRC=$5
. "$SRC/tests/daemons/lib.sh"
W=$FIX/multi/witness.wtns

write_config </dev/null

# wait_job JOB: WATCH until the job is final; must end DONE
wait_job() {
    out=$("$CLIENT" "$RT/czk.sock" watch "$1" 2>&1); rc=$?
    [ $rc = 0 ] || bad "job $1 did not complete (watch exited $rc): $out"
}

# 1. gpud dies after the ACCEPT record is durable, before it answers
CZK_FAULT=gpud.after_accept_journal:exit start_gpud
start_synth; start_fin
wait_socket || exit 1
out=$("$CLIENT" "$RT/czk.sock" submit r1 multi 1 "$W" "$W" 2>&1)
wait_exit "$GPUD_PID" 10; rc=$?
[ $rc = 99 ] || bad "scenario 1: gpud did not stop at the fault point (exit $rc, client said: $out)"
start_gpud
wait_socket || exit 1
out=$("$CLIENT" "$RT/czk.sock" submit r1 multi 1 "$W" "$W")
[ "$out" = "accepted 1 duplicate" ] || bad "scenario 1: the journaled job is not known after the restart: \"$out\""
wait_job 1
check_partition 1 0 multi; check_partition 1 1 multi

# 2. gpud dies on the first DONE of job 2, before journaling it
kill -TERM "$GPUD_PID"; wait_exit "$GPUD_PID" 20 >/dev/null
CZK_FAULT=gpud.before_done_journal:exit start_gpud
wait_socket || exit 1
out=$("$CLIENT" "$RT/czk.sock" submit r2 multi 1 "$W" "$W" "$W")
J2=${out#accepted }
case $J2 in ""|*[!0-9]*) bad "scenario 2: submit said \"$out\""; J2=0 ;; esac
wait_exit "$GPUD_PID" 30; rc=$?
[ $rc = 99 ] || bad "scenario 2: gpud did not stop at the fault point (exit $rc)"
start_gpud
wait_socket || exit 1
wait_job $J2
for p in 0 1 2; do check_partition $J2 $p multi; done
grep -q "job $J2 partition .: already written, answering from the files" "$T/fin.log" ||
    bad "scenario 2: the finalizer did not answer the re-sent RESULT from its files"

# 3. the finalizer dies before its first proof.json of job 3 is renamed into place
kill -TERM "$FIN_PID"; wait_exit "$FIN_PID" 20 >/dev/null
CZK_FAULT=finalizer.before_rename:exit start_fin
out=$("$CLIENT" "$RT/czk.sock" submit r3 multi 1 "$W" "$W")
J3=${out#accepted }
case $J3 in ""|*[!0-9]*) bad "scenario 3: submit said \"$out\""; J3=0 ;; esac
wait_exit "$FIN_PID" 30; rc=$?
[ $rc = 99 ] || bad "scenario 3: the finalizer did not stop at the fault point (exit $rc)"
ls "$T/out/$J3"/*/proof.json >/dev/null 2>&1 && bad "scenario 3: a proof.json exists although the finalizer died before any rename"
start_fin
wait_job $J3
for p in 0 1; do check_partition $J3 $p multi; done

# 4. the synth dies in the middle of a fill
kill -TERM "$SYNTH_PID"; wait_exit "$SYNTH_PID" 20 >/dev/null
CZK_FAULT=synth.mid_fill:exit start_synth
out=$("$CLIENT" "$RT/czk.sock" submit r4 linear 2 "$FIX/linear/witness.wtns" "$FIX/linear/witness.wtns")
J4=${out#accepted }
case $J4 in ""|*[!0-9]*) bad "scenario 4: submit said \"$out\""; J4=0 ;; esac
wait_exit "$SYNTH_PID" 30; rc=$?
[ $rc = 99 ] || bad "scenario 4: the synth did not stop at the fault point (exit $rc)"
dead=$SYNTH_PID
start_synth
wait_job $J4
for p in 0 1; do check_partition $J4 $p linear; done
# every synth that goes logs the line (the one stopped above: 0 requeued)
grep -q "synth pid $dead gone: [1-9][0-9]* partitions requeued" "$T/gpud.log" ||
    bad "scenario 4: gpud did not log requeueing the dead synth's partitions"

# exactly once: every proof.json was renamed into place once (the finalizer
# logs "written" per new file and "already written" for re-sent RESULTs)
n=$(grep -c "proof verified and written" "$T/fin.log")
[ "$n" = 9 ] || bad "expected 9 proofs written once each, the finalizer logged $n"
[ "$fail" = 0 ] || exit 1
have_snarkjs || { echo "snarkjs not installed: proofs checked by the finalizer only"; exit 77; }
echo "ok"
