#!/usr/bin/env bash
# czk verify against snarkjs: accepts the committed snarkjs proof; a changed public signal and a
# changed (still on-curve) proof point are rejected by czk (exit 1) and by snarkjs; a
# non-canonical public signal (+r) and an off-curve point are rejected by both (czk 1 or 2).
. "$(dirname "$0")/lib.sh"

VK=$F/verification_key.json
expect_rc 0 "czk verify accepts snarkjs proof ($FX)" "$CZK" verify "$VK" "$F/public.json" "$F/proof.json"

npub=$(node "$JT" count "$F/public.json")
idx=$(( RANDOM % npub ))
delta=$(( RANDOM * 32768 + RANDOM + 1 ))
node "$JT" bump-public "$F/public.json" "$TMP/pub_bad.json" "$idx" "$delta"
expect_rc 1 "czk verify rejects public[$idx] += $delta" "$CZK" verify "$VK" "$TMP/pub_bad.json" "$F/proof.json"
expect_fail "snarkjs rejects public[$idx] += $delta" snarkjs_verify "$VK" "$TMP/pub_bad.json" "$F/proof.json"

node "$JT" noncanon-public "$F/public.json" "$TMP/pub_nc.json" "$idx"
run_rc "$CZK" verify "$VK" "$TMP/pub_nc.json" "$F/proof.json"
case $RC in 1|2) note "ok ($RC): czk verify rejects public[$idx] + r (not < r)";;
    *) cat "$TMP/err" >&2; fail "czk verify of non-canonical public[$idx] + r: exit $RC, want 1 or 2";; esac
expect_fail "snarkjs rejects public[$idx] + r" snarkjs_verify "$VK" "$TMP/pub_nc.json" "$F/proof.json"

points=(pi_a pi_b pi_c)
for p in "${points[@]}"; do
    node "$JT" neg-point "$F/proof.json" "$TMP/proof_neg.json" "$p"
    expect_rc 1 "czk verify rejects negated $p" "$CZK" verify "$VK" "$F/public.json" "$TMP/proof_neg.json"
done
p=${points[$(( RANDOM % 3 ))]}
node "$JT" neg-point "$F/proof.json" "$TMP/proof_neg.json" "$p"
expect_fail "snarkjs rejects negated $p" snarkjs_verify "$VK" "$F/public.json" "$TMP/proof_neg.json"

p=${points[$(( RANDOM % 3 ))]}
node "$JT" bump-x "$F/proof.json" "$TMP/proof_off.json" "$p"
run_rc "$CZK" verify "$VK" "$F/public.json" "$TMP/proof_off.json"
case $RC in 1|2) note "ok ($RC): czk verify rejects off-curve $p";;
    *) cat "$TMP/err" >&2; fail "czk verify of off-curve $p: exit $RC, want 1 or 2";; esac
expect_fail "snarkjs rejects off-curve $p" snarkjs_verify "$VK" "$F/public.json" "$TMP/proof_off.json"

# Wrong number of public signals: an error or invalid, never accepted.
node -e 'const fs=require("fs");const p=JSON.parse(fs.readFileSync(process.argv[1]));p.pop();fs.writeFileSync(process.argv[2],JSON.stringify(p))' "$F/public.json" "$TMP/pub_short.json"
run_rc "$CZK" verify "$VK" "$TMP/pub_short.json" "$F/proof.json"
case $RC in 1|2) note "ok ($RC): czk verify rejects too few public signals";;
    *) cat "$TMP/err" >&2; fail "czk verify with one public signal missing: exit $RC, want 1 or 2";; esac

echo "PASS verify $FX"
