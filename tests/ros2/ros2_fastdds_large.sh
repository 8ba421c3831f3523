# Large samples between ardnet and eProsima Fast DDS ($PEER is fastdds_peer.cpp on fastddsgen's
# code; UDPv4 on loopback only, so every sample travels as RTPS DATA_FRAG fragments): a 1 MiB
# image at 30 Hz, each a counter and then bytes that depend on it and on their place (values.h),
# so that one fragment lost, repeated or misplaced shows. ardnet -> Fast DDS: a local writer,
# ardnet's default (reliable) output, a reliable and a best-effort Fast DDS reader. Fast DDS ->
# ardnet: a reliable Fast DDS writer into a `--qos reliable` input, a best-effort one into the
# default input, local readers. Every sample that arrives is exact and in order, at least half
# arrive (latest value: a keep-last-1 writer or reader skips samples when the machine is busy),
# the last of each reliable path arrives, and the reliable input counts all 60 (but see below).
source "$(dirname "$0")/common.sh"
unset ROS_DISCOVERY_SERVER ROS_SUPER_CLIENT # (Fast DDS would become a discovery server client)

RT="chrt -f 20"
IMAGE="counter:u64 data:u8[1048568]"
PCT=50
"$LOCAL" pub image cam.image --count 1 >/dev/null
bg ardnet $RT "$ARDNET" --prio 20 --in cam.image --out ros2:/cam/image \
    --next --in ros2:/cam/back --out cam.back --type "$IMAGE" --ros2-type CamImage --qos reliable \
    --next --in ros2:/cam/be --out cam.be --type "$IMAGE" --ros2-type CamImage
bg relI $RT "$PEER" sub image rt/cam/image --reliable --idle-ms 2000 --matched "$T/mrel"
bg beI $RT "$PEER" sub image rt/cam/image --idle-ms 2000 --matched "$T/mbe"
wait_file "$T/mrel" 30 && wait_file "$T/mbe" 30 || fail "the Fast DDS readers never matched ardnet's writer"
sleep 0.3
bg pubI $RT "$LOCAL" pub image cam.image --count 60 --rate 30
finish pubI || fail "local writer failed"
finish relI || fail "reliable Fast DDS reader (1 MiB image): samples wrong or none"
finish beI || fail "best-effort Fast DDS reader (1 MiB image): samples wrong or none"
for s in relI beI; do
    n=$(field $s received)
    [ "$(field $s bad)" = 0 ] && [ "$(field $s older)" = 0 ] || fail "$s: wrong or reordered samples"
    # (the packet written before the test counts too when ardnet published it at start)
    [ "$n" -ge $((60 * PCT / 100)) ] || fail "$s: received $n of 60"
done
# Reliable: the newest sample reaches the reader in the end (best effort may lose it).
[ "$(field relI last)" = "$(field pubI last)" ] || fail "image: the last sample did not reach the reliable reader"

# Fast DDS -> ardnet (the local readers' connections are created by ardnet with the routes' types).
bg inR $RT "$LOCAL" sub image cam.back --first-ms 30000 --idle-ms 2000
bg inB $RT "$LOCAL" sub image cam.be --first-ms 30000 --idle-ms 2000
# One writer after the other (the reliable one is counted sample by sample: no other writer's
# fragments on the wire while it and ardnet discover each other).
bg ddsR "$PEER" pub image rt/cam/back --count 60 --rate 30 --reliable --linger-ms 10000
finish ddsR || fail "the reliable Fast DDS writer never matched ardnet's reliable input"
bg ddsB "$PEER" pub image rt/cam/be --count 60 --rate 30
finish ddsB || fail "the best-effort Fast DDS writer never matched ardnet's input"
finish inR || fail "reader of cam.back: packets wrong or none"
finish inB || fail "reader of cam.be: packets wrong or none"
stop ardnet || fail "ardnet exit status"
for s in inR inB; do
    n=$(field $s received)
    [ "$(field $s bad)" = 0 ] && [ "$(field $s older)" = 0 ] || fail "$s: wrong or reordered packets"
    [ "$n" -ge $((60 * PCT / 100)) ] || fail "$s: received $n of 60"
done
[ "$(field inR last)" = "$(field ddsR last)" ] || fail "cam.back: the last sample did not arrive"
# The reliable input accounts for every sample of its reliable writer, but for the first one in
# one known case (docs/ros2.md, "What was tested"): when the Fast DDS writer's first heartbeat
# reaches Cyclone before the discovery data of the writer, a Cyclone 0.10 reader acknowledges
# the first sample while its fragments are still coming and then drops it (a plain Cyclone
# reader, without ardnet, does the same). Then exactly that one is missing: ardnet counted 59,
# the local reader got all 59, and the writer's first is not among them.
n=$(counter ardnet cam.back received)
if [ "$n" = 59 ] && [ "$(field inR received)" = 59 ] && [ "$(field inR first)" != "$(field ddsR first)" ]; then
    echo "note: the first fragmented sample of the reliable Fast DDS writer was not delivered (Cyclone)"
else
    [ "$n" = 60 ] || fail "cam.back: ardnet received $n of 60 (local reader $(field inR received))"
fi
for r in cam.back cam.be; do
    [ "$(counter ardnet $r dropped)" = 0 ] || fail "$r: samples dropped: $(grep "^route $r:" "$T/ardnet.err" | tail -1)"
done
echo "ok: out 1 MiB image: reliable $(field relI received)/60 (lat p50 $(field relI lat_med_us) us)," \
    "best effort $(field beI received)/60; in: reliable $(field inR received)/60" \
    "(ardnet counted $(counter ardnet cam.back received)), best effort $(field inB received)/60; every byte exact"
