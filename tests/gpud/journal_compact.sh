#!/bin/sh
# journal_compact.sh — czk-gpud compacts its journal while it runs, with the
# real daemons (tests/pipeline/lib.sh) and [gpud] history_jobs = 3,
# journal_compact_kb = 1 (so it compacts every few jobs):
#   1. fourteen jobs one after the other (--wait), the journal read after each
#      (a job's records stay while it is remembered, i.e. until three more have
#      finished): gpud logs compactions while running, the live journal no
#      longer holds the first jobs' records, and every job's proofs were
#      written once, verified by snarkjs, and journaled with exactly one
#      ACCEPT and one DONE per partition;
#   2. a restart replays the compacted journal: exactly the last three jobs
#      are remembered (`czk status --job` knows the last, not the first), and
#      the next job's id is above every id handed out before;
#   3. (fault-injection builds, argument `crash`) gpud killed -9 inside a
#      compaction: on its thread before the rewrite (gpud.compact_run), on
#      the loop before the new file takes the journal's place
#      (gpud.compact_finish), and after, before the old file is closed
#      (gpud.compact_free), with history_jobs = 1000 so that every job stays
#      checkable: jobs go on being submitted (--wait, request ids) until gpud
#      dies; it is restarted, the client in flight reconnects (or, if its job
#      was not accepted, the job is sent again with its request id), and
#      every job completes exactly once (proofs verified, one ACCEPT, one DONE
#      per partition) with no temporary file left behind.
# usage: journal_compact.sh CZK GPUD SYNTH FIN TOOL SRC [crash]
. "$6/tests/pipeline/lib.sh"
require_snarkjs

GPUD_EXTRA="history_jobs = 3
journal_compact_kb = 1" write_config </dev/null
start_gpud; start_synth 0; start_fin
wait_up 1 || exit 1

log "fourteen jobs, one after the other"
: >"$T/jobs"
i=0
for circ in multi linear poseidon range multi linear poseidon range multi linear poseidon range multi linear; do
    np=$((i % 3 + 1))
    submit "c$i" "$circ" "$np" normal --wait || { bad "job c$i ($circ): $(cat "$T/sub.c$i")"; exit 1; }
    job=$(job_of "$T/sub.c$i")
    [ -n "$job" ] || { bad "job c$i: no job id in: $(cat "$T/sub.c$i")"; exit 1; }
    echo "$job $circ $np" >>"$T/jobs"
    snap_journal
    i=$((i + 1))
done
first=$(head -n 1 "$T/jobs" | cut -d' ' -f1)
last=$(tail -n 1 "$T/jobs" | cut -d' ' -f1)

n=$(grep -c "journal compacted: [0-9]* of [0-9]* records kept" "$T/logs/gpud.log")
[ "$n" -ge 2 ] || bad "gpud compacted its journal $n times while running (expected several at journal_compact_kb = 1)"
"$TOOL" journal "$T/state/journal" >"$T/journal.live" 2>&1 || bad "the live journal does not replay: $(cat "$T/journal.live")"
for job in $(head -n 4 "$T/jobs" | cut -d' ' -f1); do
    awk -v j="$job" '$3 == j' "$T/journal.live" | grep -q . && bad "job $job is forgotten but still in the live journal"
done
awk -v j="$last" '$2 == "COMPLETE" && $3 == j' "$T/journal.live" | grep -q . ||
    bad "the last job's COMPLETE is not in the live journal"

# every job: written once, journaled once (snapshots), verified
sort -u "$T/journal.all" >"$T/journal.uniq"
check_jobs "$T/jobs" strict
verify_batch

log "restart: the compacted journal replays"
kill -TERM "$GPUD_PID"; wait_exit "$GPUD_PID" 20 >/dev/null; GPUD_PID=""
start_gpud
wait_up 1 || exit 1
grep -q "3 finished remembered" "$T/logs/gpud.log" ||
    bad "after the restart gpud does not remember exactly 3 jobs: $(grep 'records replayed' "$T/logs/gpud.log" | tail -n 1)"
