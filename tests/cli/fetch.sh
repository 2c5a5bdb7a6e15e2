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
# Then `czk fetch --out DIR JOB [PARTITION...]` (the STATUS of job 7 says 2
# partitions):
#   every partition of a finished job (the first FETCH answered -EBUSY and
#         asked again), files 0640 in directories 0750, exit 0;
#   a named partition: that one only;
#   DIR not empty: refused before anything is sent (no connection in the
#         fake's log); with --force written beside what is there;
#   a czk-gpud without FETCH: output_dir read for every partition;
#   a failed job: partition 0 written, partition 1 (gpud: -ENOENT) reported
#         as failed with gpud's reason escaped, exit 1, nothing on stderr;
#   an unknown job: exit 2 "is not known", nothing fetched, no DIR made;
#   --wait on an active job while czk-gpud goes away: the client says it
#         reconnects, WATCHes again and writes both partitions, exit 0.
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
umask 022 # the modes checked below: 0640 files, 0750 directories
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
    for p in 0 1; do
        mkdir -p "$T/$1.od/7/$p"
        printf '{"from": "output_dir %s %s"}\n' "$1" "$p" >"$T/$1.od/7/$p/proof.json"
        printf '["od-%s-%s"]\n' "$1" "$p" >"$T/$1.od/7/$p/public.json"
    done
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

# ---- czk fetch
# fetch NAME ARGS...: czk fetch into $T/NAME.out (stdout, stderr in $T/NAME.stdout, .stderr)
fetch() {
    name=$1; shift
    "$CZK" fetch --out "$T/$name.out" "$@" >"$T/$name.stdout" 2>"$T/$name.stderr"
}
# same_as_fake NAME P: NAME.out/P holds the texts fake_gpud hands over
same_as_fake() {
    cmp -s "$T/$1.out/$2/proof.json" "$T/proof.want" && cmp -s "$T/$1.out/$2/public.json" "$T/public.want" ||
        bad "$1: $1.out/$2 does not hold the fetched texts: $(ls -l "$T/$1.out/$2" 2>&1)"
}

echo "== czk fetch: every partition"
start_fake fall --fetch busy
fetch fall --runtime-dir "$T/fall" 7; rc=$?
[ $rc = 0 ] || bad "fetch all: exit $rc, want 0: $(cat "$T/fall.stderr")"
for p in 0 1; do
    same_as_fake fall $p
    grep -qx "job 7 partition $p: written $T/fall.out/$p/" "$T/fall.stdout" || bad "fetch all: no line for partition $p: $(cat "$T/fall.stdout")"
    m=$(stat -c %a "$T/fall.out/$p" "$T/fall.out/$p/proof.json" "$T/fall.out/$p/public.json" | tr '\n' ' ')
    [ "$m" = "750 640 640 " ] || bad "fetch all: partition $p modes are $m, want 750 640 640"
done
grep -qx "job 7: 2 of 2 partitions written to $T/fall.out/<partition>/" "$T/fall.stdout" ||
    bad "fetch all: no summary: $(cat "$T/fall.stdout")"
grep -qx 'STATUS job=7' "$T/fall.fake" || bad "fetch all: no STATUS for job 7 first: $(cat "$T/fall.fake")"
[ "$(grep -c '^FETCH job=7 part=0$' "$T/fall.fake")" = 2 ] && [ "$(grep -c '^FETCH job=7 part=1$' "$T/fall.fake")" = 1 ] ||
    bad "fetch all: want FETCH 0 twice (one answered -EBUSY), then FETCH 1: $(cat "$T/fall.fake")"

echo "== czk fetch: an unknown job (or another user's: gpud answers alike)"
fetch unknown --runtime-dir "$T/fall" 8; rc=$?
[ $rc = 2 ] || bad "unknown job: exit $rc, want 2"
grep -q "job 8 is not known" "$T/unknown.stderr" || bad "unknown job: the message does not say so: $(cat "$T/unknown.stderr")"
grep -q '^FETCH job=8' "$T/fall.fake" && bad "unknown job: FETCH sent anyway: $(cat "$T/fall.fake")"
[ -e "$T/unknown.out" ] && bad "unknown job: $T/unknown.out was made"

