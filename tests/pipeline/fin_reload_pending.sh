#!/bin/sh
# fin_reload_pending.sh — a proof waiting for disk space is never written
# under another key's identity (finalizer/main.c, fin_pending.vk_sha256),
# with the real daemons (tests/pipeline/lib.sh):
#   1. output_dir (a small tmpfs) is full; a job of circuit multi is proved
#      with key K1 and its proof waits in the finalizer's memory;
#   2. the zkey file is replaced by K2 (same circuit and sizes, another
#      setup) and czk-gpud restarted: it loads K2 and computes the partition
#      again; the finalizer, still running, reloads K2 when gpud announces it,
#      drops the K1 proof (logged) and holds the K2 one instead;
#   3. space returns: the written proof verifies (snarkjs) with K2's
#      verification key and not with K1's, identity.json names K2's
#      verification key, the partition is written once and DONE journaled
#      once.  (Before the fix the K1 proof was written, with an identity.json
#      claiming K2.)
# Needs root (mount -t tmpfs); skips 77 otherwise or without snarkjs.
# usage: fin_reload_pending.sh CZK GPUD SYNTH FIN TOOL SRC
[ "$(id -u)" = 0 ] || { echo "SKIP: needs root to mount a tmpfs"; exit 77; }
. "$6/tests/pipeline/lib.sh"
require_snarkjs

mount_tmpfs "$T/out" 2 czk-test-out

reload_setup # $K/multi.zkey = K1 (vkey in $T/fx1), $K/multi2.zkey = K2 ($T/fx2)
start_gpud; start_synth 0; start_fin
wait_up 1 || exit 1

# wait_line FILE PATTERN COUNT SECONDS: FILE has COUNT lines matching PATTERN
wait_line() {
    for _ in $(seq 1 $(($4 * 10))); do
        [ "$(grep -c "$2" "$1" 2>/dev/null)" -ge "$3" ] && return 0
        sleep 0.1
    done
    return 1
}
FULL="output_dir \"$T/out\" cannot take proofs"

log "output_dir fills up; a job proved with K1 waits for space"
dd if=/dev/zero of="$T/out/.filler" bs=4096 >/dev/null 2>&1
submit a multi 1 normal || { bad "submit a: $(cat "$T/sub.a")"; exit 1; }
J=$(job_of "$T/sub.a")
[ -n "$J" ] || { bad "job a was not accepted: $(cat "$T/sub.a")"; exit 1; }
wait_line "$T/logs/fin.log" "$FULL" 1 60 || { bad "the proof of job $J does not wait for space"; exit 1; }

log "the key becomes K2 and czk-gpud restarts; the finalizer reloads it"
cp "$K/multi2.zkey" "$K/multi.zkey.tmp" && mv "$K/multi.zkey.tmp" "$K/multi.zkey"
kill -TERM "$GPUD_PID"; wait_exit "$GPUD_PID" 20 >/dev/null || bad "gpud did not stop on SIGTERM"
start_gpud
wait_line "$T/logs/fin.log" "reloaded $K/multi.zkey, the key czk-gpud now uses" 1 60 ||
    { bad "the finalizer did not reload K2"; exit 1; }
# the K2 RESULT, proved and waiting for space in its turn, starts a second episode
wait_line "$T/logs/fin.log" "$FULL" 2 60 ||
    bad "the finalizer holds no K2 proof of job $J: the K1 proof still answers its RESULT"
grep -q "job $J partition 0: the proof waiting for disk space was made with circuit \"multi\"'s previous key" \
    "$T/logs/fin.log" || bad "the finalizer did not say that it dropped the K1 proof"

log "space again"
rm -f "$T/out/.filler"
wait_complete "$J" 120

log "checks: the proof is K2's, identity.json says K2, written and journaled once"
snap_journal
sort -u "$T/journal.all" >"$T/journal.uniq"
d=$T/out/$J/0
[ -f "$d/proof.json" ] || { bad "no proof.json in $d"; exit 1; }
cmp -s "$d/public.json" "$T/fx2/public.json" || bad "public.json is not multi's"
grep -q "\"vk_sha256\": \"" "$d/identity.json" || bad "identity.json has no vk_sha256: $(cat "$d/identity.json")"
echo "$T/fx2/verification_key.json $d/public.json $d/proof.json" >"$T/verify.list"
verify_batch
echo "$T/fx1/verification_key.json $d/public.json $d/proof.json" >"$T/cross.list"
node "$SRC/tests/pipeline/verify_batch.js" "$SNARKJS_DIR" <"$T/cross.list" >"$T/cross.out" 2>&1 &&
    bad "the proof written verifies with K1's verification key: the K1 proof was written"
n=$(grep -c "job $J partition 0: proof written after waiting for disk space\|job $J partition 0: proof verified and written" "$T/logs/fin.log")
[ "$n" = 1 ] || bad "job $J partition 0: written $n times (want 1)"
n=$(awk -v j="$J" '$2 == "DONE" && $3 == j && $4 == 0' "$T/journal.uniq" | wc -l)
[ "$n" = 1 ] || bad "job $J partition 0: DONE journaled $n times (want 1)"

[ "$fail" = 0 ] && echo "ok"
exit $fail
