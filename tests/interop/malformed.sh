#!/usr/bin/env bash
# czk prove / verify / vkey on malformed inputs: truncated zkey, a witness of the other curve, witness
# of another circuit, a witness that does not satisfy the circuit, garbage files, r1cs passed as
# zkey, missing files. Each must exit 2 with a message naming the offending file, and must not
# leave a proof.json behind.
. "$(dirname "$0")/lib.sh"

M=$FIXTURES/multi
BN=$FIXTURES/tiny_bn128
[ -f "$BN/circuit.zkey" ] || fail "fixture $BN missing"

# expect_err2 FILE DESC CMD...: exit 2, stderr names FILE (its basename at least).
expect_err2() {
    local file=$1 desc=$2; shift 2
    rm -f "$TMP/p.json" "$TMP/pub.json"
    expect_rc 2 "$desc" "$@"
    if ! grep -qF "$(basename "$file")" "$TMP/err"; then
        echo "stderr:" >&2; cat "$TMP/err" >&2
        fail "$desc: error message does not name $(basename "$file")"
    fi
    echo "    message: $(head -c 300 "$TMP/err" | tr '\n' ' ')"
    if [ -e "$TMP/p.json" ]; then fail "$desc: proof.json written although prove failed"; fi
}

size=$(stat -c %s "$M/circuit.zkey")
cut=$(( (RANDOM * 32768 + RANDOM) % (size - 1) + 1 ))
head -c "$cut" "$M/circuit.zkey" > "$TMP/truncated.zkey"
expect_err2 "$TMP/truncated.zkey" "prove: zkey truncated to $cut of $size bytes" \
    "$CZK" prove "$TMP/truncated.zkey" "$M/witness.wtns" "$TMP/p.json" "$TMP/pub.json"
head -c $(( size - 1 - RANDOM % 96 )) "$M/circuit.zkey" > "$TMP/short_tail.zkey"
expect_err2 "$TMP/short_tail.zkey" "prove: zkey missing its last bytes" \
    "$CZK" prove "$TMP/short_tail.zkey" "$M/witness.wtns" "$TMP/p.json" "$TMP/pub.json"

cp "$BN/witness.wtns" "$TMP/bn128.wtns"
expect_err2 "$TMP/bn128.wtns" "prove: BLS12-381 zkey + bn128 witness" \
    "$CZK" prove "$M/circuit.zkey" "$TMP/bn128.wtns" "$TMP/p.json" "$TMP/pub.json"

cp "$FIXTURES/range/witness.wtns" "$TMP/other.wtns"
expect_err2 "$TMP/other.wtns" "prove: witness of another circuit (wrong length)" \
    "$CZK" prove "$M/circuit.zkey" "$TMP/other.wtns" "$TMP/p.json" "$TMP/pub.json"

node "$HERE/binfmt.js" wtns-bump-all "$M/witness.wtns" "$TMP/unsat.wtns"
expect_err2 "$TMP/unsat.wtns" "prove: well-formed witness that does not satisfy the circuit" \
    "$CZK" prove "$M/circuit.zkey" "$TMP/unsat.wtns" "$TMP/p.json" "$TMP/pub.json"

head -c $(( 1024 + RANDOM )) /dev/urandom > "$TMP/garbage.zkey"
expect_err2 "$TMP/garbage.zkey" "prove: random bytes as zkey" \
    "$CZK" prove "$TMP/garbage.zkey" "$M/witness.wtns" "$TMP/p.json" "$TMP/pub.json"
head -c $(( 1024 + RANDOM )) /dev/urandom > "$TMP/garbage.wtns"
expect_err2 "$TMP/garbage.wtns" "prove: random bytes as witness" \
    "$CZK" prove "$M/circuit.zkey" "$TMP/garbage.wtns" "$TMP/p.json" "$TMP/pub.json"
cp "$M/circuit.r1cs" "$TMP/notazkey.zkey"
expect_err2 "$TMP/notazkey.zkey" "prove: r1cs file passed as zkey" \
    "$CZK" prove "$TMP/notazkey.zkey" "$M/witness.wtns" "$TMP/p.json" "$TMP/pub.json"
expect_err2 "$TMP/missing.zkey" "prove: zkey does not exist" \
    "$CZK" prove "$TMP/missing.zkey" "$M/witness.wtns" "$TMP/p.json" "$TMP/pub.json"

expect_err2 "$TMP/truncated.zkey" "vkey: truncated zkey" "$CZK" vkey "$TMP/truncated.zkey"

head -c 2000 /dev/urandom | base64 > "$TMP/garbage_vk.json"
expect_err2 "$TMP/garbage_vk.json" "verify: garbage verification key" \
    "$CZK" verify "$TMP/garbage_vk.json" "$M/public.json" "$M/proof.json"
expect_err2 "$TMP/nothere_proof.json" "verify: proof file does not exist" \
    "$CZK" verify "$M/verification_key.json" "$M/public.json" "$TMP/nothere_proof.json"
printf '{"pi_a": [1, 2' > "$TMP/cut_proof.json"
expect_err2 "$TMP/cut_proof.json" "verify: truncated proof JSON" \
    "$CZK" verify "$M/verification_key.json" "$M/public.json" "$TMP/cut_proof.json"
cp "$BN/verification_key.json" "$TMP/bn_vk.json"
expect_err2 "$M/proof.json" "verify: bn128 verification key with a BLS12-381 proof" \
    "$CZK" verify "$TMP/bn_vk.json" "$M/public.json" "$M/proof.json"

echo "PASS malformed"
