#!/usr/bin/env bash
# test_snarkjs.sh — snarkjs judges czk: a development key from `czk setup` is
# used by `snarkjs groth16 prove`, snarkjs' proof verifies with `czk verify`
# and czk's proof with `snarkjs groth16 verify`; snarkjs exports the same
# verification key as `czk vkey`; czk's proofs of the snarkjs fixtures verify
# with snarkjs.  Skips (77) when snarkjs is not installed.
# usage: test_snarkjs.sh CZK SNARKJS FIXTURES_DIR SCRATCH_DIR   ($CZK_SNARKJS overrides SNARKJS)
set -u
czk=$1 snarkjs=${CZK_SNARKJS:-$2} fixtures=$3 tmp=$4
if [ ! -x "$snarkjs" ] || ! command -v node >/dev/null; then
    echo "snarkjs not found at $snarkjs (scripts/setup-npm.sh installs it; or set CZK_SNARKJS): skipping"
    exit 77
fi
rm -rf "$tmp" && mkdir -p "$tmp"
fail=0
bad() { echo "FAIL: $*" >&2; fail=1; }
run() { "$@" >"$tmp/out" 2>&1 || { bad "$*"; sed 's/^/  | /' "$tmp/out" >&2; }; }

run "$czk" gen-circuit --constraints 2000 --publics 2 --bits 0.5 "$tmp/c.r1cs" "$tmp/c.wtns"
run "$snarkjs" wtns check "$tmp/c.r1cs" "$tmp/c.wtns"
run "$czk" setup "$tmp/c.r1cs" "$tmp/c.zkey"
run "$czk" vkey "$tmp/c.zkey"
cp "$tmp/out" "$tmp/vk.json"
run "$snarkjs" zkey export verificationkey "$tmp/c.zkey" "$tmp/vk_snarkjs.json"
cmp -s "$tmp/vk.json" "$tmp/vk_snarkjs.json" || bad "czk vkey and snarkjs zkey export verificationkey differ"
# snarkjs proves with our key; both verifiers accept
run "$snarkjs" groth16 prove "$tmp/c.zkey" "$tmp/c.wtns" "$tmp/sp.json" "$tmp/spub.json"
run "$snarkjs" groth16 verify "$tmp/vk.json" "$tmp/spub.json" "$tmp/sp.json"
grep -q "OK" "$tmp/out" || bad "snarkjs rejects its own proof made with czk's key"
run "$czk" verify "$tmp/vk.json" "$tmp/spub.json" "$tmp/sp.json"
# czk proves; snarkjs verifies
run "$czk" prove "$tmp/c.zkey" "$tmp/c.wtns" "$tmp/cp.json" "$tmp/cpub.json"
run "$snarkjs" groth16 verify "$tmp/vk.json" "$tmp/cpub.json" "$tmp/cp.json"
grep -q "OK" "$tmp/out" || bad "snarkjs did not say OK for czk's proof"
cmp -s "$tmp/cpub.json" "$tmp/spub.json" || bad "public.json of czk and snarkjs differ"
# fixtures
for fx in multi linear poseidon range; do
    d=$fixtures/$fx
    run "$czk" prove "$d/circuit.zkey" "$d/witness.wtns" "$tmp/$fx.proof.json" "$tmp/$fx.public.json"
    run "$snarkjs" groth16 verify "$d/verification_key.json" "$tmp/$fx.public.json" "$tmp/$fx.proof.json"
    grep -q "OK" "$tmp/out" || bad "$fx: snarkjs rejects czk's proof"
done
[ $fail = 0 ] && echo "snarkjs interop: ok"
exit $fail
