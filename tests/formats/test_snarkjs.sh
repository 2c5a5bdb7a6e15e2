#!/usr/bin/env bash
# test_snarkjs.sh — snarkjs 0.7.6 judges the czk writers and the r1cs reader:
# a fixture's r1cs, witness and zkey are read and rewritten by czk
# (formats_tool), then
#   - `snarkjs r1cs info` of the original equals czk's reading of it, and of
#     the rewritten r1cs agrees on every count (labels: czk writes one per wire);
#   - `snarkjs wtns check` accepts the rewritten r1cs + witness;
#   - `snarkjs zkey export verificationkey` of the rewritten zkey equals the
#     fixture's verification_key.json;
#   - `snarkjs groth16 prove` with the rewritten zkey makes a proof that
#     `snarkjs groth16 verify` accepts with the fixture's key, same public.json.
# usage: test_snarkjs.sh FORMATS_TOOL SNARKJS FIXTURE_DIR
# exits 77 when snarkjs is not installed (scripts/setup-npm.sh); $SNARKJS overrides.
set -euo pipefail
tool=$1 snarkjs=${SNARKJS:-$2} fx=$3
if [ ! -x "$snarkjs" ]; then
    snarkjs=$(command -v snarkjs || true)
    [ -n "$snarkjs" ] || { echo "snarkjs not installed: skipping"; exit 77; }
fi
work=$(mktemp -d "${TMPDIR:-/tmp}/czk-fmt-snarkjs.XXXXXX")
trap 'rm -rf "$work"' EXIT
info() { "$snarkjs" r1cs info "$1" | sed -n 's/.*\(# of [A-Za-z ]*: [0-9]*\).*/\1/p' | sort; }

"$tool" rewrite-r1cs "$fx/circuit.r1cs" "$work/c.r1cs"
"$tool" rewrite-wtns "$fx/witness.wtns" "$work/w.wtns"
"$tool" rewrite-zkey "$fx/circuit.zkey" "$work/k.zkey"

diff <(info "$fx/circuit.r1cs") <("$tool" r1cs-info "$fx/circuit.r1cs" | sort)
diff <(info "$fx/circuit.r1cs" | grep -v Labels) <(info "$work/c.r1cs" | grep -v Labels)
"$snarkjs" wtns check "$work/c.r1cs" "$work/w.wtns" | tee "$work/check.log"
grep -q "WITNESS IS CORRECT" "$work/check.log"

"$snarkjs" zkey export verificationkey "$work/k.zkey" "$work/vk.json"
node -e '
const a = JSON.parse(require("fs").readFileSync(process.argv[1]));
const b = JSON.parse(require("fs").readFileSync(process.argv[2]));
if (JSON.stringify(a) !== JSON.stringify(b)) { console.error("verification keys differ"); process.exit(1); }
' "$work/vk.json" "$fx/verification_key.json"

"$snarkjs" groth16 prove "$work/k.zkey" "$work/w.wtns" "$work/proof.json" "$work/public.json"
"$snarkjs" groth16 verify "$fx/verification_key.json" "$work/public.json" "$work/proof.json" | tee "$work/verify.log"
grep -q "OK!" "$work/verify.log"
node -e '
const a = JSON.parse(require("fs").readFileSync(process.argv[1]));
const b = JSON.parse(require("fs").readFileSync(process.argv[2]));
if (JSON.stringify(a) !== JSON.stringify(b)) { console.error("public signals differ"); process.exit(1); }
' "$work/public.json" "$fx/public.json"
echo "snarkjs accepts czk-written r1cs, wtns and zkey for $fx"
