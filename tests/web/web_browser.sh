#!/bin/bash
# web_browser.sh - `ard web` in Debian's headless Chromium (playwright-core): a 10 kHz sine of
# known amplitude from `ard siggen` is listed in the net with its writer and rate, plotted with
# extremes matching the sine's within 2 % of its amplitude, pausing freezes the plot, resuming
# moves it on; setting is refused (403, form absent) without --allow-set. With --allow-set the
# generated form writes a field of a connection without writer (checked with ard show) and is
# refused with the writer's pid on the live one, as ard set is. Screenshots go to
# $ARTIFACTS (default: the build's tests/web/artifacts).
TEST_NAME=web
. "$SRCDIR/tests/tools/common.sh"
. "$(dirname "$0")/common.sh"
need_playwright
ARTIFACTS=${ARTIFACTS:-$PWD/artifacts}
mkdir -p "$ARTIFACTS"

"$ARD" siggen sig --type 't:f64 s:f64 c:f64 k:i32' --rate 10000 t=ramp \
    's=sine,amp=3,freq=7,offset=0.5' 'c=square,amp=1,freq=2' >/dev/null 2>"$T/sig.err" &
PIDS+=($!)
SIG=$!
"$ARD" siggen quiet --type 'a:f64 b:i32 v:f32[3]' -n 1 a=1 >/dev/null || fail "quiet"
wait_for "$ARD" show sig

start_web
# A reader that comes after the server's first picture of the net appears in the next one.
curl -sf "$BASE/api/net?token=$TOKEN" | grep -q '"name":"quiet"' || fail "api/net lacks quiet"
"$ARD" show quiet -f >/dev/null &
PIDS+=($!)
SHOW=$!
wait_for eval "curl -sf '$BASE/api/net?token=$TOKEN' | grep -q '\"pid\":$SHOW,\"dir\":\"in\"'"
node "$(dirname "$0")/web_browser.js" view "$URL" "$ARTIFACTS" "$SIG" ||
    fail "browser checks (read-only)"
# The server is still serving after all that.
curl -sf "$BASE/api/net?token=$TOKEN" >/dev/null || fail "server gone after the page ran"
kill "$WEB_PID"
wait "$WEB_PID" || fail "ard web did not end cleanly on SIGTERM"

start_web --allow-set
node "$(dirname "$0")/web_browser.js" set "$URL" "$ARTIFACTS" "$SIG" ||
    fail "browser checks (--allow-set)"
"$ARD" show quiet --json >"$T/q" || fail "show quiet"
grep -q '"b":-7' "$T/q" || fail "the form's value did not arrive: $(cat "$T/q")"
grep -q '"a":1' "$T/q" || fail "fields left empty were changed: $(cat "$T/q")"
echo ok
