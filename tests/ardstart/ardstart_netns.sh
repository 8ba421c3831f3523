#!/bin/bash
# Three hosts (station, rt1, rt2: network namespaces, private /dev/shm and /run, a real sshd
# each). A master script on the station starts subsystem scripts on rt1 and rt2 through
# ssh, three levels deep (rt1's script starts a subsystem on rt2), with blocks wired across
# hosts by ardnet bridges. Checks the listing, a subsystem stop that leaves the rest
# running, a whole-system stop that leaves no process and no shared memory on any host,
# and that an unreachable host fails fast with exit 4.
TEST_NAME=netns
: "${TBLOCK:?}"
source "$(dirname "$0")/common.sh"
hosts_start station rt1 rt2
BRIDGE=$HAVE_ARDNET

# ---- the system: robot (station) -> arm (rt1) -> drive (rt2) -> motor (rt2)
cat >"$T/master.sh" <<'SH'
#!/bin/bash
set -e
ardstart -q --wait=30 -H rt1 -n arm -- ./arm.sh
ardstart -q --wait=30 -H rt2 -n hand -- ./hand.sh
ardstart -q --wait=20 -n mon -- tblock out:station.mon
ardstart --ready
exec sleep 100000
SH
cat >"$T/arm.sh" <<'SH'
#!/bin/bash
set -e
if command -v ardnet >/dev/null; then
    ardstart -q --wait=20 -n br_in -- ardnet --in udp://:7001 --out motor.state --size 8 --type u64
fi
ardstart -q --wait=20 -n ctrl -- tblock in:motor.state out:arm.cmd
ardstart -q --wait=30 -H rt2 -n drive -- ./drive.sh
ardstart --ready
exec sleep 100000
SH
cat >"$T/drive.sh" <<'SH'
#!/bin/bash
set -e
ardstart -q --wait=20 -n motor -- tblock out:motor.state
if command -v ardnet >/dev/null; then
    ardstart -q --wait=20 -n br_out -- ardnet --in motor.state --out udp://rt1:7001
