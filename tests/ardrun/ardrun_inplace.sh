#!/bin/bash
# ardrun_inplace: blocks of one rate thread hand packets over in place (the writer fills the
# connection's next slot, readers of the same thread read the committed slot without a copy).
# Proves, packet for packet over more ticks than a connection has slots:
#  - an OUT buffer keeps its contents between steps (a counter kept in the packet itself, a
#    value written in the first step only);
#  - a reader after its writer gets this tick's packet, a reader behind a broken cycle the
#    previous tick's, with is_new as ard_tryrec gives it;
#  - readers outside the thread (a sink in another rate thread, a sink process, `ard show`)
#    see exactly the same packets.
here=$(cd "$(dirname "$0")" && pwd)
. "$here/common.sh"
P=$PLUGINS
N=300

# a -> b -> c -> a is a cycle: a (first in the file) reads z.c one tick late.
cat >"$T/ring.yaml" <<Y
name: ring
rate_hz: 1000
rates:
  - { name: base, divide: 1 }
  - { name: half, divide: 2 }
blocks:
  - { name: a, plugin: $P/tkeep.so, ard: { in: z.c, out: z.a } }
  - { name: b, plugin: $P/tkeep.so, ard: { in: z.a, out: z.b } }
  - { name: c, plugin: $P/tkeep.so, ard: { in: z.b, out: z.c } }
  - { name: sa, plugin: $P/tsink.so, params: { file: $T/a.txt }, ard: { in: z.a, ack: z.acka } }
  - { name: sb, plugin: $P/tsink.so, params: { file: $T/b.txt }, ard: { in: z.b, ack: z.ackb } }
  - { name: sc, plugin: $P/tsink.so, params: { file: $T/c.txt }, ard: { in: z.c, ack: z.ackc } }
  - { name: so, plugin: $P/tsink.so, rate: half, params: { file: $T/half.txt }, ard: { in: z.c, ack: z.ackh } }
Y
"$ARDRUN" --block "$P/tsink.so" --param file="$T/proc.txt" --trigger in --ard in=z.c \
    --ard ack=z.ackp 2>"$T/proc.log" &
sink=$!
pids+=("$sink")
sleep 0.3
"$ARDRUN" --ticks $N "$T/ring.yaml" 2>"$T/ring.log" || fail "group: $(cat "$T/ring.log")"
grep -q "cycle: block 'a' port 'in' reads connection 'z.c'" "$T/ring.log" &&
    ok "the cycle is broken at a" || fail "no cycle reported: $(cat "$T/ring.log")"
kill "$sink" 2>/dev/null
wait "$sink" 2>/dev/null

# expected line of a sink: "k x0 x1 x2" (x3..x7 stay 0) from the packet of step n (k = n)
expect_lines() { # NAME: a sees c of the previous tick, b and c this tick's
    awk -v who="$1" -v n=$N 'BEGIN {
        for (k = 1; k <= n; k++) {
            seen = who == "a" ? k - 1 : k
            if (who == "a" && k == 1) { seen = -1; fresh = -1 } else fresh = 1
            printf "%d %d 42 %d\n", k, seen, fresh
        } }'
}
# a sink's file as "k x0 x1 x2" in decimal (hex floats printed by tsink)
decode() {
    /usr/bin/python3 -c '
import sys
for line in open(sys.argv[1]):
    f = line.split()
    x = [float.fromhex(v) for v in f[2:]]
    assert all(v == 0 for v in x[3:]), line
    print("%d %d %d %d" % (int(f[1]), x[0], x[1], x[2]))' "$1"
}
for w in a b c; do
    decode "$T/$w.txt" >"$T/$w.got" || fail "$w: cannot decode $T/$w.txt"
    expect_lines $w >"$T/$w.want"
    if cmp -s "$T/$w.got" "$T/$w.want"; then
        ok "$w: $N packets as expected, packet for packet"
    else
        fail "$w differs: $(diff "$T/$w.want" "$T/$w.got" | head -n6)"
    fi
done

# other readers use ordinary ports and see the same packets (they may skip some)
for f in half proc; do
    decode "$T/$f.txt" >"$T/$f.got"
    n=$(wc -l <"$T/$f.got")
    missing=$(grep -vxF -f "$T/c.want" "$T/$f.got" | head -n3)
    if [ "$n" -ge 10 ] && [ -z "$missing" ]; then
        ok "$f: $n packets of z.c, each one identical to the group's"
    else
        fail "$f: $n packets; not in the group's: $missing"
    fi
done
last=$(tail -n1 "$T/half.got" | cut -d' ' -f1)
[ "$last" -ge $((N / 2)) ] && ok "half-rate sink kept reading, up to packet $last" ||
    fail "half-rate sink stopped at packet $last"

# the connection as every tool sees it: the last packet, complete
if [ -n "${ARD_TOOL:-}" ]; then
    out=$("$ARD_TOOL" show z.c 2>&1)
    if [[ "$out" == *"seq $N "* && "$out" == *"f0 = $N"* && "$out" == *"f1 = $N 42 1 0 0 0 0 0"* ]]; then
        ok "ard show z.c: packet $N"
    else
        fail "ard show z.c: $out"
    fi
fi
finish
