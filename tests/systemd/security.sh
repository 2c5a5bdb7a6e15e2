#!/bin/bash
# security.sh — `systemd-analyze security --offline=yes` of every service in
# systemd/ (templates as instance 0): the overall exposure must be at most
# LIMIT (default 4.0; lower is safer, 10 is a unit with no sandbox at all).
# A bare unit (ExecStart= only) is measured too and must score above LIMIT:
# that checks the number is read from the output at all.
# usage: security.sh SRCDIR [LIMIT]
set -u
src=$1 limit=${2:-4.0}
command -v systemd-analyze >/dev/null || { echo "SKIP: systemd-analyze not installed"; exit 77; }
ver=$(systemd-analyze --version | sed -n 's/^systemd \([0-9]*\).*/\1/p')
[ "${ver:-0}" -ge 250 ] || { echo "SKIP: systemd-analyze $ver has no --offline (250+)"; exit 77; }
t=$(mktemp -d); trap 'rm -rf "$t"' EXIT
cp "$src"/systemd/*.service "$t/"
for u in "$t"/*@.service; do [ -e "$u" ] && ln -s "$(basename "$u")" "${u%@.service}@0.service"; done
printf '[Service]\nExecStart=/bin/true\n' >"$t/czk-bare-control.service"

# exposure UNIT: the overall exposure level, e.g. 1.6
exposure() {
    (cd "$t" && SYSTEMD_LOG_LEVEL=err systemd-analyze security --offline=yes --no-pager "./$1" 2>&1) >"$t/out"
    sed -n "s/^.*Overall exposure level for $1: \([0-9][0-9]*\.[0-9]\).*/\1/p" "$t/out"
}
le() { awk -v a="$1" -v b="$2" 'BEGIN { exit !(a + 0 <= b + 0) }'; }

fail=0
ctl=$(exposure czk-bare-control.service)
if [ -z "$ctl" ] || le "$ctl" "$limit"; then
    echo "FAIL: the bare control unit scores \"$ctl\" (want a number above $limit): output not understood"
    cat "$t/out"
    exit 1
fi
echo "control (no sandbox): $ctl"
n=0
for u in $(cd "$t" && ls *.service | grep -v -e '@\.service$' -e '^czk-bare-control'); do
    x=$(exposure "$u")
    n=$((n + 1))
    if [ -z "$x" ]; then
        echo "FAIL: $u: no overall exposure in the output"; cat "$t/out"; fail=1
    elif le "$x" "$limit"; then
        echo "$u: $x (limit $limit)"
    else
        echo "FAIL: $u: exposure $x is above $limit; what it is exposed to:"
        grep '✗' "$t/out"
        fail=1
    fi
done
[ "$n" -ge 3 ] || { echo "FAIL: only $n services measured"; fail=1; }
exit $fail