"$CZK" status --config "$CONF" --job "$last" >"$T/st.last" 2>&1 || bad "job $last (the last) is not known: $(cat "$T/st.last")"
"$CZK" status --config "$CONF" --job "$first" >"$T/st.first" 2>&1 && bad "job $first (the first) is still known"
grep -q "not known" "$T/st.first" || bad "status of the forgotten job $first: $(cat "$T/st.first")"
"$TOOL" journal "$T/state/journal" >"$T/journal.restart" 2>&1 || bad "the journal does not replay after the restart"
kept=$(awk '{ print $3 }' "$T/journal.restart" | sort -un | tr '\n' ' ')
want=$(tail -n 3 "$T/jobs" | cut -d' ' -f1 | sort -un | tr '\n' ' ')
[ "$kept" = "$want" ] || bad "after the restart the journal holds jobs $kept, not the last three ($want)"
submit after multi 1 normal --wait || bad "job after the restart: $(cat "$T/sub.after")"
job=$(job_of "$T/sub.after")
[ -n "$job" ] && [ "$job" -gt "$last" ] || bad "the job after the restart got id '$job', not above $last"
[ "${7:-}" = crash ] || { [ "$fail" = 0 ] && echo "ok"; exit $fail; }

log "gpud killed inside a compaction"
kill -TERM "$GPUD_PID"; wait_exit "$GPUD_PID" 20 >/dev/null; GPUD_PID=""
GPUD_EXTRA="history_jobs = 1000
journal_compact_kb = 1" write_config </dev/null
: >"$T/jobs3"
r=0
for point in gpud.compact_run gpud.compact_finish gpud.compact_free; do
    r=$((r + 1))
    start_gpud "$point:kill"
    wait_up 1 || exit 1
    k=0 died=0
    while [ $k -lt 80 ] && [ $died = 0 ]; do
        # a client outlives gpud (it reconnects): watch both
        submit "x$r.$k" linear 1 normal --request-id "crash-$r-$k" --wait & sp=$!
        while kill -0 "$sp" 2>/dev/null && kill -0 "$GPUD_PID" 2>/dev/null; do sleep 0.05; done
        kill -0 "$GPUD_PID" 2>/dev/null || died=1
        if [ $died = 0 ]; then
            wait "$sp" || { bad "job x$r.$k: $(cat "$T/sub.x$r.$k")"; break; }
            echo "$(job_of "$T/sub.x$r.$k") linear 1" >>"$T/jobs3"
            k=$((k + 1))
        fi
    done
    wait_exit "$GPUD_PID" 20; rc=$?
    [ $rc = 137 ] || { bad "gpud did not die at $point (exit $rc)"; kill -9 "$GPUD_PID" 2>/dev/null; }
    grep -q "fault point $point: SIGKILL" "$T/logs/gpud.log" || bad "gpud was not killed at $point"
    start_gpud
    wait_up 1 || exit 1
    # the job in flight when gpud died: its client finishes it, or it is sent
    # again with its request id (then gpud's journal says whether it is the
    # same job)
    if [ $died = 1 ] && ! wait "$sp"; then
        submit "x$r.$k" linear 1 normal --request-id "crash-$r-$k" --wait ||
            bad "job x$r.$k after the restart: $(cat "$T/sub.x$r.$k")"
    fi
    [ $died = 1 ] && echo "$(job_of "$T/sub.x$r.$k") linear 1" >>"$T/jobs3"
    kill -TERM "$GPUD_PID"; wait_exit "$GPUD_PID" 20 >/dev/null; GPUD_PID=""
done
start_gpud
wait_up 1 || exit 1
snap_journal
sort -u "$T/journal.all" >"$T/journal.uniq"
: >"$T/verify.list"
grep -q "^ " "$T/jobs3" && bad "a job of the crash rounds has no id"
sort -u "$T/jobs3" | grep -v "^ " >"$T/jobs3.u"
check_jobs "$T/jobs3.u" strict
verify_batch
[ -e "$T/state/journal.compact" ] && bad "a temporary journal.compact is left behind"

[ "$fail" = 0 ] && echo "ok"
exit $fail
