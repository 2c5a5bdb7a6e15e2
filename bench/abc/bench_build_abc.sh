#!/bin/bash
# bench_build_abc.sh BIN ZKEY WTNS [THREADS...]: build_abc with the IFMA
# products against the scalar ones (CZK_NO_IFMA=1), interleaved, three
# rounds per thread count; prints a markdown table of the medians and the
# ratio scalar / ifma.  BIN is bench_build_abc; REPS (default 7) calls per
# median.  Results: docs/bench-prove.md.
set -euo pipefail
[ $# -ge 3 ] || { echo "usage: bench_build_abc.sh BIN ZKEY WTNS [THREADS...]" >&2; exit 2; }
bin=$1 zkey=$2 wtns=$3
shift 3
threads=("$@")
[ ${#threads[@]} -gt 0 ] || threads=(1 "$(nproc)")
ms() { sed -n 's/.*median \([0-9.]*\) ms.*/\1/p'; }
echo "| threads | scalar ms (3 rounds) | IFMA ms (3 rounds) | scalar / IFMA (medians) |"
echo "| --- | --- | --- | --- |"
for t in "${threads[@]}"; do
    s=() x=()
    for _ in 1 2 3; do
        s+=("$(CZK_NO_IFMA=1 "$bin" "$zkey" "$wtns" "$t" "${REPS:-7}" | ms)")
        x+=("$("$bin" "$zkey" "$wtns" "$t" "${REPS:-7}" | ms)")
    done
    ms_s=$(printf '%s\n' "${s[@]}" | sort -n | sed -n 2p)
    ms_x=$(printf '%s\n' "${x[@]}" | sort -n | sed -n 2p)
    echo "| $t | ${s[*]} | ${x[*]} | $(awk -v a="$ms_s" -v b="$ms_x" 'BEGIN { printf "%.2f", a / b }') |"
done
