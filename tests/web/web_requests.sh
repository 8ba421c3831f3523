#!/bin/bash
# web_requests.sh - `ard web` answers bad requests with errors and keeps serving: a table of
# HTTP and WebSocket requests (bad and missing tokens, oversized headers and bodies, malformed
# bodies, unknown pages and methods, malformed WebSocket frames, unknown connections and
# fields, over-long and binary messages) with the answer each must get, then random bytes as
# requests and as frames. After every case the server must still answer. Also: a
# non-loopback address makes up a token and requires it; bad options are refused.
# A plot follows its connection when it is created afresh (same type) and says so when it
# comes back with another type.
TEST_NAME=webreq
. "$SRCDIR/tests/tools/common.sh"
. "$(dirname "$0")/common.sh"
[ -x /usr/bin/python3 ] || exit 77

expect 100 "--listen 'nowhere': expected ADDR:PORT" "$ARD" web --listen nowhere
expect 100 "--listen '127.0.0.1:99999'" "$ARD" web --listen 127.0.0.1:99999
echo 'a b c d e f' >"$T/tok.bad" && chmod 600 "$T/tok.bad"
echo short >"$T/tok.short" && chmod 600 "$T/tok.short"
expect 100 "the token must be 8 to 79 characters" "$ARD" web --token-file "$T/tok.bad"
expect 100 "the token must be 8 to 79 characters" "$ARD" web --token-file "$T/tok.short"
expect 100 "unexpected '--frob'" "$ARD" web --frob

# Beyond loopback: a token is made up, printed, and required.
"$ARD" web --listen 0.0.0.0:0 >"$T/any.out" 2>&1 &
ANY=$!
PIDS+=($ANY)
wait_for grep -q 'token=' "$T/any.out"
grep -qE 'http://0\.0\.0\.0:[0-9]+/\?token=[0-9a-f]{32}' "$T/any.out" || fail "token: $(cat "$T/any.out")"
port=$(grep -oE '0\.0\.0\.0:[0-9]+' "$T/any.out" | head -1 | cut -d: -f2)
tok=$(grep -oE 'token=[0-9a-f]{32}' "$T/any.out" | head -1 | cut -d= -f2)
[ "$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$port/api/net")" = 401 ] ||
    fail "no token: not refused"
[ "$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$port/api/net?token=$tok")" = 200 ] ||
    fail "the printed token is not accepted"
kill "$ANY"

"$ARD" siggen sig --type 't:f64 s:f64 q:f64[3] k:i32' --rate 1000 's=sine' >/dev/null &
PIDS+=($!)
"$ARD" siggen quiet --type 'a:f64 b:i32' -n 1 a=1 >/dev/null || fail "quiet"
wait_for "$ARD" show sig
echo sesame-1234 >"$T/tok" && chmod 600 "$T/tok"
start_web --allow-set --token-file "$T/tok"
expect 111 "cannot serve on 127.0.0.1:${BASE##*:}" "$ARD" web --listen "127.0.0.1:${BASE##*:}"
/usr/bin/python3 "$(dirname "$0")/web_requests.py" "$BASE" sesame-1234 "$WEB_PID" ||
    fail "request table"
/usr/bin/python3 "$(dirname "$0")/web_recreate.py" "$ARD" "$BASE" sesame-1234 ||
    fail "a plot across a re-created connection"
kill -0 "$WEB_PID" || fail "ard web died"
kill "$WEB_PID"
wait "$WEB_PID" || fail "ard web did not end cleanly"
echo ok
