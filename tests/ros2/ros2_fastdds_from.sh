# Fast DDS -> ardnet: independent eProsima Fast DDS writers ($PEER is fastdds_peer.cpp on
# fastddsgen's code; UDPv4 on loopback only) publish ArmCmd (best effort), AllTypes (reliable)
# and ArmState (reliable); ardnet takes the topics into local connections: ArmCmd by its default
# (best-effort) input, AllTypes by a `--qos reliable` input, ArmState by a default input of a
# route named with --ros2-type. A C reader of each connection gets the writer's values exactly,
# in order, and the last one written; the reliable input counts every one of the 1000 samples.
source "$(dirname "$0")/common.sh"
unset ROS_DISCOVERY_SERVER ROS_SUPER_CLIENT # (Fast DDS would become a discovery server client)

ARM="q:f64[7] qd:f64[7]"
ALL="counter:u64 a:i8 b:u8 c:i16 d:u16 e:i32 f:u32 g:i64 x:f32 y:f64 ai:i8[3] au:u16[5] af:f32[3] ad:f64[2] ag:i64[2] ab:u8[7]"
RT="chrt -f 20"
# The connections get their types from the routes (created by ardnet or by their readers, with
# the same fields: values.h).
bg ardnet $RT "$ARDNET" --prio 20 --in ros2:/arm/cmd --out arm.cmd --type "$ARM" \
    --next --in ros2:/all/types --out all.types --type "$ALL" --qos reliable \
    --next --in ros2:/arm/cmd2 --out arm.cmd2 --type "$ARM" --ros2-type ArmState
bg subA $RT "$LOCAL" sub arm arm.cmd --first-ms 30000 --idle-ms 1500
bg subB $RT "$LOCAL" sub all all.types --first-ms 30000 --idle-ms 1500
bg subC $RT "$LOCAL" sub arm arm.cmd2 --first-ms 30000 --idle-ms 1500
bg pubA "$PEER" pub cmd rt/arm/cmd --count 1000 --rate 1000 --wait-ms 30000
# (the reliable writer waits 1 s after its match, not 0.2 s: time for ardnet's reader to learn
# of the writer too, from the writer's discovery data, before the first of the 1000 counted)
bg pubB "$PEER" pub all rt/all/types --count 1000 --rate 1000 --reliable --wait-ms 30000 \
    --settle-ms 1000 --linger-ms 5000
bg pubC "$PEER" pub arm rt/arm/cmd2 --count 300 --rate 1000 --reliable --wait-ms 30000
finish pubA || fail "the best-effort Fast DDS writer never matched ardnet's input"
finish pubB || fail "the reliable Fast DDS writer never matched ardnet's reliable input"
finish pubC || fail "the Fast DDS writer of ArmState never matched the route with --ros2-type"
finish subA || fail "reader of arm.cmd: values wrong or none"
finish subB || fail "reader of all.types: values wrong or none"
finish subC || fail "reader of arm.cmd2: values wrong or none"
stop ardnet || fail "ardnet exit status"
for s in subA:1000 subB:1000 subC:300; do
    n=$(field ${s%:*} received)
    [ "$(field ${s%:*} bad)" = 0 ] && [ "$(field ${s%:*} older)" = 0 ] ||
        fail "${s%:*}: bad or reordered packets"
    # Latest value: a reader may skip packets, never get a wrong one; most must arrive.
    [ "$n" -ge $((${s#*:} / 2)) ] || fail "${s%:*}: only $n of ${s#*:}"
done
# The last value written is the last the reader got (the newest wins).
[ "$(field subA last)" = "$(field pubA last)" ] || fail "arm.cmd: last $(field subA last), written $(field pubA last)"
[ "$(field subB last)" = "$(field pubB last)" ] || fail "all.types: last $(field subB last), written $(field pubB last)"
[ "$(field subC last)" = "$(field pubC last)" ] || fail "arm.cmd2: last $(field subC last), written $(field pubC last)"
# The reliable input accounts for every sample of its reliable writer; the others got most.
[ "$(counter ardnet all.types received)" = 1000 ] ||
    fail "all.types: ardnet received $(counter ardnet all.types received) of 1000 reliable samples"
[ "$(counter ardnet arm.cmd received)" -ge 500 ] || fail "arm.cmd: ardnet received $(counter ardnet arm.cmd received)"
[ "$(counter ardnet arm.cmd2 received)" -ge 150 ] || fail "arm.cmd2: ardnet received $(counter ardnet arm.cmd2 received)"
for r in arm.cmd all.types arm.cmd2; do
    [ "$(counter ardnet $r dropped)" = 0 ] || fail "$r: samples dropped: $(grep "^route $r:" "$T/ardnet.err" | tail -1)"
done
echo "ok: from Fast DDS: arm.cmd $(field subA received)/1000 (best effort)," \
    "all.types $(field subB received)/1000 (reliable; ardnet counted $(counter ardnet all.types received))," \
    "arm.cmd2 $(field subC received)/300; values exact, the last ones delivered"
