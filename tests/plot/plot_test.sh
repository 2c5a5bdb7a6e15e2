#!/bin/sh
# plot_test.sh SCRIPT TEST_PY — runs TEST_PY with the interpreter SCRIPT names
# on its #! line (Debian's python3, which python3-matplotlib belongs to), or
# skips (77) when that interpreter or its matplotlib is missing.
SCRIPT=$1 TEST_PY=$2
py=$(sed -n '1s/^#![ ]*//p' "$SCRIPT")
[ -n "$py" ] || { echo "FAIL: $SCRIPT has no #! line" >&2; exit 1; }
[ -x "$py" ] || { echo "skip: $py (the interpreter of $SCRIPT) is not installed"; exit 77; }
"$py" -c 'import matplotlib' 2>/dev/null ||
    { echo "skip: $py has no matplotlib (apt-get install python3-matplotlib)"; exit 77; }
exec "$py" "$TEST_PY" "$SCRIPT"
