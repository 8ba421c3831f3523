# bench/ros2/run.sh runs end to end (1 s windows, one round): every case published and the
# peer received, and the summary lines are printed. No timing is checked (the figures are
# read by a person: docs/performance.md).
set -euo pipefail
: "${SRCDIR:?} ${BUILDDIR:?}"
[ "$(id -u)" = 0 ] || { echo "skipped: needs root"; exit 77; }
out=$(mktemp)
trap 'rm -f "$out"' EXIT
SECONDS_RUN=1 ROUNDS=1 WARM=2 bash "$SRCDIR/bench/ros2/run.sh" "$BUILDDIR" >"$out" 2>&1 ||
    { cat "$out"; echo "FAIL: run.sh exit status"; exit 1; }
cat "$out"
! grep -q 'printed no result' "$out" || { echo "FAIL: the peer printed no result"; exit 1; }
[ "$(grep -c ' round 1: ' "$out")" = 4 ] || { echo "FAIL: not 4 cases"; exit 1; }
if grep ' round 1: ' "$out" | grep -Eq 'published +0 |received +0 '; then
    echo "FAIL: a case published or received nothing"
    exit 1
fi
[ "$(grep -c 'ratio cpu/pkt ardnet/bare' "$out")" = 2 ] || { echo "FAIL: no summary"; exit 1; }
