#!/bin/bash
# ardstart --system: the example arm described in YAML starts as a tree (system, subsystems,
# blocks), runs (the monitor sees the arm track), stops as a whole with ardkill NAME; bad
# descriptions are refused with the file, the line and the cause (exit 100), starting nothing.
TEST_NAME=sys
source "$(dirname "$0")/common.sh"
local_books
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
bad "bad.yaml:6: connection 'c' has two writers" $'name: s\nsubsystems:\n  - name: a\n    blocks:\n      - {name: x, cmd: tblock, out: {p: c}}\n      - {name: y, cmd: tblock, out: {q: c}}'
bad "bad.yaml:10: connection 'c' runs from host" $'name: s\nhosts: {far: otherhost}\nsubsystems:\n  - name: a\n    blocks:\n      - {name: x, cmd: tblock, out: {p: c}}\n  - name: b\n    host: far\n    blocks:\n      - {name: y, cmd: tblock, in: {p: c}}'
bad "bad.yaml:3: connection 'c': " $'name: s\nconnections:\n  c: f65\nsubsystems: []'
bad "block name 'a b'" $'name: s\nsubsystems:\n  - name: a\n    blocks:\n      - {name: a b, cmd: x}'
bad "bad.yaml:1: system description: expected a mapping" 'just a line'
bad "bad.yaml: empty file" ''
bad "bad.yaml:1: no 'name' of the system" 'subsystems: []'
bad "bad.yaml:2: 'subsystems' must be a list" $'name: s\nsubsystems: {a: b}'
bad "bad.yaml:1: unknown key 'hots' (name, hosts," $'hots: {}\nname: s\nsubsystems: []'
bad "bad.yaml:1: system name 's/x'" $'name: s/x\nsubsystems: []'
bad "bad.yaml:3: a subsystem needs a 'name'" $'name: s\nsubsystems:\n  - host: a'
bad "bad.yaml:4: subsystem 'a' named twice" $'name: s\nsubsystems:\n  - name: a\n  - name: a'
bad "bad.yaml:5: blocks: expected a list" $'name: s\nsubsystems:\n  - name: a\n    blocks:\n      x: y'
bad "bad.yaml:5: a block needs 'name' and 'cmd'" $'name: s\nsubsystems:\n  - name: a\n    blocks:\n      - {name: x}'
bad "bad.yaml:5: unknown key 'ins' in a block (name, cmd, in, out)" $'name: s\nsubsystems:\n  - name: a\n    blocks:\n      - {name: x, cmd: y, ins: {}}'
bad "bad.yaml:5: in: expected a mapping" $'name: s\nsubsystems:\n  - name: a\n    blocks:\n      - {name: x, cmd: y, in: [a]}'
bad "bad.yaml:5: connection name 'a b': character ' '" $'name: s\nsubsystems:\n  - name: a\n    blocks:\n      - {name: x, cmd: y, in: {p: a b}}'
bad "bad.yaml:5: cmd: expected a plain value" $'name: s\nsubsystems:\n  - name: a\n    blocks:\n      - {name: x, cmd: [y]}'
bad "bad.yaml:2: bridge_port: expected a UDP port number" $'name: s\nbridge_port: 70000\nsubsystems: []'
# A second line of a command would run in the subsystem script, not as the block.
bad "bad.yaml:6: cmd: expected one command line, got several lines" $'name: s\nsubsystems:\n  - name: a\n    blocks:\n      - name: x\n        cmd: |\n          tblock\n          touch '"$T"$'/pwned'
bad "cmd: expected one command line, got an empty one" $'name: s\nsubsystems:\n  - name: a\n    blocks:\n      - {name: x, cmd: " "}'
# The second start of a name would fail at run time, after the first ones started.
bad "bad.yaml:6: block 'x' named twice in a subsystem" $'name: s\nsubsystems:\n  - name: a\n    blocks:\n      - {name: x, cmd: tblock}\n      - {name: x, cmd: tblock}'
# Hosts go to the transport and into scripts: no blanks, no shell words, no options.
bad "bad.yaml:2: host 'rt1; touch x': character ';'" $'name: s\nhosts: {sim: "rt1; touch x"}\nsubsystems: []'
bad "bad.yaml:4: host '-oProxyCommand=x': must not start with '-'" $'name: s\nsubsystems:\n  - name: a\n    host: -oProxyCommand=x'
bad "bad.yaml:2: local_host 'a b'" $'name: s\nlocal_host: a b\nsubsystems: []'
bad "bad.yaml:2: host role name 'a b'" $'name: s\nhosts: {a b: x}\nsubsystems: []'
bad "bad.yaml:4: connection 'c' given twice" $'name: s\nconnections:\n  c: u8\n  c: u16\nsubsystems: []'
[ ! -e "$T/pwned" ] || fail "a line of a command ran"

echo "== a description nested 100000 levels deep is refused at once (libyaml is quadratic)"
/usr/bin/python3 -c "print('name: x\nsubsystems: ' + '[' * 100000 + ']' * 100000)" >"$T/deep.yaml"
set +e
err=$(timeout 60 "$ARDSTART" --system "$T/deep.yaml" 2>&1); rc=$?
set -e
[ "$rc" = 100 ] || fail "exit $rc for a deep description"
grep -qE "deep.yaml:2:[0-9]+: nested deeper than 16 levels" <<<"$err" || fail "message: $err"
set +e
err=$("$ARDSTART" --system "$T" 2>&1); rc=$?
set -e
[ "$rc" = 100 ] && grep -qF "cannot read '$T': Is a directory" <<<"$err" || fail "a directory: $rc $err"
[ -z "$("$ARDSTART" --list --raw)" ] || fail "a bad description started something"

echo "== a bad parent of the system's entry is named (exit 100)"
printf 'name: s\nsubsystems: []\n' >"$T/ok.yaml"
set +e
err=$("$ARDSTART" --system "$T/ok.yaml" -p 'a//b' 2>&1); rc=$?
set -e
[ "$rc" = 100 ] || fail "exit $rc for a bad parent"
grep -qF "parent: path 'a//b': names must be joined by single '/'" <<<"$err" ||
    fail "no message for a bad parent: '$err'"

echo "== a long --wait for a system of many subsystems still waits for readiness"
{
    echo "name: many"
    echo "subsystems:"
    for i in 1 2 3 4 5 6 7; do echo "  - name: s$i"; done
} >"$T/many.yaml"
out=$("$ARDSTART" --system "$T/many.yaml" --wait=86400) || fail "many did not start"
grep -q "started many on .* ready after" <<<"$out" || fail "not waited for: $out"
"$ARDKILL" -q many || fail "ardkill many"
echo "PASS"
