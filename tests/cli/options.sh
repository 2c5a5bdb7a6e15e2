#!/bin/sh
# options.sh — the option convention of every `czk` command (cli/cli.h):
#   - COMMAND --help: the full usage on stdout (every --option of commands.h,
#     "-h, --help"), nothing on stderr, exit 0; an unknown option: a line
#     naming it and the usage on stderr, nothing on stdout, exit 2
#   - czk --version / czk version: version, the commit of this checkout, backends
#   - --opt=value and --opt value alike: gen-circuit, prove, submit, status,
#     cancel, trace (the client commands against fake_gpud --stall)
#   - job numbers, seconds and --threads: digits only (a sign, a space, 0x,
#     an empty value refused with the value named, exit 2)
#   - vkey ZKEY OUT writes what vkey ZKEY prints; czk -v prove names the
#     backend it chose, never "auto"
#   - submit --out refuses a non-empty directory (nothing sent) unless --force
#   - trace finds the state directory the running czk-gpud reports (found
#     with --runtime-dir like czk status), and says where it looked
# usage: options.sh CZK FAKE_GPUD SOURCE_DIR
set -u
CZK=$1 FAKE=$2 SRC=$3
. "$SRC/tests/lib/common.sh"
T=$(mktemp -d /tmp/czk-cli-opts.XXXXXX)
RT=$T/run
fail=0
FAKE_PID=
cleanup() {
    [ -n "$FAKE_PID" ] && kill "$FAKE_PID" 2>/dev/null && wait "$FAKE_PID" 2>/dev/null
    if [ "$fail" = 0 ]; then rm -rf "$T"; else echo "(kept $T)" >&2; fi
}
trap cleanup EXIT
unset CZK_RUNTIME_DIR CZK_STATE_DIR XDG_RUNTIME_DIR
seed=${CZK_TEST_SEED:-$(od -An -N4 -tu4 /dev/urandom | tr -d ' ')}
echo "seed $seed (CZK_TEST_SEED=$seed replays)"

# expect STATUS NAME CMD...: exit status of CMD (stdout in $T/out, stderr in $T/err)
expect() {
    want=$1 name=$2; shift 2
    "$@" >"$T/out" 2>"$T/err"; got=$?
    [ "$got" = "$want" ] || { bad "$name: exit $got, want $want"; sed 's/^/  | /' "$T/err" >&2; }
}

# ---- --help and usage errors, every command of `czk --help`
expect 0 "czk --help" "$CZK" --help
cmds=$(sed -n '/^commands/,$p' "$T/out" | sed -n 's/^  \([a-z-]*\) .*/\1/p')
[ "$(echo "$cmds" | wc -w)" -ge 10 ] || bad "czk --help lists too few commands: $cmds"
for c in $cmds; do
    for h in --help -h; do
        expect 0 "$c $h" "$CZK" "$c" $h
        [ -s "$T/err" ] && bad "$c $h wrote to stderr: $(cat "$T/err")"
        head -n 1 "$T/out" | grep -q "^usage: czk .*$c" || bad "$c $h: no usage line on stdout"
        grep -q -- '-h, --help' "$T/out" || bad "$c $h: the usage does not list -h, --help"
    done
    cp "$T/out" "$T/help.$c"
    expect 0 "czk help $c" "$CZK" help "$c"
    cmp -s "$T/out" "$T/help.$c" || bad "czk help $c differs from czk $c --help"
    [ "$c" = journal ] && continue # reads its own arguments (cli/cmd_journal.c)
    expect 2 "$c --no-such-option" "$CZK" "$c" --no-such-option
    [ -s "$T/out" ] && bad "$c --no-such-option wrote to stdout"
    grep -q -- '--no-such-option' "$T/err" || bad "$c: the bad option is not named: $(head -n 1 "$T/err")"
    grep -q '^usage: czk' "$T/err" || bad "$c: a usage error does not print the usage on stderr"
done
expect 2 "submit without arguments" "$CZK" submit
grep -q -- '--circuit NAME is required' "$T/err" && grep -q -- '--reconnect-timeout' "$T/err" ||
    bad "submit without arguments: not the reason and the full usage: $(cat "$T/err")"
