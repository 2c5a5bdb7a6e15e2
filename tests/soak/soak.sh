#!/bin/bash
# soak.sh — hours of mixed load on the real daemons (CPU backend: czk-gpud, two
# czk-synth, czk-finalizer), with random kill -9s and random disk-full periods,
# then the exactly-once invariant over everything that was accepted.
#
# Load: CZK_SOAK_CLIENTS client loops submit jobs of random circuits (the four
# BLS12-381 fixtures and two BN254 ones, served by the same daemons), sizes (1..40 partitions) and lanes; some wait (--wait,
# half of them with --out), the rest fire and forget; some submit a request id
# again (the same job must answer, "duplicate") or with another partition
# count (must be refused naming the job); some cancel a job they just
# submitted.  A submission whose answer was lost (gpud killed) is sent again
# with the same request id until it is answered.
#
# Chaos: each daemon runs under a supervisor that starts it again after a
# random 0.2-3 s when it exits (what systemd's Restart= does); once a second,
# with probability 1/CZK_SOAK_KILL_EVERY, one of gpud / a synth / the
# finalizer gets kill -9.  As root, state_dir and output_dir are small tmpfs
# mounts and, with probability 1/CZK_SOAK_FULL_EVERY per second, one or both
# are filled with a filler file for 3-20 s (without root this part is skipped,
# and the table says so).  Finished jobs are moved from output_dir to
# archive/ (on the ordinary disk) once their COMPLETE has been journaled for a
# full pass (30 s), so a long run does not fill the tmpfs.
#
# At the end the clients stop, the fillers go, and everything accepted must
# drain (no progress for 300 s fails).  The checks, and why they are sound:
#   - the accepted jobs are those with an ACCEPT in gpud's journal (read with
#     pipeline_tool before every gpud start and at the end; records keep their
#     sequence numbers through compaction, so the union by seq is the history);
#     every job a client saw accepted must be among them, and its circuit and
#     size must be what the client asked for;
#   - each accepted job ends COMPLETE or CANCEL in the journal, never both,
#     every DONE has status 0 (no partition failed), a COMPLETE job has exactly
#     one DONE per partition and one ACCEPT;
#   - files: a complete job's directory holds exactly partitions 0..N-1, each
#     with proof.json, public.json, identity.json, timings.json, and at most a
#     summary.json besides; a cancelled job holds a subset of that; nothing
#     else exists under output_dir / archive (no unknown job, no .stale, no
#     temporary file, no job in both places);
#   - written once: proof.json is the commit point of a partition (output.c
#     writes it last, by rename).  The finalizer logs every such rename ("proof
#     verified and written", "proof written after waiting for disk space"); a
#     finalizer killed between the rename and its log line leaves a file that
#     its successor answers from ("already written").  So each partition has
#     exactly one write line, or none and an "already written" line; two write
#     lines mean the partition was written twice.  Independently, a sampler
#     records (path, inode, mtime) of every proof.json in output_dir every
#     0.5 s: a path seen with two different (inode, mtime) was replaced;
#   - every proof.json (complete and cancelled jobs) verifies with snarkjs
#     against its circuit's verification key, its public.json is the fixture's,
#     and the proofs a waiting client wrote with --out are the same bytes;
#   - every daemon is running at the end, and no daemon exited other than by
#     our kill -9 (an exit status the supervisor recorded for a pid we did not
#     kill is a violation; a start-up refusal while a disk was full is counted
#     and shown separately);
#   - gpud's RSS is sampled every 10 s and reported (first, largest, last of
#     each incarnation, and after the drain); no assertion on it.
# Prints a table of counts; exits 1 on any violation.  The data stays in
# CZK_SOAK_DIR (default: a new /tmp/czk-soak.XXXXXX), printed at the start.
#
# Environment: CZK_SOAK_SECONDS (1800), CZK_SOAK_CLIENTS (4),
# CZK_SOAK_KILL_EVERY (25: mean seconds between kill -9s), CZK_SOAK_FULL_EVERY
# (60: mean seconds between disk-full periods), CZK_SOAK_TMPFS_MB (64),
# CZK_TEST_SEED (replays the random choices, not the timing).
# usage: soak.sh CZK GPUD SYNTH FIN TOOL SRC
set -u
export LC_ALL=C
CZK=$1 GPUD=$2 SYNTH=$3 FIN=$4 TOOL=$5 SRC=$6
. "$SRC/tests/lib/common.sh" # bad, wait_exit
FIX=$SRC/tests/fixtures
SNARKJS_DIR=${CZK_SNARKJS_DIR:-$SRC/interop/node_modules/snarkjs}
DUR=${CZK_SOAK_SECONDS:-1800}
NCLIENTS=${CZK_SOAK_CLIENTS:-4}
KILL_EVERY=${CZK_SOAK_KILL_EVERY:-25}
FULL_EVERY=${CZK_SOAK_FULL_EVERY:-60}
TMPFS_MB=${CZK_SOAK_TMPFS_MB:-64}
SEED=${CZK_TEST_SEED:-$(od -An -N2 -tu2 /dev/urandom | tr -d ' ')}
RANDOM=$SEED
fail=0

[ -f "$SNARKJS_DIR/package.json" ] && command -v node >/dev/null 2>&1 ||
    { echo "SKIP: snarkjs not installed ($SNARKJS_DIR): run scripts/setup-npm.sh"; exit 77; }
