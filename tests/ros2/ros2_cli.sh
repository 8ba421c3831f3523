# Bad ros2: configuration gets a clear error and exit status 100 before anything runs.
source "$(dirname "$0")/common.sh"

expect() { # STATUS TEXT CMD...
    local want=$1 text=$2 rc=0
    shift 2
    "$@" >"$T/cli.out" 2>"$T/cli.err" </dev/null || rc=$?
    [ "$rc" = "$want" ] || fail "'$*': exit $rc, expected $want"
    grep -qF -- "$text" "$T/cli.err" || fail "'$*': no '$text' in: $(cat "$T/cli.err")"
}
expect 100 "ROS 2 topic 'arm/state' does not start with '/'" \
    "$ARDNET" --in arm.state --out ros2:arm/state
expect 100 "part '1x' must be A-Z a-z 0-9 _" "$ARDNET" --in arm.state --out ros2:/arm/1x
expect 100 "part '' must be" "$ARDNET" --in arm.state --out ros2:/arm//state
expect 100 "part 'st-ate' must be" "$ARDNET" --in arm.state --out ros2:/arm/st-ate
expect 100 "qos 'fast': unknown 'fast'" "$ARDNET" --in arm.state --out ros2:/a --qos fast
expect 100 "qos: only ros2: endpoints have a DDS QoS" \
    "$ARDNET" --in arm.state --out udp://127.0.0.1:7000 --qos reliable
expect 100 "ros-domain '233' is not a DDS domain id 0..232" \
    "$ARDNET" --in arm.state --out ros2:/a --ros-domain 233
expect 100 "ROS 2 type 'arm_state': message name 'arm_state' must be A-Z" \
    "$ARDNET" --in arm.state --out ros2:/a --ros2-type arm_state
expect 100 "ros2-type: only ros2: endpoints have a ROS 2 type" \
    "$ARDNET" --in arm.state --out udp://127.0.0.1:7000 --ros2-type ArmState
printf 'routes:\n  - in: ros2:/arm/cmd\n    out: arm.cmd\n    qos: sometimes\n' >"$T/bad.yaml"
expect 100 "bad.yaml:4:10: qos 'sometimes'" "$ARDNET" --config "$T/bad.yaml"
expect 100 "connection 'arm.cmd' does not exist and its size is unknown" \
    "$ARDNET" --in ros2:/arm/cmd --out arm.cmd
"$LOCAL" pub arm arm.state --count 1 >/dev/null
ROS_DOMAIN_ID=x expect 100 "ROS_DOMAIN_ID 'x' is not a DDS domain id 0..232" \
    "$ARDNET" --in arm.state --out ros2:/arm/state
grep -q "ros2:/TOPIC" <<<"$("$ARDNET" --help)" || fail "--help does not name ros2: endpoints"
echo "ok: bad ros2: configuration refused with exit 100"
