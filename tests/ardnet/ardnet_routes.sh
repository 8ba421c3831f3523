#!/bin/bash
# Routes as the documentation describes them, on one host (docs/ardnet.md):
#  1. --every 3 --max-rate 50 on a local route: only every third packet taken in is ever
#     forwarded, at most one per slot, and the last candidate goes out after the writer stops;
#  2. untyped (opaque) connections on every kind of route: local to local (an existing
#     connection, and one created from --size), the same from a YAML file, and over UDP;
#  3. a receiver without --type for a typed sender says so once, naming its own type and the
#     sender's, and delivers nothing;
#  4. configuration messages: '.' and '..' are no connection names; --size contradicting --type is a usage error (100) that names no
#     internal port; an unknown top-level YAML key with a list value is named as unknown; an
#     empty 'routes' list says so; YAML nested deeper than 16 levels is refused with the file
#     and line;
#  5. --dev works without privileges (Linux >= 5.7: SO_BINDTODEVICE on an unbound socket);
#  6. start order is free: a receiver given neither --size nor an existing connection creates
#     it with the size and type the sender's descriptor datagram carries.
TEST_NAME=routes
source "$(dirname "$0")/common.sh"
TYPE="u64 u64 i64 u32[250]"
expect() { # CODE PATTERN ARGS...: ardnet exits with CODE and stderr matches PATTERN
    local code=$1 pat=$2 rc=0
    shift 2
    timeout 20 "$ARDNET" "$@" >"$T/x.out" 2>"$T/x.err" || rc=$?
    [ "$rc" = "$code" ] || fail "ardnet $*: exit $rc, expected $code ($(cat "$T/x.err"))"
    grep -qE -- "$pat" "$T/x.err" || fail "ardnet $*: message '$(cat "$T/x.err")' lacks '$pat'"
}

# ---- 1. --every with --max-rate ------------------------------------------------------------
"$TBLOCK" pub --ard data=esrc --count 1 --plain --counter-from 1000000 >/dev/null
bg_ready E "$ARDNET" --in esrc --out edst --every 3 --max-rate 50 --stats-file "$T/E.stats"
bg esub "$TBLOCK" sub --ard data=edst --idle-ms 3000 --multiple-of 3 --result "$T/esub.result"
sleep 0.2
# The route takes in the packet it finds at start-up (its 1st), then the writer's counters
# 2..3000 (its 2nd..3000th): its every third packet is the one whose counter is a multiple of 3.
"$TBLOCK" pub --ard data=esrc --rate 500 --count 2999 --plain --counter-from 1 >"$T/epub.out"
sleep 0.5
stop E || fail "ardnet E exit $?"
wait "$(cat "$T/esub.pid")" || true
rm -f "$T/esub.pid"
echo "every+max-rate: $(cat "$T/esub.result"); E: $(grep '^route' "$T/E.stats")"
er=$(counter "$T/E.stats" esrc received)
es=$(counter "$T/E.stats" esrc sent)
if [ "$(counter "$T/E.stats" esrc skipped)" = 0 ] && [ "$er" = 3000 ]; then
    [ "$(kv "$T/esub.result" bad)" = 0 ] || fail "1: a packet that is not a third one was forwarded"
    [ "$(kv "$T/esub.result" last)" = 3000 ] || fail "1: the last candidate (3000) was not forwarded"
else
    echo "1: the route skipped packets (loaded machine): only the totals are checked"
fi
[ "$es" -ge 2 ] && [ "$es" -le $((er / 3)) ] || fail "1: forwarded $es of $er"
[ "$(counter "$T/E.stats" esrc reduced)" = $((er - es)) ] || fail "1: reduced count"

