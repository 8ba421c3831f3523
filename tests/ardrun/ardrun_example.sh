#!/bin/bash
# ardrun_example: the arm variant with controller and plant as plugins in one 1 kHz group
# (examples/arm/master_group.sh) starts under ardstart, tracks the trajectory, and ardkill
# stops it completely.
here=$(cd "$(dirname "$0")" && pwd)
. "$here/common.sh"
[ -n "${ARDSTART:-}" ] && [ -n "${ARM_BIN:-}" ] || { echo "no ardstart or arm blocks"; exit 77; }
export ARD_BOOKS_DIR=$T/books
mkdir -p "$T/bin"
ln -s "$ARDSTART" "$T/bin/ardstart"
ln -s "$ARDKILL" "$T/bin/ardkill"
ln -s "$ARDRUN" "$T/bin/ardrun"
export PATH="$T/bin:$PATH" ARDRUN_PLUGIN_PATH="$ARM_PLUGINS"
trap '"$ARDKILL" -q -g 0.5 >/dev/null 2>&1; cleanup' EXIT

"$SRCDIR/examples/arm/master_group.sh" >"$T/start.log" 2>&1 || fail "start: $(cat "$T/start.log")"
sleep 2
"$ARDRUN" ctl arm_rt status >"$T/status" 2>&1 || fail "status: $(cat "$T/status")"
grep -Eq '^ +plant +servo .* running$' "$T/status" && grep -Eq '^ +ctrl +servo .* running$' "$T/status" &&
    ok "plant and ctrl running in the group" ||
    fail "group status: $(cat "$T/status")"
log=$("$ARDSTART" --log arm/monitor)
# the monitor (10 Hz process) sees the group's state, and the controller in the group makes
# the plant follow the reference (uncontrolled, the joints drift tens of degrees away). The
# best of the last 10 lines, so that a starved moment on a loaded machine does not count.
err=$(grep 'max|err|' "$log" | tail -n 10 | sed 's/.*max|err| *\([0-9.]*\) deg.*/\1/' | sort -g | head -n1)
[ -n "$err" ] && awk -v e="$err" 'BEGIN { exit !(e < 3) }' && ok "tracking error down to $err deg" ||
    fail "monitor: $(tail -n 5 "$log")"
grep -q "cycle: block 'plant' port 'cmd'" "$("$ARDSTART" --log arm/rt)" && ok "the loop's one-tick delay is reported" ||
    fail "rt log: $(cat "$("$ARDSTART" --log arm/rt)")"
"$ARDKILL" arm >"$T/kill.log" 2>&1 || fail "ardkill: $(cat "$T/kill.log")"
grep -q "stopped arm/rt .*exited 0" "$T/kill.log" && ok "ardkill: the group ended cleanly" || fail "$(cat "$T/kill.log")"
finish
