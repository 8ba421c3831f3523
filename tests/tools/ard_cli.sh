#!/bin/bash
# ard_cli.sh - the ard command end to end: help and version, list (columns, orphans, json),
# show (text, csv, json, --field, opaque hex), set (other fields keep their value, refused
# with the live writer's pid), every documented exit code and bad input of every kind.
TEST_NAME=cli
. "$(dirname "$0")/common.sh"
: "${TWRITER:?set TWRITER}"

# ---- help, version, usage errors -------------------------------------------------------------
grep -q '^ard (ardnet) [0-9]' <<<"$("$ARD" --version)" || fail "--version"
grep -q 'siggen' <<<"$("$ARD" help)" || fail "ard help lists the subcommands"
for s in list show hz delay set pub graph siggen; do
    grep -q "usage: ard $s" <<<"$("$ARD" help $s)" || fail "ard help $s"
    grep -q "usage: ard $s" <<<"$("$ARD" $s --help)" || fail "ard $s --help"
done
expect 100 "'frobnicate' is not a subcommand" "$ARD" frobnicate
expect 100 "no subcommand 'nope'" "$ARD" help nope
expect 100 "" "$ARD"
expect 100 "domain" "$ARD" --domain 'bad.domain' list
# One rule for the domain in every program: the option, else $ARD_DOMAIN, else "default"; a
# bad name is refused with exit 100, naming where it came from.
expect 100 "option '--domain': domain name 'bad.domain'" "$ARD" --domain 'bad.domain' list
expect 100 "option '--domain': domain name is empty" "$ARD" --domain= list
expect 100 "environment ARD_DOMAIN: domain name 'bad.domain'" env ARD_DOMAIN=bad.domain "$ARD" list
if [ -n "${ARDSTART:-}" ]; then
    expect 100 "environment ARD_DOMAIN: domain name 'bad.domain'" \
        env ARD_DOMAIN=bad.domain "$ARDSTART" --list
    expect 100 "option '--domain': domain name 'bad.domain'" "$ARDSTART" --domain bad.domain --list
    expect 100 "environment ARD_DOMAIN: domain name 'bad.domain'" env ARD_DOMAIN=bad.domain "$ARDKILL"
fi
if [ -n "${ARDNET:-}" ]; then
    expect 100 "environment ARD_DOMAIN: domain name 'bad.domain'" \
        env ARD_DOMAIN=bad.domain "$ARDNET" --in x --out udp://127.0.0.1:9
fi
expect 100 "unknown option '--bogus'" "$ARD" list --bogus
expect 100 "which connection" "$ARD" show
expect 100 "--format 'xml'" "$ARD" show x --format xml

# ---- a typed connection, written by hand ---------------------------------------------------------
"$TWRITER" js 'q:f64[3] tick:u32 i8 flags:u8[2]' stamped 1 1 >"$T/w" &
PIDS+=($!)
wait_for grep -q sent "$T/w"
kill -9 "${PIDS[0]}"
wait "${PIDS[0]}" 2>/dev/null || true
# The writer is dead: set takes over, and fields not named keep their last value.
"$ARD" set js 'q[1]=1.5' tick=7 || fail "set"
"$ARD" set js f2=-3 flags=1,255 || fail "set by fallback name and list"
"$ARD" show js >"$T/show" || fail "show"
grep -q '^js  seq 3  age ' "$T/show" || fail "show header: $(cat "$T/show")"
grep -qE '^  q +(= 0 1.5 0)$' "$T/show" || fail "q after set: $(cat "$T/show")"
grep -qE '^  tick += 7$' "$T/show" || fail "tick kept its value: $(cat "$T/show")"
grep -qE '^  f2 += -3$' "$T/show" || fail "f2: $(cat "$T/show")"
grep -qE '^  flags += 1 255$' "$T/show" || fail "flags: $(cat "$T/show")"
"$ARD" show js --field 'q[1]' --field tick --format csv >"$T/csv"
[ "$(sed -n 1p "$T/csv")" = "seq,mono_ns,real_ns,skipped,q[1],tick" ] || fail "csv header: $(cat "$T/csv")"
sed -n 2p "$T/csv" | grep -qE '^3,[0-9]+,[0-9]+,0,1.5,7$' || fail "csv row: $(cat "$T/csv")"
"$ARD" show js --json >"$T/json"
/usr/bin/python3 - "$T/json" <<'PY' || fail "show --json: $(cat "$T/json")"
import json, sys
d = json.loads(open(sys.argv[1]).read())
assert d["connection"] == "js" and d["seq"] == 3, d
assert d["fields"] == {"q": [0, 1.5, 0], "tick": 7, "f2": -3, "flags": [1, 255]}, d["fields"]
assert d["type"] == "q:f64[3] tick:u32 i8 flags:u8[2]"
PY

