#!/bin/bash
# ard_limits.sh - descriptors and sizing (docs/reliability.md, "Resource exhausted"):
#  - ard raises its soft RLIMIT_NOFILE to the hard limit: `ard record` of 80 connections under
#    a soft limit of 40 records every one;
#  - with the hard limit too low as well, it says once that it is out of descriptors, naming
#    the limit and about how many it needs, instead of a line per connection, and records what
#    fits;
#  - `ard list` holds one view at a time: under soft and hard 64 it lists all 80 connections;
#  - `ard web` keeps a view per Foxglove channel: under soft and hard 128 it says once that it
#    is out of descriptors, naming the limit, and still answers /api/net for every connection
#    (the descriptors it keeps free);
#  - `ard df` counts the domain's objects and bytes and names a sparse object, which the next
#    view (`ard show`) reserves.
TEST_NAME=limits
. "$(dirname "$0")/common.sh"
"$ARD" help record >/dev/null 2>&1 || { echo "SKIP: ard record is not built" >&2; exit 77; }
N=80
for i in $(seq $N); do "$ARD" set "c$i" --size 64 >/dev/null; done

channels() { "$ARD" info "$1" --json | python3 -c 'import json,sys; print(len(json.load(sys.stdin)["connections"]))'; }

# Soft 40, hard 4096: raised, every connection recorded, no complaint.
prlimit --nofile=40:4096 "$ARD" record -o "$T/all.mcap" --duration 0.5 2>"$T/err" ||
    fail "record under a soft limit: $(cat "$T/err")"
! grep -q 'descriptor\|skipped' "$T/err" || fail "record complained: $(cat "$T/err")"
[ "$(channels "$T/all.mcap")" = $N ] || fail "recorded $(channels "$T/all.mcap") of $N connections"

# Soft and hard 64: one line naming the limit and the need; some recorded, none named singly.
prlimit --nofile=64:64 "$ARD" record -o "$T/some.mcap" --duration 0.5 2>"$T/err" ||
    fail "record under a hard limit: $(cat "$T/err")"
[ "$(grep -c 'out of descriptors: RLIMIT_NOFILE is 64 (hard limit 64)' "$T/err")" = 1 ] ||
    fail "expected one line naming the limit: $(cat "$T/err")"
grep -q 'more connections need one each, about [0-9]* in all' "$T/err" || fail "no need named: $(cat "$T/err")"
! grep -q 'skipped:' "$T/err" || fail "a line per connection: $(cat "$T/err")"
got=$(channels "$T/some.mcap")
{ [ "$got" -gt 0 ] && [ "$got" -lt $N ]; } || fail "recorded $got of $N under a limit of 64"

# ard list under soft and hard 64: every connection listed, none damaged, no complaint.
prlimit --nofile=64:64 "$ARD" list --json >"$T/list.json" 2>"$T/err" || fail "ard list under 64: $(cat "$T/err")"
[ ! -s "$T/err" ] || fail "ard list complained: $(cat "$T/err")"
listed() { python3 -c 'import json,sys; v=json.load(open(sys.argv[1])); print(len(v), sum(1 for c in v if "error" in c))' "$1"; }
[ "$(listed "$T/list.json")" = "$N 0" ] || fail "ard list under 64: $(listed "$T/list.json") (listed, damaged) of $N"

