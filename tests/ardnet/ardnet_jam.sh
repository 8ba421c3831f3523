#!/bin/bash
# A bridge cannot be jammed (docs/wire.md, "Receiver rules"), over loopback. One reader runs
# throughout and must never see an older or repeated packet; after each of these the packets
# sent afterwards are delivered (the reader ends on the last writer's last packet, and the
# receiver's counters show the deliveries):
#  1. datagrams with all-ones epoch and sequence, whole and fragmented, during a stream:
#     refused (drop_epoch), the stream goes on;
#  2. the same on an idle route: delivered (nothing authenticates a datagram), and the
#     sender's next packets are delivered again after the hold-off (0.25 s);
#  3. a stray second sender on the same port while the first one sends: refused;
#  4. the writer and the sending ardnet restarted with CLOCK_REALTIME set back one hour:
#     accepted; then the receiving ardnet restarted too, with the writer's clock set back
#     another hour (every new packet looks older than what its output holds): accepted after
#     the hold-off.
TEST_NAME=jam
source "$(dirname "$0")/common.sh"
: "${CLOCKSHIFT:?}"
TYPE="u64 u64 i64 u32[250]"
"$BADGEN" --write-corpus "$T" 7 1024 "$TYPE" >/dev/null
inject() { local f; for f in "$@"; do cat "$T/$f.bin" >"/dev/udp/127.0.0.1/$PORT"; done; }
ALL_ONES_FRAG="all_ones_frag0 all_ones_frag1 all_ones_frag2"
start_B() {
    bg_ready B "$ARDNET" --in "udp://127.0.0.1:$PORT" --out dst --size 1024 --type "$TYPE" \
        --conn-id 7 --stats-file "$T/B.stats"
}
# now_counter KEY: B's counter KEY right now (SIGUSR1 prints them)
now_counter() {
    counter_now "$T/B.pid" "$T/B.err" dst "$1"
}
wlast() { sed -n 's/.*last=//p' "$T/$1.out"; }
# $(shifted SECONDS): an env prefix that sets CLOCK_REALTIME back by SECONDS
shifted() {
    echo env CLOCKSHIFT_S=$1 LD_PRELOAD=$CLOCKSHIFT ASAN_OPTIONS=${ASAN_OPTIONS:-}:verify_asan_link_order=0
}

start_B
bg sub "$TBLOCK" sub --ard data=dst --idle-ms 8000 --result "$T/sub.result"

# ---- 1. all-ones during a stream ------------------------------------------------------------
bg pub "$TBLOCK" pub --ard data=src --rate 1000 --count 3000
sleep 0.1
bg_ready A "$ARDNET" --in src --out "udp://127.0.0.1:$PORT" --conn-id 7
for i in 1 2 3 4; do
    sleep 0.4
    inject all_ones $ALL_ONES_FRAG
done
wait "$(cat "$T/pub.pid")" || fail "writer 1"
rm -f "$T/pub.pid"
cp "$T/pub.out" "$T/pub1.out"
[ "$(now_counter drop_epoch)" -ge 1 ] || fail "1: no all-ones datagram refused as another epoch"

# ---- 2. all-ones on an idle route -------------------------------------------------------------
for what in all_ones "$ALL_ONES_FRAG"; do
    sleep 0.5 # idle for longer than the hold-off
    r0=$(now_counter received)
    inject $what
    [ "$(now_counter received)" = $((r0 + 1)) ] || fail "2: $what on an idle route not delivered"
    "$TBLOCK" pub --ard data=src --rate 1000 --count 1000 >"$T/pub2.out"
    sleep 0.3
    [ "$(now_counter received)" -ge $((r0 + 500)) ] || fail "2: the sender was not taken back after $what"
done

# ---- 3. a stray second sender on the same port --------------------------------------------------
# (the stray connection exists before S, which takes its type; the stray writer starts once S
# is ready, which a busy host under ASan makes late, while the genuine writer still runs)
"$TBLOCK" pub --ard data=stray --rate 1000 --count 1 >/dev/null || fail "stray connection"
bg pub "$TBLOCK" pub --ard data=src --rate 1000 --count 4000
sleep 0.3
e0=$(now_counter drop_epoch)
bg_ready S "$ARDNET" --in stray --out "udp://127.0.0.1:$PORT" --conn-id 7
bg strayw "$TBLOCK" pub --ard data=stray --rate 1000 --count 1000
wait "$(cat "$T/strayw.pid")" || fail "stray writer"
rm -f "$T/strayw.pid"
stop S
wait "$(cat "$T/pub.pid")" || fail "writer 3"
rm -f "$T/pub.pid"
# (every datagram S sent is refused: counted against what S says it sent)
sent=$(counter "$T/S.err" stray sent)
[ "$sent" -ge 100 ] || fail "3: the stray ardnet sent only $sent datagrams"
refused=$(($(now_counter drop_epoch) - e0))
[ "$refused" -ge $((sent * 9 / 10)) ] || fail "3: of the stray sender's $sent datagrams $refused were refused"

# ---- 4. restarts with the clock set back ------------------------------------------------------
stop A
r0=$(now_counter received)
bg_ready A $(shifted 3600) "$ARDNET" --in src --out "udp://127.0.0.1:$PORT" --conn-id 7
$(shifted 3600) "$TBLOCK" pub --ard data=src --rate 1000 --count 1500 --counter-from "$(wlast pub)" \
    >"$T/pub4.out" || fail "writer 4"
[ "$(now_counter received)" -ge $((r0 + 500)) ] || fail "4: a sender restarted with its clock set back was refused"
stop A
stop B || fail "ardnet B exit $?"
start_B
bg_ready A $(shifted 7200) "$ARDNET" --in src --out "udp://127.0.0.1:$PORT" --conn-id 7
$(shifted 7200) "$TBLOCK" pub --ard data=src --rate 1000 --count 1500 --counter-from "$(wlast pub4)" \
    >"$T/pub5.out" || fail "writer 5"
[ "$(now_counter drop_stale)" -ge 1 ] || fail "4: the restarted receiver refused nothing as stale"
[ "$(now_counter received)" -ge 500 ] || fail "4: a writer whose clock went back was refused after a receiver restart"
stop A || fail "ardnet A exit $?"
stop B || fail "ardnet B exit $?"

rc=0
wait "$(cat "$T/sub.pid")" || rc=$?
rm -f "$T/sub.pid"
echo "sub: $(cat "$T/sub.result")"
for k in older dup badtime; do
    [ "$(kv "$T/sub.result" $k)" = 0 ] || fail "the reader saw $k packets"
done
# The two all-ones packets of the idle route (their payload is not a tblock pattern).
bad=$(kv "$T/sub.result" bad)
[ "$bad" -ge 2 ] && [ "$bad" -le 6 ] || fail "the reader saw $bad bad packets (expected the 2 all-ones)"
[ "$(kv "$T/sub.result" last)" = "$(wlast pub5)" ] || fail "the reader did not end on the last writer's last packet"
echo PASS
