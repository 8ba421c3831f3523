#!/bin/bash
# auto.sh - ardnet --auto (the catalog) across three network namespaces (root). Usage:
#   sudo bench/ardnet/auto.sh [BUILD_DIR]     (N=attaches, default 100; REST=seconds, default 10)
# Prints, from one run:
#  1. attach-to-first-packet on hostB: a writer of 1 KiB packets at 1 kHz on hostA, a reader
#     on hostB attached N times (each after the catalog stopped wanting the connection), the
#     time from each attach to the first packet sent after it: median, p99, max. Next to it,
#     the same reader over a configured route (hostA ardnet --in X --out udp://hostB, hostB
#     ardnet --in udp://:7001 --out X): the baseline, same run.
#  2. the catalog at rest: 100 connections written on hostA (one packet a second each),
#     catalogs on hostA, hostB and hostC, nothing wanted: the catalogs' own traffic (bytes and
#     datagrams a second on their port, all hosts) and CPU (% of one core each) over REST s.
set -euo pipefail
SRC=$(cd "$(dirname "$0")/../.." && pwd)
BUILD=$(cd "${1:-$SRC/build}" && pwd)
ARDNET=$BUILD/src/ardnet/ardnet
ATTACH=$BUILD/bench/ardnet/ardnet_attach
TBLOCK=$BUILD/tests/ardnet/ardnet_tblock
N=${N:-100}
REST=${REST:-10}
source "$SRC/tests/lib/netns.sh"
netns_require_root
W=$(mktemp -d /tmp/ardnet_auto_bench.XXXXXX)
NETNS_NO_TRAP=1
PIDS=()
cleanup() {
    local p
    for p in "${PIDS[@]}"; do kill -TERM "$p" 2>/dev/null || true; done
    for p in "${PIDS[@]}"; do wait "$p" 2>/dev/null || true; done
    netns_destroy
    rm -rf "$W"
}
trap cleanup EXIT
netns_create hostA hostB hostC
A=$(netns_cmd hostA)
B=$(netns_cmd hostB)
export ARD_DOMAIN=autobench
TYPE="u64 u64 i64 u32[250]"
cpu_ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }

# ---- 1. attach to first packet ------------------------------------------------------------------
$A "$TBLOCK" pub --ard data=arm.state --rate 1000 >/dev/null 2>&1 &
PIDS+=($!)
for h in A B; do
    ns=$(netns_cmd host$h)
    $ns "$ARDNET" --auto --auto-peers hostA,hostB,hostC --stats-file "$W/auto$h.stats" \
        2>"$W/auto$h.err" &
    PIDS+=($!)
done
sleep 1
auto=$($B "$ATTACH" arm.state 1024 "$TYPE" "$N" 800)
for p in "${PIDS[@]:1}"; do kill -TERM "$p"; wait "$p" 2>/dev/null || true; done
PIDS=("${PIDS[0]}")
$A "$ARDNET" --in arm.state --out udp://hostB:7001 2>/dev/null &
PIDS+=($!)
$B "$ARDNET" --in udp://:7001 --out arm.state 2>/dev/null &
PIDS+=($!)
sleep 1
route=$($B "$ATTACH" arm.state 1024 "$TYPE" "$N" 20)
started=$(grep '^catalog' "$W/autoA.stats" | tr ' ' '\n' | sed -n 's/^started=//p')
echo "attach to first packet, --auto:           $auto"
echo "attach to first packet, configured route: $route"
echo "(forwards started by hostA's catalog during the $N --auto attaches: $started)"
for p in "${PIDS[@]}"; do kill -TERM "$p"; wait "$p" 2>/dev/null || true; done
PIDS=()

# ---- 2. the catalog at rest -----------------------------------------------------------------------
$A "$TBLOCK" pub --ports 100 --rate 1 >/dev/null 2>&1 &
PIDS+=($!)
for h in A B C; do
    ns=$(netns_cmd host$h)
    $ns nft -f - <<NFT
table ip autobench {
  chain out {
    type filter hook output priority 0;
    udp sport 7400 counter
  }
}
NFT
    $ns "$ARDNET" --auto --auto-peers hostA,hostB,hostC --stats-file "$W/rest$h.stats" \
        2>"$W/rest$h.err" &
    PIDS+=($!)
done
sleep 2
declare -A t0 b0 d0
for i in 1 2 3; do t0[$i]=$(cpu_ticks "${PIDS[$i]}"); done
for h in A B C; do
    read -r d0[$h] b0[$h] < <($(netns_cmd host$h) nft list table ip autobench |
        sed -n 's/.*packets \([0-9]*\) bytes \([0-9]*\).*/\1 \2/p')
done
sleep "$REST"
hz=$(getconf CLK_TCK)
i=1
for h in A B C; do
    read -r d1 b1 < <($(netns_cmd host$h) nft list table ip autobench |
        sed -n 's/.*packets \([0-9]*\) bytes \([0-9]*\).*/\1 \2/p')
    t1=$(cpu_ticks "${PIDS[$i]}")
    has=$(grep '^catalog' "$W/rest$h.stats" | tr ' ' '\n' | sed -n 's/^has=//p')
    awk -v h="$h" -v d=$((d1 - ${d0[$h]})) -v b=$((b1 - ${b0[$h]})) -v t=$((t1 - ${t0[$i]})) \
        -v s="$REST" -v hz="$hz" -v has="$has" 'BEGIN {
        printf "at rest, host%s (has %s): %.1f datagrams/s, %.0f bytes/s sent by the catalog, CPU %.2f%% of one core\n",
            h, has, d / s, b / s, 100 * t / hz / s }'
    i=$((i + 1))
done
