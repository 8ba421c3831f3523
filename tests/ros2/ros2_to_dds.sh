# ardnet -> DDS: two connections (ArmState and AllTypes, every basic type and arrays) written at
# 1 kHz, put on ROS 2 topics by one ardnet; an independent DDS peer (idlc's code) receives at
# least 95% of 1000 packets of each with every value exactly as written, in order.
source "$(dirname "$0")/common.sh"

# SCHED_FIFO for ardnet and the peer (the machine may be busy; the count is about ardnet's
# route, not about who else gets the CPU).
RT="chrt -f 20"
bg subA $RT "$PEER" sub arm rt/arm/state --first-ms 20000 --idle-ms 1500 --matched "$T/mA"
bg subB $RT "$PEER" sub all rt/all/types --first-ms 20000 --idle-ms 1500 --matched "$T/mB"
# The connections exist (one packet each) so that ardnet takes their types from them.
"$LOCAL" pub arm arm.state --count 1 >/dev/null
"$LOCAL" pub all all.types --count 1 >/dev/null
bg ardnet "$ARDNET" --prio 20 --in arm.state --out ros2:/arm/state --next --in all.types --out ros2:/all/types
wait_file "$T/mA" 20 && wait_file "$T/mB" 20 || fail "the DDS readers never matched ardnet's writers"
sleep 0.3 # (the matched reader is seen by ardnet's writer, too)
bg pubA "$LOCAL" pub arm arm.state --count 1000 --rate 1000
bg pubB "$LOCAL" pub all all.types --count 1000 --rate 1000
finish pubA && finish pubB || fail "local writers failed"
finish subA || fail "DDS peer (ArmState): values wrong or none"
finish subB || fail "DDS peer (AllTypes): values wrong or none"
stop ardnet || fail "ardnet exit status"
for s in subA subB; do
    n=$(field $s received)
    [ "$(field $s bad)" = 0 ] && [ "$(field $s older)" = 0 ] || fail "$s: bad or reordered samples"
    # The one packet written before the test counts too when ardnet published it at start.
    [ "$n" -ge 950 ] && [ "$n" -le 1001 ] || fail "$s: received $n of 1000 (need >= 950)"
done
# Counters as for UDP routes: every packet taken in was sent, none failed.
for r in arm.state all.types; do
    rec=$(counter ardnet $r received)
    sent=$(counter ardnet $r sent)
    [ "$rec" -ge 950 ] && [ "$sent" = "$rec" ] && [ "$(counter ardnet $r send_errors)" = 0 ] ||
        fail "route $r: received=$rec sent=$sent"
done
echo "ok: ArmState $(field subA received)/1000, AllTypes $(field subB received)/1000, values exact"
