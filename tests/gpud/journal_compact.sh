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
#      the next job's id is above every id handed out before.
# usage: journal_compact.sh CZK GPUD SYNTH FIN TOOL SRC
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
while read -r job circ np; do
    p=0
    while [ $p -lt "$np" ]; do
        d=$T/out/$job/$p
        if [ -f "$d/proof.json" ] && [ -f "$d/public.json" ]; then
            cmp -s "$d/public.json" "$FIX/$circ/public.json" || bad "job $job partition $p: public.json is not $circ's"
            echo "$FIX/$circ/verification_key.json $d/public.json $d/proof.json" >>"$T/verify.list"
        else
            bad "job $job partition $p: no proof.json/public.json in $d"
        fi
        n=$(grep -c "job $job partition $p: proof verified and written" "$T/logs/fin.log")
        [ "$n" = 1 ] || bad "job $job partition $p: written $n times by the finalizer"
        n=$(awk -v j="$job" -v p="$p" '$2 == "DONE" && $3 == j && $4 == p' "$T/journal.uniq" | wc -l)
        [ "$n" = 1 ] || bad "job $job partition $p: DONE journaled $n times (must be exactly once)"
        p=$((p + 1))
    done
    n=$(awk -v j="$job" '$2 == "ACCEPT" && $3 == j' "$T/journal.uniq" | wc -l)
    [ "$n" = 1 ] || bad "job $job: ACCEPT journaled $n times"
done <"$T/jobs"
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

[ "$fail" = 0 ] && echo "ok"
exit $fail
