#!/bin/bash
# ard_bw.sh - `ard bw` measures known bandwidths: a 1000-byte opaque connection at 200 Hz
# (200 kB/s) and a 7x8-byte typed one at 2 kHz (112 kB/s), each within 20% of the writer's
# own achieved rate times its size (a busy host's writer runs late and catches up); min <=
# mean <= max; each report covers only its window (a stopped writer's next window has no
# packets). Bad command lines exit 100, a missing connection 1.
TEST_NAME=bw
. "$(dirname "$0")/common.sh"
: "${TWRITER:?set TWRITER}"

"$TWRITER" b200 opaque:1000 200 3 >"$T/b200.w" &
PIDS+=($!)
"$TWRITER" b2k 'q:f64[7]' 2000 3 >"$T/b2k.w" &
PIDS+=($!)
wait_for "$ARD" show b200
wait_for "$ARD" show b2k
"$ARD" bw b200 b2k -n 2 -i 1 --json >"$T/bw"
wait_for grep -q achieved "$T/b200.w"
wait_for grep -q achieved "$T/b2k.w"
python3 - "$T/bw" "$(awk '{print $2}' "$T/b200.w")" "$(awk '{print $2}' "$T/b2k.w")" <<'PY' ||
import json, sys
want = {"b200": float(sys.argv[2]) * 1000, "b2k": float(sys.argv[3]) * 56}
v = [json.loads(l) for l in open(sys.argv[1])]
assert [d["connection"] for d in v] == ["b200", "b2k", "b200", "b2k"], v
for d in v[2:]:  # the second window: a full second of sending
    w = want[d["connection"]]
    assert abs(d["bytes_per_s"] - w) <= 0.2 * w, (d, w)
    assert d["min_bytes_per_s"] <= d["bytes_per_s"] <= d["max_bytes_per_s"], d
    assert d["packets"] > 100, d
assert v[0]["size"] == 1000 and v[1]["size"] == 56, v
print("bw:", [(d["connection"], round(d["bytes_per_s"])) for d in v[2:]], "want", want)
PY
    fail "bw: $(cat "$T/bw")"

# Text: a unit and the packet size. The writers stopped after 3 s: a window with no packets.
sleep 1
"$ARD" bw b200 -n 1 -i 0.2 >"$T/bwtext"
grep -qE '^b200: mean [0-9.]+ kB/s  min [0-9.]+ kB/s  max [0-9.]+ kB/s  over [0-9]+ packets of 1000 B$' "$T/bwtext" ||
    fail "bw text: $(cat "$T/bwtext")"
"$ARD" bw b200 -n 2 -i 0.2 | tail -1 | grep -qx 'b200: no packets in the window' ||
    fail "a stopped writer's window is not empty"

expect 100 "which connection?" "$ARD" bw
expect 100 "--interval" "$ARD" bw b200 --interval 0
expect 100 "unknown option" "$ARD" bw b200 --frobnicate
expect 1 "nosuch" "$ARD" bw nosuch -n 1
"$ARD" help bw | grep -q 'usage: ard bw' || fail "help bw"
# Completion knows the subcommand and its options.
ard() { "$ARD" "$@"; } # the completion asks ard for the options
. "$SRCDIR/src/tools/ard.bash"
COMP_WORDS=(ard b) COMP_CWORD=1
_ard || true
[ "${COMPREPLY[*]}" = bw ] || fail "completion of 'b': ${COMPREPLY[*]}"
COMP_WORDS=(ard bw b200 --int) COMP_CWORD=3
_ard || true
[ "${COMPREPLY[*]}" = --interval ] || fail "completion of bw's options: ${COMPREPLY[*]}"
echo ok
