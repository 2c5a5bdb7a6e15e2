#!/bin/sh
# deps.sh — install what czk needs on Debian 12 (build, tests, and the npm
# oracles snarkjs/circom2 used by the interop tests).  Idempotent.
set -eu
cd "$(dirname "$0")/.."

PKGS="build-essential cmake ninja-build pkg-config git ca-certificates
      liburing-dev libnuma-dev libmsgpack-dev libinih-dev libjansson-dev
      libsystemd-dev libmicrohttpd-dev libgmp-dev zlib1g-dev libssl-dev libxxhash-dev
      clang libclang-rt-14-dev systemd curl python3 python3-matplotlib util-linux scdoc groff-base man-db
      prometheus"
missing=""
for p in $PKGS; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
done
# Node.js: any install that provides node and npm will do (nodesource's nodejs
# bundles npm, and Debian's npm package would conflict with it)
if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
    missing="$missing nodejs npm"
fi
if [ -n "$missing" ]; then
    SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO=sudo
    $SUDO apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq $missing
fi

# npm oracles (pinned in interop/package-lock.json)
if [ -f interop/package-lock.json ] && [ ! -x interop/node_modules/.bin/snarkjs ]; then
    (cd interop && npm ci --no-audit --no-fund --loglevel=error)
fi
