#!/bin/bash
# ardnet --auto across three hosts with no route configured, and a hostile fourth one. hostA,
# hostB, hostC and hostD are network namespaces on one bridge, each with its own /dev/shm
# (tests/lib/netns.sh). Needs root.
#  1. A writer on A; readers on B and C started afterwards each get intact packets within 1 s
#     of attaching (tblock sub --first-ms 1000).
#  2. C's reader leaves: A's datagrams to C stop (nftables counter on C) within the documented
#     0.5 s.
#  3. The writer on A is killed and restarted: a reader on B gets the new writer's packets;
#     the writer moves to C: B's first reader, running all along, follows (it ends on the
#     last packet of the writer on C, never older, never damaged).
#  4. Two writers of one name on A and B: both report it, a reader on C gets nothing; once
#     B's writer stops, C's reader gets A's packets.
#  5. A reader on B of another type than A's writer: both report the disagreement. Then the
#     connection is removed on A and created anew with B's type: a reader on B gets it.
#  6. hostD (a peer of A only) forges wants from 6 catalog ids on 6 ports: A listens to 4 of
#     them (counts the rest as full), sends to D's address only, to one port, at most at the
#     writer's rate; garbage from D is counted as
#     invalid by A and as foreign by B (not its peer); no ardnet crashes, all exit 0.
#  6b. C's catalog is killed while A forwards to it: A stops within 1 s (peer silent).
#  8. (along 1-3) The tools show what the catalog set up: on B, `ard list` marks the connection
#     as coming from hostA (its catalog's port is named after the host), on A `ard graph` draws
#     the forward to hostB and on B the want from hostA; C's mark and A's edge to C are gone
#     once C's reader left; once the writer moved to C, B's mark says hostC. A reader on B
#     started before any writer gets the writer started afterwards on A, and is marked; A
#     forwards two connections to B at once.
#  7. Found by multicast instead (--auto-multicast GROUP:PORT --dev eth0): a reader on B gets
#     the writer on A within 1 s.
TEST_NAME=auto
PRIVATE_NET=0
source "$(dirname "$0")/common.sh"
source "$SRCDIR/tests/lib/netns.sh"
netns_require_root
NETNS_NO_TRAP=1
trap 'cleanup_common; netns_destroy' EXIT
netns_create hostA hostB hostC hostD
A=$(netns_cmd hostA)
B=$(netns_cmd hostB)
C=$(netns_cmd hostC)
D=$(netns_cmd hostD)
AB="hostA,hostB,hostC"
start_auto() { # NAME NSCMD PEERS HOSTNAME
    local name=$1 ns=$2 peers=$3 host=$4
    # Each catalog with its own host name (a UTS namespace: the namespaces share the machine's).
    # shellcheck disable=SC2016,SC2086
    bg_ready "$name" $ns unshare --uts sh -c 'hostname "$0" && exec "$@"' "$host" \
        "$ARDNET" --auto --auto-peers "$peers" --stats-file "$T/$name.stats"
}
cat_counter() { # STATS KEY: a counter of the catalog line
    grep '^catalog ' "$1" | tr ' ' '\n' | sed -n "s/^$2=//p"
}
now_us() { date +%s%6N; }

start_auto autoA "$A" "$AB,hostD" hostA
start_auto autoB "$B" "$AB" hostB
start_auto autoC "$C" "$AB" hostC

