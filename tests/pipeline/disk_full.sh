#!/bin/sh
# disk_full.sh — the finalizer with a full output_dir (a small tmpfs filled up
# with a filler file), with the real daemons (tests/pipeline/lib.sh):
#   1. a job submitted while the disk is full is proved and verified, but its
#      proofs cannot be written: the finalizer keeps them in memory (one
#      "cannot take proofs" warning, czk_finalizer_pending_writes = the number
#      of partitions, czk_finalizer_disk_full_episodes_total = 1, retries
#      counted), no partition fails, nothing is left under output_dir and the
#      waiting client is still waiting;
#   2. the finalizer is restarted twice while the proofs wait (SIGTERM, then
#      kill -9): the proofs held in memory are lost with it, czk-gpud sends
#      their RESULTs again when the new one connects, and the new one holds
#      them again (its own gauge back at the partition count);
#   3. the filler is removed and nothing else is done: the retry timer writes
#      every waiting proof, both jobs complete, the waiting client gets its
#      proofs, each partition's proof.json is written exactly once (one
#      "proof written after waiting for disk space" line, no other write, no
#      answer from files, inode and mtime unchanged until the end), one DONE
#      and one ACCEPT journaled each, and snarkjs verifies every proof.
# Needs root (mount -t tmpfs); skips 77 otherwise or without snarkjs.
# usage: disk_full.sh CZK GPUD SYNTH FIN TOOL SRC
[ "$(id -u)" = 0 ] || { echo "SKIP: needs root to mount a tmpfs"; exit 77; }
. "$6/tests/pipeline/lib.sh"
require_snarkjs
command -v curl >/dev/null 2>&1 || { echo "SKIP: curl is needed to read the finalizer's metrics"; exit 77; }

mount_tmpfs "$T/out" 2 czk-test-out

# a free TCP port for the finalizer's metrics (other tests may hold the default)
PORT=""
for _ in $(seq 1 50); do
    p=$(awk -v s="$$$(date +%N)" 'BEGIN { srand(s); print 20000 + int(rand() * 40000) }')
    ss -ltn 2>/dev/null | awk '{ print $4 }' | grep -q ":$p\$" || { PORT=$p; break; }
done
[ -n "$PORT" ] || { bad "no free TCP port for the finalizer's metrics"; exit 1; }
write_config <<CONF
[finalizer]
metrics_port = $PORT
CONF

# metric NAME: its value in the running finalizer (empty when it does not answer)
metric() {
    curl -s --max-time 5 "http://127.0.0.1:$PORT/metrics" 2>/dev/null | awk -v n="$1" '$1 == n { print $2 }'
}
# wait_metric NAME VALUE SECONDS
wait_metric() {
    for _ in $(seq 1 $(($3 * 5))); do
        [ "$(metric "$1")" = "$2" ] && return 0
        sleep 0.2
    done
    bad "$1 is $(metric "$1"), not $2, after $3 s"
    return 1
}
# the finalizer's log lines for JOB PART matching PATTERN
fin_lines() { grep -c "job $1 partition $2: $3" "$T/logs/fin.log"; }

start_gpud; start_synth 0; start_fin
wait_up 1 || exit 1
wait_metric czk_finalizer_gpud_connected 1 10 || exit 1

log "output_dir fills up"
dd if=/dev/zero of="$T/out/.filler" bs=4096 >/dev/null 2>&1
[ "$(df -P "$T/out" | awk 'NR == 2 { print $4 }')" = 0 ] || bad "the filler did not fill output_dir: $(df -P "$T/out")"
start_sampler

log "a waiting job (3 partitions) and a fire-and-forget one (2) while it is full"
submit a linear 3 normal --request-id disk-full-a --wait --out "$T/client/a" & WAIT_PID=$!
for _ in $(seq 1 100); do grep -q "^job [0-9]* accepted" "$T/sub.a" 2>/dev/null && break; sleep 0.1; done
JA=$(job_of "$T/sub.a")
[ -n "$JA" ] || { bad "job a was not accepted: $(cat "$T/sub.a")"; exit 1; }
submit b range 2 high --request-id disk-full-b || { bad "job b was not accepted: $(cat "$T/sub.b")"; exit 1; }
JB=$(job_of "$T/sub.b")
expect_job "$JA" linear 3 "$T/client/a"
expect_job "$JB" range 2

# held: all five proofs verified and kept in memory by the finalizer of the moment
held() { # WHICH (which finalizer: 1 the first, ...)
    wait_metric czk_finalizer_pending_writes 5 60 || return 1
    n=$(grep -c "output_dir \"$T/out\" cannot take proofs" "$T/logs/fin.log")
    [ "$n" = "$1" ] || bad "$n \"cannot take proofs\" warnings after $1 finalizer(s) met the full disk (want one each)"
    [ "$(metric czk_finalizer_disk_full_episodes_total)" = 1 ] ||
        bad "czk_finalizer_disk_full_episodes_total is $(metric czk_finalizer_disk_full_episodes_total), not 1"
    [ "$(metric czk_finalizer_proofs_total)" = 0 ] || bad "the finalizer counts proofs written while the disk is full"
    for j in "$JA" "$JB"; do
        [ -e "$T/out/$j/0/proof.json" ] && bad "job $j: a proof.json exists while output_dir is full"
        s=$("$CZK" status --config "$CONF" --json --job "$j" 2>/dev/null)
        echo "$s" | grep -A3 '"job": {' | grep -q '"state": "complete"' && bad "job $j complete while nothing could be written"
        echo "$s" | grep -q '"failed": [1-9]' && bad "job $j has failed partitions while waiting for space: $s"
    done
    grep -q "could not\|failed" "$T/sub.a" && bad "the waiting client saw a failure: $(cat "$T/sub.a")"
    kill -0 "$WAIT_PID" 2>/dev/null || bad "the waiting client ended while its proofs wait for space: $(cat "$T/sub.a")"
    return 0
}
held 1 || exit 1
# the retry timer runs (0.5 s, then doubling) and finds the disk still full
for _ in $(seq 1 50); do [ "${r:-0}" -ge 2 ] && break; sleep 0.2; r=$(metric czk_finalizer_write_retries_total); done
[ "${r:-0}" -ge 2 ] || bad "czk_finalizer_write_retries_total is ${r:-nothing} after 10 s (want >= 2)"

