#!/bin/sh
# fin_exclusive.sh — one czk-finalizer per output_dir, and its temporary
# files are its own (finalizer/main.c lock_output, finalizer/output.c
# write_atomic), with the real daemons (tests/pipeline/lib.sh):
#   1. a job waits for a finalizer while output_dir holds, under each
#      temporary name of its partition 0 (.public.json.tmp ... .proof.json.tmp),
#      a symbolic link to a file outside (what a dead predecessor or anyone
#      else could leave there): the finalizer writes the proofs, the files the
#      links point to are unchanged and no proof file is a link;
#   2. a second czk-finalizer with the same configuration exits with status
#      2 and a line naming the first one's pid and the lock, without
#      connecting to czk-gpud; the first stays connected and proves the next
#      job;
#   3. every partition written and journaled once, snarkjs accepts each proof.
# usage: fin_exclusive.sh CZK GPUD SYNTH FIN TOOL SRC
. "$(dirname "$0")/lib.sh"
require_snarkjs

write_config </dev/null
start_gpud; start_synth 0
for _ in $(seq 1 100); do [ -S "$RT/czk.sock" ] && break; sleep 0.1; done

log "a job waits for a finalizer; symbolic links stand where its temporary files go"
submit a multi 2 normal || { bad "submit a: $(cat "$T/sub.a")"; exit 1; }
JA=$(job_of "$T/sub.a")
[ -n "$JA" ] || { bad "job a was not accepted: $(cat "$T/sub.a")"; exit 1; }
mkdir -p "$T/out/$JA/0" "$T/victims"
for n in public timings identity proof; do
    echo "not the finalizer's: $n" >"$T/victims/$n"
    ln -s "$T/victims/$n" "$T/out/$JA/0/.$n.json.tmp"
done
expect_job "$JA" multi 2

start_fin
FIRST=$FIN_PID
wait_up 1 || exit 1
wait_complete "$JA" 120
for n in public timings identity proof; do
    [ "$(cat "$T/victims/$n")" = "not the finalizer's: $n" ] ||
        bad "the file behind .$n.json.tmp was written through the link: $(head -c 80 "$T/victims/$n")"
    [ -L "$T/out/$JA/0/$n.json" ] && bad "$n.json is a symbolic link (the leftover link was renamed into place)"
    [ -e "$T/out/$JA/0/.$n.json.tmp" ] && bad ".$n.json.tmp is still there after the write"
done
[ "$(stat -c %a "$T/out/.finalizer.lock" 2>/dev/null)" = 640 ] || bad "no lock file $T/out/.finalizer.lock (mode 0640)"

log "a second finalizer with the same configuration is refused"
start_fin
SECOND=$FIN_PID
FIN_PID=$FIRST
wait_exit "$SECOND" 20; rc=$?
if [ $rc = 124 ]; then
    bad "the second finalizer is still running 20 s later"
    kill -KILL "$SECOND" 2>/dev/null; wait "$SECOND" 2>/dev/null
elif [ $rc != 2 ]; then
    bad "the second finalizer exited $rc, want 2"
fi
grep -q "another czk-finalizer (pid $FIRST) holds \"$T/out/.finalizer.lock\"" "$T/logs/fin.log" ||
    bad "no line naming the first finalizer (pid $FIRST) and the lock: $(tail -n 3 "$T/logs/fin.log")"
n=$(grep -c "connected to czk-gpud" "$T/logs/fin.log")
[ "$n" = 1 ] || bad "\"connected to czk-gpud\" logged $n times (the second finalizer must not connect)"
kill -0 "$FIRST" 2>/dev/null || bad "the first finalizer is gone"

log "the first one still proves"
submit b multi 1 normal || { bad "submit b: $(cat "$T/sub.b")"; exit 1; }
JB=$(job_of "$T/sub.b")
expect_job "$JB" multi 1
check_all
[ "$(st finalizer)" = 1 ] || bad "the finalizer is not connected at the end"

[ "$fail" = 0 ] && echo "ok"
exit $fail