# ard web under soft and hard 128: one line naming the limit; /api/net lists all, none damaged.
if "$ARD" help web >/dev/null 2>&1 && command -v curl >/dev/null; then
    prlimit --nofile=128:128 "$ARD" web --listen 127.0.0.1:0 >"$T/web.out" 2>"$T/web.err" &
    web=$!
    PIDS+=("$web")
    wait_for grep -q 'out of descriptors' "$T/web.err"
    url=$(grep -o 'http://[^ ]*' "$T/web.out" | head -1)
    base=${url%%\?*}
    port=${base##*:}
    port=${port%/}
    curl -sf -H "Cookie: ard_token_$port=${url##*token=}" "${base%/}/api/net" >"$T/net.json" ||
        fail "ard web under 128 does not answer /api/net"
    python3 -c 'import json,sys; c=json.load(open(sys.argv[1]))["connections"]; print(len(c), sum(1 for x in c if x.get("damaged")))' \
        "$T/net.json" >"$T/net.count"
    [ "$(cat "$T/net.count")" = "$N 0" ] || fail "/api/net under 128: $(cat "$T/net.count") (listed, damaged)"
    sleep 1.5 # (ard web looks at the domain every 0.5 s: a few more looks)
    kill "$web"
    wait "$web" || fail "ard web under 128 did not end cleanly: $(cat "$T/web.err")"
    [ "$(grep -c 'ard web: out of descriptors: RLIMIT_NOFILE is 128 (hard limit 128)' "$T/web.err")" = 1 ] ||
        fail "expected one line naming the limit: $(cat "$T/web.err")"
    grep -q 'and [1-9][0-9]* more connections need one each, about [0-9]* in all' "$T/web.err" ||
        fail "no need named: $(cat "$T/web.err")"
fi

# ard df: the domain's objects and bytes, and a sparse object named until a view reserves it.
df_field() { "$ARD" df --json | python3 -c "import json,sys; d=json.load(sys.stdin); print($1)"; }
[ "$(df_field 'd["objects"]')" = $N ] || fail "ard df counts $(df_field 'd["objects"]') objects"
want=0
for i in $(seq $N); do want=$((want + $(stat -c %s "/dev/shm/ard.$ARD_DOMAIN.c$i"))); done
[ "$(df_field 'd["bytes"]')" = $want ] || fail "ard df says $(df_field 'd["bytes"]') bytes, the objects have $want"
[ "$(df_field 'd["reserved"] >= d["bytes"]')" = True ] || fail "objects not reserved whole"
[ "$(df_field 'd["shm"]["free"] > 0 and d["shm"]["size"] >= d["shm"]["used"]')" = True ] ||
    fail "ard df: /dev/shm figures: $("$ARD" df --json)"
[ "$(df_field 'len(d["sparse"])')" = 0 ] || fail "sparse objects listed: $("$ARD" df)"
# c1 made sparse by hand: its first page (the header) kept, the rest a hole of the same length.
python3 - "/dev/shm/ard.$ARD_DOMAIN.c1" <<'PY'
import os, sys
fd = os.open(sys.argv[1], os.O_RDWR)
size = os.fstat(fd).st_size
head = os.pread(fd, 8192, 0)
os.ftruncate(fd, 0)
os.pwrite(fd, head, 0)
os.ftruncate(fd, size)
PY
"$ARD" df >"$T/df"
grep -q '^  sparse: c1 ([0-9]* bytes not reserved' "$T/df" || fail "ard df does not name c1: $(cat "$T/df")"
[ "$(df_field 'd["sparse"][0]["name"]')" = c1 ] || fail "ard df --json: $("$ARD" df --json)"
"$ARD" show c1 >/dev/null 2>"$T/err" || fail "ard show of the sparse c1: $(cat "$T/err")"
[ "$(df_field 'len(d["sparse"])')" = 0 ] || fail "c1 still sparse after ard show: $("$ARD" df)"
# ardnet raises its soft limit too (its routes and the catalog keep a descriptor each).
if [ -n "${ARDNET:-}" ]; then
    port=$((20000 + (($$ + RANDOM) % 6000) * 2))
    prlimit --nofile=40:4096 "$ARDNET" --in "udp://127.0.0.1:$port" --out fromnet --size 8 2>"$T/ardnet.err" &
    pid=$!
    PIDS+=("$pid")
    wait_for test -e "/dev/shm/ard.$ARD_DOMAIN.fromnet"
    soft=$(awk '/^Max open files/ { print $4 }' "/proc/$pid/limits")
    [ "$soft" = 4096 ] || fail "ardnet runs with a soft descriptor limit of $soft, not the hard 4096"
fi
echo "PASS: ard record, ard web and ardnet raise their descriptor limit, record and web name it once; ard list needs one; ard df counts and names"
