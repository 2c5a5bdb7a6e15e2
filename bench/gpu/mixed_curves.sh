#!/bin/bash
# mixed_curves.sh — one czk-gpud (cuda backend) serving a BLS12-381 and a
# BN254 circuit at once: gen-circuit circuits of domain 2^LOG on each curve
# (`czk setup` keys), NPART partitions of each submitted together through the
# same pools, synthesizers and finalizer.  Prints the wall time, proofs/min,
# GPU busy % and largest idle gap (czk status and the trace), and checks
# every proof with `czk verify` against its curve's key.  BACKEND=cpu runs
# the same without a GPU (a check of the script).
# usage: [BACKEND=cpu] mixed_curves.sh BINDIR WORKDIR [LOG] [NPART]
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
BIN=$1 W=$2 LOG=${3:-20} NPART=${4:-24}
CZK=$BIN/czk
mkdir -p "$W" && cd "$W" || exit 2
W=$(pwd) # the config takes absolute paths only
T=$W/mix$LOG; rm -rf "$T"; mkdir -p "$T"/{run,state,out,logs}
N=$(( (1 << LOG) - 16 ))
now() { date +%s.%N; }
calc() { awk "BEGIN { printf \"%.2f\", $1 }"; }

for cv in bls12-381 bn254; do
    c=m$LOG-$cv
    if [ ! -f $c.zkey ]; then
        "$CZK" gen-circuit --curve $cv --constraints $N --publics 2 --bits 0.5 --seed 7 $c.r1cs $c.wtns || exit 2
        "$CZK" setup $c.r1cs $c.zkey 2>"$T/setup-$cv.log" || { cat "$T/setup-$cv.log"; exit 2; }
    fi
    "$CZK" vkey $c.zkey >"$T/vk-$cv.json" || exit 2
done

cat >"$T/czk.conf" <<CONF
[czk]
runtime_dir = $T/run
state_dir = $T/state
output_dir = $T/out
[gpud]
backend = ${BACKEND:-cuda}
slots_per_pool = ${SLOTS:-6}
metrics_port = 0
[synth]
threads = 0
[circuit.bls]
zkey = $W/m$LOG-bls12-381.zkey
[circuit.bn]
zkey = $W/m$LOG-bn254.zkey
CONF
"$BIN/czk-gpud" --config "$T/czk.conf" >"$T/logs/gpud.log" 2>&1 &
sleep 1
for s in $(seq 1 ${NSYNTH:-4}); do
    nice -n ${SYNTH_NICE:-10} "$BIN/czk-synth" --config "$T/czk.conf" --numa-node 0 >"$T/logs/synth$s.log" 2>&1 &
done
"$BIN/czk-finalizer" --config "$T/czk.conf" >"$T/logs/fin.log" 2>&1 &
for i in $(seq 1 300); do
    "$CZK" status --config "$T/czk.conf" 2>/dev/null | grep -q "bn .*ready" &&
        "$CZK" status --config "$T/czk.conf" 2>/dev/null | grep -q "bls .*ready" && break
    sleep 0.2
done
"$CZK" status --config "$T/czk.conf" | sed -n '/^circuits/,/^devices/p'

t0=$(now)
for cv in bls12-381 bn254; do
    circ=bls; [ $cv = bn254 ] && circ=bn
    args=(); for i in $(seq 1 "$NPART"); do args+=("$W/m$LOG-$cv.wtns"); done
    "$CZK" submit --config "$T/czk.conf" --circuit $circ --wait --out "$T/client-$cv" "${args[@]}" \
        >"$T/submit-$cv.log" 2>&1 &
done
while pgrep -f "czk submit --config $T/czk.conf" >/dev/null; do sleep 0.1; done
el=$(calc "$(now) - $t0")
echo "mixed: $NPART BLS12-381 + $NPART BN254 partitions of 2^$LOG in $el s: $(calc "60 * 2 * $NPART / $el") proofs/min"
"$CZK" status --config "$T/czk.conf" --json >"$T/status.json" 2>&1
grep -E '"gpu_busy_pct"|"gpu_max_gap_ms"' "$T/status.json"
"$CZK" trace --config "$T/czk.conf" --out "$T/trace.json" >/dev/null 2>&1 &&
    python3 "$HERE/trace_stats.py" "$T/trace.json" $(( (3 << LOG) * 32 + $(stat -c %s "$W/m$LOG-bn254.wtns") )) |
    grep -E "^gpu:|compute |synth "
for cv in bls12-381 bn254; do
    ok=0
    for p in $(seq 0 $((NPART - 1))); do
        "$CZK" verify "$T/vk-$cv.json" "$T/client-$cv/$p/public.json" "$T/client-$cv/$p/proof.json" >/dev/null 2>&1 &&
            ok=$((ok + 1))
    done
    echo "$cv: verified $ok / $NPART proofs"
done
kill $(jobs -p) 2>/dev/null; wait 2>/dev/null
exit 0