D=${CZK_SOAK_DIR:-$(mktemp -d /tmp/czk-soak.XXXXXX)}
mkdir -p "$D" || exit 2
[ -z "$(ls -A "$D")" ] || { echo "CZK_SOAK_DIR \"$D\" is not empty: give a new directory" >&2; exit 2; }
D=$(cd "$D" && pwd)
echo "== soak: ${DUR} s, $NCLIENTS clients, seed $SEED (CZK_TEST_SEED=$SEED replays the choices), data in $D"
CONF=$D/czk.conf
mkdir -p "$D/run" "$D/state" "$D/out" "$D/archive" "$D/logs" "$D/clients" "$D/client-out" "$D/journal"
export CZK_POOL_HUGEPAGES=never
unset CZK_FAULT CZK_RUNTIME_DIR
now() { date +%s; }
event() { echo "$(now) $*" >>"$D/events"; }

# ------------------------------------------------------------- tmpfs ---
DISKFULL=0
MOUNTS=""
if [ "$(id -u)" = 0 ]; then
    if mount -t tmpfs -o "size=${TMPFS_MB}m,mode=0750" czk-soak-state "$D/state" 2>/dev/null; then
        MOUNTS="$D/state"
        if mount -t tmpfs -o "size=${TMPFS_MB}m,mode=0750" czk-soak-out "$D/out" 2>/dev/null; then
            MOUNTS="$D/out $MOUNTS"
            DISKFULL=1
        fi
    fi
fi
[ "$DISKFULL" = 1 ] || echo "NOTE: not root or tmpfs not allowed: the disk-full periods are skipped"

cat >"$CONF" <<CONF
[czk]
runtime_dir = $D/run
state_dir = $D/state
output_dir = $D/out
log_level = 6
[gpud]
backend = cpu
threads = 2
slots_per_pool = 4
max_queued_partitions = 512
metrics_port = 0
[synth]
threads = 1
reconnect_max_ms = 300
metrics_port = 0
[finalizer]
metrics_port = 0
[circuit.multi]
zkey = $FIX/multi/circuit.zkey
[circuit.linear]
zkey = $FIX/linear/circuit.zkey
[circuit.poseidon]
zkey = $FIX/poseidon/circuit.zkey
[circuit.range]
zkey = $FIX/range/circuit.zkey
[circuit.multi_bn128]
zkey = $FIX/multi_bn128/circuit.zkey
[circuit.poseidon_bn128]
zkey = $FIX/poseidon_bn128/circuit.zkey
CONF

# The journal's history: gpud's supervisor snapshots the journal before each
# start (gpud compacts it at start-up) into $D/journal/snap.*; the main
# process merges those and the journal of the moment into $D/journal.merged,
# by sequence number (unique: a record keeps its seq through compaction).
snap_journal() {
    local tmp=$D/journal/tmp.$BASHPID # expanded here, not in the child a redirection runs in
    [ -f "$D/state/journal" ] || return 0
    "$TOOL" journal "$D/state/journal" >"$tmp" 2>/dev/null && mv "$tmp" "$D/journal/snap.$(date +%s%N)"
    return 0
}
: >"$D/journal.merged"
journal_all() { # main process only: merges, then prints the whole history
    local s
    [ -f "$D/state/journal" ] && "$TOOL" journal "$D/state/journal" >"$D/journal/cur" 2>/dev/null
    s=$(ls "$D"/journal/snap.* 2>/dev/null)
    # shellcheck disable=SC2086
    cat "$D/journal.merged" "$D/journal/cur" $s 2>/dev/null | grep -v ' ? bad' | sort -n -u -k1,1 >"$D/journal.tmp" &&
        mv "$D/journal.tmp" "$D/journal.merged"
    # shellcheck disable=SC2086
    [ -n "$s" ] && rm -f $s
    cat "$D/journal.merged"
}

# ------------------------------------------------------- supervisors ---
# supervise NAME SEED CMD...: runs CMD again after it exits (0.2-3 s later,
# gpud at once), pid in $D/pid.NAME, starts and exits in $D/events
supervise() {
    local name=$1 pid rc
    RANDOM=$2
    shift 2
    while [ ! -e "$D/sup.stop" ]; do
        [ "$name" = gpud ] && snap_journal
        "$@" >>"$D/logs/$name.log" 2>&1 &
        pid=$!
        echo "$pid" >"$D/pid.$name"
        event "start $name $pid"
        wait "$pid"
        rc=$?
        event "exit $name $pid $rc"
        [ -e "$D/sup.stop" ] && break
        # systemd's RestartSec: gpud at once after a kill -9 (its successor
        # must cope with the stale socket), a second after any other exit
        if [ "$name" != gpud ]; then sleep "$((RANDOM % 3)).$((RANDOM % 10))"; elif [ $rc != 137 ]; then sleep 1; fi
    done
}
SUP_PIDS="" CLIENT_PIDS=""
# (bash's "Killed" notices go to supervisor.log)
supervise gpud $((SEED + 1)) "$GPUD" --config "$CONF" 2>>"$D/logs/supervisor.log" & SUP_PIDS="$SUP_PIDS $!"
supervise synth0 $((SEED + 2)) "$SYNTH" --config "$CONF" --numa-node 0 2>>"$D/logs/supervisor.log" &
SUP_PIDS="$SUP_PIDS $!"
supervise synth1 $((SEED + 3)) "$SYNTH" --config "$CONF" --numa-node 0 2>>"$D/logs/supervisor.log" &
SUP_PIDS="$SUP_PIDS $!"
supervise fin $((SEED + 4)) "$FIN" --config "$CONF" 2>>"$D/logs/supervisor.log" & SUP_PIDS="$SUP_PIDS $!"

