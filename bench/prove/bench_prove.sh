#!/usr/bin/env bash
# Prover benchmark: czk prove vs snarkjs groth16 prove on the same zkey and witness.
#
#   bench/prove/bench_prove.sh [--curve bls12381|bn254] [k...]     default: bls12381, 12 16 18
#
# For each k: `czk gen-circuit --curve CURVE` with N = 2^k - 16 constraints and 1 public input (domain 2^k,
# like the MulChain(2^k - 16) circuits of docs/bench-prove.md, "snarkjs baseline"), `czk setup` for the key,
# then RUNS (default 3) wall-clock timings of each prover, interleaved (czk, snarkjs, czk, ...)
# so background load hits both alike; every proof is checked with `snarkjs groth16 verify`
# (vkey from `snarkjs zkey export verificationkey`). Prints a markdown table of medians and the
# peak RSS of the last run of each prover.
#
# Environment:
#   CZK          czk binary            (default <repo>/build/cli/czk)
#   SNARKJS      snarkjs               (default <repo>/interop/node_modules/.bin/snarkjs)
#   RUNS         timed runs per prover (default 3)
#   BENCH_BITS   --bits for gen-circuit: share of 0/1 wires (default 0: full-size witness
#                values, the worst case for MSMs, comparable to the MulChain numbers)
#   BENCH_WORK   scratch directory     (default <repo>/build-bench/prove for BLS12-381,
#                <repo>/build-bench/prove-bn254 for BN254; keys are reused when the zkey is
#                already there, delete the directory to start over)
#   CZK_PROVE_ARGS  extra arguments placed before `prove` (e.g. "--threads 2")
#   CZK_REF      a second czk binary (e.g. one built before a change), timed in the same
#                interleaved runs (czk, czk ref, snarkjs, ...), its proofs verified too;
#                the table gains its median and czk ref / czk
set -euo pipefail

