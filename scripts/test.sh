#!/bin/sh
# test.sh — install dependencies, build, and run the whole default test suite
# (ctest; long tests are labelled `long` and run with: ctest -L long).
set -eu
cd "$(dirname "$0")/.."
./scripts/deps.sh
./scripts/build.sh
cd build
ctest -LE long --output-on-failure -j2 --timeout 900