status_json() { "$CZK" status --config "$CONF" --json 2>/dev/null; }
# wait_up SECONDS: gpud answers with both synths and the finalizer connected
wait_up() {
    local s n f end=$(($(now) + $1))
    while [ "$(now)" -lt "$end" ]; do
        if s=$(status_json); then
            n=$(echo "$s" | sed -n 's/^  "synths": \([0-9]*\).*/\1/p')
            f=$(echo "$s" | sed -n 's/^  "finalizer": \([0-9]*\).*/\1/p')
            [ "${n:-0}" -ge 2 ] && [ "${f:-0}" = 1 ] && return 0
        fi
        sleep 0.1
    done
    return 1
}

FILLING=""
unfill() {
    for m in $FILLING; do rm -f "$m/.filler"; done
    [ -n "$FILLING" ] && event "space $FILLING"
    FILLING=""
}
STOPPED=0
cleanup() {
    : >"$D/clients.stop"
    : >"$D/sup.stop"
    : >"$D/sampler.stop"
    unfill
    if [ "$STOPPED" = 0 ]; then # an early exit: the daemons may still run
        for n in gpud synth0 synth1 fin; do [ -f "$D/pid.$n" ] && kill -TERM "$(cat "$D/pid.$n")" 2>/dev/null; done
        for p in $SUP_PIDS; do wait_exit "$p" 30 >/dev/null || kill -KILL "$p" 2>/dev/null; done
        for p in $CLIENT_PIDS; do kill -TERM "$p" 2>/dev/null; done
    fi
    for m in $MOUNTS; do
        # keep what the run wrote: the tmpfs contents go to the disk first
        mkdir -p "$m.saved" && cp -a "$m/." "$m.saved/" 2>/dev/null
        umount "$m" 2>/dev/null || umount -l "$m" 2>/dev/null
    done
    return 0
}
trap cleanup EXIT
trap 'exit 130' INT TERM

