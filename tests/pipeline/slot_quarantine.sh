#!/bin/sh
# slot_quarantine.sh — a closed synth link is not a dead synth.  gpud closes
# the link of a synth that is alive and in the middle of a fill (here: a key
# reload, which disconnects every synth); that synth's fill thread may still
# write the slot until it notices.  gpud must requeue the partition at once
# but keep the slot out of use (quarantined) until the synth's process exits
# or connects again (which it does only once its fill has stopped), so a
# second synth on the pool is never handed a slot the first may still write.
#
# Synth 0 takes a slot for a linear partition and sleeps 8 s in the fill
# (fault point synth.before_fill, after ASSIGNED -> FILLING); the reload then
# closes its link.  While it sleeps the slot must be quarantined and in use.
# Synth 1 starts and proves a poseidon partition (high lane) and the requeued
# linear one; gpud sleeps 8 s after its first READY (fault point
# gpud.after_ready), so that a stale write of synth 0 would land in synth 1's
# slot before the worker checks it.  Without the quarantine synth 1 got synth
# 0's slot, and synth 0's late writes broke its checksum ("failed the checksum
# before the copy"; had they come before synth 1's CRC, the finalizer's
# pairing check would have failed the partition).  Afterwards: no checksum
# failure, the quarantine ended when synth 0 connected again, no slot in use
# or quarantined, and snarkjs accepts both proofs.
# usage: slot_quarantine.sh CZK GPUD SYNTH FIN TOOL SRC
. "$(dirname "$0")/lib.sh"
require_snarkjs

reload_setup # SLOTS=2; circuit multi's key is $K/multi.zkey, $K/multi2.zkey the same sizes

# poll_log FILE PATTERN SECONDS
poll_log() {
    for _ in $(seq 1 $(($3 * 5))); do grep -q "$2" "$1" 2>/dev/null && return 0; sleep 0.2; done
    return 1
}

start_gpud gpud.after_ready:sleep=8000@1
start_fin
start_synth 0 synth.before_fill:sleep=8000@1
wait_up 1 || exit 1

log "synth 0 takes a slot for a linear partition and sleeps in the fill"
submit j1 linear 1 normal || { bad "submit j1: $(cat "$T/sub.j1")"; exit 1; }
J1=$(job_of "$T/sub.j1")
poll_log "$T/logs/synth0.log" "fault point synth.before_fill" 10 || { bad "synth 0 did not start its fill"; exit 1; }

log "a key reload closes the link of synth 0, which lives on in its fill"
cp "$K/multi2.zkey" "$K/multi.tmp" && mv "$K/multi.tmp" "$K/multi.zkey"
kill -HUP "$GPUD_PID"
poll_log "$T/logs/gpud.log" "synth pid $SYNTH0_PID gone" 10 || { bad "the reload did not disconnect synth 0"; exit 1; }
kill -0 "$SYNTH0_PID" 2>/dev/null || bad "synth 0 exited (it must live on in its fill)"
[ "$(grep -c "connected to czk-gpud" "$T/logs/synth0.log")" = 1 ] ||
    bad "synth 0 connected again before the check: its fill did not sleep long enough for this test"
q=$(st pools.0.quarantined) u=$(st pools.0.in_use)
[ "$q" = 1 ] || bad "while synth 0 may still write its slot, pool 0 has ${q:-?} quarantined slots (expected 1)"
[ "$u" = 1 ] || bad "while synth 0 may still write its slot, pool 0 has ${u:-?} slots in use (expected 1)"
[ "$(st partitions.queued)" = 1 ] || bad "the linear partition was not requeued at once"

log "synth 1 starts: a poseidon partition (high lane), then the requeued linear one"
submit j2 poseidon 1 high || { bad "submit j2: $(cat "$T/sub.j2")"; exit 1; }
J2=$(job_of "$T/sub.j2")
start_synth 1
wait_complete "$J2" 60
wait_complete "$J1" 60
grep "failed the checksum before the copy" "$T/logs/gpud.log" >&2 &&
    bad "a slot was written by two synths: its checksum failed before the copy"
poll_log "$T/logs/gpud.log" "quarantine ended (synth pid $SYNTH0_PID connected again" 30 ||
    bad "the quarantined slot did not come back when synth 0 connected again"
grep -q "synth pid $SYNTH0_PID gone: 1 partitions requeued; its process still runs" "$T/logs/gpud.log" ||
    bad "gpud did not log keeping synth 0's slot quarantined"
q=$(st pools.0.quarantined) u=$(st pools.0.in_use)
[ "$q" = 0 ] || bad "at the end pool 0 still has ${q:-?} quarantined slots"
[ "$u" = 0 ] || bad "at the end pool 0 still has ${u:-?} slots in use"

expect_job "$J1" linear 1
expect_job "$J2" poseidon 1
check_all
[ "$fail" = 0 ] && echo "ok"
exit $fail
