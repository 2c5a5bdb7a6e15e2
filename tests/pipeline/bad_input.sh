#!/bin/sh
# bad_input.sh — every kind of bad input gets a clear error, and the daemons
# keep serving everyone else: a good job submitted after each case (and one
# running through all of them) still proves.
#   client side (czk submit exits 2 and names the file): a witness the user
#   cannot read, a missing file, a directory
#   gpud side (REJECTED with the reason, exit 2, nothing left in the spool):
#   unknown circuit, witness of the wrong length (another circuit's), wrong
#   curve (bn128), truncated file, garbage file, too many partitions
#   a witness value >= r (gpud); the same in a spooled copy changed on disk
#   (the synth fails the job, its reason does not show the spool path)
#   raw protocol (pipeline_tool raw): garbage before/after HELLO, a record over
#   64 KiB, a map claiming 2^32-1 entries, SUBMIT without descriptors (the
#   protocol has no path gpud could open), a pipe / a directory / a 64 GiB
#   sparse file as witness, a client that hangs up right after SUBMIT, a
#   client that never says anything
#   ownership: another user may not cancel a job (when run as root)
# usage: bad_input.sh CZK GPUD SYNTH FIN TOOL SRC
. "$(dirname "$0")/lib.sh"
require_snarkjs

GPUD_EXTRA="max_partitions_per_job = 8" write_config </dev/null
start_gpud; start_synth 0; start_fin
wait_up 1 || exit 1
W=$FIX/multi/witness.wtns

# a long job that runs while all the bad input arrives: it must not notice
submit bg multi 4 low --wait --out "$T/client/bg" & pbg=$!
for _ in $(seq 1 100); do [ -n "$(job_of "$T/sub.bg" 2>/dev/null)" ] && break; sleep 0.05; done
[ -n "$(job_of "$T/sub.bg")" ] || { bad "the background job was not accepted: $(cat "$T/sub.bg")"; exit 1; }

n_good=0
good_job() { # a job that must succeed after each bad case
    n_good=$((n_good + 1))
    submit good$n_good linear 1 high --wait --out "$T/client/good$n_good"; rc=$?
    [ $rc = 0 ] || { bad "good job after \"$1\" exited $rc:"; cat "$T/sub.good$n_good" >&2; return; }
    expect_job "$(job_of "$T/sub.good$n_good")" linear 1 "$T/client/good$n_good"
}

