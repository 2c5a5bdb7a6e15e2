# lib.sh — shared by the pipeline tests (tests/pipeline/*.sh): a temporary
# runtime/state/output tree with a generated config, starting, killing and
# restarting czk-gpud / czk-synth (one or two) / czk-finalizer, submitting with
# the real `czk` client, and the checks every test makes:
#   - every proof verifies with snarkjs (one node process for the whole batch:
#     verify_batch.js), and its public.json is the fixture's
#   - exactly once: each partition's proof.json was written once (the
#     finalizer's "verified and written" log line, and inode + mtime unchanged
#     until the end of the test), its DONE journaled once (journal records
#     collected across restarts by sequence number: compaction keeps them)
# Sourced by a test run as: TEST.sh CZK GPUD SYNTH FIN TOOL SRC
set -u
CZK=$1 GPUD=$2 SYNTH=$3 FIN=$4 TOOL=$5 SRC=$6
. "$SRC/tests/lib/common.sh" # bad, wait_exit
FIX=$SRC/tests/fixtures
SNARKJS_DIR=${CZK_SNARKJS_DIR:-$SRC/interop/node_modules/snarkjs}
T=$(mktemp -d /tmp/czk-pipeline.XXXXXX)
RT=$T/run
CONF=$T/czk.conf
mkdir -p "$RT" "$T/logs"
export CZK_POOL_HUGEPAGES=never
unset CZK_FAULT CZK_RUNTIME_DIR
fail=0
GPUD_PID="" FIN_PID="" SYNTH0_PID="" SYNTH1_PID=""
: >"$T/verify.list"
: >"$T/journal.all"
: >"$T/expect"

have_snarkjs() { [ -f "$SNARKJS_DIR/package.json" ] && command -v node >/dev/null 2>&1; }
# snarkjs is the independent oracle: without it the test cannot judge the proofs
require_snarkjs() {
    have_snarkjs || { echo "SKIP: snarkjs not installed ($SNARKJS_DIR): run scripts/setup-npm.sh"; exit 77; }
}

log() { echo "== $*"; }

write_config() { # extra lines on stdin are appended; $CZK_EXTRA / $GPUD_EXTRA go into [czk] / [gpud]
    cat >"$CONF" <<CONF
[czk]
runtime_dir = $RT
state_dir = $T/state
output_dir = $T/out
log_level = 6
${CZK_EXTRA:-}
[gpud]
${GPUD_EXTRA:-}
backend = cpu
threads = 2
slots_per_pool = ${SLOTS:-2}
metrics_port = 0
[synth]
threads = 1
reconnect_max_ms = 300
[circuit.multi]
zkey = $FIX/multi/circuit.zkey
[circuit.linear]
zkey = $FIX/linear/circuit.zkey
[circuit.poseidon]
zkey = $FIX/poseidon/circuit.zkey
[circuit.range]
zkey = $FIX/range/circuit.zkey
CONF
    cat >>"$CONF"
}

# start_* accept an optional fault spec (CZK_FAULT) for that process only
# (each start first snapshots the journal: gpud compacts it at start-up).
# gpud is started again at once after the previous one exited, with no pause:
# its socket may still answer for a few ms (io_uring tears the ring down
# asynchronously) and czk_peer_listen must see that it is stale.
start_gpud() { snap_journal; CZK_FAULT=${1:-} "$GPUD" --config "$CONF" >>"$T/logs/gpud.log" 2>&1 & GPUD_PID=$!; }
start_fin() { CZK_FAULT=${1:-} "$FIN" --config "$CONF" >>"$T/logs/fin.log" 2>&1 & FIN_PID=$!; }
start_synth() { # INDEX [FAULT]
    CZK_FAULT=${2:-} "$SYNTH" --config "$CONF" --numa-node 0 >>"$T/logs/synth$1.log" 2>&1 &
    eval "SYNTH$1_PID=$!"
}

