#!/usr/bin/env bash
# What `ard record` says is true (docs/recording.md, "ard record"):
# - the log (receive) time of every message is at or after its publish time (same host):
#   LOG_TRUTH_N packets at 1 kHz (default 2000; the promise was checked once with 100000);
# - a connection created after the recorder started is recorded from its first packet, and
#   every packet sent is either in the file or counted as missed;
# - a name that matches nothing is warned about at start and at the end, and a recording that
#   holds no message ends with exit code 4 (one that holds some: 0, with the warning).
TEST_NAME=truth
source "$(dirname "$0")/common.sh"
: "${TLOGW:?set TLOGW}"
N=${LOG_TRUTH_N:-2000}

# 1. Log time >= publish time, and from the first packet: the writer starts after the recorder.
"$ARD" record late -o "$T/late.mcap" 2>"$T/late.err" &
rec=$!
wait_for grep -q "matches 'late' (yet)" "$T/late.err"
"$TLOGW" live late 1000 "$N" >"$T/w1" &
PIDS+=($!)
for _ in $(seq $((N / 10 + 200))); do
    grep -q sent "$T/w1" && break
    sleep 0.05
done
grep -q sent "$T/w1" || fail "the writer did not send its $N packets"
sleep 0.3
kill -INT $rec
wait $rec || fail "ard record exited $?: $(cat "$T/late.err")"
"$TLOGW" check "$T/late.mcap" late >"$T/check" || fail "reading late.mcap: $(cat "$T/check")"
read -r _ count _ first _ last _ missed _ early _ lag <"$T/check"
echo "late: $(cat "$T/check")"
[ "$early" = 0 ] || fail "$early of $count messages have a log time before their publish time"
[ "$first" = 1 ] || fail "the connection created after the recorder started is recorded from seq $first, not 1 ($missed missed)"
[ "$last" = "$N" ] || fail "last recorded seq $last, sent $N"
[ $((count + missed)) = "$N" ] || fail "$count recorded + $missed missed != $N sent"
[ "$(recorded late "$T/late.err")" = "$count" ] ||
    fail "the summary says recorded $(recorded late "$T/late.err"), the file holds $count"
grep -q "matches 'late' (yet)" "$T/late.err" || fail "no warning at start for 'late' (not there yet)"
grep -q "matches 'late'$" "$T/late.err" && fail "a warning at the end for a name that matched"

# 2. A name that matches nothing: warned at start and at the end, exit 4 (no message).
rc=0
timeout 20 "$ARD" record nosuch -o "$T/none.mcap" --duration 0.5 2>"$T/none.err" || rc=$?
[ "$rc" = 4 ] || fail "recording nothing exited $rc, expected 4: $(cat "$T/none.err")"
[ "$(grep -c "matches 'nosuch'" "$T/none.err")" = 2 ] ||
    fail "expected a warning at start and at the end: $(cat "$T/none.err")"
grep -q "holds no message" "$T/none.err" || fail "no 'holds no message': $(cat "$T/none.err")"
"$ARD" info "$T/none.mcap" >/dev/null || fail "the empty recording is not a readable file"

# 3. One name matches, one does not: warned, but the file holds messages: exit 0.
rc=0
timeout 20 "$ARD" record late 'nosuch*' -o "$T/some.mcap" --duration 0.5 2>"$T/some.err" || rc=$?
[ "$rc" = 0 ] || fail "recording 'late' and 'nosuch*' exited $rc: $(cat "$T/some.err")"
grep -q "matches 'nosuch\*'" "$T/some.err" || fail "no warning for 'nosuch*': $(cat "$T/some.err")"
echo "ok: log >= publish time for $count messages, first seq 1, unmatched names warned (exit 4)"
