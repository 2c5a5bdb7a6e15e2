#!/bin/sh
# bn254.sh — one czk-gpud serves BLS12-381 and BN254 (snarkjs "bn128")
# circuits at once, through the same pools, synths and finalizer (cpu
# backend): jobs of both curves submitted together, every proof verified by
# snarkjs against its fixture's verification key, each partition written and
# journaled once, also across a kill -9 of czk-gpud with BN254 jobs in flight.
# A witness of the other curve is refused at submission naming both curves.
# usage: bn254.sh CZK GPUD SYNTH FIN TOOL SRC
. "$(dirname "$0")/lib.sh"
require_snarkjs

SLOTS=3 write_config <<CONF
[circuit.multi_bn128]
zkey = $FIX/multi_bn128/circuit.zkey
[circuit.linear_bn128]
zkey = $FIX/linear_bn128/circuit.zkey
[circuit.poseidon_bn128]
zkey = $FIX/poseidon_bn128/circuit.zkey
CONF
start_gpud; start_synth 0; start_synth 1; start_fin
wait_up 2 || exit 1
start_sampler
for c in multi_bn128 linear_bn128 poseidon_bn128; do
    grep -q "circuit $c: .*BN254" "$T/logs/gpud.log" || bad "gpud did not load circuit $c as a BN254 key"
done
"$CZK" status --config "$CONF" >"$T/status.txt" 2>&1
grep -q "multi_bn128 *ready *bn128 " "$T/status.txt" && grep -q "multi *ready *bls12381 " "$T/status.txt" ||
    bad "czk status does not name each circuit's curve: $(grep -A8 '^circuits' "$T/status.txt")"

log "a witness of the other curve is refused, naming both"
if "$CZK" submit --config "$CONF" --circuit multi_bn128 "$FIX/multi/witness.wtns" >"$T/sub.x1" 2>&1; then
    bad "a BLS12-381 witness was accepted for a BN254 circuit"
fi
grep -q "not a BN254 (bn128) witness (prime is BLS12-381.s scalar field r" "$T/sub.x1" || bad "refusal 1 does not say why: $(cat "$T/sub.x1")"
if "$CZK" submit --config "$CONF" --circuit multi "$FIX/multi_bn128/witness.wtns" >"$T/sub.x2" 2>&1; then
    bad "a BN254 witness was accepted for a BLS12-381 circuit"
fi
grep -q "not a BLS12-381 witness (prime is bn128.s scalar field r" "$T/sub.x2" || bad "refusal 2 does not say why: $(cat "$T/sub.x2")"

log "jobs of both curves at once"
submit a multi_bn128 3 high --wait --out "$T/client/a" & pa=$!
submit b multi 2 normal --wait & pb=$!
submit c poseidon_bn128 2 normal --wait & pc=$!
submit d linear_bn128 2 low --wait & pd=$!
submit e linear 1 low --wait & pe=$!
for x in "a $pa" "b $pb" "c $pc" "d $pd" "e $pe"; do
    set -- $x
    wait_exit "$2" 180; rc=$?
    [ $rc = 0 ] || { bad "czk submit ($1) exited $rc:"; cat "$T/sub.$1" >&2; }
done
expect_job "$(job_of "$T/sub.a")" multi_bn128 3 "$T/client/a"
expect_job "$(job_of "$T/sub.b")" multi 2
expect_job "$(job_of "$T/sub.c")" poseidon_bn128 2
expect_job "$(job_of "$T/sub.d")" linear_bn128 2
expect_job "$(job_of "$T/sub.e")" linear 1
grep -q '"curve": *"bn128"' "$T/out/$(job_of "$T/sub.a")/0/proof.json" || bad "a BN254 proof does not say curve bn128"

log "kill -9 of czk-gpud with BN254 partitions in flight, then restart: each written once"
submit f multi_bn128 6 normal & pf=$!
wait_exit "$pf" 60 || bad "submit f: $(cat "$T/sub.f")"
jf=$(job_of "$T/sub.f")
for _ in $(seq 1 3000); do grep -q "job $jf partition [0-9]*: proof verified and written" "$T/logs/fin.log" && break; sleep 0.02; done
grep -q "job $jf partition [0-9]*: proof verified and written" "$T/logs/fin.log" ||
    bad "job $jf: no partition written after 60 s: gpud is killed with nothing proved"
kill -9 "$GPUD_PID"; wait "$GPUD_PID" 2>/dev/null
# partitions were still in flight: the job is not complete in the journal gpud left
journal_complete "$jf" && bad "job $jf was complete before gpud was killed: nothing was in flight"
start_gpud
wait_up 2 || exit 1
expect_job "$jf" multi_bn128 6

check_all
stop_all
[ "$fail" = 0 ] && echo "ok"
exit $fail
