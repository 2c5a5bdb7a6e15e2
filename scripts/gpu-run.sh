#!/usr/bin/env bash
# gpu-run.sh — run on a machine with an NVIDIA GPU: build the CUDA backend's
# tests and benchmark (unless prebuilt binaries are given), run the
# GPU-vs-CPU correctness tests at sizes beyond CI's (NTT to 2^24, MSM G1 to
# 2^18, G2 to 2^16), run the benchmarks, and print one summary table.
#
#   scripts/gpu-run.sh                  build in build-gpu/ (needs the czk build deps)
#   scripts/gpu-run.sh --bin DIR        use prebuilt test_cuda_* and bench_cuda from DIR
#   scripts/gpu-run.sh --quick          smaller sizes (NTT 2^20, MSM 2^14, bench 2^20 only)
#   scripts/gpu-run.sh --tests-only | --bench-only
# Environment: CZK_BENCH_* (see bench/cuda/bench_cuda.c) override benchmark sizes;
# logs go to $OUT (when set) or build-gpu/gpu-run-logs/.
set -uo pipefail
cd "$(dirname "$0")/.."

BIN="" QUICK=0 TESTS=1 BENCH=1
while [ $# -gt 0 ]; do
  case "$1" in
    --bin) BIN="$2"; shift 2 ;;
    --quick) QUICK=1; shift ;;
    --tests-only) BENCH=0; shift ;;
    --bench-only) TESTS=0; shift ;;
    *) echo "gpu-run.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done

LOG="${OUT:-build-gpu/gpu-run-logs}"
mkdir -p "$LOG"

if ! nvidia-smi -L >/dev/null 2>&1; then
  echo "gpu-run.sh: no NVIDIA GPU visible (nvidia-smi -L failed)" >&2
  exit 77
fi
nvidia-smi --query-gpu=name,memory.total,clocks.sm,clocks.max.sm,driver_version --format=csv | tee "$LOG/gpu.txt"

if [ -z "$BIN" ]; then
  export PATH="$PATH:/usr/local/cuda/bin"
  cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCZK_CUDA_ARCH=90 >"$LOG/cmake.log" 2>&1 \
    || { tail -30 "$LOG/cmake.log"; exit 1; }
  cmake --build build-gpu --target test_cuda_field test_cuda_ntt test_cuda_msm bench_cuda >"$LOG/build.log" 2>&1 \
    || { grep -E "error" "$LOG/build.log" | head -30; exit 1; }
  BIN=build-gpu
fi
find_bin() { find "$BIN" -name "$1" -type f -perm -u+x | head -1; }

if [ "$QUICK" = 1 ]; then
  NTT_LOG=20; MSM_LOG=14
  : "${CZK_BENCH_MSM_G1:=20}" "${CZK_BENCH_MSM_G2:=18}" "${CZK_BENCH_NTT:=20}" "${CZK_BENCH_H:=20}"
else
  NTT_LOG=24; MSM_LOG=18
  : "${CZK_BENCH_MSM_G1:=20 24 26}" "${CZK_BENCH_MSM_G2:=20 24}" "${CZK_BENCH_NTT:=20 24 27}" "${CZK_BENCH_H:=20 24}"
fi
export CZK_BENCH_MSM_G1 CZK_BENCH_MSM_G2 CZK_BENCH_NTT CZK_BENCH_H

declare -a SUMMARY
status=0
if [ "$TESTS" = 1 ]; then
  for t in test_cuda_field test_cuda_ntt test_cuda_msm; do
    exe=$(find_bin $t)
    if [ -z "$exe" ]; then SUMMARY+=("| $t | missing | - |"); status=1; continue; fi
    s=$(date +%s.%N)
    CZK_CUDA_TEST_MAX_LOG=$NTT_LOG CZK_CUDA_TEST_MSM_MAX_LOG=$MSM_LOG timeout "${CZK_GPU_RUN_TIMEOUT:-600}" "$exe" >"$LOG/$t.log" 2>&1
    rc=$?
    e=$(date +%s.%N)
    res=PASS; [ $rc = 77 ] && res=SKIP; [ $rc != 0 ] && [ $rc != 77 ] && { res="FAIL($rc)"; status=1; }
    SUMMARY+=("| $t | $res | $(awk "BEGIN{printf \"%.1f\", $e - $s}") s |")
    tail -3 "$LOG/$t.log"
  done
fi

if [ "$BENCH" = 1 ]; then
  exe=$(find_bin bench_cuda)
  if [ -n "$exe" ]; then
    timeout "${CZK_GPU_RUN_TIMEOUT:-600}" "$exe" 2>&1 | tee "$LOG/bench.log"
    [ "${PIPESTATUS[0]}" = 0 ] || status=1
  else
    echo "bench_cuda missing"; status=1
  fi
fi

echo
echo "## gpu-run summary ($(date -u +%Y-%m-%dT%H:%MZ), $(nvidia-smi --query-gpu=name --format=csv,noheader | head -1))"
if [ "$TESTS" = 1 ]; then
  echo "| test (NTT to 2^$NTT_LOG, MSM to 2^$MSM_LOG) | result | time |"
  echo "|---|---|---|"
  printf '%s\n' "${SUMMARY[@]}"
fi
[ "$BENCH" = 1 ] && [ -f "$LOG/bench.log" ] && sed -n '/^| operation/,$p' "$LOG/bench.log"
exit $status
