#!/usr/bin/env bash
# Installs the pinned snarkjs / circom2 / circomlib (interop/package-lock.json) into
# interop/node_modules with `npm ci`. Needed by tests/interop (which skip without it),
# tests/fixtures/regen.sh and bench/prove/bench_prove.sh. Requires node >= 18 and npm.
set -euo pipefail

repo=$(cd "$(dirname "$0")/.." && pwd)
cd "$repo/interop"

command -v node >/dev/null || { echo "setup-npm.sh: node not found (apt-get install nodejs npm)" >&2; exit 1; }
command -v npm >/dev/null || { echo "setup-npm.sh: npm not found (apt-get install npm)" >&2; exit 1; }
major=$(node -p 'process.versions.node.split(".")[0]')
if [ "$major" -lt 18 ]; then
    echo "setup-npm.sh: node $(node --version) is too old, snarkjs 0.7.6 needs >= 18" >&2
    exit 1
fi

npm ci --no-audit --no-fund
./node_modules/.bin/snarkjs --version 2>/dev/null | head -1 || true
./node_modules/.bin/circom2 --version
