#!/bin/sh
# reason.sh — a job that cannot move says why: with czk-gpud and the
# finalizer up and no synthesizer, `czk status --json` gives the queued job a
# "reason" naming the missing czk-synth (and the plain status prints it);
# once a synth connects the job completes and the reason is gone.
# usage: reason.sh GPUD SYNTH FINALIZER CLIENT SOURCE_DIR CZK
GPUD=$1 SYNTH=$2 FIN=$3 CLIENT=$4 SRC=$5 CZK=$6
. "$SRC/tests/daemons/lib.sh"

write_config </dev/null
start_gpud; start_fin
wait_socket || exit 1

out=$("$CLIENT" "$RT/czk.sock" submit why-1 linear 1 "$FIX/linear/witness.wtns")
job=$(echo "$out" | sed -n 's/^accepted \([0-9]*\).*/\1/p')
[ -n "$job" ] || { bad "submit said \"$out\""; exit 1; }

json=$("$CZK" status --runtime-dir "$RT" --json) || bad "czk status --json failed"
echo "$json" | grep -q '"reason": "[^"]*no czk-synth is connected' ||
    bad "the waiting job's reason does not name the missing synth: $json"
"$CZK" status --runtime-dir "$RT" | grep -q "no czk-synth is connected" ||
    bad "the plain status does not say why the job waits"

start_synth
out=$("$CLIENT" "$RT/czk.sock" watch "$job" 2>&1) || bad "job $job did not complete once a synth connected: $out"
json=$("$CZK" status --runtime-dir "$RT" --json --job "$job")
echo "$json" | grep -q '"reason"' && bad "a finished job still carries a reason: $json"
check_partition "$job" 0 linear
[ "$fail" = 0 ] || exit 1
echo ok