# ---- bad field paths and values name what is wrong -------------------------------------------------
expect 100 "field 'qq' does not exist (fields: q tick f2 flags)" "$ARD" set js qq=1
expect 100 "field 'q[3]': index out of range (q has 3 elements)" "$ARD" set js 'q[3]=1'
expect 100 "field 'q[x]': expected an index" "$ARD" show js --field 'q[x]'
expect 100 "field 'q[1': expected NAME or NAME[INDEX]" "$ARD" set js 'q[1=2'
expect 100 "tick=abc: 'abc' is not an integer (the field is u32)" "$ARD" set js tick=abc
expect 100 "tick=-1: out of range for u32" "$ARD" set js tick=-1
expect 100 "f2=128: out of range for i8" "$ARD" set js f2=128
expect 100 "q[0]=1.2.3: '1.2.3' is not a number" "$ARD" set js 'q[0]=1.2.3'
expect 100 "3 values given, the field has 2 elements" "$ARD" set js flags=1,2,3
expect 100 "expected FIELD=VALUE" "$ARD" set js tick
expect 100 "nothing to set" "$ARD" set js
# None of the refused ones wrote anything.
"$ARD" show js --field tick --format csv | tail -1 | grep -qE '^3,.*,7$' || fail "a refused set wrote"

# ---- a live writer refuses set and pub, naming its pid -----------------------------------------------
"$TWRITER" js 'q:f64[3] tick:u32 i8 flags:u8[2]' 50 60 >"$T/w2" &
W=$!
PIDS+=($W)
wait_for "$ARD" hz js -n 1 -i 0.1
expect 2 "already has a live writer (pid $W)" "$ARD" set js tick=1
expect 2 "already has a live writer (pid $W)" "$ARD" pub js tick=1 -n 1

# ---- list ------------------------------------------------------------------------------------------
"$TWRITER" raw opaque:5 stamped 1 1 >/dev/null &
PIDS+=($!)
wait_for "$ARD" show raw
"$ARD" list >"$T/list"
head -1 "$T/list" | grep -qE '^CONNECTION +SIZE +TYPE +WRITER +READERS +RATE +AGE +COUNT' ||
    fail "list header: $(cat "$T/list")"
grep -qE "^js +32 +q:f64\[3\] tick:u32 i8 flags:u8\[2\] +$W ard_twriter +0 +[0-9.]+ Hz +.* [0-9]+$" "$T/list" ||
    fail "list row of js: $(cat "$T/list")"
# Readers are the live ones: a reader killed with -9 is gone from the count at once.
"$ARD" show js -f >/dev/null &
RD=$!
PIDS+=($RD)
readers() { "$ARD" list --json js | /usr/bin/python3 -c 'import json,sys; print(json.load(sys.stdin)[0]["readers"])'; }
one_reader() { [ "$(readers)" = 1 ]; }
wait_for one_reader
"$ARD" list -l js | grep -qE "^ +reader +pid $RD ard port show_0 attached 20" ||
    fail "list -l: $("$ARD" list -l js)"
"$ARD" list -l js | grep -qE "^ +writer +pid $W ard_twriter port out attached " ||
    fail "list -l writer: $("$ARD" list -l js)"