wait_up 60 || { bad "the daemons did not come up"; tail -n 20 "$D"/logs/*.log >&2; exit 1; }

# ------------------------------------------------------------ sampler ---
# (path inode mtime) of every proof.json in output_dir, every 0.5 s, kept as
# a sorted set of distinct triples in $D/files.seen
sampler() {
    : >"$D/files.seen"
    while [ ! -e "$D/sampler.stop" ]; do
        find "$D/out" -name proof.json -printf '%p %i %T@\n' 2>/dev/null | sort >"$D/files.cur"
        if [ -n "$(comm -13 "$D/files.seen" "$D/files.cur")" ]; then
            sort -m -u "$D/files.seen" "$D/files.cur" >"$D/files.new" && mv "$D/files.new" "$D/files.seen"
        fi
        sleep 0.5
    done
}
sampler & SAMPLER_PID=$!

# ------------------------------------------------------------ clients ---
# (public.json tells an orphan's circuit: these fixtures' public signals all differ)
CIRCUITS="linear range poseidon multi multi_bn128 poseidon_bn128"
# the picks set variables (not $(...): a subshell's RANDOM would not advance ours)
pick_job() { # circ: linear 30%, range 30%, poseidon 10%, multi 10%, multi_bn128 10%, poseidon_bn128 10%;
             # np: 1..4 70%, 5..16 25%, 17..40 5%
    local r=$((RANDOM % 100))
    if [ $r -lt 30 ]; then circ=linear; elif [ $r -lt 60 ]; then circ=range
    elif [ $r -lt 70 ]; then circ=poseidon; elif [ $r -lt 80 ]; then circ=multi
    elif [ $r -lt 90 ]; then circ=multi_bn128; else circ=poseidon_bn128; fi
    r=$((RANDOM % 100))
    if [ $r -lt 70 ]; then np=$((1 + RANDOM % 4)); elif [ $r -lt 95 ]; then np=$((5 + RANDOM % 12))
    else np=$((17 + RANDOM % 24)); fi
    case $((RANDOM % 3)) in 0) prio=high ;; 1) prio=normal ;; *) prio=low ;; esac
    r=$((RANDOM % 10)) # 20% wait with --out, 20% wait, 60% fire and forget
    if [ $r -lt 2 ]; then mode=waitout; elif [ $r -lt 4 ]; then mode="wait"; else mode=fire; fi
}
msleep() { sleep "$(($1 / 1000)).$(printf '%03d' $(($1 % 1000)))"; }

# czk_submit OUTFILE CIRC NP PRIO REQ [options...]
czk_submit() {
    local out=$1 circ=$2 np=$3 prio=$4 req=$5 i
    shift 5
    set -- "$@" --reconnect-timeout 300 --priority "$prio" --request-id "$req" --circuit "$circ"
    for i in $(seq 1 "$np"); do set -- "$@" "$FIX/$circ/witness.wtns"; done
    "$CZK" submit --config "$CONF" "$@" >"$out" 2>&1
}
job_in() { sed -n 's/^job \([0-9]*\) accepted.*/\1/p' "$1" | head -n 1; }
# a refusal's reason with numbers and paths blanked, for counting
reason_of() { sed -n 's/.*rejected: //p' "$1" | head -n 1 | sed -e 's/"[^"]*"/"..."/g' -e 's/[0-9][0-9]*/N/g' | cut -c1-70; }

# client I: records one line per event in $D/clients/cI:
#   SUB req circ np prio mode | ACC req job circ np mode | REJ req reason |
#   RETRY req | LOST req | DONE req job | WFAIL req job text | DUP req job same|other:JOB |
#   DUPREJ req reason | DUPX req job ok|accepted:JOB | CANCEL req job answer
client() {
    local i=$1 n=0 rec=$D/clients/c$1 req circ np prio mode o job tries rc opts j2 r
    RANDOM=$((SEED * 7 + i * 1009))
    while [ ! -e "$D/clients.stop" ]; do
        n=$((n + 1))
        req=soak-$i-$n
        pick_job
        case $mode in
        waitout) opts="--wait --out $D/client-out/$req --force" ;;
        wait) opts="--wait" ;;
        *) opts="" ;;
        esac
        echo "SUB $req $circ $np $prio $mode" >>"$rec"
        o=$D/clients/$req.out
        tries=0
        while :; do
            # shellcheck disable=SC2086
            czk_submit "$o" "$circ" "$np" "$prio" "$req" $opts
            rc=$?
            job=$(job_in "$o")
            [ -n "$job" ] && break
            if grep -q "rejected: " "$o"; then break; fi
            # no answer (gpud died and did not come back in time, or another
            # transport error): the same request id again
            tries=$((tries + 1))
            echo "RETRY $req" >>"$rec"
            cp "$o" "$o.try$tries"
            [ $tries -ge 30 ] && break
            sleep 1
        done
        if [ -n "$job" ]; then
            echo "ACC $req $job $circ $np $mode" >>"$rec"
            if [ "$mode" != fire ]; then
                if [ $rc = 0 ] && grep -q "^job $job done: $np partition" "$o"; then
                    echo "DONE $req $job" >>"$rec"
                else
                    echo "WFAIL $req $job rc=$rc $(tail -n 1 "$o" | tr -cd '[:print:]' | cut -c1-120)" >>"$rec"
                fi
            fi
        elif grep -q "rejected: " "$o"; then
            echo "REJ $req $(reason_of "$o")" >>"$rec"
        else
            echo "LOST $req" >>"$rec"
        fi
        if [ -n "$job" ]; then
            r=$((RANDOM % 100))
            if [ $r -lt 15 ]; then
                # the same submission again: the same job answers
                if [ $((RANDOM % 3)) = 0 ]; then opts="--wait"; else opts=""; fi
                tries=0
                while :; do
                    # shellcheck disable=SC2086
                    czk_submit "$o.dup" "$circ" "$np" "$prio" "$req" $opts
                    j2=$(job_in "$o.dup")
                    [ -n "$j2" ] && break
                    grep -q "rejected: " "$o.dup" && break
                    tries=$((tries + 1))
                    [ $tries -ge 30 ] && break
                    sleep 1
                done
                if [ -n "$j2" ]; then
                    if [ "$j2" = "$job" ] && grep -q "^job $job accepted (.*\(duplicate\|answer was lost\)" "$o.dup"; then
                        echo "DUP $req $job same" >>"$rec"
                    else
                        echo "DUP $req $job other:$j2" >>"$rec"
                    fi
                else
                    echo "DUPREJ $req $(reason_of "$o.dup")" >>"$rec"
                fi
            elif [ $r -lt 20 ]; then
                # the request id again with another partition count: refused
                tries=0
                while :; do
                    czk_submit "$o.dupx" "$circ" $((np + 1)) "$prio" "$req"
                    j2=$(job_in "$o.dupx")
                    [ -n "$j2" ] && break
                    grep -q "rejected: " "$o.dupx" && break
                    tries=$((tries + 1))
                    [ $tries -ge 30 ] && break
                    sleep 1
                done
                if [ -n "$j2" ]; then
                    echo "DUPX $req $job accepted:$j2" >>"$rec"
                elif grep -q "rejected: request id \"$req\" was used for job $job of $np partition" "$o.dupx"; then
                    echo "DUPX $req $job ok" >>"$rec"
                else
                    echo "DUPX $req $job unanswered" >>"$rec"
                fi
            elif [ $r -lt 32 ] && [ "$mode" = fire ]; then
                msleep $((RANDOM % 1500))
                "$CZK" cancel --config "$CONF" "$job" >"$o.cancel" 2>&1
                echo "CANCEL $req $job $(head -n 1 "$o.cancel" | tr -cd '[:print:]' | sed 's/[0-9][0-9]*/N/g' | cut -c1-70)" \
                    >>"$rec"
            fi
        fi
        msleep $((RANDOM % 1500))
    done
}
for i in $(seq 1 "$NCLIENTS"); do client "$i" & CLIENT_PIDS="$CLIENT_PIDS $!"; done

# ------------------------------------------------------------- chaos ---
rss_sample() { # TAG
    local p
    p=$(cat "$D/pid.gpud" 2>/dev/null) || return 0
    kb=$(awk '/^VmRSS:/ { print $2 }' "/proc/$p/status" 2>/dev/null)
    [ -n "$kb" ] && echo "$(now) $p $kb $1" >>"$D/rss"
    return 0
}
# archive: jobs whose COMPLETE was journaled before the previous pass go
# from output_dir to archive/ (the finalizer writes summary.json just after
# its last DONE: a full pass later it has long finished)
: >"$D/complete.prev"
archive_pass() {
    local j
    journal_all | awk '$2 == "COMPLETE" { print $3 }' | sort -u >"$D/complete.now"
    for j in $(cat "$D/complete.prev"); do
        [ -d "$D/out/$j" ] || continue
        if [ -e "$D/archive/$j" ]; then
            bad "job $j: output_dir/$j exists again after it was archived"
            mv "$D/out/$j" "$D/archive/$j.again.$(now)"
        else
            mv "$D/out/$j" "$D/archive/$j"
        fi
    done
    mv "$D/complete.now" "$D/complete.prev"
}

