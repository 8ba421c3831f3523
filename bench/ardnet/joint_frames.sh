#!/bin/bash
# Joint data next to camera frames: the latency of a 1 kHz route of 112-byte packets (a 7-joint
# state) while another route carries 1 MiB frames at 30 Hz or 4 MiB at 10 Hz over the same
# link (loopback in a private network namespace; root). Each side of each route is an ardnet
# bridge (writer -> ardnet A -> UDP -> ardnet B -> reader); the cases:
#   alone     the joint data alone (the baseline, measured first and again last)
#   two       the frames in an ardnet pair of their own (two processes on each host)
#   one       both routes in one ardnet on each host (a routes YAML)
#   two+bw    two, with --max-bandwidth BW on the frame route
#   one+bw    one, with max-bandwidth: BW on the frame route
# For each: the joint data's latency from the writer's send (CLOCK_REALTIME in the packet) to
# its reader holding it, median, 99th percentile and maximum, the longest time between two
# joint packets at the reader (how stale its newest value got: a packet that waited behind a
# frame is often superseded at the sending ardnet, latest value, and never delivered late),
# their ratios to the baseline, the joint packets sent, delivered by ardnet B and read, and
# the frames sent/read.
#   bench/ardnet/joint_frames.sh BUILD_DIR [SECONDS] [BW]
set -euo pipefail
B=$(cd "${1:?build dir}" && pwd)
SECS=${2:-5}
BW=${3:-1G}
if [ -z "${JOINT_INSIDE:-}" ]; then
    # shellcheck disable=SC2016
    exec env JOINT_INSIDE=1 unshare --net -- bash -c 'ip link set lo up && exec bash "$0" "$@"' "$0" "$@"
fi
ARDNET=${ARDNET:-$B/src/ardnet/ardnet} # (ARDNET=PATH: another build of ardnet)
TBLOCK=$B/tests/ardnet/ardnet_tblock
BARE=$B/bench/ardnet/ardnet_framebare
export ARD_DOMAIN=joint_bench_$$
T=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null || true; [ -n "${JOINT_DEBUG:-}" ] && cat "$T"/ardnet.err "$T"/*.yaml >&2; rm -rf "$T"; rm -f /dev/shm/ard.$ARD_DOMAIN.*' EXIT
JS=112
type_of() { echo "u64 u64 i64 u32[$((($1 - 24) / 4))]"; }
kv() { sed -n "s/.*\\b$2=\\([0-9]*\\).*/\\1/p" "$1" | head -1; }
received() { grep "^route $2:" "$T/$1" | tail -1 | tr ' ' '\n' | sed -n 's/^received=//p'; }

# route_yaml IN OUT SIZE CONN_ID [BW]
route_yaml() {
    printf '  - in: %s\n    out: %s\n    size: %s\n    type: "%s"\n    conn-id: %s\n' \
        "$1" "$2" "$3" "$(type_of "$3")" "$4"
    [ -z "${5:-}" ] || printf '    max-bandwidth: %s\n' "$5"
}

base_p50=
printf '%-7s %-9s %8s %8s %8s %8s %8s %8s %8s %16s %7s\n' case frames j_p50_us j_p99_us j_max_us \
    gap_max p50_x p99_x gapmax_x j_sent/B/read frames
# one CASE SIZE HZ: SIZE 0 = no frames
one() {
    local cs=$1 size=$2 hz=$3 pids=() bw=
    case $cs in *+bw) bw=$BW ;; esac
    rm -f "$T"/*.yaml
    {
        echo "stats-file: $T/A.stats"
        echo "routes:"
        route_yaml j.in udp://127.0.0.1:7202 $JS 11
    } >"$T/jA.yaml"
    {
        echo "stats-file: $T/B.stats"
        echo "routes:"
        route_yaml udp://127.0.0.1:7202 j.out $JS 11
    } >"$T/jB.yaml"
    if [ "$size" != 0 ]; then
        local fa=$T/jA.yaml fb=$T/jB.yaml
        if [ "${cs%+bw}" = two ]; then
            printf 'routes:\n' >"$T/fA.yaml"
            printf 'routes:\n' >"$T/fB.yaml"
            fa=$T/fA.yaml
            fb=$T/fB.yaml
        fi
        route_yaml "f$size.in" udp://127.0.0.1:7201 "$size" 12 "$bw" >>"$fa"
        route_yaml udp://127.0.0.1:7201 "f$size.out" "$size" 12 >>"$fb"
    fi
    for y in "$T"/*B.yaml "$T"/*A.yaml; do
        "$ARDNET" -c "$y" 2>>"$T/ardnet.err" &
        pids+=($!)
    done
    sleep 0.5
    "$BARE" read j.out $JS $((SECS + 1)) >"$T/jread" &
    local jr=$! fr="" fp=""
    if [ "$size" != 0 ]; then
        "$BARE" read "f$size.out" "$size" $((SECS + 1)) >"$T/fread" &
        fr=$!
        "$TBLOCK" pub --size "$size" --ard data="f$size.in" --rate "$hz" >"$T/fpub" &
        fp=$!
    fi
    sleep 0.3
    "$TBLOCK" pub --size $JS --ard data=j.in --rate 1000 --count $((1000 * SECS)) >"$T/jpub"
    wait $jr
    local frames=-
    if [ -n "$fr" ]; then
        kill $fp
        wait $fp 2>/dev/null || true
        wait $fr
        frames="$(kv "$T/fpub" sent)/$(kv "$T/fread" packets)"
    fi
    kill "${pids[@]}"
    wait "${pids[@]}" 2>/dev/null || true
    [ -n "${JOINT_DEBUG:-}" ] && cat "$T/ardnet.err" "$T/jread" >&2
    local p50 p99 mx gmax label=-
    p50=$(kv "$T/jread" lat_us_p50)
    p99=$(kv "$T/jread" lat_us_p99)
    mx=$(kv "$T/jread" lat_us_max)
    gmax=$(kv "$T/jread" gap_us_max)
    if [ -z "$base_p50" ]; then
        base_p50=$p50
        base_p99=$p99
        base_gap=$gmax
    fi
    [ "$size" = 0 ] || label="$((size / 1048576))MiB@$hz"
    ratio() { awk -v a="$1" -v b="$2" 'BEGIN{printf "%.2f", a / (b > 0 ? b : 1)}'; }
    printf '%-7s %-9s %8s %8s %8s %8s %8s %8s %8s %16s %7s\n' "$cs" "$label" "$p50" "$p99" "$mx" \
        "$gmax" "$(ratio "$p50" "$base_p50")" "$(ratio "$p99" "$base_p99")" \
        "$(ratio "$gmax" "$base_gap")" \
        "$(kv "$T/jpub" sent)/$(received B.stats j.out)/$(kv "$T/jread" packets)" "$frames"
}
echo "# $(uptime)"
one alone 0 0
for f in "1048576 30" "4194304 10"; do
    # shellcheck disable=SC2086
    for cs in two one two+bw one+bw; do one $cs $f; done
done
one alone 0 0
echo "# $(uptime)"
