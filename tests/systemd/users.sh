#!/bin/sh
# users.sh — the daemons run as the units run them, without systemd: user czk
# and group czk from systemd/czk.sysusers, czk-gpud and czk-finalizer with the
# supplementary groups of their units (SupplementaryGroups=: czk-clients),
# czk-synth with none, no capabilities and no_new_privs (CapabilityBoundingSet=,
# NoNewPrivileges=), umask 0027 (UMask=), the runtime and state directories
# owned by czk with the modes RuntimeDirectoryMode= and StateDirectoryMode= say,
# client_group = czk-clients.  CPU backend, temporary directories.
#
# What works: a 1-partition job submitted by a client_group member (with a
# witness only that member can read: it travels as an fd) is proved by the
# three daemons as czk; the sockets carry the modes and groups the clients
# rely on; SIGTERM stops each daemon with status 0.
# What is refused: czk-gpud without czk-clients cannot give czk.sock its
# group and does not start; a user outside czk-clients cannot use czk.sock;
# a client_group member cannot read another job's proof files;
# nobody but czk can use gpud.sock, read the state directory or open the
# pools' memfds; a runtime directory of mode 0750 (the old unit's) locks the
# members out; nothing the daemons write is readable by others.
#
# Needs root (creates users: czk with systemd-sysusers, or useradd without
# it, and two test users with useradd) and setpriv; skips (77) otherwise.
# usage: users.sh GPUD SYNTH FIN CZK TEST_CLIENT SRC
set -u
GPUD=$1 SYNTH=$2 FIN=$3 CZK=$4 CLIENT=$5 SRC=$6
[ "$(id -u)" = 0 ] || { echo "SKIP: needs root to create the czk user"; exit 77; }
command -v setpriv >/dev/null 2>&1 || { echo "SKIP: needs setpriv"; exit 77; }
. "$SRC/tests/lib/common.sh" # bad, wait_exit

# ---- users: czk as the package creates it, a member and an outsider
if ! id -u czk >/dev/null 2>&1 || ! getent group czk-clients >/dev/null 2>&1; then
    if command -v systemd-sysusers >/dev/null 2>&1; then
        systemd-sysusers "$SRC/systemd/czk.sysusers" || { echo "SKIP: systemd-sysusers failed"; exit 77; }
    elif command -v useradd >/dev/null 2>&1; then
        getent group czk >/dev/null 2>&1 || groupadd -r czk || { echo "SKIP: groupadd failed"; exit 77; }
        id -u czk >/dev/null 2>&1 ||
            useradd -r -g czk -M -d /var/lib/czk -s /usr/sbin/nologin czk || { echo "SKIP: useradd failed"; exit 77; }
        groupadd -r czk-clients || { echo "SKIP: groupadd failed"; exit 77; }
    else
        echo "SKIP: neither systemd-sysusers nor useradd"; exit 77
    fi
fi
UM=czkunit-member UO=czkunit-other
for u in $UM $UO; do
    id -u $u >/dev/null 2>&1 && continue
    command -v useradd >/dev/null 2>&1 || { echo "SKIP: needs useradd for the test users"; exit 77; }
    useradd -r -M -d /nonexistent -s /usr/sbin/nologin $u >/dev/null 2>&1 || { echo "SKIP: useradd $u failed"; exit 77; }
done
# the member's membership is given by setpriv (as systemd gives the unit's),
# not written into /etc/group: the host's czk-clients is left as it was

# ---- what the units say (so that a change there is tested here)
U=$SRC/systemd
unitval() { sed -n "s/^$2=//p" "$U/$1" | tail -n 1; }
# groups FILE: SupplementaryGroups= as a setpriv list (host groups that do
# not exist here, like video, dropped)
groups() {
    l=
    for g in $(unitval "$1" SupplementaryGroups); do
        getent group "$g" >/dev/null 2>&1 && l=${l:+$l,}$g
    done
    echo "$l"
}
for f in czk-gpud.service czk-synth@.service czk-finalizer.service; do
    [ "$(unitval $f User)" = czk ] && [ "$(unitval $f Group)" = czk ] || { echo "FAIL: $f does not run as czk:czk"; exit 1; }
    [ "$(unitval $f UMask)" = 0027 ] || { echo "FAIL: $f: UMask=$(unitval $f UMask), the test assumes 0027"; exit 1; }
    [ "$(unitval $f StateDirectoryMode)" = "$(unitval czk-gpud.service StateDirectoryMode)" ] ||
        { echo "FAIL: $f: StateDirectoryMode= differs from czk-gpud.service's"; exit 1; }
