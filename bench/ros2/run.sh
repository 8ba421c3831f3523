#!/bin/bash
# run.sh - ardnet's ros2: route next to a bare Cyclone DDS publisher (root). Usage:
#   sudo bench/ros2/run.sh [BUILD_DIR]     (default: build)
#   SECONDS_RUN=10 ROUNDS=3 PRIO=20 WARM=3  measured window per case (s), rounds, SCHED_FIFO of
#                                           every process (baselines too; unset: none), seconds
#                                           from start to the window
#   PIN=1                                   the publishing side (the bare publisher; the writer
#                                           and ardnet) on CPU 1, the peer on CPU 0 (unset: the
#                                           scheduler places them)
#   CASES="1 100"                           the numbers of connections to run
#   RATE=1000                               packets per second of each connection (Hz)
#   SIZE=1024                               bytes of a packet: 1024, 1048576 (an image) or
#                                           4194304 (a point cloud)
#   QOS=best-effort                         best-effort or reliable: every writer (the bare one,
#                                           ardnet's routes: qos: reliable) and the peer's
#                                           readers, keep last 1
#   STAMP=write                             when a packet is stamped: just before it is written
#                                           (write), or all of a period's with its start (tick),
#                                           so that the latency includes the publisher's way
#                                           through the period's packets
# In a private network namespace (lo only; Cyclone on lo, unicast). For each of CASES (by
# default 1 connection and 100 connections at 1 kHz, 1 KiB, "stamp:i64 data:u8[1016]"), in
# turn in every round:
#   bare    ros2_bench bare: one Cyclone publisher writes the generated type on rt/bench/k<i>
#   ardnet  ros2_bench writer writes local connections bench.k<i>; ardnet --config (one route
#           bench.k<i> -> ros2:/bench/k<i> each) publishes them
# and the same DDS peer (ros2_bench peer) receives. Per case: CPU per packet of the publishing
# process (bare publisher, or ardnet) over the window (all its threads, /proc/PID/stat), the
# packets it published in the window (its own count), latency writer stamp -> peer receipt
# (median, p99). Prints one line per case and round, then the medians over rounds and the
# ratios (ardnet / bare CPU per packet, ardnet - bare median latency).
set -euo pipefail
SRC=$(cd "$(dirname "$0")/../.." && pwd)
BUILD=$(cd "${1:-$SRC/build}" && pwd)
[ "$(id -u)" = 0 ] || { echo "run.sh: needs root (a private network namespace)" >&2; exit 1; }
if [ -z "${ROS2_BENCH_NET:-}" ]; then
    export ROS2_BENCH_NET=1
    exec unshare --net -- bash -c 'ip link set lo up && exec bash "$@"' bash "$0" "$@"
