# common.sh — shell helpers shared by the daemon and pipeline test libraries
# (tests/daemons/lib.sh, tests/pipeline/lib.sh), sourced as
# . "$SRC/tests/lib/common.sh".  POSIX sh.
#   bad MSG...          report a failure and mark the test failed (fail=1)
#   wait_exit PID SECS  wait up to SECS for PID to exit: its exit status, or 124

bad() { echo "FAIL: $*" >&2; fail=1; }

wait_exit() { # PID SECONDS -> exit status, or 124
    for _ in $(seq 1 $(($2 * 10))); do
        kill -0 "$1" 2>/dev/null || { wait "$1"; return $?; }
        sleep 0.1
    done
    return 124
}