repo=$(cd "$(dirname "$0")/../.." && pwd)
CZK=${CZK:-$repo/build/cli/czk}
SNARKJS=${SNARKJS:-$repo/interop/node_modules/.bin/snarkjs}
RUNS=${RUNS:-3}
BITS=${BENCH_BITS:-0}
CURVE=bls12381
if [ "${1:-}" = --curve ]; then
    [ $# -ge 2 ] || { echo "bench_prove.sh: --curve needs bls12381 or bn254" >&2; exit 2; }
    CURVE=$2; shift 2
fi
case $CURVE in
bls12381) WORK=${BENCH_WORK:-$repo/build-bench/prove} ;;
bn254|bn128) CURVE=bn254; WORK=${BENCH_WORK:-$repo/build-bench/prove-bn254} ;;
*) echo "bench_prove.sh: --curve must be bls12381 or bn254, not \"$CURVE\"" >&2; exit 2 ;;
esac
read -r -a CZK_ARGS <<< "${CZK_PROVE_ARGS:-}"
[ -x "$CZK" ] || { echo "bench_prove.sh: czk not found at $CZK (build target czk or set CZK)" >&2; exit 1; }
CZK_REF=${CZK_REF:-}
[ -z "$CZK_REF" ] || [ -x "$CZK_REF" ] || { echo "bench_prove.sh: CZK_REF $CZK_REF is not executable" >&2; exit 1; }
[ -x "$SNARKJS" ] || { echo "bench_prove.sh: snarkjs not found at $SNARKJS (scripts/setup-npm.sh)" >&2; exit 1; }
ks=("$@")
[ ${#ks[@]} -gt 0 ] || ks=(12 16 18)
mkdir -p "$WORK"

log() { printf '[bench %s] %s\n' "$(date +%H:%M:%S)" "$*" >&2; }

# timed OUTFILE CMD...: runs CMD, prints its wall seconds; CMD's output goes to OUTFILE and,
# when /usr/bin/time exists, its peak RSS in kB to OUTFILE.rss.
timed() {
    local out=$1; shift
    local t0 t1 tm=()
    [ -x /usr/bin/time ] && tm=(/usr/bin/time -f %M -o "$out.rss")
    t0=$(date +%s.%N)
    if ! "${tm[@]}" "$@" >"$out" 2>&1; then
        echo "bench_prove.sh: failed: $*" >&2; tail -n 20 "$out" >&2; exit 1
    fi
    t1=$(date +%s.%N)
    echo "$t0 $t1" | awk '{ printf "%.3f", $2 - $1 }'
}
rss_gb() { if [ -s "$1.rss" ]; then awk '{ printf "%.2f", $1 / 1048576 }' "$1.rss"; else echo "-"; fi; }

median() { printf '%s\n' "$@" | sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

verify() {  # verify VK PUBLIC PROOF WHAT
    if ! "$SNARKJS" groth16 verify "$1" "$2" "$3" >"$WORK/verify.log" 2>&1; then
        echo "bench_prove.sh: snarkjs rejected the $4 proof $3" >&2; cat "$WORK/verify.log" >&2; exit 1
    fi
}

rows=()
for k in "${ks[@]}"; do
    case $k in ''|*[!0-9]*) echo "bench_prove.sh: k must be a number, not \"$k\"" >&2; exit 2 ;; esac
    d=$WORK/k$k
    mkdir -p "$d"
    n=$(( (1 << k) - 16 ))
    if [ ! -s "$d/circuit.zkey" ]; then
        log "k=$k: gen-circuit $CURVE ($n constraints, bits $BITS)"
        t=$(timed "$d/gen.log" "$CZK" gen-circuit --curve "$CURVE" --constraints "$n" --publics 1 --bits "$BITS" \
            --seed "$k" "$d/circuit.r1cs" "$d/witness.wtns")
        log "k=$k: gen-circuit $t s; czk setup"
        t=$(timed "$d/setup.log" "$CZK" setup "$d/circuit.r1cs" "$d/circuit.zkey.tmp")
        mv "$d/circuit.zkey.tmp" "$d/circuit.zkey"
        log "k=$k: setup $t s"
    fi
    "$SNARKJS" zkey export verificationkey "$d/circuit.zkey" "$d/vk.json" >"$d/vk.log" 2>&1
    zsize=$(stat -c %s "$d/circuit.zkey")
    czk_t=(); sj_t=(); ref_t=(); rmsg=
    for i in $(seq 1 "$RUNS"); do
        t=$(timed "$d/czk_prove.log" "$CZK" "${CZK_ARGS[@]}" prove "$d/circuit.zkey" "$d/witness.wtns" \
            "$d/czk_proof_$i.json" "$d/czk_public_$i.json")
        czk_t+=("$t")
        if [ -n "$CZK_REF" ]; then
            tr=$(timed "$d/ref_prove.log" "$CZK_REF" "${CZK_ARGS[@]}" prove "$d/circuit.zkey" "$d/witness.wtns" \
                "$d/ref_proof_$i.json" "$d/ref_public_$i.json")
            ref_t+=("$tr")
            rmsg=", czk ref $tr s"
            verify "$d/vk.json" "$d/ref_public_$i.json" "$d/ref_proof_$i.json" "czk ref"
        fi
        t2=$(timed "$d/sj_prove.log" "$SNARKJS" groth16 prove "$d/circuit.zkey" "$d/witness.wtns" \
            "$d/sj_proof_$i.json" "$d/sj_public_$i.json")
        sj_t+=("$t2")
        log "k=$k run $i: czk $t s$rmsg, snarkjs $t2 s"
        verify "$d/vk.json" "$d/czk_public_$i.json" "$d/czk_proof_$i.json" czk
        verify "$d/vk.json" "$d/sj_public_$i.json" "$d/sj_proof_$i.json" snarkjs
        cmp -s "$d/czk_public_$i.json" "$d/sj_public_$i.json" ||
            node -e 'const a=require(process.argv[1]),b=require(process.argv[2]);
                     if (JSON.stringify(a.map(String)) !== JSON.stringify(b.map(String))) process.exit(1)' \
                "$d/czk_public_$i.json" "$d/sj_public_$i.json" ||
            { echo "bench_prove.sh: public signals differ between czk and snarkjs (k=$k)" >&2; exit 1; }
    done
    cm=$(median "${czk_t[@]}"); sm=$(median "${sj_t[@]}")
    crss=$(rss_gb "$d/czk_prove.log"); srss=$(rss_gb "$d/sj_prove.log")
    ratio=$(awk -v a="$sm" -v b="$cm" 'BEGIN { printf "%.2f", a / b }')
    refcol=
    if [ -n "$CZK_REF" ]; then
        rm_=$(median "${ref_t[@]}")
        refcol=" $rm_ [$(printf '%s ' "${ref_t[@]}" | sed 's/ $//')] | $(awk -v a="$rm_" -v b="$cm" 'BEGIN { printf "%.2f", a / b }') |"
    fi
    rows+=("| $k | $n | $(awk -v z="$zsize" 'BEGIN { printf "%.1f", z / 1e6 }') | $cm [$(printf '%s ' "${czk_t[@]}" | sed 's/ $//')] |$refcol $sm [$(printf '%s ' "${sj_t[@]}" | sed 's/ $//')] | $ratio | $crss | $srss |")
done

echo
echo "$CURVE: czk prove vs snarkjs groth16 prove, wall seconds, median of $RUNS [all runs]; gen-circuit --bits $BITS;"
echo "$(nproc) CPUs, $(node --version) / snarkjs $("$SNARKJS" --version 2>/dev/null | head -1 | sed 's/snarkjs@//'); every proof verified by snarkjs."
echo
if [ -n "$CZK_REF" ]; then
    echo "| k | constraints | zkey MB | czk s | czk ref s | czk ref / czk | snarkjs s | snarkjs / czk | czk peak RSS GB | snarkjs peak RSS GB |"
    echo "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"
else
    echo "| k | constraints | zkey MB | czk s | snarkjs s | snarkjs / czk | czk peak RSS GB | snarkjs peak RSS GB |"
    echo "| --- | --- | --- | --- | --- | --- | --- | --- |"
fi
printf '%s\n' "${rows[@]}"
