#!/usr/bin/env bash
# czk prove on a snarkjs/circom2 fixture, checked by snarkjs: the proof verifies with
# `snarkjs groth16 verify`, has snarkjs' proof.json layout, public.json equals the one snarkjs
# wrote, czk verify accepts it, and two proofs of the same witness differ (random r, s).
. "$(dirname "$0")/lib.sh"

expect_rc 0 "czk prove $FX" "$CZK" prove "$F/circuit.zkey" "$F/witness.wtns" "$TMP/proof.json" "$TMP/public.json"
node "$JT" proof-shape "$TMP/proof.json" "$CURVE" || fail "czk proof.json layout"
node "$JT" cmp "$TMP/public.json" "$F/public.json" || fail "czk public.json differs from snarkjs'"
expect_rc 0 "snarkjs groth16 verify of czk proof ($FX)" snarkjs_verify "$F/verification_key.json" "$TMP/public.json" "$TMP/proof.json"
grep -q "OK" "$TMP/out" || fail "snarkjs did not print OK"
expect_rc 0 "czk verify of czk proof ($FX)" "$CZK" verify "$F/verification_key.json" "$TMP/public.json" "$TMP/proof.json"

expect_rc 0 "czk prove $FX (second proof)" "$CZK" prove "$F/circuit.zkey" "$F/witness.wtns" "$TMP/proof2.json" "$TMP/public2.json"
if node "$JT" cmp "$TMP/proof.json" "$TMP/proof2.json" 2>/dev/null; then
    fail "two czk proofs of the same witness are identical: blinding r, s not random"
fi
expect_rc 0 "snarkjs groth16 verify of second czk proof" snarkjs_verify "$F/verification_key.json" "$TMP/public2.json" "$TMP/proof2.json"
echo "PASS prove $FX"
