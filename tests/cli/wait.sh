#!/bin/sh
# wait.sh — `czk submit --wait` when the job cannot move (fake_gpud --stall: the job
# stays queued, partition 0 stays in finalize), two fakes at once:
#   A: no czk-synth and no czk-finalizer connected.  The client warns about
#      both on stderr, the progress line (on a terminal, through script(1)
#      when it exists) says why each partition waits, and --timeout ends the
#      wait with exit 1 and a message naming the job and what is missing.
#   B: one czk-synth, no czk-finalizer: only the finalizer is warned about.
# usage: wait.sh CZK FAKE_GPUD
set -u
CZK=$1 FAKE=$2
T=$(mktemp -d /tmp/czk-cli-wait.XXXXXX)
fail=0
PIDS=
bad() { echo "FAIL: $*" >&2; fail=1; }
cleanup() {
    for p in $PIDS; do kill "$p" 2>/dev/null && wait "$p" 2>/dev/null; done
    if [ "$fail" = 0 ]; then rm -rf "$T"; else echo "(kept $T)" >&2; fi
}
trap cleanup EXIT
unset CZK_RUNTIME_DIR CZK_STATE_DIR XDG_RUNTIME_DIR
head -c 4096 /dev/urandom >"$T/w.wtns"

start_fake() { # NAME ARGS...
    name=$1; shift
    "$FAKE" "$T/$name" --stall "$@" >"$T/$name.fake" 2>&1 &
    PIDS="$PIDS $!"
    for _ in $(seq 1 100); do grep -q '^listening' "$T/$name.fake" 2>/dev/null && return 0; sleep 0.05; done
    bad "fake_gpud $name did not start: $(cat "$T/$name.fake")"; exit 1
}
start_fake a --synths 0 --finalizer 0
start_fake b --synths 1 --finalizer 0

TIMEOUT=10 # > MISSING_WARN_S (5) + STATUS_POLL_MS (2 s) + the first poll (1 s)
sub_a="$CZK submit --runtime-dir $T/a --circuit linear --wait --timeout $TIMEOUT $T/w.wtns $T/w.wtns"
tty=0
if command -v script >/dev/null 2>&1 && script -qec true /dev/null >/dev/null 2>&1; then
    tty=1
    script -qec "$sub_a 2>$T/a.err" /dev/null >"$T/a.out" </dev/null &
else
    echo "note: script(1) missing: the progress line on a terminal is not checked"
    $sub_a >"$T/a.out" 2>"$T/a.err" &
fi
pa=$!
"$CZK" submit --runtime-dir "$T/b" --circuit linear --wait --timeout "$TIMEOUT" "$T/w.wtns" \
    >"$T/b.out" 2>"$T/b.err" &
pb=$!
wait "$pa"; ra=$?
wait "$pb"; rb=$?

# A: both missing
[ "$ra" = 1 ] || bad "A: exit $ra, want 1 (--timeout)"
grep -q 'WARNING: no czk-synth has been connected to czk-gpud for 5 s: job 7 cannot be synthesised' "$T/a.err" ||
    bad "A: no warning about the missing czk-synth: $(cat "$T/a.err")"
grep -q 'WARNING: no czk-finalizer has been connected to czk-gpud' "$T/a.err" ||
    bad "A: no warning about the missing czk-finalizer: $(cat "$T/a.err")"
grep -q "job 7 has not finished within --timeout $TIMEOUT s (0 of 2 partitions done; no czk-synth is connected; no czk-finalizer is connected); it goes on" "$T/a.err" ||
    bad "A: not the timeout message: $(cat "$T/a.err")"
grep -q '^STATUS' "$T/a.fake" || bad "A: the client never asked for the status"
if [ "$tty" = 1 ]; then
    tr '\r' '\n' <"$T/a.out" >"$T/a.lines"
    grep -q 'partition 1 .*queued .*(waiting: no czk-synth is connected to czk-gpud)' "$T/a.lines" ||
        bad "A: the progress line does not say why partition 1 waits: $(tail -n 5 "$T/a.lines")"
    grep -q 'partition 0 .*finalize .*(waiting: no czk-finalizer is connected to czk-gpud)' "$T/a.lines" ||
        bad "A: the progress line does not say why partition 0 waits: $(tail -n 5 "$T/a.lines")"
fi

# B: only the finalizer missing
[ "$rb" = 1 ] || bad "B: exit $rb, want 1 (--timeout)"
grep -q 'WARNING: no czk-finalizer has been connected' "$T/b.err" || bad "B: no finalizer warning: $(cat "$T/b.err")"
grep -q 'czk-synth' "$T/b.err" && bad "B: warned about czk-synth although one is connected: $(cat "$T/b.err")"
grep -q '^job 7 partition 0: finalize' "$T/b.out" || bad "B: no progress line for partition 0: $(cat "$T/b.out")"

[ "$fail" = 0 ] && echo "cli wait: ok"
exit "$fail"
