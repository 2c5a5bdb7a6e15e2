#!/bin/sh
# crash.sh — kill -9 one daemon at several moments while jobs run, restart it
# (or, for a synth, let the other one carry on), and check that every accepted
# job completes exactly once: each partition's proof.json exists, verifies
# with snarkjs and equals what the waiting client received, it was written
# once (finalizer log; inode + mtime unchanged until the end), its DONE was
# journaled once, its ACCEPT once.
#
# Moments are fault-injection points (CZK_FAULT=<point>:kill, a real SIGKILL
# at an exact place in the code) and timed kill -9 from outside: for those the
# victim sleeps in each partition (its point below, sleep=) 0.5 s longer than
# the kill's delay, so that no job of the round can be complete at the kill
# (the jobs are small: unslowed, they may all be done before it).  `quick` (the
# default suite) runs a sample; `full` (label long) runs EVERY fault point of
# the daemon, found in its sources (every "<daemon>.<point>" string literal of
# <daemon>/*.c), so a new point is crashed at without editing this list, plus
# later hits of some points and timed kills.  Each round
# submits three jobs with fixed request ids: a 3-partition multi job (--wait
# --out), a 2-partition linear job (fire and forget) and a 2-partition
# poseidon job (high priority, --wait --out).  A client whose submission died
# with gpud resubmits with the same request id: gpud's journal decides whether
# that is the same job (ACCEPT journaled) or a new one (it was not).
#
# usage: crash.sh CZK GPUD SYNTH FIN TOOL SRC finalizer|synth|gpud quick|full
. "$(dirname "$0")/lib.sh"
WHO=$7 MODE=$8
require_snarkjs

