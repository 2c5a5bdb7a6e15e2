#!/bin/sh
# max_config.sh — gpud at the largest configuration its metrics must hold:
# 32 circuits (CZK_CONFIG_MAX_CIRCUITS, docs/config.md).  Every series
# docs/daemons.md promises is scraped: czk_gpud_circuit_ready and
# czk_gpud_key_load_seconds for each circuit, each czk_gpud_gpu_* family for
# gpu="0" to gpu="7" (registered last, so the first to go when the registry
# runs out), and gpud logs no refused registration; promtool, when
# installed, accepts the text.
# usage: max_config.sh GPUD SYNTH FINALIZER CLIENT SOURCE_DIR
GPUD=$1 SYNTH=$2 FIN=$3 CLIENT=$4 SRC=$5
. "$SRC/tests/metrics/lib.sh"

set -- $(free_ports 1)
GPORT=$1
# multi and linear come with write_config: 30 more, on the linear fixture's key
{
    printf '[gpud]\nmetrics_port = %s\n' "$GPORT"
    for i in $(seq 3 32); do printf '[circuit.c%d]\nzkey = %s\n' "$i" "$FIX/linear/circuit.zkey"; done
} | write_config
start_gpud
wait_socket || exit 1
for _ in $(seq 1 100); do
    curl -sf "http://127.0.0.1:$GPORT/metrics" >/dev/null && break
    sleep 0.1
done
scrape "$GPORT" "$T/gpud.prom"
n=0
for c in multi linear $(seq -f 'c%g' 3 32); do
    n=$((n + 1))
    for f in czk_gpud_circuit_ready czk_gpud_key_load_seconds; do
        [ -n "$(sample "$T/gpud.prom" "$f{circuit=\"$c\"}")" ] || bad "no $f{circuit=\"$c\"}"
    done
done
[ "$n" = 32 ] || bad "$n circuits checked, not 32"
for f in contexts in_service busy_ratio max_idle_seconds partitions_total memory_used_bytes; do
    for d in 0 1 2 3 4 5 6 7; do
        [ -n "$(sample "$T/gpud.prom" "czk_gpud_gpu_$f{gpu=\"$d\"}")" ] || bad "no czk_gpud_gpu_$f{gpu=\"$d\"}"
    done
done
grep -E 'error: (too many metrics|metric )' "$T/gpud.log" >&2 && bad "gpud refused metrics it registers"
if command -v promtool >/dev/null && ! promtool check metrics <"$T/gpud.prom" >"$T/promtool" 2>&1; then
    bad "promtool check metrics refuses gpud's metrics at 32 circuits:"; cat "$T/promtool" >&2
fi
[ "$fail" = 0 ] || exit 1
echo "ok: $(grep -vc '^#' "$T/gpud.prom") series at 32 circuits"
