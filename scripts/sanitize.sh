#!/bin/sh
# sanitize.sh — the whole test suite with AddressSanitizer and UndefinedBehaviorSanitizer.
#
#   scripts/sanitize.sh                    # the default suite (ctest -LE long -E packaging_deb)
#   scripts/sanitize.sh -L long -E dudect  # other ctest arguments instead of those
#
# Builds the CPU backend, the daemons (with their fault points, as
# scripts/test.sh does) and every test into ./build-asan with
# -fsanitize=address,undefined, runs ctest there, and fails when a test fails
# or when any process left a sanitizer report: the daemons the pipeline tests
# start report into build-asan/sanitizer-logs/ (ASAN_OPTIONS log_path), so a
# leak or a fault in a daemon whose exit status no test reads is not lost.
# packaging_deb is left out by default: a sanitized build's package depends on
# libasan/libubsan, which its dependency check rightly refuses.  On 2 cores
# the build takes about 10 minutes and the default suite about 10 more.
set -eu
cd "$(dirname "$0")/.."
san="-fsanitize=address,undefined -fno-omit-frame-pointer"
cmake -S . -B build-asan -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCZK_WITH_CUDA=OFF -DCZK_FUZZ=OFF \
    -DCZK_FAULT_INJECTION=ON -DCMAKE_C_FLAGS="$san -fno-sanitize-recover=undefined" -DCMAKE_CXX_FLAGS="$san" \
    -DCMAKE_EXE_LINKER_FLAGS="$san" -DCMAKE_SHARED_LINKER_FLAGS="$san" >/dev/null
cmake --build build-asan -j"$(nproc)"
logs="$PWD/build-asan/sanitizer-logs"
rm -rf "$logs"
mkdir -p "$logs"
[ $# -gt 0 ] || set -- -LE long -E packaging_deb
rc=0
(cd build-asan && ASAN_OPTIONS="detect_leaks=1:log_path=$logs/asan" \
    UBSAN_OPTIONS="print_stacktrace=1:log_path=$logs/ubsan" \
    ctest "$@" -j"$(nproc)" --output-on-failure) || rc=$?
if [ -n "$(ls -A "$logs")" ]; then
    for f in "$logs"/*; do
        echo "== $f"
        cat "$f"
    done
    echo "sanitize.sh: sanitizer reports above (in $logs)" >&2
    rc=1
fi
exit $rc
