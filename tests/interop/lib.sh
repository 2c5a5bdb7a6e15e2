# Shared setup for the czk <-> snarkjs interop test scripts (sourced, not run).
# Every script is called as: SCRIPT CZK SNARKJS FIXTURES_DIR [FIXTURE_NAME]
# Exit codes: 0 pass, 1 fail, 77 skip (czk not built, snarkjs/node not installed).

CZK=$1
SNARKJS=$2
FIXTURES=$3
FX=${4:-}
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
JT="$HERE/jsontool.js"

skip() { echo "SKIP: $*"; exit 77; }
fail() { echo "FAIL: $*" >&2; exit 1; }
note() { echo "--- $*"; }

[ -x "$CZK" ] || skip "czk binary not built: $CZK"
command -v node >/dev/null 2>&1 || skip "node not installed"
[ -x "$SNARKJS" ] || skip "snarkjs not installed at $SNARKJS (run scripts/setup-npm.sh)"
[ -d "$FIXTURES" ] || fail "fixtures directory $FIXTURES missing"
# the fixture's curve, by its name (NAME_bn128: BN254), for jsontool.js and the checks
CURVE=bls12381
case $FX in *_bn128) CURVE=bn128 ;; esac
export JT_CURVE=$CURVE
if [ -n "$FX" ]; then
    F="$FIXTURES/$FX"
    [ -f "$F/circuit.zkey" ] || fail "fixture $F incomplete (no circuit.zkey)"
fi

# Random choices are reproducible with CZK_TEST_SEED.
SEED=${CZK_TEST_SEED:-$(( $(date +%s) ^ $$ ))}
RANDOM=$SEED
echo "seed: CZK_TEST_SEED=$SEED"

TMP=$(mktemp -d "${TMPDIR:-/tmp}/czk-interop.XXXXXX")
trap 'rm -rf "$TMP"' EXIT

# run_rc CMD...: runs CMD with stdout/stderr in $TMP/out and $TMP/err; sets RC.
run_rc() {
    set +e
    "$@" >"$TMP/out" 2>"$TMP/err"
    RC=$?
    set -e
}

# expect_rc WANT DESC CMD...: CMD must exit with status WANT.
expect_rc() {
    local want=$1 desc=$2; shift 2
    run_rc "$@"
    if [ "$RC" != "$want" ]; then
        echo "command: $*" >&2
        echo "stdout:" >&2; tail -n 20 "$TMP/out" >&2
        echo "stderr:" >&2; tail -n 20 "$TMP/err" >&2
        fail "$desc: exit status $RC, want $want"
    fi
    note "ok ($RC): $desc"
}

# expect_fail DESC CMD...: CMD must exit non-zero (used for snarkjs rejections).
expect_fail() {
    local desc=$1; shift
    run_rc "$@"
    if [ "$RC" = 0 ]; then
        echo "command: $*" >&2; tail -n 20 "$TMP/out" "$TMP/err" >&2
        fail "$desc: exit status 0, want non-zero"
    fi
    note "ok ($RC): $desc"
}

# expect_err_says DESC WORDS CMD...: CMD must exit 2 with every |-separated word of WORDS
# in its standard error.
expect_err_says() {
    local desc=$1 words=$2 w; shift 2
    expect_rc 2 "$desc" "$@"
    IFS='|' read -ra ws <<<"$words"
    for w in "${ws[@]}"; do
        grep -qF -- "$w" "$TMP/err" || { cat "$TMP/err" >&2; fail "$desc: message does not say \"$w\""; }
    done
    echo "    message: $(head -c 300 "$TMP/err" | tr '\n' ' ')"
}

snarkjs_verify() { "$SNARKJS" groth16 verify "$@"; }

set -euo pipefail
