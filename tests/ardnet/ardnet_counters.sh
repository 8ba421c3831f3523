#!/bin/bash
# The counters as a connection (docs/ardnet.md, "Counters"): an ardnet with --counters C
# writes C (one named u64 array per counter, indexed by route) every 0.1 s and at exit, and
# C.names (the route names). One ardnet with two routes over loopback: route 0 receives
# (udp -> ctr.copy), route 1 sends (ctr.src -> udp). Checked with the `ard` tool, as a user
# reads them: received of the sending route grows while a writer runs and ends equal to the
# packets written (received + skipped, exactly, also when the route was stopped as the writer
# started: the packets before its first count as skipped); the receiving route's received
# equals what the sending route sent; a datagram with a wrong magic is counted in drop_magic[0] and
# dropped[0]; C.names and the start-up lines name the routes by index; the packet written at
# exit equals the counters printed at exit, field by field; --counters on a connection with a
# live writer elsewhere is refused (exit 111) naming it; a counters connection left by a run
# with another layout is refused while a reader holds it (exit 111), else taken over; the YAML key is read, the command line wins, and a bad
# value is refused with FILE:LINE:COLUMN; `ardstart --system` gives its bridges --counters.
TEST_NAME=counters
source "$(dirname "$0")/common.sh"
: "${ARD:?} ${ARDSTART:?}"
C=ardnet.ctr
N=300
TYPE='u64 u64 i64 u32[10]'

# cval FIELD: the field's value in the newest packet of C ("received[1]": one element).
cval() {
    "$ARD" show "$C" --field "$1" --format csv | tail -n 1 | awk -F, '{print $NF}'
}

echo "== bad values are refused before anything starts"
grep -q -- "--counters CONN" <<<"$("$ARDNET" --help)" || fail "--help does not mention --counters"
printf 'counters: ok\nroutes:\n  - in: a\n    out: udp://127.0.0.1:%d\n    size: 8\n' "$PORT" \
    >"$T/good.yaml"
printf 'counters: "bad name"\nroutes:\n  - in: a\n    out: udp://127.0.0.1:%d\n    size: 8\n' \
    "$PORT" >"$T/bad.yaml"
rc=0
"$ARDNET" --config "$T/bad.yaml" 2>"$T/bad.err" || rc=$?
[ "$rc" = 100 ] || fail "counters: 'bad name' in YAML: exit $rc, expected 100"
grep -q "^$T/bad.yaml:1:11: counters: connection name 'bad name': character ' '" "$T/bad.err" ||
    fail "bad counters: value not named with file:line:column: $(cat "$T/bad.err")"
long=$(printf 'x%.0s' $(seq 58))
rc=0
"$ARDNET" --in a --out udp://127.0.0.1:"$PORT" --size 8 --counters "$long" 2>"$T/long.err" || rc=$?
[ "$rc" = 100 ] && grep -q -- "--counters: connection name '$long' is longer than 57" "$T/long.err" ||
    fail "a 58-character --counters: exit $rc, $(cat "$T/long.err")"
rc=0
"$ARDNET" --in a --out "$C.names" --size 8 --counters "$C" 2>"$T/twice.err" || rc=$?
[ "$rc" = 100 ] && grep -q "connection '$C.names' is written by route 'a' and by --counters $C" \
    "$T/twice.err" || fail "a route writing the counters' names: exit $rc, $(cat "$T/twice.err")"