# ---- 2. opaque connections ------------------------------------------------------------------
check_copy() { # NAME SRC DST: a writer on SRC reaches a reader on DST, intact
    bg "sub_$1" "$TBLOCK" sub --opaque --ard "data=$3" --idle-ms 3000 --result "$T/$1.result"
    sleep 0.2
    "$TBLOCK" pub --opaque --ard "data=$2" --rate 1000 --count 500 >"$T/$1.pub"
    wait "$(cat "$T/sub_$1.pid")" || fail "2 $1: damaged, older or repeated: $(cat "$T/$1.result")"
    rm -f "$T/sub_$1.pid"
    [ "$(kv "$T/$1.result" last)" = "$(sed -n 's/.*last=//p' "$T/$1.pub")" ] ||
        fail "2 $1: the reader did not get the last packet"
}
"$TBLOCK" pub --opaque --ard data=op --count 1 >/dev/null
bg_ready O1 "$ARDNET" --in op --out op.copy
check_copy existing op op.copy
stop O1 || fail "ardnet O1 exit $?"
bg_ready O2 "$ARDNET" --in c --out d --size 1024
check_copy created c d
stop O2 || fail "ardnet O2 exit $?"
bg_ready O3 "$ARDNET" --in c8 --out d8 --size 8
stop O3 || fail "ardnet O3 exit $?"
cat >"$T/op.yaml" <<Y
routes:
  - in: yc
    out: yd
    size: 1024
  - in: udp://127.0.0.1:$PORT
    out: ud
    size: 1024
    conn-id: 9
  - in: yd
    out: udp://127.0.0.1:$PORT
    conn-id: 9
Y
bg_ready O4 "$ARDNET" --config "$T/op.yaml"
check_copy yaml yc yd
check_copy udp yc ud
stop O4 || fail "ardnet O4 exit $?"

# ---- 3. a receiver without --type for a typed sender ------------------------------------------
P2=$((PORT + 1))
bg_ready R "$ARDNET" --in "udp://127.0.0.1:$P2" --out tdst --size 1024 --conn-id 5
"$TBLOCK" pub --ard data=tsrc --count 1 >/dev/null
bg_ready S "$ARDNET" --in tsrc --out "udp://127.0.0.1:$P2" --conn-id 5
"$TBLOCK" pub --ard data=tsrc --rate 1000 --count 300 >/dev/null
stop S
stop R || fail "ardnet R exit $?"
n=$(grep -c "sends type" "$T/R.err" || true)
[ "$n" = 1 ] || fail "3: the type mismatch was reported $n times, not once: $(cat "$T/R.err")"
grep -qF "sends type 'u64 u64 i64 u32[250]' (1024 bytes), this route expects an opaque connection (no type) of 1024 bytes" "$T/R.err" ||
    fail "3: the message does not name both types: $(cat "$T/R.err")"
grep -qF "give this side --type 'u64 u64 i64 u32[250]'" "$T/R.err" || fail "3: no advice"
[ "$(counter "$T/R.err" tdst received)" = 0 ] || fail "3: packets of another type delivered"
[ "$(counter "$T/R.err" tdst drop_type)" -ge 100 ] || fail "3: drop_type not counted"

# ---- 4. configuration messages ---------------------------------------------------------------
expect 100 "type 'f64' has size 8, the route says 16" --in c16 --out d16 --size 16 --type f64
grep -q "'p[0-9]" "$T/x.err" && fail "4: an internal port name in '$(cat "$T/x.err")'"
"$TBLOCK" pub --ard data=typed --count 1 >/dev/null
expect 100 "connection 'typed'" --in typed --out typed.copy --size 2048
grep -q "'p[0-9]" "$T/x.err" && fail "4: an internal port name in '$(cat "$T/x.err")'"
# names are checked by the library's one validator: '..' is no connection name
expect 100 "endpoint '..' is neither udp://HOST:PORT nor a connection name: connection name '..' is not allowed" --in .. --out x
expect 100 "endpoint '.' is neither" --in x --out .
printf 'bogus: [1, 2]\nroutes: []\n' >"$T/c.yaml"
expect 100 "c.yaml:1:1: unknown key 'bogus'" --config "$T/c.yaml"
printf 'routes: []\n' >"$T/c.yaml"
expect 100 "the 'routes' list of .*c.yaml is empty" --config "$T/c.yaml"
deep=$(printf '[%.0s' $(seq 17))
printf 'routes:\n  - in: x\n    out: %s\n' "$deep" >"$T/c.yaml"
expect 100 "c.yaml:3:[0-9]+: nested deeper than 16 levels" --config "$T/c.yaml"
# a route file through a pipe is checked for depth and then read whole (/dev/stdin names it)
printf 'routes:\n  - in: x\n    out: y\n    colour: red\n' >"$T/c.yaml"
rc=0
cat "$T/c.yaml" | timeout 20 "$ARDNET" --config /dev/stdin 2>"$T/x.err" || rc=$?
[ "$rc" = 100 ] && grep -qF "/dev/stdin:4:5: unknown route key 'colour'" "$T/x.err" ||
    fail "route file on a pipe: exit $rc: $(cat "$T/x.err")"
