# Two hosts (network namespaces, tests/lib/netns.sh): the writer and ardnet --out ros2: on
# hostA, the DDS peer on hostB; Cyclone on each uses eth0 only, unicast to the other host.
PRIVATE_NET=0
source "$(dirname "$0")/common.sh"
: "${NETNS:?}"
NETNS_NO_TRAP=1
source "$NETNS"
netns_require_root
trap 'cleanup_common; netns_destroy' EXIT
netns_create hostA hostB
A=$(netns_cmd hostA)
B=$(netns_cmd hostB)
uriA=$(cyclone_uri eth0 "$(netns_addr hostB)")
uriB=$(cyclone_uri eth0 "$(netns_addr hostA)")

CYCLONEDDS_URI=$uriB bg sub $B chrt -f 20 "$PEER" sub arm rt/arm/state --first-ms 20000 --idle-ms 1500 \
    --matched "$T/m"
$A "$LOCAL" pub arm arm.state --count 1 >/dev/null
CYCLONEDDS_URI=$uriA bg ardnet $A "$ARDNET" --prio 20 --in arm.state --out ros2:/arm/state
wait_file "$T/m" 20 || fail "the DDS reader on hostB never matched ardnet on hostA"
sleep 0.3
$A "$LOCAL" pub arm arm.state --count 1000 --rate 1000 >/dev/null
finish sub || fail "DDS peer on hostB: values wrong or none"
stop ardnet || fail "ardnet exit status"
n=$(field sub received)
[ "$n" -ge 950 ] || fail "hostB received $n of 1000 (need >= 950)"
echo "ok: hostA -> hostB over DDS, $n/1000, values exact"
