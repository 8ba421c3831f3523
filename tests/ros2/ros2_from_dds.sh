# DDS -> ardnet: an independent DDS peer publishes ArmCmd, AllTypes and ArmState; ardnet takes
# the topics into local connections, one whose type comes from --type (the connection does not
# exist yet), one from the existing connection, one of a ROS 2 type named by ros2-type, through
# a YAML route file with a QoS; a C reader of each gets the peer's values exactly, in order.
source "$(dirname "$0")/common.sh"

cat >"$T/routes.yaml" <<YAML
ros-domain: $ROS_DOMAIN_ID
routes:
  - in: ros2:/arm/cmd
    out: arm.cmd
    type: "q:f64[7] qd:f64[7]"
  - in: ros2:/all/types
    out: all.types
    qos: reliable
  - in: ros2:/arm/cmd2           # a ROS 2 type named, not the connection's own name
    out: arm.cmd2
    type: "q:f64[7] qd:f64[7]"
    ros2-type: ardnet_msgs/msg/ArmState
YAML
# all.types exists (created by its reader, with its type); arm.cmd is created by ardnet.
bg subB chrt -f 20 "$LOCAL" sub all all.types --first-ms 20000 --idle-ms 1500
sleep 0.2
ROS_DOMAIN_ID=$((ROS_DOMAIN_ID + 1)) bg ardnet "$ARDNET" --prio 20 --config "$T/routes.yaml"
sleep 0.5
bg subA chrt -f 20 "$LOCAL" sub arm arm.cmd --first-ms 20000 --idle-ms 1500
bg subC "$LOCAL" sub arm arm.cmd2 --first-ms 20000 --idle-ms 1500
bg pubA "$PEER" pub cmd rt/arm/cmd --count 1000 --rate 1000
bg pubC "$PEER" pub arm rt/arm/cmd2 --count 300 --rate 1000
bg pubB "$PEER" pub all rt/all/types --count 1000 --rate 1000 --reliable
finish pubA && finish pubB || fail "DDS peer could not publish (no match with ardnet?)"
finish subA || fail "reader of arm.cmd: values wrong or none"
finish subB || fail "reader of all.types: values wrong or none"
finish pubC || fail "the DDS writer of ArmState never matched the route with --ros2-type"
finish subC || fail "reader of arm.cmd2 (ros2-type ArmState): values wrong or none"
stop ardnet || fail "ardnet exit status"
for s in subA subB; do
    [ "$(field $s bad)" = 0 ] && [ "$(field $s older)" = 0 ] || fail "$s: bad or reordered packets"
    # Latest value: a reader may skip packets, never get a wrong one; most must arrive.
    [ "$(field $s received)" -ge 500 ] || fail "$s: only $(field $s received) of 1000"
done
# The last value the peer wrote is the last the reader got (keep last 1: the newest wins).
[ "$(field subA last)" = "$(field pubA last)" ] || fail "arm.cmd: last $(field subA last), peer $(field pubA last)"
[ "$(field subB last)" = "$(field pubB last)" ] || fail "all.types: last differs"
[ "$(counter ardnet arm.cmd received)" -ge 500 ] || fail "counters: received"
echo "ok: arm.cmd $(field subA received)/1000, all.types $(field subB received)/1000, values exact"
