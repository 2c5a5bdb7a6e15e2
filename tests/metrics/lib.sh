# lib.sh — shared by the metrics tests: the three daemons of tests/daemons/lib.sh
# with their metrics on free localhost ports, a job run through them, and a
# scrape of each /metrics.  Sourced with: GPUD SYNTH FIN CLIENT SRC set.
. "$SRC/tests/daemons/lib.sh"

command -v curl >/dev/null || { echo "curl not installed: skipped"; exit 77; }
command -v python3 >/dev/null || { echo "python3 not installed: skipped"; exit 77; }

# free_ports N: N distinct localhost TCP ports nobody listens on now
free_ports() {
    python3 - "$1" <<'PY'
import socket, sys
socks = []
for _ in range(int(sys.argv[1])):
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    socks.append(s)
print(" ".join(str(s.getsockname()[1]) for s in socks))
PY
}

# start_with_metrics: gpud on $GPORT, the synth (node 0) on $SPORT, the
# finalizer on $FPORT; waits until each answers /metrics
start_with_metrics() {
    set -- $(free_ports 3)
    GPORT=$1 SPORT=$2 FPORT=$3
    write_config <<EOF2
[gpud]
metrics_port = $GPORT
[synth]
metrics_port = $SPORT
[finalizer]
metrics_port = $FPORT
EOF2
    start_gpud; start_synth; start_fin
    wait_socket || exit 1
    for p in $GPORT $SPORT $FPORT; do
        for _ in $(seq 1 100); do
            curl -sf "http://127.0.0.1:$p/metrics" >/dev/null && break
            sleep 0.1
        done
        curl -sf "http://127.0.0.1:$p/metrics" >/dev/null || { bad "no /metrics on port $p"; exit 1; }
    done
}

# scrape PORT FILE
scrape() { curl -sf "http://127.0.0.1:$1/metrics" >"$2" || bad "could not scrape port $1"; }

# sample FILE 'NAME{LABELS}': the value of one sample ("" when absent)
sample() { awk -v k="$2" '$1 == k { print $2; exit }' "$1"; }

# wait_sample PORT 'NAME{LABELS}' VALUE: polls until the sample has VALUE
wait_sample() {
    for _ in $(seq 1 100); do
        [ "$(curl -sf "http://127.0.0.1:$1/metrics" | awk -v k="$2" '$1 == k { print $2; exit }')" = "$3" ] &&
            return 0
        sleep 0.1
    done
    bad "$2 on port $1 did not reach $3"
    return 1
}