done
RT_MODE=$(unitval czk-gpud.service RuntimeDirectoryMode)
ST_MODE=$(unitval czk-gpud.service StateDirectoryMode)
GPUD_GROUPS=$(groups czk-gpud.service) SYNTH_GROUPS=$(groups czk-synth@.service) FIN_GROUPS=$(groups czk-finalizer.service)
echo "units: runtime directory $RT_MODE, state directory $ST_MODE, groups: gpud \"$GPUD_GROUPS\"," \
     "synth \"$SYNTH_GROUPS\", finalizer \"$FIN_GROUPS\""

fail=0
T=$(mktemp -d /tmp/czk-units.XXXXXX)
chmod 755 "$T"
RT=$T/run ST=$T/state
GPUD_PID= SYNTH_PID= FIN_PID=
stop_all() {
    for p in $GPUD_PID $SYNTH_PID $FIN_PID; do kill -TERM "$p" 2>/dev/null; done
    for p in $GPUD_PID $SYNTH_PID $FIN_PID; do wait_exit "$p" 20 >/dev/null 2>&1 || kill -KILL "$p" 2>/dev/null; done
}
dump_logs() { for f in "$T"/*.log; do [ -f "$f" ] && { echo "---- $f (tail)"; tail -n 30 "$f"; }; done >&2; }
cleanup() {
    stop_all
    if [ "$fail" = 0 ] && [ -z "${CZK_KEEP:-}" ]; then rm -rf "$T"; else dump_logs; echo "(kept $T)" >&2; fi
}
trap cleanup EXIT

# binaries, key and config where czk can read them whatever the build tree's modes
mkdir -p "$T/bin" "$T/keys" "$T/member"
cp "$GPUD" "$SYNTH" "$FIN" "$CZK" "$CLIENT" "$T/bin/" && chmod 755 "$T/bin"/*
cp "$SRC/tests/fixtures/multi/circuit.zkey" "$T/keys/multi.zkey" && chmod 644 "$T/keys/multi.zkey"
cp "$SRC/tests/fixtures/multi/witness.wtns" "$T/member/w.wtns"
chown -R "$UM" "$T/member" && chmod 700 "$T/member" && chmod 600 "$T/member/w.wtns"
GPUD=$T/bin/$(basename "$GPUD") SYNTH=$T/bin/$(basename "$SYNTH") FIN=$T/bin/$(basename "$FIN")
CZK=$T/bin/$(basename "$CZK") CLIENT=$T/bin/$(basename "$CLIENT")
# the directories as systemd creates them for the units
install -d -o czk -g czk -m "$RT_MODE" "$RT"
install -d -o czk -g czk -m "$ST_MODE" "$ST"
cat >"$T/czk.conf" <<EOF
[czk]
runtime_dir = $RT
state_dir = $ST
client_group = czk-clients
log_level = 6
[gpud]
backend = cpu
threads = 2
slots_per_pool = 2
hugepages = off
metrics_port = 0
[synth]
threads = 2
reconnect_max_ms = 400
[circuit.multi]
zkey = $T/keys/multi.zkey
EOF
chmod 644 "$T/czk.conf"

# as_czk GROUPS CMD...: CMD as czk the way the units start it (their
# Environment= included, with the test's directories for %t/czk and %S/czk).  It replaces
# the calling shell: run it as "as_czk ... &" (then $! is the daemon's pid) or
# in a subshell.
as_czk() {
    g=$1; shift
    if [ -n "$g" ]; then g="--groups=$g"; else g=--clear-groups; fi
    exec setpriv --reuid=czk --regid=czk "$g" --bounding-set=-all --inh-caps=-all --no-new-privs -- \
        env -i PATH=/usr/bin:/bin HOME=/var/lib/czk CZK_RUNTIME_DIR="$RT" CZK_STATE_DIR="$ST" \
        CZK_POOL_HUGEPAGES=never sh -c 'umask 0027; exec "$@"' sh "$@"
}
# as_user USER GROUPS CMD...: a client (GROUPS: a list, or empty for none), in a subshell
as_user() {
    u=$1 g=$2; shift 2
    if [ -n "$g" ]; then g="--groups=$g"; else g=--clear-groups; fi
    (exec setpriv --reuid="$u" --regid="$(id -g "$u")" "$g" -- env -i PATH=/usr/bin:/bin HOME=/nonexistent "$@")
}
member() { as_user "$UM" czk-clients "$@"; }
other() { as_user "$UO" "" "$@"; }
# expect STATUS NAME CMD...: CMD's exit status (its output in $T/out, $T/err)
expect() {
    want=$1 name=$2; shift 2
    "$@" >"$T/out" 2>"$T/err"; got=$?
    [ "$got" = "$want" ] || { bad "$name: exit $got, want $want"; sed 's/^/  | /' "$T/err" "$T/out" >&2; }
}

echo "== czk-gpud without SupplementaryGroups=czk-clients does not start"
as_czk "" "$GPUD" --config "$T/czk.conf" >"$T/gpud-nogroup.log" 2>&1 &
p=$!
wait_exit $p 60; rc=$?
[ $rc = 124 ] && { kill -KILL $p; bad "gpud without czk-clients kept running (chown of czk.sock did not fail?)"; }
[ $rc != 0 ] || bad "gpud without czk-clients exited 0"
grep -q 'czk.sock' "$T/gpud-nogroup.log" || bad "gpud without czk-clients: the log does not name czk.sock"

echo "== the daemons as czk"
as_czk "$GPUD_GROUPS" "$GPUD" --config "$T/czk.conf" >"$T/gpud.log" 2>&1 &
GPUD_PID=$!
as_czk "$SYNTH_GROUPS" "$SYNTH" --config "$T/czk.conf" --numa-node 0 >"$T/synth.log" 2>&1 &
SYNTH_PID=$!
as_czk "$FIN_GROUPS" "$FIN" --config "$T/czk.conf" >"$T/fin.log" 2>&1 &
FIN_PID=$!
up=0
for _ in $(seq 1 150); do
    member "$CZK" status --config "$T/czk.conf" >/dev/null 2>&1 && { up=1; break; }
    kill -0 $GPUD_PID 2>/dev/null || break
    sleep 0.1
done
[ $up = 1 ] || { bad "czk-gpud as czk did not answer a client_group member"; exit 1; }
for p in $GPUD_PID $SYNTH_PID $FIN_PID; do
    kill -0 $p 2>/dev/null || { bad "pid $p ($(cat /proc/$p/comm 2>/dev/null || echo a daemon)) exited at start"; continue; }
    [ "$(stat -c %U /proc/$p)" = czk ] || bad "pid $p does not run as czk"
    grep -q '^CapEff:[[:space:]]*0*$' /proc/$p/status || bad "pid $p has capabilities: $(grep CapEff /proc/$p/status)"
    grep -q '^NoNewPrivs:[[:space:]]*1' /proc/$p/status || bad "pid $p runs without no_new_privs"
done

echo "== socket and directory modes"
[ "$(stat -c '%a %U %G' "$RT/czk.sock")" = "660 czk czk-clients" ] ||
    bad "czk.sock is $(stat -c '%a %U %G' "$RT/czk.sock"), want 660 czk czk-clients"
# gpud.sock: czk's alone (0600), or shared with group czk only (0660)
case $(stat -c '%a %U %G' "$RT/gpud.sock") in
"600 czk "* | "660 czk czk") ;;
*) bad "gpud.sock is $(stat -c '%a %U %G' "$RT/gpud.sock"), want 600 czk or 660 czk czk" ;;
esac
[ "$(stat -c '%a %U' "$RT")" = "${RT_MODE#0} czk" ] || bad "the runtime directory became $(stat -c '%a %U' "$RT")"
[ "$(stat -c '%a %U' "$ST")" = "${ST_MODE#0} czk" ] || bad "the state directory became $(stat -c '%a %U' "$ST")"

echo "== a member proves a witness only it can read"
expect 0 "member submit --wait" member timeout 120 "$CZK" submit --config "$T/czk.conf" --circuit multi --request-id units-1 \
    --wait "$T/member/w.wtns"
job=$(sed -n 's/^job \([0-9]*\) accepted.*/\1/p' "$T/out")
[ -n "$job" ] || bad "no job id in the member's output: $(head -3 "$T/out")"
[ -n "$job" ] && { [ -s "$ST/proofs/$job/0/proof.json" ] || bad "no proof.json in $ST/proofs/$job/0"; }
[ -n "$job" ] && [ "$(stat -c %U "$ST/proofs/$job/0/proof.json" 2>/dev/null)" != czk ] &&
    bad "proof.json is not owned by czk"

echo "== what a member and an outsider may not do"
expect 2 "outsider status" other "$CZK" status --config "$T/czk.conf"
grep -q "permission denied on $RT/czk.sock" "$T/err" || bad "outsider: the refusal does not say permission denied: $(cat "$T/err")"
for who in member other; do
    expect 2 "$who connects to gpud.sock" $who "$CLIENT" "$RT/gpud.sock" status
    grep -q "Permission denied" "$T/err" || bad "$who on gpud.sock: not refused by the socket's mode: $(cat "$T/err")"
    $who ls "$ST" >/dev/null 2>&1 && bad "$who can list the state directory"
    $who cat "$ST/journal" >/dev/null 2>&1 && bad "$who can read the journal"
done
# control: czk reaches gpud.sock (and is turned away by gpud for its role, not by the mode)
(as_czk "" "$CLIENT" "$RT/gpud.sock" status) >"$T/out" 2>"$T/err"
grep -q "Permission denied" "$T/err" && bad "czk itself cannot connect to gpud.sock: $(cat "$T/err")"
(as_czk "" cat "$ST/journal") >/dev/null 2>&1 || bad "czk cannot read the journal (control)"

echo "== the pools (gpud's memfds, through /proc)"
n=0
for fd in /proc/$GPUD_PID/fd/*; do
    case $(readlink "$fd") in
    /memfd:*)
        n=$((n + 1))
        for who in member other; do
            $who dd if="$fd" of=/dev/null bs=1 count=1 2>/dev/null && bad "$who can open gpud's pool $(readlink "$fd")"
        done ;;
    esac
done
[ $n -gt 0 ] || bad "gpud holds no memfd pool (the pool check checked nothing)"

echo "== the runtime directory with the old unit's mode 0750 shuts the members out"
chmod 0750 "$RT"
expect 2 "member status with $RT at 0750" member "$CZK" status --config "$T/czk.conf"
chmod "$RT_MODE" "$RT"
expect 0 "member status with $RT at $RT_MODE again" member "$CZK" status --config "$T/czk.conf"

echo "== UMask=0027: nothing under the state directory is readable by others"
leak=$(find "$ST" -perm /o=rwx)
[ -z "$leak" ] || bad "readable by others under $ST: $leak"
leak=$(find "$ST" ! -user czk)
[ -z "$leak" ] || bad "not owned by czk under $ST: $leak"

echo "== SIGTERM"
for v in GPUD_PID SYNTH_PID FIN_PID; do
    eval p=\$$v
    kill -TERM "$p"; wait_exit "$p" 20; rc=$?
    [ $rc = 0 ] || bad "${v%_PID} as czk exited $rc on SIGTERM"
    eval $v=
done
[ "$fail" = 0 ] && echo "units' users and modes: ok"
exit "$fail"
