#!/bin/bash
# ardstart --system with block plugins in an ardrun group (examples/arm/arm_group.yaml):
#  1. dry run: the generated master script, run with stand-ins for ardstart and ardrun that
#     record what they are asked, starts the entries in order, the group once with both
#     plugins, and hands ardrun a group file that the real ardrun accepts and runs;
#  2. real run: the arm starts with plant and controller in one 1 kHz group, tracks the
#     trajectory, and ardkill leaves no entry, process or shared memory;
#  3. one line moved: the controller as its own `ardrun --block` process, the plant still in
#     the group: the arm still tracks.
TEST_NAME=sysgrp
source "$(dirname "$0")/common.sh"
local_books
[ -n "${ARM_BIN:-}" ] && [ -n "${ARDRUN:-}" ] && [ -n "${ARM_PLUGINS:-}" ] ||
    { echo "no ardrun or arm example blocks: skipped"; exit 77; }
ln -s "$ARDRUN" "$BIN/ardrun"
export PATH="$ARM_BIN:$PATH" ARDRUN_PLUGIN_PATH="$ARM_PLUGINS"
EX="$SRCDIR/examples/arm/arm_group.yaml"

echo "== dry run: the generated scripts, run with stand-ins"
mkdir -p "$T/fake" "$T/out" "$T/tmp"
cat >"$T/fake/ardstart" <<'EOF'
#!/bin/bash
# records "PATH[@HOST] COMMAND..." and runs bash scripts (subsystems, groups) in place
name= host=
while [ $# -gt 0 ]; do
    case $1 in
    -n) name=$2; shift 2 ;;
    -H) host=$2; shift 2 ;;
    --ready) exit 0 ;;
    --) shift; break ;;
    *) shift ;;
    esac
done
echo "${FAKE_PATH:+$FAKE_PATH/}$name${host:+@$host} $*" >>"$OUT/calls"
if [ "$1" = bash ]; then FAKE_PATH="${FAKE_PATH:+$FAKE_PATH/}$name" "$@"; fi
EOF
cat >"$T/fake/ardrun" <<'EOF'
#!/bin/bash
# the group file on standard input is kept as OUT/<path>.yaml
[ "$*" = /dev/stdin ] && exec cat /dev/stdin >"$OUT/${FAKE_PATH//\//+}.yaml"
echo "unexpected: ardrun $*" >>"$OUT/calls"
EOF
printf '#!/bin/sh\nexit 0\n' >"$T/fake/sleep"
chmod +x "$T/fake/"*
"$ARDSTART" --system "$EX" --dry-run >"$T/master.sh" || fail "dry run"
OUT="$T/out" TMPDIR="$T/tmp" PATH="$T/fake:$PATH" bash -c "$(cat "$T/master.sh")" arm ||
    fail "the generated master script failed"
cat "$T/out/calls"
want="control bash -c
control/traj arm_traj --rate 200 --ard ref=arm.ref
control/arm_rt bash -c
control/monitor arm_monitor --rate 10 --ard ref=arm.ref --ard state=arm.state"
got=$(sed 's/^\([^ ]* bash -c\) .*/\1/' "$T/out/calls" | grep -v '^#' | grep -v '^$' |
    grep -E '^(control|control/[a-z_]*) ' || true)
[ "$got" = "$want" ] || fail "entries started: got
$got
expected
$want"
g="$T/out/control+arm_rt.yaml"
[ -s "$g" ] || fail "no group file reached ardrun"
[ -z "$(ls -A "$T/tmp")" ] || fail "the group file was left in TMPDIR: $(ls -A "$T/tmp")"
/usr/bin/python3 - "$g" <<'EOF' || fail "group file: $(cat "$g")"
import sys, yaml
g = yaml.safe_load(open(sys.argv[1]))
assert g["name"] == "arm_rt" and str(g["rate_hz"]) == "1000", g
assert g["rates"] == [{"name": "servo", "divide": 1, "prio": 0, "cpu": ""}], g["rates"]
b = {x["name"]: x for x in g["blocks"]}
assert list(b) == ["plant", "ctrl"], list(b)
assert b["plant"]["plugin"] == "arm_plant_block.so" and b["plant"]["rate"] == "servo"
assert b["plant"]["ard"] == {"cmd": "arm.cmd", "state": "arm.state"}, b["plant"]
assert b["ctrl"]["params"] == {"kp": "100", "kd": "9"}, b["ctrl"]
assert b["ctrl"]["ard"] == {"ref": "arm.ref", "state": "arm.state", "cmd": "arm.cmd"}, b["ctrl"]
print("ok: group file", sorted(g))
EOF
# The real ardrun takes the generated file: scheme checked, both plugins stepped.
ARD_DOMAIN="${ARD_DOMAIN}_dry" "$ARDRUN" --ticks 50 "$g" 2>"$T/dry.err" ||
    fail "ardrun refused the generated group file: $(cat "$T/dry.err")"
for b in plant ctrl; do
    grep -Eq "block '$b'.* steps 50" "$T/dry.err" || fail "ardrun did not step $b: $(cat "$T/dry.err")"
