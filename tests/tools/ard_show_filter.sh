#!/bin/bash
# ard_show_filter.sh - `ard show --filter EXPR` prints only the packets for which EXPR holds
# (comparisons, &&, ||, parentheses, q[0] paths, integer %), and refuses a bad expression
# naming the column of the bad token; `--on-change` prints a packet only when the selected
# fields changed; u8 arrays holding NUL-terminated printable bytes print as text, and
# `--text FIELD` forces it.
TEST_NAME=showf
. "$(dirname "$0")/common.sh"

# One packet: the filter decides whether it is printed (exit 4 when it does not pass).
"$ARD" set s --type 'q:f64[3] tick:u32 name:u8[8] raw:u8[4]' 'q=0.7,0,-1' tick=20 \
    name=104,105,0,0,0,0,0,0 raw=1,2,3,0
pass() { "$ARD" show s --filter "$1" >/dev/null || fail "--filter '$1' did not pass"; }
nopass() { expect 4 "does not pass --filter" "$ARD" show s --filter "$1"; }
pass 'q[0] > 0.5 && tick % 10 == 0'
nopass 'q[0] > 0.5 && tick % 3 == 0'
pass 'q[0] < 0 || tick == 20'
nopass '!(tick == 20)'
pass '(q[2] + 1) * 2 == 0 && -q[2] >= 1'
pass 'tick / 8 == 2.5 && tick != 21 && tick <= 20 && q[1] == 0'
nopass 'tick % 0 == 0' # remainder by zero: NaN, never true
pass '0x14 == tick'

# Bad expressions: exit 100, the column of the bad token.
expect 100 "--filter 'q > 1': column 1: 'q' has 3 elements: name one, as in q[0]" \
    "$ARD" show s --filter 'q > 1'
expect 100 "column 6: '=' is not a comparison (use '==')" "$ARD" show s --filter 'q[0] = 1'
expect 100 "column 6: '&' is not an operator (use '&&')" "$ARD" show s --filter 'tick & 1'
expect 100 "column 10: expected ')' at the end" "$ARD" show s --filter '(tick > 1'
expect 100 "column 8: expected a value at the end" "$ARD" show s --filter 'tick > '
expect 100 "column 10: unexpected text at '2'" "$ARD" show s --filter 'tick > 1 2'
expect 100 "column 3: not a field of the connection at 'qq > 1'" "$ARD" show s --filter '  qq > 1'
expect 100 "column 7: unexpected text at '< 3'" "$ARD" show s --filter '1 < 2 < 3'
expect 100 "column 10: not a field" "$ARD" show s --filter 'tick==1||q[9]>0'
grep -q "index out of range" "$T/err" || fail "index out of range: $(cat "$T/err")"
# One message: the column, and what was wrong with the path.
[ "$(wc -l <"$T/err")" = 1 ] || fail "--filter q[9]: not one line: $(cat "$T/err")"
expect 100 "--filter needs a value" "$ARD" show s --filter
expect 100 "--filter given twice" "$ARD" show s --filter 'tick > 1' --filter 'tick < 3'

# Text: the automatic rule and --text.
"$ARD" show s >"$T/text"
grep -qx '  name = "hi"' "$T/text" || fail "automatic text: $(cat "$T/text")"
grep -qx '  raw  = 1 2 3 0' "$T/text" || fail "non-printable bytes stay numbers: $(cat "$T/text")"
"$ARD" show s --text raw --json | python3 -c "
import json, sys
f = json.load(sys.stdin)['fields']
assert f['name'] == [104, 105, 0, 0, 0, 0, 0, 0] and f['raw'] == '\x01\x02\x03', f" ||
    fail "json: automatic text is for the text format only, --text for any: $("$ARD" show s --text raw --json)"
"$ARD" show s --text raw --format csv | tail -1 | grep -q ',"\\x01\\x02\\x03"$' ||
    fail "csv --text: $("$ARD" show s --text raw --format csv)"
expect 100 "--text tick: only a whole u8 or i8 array is text" "$ARD" show s --text tick
expect 100 "field 'nope' does not exist" "$ARD" show s --text nope
# Several NUL-padded names (as GROUP.names holds them): each one a string.
"$ARD" set names --type 'u8[12]' 'f0=97,0,0,0,98,99,0,0,0,0,0,0'
"$ARD" show names | grep -qx '  f0 = "a" "bc"' || fail "names: $("$ARD" show names)"
"$ARD" show names --json --text f0 | grep -q '"f0":\["a","bc"\]' ||
    fail "names json: $("$ARD" show names --json --text f0)"

# Following: a ramp tick=0,1,2,... at 200 Hz; only multiples of 10 pass. The writer runs
# for up to 20 s (killed at exit), so that a loaded machine's slow start of each reader
# below still finds enough packets to come.
"$ARD" siggen ramp --type 'tick:u32 x:f64' 'tick=ramp,amplitude=200' 'x=square,frequency=4' \
    --rate 200 -n 4000 &
PIDS+=($!)
wait_for "$ARD" show ramp
timeout 10 "$ARD" show ramp -f --filter 'tick % 10 == 0 && tick > 0' --field tick --format csv \
    -n 5 >"$T/f" || fail "show -f --filter: $(cat "$T/f")"
python3 - "$T/f" <<'PY' || fail "filtered: $(cat "$T/f")"
import sys
rows = [l.strip().split(",") for l in open(sys.argv[1])][1:]
assert len(rows) == 5, rows
ticks = [int(r[-1]) for r in rows]
assert all(t % 10 == 0 and t > 0 for t in ticks) and ticks == sorted(ticks), ticks
PY
# --on-change: x is a 4 Hz square wave (a change every 25 packets): every row printed
# differs from the one before, and far fewer rows than packets.
timeout 10 "$ARD" show ramp --on-change --field x --format csv -n 4 >"$T/c" ||
    fail "show --on-change: $(cat "$T/c")"
python3 - "$T/c" <<'PY' || fail "on-change: $(cat "$T/c")"
import sys
rows = [l.strip().split(",") for l in open(sys.argv[1])][1:]
assert len(rows) == 4, rows
x = [float(r[-1]) for r in rows]
assert all(a != b for a, b in zip(x, x[1:])), x
seqs = [int(r[0]) for r in rows]
assert all(b - a >= 15 for a, b in zip(seqs[1:], seqs[2:])), seqs  # changes: 25 apart
PY

# Completion knows the new options.
ard() { "$ARD" "$@"; }
. "$SRCDIR/src/tools/ard.bash"
COMP_WORDS=(ard show s --on) COMP_CWORD=3
_ard || true
[ "${COMPREPLY[*]}" = --on-change ] || fail "completion of --on: ${COMPREPLY[*]}"
COMP_WORDS=(ard show s --text n) COMP_CWORD=4
_ard || true
[ "${COMPREPLY[*]}" = name ] || fail "completion of --text: ${COMPREPLY[*]}"
echo ok
