#!/bin/sh
# client.sh — the `czk` client against fake_gpud run as the same user (no
# root needed; access.sh also runs it as an unprivileged user):
#   - status --json is valid UTF-8 and valid JSON whatever bytes gpud sends
#     (invalid UTF-8 escaped with czk_esc, valid UTF-8 kept), unknown keys
#     tolerated; the table carries no raw control byte and prints other
#     users' counts
#   - FIFO, character device, directory and socket witnesses are refused,
#     naming the file and its type, without hanging (run under timeout) and
#     before anything is sent
#   - request ids: \n, ESC, \xff, space, empty and too long refused (exit 2)
#     before anything is sent; a valid one travels as given; none given: 128
#     random bits in hex
#   - a connection dropped before ACCEPTED: the client reconnects and
#     resubmits with the same id, and takes the duplicate answer as accepted
#   - --out creates directories 0750 and files 0640 (0700/0600 under umask 077)
# usage: client.sh CZK FAKE_GPUD
set -u
CZK=$1 FAKE=$2
T=$(mktemp -d /tmp/czk-sec-client.XXXXXX)
RT=$T/run
fail=0
FAKE_PID=
bad() { echo "FAIL: $*" >&2; fail=1; }
cleanup() {
    [ -n "$FAKE_PID" ] && kill "$FAKE_PID" 2>/dev/null && wait "$FAKE_PID" 2>/dev/null
    if [ "$fail" = 0 ]; then rm -rf "$T"; else echo "(kept $T)" >&2; fi
}
trap cleanup EXIT
unset CZK_RUNTIME_DIR XDG_RUNTIME_DIR

start_fake() { # [--drop-first]
    stop_fake
    "$FAKE" "$RT" "$@" >"$T/fake.out" 2>"$T/fake.err" &
    FAKE_PID=$!
    for _ in $(seq 1 100); do grep -q '^listening' "$T/fake.out" 2>/dev/null && return 0; sleep 0.05; done
    bad "fake_gpud did not start: $(cat "$T/fake.err")"; exit 1
}
stop_fake() { [ -n "$FAKE_PID" ] && kill "$FAKE_PID" 2>/dev/null && wait "$FAKE_PID" 2>/dev/null; FAKE_PID=; return 0; }
submits() { grep -c '^SUBMIT' "$T/fake.out"; }

# expect STATUS NAME CMD...: exit status of CMD (stdout/stderr in $T/out, $T/err)
expect() {
    want=$1 name=$2; shift 2
    "$@" >"$T/out" 2>"$T/err"; got=$?
    [ "$got" = "$want" ] || { bad "$name: exit $got, want $want"; sed 's/^/  | /' "$T/err" >&2; }
}

head -c 4096 /dev/urandom >"$T/w.wtns"
start_fake

# ---- status: JSON valid whatever gpud sends; table escaped
expect 0 "status --json" "$CZK" status --runtime-dir "$RT" --json
cp "$T/out" "$T/status.json"
iconv -f UTF-8 -t UTF-8 "$T/status.json" >/dev/null 2>&1 || bad "status --json is not valid UTF-8"
if LC_ALL=C grep -q "$(printf '[\001-\011\013-\037]')" "$T/status.json"; then bad "status --json holds a raw control byte"; fi
if python3 -c pass >/dev/null 2>&1; then
    python3 - "$T/status.json" <<'PY' || bad "status --json: wrong content (see above)"
import json, math, sys
d = json.loads(open(sys.argv[1], "rb").read().decode("utf-8", "strict"))
job = d["active"][0]
want = {
    ("daemon",): "czk-gpud\x1b[2J\x1b]0;pwned\x07",           # valid UTF-8: kept, JSON-escaped
    ("backend",): "cpu\\xff\\x7f",                          # not UTF-8: czk_esc
    ("circuit",): "c\\xff\\x7f\\xc0\\xaf\\xed\\xa0\\x80",   # overlong, surrogate
    ("request",): "req\nline2\x1b[1A caf\u00e9",
    ("k\\xfe",): "\\x00\\xff\\x01",                         # key and bin value escaped
    ("12",): "integer key",
    ("nan",): None,
    ("future_key",): [True, None],
}
ok = True
for (k,), v in want.items():
    got = job[k] if k in ("circuit", "request") else d.get(k, "<missing>")
    if got != v:
        print("  key %r: got %r, want %r" % (k, got, v)); ok = False
if d["others"] != {"jobs": 3, "partitions": 5} or d["jobs"]["active"] != 1 or job["id"] != 7:
    print("  numbers changed: %r %r" % (d["others"], d["jobs"])); ok = False
sys.exit(0 if ok else 1)
PY
else
    echo "note: python3 missing, JSON content not checked (UTF-8 and control bytes were)"
fi
expect 0 "status" "$CZK" status --runtime-dir "$RT"
cp "$T/out" "$T/status.txt"
if LC_ALL=C grep -q "$(printf '[\001-\011\013-\037\177]')" "$T/status.txt"; then
    bad "status table holds a raw control byte or DEL"
fi
iconv -f UTF-8 -t UTF-8 "$T/status.txt" >/dev/null 2>&1 || bad "status table is not valid UTF-8"
grep -q 'czk-gpud\\x1b\[2J' "$T/status.txt" || bad "status table: the daemon name is not escaped: $(head -1 "$T/status.txt")"
grep -q 'req\\x0aline2\\x1b\[1A' "$T/status.txt" || bad "status table: the request id is not escaped on one line"
grep -q '^other users: 3 jobs (5 partitions) active$' "$T/status.txt" || bad "status table: no line for other users' jobs"
[ "$(submits)" = 0 ] || bad "status sent a SUBMIT?"

