#!/bin/bash
# watch_bench.sh N SECONDS ARD...: the CPU of an idle `ard web` (no client) in a domain of N
# connections, for each ard program given, in turns, 3 rounds: what following the domain
# (the Foxglove protocol's watcher: a listing twice a second) costs. A benchmark of the
# project (docs/performance.md), not a test.
set -eu
n=${1:?N} secs=${2:?SECONDS}
shift 2
[ $# -ge 1 ] || { echo "usage: watch_bench.sh N SECONDS ARD..." >&2; exit 100; }
export ARD_DOMAIN=watchbench_$$
trap 'rm -f /dev/shm/ard.$ARD_DOMAIN.*' EXIT
for i in $(seq 1 "$n"); do "$1" set "c$i" --type "x:f64 y:f64 n:u32" x=1 >/dev/null; done
ticks=$(getconf CLK_TCK)
for round in 1 2 3; do
    for ard in "$@"; do
        "$ard" web --listen 127.0.0.1:0 --no-token >/dev/null &
        pid=$!
        sleep 2
        t0=$(awk '{print $14 + $15}' "/proc/$pid/stat")
        sleep "$secs"
        t1=$(awk '{print $14 + $15}' "/proc/$pid/stat")
        kill "$pid"
        wait "$pid" || true
        echo "round $round $ard: $(awk -v a="$t0" -v b="$t1" -v t="$ticks" -v s="$secs" \
            'BEGIN{printf "%.2f %% of a core", 100 * (b - a) / t / s}')"
    done
done
