#!/bin/sh
# gpu_lost.sh — a compute device that fails in the middle of a job, with the
# real daemons and no GPU.  A test build of czk-gpud (CZK_FAULT_INJECTION)
# whose cpu backend presents two devices (CZK_GPUD_TEST_DEVICES=2 with
# [gpud] contexts = 2: context i on device i % 2), and the fault point
# gpud.device_lost failing a compute as a lost device does (-ENODEV):
#   1. the first compute fails: that device is taken out of service (one log
#      line naming it and the error), its partition is synthesised again and
#      proved on the other device; the job completes exactly once with proofs
#      snarkjs accepts (tests/pipeline/lib.sh check_all); `czk status --json`
#      lists both devices, the lost one out_of_service with the reason, the
#      per-device counts add up; the text table says OUT OF SERVICE; the
#      metrics say the same (czk_gpud_gpus_lost_total, czk_gpud_gpu_*{gpu});
#   2. every compute fails: both devices go out of service, an accepted job
#      waits (active, nothing failed, its reason says no device is in
#      service); after a restart without the fault it completes exactly once.
# usage: gpu_lost.sh CZK GPUD SYNTH FIN TOOL SRC
. "$6/tests/pipeline/lib.sh"
require_snarkjs
command -v python3 >/dev/null 2>&1 || { echo "SKIP: python3 is needed to read the metrics"; exit 77; }
export CZK_GPUD_TEST_DEVICES=2

# JSON of `czk status`, then a JavaScript expression over it (o) printed
jq_st() { status_json | node -e 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>{const o=JSON.parse(s);
    console.log(eval(process.argv[1]))})' "$1" 2>/dev/null; }

PORT=$((20000 + $$ % 20000))
GPUD_EXTRA="contexts = 2" write_config </dev/null
sed -i "s/^metrics_port = 0\$/metrics_port = $PORT/" "$CONF" # gpud's metrics, on loopback (the default address)
grep -q "^metrics_port = $PORT\$" "$CONF" || { bad "could not set metrics_port in $CONF"; exit 1; }
start_gpud gpud.device_lost:fail@1
start_fin
start_synth 0
wait_up 1 || exit 1
for _ in $(seq 1 100); do [ "$(jq_st 'o.gpus ? o.gpus.length : 0')" = 2 ] && break; sleep 0.1; done
[ "$(jq_st 'o.gpus.length')" = 2 ] || { bad "STATUS does not list two devices: $(status_json)"; exit 1; }

log "round 1: the first compute fails as a lost device"
submit r1 multi 4 normal || { bad "submit r1: $(cat "$T/sub.r1")"; exit 1; }
J1=$(job_of "$T/sub.r1")
expect_job "$J1" multi 4
wait_complete "$J1" 60
n=$(grep -c "is taken out of service" "$T/logs/gpud.log")
[ "$n" = 1 ] || bad "$n log lines take a device out of service (want 1)"
grep -q "device [01] of the cpu backend is taken out of service (1 context): device [01] is lost (fault point gpud.device_lost); its partitions are synthesised again and proved on the 1 device left" \
    "$T/logs/gpud.log" || bad "the log line does not name the device and the error: $(grep 'out of service' "$T/logs/gpud.log")"
LOST=$(jq_st 'o.gpus.findIndex(g => g.state == "out_of_service")')
case $LOST in 0) OK=1 ;; 1) OK=0 ;; *) bad "no device out of service in STATUS: $(status_json)"; exit 1 ;; esac
[ "$(jq_st "o.gpus[$OK].state")" = in_service ] || bad "device $OK is not in service"
jq_st "o.gpus[$LOST].reason" | grep -q "is lost (fault point gpud.device_lost)" ||
    bad "device $LOST's reason: $(jq_st "o.gpus[$LOST].reason")"
