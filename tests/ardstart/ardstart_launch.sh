#!/bin/bash
# What a user of ardstart/ardkill notices of the launcher's rules, on one host:
#   readiness of a script (only the script's own process declares it ready), -C naming the
#   directory, optional option values attached only (--wait=5) with a clear error for
#   "--wait 5", --version, --list columns that stay aligned with long states, ardkill -d on an
#   unknown domain creating nothing, the books directory refusing a symbolic link and a
#   directory that is not private, and inserted bridges accepting only their peer (--from).
#   (ardkill and attached shared memory: ardstart_unlink_busy.sh.)
TEST_NAME=launch
source "$(dirname "$0")/common.sh"
local_books
D=$ARD_DOMAIN

echo "== a script that backgrounds a block and never says ready is not ready"
cat >"$T/bg.sh" <<'SH'
#!/bin/bash
tblock out:bg.x &
exec sleep 1000
SH
chmod +x "$T/bg.sh"
expect_fail 3 "is not ready after 1.0 s" "$ARDSTART" --wait=1 -n bg -- "$T/bg.sh"
# The block did start (its ard_init ran and reported for itself): only the script was not
# declared ready by it.
for i in $(seq 100); do [ -e "/dev/shm/ard.$D.bg.x" ] && break; sleep 0.05; done
[ -e "/dev/shm/ard.$D.bg.x" ] || fail "the backgrounded block never ran"
"$ARDKILL" -q -g 0.2 bg

echo "== ... and is ready once it says so itself"
cat >"$T/bg2.sh" <<'SH'
#!/bin/bash
tblock out:bg2.x &
ardstart --ready
exec sleep 1000
SH
chmod +x "$T/bg2.sh"
out=$("$ARDSTART" --wait=20 -n bg2 -- "$T/bg2.sh") || fail "bg2 not ready: $out"
grep -q "started bg2 on .* ready after" <<<"$out" || fail "no readiness report: $out"
"$ARDKILL" -q -g 0.2 bg2

echo "== a script that exits before it says ready ended before it was ready"
expect_fail 2 "exited 0 before it was ready" "$ARDSTART" --wait=20 -n quick -- sh -c 'true'
"$ARDKILL" -q quick

echo "== -C names the directory that does not exist, and records nothing"
expect_fail 1 "ardstart: cd1: cannot change to directory '$T/nonexistent': No such file or directory" \
    "$ARDSTART" -C "$T/nonexistent" -n cd1 -- /bin/true
[ -z "$("$ARDSTART" --list --raw cd1)" ] || fail "cd1 recorded"
touch "$T/plainfile"
expect_fail 1 "cannot change to directory '$T/plainfile': Not a directory" \
    "$ARDSTART" -C "$T/plainfile" -n cd2 -- /bin/true

echo "== an optional value must be attached: --wait 5 is an error, nothing runs"
expect_fail 100 "--wait 5: attach the time, as in --wait=5 or -w5" \
    "$ARDSTART" --wait 5 -n t1 -- /bin/true
expect_fail 100 "--wait 2.5: attach the time, as in --wait=2.5" "$ARDSTART" -w 2.5 -n t1 -- /bin/true
[ -z "$("$ARDSTART" --list --raw t1)" ] || fail "t1 recorded after a usage error"
out=$("$ARDSTART" -w5 -n t2 -- tblock out:t2.x) || fail "-w5 refused"
grep -q "ready after" <<<"$out" || fail "-w5 did not wait: $out"
"$ARDKILL" -q -g 0.2 t2
# A bare --wait before a command that is not a number is still the default wait.
out=$("$ARDSTART" --wait -n t3 -- tblock out:t3.x) || fail "bare --wait refused"
grep -q "ready after" <<<"$out" || fail "bare --wait did not wait: $out"
"$ARDKILL" -q -g 0.2 t3
# Required values take both forms, in both programs.
"$ARDKILL" -q --grace 0.5 t3 || fail "ardkill --grace 0.5"
"$ARDKILL" -q --grace=0.5 t3 || fail "ardkill --grace=0.5"

echo "== --version"
[ "$("$ARDSTART" --version)" = "ardstart (ardnet) 0.1.0" ] || fail "ardstart --version: $("$ARDSTART" --version)"
[ "$("$ARDKILL" --version)" = "ardkill (ardnet) 0.1.0" ] || fail "ardkill --version: $("$ARDKILL" --version)"

echo "== --list: columns stay aligned whatever the length of a state"
chmod -x "$T/plainfile"
"$ARDSTART" -q -n perm -- "$T/plainfile" 2>/dev/null || true # failed: Permission denied
"$ARDSTART" -q -n ok -- tblock out:ok.x
"$ARDSTART" --list | tee "$T/list"
# Every row's UPTIME cell ends in the same column as the header's.
awk 'NR == 1 { col = index($0, "UPTIME") + 5; next }
     { up = substr($0, col - 8, 9); if (up !~ /[0-9]s$/ && up !~ /[0-9][smhd]$/) bad = 1 }
     END { exit bad }' "$T/list" || fail "columns shifted: $(cat "$T/list")"
grep -q "failed: Permission denied" "$T/list" || fail "long state not shown"
"$ARDKILL" -q -g 0.2 ok perm