# -l --json carries the same: mode, owner and every attached port
"$ARD" list -l --json js >"$T/llj"
python3 - "$T/llj" "$W" "$RD" "$(id -u)" <<'PY' || fail "list -l --json: $(cat "$T/llj")"
import json, sys
c = json.load(open(sys.argv[1]))[0]
assert c["mode"] == "0600" and c["uid"] == int(sys.argv[4]), c
ports = {p["role"]: p for p in c["ports"]}
assert len(c["ports"]) == 2, c["ports"]
w, r = ports["writer"], ports["reader"]
assert w["pid"] == int(sys.argv[2]) and w["program"] == "ard_twriter" and w["port"] == "out", w
assert r["pid"] == int(sys.argv[3]) and r["program"] == "ard" and r["port"] == "show_0", r
assert r["attached"].startswith("20") and r["attached_ns"] > 1.6e18, r
PY
"$ARD" list --json js | grep -q '"ports"' && fail "list --json without -l lists ports"
kill -9 "$RD"
wait "$RD" 2>/dev/null || true
[ "$(readers)" = 0 ] || fail "a killed reader is still counted"
kill -9 "${PIDS[-2]}"
wait "${PIDS[-2]}" 2>/dev/null || true
"$ARD" list 'r*' >"$T/list"
grep -qE '^raw +5 +\(opaque\) +- +0 .* 1  orphaned$' "$T/list" || fail "orphan not marked: $(cat "$T/list")"
! grep -q '^js ' "$T/list" || fail "pattern did not filter"
"$ARD" list --json >"$T/lj"
/usr/bin/python3 - "$T/lj" "$W" <<'PY' || fail "list --json: $(cat "$T/lj")"
import json, sys
v = {c["name"]: c for c in json.load(open(sys.argv[1]))}
assert v["js"]["writer"]["pid"] == int(sys.argv[2]) and v["js"]["writer"]["program"] == "ard_twriter"
assert v["js"]["orphaned"] is False and v["js"]["rate_hz"] > 10
assert v["raw"]["orphaned"] is True and v["raw"]["writer"] is None and v["raw"]["count"] == 1
PY
# Opaque connections print hex.
grep -q '^  00000000 0000000000$' <<<"$("$ARD" show raw)" || fail "opaque hex: $("$ARD" show raw)"
grep -q '"hex":"0000000000"' <<<"$("$ARD" show raw --json)" || fail "opaque json hex"
expect 100 "opaque (no type)" "$ARD" show raw --field f0
expect 100 "opaque (no type)" "$ARD" set raw f0=1

# ---- exact integers at the ends of their ranges, f32 limits ---------------------------------------
"$TWRITER" ends 'a:u64 b:i64 c:f32 d:i16 e:f64' stamped 1 1 >"$T/we2" &
PIDS+=($!)
wait_for grep -q sent "$T/we2"
kill -9 "${PIDS[-1]}"
wait "${PIDS[-1]}" 2>/dev/null || true
"$ARD" set ends a=18446744073709551615 b=-9223372036854775808 c=0.1 d=-0x8000 || fail "set ends"
"$ARD" show ends --format csv | tail -1 |
    grep -qE ',18446744073709551615,-9223372036854775808,0.1,-32768,0$' ||
    fail "exact values: $("$ARD" show ends --format csv)"
expect 100 "a=18446744073709551616: out of range for u64" "$ARD" set ends a=18446744073709551616
expect 100 "b=9223372036854775808: out of range for i64" "$ARD" set ends b=9223372036854775808
expect 100 "c=1e39: out of range for f32" "$ARD" set ends c=1e39
expect 100 "e=1e400: out of range for f64" "$ARD" set ends e=1e400
expect 100 "e=-1e400: out of range for f64" "$ARD" set ends e=-1e400
expect 100 "c=1e400: out of range for f32" "$ARD" set ends c=1e400
"$ARD" set ends d=010 e=inf || fail "set d=010 e=inf"
"$ARD" show ends --format csv | tail -1 | grep -qE ',10,inf$' ||
    fail "010 is ten, inf is inf: $("$ARD" show ends --format csv)"
