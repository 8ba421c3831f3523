#!/bin/bash
# shared_cpu.sh - quick CPU figures of one ardnet pair carrying N connections at 1 kHz, all
# written on a common tick (tests/ardnet/tblock pub --ports N), across two network-namespace
# hosts (root). Usage:
#   sudo bench/ardnet/shared_cpu.sh [BUILD_DIR [OLD_ARDNET]]     (N=100, SECONDS_CPU=5)
# Cases: N connections to one UDP port with 64 B packets (packed datagrams) and with 1 KiB
# packets (one datagram each, sent together), and 1 KiB to one port per connection (the
# routes then share nothing: each its own socket and thread). With OLD_ARDNET (an ardnet
# from before shared sockets) the one-port-per-connection cases run with it too, in the same
# run (CASES="1 3": only those, numbered as printed). Prints the CPU of the sending and receiving ardnet (user + system, % of one CPU) and
# the datagrams per second the sender sent.
set -euo pipefail
SRC=$(cd "$(dirname "$0")/../.." && pwd)
BUILD=$(cd "${1:-$SRC/build}" && pwd)
OLD=${2:-}
ARDNET=$BUILD/src/ardnet/ardnet
TBLOCK=$BUILD/tests/ardnet/ardnet_tblock
N=${N:-100}
SECONDS_CPU=${SECONDS_CPU:-5}
source "$SRC/tests/lib/netns.sh"
netns_require_root
W=$(mktemp -d /tmp/ardnet_shared.XXXXXX)
NETNS_NO_TRAP=1
trap 'netns_destroy; rm -rf "$W"' EXIT
netns_create hostA hostB
A="$(netns_cmd hostA)"
B="$(netns_cmd hostB)"
NCASE=0
TICK=$(getconf CLK_TCK)
cpu_of() { awk '{print $14 + $15}' "/proc/$1/stat"; }
ready() {
    for _ in $(seq 400); do grep -q ready "$1" 2>/dev/null && return 0; sleep 0.05; done
    echo "not ready: $1" >&2
    exit 1
}
ready_fifo() {
    rm -f "$1" "$1.fifo" && mkfifo "$1.fifo" && : >"$1"
    cat "$1.fifo" >"$1" &
    READY_VAR="9:$(stat -c %d:%i "$1.fifo")"
}
# received FILE / errors FILE: sums over the route lines of a --stats-file (rewritten each second)
received() { sed -n 's/^route .* received=\([0-9]*\) .*/\1/p' "$1" 2>/dev/null | awk '{s += $1} END {print s + 0}'; }
errors() { sed -n 's/^route .* send_errors=\([0-9]*\) .*/\1/p' "$1" 2>/dev/null | awk '{s += $1} END {print s + 0}'; }
killwait() { kill "$@" 2>/dev/null || true; wait "$@" 2>/dev/null || true; }

case_() { # label binary size one-port(1|0)
    local label=$1 bin=$2 size=$3 one=$4 i port type
    NCASE=$((NCASE + 1))
    [ -z "${CASES:-}" ] || [[ " $CASES " == *" $NCASE "* ]] || return 0
    export ARD_DOMAIN=sharedcpu$NCASE # fresh connections: sizes differ between cases
    type="u64 u64 i64 u32[$(((size - 24) / 4))]"
    {
        echo "routes:"
        for ((i = 0; i < N; i++)); do
            port=$((7400 + (one ? 0 : i)))
            printf '  - in: data%s\n    out: udp://hostB:%d\n    size: %d\n    type: "%s"\n' \
                "$([ $i = 0 ] || echo $i)" $port "$size" "$type"
        done
    } >"$W/a.yaml"
    {
        echo "routes:"
        for ((i = 0; i < N; i++)); do
            port=$((7400 + (one ? 0 : i)))
            printf '  - in: udp://:%d\n    out: data%s\n    from: hostA\n    size: %d\n    type: "%s"\n' \
                $port "$([ $i = 0 ] || echo $i)" "$size" "$type"
        done
    } >"$W/b.yaml"
    ready_fifo "$W/b.ready"
    ARD_READY_FD=$READY_VAR $B "$bin" --config "$W/b.yaml" --stats-file "$W/b.stats" \
        2>/dev/null 9>"$W/b.ready.fifo" &
    local pb=$!
    ready_fifo "$W/a.ready"
    ARD_READY_FD=$READY_VAR $A "$bin" --config "$W/a.yaml" --stats-file "$W/a.stats" \
        2>/dev/null 9>"$W/a.ready.fifo" &
    local pa=$!
    ready "$W/b.ready"
    ready "$W/a.ready"
    $A "$TBLOCK" pub --size "$size" --ports "$N" --rate 1000 >/dev/null &
    local pp=$!
    sleep 1.5
    local a0 b0 a1 b1 d0 d1 r0 r1 e0 e1
    a0=$(cpu_of $pa)
    b0=$(cpu_of $pb)
    d0=$(sed -n 's/^output.* datagrams=\([0-9]*\).*/\1/p' "$W/a.stats" 2>/dev/null || true)
    r0=$(received "$W/b.stats")
    e0=$(errors "$W/a.stats")
    sleep "$SECONDS_CPU"
    a1=$(cpu_of $pa)
    b1=$(cpu_of $pb)
    d1=$(sed -n 's/^output.* datagrams=\([0-9]*\).*/\1/p' "$W/a.stats" 2>/dev/null || true)
    r1=$(received "$W/b.stats")
    e1=$(errors "$W/a.stats")
    local dg="(one socket per connection)"
    [ -n "$d0" ] && [ -n "$d1" ] && dg="$(((d1 - d0) / SECONDS_CPU)) datagrams/s"
    echo "$label: sender $(((a1 - a0) * 100 / TICK / SECONDS_CPU))%," \
        "receiver $(((b1 - b0) * 100 / TICK / SECONDS_CPU))%, $dg, send errors" \
        "$(((e1 - e0) / SECONDS_CPU))/s, delivered $(((r1 - r0) / SECONDS_CPU)) packets/s"
    killwait $pp $pa $pb
    rm -f "$W/a.stats" "$W/b.stats"
}
echo "== $N connections at 1 kHz on a common tick, $(date -u +%Y-%m-%dT%H:%MZ)," \
    "$(nproc) CPUs, load average $(cut -d' ' -f1-3 /proc/loadavg), ${SECONDS_CPU} s windows"
case_ "64 B, one port" "$ARDNET" 64 1
case_ "1 KiB, one port" "$ARDNET" 1024 1
case_ "1 KiB, a port per connection" "$ARDNET" 1024 0
case_ "64 B, a port per connection" "$ARDNET" 64 0
if [ -n "$OLD" ]; then
    case_ "before: 1 KiB, a port per connection" "$OLD" 1024 0
    case_ "before: 64 B, a port per connection" "$OLD" 64 0
fi