echo "== ardkill -d NEWDOMAIN creates no books directory"
"$ARDKILL" -d never_used_here >/dev/null || fail "ardkill -d never_used_here"
[ ! -e "$ARD_BOOKS_DIR/never_used_here" ] || fail "books directory created for an unknown domain"
"$ARDSTART" -d never_used_here --list >/dev/null || fail "--list of an unknown domain"
[ ! -e "$ARD_BOOKS_DIR/never_used_here" ] || fail "--list created a books directory"

echo "== the books directory: a symbolic link or a directory that is not private is refused"
mkdir -p "$T/elsewhere"
ln -s "$T/elsewhere" "$ARD_BOOKS_DIR/planted"
expect_fail 111 "books directory '$ARD_BOOKS_DIR/planted' is a symbolic link: refusing" \
    "$ARDSTART" -d planted -n x -- true
expect_fail 111 "is a symbolic link: refusing" "$ARDKILL" -d planted
[ -z "$(ls "$T/elsewhere")" ] || fail "something was written through the link"
# The base itself, as a link another user could plant in a shared /tmp.
ln -s "$T/elsewhere" "$T/linkbase"
expect_fail 111 "books directory '$T/linkbase' is a symbolic link: refusing" \
    env ARD_BOOKS_DIR="$T/linkbase" "$ARDSTART" -n x -- true
expect_fail 111 "books directory '$T/linkbase' is a symbolic link: refusing" \
    env ARD_BOOKS_DIR="$T/linkbase" "$ARDKILL"
[ -z "$(ls "$T/elsewhere")" ] || fail "something was written through the link"
mkdir -m 0755 "$ARD_BOOKS_DIR/open"
expect_fail 111 "books directory '$ARD_BOOKS_DIR/open' is owned by uid $(id -u) with mode 0755: refusing" \
    "$ARDSTART" -d open -n x -- true
[ -z "$(ls "$ARD_BOOKS_DIR/open")" ] || fail "something was written into the open directory"
if [ "$(id -u)" = 0 ]; then
    mkdir -m 0700 "$ARD_BOOKS_DIR/foreign"
    chown 65534 "$ARD_BOOKS_DIR/foreign"
    expect_fail 111 "books directory '$ARD_BOOKS_DIR/foreign' is owned by uid 65534 with mode 0700: refusing" \
        "$ARDSTART" -d foreign -n x -- true
    expect_fail 111 "owned by uid 65534" "$ARDKILL" -d foreign
    expect_fail 111 "owned by uid 65534" "$ARDSTART" -d foreign --list
    # The base too, when another user prepared it for us (a shared /tmp).
    mkdir -m 0700 "$T/foreign_base"
    chown 65534 "$T/foreign_base"
    expect_fail 111 "books directory '$T/foreign_base' is owned by uid 65534" \
        env ARD_BOOKS_DIR="$T/foreign_base" "$ARDSTART" -n x -- true
fi

echo "== inserted bridges accept only the peer bridge; user@host is a transport login; one ardnet"
echo "   pair carries every connection between two hosts"
cat >"$T/two.yaml" <<'YAML'
name: two
hosts: { a: "", b: "robot@rt2" }
local_host: station
connections: { c: u64, d: u32 }
subsystems:
  - name: wr
    host: a
    blocks: [ { name: w, cmd: tblock, out: { p: c, q: d } } ]
  - name: rd
    host: b
    blocks: [ { name: r, cmd: tblock, in: { p: c, q: d } } ]
YAML
"$ARDSTART" --system "$T/two.yaml" --dry-run >"$T/two.sh" || fail "dry run"
grep -q -- "-H robot@rt2" "$T/two.sh" || fail "subsystem rd not started through robot@rt2"
grep -q -- "-n from_station -- ardnet --in udp://:7400 --from station --out c --size 8 --type u64 --next --in udp://:7400 --from station --out d --size 4 --type u32" "$T/two.sh" ||
    fail "receiving bridge without --from the writer's host: $(grep ardnet "$T/two.sh")"
grep -q -- "-n to_rt2 -- ardnet --in c --out udp://rt2:7400 --size 8 --type u64 --next --in d --out udp://rt2:7400 --size 4 --type u32" "$T/two.sh" ||
    fail "sending bridge does not address rt2: $(grep ardnet "$T/two.sh")"
[ "$(grep -c -- "-- ardnet" "$T/two.sh")" = 2 ] || fail "not one ardnet pair: $(grep ardnet "$T/two.sh")"

echo "== IPv6 hosts and a bad ARD_HOST are refused at parse time, naming the line"
sed 's/"robot@rt2"/"fd00::2"/' "$T/two.yaml" >"$T/six.yaml"
expect_fail 100 "six.yaml:2: host 'fd00::2': IPv6 addresses are not supported" \
    "$ARDSTART" --system "$T/six.yaml" --dry-run
sed 's/^local_host: station$//' "$T/two.yaml" >"$T/nolocal.yaml"
expect_fail 100 "character ';'" env ARD_HOST='st;touch x' "$ARDSTART" --system "$T/nolocal.yaml" --dry-run
echo "ok"
