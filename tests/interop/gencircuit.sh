#!/usr/bin/env bash
# czk gen-circuit writes an r1cs + satisfying witness: the header has the requested sizes,
# `snarkjs wtns check` (independent satisfiability check) accepts the witness and rejects a
# corrupted copy, and czk setup + czk prove on it give a proof snarkjs verifies.
# CZK_GEN_CURVE=bn254 does the same with --curve bn254 (r1cs and wtns over BN254's r).
. "$(dirname "$0")/lib.sh"

GEN_CURVE=${CZK_GEN_CURVE:-bls12381}
case $GEN_CURVE in
    bls12381) WANT_R=52435875175126190479447740508185965837690552500527637822603658699938581184513 ;;
    bn254) WANT_R=21888242871839275222246405745257275088548364400416034343698204186575808495617
           export JT_CURVE=bn128 ;;
    *) fail "CZK_GEN_CURVE=$GEN_CURVE: bls12381 or bn254" ;;
esac
n=$(( 900 + RANDOM % 200 ))
k=$(( 1 + RANDOM % 4 ))
gseed=$RANDOM
expect_rc 0 "czk gen-circuit --constraints $n --publics $k --bits 0.5 --seed $gseed --curve $GEN_CURVE" \
    "$CZK" gen-circuit --constraints "$n" --publics "$k" --bits 0.5 --seed "$gseed" --curve "$GEN_CURVE" \
    "$TMP/out.r1cs" "$TMP/out.wtns"

hdr=$(node "$HERE/binfmt.js" r1cs-header "$TMP/out.r1cs")
echo "r1cs header: $hdr"
wh=$(node "$HERE/binfmt.js" wtns-header "$TMP/out.wtns")
echo "wtns header: $wh"
node -e '
const h = JSON.parse(process.argv[1]), w = JSON.parse(process.argv[2]);
const [n, k, r] = [Number(process.argv[3]), Number(process.argv[4]), process.argv[5]];
const err = [];
if (h.prime !== r) err.push("r1cs prime is not the r of the curve");
if (w.prime !== r) err.push("wtns prime is not the r of the curve");
if (h.nConstraints !== n) err.push(`nConstraints ${h.nConstraints} != ${n}`);
if (h.nPubOut + h.nPubIn !== k) err.push(`nPubOut + nPubIn = ${h.nPubOut + h.nPubIn} != ${k}`);
if (w.nWitness !== h.nWires) err.push(`nWitness ${w.nWitness} != nWires ${h.nWires}`);
if (err.length) { console.error(err.join("; ")); process.exit(1); }
' "$hdr" "$wh" "$n" "$k" "$WANT_R" || fail "gen-circuit output sizes"

frac=$(node "$HERE/binfmt.js" bitfrac "$TMP/out.wtns")
echo "fraction of 0/1 witness values: $frac (requested --bits 0.5)"
node -e 'const f = Number(process.argv[1]); process.exit(f >= 0.35 && f <= 0.65 ? 0 : 1)' "$frac" ||
    fail "--bits 0.5 gave a 0/1 fraction of $frac, want about 0.5"

# same seed and options, same files
expect_rc 0 "czk gen-circuit again with seed $gseed" \
    "$CZK" gen-circuit --constraints "$n" --publics "$k" --bits 0.5 --seed "$gseed" --curve "$GEN_CURVE" \
    "$TMP/again.r1cs" "$TMP/again.wtns"
cmp -s "$TMP/out.r1cs" "$TMP/again.r1cs" && cmp -s "$TMP/out.wtns" "$TMP/again.wtns" ||
    fail "gen-circuit with the same seed wrote different files"

expect_rc 0 "snarkjs wtns check (gen-circuit output)" "$SNARKJS" wtns check "$TMP/out.r1cs" "$TMP/out.wtns"
grep -q "WITNESS IS CORRECT" "$TMP/out" || fail "snarkjs did not print WITNESS IS CORRECT"
node "$HERE/binfmt.js" wtns-bump-all "$TMP/out.wtns" "$TMP/bad.wtns"
expect_fail "snarkjs wtns check rejects corrupted witness" "$SNARKJS" wtns check "$TMP/out.r1cs" "$TMP/bad.wtns"

expect_rc 0 "czk setup (gen-circuit r1cs)" "$CZK" setup "$TMP/out.r1cs" "$TMP/out.zkey"
expect_rc 0 "czk prove (gen-circuit)" "$CZK" prove "$TMP/out.zkey" "$TMP/out.wtns" "$TMP/proof.json" "$TMP/public.json"
expect_rc 0 "snarkjs zkey export verificationkey" "$SNARKJS" zkey export verificationkey "$TMP/out.zkey" "$TMP/vk.json"
expect_rc 0 "snarkjs verify (gen-circuit proof)" snarkjs_verify "$TMP/vk.json" "$TMP/public.json" "$TMP/proof.json"
[ "$(node "$JT" count "$TMP/public.json")" = "$k" ] || fail "public.json does not have $k signals"
[ "$(node "$JT" get "$TMP/proof.json" curve)" = "\"$JT_CURVE\"" ] || fail "proof.json curve is not $JT_CURVE"
expect_rc 0 "czk verify (gen-circuit proof, czk vkey)" "$CZK" vkey "$TMP/out.zkey" "$TMP/cz_vk.json"
node "$JT" cmp "$TMP/cz_vk.json" "$TMP/vk.json" || fail "czk vkey differs from snarkjs export"
echo "PASS gen-circuit $GEN_CURVE"
