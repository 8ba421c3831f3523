#!/bin/bash
# Sealed links under attack: hostA and hostB bridge a 1 kHz stream with --key; hostX, a third
# host on the same bridge (ageing time 0: it hears every frame, like a hub or a mirrored
# port), records the datagrams and sends its own with A's source address and port
# (tests/ardnet/attacker.py, raw sockets). One reader on B runs through 1-4 and fails on any
# damaged, older or repeated packet: a forged or replayed datagram that got through would be
# one of those. Needs root.
#  1. forged (a recorded datagram with its sequence raised, a payload byte flipped, a plain
#     version 1 datagram): every one refused and counted as drop_auth, the flow goes on.
#  2. the recording replayed during the flow: nothing of it delivered, all counted.
#  3. A's ardnet restarted (new epoch), then its writer stopped: the recording of the old
#     epoch replayed: nothing delivered (received unchanged), counted.
#  4. B's ardnet restarted while A is quiet: the recordings of A's current and old epoch
#     replayed: nothing delivered; then A's writer again: delivered through the restarted B.
#  6. the catalog (--auto), with a key: a forged want of the attacker's gets 0 bytes, a forged
#     has makes no conflict, B's recorded snapshot (when it wanted nothing) replayed, and with
#     its number far ahead, stop nothing: A forwards to B throughout, and counts the refusals.
#  7. the same without a key: the forged far-ahead snapshot stops A's forward to B for at
#     most the peer timeout (1 s) and a period; 2.5 s later B gets A's packets.
#  5. without a key: two forged datagrams with a high sequence stop the route for at most the
#     hold-off (it took a restart of the sender before).
TEST_NAME=seal_netns
PRIVATE_NET=0 # the hosts are namespaces of their own
source "$(dirname "$0")/common.sh"
source "$SRCDIR/tests/lib/netns.sh"
netns_require_root
NETNS_NO_TRAP=1
trap 'cleanup_common; netns_destroy' EXIT
netns_create hostA hostB hostX
ip -n "$(netns_netns sw)" link set br0 type bridge ageing_time 0
TYPE="u64 u64 i64 u32[250]"
A=$(netns_cmd hostA)
B=$(netns_cmd hostB)
X=$(netns_cmd hostX)
ATTACK="/usr/bin/python3 $SRCDIR/tests/ardnet/attacker.py"
"$ARDNET" keygen "$T/robot.key"
KEY=(--key "$T/robot.key")
start_A() { bg_ready ardA $A "$ARDNET" "${KEY[@]}" --in arm.state --out udp://hostB:7001; }
start_B() {
    bg_ready ardB $B "$ARDNET" "${KEY[@]}" --in udp://:7001 --out arm.state --size 1024 \
        --type "$TYPE"
}
# cnt KEY: B's counter KEY now (SIGUSR1 prints them)
cnt() {
    counter_now "$T/ardB.pid" "$T/ardB.err" arm.state "$1"
}
dropped() { cnt dropped; }

start_B
bg sub $B "$TBLOCK" sub --ard data=arm.state --idle-ms 15000 --result "$T/sub.result"
bg pub $A "$TBLOCK" pub --ard data=arm.state --rate 1000
sleep 0.2
start_A
sleep 0.3
n=$($X $ATTACK capture 7001 1 "$T/cap1.txt")
[ "$n" -ge 300 ] || fail "the attacker heard only $n datagrams of A's"
echo "attacker recorded $n sealed datagrams"

# ---- 1. forged ----------------------------------------------------------------------------
a0=$(cnt drop_auth)
r0=$(cnt received)
# (paced: B's receive buffer is kept small, latest value, and would drop a burst unseen)
$X $ATTACK forge "$T/cap1.txt" seq-high --count 200 --gap-ms 0.5 >/dev/null
$X $ATTACK forge "$T/cap1.txt" flip --count 200 --gap-ms 0.5 >/dev/null
$X $ATTACK forge "$T/cap1.txt" plain --count 200 --gap-ms 0.5 >/dev/null
sleep 0.2
a1=$(cnt drop_auth)
# (all of them, unless the kernel dropped some from B's small buffer under load: 95%; none
# was delivered, or the reader fails)
[ "$((a1 - a0))" -ge 570 ] && [ "$((a1 - a0))" -le 600 ] ||
    fail "1: drop_auth rose by $((a1 - a0)), 600 forged datagrams were sent"
[ "$(cnt received)" -ge $((r0 + 300)) ] || fail "1: the flow stopped under forged datagrams"
grep -q "are not sealed" "$T/ardB.err" || fail "1: B did not name the unsealed datagrams' source"
echo "1: 600 forged datagrams, drop_auth +$((a1 - a0))"

# ---- 2. replayed during the flow ------------------------------------------------------------
d0=$(dropped)
$X $ATTACK replay "$T/cap1.txt" --gap-ms 0.5 >/dev/null
sleep 0.2
d1=$(dropped)
[ "$((d1 - d0))" -ge "$((n * 95 / 100))" ] || fail "2: $n replayed, only $((d1 - d0)) counted as dropped"
echo "2: $n replayed during the flow, dropped +$((d1 - d0))"

# ---- 3. after A's restart ---------------------------------------------------------------------
stop ardA
start_A
sleep 0.5
n2=$($X $ATTACK capture 7001 0.5 "$T/cap2.txt")
[ "$n2" -ge 100 ] || fail "3: the attacker heard only $n2 datagrams of the restarted A"
stop pub
sleep 0.5
r0=$(cnt received)
d0=$(dropped)
$X $ATTACK replay "$T/cap1.txt" --count 400 --gap-ms 0.5 >/dev/null
sleep 0.3
[ "$(cnt received)" = "$r0" ] || fail "3: the old epoch's recording was delivered after A's restart"
[ "$(($(dropped) - d0))" -ge 380 ] || fail "3: the replayed datagrams were not all counted"
echo "3: 400 of A's previous run replayed after its restart: none delivered"

# ---- 4. after B's restart -----------------------------------------------------------------
stop ardB
start_B
sleep 0.3
$X $ATTACK replay "$T/cap2.txt" --count 400 --gap-ms 0.5 >/dev/null
$X $ATTACK replay "$T/cap1.txt" --count 400 --gap-ms 0.5 >/dev/null
sleep 0.5
[ "$(cnt received)" = 0 ] || fail "4: recordings were delivered by the restarted B"
[ "$(dropped)" -ge 760 ] || fail "4: the replayed datagrams were not counted ($(dropped))"
echo "4: 800 replayed after B's restart: none delivered ($(cnt drop_old) drop_old, $(cnt drop_epoch) drop_epoch)"
bg pub $A "$TBLOCK" pub --ard data=arm.state --rate 1000 --count 500
wait "$(cat "$T/pub.pid")" || fail "writer"
rm -f "$T/pub.pid"
wait "$(cat "$T/sub.pid")" || fail "4: the reader saw a damaged, older or repeated packet: $(cat "$T/sub.result")"
rm -f "$T/sub.pid"
echo "reader: $(cat "$T/sub.result")"
[ "$(kv "$T/sub.result" last)" = "$(sed -n 's/.*last=//p' "$T/pub.out")" ] ||
    fail "4: the reader did not get the writer's last packet through the restarted B"
stop ardA
stop ardB

# ---- 6. the catalog, with a key ----------------------------------------------------------------
start_auto() { # NAME NSCMD HOSTNAME: ardnet --auto (X listed as a peer: the worst case)
    # shellcheck disable=SC2016,SC2086
    bg_ready "$1" $2 unshare --uts sh -c 'hostname "$0" && exec "$@"' "$3" \
        "$ARDNET" --auto --auto-peers hostA,hostB,hostX "${KEY[@]}" --stats-file "$T/$1.stats"
}
cat_counter() { grep '^catalog ' "$T/$1.stats" | tr ' ' '\n' | sed -n "s/^$2=//p"; }
IPA=$(netns_addr hostA)
IPB=$(netns_addr hostB)
IPX=$(netns_addr hostX)
auto_attack() { # the catalog under attack; PASS when nothing changed
    start_auto autoA "$A" hostA
    start_auto autoB "$B" hostB
    bg pubc $A "$TBLOCK" pub --ard data=cat.state --rate 200
    $X $ATTACK capture 7400 0.6 "$T/cat.txt" >/dev/null # B wants nothing yet
    bg subc $B "$TBLOCK" sub --ard data=cat.state --first-ms 1500 --idle-ms 8000 \
        --result "$T/subc.result"
    sleep 1.5
    bg listen $X $ATTACK listen 7999 3
    sleep 0.2
    # exfiltration (a want of X's), a second writer (a has of X's), B's snapshot of when it
    # wanted nothing with its number far ahead, and replayed
    $X $ATTACK announce "$T/cat.txt" "$IPX" "$IPA" want cat.state 1024 "$TYPE" 7999 >/dev/null
    $X $ATTACK announce "$T/cat.txt" "$IPX" "$IPA" has cat.state 1024 "$TYPE" 7998 >/dev/null
    $X $ATTACK forge "$T/cat.txt" ardc-seq --from "$IPB" --to "$IPA" --count 3 >/dev/null
    $X $ATTACK replay "$T/cat.txt" >/dev/null
}
auto_attack
wait "$(cat "$T/listen.pid")"
rm -f "$T/listen.pid"
[ "$(cat "$T/listen.out")" = 0 ] || fail "6: the attacker's want got $(cat "$T/listen.out") bytes"
sleep 0.5
kill -USR1 "$(cat "$T/autoA.pid")" # (the stats file again, now)
sleep 0.3
[ "$(cat_counter autoA peers)" = 1 ] || fail "6: A counts $(cat_counter autoA peers) peers"
[ "$(cat_counter autoA conflicts)" = 0 ] || fail "6: the forged has made a conflict on A"
[ "$(cat_counter autoA started)" = 1 ] && [ "$(cat_counter autoA stopped)" = 0 ] ||
    fail "6: A's forwards changed: $(grep '^catalog' "$T/autoA.stats")"
[ "$(cat_counter autoA auth)" -ge 10 ] || fail "6: A counted $(cat_counter autoA auth) refused announcements"
stop pubc
wait "$(cat "$T/subc.pid")" || fail "6: reader: $(cat "$T/subc.result")"
rm -f "$T/subc.pid"
[ "$(kv "$T/subc.result" received)" -ge 600 ] || fail "6: the forward was disturbed: $(cat "$T/subc.result")"
echo "6: catalog with a key: forged want 0 bytes, forged has and snapshots changed nothing ($(cat_counter autoA auth) refused)"
stop autoA
stop autoB

# ---- 7. the catalog without a key: a snapshot number far ahead stops a forward for 1 s at most
KEY=()
auto_attack
sleep 2.5
$B "$TBLOCK" sub --ard data=cat.state --first-ms 1000 --duration-ms 1000 --result "$T/late.result" ||
    fail "7: after a forged snapshot, B gets nothing from A: $(cat "$T/late.result")"
[ "$(kv "$T/late.result" received)" -ge 50 ] || fail "7: $(cat "$T/late.result")"
echo "7: catalog without a key: forwarding again 2.5 s after a forged snapshot ($(cat "$T/late.result"));" \
    "the forged want got $(cat "$T/listen.out" 2>/dev/null || echo ?) bytes (counted when it ended)"
stop pubc
stop autoA
stop autoB
KEY=(--key "$T/robot.key")

# ---- 5. without a key: the jam is gone ------------------------------------------------------------
KEY=()
start_B
bg pub $A "$TBLOCK" pub --ard data=arm.state --rate 1000
start_A
sleep 0.3
$X $ATTACK capture 7001 0.2 "$T/cap3.txt" >/dev/null
$X $ATTACK forge "$T/cap3.txt" seq-high --count 2 >/dev/null
sleep 0.5 # the hold-off (0.25 s) and 4 packets, with room
r0=$(cnt received)
sleep 1
r1=$(cnt received)
[ "$((r1 - r0))" -ge 500 ] || fail "5: two forged datagrams stopped the route (received +$((r1 - r0)) in 1 s)"
echo "5: without a key, two forged datagrams: the route goes on (+$((r1 - r0)) in 1 s), recoveries counted"
stop pub
echo "PASS"
