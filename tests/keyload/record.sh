#!/bin/sh
# record.sh — the verified-key record (state_dir/keys/NAME.verified) can
# skip the point checks of an unchanged key, and never makes a changed or
# corrupt file trusted:
#   1. first start: the points are checked, the record is written;
#   2. unchanged restart: the log says the checks were skipped;
#   3. the record's digest altered (identity still matches): the digest
#      comparison fails, the full checks run, the key is ready and the record
#      is written again as it was;
#   4. one byte of a point changed in place (same size, inode, and the mtime
#      put back with touch -d): the circuit fails, naming the point;
#   5. the record then made to name the changed file's identity exactly (as
#      if ctime could be put back too): the digest still differs, the full
#      checks run, and the circuit fails;
#   6. killed (fault points) just before and just after the record write: no
#      partial record, and the next start writes or uses it.
# usage: record.sh CZK GPUD SYNTH FIN TOOL SRC
. "$6/tests/pipeline/lib.sh"
command -v python3 >/dev/null || { echo "SKIP: python3 needed to edit the zkey"; exit 77; }
EDIT="python3 $SRC/tests/keyload/zkey_edit.py"
SEED=${CZK_TEST_SEED:-$(od -An -N4 -tu4 /dev/urandom | tr -d ' ')}
log "seed $SEED (CZK_TEST_SEED=$SEED replays it)"

mkdir -p "$T/keys"
cp "$FIX/multi/circuit.zkey" "$T/keys/m.zkey"
write_config </dev/null
# gpud alone, with circuit m only (each fault point then fires in m's loader)
{ sed '/^\[circuit\./,$d' "$CONF"; printf '[circuit.m]\nzkey = %s\n' "$T/keys/m.zkey"; } >"$T/gpud.conf"
REC=$T/state/keys/m.verified
LOG=$T/logs/gpud.log

# state_of NAME: the circuit's state in `czk status` (loading, ready, failed)
state_of() {
    "$CZK" status --config "$CONF" 2>/dev/null |
        awk -v n="$1" '$1 == "circuits" && $2 == n { print $3; exit } $1 == n { print $2; exit }'
}
# run FAULT: start gpud, wait until circuit m is no longer loading (or gpud
# died), stop it; $STATE gets m's state, $RC gpud's exit status, $RUN the log
# lines of this start
run() {
    before=$(wc -l <"$LOG" 2>/dev/null || echo 0)
    CZK_FAULT=${1:-} "$GPUD" --config "$T/gpud.conf" >>"$LOG" 2>&1 & GPUD_PID=$!
    STATE=
    for _ in $(seq 1 300); do
        kill -0 "$GPUD_PID" 2>/dev/null || { STATE=dead; break; }
        STATE=$(state_of m)
        case $STATE in ready|failed) break ;; esac
        sleep 0.1
    done
    [ "$STATE" = dead ] || { kill -TERM "$GPUD_PID"; wait_exit "$GPUD_PID" 20 >/dev/null || kill -KILL "$GPUD_PID"; }
    wait "$GPUD_PID" 2>/dev/null; RC=$?
    GPUD_PID=
    RUN=$(tail -n +$((before + 1)) "$LOG")
}
says() { echo "$RUN" | grep -q "$1"; }

log "1. first start"
run
[ "$STATE" = ready ] || bad "1: circuit m is $STATE, not ready"
[ -f "$REC" ] || { bad "1: no record $REC"; exit 1; }
grep -q "^key_id [0-9a-f]\{64\}$" "$REC" && grep -q "^xxh3_128 [0-9a-f]\{32\}$" "$REC" &&
    grep -q "^ctime_ns [0-9]*$" "$REC" || bad "1: the record lacks a field: $(cat "$REC")"
says "circuit m: key ready .*points checked (no verified-key record)" || bad "1: the log does not say the points were checked"
cp "$REC" "$T/rec.1"
ls "$T/state/keys" | grep -q tmp && bad "1: a temporary record file was left behind"

log "2. unchanged restart"
run
[ "$STATE" = ready ] || bad "2: circuit m is $STATE"
says "circuit m: key ready .*check .*point checks skipped" || bad "2: the log does not say the checks were skipped"
cmp -s "$REC" "$T/rec.1" || bad "2: the record changed on an unchanged restart"

log "3. the record's digest altered"
sed -i 's/^xxh3_128 .*/xxh3_128 00112233445566778899aabbccddeeff/' "$REC"
run
[ "$STATE" = ready ] || bad "3: circuit m is $STATE (its file is intact)"
says "circuit m: .*another content digest: running the full point checks" || bad "3: no digest mismatch in the log"
says "point checks skipped" && bad "3: the checks were skipped although the digest differs"
cmp -s "$REC" "$T/rec.1" || bad "3: the record was not written again as it was: $(cat "$REC")"

log "4. one byte of a point changed in place, mtime put back"
mt=$(stat -c %y "$T/keys/m.zkey")
ino=$(stat -c %i "$T/keys/m.zkey")
$EDIT flip "$T/keys/m.zkey" $((5 + SEED % 5)) "$SEED" || { bad "could not edit the zkey"; exit 1; }
touch -d "$mt" "$T/keys/m.zkey"
[ "$(stat -c %y "$T/keys/m.zkey")" = "$mt" ] && [ "$(stat -c %i "$T/keys/m.zkey")" = "$ino" ] ||
    bad "4: the edit did not keep the inode and mtime"
run
[ "$STATE" = failed ] || bad "4: circuit m is $STATE: a changed point was accepted"
says "point checks skipped" && bad "4: the record made the changed file trusted"
says "circuit m: its key failed to load .*m.zkey: section [5-9] (.*): point [0-9]*" ||
    bad "4: the failure does not name the point"

log "5. a record naming the changed file's exact identity"
cp "$T/rec.1" "$REC"
$EDIT reidentify "$REC" "$T/keys/m.zkey"
run
[ "$STATE" = failed ] || bad "5: circuit m is $STATE: the record made a corrupt file trusted"
says "circuit m: .*another content digest: running the full point checks" ||
    bad "5: the digest comparison did not catch the change"

log "6. killed just before and just after the record write"
cp "$FIX/multi/circuit.zkey" "$T/keys/m.zkey"
rm -f "$REC"
run "gpud.start.before_key_record:kill"
# dead by the fault point's SIGKILL, not by any other exit
[ "$STATE" = dead ] && [ "$RC" = 137 ] && says "fault point gpud.start.before_key_record: SIGKILL" ||
    bad "6: gpud did not die at gpud.start.before_key_record ($STATE, exit $RC)"
[ -f "$REC" ] && bad "6: a record exists although gpud died before writing it"
ls "$T/state/keys" 2>/dev/null | grep -q tmp && bad "6: a temporary record was left behind"
run "gpud.start.after_key_record:kill"
[ "$STATE" = dead ] && [ "$RC" = 137 ] && says "fault point gpud.start.after_key_record: SIGKILL" ||
    bad "6: gpud did not die at gpud.start.after_key_record ($STATE, exit $RC)"
[ -f "$REC" ] || bad "6: no record after gpud.start.after_key_record"
run
[ "$STATE" = ready ] || bad "6: circuit m is $STATE after the crashes"
says "circuit m: key ready .*point checks skipped" || bad "6: the record written before the crash was not used"
exit $fail
