#!/bin/bash
# ardstart_check.sh - `ardstart --system FILE --check` sizes /dev/shm: each connection whose
# type the description gives is listed with the bytes of its object, which are the bytes of the
# object the library makes for it (made here with `ard set` and measured); each host gets the
# sum of the connections its blocks wire (a bridged one on both hosts), unsized connections are
# counted apart; nothing is started.
TEST_NAME=check
. "$(dirname "$0")/common.sh"
: "${ARDSTART:?set ARDSTART}"
cat >"$T/sys.yaml" <<'YAML'
name: sizing
hosts:
  a: ""
  b: ""
connections:
  small: u8[1000]
  big: f64[131072]
subsystems:
  - name: one
    host: a
    blocks:
      - name: w
        cmd: "true"
        out: { x: small, y: big, z: unsized }
  - name: two
    host: b
    blocks:
      - name: r
        cmd: "true"
        in: { x: small }
YAML
"$ARDSTART" --system "$T/sys.yaml" --set-host b=otherhost --check >"$T/out" 2>"$T/err" ||
    fail "--check: $(cat "$T/err")"
cat "$T/out"
obj() { awk -v c="$1" '$1 == c { print $3 }' "$T/out"; }
host() { awk -v h="$1" 'f && $1 == h { print $2 } /^HOST/ { f = 1 }' "$T/out"; }
# The object sizes the check gives are those of the objects the library makes.
"$ARD" set small --size 1000 >/dev/null
"$ARD" set big --size $((131072 * 8)) >/dev/null
for c in small big; do
    real=$(stat -c %s "/dev/shm/ard.$ARD_DOMAIN.$c")
    [ "$(obj $c)" = "$real" ] || fail "$c: --check says $(obj $c) bytes, the object has $real"
done
small=$(obj small) big=$(obj big)
grep -q "^small  *1000  *$small  *[^ ]* otherhost$" "$T/out" || fail "small is on both hosts: $(cat "$T/out")"
grep -q "^big  *1048576  *$big  *[^ ]*$" "$T/out" || fail "big is on the writer's host only: $(cat "$T/out")"
[ "$(host otherhost)" = "$small" ] || fail "otherhost needs $(host otherhost), expected $small"
here=$(awk 'f && NR > 1 { print $1; exit } /^HOST/ { f = 1 }' "$T/out")
[ "$(host "$here")" = $((small + big)) ] || fail "$here needs $(host "$here"), expected $((small + big))"
grep -q "^$here .*, and 1 without a size in the description\$" "$T/out" || fail "unsized not counted"
grep -q '^/dev/shm here (.*): [0-9]* bytes free' "$T/out" || fail "no free space named"
# Nothing started: no entry, no object but the two made above.
[ "$(find /dev/shm -maxdepth 1 -name "ard.$ARD_DOMAIN.*" | wc -l)" = 2 ] || fail "objects made by --check"
expect 100 "exclude each other" "$ARDSTART" --system "$T/sys.yaml" --check --dry-run
expect 100 "--check goes with --system" "$ARDSTART" --check true
echo "PASS: --check sizes each connection as the library makes it, per host"
