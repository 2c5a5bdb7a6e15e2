#!/bin/sh
# scrape.sh — every daemon's /metrics after real work, checked by the real
# tools.  Starts czk-gpud, czk-synth and czk-finalizer (cpu backend, small
# fixtures) with metrics on free ports, proves a 2-partition job, has three
# SUBMITs rejected for three different reasons, then:
#   promtool: `promtool check metrics` accepts each daemon's text (format and
#             Prometheus naming conventions);
#   values:   the counters, gauges and histograms say what happened (2 proofs
#             in gpud and the finalizer, 2 fills in the synth, a rejection per
#             reason, lanes named high/normal/low, slots and their capacity,
#             czk_build_info of this build in all three; every family named
#             after its daemon, czk_conn_*/czk_accept_*/czk_build_info apart);
#   dashboard: every metric named in an expr of contrib/grafana/czk.json is
#             exported by one of the daemons.
# usage: scrape.sh promtool|values|dashboard GPUD SYNTH FINALIZER CLIENT SOURCE_DIR
MODE=$1 GPUD=$2 SYNTH=$3 FIN=$4 CLIENT=$5 SRC=$6
if [ "$MODE" = promtool ] && ! command -v promtool >/dev/null; then
    echo "promtool not installed (Debian package prometheus): skipped"
    exit 77
fi
. "$SRC/tests/metrics/lib.sh"

start_with_metrics
w=$FIX/multi/witness.wtns
out=$("$CLIENT" "$RT/czk.sock" submit m-1 multi 1 --wait "$w" "$w"); rc=$?
[ $rc = 0 ] || { bad "submit --wait exited $rc: $out"; exit 1; }
# three rejections of three classes
"$CLIENT" "$RT/czk.sock" submit m-2 nosuch 1 "$w" >/dev/null 2>&1
"$CLIENT" "$RT/czk.sock" submit m-3 multi 1 "$FIX/multi/circuit.zkey" >/dev/null 2>&1
"$CLIENT" "$RT/czk.sock" submit m-4 multi 1 "$w" "$w" "$w" "$w" "$w" >/dev/null 2>&1
# the finalizer's DONE is journaled before the client hears it; the gauges
# follow within a second (gpud's metrics tick)
wait_sample "$GPORT" 'czk_gpud_partitions{stage="finalize"}' 0
wait_sample "$GPORT" czk_gpud_active_jobs 0
wait_sample "$GPORT" czk_gpud_synths 1
# the busy gauges are computed on gpud's 1 s metrics tick: wait for one after the job
for _ in $(seq 1 50); do
    curl -sf "http://127.0.0.1:$GPORT/metrics" | grep -Eq '^czk_gpud_backend_busy_ratio (0\.0*[1-9]|[1-9])' && break
    sleep 0.1
done
scrape "$GPORT" "$T/gpud.prom"; scrape "$SPORT" "$T/synth.prom"; scrape "$FPORT" "$T/fin.prom"

case $MODE in
promtool)
    for d in gpud synth fin; do
        if ! promtool check metrics <"$T/$d.prom" >"$T/$d.promtool" 2>&1; then
            bad "promtool check metrics refuses $d's metrics:"; cat "$T/$d.promtool" >&2
        fi
    done
    # promtool's check is not vacuous here: it refuses a broken exposition
    printf '# TYPE x counter\nx{a="1"} 1\n# TYPE x counter\nx{a="2"} 2\n' | promtool check metrics >/dev/null 2>&1 &&
        bad "promtool accepted a family declared twice: the check proves nothing"
    ;;
