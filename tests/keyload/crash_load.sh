#!/bin/sh
# crash_load.sh — kill -9 of czk-gpud while it loads its keys, while it hands
# them to the backend, and right after, then restarts: every accepted job
# completes exactly once (check_all: proofs verify with snarkjs, written once,
# DONE and ACCEPT journaled once).  Rounds:
#   1. jobs accepted while every key load is held back (gpud.start.key_load:sleep);
#      SIGKILL from outside during the load;
#   2. restart; killed by the fault point right after the first key's record
#      is written (gpud.start.after_key_record:kill);
#   3. restart; killed as the first key is handed to the backend
#      (gpud.start.key_upload:kill; the records make those loads skip the checks);
#   4. restart normally; once partitions are moving, SIGKILL, and restart
#      with the loads held back again: what was READY in the slots waits for
#      its key, then everything completes.
# usage: crash_load.sh CZK GPUD SYNTH FIN TOOL SRC
. "$6/tests/pipeline/lib.sh"
require_snarkjs

write_config </dev/null
wait_gpud_dead() { # POINT: the fault point kills it (SIGKILL: 137, and its log line)
    wait_exit "$GPUD_PID" 60; rc=$?
    [ $rc = 137 ] && grep -q "fault point $1: SIGKILL" "$T/logs/gpud.log" ||
        { bad "gpud did not die at $1 (exit $rc)"; kill9 "$GPUD_PID"; }
    GPUD_PID=""
}
sub_bg() { # NAME CIRCUIT NPARTS PRIO: fire and forget (the job number is read afterwards)
    submit "$@" --request-id "crash-$1" || bad "submission $1 failed: $(cat "$T/sub.$1")"
    j=$(job_of "$T/sub.$1")
    [ -n "$j" ] && expect_job "$j" "$2" "$3"
}

log "1. jobs accepted during the load, kill -9 during the load"
start_gpud "gpud.start.key_load:sleep=4000"
start_synth 0; start_fin
wait_up 1 || exit 1
sub_bg a multi 3 normal
sub_bg b linear 2 high
sub_bg c poseidon 1 low
"$CZK" status --config "$CONF" >"$T/status.txt" 2>&1
grep -q "loading (" "$T/status.txt" || bad "round 1: no circuit is loading: $(cat "$T/status.txt")"
grep -q 'key for circuit "multi" is loading' "$T/status.txt" || bad "round 1: job a does not wait for its key"
kill9 "$GPUD_PID"

log "2. killed right after a key was loaded and its record written"
start_gpud "gpud.start.after_key_record:kill"
wait_gpud_dead gpud.start.after_key_record
ls "$T/state/keys/"*.verified >/dev/null 2>&1 || bad "round 2: no verified-key record was written"

log "3. killed while a key is handed to the backend"
start_gpud "gpud.start.key_upload:kill"
wait_gpud_dead gpud.start.key_upload

log "4. partitions moving, kill -9, restart with the loads held back"
start_gpud
wait_up 1 || exit 1
sub_bg d multi 4 normal
moving=0
for _ in $(seq 1 600); do
    s=$(status_json) && echo "$s" | grep -q '"gpu": [1-9]\|"synth": [1-9]' && { moving=1; break; }
    sleep 0.05
done
[ $moving = 1 ] || bad "round 4: no partition of job d was moving after 30 s: the kill would crash nothing"
kill9 "$GPUD_PID"
# the job was still running at the kill (the journal is as gpud left it)
jd=$(job_of "$T/sub.d")
journal_complete "$jd" && bad "round 4: job d ($jd) was complete before the kill"
start_gpud "gpud.start.key_load:sleep=2000"
wait_up 1 || exit 1
"$CZK" status --config "$CONF" >"$T/status.txt" 2>&1
grep -q "loading (" "$T/status.txt" || bad "round 4: no circuit is loading after the restart"
sub_bg e range 1 normal
check_all
grep -q "point checks skipped" "$T/logs/gpud.log" || bad "no restart used the verified-key records"
exit $fail