# st KEY: one number from `czk status --json` (top level or "section.key")
status_json() { "$CZK" status --config "$CONF" --json 2>/dev/null; }
st() {
    status_json | node -e 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>{let o=JSON.parse(s);
        for (const k of process.argv[1].split(".")) o=o[k]; console.log(o)})' "$1" 2>/dev/null
}

# wait_up NSYNTHS: gpud answers, NSYNTHS synths and the finalizer are connected
wait_up() {
    for _ in $(seq 1 150); do
        if s=$(status_json); then
            n=$(echo "$s" | sed -n 's/^  "synths": \([0-9]*\).*/\1/p')
            f=$(echo "$s" | sed -n 's/^  "finalizer": \([0-9]*\).*/\1/p')
            [ "${n:-0}" -ge "$1" ] && [ "${f:-0}" = 1 ] && return 0
        fi
        sleep 0.1
    done
    bad "the daemons did not come up ($1 synths + finalizer)"; dump_logs; return 1
}

kill9() { # PID...: SIGKILL and reap
    for p in "$@"; do [ -n "$p" ] && kill -KILL "$p" 2>/dev/null; done
    for p in "$@"; do [ -n "$p" ] && wait "$p" 2>/dev/null; done
    return 0
}

dump_logs() {
    for f in "$T"/logs/*.log; do
        [ -f "$f" ] && { echo "---- $f (tail)"; tail -n 30 "$f"; }
    done >&2
}

stop_all() {
    for p in $GPUD_PID $SYNTH0_PID $SYNTH1_PID $FIN_PID; do kill -TERM "$p" 2>/dev/null; done
    for p in $GPUD_PID $SYNTH0_PID $SYNTH1_PID $FIN_PID; do
        wait_exit "$p" 20 >/dev/null 2>&1 || kill -KILL "$p" 2>/dev/null
    done
    GPUD_PID="" FIN_PID="" SYNTH0_PID="" SYNTH1_PID=""
}

# mount_tmpfs DIR MB NAME: a tmpfs of MB MiB at DIR (made first), unmounted by
# cleanup once the daemons are stopped; exits 77 when mounts are refused
# (no root, an unprivileged container)
TMPFS_MOUNTS=
mount_tmpfs() {
    mkdir -p "$1"
    mount -t tmpfs -o "size=$2m,mode=0750" "$3" "$1" 2>/dev/null ||
        { echo "SKIP: cannot mount a tmpfs here"; exit 77; }
    TMPFS_MOUNTS="$1 $TMPFS_MOUNTS" # the last one mounted goes first
}
unmount_tmpfs() {
    for m in $TMPFS_MOUNTS; do umount "$m" 2>/dev/null; done
    TMPFS_MOUNTS=
}

cleanup() {
    stop_sampler
    stop_all
    unmount_tmpfs
    if [ "$fail" = 0 ] && [ -z "${CZK_KEEP:-}" ]; then rm -rf "$T"; else dump_logs; echo "(kept $T)" >&2; fi
}
trap cleanup EXIT

# job_of OUTPUT_FILE: the job number from "job N accepted"
job_of() { sed -n 's/^job \([0-9]*\) accepted.*/\1/p' "$1" | head -1; }

# submit NAME CIRCUIT NPARTS PRIO [czk submit options...]: runs `czk submit` in
# the foreground; output in $T/sub.NAME; records what must exist at the end
submit() {
    name=$1 circ=$2 np=$3 prio=$4; shift 4
    set -- "$@" --priority "$prio" --circuit "$circ"
    _si=0; while [ $_si -lt "$np" ]; do set -- "$@" "$FIX/$circ/witness.wtns"; _si=$((_si + 1)); done
    "$CZK" submit --config "$CONF" "$@" >"$T/sub.$name" 2>&1
}

# expect_job JOB CIRCUIT NPARTS [CLIENT_OUT_DIR]: the job must end complete
expect_job() { echo "$1 $2 $3 ${4:--}" >>"$T/expect"; }

# wait_complete JOB SECONDS: poll `czk status --job` until the job is complete
wait_complete() {
    for _ in $(seq 1 $(($2 * 5))); do
        s=$("$CZK" status --config "$CONF" --json --job "$1" 2>/dev/null) &&
            echo "$s" | grep -A3 '"job": {' | grep -q '"state": "complete"' && return 0
        sleep 0.2
    done
    bad "job $1 is not complete after $2 s"; "$CZK" status --config "$CONF" --job "$1" >&2; return 1
}

snap_journal() { [ -f "$T/state/journal" ] && "$TOOL" journal "$T/state/journal" >>"$T/journal.all" 2>/dev/null; return 0; }
# journal_complete JOB: gpud's journal as it is on disk now holds JOB's COMPLETE
# (with gpud killed: whether the job was done before the kill)
journal_complete() {
    "$TOOL" journal "$T/state/journal" 2>/dev/null | awk -v j="$1" '$2 == "COMPLETE" && $3 == j { f = 1 } END { exit !f }'
}

# snapshot inode + mtime of every proof.json written so far (compared at the
# end) into $T/files.snap, or the file given
snap_files() {
    find "$T/out" -name proof.json -printf '%p %i %T@\n' 2>/dev/null >>"${1:-$T/files.snap}"
}
# the same every 50 ms in the background, so a file replaced soon after it was
# first written (a second rename over it) is seen too.  Into a file of its own
# (two writers appending to one file can interleave their lines), and stopped
# between two snapshots, never inside one (a cut line would read as a change)
SAMPLER_PID=""
start_sampler() {
    rm -f "$T/sampler.stop"
    (while [ ! -e "$T/sampler.stop" ]; do snap_files "$T/files.sampled"; sleep 0.05; done) & SAMPLER_PID=$!
}
stop_sampler() {
    [ -n "$SAMPLER_PID" ] || return 0
    : >"$T/sampler.stop"
    wait "$SAMPLER_PID" 2>/dev/null
    SAMPLER_PID=""
    return 0
}

# reload_setup: the reload tests' keys.  $K/multi.zkey is a copy of the multi
# fixture's key ($T/fx1 has its vkey), $K/multi2.zkey a new `czk setup` of the
# same circuit (same sizes, another key id; $T/fx2 has its vkey), and the
# config (SLOTS=2) names $K/multi.zkey for circuit multi
reload_setup() {
    K=$T/keys
    mkdir -p "$K" "$T/fx1" "$T/fx2"
    cp "$FIX/multi/circuit.zkey" "$K/multi.zkey"
    cp "$FIX/multi/verification_key.json" "$FIX/multi/public.json" "$T/fx1/"
    "$CZK" setup "$FIX/multi/circuit.r1cs" "$K/multi2.zkey" >"$T/setup.log" 2>&1 ||
        { bad "czk setup: $(cat "$T/setup.log")"; exit 1; }
    "$CZK" vkey "$K/multi2.zkey" "$T/fx2/verification_key.json" >"$T/vkey.log" 2>&1 ||
        { bad "czk vkey of the new key: $(cat "$T/vkey.log")"; exit 1; }
    cp "$FIX/multi/public.json" "$T/fx2/"
    SLOTS=2 write_config </dev/null
    sed -i "s|^zkey = $FIX/multi/circuit.zkey\$|zkey = $K/multi.zkey|" "$CONF"
    grep -q "zkey = $K/multi.zkey" "$CONF" || { bad "could not point the config at the test's key"; exit 1; }
}

# fxdir CIRCUIT: the fixture directory of a circuit name, or CIRCUIT itself
# when it is a path (a test's own directory with verification_key.json and
# public.json: a key made in the test)
fxdir() { case $1 in */*) echo "$1" ;; *) echo "$FIX/$1" ;; esac; }

# check_jobs LIST [strict]: each line "JOB CIRCUIT NPARTS [CLIENT_OUT_DIR]" of
# LIST: every partition's proof.json and public.json exist (public.json the
# circuit's; the client's --out copies identical), written once by the
# finalizer, DONE journaled once and ACCEPT once (in $T/journal.uniq); the
# proofs go into verify.list.  Without strict, a partition the finalizer's
# successor answered "already written" (a finalizer killed between its
# rename and its log line) counts as written once.
check_jobs() {
    while read -r job circ np cout; do
        cout=${cout:--}
        p=0
        while [ $p -lt "$np" ]; do
            d=$T/out/$job/$p
            if [ ! -f "$d/proof.json" ] || [ ! -f "$d/public.json" ]; then
                bad "job $job partition $p: no proof.json/public.json in $d"
            else
                cmp -s "$d/public.json" "$(fxdir "$circ")/public.json" || bad "job $job partition $p: public.json is not $circ's"
                echo "$(fxdir "$circ")/verification_key.json $d/public.json $d/proof.json" >>"$T/verify.list"
            fi
            if [ "$cout" != - ]; then
                cmp -s "$cout/$p/proof.json" "$d/proof.json" ||
                    bad "job $job partition $p: the client's --out proof.json differs from the one written ($cout)"
                cmp -s "$cout/$p/public.json" "$d/public.json" ||
                    bad "job $job partition $p: the client's --out public.json differs"
            fi
            # the finalizer logs each write after its rename; a finalizer killed
            # between the two leaves a file without the line, and its successor
            # must then answer "already written" (the sampler catches rewrites)
            n=$(cat "$T"/logs/fin*.log | grep -c "job $job partition $p: proof verified and written")
            if [ "$n" = 0 ] && [ "${2:-}" != strict ] &&
                cat "$T"/logs/fin*.log | grep -q "job $job partition $p: already written"; then
                n=1
            fi
            [ "$n" = 1 ] || bad "job $job partition $p: written $n times by the finalizer (must be exactly once)"
            n=$(awk -v j="$job" -v p="$p" '$2 == "DONE" && $3 == j && $4 == p' "$T/journal.uniq" | wc -l)
            [ "$n" = 1 ] || bad "job $job partition $p: DONE journaled $n times (must be exactly once)"
            p=$((p + 1))
        done
        n=$(awk -v j="$job" '$2 == "ACCEPT" && $3 == j' "$T/journal.uniq" | wc -l)
        [ "$n" = 1 ] || bad "job $job: ACCEPT journaled $n times"
    done <"$1"
}

# check_all: every expected job complete, each partition written once,
# journaled once, files never rewritten, and the whole batch verified by
# snarkjs; no expected job at all fails
check_all() {
    [ -s "$T/expect" ] || bad "check_all: no job expected (the checks would check nothing)"
    while read -r job circ np cout; do wait_complete "$job" 120; done <"$T/expect"
    stop_sampler
    snap_journal
    snap_files
    sort -u "$T/journal.all" >"$T/journal.uniq"
    check_jobs "$T/expect"
    # a file that changed inode or mtime between snapshots was rewritten
    cat "$T/files.sampled" 2>/dev/null >>"$T/files.snap"
    sort -u "$T/files.snap" | awk '{ if (($1 in seen) && seen[$1] != $2 " " $3) print $1; seen[$1] = $2 " " $3 }' \
        >"$T/rewritten"
    [ -s "$T/rewritten" ] && bad "proof files rewritten after they were first written: $(cat "$T/rewritten")"
    verify_batch
}

# snarkjs over everything collected in verify.list (one node process); an
# empty list fails
verify_batch() {
    [ -s "$T/verify.list" ] || { bad "no proof to verify: snarkjs checked nothing"; return 1; }
    node "$SRC/tests/pipeline/verify_batch.js" "$SNARKJS_DIR" <"$T/verify.list" >"$T/verify.out" 2>&1 ||
        { bad "snarkjs rejected proofs:"; grep -v '^OK' "$T/verify.out" >&2; }
    tail -n 1 "$T/verify.out"
}
