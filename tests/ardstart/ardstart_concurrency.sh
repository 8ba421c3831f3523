#!/bin/bash
# Many ardstart calls at once (a script that starts its blocks in the background) never
# corrupt the books: every start is recorded once, with its own start number, and ardkill
# finds them all. Parallel starts of one path: exactly one wins.
TEST_NAME=conc
source "$(dirname "$0")/common.sh"
local_books
N=40

echo "== $N parallel starts with readiness"
for i in $(seq $N); do
    "$ARDSTART" -q --wait=60 -n "b$i" -p par -- tblock "out:c$i" &
done
fails=0
for job in $(jobs -p); do
    wait "$job" || fails=$((fails + 1))
done
[ "$fails" = 0 ] || fail "$fails of $N parallel starts failed"
raw=$("$ARDSTART" --list --raw par)
[ "$(grep -c $'\trunning\t' <<<"$raw")" = "$N" ] || fail "expected $N running entries"
[ "$(cut -f1 <<<"$raw" | sort -u | wc -l)" = "$N" ] || fail "duplicate paths"
seqs=$(cat "$ARD_BOOKS_DIR/$ARD_DOMAIN"/e/*.entry | grep -c '^seq=')
[ "$seqs" = "$N" ] || fail "expected $N entries on disk, found $seqs"
[ "$(grep -h '^seq=' "$ARD_BOOKS_DIR/$ARD_DOMAIN"/e/*.entry | sort -u | wc -l)" = "$N" ] ||
    fail "start numbers not unique"
[ "$(cat "$ARD_BOOKS_DIR/$ARD_DOMAIN/seq")" = "$N" ] || fail "counter is not $N"
[ "$(shm_count)" = "$N" ] || fail "expected $N connections"

echo "== 10 parallel starts of the same path: one wins, the others get exit 5"
for i in $(seq 10); do
    ( set +e; "$ARDSTART" -q -n same -- tblock out:same 2>/dev/null; echo "rc=$?" >"$T/same.$i" ) &
done
wait
ok=$(cat "$T"/same.* | grep -c '^rc=0$' || true)
busy=$(cat "$T"/same.* | grep -c '^rc=5$' || true)
[ "$ok" = 1 ] && [ "$busy" = 9 ] || fail "same path: $ok started, $busy refused"

echo "== ardkill stops them all"
pids=$("$ARDSTART" --list --raw | awk -F'\t' '$4 == "running" { print $3 }')
[ "$(wc -w <<<"$pids")" = $((N + 1)) ] || fail "expected $((N + 1)) running"
"$ARDKILL" -q || fail "ardkill failed"
for p in $pids; do alive "$p" && fail "pid $p alive"; done
[ "$(shm_count)" = 0 ] || fail "shm left"
[ -z "$("$ARDSTART" --list --raw)" ] || fail "entries left"
echo "PASS"
