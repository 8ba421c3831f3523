#!/bin/bash
# ardrun_run: a tick is ordered by data flow whatever the YAML order; a cycle is broken with a
# one-tick delay and reported; rate groups step the right number of times; a failing block is
# stopped and reported while the others continue; `ardrun --new` writes a plugin that builds.
here=$(cd "$(dirname "$0")" && pwd)
. "$here/common.sh"
P=$PLUGINS

# -- order: the chain src -> g1 -> g2 -> sink, listed backwards; sink acks to src (a cycle) --
cat >"$T/order.yaml" <<Y
name: order
rate_hz: 1000
blocks:
  - { name: src, plugin: $P/tsrc.so, params: { lockstep: true }, ard: { out: c.src, ack: c.ack } }
  - { name: sink, plugin: $P/tsink.so, params: { file: $T/order.txt }, ard: { in: c.g2, ack: c.ack } }
  - { name: g2, plugin: $P/tgain.so, params: { k: -0.5 }, ard: { in: c.g1, out: c.g2 } }
  - { name: g1, plugin: $P/tgain.so, params: { k: 2.5 }, ard: { in: c.src, out: c.g1 } }
Y
"$ARDRUN" --ticks 300 "$T/order.yaml" 2>"$T/order.log"
rc=$?
[ "$rc" = 0 ] || fail "order: exit $rc: $(cat "$T/order.log")"
grep -q "cycle: block 'src' port 'ack' reads connection 'c.ack' (written by block 'sink' port 'ack') with a one-tick delay" "$T/order.log" &&
    ok "cycle reported with the delayed port" || fail "cycle not reported: $(cat "$T/order.log")"
# in data-flow order the sink sees, in tick t, the packet the source sent in tick t; with the
# ack one tick late the lockstep source still advances every tick: k == t on every line
n=$(wc -l <"$T/order.txt")
bad=$(awk '$1 != $2' "$T/order.txt" | head -n3)
[ "$n" = 300 ] && [ -z "$bad" ] && ok "300 ticks, sink sees packet t in tick t (writers first, one-tick delay on the cycle)" ||
    fail "order: $n lines, mismatches: $bad"

# -- multirate: base 1 kHz, a 100 Hz rate (divide 10) and a 250 Hz rate (divide 4) --
cat >"$T/multi.yaml" <<Y
name: multi
rate_hz: 1000
rates:
  - { name: fast, divide: 1 }
  - { name: slow, divide: 10 }
  - { name: mid, divide: 4 }
blocks:
  - { name: f, plugin: $P/tsrc.so, rate: fast, ard: { out: m.f, ack: m.fa } }
  - { name: s, plugin: $P/tsrc.so, rate: slow, ard: { out: m.s, ack: m.sa } }
  - { name: m, plugin: $P/tsrc.so, rate: mid, ard: { out: m.m, ack: m.ma } }
  - { name: fs, plugin: $P/tsink.so, rate: slow, params: { file: $T/fs.txt }, ard: { in: m.f, ack: m.fa2 } }
