#!/usr/bin/env bash
# The curve comes from the files: tiny_bn128 (BN254) proves and verifies with no flag next to
# the BLS12-381 fixture multi; a witness of the other curve, a verification key of the other
# curve and a zkey whose prime is neither curve's are refused (exit 2) with a message naming
# the files and the curves; a BN254 key goes through the backends as a BLS12-381 one does:
# --backend cuda without a usable GPU (or not built) fails saying so, auto proves it on the
# cpu then (with a GPU, tests/backend/cuda_vs_cpu.sh compares the two proof for proof).
. "$(dirname "$0")/lib.sh"

BN=$FIXTURES/tiny_bn128 M=$FIXTURES/multi
for f in "$BN/circuit.zkey" "$M/circuit.zkey"; do [ -f "$f" ] || fail "fixture file $f missing"; done

expect_rc 0 "czk prove tiny_bn128 (no flag)" "$CZK" prove "$BN/circuit.zkey" "$BN/witness.wtns" "$TMP/bp.json" "$TMP/bpub.json"
expect_rc 0 "snarkjs verifies it" snarkjs_verify "$BN/verification_key.json" "$TMP/bpub.json" "$TMP/bp.json"
[ "$(node "$JT" get "$TMP/bp.json" curve)" = '"bn128"' ] || fail "proof.json curve is not bn128"
expect_rc 0 "czk prove multi (BLS12-381, same binary)" "$CZK" prove "$M/circuit.zkey" "$M/witness.wtns" "$TMP/mp.json" "$TMP/mpub.json"
[ "$(node "$JT" get "$TMP/mp.json" curve)" = '"bls12381"' ] || fail "proof.json curve is not bls12381"

# fixed blinding (test only): the same r, s give the same proof, which snarkjs verifies; an r
# below BLS12-381's r but not below BN254's is refused for the BN254 key
rs="$(( RANDOM * 32768 + RANDOM + 1 ))$RANDOM,$(( RANDOM + 1 ))$RANDOM"
CZK_TEST_RS=$rs expect_rc 0 "prove tiny_bn128 with CZK_TEST_RS=$rs" \
    "$CZK" prove "$BN/circuit.zkey" "$BN/witness.wtns" "$TMP/f1.json" "$TMP/fpub.json"
CZK_TEST_RS=$rs expect_rc 0 "again" "$CZK" prove "$BN/circuit.zkey" "$BN/witness.wtns" "$TMP/f2.json" "$TMP/fpub.json"
cmp -s "$TMP/f1.json" "$TMP/f2.json" || fail "the same CZK_TEST_RS gave two different BN254 proofs"
expect_rc 0 "snarkjs verifies the fixed-r,s proof" snarkjs_verify "$BN/verification_key.json" "$TMP/fpub.json" "$TMP/f1.json"
CZK_TEST_RS=21888242871839275222246405745257275088548364400416034343698204186575808495617,5 \
    expect_err_says "CZK_TEST_RS: r not below BN254's r" "CZK_TEST_RS" \
    "$CZK" prove "$BN/circuit.zkey" "$BN/witness.wtns" "$TMP/p.json" "$TMP/pub.json"

expect_err_says "prove: bn128 zkey + BLS12-381 witness" "circuit.zkey|witness.wtns|BN254|BLS12-381" \
    "$CZK" prove "$BN/circuit.zkey" "$M/witness.wtns" "$TMP/p.json" "$TMP/pub.json"
expect_err_says "prove: BLS12-381 zkey + bn128 witness" "multi/circuit.zkey|tiny_bn128/witness.wtns|BN254|BLS12-381" \
    "$CZK" prove "$M/circuit.zkey" "$BN/witness.wtns" "$TMP/p.json" "$TMP/pub.json"
[ ! -e "$TMP/p.json" ] || fail "a proof was written for a witness of the other curve"

expect_err_says "verify: bn128 key, BLS12-381 proof" "proof.json" \
    "$CZK" verify "$BN/verification_key.json" "$M/public.json" "$M/proof.json"
expect_err_says "verify: BLS12-381 key, bn128 proof" "proof.json|curve" \
    "$CZK" verify "$M/verification_key.json" "$BN/public.json" "$BN/proof.json"
node -e 'const fs=require("fs");const v=JSON.parse(fs.readFileSync(process.argv[1]));v.curve="secp256k1";fs.writeFileSync(process.argv[2],JSON.stringify(v))' \
    "$BN/verification_key.json" "$TMP/other_vk.json"
expect_err_says "verify: a key of an unsupported curve" "other_vk.json|secp256k1|not supported" \
    "$CZK" verify "$TMP/other_vk.json" "$BN/public.json" "$BN/proof.json"

# a zkey whose q is neither curve's: flip a random byte of the prime in section 2
node -e '
const fs = require("fs"), b = fs.readFileSync(process.argv[1]);
let off = 12;
for (;;) {
    const id = b.readUInt32LE(off), size = Number(b.readBigUInt64LE(off + 4));
    if (id === 2) break;
    off += 12 + size;
}
const i = off + 12 + 4 + Number(process.argv[3]) % 31;
b[i] ^= 1 + Number(process.argv[3]) % 255;
fs.writeFileSync(process.argv[2], b);' "$BN/circuit.zkey" "$TMP/otherprime.zkey" "$RANDOM"
expect_err_says "prove: zkey of another prime" "otherprime.zkey|prime q|unsupported curve" \
    "$CZK" prove "$TMP/otherprime.zkey" "$BN/witness.wtns" "$TMP/p.json" "$TMP/pub.json"
expect_err_says "vkey: zkey of another prime" "otherprime.zkey|unsupported curve" "$CZK" vkey "$TMP/otherprime.zkey"

if ! nvidia-smi -L >/dev/null 2>&1; then
    expect_err_says "prove --backend cuda: BN254 key, no GPU" "cuda" \
        "$CZK" prove --backend cuda "$BN/circuit.zkey" "$BN/witness.wtns" "$TMP/p.json" "$TMP/pub.json"
    expect_rc 0 "czk -v prove --backend auto: BN254 key on the cpu" "$CZK" -v prove --backend auto "$BN/circuit.zkey" "$BN/witness.wtns" "$TMP/p.json" "$TMP/pub.json"
    grep -q "backend cpu" "$TMP/err" || { cat "$TMP/err" >&2; fail "auto did not say it proves the BN254 key on the cpu"; }
fi
echo "PASS curves"
