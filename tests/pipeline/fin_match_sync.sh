#!/bin/sh
# fin_match_sync.sh — a RESULT answered from files already written is
# answered only once those files are durable (finalizer/output.c
# fin_output_sync), with the real daemons (tests/pipeline/lib.sh):
#   1. the finalizer dies (fault point finalizer.after_write:exit) after it
#      wrote a partition's files and before its DONE;
#   2. a new finalizer, run under strace, gets the RESULT again and answers
#      it from the files; before its "already written, answering from the
#      files" line it fsyncs proof.json, public.json, identity.json, the
#      partition's directory, the job's directory and output_dir (a finalizer
#      that died between its renames and its directory fsync leaves files
#      that are only in the page cache: a DONE from them without these fsyncs
#      is journaled by czk-gpud for a proof a power loss can take away);
#   3. the job completes, each partition written once, DONE journaled once,
#      snarkjs accepts the proofs.
# A power loss cannot be staged here, so the test watches the system calls
# (strace -y names each fd's path) instead of adding a counter to the
# finalizer for it.  Skips 77 without strace or when ptrace is not allowed.
# usage: fin_match_sync.sh CZK GPUD SYNTH FIN TOOL SRC
. "$(dirname "$0")/lib.sh"
require_snarkjs
command -v strace >/dev/null 2>&1 || { echo "SKIP: strace is needed"; exit 77; }
strace -f -o /dev/null true 2>/dev/null || { echo "SKIP: strace cannot trace here (ptrace refused)"; exit 77; }

write_config </dev/null
start_gpud; start_synth 0
start_fin finalizer.after_write:exit
wait_up 1 || exit 1

log "the finalizer dies after writing the first partition's files, before its DONE"
submit a multi 1 normal || { bad "submit a: $(cat "$T/sub.a")"; exit 1; }
J=$(job_of "$T/sub.a")
wait_exit "$FIN_PID" 60; rc=$?
[ $rc = 99 ] || { bad "the finalizer did not stop at finalizer.after_write (exit $rc)"; exit 1; }
[ -f "$T/out/$J/0/proof.json" ] || { bad "no proof.json after finalizer.after_write"; exit 1; }
expect_job "$J" multi 1
snap_files

log "a new finalizer under strace answers the re-sent RESULT from the files"
strace -f -y -qq -s 512 -e trace=fsync,fdatasync,write -o "$T/strace.out" \
    "$FIN" --config "$CONF" >>"$T/logs/fin.log" 2>&1 & STRACE_PID=$!
for _ in $(seq 1 50); do FIN_PID=$(pgrep -P "$STRACE_PID" | head -1); [ -n "$FIN_PID" ] && break; sleep 0.1; done
[ -n "$FIN_PID" ] || { bad "the finalizer under strace did not start"; exit 1; }
wait_complete "$J" 120
grep -q "job $J partition 0: already written, answering from the files" "$T/logs/fin.log" ||
    bad "the re-sent RESULT was not answered from the files"
check_all
stop_all
wait "$STRACE_PID" 2>/dev/null

# the calls before the "already written" line are the ones that must sync
awk -v pat="job $J partition 0: already written" 'index($0, pat) { exit } { print }' "$T/strace.out" >"$T/strace.before"
grep -q "already written" "$T/strace.out" || bad "strace did not see the \"already written\" line being written"
D=$(cd "$T/out" && pwd -P)
for p in "$D/$J/0/proof.json" "$D/$J/0/public.json" "$D/$J/0/identity.json" "$D/$J/0" "$D/$J" "$D"; do
    grep -E "(fsync|fdatasync)\([0-9]+<$p>\) += 0" "$T/strace.before" >/dev/null ||
        bad "$p was not fsynced before the RESULT was answered from the files"
done

[ "$fail" = 0 ] && echo "ok"
exit $fail
