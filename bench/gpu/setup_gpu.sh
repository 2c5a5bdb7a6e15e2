#!/bin/bash
# setup_gpu.sh — `czk setup` with its point multiplications on the CPU
# (--backend cpu, the baseline) and on the GPU (--backend cuda), one after the
# other in the same run, for both curves at each domain asked; a table of the
# wall times (the whole setup: r1cs pass, Lagrange values, multiplications,
# writing the key) and their ratio.  Each GPU key then proves a witness on the
# GPU and `czk verify` checks the proof against the key's verification key.
# usage: [CURVES="bls12381 bn254"] setup_gpu.sh BINDIR WORKDIR [LOG_DOMAIN...]   (default: 16 20 22)
# Needs a GPU (exits 77 without one) and about 2.5 GB of disk per 2^20 rows.
set -u
BIN=$1 W=$2
shift 2
LOGS=${*:-16 20 22}
CZK="$BIN/czk"
command -v nvidia-smi >/dev/null && nvidia-smi -L >/dev/null 2>&1 || { echo "setup_gpu.sh: no GPU"; exit 77; }
mkdir -p "$W"
now() { date +%s.%N; }
echo "| curve | domain | constraints | CPU setup s | GPU setup s | ratio | GPU key's proof |"
echo "| --- | --- | --- | --- | --- | --- | --- |"
for curve in ${CURVES:-bls12381 bn254}; do
    for L in $LOGS; do
        n=$(((1 << L) - 16))
        f="$W/$curve-$L"
        "$CZK" -q gen-circuit --curve "$curve" --constraints "$n" --publics 2 --bits 0.5 --seed 7 \
            "$f.r1cs" "$f.wtns" || exit 1
        t0=$(now)
        "$CZK" -q setup --backend cpu "$f.r1cs" "$f-cpu.zkey" 2>"$f-cpu.log" || { cat "$f-cpu.log"; exit 1; }
        t1=$(now)
        rm -f "$f-cpu.zkey"
        "$CZK" -v setup --backend cuda "$f.r1cs" "$f-gpu.zkey" 2>"$f-gpu.log" || { cat "$f-gpu.log"; exit 1; }
        t2=$(now)
        ok=no
        if "$CZK" -q prove --backend cuda "$f-gpu.zkey" "$f.wtns" "$f-proof.json" "$f-public.json" &&
            "$CZK" -q vkey "$f-gpu.zkey" "$f-vk.json" &&
            "$CZK" -q verify "$f-vk.json" "$f-public.json" "$f-proof.json"; then
            ok=verified
        fi
        rm -f "$f-gpu.zkey" "$f.r1cs" "$f.wtns"
        awk -v c="$curve" -v l="$L" -v n="$n" -v a="$t0" -v b="$t1" -v d="$t2" -v ok="$ok" \
            'BEGIN { printf "| %s | 2^%s | %d | %.1f | %.1f | %.1f | %s |\n", c, l, n, b - a, d - b, (b - a) / (d - b), ok }'
    done
done
echo "(the GPU setups' phase times: $W/*-gpu.log)"
