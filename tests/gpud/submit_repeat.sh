#!/bin/sh
# submit_repeat.sh — SUBMITs that repeat a request id are bounded like fresh
# ones (gpud/jobs.c, "a repeat is bounded like a fresh submission"): czk-gpud
# (alone: the job waits in its lane) accepts a 253-partition job, then one
# client sends that SUBMIT again, unanswered, on 4 connections for 4 s while
# another client submits a fresh 1-partition job every 200 ms
# (client_tool flood).  Each repeat carries 253 witness fds that gpud holds
# while its intake thread hashes them; unbounded, they piled up in the intake
# by the thousand (fds, memory, the intake's time for everyone).  Checked:
#   - half a second after the last send, gpud holds no more fds
#     (/proc/PID/fd) than one repeat in its intake and one fresh job do
#     (253 + 16 above where it was), and after the flood none more than before.
#     Unbounded, the repeats queued in the intake kept thousands open then,
#     and for as long as the intake took to hash them all.  (While records
#     arrive, the event loop holds the fds of those it has received and not
#     yet handled, up to its receive buffers' worth: ipc/loop.h
#     recv_buffers; that window is the loop's, the same for any SUBMIT, and
#     is not what this checks.)
#   - every fresh job of the other client is accepted meanwhile;
#   - the repeats are still answered ACCEPTED (duplicate) naming the job, and
#     so is one more afterwards (czk submit, same request id);
#   - gpud stops on SIGTERM at once afterwards (nothing left queued in its
#     intake holds it).
# usage: submit_repeat.sh CZK GPUD SYNTH FIN TOOL SRC CLIENT_TOOL
. "$6/tests/pipeline/lib.sh"
CT=$7
NP=253

# wait_gpud: gpud answers STATUS
wait_gpud() {
    for _ in $(seq 1 150); do
        "$CZK" status --config "$CONF" >/dev/null 2>&1 && return 0
        sleep 0.1
    done
    bad "czk-gpud did not come up"; dump_logs; exit 1
}

write_config </dev/null
start_gpud
wait_gpud

log "a job of $NP partitions, request id repeat-victim"
submit victim multi $NP normal --request-id repeat-victim ||
    { bad "the first submission failed: $(cat "$T/sub.victim")"; exit 1; }
JOB=$(job_of "$T/sub.victim")
[ -n "$JOB" ] || { bad "no job id in: $(cat "$T/sub.victim")"; exit 1; }

log "the same SUBMIT again and again for 4 s, fresh jobs beside it"
"$CT" flood "$RT/czk.sock" repeat-victim multi "$FIX/multi/witness.wtns" $NP 4 "$GPUD_PID" >"$T/flood.out" 2>&1 ||
    { bad "client_tool flood failed: $(cat "$T/flood.out")"; exit 1; }
cat "$T/flood.out"
v() { awk -v k="$1" '$1 == k { print $2 }' "$T/flood.out"; }
before=$(v fds_before) settled=$(v fds_settled)
bound=$((before + NP + 16))
[ "$settled" -le "$bound" ] ||
    bad "czk-gpud still held $settled fds 0.5 s after the flood of repeats ($before before; bound $bound): repeats are not bounded"
# the last answers may still be on their way when the flood stops: a moment for them
for _ in $(seq 1 50); do
    n=$(ls "/proc/$GPUD_PID/fd" | wc -l)
    [ "$n" -le $((before + 8)) ] && break
    sleep 0.1
done
[ "$n" -le $((before + 8)) ] || bad "czk-gpud holds $n fds after the flood ($before before)"
[ "$(v sent)" -gt 50 ] || bad "the flood sent only $(v sent) repeats: it tested nothing"
[ "$(v legit_bad)" = 0 ] || bad "$(v legit_bad) fresh jobs of another client were not accepted during the flood"
[ "$(v legit_ok)" -ge 3 ] || bad "only $(v legit_ok) fresh jobs were accepted during the flood"
[ "$(v dup)" -ge 1 ] && [ "$(v dup_job)" = "$JOB" ] ||
    bad "the repeats got no ACCEPTED (duplicate) for job $JOB (dup $(v dup), job $(v dup_job))"

log "one more repeat: the job's duplicate answer"
submit again multi $NP normal --request-id repeat-victim ||
    bad "a repeat after the flood failed: $(cat "$T/sub.again")"
grep -q "^job $JOB accepted (duplicate" "$T/sub.again" || bad "a repeat after the flood: $(cat "$T/sub.again")"

log "SIGTERM"
kill -TERM "$GPUD_PID"
wait_exit "$GPUD_PID" 20 >/dev/null; rc=$?
[ "$rc" = 0 ] || bad "czk-gpud did not stop cleanly on SIGTERM (status $rc)"
GPUD_PID=""

[ "$fail" = 0 ] && echo "ok"
exit $fail