expect 2 "submit --wait=yes" "$CZK" submit --wait=yes --circuit c w
grep -q 'option --wait takes no value' "$T/err" || bad "--wait=yes: $(head -n 1 "$T/err")"
expect 2 "prove --backend (no value)" "$CZK" prove --backend
grep -q 'option --backend needs a value' "$T/err" || bad "prove --backend: $(head -n 1 "$T/err")"
expect 2 "czk --no-such-global" "$CZK" --no-such-global vkey x
expect 2 "czk alone" "$CZK"

# ---- numbers, one rule (czk_cli_parse_u64): digits only, no sign or space
for v in "+5" " 5" "-5" "5x" "" "0x5"; do
    expect 2 "status --job '$v'" "$CZK" status --runtime-dir "$RT" --job "$v"
    grep -qF -- "--job needs a job number, not \"$v\"" "$T/err" || bad "status --job '$v': $(head -n 1 "$T/err")"
    expect 2 "cancel '$v'" "$CZK" cancel --runtime-dir "$RT" -- "$v"
    grep -qF "\"$v\" is not a job number" "$T/err" || bad "cancel '$v': $(head -n 1 "$T/err")"
    expect 2 "fetch '$v'" "$CZK" fetch --runtime-dir "$RT" --out "$T/nf" -- "$v"
    grep -qF "\"$v\" is not a job number" "$T/err" || bad "fetch '$v': $(head -n 1 "$T/err")"
    expect 2 "fetch --timeout '$v'" "$CZK" fetch --runtime-dir "$RT" --out "$T/nf" --timeout "$v" 7
    grep -qF -- "--timeout needs seconds in 1..86400, not \"$v\"" "$T/err" || bad "fetch --timeout '$v': $(head -n 1 "$T/err")"
    expect 2 "submit --timeout '$v'" "$CZK" submit --runtime-dir "$RT" --circuit c --timeout "$v" "$T/none.wtns"
    grep -qF -- "--timeout needs seconds in 1..86400, not \"$v\"" "$T/err" || bad "submit --timeout '$v': $(head -n 1 "$T/err")"
    expect 2 "--threads '$v'" "$CZK" --threads "$v" version
done

# ---- version
for v in --version -V version; do
    expect 0 "czk $v" "$CZK" $v
    grep -Eq '^czk [0-9]+\.[0-9]+\.[0-9]+ \(commit [0-9a-z]+, backends cpu(,cuda)?\)$' "$T/out" ||
        bad "czk $v: $(cat "$T/out")"
done
commit=$(sed -n 's/.*(commit \([0-9a-z]*\),.*/\1/p' "$T/out")
if head=$(git -C "$SRC" rev-parse HEAD 2>/dev/null); then
    case $head in "$commit"*) ;; *) bad "czk --version says commit $commit, the checkout is at $head" ;; esac
else
    echo "note: $SRC is not a git checkout: the commit ($commit) not compared"
fi

# ---- --opt=value on the single-process commands
n=$((200 + seed % 300)) k=$((1 + seed % 4))
expect 0 "gen-circuit --opt=value" "$CZK" gen-circuit --constraints=$n --publics=$k --bits=0.3 --seed=$seed \
    "$T/c.r1cs" "$T/c.wtns"
