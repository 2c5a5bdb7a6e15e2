#!/usr/bin/env bash
# `czk vkey circuit.zkey` must print the same verification key (semantically) as
# `snarkjs zkey export verificationkey` (the committed verification_key.json), and the same
# bytes (snarkjs' layout, vk_alphabeta_12 included; BN254 fixtures too).
. "$(dirname "$0")/lib.sh"

expect_rc 0 "czk vkey $FX" "$CZK" vkey "$F/circuit.zkey"
cp "$TMP/out" "$TMP/vk.json"
node "$JT" cmp "$TMP/vk.json" "$F/verification_key.json" || fail "czk vkey differs from snarkjs' verification_key.json"
cmp -s "$TMP/vk.json" "$F/verification_key.json" || fail "czk vkey has the same values as snarkjs' but other bytes"
echo "PASS vkey $FX"
