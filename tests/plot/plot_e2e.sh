#!/bin/sh
# plot_e2e.sh — czk-trace-plot on a real trace: czk-gpud (cpu backend, two
# contexts) + czk-synth + czk-finalizer prove a 4-partition job, `czk trace`
# merges the files, czk-trace-plot draws them.  It must count the 4 computes
# and 4 proofs the pipeline made, and its busy % and largest gap must agree
# with bench/gpu/trace_stats.py (written separately) on the same file.  This
# catches a drift between what `czk trace` writes and what the plot reads.
# Skips (77) without the script's interpreter or its matplotlib.
# usage: plot_e2e.sh GPUD SYNTH FINALIZER CLIENT SOURCE_DIR CZK PLOT
GPUD=$1 SYNTH=$2 FIN=$3 CLIENT=$4 SRC=$5 CZK=$6 PLOT=$7
py=$(sed -n '1s/^#![ ]*//p' "$PLOT")
[ -x "$py" ] || { echo "skip: $py (the interpreter of $PLOT) is not installed"; exit 77; }
"$py" -c 'import matplotlib' 2>/dev/null ||
    { echo "skip: $py has no matplotlib (apt-get install python3-matplotlib)"; exit 77; }
. "$SRC/tests/daemons/lib.sh"

write_config <<CONF
[gpud]
slots_per_pool = 3
contexts = 2
CONF
start_gpud; start_synth; start_fin
wait_socket || exit 1
out=$("$CLIENT" "$RT/czk.sock" submit plot-1 multi 1 --wait \
      "$FIX/multi/witness.wtns" "$FIX/multi/witness.wtns" "$FIX/multi/witness.wtns" "$FIX/multi/witness.wtns")
rc=$?
[ $rc = 0 ] || { bad "submit --wait exited $rc: $out"; exit 1; }
stop_all   # SIGTERM: every daemon flushes its trace file
"$CZK" trace --state-dir "$T/state" --out "$T/trace.json" || { bad "czk trace failed"; exit 1; }

"$py" "$PLOT" "$T/trace.json" -o "$T/plot.png" >"$T/plot.out" 2>&1 || { bad "czk-trace-plot failed"; cat "$T/plot.out" >&2; exit 1; }
cat "$T/plot.out"
head -c 8 "$T/plot.png" | od -An -tx1 | tr -d ' \n' | grep -qx '89504e470d0a1a0a' || bad "plot.png is not a PNG"
val() { sed -n "s/.*\\b$1=\\([^ ]*\\).*/\\1/p" "$T/plot.out"; }
[ "$(val computes)" = 4 ] || bad "computes=$(val computes), the job had 4 partitions"
[ "$(val proofs)" = 4 ] || bad "proofs=$(val proofs), the job had 4 partitions"
case $(val contexts) in 1 | 2) ;; *) bad "contexts=$(val contexts) with contexts = 2" ;; esac

"$py" "$SRC/bench/gpu/trace_stats.py" "$T/trace.json" >"$T/stats.out" || bad "trace_stats.py failed"
cat "$T/stats.out"
ref_busy=$(sed -n 's/^gpu:.* busy \([0-9.]*\)%.*/\1/p' "$T/stats.out")
ref_gap=$(sed -n 's/^gpu:.*largest idle gap \([0-9.]*\) ms.*/\1/p' "$T/stats.out")
[ -n "$ref_busy" ] && [ -n "$ref_gap" ] || bad "no busy/gap line from trace_stats.py"
busy=$(val busy_pct) gap=$(val max_gap_s)
awk -v a="$busy" -v b="$ref_busy" 'BEGIN { exit !(a - b <= 0.051 && b - a <= 0.051) }' ||
    bad "busy_pct $busy, trace_stats.py says $ref_busy"
awk -v a="$gap" -v b="$ref_gap" 'BEGIN { exit !(a * 1000 - b <= 0.051 && b - a * 1000 <= 0.051) }' ||
    bad "max_gap_s $gap, trace_stats.py says $ref_gap ms"
exit $fail
