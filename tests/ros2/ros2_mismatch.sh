# A DDS peer of another type on a route's topic: nothing passes either way, ardnet reports it
# once naming both types and counts it (drop_type).
source "$(dirname "$0")/common.sh"

"$LOCAL" pub arm arm.state --count 1 >/dev/null
bg ardnet "$ARDNET" --in ros2:/arm/cmd --out arm.cmd --type "q:f64[7] qd:f64[7]" \
    --next --in arm.state --out ros2:/arm/state
# DDS -> ardnet: a writer of Other_ on rt/arm/cmd never matches ardnet's reader.
bg pubO "$PEER" pub other rt/arm/cmd --count 50 --wait-ms 3000
# ardnet -> DDS: a reader of Other_ on rt/arm/state gets nothing from ardnet's writer.
bg subO "$PEER" sub other rt/arm/state --first-ms 4000 --expect-none
sleep 1
"$LOCAL" pub arm arm.state --count 500 --rate 1000 >/dev/null
rc=0
finish pubO || rc=$?
[ "$rc" = 3 ] || fail "the writer of another type matched ardnet's reader (exit $rc)"
finish subO || fail "the reader of another type got samples from ardnet"
# Nothing was delivered into arm.cmd.
bg subL "$LOCAL" sub arm arm.cmd --first-ms 300
finish subL && fail "arm.cmd got a packet" || true
[ "$(field subL received)" = 0 ] || fail "arm.cmd got packets"
stop ardnet || fail "ardnet exit status"
for r in "writer on rt/arm/cmd has type 'ardnet_msgs::msg::dds_::Other_', this route's is 'ardnet_msgs::msg::dds_::ArmCmd_'" \
    "reader on rt/arm/state has type 'ardnet_msgs::msg::dds_::Other_', this route's is 'ardnet_msgs::msg::dds_::ArmState_'"; do
    [ "$(grep -cF "$r" "$T/ardnet.err")" = 1 ] || fail "not reported once: $r"
done
[ "$(counter ardnet arm.cmd drop_type)" -ge 1 ] || fail "arm.cmd: drop_type not counted"
[ "$(counter ardnet arm.cmd received)" = 0 ] || fail "arm.cmd: received counted"
[ "$(counter ardnet arm.state drop_type)" -ge 1 ] || fail "arm.state: drop_type not counted"
echo "ok: peers of another type refused both ways, reported once each, counted"
