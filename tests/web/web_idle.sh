#!/bin/bash
# web_idle.sh - idle sockets cannot exhaust `ard web`: at most --max-clients WebSockets (503
# beyond, naming the limit), the page and /api/net answer with 100 idle sockets open, and
# WebSockets that subscribe to nothing are closed after --idle-timeout (web_idle.py).
TEST_NAME=webidle
. "$SRCDIR/tests/tools/common.sh"
. "$(dirname "$0")/common.sh"
PY=/usr/bin/python3
[ -x "$PY" ] || exit 77
ulimit -n 4096 2>/dev/null || true

"$ARD" siggen sig --type 's:f64' --rate 1000 's=sine' >/dev/null &
PIDS+=($!)
wait_for "$ARD" show sig
start_web --max-clients 64 --idle-timeout 5
"$PY" "$(dirname "$0")/web_idle.py" "$BASE" "$TOKEN" || fail "idle sockets"
kill -0 "$WEB_PID" || fail "ard web died"
kill "$WEB_PID"
wait "$WEB_PID" || fail "ard web did not end cleanly"
echo ok
