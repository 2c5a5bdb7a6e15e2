#!/bin/sh
# cuda_vs_cpu.sh — the cuda backend against the cpu backend on the snarkjs
# fixtures multi and poseidon, their BN254 (bn128) twins, and on a gen-circuit
# circuit of domain 2^12 (czk setup key).  Exit 77 when no GPU is usable.
#   compare: test_backend_cuda compare (same czk_groth16_msm_out through backend.h)
#   prove:   czk prove --backend cuda (plain, and with --msm-tables) and
#            --backend cpu with the same fixed r, s (CZK_TEST_RS, test only)
#            write byte-identical proof.json and public.json, and czk verify
#            accepts the cuda proof
# usage: cuda_vs_cpu.sh compare|prove CZK TEST_BACKEND_CUDA FIXTURES SCRATCH
set -u
MODE=$1 CZK=$2 TB=$3 FIX=$4 S=$5
"$TB" probe || { echo "no GPU: skipped"; exit 77; }
mkdir -p "$S"
fail=0
bad() { echo "FAIL: $*" >&2; fail=1; }

# a 2^12 circuit: 3000 constraints + 2 publics + 1 fit a 4096-point domain
if [ ! -f "$S/gen12.zkey" ]; then
    "$CZK" gen-circuit --constraints 3000 --publics 2 --seed 12 "$S/gen12.r1cs" "$S/gen12.wtns" &&
        "$CZK" setup "$S/gen12.r1cs" "$S/gen12.zkey.tmp" && mv "$S/gen12.zkey.tmp" "$S/gen12.zkey" ||
        { echo "FAIL: could not make the 2^12 circuit" >&2; exit 1; }
fi

case $MODE in
compare)
    "$TB" compare "$FIX/multi/circuit.zkey" "$FIX/multi/witness.wtns" \
        "$FIX/poseidon/circuit.zkey" "$FIX/poseidon/witness.wtns" \
        "$FIX/multi_bn128/circuit.zkey" "$FIX/multi_bn128/witness.wtns" \
        "$FIX/poseidon_bn128/circuit.zkey" "$FIX/poseidon_bn128/witness.wtns" \
        "$S/gen12.zkey" "$S/gen12.wtns" || bad "cuda and cpu backends differ"
    ;;
prove)
    # two scalars below the group order, different each run
    r=$(( ($$ * 7919 + $(date +%s)) % 1000000007 + 1 ))
    s=$(( ($$ * 104729 + $(date +%N | sed 's/^0*//;s/^$/1/')) % 1000000007 + 1 ))
    for c in multi poseidon multi_bn128 poseidon_bn128 gen12; do
        if [ $c = gen12 ]; then z=$S/gen12.zkey w=$S/gen12.wtns; else z=$FIX/$c/circuit.zkey w=$FIX/$c/witness.wtns; fi
        for b in cpu cuda tables; do
            if [ $b = tables ]; then opt="--backend cuda --msm-tables"; else opt="--backend $b"; fi
            CZK_TEST_RS="$r,$s" "$CZK" -v prove $opt "$z" "$w" "$S/$c.$b.proof.json" "$S/$c.$b.public.json" \
                2>"$S/$c.$b.log" || { bad "$c: czk prove $opt failed"; cat "$S/$c.$b.log" >&2; }
        done
        grep -q "MSM tables on GPU 0: B2" "$S/$c.tables.log" || bad "$c: --msm-tables built no tables"
        cmp -s "$S/$c.cpu.proof.json" "$S/$c.tables.proof.json" ||
            bad "$c: cuda proof with MSM tables differs from the cpu proof (r=$r s=$s)"
        grep -q "cuda backend" "$S/$c.cuda.log" || bad "$c: --backend cuda did not run the cuda backend"
        cmp -s "$S/$c.cpu.proof.json" "$S/$c.cuda.proof.json" || bad "$c: cuda proof differs from the cpu proof (r=$r s=$s)"
        cmp -s "$S/$c.cpu.public.json" "$S/$c.cuda.public.json" || bad "$c: public.json differs"
        "$CZK" vkey "$z" >"$S/$c.vkey.json" &&
            "$CZK" verify "$S/$c.vkey.json" "$S/$c.cuda.public.json" "$S/$c.cuda.proof.json" >/dev/null ||
            bad "$c: czk verify rejects the cuda proof"
        # without fixed r, s two proofs differ (the test-only knob is the only way to fix them)
        "$CZK" prove --backend cuda "$z" "$w" "$S/$c.rand.proof.json" "$S/$c.rand.public.json" 2>/dev/null &&
            ! cmp -s "$S/$c.rand.proof.json" "$S/$c.cuda.proof.json" || bad "$c: random blinding gave the fixed proof"
        [ $fail = 0 ] && echo "$c: cuda proof == cpu proof, verified"
    done
    ;;
*) echo "usage: cuda_vs_cpu.sh compare|prove CZK TEST_BACKEND_CUDA FIXTURES SCRATCH" >&2; exit 2 ;;
esac
exit $fail
