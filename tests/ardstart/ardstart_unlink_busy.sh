#!/bin/bash
# ardkill never removes a shared-memory object that is still attached: a block that runs
# outside the books (started by hand) keeps its connection through a whole-domain ardkill,
# which names the object it kept and exits 111; once the block ended, the next ardkill
# removes it. Needs libardnet's ard_conn_unlink to refuse attached objects (ARD_EBUSY).
TEST_NAME=busy
source "$(dirname "$0")/common.sh"
local_books
D=$ARD_DOMAIN

echo "== ardkill keeps shared memory that is still attached, and names it"
tblock out:held.x >/dev/null &
held=$!
TEST_PIDS+=("$held")
for i in $(seq 100); do [ -e "/dev/shm/ard.$D.held.x" ] && break; sleep 0.05; done
"$ARDSTART" -q --wait=20 -n gone -- tblock out:gone.x
set +e
err=$("$ARDKILL" -g 0.2 2>&1 >/dev/null); rc=$?
set -e
echo "  $rc: $err"
[ -e "/dev/shm/ard.$D.held.x" ] ||
    fail "ardkill removed held.x while a block had it attached (ard_conn_unlink must refuse an attached object with ARD_EBUSY)"
[ ! -e "/dev/shm/ard.$D.gone.x" ] || fail "gone.x (writer stopped) was not removed"
[ "$rc" = 111 ] || fail "exit $rc, expected 111"
grep -qF "kept shared memory 'held.x' of domain $D" <<<"$err" || fail "not named: $err"
kill "$held"
wait "$held" 2>/dev/null || true
"$ARDKILL" -q || fail "ardkill after the holder ended"
[ ! -e "/dev/shm/ard.$D.held.x" ] || fail "held.x left after its holder ended"

echo "ok"
