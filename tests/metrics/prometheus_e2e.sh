#!/bin/sh
# prometheus_e2e.sh — a real Prometheus server scrapes the three daemons every
# second while jobs run, and its HTTP API answers: every target is up, the
# three scrape jobs each report czk_build_info, gpud's proofs and the synth's
# fills reached Prometheus, and a histogram quantile over the stage latencies
# is a number.  Skips (77) without the prometheus binary.
# usage: prometheus_e2e.sh GPUD SYNTH FINALIZER CLIENT SOURCE_DIR
GPUD=$1 SYNTH=$2 FIN=$3 CLIENT=$4 SRC=$5
command -v prometheus >/dev/null || { echo "prometheus not installed (Debian package prometheus): skipped"; exit 77; }
. "$SRC/tests/metrics/lib.sh"
PROM_PID=
stop_prom() { [ -n "$PROM_PID" ] && { kill -TERM "$PROM_PID" 2>/dev/null; wait_exit "$PROM_PID" 20 >/dev/null; }; }
trap 'stop_prom; cleanup' EXIT

start_with_metrics
set -- $(free_ports 1)
PPORT=$1
cat >"$T/prometheus.yml" <<EOF2
global:
  scrape_interval: 1s
  scrape_timeout: 1s
  evaluation_interval: 1s
scrape_configs:
  - job_name: czk-gpud
    static_configs: [{targets: ["127.0.0.1:$GPORT"]}]
  - job_name: czk-synth
    static_configs: [{targets: ["127.0.0.1:$SPORT"]}]
  - job_name: czk-finalizer
    static_configs: [{targets: ["127.0.0.1:$FPORT"]}]
EOF2
prometheus --config.file="$T/prometheus.yml" --storage.tsdb.path="$T/tsdb" \
    --web.listen-address="127.0.0.1:$PPORT" >"$T/prometheus.log" 2>&1 &
PROM_PID=$!

# query EXPR: the API's answer, reduced to "labels=value" lines (python3 reads the JSON)
query() {
    curl -sf -G "http://127.0.0.1:$PPORT/api/v1/query" --data-urlencode "query=$1" | python3 -c '
import json, sys
d = json.load(sys.stdin)
if d.get("status") != "success":
    sys.exit(1)
for r in d["data"]["result"]:
    m = r["metric"]
    print(",".join("%s=%s" % (k, m[k]) for k in sorted(m)) + "=" + r["value"][1])
' 2>/dev/null
}
# wait_query EXPR LINES: polls (up to 30 s) until EXPR returns LINES series
wait_query() {
    for _ in $(seq 1 60); do
        [ "$(query "$1" | grep -c .)" = "$2" ] && return 0
        sleep 0.5
    done
    bad "Prometheus: \"$1\" did not return $2 series; it returned: $(query "$1" | tr '\n' ' ')"
    return 1
}

# jobs while Prometheus scrapes: two rounds, a second apart
w=$FIX/multi/witness.wtns
for i in 1 2; do
    out=$("$CLIENT" "$RT/czk.sock" submit e2e-$i multi $i --wait "$w" "$w") || bad "job $i: $out"
    sleep 1
done
wait_query 'up == 1' 3
wait_query 'czk_build_info == 1' 3
for j in czk-gpud czk-synth czk-finalizer; do
    query "czk_build_info{job=\"$j\"}" | grep -q 'version=' || bad "no czk_build_info from scrape job $j"
done
wait_query 'czk_gpud_proofs_total >= 4' 1
wait_query 'czk_synth_fills_total{result="ok"} >= 4' 1
wait_query 'czk_finalizer_proofs_total >= 4' 1
wait_query 'czk_gpud_queued_partitions{lane="normal"}' 1
q=$(query 'histogram_quantile(0.5, sum by (le) (czk_gpud_stage_seconds_bucket{stage="gpu"}))')
v=${q##*=}
awk -v v="$v" 'BEGIN { exit !(v + 0 > 0 && v + 0 <= 300) }' || bad "median gpu stage time from Prometheus is \"$q\""
[ "$fail" = 0 ] || { tail -n 20 "$T/prometheus.log" >&2; exit 1; }
echo "ok"
