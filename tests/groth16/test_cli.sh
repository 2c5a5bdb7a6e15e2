#!/usr/bin/env bash
# test_cli.sh — the `czk` command end to end without any external tool:
# gen-circuit -> setup -> prove -> vkey -> verify (exit 0), a changed public
# signal (exit 1), missing/mismatched files (exit 2 with the file named),
# and proving a snarkjs fixture checked against snarkjs' verification key.
# usage: test_cli.sh CZK FIXTURES_DIR SCRATCH_DIR
set -u
czk=$1 fixtures=$2 tmp=$3
rm -rf "$tmp" && mkdir -p "$tmp"
fail=0
bad() { echo "FAIL: $*" >&2; fail=1; }

# expect STATUS CMD...: runs CMD, checks its exit status, keeps stderr in $tmp/err
expect() {
    local want=$1; shift
    "$@" >"$tmp/out" 2>"$tmp/err"; local got=$?
    [ "$got" = "$want" ] || { bad "exit $got (want $want): $*"; sed 's/^/  | /' "$tmp/err" >&2; }
}

expect 0 "$czk" gen-circuit --constraints 1000 --publics 3 --bits 0.5 --seed 7 "$tmp/c.r1cs" "$tmp/c.wtns"
expect 0 "$czk" --threads 2 setup "$tmp/c.r1cs" "$tmp/c.zkey"
grep -q "NOT FOR PRODUCTION" "$tmp/err" || bad "setup does not warn that the key is for development only"
expect 0 "$czk" prove "$tmp/c.zkey" "$tmp/c.wtns" "$tmp/proof.json" "$tmp/public.json" --threads 1
expect 0 "$czk" vkey "$tmp/c.zkey"
cp "$tmp/out" "$tmp/vk.json"
expect 0 "$czk" verify "$tmp/vk.json" "$tmp/public.json" "$tmp/proof.json"
grep -q '"pi_a"' "$tmp/proof.json" || bad "proof.json has no pi_a"
[ "$(grep -o '"[0-9]*"' "$tmp/public.json" | wc -l)" = 3 ] || bad "public.json does not hold 3 signals"

# a changed public signal: invalid (1)
sed '0,/"[0-9]*"/s//"12345"/' "$tmp/public.json" > "$tmp/public_bad.json"
expect 1 "$czk" verify "$tmp/vk.json" "$tmp/public_bad.json" "$tmp/proof.json"
# the proof of another circuit's key: invalid
expect 0 "$czk" gen-circuit --constraints 300 --publics 3 --seed 8 "$tmp/d.r1cs" "$tmp/d.wtns"
expect 0 "$czk" setup "$tmp/d.r1cs" "$tmp/d.zkey"
expect 0 "$czk" prove "$tmp/d.zkey" "$tmp/d.wtns" "$tmp/proof_d.json" "$tmp/public_d.json"
expect 1 "$czk" verify "$tmp/vk.json" "$tmp/public_d.json" "$tmp/proof_d.json"

# errors: exit 2, one line naming the file
expect 2 "$czk" verify "$tmp/nope.json" "$tmp/public.json" "$tmp/proof.json"
grep -q "nope.json" "$tmp/err" || bad "missing vkey not named: $(cat "$tmp/err")"
[ "$(wc -l < "$tmp/err")" = 1 ] || bad "error is not one line: $(cat "$tmp/err")"
expect 2 "$czk" prove "$tmp/c.zkey" "$tmp/d.wtns" "$tmp/p.json" "$tmp/q.json"
grep -q "c.zkey" "$tmp/err" && grep -q "d.wtns" "$tmp/err" || bad "witness mismatch does not name both files: $(cat "$tmp/err")"
[ ! -e "$tmp/p.json" ] || bad "a failed prove left a proof file"
expect 2 "$czk" setup "$tmp/missing.r1cs" "$tmp/x.zkey"
grep -q "missing.r1cs" "$tmp/err" || bad "missing r1cs not named"
expect 2 "$czk" setup --backend gpu "$tmp/d.r1cs" "$tmp/x.zkey"
grep -q -- "--backend must be cpu, cuda or auto" "$tmp/err" || bad "setup --backend gpu: $(cat "$tmp/err")"
expect 0 "$czk" setup --backend cpu "$tmp/d.r1cs" "$tmp/x.zkey"
if ! nvidia-smi -L >/dev/null 2>&1; then
    # no GPU: auto (above) ran on the CPU; cuda is an error that says why, and writes no key
    rm -f "$tmp/x.zkey"
    expect 2 "$czk" setup --backend cuda "$tmp/d.r1cs" "$tmp/x.zkey"
    grep -q -- "--backend cuda: " "$tmp/err" || bad "setup --backend cuda without a GPU: $(cat "$tmp/err")"
    [ ! -e "$tmp/x.zkey" ] || bad "setup --backend cuda without a GPU wrote a key"
fi
expect 2 "$czk" prove "$tmp/c.zkey"
expect 2 "$czk" frobnicate
expect 2 "$czk" gen-circuit --constraints 0 "$tmp/e.r1cs" "$tmp/e.wtns"
expect 2 "$czk" gen-circuit --constraints 10 --bits 2 "$tmp/e.r1cs" "$tmp/e.wtns"
expect 2 "$czk" --threads x vkey "$tmp/c.zkey"
expect 0 "$czk" --help

# snarkjs fixtures: our proof against snarkjs' verification key, our vkey equals snarkjs'
for fx in multi range; do
    d=$fixtures/$fx
    expect 0 "$czk" prove "$d/circuit.zkey" "$d/witness.wtns" "$tmp/$fx.proof.json" "$tmp/$fx.public.json"
    expect 0 "$czk" verify "$d/verification_key.json" "$tmp/$fx.public.json" "$tmp/$fx.proof.json"
    cmp -s "$tmp/$fx.public.json" "$d/public.json" || bad "$fx: public.json differs from snarkjs'"
    expect 0 "$czk" vkey "$d/circuit.zkey"
    cmp -s "$tmp/out" "$d/verification_key.json" || bad "$fx: czk vkey differs from snarkjs' verification_key.json"
done

[ $fail = 0 ] && echo "czk cli: ok"
exit $fail
