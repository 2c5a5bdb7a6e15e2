#!/bin/bash
# gpu_pipeline.sh — the whole pipeline on a GPU machine: a gen-circuit circuit of
# domain 2^LOG with a `czk setup` key, NPART partitions through czk-gpud (cuda
# backend) + czk-synth + czk-finalizer, against `czk prove --backend cuda` run
# sequentially on a few of the same witnesses.  Prints proofs/min, GPU busy %,
# the largest idle gap, per-stage latency and host-to-device rate (from the
# trace), and checks every proof with `czk verify`.  CURVE=bn254 runs the same
# on BN254 (snarkjs bn128; default bls12-381); BITS is gen-circuit's --bits
# (the share of 0/1 witness values, default 0.5; 0: every value full width).
# GPUD_EXTRA: lines added to the [gpud] section (e.g. "journal_compact_kb = 1").
# usage: [CURVE=bn254] [BITS=0] gpu_pipeline.sh BINDIR WORKDIR [LOG] [NPART]
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
BIN=$1 W=$2 LOG=${3:-20} NPART=${4:-24}
CZK=$BIN/czk
mkdir -p "$W" && cd "$W" || exit 2
W=$(pwd) # the config takes absolute paths only
CURVE=${CURVE:-bls12-381}
case $CURVE in bls12-381|bls12381) SUF="" ;; bn254|bn128) SUF=bn ;; *) echo "CURVE: bls12-381 or bn254" >&2; exit 2 ;; esac
BITS=${BITS:-0.5}
[ "$BITS" = 0.5 ] || SUF=${SUF}b$BITS
T=$W/p$LOG$SUF; rm -rf "$T"; mkdir -p "$T"/{run,state,out,logs}
N=$(( (1 << LOG) - 16 ))
now() { date +%s.%N; }
calc() { awk "BEGIN { printf \"%.2f\", $1 }"; }

if [ ! -f c$LOG$SUF.zkey ] || [ ! -f w$LOG$SUF.wtns ]; then
    t0=$(now)
    "$CZK" gen-circuit --curve $CURVE --constraints $N --publics 2 --bits $BITS --seed 7 c$LOG$SUF.r1cs w$LOG$SUF.wtns || exit 2
    "$CZK" setup c$LOG$SUF.r1cs c$LOG$SUF.zkey 2>setup.log || { cat setup.log; exit 2; }
    echo "setup of 2^$LOG: $(calc "$(now) - $t0") s"
fi
for i in $(seq 0 $((NPART - 1))); do
    # gen-circuit makes one witness per circuit: the partitions share it (proofs
    # still differ by their blinding); the work per partition is the same
    [ -f w$LOG$SUF-$i.wtns ] || cp w$LOG$SUF.wtns w$LOG$SUF-$i.wtns
done

cat >"$T/czk.conf" <<CONF
[czk]
runtime_dir = $T/run
state_dir = $T/state
output_dir = $T/out
[gpud]
${GPUD_EXTRA:-}
backend = cuda
slots_per_pool = ${SLOTS:-6}
metrics_port = 0
[synth]
threads = 0
[circuit.c$LOG$SUF]
zkey = $W/c$LOG$SUF.zkey
CONF
"$BIN/czk-gpud" --config "$T/czk.conf" >"$T/logs/gpud.log" 2>&1 & G=$!
sleep 1
# synthesizers run at a lower priority (SYNTH_NICE, default 10, as Nice= in
# czk-synth@.service): gpud's workers must get a CPU the moment a GPU turn ends
for s in $(seq 1 ${NSYNTH:-2}); do
    nice -n ${SYNTH_NICE:-10} "$BIN/czk-synth" --config "$T/czk.conf" --numa-node 0 >"$T/logs/synth$s.log" 2>&1 &
done
"$BIN/czk-finalizer" --config "$T/czk.conf" >"$T/logs/fin.log" 2>&1 &
for i in $(seq 1 300); do "$CZK" status --config "$T/czk.conf" >/dev/null 2>&1 && break; sleep 0.2; done
sleep 2
grep -E "backend|uploaded|register" "$T/logs/gpud.log" | head -8

t0=$(now)
args=(); for i in $(seq 0 $((NPART - 1))); do args+=("$W/w$LOG$SUF-$i.wtns"); done
"$CZK" submit --config "$T/czk.conf" --circuit c$LOG$SUF --wait --out "$T/client" "${args[@]}" >"$T/submit.log" 2>&1
rc=$?
t1=$(now)
el=$(calc "$t1 - $t0")
echo "pipeline: $NPART partitions of 2^$LOG in $el s (submit rc=$rc): $(calc "60 * $NPART / $el") proofs/min (wall, submit to last proof received)"
"$CZK" status --config "$T/czk.conf" --json > "$T/status.json" 2>&1
grep -E '"gpu_busy_pct"|"gpu_max_gap_ms"|"proofs_per_minute"' "$T/status.json"
sed -n '/latency_s/,/}/p' "$T/status.json" | head -12
"$CZK" trace --config "$T/czk.conf" --out "$T/trace.json" >/dev/null 2>&1 &&
    python3 "$HERE/trace_stats.py" "$T/trace.json" $(( (3 << LOG) * 32 + $(stat -c %s "$W/w$LOG$SUF-0.wtns") ))
"$CZK" vkey c$LOG$SUF.zkey > vk.json
ok=0; for p in $(seq 0 $((NPART - 1))); do
    "$CZK" verify vk.json "$T/client/$p/public.json" "$T/client/$p/proof.json" >/dev/null 2>&1 && ok=$((ok + 1))
done
echo "verified: $ok / $NPART proofs"
kill $(jobs -p) 2>/dev/null; wait 2>/dev/null

# sequential baseline on the same machine, same run
# (NSEQ=0 skips it: multi_gpu.sh)
NS=${NSEQ:-4}; t0=$(now)
if [ "$NS" -gt 0 ]; then
    for i in $(seq 0 $((NS - 1))); do
        "$CZK" prove --backend cuda c$LOG$SUF.zkey w$LOG$SUF-$i.wtns "$T/seq.proof.json" "$T/seq.public.json" 2>>"$T/seq.log" || echo "seq prove failed"
    done
    t1=$(now); el=$(calc "$t1 - $t0")
    echo "sequential czk prove --backend cuda: $NS in $el s: $(calc "60 * $NS / $el") proofs/min"
fi

tail -3 "$T/logs/gpud.log"
exit 0
