# Incompatible QoS is reported while it happens and counted (docs/ros2.md, "QoS and domain"):
# reliable DDS readers (ROS 2's default profile) on a `--qos best-effort` output, and a
# best-effort DDS writer into a `--qos reliable` input route: ardnet prints a line naming the
# topic, the policy (RELIABILITY) and the peer (its GUID and QoS) within a few seconds, at most
# once a second per endpoint, and counts every such peer in qos_incompatible; a compatible
# peer is neither reported nor counted and gets the data. The default output (reliable, keep
# last 1) gives a reliable reader the data, and a reliable reader that stops reading (SIGSTOP)
# never holds the route back.
source "$(dirname "$0")/common.sh"
ARM="q:f64[7] qd:f64[7]"

# wait_grep FILE PATTERN SECONDS
wait_grep() {
    local i
    for ((i = 0; i < $3 * 20; i++)); do
        grep -q "$2" "$1" 2>/dev/null && return 0
        sleep 0.05
    done
    return 1
}

"$LOCAL" pub arm arm.state --count 1 >/dev/null
"$LOCAL" pub arm arm.dflt --count 1 >/dev/null
bg ardnet "$ARDNET" --in arm.state --out ros2:/arm/state --qos best-effort --next \
    --in ros2:/arm/cmd --out arm.cmd --type "$ARM" --ros2-type ArmState --qos reliable --next \
    --in arm.dflt --out ros2:/arm/dflt --ros2-type ArmState
# A compatible peer first: best effort, gets the samples, no report.
bg ok "$PEER" sub arm rt/arm/state --count 20 --first-ms 20000 --matched "$T/mok"
wait_file "$T/mok" 20 || fail "the best-effort reader never matched"
bg pubok "$LOCAL" pub arm arm.state --count 200 --rate 200
finish ok || fail "the compatible reader got nothing"
finish pubok || true
grep -q "incompatible QoS" "$T/ardnet.err" && fail "a compatible reader was reported"

# The default output (reliable) and a reliable reader: the data, no report.
bg okrel "$PEER" sub arm rt/arm/dflt --reliable --count 20 --first-ms 20000 --matched "$T/mrel"
wait_file "$T/mrel" 20 || fail "the reliable reader never matched the default output"
bg pubrel "$LOCAL" pub arm arm.dflt --count 200 --rate 200
finish okrel || fail "a reliable reader got nothing from the default output"
finish pubrel || true
grep -q "incompatible QoS" "$T/ardnet.err" && fail "a reliable reader of the default output was reported"

# Three reliable readers at once on the best-effort output.
t0=$(date +%s%N)
for k in 1 2 3; do
    bg rel$k "$PEER" sub arm rt/arm/state --reliable --expect-none --first-ms 3000
done
wait_grep "$T/ardnet.err" "incompatible QoS on rt/arm/state" 10 || fail "no report of the reliable readers"
t1=$(date +%s%N)
line=$(grep -m1 "incompatible QoS on rt/arm/state" "$T/ardnet.err")
echo "reported after $(((t1 - t0) / 1000000)) ms: $line"
case $line in
*"policy RELIABILITY: DDS reader "*" (reliable, volatile) requests what this writer (best-effort, volatile) does not offer"*) ;;
*) fail "report does not name the policy and the peer: $line" ;;
esac
for k in 1 2 3; do finish rel$k || fail "a reliable reader got samples from a best-effort writer"; done
sleep 1.5 # the rate limit lets the later peers through in one more line
n=$(grep -c "incompatible QoS on rt/arm/state" "$T/ardnet.err")
[ "$n" -ge 1 ] && [ "$n" -le 2 ] || fail "$n report lines for 3 peers within 1 s (rate limit: 1 per second)"
grep "incompatible QoS on rt/arm/state" "$T/ardnet.err" | tail -1 | grep -q "(3 such peers so far" ||
    fail "the last report does not count 3 peers: $(grep "incompatible QoS" "$T/ardnet.err" | tail -1)"

# A best-effort writer into the reliable input.
bg pubbe "$PEER" pub arm rt/arm/cmd --count 1 --wait-ms 3000
wait_grep "$T/ardnet.err" "incompatible QoS on rt/arm/cmd" 10 || fail "no report of the best-effort writer"
line=$(grep -m1 "incompatible QoS on rt/arm/cmd" "$T/ardnet.err")
case $line in
*"policy RELIABILITY: DDS writer "*" (best-effort, volatile) does not offer what this reader (reliable, volatile) requests"*) ;;
*) fail "input report does not name the policy and the peer: $line" ;;
esac
finish pubbe || true

# A reliable reader that stops reading: the default output's writer keeps the newest sample
# only, so the route goes on at its rate (nothing skipped to speak of, no send error).
bg stuck "$PEER" sub arm rt/arm/dflt --reliable --count 100000 --first-ms 20000 --matched "$T/mstuck"
wait_file "$T/mstuck" 20 || fail "the stopping reader never matched"
sleep 0.3
kill -STOP "$(cat "$T/stuck.pid")"
kill -USR1 "$(cat "$T/ardnet.pid")"
sleep 0.2
sent0=$(counter ardnet arm.dflt sent)
skip0=$(counter ardnet arm.dflt skipped)
"$LOCAL" pub arm arm.dflt --count 2000 --rate 1000 >/dev/null || fail "local writer failed"
sleep 0.3
kill -CONT "$(cat "$T/stuck.pid")"
stop stuck || true
stop ardnet || fail "ardnet exit status"
sent=$(($(counter ardnet arm.dflt sent) - sent0))
skipped=$(($(counter ardnet arm.dflt skipped) - skip0))
echo "a stopped reliable reader: the route sent $sent of 2000, skipped $skipped"
[ "$sent" -ge 1900 ] && [ "$skipped" -le 100 ] && [ "$(counter ardnet arm.dflt send_errors)" = 0 ] ||
    fail "a stopped reliable reader held the route back: sent $sent of 2000, skipped $skipped"
[ "$(counter ardnet arm.state qos_incompatible)" = 3 ] ||
    fail "arm.state: qos_incompatible=$(counter ardnet arm.state qos_incompatible), expected 3"
[ "$(counter ardnet arm.cmd qos_incompatible)" = 1 ] ||
    fail "arm.cmd: qos_incompatible=$(counter ardnet arm.cmd qos_incompatible), expected 1"
echo "ok: incompatible readers and writer reported (policy, peer) and counted; a compatible one not"
