#!/bin/bash
# run.sh - ardnet benchmark across two network namespaces (root). Usage:
#   sudo bench/ardnet/run.sh [BUILD_DIR]        (default: build; N=round trips, default 20000)
#   PRIO=50 sudo bench/ardnet/run.sh ...        every process (baselines too) at SCHED_FIFO 50
#   CPUS=0 sudo bench/ardnet/run.sh ...         every process (baselines too) pinned (taskset -c)
#   SPIN=20000 sudo bench/ardnet/run.sh ...     blocks and ardnet spin up to 20 us before
#                                               sleeping in rec ($ARD_SPIN_NS; baselines don't)
# Prints, from one run: the bridged 1 KiB round trip next to a raw UDP ping-pong between the
# same namespaces and a raw futex hand-off; the packet rate one bridge sustains; the CPU one
# bridge uses for 1 connection at 1 kHz and 10 kHz and 100 connections at 1 kHz (YAML).
set -euo pipefail
SRC=$(cd "$(dirname "$0")/../.." && pwd)
BUILD=$(cd "${1:-$SRC/build}" && pwd)
ARDNET=$BUILD/src/ardnet/ardnet
BENCH=$BUILD/bench/ardnet/ardnet_bench
N=${N:-20000}
SECONDS_CPU=${SECONDS_CPU:-5}
source "$SRC/tests/lib/netns.sh"
source "$SRC/bench/ardnet/pingpong.sh"
netns_require_root
W=$(mktemp -d /tmp/ardnet_bench.XXXXXX)
NETNS_NO_TRAP=1
trap 'netns_destroy; rm -rf "$W"' EXIT
netns_create hostA hostB
RT=""
[ -n "${PRIO:-}" ] && RT="chrt -f $PRIO"
[ -n "${CPUS:-}" ] && RT="taskset -c $CPUS $RT"
A="$(netns_cmd hostA) $RT"
B="$(netns_cmd hostB) $RT"
export ARD_DOMAIN=bench
[ -n "${SPIN:-}" ] && export ARD_SPIN_NS=$SPIN
TICK=$(getconf CLK_TCK)

# cpu_of PID...: CPU ticks (user+system) of the processes, summed.
cpu_of() {
    local t=0 p
    for p in "$@"; do
        t=$((t + $(awk '{print $14 + $15}' "/proc/$p/stat")))
    done
    echo $t
}
ready() { # wait for "ready" in file
    for _ in $(seq 200); do grep -q ready "$1" 2>/dev/null && return 0; sleep 0.05; done
    echo "not ready: $1" >&2
    exit 1
}
# Readiness goes only to the starter's pipe (ARD_READY_FD=FD:DEV:INO): a FIFO per process,
# relayed into FILE for `ready`. ready_fifo FILE sets READY_VAR; start with 9>"FILE.fifo".
ready_fifo() {
    rm -f "$1" "$1.fifo" && mkfifo "$1.fifo" && : >"$1"
    cat "$1.fifo" >"$1" &
    READY_VAR="9:$(stat -c %d:%i "$1.fifo")"
}
killwait() { kill "$@" 2>/dev/null || true; wait "$@" 2>/dev/null || true; }

echo "== ardnet benchmark, $(date -u +%Y-%m-%dT%H:%MZ), $(nproc) CPUs, N=$N round trips," \
    "load average $(cut -d' ' -f1-3 /proc/loadavg)${PRIO:+, SCHED_FIFO $PRIO}${SPIN:+, spin $SPIN ns}${CPUS:+, CPUs $CPUS}"
echo "== baselines"
$A "$BENCH" futex "$N"
$B "$BENCH" udp-echo 7200 &
ue=$!
sleep 0.2
$A "$BENCH" udp-ping hostB 7200 "$N"
killwait $ue

