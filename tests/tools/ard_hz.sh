#!/bin/bash
# ard_hz.sh - `ard hz` measures known rates: writers at 10 Hz, 200 Hz, 2 kHz and a busy
# 20 kHz (each reports the rate it achieved) and a 0.1 Hz writer's history (packets stamped
# 10 s apart); the printed rate must be within 10% of the writer's own figure (a loose
# tolerance: the machine is shared, and both figures come from the same send times).
# Packet size does not matter: a 4 MiB connection at 200 Hz is measured the same way.
# `ard delay` reports a delay for every connection it was given.
TEST_NAME=hz
. "$(dirname "$0")/common.sh"
: "${TWRITER:?set TWRITER}"

check() { # check NAME EXPECTED_HZ MEASURED_HZ
    python3 -c "import sys; e,m=float(sys.argv[1]),float(sys.argv[2]); sys.exit(0 if abs(m-e)<=0.1*e else 1)" \
        "$2" "$3" || fail "$1: ard hz says $3 Hz, the writer achieved $2 Hz"
    echo "$1: writer $2 Hz, ard hz $3 Hz"
}

for spec in "r10 10 3" "r200 200 3" "r2k 2000 3" "r20k 20000 3" "big 200 3"; do
    set -- $spec
    type='n:u64'
    [ "$1" = big ] && type='b:u8[4194304]'
    "$TWRITER" "$1" "$type" "$2" "$3" >"$T/$1.w" &
    PIDS+=($!)
done
wait_for "$ARD" show r10 --field n
"$ARD" delay r200 r2k -n 1 -i 2 --json >"$T/delay" &
D=$!
"$ARD" hz r10 r200 r2k r20k big -n 1 -i 2.5 --json >"$T/hz"
wait "$D" || fail "ard delay failed"
for n in r10 r200 r2k r20k big; do
    wait_for grep -q achieved "$T/$n.w"
    want=$(awk '{print $2}' "$T/$n.w")
    got=$(python3 -c "import json,sys
for l in open(sys.argv[1]):
    d=json.loads(l)
    if d['connection']==sys.argv[2]: print(d['rate_hz'])" "$T/hz" "$n")
    check "$n" "$want" "$got"
done
# Periods were measured too (min <= mean <= max).
python3 - "$T/hz" <<'PY' || fail "period statistics: $(cat "$T/hz")"
import json, sys
for l in open(sys.argv[1]):
    d = json.loads(l)
    assert d["periods"] > 0 and d["period_min_ns"] <= d["period_mean_ns"] <= d["period_max_ns"], d
PY

# 0.1 Hz: eight packets stamped 10 s apart, as a slow writer leaves them in the ring.
"$TWRITER" slow 'n:u64' stamped 10 8 >"$T/slow.w" &
PIDS+=($!)
wait_for grep -q sent "$T/slow.w"
got=$("$ARD" hz slow -n 1 -i 0.2 --json | python3 -c "import json,sys; print(json.load(sys.stdin)['rate_hz'])")
check slow 0.1 "$got"
"$ARD" hz slow -n 1 -i 0.2 | grep -qE '^slow: rate 0.1 Hz  period min 10.00 s max 10.00 s' ||
    fail "hz text: $("$ARD" hz slow -n 1 -i 0.2)"

# delay: a figure for each connection, positive and below a second on this host.
python3 - "$T/delay" <<'PY' || fail "delay: $(cat "$T/delay")"
import json, sys
v = [json.loads(l) for l in open(sys.argv[1])]
assert [d["connection"] for d in v] == ["r200", "r2k"], v
for d in v:
    assert d["packets"] > 10 and 0 < d["delay_min_ns"] <= d["delay_mean_ns"] < 1e9, d
PY
echo ok
