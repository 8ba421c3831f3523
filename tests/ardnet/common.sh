# common.sh - sourced by the ardnet shell tests. Needs $ARDNET, $TBLOCK (set by CTest).
#
#   bg NAME CMD...        start CMD in the background; stdout/stderr to $T/NAME.out/.err;
#                         pid in $T/NAME.pid; killed at exit
#   bg_ready NAME CMD...  same, and wait until it reports readiness ($ARD_READY_FD)
#   stop NAME             SIGTERM and wait; returns its exit status
#   counter FILE ROUTE KEY  value of KEY in the last counters line of ROUTE in FILE
#   fail MSG              print MSG and the logs, exit 1
#
# Run as root, a test gets a network namespace of its own (only lo), so that its UDP ports
# cannot meet another test's or another copy of the suite's; tests that make their own
# namespaces set PRIVATE_NET=0 before sourcing this. Not root: ports picked per run below the
# kernel's ephemeral range.
set -euo pipefail
: "${ARDNET:?} ${TBLOCK:?}"
if [ "${PRIVATE_NET:-1}" = 1 ] && [ -z "${ARD_TEST_PRIVATE_NET:-}" ] && [ "$(id -u)" = 0 ] &&
    unshare --net true 2>/dev/null; then
    export ARD_TEST_PRIVATE_NET=1
    exec unshare --net -- bash -c 'ip link set lo up && exec bash "$@"' bash "$0" "$@"
fi
T=$(mktemp -d /tmp/ardnet_test.XXXXXX)
export ARD_DOMAIN="t_${TEST_NAME:-ardnet}_$$"
# A per-run UDP port base (PORT and PORT+1 are used; in a private namespace nothing else is
# there), below the ephemeral range so that the kernel does not hand it to another socket.
PORT=$((20000 + (($$ + RANDOM) % 6000) * 2))

cleanup_common() {
    local f
    for f in "$T"/*.pid; do
        [ -e "$f" ] || continue
        kill -TERM "$(cat "$f")" 2>/dev/null || true
    done
    sleep 0.2
    for f in "$T"/*.pid; do
        [ -e "$f" ] || continue
        kill -KILL "$(cat "$f")" 2>/dev/null || true
    done
    rm -f /dev/shm/ard."$ARD_DOMAIN".* 2>/dev/null || true
    rm -rf "$T"
}
trap cleanup_common EXIT
trap 'exit 129' HUP
trap 'exit 130' INT
trap 'exit 143' TERM

bg() {
    local name=$1
    shift
    "$@" >"$T/$name.out" 2>"$T/$name.err" &
    echo $! >"$T/$name.pid"
}

bg_ready() {
    local name=$1 i j
    shift
    : >"$T/$name.ready"
    # Readiness is written only to the starter's pipe, named with its device and inode
    # (ARD_READY_FD=FD:DEV:INO, as ardstart passes it): a FIFO, relayed into the .ready file.
    rm -f "$T/$name.fifo" && mkfifo "$T/$name.fifo"
    cat "$T/$name.fifo" >"$T/$name.ready" &
    local relay=$!
    ARD_READY_FD="9:$(stat -c %d:%i "$T/$name.fifo")" "$@" >"$T/$name.out" 2>"$T/$name.err" \
        9>"$T/$name.fifo" &
    echo $! >"$T/$name.pid"
    for i in $(seq 200); do
        grep -q ready "$T/$name.ready" && return 0
        if ! kill -0 "$(cat "$T/$name.pid")" 2>/dev/null; then
            # Gone: it may have become ready and finished its work (a reader of a few packets)
            # before the relay wrote the line. The relay ends at the pipe's end of file.
            for j in $(seq 100); do
                kill -0 $relay 2>/dev/null || break
                sleep 0.05
            done
            grep -q ready "$T/$name.ready" && return 0
            fail "$name exited at startup"
        fi
        sleep 0.05
    done
    fail "$name did not become ready"
}

stop() {
    local name=$1 pid rc=0
    pid=$(cat "$T/$name.pid")
    kill -TERM "$pid" 2>/dev/null || true
    wait "$pid" || rc=$?
    rm -f "$T/$name.pid"
    return $rc
}

counter() {
    local line
    line=$(grep "^route $2:" "$1" | tail -1)
    [ -n "$line" ] || { echo "no counters for route $2 in $1" >&2; echo -1; return 0; }
    echo "$line" | tr ' ' '\n' | sed -n "s/^$3=//p"
}

# counter_now PIDFILE ERRFILE ROUTE KEY: the route's counter KEY right now: SIGUSR1 to the
# ardnet of PIDFILE, then its new counters line in ERRFILE (waited for: a busy host answers late)
counter_now() {
    local n0
    n0=$(grep -c "^route $3:" "$2" || true)
    kill -USR1 "$(cat "$1")"
    for _ in $(seq 200); do
        [ "$(grep -c "^route $3:" "$2" || true)" -gt "$n0" ] && break
        sleep 0.05
    done
    counter "$2" "$3" "$4"
}

fail() {
    echo "FAIL: $*" >&2
    local f
    for f in "$T"/*.err "$T"/*.out; do
        [ -s "$f" ] || continue
        echo "--- $f" >&2
        tail -n 20 "$f" >&2
    done
    exit 1
}

# kv FILE KEY: value of KEY=... in a one-line result file (tblock sub --result).
kv() {
    tr ' ' '\n' <"$1" | sed -n "s/^$2=//p"
}