echo "== bridged round trip: block -> ardnet -> UDP -> ardnet -> block -> ardnet -> UDP -> ardnet -> block"
pingpong_routes "$W"
ready_fifo "$W/B.ready"
ARD_READY_FD=$READY_VAR $B "$ARDNET" --config "$W/B.yaml" 2>"$W/B.err" 9>"$W/B.ready.fifo" &
nb=$!
ready_fifo "$W/A.ready"
ARD_READY_FD=$READY_VAR $A "$ARDNET" --config "$W/A.yaml" 2>"$W/A.err" 9>"$W/A.ready.fifo" &
na=$!
ready "$W/B.ready"
ready "$W/A.ready"
$B "$BENCH" echo &
echo_pid=$!
sleep 0.3
$A "$BENCH" ping "$N"
killwait $echo_pid $na $nb

echo "== maximum packet rate of one bridge (1 KiB, writer as fast as it can)"
ready_fifo "$W/rB.ready"
ARD_READY_FD=$READY_VAR $B "$ARDNET" --in udp://:7300 --out data --size 1024 --stats-file "$W/rB" \
    2>/dev/null 9>"$W/rB.ready.fifo" &
nb=$!
ready_fifo "$W/rA.ready"
ARD_READY_FD=$READY_VAR $A "$ARDNET" --in data --out udp://hostB:7300 --size 1024 --stats-file "$W/rA" \
    2>/dev/null 9>"$W/rA.ready.fifo" &
na=$!
ready "$W/rB.ready"
ready "$W/rA.ready"
$A "$BENCH" flood 5
sleep 1.5
a_in=$(grep -o ' received=[0-9]*' "$W/rA" | cut -d= -f2)
a_sent=$(grep -o ' sent=[0-9]*' "$W/rA" | cut -d= -f2)
b_in=$(grep -o ' received=[0-9]*' "$W/rB" | cut -d= -f2)
echo "sender ardnet took $((a_in / 5))/s from the connection and sent $((a_sent / 5))/s;" \
    "receiver ardnet delivered $((b_in / 5))/s ($(((a_sent - b_in) * 100 / (a_sent > 0 ? a_sent : 1)))% lost on the wire/socket)"
killwait $na $nb

echo "== CPU of one bridge (sender + receiver ardnet), ${SECONDS_CPU} s windows, % of one CPU"
cpu_case() { # label nconn hz
    local label=$1 nconn=$2 hz=$3 i
    {
        echo "routes:"
        for ((i = 0; i < nconn; i++)); do
            printf '  - in: c%d\n    out: udp://hostB:%d\n    size: 1024\n' $i $((7400 + i))
        done
    } >"$W/cA.yaml"
    {
        echo "routes:"
        for ((i = 0; i < nconn; i++)); do
            printf '  - in: udp://:%d\n    out: c%d\n    size: 1024\n    from: hostA\n' \
                $((7400 + i)) $i
        done
    } >"$W/cB.yaml"
    ready_fifo "$W/cB.ready"
    ARD_READY_FD=$READY_VAR $B "$ARDNET" --config "$W/cB.yaml" 2>/dev/null 9>"$W/cB.ready.fifo" &
    local pb=$!
    ready_fifo "$W/cA.ready"
    ARD_READY_FD=$READY_VAR $A "$ARDNET" --config "$W/cA.yaml" 2>/dev/null 9>"$W/cA.ready.fifo" &
    local pa=$!
    ready "$W/cB.ready"
    ready "$W/cA.ready"
    $A "$BENCH" pubmany "$nconn" "$hz" $((SECONDS_CPU + 3)) >/dev/null &
    local pp=$!
    sleep 1
    local a0 b0 a1 b1
    a0=$(cpu_of $pa)
    b0=$(cpu_of $pb)
    sleep "$SECONDS_CPU"
    a1=$(cpu_of $pa)
    b1=$(cpu_of $pb)
    echo "$label: sender $(((a1 - a0) * 100 / TICK / SECONDS_CPU))%," \
        "receiver $(((b1 - b0) * 100 / TICK / SECONDS_CPU))%"
    killwait $pp $pa $pb
}
cpu_case "1 connection at 1 kHz" 1 1000
cpu_case "1 connection at 10 kHz" 1 10000
cpu_case "100 connections at 1 kHz (YAML)" 100 1000