log "the finalizer is stopped (SIGTERM) and started again while the proofs wait"
kill -TERM "$FIN_PID"; wait_exit "$FIN_PID" 20 >/dev/null || bad "the finalizer did not stop on SIGTERM"
grep -q "stopping with 5 proofs still waiting for disk space" "$T/logs/fin.log" ||
    bad "the stopping finalizer did not say that 5 proofs were waiting"
start_fin
held 2 || exit 1

log "the finalizer is killed (-9) and started again while the proofs wait"
kill9 "$FIN_PID"
start_fin
held 3 || exit 1

log "space again: the retry timer writes the proofs, no new submission"
rm -f "$T/out/.filler"
wait_complete "$JA" 120
wait_complete "$JB" 120
wait_exit "$WAIT_PID" 60; rc=$?
[ $rc = 0 ] || bad "the waiting client exited $rc: $(cat "$T/sub.a")"
grep -q "^job $JA done: 3 partitions proved" "$T/sub.a" || bad "the waiting client did not see job $JA done: $(cat "$T/sub.a")"
wait_metric czk_finalizer_pending_writes 0 10
[ "$(metric czk_finalizer_proofs_total)" = 5 ] || bad "czk_finalizer_proofs_total is $(metric czk_finalizer_proofs_total), not 5"
grep -q "output_dir \"$T/out\" takes proofs again: 5 waiting proofs written" "$T/logs/fin.log" ||
    bad "the finalizer did not log the end of the episode (5 proofs written)"

log "checks: each proof written once, journaled once, verified"
stop_sampler
snap_journal
snap_files
sort -u "$T/journal.all" >"$T/journal.uniq"
while read -r job circ np cout; do
    p=0
    while [ $p -lt "$np" ]; do
        d=$T/out/$job/$p
        if [ -f "$d/proof.json" ] && [ -f "$d/public.json" ]; then
            cmp -s "$d/public.json" "$FIX/$circ/public.json" || bad "job $job partition $p: public.json is not $circ's"
            echo "$FIX/$circ/verification_key.json $d/public.json $d/proof.json" >>"$T/verify.list"
        else
            bad "job $job partition $p: no proof.json/public.json in $d"
        fi
        if [ "$cout" != - ]; then
            cmp -s "$cout/$p/proof.json" "$d/proof.json" || bad "job $job partition $p: the client's proof.json differs"
        fi
        n=$(fin_lines "$job" "$p" "proof written after waiting for disk space")
        [ "$n" = 1 ] || bad "job $job partition $p: written $n times after the wait (want 1)"
        n=$(fin_lines "$job" "$p" "proof verified and written")
        [ "$n" = 0 ] || bad "job $job partition $p: also written directly $n times"
        n=$(fin_lines "$job" "$p" "already written")
        [ "$n" = 0 ] || bad "job $job partition $p: answered from files $n times (a RESULT came again after the write)"
        n=$(awk -v j="$job" -v p="$p" '$2 == "DONE" && $3 == j && $4 == p && $5 == 0' "$T/journal.uniq" | wc -l)
        [ "$n" = 1 ] || bad "job $job partition $p: DONE journaled $n times (must be exactly once)"
        p=$((p + 1))
    done
    [ -e "$T/out/$job/$np" ] && bad "job $job: a partition directory beyond its $np partitions"
    n=$(awk -v j="$job" '$2 == "ACCEPT" && $3 == j' "$T/journal.uniq" | wc -l)
    [ "$n" = 1 ] || bad "job $job: ACCEPT journaled $n times"
done <"$T/expect"
[ -z "$(ls -A "$T/out/.stale" 2>/dev/null)" ] || bad "files were moved aside to .stale: $(ls "$T/out/.stale")"
cat "$T/files.sampled" 2>/dev/null >>"$T/files.snap"
sort -u "$T/files.snap" | awk '{ if (($1 in seen) && seen[$1] != $2 " " $3) print $1; seen[$1] = $2 " " $3 }' \
    >"$T/rewritten"
[ -s "$T/rewritten" ] && bad "proof files rewritten after they were first written: $(cat "$T/rewritten")"
verify_batch
n=$(grep -c "^OK " "$T/verify.out" 2>/dev/null)
[ "$n" = 5 ] || bad "$n proofs verified by snarkjs, want 5"
[ "$fail" = 0 ] && echo "ok"
exit $fail
