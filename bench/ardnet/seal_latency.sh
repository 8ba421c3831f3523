#!/bin/bash
# seal_latency.sh - what sealing adds to the one-way latency of a link (root). Usage:
#   sudo bench/ardnet/seal_latency.sh [BUILD_DIR]     (default BUILD_DIR: build)
#   ROUNDS=10 N=5000 PRIO=50 CPUS=1 sudo bench/ardnet/seal_latency.sh build
# Two namespace hosts, a block ping-pong through two ardnet bridges (block -> ardnet -> UDP ->
# ardnet -> block -> ardnet -> UDP -> ardnet -> block: four ardnet hops, two datagrams a round
# trip), the same pair of ardnet processes' configuration run without and then with --key,
# alternated ROUNDS times (plain, sealed, plain, sealed, ...) so that a change of load meets
# both alike; each run N round trips. Every process at SCHED_FIFO PRIO (default 50; PRIO= runs
# them unprioritised); CPUS pins every process (taskset -c: on a virtual machine a wake-up
# across CPUs may wait for an idle virtual CPU to be scheduled, which varies from run to run
# by far more than a seal costs). A round trip crosses two sealed datagrams (one seal and one open each),
# so the added one-way latency of a round is (sealed median - plain median) / 2. Prints each
# round and the median of the rounds; a raw UDP ping-pong between the same hosts is the
# baseline of the run.
set -euo pipefail
SRC=$(cd "$(dirname "$0")/../.." && pwd)
BUILD=$(cd "${1:-$SRC/build}" && pwd)
ARDNET=$BUILD/src/ardnet/ardnet
BENCH=$BUILD/bench/ardnet/ardnet_bench
ROUNDS=${ROUNDS:-10}
N=${N:-5000}
PRIO=${PRIO-50}
source "$SRC/tests/lib/netns.sh"
source "$SRC/bench/ardnet/pingpong.sh"
netns_require_root
W=$(mktemp -d /tmp/seal_latency.XXXXXX)
NETNS_NO_TRAP=1
trap 'kill $(jobs -p) 2>/dev/null; netns_destroy; rm -rf "$W"' EXIT
netns_create hostA hostB
RT=""
[ -n "$PRIO" ] && RT="chrt -f $PRIO"
[ -n "${CPUS:-}" ] && RT="taskset -c $CPUS $RT"
A="$(netns_cmd hostA) $RT"
B="$(netns_cmd hostB) $RT"
export ARD_DOMAIN=seallat
killwait() { kill "$@" 2>/dev/null || true; wait "$@" 2>/dev/null || true; }
# The median of ardnet_bench's line "NAME: median=X ...".
median_of() { sed -n 's/.*median=\([0-9.]*\).*/\1/p' | head -1; }

"$ARDNET" keygen "$W/key"
pingpong_routes "$W"

# One run of the pair, plain or sealed; prints the ping's median round trip (us). The ping's
# warm-up round trips (not counted) wait out the start and, sealed, the handshake.
run_pair() { # plain|sealed -> prints the ping's median (us)
    local key=()
    [ "$1" = sealed ] && key=(--key "$W/key")
    $B "$ARDNET" "${key[@]}" --config "$W/B.yaml" 2>>"$W/B.err" &
    local nb=$!
    $A "$ARDNET" "${key[@]}" --config "$W/A.yaml" 2>>"$W/A.err" &
    local na=$!
    $B "$BENCH" echo &
    local ep=$!
    sleep 0.5
    $A "$BENCH" ping "$N" >"$W/ping.out" 2>&1 || { cat "$W/ping.out" "$W/A.err" "$W/B.err" >&2; exit 1; }
    killwait $ep $na $nb
    median_of <"$W/ping.out"
}

$B "$BENCH" udp-echo 7200 &
ue=$!
sleep 0.2
udp=$($A "$BENCH" udp-ping hostB 7200 "$N" | median_of)
killwait $ue

echo "# seal_latency: $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg), ROUNDS=$ROUNDS N=$N${PRIO:+ SCHED_FIFO $PRIO}${CPUS:+ CPUs $CPUS}, 1 KiB packets"
echo "# raw UDP round trip median (baseline): $udp us"
echo "# round plain_rtt_median_us sealed_rtt_median_us added_one_way_us"
for r in $(seq "$ROUNDS"); do
    # (the order alternates too: a round that runs second meets a warmer cache)
    if ((r % 2)); then
        p=$(run_pair plain)
        s=$(run_pair sealed)
    else
        s=$(run_pair sealed)
        p=$(run_pair plain)
    fi
    echo "$r $p $s $(awk -v p="$p" -v s="$s" 'BEGIN { printf "%.2f", (s - p) / 2 }')"
done | tee "$W/rounds"
# The median of the rounds' added latency, and the ranks around it that hold the true median
# with about 95 % confidence (the binomial order statistics: n/2 -+ 0.98 sqrt(n)).
awk '
    function sort(a, n,   i, j, t) {
        for (i = 2; i <= n; i++) for (j = i; j > 1 && a[j-1] > a[j]; j--) { t = a[j]; a[j] = a[j-1]; a[j-1] = t }
    }
    function med(a, n) { return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2 }
    { p[NR] = $2; s[NR] = $3; d[NR] = $4 }
    END {
        n = NR; sort(p, n); sort(s, n); sort(d, n)
        lo = int(n / 2 - 0.98 * sqrt(n)); hi = int(n / 2 + 1 + 0.98 * sqrt(n) + 0.999)
        if (lo < 1) lo = 1
        if (hi > n) hi = n
        printf "median of %d rounds: plain %.1f us, sealed %.1f us round trip; added one-way %.2f us (95%% interval of the median %.2f to %.2f; rounds from %.2f to %.2f)\n",
            n, med(p, n), med(s, n), med(d, n), d[lo], d[hi], d[1], d[n]
    }' "$W/rounds"
