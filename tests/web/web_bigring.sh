#!/bin/bash
# web_bigring.sh - a reader of 4 MiB packets in ard web holds a few of them, not 64
# (web_bigring.py).
TEST_NAME=webbigring
. "$SRCDIR/tests/tools/common.sh"
. "$(dirname "$0")/common.sh"
start_web
/usr/bin/python3 "$(dirname "$0")/web_bigring.py" "$ARD" "$BASE" "$TOKEN" "$WEB_PID" ||
    fail "a reader of large packets"
kill -0 "$WEB_PID" || fail "ard web died"
kill "$WEB_PID"
wait "$WEB_PID" || fail "ard web did not end cleanly"
echo ok
