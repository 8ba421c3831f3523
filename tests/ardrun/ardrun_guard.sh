#!/bin/bash
# ardrun_guard: a block that hangs or crashes is named. A step in an endless loop is found by
# the group's watchdog (max(100 ms, 20 periods)) and ends the group with exit 106, naming the
# block, its rate and for how long; SIGTERM ends a group within about 1 s while a step hangs;
# a block that crashes (SIGSEGV, SIGBUS, SIGFPE, abort) is named before the process dies of
# the same signal; a step that returns a positive value is a failure naming the value. The
# same as a process of its own (--block).
here=$(cd "$(dirname "$0")" && pwd)
. "$here/common.sh"
P=$PLUGINS
ulimit -c 0 # the crashes are wanted: no core files

# group NAME ACT [RATE]: a group of a healthy source and block 'bad' doing ACT from its 20th step
group() {
    cat >"$T/$1.yaml" <<Y
name: $1
rate_hz: 1000
rates: [ { name: fast, divide: 1 }, { name: slow, divide: ${4:-1} } ]
blocks:
  - { name: src, rate: fast, plugin: $P/tsrc.so, ard: { out: $1.src, ack: $1.none } }
  - { name: bad, rate: ${3:-fast}, plugin: $P/tbad_act.so, params: { act: $2, after: 20 }, ard: { out: $1.bad } }
Y
}
now() { date +%s%N; }

# a step that never returns, alone: the watchdog names it
group hang hang
t0=$(now)
timeout 20 "$ARDRUN" "$T/hang.yaml" 2>"$T/hang.log"
rc=$? ms=$((($(now) - t0) / 1000000))
if [ "$rc" = 106 ] && grep -q "block 'bad' (tbad) of rate 'fast' (1000 Hz) hangs: its tick has run for 0\.[0-9]* s (the watchdog allows 0.100 s); ending the group (exit 106)" "$T/hang.log"; then
    ok "a hung step ends the group with exit 106 after ${ms} ms, naming block, rate and time"
else
    fail "hung step: exit $rc after $ms ms: $(cat "$T/hang.log")"
fi
[ "$ms" -lt 5000 ] || fail "the watchdog took $ms ms"

# a step that blocks in a system call hangs as well
group sleep sleep
timeout 20 "$ARDRUN" "$T/sleep.yaml" 2>"$T/sleep.log"
rc=$?
[ "$rc" = 106 ] && grep -q "block 'bad' (tbad) of rate 'fast' (1000 Hz) hangs" "$T/sleep.log" &&
    ok "a step asleep in a system call is named too" || fail "sleeping step: exit $rc: $(cat "$T/sleep.log")"

# SIGTERM while a step of a slow rate (5 Hz: watchdog 4 s) hangs: the group still ends at once
group hangterm hang slow 200
# (timeout: bounded even where the signal never arrives; it passes SIGTERM on)
timeout -k 5 60 "$ARDRUN" "$T/hangterm.yaml" 2>"$T/hangterm.log" &
pid=$!
pids+=("$pid")
sleep 5.5 # the hung tick starts at 4 s (step 20 of 5 Hz)
t0=$(now)
kill -TERM "$pid"
wait "$pid"
rc=$? ms=$((($(now) - t0) / 1000000))
if [ "$rc" = 106 ] && [ "$ms" -lt 3000 ] && grep -q "block 'bad' (tbad) of rate 'slow' (5 Hz) hangs: .*after a stop signal" "$T/hangterm.log"; then
    ok "SIGTERM ends a group with a hung step in $ms ms (exit 106, the block named)"
else
    fail "SIGTERM with a hung step: exit $rc after $ms ms: $(cat "$T/hangterm.log")"
fi

# SIGTERM while the control thread runs a reload's init that never returns: named after 1 s
cp "$P/tbad_act.so" "$T/rl.so"
cat >"$T/rl.yaml" <<Y
name: rl
rate_hz: 1000
blocks:
  - { name: bad, plugin: $T/rl.so, params: { act: none }, ard: { out: rl.bad } }
