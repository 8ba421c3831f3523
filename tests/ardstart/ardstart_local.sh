#!/bin/bash
# ardstart/ardkill on one host: readiness, hierarchy, states in the listing, exit codes,
# subtree and whole-system stop, SIGKILL after the grace time, idempotence.
TEST_NAME=local
source "$(dirname "$0")/common.sh"
local_books
D=$ARD_DOMAIN

echo "== readiness: the port exists when ardstart --wait returns"
out=$("$ARDSTART" --wait=20 -n src -- tblock out:t.a)
echo "$out"
grep -q "ready after" <<<"$out" || fail "no readiness report"
[ -e "/dev/shm/ard.$D.t.a" ] || fail "connection t.a does not exist after --wait returned"
[ "$(field src 4)" = running ] || fail "src not running"
src_pid=$(field src 3)
alive "$src_pid" || fail "src pid $src_pid not alive"

echo "== hierarchy: a script started by ardstart starts children of its entry"
cat >"$T/sub.sh" <<'SH'
#!/bin/bash
set -e
ardstart -q --wait=20 -n b1 -- tblock in:t.a out:t.b
ardstart -q --wait=20 -n b2 -- tblock in:t.b
ardstart --ready
exec sleep 1000
SH
chmod +x "$T/sub.sh"
"$ARDSTART" --wait=30 -- "$T/sub.sh" || fail "sub.sh did not become ready"
for p in sub sub/b1 sub/b2; do
    [ "$(field "$p" 4)" = running ] || fail "$p not running"
done
[ -e "/dev/shm/ard.$D.t.b" ] || fail "t.b missing"
"$ARDSTART" --list

echo "== a block that dies after start shows as exited with its status"
"$ARDSTART" -n dies -- tblock --exit-after 200 7
wait_state dies exited 7

echo "== an ignored SIGCHLD inherited from the caller does not hide the status"
( trap '' CHLD; "$ARDSTART" -q -n ign -- sh -c 'exit 6' )
wait_state ign exited 6

echo "== a command that cannot be executed is an error at once (exit 1)"
set +e
err=$("$ARDSTART" -n nope -- /nonexistent/prog 2>&1); rc=$?
set -e
[ "$rc" = 1 ] || fail "exit $rc for a missing program, expected 1"
grep -q "cannot execute '/nonexistent/prog': No such file" <<<"$err" || fail "message: $err"
[ "$(field nope 4)" = failed ] || fail "nope not recorded as failed"

echo "== exits before ready: exit 2 with status and the tail of its log"
set +e
err=$("$ARDSTART" --wait=20 -n early -- sh -c 'echo boom-line; exit 4' 2>&1); rc=$?
set -e
echo "$err"
[ "$rc" = 2 ] || fail "exit $rc, expected 2"
grep -q "exited 4 before it was ready" <<<"$err" || fail "no status in message"
grep -q "| boom-line" <<<"$err" || fail "no log tail in message"

echo "== not ready in time: exit 3, left running"
set +e
"$ARDSTART" --wait=0.5 -n late -- tblock --delay 60000 out:t.late; rc=$?
set -e
[ "$rc" = 3 ] || fail "exit $rc, expected 3"
[ "$(field late 4)" = running ] || fail "late not running"

echo "== same path twice: exit 5"
set +e
"$ARDSTART" -n src -- tblock out:t.other 2>/dev/null; rc=$?
set -e
[ "$rc" = 5 ] || fail "exit $rc for a duplicate, expected 5"

echo "== usage errors: exit 100"
set +e
"$ARDSTART" -n 'bad name' -- true 2>/dev/null; rc=$?
set -e
[ "$rc" = 100 ] || fail "exit $rc for a bad name, expected 100"

echo "== ardkill of a subtree: reverse start order, the rest keeps running"
b1=$(field sub/b1 3); b2=$(field sub/b2 3); sub=$(field sub 3)
out=$("$ARDKILL" sub)
echo "$out"
[ "$(grep -n 'stopped sub/b2 ' <<<"$out" | cut -d: -f1)" -lt "$(grep -n 'stopped sub/b1 ' <<<"$out" | cut -d: -f1)" ] ||
    fail "b2 not stopped before b1"
[ "$(grep -n 'stopped sub/b1 ' <<<"$out" | cut -d: -f1)" -lt "$(grep -n 'stopped sub ' <<<"$out" | cut -d: -f1)" ] ||
    fail "b1 not stopped before sub"
for p in $b1 $b2 $sub; do alive "$p" && fail "pid $p still alive after ardkill sub"; done
alive "$src_pid" || fail "src was stopped by ardkill sub"
[ -z "$("$ARDSTART" --list --raw sub)" ] || fail "sub still in the books"

echo "== a block that ignores SIGTERM is killed after the grace time"
"$ARDSTART" -q --wait=20 -n stubborn -- tblock --ignore-term out:t.s
st=$(field stubborn 3)
out=$("$ARDKILL" --grace=0.3 stubborn)
echo "$out"
grep -q "killed by SIGKILL after 0.3 s grace" <<<"$out" || fail "no SIGKILL report"
alive "$st" && fail "stubborn survived"

echo "== a command that moved itself into another process group is stopped by SIGTERM"
"$ARDSTART" -q -n mover -- perl -e 'setpgrp(0, getpgrp(getppid())) or die "setpgrp: $!"; sleep 1000'
mv_pid=$(field mover 3)
for _ in $(seq 100); do
    [ "$(ps -o pgid= -p "$mv_pid" | tr -d ' ')" != "$mv_pid" ] && break
    sleep 0.05
done
[ "$(ps -o pgid= -p "$mv_pid" | tr -d ' ')" != "$mv_pid" ] || fail "mover did not leave its group"
out=$("$ARDKILL" --grace=5 mover)
echo "$out"
grep -q "stopped mover .*killed by SIGTERM" <<<"$out" || fail "mover not stopped by SIGTERM"
alive "$mv_pid" && fail "mover survived"

echo "== ardkill of everything: no process, no shm, no entry left"
pids=$("$ARDSTART" --list --raw | awk -F'\t' '$4 == "running" { print $3 }')
[ -n "$pids" ] || fail "nothing running before ardkill"
[ "$(shm_count)" -gt 0 ] || fail "no shm before ardkill"
out=$("$ARDKILL")
echo "$out"
grep -q "removed [1-9][0-9]* shared memory objects of domain $D" <<<"$out" || fail "no shm removal report"
for p in $pids; do alive "$p" && fail "pid $p alive after ardkill"; done
[ "$(shm_count)" = 0 ] || fail "shm left: $(ls /dev/shm | grep "ard.$D.")"
[ -z "$("$ARDSTART" --list --raw)" ] || fail "entries left in the books"
[ -z "$(domain_pids ardstart_tblock "$D")" ] || fail "tblocks of this test still run"

echo "== idempotent: again, and for an unknown name, exit 0"
out=$("$ARDKILL") || fail "second ardkill failed"
grep -q "nothing to stop in domain $D" <<<"$out" || fail "no 'nothing to stop': $out"
"$ARDKILL" no/such/thing | grep -q "nothing to stop under no/such/thing" || fail "unknown name"
echo "PASS"
