#!/bin/bash
# web_trust.sh - `ard web` keeps the trust promise (docs/web.md, "Security"): Host and Origin
# checked on every request and WebSocket handshake (no cross-site set, no DNS rebinding),
# values of the set form never become options, a token on every address, loopback included
# (kept in a per-port HttpOnly cookie; another local user without it gets 401), --no-token
# only on loopback, --token-file not readable by others, text frames and JSON valid UTF-8
# (a name with bad bytes escaped), an upgrade without key answered HTTP/1.1 400, and the
# page's CSP connect-src 'self'. The request table is web_trust.py.
TEST_NAME=webtrust
. "$SRCDIR/tests/tools/common.sh"
. "$(dirname "$0")/common.sh"
PY=/usr/bin/python3
[ -x "$PY" ] || exit 77

# Options.
expect 100 "--no-token: only on a loopback address" "$ARD" web --listen 0.0.0.0:0 --no-token
expect 100 "--token: a token on the command line is visible" "$ARD" web --token abcdefgh12
echo 'sesame-1234' >"$T/tok"
chmod 644 "$T/tok"
expect 100 "others may read it" "$ARD" web --token-file "$T/tok"
chmod 600 "$T/tok"
expect 100 "exclude each other" "$ARD" web --token-file "$T/tok" --no-token
expect 100 "--token-file '$T/none'" "$ARD" web --token-file "$T/none"
expect 100 "--host-name 'a b'" "$ARD" web --host-name 'a b'
expect 100 "--host-name 'x:80'" "$ARD" web --host-name x:80
expect 100 "--max-clients '0'" "$ARD" web --max-clients 0
expect 100 "--idle-timeout 'x'" "$ARD" web --idle-timeout x
expect 100 "ADDR must be an IPv4 address" "$ARD" web --listen evil.example:0

"$ARD" siggen sig --type 's:f64' --rate 1000 's=sine' >/dev/null &
PIDS+=($!)
"$ARD" siggen quiet --type 'a:f64 b:i32' -n 1 a=1 b=5 >/dev/null || fail "quiet"
wait_for "$ARD" show sig
# An object named by hand with bytes that are not UTF-8: listed (damaged), escaped.
: >"/dev/shm/ard.$ARD_DOMAIN.bad"$'\xff\xfe'"name"

start_web --allow-set --token-file "$T/tok" --host-name robot.test
grep -q "token=(the token of $T/tok)" "$T/web.out" || fail "token file: $(cat "$T/web.out")"
"$PY" "$(dirname "$0")/web_trust.py" "$ARD" "$BASE" sesame-1234 robot.test ||
    fail "trust rules"
kill "$WEB_PID"
wait "$WEB_PID" || fail "ard web did not end cleanly"

# A random token on loopback too: another local user (nobody) without it is refused, and
# cannot find it in the server's command line.
start_web
[[ $TOKEN =~ ^[0-9a-f]{32}$ ]] || fail "no random token on loopback: $(cat "$T/web.out")"
# As root, the requests are made as nobody; otherwise as this user (still without token).
if [ "$(id -u)" = 0 ] && command -v setpriv >/dev/null; then
    code() { setpriv --reuid=nobody --regid=nogroup --clear-groups curl -s -o /dev/null \
        -w '%{http_code}' "$@"; }
else
    echo "not root: the other-user requests are made as $(id -un)" >&2
    code() { curl -s -o /dev/null -w '%{http_code}' "$@"; }
fi
[ "$(code "$BASE/api/net")" = 401 ] || fail "nobody read the net without the token"
[ "$(code "$BASE/")" = 401 ] || fail "nobody got the page without the token"
[ "$(code "$BASE/api/net?token=$TOKEN")" = 200 ] || fail "the token does not work for nobody"
! tr '\0' ' ' <"/proc/$WEB_PID/cmdline" | grep -q "$TOKEN" || fail "token on the command line"
kill "$WEB_PID"
wait "$WEB_PID" || true
# --no-token lets every local user in, as documented.
start_web --no-token
grep -q 'every local user' "$T/web.out" || fail "--no-token without its warning"
[ "$(code "$BASE/api/net")" = 200 ] || fail "--no-token: nobody refused"
[ "$(code -H 'Host: evil.example' "$BASE/api/net")" = 403 ] || fail "--no-token: Host unchecked"
kill "$WEB_PID"
wait "$WEB_PID" || true

# Any address: address literals are accepted as Host (they cannot be rebound), names not.
"$ARD" web --listen 0.0.0.0:0 >"$T/any.out" 2>&1 &
ANY=$!
PIDS+=($ANY)
wait_for grep -q 'token=' "$T/any.out"
port=$(grep -oE '0\.0\.0\.0:[0-9]+' "$T/any.out" | head -1 | cut -d: -f2)
tok=$(grep -oE 'token=[0-9a-f]{32}' "$T/any.out" | head -1 | cut -d= -f2)
hc() { curl -s -o /dev/null -w '%{http_code}' -H "Host: $1" "http://127.0.0.1:$port/api/net?token=$tok"; }
[ "$(hc "127.0.0.1:$port")" = 200 ] || fail "any address: Host 127.0.0.1"
[ "$(hc "10.1.2.3:$port")" = 200 ] || fail "any address: Host 10.1.2.3"
[ "$(hc "robot.example:$port")" = 403 ] || fail "any address: a name not given"
kill "$ANY"
echo ok