fi
ardstart --ready
exec sleep 100000
SH
cat >"$T/hand.sh" <<'SH'
#!/bin/bash
set -e
ardstart -q --wait=20 -n grip -- tblock out:hand.grip
ardstart --ready
exec sleep 100000
SH
chmod +x "$T"/*.sh

echo "== start the system from the station"
cd "$T"
on station ardstart --wait=60 -n robot -- ./master.sh || fail "master did not start"
on station ardstart --list

raw=$(on station ardstart --list --raw)
expect() { # path host
    local line
    line=$(awk -F'\t' -v p="$1" '$1 == p' <<<"$raw")
    [ -n "$line" ] || fail "$1 missing from the listing"
    [ "$(cut -f2 <<<"$line")" = "$2" ] || fail "$1 on '$(cut -f2 <<<"$line")', expected $2"
    [ "$(cut -f4 <<<"$line")" = running ] || fail "$1 not running: $line"
}
expect robot station
expect robot/mon station
expect robot/arm rt1
expect robot/arm/ctrl rt1
expect robot/arm/drive rt2
expect robot/arm/drive/motor rt2
expect robot/hand rt2
expect robot/hand/grip rt2
n=8
if [ "$BRIDGE" = 1 ]; then
    expect robot/arm/br_in rt1
    expect robot/arm/drive/br_out rt2
    n=10
fi
[ "$(wc -l <<<"$raw")" = "$n" ] || fail "expected $n entries, listing has $(wc -l <<<"$raw")"
pid_of() { awk -F'\t' -v p="$1" '$1 == p { print $3 }' <<<"$raw"; }

echo "== the books are per host: each entry is in its host's books"
netns_run rt2 test -e "/run/ardnet/$D/e/robot+arm+drive+motor.entry" || fail "motor not in rt2's books"
netns_run rt1 test -e "/run/ardnet/$D/e/robot+arm+drive.entry" || fail "no remote entry for drive on rt1"
grep -q '^remote=1' "/proc/self/fd/0" < <(netns_run rt1 cat "/run/ardnet/$D/e/robot+arm+drive.entry") ||
    fail "drive is not a remote entry in rt1's books"
netns_run station test -e "/run/ardnet/$D/e/robot+arm+drive+motor.entry" && fail "motor in station's books"

echo "== shared memory is where the blocks are"
netns_run rt2 test -e "/dev/shm/ard.$D.motor.state" || fail "motor.state missing on rt2"
netns_run rt2 test -e "/dev/shm/ard.$D.hand.grip" || fail "hand.grip missing on rt2"
netns_run rt1 test -e "/dev/shm/ard.$D.arm.cmd" || fail "arm.cmd missing on rt1"
netns_run station test -e "/dev/shm/ard.$D.hand.grip" && fail "rt2's shm visible on station"

if [ "$BRIDGE" = 1 ]; then
    echo "== packets of rt2's motor reach rt1's controller through the bridges"
    ok=0
    for i in $(seq 200); do
        if netns_run rt1 grep -q "first packet on motor.state" "/run/ardnet/$D/log/robot+arm+ctrl.log"; then
            ok=1
            break
        fi
        sleep 0.05
    done
    [ "$ok" = 1 ] || fail "ctrl on rt1 never got a packet from motor on rt2"
fi

echo "== a listing of a subtree below a remote entry is fetched from its host"
sub=$(on station ardstart --list --raw robot/arm/drive)
[ "$(wc -l <<<"$sub")" = $((BRIDGE + 2)) ] || fail "subtree listing: $sub"

echo "== an unreachable host fails within the transport's timeout, exit 4"
set +e
t0=$(date +%s%N)
err=$(on station ardstart -H $NETNS_SUBNET.99 -n ghost -- true 2>&1); rc=$?
t1=$(date +%s%N)
set -e
echo "$err (after $(((t1 - t0) / 1000000)) ms)"
[ "$rc" = 4 ] || fail "exit $rc for an unreachable host, expected 4"
grep -q "cannot reach host $NETNS_SUBNET.99" <<<"$err" || fail "message: $err"
[ -z "$(on station ardstart --list --raw robot/ghost)" ] || fail "ghost left in the books"

echo "== remote results come back: cannot execute (1), ended before ready (2)"
set +e
err=$(on station ardstart -p robot -H rt1 -n nope -- /nonexistent/prog 2>&1); rc=$?
set -e
[ "$rc" = 1 ] || fail "exit $rc for a missing program on rt1, expected 1"
grep -q "cannot execute '/nonexistent/prog'" <<<"$err" || fail "message: $err"
[ "$(on station ardstart --list --raw robot/nope | cut -f2,4)" = "rt1	failed" ] ||
    fail "robot/nope not listed as failed on rt1"
set +e
err=$(on station ardstart --wait=20 -p robot -H rt1 -n early -- sh -c 'echo remote-boom; exit 9' 2>&1); rc=$?
set -e
[ "$rc" = 2 ] || fail "exit $rc for an early exit on rt1, expected 2"
grep -q "| remote-boom" <<<"$err" || fail "no remote log tail: $err"
[ "$(on station ardstart --list --raw robot/early | cut -f4,5)" = "exited	9" ] ||
    fail "robot/early not listed as exited 9"
on station ardkill -q robot/early robot/nope || fail "ardkill of ended entries"
netns_run rt1 test -e "/run/ardnet/$D/e/robot+nope.entry" && fail "robot/nope left in rt1's books"

echo "== a host that cannot be reached: ardkill says so (exit 2) and keeps the remote entry"
on station ardstart -q --wait=20 -p robot -H rt2 -n lone -- tblock out:lone.x || fail "lone"
lone=$(on station ardstart --list --raw robot/lone | cut -f3)
ip -n "$(netns_netns rt2)" link set eth0 down
[ "$(on station ardstart --list --raw robot/lone | cut -f4)" = unreachable ] ||
    fail "listing does not say unreachable"
set +e
err=$(on station ardkill robot/lone 2>&1); rc=$?
set -e
ip -n "$(netns_netns rt2)" link set eth0 up
echo "$err"
[ "$rc" = 2 ] || fail "exit $rc for an unreachable host, expected 2"
grep -q "cannot reach host rt2" <<<"$err" || fail "message: $err"
kill -0 "$lone" || fail "lone died although rt2 was unreachable"
netns_run station test -e "/run/ardnet/$D/e/robot+lone.entry" || fail "remote entry dropped"
for i in $(seq 50); do on station ssh -F "$SSHD_CONFIG" rt2 true 2>/dev/null && break; sleep 0.1; done
on station ardkill robot/lone || fail "ardkill robot/lone after the link came back"
kill -0 "$lone" 2>/dev/null && fail "lone still alive"

echo "== ardkill robot/arm: exactly that subsystem, on rt1 and rt2"
arm_pids="$(pid_of robot/arm) $(pid_of robot/arm/ctrl) $(pid_of robot/arm/drive) $(pid_of robot/arm/drive/motor)"
rest_pids="$(pid_of robot) $(pid_of robot/mon) $(pid_of robot/hand) $(pid_of robot/hand/grip)"
if [ "$BRIDGE" = 1 ]; then
    arm_pids+=" $(pid_of robot/arm/br_in) $(pid_of robot/arm/drive/br_out)"
fi
out=$(on station ardkill robot/arm) || fail "ardkill robot/arm failed"
echo "$out"
# All hosts share the pid namespace, so liveness can be checked from here.
for p in $arm_pids; do kill -0 "$p" 2>/dev/null && fail "pid $p of robot/arm still alive"; done
for p in $rest_pids; do kill -0 "$p" 2>/dev/null || fail "pid $p outside robot/arm was stopped"; done
grep -q "stopped robot/arm/drive/motor on rt2" <<<"$out" || fail "motor stop not reported"
[ "$(grep -n 'robot/arm/drive/motor' <<<"$out" | head -1 | cut -d: -f1)" -lt \
  "$(grep -n 'stopped robot/arm on' <<<"$out" | cut -d: -f1)" ] || fail "arm stopped before its children"
raw=$(on station ardstart --list --raw)
grep -q '^robot/arm' <<<"$raw" && fail "robot/arm still listed"
[ "$(wc -l <<<"$raw")" = 4 ] || fail "expected 4 entries left: $raw"

echo "== ardkill of everything: no process, no shared memory on any host"
out=$(on station ardkill) || fail "ardkill failed"
echo "$out"
for p in $rest_pids; do kill -0 "$p" 2>/dev/null && fail "pid $p alive after ardkill"; done
hosts_clean "ardstart_tblock|ardnet"
grep -q "removed .* of domain $D on rt2" <<<"$out" || fail "no shm removal on rt2 reported"

echo "== idempotent"
out=$(on station ardkill) || fail "second ardkill failed"
grep -q "nothing to stop" <<<"$out" || fail "second ardkill: $out"
echo "PASS"
