#!/bin/sh
# replies.sh — what czk-gpud answers a client in two cases that once went wrong:
#   - a SUBMIT with the wait flag whose request id is known (the job is in
#     progress, complete or cancelled) answers ACCEPTED(duplicate) and then
#     exactly what WATCH answers: an EVENT with the job's current stage, and
#     the job's later EVENTs while it runs (before, a client that only waited
#     for events hung);
#   - REJECTED reasons name the partition and what is wrong, never gpud's
#     spool path: a witness of another circuit, a bn128 witness, a truncated
#     one.
# Each fill takes 0.8 s (CZK_FAULT), so a job is still running when its
# duplicate arrives.
# usage: replies.sh GPUD SYNTH FINALIZER CLIENT SOURCE_DIR
GPUD=$1 SYNTH=$2 FIN=$3 CLIENT=$4 SRC=$5
. "$SRC/tests/daemons/lib.sh"
L=$FIX/linear/witness.wtns M=$FIX/multi/witness.wtns
# a client that only waits for events must not hang: every call is bounded
C() { timeout 30 "$CLIENT" "$RT/czk.sock" "$@"; }
# event lines without the trailing reason text
events() { grep '^event ' | sed 's/ *$//'; }

write_config </dev/null
start_gpud; start_fin
CZK_FAULT=synth.before_fill:sleep=800 start_synth
wait_socket || exit 1

# ---- duplicate SUBMIT with the wait flag
req=dup-$$-$(od -An -tx4 -N4 /dev/urandom | tr -d ' ')
out=$(C submit "$req" linear 1 "$L" "$L"); rc=$?
job=$(echo "$out" | sed -n 's/^accepted \([0-9]*\)$/\1/p')
[ $rc = 0 ] && [ -n "$job" ] || { bad "first submission: \"$out\" (exit $rc)"; exit 1; }

# in progress: the current stage first, then the job's events to the end
out=$(C submit "$req" linear 1 --wait "$L" "$L"); rc=$?
echo "$out"
[ $rc = 0 ] || bad "duplicate --wait of a running job exited $rc (124: it hung), expected 0: $out"
[ "$(echo "$out" | head -n 1)" = "accepted $job duplicate" ] || bad "duplicate answered \"$(echo "$out" | head -n 1)\""
first=$(echo "$out" | events | head -n 1)
echo "$first" | grep -Eq "^event job $job stage [12] status 0$" ||
    bad "the first event of a duplicate of a running job is \"$first\", expected its current stage (queued/synth)"
echo "$out" | events | grep -q "^event job $job partition [01] stage 5 status 0" ||
    bad "the duplicate's client got no partition DONE events of the running job"
[ "$(echo "$out" | events | tail -n 1)" = "event job $job stage 5 status 0" ] || bad "no job DONE event at the end"

# complete: at once the job's final stage, like WATCH
out=$(C submit "$req" linear 1 --wait "$L" "$L"); rc=$?
echo "$out"
[ $rc = 0 ] || bad "duplicate --wait of a complete job exited $rc (124: it hung), expected 0: $out"
[ "$(echo "$out" | head -n 1)" = "accepted $job duplicate" ] || bad "duplicate answered \"$(echo "$out" | head -n 1)\""
w=$(C watch "$job" | events); d=$(echo "$out" | events)
[ "$d" = "event job $job stage 5 status 0" ] && [ "$d" = "$w" ] ||
    bad "duplicate of a complete job: events \"$d\", WATCH gives \"$w\""
for p in 0 1; do check_partition "$job" $p linear; done
# a duplicate without the flag answers ACCEPTED only (nothing follows)
out=$(C submit "$req" linear 1 "$L" "$L"); rc=$?
[ $rc = 0 ] && [ "$out" = "accepted $job duplicate" ] || bad "duplicate without --wait: \"$out\" (exit $rc)"

# cancelled: the final stage is CANCELLED (the client exits 4)
req2=$req-c
out=$(C submit "$req2" linear 1 "$L"); job2=$(echo "$out" | sed -n 's/^accepted \([0-9]*\)$/\1/p')
[ -n "$job2" ] || bad "submission to cancel: \"$out\""
out=$(C cancel "$job2"); [ "$out" = cancelled ] || bad "cancel: \"$out\""
out=$(C submit "$req2" linear 1 --wait "$L"); rc=$?
echo "$out"
w=$(C watch "$job2" | events); d=$(echo "$out" | events)
[ $rc = 4 ] && [ "$d" = "event job $job2 stage 7 status 0" ] && [ "$d" = "$w" ] ||
    bad "duplicate of a cancelled job: exit $rc, events \"$d\", WATCH gives \"$w\""

# ---- rejection reasons
nw() { od -An -tu4 -j 60 -N 4 "$1" | tr -d ' '; } # nWitness of a snarkjs .wtns (header section first)
reject() { # CASE WANT SUBMIT-ARGS...: REJECTED, reason matches WANT (a glob), no spool path
    case=$1 want=$2; shift 2
    out=$(C submit "rej-$case-$$" "$@"); rc=$?
    echo "$out"
    [ $rc = 3 ] || bad "$case: exit $rc, expected 3 (rejected): $out"
    case "$out" in
    "rejected -22 "$want) ;;
    *) bad "$case: \"$out\", expected \"rejected -22 $want\"" ;;
    esac
    echo "$out" | grep -q "spool\|$T\|\.wtns" && bad "$case: the reason shows a path: $out"
}
reject length "partition 1: witness has $(nw "$L") values but circuit \"multi\" has $(nw "$M") variables (a witness of another circuit?)" \
    multi 1 "$M" "$L"
reject curve "partition 0: not a BLS12-381 witness (prime is bn128's scalar field r)" multi 1 "$FIX/tiny_bn128/witness.wtns"
head -c 5000 "$M" >"$T/trunc.wtns"
reject truncated "partition 0: not a valid witness: section 2 *truncated file?" \
    multi 1 "$T/trunc.wtns"
ls "$T/state/spool" | grep -q . && bad "a rejected job left files in the spool: $(ls "$T/state/spool")"
grep -q "rejected:.*spool" "$T/gpud.log" && bad "gpud logged a rejection reason with a spool path"

[ "$fail" = 0 ] || exit 1
have_snarkjs || exit 77
echo "ok"