[ "$(jq_st "o.gpus[$LOST].requeued")" = 1 ] || bad "device $LOST requeued $(jq_st "o.gpus[$LOST].requeued"), want 1"
[ "$(jq_st "o.gpus[$LOST].done")" = 0 ] || bad "the lost device computed $(jq_st "o.gpus[$LOST].done")"
[ "$(jq_st "o.gpus[$OK].done")" = 4 ] || bad "device $OK computed $(jq_st "o.gpus[$OK].done") of 4"
[ "$(jq_st 'o.gpus[0].failed + o.gpus[1].failed')" = 0 ] || bad "partitions counted as failed on a device"
[ "$(jq_st 'o.gpus[0].contexts + "," + o.gpus[1].contexts')" = "1,1" ] || bad "contexts per device"
[ "$(jq_st "o.gpus[$OK].busy_pct > 0 && o.gpus[$OK].busy_pct <= 100")" = true ] || bad "device $OK busy share"
[ "$(jq_st 'o.failures_total')" = 0 ] || bad "a partition failed: $(jq_st 'o.failures_total')"
"$CZK" status --config "$CONF" >"$T/status.txt" 2>&1
grep -Eq "^(devices)? *$LOST: OUT OF SERVICE" "$T/status.txt" || bad "czk status does not show device $LOST out of service"
grep -q "why: device $LOST is lost" "$T/status.txt" || bad "czk status does not say why"
grep -Eq "^(devices)? *$OK: in service" "$T/status.txt" || bad "czk status does not show device $OK in service"
python3 - "$PORT" >"$T/metrics" <<'PY' || bad "no metrics on port $PORT"
import sys, urllib.request
print(urllib.request.urlopen("http://127.0.0.1:%s/metrics" % sys.argv[1], timeout=5).read().decode())
PY
grep -q "^czk_gpud_gpus_lost_total 1$" "$T/metrics" || bad "czk_gpud_gpus_lost_total is not 1"
grep -q "^czk_gpud_gpu_in_service{gpu=\"$LOST\"} 0$" "$T/metrics" || bad "metrics: device $LOST in service"
grep -q "^czk_gpud_gpu_in_service{gpu=\"$OK\"} 1$" "$T/metrics" || bad "metrics: device $OK not in service"
grep -q "^czk_gpud_gpu_partitions_total{gpu=\"$OK\"} 4$" "$T/metrics" || bad "metrics: device $OK partitions"
grep -q "^czk_gpud_gpu_contexts{gpu=\"2\"} 0$" "$T/metrics" || bad "metrics: a device the backend lacks has contexts"
check_all

log "round 2: every compute fails: the job waits, then completes after a restart"
kill9 "$GPUD_PID"
start_gpud gpud.device_lost:fail
wait_up 1 || exit 1
submit r2 linear 2 normal || { bad "submit r2: $(cat "$T/sub.r2")"; exit 1; }
J2=$(job_of "$T/sub.r2")
expect_job "$J2" linear 2
waiting() { "$CZK" status --config "$CONF" --job "$J2" 2>/dev/null | grep -q "no compute device is in service"; }
for _ in $(seq 1 150); do waiting && break; sleep 0.2; done
waiting || bad "job $J2 does not say that no device is in service: $("$CZK" status --config "$CONF" --job "$J2")"
[ "$(jq_st 'o.gpus.filter(g => g.state == "out_of_service").length')" = 2 ] || bad "not both devices out of service"
grep -q "NO compute device is in service" "$T/status.txt" && bad "round 1 already said no device"
"$CZK" status --config "$CONF" | grep -q "NO compute device is in service" || bad "czk status does not warn"
"$CZK" status --config "$CONF" --json --job "$J2" >"$T/j2.json"
node -e 'const o=JSON.parse(require("fs").readFileSync(process.argv[1]));
    process.exit(o.job.state == "active" && o.job.failed == 0 ? 0 : 1)' "$T/j2.json" ||
    bad "job $J2 is not waiting: $(cat "$T/j2.json")"
grep -q "no device is left in service: accepted jobs wait" "$T/logs/gpud.log" || bad "no log line for the last device"
kill9 "$GPUD_PID"
start_gpud
wait_up 1 || exit 1
check_all

[ "$fail" = 0 ] && echo "ok"
exit $fail
