#!/bin/bash
# multi_gpu.sh — issue #17's scaling figure: the whole pipeline (gpu_pipeline.sh)
# at 2^20 and 2^22, first on one GPU (CUDA_VISIBLE_DEVICES=0), then on two
# (0,1), in the same run on the same machine, and one table: proofs/min with
# one and two GPUs, their ratio (goal >= 1.9), GPU busy and the largest gap
# over the run (the trace: busy while any GPU computes), proofs verified; each
# GPU's own busy %, gap and partitions are in czk status ("gpus").  With SYNTH_NICE / NSYNTH as gpu_pipeline.sh.
# Needs a machine with two GPUs (nvidia-h200-x2); exits 77 with one, unless
# MULTI_GPU_SELFTEST=1, which runs both rows on GPU 0 (a check of the script:
# the ratio is then ~1).
# usage: multi_gpu.sh BINDIR WORKDIR [NPART_2^20] [NPART_2^22]
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
BIN=$1 W=$2 N20=${3:-96} N22=${4:-48}
ngpu=$(nvidia-smi -L 2>/dev/null | wc -l)
TWO=0,1
if [ -n "${MULTI_GPU_SELFTEST:-}" ]; then
    TWO=0
elif [ "$ngpu" -lt 2 ]; then
    echo "multi_gpu.sh: $ngpu GPU(s) visible, 2 needed"; exit 77
fi
mkdir -p "$W"
row() { # LOG NPART GPUS: one line "LOG GPUS proofs/min busy gap verified"
    local out="$W/run-$1-$3.txt"
    CUDA_VISIBLE_DEVICES=$3 NSEQ=0 NSYNTH=${NSYNTH:-4} bash "$HERE/gpu_pipeline.sh" "$BIN" "$W" "$1" "$2" >"$out" 2>&1
    local pm busy gap ver
    pm=$(sed -n 's/.*: \([0-9.]*\) proofs\/min (wall.*/\1/p' "$out")
    # over the run (the trace's compute spans, all GPUs together: busy while any computes)
    busy=$(sed -n 's/^gpu: .* busy \([0-9.]*\)%.*/\1/p' "$out" | head -1)
    gap=$(sed -n 's/^gpu: .* largest idle gap \([0-9.]*\) ms.*/\1/p' "$out" | head -1)
    ver=$(sed -n 's/^verified: \(.*\) proofs/\1/p' "$out")
    echo "$1 $3 ${pm:-?} ${busy:-?} ${gap:-?} ${ver:-?}"
}
echo "| domain | GPUs | proofs/min | ratio to 1 GPU | GPU busy % (any) | largest gap ms (all idle) | verified |"
echo "| --- | --- | --- | --- | --- | --- | --- |"
for L in 20 22; do
    np=$N20; [ "$L" = 22 ] && np=$N22
    read -r _ _ pm1 b1 g1 v1 <<<"$(row "$L" "$np" 0)"
    read -r _ _ pm2 b2 g2 v2 <<<"$(row "$L" "$np" "$TWO")"
    ratio=$(awk -v a="$pm2" -v b="$pm1" 'BEGIN { if (b > 0) printf "%.2f", a / b; else print "?" }')
    echo "| 2^$L | 1 | $pm1 | 1.00 | $b1 | $g1 | $v1 |"
    echo "| 2^$L | 2 | $pm2 | $ratio | $b2 | $g2 | $v2 |"
done
echo "(each GPU's own busy %, gap and partitions: \"gpus\" in $W/p*/status.json, over the last minute of"
echo " the run, so meaningful for runs of 60 s and more; logs in $W/run-*.txt)"
