# Every sample in is accounted for (docs/ros2.md, "QoS and domain"): a reliable DDS writer (the
# independent peer) into `--qos reliable` input routes, at 10 kHz into one route, then at 1 kHz
# into 100 routes at once; each route's `received` (which includes `superseded`) equals what
# the writer wrote, nothing dropped.
source "$(dirname "$0")/common.sh"
ARM="q:f64[7] qd:f64[7]"
RT="chrt -f 20"

# check ROUTE SENT: route ROUTE's counters account for SENT samples.
check() {
    local rec sup
    rec=$(counter ardnet "$1" received)
    sup=$(counter ardnet "$1" superseded)
    [ "$rec" = "$2" ] || fail "route $1: received=$rec superseded=$sup of $2 written"
    [ "$(counter ardnet "$1" dropped)" = 0 ] || fail "route $1: dropped $(counter ardnet "$1" dropped)"
    [ "$sup" -lt "$rec" ] || fail "route $1: superseded=$sup of received=$rec"
}

# 10 kHz into one route.
bg ardnet $RT "$ARDNET" --prio 20 --in ros2:/fast --out fast.x --type "$ARM" --ros2-type ArmState \
    --qos reliable
bg pub $RT "$PEER" pub arm rt/fast --reliable --count 10000 --rate 10000 --linger-ms 2000
finish pub || fail "the DDS writer failed"
sent=$(field pub sent)
[ "$sent" = 10000 ] || fail "the writer wrote $sent of 10000"
sleep 0.5
stop ardnet || fail "ardnet exit status"
check fast.x "$sent"
echo "10 kHz: received=$(counter ardnet fast.x received) superseded=$(counter ardnet fast.x superseded) of $sent"

# 1 kHz into 100 routes.
args=()
for ((i = 0; i < 100; i++)); do
    ((i)) && args+=(--next)
    args+=(--in "ros2:/many/t$i" --out "many.t$i" --type "$ARM" --ros2-type ArmState --qos reliable)
done
bg ardnet $RT "$ARDNET" --prio 20 "${args[@]}"
bg pub $RT "$PEER" pub arm rt/many/t --many 100 --reliable --count 1000 --rate 1000 --linger-ms 3000
finish pub || fail "the DDS writer (100 topics) failed"
sent=$(field pub sent)
[ "$sent" = 1000 ] || fail "the writer wrote $sent of 1000 to each topic"
sleep 0.5
stop ardnet || fail "ardnet exit status"
sup=0
for ((i = 0; i < 100; i++)); do
    check "many.t$i" "$sent"
    sup=$((sup + $(counter ardnet "many.t$i" superseded)))
done
echo "ok: 10 kHz into one route and 1 kHz into 100 routes: every sample written received (100 routes: $sup superseded in all)"
