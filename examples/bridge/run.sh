#!/bin/bash
# run.sh - two "hosts" with an ardnet bridge between them, in network namespaces (run as root).
#
#   examples/bridge/run.sh [BUILD_DIR] [SECONDS]      (as root; defaults: build, 10)
#
# Host "sim" runs the simulated arm (arm_plant); host "ctrl" runs the trajectory generator,
# the controller and the monitor. Each host has its own network namespace and its own
# /dev/shm, so the only way between them is the wire (a veth pair on a bridge, on a subnet picked at random):
#
#   ctrl: arm_traj -> arm.ref -> arm_ctrl -> arm.cmd -> ardnet --out udp://sim:7102 --+
#                                   ^                                                 |
#                                   +-- arm.state <- ardnet --in udp://:7101 <-+      |
#   sim:                                                                       |      v
#         arm_plant -> arm.state -> ardnet --out udp://ctrl:7101 --------------+  ardnet --in udp://:7102 -> arm.cmd -> arm_plant
#
# The monitor on ctrl prints the arm's joints a few times a second; at the end the four ardnet
# processes print their counters. Everything is removed on exit (also on Ctrl-C).
set -euo pipefail
SRC=$(cd "$(dirname "$0")/../.." && pwd)
BUILD=$(cd "${1:-$SRC/build}" && pwd)
SECS=${2:-10}
ARDNET=$BUILD/src/ardnet/ardnet
for b in "$ARDNET" "$BUILD/examples/arm_plant" "$BUILD/examples/arm_traj" \
    "$BUILD/examples/arm_ctrl" "$BUILD/examples/arm_monitor"; do
    [ -x "$b" ] || { echo "missing $b: build first (cmake --build $BUILD)" >&2; exit 1; }
done
source "$SRC/tests/lib/netns.sh"
[ "$(id -u)" = 0 ] || { echo "run me as root (network namespaces)" >&2; exit 1; }
export ARD_DOMAIN=example
netns_create ctrl sim            # also installs a trap that tears everything down
CTRL=$(netns_cmd ctrl)
SIM=$(netns_cmd sim)
LOG=$(mktemp -d /tmp/ardnet_example.XXXXXX)
pids=()
finish() {
    for p in "${pids[@]}"; do kill -TERM "$p" 2>/dev/null || true; done
    # these processes only: a bare `wait` would also wait for a process netns_create may
    # have left to keep a namespace, which only netns_destroy ends
    [ ${#pids[@]} -eq 0 ] || wait "${pids[@]}" 2>/dev/null || true
    echo
    echo "== ardnet counters (also printed on SIGUSR1 while running)"
    grep '^route' "$LOG"/*.err | sed "s|^$LOG/||; s|\.err:| |" || true
    rm -rf "$LOG"
    netns_destroy
}
trap finish EXIT
start() { # NAME HOST-PREFIX CMD...: background, stderr to $LOG/NAME.err
    local name=$1 host=$2
    shift 2
    $host "$@" 2>"$LOG/$name.err" >/dev/null &
    pids+=($!)
}

echo "== hosts: ctrl $(netns_addr ctrl), sim $(netns_addr sim)"
# The receiving sides first: they create their local connections from --size/--type.
start sim.cmd_in "$SIM" "$ARDNET" --in udp://:7102 --out arm.cmd --from ctrl \
    --size 56 --type 'f64[7]'
start ctrl.state_in "$CTRL" "$ARDNET" --in udp://:7101 --out arm.state --from sim \
    --size 112 --type 'f64[7] f64[7]'
sleep 0.3
start sim.plant "$SIM" "$BUILD/examples/arm_plant" --ard cmd=arm.cmd --ard state=arm.state
start ctrl.traj "$CTRL" "$BUILD/examples/arm_traj" --ard ref=arm.ref
start ctrl.ctrl "$CTRL" "$BUILD/examples/arm_ctrl" --ard ref=arm.ref --ard state=arm.state \
    --ard cmd=arm.cmd
sleep 0.3
# The sending sides take size and type from the connections the blocks created.
start sim.state_out "$SIM" "$ARDNET" --in arm.state --out udp://ctrl:7101 --dscp 46
start ctrl.cmd_out "$CTRL" "$ARDNET" --in arm.cmd --out udp://sim:7102 --dscp 46
echo "== monitor on ctrl for $SECS s (the arm state crossed the wire from sim)"
timeout "$SECS" $CTRL "$BUILD/examples/arm_monitor" --ard ref=arm.ref --ard state=arm.state || true
echo "== shared memory on ctrl: $($CTRL ls /dev/shm | tr '\n' ' ')"
echo "== shared memory on sim:  $($SIM ls /dev/shm | tr '\n' ' ')"
