# ardnet -> Fast DDS: two connections (ArmState; AllTypes, every basic type and arrays) written at
# 1 kHz and put on ROS 2 topics by one ardnet, read by independent eProsima Fast DDS peers ($PEER
# is fastdds_peer.cpp on fastddsgen's code; UDPv4 on loopback only). ardnet's default output
# (reliable) is read by a reliable and a best-effort Fast DDS reader, the `--qos best-effort`
# output by a best-effort one: each gets at least 95% of the 1000 packets, every value exactly as
# written, in order, and the reliable reader the last one. (The 1000 are written once every
# reader has had a warm-up sample, so once ardnet's writers have matched them: a reader sees a
# writer before the writer sees the reader, and a busy host can hold that apart for long.) A reliable Fast DDS reader on the
# best-effort output gets nothing, and ardnet reports it (the Fast DDS reader's QoS as ardnet
# read it from discovery) and counts it.
source "$(dirname "$0")/common.sh"
unset ROS_DISCOVERY_SERVER ROS_SUPER_CLIENT # (Fast DDS would become a discovery server client)

RT="chrt -f 20" # the counts are about ardnet's route, not about who else gets the CPU
# The connections exist (one packet each) so that ardnet takes their types from them.
"$LOCAL" pub arm arm.state --count 1 >/dev/null
"$LOCAL" pub all all.types --count 1 >/dev/null
bg ardnet $RT "$ARDNET" --prio 20 --in arm.state --out ros2:/arm/state \
    --next --in all.types --out ros2:/all/types --qos best-effort
for r in "relA arm --reliable" "beA arm" "beB all"; do
    read -r name msg rel <<<"$r"
    topic=rt/arm/state
    [ "$msg" = all ] && topic=rt/all/types
    bg "$name" $RT "$PEER" sub "$msg" "$topic" $rel --idle-ms 1500 --matched "$T/m$name" \
        --counters "$T/c$name"
done
for m in mrelA mbeA mbeB; do
    wait_file "$T/$m" 30 || fail "the Fast DDS reader ($m) never matched ardnet's writer"
done
# The incompatible reader, then: ardnet's report shows that it has seen it.
bg relB "$PEER" sub all rt/all/types --reliable --expect-none --first-ms 6000
for ((i = 0; i < 300; i++)); do
    grep -q "incompatible QoS on rt/all/types" "$T/ardnet.err" && break
    sleep 0.05
done
line=$(grep -m1 "incompatible QoS on rt/all/types" "$T/ardnet.err") ||
    fail "no report of the reliable Fast DDS reader on the best-effort output"
case $line in
*"policy RELIABILITY: DDS reader "*" (reliable, volatile) requests what this writer (best-effort, volatile) does not offer"*) ;;
*) fail "the report does not name the policy and the Fast DDS reader: $line" ;;
esac
# Warm-up at 100 Hz until every reader has a sample; the 1000 counted come after the last of it.
bg warmA "$LOCAL" pub arm arm.state --count 100000 --rate 100
bg warmB "$LOCAL" pub all all.types --count 100000 --rate 100
for c in crelA cbeA cbeB; do
    for ((i = 0; i < 600; i++)); do
        [ -s "$T/$c" ] && break
        sleep 0.05
    done
    [ -s "$T/$c" ] || fail "the Fast DDS reader ($c) had no warm-up sample after 30 s"
done
stop warmA && stop warmB || fail "warm-up writers failed"
bg pubA $RT "$LOCAL" pub arm arm.state --count 1000 --rate 1000
bg pubB $RT "$LOCAL" pub all all.types --count 1000 --rate 1000
finish pubA && finish pubB || fail "local writers failed"
finish relA || fail "reliable Fast DDS reader (ArmState): values wrong or none"
finish beA || fail "best-effort Fast DDS reader (ArmState): values wrong or none"
finish beB || fail "best-effort Fast DDS reader (AllTypes): values wrong or none"
finish relB || fail "a reliable Fast DDS reader got samples from ardnet's best-effort writer"
stop ardnet || fail "ardnet exit status"
declare -A got
for s in relA beA beB; do
    w=$(field warmA last)
    [ $s = beB ] && w=$(field warmB last)
    n=$(awk -v w="$w" '$1 > w' "$T/c$s" | wc -l)
    [ "$(field $s bad)" = 0 ] && [ "$(field $s older)" = 0 ] || fail "$s: bad or reordered samples"
    [ "$n" -ge 950 ] && [ "$n" -le 1000 ] || fail "$s: received $n of 1000 (need >= 950)"
    got[$s]=$n
done
[ "$(field relA last)" = "$(field pubA last)" ] ||
    fail "reliable reader: last $(field relA last), written last $(field pubA last)"
for r in arm.state all.types; do
    rec=$(counter ardnet $r received)
    sent=$(counter ardnet $r sent)
    [ "$rec" -ge 950 ] && [ "$sent" = "$rec" ] && [ "$(counter ardnet $r send_errors)" = 0 ] ||
        fail "route $r: received=$rec sent=$sent"
done
[ "$(counter ardnet all.types qos_incompatible)" = 1 ] ||
    fail "all.types: qos_incompatible=$(counter ardnet all.types qos_incompatible), expected 1"
echo "ok: Fast DDS readers: ArmState reliable ${got[relA]}/1000" \
    "(lat p50 $(field relA lat_med_us) us), best effort ${got[beA]}/1000;" \
    "AllTypes best effort ${got[beB]}/1000; values exact; the incompatible reader reported"
