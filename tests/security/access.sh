#!/bin/sh
# access.sh — who may talk to whom, with real users (run as root: it creates
# unprivileged system users with useradd -r when they are missing; skips 77
# when not root or without useradd/setpriv).
#
#   access.sh client CZK FAKE_GPUD
#     The client side (issue #10, finding 1): a fake daemon (fake_gpud) run as
#     ANOTHER uid must never receive a witness fd:
#       - in the victim's default runtime directory /tmp/czk-UID created by
#         the attacker: refused (directory owned by another uid);
#       - a socket of the attacker's placed in a directory the victim trusts
#         (default place and --runtime-dir): refused by SO_PEERCRED;
#       - a --runtime-dir owned by the attacker: refused;
#       - default runtime directory world-writable, group-writable, or a
#         symbolic link: refused, naming the directory;
#       and the fake daemon reports it received no fd.  Positive control: the
#     same fake daemon run as the victim itself (a user's own development
#     daemon) does receive the fd.  Then client.sh (witness types, request
#     ids, status escaping, --out modes, resubmission) runs as the victim.
#
#   access.sh daemon CZK FAKE_GPUD GPUD SYNTH FIN TEST_CLIENT SRC
#     The daemon side, with the real daemons (tests/daemons/lib.sh), run by
#     root with client_group = a test group; users A and B are members, C is
#     not:
#       C cannot use czk.sock; A and B can;
#       B cannot cancel, watch, see in status (list, --job, --json) or fetch
#       (request-id replay, FETCH, output_dir files, spooled witnesses) A's
#       jobs; B's FETCH of A's job is answered like one of a job that does
#       not exist, with no fd;
#       A, who cannot read output_dir either, gets its proofs through gpud:
#       a duplicate submission with --out (WATCH, no proof text in any event)
#       writes proof.json and public.json byte-identical to output_dir's
#       (FETCH); a partition out of range or not done is refused, and so
#       is a second FETCH sent before the first answer is read (-EBUSY, no
#       fd: one unread FETCHED per connection);
#       `czk fetch`: A submits without --wait (synth stopped: the job stays
#       queued); czk fetch reports the partition not done (gpud names its
#       stage) and makes no --out, --timeout 1 gives up (exit 1); czk fetch
#       --wait waits (still running a second later), the synth comes back,
#       and A gets files byte-identical to output_dir's, owned by A, 0640;
#       B's czk fetch of A's job exits 2 "is not known" and writes nothing;
#       a request id is bound to (uid, circuit, partition count, witness
#       digests): A's same submission again is the same job (duplicate), a
#       different circuit, count or witness is refused naming the difference;
#       gpud.sock is mode 0600 (daemons only); czk.sock 0660 in client_group;
#       root and admin_group members (D) can cancel A's job, B cannot;
#       neither A nor B can open the pools (gpud's memfds through /proc, or
#       pool files in /dev/shm or on hugetlbfs).
set -u
MODE=$1 CZK=$2 FAKE=$3
[ "$(id -u)" = 0 ] || { echo "SKIP: needs root to create test users"; exit 77; }
command -v useradd >/dev/null 2>&1 && command -v setpriv >/dev/null 2>&1 ||
    { echo "SKIP: needs useradd and setpriv"; exit 77; }

UA=czksec-a UB=czksec-b UC=czksec-c UD=czksec-d GRP=czksec AGRP=czksec-adm
ensure_user() {
    id -u "$1" >/dev/null 2>&1 && return 0
    useradd -r -M -d /nonexistent -s /usr/sbin/nologin "$1" >/dev/null 2>&1 ||
        { echo "SKIP: useradd $1 failed"; exit 77; }
}
for gr in "$GRP" "$AGRP"; do
    getent group "$gr" >/dev/null 2>&1 || groupadd -r "$gr" >/dev/null 2>&1 || { echo "SKIP: groupadd failed"; exit 77; }
done
for u in $UA $UB $UC $UD; do ensure_user "$u"; done
usermod -a -G "$GRP" "$UA" && usermod -a -G "$GRP" "$UB" && usermod -a -G "$GRP,$AGRP" "$UD" ||
    { echo "SKIP: usermod failed"; exit 77; }
