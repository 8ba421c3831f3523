#!/bin/bash
# ardstart --restart: each policy, the restart delay and limit, readiness awaited again after
# a restart (with --wait), RESTARTS in the listing, bad values; and ardkill never answered by
# a restart: during the restart delay, while a restarted command is starting, of a parent,
# and in a tight crash loop - nothing is left behind.
TEST_NAME=restart
source "$(dirname "$0")/common.sh"
local_books
D=$ARD_DOMAIN
E="$ARD_BOOKS_DIR/$D/e"

# key of PATH's entry in the books (sup, restarts, stopping, ...)
entry_key() { sed -n "s/^$2=//p" "$E/$(tr / + <<<"$1").entry" 2>/dev/null; }
# Wait (up to 20 s, against hangs only) until the RESTARTS field of PATH is at least N.
wait_restarts() {
    local i
    for i in $(seq 400); do
        [ "$(field "$1" 8)" -ge "$2" ] 2>/dev/null && return 0
        sleep 0.05
    done
    fail "$1: $(field "$1" 8) restarts, expected at least $2"
}
# Nothing of the domain runs any more: no entry, no supervisor, no command.
nothing_left() {
    local n
    n=$(ls "$E" 2>/dev/null | grep -c '\.entry$' || true)
    [ "$n" = 0 ] || fail "$n entries left after ardkill: $(ls "$E")"
    n=$(domain_pids "$1" "$D")
    [ -z "$n" ] || fail "processes left after ardkill: $n ($(ps -o pid,args -p "${n//$'\n'/,}" || true))"
}

echo "== bad values are refused, naming the option"
expect_fail 100 "--restart 'sometimes': expected on-failure, always or no" \
    "$ARDSTART" --restart=sometimes -- true
expect_fail 100 "--restart-limit '3': expected N/SECONDS" "$ARDSTART" --restart-limit=3 -- true
expect_fail 100 "--restart-limit '0/10'" "$ARDSTART" --restart-limit=0/10 -- true
expect_fail 100 "--restart-limit '5/-1'" "$ARDSTART" --restart-limit=5/-1 -- true
expect_fail 100 "--restart-delay '-1': expected seconds >= 0" "$ARDSTART" --restart-delay=-1 -- true
expect_fail 100 "--restart-delay 'soon'" "$ARDSTART" --restart-delay soon -- true
[ ! -d "$E" ] || [ -z "$(ls "$E")" ] || fail "a refused start left an entry"

echo "== no (the default): a crash stays a crash"
"$ARDSTART" -q --wait=20 -n none -- tblock out:t.none
kill -9 "$(field none 3)"
wait_state none killed 9
sleep 0.5
[ "$(field none 4)" = killed ] && [ "$(field none 8)" = 0 ] || fail "a command without policy was restarted"

echo "== on-failure: a crash (kill -9) is restarted, with a new pid, readiness awaited again"
"$ARDSTART" -q --wait=20 --restart=on-failure --restart-delay=0.1 -n crash -- \
    tblock --delay 1500 out:t.crash
wait_state crash running
p1=$(field crash 3)
kill -9 "$p1"
wait_restarts crash 1
# The restarted block reports ready only after 1.5 s: until then it is "starting".
wait_state crash starting
[ "$(field crash 3)" != "$p1" ] || fail "starting, but with the old pid"
wait_state crash running
p2=$(field crash 3)
[ "$p2" != "$p1" ] && alive "$p2" || fail "no new process after the restart ($p1 -> $p2)"
[ "$(field crash 9)" = "killed by SIGKILL" ] || fail "last exit reason '$(field crash 9)'"
list=$("$ARDSTART" --list crash)
echo "$list"
grep -q '^NAME .* RESTARTS  *COMMAND' <<<"$list" || fail "no RESTARTS column"
grep -q '1 (killed by SIGKILL)' <<<"$list" || fail "RESTARTS cell does not say 1 (killed by SIGKILL)"
grep -q "crash: killed by SIGKILL; restart 1 in 0.1 s" "$("$ARDSTART" --log crash)" || fail "log does not tell the restart"

echo "== on-failure: exit 0 is not restarted"
"$ARDSTART" -q --restart=on-failure --restart-delay=0 -n clean -- sh -c 'sleep 0.2; exit 0'
wait_state clean exited 0
sleep 0.3
[ "$(field clean 4)" = exited ] && [ "$(field clean 8)" = 0 ] || fail "exit 0 was restarted under on-failure"

echo "== always: exit 0 is restarted too"
"$ARDSTART" -q --restart=always --restart-delay=0.05 --restart-limit=none -n again -- sh -c 'sleep 0.1'
wait_restarts again 3

echo "== the limit: after N restarts within the time the entry stays failed and says so"
"$ARDSTART" -q --restart=on-failure --restart-delay=0 --restart-limit=3/60 -n loop -- sh -c 'exit 4'
wait_state loop failed
[ "$(field loop 8)" = 3 ] || fail "loop restarted $(field loop 8) times, limit 3"
[ "$(field loop 9)" = "exited 4" ] || fail "loop's last exit reason '$(field loop 9)'"
"$ARDSTART" --list loop | grep -q 'failed: restart limit reached .*3 (exited 4)' || fail "listing does not say the limit"
grep -q "restart limit reached" "$("$ARDSTART" --log loop)" || fail "log does not say the limit"
sleep 0.3
[ "$(field loop 8)" = 3 ] || fail "restarted after the limit"
# restarts spread wider than the time do not reach it
"$ARDSTART" -q --restart=on-failure --restart-delay=0.3 --restart-limit=2/0.5 -n slow -- sh -c 'exit 5'
wait_restarts slow 4
[ "$(field slow 4)" != failed ] || fail "restarts 0.3 s apart reached a limit of 2 in 0.5 s"

echo "== --wait awaits readiness across restarts, within its time"
cat >"$T/flaky.sh" <<'SH'
#!/bin/bash
n=$(cat "$1" 2>/dev/null || echo 0)
echo $((n + 1)) >"$1"
[ "$n" -ge 2 ] || exit 3
exec tblock out:t.flaky
SH
chmod +x "$T/flaky.sh"
out=$("$ARDSTART" --wait=20 --restart=on-failure --restart-delay=0.1 -n flaky -- "$T/flaky.sh" "$T/count" 2>&1) ||
    fail "flaky did not become ready: $out"
echo "$out"
[ "$(grep -c 'exited 3 before it was ready; restarting it' <<<"$out")" = 2 ] || fail "restarts not reported"
grep -q 'ready after .* (restarted)' <<<"$out" || fail "no readiness after the restarts"
[ "$(field flaky 4)" = running ] && [ "$(field flaky 8)" = 2 ] || fail "flaky: $(field flaky 4), $(field flaky 8) restarts"
expect_fail 2 "restart limit reached (2 restarts" \
    "$ARDSTART" --wait=20 --restart=always --restart-delay=0 --restart-limit=2/60 -n never -- sh -c 'exit 0'
[ "$(field never 4)" = failed ] || fail "never: $(field never 4)"

echo "== a restarted command that is not ready in its --wait time has failed"
cat >"$T/once.sh" <<'SH'
#!/bin/bash
# ready the first time; afterwards never ready
if [ -e "$1" ]; then exec sleep 100; fi
touch "$1"
exec tblock out:t.once
SH
chmod +x "$T/once.sh"
"$ARDSTART" -q --wait=1 --restart=on-failure --restart-delay=0 --restart-limit=2/60 -n once -- "$T/once.sh" "$T/once.flag"
kill -9 "$(field once 3)"
wait_state once failed
grep -q "not ready after 1.0 s: stopping it" "$("$ARDSTART" --log once)" || fail "no readiness timeout in the log"
[ "$(field once 9)" = "killed by SIGTERM" ] || fail "once: last '$(field once 9)'"
"$ARDKILL" -q
nothing_left 'tblock|sleep 100|flaky|exit 4|exit 5|sleep 0.1'

echo "== ardkill during the restart delay: no restart, supervisor gone at once"
"$ARDSTART" -q --restart=on-failure --restart-delay=60 -n delay -- sh -c 'exit 1'
wait_state delay restarting
sup=$(entry_key delay sup)
alive "$sup" || fail "no supervisor in the restart delay"
t0=$(date +%s%N)
out=$("$ARDKILL" delay)
echo "$out"
t1=$(date +%s%N)
grep -q 'stopped delay on .*: was waiting to restart (last run exited 1, 1 restart)' <<<"$out" || fail "ardkill: $out"
# the 60 s delay was cut short (a hang check, not a timing: ardkill waits for the supervisor)
[ $(((t1 - t0) / 1000000000)) -lt 30 ] || fail "ardkill waited out the restart delay"
! alive "$sup" || fail "supervisor $sup still there"
[ "$(grep -c '^=== .*restarting delay' "$T/books/$D/log/delay.log")" = 0 ] || fail "restarted after ardkill"
nothing_left 'exit 1'

echo "== ardkill while a restarted command is starting"
"$ARDSTART" -q --wait=20 --restart=always --restart-delay=0 -n slowstart -- tblock --delay 3000 out:t.slow
p1=$(field slowstart 3)
kill -9 "$p1"
wait_restarts slowstart 1
wait_state slowstart starting
p2=$(field slowstart 3)
sup=$(entry_key slowstart sup)
"$ARDKILL" slowstart
! alive "$p2" && ! alive "$sup" || fail "restarted command $p2 or supervisor $sup survived ardkill"
sleep 0.5
nothing_left 'tblock --delay 3000'

echo "== ardkill of a parent is not answered by the children's restarts"
cat >"$T/parent.sh" <<'SH'
#!/bin/bash
set -e
ardstart -q --wait=20 --restart=always --restart-delay=0 -n a -- tblock out:t.pa
ardstart -q --wait=20 --restart=on-failure --restart-delay=0 -n b -- tblock in:t.pa
ardstart --ready
exec sleep 1000
SH
chmod +x "$T/parent.sh"
"$ARDSTART" -q --wait=30 --restart=always -n parent -- "$T/parent.sh"
"$ARDKILL" -q parent
sleep 0.5
nothing_left 'tblock|parent.sh'

echo "== ardkill in a tight crash loop, many times: nothing is left"
for i in $(seq 15); do
    "$ARDSTART" -q --restart=always --restart-delay=0 --restart-limit=none -n tight -- sh -c 'sleep 0.0$((RANDOM % 5))'
    sleep "0.0$((RANDOM % 10))"
    "$ARDKILL" -q tight || fail "ardkill failed in round $i"
    nothing_left 'sleep 0\.0'
done
echo "== ardstart --system: restart, restart_delay, restart_limit per block and as the default"
cat >"$T/sys.yaml" <<'Y'
name: rsys
restart: on-failure        # the default of every block, group and bridge
restart_delay: 0.1
subsystems:
  - name: s
    blocks:
      - name: keep
        cmd: tblock out:t.keep
      - name: eager
        cmd: tblock out:t.eager
        restart: always
        restart_limit: 10/60
      - name: fixed
        cmd: tblock out:t.fixed
        restart: "no"
Y
dry=$("$ARDSTART" --system "$T/sys.yaml" --dry-run)
grep -q -- "--restart=on-failure --restart-delay=0.1 -n keep " <<<"$dry" || fail "dry run: keep has no policy: $dry"
grep -q -- "--restart=always --restart-delay=0.1 --restart-limit=10/60 -n eager " <<<"$dry" || fail "dry run: eager"
grep -q -- "--restart=no --restart-delay=0.1 -n fixed " <<<"$dry" || fail "dry run: fixed"
"$ARDSTART" -q --system "$T/sys.yaml" --wait=20
kill -9 "$(field rsys/s/keep 3)" "$(field rsys/s/fixed 3)"
wait_restarts rsys/s/keep 1
wait_state rsys/s/keep running
wait_state rsys/s/fixed killed 9
[ "$(field rsys/s/fixed 8)" = 0 ] || fail "fixed (restart: no) was restarted"
"$ARDKILL" -q rsys
nothing_left 'tblock'
sed 's/^restart: on-failure .*/restart: sometimes/' "$T/sys.yaml" >"$T/bad.yaml"
expect_fail 100 "bad.yaml:2: restart 'sometimes': expected on-failure, always or no" \
    "$ARDSTART" --system "$T/bad.yaml"
sed 's|restart_limit: 10/60|restart_limit: 10|' "$T/sys.yaml" >"$T/bad.yaml"
expect_fail 100 "bad.yaml:12: restart_limit '10': expected N/SECONDS" "$ARDSTART" --system "$T/bad.yaml"
[ "$(wc -l <<<"$err")" = 1 ] || fail "not one line for bad.yaml: $err"
expect_fail 100 "--system: give the restart policy in the file" \
    "$ARDSTART" --restart=always --system "$T/sys.yaml"
echo "ok"
