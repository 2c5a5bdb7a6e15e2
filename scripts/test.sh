#!/bin/sh
# test.sh — install dependencies, build, and run the whole default test suite
# (ctest; long tests are labelled `long` and run with: ctest -L long).
set -eu
cd "$(dirname "$0")/.."
./scripts/deps.sh
./scripts/build.sh
# the JSON reader's sanitizer and libFuzzer builds (clang) are opt-in targets
# so everyday builds skip them; the test suite wants them
cmake --build build --target pairing_asan fuzz_json -j"$(nproc)"
cd build
ctest -LE long --output-on-failure -j2 --timeout 900
