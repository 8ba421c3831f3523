#!/bin/bash
# web_share.sh - the page protocol and the Foxglove protocol share one reader per connection:
# with two page clients plotting a connection and two Foxglove clients subscribed to it, the
# library lists exactly one IN attachment of the server on it; when the connection is
# removed and created afresh with the same type, that one reader follows it and all four
# clients get the new object's values; it stays while any client watches and is closed
# when the last one leaves (web_share.py).
TEST_NAME=webshare
. "$SRCDIR/tests/tools/common.sh"
. "$(dirname "$0")/common.sh"
start_web
# The Foxglove protocol is built with the recorder (ARD_LOG).
grep -q 'Foxglove' "$T/web.out" || { echo "skipped: ard web without Foxglove" >&2; exit 77; }
/usr/bin/python3 "$(dirname "$0")/web_share.py" "$ARD" "$BASE" "$TOKEN" ||
    fail "one reader for both protocols"
kill -0 "$WEB_PID" || fail "ard web died"
kill "$WEB_PID"
wait "$WEB_PID" || fail "ard web did not end cleanly"
echo ok