# ---- witnesses that are not regular files: refused at once, nothing sent
mkfifo "$T/fifo"
for w in "$T/fifo:FIFO" "/dev/null:character device" "$T:directory" "$RT/czk.sock:socket"; do
    path=${w%%:*} kind=${w#*:}
    expect 2 "witness $kind" timeout 10 "$CZK" submit --runtime-dir "$RT" --circuit c "$T/w.wtns" "$path"
    grep -q "\"$path\" (partition 1) is not a regular file (it is a $kind)" "$T/err" || bad "witness $kind: not named in the error: $(cat "$T/err")"
done
[ "$(submits)" = 0 ] || bad "a submission with a bad witness reached the daemon"

# ---- request ids
long=$(printf '%0129d' 0)
for id in "a
b" "$(printf 'a\033[2Jb')" "$(printf 'a\377b')" "a b" "" "$long"; do
    expect 2 "request id $(printf '%s' "$id" | od -An -c | tr -s ' ' | head -c 40)" \
        "$CZK" submit --runtime-dir "$RT" --circuit c --request-id "$id" "$T/w.wtns"
    grep -q -- "--request-id" "$T/err" || bad "bad request id: the error does not say so: $(cat "$T/err")"
    [ "$(wc -l <"$T/err")" = 1 ] || bad "bad request id: the error is not one line"
    if LC_ALL=C grep -q "$(printf '[\001-\037\177-\377]')" "$T/err"; then bad "bad request id echoed raw"; fi
done
[ "$(submits)" = 0 ] || bad "a submission with a bad request id reached the daemon"
ok=$(printf '%0127d' 7)
expect 0 "request id of 127 bytes" "$CZK" submit --runtime-dir "$RT" --circuit c --request-id "$ok" "$T/w.wtns"
grep -q "^SUBMIT fds=1 req=$ok " "$T/fake.out" || bad "the 127-byte request id did not travel as given"
expect 0 "request id with punctuation" "$CZK" submit --runtime-dir "$RT" --circuit c --request-id 'job-1_A.b~!' "$T/w.wtns"
grep -q '^SUBMIT fds=1 req=job-1_A.b~! ' "$T/fake.out" || bad "request id job-1_A.b~! did not travel as given"
expect 0 "generated request id" "$CZK" submit --runtime-dir "$RT" --circuit c "$T/w.wtns"
gen=$(tail -n 1 "$T/fake.out" | sed -n 's/^SUBMIT fds=1 req=\([0-9a-f]*\) .*/\1/p')
[ "${#gen}" = 32 ] || bad "generated request id is not 128 bits of hex: $(tail -n 1 "$T/fake.out")"
grep -q "request $gen)" "$T/out" || bad "the generated request id is not printed: $(cat "$T/out")"

# ---- --out: 0750 directories, 0640 files, stricter umask respected
(umask 022 && "$CZK" submit --runtime-dir "$RT" --circuit c --out "$T/o1/sub" "$T/w.wtns" "$T/w.wtns" \
    >"$T/out" 2>"$T/err") || { bad "--out (umask 022) failed"; cat "$T/err" >&2; }
for p in "$T/o1/sub:750" "$T/o1/sub/0:750" "$T/o1/sub/1:750" "$T/o1/sub/0/proof.json:640" \
         "$T/o1/sub/1/public.json:640"; do
    m=$(stat -c %a "${p%:*}" 2>/dev/null)
    [ "$m" = "${p##*:}" ] || bad "--out: ${p%:*} has mode ${m:-missing}, want ${p##*:}"
done
grep -q '"pi_a"' "$T/o1/sub/0/proof.json" 2>/dev/null || bad "--out: proof.json does not hold the proof text"
(umask 077 && "$CZK" submit --runtime-dir "$RT" --circuit c --out "$T/o2" "$T/w.wtns" >"$T/out" 2>"$T/err") ||
    { bad "--out (umask 077) failed"; cat "$T/err" >&2; }
for p in "$T/o2:700" "$T/o2/0:700" "$T/o2/0/proof.json:600" "$T/o2/0/public.json:600"; do
    m=$(stat -c %a "${p%:*}" 2>/dev/null)
    [ "$m" = "${p##*:}" ] || bad "--out under umask 077: ${p%:*} has mode ${m:-missing}, want ${p##*:}"
done

# ---- connection dropped before ACCEPTED: resubmitted with the same id
start_fake --drop-first
expect 0 "resubmission after a drop" "$CZK" submit --runtime-dir "$RT" --circuit c --reconnect-timeout 20 "$T/w.wtns"
ids=$(sed -n 's/^SUBMIT fds=1 req=\([^ ]*\) .*/\1/p' "$T/fake.out")
[ "$(echo "$ids" | wc -l)" = 2 ] && [ "$(echo "$ids" | sort -u | wc -l)" = 1 ] ||
    bad "after a drop the client did not resubmit once with the same id: $(cat "$T/fake.out")"
grep -q '^job 7 accepted' "$T/out" || bad "the duplicate answer was not taken as accepted: $(cat "$T/out")"
start_fake --drop-first
expect 2 "drop with --reconnect-timeout 0" "$CZK" submit --runtime-dir "$RT" --circuit c --reconnect-timeout 0 \
    --request-id keep-me "$T/w.wtns"
grep -q 'resubmit with --request-id keep-me' "$T/err" || bad "no retry hint after a drop: $(cat "$T/err")"
[ "$(submits)" = 1 ] || bad "--reconnect-timeout 0 still resubmitted"

[ "$fail" = 0 ] && echo "security client: ok"
exit "$fail"
