#!/bin/bash
# ard_hz.sh - `ard hz` measures known rates: writers at 10 Hz, 200 Hz, 2 kHz and, alone
# afterwards (it spins on a CPU), 100 kHz, each reporting the rate it achieved, and a 0.1 Hz
# writer's history (packets stamped 10 s apart); the printed rate must be within 10% of the
# writer's own figure, and equal to the rate of some run of consecutive packets the writer
# sent (the writer lists every send time: on a loaded machine the writer's rate over its
# whole run and over ard hz's window differ, the rate of the packets ard hz saw does not).
# Packet size does not matter: a 4 MiB connection at 200 Hz is measured
# the same way. `ard delay` reports a delay for every connection it was given.
TEST_NAME=hz
. "$(dirname "$0")/common.sh"
: "${TWRITER:?set TWRITER}"

check() { # check NAME EXPECTED_HZ MEASURED_HZ
    /usr/bin/python3 -c "import sys; e,m=float(sys.argv[1]),float(sys.argv[2]); sys.exit(0 if abs(m-e)<=0.1*e else 1)" \
        "$2" "$3" || fail "$1: ard hz says $3 Hz, the writer achieved $2 Hz"
    echo "$1: writer $2 Hz, ard hz $3 Hz"
}

# check_window NAME STAMPS_FILE HZ_JSON_LINE RATE: ard hz's rate over its `packets` is the
# rate of packets k .. k+packets-1 of the writer's send times, for some k (to 1 part in 10^6),
# and it saw at least a fifth of what the nominal RATE sends in its 2.5 s window.
check_window() {
    /usr/bin/python3 - "$2" "$3" "$4" <<'PY' || fail "$1: ard hz's rate is not that of any run of the writer's packets: $3"
import json, sys
s = [int(l) for l in open(sys.argv[1])]
d = json.loads(sys.argv[2])
n, got = d["packets"] - 1, d["rate_hz"]
if n < 0.2 * 2.5 * float(sys.argv[3]):
    sys.exit(f"only {n + 1} packets seen")
best = min((abs(n / (s[k + n] - s[k]) * 1e9 - got) for k in range(len(s) - n) if s[k + n] > s[k]),
           default=float("inf"))
if best > 1e-6 * got:
    sys.exit(f"nearest run differs by {best:.6g} Hz ({n} periods, {len(s)} send times)")
PY
}

measure() { # measure NAME:RATE:TYPE... : start the writers, ard hz over 2.5 s, compare
    local spec n rate type names=()
    local -A rates=()
    for spec in "$@"; do
        IFS=: read -r n rate type <<<"$spec"
        rates[$n]=$rate
        TWRITER_STAMPS="$T/$n.stamps" "$TWRITER" "$n" "$type" "$rate" 3 >"$T/$n.w" &
        PIDS+=($!)
        names+=("$n")
    done
    for n in "${names[@]}"; do # every writer has created its connection (a 4 MiB one takes longer)
        wait_for "$ARD" show "$n"
    done
    "$ARD" hz "${names[@]}" -n 1 -i 2.5 --json >>"$T/hz"
    for n in "${names[@]}"; do
        wait_for grep -q achieved "$T/$n.w"
        want=$(awk '{print $2}' "$T/$n.w")
        line=$(/usr/bin/python3 -c "import json,sys
for l in open(sys.argv[1]):
    d=json.loads(l)
    if d['connection']==sys.argv[2]: print(l.strip())" "$T/hz" "$n")
        got=$(/usr/bin/python3 -c "import json,sys; print(json.loads(sys.argv[1])['rate_hz'])" "$line")
        check_window "$n" "$T/$n.stamps" "$line" "${rates[$n]}"
        echo "$n: writer $want Hz over its run, ard hz $got Hz over the packets it saw"
    done
}
measure r10:10:n:u64 r200:200:n:u64 r2k:2000:n:u64 'big:200:b:u8[4194304]'
measure r100k:100000:n:u64
# Periods were measured too (min <= mean <= max).
/usr/bin/python3 - "$T/hz" <<'PY' || fail "period statistics: $(cat "$T/hz")"
import json, sys
for l in open(sys.argv[1]):
    d = json.loads(l)
    assert d["periods"] > 0 and d["period_min_ns"] <= d["period_mean_ns"] <= d["period_max_ns"], d
PY

# 0.1 Hz: eight packets stamped 10 s apart, as a slow writer leaves them in the ring.
"$TWRITER" slow 'n:u64' stamped 10 8 >"$T/slow.w" &
PIDS+=($!)
wait_for grep -q sent "$T/slow.w"
got=$("$ARD" hz slow -n 1 -i 0.2 --json | /usr/bin/python3 -c "import json,sys; print(json.load(sys.stdin)['rate_hz'])")
check slow 0.1 "$got"
"$ARD" hz slow -n 1 -i 0.2 | grep -qE '^slow: rate 0.1 Hz  period min 10.00 s max 10.00 s' ||
    fail "hz text: $("$ARD" hz slow -n 1 -i 0.2)"

# delay: a figure for each connection, from packets received while it ran.
"$TWRITER" d200 n:u64 200 3 >/dev/null &
PIDS+=($!)
"$TWRITER" d2k n:u64 2000 3 >/dev/null &
PIDS+=($!)
wait_for "$ARD" show d2k
"$ARD" delay d200 d2k -n 1 -i 1.5 --json >"$T/delay"
# Positive and below a second on this host.
/usr/bin/python3 - "$T/delay" <<'PY' || fail "delay: $(cat "$T/delay")"
import json, sys
v = [json.loads(l) for l in open(sys.argv[1])]
assert [d["connection"] for d in v] == ["d200", "d2k"], v
for d in v:
    assert d["packets"] > 10 and 0 < d["delay_min_ns"] <= d["delay_mean_ns"] < 1e9, d
PY
echo ok
