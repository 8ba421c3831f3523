#!/bin/bash
# ardrun_lifecycle: stop, start and reload one block of a running group through
# `ardrun ctl`, while the others keep running; bad commands are refused with a reason.
here=$(cd "$(dirname "$0")" && pwd)
. "$here/common.sh"
P=$PLUGINS
cp "$P/tgain.so" "$T/gain.so"
cat >"$T/life.yaml" <<Y
name: life
rate_hz: 500
blocks:
  - { name: src, plugin: $P/tsrc.so, ard: { out: l.src, ack: l.none } }
  - { name: g, plugin: gain.so, params: { mark_lifecycle: true }, ard: { in: l.src, out: l.g } }
  - { name: sink, plugin: $P/tsink.so, params: { file: $T/life.txt }, ard: { in: l.g, ack: l.ack } }
Y
expect 104 "group 'life' is not running in domain '$ARD_DOMAIN'" -- "$ARDRUN" ctl life stop g
"$ARDRUN" "$T/life.yaml" 2>"$T/life.log" &
grp=$!
pids+=("$grp")
for _ in $(seq 200); do "$ARDRUN" ctl life status >/dev/null 2>&1 && break; sleep 0.05; done
"$ARDRUN" ctl life status >"$T/st0" || fail "status: $(cat "$T/life.log")"

steps() { # steps of block $1 from `ctl status`
    "$ARDRUN" ctl life status | awk -v b="$1" '$1 == b && NF == 7 { print $3 }'
}
state() { "$ARDRUN" ctl life status | awk -v b="$1" '$1 == b && NF == 7 { print $7 }'; }
# x[6] (10 * starts + stops) and x[7] (the build's version) of the sink's newest packet
last() { tail -n1 "$T/life.txt" | awk '{ printf "%g %g\n", $9, $10 }'; }
sleep 0.3

out=$("$ARDRUN" ctl life stop g) && [ "$out" = "block 'g' stopped" ] && ok "stop: $out" || fail "stop: $out"
[ "$(state g)" = stopped ] && ok "status shows g stopped" || fail "state after stop: $(state g)"
n1=$(wc -l <"$T/life.txt") s1=$(steps src) g1=$(steps g)
sleep 0.4
n2=$(wc -l <"$T/life.txt") s2=$(steps src) g2=$(steps g)
[ "$n1" = "$n2" ] && [ "$g1" = "$g2" ] && ok "stopped block does not step ($g1 steps), sink gets nothing new" ||
    fail "stopped block still runs: steps $g1 -> $g2, sink lines $n1 -> $n2"
[ "$s2" -gt "$s1" ] && ok "the source continues ($s1 -> $s2 steps)" || fail "source stopped too: $s1 -> $s2"

out=$("$ARDRUN" ctl life start g) && [ "$out" = "block 'g' running" ] && ok "start: $out" || fail "start: $out"
sleep 0.3
[ "$(wc -l <"$T/life.txt")" -gt "$n2" ] && ok "started block delivers again" || fail "nothing after start"
[ "$(last)" = "21 1" ] && ok "start/stop callbacks ran (2 starts, 1 stop)" || fail "lifecycle marks: $(last)"

# reload with a new build of the .so (same ports): new code, fresh state, others unaffected
cp "$P/tgain2.so" "$T/gain.so"
s1=$(steps src)
out=$("$ARDRUN" ctl life reload g) && [[ "$out" == "block 'g' reloaded from "*"(version 2)" ]] &&
    ok "reload: $out" || fail "reload: $out"
sleep 0.3
[ "$(last)" = "10 2" ] && ok "the new build runs (version 2, its own first start)" || fail "after reload: $(last)"
[ "$(steps src)" -gt "$s1" ] && ok "the source ran on through the reload" || fail "source stopped by the reload"
[ "$(state g)" = running ] || fail "g not running after reload"

# a new build with other ports is refused, the running one stays
cp "$P/tsrc.so" "$T/gain.so"
expect 104 "differs: running 'in' in 72 bytes 'u64 f64[8]', new build 'out' out 72 bytes" -- "$ARDRUN" ctl life reload g
cp "$P/tbad_api.so" "$T/gain.so"
expect 104 "built against block API version 99" -- "$ARDRUN" ctl life reload g
n1=$(wc -l <"$T/life.txt")
sleep 0.2
[ "$(state g)" = running ] && [ "$(wc -l <"$T/life.txt")" -gt "$n1" ] && [ "$(last)" = "10 2" ] &&
    ok "refused reloads left the running build alone" || fail "after refused reloads: $(state g) $(last)"

expect 104 "group 'life' has no block 'nosuch'" -- "$ARDRUN" ctl life stop nosuch
expect 100 "bad command 'pause g'" -- "$ARDRUN" ctl life pause g
expect 100 "usage: ardrun ctl" -- "$ARDRUN" ctl life

kill -TERM "$grp"
wait "$grp"
rc=$?
[ "$rc" = 0 ] && grep -q "block 'g': steps" "$T/life.log" && ok "SIGTERM: clean exit with a summary" ||
    fail "SIGTERM: exit $rc: $(cat "$T/life.log")"
grep -q "command 1 'g': block 'g' stopped" "$T/life.log" && ok "the group logs each command" || fail "no command log"
finish