done
rm -f /dev/shm/ard."${ARD_DOMAIN}_dry".*

# The arm tracks: of the monitor's last 10 lines the best error is under 3 degrees (so that
# a starved moment of a loaded machine does not count; uncontrolled, the joints drift tens of
# degrees away). Waits (against hangs only) for 10 lines.
tracks() {
    local log i err
    log=$("$ARDSTART" --log "$1")
    for i in $(seq 150); do
        [ "$(grep -c 'max|err|' "$log")" -ge 10 ] && break
        sleep 0.1
    done
    err=$(grep 'max|err|' "$log" | tail -n 10 | sed 's/.*max|err| *\([0-9.]*\) deg.*/\1/' | sort -g | head -n1)
    [ -n "$err" ] && awk -v e="$err" 'BEGIN { exit !(e < 3) }' || fail "no tracking: $(tail -n 5 "$log")"
    echo "ok: tracking error down to $err deg"
}

# Nothing of the domain left: entries, processes, shared memory.
all_gone() {
    "$ARDKILL" >"$T/kill.log" 2>&1 || fail "ardkill: $(cat "$T/kill.log")"
    [ -z "$("$ARDSTART" --list --raw)" ] || fail "entries left: $("$ARDSTART" --list)"
    [ "$(shm_count)" = 0 ] || fail "shared memory left: $(ls /dev/shm | grep "^ard\.$ARD_DOMAIN\.")"
    local p
    p=$(domain_pids 'ardrun|arm_traj|arm_monitor|arm_ctrl|arm_plant' "$ARD_DOMAIN")
    [ -z "$p" ] || fail "processes left: $p"
    echo "ok: nothing left"
}

echo "== real run: plant and controller in one group"
"$ARDSTART" --system "$EX" --wait=20 || fail "arm_group.yaml did not start"
"$ARDSTART" --list
for p in arm arm/control arm/control/traj arm/control/arm_rt arm/control/monitor; do
    [ "$(field "$p" 4)" = running ] || fail "$p not running"
done
[ "$("$ARDSTART" --list --raw | wc -l)" = 5 ] || fail "expected 5 entries (the group is one)"
"$ARDRUN" ctl arm_rt status >"$T/status" 2>&1 || fail "status: $(cat "$T/status")"
grep -Eq '^ +plant +servo .* running$' "$T/status" && grep -Eq '^ +ctrl +servo .* running$' "$T/status" ||
    fail "group status: $(cat "$T/status")"
echo "ok: plant and ctrl run in group arm_rt"
tracks arm/control/monitor
grep -q "cycle: block 'plant' port 'cmd'" "$("$ARDSTART" --log arm/control/arm_rt)" ||
    fail "the loop's one-tick delay is not reported"
"$ARDKILL" arm >"$T/kill.log" 2>&1 || fail "ardkill arm: $(cat "$T/kill.log")"
cat "$T/kill.log"
grep -q "stopped arm/control/arm_rt .*exited 0" "$T/kill.log" || fail "the group did not end cleanly"
all_gone

echo "== one line moved: the controller as a process of its own, the plant in the group"
awk '/- name: ctrl/ { c = 1 } c && /group: arm_rt/ { sub(/group: arm_rt/, "rate_hz: 1000"); c = 0 } { print }' \
    "$EX" >"$T/mixed.yaml"
n=$({ diff "$EX" "$T/mixed.yaml" || true; } | grep -c '^[<>]' || true)
[ "$n" = 2 ] || fail "not a one-line change: $(diff "$EX" "$T/mixed.yaml")"
"$ARDSTART" --system "$T/mixed.yaml" --wait=20 || fail "mixed.yaml did not start"
"$ARDSTART" --list
[ "$(field arm/control/ctrl 4)" = running ] || fail "ctrl does not run as its own entry"
"$ARDSTART" --list --raw arm/control/ctrl | grep -qF \
    'ardrun --block arm_ctrl_block.so --name ctrl --param kp=100 --param kd=9 --rate 1000 --ard ref=arm.ref --ard state=arm.state --ard cmd=arm.cmd' ||
    fail "ctrl's command: $("$ARDSTART" --list --raw arm/control/ctrl)"
"$ARDRUN" ctl arm_rt status >"$T/status" 2>&1 || fail "status: $(cat "$T/status")"
grep -Eq '^ +plant +servo .* running$' "$T/status" && ! grep -Eq '^ +ctrl ' "$T/status" ||
    fail "group status: $(cat "$T/status")"
tracks arm/control/monitor
all_gone
echo "== what only ardrun can check stops the startup with ardrun's message"
sed 's/arm_ctrl_block.so/no_such_block.so/' "$EX" >"$T/nosuch.yaml"
set +e
err=$("$ARDSTART" --system "$T/nosuch.yaml" --wait=20 2>&1)
rc=$?
set -e
[ "$rc" = 2 ] || fail "exit $rc for a missing plugin: $err"
grep -q "ardrun: .*no_such_block.so" <<<"$err" || fail "no ardrun message: $err"
grep "ardrun: .*no_such_block.so" <<<"$err" | head -n 1
all_gone
echo "PASS"
