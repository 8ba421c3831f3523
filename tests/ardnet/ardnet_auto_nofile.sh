#!/bin/bash
# ardnet --auto and its descriptors (docs/reliability.md, "Resource exhausted"), on loopback:
# 80 connections, each with a reader and no writer, are all wanted, and every wanted one
# needs a view and a receiving route (a socket and a port).
#  - the catalog raises its soft RLIMIT_NOFILE to the hard limit: under a soft limit of 40 it
#    asks for all 80, with no complaint;
#  - with the hard limit too low as well (64), it says once that it is out of descriptors,
#    naming the limit and about how many it needs, instead of a line per route; asks for what
#    fits, keeps serving and ends cleanly on SIGTERM.
TEST_NAME=auto_nofile
source "$(dirname "$0")/common.sh"
: "${ARD:?}"
N=80
for i in $(seq $N); do "$ARD" set "c$i" --size 64 >/dev/null; done
bg readers "$ARD" delay $(seq -f 'c%g' $N) --interval 1000
readers_on_all() {
    "$ARD" list --json | python3 -c '
import json, sys
print(sum(1 for c in json.load(sys.stdin) if c.get("readers") == 1))'
}
for _ in $(seq 200); do
    [ "$(readers_on_all)" = $N ] && break
    sleep 0.05
done
[ "$(readers_on_all)" = $N ] || fail "ard delay attached to $(readers_on_all) of $N connections"

# cstat FILE KEY: KEY=VALUE of the catalog's line in a stats file ("" before there is one).
cstat() { grep -s '^catalog ' "$1" | tr ' ' '\n' | sed -n "s/^$2=//p"; }
catalog() { # NAME LIMIT: a catalog under prlimit --nofile=LIMIT, its counters in $T/NAME.stats
    bg_ready "$1" prlimit --nofile="$2" "$ARDNET" --auto --auto-peers "127.0.0.1:$PORT" \
        --auto-port "$PORT" --stats-file "$T/$1.stats"
}

# Soft 40, hard 4096: raised, every connection wanted, no complaint.
catalog raised 40:4096
for _ in $(seq 200); do
    [ "$(cstat "$T/raised.stats" wants)" = $N ] && break
    sleep 0.05
done
[ "$(cstat "$T/raised.stats" wants)" = $N ] ||
    fail "catalog under a soft limit of 40 wants $(cstat "$T/raised.stats" wants) of $N"
stop raised || fail "catalog under a soft limit of 40: exit $?"
! grep -q "descriptor\\|route 'auto" "$T/raised.err" || fail "catalog complained: $(cat "$T/raised.err")"

# Soft and hard 64: one line naming the limit and the need, none per route; some wanted.
catalog low 64:64
# At least 20 scans (50 ms apart) that found routes they could not open.
for _ in $(seq 400); do
    [ "$(cstat "$T/low.stats" failed)" -ge 200 ] 2>/dev/null && break
    sleep 0.05
done
[ "$(cstat "$T/low.stats" failed)" -ge 200 ] 2>/dev/null ||
    fail "no routes failed under a limit of 64: $(cat "$T/low.stats" 2>/dev/null)"
wants=$(cstat "$T/low.stats" wants)
stop low || fail "catalog under a hard limit of 64: exit $? (crashed?)"
[ "$(grep -c 'out of descriptors: RLIMIT_NOFILE is 64 (hard limit 64)' "$T/low.err")" = 1 ] ||
    fail "expected one line naming the limit: $(cat "$T/low.err")"
grep -q 'and [0-9]* more are needed, about [0-9]* in all: [0-9]* connections are not looked at and [1-9][0-9]* routes are not opened' \
    "$T/low.err" || fail "the line does not name the need: $(cat "$T/low.err")"
! grep -q "route 'auto" "$T/low.err" || fail "a line per route: $(cat "$T/low.err")"
{ [ "$wants" -gt 0 ] && [ "$wants" -lt $N ]; } || fail "wants $wants of $N under a limit of 64"
grep -q "^catalog .* wants=$wants " "$T/low.err" || fail "no counters at exit: $(cat "$T/low.err")"
echo PASS