expect 0 "setup" "$CZK" setup "$T/c.r1cs" "$T/c.zkey"
expect 0 "prove --backend=cpu" "$CZK" -v prove --backend=cpu "$T/c.zkey" "$T/c.wtns" "$T/p.json" "$T/pub.json"
grep -q 'prove: backend cpu' "$T/err" || bad "czk -v prove --backend=cpu does not log the backend: $(cat "$T/err")"
expect 0 "-v prove (auto)" "$CZK" -v prove "$T/c.zkey" "$T/c.wtns" "$T/p2.json" "$T/pub2.json"
grep -Eq 'prove: backend (cpu|cuda)' "$T/err" || bad "czk -v prove does not log the backend it chose: $(cat "$T/err")"
grep -q 'prove: backend auto' "$T/err" && bad "czk -v prove logs \"backend auto\": $(grep 'backend auto' "$T/err")"
[ "$(grep -o '"[0-9]*"' "$T/pub.json" | wc -l)" = "$k" ] || bad "public.json does not hold $k signals"
expect 0 "vkey (stdout)" "$CZK" vkey "$T/c.zkey"
cp "$T/out" "$T/vk.stdout"
expect 0 "vkey OUT" "$CZK" vkey "$T/c.zkey" "$T/vk.json"
[ -s "$T/out" ] && bad "vkey OUT also wrote to stdout"
cmp -s "$T/vk.json" "$T/vk.stdout" || bad "vkey OUT differs from vkey's stdout"
expect 0 "verify with vkey OUT" "$CZK" verify "$T/vk.json" "$T/pub.json" "$T/p.json"
expect 2 "vkey with three arguments" "$CZK" vkey "$T/c.zkey" "$T/a" "$T/b"
expect 2 "vkey into a missing directory" "$CZK" vkey "$T/c.zkey" "$T/nodir/vk.json"
grep -q "nodir" "$T/err" || bad "vkey into a missing directory: not named: $(cat "$T/err")"

# ---- the client commands against fake_gpud --stall (--opt=value)
"$FAKE" "$RT" --stall --synths 1 --finalizer 1 --state-dir "$T/state" >"$T/fake.out" 2>"$T/fake.err" &
FAKE_PID=$!
for _ in $(seq 1 100); do grep -q '^listening' "$T/fake.out" 2>/dev/null && break; sleep 0.05; done
grep -q '^listening' "$T/fake.out" || { bad "fake_gpud did not start: $(cat "$T/fake.err")"; exit 1; }
submits() { grep -c '^SUBMIT' "$T/fake.out"; }

req="opts-$seed"
expect 0 "submit --opt=value" "$CZK" submit --runtime-dir="$RT" --circuit=linear --priority=high \
    --request-id="$req" "$T/c.wtns" "$T/c.wtns"
grep -q "^SUBMIT fds=2 req=$req circuit=linear prio=0 flags=0$" "$T/fake.out" ||
    bad "submit --opt=value did not reach gpud as given: $(grep SUBMIT "$T/fake.out")"
grep -q '^job 7 accepted' "$T/out" || bad "submit: $(cat "$T/out")"
expect 0 "submit --opt value" "$CZK" submit --runtime-dir "$RT" --circuit linear --priority low "$T/c.wtns"
grep -q "circuit=linear prio=2 flags=0$" "$T/fake.out" || bad "submit --opt value: $(tail -n 1 "$T/fake.out")"
expect 0 "status --job=7" "$CZK" status --runtime-dir="$RT" --job=7 --json
grep -q '"synths": 1' "$T/out" || bad "status --json: $(cat "$T/out")"
expect 0 "status JOB" "$CZK" status 7 --runtime-dir "$RT"
grep -q '^czk-gpud (backend cpu): 1 synth connected, finalizer connected' "$T/out" || bad "status: $(head -n 1 "$T/out")"
expect 2 "status --job=x" "$CZK" status --runtime-dir="$RT" --job=x
# a relative runtime directory (option or environment) is refused, naming it
expect 2 "status --runtime-dir relative" "$CZK" status --runtime-dir=run-rel
grep -q -- '--runtime-dir "run-rel" is not an absolute path' "$T/err" || bad "relative --runtime-dir: $(cat "$T/err")"
expect 2 "status with a relative CZK_RUNTIME_DIR" env CZK_RUNTIME_DIR=run-rel "$CZK" status
grep -q '$CZK_RUNTIME_DIR="run-rel" is not an absolute path' "$T/err" || bad "relative CZK_RUNTIME_DIR: $(cat "$T/err")"
expect 0 "cancel --runtime-dir=" "$CZK" cancel 7 --runtime-dir="$RT"
grep -q '^job 7 cancelled' "$T/out" && grep -q '^CANCEL job=7' "$T/fake.out" || bad "cancel: $(cat "$T/out" "$T/err")"

