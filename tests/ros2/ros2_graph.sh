# ardnet in the ROS 2 graph as a ROS 2 tool sees it: its participant publishes
# ros_discovery_info with one node (namespace "/", named after the program or --ros2-node)
# whose reader and writer GIDs are exactly the DDS GUIDs of its ros2: inputs' readers and
# outputs' writers as DDS discovery shows them; the participant has the node's name and rmw's
# user data "enclave=/;". Read by graph.c (rmw_dds_common.idl through idlc, and Cyclone's
# builtin topics). The name may come from the route file (ros2-node:). A bad --ros2-node is
# refused naming the option.
source "$(dirname "$0")/common.sh"
: "${GRAPH:?}"

"$LOCAL" pub arm arm.state --count 1 >/dev/null
# The reader announces itself every second: started before a slow ardnet listens, it is still
# found at once (Cyclone's default is every 30 s).
GRAPH_URI=${CYCLONEDDS_URI/<Discovery>/<Discovery><SPDPInterval>1s</SPDPInterval>}
"$LOCAL" pub arm arm.goal --count 1 >/dev/null

# check NODE: the graph reader's view of the one ardnet running.
check() {
    local node=$1 out=$T/graph.txt pp info readers writers want_r want_w
    CYCLONEDDS_URI=$GRAPH_URI "$GRAPH" 20 >"$out" 2>"$T/graph.err" || fail "no complete ros_discovery_info from ardnet: $(cat "$out" "$T/graph.err")"
    info=$(grep '^info ' "$out" | tail -1)
    [ "$(grep -c '^info ' "$out" | sort -u)" -ge 1 ] || fail "no info sample"
    pp=$(awk '{ print $2 }' <<<"$info")
    [ "$(grep '^info ' "$out" | awk '{ print $2 }' | sort -u | wc -l)" = 1 ] ||
        fail "info from more than one participant: $(grep '^info ' "$out")"
    [ "$(awk '{ print $3, $4 }' <<<"$info")" = "/ $node" ] || fail "node: $info, expected / $node"
    grep -qx "participant $pp name=$node user_data=enclave=/;" "$out" ||
        fail "participant $pp: $(grep "^participant $pp" "$out"), expected name=$node user_data=enclave=/;"
    readers=$(sed -n 's/.* readers=\([^ ]*\).*/\1/p' <<<"$info" | tr ',' '\n' | sort | paste -sd,)
    writers=$(sed -n 's/.* writers=\([^ ]*\).*/\1/p' <<<"$info" | tr ',' '\n' | sort | paste -sd,)
    want_r=$(awk -v p="$pp" '$1 == "reader" && $3 == p && $4 ~ /^rt\// { print $2 }' "$out" | sort -u | paste -sd,)
    want_w=$(awk -v p="$pp" '$1 == "writer" && $3 == p && $4 ~ /^rt\// { print $2 }' "$out" | sort -u | paste -sd,)
    [ "$(tr ',' '\n' <<<"$want_r" | grep -c .)" = 1 ] || fail "DDS discovery: readers $want_r, expected 1"
    [ "$(tr ',' '\n' <<<"$want_w" | grep -c .)" = 2 ] || fail "DDS discovery: writers $want_w, expected 2"
    [ "$readers" = "$want_r" ] || fail "info readers $readers, DDS discovery $want_r"
    [ "$writers" = "$want_w" ] || fail "info writers $writers, DDS discovery $want_w"
    grep -q "^writer [0-9a-f]* $pp ros_discovery_info rmw_dds_common::msg::dds_::ParticipantEntitiesInfo_$" "$out" ||
        fail "no ros_discovery_info writer of type ParticipantEntitiesInfo_ seen"
    echo "node /$node: readers $readers writers $writers (participant $pp)"
}

ROUTES=(--in arm.state --out ros2:/arm/state --next --in arm.goal --out ros2:/arm/goal
    --next --in ros2:/arm/cmd --out arm.cmd --type "q:f64[7] qd:f64[7]")
bg ardnet "$ARDNET" "${ROUTES[@]}"
check ardnet
stop ardnet || fail "ardnet exit status"

bg ardnet "$ARDNET" --ros2-node arm_bridge_2 "${ROUTES[@]}"
check arm_bridge_2
stop ardnet || fail "ardnet exit status"

# The route file's ros2-node: key.
cat >"$T/routes.yaml" <<'YAML'
ros2-node: from_file
routes:
  - in: arm.state
    out: ros2:/arm/state
  - in: arm.goal
    out: ros2:/arm/goal
  - in: ros2:/arm/cmd
    out: arm.cmd
    type: "q:f64[7] qd:f64[7]"
YAML
bg ardnet "$ARDNET" --config "$T/routes.yaml"
check from_file
stop ardnet || fail "ardnet exit status"
sed -i 's/^ros2-node: .*/ros2-node: from-file/' "$T/routes.yaml"
rc=0
"$ARDNET" --config "$T/routes.yaml" >/dev/null 2>"$T/bad.err" || rc=$?
[ "$rc" = 100 ] || fail "ros2-node: from-file in a route file: exit $rc, expected 100"
grep -q "routes.yaml:1:12: ros2-node 'from-file' is not a ROS 2 node name" "$T/bad.err" ||
    fail "ros2-node: from-file: $(cat "$T/bad.err")"

for bad in "" 2arm arm-bridge "arm bridge" "$(printf 'a%.0s' {1..256})"; do
    rc=0
    "$ARDNET" --ros2-node "$bad" "${ROUTES[@]}" >/dev/null 2>"$T/bad.err" || rc=$?
    [ "$rc" = 100 ] || fail "--ros2-node '$bad': exit $rc, expected 100"
    grep -q "ros2-node '$bad' is not a ROS 2 node name" "$T/bad.err" ||
        fail "--ros2-node '$bad': $(cat "$T/bad.err")"
done
echo "ok: ardnet's node in ros_discovery_info with exactly its readers' and writers' GUIDs; participant name and enclave; bad names refused"