IDA=$(id -u $UA) IDB=$(id -u $UB)

# as USER CMD...: run CMD as USER (its groups from /etc/group), with none of
# root's runtime-directory environment
as() { (as_exec "$@"); }
as_exec() { # the same, replacing the calling (sub)shell: for "(as_exec ...) &" and $!
    u=$1; shift
    exec setpriv --reuid="$u" --regid="$(id -g "$u")" --init-groups -- \
        env -u XDG_RUNTIME_DIR -u CZK_RUNTIME_DIR -u RUNTIME_DIRECTORY HOME=/nonexistent "$@"
}

fail=0
bad() { echo "FAIL: $*" >&2; fail=1; }
# expect STATUS NAME CMD...: exit status of CMD (stdout/stderr in $W/out, $W/err)
expect() {
    want=$1 name=$2; shift 2
    "$@" >"$W/out" 2>"$W/err"; got=$?
    [ "$got" = "$want" ] || { bad "$name: exit $got, want $want"; sed 's/^/  | /' "$W/err" "$W/out" >&2; }
}

# ============================================================== client ===
client_side() {
    W=$(mktemp -d /tmp/czk-sec-access.XXXXXX)
    chmod 755 "$W"
    mkdir -p "$W/bin" "$W/a" "$W/b"
    cp "$CZK" "$W/bin/czk" && cp "$FAKE" "$W/bin/fake_gpud" && cp "$(dirname "$0")/client.sh" "$W/bin/"
    chown "$UA" "$W/a" && chown "$UB" "$W/b" && chmod 700 "$W/a" "$W/b"
    head -c 4096 /dev/urandom >"$W/a/w.wtns" && chown "$UA" "$W/a/w.wtns"
    : >"$W/empty.conf" && chmod 644 "$W/empty.conf"
    DEF=/tmp/czk-$IDA
    FPID=
    stop_fake() { [ -n "$FPID" ] && kill "$FPID" 2>/dev/null && wait "$FPID" 2>/dev/null; FPID=; return 0; }
    trap 'stop_fake; rm -rf "$DEF"; [ "$fail" = 0 ] && rm -rf "$W" || echo "(kept $W)" >&2' EXIT
    # fake USER DIR: fake_gpud as USER listening in DIR; its report in $W/fake.out
    fake() {
        stop_fake
        : >"$W/fake.out"
        (as_exec "$1" "$W/bin/fake_gpud" "$2") >"$W/fake.out" 2>"$W/fake.err" &
        FPID=$!
        for _ in $(seq 1 100); do grep -q '^listening' "$W/fake.out" && return 0; sleep 0.05; done
        bad "fake_gpud as $1 in $2 did not start: $(cat "$W/fake.err")"
    }
    # submit_a NAME WANT [OPTIONS]: user A submits its witness (default discovery unless options say)
    submit_a() {
        name=$1 want=$2; shift 2
        expect "$want" "$name" as "$UA" timeout 20 "$W/bin/czk" submit --config "$W/empty.conf" --circuit c \
            --reconnect-timeout 0 "$@" "$W/a/w.wtns"
    }
    no_fd() { # NAME: the fake daemon got no SUBMIT and no fd
        if grep -q '^SUBMIT' "$W/fake.out"; then bad "$1: the other user's fake daemon received: $(grep SUBMIT "$W/fake.out")"; fi
    }
    # the fake daemon answers the HELLO like gpud, so that a client that trusts it sends SUBMIT
    rm -rf "$DEF"

    echo "== positive control: the victim's own daemon in the default place gets the fd"
    fake "$UA" "$DEF"
    submit_a "own daemon" 0
    grep -q '^SUBMIT fds=1 ' "$W/fake.out" || bad "own daemon: no fd arrived (the test's fake daemon does not work): $(cat "$W/fake.out")"
    stop_fake; rm -rf "$DEF"

    echo "== the attacker creates the victim's default runtime directory"
    fake "$UB" "$DEF"
    chmod 755 "$DEF" # the attacker lets the victim in
    submit_a "attacker-owned default directory" 2
    grep -q "\"$DEF\".*owned by uid $IDB" "$W/err" || bad "default directory of another uid: error does not say so: $(cat "$W/err")"
    no_fd "attacker-owned default directory"
    stop_fake; rm -rf "$DEF"

    echo "== the attacker's socket in directories the victim trusts (SO_PEERCRED)"
    fake "$UB" "$W/b/rt"
    install -d -o "$UA" -m 700 "$DEF"
    mv "$W/b/rt/czk.sock" "$DEF/czk.sock"
    submit_a "attacker's socket in the default place" 2
    grep -q "served by uid $IDB" "$W/err" || bad "attacker's socket: error does not name its uid: $(cat "$W/err")"
    no_fd "attacker's socket in the default place"
    install -d -o "$UA" -m 755 "$W/a/rt"
    mv "$DEF/czk.sock" "$W/a/rt/czk.sock"
    submit_a "attacker's socket in --runtime-dir" 2 --runtime-dir "$W/a/rt"
    grep -q "served by uid $IDB" "$W/err" || bad "attacker's socket in --runtime-dir: error does not name its uid: $(cat "$W/err")"
    no_fd "attacker's socket in --runtime-dir"
    stop_fake; rm -rf "$DEF"

    echo "== a --runtime-dir owned by the attacker"
    fake "$UB" "$W/b/rt2"
    chmod 755 "$W/b" "$W/b/rt2"
    submit_a "attacker's --runtime-dir" 2 --runtime-dir "$W/b/rt2"
    grep -q "owned by uid $IDB" "$W/err" || bad "attacker's --runtime-dir: error does not say who owns it: $(cat "$W/err")"
    no_fd "attacker's --runtime-dir"
    chmod 700 "$W/b"
    stop_fake

    echo "== default runtime directory writable by others, by its group, or a symbolic link"
    fake "$UA" "$DEF"
    for mode in 777:others 1777:others 770:group; do
        chmod "${mode%:*}" "$DEF"
        submit_a "default directory mode ${mode%:*}" 2
        grep -q "\"$DEF\": it is writable by" "$W/err" || bad "mode ${mode%:*}: error does not say why: $(cat "$W/err")"
    done
    chmod 700 "$DEF"
    stop_fake
    mv "$DEF" "$W/a/real"
    ln -s "$W/a/real" "$DEF"
    fake "$UA" "$W/a/real"
    submit_a "default directory is a symlink" 2
    grep -q "\"$DEF\": it is a symbolic link" "$W/err" || bad "symlink: error does not say so: $(cat "$W/err")"
    no_fd "default directory is a symlink"
    stop_fake; rm -f "$DEF"

    echo "== client checks as an unprivileged user (client.sh)"
    as "$UA" sh "$W/bin/client.sh" "$W/bin/czk" "$W/bin/fake_gpud" || bad "client.sh as $UA failed"
}

