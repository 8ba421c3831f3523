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
#  3. the forwarding cost per packet: one connection (1 KiB packets) written on hostA at each of
#     RATES (default "1000 10000") Hz, a reader on hostB, forwarded first by configured routes
#     (hostA --in X --out udp://hostB:7001, hostB --in udp://:7001 --out X), then by catalogs
#     (--auto on hostA and hostB): each ardnet process's CPU time (utime + stime, all threads,
#     /proc/PID/stat) over WIN s (default 10) divided by the packets its route counters say
#     it sent (the sum of sent= over its route lines in --stats-file), and the ratio.
# PARTS (default "attach rest fwd") picks the parts to run.
set -euo pipefail
SRC=$(cd "$(dirname "$0")/../.." && pwd)
BUILD=$(cd "${1:-$SRC/build}" && pwd)
ARDNET=$BUILD/src/ardnet/ardnet
ATTACH=$BUILD/bench/ardnet/ardnet_attach
TBLOCK=$BUILD/tests/ardnet/ardnet_tblock
N=${N:-100}
REST=${REST:-10}
RATES=${RATES:-1000 10000}
WIN=${WIN:-10}
PARTS=${PARTS:-attach rest fwd}
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
if [[ " $PARTS " == *" attach "* ]]; then
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
fi

# ---- 2. the catalog at rest -----------------------------------------------------------------------
if [[ " $PARTS " == *" rest "* ]]; then
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
for p in "${PIDS[@]}"; do kill -TERM "$p"; wait "$p" 2>/dev/null || true; done
PIDS=()
fi

# ---- 3. the forwarding cost per packet ------------------------------------------------------------
# snap PID STATSFILE: wait for the next rewrite of STATSFILE, then set SNAP to the process's CPU
# ticks and the sum of sent= over its route lines (read together: both cover the same time).
snap() {
    local m0 m1 i
    m0=$(stat -c %y "$2" 2>/dev/null || true)
    for ((i = 0; i < 500; i++)); do
        m1=$(stat -c %y "$2" 2>/dev/null || true)
        [[ -n "$m1" && "$m1" != "$m0" ]] && break
        sleep 0.01
    done
    [[ -n "$m1" && "$m1" != "$m0" ]] || {
        echo "auto.sh: $2 was not rewritten within 5 s; its ardnet said:" >&2
        cat "${2%.stats}.err" >&2
        exit 1
    }
    SNAP="$(cpu_ticks "$1") $(grep '^route ' "$2" | tr ' ' '\n' | sed -n 's/^sent=//p' |
        awk '{ s += $1 } END { print s + 0 }')"
}
# forward_cost MODE: run the two ardnet processes of MODE (route or auto) over WIN s and set COST
# to "usA usB pktsA pktsB" (CPU microseconds per packet sent, hostA's and hostB's).
forward_cost() {
    local pa pb
    if [[ $1 == route ]]; then
        $A "$ARDNET" --in arm.state --out udp://hostB:7001 --stats-file "$W/fwdA.stats" \
            2>"$W/fwdA.err" &
        pa=$!
        $B "$ARDNET" --in udp://:7001 --out arm.state --stats-file "$W/fwdB.stats" \
            2>"$W/fwdB.err" &
        pb=$!
    else
        $A "$ARDNET" --auto --auto-peers hostA,hostB --stats-file "$W/fwdA.stats" \
            2>"$W/fwdA.err" &
        pa=$!
        $B "$ARDNET" --auto --auto-peers hostA,hostB --stats-file "$W/fwdB.stats" \
            2>"$W/fwdB.err" &
        pb=$!
    fi
    PIDS+=("$pa" "$pb")
    sleep 3
    local a0 b0 a1 b1
    snap "$pa" "$W/fwdA.stats"
    a0=$SNAP
    snap "$pb" "$W/fwdB.stats"
    b0=$SNAP
    sleep "$WIN"
    snap "$pa" "$W/fwdA.stats"
    a1=$SNAP
    snap "$pb" "$W/fwdB.stats"
    b1=$SNAP
    kill -TERM "$pa" "$pb"
    wait "$pa" 2>/dev/null || true
    wait "$pb" 2>/dev/null || true
    PIDS=("${PIDS[@]:0:${#PIDS[@]}-2}")
    rm -f "$W"/fwd?.stats
    COST=$(awk -v a0="$a0" -v a1="$a1" -v b0="$b0" -v b1="$b1" -v hz="$hz" 'BEGIN {
        split(a0, x); split(a1, y); split(b0, u); split(b1, v)
        na = y[2] - x[2]; nb = v[2] - u[2]
        if (na <= 0 || nb <= 0) { print "0 0 " na " " nb; exit }
        printf "%.3f %.3f %d %d\n", 1e6 * (y[1] - x[1]) / hz / na, 1e6 * (v[1] - u[1]) / hz / nb, na, nb }')
}
if [[ " $PARTS " == *" fwd "* ]]; then
hz=$(getconf CLK_TCK)
for rate in $RATES; do
    $A "$TBLOCK" pub --ard data=arm.state --rate "$rate" >/dev/null 2>&1 &
    PIDS+=($!)
    $B "$TBLOCK" sub --ard data=arm.state --idle-ms 600000 --first-ms 600000 >/dev/null 2>&1 &
    PIDS+=($!)
    forward_cost route
    read -r ra rb na nb <<<"$COST"
    forward_cost auto
    read -r aa ab ma mb <<<"$COST"
    if [[ $na -le 0 || $ma -le 0 || $nb -le 0 || $mb -le 0 ]]; then
        echo "auto.sh: at $rate Hz a forward sent nothing (route: $na/$nb, auto: $ma/$mb packets)" >&2
        exit 1
    fi
    awk -v r="$rate" -v ra="$ra" -v rb="$rb" -v aa="$aa" -v ab="$ab" -v na="$na" -v nb="$nb" \
        -v ma="$ma" -v mb="$mb" 'BEGIN {
        printf "forward cost at %d Hz, configured route: hostA %.2f us/packet (%d packets), hostB %.2f us/packet (%d)\n", r, ra, na, rb, nb
        printf "forward cost at %d Hz, --auto:           hostA %.2f us/packet (%d packets), hostB %.2f us/packet (%d)\n", r, aa, ma, ab, mb
        printf "forward cost at %d Hz, ratio --auto / route: hostA %.2f, hostB %.2f\n", r, (ra > 0 ? aa / ra : 0), (rb > 0 ? ab / rb : 0) }'
    for p in "${PIDS[@]}"; do kill -TERM "$p"; wait "$p" 2>/dev/null || true; done
    PIDS=()
done
fi