# ---- 1. readers on B and C get the writer on A within 1 s --------------------------------------
bg pubA $A "$TBLOCK" pub --ard data=arm.state --rate 100
sleep 0.5
t_attach=$(now_us)
bg subB $B "$TBLOCK" sub --ard data=arm.state --first-ms 1000 --idle-ms 4000 --result "$T/subB.result"
bg subC $C "$TBLOCK" sub --ard data=arm.state --first-ms 1000 --duration-ms 2000 --result "$T/subC.result"
sleep 1.2
grep -q "route auto:arm.state>$(netns_addr hostC):" "$T/autoA.stats" || fail "A's stats show no forward to C"
grep -q "route auto:arm.state>$(netns_addr hostB):" "$T/autoA.stats" || fail "A's stats show no forward to B"
$A "$ARD" graph | grep -q '"c:arm.state" -> "h:hostC"' || fail "ard graph on A draws no forward to hostC"
wait "$(cat "$T/subC.pid")" || fail "reader on C: damaged or older packet: $(cat "$T/subC.result")"
rm -f "$T/subC.pid"
echo "C: $(cat "$T/subC.result")"
[ "$(kv "$T/subC.result" received)" -ge 50 ] || fail "reader on C got too little in 2 s"
# The first packet each got was sent within 1 s of its start (the counter is the writer's
# realtime clock in microseconds).
[ "$(kv "$T/subC.result" first)" -le "$((t_attach + 1000000))" ] ||
    fail "C's first packet was sent $(($(kv "$T/subC.result" first) - t_attach)) us after its reader started"

# ---- 8. the tools show the catalog's forwarding (B's reader runs on) ----------------------------
listB=$($B "$ARD" list --json arm.state) || fail "ard list on B failed"
echo "ard list --json on B: $listB"
echo "$listB" | grep -q '"remote_host":"hostA"' || fail "ard list on B does not mark arm.state as from hostA"
$B "$ARD" list arm.state | grep -q ' from hostA' || fail "ard list (text) on B does not say 'from hostA'"
$A "$ARD" list --json arm.state | grep -q '"remote_host":null' ||
    fail "ard list on A marks its own writer's connection as remote"
graphA=$($A "$ARD" graph) || fail "ard graph on A failed"
echo "$graphA" | grep -q '"c:arm.state" -> "h:hostB"' || fail "ard graph on A draws no forward to hostB: $graphA"
$A "$ARD" graph --json | grep -q '"to_host":"hostB"' || fail "ard graph --json on A names no forward to hostB"
$B "$ARD" graph | grep -q '"h:hostA" -> "c:arm.state"' || fail "ard graph on B draws nothing from hostA"
# A reader that comes first: B's catalog listens before any host has late.x (its port is then
# named after the connection: no mark), and renames it after hostA once A has it. A then
# forwards two connections to B, and B receives two from A (each port named apart).
bg lateB $B "$TBLOCK" sub --ard data=late.x --first-ms 3000 --duration-ms 2500 --result "$T/lateB.result"
sleep 0.5
$B "$ARD" list --json late.x | grep -q '"writer":{"pid":[0-9]*,"program":"ardnet"},"remote_host":null' ||
    fail "ard list on B: late.x is not written by its catalog, unmarked, before any host has it"
bg lateA $A "$TBLOCK" pub --ard data=late.x --rate 100
sleep 0.6
$B "$ARD" list --json | grep -c '"remote_host":"hostA"' | grep -qx 2 ||
    fail "ard list on B does not mark both arm.state and late.x as from hostA"
$A "$ARD" graph | grep -q '"c:late.x" -> "h:hostB"' || fail "ard graph on A draws no forward of late.x to hostB"
wait "$(cat "$T/lateB.pid")" || fail "reader on B of late.x: $(cat "$T/lateB.result")"
rm -f "$T/lateB.pid"
[ "$(kv "$T/lateB.result" received)" -ge 50 ] || fail "B's early reader got too little of late.x"
grep "route 'auto" "$T/autoA.err" "$T/autoB.err" && fail "a catalog could not open one of its routes"
stop lateA

