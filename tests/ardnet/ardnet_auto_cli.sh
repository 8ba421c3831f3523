#!/bin/bash
# ardnet --auto on the command line: every bad value is a usage error (exit 100) naming what is
# wrong, --help lists the options; a catalog alone starts, reports ready and exits 0 on SIGTERM.
TEST_NAME=auto_cli
source "$(dirname "$0")/common.sh"
expect_usage() { # WHAT-THE-MESSAGE-SAYS ARGS...
    local want=$1 rc=0
    shift
    "$ARDNET" "$@" >"$T/out" 2>"$T/err" || rc=$?
    [ "$rc" = 100 ] || fail "ardnet $*: exit $rc, expected 100 ($(cat "$T/err"))"
    grep -q -- "$want" "$T/err" || fail "ardnet $*: the message does not say '$want': $(cat "$T/err")"
}
expect_usage "--auto needs --auto-peers" --auto
expect_usage "need --auto" --auto-peers localhost
expect_usage "needs --dev" --auto --auto-multicast 239.1.2.3:7400
expect_usage "not a multicast group" --auto --auto-multicast 10.1.2.3:7400 --dev lo
expect_usage "expected GROUP:PORT" --auto --auto-multicast 239.1.2.3 --dev lo
expect_usage "unknown host" --auto --auto-peers no-such-host.invalid
expect_usage "port 'x'" --auto --auto-peers localhost:x
expect_usage "--auto-limit '0'" --auto --auto-peers localhost --auto-limit 0
expect_usage "--auto-port '70000'" --auto --auto-peers localhost --auto-port 70000
expect_usage "needs a value" --auto --auto-peers
grep -q -- "--auto-multicast GROUP:PORT" <<<"$("$ARDNET" --help)" || fail "--help does not list --auto-multicast"
# A catalog alone: ready, then a clean exit with its counters.
bg_ready cat "$ARDNET" --auto --auto-peers 127.0.0.1:$PORT --auto-port "$PORT"
stop cat || fail "ardnet --auto exit $?"
grep -q '^catalog .* self=[1-9]' "$T/cat.err" || fail "no catalog counters at exit (or it never heard itself): $(cat "$T/cat.err")"
# The port in use: a system error (111).
bg_ready cat "$ARDNET" --auto --auto-peers 127.0.0.1:$PORT --auto-port "$PORT"
rc=0
"$ARDNET" --auto --auto-peers 127.0.0.1 --auto-port "$PORT" 2>"$T/err2" || rc=$?
stop cat || true
[ "$rc" = 111 ] || fail "a second catalog on the same port: exit $rc, expected 111: $(cat "$T/err2")"
grep -q "cannot listen on port $PORT" "$T/err2" || fail "the message does not name the port: $(cat "$T/err2")"
echo PASS
