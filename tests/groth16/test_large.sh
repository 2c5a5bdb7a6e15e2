#!/usr/bin/env bash
# test_large.sh — gen-circuit -> setup -> prove -> verify at domain 2^K
# (default 16), printing wall times; a proof that does not verify fails.
# usage: test_large.sh CZK SCRATCH_DIR [K]
set -eu
czk=$1 tmp=$2 k=${3:-16}
rm -rf "$tmp" && mkdir -p "$tmp"
n=$(( (1 << k) - 3 ))   # + 2 publics + 1 = 2^k rows
t() { local s=$EPOCHREALTIME; "$@"; awk -v a="$s" -v b="$EPOCHREALTIME" -v w="$(basename "$1") $2" 'BEGIN { printf "  %s: %.2f s\n", w, b - a }'; }
t "$czk" gen-circuit --constraints $n --publics 2 --bits 0.5 --seed 1 "$tmp/c.r1cs" "$tmp/c.wtns"
t "$czk" setup "$tmp/c.r1cs" "$tmp/c.zkey" 2>/dev/null
t "$czk" prove "$tmp/c.zkey" "$tmp/c.wtns" "$tmp/proof.json" "$tmp/public.json"
"$czk" vkey "$tmp/c.zkey" > "$tmp/vk.json"
"$czk" verify "$tmp/vk.json" "$tmp/public.json" "$tmp/proof.json"
