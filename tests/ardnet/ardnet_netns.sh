#!/bin/bash
# Real two-host bridge: hostA and hostB are network namespaces on one bridge, each with its
# own /dev/shm, sharing nothing but the wire (tests/lib/netns.sh). Needs root.
#  1. writer on A -> ardnet A -> UDP -> ardnet B -> reader on B: intact, in order; then the
#     writer (kill -9), ardnet A and ardnet B are restarted one by one while the reader runs,
#     and the reader ends on the last writer's last packet.
#  2. nftables on A drops 20% and duplicates 20% of the datagrams: nothing older, nothing
#     repeated, nothing damaged is delivered.
#  3. >= 10^5 packets through the impairment relay (20% loss, 10% duplicates, 20% reordered
#     by up to 5 ms): same checks, and B counted duplicates and reordered datagrams.
#  4. 64 KiB packets (65536 bytes, 47 fragments each at the default --max-datagram 1472)
#     through the relay with loss, duplicates and reordering: every delivered packet is
#     intact and never older; B counted duplicated and old fragments and incomplete packets.
TEST_NAME=netns
PRIVATE_NET=0 # the hosts are namespaces of their own
source "$(dirname "$0")/common.sh"
source "$SRCDIR/tests/lib/netns.sh"
netns_require_root
NETNS_NO_TRAP=1
trap 'cleanup_common; netns_destroy' EXIT
netns_create hostA hostB
TYPE="u64 u64 i64 u32[250]"
# Command prefixes (not functions: bg needs the program's own pid).
A=$(netns_cmd hostA)
B=$(netns_cmd hostB)
wlast() { sed -n 's/.*last=//p' "$T/$1.out"; }
finish_sub() {
    wait "$(cat "$T/$1.pid")" || fail "reader $1: damaged, older or repeated packet: $(cat "$T/$1.result")"
    rm -f "$T/$1.pid"
    echo "$1: $(cat "$T/$1.result")"
}
start_B() { # extra args
    bg_ready ardB $B "$ARDNET" --in udp://:7001 --out arm.state --size 1024 --type "$TYPE" \
        --from hostA --stats-file "$T/B.stats" "$@"
}

# ---- 1. intact, and restarts --------------------------------------------------------------
start_B
bg sub1 $B "$TBLOCK" sub --ard data=arm.state --idle-ms 4000 --result "$T/sub1.result"
bg pub $A "$TBLOCK" pub --ard data=arm.state --rate 1000
sleep 0.2
bg_ready ardA $A "$ARDNET" --in arm.state --out udp://hostB:7001
sleep 1
kill -KILL "$(cat "$T/pub.pid")"; wait "$(cat "$T/pub.pid")" 2>/dev/null || true
bg pub $A "$TBLOCK" pub --ard data=arm.state --rate 1000
sleep 1
stop ardA || fail "ardnet A exit $?"
bg_ready ardA $A "$ARDNET" --in arm.state --out udp://hostB:7001
sleep 1
stop ardB || fail "ardnet B exit $?"
start_B
sleep 1
stop pub
finish_sub sub1
[ "$(kv "$T/sub1.result" last)" = "$(wlast pub)" ] || fail "reader did not get the last packet after the restarts"
# (Counts are only checked loosely: the machine may be loaded; order and integrity are exact.)
[ "$(kv "$T/sub1.result" received)" -ge 100 ] || fail "too few packets over the bridge"
stop ardA
stop ardB
echo "B (after its restart): $(grep '^route' "$T/B.stats")"

# ---- 2. nftables loss and duplication -------------------------------------------------------
$A nft -f - <<NFT
table ip ardtest {
  chain out {
    type filter hook output priority 0;
    udp dport 7001 numgen random mod 100 < 20 drop
    udp dport 7001 numgen random mod 100 < 20 dup to $(netns_addr hostB) device "eth0"
  }
}
NFT
# B counts what arrives marked with DSCP EF (46): proves --dscp on A's side.
$B nft -f - <<'NFT'
table ip ardqos {
  chain in {
    type filter hook input priority 0;
    udp dport 7001 ip dscp ef counter
  }
}
NFT
start_B
bg sub2 $B "$TBLOCK" sub --ard data=arm.state --idle-ms 3000 --result "$T/sub2.result"
# The QoS knobs on the sending side (all must be accepted; --bind is also checked by B's --from).
bg_ready ardA $A "$ARDNET" --in arm.state --out udp://hostB:7001 --bind "$(netns_addr hostA)" --dev eth0 \
    --dscp 46 --sock-prio 6 --prio 10 --cpu 0
