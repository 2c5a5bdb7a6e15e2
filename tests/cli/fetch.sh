#!/bin/sh
# fetch.sh — `czk submit --out` for a job whose proofs arrive in no event (a
# duplicate request id: the client WATCHes a finished job), against fake_gpud:
#   busy: FETCH answered -EBUSY first (gpud saw a reply unread), then
#         FETCHED with two fds: the client asks again and writes the texts
#         the fds hold; exit 0;
#   old:  a czk-gpud that does not know FETCH (ERROR -EBADMSG, connection
#         closed): the client reads output_dir of its --config instead;
#         exit 0 with output_dir's files;
#   a FETCH refused for another reason (the default fake: -EPERM): exit 2,
#         the message names the partition and what gpud said; nothing is
#         read from output_dir.
# usage: fetch.sh CZK FAKE_GPUD
set -u
CZK=$1 FAKE=$2
T=$(mktemp -d /tmp/czk-cli-fetch.XXXXXX)
fail=0
PIDS=
bad() { echo "FAIL: $*" >&2; fail=1; }
cleanup() {
    for p in $PIDS; do kill "$p" 2>/dev/null && wait "$p" 2>/dev/null; done
    if [ "$fail" = 0 ]; then rm -rf "$T"; else echo "(kept $T)" >&2; fi
}
trap cleanup EXIT
unset CZK_RUNTIME_DIR CZK_STATE_DIR XDG_RUNTIME_DIR
head -c 4096 /dev/urandom >"$T/w.wtns"
# fake_gpud's proof texts (PROOF_TEXT, PUBLIC_TEXT)
printf '{"pi_a": ["1", "2", "1"], "protocol": "groth16"}\n' >"$T/proof.want"
printf '["33"]\n' >"$T/public.want"

start_fake() { # NAME ARGS...
    name=$1; shift
    "$FAKE" "$T/$name" "$@" >"$T/$name.fake" 2>&1 &
    PIDS="$PIDS $!"
    for _ in $(seq 1 100); do grep -q '^listening' "$T/$name.fake" 2>/dev/null && return 0; sleep 0.05; done
    bad "fake_gpud $name did not start: $(cat "$T/$name.fake")"; exit 1
}
# a config naming the fake's runtime directory and an output_dir with the
# job's files in it (what the fallback reads)
write_conf() { # NAME
    mkdir -p "$T/$1.od/7/0"
    printf '{"from": "output_dir %s"}\n' "$1" >"$T/$1.od/7/0/proof.json"
    printf '["od-%s"]\n' "$1" >"$T/$1.od/7/0/public.json"
    printf '[czk]\nruntime_dir = %s\noutput_dir = %s\n' "$T/$1" "$T/$1.od" >"$T/$1.conf"
}
# sub NAME: the first submission, then the same request id again with --out
sub() {
    "$CZK" submit --config "$T/$1.conf" --circuit linear --request-id "fetch-$1" "$T/w.wtns" >"$T/$1.first" 2>&1 ||
        bad "$1: the first submission failed: $(cat "$T/$1.first")"
    "$CZK" submit --config "$T/$1.conf" --circuit linear --request-id "fetch-$1" --out "$T/$1.out" "$T/w.wtns" \
        >"$T/$1.stdout" 2>"$T/$1.stderr"
}

echo "== busy, then FETCHED"
start_fake busy --fetch busy
write_conf busy
sub busy; rc=$?
[ $rc = 0 ] || bad "busy: exit $rc, want 0: $(cat "$T/busy.stderr")"
grep -q "^job 7 accepted (duplicate" "$T/busy.stdout" || bad "busy: not a duplicate: $(cat "$T/busy.stdout")"
cmp -s "$T/busy.out/0/proof.json" "$T/proof.want" && cmp -s "$T/busy.out/0/public.json" "$T/public.want" ||
    bad "busy: --out does not hold the fetched texts: $(cat "$T/busy.out/0/proof.json" 2>&1)"
[ "$(grep -c '^FETCH job=7 part=0$' "$T/busy.fake")" = 2 ] ||
    bad "busy: want two FETCHes (one answered -EBUSY): $(cat "$T/busy.fake")"

echo "== a czk-gpud without FETCH: output_dir"
start_fake old --fetch old
write_conf old
sub old; rc=$?
[ $rc = 0 ] || bad "old: exit $rc, want 0: $(cat "$T/old.stderr")"
cmp -s "$T/old.out/0/proof.json" "$T/old.od/7/0/proof.json" && cmp -s "$T/old.out/0/public.json" "$T/old.od/7/0/public.json" ||
    bad "old: --out does not hold output_dir's files: $(cat "$T/old.out/0/proof.json" 2>&1)"
grep -q '^FETCH job=7 part=0$' "$T/old.fake" || bad "old: the client did not try FETCH first: $(cat "$T/old.fake")"

echo "== FETCH refused: a clear error, no fallback"
start_fake refused
write_conf refused
sub refused; rc=$?
[ $rc = 2 ] || bad "refused: exit $rc, want 2"
grep -q "job 7 partition 0: the proof did not arrive in an event and could not be fetched: czk-gpud says: fake daemon: not served" \
    "$T/refused.stderr" || bad "refused: the message does not say what happened: $(cat "$T/refused.stderr")"
[ -e "$T/refused.out/0/proof.json" ] && bad "refused: a proof was written from output_dir although gpud refused"

[ "$fail" = 0 ] && echo "ok"
exit $fail
