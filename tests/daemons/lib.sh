# lib.sh — shared by the daemon tests: a temporary runtime/state/output tree,
# a generated config, starting and stopping czk-gpud/czk-synth/czk-finalizer.
# Sourced with: GPUD SYNTH FIN CLIENT SRC set.
set -u
. "$SRC/tests/lib/common.sh" # bad, wait_exit
FIX=$SRC/tests/fixtures
SNARKJS=${CZK_SNARKJS:-$SRC/interop/node_modules/.bin/snarkjs}
T=$(mktemp -d /tmp/czk-daemons.XXXXXX)
RT=$T/run
mkdir -p "$RT"
export CZK_POOL_HUGEPAGES=never
fail=0
GPUD_PID= SYNTH_PID= FIN_PID=

# config_base: the [czk], [gpud] and [synth] sections every daemon test
# starts from (no circuits), on stdout
config_base() {
    cat <<CONF
[czk]
runtime_dir = $RT
state_dir = $T/state
output_dir = $T/out
log_level = 6
[gpud]
backend = cpu
threads = 2
slots_per_pool = 2
max_partitions_per_job = 4
metrics_port = 0
[synth]
threads = 2
reconnect_max_ms = 400
CONF
}

# write_config: config_base with circuits multi and linear (the fixtures'
# zkeys) into $T/czk.conf; lines on stdin are merged in: a section that is
# already there gets their keys (a key given again replaces its value), a new
# section is added at the end.  The parser refuses a section that appears
# twice, so nothing is simply appended.
write_config() {
    cat >"$T/czk.conf.extra"
    {
        config_base
        printf '[circuit.%s]\nzkey = %s\n' multi "$FIX/multi/circuit.zkey" linear "$FIX/linear/circuit.zkey"
    } >"$T/czk.conf.base"
    awk '
        /^[ \t]*\[.*\][ \t]*$/ { sec = $0; gsub(/[ \t]/, "", sec)
                                 if (!(sec in seen)) { seen[sec] = 1; order[++ns] = sec }
                                 next }
        /^[ \t]*$/ || /^[ \t]*[;#]/ { next }
        { k = $0; sub(/[ \t]*=.*/, "", k); sub(/^[ \t]*/, "", k)
          if (!((sec, k) in val)) { nk[sec]++; key[sec, nk[sec]] = k }
          val[sec, k] = $0 }
        END { for (i = 0; i <= ns; i++) { s = i ? order[i] : ""
                  if (i) print s
                  for (j = 1; j <= nk[s]; j++) print val[s, key[s, j]] } }
    ' "$T/czk.conf.base" "$T/czk.conf.extra" >"$T/czk.conf"
    rm -f "$T/czk.conf.base" "$T/czk.conf.extra"
}

# start_* [CONFIG]: the daemon in the background with CONFIG ($T/czk.conf by default)
start_gpud() { "$GPUD" --config "${1:-$T/czk.conf}" >>"$T/gpud.log" 2>&1 & GPUD_PID=$!; }
start_synth() { "$SYNTH" --config "${1:-$T/czk.conf}" --numa-node 0 >>"$T/synth.log" 2>&1 & SYNTH_PID=$!; }
start_fin() { "$FIN" --config "${1:-$T/czk.conf}" >>"$T/fin.log" 2>&1 & FIN_PID=$!; }

wait_socket() { # wait until gpud's client socket answers STATUS
    for _ in $(seq 1 100); do
        "$CLIENT" "$RT/czk.sock" status >/dev/null 2>&1 && return 0
        sleep 0.1
    done
    bad "czk-gpud did not come up"; dump_logs; return 1
}

dump_logs() {
    for f in gpud synth fin; do
        [ -f "$T/$f.log" ] && { echo "---- $f.log (tail)"; tail -n 40 "$T/$f.log"; }
    done >&2
}

stop_all() {
    for p in $GPUD_PID $SYNTH_PID $FIN_PID; do kill -TERM "$p" 2>/dev/null; done
    for p in $GPUD_PID $SYNTH_PID $FIN_PID; do wait_exit "$p" 20 >/dev/null 2>&1; kill -KILL "$p" 2>/dev/null; done
}

cleanup() {
    stop_all
    if [ "$fail" = 0 ] && [ -z "${CZK_KEEP:-}" ]; then rm -rf "$T"; else dump_logs; echo "(kept $T)" >&2; fi
}
trap cleanup EXIT

# check_partition JOB PART FIXTURE: files exist, public.json is the fixture's,
# snarkjs (the independent oracle) accepts the proof
have_snarkjs() { [ -x "$SNARKJS" ] && command -v node >/dev/null; }
check_partition() {
    d=$T/out/$1/$2
    [ -f "$d/proof.json" ] && [ -f "$d/public.json" ] || { bad "job $1 partition $2: no proof files in $d"; return; }
    cmp -s "$d/public.json" "$FIX/$3/public.json" || bad "job $1 partition $2: public.json differs from $3's"
    if have_snarkjs; then
        "$SNARKJS" groth16 verify "$FIX/$3/verification_key.json" "$d/public.json" "$d/proof.json" >"$T/sj.out" 2>&1
        grep -q "OK" "$T/sj.out" || { bad "job $1 partition $2: snarkjs rejects the proof"; cat "$T/sj.out" >&2; }
    fi
}
