#!/bin/sh
# trace_e2e.sh — the pipeline writes per-partition traces in every process:
# czk-gpud + czk-synth + czk-finalizer (cpu backend) prove a 3-partition job;
# `czk status --json` carries gpu_busy_pct / gpu_max_gap_ms (busy > 0 right
# after the job); after a clean stop `czk trace` merges the three processes'
# files into one Chrome JSON trace in which every partition has synth, ready,
# copy, compute, result_sent and finalize in causal order (trace_check, a
# jansson reader); --since filters by age.  gpud runs 2 backend contexts:
# their compute spans take turns (never overlap).
# usage: trace_e2e.sh GPUD SYNTH FINALIZER CLIENT SOURCE_DIR CZK TRACE_CHECK
GPUD=$1 SYNTH=$2 FIN=$3 CLIENT=$4 SRC=$5 CZK=$6 CHECK=$7
. "$SRC/tests/daemons/lib.sh"

# two contexts and three slots, in the one [gpud] section
write_config </dev/null
sed -i 's/^slots_per_pool = .*/slots_per_pool = 3\ncontexts = 2/' "$T/czk.conf"
start_gpud; start_synth; start_fin
wait_socket || exit 1

out=$("$CLIENT" "$RT/czk.sock" submit trace-1 multi 1 --wait \
      "$FIX/multi/witness.wtns" "$FIX/multi/witness.wtns" "$FIX/multi/witness.wtns")
rc=$?
[ $rc = 0 ] || { bad "submit --wait exited $rc: $out"; exit 1; }
job=$(echo "$out" | sed -n 's/^accepted \([0-9]*\).*/\1/p')
[ -n "$job" ] || { bad "no job id in: $out"; exit 1; }

st=$("$CZK" status --json --runtime-dir "$RT") || bad "czk status --json failed"
echo "$st" | grep -q '"gpu_busy_pct"' || bad "STATUS has no gpu_busy_pct: $st"
echo "$st" | grep -q '"gpu_max_gap_ms"' || bad "STATUS has no gpu_max_gap_ms: $st"
busy=$(echo "$st" | sed -n 's/.*"gpu_busy_pct": *\([0-9.e+-]*\).*/\1/p')
gap=$(echo "$st" | sed -n 's/.*"gpu_max_gap_ms": *\([0-9]*\).*/\1/p')
echo "gpu_busy_pct=$busy gpu_max_gap_ms=$gap"
awk -v b="$busy" 'BEGIN { exit !(b > 0 && b <= 100) }' || bad "gpu_busy_pct $busy after 3 partitions were computed"
[ -n "$gap" ] && [ "$gap" -le 60000 ] && [ "$gap" -gt 0 ] || bad "gpu_max_gap_ms \"$gap\" outside (0, 60000]"

stop_all   # SIGTERM: every daemon flushes and closes its trace file
ls "$T/state/trace"
n=$(ls "$T/state/trace" | grep -c '\.trace$')
[ "$n" -ge 3 ] || bad "expected trace files of gpud, synth and finalizer, found $n"

"$CZK" trace --state-dir "$T/state" --out "$T/trace.json" || bad "czk trace failed"
"$CHECK" "$T/trace.json" pipeline "$job" 3 || bad "trace check failed"
"$CHECK" "$T/trace.json" nooverlap compute || bad "compute spans of the two contexts overlap"
grep -q "cpu backend: 2 context(s)" "$T/gpud.log" || bad "gpud did not start 2 backend contexts (contexts = 2)"
all=$("$CHECK" "$T/trace.json" count)
"$CZK" trace --state-dir "$T/state" --since 3600 --out "$T/recent.json" || bad "czk trace --since 3600 failed"
recent=$("$CHECK" "$T/recent.json" count)
[ "$recent" = "$all" ] && [ "$all" -ge 18 ] || bad "--since 3600 kept $recent of $all events (expected all, >= 18)"
sleep 1
"$CZK" trace --state-dir "$T/state" --since 0.5 --out "$T/none.json" || bad "czk trace --since 0.5 failed"
none=$("$CHECK" "$T/none.json" count)
[ "$none" = 0 ] || bad "--since 0.5 one second after the last stage kept $none events"
"$CZK" trace --state-dir "$T/nosuch" >/dev/null 2>&1 && bad "czk trace on a missing directory succeeded"
exit $fail
