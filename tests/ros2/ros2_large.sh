# Large samples, both directions: a 1 MiB image at 30 Hz and a 4 MiB point cloud at 10 Hz, each a
# counter and then bytes that depend on it and on their place (values.h), so that one fragment
# lost, repeated or misplaced shows. ardnet -> DDS: local writers, ardnet's default (reliable)
# outputs, independent DDS readers (the image's best effort; the cloud's reliable, ROS 2's default
# profile: a best-effort reader loses a 4 MiB sample whose fragments overrun its socket buffer).
# DDS -> ardnet: DDS writers (one best effort, one reliable), ardnet inputs, local readers. Every
# sample that arrives is exact and in order, at least half arrive (latest value: a keep-last-1
# writer or reader skips samples when the machine is busy; 26-30 of 30 clouds and 88-90 of 90
# images arrived here), the last of each reliable path arrives, and the reliable input counts
# all 30.
source "$(dirname "$0")/common.sh"

RT="chrt -f 20"
# At least PCT% of the samples arrive whole; a sanitizer build (ARD_SANITIZED=1, several times
# slower) drops more 4 MiB samples of a keep-last-1 writer before all their fragments are in.
PCT=50
[ "${ARD_SANITIZED:-0}" = 1 ] && PCT=25
cat >"$T/routes.yaml" <<YAML
ros-domain: $ROS_DOMAIN_ID
routes:
  - in: cam.image
    out: ros2:/cam/image
  - in: lidar.cloud
    out: ros2:/lidar/cloud
  - in: ros2:/cam/back
    out: cam.back
    type: "counter:u64 data:u8[1048568]"
    ros2-type: ardnet_msgs/msg/CamImage
  - in: ros2:/lidar/back
    out: lidar.back
    type: "counter:u64 data:u8[4194296]"
    ros2-type: ardnet_msgs/msg/LidarCloud
    qos: reliable
YAML
bg subI $RT "$PEER" sub image rt/cam/image --first-ms 20000 --idle-ms 1500 --matched "$T/mI"
bg subC $RT "$PEER" sub cloud rt/lidar/cloud --reliable --first-ms 20000 --idle-ms 1500 --matched "$T/mC"
# The outputs' connections exist (one packet each) so that ardnet takes their types from them.
"$LOCAL" pub image cam.image --count 1 >/dev/null
"$LOCAL" pub cloud lidar.cloud --count 1 >/dev/null
bg ardnet "$ARDNET" --prio 20 --config "$T/routes.yaml"
wait_file "$T/mI" 20 && wait_file "$T/mC" 20 || fail "the DDS readers never matched ardnet's writers"
sleep 0.3
bg pubI "$LOCAL" pub image cam.image --count 90 --rate 30
bg pubC "$LOCAL" pub cloud lidar.cloud --count 30 --rate 10
finish pubI && finish pubC || fail "local writers failed"
finish subI || fail "DDS peer (1 MiB image): samples wrong or none"
finish subC || fail "DDS peer (4 MiB cloud): samples wrong or none"
for s in subI:90 subC:30; do
    n=$(field ${s%:*} received)
    [ "$(field ${s%:*} bad)" = 0 ] && [ "$(field ${s%:*} older)" = 0 ] ||
        fail "${s%:*}: wrong or reordered samples"
    # (the packet written before the test counts too when ardnet published it at start)
    [ "$n" -ge $((${s#*:} * PCT / 100)) ] || fail "${s%:*}: received $n of ${s#*:}"
done
# Reliable: the newest sample reaches the reader in the end (best effort may lose it).
[ "$(field subC last)" = "$(field pubC last)" ] || fail "cloud: the last sample did not arrive"

# DDS -> ardnet (the local readers' connections are created by ardnet with the routes' types).
bg inI $RT "$LOCAL" sub image cam.back --first-ms 20000 --idle-ms 1500
bg inC $RT "$LOCAL" sub cloud lidar.back --first-ms 20000 --idle-ms 1500
bg ddsI "$PEER" pub image rt/cam/back --count 90 --rate 30
bg ddsC "$PEER" pub cloud rt/lidar/back --count 30 --rate 10 --reliable
finish ddsI && finish ddsC || fail "DDS peer could not publish (no match with ardnet?)"
finish inI || fail "reader of cam.back: packets wrong or none"
finish inC || fail "reader of lidar.back: packets wrong or none"
stop ardnet || fail "ardnet exit status"
for s in inI:90 inC:30; do
    n=$(field ${s%:*} received)
    [ "$(field ${s%:*} bad)" = 0 ] && [ "$(field ${s%:*} older)" = 0 ] ||
        fail "${s%:*}: wrong or reordered packets"
    [ "$n" -ge $((${s#*:} * PCT / 100)) ] || fail "${s%:*}: received $n of ${s#*:}"
done
[ "$(field inC last)" = "$(field ddsC last)" ] || fail "lidar.back: the last sample did not arrive"
# The reliable input accounts for every sample of its reliable writer.
[ "$(counter ardnet lidar.back received)" = 30 ] ||
    fail "lidar.back: ardnet received $(counter ardnet lidar.back received) of 30"
echo "ok: out image $(field subI received)/90 (lat p50 $(field subI lat_med_us) us)," \
    "cloud $(field subC received)/30 (lat p50 $(field subC lat_med_us) us);" \
    "in image $(field inI received)/90, cloud $(field inC received)/30; every byte exact"
