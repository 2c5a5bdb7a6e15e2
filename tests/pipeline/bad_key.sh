#!/bin/sh
# bad_key.sh — a circuit whose zkey the daemons cannot use (a BN254 key, which
# the daemons do not serve yet, and a truncated file) does not stop the
# others: czk-gpud marks it failed and refuses jobs for it with the reason,
# czk-synth and czk-finalizer log it and keep serving the other circuits, and
# a job of another circuit completes exactly once with proofs snarkjs accepts.
# usage: bad_key.sh CZK GPUD SYNTH FIN TOOL SRC
. "$(dirname "$0")/lib.sh"
require_snarkjs

head -c 3000 "$FIX/multi/circuit.zkey" >"$T/truncated.zkey"
write_config <<CONF
[circuit.bn]
zkey = $FIX/tiny_bn128/circuit.zkey
[circuit.cut]
zkey = $T/truncated.zkey
CONF
start_gpud
start_fin
start_synth 0
wait_up 1 || exit 1
for p in "$FIN_PID" "$SYNTH0_PID"; do
    kill -0 "$p" 2>/dev/null || bad "a daemon exited at a circuit it cannot load"
done
for d in synth0 fin; do
    grep -q "circuit bn: its key cannot be read: .*BLS12-381" "$T/logs/$d.log" || bad "$d did not say why circuit bn is not served"
    grep -q "circuit cut: its key cannot be read" "$T/logs/$d.log" || bad "$d did not say why circuit cut is not served"
done

log "a job for the BN254 circuit is refused with the reason"
if "$CZK" submit --config "$CONF" --circuit bn "$FIX/tiny_bn128/witness.wtns" >"$T/sub.r1" 2>&1; then
    bad "a job for circuit bn was accepted"
fi
grep -q "BLS12-381" "$T/sub.r1" || bad "the refusal does not say why: $(cat "$T/sub.r1")"
"$CZK" status --config "$CONF" 2>&1 | grep -q "failed" || bad "czk status does not show a failed circuit"

log "the other circuits are served"
submit r2 linear 3 normal || { bad "submit r2: $(cat "$T/sub.r2")"; exit 1; }
J2=$(job_of "$T/sub.r2")
expect_job "$J2" linear 3
check_all

[ "$fail" = 0 ] && echo "ok"
exit $fail