values)
    # czk_build_info: this build's version (CZK_VERSION, from CMake), a
    # commit and the backends, the same in all three daemons
    v=$(sed -n 's/^czk_build_info{\(version="[^"]*",commit="[^"]*",backends="cpu[^"]*"\)} 1$/\1/p' "$T/gpud.prom")
    echo "$v" | grep -Eq "^version=\"${CZK_EXPECT_VERSION:-none}\",commit=\"[^\"]+\",backends=" ||
        bad "gpud: czk_build_info is not {version=\"${CZK_EXPECT_VERSION:-?}\",commit=...,backends=\"cpu...\"}: \"$v\""
    for d in gpud synth fin; do
        [ "$(sample "$T/$d.prom" "czk_build_info{$v}")" = 1 ] || bad "$d: no czk_build_info{$v} 1"
        [ "$(grep -c '^# TYPE ' "$T/$d.prom")" = "$(grep '^# TYPE ' "$T/$d.prom" | sort -u | wc -l)" ] ||
            bad "$d: a metric family is declared twice"
        # a daemon's own families carry its name; only the shared ones do not
        case $d in fin) own=czk_finalizer_ ;; *) own=czk_${d}_ ;; esac
        others=$(sed -n 's/^# TYPE \([^ ]*\) .*/\1/p' "$T/$d.prom" |
            grep -Ev "^($own|czk_conn_|czk_accept_|czk_build_info\$)" | tr '\n' ' ')
        [ -z "$others" ] || bad "$d: metric families named neither ${own}* nor as a shared one: $others"
        [ "$(grep -c "^# TYPE $own" "$T/$d.prom")" -ge 4 ] || bad "$d: too few ${own}* families: the check proves nothing"
    done
    check() { # FILE SAMPLE VALUE
        got=$(sample "$1" "$2")
        [ "$got" = "$3" ] || bad "$(basename "$1" .prom): $2 is \"$got\", expected $3"
    }
    check "$T/gpud.prom" czk_gpud_proofs_total 2
    check "$T/gpud.prom" czk_gpud_failures_total 0
    check "$T/gpud.prom" 'czk_gpud_stage_seconds_count{stage="gpu"}' 2
    check "$T/gpud.prom" 'czk_gpud_stage_seconds_count{stage="finalize"}' 2
    check "$T/gpud.prom" 'czk_gpud_rejections_total{reason="unknown_circuit"}' 1
    check "$T/gpud.prom" 'czk_gpud_rejections_total{reason="bad_witness"}' 1
    check "$T/gpud.prom" 'czk_gpud_rejections_total{reason="too_many_partitions"}' 1
    check "$T/gpud.prom" 'czk_gpud_rejections_total{reason="queue_full"}' 0
    check "$T/gpud.prom" 'czk_gpud_slots_capacity{pool="0"}' 2
    check "$T/gpud.prom" 'czk_gpud_slots_in_use{pool="0"}' 0
    check "$T/gpud.prom" czk_gpud_synths 1
    check "$T/gpud.prom" czk_gpud_finalizer_connected 1
    for l in high normal low; do check "$T/gpud.prom" "czk_gpud_queued_partitions{lane=\"$l\"}" 0; done
    grep -q 'lane="[0-9]' "$T/gpud.prom" && bad "gpud: lanes still labelled by number"
    # the backend computed two partitions: its busy time is counted and shows in the last minute
    busy=$(sample "$T/gpud.prom" czk_gpud_backend_busy_seconds_total)
    ratio=$(sample "$T/gpud.prom" czk_gpud_backend_busy_ratio)
    awk -v b="$busy" -v r="$ratio" 'BEGIN { exit !(b > 0 && r > 0 && r <= 1) }' ||
        bad "gpud: busy seconds \"$busy\" / busy ratio \"$ratio\" do not show the computed partitions"
    check "$T/synth.prom" 'czk_synth_fills_total{result="ok"}' 2
    check "$T/synth.prom" 'czk_synth_fills_total{result="failed"}' 0
    check "$T/synth.prom" czk_synth_fill_seconds_count 2
    check "$T/synth.prom" czk_synth_fills_in_flight 0
    check "$T/synth.prom" czk_synth_gpud_connected 1
    bytes=$(sample "$T/synth.prom" czk_synth_fill_bytes_total)
    [ "${bytes:-0}" -gt 0 ] 2>/dev/null || bad "synth: czk_synth_fill_bytes_total is \"$bytes\""
    check "$T/fin.prom" czk_finalizer_proofs_total 2
    check "$T/fin.prom" czk_finalizer_verify_failures_total 0
    check "$T/fin.prom" czk_finalizer_finalize_seconds_count 2
    check "$T/fin.prom" 'czk_finalizer_finalize_seconds_bucket{le="+Inf"}' 2
    check "$T/fin.prom" czk_finalizer_gpud_connected 1
    ;;
dashboard)
    # every czk_* name in an expr of the dashboard, without the _bucket /
    # _sum / _count a histogram's samples add
    python3 - "$SRC/contrib/grafana/czk.json" >"$T/names" <<'PY' || bad "cannot read the dashboard"
import json, re, sys
names, n = set(), 0
def walk(o):
    global n
    if isinstance(o, dict):
        for k, v in o.items():
            if k == "expr" and isinstance(v, str):
                n += 1
                names.update(re.findall(r"\bczk_[a-z0-9_]+", v))
            else:
                walk(v)
    elif isinstance(o, list):
        for v in o:
            walk(v)
walk(json.load(open(sys.argv[1])))
if n == 0 or not names:
    sys.exit("no expr in the dashboard")
print("\n".join(sorted(names)))
PY
    cat "$T/gpud.prom" "$T/synth.prom" "$T/fin.prom" | sed -n 's/^\([a-zA-Z_:][a-zA-Z0-9_:]*\).*/\1/p' | sort -u \
        >"$T/exported"
    n=0
    while read -r name; do
        n=$((n + 1))
        grep -qx "$name" "$T/exported" || bad "the dashboard queries $name, which no daemon exports"
    done <"$T/names"
    [ "$n" -ge 10 ] || bad "only $n metric names in the dashboard"
    echo "$n metric names of the dashboard checked against the scrapes"
    ;;
*) echo "usage: scrape.sh promtool|values|dashboard ..." >&2; exit 2 ;;
esac
[ "$fail" = 0 ] || exit 1
echo "ok"