# every fault point of daemon $1: its "$1.<name>" string literals (czk_fault
# calls, and names passed on to one, like finalizer.before_rename), less file
# names such as "gpud.sock", and less the journal compaction's points
# (gpud.compact_*), which only a journal that compacts while jobs run reaches:
# tests/gpud/journal_compact.sh kills gpud at each of them
fault_points() {
    grep -ho "\"$1\.[a-z_.]*\"" "$SRC/$1"/*.c | tr -d '"' | grep -v -E '\.(sock|json|wtns|zkey|r1cs|conf|log|tmp)$' |
        grep -v '^gpud\.compact_' | sort -u
}
ALL=$(fault_points "$WHO" | sed 's/$/:kill/' | tr '\n' ' ')
[ -n "$ALL" ] || { bad "no fault points found in $SRC/$WHO"; exit 1; }

case "$WHO.$MODE" in
finalizer.quick) ROUNDS="finalizer.before_rename:kill finalizer.after_done_sent:kill timed:0.5" ;;
finalizer.full) ROUNDS="$ALL finalizer.before_rename:kill@3 finalizer.after_done_sent:kill@4 timed:0.1 timed:0.4
                        timed:0.9 timed:1.6" ;;
synth.quick) ROUNDS="synth.mid_fill:kill synth.after_publish:kill timed:0.3" ;;
synth.full) ROUNDS="$ALL synth.mid_fill:kill@2 synth.after_publish:kill@3 timed:0.1 timed:0.3 timed:0.7 timed:1.2" ;;
gpud.quick) ROUNDS="gpud.after_accept_journal:kill gpud.mid_compute:kill gpud.after_result_sent:kill
                    gpud.after_done_journal:kill gpud.journal_sync:kill@2 timed:0.6" ;;
gpud.full) ROUNDS="$ALL gpud.after_result_sent:kill@4 timed:0.2 timed:0.5 timed:1.0 timed:1.8" ;;
gpud.start) ROUNDS=$(echo "$ALL" | tr ' ' '\n' | grep '^gpud\.start\.' | tr '\n' ' ') ;;
*) echo "usage: crash.sh ... finalizer|synth|gpud quick|full|start" >&2; exit 2 ;;
esac
# a list that matched no point would run no round, and check nothing
[ -n "$(echo $ROUNDS)" ] || { bad "no round to run for $WHO $MODE: no fault point matched"; exit 1; }
# a sampled point that no longer exists would only show as "did not die"
for spec in $ROUNDS; do
    case $spec in timed:*) continue ;; esac
    echo " $ALL " | grep -q " ${spec%%@*} " || echo " $ALL " | grep -q " ${spec%%:*}:kill " ||
        { bad "fault point ${spec%%:*} is not in $SRC/$WHO: update this test"; exit 1; }
done
log "$WHO fault points: $ALL"

write_config </dev/null
# synth rounds: the survivor (synth 0) fills 100 ms slower, so the victim takes
# most of a round's partitions and reaches a later hit (@3) of its point
# whatever the speed of a fill
SURVIVOR_FAULT=
[ "$WHO" = synth ] && SURVIVOR_FAULT=synth.before_fill:sleep=100
start_gpud; start_synth 0 "$SURVIVOR_FAULT"; start_synth 1; start_fin
wait_up 2 || exit 1
start_sampler

# the victim's point reached once per partition it handles (timed rounds: sleep=)
slow_point() { case $WHO in gpud) echo gpud.mid_compute ;; finalizer) echo finalizer.before_rename ;; synth) echo synth.before_fill ;; esac; }
pid_of() { case $WHO in gpud) echo "$GPUD_PID" ;; finalizer) echo "$FIN_PID" ;; synth) echo "$SYNTH1_PID" ;; esac; }
start_victim() { # [FAULT]
    case $WHO in
    gpud) start_gpud "${1:-}" ;;
    finalizer) start_fin "${1:-}" ;;
    synth) start_synth 1 "${1:-}" ;;
    esac
}

# one job of a round: NAME CIRCUIT NPARTS PRIO WAIT(1/0)
JOBS="a:multi:3:normal:1 b:linear:2:low:0 c:poseidon:2:high:1"
submit_round_job() { # ROUND SPEC
    IFS=: read -r n c np pr w <<EOF
$2
EOF
    if [ "$w" = 1 ]; then
        submit "$1$n" "$c" "$np" "$pr" --request-id "crash-$1-$n" --wait --out "$T/client/$1$n"
    else
        submit "$1$n" "$c" "$np" "$pr" --request-id "crash-$1-$n"
    fi
}

r=0
for spec in $ROUNDS; do
    r=$((r + 1))
    log "round $r: $WHO dies at $spec"
    pids=""
    case $spec in
    gpud.start.*)
        # a point of gpud's start (key load, record, upload): the round's jobs
        # are accepted first, then gpud is killed and restarted with the fault,
        # so the start that dies has their journal, spool and pools to take up
        wait_up 2 || exit 1
        for j in $JOBS; do
            submit_round_job "$r" "$j" & pids="$pids $!"
            sleep 0.05
        done
        sleep 0.5
        kill9 "$(pid_of)"
        rm -f "$T"/state/keys/*.verified # the keys are checked and their records written again: every point is hit
        start_victim "$spec"
        victim=$(pid_of)
        ;;
    *)
        # the victim runs with this round's fault (timed rounds: slowed down)
        old=$(pid_of)
        kill -TERM "$old" 2>/dev/null; wait_exit "$old" 20 >/dev/null || kill9 "$old"
        case $spec in
        timed:*) start_victim "$(slow_point):sleep=$(awk -v t="${spec#timed:}" 'BEGIN { print int(t * 1000) + 500 }')" ;;
        *) start_victim "$spec" ;;
        esac
        wait_up 2 || exit 1
        victim=$(pid_of)
        for j in $JOBS; do
            submit_round_job "$r" "$j" & pids="$pids $!"
            sleep 0.05
        done
        ;;
    esac
    case $spec in
    timed:*)
        sleep "${spec#timed:}"
        kill9 "$victim"
        # the kill crashed work in flight only if a job of the round was not
        # complete then: not acknowledged yet, or no COMPLETE in gpud's
        # journal read after the kill (records are only ever added)
        inflight=0
        for j in $JOBS; do
            job=$(job_of "$T/sub.$r${j%%:*}")
            [ -n "$job" ] && journal_complete "$job" || inflight=1
        done
        [ $inflight = 1 ] || bad "round $r: every job was complete before the kill at $spec (nothing in flight)"
        ;;
    *)
        wait_exit "$victim" 60; rc=$?
        [ $rc = 137 ] || { bad "round $r: $WHO did not die at $spec (exit $rc)"; kill9 "$victim"; }
        ;;
    esac
    # gpud and the finalizer come back; a dead synth stays dead until the next
    # round: the surviving synth must finish the work alone
    case $WHO in
    gpud) start_gpud; wait_up 1 ;;
    finalizer) start_fin; wait_up 1 ;;
    esac
    for p in $pids; do wait_exit "$p" 240 >/dev/null; done
    for j in $JOBS; do
        IFS=: read -r n c np pr w <<EOF
$j
EOF
        if ! grep -q "^job [0-9]* accepted" "$T/sub.$r$n"; then
            # the submission died with gpud: the same request id again
            log "round $r job $n: not acknowledged ($(tail -n 1 "$T/sub.$r$n")): resubmitting"
            cp "$T/sub.$r$n" "$T/sub.$r$n.first"
            submit_round_job "$r" "$j"
        fi
        job=$(job_of "$T/sub.$r$n")
        [ -n "$job" ] || { bad "round $r job $n was never accepted: $(cat "$T/sub.$r$n")"; continue; }
        if [ "$w" = 1 ]; then
            grep -q "^job $job done: $np partitions proved" "$T/sub.$r$n" ||
                { bad "round $r job $n: the waiting client did not see the job done:"; cat "$T/sub.$r$n" >&2; }
            expect_job "$job" "$c" "$np" "$T/client/$r$n"
        else
            expect_job "$job" "$c" "$np"
        fi
    done
    snap_files
done
[ "$WHO" = synth ] && { start_synth 1; wait_up 2; }
log "checks over all rounds"
check_all
grep -h "fault" "$T"/logs/*.log | grep -v "^$" | head -n 20
[ "$fail" = 0 ] && echo "ok"
exit $fail