echo "== the YAML key, and the command line wins"
bg_ready y "$ARDNET" --config "$T/good.yaml"
"$ARD" show ok --field routes >/dev/null || fail "counters: ok in YAML: no connection 'ok'"
stop y || fail "ardnet with counters: ok exited $?"
bg_ready y2 "$ARDNET" --config "$T/good.yaml" --counters cli
"$ARD" show cli --field routes >/dev/null || fail "--counters cli: no connection 'cli'"
seq_ok=$("$ARD" list --json | /usr/bin/python3 -c 'import json,sys
print([c["count"] for c in json.load(sys.stdin) if c["name"] == "ok"][0])')
sleep 0.3
seq_ok2=$("$ARD" list --json | /usr/bin/python3 -c 'import json,sys
print([c["count"] for c in json.load(sys.stdin) if c["name"] == "ok"][0])')
[ "$seq_ok" = "$seq_ok2" ] || fail "'ok' (the file's) is written although --counters cli was given"
stop y2 || fail "ardnet with --counters cli exited $?"

echo "== a route carrying packets, counted while it runs"
bg_ready net "$ARDNET" --in udp://127.0.0.1:"$PORT" --out ctr.copy --from 127.0.0.1 --conn-id 7 \
    --type "$TYPE" --next --in ctr.src --out udp://127.0.0.1:"$PORT" --conn-id 7 --type "$TYPE" \
    --counters "$C"
grep -q "^ardnet: counters $C: route 0 'ctr.copy'$" "$T/net.err" &&
    grep -q "^ardnet: counters $C: route 1 'ctr.src'$" "$T/net.err" ||
    fail "the start-up lines do not give the routes' indexes"
[ "$(cval routes)" = 2 ] && [ "$(cval outputs)" = 0 ] && [ "$(cval inputs)" = 0 ] ||
    fail "routes/outputs/inputs: $(cval routes) $(cval outputs) $(cval inputs)"
"$ARD" show "$C.names" --format json | /usr/bin/python3 -c 'import json,sys
f = json.loads(sys.stdin.readline())["fields"]["names"]
b = bytes(f)
assert len(b) == 128, len(b)
assert b[:64].rstrip(b"\0") == b"ctr.copy", b[:64]
assert b[64:].rstrip(b"\0") == b"ctr.src", b[64:]' || fail "$C.names does not name the routes"

# Someone else's connection: the library's writer lock refuses, the message names it.
rc=0
"$ARDNET" --in b --out udp://127.0.0.1:"$PORT" --size 8 --counters "$C" 2>"$T/busy.err" || rc=$?
[ "$rc" = 111 ] || fail "--counters on a connection with a live writer: exit $rc, expected 111"
grep -q -- "--counters: cannot write connection '$C'" "$T/busy.err" ||
    fail "the refusal does not name the connection: $(cat "$T/busy.err")"

# The route is stopped when the writer starts: the packets sent before the first one it takes
# count as skipped (it was there, it never saw them), like those between two it took.
kill -STOP "$(cat "$T/net.pid")"
bg pub "$TBLOCK" pub --size 64 --ard data=ctr.src --rate 200 --count $N --plain
sleep 0.3
kill -CONT "$(cat "$T/net.pid")"
first=0
for i in $(seq 100); do
    first=$(cval 'received[1]')
    [ "$first" -gt 0 ] && break
    sleep 0.05
done
[ "$first" -gt 0 ] || fail "received[1] stays 0 while the writer runs"
grow=$first
for i in $(seq 100); do
    grow=$(cval 'received[1]')
    [ "$grow" -gt "$first" ] && break
    sleep 0.05
done
[ "$grow" -gt "$first" ] || fail "received[1] does not grow while the writer runs ($first)"
echo "received[1] while running: $first, then $grow"
wait "$(cat "$T/pub.pid")" || fail "the writer failed"
rm -f "$T/pub.pid"
# The last packets take a route hop and up to 0.1 s to show.
for i in $(seq 200); do
    [ $(($(cval 'received[1]') + $(cval 'skipped[1]'))) = $N ] &&
        [ "$(cval 'received[0]')" = "$(cval 'sent[1]')" ] && break
    sleep 0.05
done
got=$(($(cval 'received[1]') + $(cval 'skipped[1]')))
[ "$got" = $N ] || fail "received[1] + skipped[1] = $got after the writer stopped, expected $N"
[ "$(cval 'skipped[1]')" -gt 0 ] || fail "skipped[1] is 0 after the route was stopped for 0.3 s"
[ "$(cval 'received[0]')" = "$(cval 'sent[1]')" ] ||
    fail "received[0] $(cval 'received[0]') != sent[1] $(cval 'sent[1]')"
[ "$(cval 'received[0]')" -gt 0 ] || fail "nothing crossed the bridge"

echo "== a datagram with a wrong magic is counted by cause"
[ "$(cval 'drop_magic[0]')" = 0 ] || fail "drop_magic[0] before the bad datagram: $(cval 'drop_magic[0]')"
/usr/bin/python3 -c 'import socket,sys
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.sendto(b"XXXX" + bytes(116), ("127.0.0.1", int(sys.argv[1])))' "$PORT"
for i in $(seq 100); do
    [ "$(cval 'drop_magic[0]')" = 1 ] && break
    sleep 0.05
done
[ "$(cval 'drop_magic[0]')" = 1 ] || fail "drop_magic[0] is $(cval 'drop_magic[0]'), expected 1"
[ "$(cval 'dropped[0]')" = 1 ] || fail "dropped[0] is $(cval 'dropped[0]'), expected 1"
[ "$(cval 'dropped[1]')" = 0 ] || fail "dropped[1] is $(cval 'dropped[1]'), expected 0"

echo "== the packet written at exit equals the counters printed at exit"
stop net || fail "ardnet exited $?"
grep '^route ' "$T/net.err" >"$T/final.txt"
"$ARD" show "$C" --format json | /usr/bin/python3 -c 'import json,sys
f = json.loads(sys.stdin.readline())["fields"]
lines = open(sys.argv[1]).read().split("\n")
routes = [l for l in lines if l]
assert len(routes) == 2 and f["routes"] == 2, (routes, f["routes"])
n = 0
for i, l in enumerate(routes):
    for kv in l.split(": ", 1)[1].split():
        k, v = kv.split("=")
        assert f[k][i] == int(v), (i, k, f[k][i], v)
        n += 1
assert n == 2 * 32, n
print("%d values equal" % n)' "$T/final.txt" || fail "the last packet differs from the final text"
# The exit wrote a last packet (the names with it: once at start, once at exit).
nseq=$("$ARD" show "$C.names" --field 'names[0]' --format csv | tail -n 1 | cut -d, -f1)
[ "$nseq" = 2 ] || fail "$C.names has seq $nseq after the exit, expected 2 (start and exit)"

echo "== a counters connection of another layout: refused while a reader holds it, else taken over"
bg follow "$ARD" show -f "$C" --field routes
for i in $(seq 100); do
    grep -q 'routes = 2' "$T/follow.out" && break
    sleep 0.05
done
grep -q 'routes = 2' "$T/follow.out" || fail "ard show -f does not follow $C"
rc=0
"$ARDNET" --in ctr.src --out udp://127.0.0.1:"$PORT" --conn-id 7 --counters "$C" 2>"$T/held.err" ||
    rc=$?
[ "$rc" = 111 ] && grep -q "connection '$C' exists with another layout .* still attached" \
    "$T/held.err" || fail "another layout with a reader attached: exit $rc, $(cat "$T/held.err")"
stop follow || true
bg_ready one "$ARDNET" --in ctr.src --out udp://127.0.0.1:"$PORT" --conn-id 7 --counters "$C"
[ "$(cval routes)" = 1 ] || fail "the new layout was not written: routes=$(cval routes)"
stop one || fail "ardnet with one route exited $?"

echo "== ardstart --system gives each inserted bridge --counters ardnet.<its entry name>"
cat >"$T/two.yaml" <<'YAML'
name: two
hosts: { a: "", b: "rt2" }
local_host: station
connections: { c: u64 }
subsystems:
  - name: wr
    host: a
    blocks: [ { name: w, cmd: tblock, out: { p: c } } ]
  - name: rd
    host: b
    blocks: [ { name: r, cmd: tblock, in: { p: c } } ]
YAML
"$ARDSTART" --system "$T/two.yaml" --dry-run >"$T/two.sh" || fail "ardstart --dry-run"
grep -q -- "-n from_station -- ardnet .* --counters ardnet.from_station" "$T/two.sh" ||
    fail "receiving bridge without --counters: $(grep ardnet "$T/two.sh")"
grep -q -- "-n to_rt2 -- ardnet .* --counters ardnet.to_rt2" "$T/two.sh" ||
    fail "sending bridge without --counters: $(grep ardnet "$T/two.sh")"
echo "ok"
