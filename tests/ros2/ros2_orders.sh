# Start order and restarts. ardnet -> DDS: the writer runs first, ardnet joins, a DDS reader
# joins later and gets samples; ardnet restarts and a new DDS reader gets samples from the new
# one. DDS -> ardnet: the DDS writer runs before ardnet exists; then ardnet restarts and a new
# DDS writer (a restarted peer) reaches the reader through it, in order, values exact.
source "$(dirname "$0")/common.sh"

# ---- ardnet -> DDS ----
bg w "$LOCAL" pub arm arm.state --count 9000 --rate 1000
sleep 0.3
bg ardnet1 "$ARDNET" --in arm.state --out ros2:/arm/state
sleep 0.5
bg sub1 "$PEER" sub arm rt/arm/state --count 300 --first-ms 10000
finish sub1 || fail "a DDS reader that joined late got nothing or wrong values"
stop ardnet1 || fail "ardnet exit status"
bg sub2 "$PEER" sub arm rt/arm/state --count 300 --first-ms 10000
sleep 0.5
bg ardnet2 "$ARDNET" --in arm.state --out ros2:/arm/state
finish sub2 || fail "no samples from the restarted ardnet to a restarted DDS reader"
stop ardnet2 || fail "ardnet exit status (2)"
stop w || true
[ "$(field sub2 first)" -gt "$(field sub1 last)" ] || fail "the second reader got older samples"

# ---- DDS -> ardnet ----
bg r "$LOCAL" sub arm arm.cmd --first-ms 20000 --idle-ms 4000
sleep 0.2
bg pub1 "$PEER" pub cmd rt/arm/cmd --count 500 --rate 1000
sleep 0.5 # the DDS writer waits for a reader: ardnet starts after it
bg ardnet3 "$ARDNET" --in ros2:/arm/cmd --out arm.cmd
finish pub1 || fail "the DDS writer never matched ardnet"
stop ardnet3 || fail "ardnet exit status (3)"
bg ardnet4 "$ARDNET" --in ros2:/arm/cmd --out arm.cmd
bg pub2 "$PEER" pub cmd rt/arm/cmd --count 500 --rate 1000
finish pub2 || fail "the restarted DDS writer never matched the restarted ardnet"
finish r || fail "the reader of arm.cmd: values wrong, reordered, or none"
stop ardnet4 || fail "ardnet exit status (4)"
[ "$(field r last)" = "$(field pub2 last)" ] || fail "the reader's last packet is not the restarted writer's last"
[ "$(field r first)" -le "$(field pub1 last)" ] || fail "nothing from the first DDS writer arrived"

# ---- --qos transient-local: a reader that comes after the last packet still gets it ----
bg ardnet5 "$ARDNET" --in arm.state --out ros2:/arm/state --qos transient-local
sleep 0.5
"$LOCAL" pub arm arm.state --count 1 >"$T/one.out"
last=$(tail -1 "$T/one.out" | sed -n 's/.*last=//p')
sleep 0.5
bg late "$PEER" sub arm rt/arm/state --transient-local --count 1 --first-ms 5000
finish late || fail "a late transient-local reader did not get the newest packet"
[ "$(field late last)" = "$last" ] || fail "the late reader got $(field late last), not $last"
stop ardnet5 || fail "ardnet exit status (5)"
# The default (volatile) keeps nothing for late readers.
bg ardnet6 "$ARDNET" --in arm.state --out ros2:/arm/state
sleep 0.5
"$LOCAL" pub arm arm.state --count 1 >/dev/null
sleep 0.5
bg late2 "$PEER" sub arm rt/arm/state --transient-local --first-ms 1500 --expect-none
finish late2 || fail "a volatile route kept a packet for a late reader"
stop ardnet6 || fail "ardnet exit status (6)"
echo "ok: both start orders, ardnet restarts, DDS peer restarts, transient-local"
