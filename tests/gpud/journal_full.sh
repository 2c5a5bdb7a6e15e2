#!/bin/sh
# journal_full.sh — czk-gpud's journal with the real daemons (tests/pipeline/lib.sh):
#   1. state_dir on a small tmpfs (the spool on a second one, so that only the
#      journal runs out of space): once it is full, a submit is REJECTED with
#      "state_dir is full", the next one at once, one log line for the episode;
#      after space is freed a submit is accepted again and every job accepted
#      before, during and after completes exactly once (proofs verified by
#      snarkjs, one DONE and one ACCEPT each in the journal);
#   2. a corrupt record: czk-gpud refuses to start, exit status 2, its message
#      names the offset and `czk journal check`;
#   3. a deleted journal: exit status 2 ("missing"); after the documented
#      recovery (the id mark moved aside) job ids continue above the old ones.
# Needs root (mount -t tmpfs); skips 77 otherwise.
# usage: journal_full.sh CZK GPUD SYNTH FIN TOOL SRC
[ "$(id -u)" = 0 ] || { echo "SKIP: needs root to mount a tmpfs"; exit 77; }
. "$6/tests/pipeline/lib.sh"
require_snarkjs

mount_tmpfs "$T/state" 1 czk-test-state
mount_tmpfs "$T/state/spool" 16 czk-test-spool

write_config </dev/null
start_gpud; start_synth 0; start_fin
wait_up 1 || exit 1
start_sampler

log "a job before the disk fills"
submit a0 multi 1 normal --request-id full-a0 --wait || bad "first job: $(cat "$T/sub.a0")"
expect_job "$(job_of "$T/sub.a0")" multi 1

log "state_dir fills up"
dd if=/dev/zero of="$T/state/filler" bs=4096 >/dev/null 2>&1
i=0 refused=""
while [ $i -lt 40 ]; do
    i=$((i + 1))
    if submit "f$i" multi 1 normal --request-id "full-f$i"; then
        expect_job "$(job_of "$T/sub.f$i")" multi 1
    else
        refused=$i
        break
    fi
done
[ -n "$refused" ] || { bad "40 submits accepted with state_dir full"; exit 1; }
grep -q "rejected: state_dir is full" "$T/sub.f$refused" || bad "the refusal does not say why: $(cat "$T/sub.f$refused")"
job_of "$T/sub.f$refused" | grep -q . && bad "a refused submit printed a job id"
submit g1 linear 1 high --request-id full-g1 && bad "a submit was accepted while the journal cannot be written"
grep -q "state_dir is full" "$T/sub.g1" || bad "second refusal: $(cat "$T/sub.g1")"
n=$(grep -c "journal: could not append" "$T/logs/gpud.log")
[ "$n" = 1 ] || bad "$n log lines for one episode of journal failures (want 1)"
for d in "$T/state/spool"/*; do
    [ -d "$d" ] || continue
    id=${d##*/}
    grep -q "^$id " "$T/expect" || bad "the spool of a refused submit is left: $d"
done

log "space again"
rm -f "$T/state/filler"
submit z0 multi 1 normal --request-id full-z0 --wait || bad "no job accepted after space was freed: $(cat "$T/sub.z0")"
expect_job "$(job_of "$T/sub.z0")" multi 1
grep -q "journal: appends work again" "$T/logs/gpud.log" || bad "gpud did not log the end of the episode"
check_all

log "a corrupt record stops gpud (exit 2)"
max=$(awk '{ print $1 }' "$T/expect" | sort -n | tail -n 1)
kill -TERM "$GPUD_PID"; wait_exit "$GPUD_PID" 20 >/dev/null; GPUD_PID=""
cp "$T/state/journal" "$T/journal.good"
# one byte inside the first record's payload (file header 40, record header 24)
printf '\377' | dd of="$T/state/journal" bs=1 seek=70 conv=notrunc 2>/dev/null
"$GPUD" --config "$CONF" >"$T/logs/gpud.corrupt.log" 2>&1; rc=$?
[ $rc = 2 ] || bad "gpud started on a corrupt journal (exit $rc, want 2)"
grep -q "corrupt at offset 40" "$T/logs/gpud.corrupt.log" && grep -q "czk journal check" "$T/logs/gpud.corrupt.log" ||
    bad "the refusal does not name the record and the tools: $(tail -n 2 "$T/logs/gpud.corrupt.log")"

log "a deleted journal stops gpud (exit 2); after the recovery ids go on above the old ones"
rm -f "$T/state/journal"
"$GPUD" --config "$CONF" >"$T/logs/gpud.missing.log" 2>&1; rc=$?
[ $rc = 2 ] && grep -q "missing" "$T/logs/gpud.missing.log" ||
    bad "gpud without its journal: exit $rc, $(tail -n 1 "$T/logs/gpud.missing.log")"
mv "$T/state/next_job_id" "$T/state/next_job_id.old"
start_gpud
wait_up 1 || exit 1
submit n0 linear 1 normal --request-id full-n0 || bad "submit after the recovery: $(cat "$T/sub.n0")"
id=$(job_of "$T/sub.n0")
[ -n "$id" ] && [ "$id" -gt "$max" ] || bad "job id $id after the journal was lost; ids went up to $max before"
[ "$fail" = 0 ] && echo "ok"
exit $fail
