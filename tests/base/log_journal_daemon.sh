#!/bin/sh
# log_journal_daemon.sh GPUD — czk-gpud started with a config that does not
# exist: with stderr the stream JOURNAL_STREAM names, its error line carries
# the priority prefix <3> (journalctl -p err); with stderr elsewhere, none.
set -u
GPUD=$1
d=$(mktemp -d) || exit 99
trap 'rm -rf "$d"' EXIT
: >"$d/err"
js=$(stat -c '%d:%i' "$d/err")
JOURNAL_STREAM=$js "$GPUD" --config "$d/missing.conf" 2>"$d/err" && { echo "gpud started without a config"; exit 1; }
grep -q '^<3>czk-gpud\[[0-9]*\]: error: .*missing\.conf' "$d/err" || { echo "no <3> line:"; cat "$d/err"; exit 1; }
grep -qv '^<[0-7]>' "$d/err" && { echo "a line without a prefix:"; cat "$d/err"; exit 1; }
JOURNAL_STREAM=$js "$GPUD" --config "$d/missing.conf" 2>"$d/plain" && exit 1
grep -q '^czk-gpud\[[0-9]*\]: error: .*missing\.conf' "$d/plain" || { echo "no plain error line:"; cat "$d/plain"; exit 1; }
grep -q '^<' "$d/plain" && { echo "prefix on a stream that is not the journal:"; cat "$d/plain"; exit 1; }
echo "log_journal_daemon: ok"
