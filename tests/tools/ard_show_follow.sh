#!/bin/bash
# ard_show_follow.sh - `ard show -f` keeps following when its writer is killed and another
# starts (same object, the sequence goes on), and when the object is removed and created
# afresh; piped into head it ends cleanly (exit 0, no message) when head has had enough.
TEST_NAME=follow
. "$(dirname "$0")/common.sh"
: "${TWRITER:?set TWRITER}"

"$TWRITER" st 'n:u64' 200 60 >/dev/null &
W1=$!
PIDS+=($W1)
wait_for "$ARD" show st
"$ARD" show st -f --format csv --field n >"$T/follow" 2>"$T/ferr" &
F=$!
PIDS+=($F)
wait_for grep -q '^[0-9]' "$T/follow"
kill -9 "$W1"
wait "$W1" 2>/dev/null || true
last1=$(tail -1 "$T/follow" | cut -d, -f1)
sleep 0.3
"$TWRITER" st 'n:u64' 200 60 >/dev/null &
PIDS+=($!)
# Packets of the new writer arrive: sequence numbers beyond the first writer's last.
for i in $(seq 100); do
    now=$(tail -1 "$T/follow" | cut -d, -f1)
    [ "$now" -gt $((last1 + 20)) ] && break
    sleep 0.05
done
[ "$now" -gt $((last1 + 20)) ] || fail "show -f stopped at seq $now after the writer restart (last $last1)"
kill -0 "$F" || fail "show -f ended: $(cat "$T/ferr")"

# The object removed (as ardkill does) and created afresh by a new writer: followed too.
kill -9 "${PIDS[-1]}"
wait "${PIDS[-1]}" 2>/dev/null || true
rm -f /dev/shm/ard."$ARD_DOMAIN".st
lines=$(wc -l <"$T/follow")
"$TWRITER" st 'n:u64' 200 60 >/dev/null &
PIDS+=($!)
for i in $(seq 100); do
    [ "$(wc -l <"$T/follow")" -gt $((lines + 20)) ] && break
    sleep 0.05
done
[ "$(wc -l <"$T/follow")" -gt $((lines + 20)) ] || fail "show -f did not follow the new object"
tail -1 "$T/follow" | grep -qE '^[0-9]+,' || fail "bad line after re-creation"
kill -INT "$F"
rc=0
wait "$F" || rc=$?
[ "$rc" = 0 ] || fail "show -f exited $rc on SIGINT: $(cat "$T/ferr")"
[ ! -s "$T/ferr" ] || fail "show -f printed: $(cat "$T/ferr")"

# SIGPIPE: head takes 3 lines and goes; ard ends at once, quietly, with 0.
set +o pipefail
timeout 10 "$ARD" show st -f 2>"$T/perr" | head -n 3 >"$T/head"
rc=${PIPESTATUS[0]}
set -o pipefail
[ "$rc" = 0 ] || fail "show -f | head: exit $rc: $(cat "$T/perr")"
[ ! -s "$T/perr" ] || fail "show -f | head printed: $(cat "$T/perr")"
[ "$(wc -l <"$T/head")" = 3 ] || fail "head got $(wc -l <"$T/head") lines"
echo ok