# ============================================================== daemon ===
daemon_side() {
    GPUD=$4 SYNTH=$5 FIN=$6 CLIENT=$7 SRC=$8
    . "$SRC/tests/daemons/lib.sh" # T, RT, write_config, start_*, stop_all, cleanup trap
    W=$T/w; mkdir -p "$W"
    chmod 755 "$T"
    cp "$CZK" "$T/czk" && chmod 755 "$T/czk"
    mkdir -p "$T/a" "$T/b"
    cp "$FIX/multi/witness.wtns" "$T/a/w.wtns"
    chown -R "$UA" "$T/a" && chown -R "$UB" "$T/b" && chmod 700 "$T/a" "$T/b"
    printf '[czk]\nclient_group = %s\n[gpud]\nadmin_group = %s\n' "$GRP" "$AGRP" | write_config
    chmod 644 "$T/czk.conf"
    czk_as() { u=$1; shift; as "$u" timeout 60 "$T/czk" "$@" --runtime-dir "$RT"; }
    start_gpud; start_synth; start_fin
    wait_socket || exit 1

    echo "== client_group: a member may connect, a non-member may not"
    expect 2 "$UC (not in client_group) status" czk_as "$UC" status
    expect 0 "$UA (member) status" czk_as "$UA" status
    m=$(stat -c %a "$RT/gpud.sock") && [ "$m" = 600 ] || bad "gpud.sock is mode $m, not 600 (daemons only)"
    m=$(stat -c %a:%G "$RT/czk.sock") && [ "$m" = "660:$GRP" ] || bad "czk.sock is $m, not 660:$GRP"
    expect 2 "$UA (member) on gpud.sock" as "$UA" "$CLIENT" "$RT/gpud.sock" status
    grep -q "Permission denied" "$W/err" || bad "gpud.sock: not refused by its mode: $(cat "$W/err")"

    echo "== A's finished job"
    expect 0 "A submits and waits" czk_as "$UA" submit --circuit multi --request-id a-secret-1 --wait "$T/a/w.wtns"
    J1=$(sed -n 's/^job \([0-9]*\) accepted.*/\1/p' "$W/out")
    [ -n "$J1" ] || { bad "A's job was not accepted"; exit 1; }
    expect 2 "B: status --job of A's job" czk_as "$UB" status --job "$J1"
    if grep -q "a-secret-1" "$W/out" "$W/err"; then bad "B sees A's request id in status --job"; fi
    expect 5 "B watches A's finished job" as "$UB" "$CLIENT" "$RT/czk.sock" watch "$J1"
    if grep -q "^event job $J1" "$W/out"; then bad "B got events of A's job $J1"; fi
    cp "$FIX/multi/witness.wtns" "$T/b/w.wtns" && chown "$UB" "$T/b/w.wtns"
    czk_as "$UB" submit --circuit multi --request-id a-secret-1 "$T/b/w.wtns" >"$W/out" 2>"$W/err"
    if grep -q "^job $J1 accepted" "$W/out"; then bad "B replaying A's request id gets A's job $J1"; fi

    echo "== request ids are bound to the circuit, the partition count and the witnesses"
    expect 0 "A resubmits the same job" czk_as "$UA" submit --circuit multi --request-id a-secret-1 "$T/a/w.wtns"
    grep -q "^job $J1 accepted (duplicate" "$W/out" || bad "A's same submission is not job $J1 (duplicate): $(cat "$W/out")"
    expect 2 "A: same id, another circuit" czk_as "$UA" submit --circuit linear --request-id a-secret-1 "$FIX/linear/witness.wtns"
    grep -q 'circuit "multi", not for circuit "linear"' "$W/err" || bad "other circuit: reason does not say so: $(cat "$W/err")"
    expect 2 "A: same id, two partitions" czk_as "$UA" submit --circuit multi --request-id a-secret-1 "$T/a/w.wtns" "$T/a/w.wtns"
    grep -q "1 partition, not 2" "$W/err" || bad "other count: reason does not say so: $(cat "$W/err")"
    # the same witness with one random byte appended (gpud hashes what it reads)
    cp "$T/a/w.wtns" "$T/a/w2.wtns" && head -c 1 /dev/urandom >>"$T/a/w2.wtns" && chown "$UA" "$T/a/w2.wtns"
    expect 2 "A: same id, another witness" czk_as "$UA" submit --circuit multi --request-id a-secret-1 "$T/a/w2.wtns"
    grep -q "partition 0: its witness .* differs" "$W/err" || bad "other witness: reason does not name it: $(cat "$W/err")"
    if grep -q "^job" "$W/out"; then bad "a refused resubmission printed a job: $(cat "$W/out")"; fi

    echo "== A gets its proofs through czk-gpud (FETCH), not from output_dir"
    # control: A cannot read output_dir itself, so files in --out came from gpud
    if as "$UA" cat "$T/out/$J1/0/proof.json" >/dev/null 2>&1; then
        bad "A can read output_dir itself (the FETCH checks below would not tell)"
    fi
    # a duplicate: the client WATCHes, the job is over, no event carries the proof text
    # (--config: the client knows output_dir, as a user of the system's config does)
    expect 0 "A: the same submission again with --out" czk_as "$UA" submit --config "$T/czk.conf" --circuit multi \
        --request-id a-secret-1 --out "$T/a/dup" "$T/a/w.wtns"
    grep -q "^job $J1 accepted (duplicate" "$W/out" || bad "--out duplicate: not job $J1 (duplicate): $(cat "$W/out")"
    for f in proof.json public.json; do
        [ -s "$T/out/$J1/0/$f" ] || bad "output_dir has no $f for job $J1 (the comparison would pass on nothing)"
        cmp -s "$T/out/$J1/0/$f" "$T/a/dup/0/$f" ||
            bad "--out duplicate: $f is missing or differs from output_dir's: $(ls -l "$T/a/dup/0" 2>&1)"
    done
    expect 0 "A: raw FETCH of its partition" as "$UA" "$CLIENT" "$RT/czk.sock" fetch "$J1" 0 "$T/a/raw"
    grep -q "^fetched $J1 0 $(stat -c %s "$T/out/$J1/0/proof.json") $(stat -c %s "$T/out/$J1/0/public.json")\$" "$W/out" ||
        bad "A's FETCH: not answered FETCHED with the files' sizes: $(cat "$W/out")"
    cmp -s "$T/out/$J1/0/proof.json" "$T/a/raw/proof.json" || bad "A's FETCH: the proof.json fd does not read output_dir's"
    # a FETCHED's fds stay charged to gpud until read: a second FETCH before
    # the first answer is read is refused, without fds
    expect 0 "A: two FETCHes before reading" as "$UA" "$CLIENT" "$RT/czk.sock" fetch2 "$J1" 0
    grep -q "^fetched $J1 0 [0-9]* [0-9]* fds 2\$" "$W/out" && grep -q "^error -16 .*not read yet.* fds 0\$" "$W/out" ||
        bad "two FETCHes before reading: want one FETCHED (2 fds) and one -EBUSY (no fd): $(cat "$W/out")"
    expect 5 "A: FETCH of a partition out of range" as "$UA" "$CLIENT" "$RT/czk.sock" fetch "$J1" 1
    grep -q "^error -22 job $J1 has 1 partition: there is no partition 1\$" "$W/out" ||
        bad "FETCH out of range: $(cat "$W/out")"
    echo "== B cannot fetch A's proofs"
    expect 5 "B: FETCH of A's job" as "$UB" "$CLIENT" "$RT/czk.sock" fetch "$J1" 0
    grep -q "^error -2 job $J1 is not known\$" "$W/out" ||
        bad "B's FETCH of A's job is not answered like an unknown job's: $(cat "$W/out")"
    if grep -q "^FDS\|^fetched" "$W/out"; then bad "B's FETCH of A's job handed over files: $(cat "$W/out")"; fi
    jmiss=$((J1 + 100000))
    expect 5 "B: FETCH of a job that does not exist" as "$UB" "$CLIENT" "$RT/czk.sock" fetch "$jmiss" 0
    grep -q "^error -2 job $jmiss is not known\$" "$W/out" || bad "FETCH of an unknown job: $(cat "$W/out")"
    rm -rf "$T/a/dup" "$T/a/raw"

    echo "== czk fetch: A's job submitted without --wait, fetched once it is done"
    # the synth stopped, so that the job is still queued when czk fetch asks
    kill -TERM "$SYNTH_PID"; wait_exit "$SYNTH_PID" 20 >/dev/null 2>&1; SYNTH_PID=
    expect 0 "A submits without --wait" czk_as "$UA" submit --circuit multi --request-id a-fetch-1 "$T/a/w.wtns"
    J4=$(sed -n 's/^job \([0-9]*\) accepted.*/\1/p' "$W/out")
    [ -n "$J4" ] || { bad "A's job for czk fetch was not accepted"; exit 1; }
    expect 1 "A: czk fetch of its queued job" czk_as "$UA" fetch --out "$T/a/fetched" "$J4"
    grep -q "^job $J4 partition 0: not fetched: czk-gpud says: job $J4 partition 0 is not done (it is queued)" "$W/out" ||
        bad "czk fetch of a queued job: the partition is not reported with its stage: $(cat "$W/out")"
    [ -e "$T/a/fetched" ] && bad "czk fetch that wrote nothing made its --out directory"
    expect 1 "A: czk fetch --timeout 1 of its queued job" czk_as "$UA" fetch --out "$T/a/fetched" --timeout 1 "$J4"
    grep -q "job $J4 has not finished within --timeout 1 s" "$W/err" || bad "czk fetch --timeout: $(cat "$W/err")"
    (umask 022; as_exec "$UA" timeout 60 "$T/czk" fetch --wait --out "$T/a/fetched" "$J4" --runtime-dir "$RT") \
        >"$W/fetch.out" 2>"$W/fetch.err" &
    fetch_pid=$!
    sleep 1
    kill -0 "$fetch_pid" 2>/dev/null ||
        bad "czk fetch --wait did not wait for the queued job: $(cat "$W/fetch.out" "$W/fetch.err")"
    start_synth
    wait "$fetch_pid"; rc=$?
    [ "$rc" = 0 ] || { bad "czk fetch --wait: exit $rc, want 0"; sed 's/^/  | /' "$W/fetch.err" "$W/fetch.out" >&2; }
    grep -q "^job $J4 is active" "$W/fetch.out" || bad "czk fetch --wait did not say it waits: $(cat "$W/fetch.out")"
    for f in proof.json public.json; do
        [ -s "$T/out/$J4/0/$f" ] || bad "output_dir has no $f for job $J4 (the comparison would pass on nothing)"
        cmp -s "$T/out/$J4/0/$f" "$T/a/fetched/0/$f" ||
            bad "czk fetch --wait: $f is missing or differs from output_dir's: $(ls -l "$T/a/fetched/0" 2>&1)"
        m=$(stat -c %U:%a "$T/a/fetched/0/$f" 2>&1)
        [ "$m" = "$UA:640" ] || bad "czk fetch --wait: $f is $m, want $UA:640"
    done
    expect 2 "B: czk fetch of A's job" czk_as "$UB" fetch --out "$T/b/fetched" "$J4"
    grep -q "job $J4 is not known" "$W/err" || bad "B's czk fetch of A's job: not answered like an unknown job: $(cat "$W/err")"
    [ -e "$T/b/fetched" ] && bad "B's czk fetch of A's job wrote $T/b/fetched: $(ls -lR "$T/b/fetched")"
    rm -rf "$T/a/fetched"

    for f in "$T/out/$J1/0/proof.json" "$T/out/$J1/0/public.json"; do
        # control: B's refusal below counts only for a file that is there
        [ -s "$f" ] || bad "A's job $J1 has no $f (the check below would pass on a missing file)"
        if as "$UB" cat "$f" >/dev/null 2>&1; then bad "B can read A's $f"; fi
    done
    for f in $(find "$T/state" -type f 2>/dev/null); do
        if as "$UB" cat "$f" >/dev/null 2>&1; then bad "B can read gpud's state file $f"; fi
    done

    echo "== B cannot make a daemon read what B cannot read"
    chmod 600 "$T/a/w.wtns"
    # B names A's witness: the client opens it with B's rights, so it is refused
    # before anything reaches gpud (which never opens a client's path)
    expect 2 "B submits A's unreadable witness" czk_as "$UB" submit --circuit multi "$T/a/w.wtns"
    grep -qi "permission denied" "$W/err" || bad "unreadable witness: error does not say so: $(cat "$W/err")"
    ln -sf "$T/a/w.wtns" "$T/b/link.wtns"
    expect 2 "B submits a symlink to A's witness" czk_as "$UB" submit --circuit multi "$T/b/link.wtns"
    # a sparse file of 4 GiB: refused by its size, not copied into the spool
    truncate -s 4G "$T/b/sparse.wtns" && chown "$UB" "$T/b/sparse.wtns"
    spool_before=$(du -sk "$T/state" | cut -f1)
    expect 2 "B submits a sparse 4 GiB witness" czk_as "$UB" submit --circuit multi "$T/b/sparse.wtns"
    spool_after=$(du -sk "$T/state" | cut -f1)
    [ $((spool_after - spool_before)) -lt 65536 ] ||
        bad "a sparse witness grew state_dir by $((spool_after - spool_before)) KiB"
    rm -f "$T/b/sparse.wtns" "$T/b/link.wtns"

    echo "== A's active job (synth stopped so that it stays queued)"
    kill -TERM "$SYNTH_PID"; wait_exit "$SYNTH_PID" 20 >/dev/null 2>&1; SYNTH_PID=
    expect 0 "A submits" czk_as "$UA" submit --circuit multi --request-id a-secret-2 "$T/a/w.wtns"
    J2=$(sed -n 's/^job \([0-9]*\) accepted.*/\1/p' "$W/out")
    expect 0 "A: status --json" czk_as "$UA" status --json
    grep -q '"a-secret-2"' "$W/out" || bad "A does not see its own active job in status (control)"
    expect 0 "B: status --json" czk_as "$UB" status --json
    if grep -q "a-secret" "$W/out"; then bad "B sees A's jobs in status --json"; fi
    expect 0 "B: status" czk_as "$UB" status
    if grep -q "a-secret" "$W/out"; then bad "B sees A's jobs in the status table"; fi
    grep -q "^other users: 1 job" "$W/out" || bad "B's status does not count other users' jobs: $(grep -i other "$W/out")"
    expect 2 "B cancels A's job" czk_as "$UB" cancel "$J2"
    if grep -q "uid $IDA" "$W/err"; then bad "B's refused cancel tells A's uid: $(cat "$W/err")"; fi
    expect 5 "B watches A's active job" as "$UB" "$CLIENT" "$RT/czk.sock" watch "$J2"
    expect 5 "B: FETCH of A's active job" as "$UB" "$CLIENT" "$RT/czk.sock" fetch "$J2" 0
    grep -q "^error -2 job $J2 is not known\$" "$W/out" || bad "B's FETCH of A's active job: $(cat "$W/out")"
    expect 5 "A: FETCH of its queued partition" as "$UA" "$CLIENT" "$RT/czk.sock" fetch "$J2" 0
    grep -q "^error -11 job $J2 partition 0 is not done (it is queued)" "$W/out" ||
        bad "FETCH of a queued partition: not refused naming its stage: $(cat "$W/out")"
    expect 0 "A submits another job" czk_as "$UA" submit --circuit multi --request-id a-secret-3 "$T/a/w.wtns"
    J3=$(sed -n 's/^job \([0-9]*\) accepted.*/\1/p' "$W/out")

    echo "== the pools"
    n=0
    for p in $GPUD_PID; do
        for fd in /proc/"$p"/fd/*; do
            case $(readlink "$fd") in
            /memfd:*|/dev/shm/*|/dev/hugepages/*)
                n=$((n + 1))
                for u in $UA $UB; do
                    if as "$u" dd if="$fd" of=/dev/null bs=1 count=1 2>/dev/null; then
                        bad "$u can open gpud's pool $(readlink "$fd") through $fd"
                    fi
                done ;;
            esac
        done
    done
    for f in $(find /dev/shm /dev/hugepages -maxdepth 2 -name '*czk*' 2>/dev/null); do
        n=$((n + 1))
        for u in $UA $UB; do
            if as "$u" dd if="$f" of=/dev/null bs=1 count=1 2>/dev/null; then bad "$u can open pool file $f"; fi
        done
    done
    [ $n -gt 0 ] || bad "gpud holds no pool fd and there is no pool file (the pool check checked nothing)"

    echo "== root and admin_group cancel A's jobs"
    expect 0 "root cancels A's job" "$T/czk" cancel "$J2" --runtime-dir "$RT"
    expect 0 "D (admin_group) cancels A's job" czk_as "$UD" cancel "$J3"
    expect 0 "A: status --job of its cancelled job" czk_as "$UA" status --json --job "$J3"
    grep -q '"cancelled"' "$W/out" || bad "A's job $J3 is not cancelled after D's cancel"
}

case $MODE in
client) client_side ;;
daemon) daemon_side "$@" ;;
*) echo "usage: access.sh client|daemon ..." >&2; exit 2 ;;
esac
[ "$fail" = 0 ] && echo "security access ($MODE): ok"
exit "$fail"