T0=$(now)
END=$((T0 + DUR))
full_until=0 last_archive=$T0 last_rss=0
rss_sample start
while [ "$(now)" -lt "$END" ]; do
    sleep 1
    t=$(now)
    if [ $((RANDOM % KILL_EVERY)) = 0 ]; then
        case $((RANDOM % 4)) in 0) v=gpud ;; 1) v=synth0 ;; 2) v=synth1 ;; *) v=fin ;; esac
        p=$(cat "$D/pid.$v" 2>/dev/null)
        if [ -n "$p" ] && kill -0 "$p" 2>/dev/null; then
            event "kill $v $p"
            kill -KILL "$p" 2>/dev/null
        fi
    fi
    if [ "$DISKFULL" = 1 ]; then
        if [ -n "$FILLING" ] && [ "$t" -ge "$full_until" ]; then
            unfill
        elif [ -z "$FILLING" ] && [ $((RANDOM % FULL_EVERY)) = 0 ]; then
            case $((RANDOM % 3)) in 0) FILLING="$D/out" ;; 1) FILLING="$D/state" ;; *) FILLING="$D/out $D/state" ;; esac
            for m in $FILLING; do dd if=/dev/zero of="$m/.filler" bs=64k >/dev/null 2>&1; done
            full_until=$((t + 3 + RANDOM % 18))
            event "full $FILLING $((full_until - t))"
        fi
    fi
    if [ -z "$FILLING" ] && [ $((t - last_archive)) -ge 30 ]; then
        archive_pass
        last_archive=$t
    fi
    if [ $((t - last_rss)) -ge 10 ]; then rss_sample run; last_rss=$t; fi
done

# -------------------------------------------------------------- drain ---
echo "== $(($(now) - T0)) s of load: the clients stop, the disks get space, everything accepted drains"
unfill
: >"$D/clients.stop"
DRAIN0=$(now)
# every daemon is up (the supervisors restart them) before the drain is judged
wait_up 120 || bad "the daemons are not all connected after the load"
for p in $CLIENT_PIDS; do
    wait_exit "$p" 900 >/dev/null || { bad "a client is still running 900 s after the load ended"; kill -TERM "$p"; }
