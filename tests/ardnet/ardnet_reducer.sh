#!/bin/bash
# Multiplier and rate reducers, on one host. Counts are taken over whole runs (not rates), so
# they do not depend on timing; "always the newest" is proved by the last packet: after the
# writer stops, every output must end on the writer's very last packet (a reducer that
# forwarded a stale packet, or dropped the held newest one, fails this).
TEST_NAME=reducer
source "$(dirname "$0")/common.sh"
TYPE="u64 u64 i64 u32[250]"
sub() { bg "sub_$1" "$TBLOCK" sub --ard "data=$1" --idle-ms 3000 --result "$T/$1.result"; }
done_ok() {
    wait "$(cat "$T/$1.pid")" || fail "$1 failed (damaged, older or repeated packet)"
    rm -f "$T/$1.pid"
}

# (Connection names differ on the two sides here, so the ids on the wire are given.)
# Multiplier: one local input to two local outputs and a UDP output (to a second ardnet).
# Rate reducer --every 10 on a local route. Rate reducer --max-rate 20 on a UDP input.
bg_ready R "$ARDNET" --in "udp://127.0.0.1:$PORT" --out m3 --size 1024 --type "$TYPE" \
    --conn-id 3
bg_ready MAXB "$ARDNET" --in "udp://127.0.0.1:$((PORT + 1))" --out rdst --size 1024 \
    --type "$TYPE" --conn-id 4 --max-rate 20 --stats-file "$T/MAXB.stats"
for c in m1 m2 m3 edst rdst; do sub $c; done
bg pubm "$TBLOCK" pub --ard data=msrc --rate 1000 --count 3000
bg pube "$TBLOCK" pub --ard data=esrc --rate 500 --count 2000
bg pubr "$TBLOCK" pub --ard data=rsrc --rate 1000 --count 3000
sleep 0.1
bg_ready M "$ARDNET" --in msrc --out m1 --out m2 --out "udp://127.0.0.1:$PORT" \
    --conn-id 3 --stats-file "$T/M.stats"
bg_ready E "$ARDNET" --in esrc --out edst --every 10 --stats-file "$T/E.stats"
bg_ready MAXA "$ARDNET" --in rsrc --out "udp://127.0.0.1:$((PORT + 1))" --conn-id 4

for p in pubm pube pubr; do done_ok $p; done
for c in m1 m2 m3 edst rdst; do done_ok "sub_$c"; done
for d in M E MAXA MAXB R; do stop $d || fail "ardnet $d exit status $?"; done
for c in m1 m2 m3 edst rdst; do echo "$c: $(cat "$T/$c.result")"; done
for s in M E MAXB; do echo "$s: $(grep '^route' "$T/$s.stats")"; done

wlast() { sed -n 's/.*last=//p' "$T/$1.out"; }
# Multiplier: every output got most packets and ends on the writer's last.
for c in m1 m2 m3; do
    n=$(kv "$T/$c.result" received)
    [ "$n" -ge 300 ] || fail "multiplier output $c got only $n of 3000"
    [ "$(kv "$T/$c.result" last)" = "$(wlast pubm)" ] || fail "$c did not end on the newest"
done
mr=$(counter "$T/M.stats" msrc received)
[ "$(counter "$T/M.stats" msrc sent)" = $((3 * mr)) ] || fail "multiplier did not send each packet 3 times"

# --every 10: exactly one in ten of what ardnet took in, and the reader got them.
er=$(counter "$T/E.stats" esrc received)
es=$(counter "$T/E.stats" esrc sent)
en=$(kv "$T/edst.result" received)
[ "$er" -ge 200 ] || fail "every-10 route took in only $er"
[ "$es" = $((er / 10)) ] || fail "every 10: forwarded $es of $er (want $((er / 10)))"
[ "$(counter "$T/E.stats" esrc reduced)" = $((er - es)) ] || fail "every 10: reduced count"
[ "$en" -ge $((es / 2)) ] && [ "$en" -le "$es" ] || fail "every 10: reader got $en of $es"

# --max-rate 20: at most 20 per second between the first forwarded packet and the writer's
# last (+2 for the start of the grid and the final held packet), and the last forwarded packet
# is the writer's newest (held, then sent at its time slot). No lower bound: on a loaded
# machine the writer itself may stall for seconds.
rn=$(kv "$T/rdst.result" received)
span_us=$(($(wlast pubr) - $(kv "$T/rdst.result" first)))
max=$((20 * span_us / 1000000 + 2))
[ "$rn" -ge 2 ] && [ "$rn" -le "$max" ] ||
    fail "max-rate 20 over $span_us us forwarded $rn packets (allowed 2..$max)"
[ "$(kv "$T/rdst.result" last)" = "$(wlast pubr)" ] || fail "max-rate did not forward the newest last"
rs=$(counter "$T/MAXB.stats" rdst sent)
[ "$rn" -le "$rs" ] && [ "$rn" -ge $((rs - 2)) ] || fail "max-rate sent $rs but the reader got $rn"
echo PASS