echo "== czk fetch: a named partition"
start_fake fone --fetch busy
fetch fone --runtime-dir "$T/fone" 7 1; rc=$?
[ $rc = 0 ] || bad "fetch partition 1: exit $rc, want 0: $(cat "$T/fone.stderr")"
same_as_fake fone 1
[ -e "$T/fone.out/0" ] && bad "fetch partition 1: partition 0 was written too"
grep -q 'part=0' "$T/fone.fake" && bad "fetch partition 1: partition 0 was fetched: $(cat "$T/fone.fake")"
grep -qx "job 7: 1 of 1 partition written to $T/fone.out/<partition>/" "$T/fone.stdout" ||
    bad "fetch partition 1: summary: $(cat "$T/fone.stdout")"

echo "== czk fetch: --out not empty"
start_fake fne --fetch busy
mkdir "$T/fne.out" && echo mine >"$T/fne.out/keep"
fetch fne --runtime-dir "$T/fne" 7; rc=$?
[ $rc = 2 ] || bad "--out not empty: exit $rc, want 2"
grep -q "output directory \"$T/fne.out\" is not empty" "$T/fne.stderr" && grep -q -- '--force' "$T/fne.stderr" ||
    bad "--out not empty: the message does not say so: $(cat "$T/fne.stderr")"
grep -q '^conn' "$T/fne.fake" && bad "--out not empty: the client connected anyway: $(cat "$T/fne.fake")"
fetch fne --runtime-dir "$T/fne" --force 7 0; rc=$?
[ $rc = 0 ] || bad "--out not empty --force: exit $rc, want 0: $(cat "$T/fne.stderr")"
same_as_fake fne 0
[ "$(cat "$T/fne.out/keep")" = mine ] || bad "--force: the file already there was touched"

echo "== czk fetch: a czk-gpud without FETCH: output_dir"
start_fake fold --fetch old
write_conf fold
fetch fold --config "$T/fold.conf" 7; rc=$?
[ $rc = 0 ] || bad "fetch old: exit $rc, want 0: $(cat "$T/fold.stderr")"
for p in 0 1; do
    cmp -s "$T/fold.out/$p/proof.json" "$T/fold.od/7/$p/proof.json" && cmp -s "$T/fold.out/$p/public.json" "$T/fold.od/7/$p/public.json" ||
        bad "fetch old: partition $p does not hold output_dir's files: $(cat "$T/fold.out/$p/proof.json" 2>&1)"
done
[ "$(grep -c '^FETCH' "$T/fold.fake")" = 1 ] ||
    bad "fetch old: want one FETCH (refused as unknown), then output_dir only: $(cat "$T/fold.fake")"

echo "== czk fetch: a failed job"
start_fake ffail --fetch failed
fetch ffail --runtime-dir "$T/ffail" 7; rc=$?
[ $rc = 1 ] || bad "failed job: exit $rc, want 1: $(cat "$T/ffail.stderr")"
same_as_fake ffail 0
[ -e "$T/ffail.out/1" ] && bad "failed job: something was written for the failed partition"
grep -q '^job 7 partition 1: not fetched: no proof, job 7 failed (czk-gpud says: .*no proof in the output directory' \
    "$T/ffail.stdout" || bad "failed job: partition 1 not reported as failed: $(cat "$T/ffail.stdout")"
grep -q "$(printf '\033')" "$T/ffail.stdout" && bad "failed job: gpud's terminal escape reached the output unescaped"
grep -qF '\x1b[31m' "$T/ffail.stdout" || bad "failed job: gpud's reason is not shown escaped: $(cat "$T/ffail.stdout")"
[ -s "$T/ffail.stderr" ] && bad "failed job: a failed partition is reported as an error: $(cat "$T/ffail.stderr")"

echo "== czk fetch --wait: czk-gpud goes away while the client waits"
start_fake frs --fetch restart
fetch frs --runtime-dir "$T/frs" --wait 7; rc=$?
[ $rc = 0 ] || bad "restart: exit $rc, want 0: $(cat "$T/frs.stderr")"
grep -q "^job 7 is active (0 of 2 partitions done): waiting for it to finish" "$T/frs.stdout" ||
    bad "restart: the job was not waited for: $(cat "$T/frs.stdout")"
grep -q "lost the connection to czk-gpud; reconnecting" "$T/frs.stderr" &&
    grep -q "reconnected, waiting for job 7 again" "$T/frs.stderr" ||
    bad "restart: the client does not say it reconnected: $(cat "$T/frs.stderr")"
[ "$(grep -c '^WATCH job=7$' "$T/frs.fake")" = 2 ] && [ "$(grep -c '^conn' "$T/frs.fake")" = 2 ] ||
    bad "restart: want a second connection that WATCHes again: $(cat "$T/frs.fake")"
for p in 0 1; do same_as_fake frs $p; done

[ "$fail" = 0 ] && echo "ok"
exit $fail
