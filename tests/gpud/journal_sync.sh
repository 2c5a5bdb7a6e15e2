#!/bin/sh
# journal_sync.sh — czk-gpud's group commit (ipc/commit.h) with the real
# daemons (tests/pipeline/lib.sh), through the fault point in the sync itself:
#   1. a slow disk: every journal fdatasync takes 150 ms
#      (gpud.journal_sync:sleep=150); every job completes exactly once (proofs
#      verified by snarkjs, one DONE and one ACCEPT each in the journal);
#   2. a failing sync: the second sync after a restart fails
#      (gpud.journal_sync:fail@2), which cuts its records off again: gpud logs
#      the episode and its end, a submit refused meanwhile is accepted when
#      sent again with its request id, the partitions whose DONE was cut
#      get their RESULT again, and again every job completes exactly once.
# No timing is asserted: that the loop does not wait for the disk is what
# bench/gpud/journal_sync.sh measures.
# usage: journal_sync.sh CZK GPUD SYNTH FIN TOOL SRC
. "$6/tests/pipeline/lib.sh"
require_snarkjs

# submit_retry NAME CIRCUIT NPARTS PRIO REQ [options]: a refusal while the
# journal cannot be written is answered by sending the same request again
submit_retry() {
    name=$1 circ=$2 np=$3 prio=$4 req=$5; shift 5
    for _try in 1 2 3 4 5 6 7 8 9 10; do
        submit "$name" "$circ" "$np" "$prio" --request-id "$req" "$@" && {
            expect_job "$(job_of "$T/sub.$name")" "$circ" "$np"
            return 0
        }
        grep -q "rejected" "$T/sub.$name" || break
        sleep 0.5
    done
    bad "$name: not accepted: $(cat "$T/sub.$name")"
    return 1
}

write_config </dev/null
start_gpud "gpud.journal_sync:sleep=150"; start_synth 0; start_fin
wait_up 1 || exit 1
start_sampler

log "every sync 150 ms"
submit_retry s0 multi 3 normal sync-s0 --wait
submit_retry s1 linear 2 normal sync-s1
submit_retry s2 poseidon 2 high sync-s2 --wait
submit_retry s3 range 1 normal sync-s3 --wait
grep -q "fault point gpud.journal_sync: sleeping 150 ms" "$T/logs/gpud.log" ||
    bad "the syncs were not slowed down (fault point not reached)"
check_all

log "the second sync fails"
kill -TERM "$GPUD_PID"; wait_exit "$GPUD_PID" 20 >/dev/null; GPUD_PID=""
start_gpud "gpud.journal_sync:fail@2"
wait_up 1 || exit 1
start_sampler
submit_retry f0 multi 3 normal sync-f0
submit_retry f1 linear 2 normal sync-f1
submit_retry f2 poseidon 2 high sync-f2
submit_retry f3 range 1 normal sync-f3 --wait
grep -q "fault point gpud.journal_sync: failing this step" "$T/logs/gpud.log" || bad "no sync failed"
grep -q "journal: could not \(sync [0-9]* records\|append\)" "$T/logs/gpud.log" ||
    bad "gpud did not log the failed sync"
check_all
grep -q "journal: appends work again" "$T/logs/gpud.log" || bad "gpud did not log the end of the episode"

[ "$fail" = 0 ] && echo "ok"
exit $fail
