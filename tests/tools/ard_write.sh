#!/bin/bash
# ard_write.sh - `ard set` and `ard pub` create a connection that does not exist when given
# --type (or --size for an opaque one), and check an existing one against it; -n 0 is
# refused and 'forever' is -n's spelling of "until interrupted"; `ard siggen` names a field
# that does not exist before judging its shape.
TEST_NAME=write
. "$(dirname "$0")/common.sh"

# set --type: created, the packet written, the type kept.
"$ARD" set pose --type 'x:f64 y:f64 id:u16' x=1.5 id=7
"$ARD" show pose --json | python3 -c "
import json, sys
d = json.load(sys.stdin)
f = d['fields']; assert f['x'] == 1.5 and f['y'] == 0 and f['id'] == 7 and d['seq'] == 1, d" ||
    fail "set --type: $("$ARD" show pose --json)"
"$ARD" list --json pose | grep -q '"type":"x:f64 y:f64 id:u16"' || fail "type: $("$ARD" list --json pose)"
# Existing: the same type is fine (and the last value kept), another refused before writing.
"$ARD" set pose --type 'x:f64 y:f64 id:u16' y=2
[ "$("$ARD" show pose --field x --field y --format csv | tail -1 | cut -d, -f5-)" = "1.5,2" ] ||
    fail "set on an existing connection: $("$ARD" show pose --format csv)"
expect 100 "connection 'pose' exists with type 'x:f64 y:f64 id:u16', --type says 'x:f32'" \
    "$ARD" set pose --type x:f32 x=1
expect 100 "--type: " "$ARD" set newc --type 'x:f65' x=1
[ ! -e "/dev/shm/ard.$ARD_DOMAIN.newc" ] || fail "a bad --type created the connection"
expect 100 "field 'z' does not exist" "$ARD" set newc2 --type 'x:f64' z=1
# A helper's failure is said once, by the subcommand: one line, "ard SUB: DETAIL".
[ "$(cat "$T/err")" = "ard set: field 'z' does not exist (fields: x)" ] || fail "set z=1: $(cat "$T/err")"
expect 1 "does not exist" "$ARD" set nope x=1
[ "$(wc -l <"$T/err")" = 1 ] || fail "set nope: not one line: $(cat "$T/err")"
expect 100 "--type needs a value" "$ARD" set pose --type

# Opaque: --size creates it (one packet of zeros); fields cannot be set; sizes are checked.
"$ARD" set blob --size 64
"$ARD" list --json blob | grep -q '"size":64' || fail "opaque size: $("$ARD" list --json blob)"
[ "$("$ARD" show blob --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["seq"])')" = 1 ] ||
    fail "set --size wrote no packet"
expect 100 "--size says an opaque 32" "$ARD" set blob --size 32
expect 100 "--size says an opaque 16" "$ARD" set pose --size 16
expect 100 "--size 0: a connection holds at least 1 byte" "$ARD" set blob2 --size 0
expect 100 "--size 8: type 'x:f64 y:f64' is 16 bytes" "$ARD" set c3 --type 'x:f64 y:f64' --size 8
expect 100 "opaque (no type)" "$ARD" set blob --size 64 f0=1

# pub --type: created, COUNT packets at the rate.
"$ARD" pub cnt --type 'n:u32' -n 5 -r 200 n=3
"$ARD" show cnt --json | python3 -c "
import json, sys
d = json.load(sys.stdin)
assert d['fields']['n'] == 3 and d['seq'] == 5, d" || fail "pub --type: $("$ARD" show cnt --json)"
"$ARD" pub raw --size 100 -n 2 -r 100
"$ARD" list --json raw | grep -q '"size":100' || fail "pub --size: $("$ARD" list --json raw)"
expect 100 "exists with type 'n:u32', --type says 'n:u64'" "$ARD" pub cnt --type n:u64 -n 1

# -n: 0 refused (it would send nothing), 'forever' until interrupted.
expect 100 "-n 0: nothing would be sent; give 1 or more, or 'forever'" "$ARD" pub cnt -n 0
expect 100 "--count 0: nothing would be sent" "$ARD" siggen cnt n=sine --count 0
expect 100 "-n 'x': expected a whole number" "$ARD" pub cnt -n x
"$ARD" pub cnt -n forever -r 1000 n=9 &
P=$!
PIDS+=($P)
wait_for "$ARD" show cnt --field n --format csv
sleep 0.3
kill -INT $P
rc=0
wait $P || rc=$?
[ "$rc" = 0 ] || fail "pub -n forever interrupted exited $rc"
seq=$("$ARD" show cnt --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["seq"])')
[ "$seq" -gt 50 ] || fail "pub -n forever sent only up to seq $seq"

# siggen: a field that does not exist is named before the shape is judged.
"$ARD" set arm.cmd --type 'tau:f64[7]' 'tau=0'
expect 100 "field 'f0' does not exist (fields: tau)" "$ARD" siggen arm.cmd f0=wobble
expect 100 "tau: unknown shape 'wobble'" "$ARD" siggen arm.cmd tau=wobble

# Completion knows the new options.
ard() { "$ARD" "$@"; } # the completion asks ard for the options
. "$SRCDIR/src/tools/ard.bash"
COMP_WORDS=(ard pub cnt --s) COMP_CWORD=3
_ard || true
[ "${COMPREPLY[*]}" = --size ] || fail "completion of pub --s: ${COMPREPLY[*]}"
COMP_WORDS=(ard set cnt --t) COMP_CWORD=3
_ard || true
[ "${COMPREPLY[*]}" = --type ] || fail "completion of set --t: ${COMPREPLY[*]}"
echo ok
