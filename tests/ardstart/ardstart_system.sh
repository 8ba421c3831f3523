#!/bin/bash
# ardstart --system: the example arm described in YAML starts as a tree (system, subsystems,
# blocks), runs (the monitor sees the arm track), stops as a whole with ardkill NAME; bad
# descriptions are refused with the file, the line and the cause (exit 100), starting nothing.
TEST_NAME=sys
source "$(dirname "$0")/common.sh"
: "${ARM_BIN:?}"
export PATH="$ARM_BIN:$PATH"

echo "== start examples/arm/arm.yaml on this host"
"$ARDSTART" --system "$SRCDIR/examples/arm/arm.yaml" --wait=20 || fail "system did not start"
"$ARDSTART" --list
for p in arm arm/sim arm/sim/plant arm/control arm/control/traj arm/control/ctrl \
    arm/control/monitor; do
    [ "$(field "$p" 4)" = running ] || fail "$p not running"
done
[ "$("$ARDSTART" --list --raw | wc -l)" = 7 ] || fail "no bridges expected on one host"

echo "== the monitor sees the plant track the trajectory"
log=$("$ARDSTART" --log arm/control/monitor)
for i in $(seq 100); do
    awk '/max\|err\|/ { if ($(NF-4) < 5 && $NF > 0) n++ } END { exit n < 4 }' "$log" && break
    sleep 0.1
done
tail -n 2 "$log"
awk '/max\|err\|/ { if ($(NF-4) < 5 && $NF > 0) n++ } END { exit n < 4 }' "$log" ||
    fail "monitor never showed the arm tracking"

echo "== a second start of the same system is refused (exit 5)"
set +e
"$ARDSTART" --system "$SRCDIR/examples/arm/arm.yaml" 2>/dev/null; rc=$?
set -e
[ "$rc" = 5 ] || fail "exit $rc, expected 5"

echo "== ardkill arm stops it all"
"$ARDKILL" arm || fail "ardkill arm"
[ -z "$("$ARDSTART" --list --raw)" ] || fail "entries left"

echo "== bad descriptions: file, line and cause; nothing started"
bad() { # expected-message yaml
    printf '%s\n' "$2" >"$T/bad.yaml"
    set +e
    err=$("$ARDSTART" --system "$T/bad.yaml" 2>&1); rc=$?
    set -e
    [ "$rc" = 100 ] || fail "exit $rc for: $2"
    grep -qF "$1" <<<"$err" || fail "expected '$1', got: $err"
    echo "  $err"
}
bad "bad.yaml:3: unknown key 'blocs'" $'name: s\nsubsystems:\n  - blocs: []'
bad "bad.yaml:2:" $'name: s\nsubsystems: [ - x'
bad "connection 'c' has two writers" $'name: s\nsubsystems:\n  - name: a\n    blocks:\n      - {name: x, cmd: tblock, out: {p: c}}\n      - {name: y, cmd: tblock, out: {q: c}}'
bad "give its type under 'connections'" $'name: s\nhosts: {far: otherhost}\nsubsystems:\n  - name: a\n    blocks:\n      - {name: x, cmd: tblock, out: {p: c}}\n  - name: b\n    host: far\n    blocks:\n      - {name: y, cmd: tblock, in: {p: c}}'
bad "bad.yaml:3: connection 'c': " $'name: s\nconnections:\n  c: f65\nsubsystems: []'
bad "block name 'a b'" $'name: s\nsubsystems:\n  - name: a\n    blocks:\n      - {name: a b, cmd: x}'
[ -z "$("$ARDSTART" --list --raw)" ] || fail "a bad description started something"
echo "PASS"
