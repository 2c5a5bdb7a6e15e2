#!/bin/sh
# bad_key.sh — a circuit whose zkey the daemons cannot use (a key over an
# unknown prime, and a truncated file) does not stop the others: czk-gpud marks it failed and refuses jobs for it with the reason,
# czk-synth and czk-finalizer log it and keep serving the other circuits, and
# a job of another circuit completes exactly once with proofs snarkjs accepts.
# usage: bad_key.sh CZK GPUD SYNTH FIN TOOL SRC
. "$(dirname "$0")/lib.sh"
require_snarkjs

head -c 3000 "$FIX/multi/circuit.zkey" >"$T/truncated.zkey"
# the BN254 fixture with one byte of its base field prime q changed
python3 - "$FIX/tiny_bn128/circuit.zkey" "$T/prime.zkey" <<'PY'
import struct, sys
b = bytearray(open(sys.argv[1], "rb").read())
assert b[:4] == b"zkey"
pos, n = 12, struct.unpack_from("<I", b, 8)[0]
for _ in range(n):
    sid, size = struct.unpack_from("<IQ", b, pos)
    if sid == 2:
        b[pos + 12 + 4] ^= 0x10  # the low byte of q, after n8q
        break
    pos += 12 + size
else:
    sys.exit("no section 2")
open(sys.argv[2], "wb").write(b)
PY
write_config <<CONF
[circuit.bn]
zkey = $T/prime.zkey
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
    grep -q "circuit bn: its key cannot be read: .*prime" "$T/logs/$d.log" || bad "$d did not say why circuit bn is not served"
    grep -q "circuit cut: its key cannot be read" "$T/logs/$d.log" || bad "$d did not say why circuit cut is not served"
done

log "a job for the circuit with the foreign prime is refused with the reason"
if "$CZK" submit --config "$CONF" --circuit bn "$FIX/tiny_bn128/witness.wtns" >"$T/sub.r1" 2>&1; then
    bad "a job for circuit bn was accepted"
fi
grep -q "prime" "$T/sub.r1" || bad "the refusal does not say why: $(cat "$T/sub.r1")"
# the row of circuit bn, not the "jobs ... failed N" summary line
"$CZK" status --config "$CONF" >"$T/status.txt" 2>&1
grep -q " bn *failed" "$T/status.txt" || bad "czk status does not show circuit bn failed: $(cat "$T/status.txt")"

log "the other circuits are served"
submit r2 linear 3 normal || { bad "submit r2: $(cat "$T/sub.r2")"; exit 1; }
J2=$(job_of "$T/sub.r2")
expect_job "$J2" linear 3
check_all

[ "$fail" = 0 ] && echo "ok"
exit $fail
