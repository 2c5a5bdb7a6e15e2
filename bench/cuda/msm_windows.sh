#!/bin/sh
# bench/cuda/msm_windows.sh — the MSM window rules against their neighbours at
# the sizes of typical circom circuits, on one GPU.
#
#   bench/cuda/msm_windows.sh BENCH_CUDA [LOGS]     LOGS default "16 17 18 19 20 21"
#
# For each curve (CURVES, default "bls12-381 bn254"), group (MSM_GROUPS, default
# "g1 g2") and n = 2^k - 14 (a partition's n sits just below a power of two),
# bench_cuda times the plain MSM at the window rule's c and the MSM over a
# fixed-base table at the table rule's c, then again with both windows moved
# by each of OFFSETS (default "-2 -1 1 2"; CZK_CUDA_MSM_C, CZK_CUDA_MSM_TC:
# one process per setting, the library reads its knobs once).  bench_cuda
# checks every table MSM against the plain one.  Prints one row per curve, group, size and plan: the
# rule's window and median, and each neighbour's median as a ratio to it
# (below 1: the neighbour is faster).  Medians of CZK_BENCH_REPS (default 5).
# Exit 77 without a GPU (bench_cuda's), 1 when a run fails.
set -u
B=${1:?usage: msm_windows.sh BENCH_CUDA [LOGS]}
LOGS=${2:-16 17 18 19 20 21}
CURVES=${CURVES:-bls12-381 bn254}
GROUPS_=${MSM_GROUPS:-g1 g2}
OFFSETS=${OFFSETS:--2 -1 1 2}
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT

# run CURVE GROUP K OUT [ENV...]: one bench_cuda process for one MSM size
run() {
    curve=$1 grp=$2 k=$3 out=$4
    shift 4
    g1='' g2=''
    [ "$grp" = g1 ] && g1=$k
    [ "$grp" = g2 ] && g2=$k
    env CZK_BENCH_CPU_MSM_LOG=0 CZK_BENCH_CPU_NTT_LOG=0 CZK_BENCH_NTT= CZK_BENCH_H= \
        CZK_BENCH_REPS="${CZK_BENCH_REPS:-5}" CZK_BENCH_MSM_LESS=14 CZK_BENCH_MSM_G1="$g1" CZK_BENCH_MSM_G2="$g2" \
        "$@" "$B" --curve "$curve" > "$out" 2>&1
    rc=$?
    if [ $rc -eq 77 ]; then
        cat "$out"
        exit 77
    fi
    if [ $rc -ne 0 ]; then
        echo "msm_windows: bench_cuda --curve $curve ($grp 2^$k, $*) failed:" >&2
        tail -5 "$out" >&2
        exit 1
    fi
}

# ms FILE LABEL: the median of the row whose operation is LABEL
ms() { awk -F'|' -v l="$2" '{ o = $2; gsub(/^ +| +$/, "", o) } o == l { gsub(/ /, "", $4); print $4; exit }' "$1"; }
# win FILE PATTERN: the window in the notes of the first row matching PATTERN ("c=" or "table c=")
win() { grep -o "$2[0-9]*" "$1" | head -1 | grep -o "[0-9]*$"; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (a == "" || b == "" || b == 0) print "-"; else printf "%.3f", a / b }'; }

head="| curve | group | n | plan | rule's c | ms |" rule="| --- | --- | --- | --- | --- | --- |"
for d in $OFFSETS; do
    case $d in -*) head="$head c$d |" ;; *) head="$head c+$d |" ;; esac
    rule="$rule --- |"
done
echo "$head"
echo "$rule"
for curve in $CURVES; do
    for grp in $GROUPS_; do
        for k in $LOGS; do
            run "$curve" "$grp" "$k" "$T/0"
            c=$(win "$T/0" "c=")
            tc=$(win "$T/0" "table c=")
            p0=$(ms "$T/0" "msm $grp")
            t0=$(ms "$T/0" "msm $grp (table)")
            if [ -z "$c" ] || [ -z "$p0" ]; then
                echo "msm_windows: no \"msm $grp\" row with its window in bench_cuda's output ($curve 2^$k):" >&2
                tail -5 "$T/0" >&2
                exit 1
            fi
            pr='' tr=''
            for d in $OFFSETS; do
                pc=$((c + d))
                env=
                [ "$pc" -ge 4 ] && [ "$pc" -le 24 ] && env="CZK_CUDA_MSM_C=$pc"
                if [ -n "$tc" ] && [ $((tc + d)) -ge 4 ] && [ $((tc + d)) -le 22 ]; then
                    env="$env CZK_CUDA_MSM_TC=$((tc + d))"
                fi
                p='' t=''
                if [ -n "$env" ]; then
                    # shellcheck disable=SC2086
                    run "$curve" "$grp" "$k" "$T/$d" $env
                    case $env in *MSM_C=*) p=$(ms "$T/$d" "msm $grp") ;; esac
                    case $env in *MSM_TC=*) t=$(ms "$T/$d" "msm $grp (table)") ;; esac
                fi
                pr="$pr | $(ratio "$p" "$p0")"
                tr="$tr | $(ratio "$t" "$t0")"
            done
            echo "| $curve | $grp | 2^$k - 14 | plain | $c | $p0$pr |"
            [ -n "$tc" ] && echo "| $curve | $grp | 2^$k - 14 | table | $tc | $t0$tr |"
        done
    done
done
exit 0
