#!/bin/bash
# web_stop.sh - `ard web` ends promptly on SIGTERM while WebSocket clients are connected: each
# gets a close frame (1001, going away), a client that does not answer is disconnected, and
# the server is gone within ardkill's default grace of 2 s (web_stop.py), exit status 0.
TEST_NAME=webstop
. "$SRCDIR/tests/tools/common.sh"
. "$(dirname "$0")/common.sh"
PY=/usr/bin/python3
[ -x "$PY" ] || exit 77

"$ARD" siggen sig --type 's:f64' --rate 1000 's=sine' >/dev/null &
PIDS+=($!)
wait_for "$ARD" show sig
start_web
fox=no
grep -q Foxglove "$T/web.out" && fox=yes
"$PY" "$(dirname "$0")/web_stop.py" "$BASE" "$TOKEN" "$WEB_PID" "$fox" || fail "stop with clients"
st=0
wait "$WEB_PID" || st=$?
[ "$st" = 0 ] || fail "ard web exited $st after SIGTERM: $(tail -n 3 "$T/web.err")"
echo ok
