# ROS_LOCALHOST_ONLY, ROS_AUTOMATIC_DISCOVERY_RANGE and ROS_STATIC_PEERS as ROS 2 Jazzy reads
# them, on two hosts (network namespaces, tests/lib/netns.sh): ardnet on hostA (no
# CYCLONEDDS_URI: the variables alone decide), graph readers (graph.c) on hostA and hostB.
# hostB's reader discovers by multicast on its network, as a default (SUBNET) ROS 2 node does;
# hostA's reader is configured as Jazzy's rmw_cyclonedds configures a LOCALHOST node (no
# multicast, this host as peer). The readers announce themselves every second (Cyclone's
# default is 30 s), so that one started before a slow ardnet listens is still found at once.
# Bad values are refused naming the variable.
PRIVATE_NET=0
source "$(dirname "$0")/common.sh"
: "${NETNS:?} ${GRAPH:?}"
NETNS_NO_TRAP=1
source "$NETNS"
netns_require_root
trap 'cleanup_common; netns_destroy' EXIT
netns_create hostA hostB
A=$(netns_cmd hostA)
B=$(netns_cmd hostB)
addrA=$(netns_addr hostA)
addrB=$(netns_addr hostB)
uriB="<CycloneDDS><Domain><General><Interfaces><NetworkInterface name=\"eth0\"/></Interfaces>\
<AllowMulticast>true</AllowMulticast></General><Discovery><SPDPInterval>1s</SPDPInterval></Discovery>\
</Domain></CycloneDDS>"
uriA_local="<CycloneDDS><Domain><General><AllowMulticast>false</AllowMulticast></General>\
<Discovery><SPDPInterval>1s</SPDPInterval><ParticipantIndex>auto</ParticipantIndex><MaxAutoParticipantIndex>32\
</MaxAutoParticipantIndex><Peers><Peer address=\"localhost\"/></Peers></Discovery></Domain>\
</CycloneDDS>"
unset CYCLONEDDS_URI
$A "$LOCAL" pub arm arm.state --count 1 >/dev/null

start() { # ENV...: ardnet on hostA with these variables
    bg ardnet env "$@" $A "$ARDNET" --in arm.state --out ros2:/arm/state
}
# sees NAME HOST URI SECONDS: the graph reader on HOST finds ardnet's node
sees() {
    CYCLONEDDS_URI=$3 ${!2} "$GRAPH" "$4" >"$T/$1.txt" 2>&1 || return 1
    grep -q '^info .* / ardnet readers= writers=[0-9a-f]\{32\}$' "$T/$1.txt"
}
# not_seen NAME HOST URI SECONDS: nothing of any participant within SECONDS
not_seen() {
    local rc=0
    CYCLONEDDS_URI=$3 ${!2} "$GRAPH" "$4" >"$T/$1.txt" 2>&1 || rc=$?
    [ "$rc" = 1 ] && ! grep -q '^participant ' "$T/$1.txt"
}

# Unset (SUBNET): hostB finds ardnet (so the checks below can fail).
start ROS_DOMAIN_ID="$ROS_DOMAIN_ID"
sees subnet_B B "$uriB" 20 || fail "SUBNET: hostB did not see ardnet: $(cat "$T/subnet_B.txt")"
stop ardnet || fail "ardnet exit status"
echo "SUBNET (unset): hostB sees ardnet"

for v in ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST ROS_LOCALHOST_ONLY=1 \
    "ROS_LOCALHOST_ONLY=1 ROS_STATIC_PEERS=$addrB"; do
    # shellcheck disable=SC2086
    start $v
    (not_seen far B "$uriB" 4) &
    far=$!
    sees near A "$uriA_local" 20 || fail "$v: hostA's LOCALHOST reader did not see ardnet: $(cat "$T/near.txt")"
    wait $far || fail "$v: hostB saw ardnet: $(cat "$T/far.txt")"
    stop ardnet || fail "$v: ardnet exit status"
    echo "$v: hostA sees ardnet, hostB does not"
done
grep -q "ROS_LOCALHOST_ONLY=1: ROS_STATIC_PEERS is ignored" "$T/ardnet.err" ||
    fail "ROS_LOCALHOST_ONLY=1 with ROS_STATIC_PEERS: not reported: $(cat "$T/ardnet.err")"

# LOCALHOST with a static peer: hostB's reader, which neither multicasts nor knows hostA (it
# only listens), is found by ardnet.
uriB_uni="<CycloneDDS><Domain><General><Interfaces><NetworkInterface name=\"eth0\"/></Interfaces>\
<AllowMulticast>false</AllowMulticast></General><Discovery><SPDPInterval>1s</SPDPInterval>\
<ParticipantIndex>auto</ParticipantIndex></Discovery></Domain></CycloneDDS>"
start ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST "ROS_STATIC_PEERS=;$addrB;"
sees peer_B B "$uriB_uni" 20 || fail "LOCALHOST with ROS_STATIC_PEERS: hostB did not see ardnet: $(cat "$T/peer_B.txt")"
stop ardnet || fail "ardnet exit status"
echo "LOCALHOST, ROS_STATIC_PEERS=$addrB: hostB sees ardnet"

# OFF: not even this host's LOCALHOST reader.
start ROS_AUTOMATIC_DISCOVERY_RANGE=OFF
not_seen off_A A "$uriA_local" 4 || fail "OFF: hostA saw ardnet: $(cat "$T/off_A.txt")"
stop ardnet || fail "ardnet exit status"
echo "OFF: hostA does not see ardnet"

for v in ROS_AUTOMATIC_DISCOVERY_RANGE=localhost ROS_LOCALHOST_ONLY=yes "ROS_STATIC_PEERS=a b"; do
    rc=0
    env "$v" $A "$ARDNET" --in arm.state --out ros2:/arm/state >/dev/null 2>"$T/bad.err" || rc=$?
    [ "$rc" = 100 ] || fail "$v: exit $rc, expected 100"
    grep -q "^ardnet: ${v%%=*}" "$T/bad.err" || fail "$v: $(cat "$T/bad.err")"
done
echo "ok: ROS_LOCALHOST_ONLY, ROS_AUTOMATIC_DISCOVERY_RANGE and ROS_STATIC_PEERS as in ROS 2 Jazzy; bad values refused"
