#!/usr/bin/env bash
# czk setup produces a zkey that snarkjs can use: snarkjs groth16 prove with it verifies under
# the vkey snarkjs exports from it, czk prove with it verifies under snarkjs, and czk vkey
# agrees with snarkjs' export. A proof for the czk key must not verify under the fixture's
# snarkjs key (the setup is fresh, not a copy).
. "$(dirname "$0")/lib.sh"

expect_rc 0 "czk setup $FX" "$CZK" setup "$F/circuit.r1cs" "$TMP/my.zkey"
expect_rc 0 "snarkjs zkey export verificationkey (czk zkey)" "$SNARKJS" zkey export verificationkey "$TMP/my.zkey" "$TMP/my_vk.json"
expect_rc 0 "snarkjs groth16 prove with czk zkey" "$SNARKJS" groth16 prove "$TMP/my.zkey" "$F/witness.wtns" "$TMP/sj_proof.json" "$TMP/sj_public.json"
expect_rc 0 "snarkjs verify of snarkjs proof on czk zkey" snarkjs_verify "$TMP/my_vk.json" "$TMP/sj_public.json" "$TMP/sj_proof.json"
node "$JT" cmp "$TMP/sj_public.json" "$F/public.json" || fail "public signals differ"

expect_rc 0 "czk prove with czk zkey" "$CZK" prove "$TMP/my.zkey" "$F/witness.wtns" "$TMP/cz_proof.json" "$TMP/cz_public.json"
expect_rc 0 "snarkjs verify of czk proof on czk zkey" snarkjs_verify "$TMP/my_vk.json" "$TMP/cz_public.json" "$TMP/cz_proof.json"
expect_fail "snarkjs rejects czk-key proof under the fixture key" snarkjs_verify "$F/verification_key.json" "$TMP/cz_public.json" "$TMP/cz_proof.json"

expect_rc 0 "czk vkey of czk zkey" "$CZK" vkey "$TMP/my.zkey"
cp "$TMP/out" "$TMP/cz_vk.json"
node "$JT" cmp "$TMP/cz_vk.json" "$TMP/my_vk.json" || fail "czk vkey differs from snarkjs export of the czk zkey"
echo "PASS setup $FX"