Y
"$ARDRUN" --ticks 1000 "$T/multi.yaml" 2>"$T/multi.log" || fail "multi: $(cat "$T/multi.log")"
for spec in f:1000 s:100 m:250 fs:100; do
    b=${spec%%:*} want=${spec##*:}
    got=$(summary "$T/multi.log" "$b" steps)
    [ "$got" = "$want" ] && ok "multirate: block $b stepped $got times" ||
        fail "multirate: block $b stepped '$got' times, expected $want"
done
grep -q "rate 'slow' (10): cycles 100" "$T/multi.log" && ok "slow rate: 100 cycles" || fail "slow rate cycles: $(cat "$T/multi.log")"
# the 100 Hz sink reads the 1 kHz source: it sees a newer packet on each of its steps
n=$(wc -l <"$T/fs.txt")
[ "$n" -ge 10 ] && awk 'NR > 1 && $2 <= prev { exit 1 } { prev = $2 }' "$T/fs.txt" &&
    ok "slow reader of a fast writer: $n strictly newer packets" || fail "slow reader: $n lines"

# -- a failing block stops, is reported, the others continue --
cat >"$T/failing.yaml" <<Y
name: failing
rate_hz: 1000
blocks:
  - { name: src, plugin: $P/tsrc.so, ard: { out: f.src, ack: f.none } }
  - { name: bad, plugin: $P/tgain.so, params: { fail_at: 50 }, ard: { in: f.src, out: f.bad } }
  - { name: good, plugin: $P/tgain.so, ard: { in: f.src, out: f.good } }
  - { name: sink, plugin: $P/tsink.so, params: { file: $T/bad.txt }, ard: { in: f.bad, ack: f.a } }
Y
"$ARDRUN" --ticks 200 "$T/failing.yaml" 2>"$T/failing.log"
rc=$?
[ "$rc" = 0 ] || fail "failing: exit $rc"
grep -q "block 'bad' (tgain) failed and is stopped, the others continue: packet 50: told to fail here" "$T/failing.log" &&
    ok "failing block reported with its message" || fail "failing block not reported: $(cat "$T/failing.log")"
[ "$(summary "$T/failing.log" bad steps)" = 50 ] && grep -q "block 'bad': .*fails 1 .*state failed" "$T/failing.log" &&
    ok "failing block: 50 steps then failed" || fail "failing block summary: $(cat "$T/failing.log")"
[ "$(summary "$T/failing.log" good steps)" = 200 ] && [ "$(summary "$T/failing.log" src steps)" = 200 ] &&
    ok "the other blocks ran all 200 ticks" || fail "others stopped: $(cat "$T/failing.log")"
[ "$(tail -n1 "$T/bad.txt" | cut -d' ' -f2)" = 49 ] && ok "nothing sent by the failed step" ||
    fail "after the failure the sink saw $(tail -n1 "$T/bad.txt")"
# alone, a failing block ends its process with exit 105 (the block reads first, then the source
# starts, slowly enough that the block, triggered by each packet, sees packet 5)
"$ARDRUN" --block "$P/tgain.so" --param fail_at=5 --trigger in --ard in=f.src2 --ard out=f.o2 \
    2>"$T/alone.log" &
alone=$!
pids+=("$alone")
for _ in $(seq 200); do
    [ -n "${ARD_TOOL:-}" ] || { sleep 1; break; }
    # no writer yet, one reader
    "$ARD_TOOL" list 2>/dev/null | grep -Eq '^f\.src2 .* - +1 ' && break
    sleep 0.05
done
"$ARDRUN" --block "$P/tsrc.so" --rate 100 --ticks 100 --ard out=f.src2 2>/dev/null &
pids+=($!)
wait "$alone"
rc=$?
[ "$rc" = 105 ] && grep -q "block 'tgain' (tgain) failed: packet 5: told to fail here" "$T/alone.log" &&
    ok "exit 105: block 'tgain' (tgain) failed: packet 5: told to fail here" ||
    fail "alone, the failing block exited $rc: $(cat "$T/alone.log")"

# -- a large group: 200 blocks (the statistics descriptor stays short) --
{
    printf 'name: big\nrate_hz: 1000\nblocks:\n'
    printf '  - { name: b0, plugin: %s, ard: { out: big.c0, ack: big.none } }\n' "$P/tsrc.so"
    for i in $(seq 1 199); do
        printf '  - { name: b%d, plugin: %s, ard: { in: big.c%d, out: big.c%d } }\n' \
            "$i" "$P/tgain.so" $((i - 1)) "$i"
    done
} >"$T/big.yaml"
"$ARDRUN" --ticks 50 "$T/big.yaml" 2>"$T/big.log"
rc=$?
[ "$rc" = 0 ] && [ "$(summary "$T/big.log" b199 steps)" = 50 ] && ok "200 blocks: 50 steps each" ||
    fail "big group: exit $rc: $(tail -n 3 "$T/big.log")"

# -- a group file read through /dev/stdin: a relative plugin path is relative to the file it
# stands for, or, when that file has no name any more (ardstart --system unlinks it), to the
# working directory; never to /dev --
mkdir -p "$T/sub" "$T/cwd"
cp "$P/tsrc.so" "$T/sub/rel_src.so"
printf 'name: stdin\nrate_hz: 1000\nblocks:\n  - { name: s, plugin: ./rel_src.so, ard: { out: si.o, ack: si.a } }\n' >"$T/sub/stdin.yaml"
out=$(cd "$T/cwd" && "$ARDRUN" --ticks 5 /dev/stdin <"$T/sub/stdin.yaml" 2>&1)
[ $? = 0 ] && [[ "$out" == *"block 's': steps 5 "* ]] && ok "YAML redirected from a file: plugin relative to that file" ||
    fail "YAML redirected from a file: $out"
expect 101 "plugin './rel_src.so': cannot open" -- bash -c "cd '$T/cwd' && exec 0<'$T/sub/stdin.yaml' && cp '$T/sub/stdin.yaml' '$T/sub/gone.yaml' && exec 0<'$T/sub/gone.yaml' && rm '$T/sub/gone.yaml' && exec '$ARDRUN' --ticks 5 /dev/stdin"
cp "$P/tsrc.so" "$T/cwd/rel_src.so"
out=$(cd "$T/cwd" && bash -c "cp '$T/sub/stdin.yaml' '$T/sub/gone.yaml' && exec 0<'$T/sub/gone.yaml' && rm '$T/sub/gone.yaml' && exec '$ARDRUN' --ticks 5 /dev/stdin" 2>&1)
[ $? = 0 ] && [[ "$out" == *"block 's': steps 5 "* ]] && ok "YAML of an unlinked file on /dev/stdin: plugin relative to the working directory" ||
    fail "YAML of an unlinked file: $out"

# -- the template --
(cd "$T" && "$ARDRUN" --new my_filter >/dev/null) || fail "--new failed"
grep -q '.name = "my_filter"' "$T/my_filter.c" && ! grep -q TEMPLATE "$T/my_filter.c" &&
    ok "--new: my_filter.c names the block" || fail "--new output: $(head -20 "$T/my_filter.c")"
expect 100 "my_filter.c: File exists (not overwritten)" -- bash -c "cd '$T' && '$ARDRUN' --new my_filter"
expect 100 "'9x' is not a block name" -- "$ARDRUN" --new 9x
if cc -shared -fPIC -Wall -Werror -o "$T/my_filter.so" "$T/my_filter.c" -I"$SRCDIR/include" 2>"$T/cc.log"; then
    "$ARDRUN" --describe "$T/my_filter.so" | grep -q "block my_filter version 0.1.0" &&
        ok "--new: the written plugin builds and loads" || fail "describe of the new plugin"
else
    fail "the template does not build: $(cat "$T/cc.log")"
fi
finish
