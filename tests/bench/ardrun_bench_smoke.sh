#!/bin/bash
# ardrun_bench runs end to end (hand loop, the group with and without ARD_PORT_WHOLE, the 40
# processes; two short rounds at one rate, no realtime priority, no CPU pinning) and prints
# every row of its table; no figure is checked (they are read by a person, docs/performance.md).
set -u
out=$("$BUILDDIR/bench/ardrun/ardrun_bench" --seconds 0.2 --rounds 2 --prio 0 --cpu '' \
    --rates 1000 2>&1)
rc=$?
echo "$out"
[ "$rc" = 0 ] || exit 1
for row in "round 1 " "round 2 " "step per block" "framework overhead" "wake-up delay" \
    "CPU per tick" "tick -> last packet" "40 procs"; do
    grep -q -- "$row" <<<"$out" || {
        echo "FAIL: no '$row' row"
        exit 1
    }
done
[ "$(grep -c 'framework overhead' <<<"$out")" = 2 ] || {
    echo "FAIL: expected the overhead of both groups (with and without the flag)"
    exit 1
}
# the hand loop keeps per-block statistics (mean and max of every block's execution time)
grep -Eq "hand loop's own per-block statistics \(last round\): mean [1-9][0-9]* ns, largest max [0-9.]+ us" <<<"$out" || {
    echo "FAIL: no per-block statistics of the hand loop"
    exit 1
}
echo "all rows printed"