fi
ARDNET=$BUILD/src/ardnet/ardnet
BENCH=$BUILD/bench/ros2/ros2_bench
S=${SECONDS_RUN:-10}
ROUNDS=${ROUNDS:-3}
WARM=${WARM:-3}
RT="" PUB="" PEER=""
[ -n "${PRIO:-}" ] && RT="chrt -f $PRIO"
[ -n "${PIN:-}" ] && PUB="taskset -c 1" PEER="taskset -c 0"
CASES=${CASES:-1 100}
export ROS2_BENCH_RATE=${RATE:-1000} ROS2_BENCH_SIZE=${SIZE:-1024} ROS2_BENCH_STAMP=${STAMP:-write} ROS2_BENCH_QOS=${QOS:-best-effort}
case $ROS2_BENCH_SIZE in
1024 | 1048576 | 4194304) ;;
*) echo "run.sh: SIZE '$ROS2_BENCH_SIZE': expected 1024, 1048576 or 4194304" >&2; exit 2 ;;
esac
W=$(mktemp -d /tmp/ros2_bench.XXXXXX)
export ARD_DOMAIN=r2bench$$ ROS_DOMAIN_ID=0
export CYCLONEDDS_URI='<CycloneDDS><Domain Id="any"><General><Interfaces><NetworkInterface name="lo"/></Interfaces><AllowMulticast>false</AllowMulticast></General><Discovery><ParticipantIndex>auto</ParticipantIndex><MaxAutoParticipantIndex>20</MaxAutoParticipantIndex><Peers><Peer address="127.0.0.1"/></Peers></Discovery></Domain></CycloneDDS>'
PIDS=()
cleanup() {
    [ ${#PIDS[@]} = 0 ] || kill "${PIDS[@]}" 2>/dev/null || true
    rm -f /dev/shm/ard."$ARD_DOMAIN".*
    rm -rf "$W"
}
trap cleanup EXIT

# CPU time (ns) of a process, all its threads (user + system, in clock ticks). "%.0f", not
# "%d": mawk's %d stops at 2^31 - 1 ns, about 2 s of CPU.
TICK_NS=$((1000000000 / $(getconf CLK_TCK)))
cpu_ns() {
    awk -v t=$TICK_NS '{printf "%.0f", ($14 + $15) * t}' /proc/"$1"/stat 2>/dev/null || echo 0
}
# Packets published so far: "written=" of ros2_bench, or ardnet's routes' "sent=" summed.
published() { # PID ERRFILE N
    kill -USR1 "$1" 2>/dev/null || { echo 0; return; }
    sleep 0.2
    if grep -q '^route ' "$2"; then
        grep '^route ' "$2" | tail -"$3" | tr ' ' '\n' | sed -n 's/^sent=//p' |
            awk '{t += $1} END {printf "%d", t}'
    else
        grep '^written=' "$2" | tail -1 | cut -d= -f2
    fi
}
# measure PID ERRFILE N: "cpu_ns packets" over the window.
measure() {
    local c0 p0 c1 p1
    c0=$(cpu_ns "$1")
    p0=$(published "$1" "$2" "$3")
    sleep "$S"
    c1=$(cpu_ns "$1")
    p1=$(published "$1" "$2" "$3")
    echo "$((c1 - c0)) $((p1 - p0))"
}

run_case() { # KIND N ROUND
    local kind=$1 n=$2 total=$((WARM + S + 2)) pub m peer
    $PEER $RT "$BENCH" peer "$n" $((total + 1)) "$kind" >"$W/peer.out" 2>"$W/peer.err" &
    peer=$!
    PIDS+=($peer)
    if [ "$kind" = bare ]; then
        sleep 0.5
        $PUB $RT "$BENCH" bare "$n" "$total" 2>"$W/pub.err" &
        pub=$!
        PIDS+=($pub)
    else
        $PUB $RT "$BENCH" writer "$n" $((total + 1)) 2>"$W/writer.err" &
        PIDS+=($!)
        echo "routes:" >"$W/routes.yaml"
        for ((i = 0; i < n; i++)); do
            printf '  - {in: bench.k%d, out: "ros2:/bench/k%d", qos: %s}\n' $i $i \
                "$ROS2_BENCH_QOS" >>"$W/routes.yaml"
        done
        sleep 0.5
        $PUB $RT "$ARDNET" --config "$W/routes.yaml" 2>"$W/pub.err" &
        pub=$!
        PIDS+=($pub)
    fi
    sleep "$WARM"
    m=$(measure "$pub" "$W/pub.err" "$n")
    wait "$peer" || true
    kill "$pub" 2>/dev/null || true
    wait "$pub" 2>/dev/null || true
    wait 2>/dev/null || true
    PIDS=()
    rm -f /dev/shm/ard."$ARD_DOMAIN".*
    local round=$3 res
    res=$(sed -n 's/.*received=\([0-9]*\) med_us=\([0-9.]*\) p99_us=\([0-9.]*\) first10_med_us=\([0-9.]*\) last10_med_us=\([0-9.]*\)/\1 \2 \3 \4 \5/p' "$W/peer.out")
    if [ -z "$res" ]; then # the peer printed no result: say so, with what it said
        printf '%-6s N=%-3d round %d: the peer printed no result: %s\n' "$kind" "$n" "$round" \
            "$(tail -n 3 "$W/peer.err" "$W/peer.out" 2>/dev/null | tr '\n' ' ')"
        return
    fi
    set -- $m $res
    if [ "$2" = 0 ]; then # (the publisher was gone before the window: nothing to count)
        printf '%-6s N=%-3d round %d: no packets counted in the window (publisher gone?): left out\n' \
            "$kind" "$n" "$round"
        return
    fi
    local per
    per=$(awk -v c="$1" -v p="$2" 'BEGIN {printf "%.2f", p ? c / p / 1000 : 0}')
    printf '%-6s N=%-3d round %d: cpu/pkt %6s us  published %6d  received %6d  median %6s us  p99 %7s us' \
        "$kind" "$n" "$round" "$per" "$2" "$3" "$4" "$5"
    # With many connections: the median of the first and of the last tenth of the topics.
    [ "$n" = 1 ] && echo || printf '  (first tenth %s, last tenth %s us)\n' "$6" "$7"
    echo "$kind $n $per $4 $5" >>"$W/results"
}

echo "ros2: benchmark, QoS $ROS2_BENCH_QOS, ${S} s windows, $ROUNDS rounds, $ROS2_BENCH_SIZE bytes at $ROS2_BENCH_RATE Hz per connection, stamped at $ROS2_BENCH_STAMP, PRIO=${PRIO:-none}, PIN=${PIN:-none}, $(nproc) CPUs"
for n in $CASES; do
    for ((r = 1; r <= ROUNDS; r++)); do
        run_case bare $n $r
        run_case ardnet $n $r
    done
done
echo "medians over rounds:"
for n in $CASES; do
    awk -v n=$n '
        function med(a, k,   i, j, t) { for (i = 1; i <= k; i++) for (j = i + 1; j <= k; j++)
            if (a[j] < a[i]) { t = a[i]; a[i] = a[j]; a[j] = t } return a[int((k + 1) / 2)] }
        $2 == n { k[$1]++; cpu[$1, k[$1]] = $3; md[$1, k[$1]] = $4; p99[$1, k[$1]] = $5 }
        END {
            for (s in k) { delete c; delete m; delete q
                for (i = 1; i <= k[s]; i++) { c[i] = cpu[s, i]; m[i] = md[s, i]; q[i] = p99[s, i] }
                C[s] = med(c, k[s]); M[s] = med(m, k[s]); P[s] = med(q, k[s]) }
            printf "N=%-3d bare:   cpu/pkt %.2f us, latency median %.1f us, p99 %.1f us\n", n, C["bare"], M["bare"], P["bare"]
            printf "N=%-3d ardnet: cpu/pkt %.2f us, latency median %.1f us, p99 %.1f us\n", n, C["ardnet"], M["ardnet"], P["ardnet"]
            printf "N=%-3d ratio cpu/pkt ardnet/bare %.2f (target <= 1.2), added median latency %.1f us (target <= 20)\n", n, C["bare"] ? C["ardnet"] / C["bare"] : 0, M["ardnet"] - M["bare"]
        }' "$W/results"
done