# ---- 2. C's reader left: A stops sending to C ----------------------------------------------------
$C nft -f - <<NFT
table ip autotest {
  chain in {
    type filter hook input priority 0;
    ip saddr $(netns_addr hostA) udp sport != 7400 counter
  }
}
NFT
sleep 0.5 # the documented time
c1=$($C nft list table ip autotest | sed -n 's/.*packets \([0-9]*\).*/\1/p')
sleep 1
c2=$($C nft list table ip autotest | sed -n 's/.*packets \([0-9]*\).*/\1/p')
echo "datagrams from A to C 0.5 s and 1.5 s after its reader left: $c1 $c2"
[ "$c1" = "$c2" ] || fail "A still sends to C 0.5 s after C's last reader left ($c1 -> $c2)"
$C nft delete table ip autotest
grep -q "route auto:arm.state>$(netns_addr hostC):" "$T/autoA.stats" && fail "A's stats still show the forward to C"
$A "$ARD" graph | grep -q '"h:hostC"' && fail "ard graph on A still draws the forward to hostC"
$C "$ARD" list --json | grep -q '"remote_host":"hostA"' && fail "ard list on C still marks arm.state as from hostA"
$A "$ARD" graph | grep -q '"c:arm.state" -> "h:hostB"' || fail "ard graph on A lost the forward to hostB"
# B still gets it (subB runs on).

# ---- 3. writer restarted on A, then moved to C -------------------------------------------------
kill -KILL "$(cat "$T/pubA.pid")"
wait "$(cat "$T/pubA.pid")" 2>/dev/null || true
rm -f "$T/pubA.pid"
sleep 0.3
t_restart=$(now_us)
bg pubA $A "$TBLOCK" pub --ard data=arm.state --rate 100
bg subB2 $B "$TBLOCK" sub --ard data=arm.state --first-ms 1500 --duration-ms 1500 --result "$T/subB2.result"
wait "$(cat "$T/subB2.pid")" || fail "second reader on B: damaged or older packet: $(cat "$T/subB2.result")"
rm -f "$T/subB2.pid"
echo "B after A's writer restarted: $(cat "$T/subB2.result")"
[ "$(kv "$T/subB2.result" received)" -ge 10 ] || fail "B got nothing of the restarted writer"
[ "$(kv "$T/subB2.result" last)" -gt "$t_restart" ] || fail "B's packets are not the restarted writer's"
stop pubA
t_move=$(now_us)
bg pubC $C "$TBLOCK" pub --ard data=arm.state --rate 100
sleep 2
$B "$ARD" list --json arm.state | grep -q '"remote_host":"hostC"' ||
    fail "ard list on B does not mark arm.state as from hostC once the writer moved there"
stop pubC
wait "$(cat "$T/subB.pid")" || fail "reader on B: damaged or older packet: $(cat "$T/subB.result")"
rm -f "$T/subB.pid"
echo "B all along: $(cat "$T/subB.result")"
[ "$(kv "$T/subB.result" last)" = "$(sed -n 's/.*last=//p' "$T/pubC.out")" ] ||
    fail "B's reader did not end on the last packet of the writer on C ($(cat "$T/pubC.out"))"
[ "$(kv "$T/subB.result" last)" -gt "$t_move" ] || fail "B did not follow the writer to C"
[ "$(kv "$T/subB.result" first)" -le "$((t_attach + 1000000))" ] ||
    fail "B's first packet was sent $(($(kv "$T/subB.result" first) - t_attach)) us after its reader started"

# ---- 4. two writers of one name --------------------------------------------------------------------
bg confA $A "$TBLOCK" pub --ard data=conf.x --rate 100
bg confB $B "$TBLOCK" pub --ard data=conf.x --rate 100
sleep 0.6
bg subC2 $C "$TBLOCK" sub --ard data=conf.x --first-ms 1500 --result "$T/subC2.result"
wait "$(cat "$T/subC2.pid")" || true
rm -f "$T/subC2.pid"
[ "$(kv "$T/subC2.result" received)" = 0 ] || fail "a reader on C got packets of a connection written on two hosts"
grep -q "connection 'conf.x' is written on 2 hosts" "$T/autoA.err" || fail "A did not report the two writers"
grep -q "connection 'conf.x' is written on 2 hosts" "$T/autoB.err" || fail "B did not report the two writers"
grep -q "connection 'conf.x' is written on 2 hosts" "$T/autoC.err" || fail "C did not report the two writers"
stop confB
bg subC3 $C "$TBLOCK" sub --ard data=conf.x --first-ms 1500 --duration-ms 1000 --result "$T/subC3.result"
wait "$(cat "$T/subC3.pid")" || fail "reader on C: $(cat "$T/subC3.result")"
rm -f "$T/subC3.pid"
[ "$(kv "$T/subC3.result" received)" -ge 10 ] || fail "C got nothing once B's writer stopped"
echo "two writers: reported on A, B and C; C got nothing until one stopped, then $(kv "$T/subC3.result" received) packets"
stop confA