rc=0
head -c $((65 << 20)) /dev/zero | timeout 60 "$ARDNET" --config /dev/stdin 2>"$T/x.err" || rc=$?
[ "$rc" = 100 ] && grep -qF "/dev/stdin: larger than 64 MiB (read from a pipe)" "$T/x.err" ||
    fail "a 65 MiB route file on a pipe: exit $rc: $(cat "$T/x.err")"
{
    echo "routes:"
    for i in $(seq 16); do printf '%*s- \n' $((2 * i)) ''; done
} >"$T/c.yaml"
expect 100 "c.yaml:[0-9]+:[0-9]+: nested deeper than 16 levels" --config "$T/c.yaml"

# ---- 6. start order is free: a receiver with neither --size nor an existing connection -------------
P4=$((PORT + 3))
bg_ready L "$ARDNET" --in "udp://127.0.0.1:$P4" --out learned --conn-id 11 --stats-file "$T/L.stats"
[ -e "/dev/shm/ard.$ARD_DOMAIN.learned" ] && fail "6: the connection exists before the sender told its size"
"$TBLOCK" pub --ard data=lsrc --count 1 >/dev/null
bg_ready LA "$ARDNET" --in lsrc --out "udp://127.0.0.1:$P4" --conn-id 11
bg lpub "$TBLOCK" pub --ard data=lsrc --rate 1000 --count 3000
for _ in $(seq 100); do [ -e "/dev/shm/ard.$ARD_DOMAIN.learned" ] && break; sleep 0.05; done
# the reader declares size and type: attaching proves the receiver created them as the writer's
bg lsub "$TBLOCK" sub --ard data=learned --idle-ms 3000 --result "$T/lsub.result"
wait "$(cat "$T/lpub.pid")" || fail "6: writer"
rm -f "$T/lpub.pid"
wait "$(cat "$T/lsub.pid")" || fail "6: reader: $(cat "$T/lsub.result" 2>/dev/null) $(cat "$T/lsub.err")"
rm -f "$T/lsub.pid"
stop LA
stop L || fail "ardnet L exit $?"
[ "$(kv "$T/lsub.result" last)" = "$(sed -n 's/.*last=//p' "$T/lpub.out")" ] || fail "6: the reader did not get the last packet"
[ "$(counter "$T/L.stats" learned received)" -ge 100 ] || fail "6: the learning receiver delivered too little"

# ---- 5. --dev without privileges ---------------------------------------------------------------
if [ "$(id -u)" = 0 ] && command -v setpriv >/dev/null; then
    D="${ARD_DOMAIN}_nobody"
    # nobody runs a copy of ardnet: the build tree may be out of its reach (under /root).
    nbin=$(mktemp -d /tmp/ardnet_routes_bin.XXXXXX)
    chmod 755 "$nbin"
    cp "$ARDNET" "$nbin/ardnet"
    chmod 755 "$nbin/ardnet"
    rc=0
    ARD_DOMAIN=$D timeout 2 setpriv --reuid=nobody --regid=nogroup --clear-groups \
        "$nbin/ardnet" --in "udp://127.0.0.1:$((PORT + 2))" --out nb --size 8 --dev lo \
        >"$T/nb.out" 2>"$T/nb.err" || rc=$?
    rm -rf "$nbin"
    rm -f /dev/shm/ard."$D".*
    # timeout's 124: it ran until stopped, so the socket options were accepted
    [ "$rc" = 124 ] || fail "5: --dev as nobody: exit $rc ($(cat "$T/nb.err"))"
else
    echo "5: skipped (needs root to become nobody)"
fi
echo PASS
