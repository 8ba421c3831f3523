# common.sh - sourced by the tests of ros2: endpoints. Needs $ARDNET, $PEER, $LOCAL (CTest).
#
# As root, a test runs in a network namespace of its own (only lo), so that its DDS traffic
# meets no other test's; Cyclone is told to use lo only, unicast, with the peers listed
# ($CYCLONEDDS_URI), so nothing leaves the machine either way. Not root: skipped (exit 77),
# DDS discovery would otherwise reach whatever else runs on the machine.
#
#   bg NAME CMD...    start CMD in the background; output in $T/NAME.out/.err; pid killed at exit
#   stop NAME         SIGTERM and wait; returns its exit status
#   wait_file F S     wait up to S seconds for file F
#   counter NAME ROUTE KEY   KEY of ROUTE in the last counters printed by ardnet NAME
#   fail MSG          print MSG and the logs, exit 1
set -euo pipefail
: "${ARDNET:?} ${PEER:?} ${LOCAL:?}"
if [ "$(id -u)" != 0 ]; then
    echo "skipped: needs root (a private network namespace keeps DDS discovery in the test)"
    exit 77
fi
if [ -z "${ROS2_TEST_NET:-}" ] && [ "${PRIVATE_NET:-1}" = 1 ]; then
    export ROS2_TEST_NET=1
    exec unshare --net -- bash -c 'ip link set lo up && exec bash "$@"' bash "$0" "$@"
fi
T=$(mktemp -d /tmp/ros2_test.XXXXXX)
export ARD_DOMAIN="t_${TEST_NAME:-ros2}_$$"
export ROS_DOMAIN_ID=$((RANDOM % 200))
# One interface, no multicast, the peers on it listed: discovery by unicast to the listed
# address's participant ports only.
cyclone_uri() { # IFACE ADDR...
    local iface=$1 peers="" a
    shift
    for a in "$@"; do peers+="<Peer address=\"$a\"/>"; done
    printf '%s' "<CycloneDDS><Domain Id=\"any\"><General><Interfaces><NetworkInterface \
name=\"$iface\"/></Interfaces><AllowMulticast>false</AllowMulticast></General><Discovery>\
<ParticipantIndex>auto</ParticipantIndex><MaxAutoParticipantIndex>40</MaxAutoParticipantIndex>\
<Peers>$peers</Peers></Discovery></Domain></CycloneDDS>"
}
export CYCLONEDDS_URI
CYCLONEDDS_URI=$(cyclone_uri lo 127.0.0.1)

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

stop() {
    local pid rc=0
    pid=$(cat "$T/$1.pid")
    kill -TERM "$pid" 2>/dev/null || true
    wait "$pid" || rc=$?
    rm -f "$T/$1.pid"
    return $rc
}

# Wait for a background program to exit by itself; its exit status.
finish() {
    local pid rc=0
    pid=$(cat "$T/$1.pid")
    wait "$pid" || rc=$?
    rm -f "$T/$1.pid"
    return $rc
}

wait_file() {
    local i
    for ((i = 0; i < $2 * 20; i++)); do
        [ -e "$1" ] && return 0
        sleep 0.05
    done
    return 1
}

counter() {
    grep "^route $2:" "$T/$1.err" | tail -1 | tr ' ' '\n' | sed -n "s/^$3=//p"
}

# KEY=VALUE of the last line of a program's output.
field() {
    tail -1 "$T/$1.out" | tr ' ' '\n' | sed -n "s/^$2=//p"
}

fail() {
    local f
    echo "FAIL: $*"
    for f in "$T"/*.out "$T"/*.err; do
        [ -s "$f" ] || continue
        echo "--- $(basename "$f")"
        tail -20 "$f"
    done
    exit 1
}