$A "$TBLOCK" pub --ard data=arm.state --rate 2000 --count 6000 >"$T/pub2.out"
finish_sub sub2
stop ardA
stop ardB
$A nft delete table ip ardtest
echo "B: $(grep '^route' "$T/B.stats")"
[ "$(kv "$T/sub2.result" received)" -ge 100 ] || fail "too few packets with 20% loss"
[ "$(counter "$T/B.stats" arm.state received)" -ge 1000 ] || fail "B received too few datagrams"
[ "$(counter "$T/B.stats" arm.state drop_duplicate)" -ge 100 ] || fail "nft duplicates were not seen and dropped"
ef=$($B nft list table ip ardqos | sed -n 's/.*counter packets \([0-9]*\).*/\1/p')
[ "${ef:-0}" -ge 1000 ] || fail "only ${ef:-0} datagrams arrived marked DSCP EF"
echo "DSCP EF datagrams at B: $ef"

# ---- 3. impairment relay, >= 10^5 packets ---------------------------------------------------
N=110000
start_B
bg relay $A "$RELAY" --listen 7002 --to hostB:7001 --seed 42 --drop 20 --dup 10 --reorder 20 \
    --delay-ms 5 --stats "$T/relay.stats"
bg sub3 $B "$TBLOCK" sub --ard data=arm.state --idle-ms 5000 --result "$T/sub3.result"
bg_ready ardA $A "$ARDNET" --in arm.state --out udp://127.0.0.1:7002
$A "$TBLOCK" pub --ard data=arm.state --rate 10000 --count $N >"$T/pub3.out"
finish_sub sub3
stop ardA
stop ardB
stop relay
echo "relay: $(cat "$T/relay.stats")"
echo "B: $(grep '^route' "$T/B.stats")"
[ "$(sed -n 's/sent=\([0-9]*\).*/\1/p' "$T/pub3.out")" = $N ] || fail "writer did not send $N"
[ "$(kv "$T/sub3.result" received)" -ge 100 ] || fail "too few packets through the relay"
[ "$(counter "$T/B.stats" arm.state received)" -ge 10000 ] || fail "B received too few datagrams"
[ "$(counter "$T/B.stats" arm.state drop_duplicate)" -ge 10 ] || fail "no duplicates dropped"
[ "$(counter "$T/B.stats" arm.state drop_old)" -ge 10 ] || fail "no reordered datagrams dropped"
grep -q 'dropped=[1-9]' "$T/relay.stats" || fail "relay dropped nothing"

# ---- 4. 64 KiB packets through the relay ----------------------------------------------------
S64=65536
T64="u64 u64 i64 u32[$(((S64 - 24) / 4))]"
bg_ready ardB $B "$ARDNET" --in udp://:7011 --out arm.big --size $S64 --type "$T64" \
    --from hostA --stats-file "$T/B64.stats"
bg relay $A "$RELAY" --listen 7012 --to hostB:7011 --seed 43 --drop 1 --dup 5 --reorder 5 \
    --delay-ms 2 --stats "$T/relay64.stats"
bg sub4 $B "$TBLOCK" sub --size $S64 --ard data=arm.big --idle-ms 5000 --result "$T/sub4.result"
bg_ready ardA $A "$ARDNET" --in arm.big --out udp://127.0.0.1:7012 --size $S64 --type "$T64" \
    --stats-file "$T/A64.stats"
$A "$TBLOCK" pub --size $S64 --ard data=arm.big --rate 250 --count 2500 >"$T/pub4.out"
finish_sub sub4
stop ardA
stop ardB
stop relay
echo "relay: $(cat "$T/relay64.stats")"
echo "A: $(grep '^route' "$T/A64.stats")"
echo "B: $(grep '^route' "$T/B64.stats")"
[ "$(kv "$T/sub4.result" received)" -ge 100 ] || fail "too few 64 KiB packets through the relay"
[ "$(counter "$T/A64.stats" arm.big fragments)" -ge $((47 * 1000)) ] || fail "A did not fragment"
[ "$(counter "$T/B64.stats" arm.big drop_frag_duplicate)" -ge 10 ] || fail "no duplicated fragments dropped"
[ "$(counter "$T/B64.stats" arm.big drop_partial)" -ge 10 ] || fail "no incomplete packets counted"
[ "$(counter "$T/B64.stats" arm.big drop_frag_old)" -ge 1 ] || fail "no fragment of an older packet dropped"
echo PASS
