#!/bin/bash
# The example system (examples/arm) with a host mapping: master on the station, simulator on
# rt1, control on rt2, wired by the ardnet bridges the subsystem scripts insert. Checks that
# the monitor on rt2 sees the plant on rt1 follow the trajectory, then that ardkill leaves
# nothing on any host.
: "${ARM_BIN:?}"
[ -n "${ARDNET:-}" ] && [ -x "$ARDNET" ] || { echo "no ardnet: skipping" >&2; exit 77; }
TEST_NAME=example
source "$(dirname "$0")/common.sh"
export PATH="$PATH:$ARM_BIN"
ON_ENV=(ARM_BIN="$ARM_BIN" ARM_SIM_HOST=rt1 ARM_CTRL_HOST=rt2)
hosts_start station rt1 rt2

echo "== start examples/arm/master.sh on the station, sim on rt1, control on rt2"
on station "$SRCDIR/examples/arm/master.sh" || fail "master.sh failed"
on station ardstart --list
raw=$(on station ardstart --list --raw)
for want in "arm station" "arm/sim rt1" "arm/sim/plant rt1" "arm/sim/cmd_in rt1" \
    "arm/sim/state_out rt1" "arm/control rt2" "arm/control/ctrl rt2" "arm/control/traj rt2" \
    "arm/control/monitor rt2" "arm/control/state_in rt2" "arm/control/cmd_out rt2"; do
    set -- $want
    awk -F'\t' -v p="$1" -v h="$2" '$1 == p && $2 == h && $4 == "running" { f = 1 } END { exit !f }' \
        <<<"$raw" || fail "$1 not running on $2"
done

tracking() { # the monitor on rt2: lines with state packets arriving and an error below 5 deg
    local log="/run/ardnet/$D/log/arm+control+monitor.log" i
    for i in $(seq 100); do
        if netns_run rt2 awk '/^=== ardstart .*: starting / { n = 0 } # this run only (the log is appended)
                /max\|err\|/ { if ($(NF-4) < 5 && $NF > 0) n++ } END { exit n < 4 }' "$log"; then
            netns_run rt2 tail -n 2 "$log"
            return 0
        fi
        sleep 0.1
    done
    netns_run rt2 tail -n 5 "$log" || true
    fail "monitor never showed the arm tracking"
}

echo "== the monitor on rt2 sees the plant on rt1 track the trajectory"
tracking

echo "== each bridge's counters (--counters ardnet.NAME), read with ard show where it runs"
if [ -n "${ARD:-}" ]; then
    for want in "rt1 cmd_in" "rt1 state_out" "rt2 state_in" "rt2 cmd_out"; do
        set -- $want
        n=$(on "$1" ard show "ardnet.$2" --field 'received[0]' --format csv | tail -n 1) ||
            fail "ard show ardnet.$2 on $1"
        n=${n##*,}
        [[ "$n" =~ ^[0-9]+$ ]] && [ "$n" -gt 0 ] || fail "ardnet.$2 on $1: received '$n'"
        echo "ardnet.$2 on $1: received $n"
    done
else
    echo "(no ard: the counters are not read)"
fi

echo "== ardkill: nothing left on any host"
on station ardkill || fail "ardkill failed"
hosts_clean "arm_|ardnet"

echo "== the same system from examples/arm/arm.yaml, mapped to rt1 and rt2: bridges inserted"
on station ardstart --system "$SRCDIR/examples/arm/arm.yaml" --wait=20 \
    --set-host sim=rt1 --set-host ctrl=rt2 || fail "system did not start"
on station ardstart --list
raw=$(on station ardstart --list --raw)
for want in "arm/sim/plant rt1" "arm/sim/from_rt2 rt1" "arm/sim/to_rt2 rt1" \
    "arm/control/from_rt1 rt2" "arm/control/to_rt1 rt2" "arm/control/monitor rt2"; do
    set -- $want
    awk -F'\t' -v p="$1" -v h="$2" '$1 == p && $2 == h && $4 == "running" { f = 1 } END { exit !f }' \
        <<<"$raw" || fail "$1 not running on $2"
done
tracking
for want in "rt1 to_rt2" "rt1 from_rt2" "rt2 to_rt1" "rt2 from_rt1"; do # their --counters
    set -- $want
    netns_run "$1" test -e "/dev/shm/ard.$D.ardnet.$2" || fail "no counters ardnet.$2 on $1"
done
on station ardkill || fail "ardkill failed"
hosts_clean "arm_|ardnet"
echo "PASS"
