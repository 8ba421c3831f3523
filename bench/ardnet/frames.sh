#!/bin/bash
# Camera frames across hosts: ardnet carrying 1 MiB at 30 Hz and 4 MiB at 10 Hz against a bare
# sender/receiver (sendmmsg/recvmmsg, the same datagram size, assembling each packet latest
# value: bench/ardnet/ardnet_framebare.c), in one run, over loopback in a private network
# namespace (root). For each: CPU per MiB of each side (ardnet A and B from /proc; the bare
# sender and receiver from getrusage), the median and 90th percentile latency from the
# writer's send to the reader's receipt of the whole packet, and the packets delivered, also
# with 1 % and 5 % of the datagrams dropped (nftables on input).
#   bench/ardnet/frames.sh BUILD_DIR [SECONDS]
set -euo pipefail
B=${1:?build dir}
SECS=${2:-5}
if [ -z "${FRAMES_INSIDE:-}" ]; then
    exec env FRAMES_INSIDE=1 unshare --net -- bash -c 'ip link set lo up && exec bash "$0" "$@"' "$0" "$@"
fi
ARDNET=$B/src/ardnet/ardnet
TBLOCK=$B/tests/ardnet/ardnet_tblock
BARE=$B/bench/ardnet/ardnet_framebare
export ARD_DOMAIN=frames_bench_$$
T=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null || true; rm -rf "$T"; rm -f /dev/shm/ard.$ARD_DOMAIN.*' EXIT
ticks=$(getconf CLK_TCK)
cpu_of() { awk -v t="$ticks" '{print int(($14 + $15) * 1000000 / t)}' "/proc/$1/stat"; }
loss() { # PERCENT
    nft delete table ip fbench 2>/dev/null || true
    [ "$1" = 0 ] || nft -f - <<NFT
table ip fbench {
  chain in {
    type filter hook input priority 0;
    udp dport { 7101, 7102 } numgen random mod 100 < $1 drop
  }
}
NFT
}
printf '%-6s %-5s %-7s %10s %10s %10s %10s %9s %9s %s\n' size loss who tx_us/MiB rx_us/MiB \
    lat_p50_us lat_p90_us sent delivered note
one() { # SIZE HZ LOSS
    local size=$1 hz=$2 pct=$3 mib n
    mib=$(awk -v s="$size" -v h="$hz" -v t="$SECS" 'BEGIN{print s * h * t / 1048576}')
    loss "$pct"
    # bare
    "$BARE" recv 7101 "$size" $((SECS + 1)) >"$T/brecv" &
    local rp=$!
    sleep 0.2
    "$BARE" send 127.0.0.1 7101 "$size" "$hz" "$SECS" >"$T/bsend"
    wait $rp
    local s_cpu r_cpu
    s_cpu=$(sed -n 's/.*cpu_us=\([0-9]*\).*/\1/p' "$T/bsend")
    r_cpu=$(sed -n 's/.*cpu_us=\([0-9]*\).*/\1/p' "$T/brecv")
    printf '%-6s %-5s %-7s %10.0f %10.0f %10s %10s %9s %9s\n' "$((size / 1048576))MiB" "$pct%" bare \
        "$(awk -v c="$s_cpu" -v m="$mib" 'BEGIN{print c / m}')" \
        "$(awk -v c="$r_cpu" -v m="$mib" 'BEGIN{print c / m}')" \
        "$(sed -n 's/.*lat_us_p50=\([0-9]*\).*/\1/p' "$T/brecv")" \
        "$(sed -n 's/.*lat_us_p90=\([0-9]*\).*/\1/p' "$T/brecv")" \
        "$(sed -n 's/packets=\([0-9]*\).*/\1/p' "$T/bsend")" \
        "$(sed -n 's/packets=\([0-9]*\).*/\1/p' "$T/brecv")"
    # ardnet: writer -> ardnet A -> UDP -> ardnet B -> reader
    local ty="u64 u64 i64 u32[$(((size - 24) / 4))]"
    local c=f$size
    "$ARDNET" --in udp://127.0.0.1:7102 --out "$c.out" --conn-id 9 --size "$size" --type "$ty" \
        --stats-file "$T/B.stats" 2>"$T/B.err" &
    local bp=$!
    "$ARDNET" --in "$c.in" --out udp://127.0.0.1:7102 --conn-id 9 --size "$size" --type "$ty" \
        --stats-file "$T/A.stats" 2>"$T/A.err" &
    local ap=$!
    sleep 0.5
    "$BARE" read "$c.out" "$size" $((SECS + 1)) >"$T/aread" &
    rp=$!
    local a0 b0
    a0=$(cpu_of $ap)
    b0=$(cpu_of $bp)
    "$TBLOCK" pub --size "$size" --ard data="$c.in" --rate "$hz" --count $((hz * SECS)) >"$T/apub"
    local a1 b1
    a1=$(cpu_of $ap)
    b1=$(cpu_of $bp)
    wait $rp
    kill $ap $bp
    wait $ap $bp 2>/dev/null || true
    [ -n "${FRAMES_DEBUG:-}" ] && cat "$T/A.err" "$T/B.err" "$T/aread" >&2
    printf '%-6s %-5s %-7s %10.0f %10.0f %10s %10s %9s %9s %s\n' "$((size / 1048576))MiB" "$pct%" ardnet \
        "$(awk -v c=$((a1 - a0)) -v m="$mib" 'BEGIN{print c / m}')" \
        "$(awk -v c=$((b1 - b0)) -v m="$mib" 'BEGIN{print c / m}')" \
        "$(sed -n 's/.*lat_us_p50=\([0-9]*\).*/\1/p' "$T/aread")" \
        "$(sed -n 's/.*lat_us_p90=\([0-9]*\).*/\1/p' "$T/aread")" \
        "$(sed -n 's/sent=\([0-9]*\).*/\1/p' "$T/apub")" \
        "$(sed -n 's/packets=\([0-9]*\).*/\1/p' "$T/aread")" \
        "partial=$(grep '^route' "$T/B.stats" | tr ' ' '\n' | sed -n 's/^drop_partial=//p')"
}
for pct in 0 1 5; do
    one 1048576 30 $pct
    one 4194304 10 $pct
done
loss 0
