#!/bin/sh
# build.sh — configure and build czk into ./build (CUDA backend when nvcc exists).
# A production build: fault injection (CZK_FAULT_INJECTION, test builds only)
# is turned off explicitly, also in a tree scripts/test.sh left test-configured
# (then only the daemons recompile).
set -eu
cd "$(dirname "$0")/.."
[ -x /usr/local/cuda/bin/nvcc ] && export PATH="/usr/local/cuda/bin:$PATH"
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCZK_FAULT_INJECTION=OFF >/dev/null
cmake --build build -j"$(nproc)"
