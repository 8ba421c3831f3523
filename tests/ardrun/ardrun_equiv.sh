#!/bin/bash
# ardrun_equiv: the same plugins give the same packets, packet by packet, whether they run
# in one group, each as its own process (`ardrun --block`), or mixed. Only the configuration
# differs. The source sends packet k+1 only when the sink acknowledged k (lockstep), so no
# packet is skipped in any of the three set-ups and the outputs can be compared exactly.
here=$(cd "$(dirname "$0")" && pwd)
. "$here/common.sh"
P=$PLUGINS
N=200

# 1. one group
cat >"$T/chain.yaml" <<Y
name: chain
rate_hz: 1000
blocks:
  - { name: src, plugin: $P/tsrc.so, params: { lockstep: true, count: $N, scale: 3 }, ard: { out: e.src, ack: e.ack } }
  - { name: g1, plugin: $P/tgain.so, params: { k: 2.5 }, ard: { in: e.src, out: e.g1 } }
  - { name: g2, plugin: $P/tgain.so, params: { k: -0.5 }, ard: { in: e.g1, out: e.g2 } }
  - { name: sink, plugin: $P/tsink.so, params: { file: $T/group.txt }, ard: { in: e.g2, ack: e.ack } }
Y
# (the group file comes through a pipe: read once, it must still be checked and loaded)
cat "$T/chain.yaml" | "$ARDRUN" --ticks $((N + 20)) /dev/stdin 2>"$T/group.log" ||
    fail "group: $(cat "$T/group.log")"
rm -f /dev/shm/ard."$ARD_DOMAIN".*

# 2. four processes, the same plugins and parameters, wired with --ard
"$ARDRUN" --block "$P/tsink.so" --param file="$T/proc.txt" --trigger in --ticks $N \
    --ard in=e.g2 --ard ack=e.ack 2>"$T/sink.log" &
sink=$!
pids+=("$sink")
"$ARDRUN" --block "$P/tgain.so" --name g2 --param k=-0.5 --trigger in --ard in=e.g1 --ard out=e.g2 2>/dev/null &
pids+=($!)
"$ARDRUN" --block "$P/tgain.so" --name g1 --param k=2.5 --trigger in --ard in=e.src --ard out=e.g1 2>/dev/null &
pids+=($!)
sleep 0.3
"$ARDRUN" --block "$P/tsrc.so" --param lockstep=true --param count=$N --param scale=3 --rate 1000 \
    --ard out=e.src --ard ack=e.ack 2>/dev/null &
pids+=($!)
wait "$sink" || fail "process sink: $(cat "$T/sink.log")"
for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done
wait 2>/dev/null
pids=()
rm -f /dev/shm/ard."$ARD_DOMAIN".*

# 3. mixed: the two gains in a group, source and sink as processes
cat >"$T/mid.yaml" <<Y
name: mid
rate_hz: 2000
blocks:
  - { name: g2, plugin: $P/tgain.so, params: { k: -0.5 }, ard: { in: e.g1, out: e.g2 } }
  - { name: g1, plugin: $P/tgain.so, params: { k: 2.5 }, ard: { in: e.src, out: e.g1 } }
Y
"$ARDRUN" --block "$P/tsink.so" --param file="$T/mixed.txt" --trigger in --ticks $N \
    --ard in=e.g2 --ard ack=e.ack 2>"$T/sink.log" &
sink=$!
pids+=("$sink")
"$ARDRUN" "$T/mid.yaml" 2>"$T/mid.log" &
pids+=($!)
sleep 0.3
"$ARDRUN" --block "$P/tsrc.so" --param lockstep=true --param count=$N --param scale=3 --rate 1000 \
    --ard out=e.src --ard ack=e.ack 2>/dev/null &
pids+=($!)
wait "$sink" || fail "mixed sink: $(cat "$T/sink.log") $(cat "$T/mid.log")"

# compare the packets (k and eight exact values), ignoring the sink's own step numbers
for f in group proc mixed; do cut -d' ' -f2- "$T/$f.txt" >"$T/$f.pk"; done
[ "$(wc -l <"$T/group.pk")" = $N ] && ok "group: $N packets" || fail "group: $(wc -l <"$T/group.pk") packets"
[ "$(cut -d' ' -f1 "$T/group.pk" | tr '\n' ' ')" = "$(seq 0 $((N - 1)) | tr '\n' ' ')" ] &&
    ok "packets 0..$((N - 1)) in order" || fail "group packet numbers"
if cmp -s "$T/group.pk" "$T/proc.pk"; then ok "group and processes: $N identical packets"; else
    fail "group and processes differ: $(diff "$T/group.pk" "$T/proc.pk" | head -n4)"; fi
if cmp -s "$T/group.pk" "$T/mixed.pk"; then ok "group and mixed: $N identical packets"; else
    fail "group and mixed differ: $(diff "$T/group.pk" "$T/mixed.pk" | head -n4)"; fi
# the values really went through both gains: x[0] of packet 100 = 3 sin(1.0) 2.5 (-0.5)
v=$(printf '%.4f' "$(awk '$1 == 100 { print $2 }' "$T/group.pk")")
[ "$v" = "-3.1555" ] && ok "x[0] of packet 100 = $v" || fail "x[0] of packet 100 = $v, expected -3.1555"
finish