Y
timeout -k 5 60 "$ARDRUN" "$T/rl.yaml" 2>"$T/rl.log" &
pid=$!
pids+=("$pid")
for _ in $(seq 200); do "$ARDRUN" ctl rl status >/dev/null 2>&1 && break; sleep 0.05; done
cp "$P/tbad_inithang.so" "$T/rl.so"
timeout 20 "$ARDRUN" ctl rl reload bad >/dev/null 2>&1 &
client=$!
sleep 1.5 # the command reaches the group and its init starts (nothing tells when)
t0=$(now)
kill -TERM "$pid"
wait "$pid"
rc=$? ms=$((($(now) - t0) / 1000000))
[ "$rc" = 106 ] && [ "$ms" -lt 3000 ] &&
    grep -q "block 'bad' (tbad) of rate 'base': hangs: its callback did not return within 1 s of the stop signal" "$T/rl.log" &&
    ok "SIGTERM during a reload whose init hangs: named after $ms ms, exit 106" ||
    fail "hung reload: exit $rc after $ms ms: $(cat "$T/rl.log")"
kill "$client" 2>/dev/null
wait "$client" 2>/dev/null

# a slow tick that is not hung is left alone (20 periods at 5 Hz: 4 s)
group slowok none slow 200
"$ARDRUN" --ticks 1500 "$T/slowok.yaml" 2>"$T/slowok.log"
rc=$?
[ "$rc" = 0 ] && ! grep -q hangs "$T/slowok.log" && ok "a healthy group with a slow rate runs to its end" ||
    fail "slow healthy group: exit $rc: $(cat "$T/slowok.log")"

# crashes: named, then the process dies of the same signal
for c in segv:SIGSEGV:139 bus:SIGBUS:135 fpe:SIGFPE:136 abort:SIGABRT:134; do
    IFS=: read -r act sig code <<<"$c"
    group "c$act" "$act"
    timeout 20 "$ARDRUN" "$T/c$act.yaml" 2>"$T/c$act.log"
    rc=$?
    if [ "$rc" = "$code" ] && grep -q "^ardrun: c$act: block 'bad' (tbad) of rate 'fast': crashed with $sig" "$T/c$act.log"; then
        ok "a block that crashes with $sig is named, the group dies of $sig"
    else
        fail "crash $act: exit $rc (expected $code): $(cat "$T/c$act.log")"
    fi
done

# a positive step return is a failure naming the value; the others run on
group pos positive
"$ARDRUN" --ticks 300 "$T/pos.yaml" 2>"$T/pos.log"
rc=$?
if [ "$rc" = 0 ] && grep -q "block 'bad' (tbad) failed and is stopped, the others continue: step returned 1, a positive value" "$T/pos.log" &&
    [ "$(summary "$T/pos.log" bad steps)" = 20 ] && [ "$(summary "$T/pos.log" src steps)" = 300 ]; then
    ok "a step returning 1 fails and stops its block (20 steps), the source runs on (300)"
else
    fail "positive return: exit $rc: $(cat "$T/pos.log")"
fi

# the same alone (--block)
SOLO=("$ARDRUN" --block "$P/tbad_act.so" --name solo --param after=20 --rate 200 --ard out=solo.out)
solo() { "${SOLO[@]}" --param "act=$1"; }
solo positive 2>"$T/s.log"
rc=$?
[ "$rc" = 105 ] && grep -q "block 'solo' (tbad) failed: step returned 1, a positive value" "$T/s.log" &&
    ok "--block: a step returning 1 ends the process with 105" || fail "--block positive: exit $rc: $(cat "$T/s.log")"
solo segv 2>"$T/s.log"
rc=$?
[ "$rc" = 139 ] && grep -q "^ardrun: block 'solo' (tbad): crashed with SIGSEGV at address 0x10" "$T/s.log" &&
    ok "--block: a crash is named" || fail "--block segv: exit $rc: $(cat "$T/s.log")"
timeout -k 5 60 "${SOLO[@]}" --param act=hang 2>"$T/s.log" &
pid=$!
pids+=("$pid")
sleep 0.5
t0=$(now)
kill -TERM "$pid"
wait "$pid"
rc=$? ms=$((($(now) - t0) / 1000000))
[ "$rc" = 106 ] && [ "$ms" -lt 3000 ] && grep -q "block 'solo' (tbad): hangs: its callback did not return within 1 s of the stop signal" "$T/s.log" &&
    ok "--block: SIGTERM ends a hung step after 1 s ($ms ms, exit 106)" || fail "--block hang: exit $rc after $ms ms: $(cat "$T/s.log")"
timeout -k 5 60 "${SOLO[@]}" --param act=none 2>"$T/s.log" &
pid=$!
pids+=("$pid")
sleep 0.3
kill -TERM "$pid"
wait "$pid"
rc=$?
[ "$rc" = 0 ] && ok "--block: SIGTERM on a healthy block: exit 0" || fail "--block SIGTERM: exit $rc: $(cat "$T/s.log")"
finish
