#!/bin/sh
# test.sh — install dependencies, build, and run the whole default test suite
# (ctest; long tests are labelled `long` and run with: ctest -L long).
set -eu
cd "$(dirname "$0")/.."
./scripts/deps.sh
# the production build first (fault injection off), so that it is known to build
./scripts/build.sh
# Then the same tree as a test build: the crash, restart and scheduling tests
# drive the daemons' fault-injection points (common/runtime/fault.h), which only
# a build with CZK_FAULT_INJECTION=ON has; the tests that need them are not
# registered otherwise.  Only the daemons recompile.  The tree stays
# test-configured afterwards: its czk-gpud, czk-synth and czk-finalizer obey
# CZK_FAULT, so install from it only after ./scripts/build.sh has run again.
cmake -S . -B build -DCZK_FAULT_INJECTION=ON >/dev/null
cmake --build build -j"$(nproc)"
# the JSON reader's sanitizer and libFuzzer builds (clang) are opt-in targets
# so everyday builds skip them; the test suite wants them
cmake --build build --target pairing_asan fuzz_json -j"$(nproc)"
cd build
ctest -LE long --output-on-failure -j2 --timeout 900
