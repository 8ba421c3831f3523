#!/bin/bash
# ardnet keygen and --key, over loopback:
#  1. keygen writes 64 hex digits and a newline with mode 0600, and never overwrites;
#  2. a key file readable by others, a truncated one, one of 33 bytes, a missing one: exit 100
#     with the message naming the file and the cause; the raw 32-byte form and a route file's
#     key are taken (3, 4);
#  3. a sender with another key, and one without a key: every datagram refused as drop_auth,
#     nothing delivered, and B names the source once (the cause in words);
#  4. the same key on both ends, given in a route file on B: packets delivered, intact;
#  5. ardstart --system with `key: PATH` (relative to the description) gives both bridges
#     --key with the absolute path; an empty key is refused with its line.
TEST_NAME=seal_cli
source "$(dirname "$0")/common.sh"
K=$T/robot.key
"$ARDNET" keygen "$K" || fail "keygen"
[ "$(stat -c %a "$K")" = 600 ] || fail "1: keygen made mode $(stat -c %a "$K")"
grep -Eqx '[0-9a-f]{64}' "$K" || fail "1: the key file is not 64 hex digits and a newline"
[ "$(wc -c <"$K")" = 65 ] || fail "1: the key file has $(wc -c <"$K") bytes"
cp "$K" "$T/before"
set +e
"$ARDNET" keygen "$K" 2>"$T/err"
rc=$?
set -e
[ $rc = 100 ] || fail "1: keygen over an existing file exited $rc"
grep -q "exists: ardnet keygen never overwrites a key file" "$T/err" || fail "1: $(cat "$T/err")"
cmp -s "$K" "$T/before" || fail "1: keygen changed an existing key file"

refused() { # FILE EXPECTED-TEXT [OPTIONS...]
    local f=$1 want=$2 rc
    shift 2
    set +e
    "$ARDNET" --key "$f" --in src --out "udp://127.0.0.1:$PORT" "$@" 2>"$T/err"
    rc=$?
    set -e
    [ $rc = 100 ] || fail "2: --key $f exited $rc, expected 100"
    grep -qF -- "$want" "$T/err" || fail "2: --key $f said '$(cat "$T/err")', expected '$want'"
}
cp "$K" "$T/open.key" && chmod 644 "$T/open.key"
refused "$T/open.key" "ardnet: key file $T/open.key: mode 0644 lets group or others at it; a key must be private (chmod 600 $T/open.key)"
head -c 40 "$K" >"$T/short.key" && chmod 600 "$T/short.key"
refused "$T/short.key" "ardnet: key file $T/short.key: not a key: it has 40 hex digits, a key has 64 (truncated?)"
head -c 33 /dev/urandom | tr '\0-\377' '\200-\377\200-\377' >"$T/33.key" && chmod 600 "$T/33.key"
refused "$T/33.key" "not a key: it has 33 bytes"
refused "$T/none.key" "ardnet: key file $T/none.key: cannot read it: No such file or directory"

# ---- 3. another key, no key ----------------------------------------------------------------
head -c 32 /dev/urandom | tr '\0-\377' '\200-\377\200-\377' >"$T/raw.key" && chmod 600 "$T/raw.key"
TYPE="u64 u64 i64 u32[250]"
start_B() { # extra options
    bg_ready B "$ARDNET" --in "udp://127.0.0.1:$PORT" --out dst --size 1024 --type "$TYPE" \
        --conn-id 7 "$@"
}
now_counter() {
    counter_now "$T/B.pid" "$T/B.err" dst "$1"
}
start_B --key "$K"
for sender in "--key $T/raw.key" ""; do
    bg pub "$TBLOCK" pub --ard data=src --rate 1000 --count 1500
    sleep 0.1
    bg_ready A "$ARDNET" $sender --in src --out "udp://127.0.0.1:$PORT" --conn-id 7
    a0=$(now_counter drop_auth) # (from here on, at least 1 s of the writer is left)
    wait "$(cat "$T/pub.pid")" || fail "3: writer"
    rm -f "$T/pub.pid"
    stop A
    a1=$(now_counter drop_auth)
    [ "$((a1 - a0))" -ge 300 ] || fail "3: sender '${sender:-no key}': drop_auth +$((a1 - a0))"
    [ "$(now_counter received)" = 0 ] || fail "3: sender '${sender:-no key}': something was delivered"
done
grep -q "are sealed with another key (key id [0-9a-f]\{8\}; this ardnet's is [0-9a-f]\{8\}): refused (drop_auth)" "$T/B.err" ||
    fail "3: B did not name the sender with another key"
grep -q "are not sealed (give the sender the same --key): refused (drop_auth)" "$T/B.err" ||
    fail "3: B did not name the unsealed sender"
stop B

# ---- 4. the same key, B's from a route file ------------------------------------------------------
cat >"$T/b.yaml" <<YAML
key: $K
routes:
  - in: udp://127.0.0.1:$PORT
    out: dst
    size: 1024
    type: "$TYPE"
    conn-id: 7
YAML
bg_ready B "$ARDNET" --config "$T/b.yaml"
bg sub "$TBLOCK" sub --ard data=dst --idle-ms 3000 --result "$T/sub.result"
bg pub "$TBLOCK" pub --ard data=src --rate 1000 --count 1500
sleep 0.1
bg_ready A "$ARDNET" --key "$K" --in src --out "udp://127.0.0.1:$PORT" --conn-id 7
wait "$(cat "$T/pub.pid")" || fail "4: writer"
rm -f "$T/pub.pid"
wait "$(cat "$T/sub.pid")" || fail "4: reader: $(cat "$T/sub.result")"
rm -f "$T/sub.pid"
[ "$(kv "$T/sub.result" received)" -ge 300 ] || fail "4: $(cat "$T/sub.result")"
[ "$(kv "$T/sub.result" last)" = "$(sed -n 's/.*last=//p' "$T/pub.out")" ] || fail "4: the last packet did not arrive"
echo "4: $(cat "$T/sub.result")"

# ---- 5. ardstart --system: key hands the key file to both bridges ---------------------------------
mkdir -p "$T/sys"
cat >"$T/sys/two.yaml" <<'YAML'
name: two
hosts: { a: "", b: "robot@rt2" }
local_host: station
key: keys/robot.key
connections: { c: u64 }
subsystems:
  - name: wr
    host: a
    blocks: [ { name: w, cmd: tblock, out: { p: c } } ]
  - name: rd
    host: b
    blocks: [ { name: r, cmd: tblock, in: { p: c } } ]
YAML
"$ARDSTART" --system "$T/sys/two.yaml" --dry-run >"$T/two.sh" || fail "5: dry run"
want="--key $T/sys/keys/robot.key"
[ "$(grep -- "-- ardnet " "$T/two.sh" | grep -cF -- "$want")" = 2 ] ||
    fail "5: the bridges do not both get $want: $(grep ardnet "$T/two.sh")"
printf 'name: s\nkey: ""\nsubsystems: []\n' >"$T/sys/bad.yaml"
set +e
"$ARDSTART" --system "$T/sys/bad.yaml" --dry-run 2>"$T/err"
rc=$?
set -e
[ $rc = 100 ] && grep -q "bad.yaml:2: key: expected the path of a key file" "$T/err" ||
    fail "5: an empty key was not refused: $rc $(cat "$T/err")"
echo PASS
