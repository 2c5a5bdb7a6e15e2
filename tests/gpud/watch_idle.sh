#!/bin/sh
# watch_idle.sh — a connection that follows a job (SUBMIT with the wait flag)
# is exempt from client_idle_timeout_s only while the job is active: after the
# job's final EVENT it is closed once idle like any other (gpud/events.c
# gpud_watch_end).  client_idle_timeout_s = 2 (client_tool idle):
#   1. gpud alone, so the job waits in its lane: the waiting connection is
#      kept for 5 s while a connection without a job is closed; then it
#      cancels the job, and after the CANCELLED event gpud closes it;
#   2. with a synth and the finalizer: the job completes, and after its DONE
#      event gpud closes the connection.
# usage: watch_idle.sh CZK GPUD SYNTH FIN TOOL SRC CLIENT_TOOL
. "$6/tests/pipeline/lib.sh"
CT=$7

GPUD_EXTRA="client_idle_timeout_s = 2" write_config </dev/null
start_gpud
for _ in $(seq 1 150); do "$CZK" status --config "$CONF" >/dev/null 2>&1 && break; sleep 0.1; done

log "a cancelled job: the connection that waited is closed once idle"
"$CT" idle "$RT/czk.sock" cancel idle-cancel multi "$FIX/multi/witness.wtns" 2 15 >"$T/cancel.out" 2>&1 ||
    bad "after a cancelled job: $(cat "$T/cancel.out")"
cat "$T/cancel.out"

log "a complete job: the connection that waited is closed once idle"
start_synth 0; start_fin
wait_up 1 || exit 1
"$CT" idle "$RT/czk.sock" done idle-done multi "$FIX/multi/witness.wtns" 2 15 >"$T/done.out" 2>&1 ||
    bad "after a complete job: $(cat "$T/done.out")"
cat "$T/done.out"

[ "$fail" = 0 ] && echo "ok"
exit $fail
