#!/bin/bash
# Many connections per datagram (docs/ardnet.md, "Many connections per bridge"): a sending
# ardnet with four routes to one UDP destination (on its command line, joined by --next) and
# a receiving ardnet with four routes on one listening port (a YAML file; each route learns
# its connection from the sender's descriptor), over loopback. The four connections are written on a common tick. Checked: every reader
# gets every packet it sees intact and in order, and the last one; the sender's counters show
# fewer datagrams than packets (packed datagrams, at least the first wake-up: all four
# connections hold a packet when it starts); the receiver took packed entries; a fifth route
# with a connection id already used on the port is refused, naming both routes.
TEST_NAME=shared
source "$(dirname "$0")/common.sh"
RXD="${ARD_DOMAIN}_rx" # the receiving host's domain: the same connection names on both sides
trap 'cleanup_common; rm -f /dev/shm/ard."$RXD".* 2>/dev/null || true' EXIT
K=4
SIZE=64
tx=()
for i in $(seq 0 $((K - 1))); do
    [ "$i" = 0 ] || tx+=(--next)
    tx+=(--in "sh$i" --out "udp://127.0.0.1:$PORT" --size $SIZE --type "u64 u64 i64 u32[$(((SIZE - 24) / 4))]")
done
{
    echo "routes:"
    for i in $(seq 0 $((K - 1))); do
        printf '  - in: udp://127.0.0.1:%d\n    out: sh%d\n    from: 127.0.0.1\n' "$PORT" "$i"
    done
} >"$T/rx.yaml"
wires=()
for i in $(seq 0 $((K - 1))); do
    [ "$i" = 0 ] && wires+=(--ard data=sh0) || wires+=(--ard "data$i=sh$i")
done

# A fifth route whose connection id is one of the four: refused before anything starts.
cp "$T/rx.yaml" "$T/dup.yaml"
printf '  - in: udp://127.0.0.1:%d\n    out: other\n    conn-id: %d\n' "$PORT" \
    "$(/usr/bin/python3 -c 'import sys
h=2166136261
for c in b"sh2": h=((h^c)*16777619)&0xffffffff
print(h)')" >>"$T/dup.yaml"
rc=0
"$ARDNET" --config "$T/dup.yaml" --ard-domain "$RXD" 2>"$T/dup.err" || rc=$?
[ "$rc" = 100 ] || fail "a duplicate connection id: exit $rc, expected 100"
grep -q "routes 'sh2' and 'other' both listen on udp://127.0.0.1:$PORT" "$T/dup.err" ||
    grep -q "routes 'other' and 'sh2' both listen on udp://127.0.0.1:$PORT" "$T/dup.err" ||
    fail "the duplicate connection id message does not name both routes: $(cat "$T/dup.err")"

# --next needs a route before it.
rc=0
"$ARDNET" --next --in a --out b 2>"$T/next.err" || rc=$?
[ "$rc" = 100 ] && grep -q -- "--next: no route before it" "$T/next.err" ||
    fail "--next first: exit $rc, $(cat "$T/next.err")"

"$TBLOCK" pub --size $SIZE --ports $K "${wires[@]}" --count 1 --plain --counter-from 1 >/dev/null
bg_ready rx "$ARDNET" --config "$T/rx.yaml" --ard-domain "$RXD" --stats-file "$T/rx.stats"
for i in $(seq 0 $((K - 1))); do
    ARD_DOMAIN=$RXD bg "sub$i" "$TBLOCK" sub --size $SIZE --ard "data=sh$i" --idle-ms 3000 \
        --result "$T/sub$i.result"
done
sleep 0.3
bg_ready tx "$ARDNET" "${tx[@]}" --stats-file "$T/tx.stats"
"$TBLOCK" pub --size $SIZE --ports $K "${wires[@]}" --rate 500 --count 1500 --plain \
    --counter-from 2 >"$T/pub.out"
last=$(sed -n 's/.*last=//p' "$T/pub.out")
for i in $(seq 0 $((K - 1))); do
    wait "$(cat "$T/sub$i.pid")" || fail "reader $i: damaged, older or repeated: $(cat "$T/sub$i.result")"
    rm -f "$T/sub$i.pid"
    [ "$(kv "$T/sub$i.result" last)" = "$last" ] || fail "reader $i did not get the last packet"
    echo "reader $i: $(cat "$T/sub$i.result")"
done
stop tx || fail "ardnet tx exit $?"
stop rx || fail "ardnet rx exit $?"
cat "$T/tx.stats" "$T/rx.stats"
out=$(grep "^output udp://127.0.0.1:$PORT:" "$T/tx.stats") || fail "no output line in the sender's counters"
val() { echo "$1" | tr ' ' '\n' | sed -n "s/^$2=//p"; }
dg=$(val "$out" datagrams)
pk=$(val "$out" packets)
sent=0
for i in $(seq 0 $((K - 1))); do
    sent=$((sent + $(counter "$T/tx.stats" "sh$i" sent)))
    [ "$(counter "$T/rx.stats" "sh$i" received)" -gt 0 ] || fail "route sh$i received nothing"
done
[ "$pk" = "$sent" ] || fail "the destination carried $pk packets, the routes sent $sent"
[ "$dg" -lt "$pk" ] || fail "$pk packets took $dg datagrams: nothing was packed"
[ "$(val "$out" packed)" -ge 1 ] || fail "no packed datagram"
packed_rx=0
for i in $(seq 0 $((K - 1))); do
    packed_rx=$((packed_rx + $(counter "$T/rx.stats" "sh$i" packed)))
done
[ "$packed_rx" -ge 2 ] || fail "the receiver took $packed_rx packed entries"
echo "ok: $pk packets in $dg datagrams"
