#!/bin/bash
# ardrun_private: a connection whose writer and every reader of the group step in one rate
# thread is handed over through the process's own memory, and published to shared memory for
# readers outside the group. Proves:
#  - a reader outside the group attached before the group starts gets every packet (the
#    connection's sequence number equals the number of packets sent), identical to what the
#    group's own readers saw;
#  - a connection nobody outside reads is still published, but only every 100 ms, and its last
#    packet is on the connection when the group ends;
#  - a reader that attaches while the group runs gets every packet from then on;
#  - what a failing step wrote reaches no reader, inside the thread or outside.
here=$(cd "$(dirname "$0")" && pwd)
. "$here/common.sh"
P=$PLUGINS
[ -n "${ARD_TOOL:-}" ] || {
    echo "skip: needs the ard tool"
    exit 77
}
N=500

# a -> b -> c in one thread; a process reads p.b from the start, nobody outside reads p.a, p.c
cat >"$T/pv.yaml" <<Y
name: pv
rate_hz: 1000
blocks:
  - { name: a, plugin: $P/tkeep.so, ard: { in: p.z, out: p.a } }
  - { name: b, plugin: $P/tkeep.so, ard: { in: p.a, out: p.b } }
  - { name: c, plugin: $P/tkeep.so, ard: { in: p.b, out: p.c } }
Y
"$ARDRUN" --block "$P/tsink.so" --param file="$T/proc.txt" --trigger in --ard in=p.b \
    --ard ack=p.ack 2>"$T/proc.log" &
sink=$!
pids+=("$sink")
for _ in $(seq 100); do
    # no writer yet, one reader
    "$ARD_TOOL" list 2>/dev/null | grep -Eq '^p\.b .* - +1 ' && break
    sleep 0.05
done
"$ARDRUN" --ticks $N "$T/pv.yaml" 2>"$T/pv.log" || fail "group: $(cat "$T/pv.log")"
kill "$sink" 2>/dev/null
wait "$sink" 2>/dev/null

seq_of() { "$ARD_TOOL" show "$1" | sed -n 's/.* seq \([0-9]*\) .*/\1/p'; }
out=$("$ARD_TOOL" show p.b)
if [ "$(seq_of p.b)" = $N ] && [[ "$out" == *"f0 = $N"* && "$out" == *"f1 = $N 42 1 0 0 0 0 0"* ]]; then
    ok "p.b, read from outside: all $N packets published, the last one complete"
else
    fail "p.b: $out"
fi
# the process saw the group's packets: b's packet k carries a's packet k (same tick), 42, new
bad=$(/usr/bin/python3 -c '
import sys
for line in open(sys.argv[1]):
    f = line.split()
    x = [float.fromhex(v) for v in f[2:]]
    if x[:3] != [float(f[1]), 42.0, 1.0] or any(x[3:]):
        print(line.strip())' "$T/proc.txt" | head -n3)
n=$(wc -l <"$T/proc.txt")
if [ "$n" -ge 10 ] && [ -z "$bad" ] && [ "$(tail -n1 "$T/proc.txt" | cut -d' ' -f2)" = $N ]; then
    ok "the process got $n packets of p.b up to the last, each as the group made it"
else
    fail "process: $n packets, last $(tail -n1 "$T/proc.txt"); bad: $bad"
fi
for c in p.a p.c; do
    s=$(seq_of $c)
    out=$("$ARD_TOOL" show $c)
    if [ -n "$s" ] && [ "$s" -ge 2 ] && [ "$s" -lt $((N / 10)) ] && [[ "$out" == *"f0 = $N"* ]]; then
        ok "$c, read by nobody outside: published $s times (every 100 ms and at the end), the last packet is there"
    else
        fail "$c: seq '$s' (expected 2..$((N / 10 - 1))): $out"
    fi
done

# a writer whose step fails after writing into its buffer: readers of the thread keep its last
# packet (nothing of the failed step), as not new; outside, the connection has that packet too
cat >"$T/fail.yaml" <<Y
name: pvfail
rate_hz: 1000
blocks:
  - { name: a, plugin: $P/tkeep.so, params: { fail_at: 50 }, ard: { in: f.z, out: f.a } }
  - { name: b, plugin: $P/tkeep.so, ard: { in: f.a, out: f.b } }
Y
"$ARDRUN" --ticks 100 "$T/fail.yaml" 2>"$T/fail.log" || fail "failing group: $(cat "$T/fail.log")"
grep -q "block 'a' (tkeep) failed and is stopped.*step 50: told to fail here" "$T/fail.log" &&
    ok "the failing writer is reported" || fail "no failure reported: $(cat "$T/fail.log")"
outb=$("$ARD_TOOL" show f.b) outa=$("$ARD_TOOL" show f.a)
if [[ "$outb" == *"f0 = 100"* && "$outb" == *"f1 = 49 42 0 0 0 0 0 0"* && "$outa" == *"f0 = 49"* &&
    "$outa" == *"f1 = -1 42 -1 0 0 0 0 0"* ]]; then
    ok "after a failed step its reader still sees packet 49, not new; f.a holds packet 49"
else
    fail "after the failed step: f.b: $outb / f.a: $outa"
fi

# a reader that comes while the group runs (50 Hz, so that a process keeps up with every packet)
cat >"$T/late.yaml" <<Y
name: late
rate_hz: 50
blocks:
  - { name: a, plugin: $P/tkeep.so, ard: { in: l.z, out: l.a } }
  - { name: b, plugin: $P/tkeep.so, ard: { in: l.a, out: l.b } }
Y
"$ARDRUN" --ticks 250 "$T/late.yaml" 2>"$T/late.log" &
grp=$!
pids+=("$grp")
for _ in $(seq 200); do
    t=$("$ARDRUN" ctl late status 2>/dev/null | sed -n 's/.*base tick \([0-9]*\).*/\1/p')
    [ -n "$t" ] && [ "$t" -ge 25 ] && break
    sleep 0.05
done
"$ARDRUN" --block "$P/tsink.so" --param file="$T/late.txt" --trigger in --ard in=l.b \
    --ard ack=l.ack 2>"$T/late-sink.log" &
sink=$!
pids+=("$sink")
wait "$grp" || fail "late group: $(cat "$T/late.log")"
sleep 0.2
kill "$sink" 2>/dev/null
wait "$sink" 2>/dev/null
# before the reader came, p.b was published every 5th tick; from then on every packet: after
# the first few lines (the packet present at attach, one before the group noticed) the steps
# between the packets the reader got are 1
read -r n ones first last < <(awk 'NR > 1 { if ($2 - prev == 1) ones++ } { prev = $2; n++ }
    NR == 1 { first = $2 } END { print n, ones + 0, first, prev }' "$T/late.txt")
if [ "$first" -gt 5 ] && [ "$n" -ge 50 ] && [ "$last" = 250 ] && [ $((ones * 10)) -ge $(((n - 1) * 9)) ]; then
    ok "a reader attached at packet $first got $n packets up to the last, $ones of them one after the other"
else
    fail "late reader: $n packets from $first to $last, $ones consecutive: $(head -n 8 "$T/late.txt" | cut -d' ' -f1-2 | tr '\n' ,)"
fi
finish