# rejected CASE PATTERN CZK-SUBMIT-ARGS...: exit 2, message matches, no job
rejected() {
    case=$1 pat=$2; shift 2
    "$CZK" submit --config "$CONF" "$@" >"$T/bad.out" 2>&1; rc=$?
    if [ $rc != 2 ] || ! grep -q -- "$pat" "$T/bad.out"; then
        bad "$case: exit $rc (want 2), message: $(cat "$T/bad.out") (want /$pat/)"
    else
        echo "ok: $case -> $(head -n 1 "$T/bad.out")"
    fi
    grep -q "^job .* accepted" "$T/bad.out" && bad "$case: a job was accepted"
    # gpud's reasons name the partition, never its spool
    grep -q "/spool/" "$T/bad.out" && bad "$case: the message shows gpud's spool path: $(cat "$T/bad.out")"
    ls "$T/state/spool" 2>/dev/null | grep -q -v "^$(job_of "$T/sub.bg")\$" && {
        # the background job's own spool is fine; anything else was left behind
        for d in "$T"/state/spool/*; do
            [ "$(basename "$d")" = "$(job_of "$T/sub.bg")" ] || bad "$case: left $d in the spool"
        done
    }
    return 0
}

log "client-side errors"
cp "$W" "$T/secret.wtns"; chmod 600 "$T/secret.wtns"
if [ "$(id -u)" = 0 ]; then
    # root reads anything: try as nobody (the client fails before it connects)
    chmod 711 "$T"
    setpriv --reuid=65534 --regid=65534 --clear-groups "$CZK" submit --runtime-dir "$RT" --circuit multi \
        "$T/secret.wtns" >"$T/bad.out" 2>&1; rc=$?
else
    chmod 000 "$T/secret.wtns"
    "$CZK" submit --config "$CONF" --circuit multi "$T/secret.wtns" >"$T/bad.out" 2>&1; rc=$?
fi
[ $rc = 2 ] && grep -q "cannot open witness \"$T/secret.wtns\" (partition 0): Permission denied" "$T/bad.out" ||
    bad "unreadable witness: exit $rc, $(cat "$T/bad.out")"
rejected "missing file" "cannot open witness \"$T/nope.wtns\" (partition 1): No such file" --circuit multi "$W" "$T/nope.wtns"
# the client says the path is a directory and not a regular file, in either
# order ("is a directory, not a regular file" / "is not a regular file (it is a directory)")
rejected "a directory" 'directory, not a regular file\|not a regular file (it is a directory)' --circuit multi "$T"
rejected "no circuit" "circuit NAME is required" "$W"
rejected "bad priority" "priority must be" --circuit multi --priority urgent "$W"

log "gpud rejections"
rejected "unknown circuit" 'rejected: unknown circuit "nosuch"' --circuit nosuch "$W"
rejected "wrong length" "partition 1: witness has 47 values but circuit \"multi\" has 1005 variables.*partition 1 is \"$FIX/linear/witness.wtns\"" \
    --circuit multi "$W" "$FIX/linear/witness.wtns"
rejected "wrong curve" "partition 0: not a BLS12-381 witness (prime is bn128's" --circuit multi "$FIX/tiny_bn128/witness.wtns"
head -c 5000 "$W" >"$T/trunc.wtns"
rejected "truncated" "partition 0: not a valid witness.*truncated" --circuit multi "$T/trunc.wtns"
head -c 30000 /dev/urandom >"$T/garbage.wtns"
rejected "garbage file" "partition 0: not a valid witness" --circuit multi "$T/garbage.wtns"
cat "$W" /dev/zero 2>/dev/null | head -c 200000 >"$T/long.wtns"
rejected "oversized file" "partition 0: .*bytes" --circuit multi "$T/long.wtns"
# partitions are spooled by several threads at once ([gpud] intake_threads):
# the lowest failing one is named, though partition 3 (refused by its size,
# before any copy) fails sooner than partition 1 (copied, fsynced, then
# validated), both started at once
rejected "two bad partitions" "partition 1: not a valid witness" --circuit multi \
    "$W" "$T/garbage.wtns" "$W" "$T/long.wtns" "$W" "$W"
grep -q "partition 3" "$T/bad.out" && bad "two bad partitions: partition 3 named: $(cat "$T/bad.out")"
rejected "too many partitions" "max_partitions_per_job" --circuit linear \
    "$W" "$W" "$W" "$W" "$W" "$W" "$W" "$W" "$W"
good_job "gpud rejections"

# a witness with a value >= r: gpud checks every value before it accepts
python3 - "$W" "$T/big.wtns" <<'PY'
import struct, sys
b = bytearray(open(sys.argv[1], "rb").read())
off = 12
while True:  # section 2 holds the values (section 1: n8, prime, count)
    typ, size = struct.unpack_from("<IQ", b, off)
    if typ == 2:
        b[off + 12 + 3 * 32:off + 12 + 4 * 32] = b"\xff" * 32  # w[3] = 2^256 - 1
        break
    off += 12 + size
open(sys.argv[2], "wb").write(b)
PY
rejected "a value >= r" "partition 0: .*value 3 is not below r" --circuit multi "$T/big.wtns"
# the same value reaching the synth (its spooled copy changed on disk after
# gpud checked it): the job fails with the synth's reason, which names the
# witness but not the spool file (state_dir is not the client's)
kill -STOP "$SYNTH0_PID"
"$CZK" submit --config "$CONF" --circuit multi --wait "$W" >"$T/sub.spool" 2>&1 & pspool=$!
for _ in $(seq 1 100); do
    js=$(job_of "$T/sub.spool"); [ -n "$js" ] && [ -f "$T/state/spool/$js/0.wtns" ] && break; sleep 0.05
done
if [ -n "$js" ] && [ -f "$T/state/spool/$js/0.wtns" ]; then
    cp "$T/big.wtns" "$T/state/spool/$js/0.wtns"
    kill -CONT "$SYNTH0_PID"
    wait_exit "$pspool" 60; rc=$?
    [ $rc != 0 ] && grep -q "partition 0.*witness.*value 3 is not below r" "$T/sub.spool" ||
        bad "a spooled witness changed on disk: exit $rc, no \"value 3 is not below r\" reason: $(cat "$T/sub.spool")"
    grep -q "/spool/" "$T/sub.spool" && bad "a fill failure showed the client the spool path: $(cat "$T/sub.spool")"
else
    kill -CONT "$SYNTH0_PID"
    bad "the job with a witness to change in the spool was not accepted: $(cat "$T/sub.spool")"
fi
good_job "a witness value >= r"

log "raw protocol abuse"
before=$(wc -l <"$T/logs/gpud.log")
for mode in prehello garbage oversize hugecount nofds pipefd dirfd sparse midsubmit silent; do
    "$TOOL" raw "$RT/czk.sock" $mode "$W" >"$T/raw.out" 2>&1; rc=$?
    [ $rc = 0 ] || bad "raw $mode: exit $rc: $(cat "$T/raw.out")"
    echo "ok: raw $(cat "$T/raw.out")"
    kill -0 "$GPUD_PID" 2>/dev/null || { bad "czk-gpud died after raw $mode"; dump_logs; exit 1; }
done
# every client's hang-up logs "closed": only the decoder's reason for this
# abuse counts (prehello, garbage and hugecount each send an undecodable record)
n=$(tail -n +$((before + 1)) "$T/logs/gpud.log" | grep -c "closed: malformed record from")
[ "$n" -ge 3 ] || bad "gpud logged $n closes for a malformed record (want 3: prehello, garbage, hugecount)"
good_job "raw protocol abuse"
if [ "$(id -u)" = 0 ] && getent group nogroup >/dev/null; then
    log "another user may not cancel our job"
    stop_all
    CZK_EXTRA="client_group = nogroup" write_config </dev/null
    start_gpud; start_synth 0; start_fin
    wait_up 1 || exit 1
    chmod 755 "$RT"
    submit own multi 2 normal; jo=$(job_of "$T/sub.own")
    setpriv --reuid=65534 --regid=65534 --init-groups "$CZK" cancel --runtime-dir "$RT" "$jo" >"$T/bad.out" 2>&1; rc=$?
    # another user's job is answered like one that does not exist: nothing about its owner
    [ $rc = 2 ] && grep -q "job $jo is not known" "$T/bad.out" && ! grep -q "uid" "$T/bad.out" ||
        bad "foreign cancel: exit $rc, $(cat "$T/bad.out")"
    expect_job "$jo" multi 2
fi

wait_exit "$pbg" 120; rc=$?
[ $rc = 0 ] || { bad "the background job exited $rc:"; cat "$T/sub.bg" >&2; }
expect_job "$(job_of "$T/sub.bg")" multi 4 "$T/client/bg"
kill -0 "$GPUD_PID" && kill -0 "$FIN_PID" && kill -0 "$SYNTH0_PID" || bad "a daemon died"
# the client that hung up right after SUBMIT: if gpud accepted its job before
# noticing, that job ran to the end like any other; nothing is left active
for _ in $(seq 1 100); do [ "$(st jobs.active)" = 0 ] && break; sleep 0.2; done
[ "$(st jobs.active)" = 0 ] || bad "jobs left active: $(status_json)"
check_all
[ "$fail" = 0 ] && echo "ok"
exit $fail