done
last_progress=$(now) last_n=-1
while :; do
    journal_all >"$D/journal.uniq"
    open=$(awk '$2 == "ACCEPT" { a[$3] = 1 } $2 == "COMPLETE" || $2 == "CANCEL" { e[$3] = 1 }
                END { n = 0; for (j in a) if (!(j in e)) n++; print n }' "$D/journal.uniq")
    [ "$open" = 0 ] && break
    n=$(wc -l <"$D/journal.uniq")
    [ "$n" != "$last_n" ] && { last_n=$n; last_progress=$(now); }
    if [ $(($(now) - last_progress)) -ge 300 ]; then
        bad "$open accepted jobs did not finish: no journal progress for 300 s"
        status_json >"$D/status.stuck"
        break
    fi
    sleep 2
done
echo "== drained in $(($(now) - DRAIN0)) s"
sleep 3 # the last summary.json writes
rss_sample drained
archive_pass

# nothing left crashed: every daemon is running and connected now
for n in gpud synth0 synth1 fin; do
    p=$(cat "$D/pid.$n" 2>/dev/null)
    kill -0 "$p" 2>/dev/null || bad "$n is not running at the end"
done
wait_up 30 || bad "the daemons are not all connected at the end"
status_json >"$D/status.final"

# stop everything; the journal once more, now that gpud is stopped
: >"$D/sup.stop"
: >"$D/sampler.stop"
event stopping
STOPPED=1
for n in gpud synth0 synth1 fin; do kill -TERM "$(cat "$D/pid.$n")" 2>/dev/null; done
for p in $SUP_PIDS; do wait_exit "$p" 30 >/dev/null || bad "a daemon did not stop on SIGTERM"; done
wait "$SAMPLER_PID" 2>/dev/null
snap_journal
journal_all >"$D/journal.uniq"

# -------------------------------------------------------------- checks ---
echo "== checks"
: >"$D/tmpfiles"
: >"$D/v.exits"
: >"$D/startfail"
cat "$D"/clients/c* >"$D/clients.all" 2>/dev/null
J=$D/journal.uniq

# accepted jobs: journal ACCEPTs; what clients saw must agree with it
awk '$2 == "ACCEPT" { print $3 }' "$J" | sort -n | uniq -c | awk '$1 != 1 { print "job " $2 ": " $1 " ACCEPT records" }' \
    >"$D/v.accept"
[ -s "$D/v.accept" ] && bad "ACCEPT journaled more than once: $(head -n 5 "$D/v.accept" | tr '\n' ';')"
awk '$2 == "ACCEPT" { print $3 }' "$J" | sort -u >"$D/jobs.accepted"
# job -> circuit nparts mode req, from the clients' records
awk '$1 == "ACC" { print $3, $4, $5, $6, $2 }' "$D/clients.all" | sort -k1,1 >"$D/jobs.clients"
awk '{ print $1 }' "$D/jobs.clients" | uniq -d >"$D/v.twice"
[ -s "$D/v.twice" ] && bad "one job id answered two different requests: $(head -n 5 "$D/v.twice" | tr '\n' ' ')"
awk '{ print $1 }' "$D/jobs.clients" | sort -u | comm -23 - "$D/jobs.accepted" >"$D/v.unjournaled"
[ -s "$D/v.unjournaled" ] && bad "jobs a client saw accepted have no ACCEPT in the journal: $(head -n 10 "$D/v.unjournaled" | tr '\n' ' ')"
# jobs accepted whose client never learned it (its answer lost for good): ask gpud... it is stopped, so
# they keep their circuit unknown and are checked by their journal records and files only
comm -13 <(awk '{ print $1 }' "$D/jobs.clients" | sort -u) "$D/jobs.accepted" >"$D/jobs.orphans"

# journal states per job
awk -v V="$D/v.journal" '
    $2 == "ACCEPT" { acc[$3] = 1 }
    $2 == "COMPLETE" { comp[$3]++ }
    $2 == "CANCEL" { canc[$3]++ }
    $2 == "DONE" { done[$3 " " $4]++; nd[$3]++; if ($5 != 0) print "job " $3 " partition " $4 ": DONE with status " $5 > V }
    END {
        for (j in acc) {
            if ((j in comp) && (j in canc)) print "job " j ": both COMPLETE and CANCEL" > V
            if ((j in comp) && comp[j] > 1) print "job " j ": COMPLETE journaled " comp[j] " times" > V
            if (j in comp) print j, "complete"; else if (j in canc) print j, "cancelled"; else print j, "open"
        }
        for (k in done) if (done[k] > 1) print "job " k ": DONE journaled " done[k] " times" > V
    }' "$J" | sort -k1,1 >"$D/jobs.state"
[ -s "$D/v.journal" ] && bad "journal: $(head -n 10 "$D/v.journal" | tr '\n' ';')"
awk '$2 == "open" { print "job " $1 " never finished" }' "$D/jobs.state" >"$D/v.open"
[ -s "$D/v.open" ] && bad "$(wc -l <"$D/v.open") accepted jobs never finished: $(head -n 10 "$D/v.open" | tr '\n' ';')"

# the table job state circ np mode (orphans: circuit "?")
join -a1 -e '?' -o 1.1,1.2,2.2,2.3,2.4,2.5 "$D/jobs.state" "$D/jobs.clients" >"$D/jobs.table"
# a complete job: exactly one DONE per partition 0..np-1
awk -v V="$D/v.done" 'NR == FNR { if ($2 == "complete" && $4 != "?") np[$1] = $4; next }
    $2 == "DONE" { if ($3 in np) { if ($4 >= np[$3]) print "job " $3 ": DONE for partition " $4 " of " np[$3] > V; n[$3]++ } }
    END { for (j in np) if (n[j] != np[j]) print "job " j ": " n[j] + 0 " DONE records for " np[j] " partitions" > V }' \
    "$D/jobs.table" "$J"
[ -s "$D/v.done" ] && bad "DONE records: $(head -n 10 "$D/v.done" | tr '\n' ';')"

# files under output_dir and archive/
( cd "$D/out" && find . -mindepth 1 -type f -printf 'out %P\n' ) >"$D/files.list" 2>/dev/null
( cd "$D/archive" && find . -mindepth 1 -type f -printf 'archive %P\n' ) >>"$D/files.list"
( cd "$D/out" && find . -mindepth 1 -maxdepth 1 -type d -printf 'out %P/\n' ) >>"$D/files.list" 2>/dev/null
( cd "$D/archive" && find . -mindepth 1 -maxdepth 1 -type d -printf 'archive %P/\n' ) >>"$D/files.list"
awk -v V="$D/v.files" -v L="$D/proofs.list" -v T="$D/tmpfiles" '
    NR == FNR { st[$1] = $2; circ[$1] = $3; np[$1] = $4; next }
    {
        where = $1; path = $2; n = split(path, a, "/")
        j = a[1]
        if (!(j in st)) { print where "/" path ": not an accepted job (or not a job at all)" > V; next }
        if (n == 2 && a[2] == "") { if ((j in place) && place[j] != where) print "job " j ": in both output_dir and archive" > V; place[j] = where; next }
        if (n == 2 && a[2] == "summary.json") next
        if (a[n] ~ /^\..*\.tmp$/) { print where "/" path > T; next }
        ok = n == 3 && a[2] ~ /^[0-9]+$/ && (np[j] == "?" || a[2] + 0 < np[j]) &&
             (a[3] == "proof.json" || a[3] == "public.json" || a[3] == "identity.json" || a[3] == "timings.json")
        if (!ok) { print where "/" path ": not a file of a partition of job " j > V; next }
        have[j " " a[2] " " a[3]] = 1
        if (a[3] == "proof.json") print j, a[2], where, circ[j] > L
    }
    END {
        for (j in st) if (st[j] == "complete" && np[j] != "?")
            for (p = 0; p < np[j]; p++)
                for (f = 1; f <= 4; f++) {
                    nm = f == 1 ? "proof.json" : f == 2 ? "public.json" : f == 3 ? "identity.json" : "timings.json"
                    if (!(j " " p " " nm in have)) print "job " j " partition " p ": no " nm > V
                }
    }' "$D/jobs.table" "$D/files.list"
[ -s "$D/v.files" ] && bad "$(wc -l <"$D/v.files") file problems: $(head -n 10 "$D/v.files" | tr '\n' ';')"

# written once: the finalizer's log lines per partition
cat "$D"/logs/fin.log | awk '
    match($0, /job [0-9]+ partition [0-9]+: /) {
        split(substr($0, RSTART, RLENGTH), a, /[ :]+/); k = a[2] " " a[4]
        if (index($0, ": proof verified and written") || index($0, ": proof written after waiting for disk space")) w[k]++
        else if (index($0, ": already written, answering from the files")) f[k]++
        seen[k] = 1
    }
    END { for (k in seen) print k, w[k] + 0, f[k] + 0 }' | sort -n -k1,1 -k2,2 >"$D/writes"
awk -v V="$D/v.writes" 'NR == FNR { st[$1] = $2; np[$1] = $4; next }
    { w[$1 " " $2] = $3; f[$1 " " $2] = $4; if ($3 > 1) print "job " $1 " partition " $2 ": written " $3 " times" > V }
    END { for (j in st) if (st[j] == "complete" && np[j] != "?")
            for (p = 0; p < np[j]; p++) if (w[j " " p] + 0 == 0 && f[j " " p] + 0 == 0)
                print "job " j " partition " p ": no write logged and never answered from the files" > V }' \
    "$D/jobs.table" "$D/writes"
[ -s "$D/v.writes" ] && bad "written-once: $(head -n 10 "$D/v.writes" | tr '\n' ';')"
# the sampler: one (inode, mtime) per path
awk '{ k = $2 " " $3; if (($1 in s) && s[$1] != k) print $1; s[$1] = k }' "$D/files.seen" | sort -u >"$D/v.rewritten"
[ -s "$D/v.rewritten" ] && bad "proof.json replaced after it was written: $(head -n 5 "$D/v.rewritten" | tr '\n' ' ')"
[ -n "$(ls -A "$D/out/.stale" 2>/dev/null)" ] && bad "files were moved aside to output_dir/.stale: $(ls "$D/out/.stale" | head)"

# public.json is the fixture's; every proof verifies with snarkjs; --out copies are the same bytes
: >"$D/verify.list"
: >"$D/v.public"
while read -r j p where c; do
    d=$D/$where/$j/$p
    if [ "$c" = "?" ]; then
        for x in $CIRCUITS; do cmp -s "$d/public.json" "$FIX/$x/public.json" && c=$x; done
    fi
    if [ "$c" = "?" ] || ! cmp -s "$d/public.json" "$FIX/$c/public.json"; then
        echo "job $j partition $p: public.json is not circuit $c's" >>"$D/v.public"
        continue
    fi
    echo "$FIX/$c/verification_key.json $d/public.json $d/proof.json" >>"$D/verify.list"
done <"$D/proofs.list"
[ -s "$D/v.public" ] && bad "$(head -n 5 "$D/v.public" | tr '\n' ';')"
: >"$D/v.clientout"
awk '$4 == "waitout" { print $1, $3, $5 }' "$D/jobs.clients" | while read -r j np req; do
    st=$(awk -v j="$j" '$1 == j { print $2 }' "$D/jobs.state")
    [ "$st" = complete ] || continue
    for p in $(seq 0 $((np - 1))); do
        f=$D/archive/$j/$p/proof.json; [ -f "$f" ] || f=$D/out/$j/$p/proof.json
        cmp -s "$f" "$D/client-out/$req/$p/proof.json" || echo "job $j partition $p: --out proof.json differs" >>"$D/v.clientout"
    done
done
[ -s "$D/v.clientout" ] && bad "$(head -n 5 "$D/v.clientout" | tr '\n' ';')"
NV=$(wc -l <"$D/verify.list")
# two node processes (the machine's two cores), half the list each
awk 'NR % 2 == 1' "$D/verify.list" >"$D/verify.part.a"
awk 'NR % 2 == 0' "$D/verify.list" >"$D/verify.part.b"
VPIDS=""
for x in a b; do
    node "$SRC/tests/pipeline/verify_batch.js" "$SNARKJS_DIR" <"$D/verify.part.$x" >"$D/verify.part.$x.out" 2>&1 &
    VPIDS="$VPIDS $!"
done
wait_ok=0
for x in $VPIDS; do wait "$x" || wait_ok=1; done
NOK=$(cat "$D"/verify.part.*.out | grep -c '^OK ')
[ "$NOK" = "$NV" ] && [ $wait_ok = 0 ] || bad "snarkjs: $NOK of $NV proofs verified: $(grep -hv '^OK ' "$D"/verify.part.*.out | head -n 5 | tr '\n' ';')"

# clients: what they saw
awk -v V="$D/v.clients" '
    $1 == "DUP" && $4 != "same" { print "request " $2 ": a duplicate answered " $4 " instead of job " $3 > V }
    $1 == "DUPX" && $4 ~ /^accepted/ { print "request " $2 ": another partition count was accepted (" $4 ")" > V }
    $1 == "WFAIL" { print "request " $2 " job " $3 ": the waiting client did not see it done: " $0 > V }
' "$D/clients.all"
# a waiting client whose job was cancelled by nobody must have seen it done
[ -s "$D/v.clients" ] && bad "clients: $(head -n 5 "$D/v.clients" | tr '\n' ';')"

# daemons: every exit is one of our kill -9s (or the final SIGTERM)
awk -v V="$D/v.exits" -v F="$D/startfail" '
    $2 == "kill" { killed[$4] = 1 }
    $2 == "stopping" { stopping = 1 }
    $2 == "full" { full = 1 } $2 == "space" { full = 0 }
    $2 == "exit" {
        if ($5 == 137 && ($4 in killed)) next
        if ($5 == 0 && stopping) next
        if (full && ($5 == 1 || $5 == 2)) { print $3 " pid " $4 " exited " $5 " while a disk was full" > F; next }
        print $3 " pid " $4 " exited with status " $5 " (not killed by the test)" > V
    }' "$D/events"
[ -s "$D/v.exits" ] && bad "daemons exited on their own: $(head -n 10 "$D/v.exits" | tr '\n' ';')"

# ------------------------------------------------------------- table ---
cnt() { grep -c "$@" 2>/dev/null || true; }
c=$D/clients.all
echo
echo "== soak summary (seed $SEED, $DUR s of load, data in $D)"
printf '%-44s %s\n' "jobs submitted (request ids)" "$(cnt '^SUB ' "$c")"
printf '%-44s %s\n' "  accepted (journal ACCEPT)" "$(wc -l <"$D/jobs.accepted")"
printf '%-44s %s\n' "    by a waiting client / fire-and-forget" "$(awk '$1 == "ACC" && $6 != "fire"' "$c" | wc -l) / $(awk '$1 == "ACC" && $6 == "fire"' "$c" | wc -l)"
printf '%-44s %s\n' "    accepted, client never told" "$(wc -l <"$D/jobs.orphans")"
printf '%-44s %s\n' "  completed" "$(cnt ' complete$' "$D/jobs.state")"
printf '%-44s %s\n' "  cancelled" "$(cnt ' cancelled$' "$D/jobs.state")"
printf '%-44s %s\n' "  never finished" "$(cnt ' open$' "$D/jobs.state")"
printf '%-44s %s\n' "  rejected" "$(cnt '^REJ ' "$c")"
awk '$1 == "REJ" { $1 = ""; $2 = ""; sub(/^ +/, ""); r[$0]++ } END { for (k in r) printf "    %-40s %d\n", k, r[k] }' "$c"
printf '%-44s %s\n' "  resubmitted after a lost answer" "$(cnt '^RETRY ' "$c")"
printf '%-44s %s\n' "  given up (no answer after 30 tries)" "$(cnt '^LOST ' "$c")"
printf '%-44s %s\n' "duplicates answered with the same job" "$(awk '$1 == "DUP" && $4 == "same"' "$c" | wc -l)"
printf '%-44s %s\n' "duplicates answered otherwise" "$(awk '$1 == "DUP" && $4 != "same"' "$c" | wc -l)"
printf '%-44s %s\n' "duplicates refused (transient)" "$(cnt '^DUPREJ ' "$c")"
printf '%-44s %s\n' "request id reused, other size: refused" "$(awk '$1 == "DUPX" && $4 == "ok"' "$c" | wc -l)"
printf '%-44s %s\n' "request id reused, other size: other" "$(awk '$1 == "DUPX" && $4 != "ok"' "$c" | wc -l)"
printf '%-44s %s\n' "cancels sent" "$(cnt '^CANCEL ' "$c")"
awk '$1 == "CANCEL" { $1 = ""; $2 = ""; $3 = ""; sub(/^ +/, ""); r[$0]++ } END { for (k in r) printf "    %-40s %d\n", k, r[k] }' "$c"
printf '%-44s %s\n' "partitions proved (proof.json files)" "$(wc -l <"$D/proofs.list")"
printf '%-44s %s\n' "  written after waiting for disk space" "$(cat "$D"/logs/fin.log | cnt 'proof written after waiting for disk space')"
printf '%-44s %s\n' "  temporary files left by kill -9 (noted)" "$(wc -l <"$D/tmpfiles" 2>/dev/null || echo 0)"
printf '%-44s %s\n' "  RESULTs answered from the files" "$(cat "$D"/logs/fin.log | cnt 'already written, answering from the files')"
printf '%-44s %s\n' "proofs verified by snarkjs" "$NOK / $NV"
for n in gpud synth0 synth1 fin; do
    printf '%-44s %s\n' "kill -9 $n" "$(awk -v n="$n" '$2 == "kill" && $3 == n' "$D/events" | wc -l)"
done
printf '%-44s %s\n' "daemon exits not caused by the test" "$(wc -l <"$D/v.exits" 2>/dev/null || echo 0)"
printf '%-44s %s\n' "start-up exits while a disk was full" "$(wc -l <"$D/startfail" 2>/dev/null || echo 0)"
if [ "$DISKFULL" = 1 ]; then
    printf '%-44s %s\n' "disk-full periods (output/state/both)" "$(awk -v o="$D/out" -v s="$D/state" '$2 == "full" {
        if (NF == 5) b++; else if ($3 == o) x++; else y++ } END { printf "%d (%d/%d/%d)", x + y + b, x, y, b }' "$D/events")"
else
    printf '%-44s %s\n' "disk-full periods" "skipped (needs root and tmpfs)"
fi
awk '{ if (!($2 in first)) { first[$2] = $3; t0[$2] = $1; order[++n] = $2 } last[$2] = $3; t1[$2] = $1; cnt[$2]++
       if ($3 > max[$2]) max[$2] = $3; all = $3 }
    END { printf "%-44s %s kB\n", "gpud RSS: first sample / after the drain", (n ? first[order[1]] : "?") " / " all
          best = ""; for (i = 1; i <= n; i++) { p = order[i]; if (best == "" || cnt[p] > cnt[best]) best = p }
          printf "%-44s %d\n", "gpud incarnations sampled", n
          if (best != "") printf "%-44s %s -> %s kB over %d s\n", "gpud RSS, longest-lived incarnation", first[best], last[best], t1[best] - t0[best]
          big = 0; for (p in max) if (max[p] > big) big = max[p]
          printf "%-44s %s kB\n", "gpud RSS: largest sample", big }' "$D/rss"
printf '%-44s %s\n' "violations" "$( [ "$fail" = 0 ] && echo none || echo "SEE FAIL LINES ABOVE")"
echo "(data: $D)"
[ "$fail" = 0 ] && echo "ok"
exit $fail