# ---- 5. types that disagree ----------------------------------------------------------------------
bg typA $A "$TBLOCK" pub --ard data=typ.x --rate 100
sleep 0.3
bg typB $B "$TBLOCK" sub --ard data=typ.x --size 64 --first-ms 1000 --result "$T/typB.result"
wait "$(cat "$T/typB.pid")" || true
rm -f "$T/typB.pid"
[ "$(kv "$T/typB.result" received)" = 0 ] || fail "a reader of another type got packets"
grep -q "connection 'typ.x' disagrees" "$T/autoA.err" || fail "A did not report the type disagreement"
grep -q "connection 'typ.x' disagrees" "$T/autoB.err" || fail "B did not report the type disagreement"
stop typA
# The connection removed on A and created anew with the reader's type: A's catalog follows the
# new object (its view of the old one, which has no writer any more, is replaced), B gets it.
$A rm -f "/dev/shm/ard.$ARD_DOMAIN.typ.x"
bg typA2 $A "$TBLOCK" pub --ard data=typ.x --size 64 --rate 100
sleep 0.3
bg typB2 $B "$TBLOCK" sub --ard data=typ.x --size 64 --first-ms 3000 --duration-ms 3000 \
    --result "$T/typB2.result"
wait "$(cat "$T/typB2.pid")" || true
rm -f "$T/typB2.pid"
[ "$(kv "$T/typB2.result" received)" -ge 10 ] ||
    fail "the connection re-created on A with B's type did not reach B: $(cat "$T/typB2.result")"
echo "re-created with the reader's type: B got $(kv "$T/typB2.result" received) packets"
stop typA2

