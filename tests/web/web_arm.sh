#!/bin/bash
# web_arm.sh - the net of the running arm example in the page (headless Chromium): its three
# connections, each under its writer block with its readers and a rate; arm.state's joint
# angles plotted. Then 100 more connections: the list stays inside its scrolling pane (the
# page does not grow), grouped, and the filter narrows it. Screenshots: web_arm.png (the
# picture in docs/ and the README) and web_many.png in $ARTIFACTS.
TEST_NAME=webarm
. "$SRCDIR/tests/tools/common.sh"
. "$(dirname "$0")/common.sh"
: "${ARDSTART:?}" "${ARDKILL:?}" "${ARM_BIN:?}"
need_playwright
ARTIFACTS=${ARTIFACTS:-$PWD/artifacts}
mkdir -p "$ARTIFACTS" "$T/bin"
ln -s "$ARDSTART" "$T/bin/ardstart"
ln -s "$ARDKILL" "$T/bin/ardkill"
export PATH="$T/bin:$PATH" ARD_BOOKS_DIR="$T/books" ARM_BIN
stop() { "$ARDKILL" -q -g 0.5 >/dev/null 2>&1 || true; cleanup; }
trap stop EXIT

"$SRCDIR/examples/arm/master.sh" >"$T/master.out" 2>&1 || fail "arm did not start: $(cat "$T/master.out")"
wait_for "$ARD" show arm.cmd
pid() { sed -n 's/^pid=//p' "$ARD_BOOKS_DIR/$ARD_DOMAIN/e/$1.entry"; }
export PLANT=$(pid arm+sim+plant) CTRL=$(pid arm+control+ctrl) TRAJ=$(pid arm+control+traj)
export MON=$(pid arm+control+monitor)
start_web
node "$(dirname "$0")/web_browser.js" arm "$URL" "$ARTIFACTS" 0 || fail "arm in the page"
for i in $(seq -w 1 100); do
    "$ARD" siggen "many.g$((10#$i % 5)).c$i" --type 'x:f64' -n 1 x=1 >/dev/null || fail "c$i"
done
node "$(dirname "$0")/web_browser.js" many "$URL" "$ARTIFACTS" 0 || fail "100 connections"
echo ok
