#!/bin/bash
# web_foxglove.sh - Foxglove and Lichtblick live: an independent Foxglove client (npm
# @foxglove/ws-protocol, @foxglove/rosmsg2-serialization; web_foxglove.js) against `ard web`
# (after curl checks the token and Origin rules on the Foxglove handshake):
# read-only server (serverInfo, advertise/unadvertise/re-created, >= 100 packets of every basic
# type decoded exactly, the page protocol at the same time, clientPublish refused; a viewer
# that stops reading stalls nobody and is disconnected), then a
# server with --allow-set (a published message read back by ard show, refused while a live
# writer owns the connection, the connection graph). Skipped (77) when the npm packages
# cannot be installed, except under CI=true, where that is a failure.
TEST_NAME=webfox
. "$SRCDIR/tests/tools/common.sh"
. "$(dirname "$0")/common.sh"
: "${TLOGW:?set TLOGW}"
NPM_DIR=${ARD_FOX_NPM_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/ardnet-foxglove-test}
skip() {
    if [ "${CI:-}" = true ]; then fail "$* (CI=true: the Foxglove client must run)"; fi
    echo "SKIP: $*" >&2
    exit 77
}
command -v node >/dev/null || skip "node is not installed"
if ! NODE_PATH="$NPM_DIR/node_modules" node -e "for (const m of ['@foxglove/ws-protocol','ws','@foxglove/rosmsg','@foxglove/rosmsg2-serialization']) require(m)" 2>/dev/null; then
    command -v npm >/dev/null || skip "npm is not installed"
    mkdir -p "$NPM_DIR"
    [ -f "$NPM_DIR/package.json" ] || echo '{"name":"ardnet-foxglove-test","private":true}' >"$NPM_DIR/package.json"
    st=0
    (cd "$NPM_DIR" && flock "$NPM_DIR/.lock" timeout 300 npm install --no-audit --no-fund \
        --loglevel=error @foxglove/ws-protocol@0 ws@8 @foxglove/rosmsg@5 \
        @foxglove/rosmsg2-serialization@3) >"$T/npm.log" 2>&1 || st=$?
    if [ "$st" != 0 ]; then
        . "$(dirname "$0")/../lib/npm.sh"
        skip "npm packages could not be installed into $NPM_DIR: $(npm_error "$T/npm.log" "$st")"
    fi
fi
export NODE_PATH="$NPM_DIR/node_modules" ARD TLOGW ARD_DOMAIN
JS="$(dirname "$0")/web_foxglove.js"
ws_url() { echo "ws://${BASE#http://}/?token=$TOKEN"; }

start_web
# The page's access rules: a Foxglove handshake without the token, or from another site, is
# refused; with the token in the URL it is accepted (101).
hs() {
    curl -s -o /dev/null -w '%{http_code}' --max-time 2 -H "Connection: Upgrade" \
        -H "Upgrade: websocket" -H "Sec-WebSocket-Version: 13" \
        -H "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==" \
        -H "Sec-WebSocket-Protocol: foxglove.websocket.v1" "$@" || true
}
[ "$(hs "$BASE/")" = 401 ] || fail "Foxglove handshake without token: $(hs "$BASE/")"
[ "$(hs -H "Origin: https://app.example.com" "$BASE/?token=$TOKEN")" = 403 ] ||
    fail "Foxglove handshake from another site not refused"
[ "$(hs "$BASE/?token=$TOKEN")" = 101 ] || fail "Foxglove handshake with token: $(hs "$BASE/?token=$TOKEN")"
node "$JS" read "$(ws_url)" || fail "read-only server: $(cat "$T/web.err")"
node "$JS" slow "$(ws_url)" || fail "a stuck viewer: $(cat "$T/web.err")"
kill "$WEB_PID"
wait "$WEB_PID" || fail "ard web did not end cleanly"

"$ARD" set fox.in --type "a:i8 b:u8 c:i16 d:u16 e:i32 f:u32 g:i64 h:u64 x:f32 y:f64 \
arr:f64[3] Big:u16[2] stamp:i64" a=1 >/dev/null
start_web --allow-set
node "$JS" write "$(ws_url)" | tee "$T/write.out" ||
    fail "server with --allow-set: $(cat "$T/web.err")"
# The live server's schema name is the recorder's (the ROS 2 type, docs/ros2.md#names;
# tests/ros2/ros2_one_name.sh compares it with DDS too).
"$ARD" record fox.in -o "$T/in.mcap" 2>/dev/null &
rec=$!
sleep 0.5
kill -INT $rec
wait $rec || true
live=$(sed -n 's/^schemaName //p' "$T/write.out")
"$ARD" info --json "$T/in.mcap" | grep -q "\"schema_name\":\"$live\"" ||
    fail "live schema name $live is not the recorder's: $("$ARD" info --json "$T/in.mcap")"
kill "$WEB_PID"
wait "$WEB_PID" || fail "ard web did not end cleanly"
echo ok