"$ARD" set ends c=nan || fail "nan"
grep -q '"c":null' <<<"$("$ARD" show ends --json)" || fail "NaN in JSON is null"
if [ "$(id -u)" = 0 ]; then
    # An object of another user, or open to others, is refused with its owner and mode
    # (the library's check), and listed as foreign.
    chown 65534 /dev/shm/ard."$ARD_DOMAIN".ends
    "$ARD" list ends | grep -q '^ends  *foreign: .*uid 65534' ||
        fail "foreign object not marked: $("$ARD" list ends)"
    expect 3 "uid 65534" "$ARD" show ends
    expect 3 "uid 65534" "$ARD" hz ends -n 1
    chown 0 /dev/shm/ard."$ARD_DOMAIN".ends
    chmod 0606 /dev/shm/ard."$ARD_DOMAIN".ends
    grep -q '^ends  *foreign: .*0606' <<<"$("$ARD" list ends)" || fail "mode 0606 not foreign: $("$ARD" list ends)"
    expect 3 "0606" "$ARD" set ends a=1
    chmod 0600 /dev/shm/ard."$ARD_DOMAIN".ends
fi

# ---- unknown, wrong domain, nothing sent, damaged ---------------------------------------------------
expect 1 "connection 'nope' does not exist in domain '$ARD_DOMAIN'" "$ARD" show nope
expect 1 "connection 'js' does not exist in domain 'elsewhere'" "$ARD" --domain elsewhere show js
expect 1 "does not exist" "$ARD" hz nope -n 1
expect 1 "does not exist" "$ARD" set nope x=1
expect 100 "connection" "$ARD" show 'bad/name'
"$TWRITER" empty u32 1 0 >"$T/we" &
PIDS+=($!)
wait_for grep -q achieved "$T/we"
expect 4 "connection 'empty': nothing was sent yet" "$ARD" show empty
printf 'this is not an ardnet object, just bytes of garbage %.0s' $(seq 40) \
    >/dev/shm/ard."$ARD_DOMAIN".junk
chmod 0600 /dev/shm/ard."$ARD_DOMAIN".junk
expect 3 "connection 'junk'" "$ARD" hz junk -n 1
expect 3 "" "$ARD" show junk
"$ARD" list >"$T/list" || fail "list with a damaged object"
grep -q '^junk .*damaged' "$T/list" || fail "damaged object not marked: $(cat "$T/list")"
printf 'x' >/dev/shm/ard."$ARD_DOMAIN".tiny
chmod 0600 /dev/shm/ard."$ARD_DOMAIN".tiny
expect 3 "" "$ARD" hz tiny -n 1

# ---- pub: at a rate, fields not given keep their value ------------------------------------------------
kill -9 "$W"
wait "$W" 2>/dev/null || true
seq0=$("$ARD" show js --json | /usr/bin/python3 -c 'import json,sys; print(json.load(sys.stdin)["seq"])')
"$ARD" pub js tick=9 'q[0]=-2' --rate 200 -n 5 || fail "pub"
"$ARD" show js --json >"$T/pub"
/usr/bin/python3 - "$T/pub" "$seq0" <<'PY' || fail "pub: $(cat "$T/pub")"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["seq"] == int(sys.argv[2]) + 5, d["seq"]
assert d["fields"]["tick"] == 9 and d["fields"]["q"][0] == -2, d
PY
expect 100 "--rate '0'" "$ARD" pub js --rate 0
expect 100 "field 'nope' does not exist" "$ARD" pub js nope=1 -n 1

# ---- bash completion: subcommands, connections, field names ------------------------------------
ard() { "$ARD" "$@"; }
. "$SRCDIR/src/tools/ard.bash"
COMP_WORDS=(ard sh) COMP_CWORD=1
_ard || true
[ "${COMPREPLY[*]}" = show ] || fail "completion of 'sh': ${COMPREPLY[*]}"
COMP_WORDS=(ard show r) COMP_CWORD=2
_ard || true
[ "${COMPREPLY[*]}" = raw ] || fail "completion of a connection: ${COMPREPLY[*]}"
COMP_WORDS=(ard set js t) COMP_CWORD=3
_ard || true
[ "${COMPREPLY[*]}" = "tick=" ] || fail "completion of a field: ${COMPREPLY[*]}"
COMP_WORDS=(ard show js --field f) COMP_CWORD=4
_ard || true
[ "${COMPREPLY[*]}" = "f2 flags" ] || fail "completion of --field: ${COMPREPLY[*]}"
echo "ok"