# ---- 6. a forger and garbage --------------------------------------------------------------------
bg pubA $A "$TBLOCK" pub --ard data=arm.state --rate 100
sleep 0.3
$A nft -f - <<NFT
table ip autotest {
  chain out {
    type filter hook output priority 0;
    ip daddr != { $(netns_addr hostB), $(netns_addr hostC), $(netns_addr hostD) } udp dport != 7400 counter
  }
}
NFT
out=$($D "$TAUTO" want hostA --conn arm.state --size 1024 --type "u64 u64 i64 u32[250]" --ids 6 --duration-ms 3000)
forgers=$(grep -c '^peer forger' "$T/autoA.stats" || true)
echo "forged wants from D: $out"
[ "$(echo "$out" | tr ' ' '\n' | sed -n 's/^ports=//p')" = 1 ] || fail "A sent to more than one port of D: $out"
got=$(echo "$out" | tr ' ' '\n' | sed -n 's/^received=//p')
[ "$got" -ge 50 ] || fail "A sent nothing to a want of D (a peer of A): the test proves nothing ($out)"
# 3 s at 100 Hz plus one descriptor a second: never more than the writer's rate.
[ "$got" -le 320 ] || fail "A sent D more than the writer's rate: $out"
[ "$(echo "$out" | tr ' ' '\n' | sed -n 's/^foreign=//p')" = 0 ] || fail "D got datagrams from elsewhere: $out"
third=$($A nft list table ip autotest | sed -n 's/.*packets \([0-9]*\).*/\1/p')
[ "$third" = 0 ] || fail "A sent $third datagrams to an address that is not a peer"
[ "$forgers" -le 4 ] || fail "A listened to $forgers catalog ids at D's address (at most 4)"
[ "$(cat_counter "$T/autoA.stats" full)" -ge 1 ] || fail "A did not count the ids it ignored at D's address"
stop pubA
inv0=$(cat_counter "$T/autoA.stats" invalid)
$D "$TAUTO" garbage hostA --count 1000 >/dev/null
$D "$TAUTO" garbage hostB --count 200 >/dev/null
sleep 1.2
inv=$(cat_counter "$T/autoA.stats" invalid)
foreign=$(cat_counter "$T/autoB.stats" foreign)
echo "garbage: A counted $((inv - inv0)) invalid (of 1000, some mutations stay valid), B $foreign foreign (of 200)"
[ "$((inv - inv0))" -ge 600 ] || fail "A counted only $((inv - inv0)) invalid announcements of 1000 garbage datagrams"
[ "$foreign" -ge 200 ] || fail "B counted only $foreign foreign datagrams of 200 from a non-peer"
# ---- 6b. a catalog that dies: its peers stop sending to it within 1 s (silent peer) ----------------
bg pubA $A "$TBLOCK" pub --ard data=arm.state --rate 100
bg subC4 $C "$TBLOCK" sub --ard data=arm.state --first-ms 1000 --duration-ms 4000 --result "$T/subC4.result"
sleep 1
grep -q "route auto:arm.state>$(netns_addr hostC):" "$T/autoA.stats" || fail "6b: A does not forward to C"
kill -KILL "$(cat "$T/autoC.pid")"
wait "$(cat "$T/autoC.pid")" 2>/dev/null || true
rm -f "$T/autoC.pid"
$C nft -f - <<NFT
table ip autotest {
  chain in {
    type filter hook input priority 0;
    ip saddr $(netns_addr hostA) udp sport != 7400 counter
  }
}
NFT
sleep 1.3 # the documented 1 s, and one look
c1=$($C nft list table ip autotest | sed -n 's/.*packets \([0-9]*\).*/\1/p')
sleep 1
c2=$($C nft list table ip autotest | sed -n 's/.*packets \([0-9]*\).*/\1/p')
echo "datagrams from A to C 1.3 s and 2.3 s after C's catalog died: $c1 $c2"
[ "$c1" = "$c2" ] || fail "A still sends to C after its catalog died ($c1 -> $c2)"
grep -q "peer .* gone (silent" "$T/autoA.err" || fail "A did not report C's catalog gone"
stop pubA
wait "$(cat "$T/subC4.pid")" || true
rm -f "$T/subC4.pid"
for h in autoA autoB; do
    stop "$h" || fail "$h exit $?"
done
echo "catalog A: $(grep '^catalog' "$T/autoA.stats")"

# ---- 7. multicast ----------------------------------------------------------------------------
for h in A B; do
    ns=$(netns_cmd host$h)
    # shellcheck disable=SC2086
    bg_ready mc$h $ns "$ARDNET" --auto --auto-multicast 239.255.74.1:7401 --dev eth0 \
        --stats-file "$T/mc$h.stats"
done
bg pubM $A "$TBLOCK" pub --ard data=mc.x --rate 100
sleep 0.5
t_attach=$(now_us)
bg subM $B "$TBLOCK" sub --ard data=mc.x --first-ms 1000 --duration-ms 1500 --result "$T/subM.result"
wait "$(cat "$T/subM.pid")" || fail "reader on B (multicast): $(cat "$T/subM.result")"
rm -f "$T/subM.pid"
echo "multicast: B $(cat "$T/subM.result")"
[ "$(kv "$T/subM.result" received)" -ge 50 ] || fail "B got too little over a catalog found by multicast"
[ "$(kv "$T/subM.result" first)" -le "$((t_attach + 1000000))" ] || fail "multicast: B's first packet came late"
stop pubM
stop mcA || fail "multicast catalog A exit $?"
stop mcB || fail "multicast catalog B exit $?"
grep -q '^peer .*address='"$(netns_addr hostB)" "$T/mcA.stats" || fail "A did not list B as a peer"
echo "PASS"
