#!/bin/sh
# loading.sh — czk-gpud answers while its keys load, and one broken key does
# not stop the others (issue 13):
#   - with every key's load held back (CZK_FAULT gpud.start.key_load:sleep) and the
#     backend's creation too, `czk status` answers at once: state "starting",
#     circuits "loading";
#   - a job submitted meanwhile is accepted, waits with the reason
#     `key for circuit "multi" is loading (n%)`, then completes, and its
#     proofs verify (`czk verify`, and snarkjs through check_all: exactly once);
#   - a circuit whose zkey has one byte of a point flipped (random point,
#     seed printed) and one whose zkey is truncated show `failed` with the
#     reason (the point; the section size), in the text and the JSON status,
#     while the other circuits prove; a SUBMIT for a failed circuit is
#     rejected naming the reason.
# The daemons other than gpud run on a config without the broken circuits
# (they would refuse to start with a truncated zkey).
# usage: loading.sh CZK GPUD SYNTH FIN TOOL SRC
. "$6/tests/pipeline/lib.sh"
require_snarkjs
command -v python3 >/dev/null || { echo "SKIP: python3 needed to edit the zkeys"; exit 77; }
EDIT="python3 $SRC/tests/keyload/zkey_edit.py"
SEED=${CZK_TEST_SEED:-$(od -An -N4 -tu4 /dev/urandom | tr -d ' ')}
log "seed $SEED (CZK_TEST_SEED=$SEED replays it)"

mkdir -p "$T/keys"
cp "$FIX/multi/circuit.zkey" "$T/keys/flipped.zkey"
$EDIT flip "$T/keys/flipped.zkey" $((5 + SEED % 5)) "$SEED" || { bad "could not edit the zkey"; exit 1; }
cp "$FIX/linear/circuit.zkey" "$T/keys/short.zkey"
set -- $($EDIT offset "$T/keys/short.zkey" 9) # cut inside the H points
truncate -s $(($1 + SEED % $2)) "$T/keys/short.zkey"

write_config </dev/null
{ cat "$CONF"; printf '[circuit.flipped]\nzkey = %s\n[circuit.short]\nzkey = %s\n' "$T/keys/flipped.zkey" \
    "$T/keys/short.zkey"; } >"$T/gpud.conf"
start_gpud_conf() { # FAULT
    snap_journal
    CZK_FAULT=${1:-} "$GPUD" --config "$T/gpud.conf" >>"$T/logs/gpud.log" 2>&1 & GPUD_PID=$!
}
start_gpud_conf "gpud.start.key_load:sleep=4000,gpud.start.backend_create:sleep=1500"
start_synth 0; start_fin

# status answers before any key is loaded: starting, every circuit loading
ok=0
for _ in $(seq 1 50); do
    "$CZK" status --config "$CONF" >"$T/status.txt" 2>&1 && { ok=1; break; }
    sleep 0.1
done
[ $ok = 1 ] || { bad "czk status does not answer while the keys load"; cat "$T/status.txt" >&2; exit 1; }
grep -q "starting" "$T/status.txt" || bad "status does not say the backend is starting: $(cat "$T/status.txt")"
grep -q "^circuits *multi *loading ([0-9]*%)" "$T/status.txt" || bad "status does not show multi loading"
status_json >"$T/status.json"
grep -q '"state": "starting"' "$T/status.json" || bad "JSON status has no \"state\": \"starting\""
grep -q '"state": "loading"' "$T/status.json" || bad "JSON status shows no circuit loading"

# a job for a loading circuit is accepted and waits with the reason
wait_up 1 || exit 1
submit a multi 2 normal --wait --out "$T/client-a" --request-id load-a &
SUB=$!
seen=0
for _ in $(seq 1 30); do
    "$CZK" status --config "$CONF" >"$T/status.txt" 2>&1
    grep -q 'key for circuit "multi" is loading ([0-9]*%)' "$T/status.txt" && { seen=1; break; }
    sleep 0.1
done
[ $seen = 1 ] || { bad "the waiting job does not say the key is loading"; cat "$T/status.txt" >&2; }
wait "$SUB" || bad "the job submitted during the load failed: $(cat "$T/sub.a")"
JOB=$(job_of "$T/sub.a")
[ -n "$JOB" ] || { bad "no job number in: $(cat "$T/sub.a")"; exit 1; }
expect_job "$JOB" multi 2 "$T/client-a"
for p in 0 1; do
    "$CZK" verify "$FIX/multi/verification_key.json" "$T/out/$JOB/$p/public.json" "$T/out/$JOB/$p/proof.json" \
        >"$T/verify.$p" 2>&1 || bad "czk verify rejects job $JOB partition $p: $(cat "$T/verify.$p")"
done

# the broken circuits: failed with the reason; the others still serve
"$CZK" status --config "$CONF" >"$T/status.txt" 2>&1
grep -q "flipped *failed" "$T/status.txt" || bad "status does not show circuit flipped failed: $(cat "$T/status.txt")"
grep -q "failed: .*flipped.zkey: section [5-9] (.*): point [0-9]* of" "$T/status.txt" ||
    bad "the flipped circuit's reason does not name the point: $(cat "$T/status.txt")"
grep -q "short *failed" "$T/status.txt" || bad "status does not show circuit short failed"
grep -q "failed: .*short.zkey: .*truncated" "$T/status.txt" || bad "the truncated circuit's reason is missing"
grep -q "multi *ready" "$T/status.txt" || bad "multi is not ready"
status_json >"$T/status.json"
grep -q '"reason": ".*flipped.zkey: section' "$T/status.json" || bad "JSON status has no reason for flipped"
grep -q "circuit flipped: its key failed to load" "$T/logs/gpud.log" || bad "gpud did not log the failed key"

submit b linear 1 normal --wait --request-id load-b || bad "a linear job failed next to the broken circuits: $(cat "$T/sub.b")"
expect_job "$(job_of "$T/sub.b")" linear 1

# SUBMIT for a failed circuit: rejected, naming the reason (the witness does not matter)
"$CZK" submit --config "$CONF" --circuit flipped --request-id load-c "$FIX/multi/witness.wtns" >"$T/sub.c" 2>&1 &&
    bad "a job for the failed circuit was accepted: $(cat "$T/sub.c")"
grep -q "failed to load: .*section [5-9]" "$T/sub.c" || bad "the rejection does not name the reason: $(cat "$T/sub.c")"
"$CZK" submit --config "$CONF" --circuit short --request-id load-d "$FIX/linear/witness.wtns" >"$T/sub.d" 2>&1 &&
    bad "a job for the truncated circuit was accepted"
grep -q "failed to load" "$T/sub.d" || bad "the rejection of short does not say why: $(cat "$T/sub.d")"

check_all
exit $fail
