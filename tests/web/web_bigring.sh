#!/bin/bash
# web_bigring.sh - a reader of 4 MiB packets in ard web holds a few of them, not 64
# (web_bigring.py).
TEST_NAME=webbigring
# Under AddressSanitizer the server's freed buffers wait in a quarantine of up to 256 MiB,
# which would count as resident memory here: this test runs without it (it measures memory,
# the other web tests keep the sanitizer's full checks).
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}quarantine_size_mb=0"
. "$SRCDIR/tests/tools/common.sh"
. "$(dirname "$0")/common.sh"
start_web
/usr/bin/python3 "$(dirname "$0")/web_bigring.py" "$ARD" "$BASE" "$TOKEN" "$WEB_PID" ||
    fail "a reader of large packets"
kill -0 "$WEB_PID" || fail "ard web died"
kill "$WEB_PID"
wait "$WEB_PID" || fail "ard web did not end cleanly"
echo ok