# ---- --out DIR: a non-empty directory is refused, nothing is sent
mkdir -p "$T/o/0" && echo old >"$T/o/0/proof.json"
before=$(submits)
expect 2 "submit --out non-empty" "$CZK" submit --runtime-dir "$RT" --circuit linear --out "$T/o" "$T/c.wtns"
grep -q "output directory \"$T/o\" is not empty" "$T/err" && grep -q -- '--force' "$T/err" ||
    bad "--out non-empty: not refused with a hint: $(cat "$T/err")"
[ "$(submits)" = "$before" ] || bad "--out non-empty: the job was submitted anyway"
[ "$(cat "$T/o/0/proof.json")" = old ] || bad "--out non-empty: an old file changed"
expect 2 "--force without --out" "$CZK" submit --runtime-dir "$RT" --circuit linear --force "$T/c.wtns"
# with --force it is submitted (the job never ends here: --timeout stops the wait)
expect 1 "submit --out non-empty --force" "$CZK" submit --runtime-dir "$RT" --circuit linear --out="$T/o" --force \
    --timeout=1 "$T/c.wtns"
[ "$(submits)" = $((before + 1)) ] || bad "--out --force: not submitted"
grep -q 'has not finished within --timeout 1 s' "$T/err" || bad "--timeout=1: $(cat "$T/err")"
mkdir "$T/empty"
expect 1 "submit --out empty dir" "$CZK" submit --runtime-dir "$RT" --circuit linear --out "$T/empty" --timeout 1 \
    "$T/c.wtns"

# ---- trace: the state directory czk-gpud reports (found like czk status finds it)
expect 2 "trace --runtime-dir= (no files)" "$CZK" trace --runtime-dir="$RT" --since=5
grep -q "no trace files in \"$T/state/trace\" (reported by czk-gpud)" "$T/err" ||
    bad "trace did not look where czk-gpud says: $(cat "$T/err")"
expect 2 "trace --state-dir= (no files)" "$CZK" trace --state-dir="$T/elsewhere" --runtime-dir "$RT"
grep -q "\"$T/elsewhere/trace\"" "$T/err" || bad "trace --state-dir is not first: $(cat "$T/err")"
if command -v python3 >/dev/null 2>&1; then
    mkdir -p "$T/state/trace"
    python3 - "$T/state/trace/czk-gpud-4242.trace" "$seed" <<'PY'
import struct, sys, time
path, seed = sys.argv[1], int(sys.argv[2])
now = time.clock_gettime_ns(time.CLOCK_MONOTONIC)
hdr = b"CZKTRC01" + struct.pack("<IIIIq", 1, 40, 4242, 0, 0) + b"czk-gpud".ljust(32, b"\0")
recs = b"".join(struct.pack("<QIHHQQII", 1 + seed % 1000, p, 10, 0, now - 2_000_000, now - 1_000_000, 4242, 4243)
                for p in range(3))
open(path, "wb").write(hdr + recs)
PY
    expect 0 "trace --runtime-dir --out=" "$CZK" trace --runtime-dir "$RT" --out="$T/trace.json"
    [ "$(grep -o '"ph": *"X"' "$T/trace.json" | wc -l)" = 3 ] || bad "trace: not the 3 records: $(head -c 300 "$T/trace.json")"
    grep -q "\"job\": *$((1 + seed % 1000))" "$T/trace.json" || bad "trace: the job of the records is missing"
else
    echo "note: python3 missing: no trace file written, only the directory checked"
fi
kill "$FAKE_PID" 2>/dev/null; wait "$FAKE_PID" 2>/dev/null; FAKE_PID=
# no czk-gpud: the configuration's state_dir, and the message says where it looked
expect 2 "trace without czk-gpud" env CZK_STATE_DIR="$T/st2" CZK_RUNTIME_DIR="$T/nort" "$CZK" trace
grep -q "no trace files in \"$T/st2/trace\"" "$T/err" && grep -q -- '--state-dir DIR' "$T/err" ||
    bad "trace without czk-gpud: $(cat "$T/err")"

[ "$fail" = 0 ] && echo "cli options: ok"
exit "$fail"
