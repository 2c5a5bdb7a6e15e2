#!/usr/bin/env bash
# `czk vkey circuit.zkey` must print the same verification key (semantically) as
# `snarkjs zkey export verificationkey` (the committed verification_key.json).
. "$(dirname "$0")/lib.sh"

expect_rc 0 "czk vkey $FX" "$CZK" vkey "$F/circuit.zkey"
cp "$TMP/out" "$TMP/vk.json"
node "$JT" cmp "$TMP/vk.json" "$F/verification_key.json" || fail "czk vkey differs from snarkjs' verification_key.json"
echo "PASS vkey $FX"
