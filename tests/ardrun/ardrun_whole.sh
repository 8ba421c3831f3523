#!/bin/bash
# ardrun_whole: an OUT port declared ARD_PORT_WHOLE is handed over without a copy (two buffers
# swapped after a successful step) and keeps the promises that do not depend on the flag.
# Proves, with tests/ardrun/twhole.c (every packet carries a pattern of its own number):
#  - in a private hand-off the readers of the thread see exactly each step's output, in the
#    same tick, never an older or a mixed packet; a reader outside the group attached from the
#    start gets every packet, each whole; the last packet is on shared memory at the end;
#  - a step that fails after writing nonsense into its whole output reaches no reader: those
#    of the thread keep the previous packet, as not new, with and without a reader outside;
#    shared memory has the last successful packet;
#  - the same across rate threads (the port's slot is loaned, not copied) and as a process
#    (`ardrun --block`, where the flag changes nothing observable);
#  - a reload keeps a whole port working; a new build with other port flags is refused;
#  - plugins built against the API 1 header (ports without flags) load as API 1;
#  - an unknown flag bit, and ARD_PORT_WHOLE on an IN port, are refused naming block and port;
#  - GROUP.stats has named fields that `ard show` prints.
here=$(cd "$(dirname "$0")" && pwd)
. "$here/common.sh"
P=$PLUGINS
[ -n "${ARD_TOOL:-}" ] || {
    echo "skip: needs the ard tool"
    exit 77
}
N=400

# check FILE LAST MIN: the tsink lines of FILE are packets of twhole 'b' reading twhole 'a' in
# the same tick, each whole (see twhole.c), in order, at least MIN of them, the last one LAST.
# (A process reading at 1 kHz on a loaded machine may miss one; that every packet was
# published is checked by the connection's sequence number.)
check() { # FILE LAST LEAST [newer]: b's packet k read a's packet k (newer: a packet >= k,
    # newer than the one the line before read: a process stepping on each new packet may be
    # late and find a newer one)
    /usr/bin/python3 - "$@" <<'PY'
import sys
path, last, least = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
newer = len(sys.argv) > 4 and sys.argv[4] == "newer"
ks, read = [], 0
for line in open(path):
    f = line.split()
    k = int(f[1])
    x = [float.fromhex(v) for v in f[2:]]
    same = x[0] >= k and x[0] > read if newer else x[0] == k
    if x[2:] != [float(k * 8 + i) for i in range(2, 8)] or not same or x[1] != 1.0:
        print("bad packet:", line.strip())
        sys.exit(1)
    ks.append(k)
    read = x[0]
if len(ks) < least or ks[-1] != last or any(a >= b for a, b in zip(ks, ks[1:])):
    print(len(ks), "packets", ks[:5], "...", ks[-5:], "expected at least", least, "up to", last)
    sys.exit(1)
PY
}
# field K's value in `ard show` output: f0 is k, f1 the eight values
seq_of() { "$ARD_TOOL" show "$1" | sed -n 's/.* seq \([0-9]*\) .*/\1/p'; }
show_ok() { # CONN K X0: the connection's packet is packet K of twhole, reading X0, whole
    local out
    out=$("$ARD_TOOL" show "$1")
    local pat="" i
    for i in 2 3 4 5 6 7; do pat="$pat $(($2 * 8 + i))"; done
    [[ "$out" == *"f0 = $2"* && "$out" == *"f1 = $3 1$pat"* ]] || {
        echo "$out"
        return 1
    }
}

# -- a -> b in one thread (private); a process reads p.b from the start, nobody reads p.a --
cat >"$T/w.yaml" <<Y
name: w
rate_hz: 1000
blocks:
  - { name: b, plugin: $P/twhole.so, ard: { in: p.a, out: p.b } }
  - { name: a, plugin: $P/twhole.so, ard: { in: p.z, out: p.a } }
Y
"$ARDRUN" --block "$P/tsink.so" --param file="$T/w.txt" --trigger in --ard in=p.b \
    --ard ack=p.ack 2>"$T/wsink.log" &
sink=$!
pids+=("$sink")
for _ in $(seq 100); do
    "$ARD_TOOL" list 2>/dev/null | grep -Eq '^p\.b .* - +1 ' && break
    sleep 0.05
done
# The statistics are followed while the group runs: it removes w.stats when it ends.
"$ARDRUN" --ticks $N "$T/w.yaml" 2>"$T/w.log" &
grp=$!
for _ in $(seq 100); do [ -e "/dev/shm/ard.$ARD_DOMAIN.w.stats" ] && break; sleep 0.01; done
"$ARD_TOOL" show -f w.stats >"$T/wstats.txt" 2>&1 &
stf=$!
pids+=("$stf")
wait "$grp" || fail "group: $(cat "$T/w.log")"
sleep 0.2
kill "$stf" 2>/dev/null
wait "$stf" 2>/dev/null
kill "$sink" 2>/dev/null
wait "$sink" 2>/dev/null
# b saw a's packet k in its step k, whole (x[1] = 1), and the outside reader saw each of b's
# b saw a's packet k in its step k, whole (x[1] = 1): checked in every packet of b that the
# process outside got; b published every one of its packets (seq = N), the last one whole
n=$(wc -l <"$T/w.txt")
r=$(check "$T/w.txt" $N $((N / 2))) && ok "private hand-off: in each of the $n packets of b the process got, b had read a's packet of the same step, whole; every packet whole" ||
    fail "private hand-off: $r"
[ "$(seq_of p.b)" = $N ] && show_ok p.b $N $N >/dev/null && ok "p.b (read outside): all $N packets published, the last one $N, whole" ||
    fail "p.b: seq $(seq_of p.b): $(show_ok p.b $N $N)"
show_ok p.a $N -1 >/dev/null && ok "p.a (read by nobody outside) holds its last packet $N" ||
    fail "p.a: $(show_ok p.a $N -1)"

# the group's statistics have named fields (docs/ardrun.md, "Statistics")
st=$(awk '/^w\.stats  seq/ { b = "" } { b = b $0 "\n" } END { printf "%s", b }' "$T/wstats.txt")
if grep -Eq '^ *tick *= '$N'$' <<<"$st" && grep -Eq '^ *steps *= '$N' '$N'$' <<<"$st" &&
    grep -Eq '^ *fails *= 0 0$' <<<"$st" && grep -Eq '^ *state *= 1 1$' <<<"$st"; then
    ok "ard show w.stats decodes the statistics by field name (tick, steps, fails, state)"
else
    fail "w.stats: $st"
fi

# -- a step that fails after writing nonsense: without, then with a reader outside --
cat >"$T/f.yaml" <<Y
name: wf
rate_hz: 1000
blocks:
  - { name: a, plugin: $P/twhole.so, params: { fail_at: 50 }, ard: { in: f.z, out: f.a } }
  - { name: b, plugin: $P/twhole.so, ard: { in: f.a, out: f.b } }
  - { name: s, plugin: $P/tsink.so, params: { file: $T/fb.txt }, ard: { in: f.b, ack: f.ack } }
Y
"$ARDRUN" --ticks 100 "$T/f.yaml" 2>"$T/f.log" || fail "failing group: $(cat "$T/f.log")"
grep -q "block 'a' (twhole) failed and is stopped.*step 50: told to fail here" "$T/f.log" &&
    ok "the failing writer is reported" || fail "no failure reported: $(cat "$T/f.log")"
# b's packets 1..49 read a's packet of the same tick; from 50 on a's packet 49, whole
bad=$(/usr/bin/python3 -c '
import sys
for line in open(sys.argv[1]):
    f = line.split(); k = int(f[1]); x = [float.fromhex(v) for v in f[2:]]
    if x[0] != min(k, 49) or x[1] != 1.0 or x[2:] != [float(k * 8 + i) for i in range(2, 8)]:
        print(line.strip())' "$T/fb.txt" | head -n3)
n=$(wc -l <"$T/fb.txt")
[ "$n" = 100 ] && [ -z "$bad" ] && ok "after a's failed step 50 its reader keeps packet 49 (whole) to the end; nothing of the failed step reached it" ||
    fail "failed step, no reader outside: $n lines, bad: $bad"
show_ok f.a 49 -1 >/dev/null && ok "f.a holds a's last successful packet 49" || fail "f.a: $(show_ok f.a 49 -1)"

rm -f "$T/fa.txt"
"$ARDRUN" --block "$P/tsink.so" --param file="$T/fa.txt" --trigger in --ard in=g.a \
    --ard ack=g.oack 2>"$T/fasink.log" &
sink=$!
pids+=("$sink")
for _ in $(seq 100); do
    "$ARD_TOOL" list 2>/dev/null | grep -Eq '^g\.a .* - +1 ' && break
    sleep 0.05
done
sed 's/f\./g./g; s/fb\.txt/gb.txt/; s/name: wf/name: wg/' "$T/f.yaml" >"$T/g.yaml"
"$ARDRUN" --ticks 100 "$T/g.yaml" 2>"$T/g.log" || fail "failing group: $(cat "$T/g.log")"
sleep 0.2
kill "$sink" 2>/dev/null
wait "$sink" 2>/dev/null
# the outside reader of g.a: packets 1..49 of a (x[0] = -1: a reads nothing), none after
bad=$(/usr/bin/python3 -c '
import sys
ks = []
for line in open(sys.argv[1]):
    f = line.split(); k = int(f[1]); x = [float.fromhex(v) for v in f[2:]]
    if x[0] != -1 or x[1] != 1.0 or x[2:] != [float(k * 8 + i) for i in range(2, 8)]:
        print(line.strip())
    ks.append(k)
if len(ks) < 25 or ks[-1] != 49 or any(a >= b for a, b in zip(ks, ks[1:])):
    print(len(ks), "packets", ks[:3], ks[-3:])' "$T/fa.txt" | head -n3)
bn=$(wc -l <"$T/gb.txt")
[ -z "$bad" ] && [ "$(seq_of g.a)" = 49 ] && ok "with a reader outside: a published exactly its 49 successful packets (seq 49), the reader got them whole up to 49, nothing of the failed step" ||
    fail "failed step, reader outside: seq $(seq_of g.a): $bad"
/usr/bin/python3 -c '
import sys
for line in open(sys.argv[1]):
    f = line.split(); k = int(f[1]); x = [float.fromhex(v) for v in f[2:]]
    assert x[0] == min(k, 49) and x[1] == 1.0, line' "$T/gb.txt" 2>/dev/null && [ "$bn" = 100 ] &&
    ok "with a reader outside: the reader of the thread keeps packet 49 too" ||
    fail "with a reader outside, reader of the thread: $(tail -n2 "$T/gb.txt")"
show_ok g.a 49 -1 >/dev/null && ok "g.a holds a's last successful packet 49" || fail "g.a: $(show_ok g.a 49 -1)"

# -- across rate threads: the writer's slot is loaned and, for a whole port, not copied --
cat >"$T/m.yaml" <<Y
name: wm
rate_hz: 1000
rates:
  - { name: fast, divide: 1 }
  - { name: slow, divide: 4 }
blocks:
  - { name: a, plugin: $P/twhole.so, rate: fast, params: { fail_at: 200 }, ard: { in: m.z, out: m.a } }
  - { name: b, plugin: $P/twhole.so, rate: slow, ard: { in: m.a, out: m.b } }
  - { name: s, plugin: $P/tsink.so, rate: slow, params: { file: $T/mb.txt }, ard: { in: m.b, ack: m.ack } }
Y
"$ARDRUN" --ticks 400 "$T/m.yaml" 2>"$T/m.log" || fail "two rates: $(cat "$T/m.log")"
bad=$(/usr/bin/python3 -c '
import sys
prev = -1  # b may step before a sent anything (x[0] = -1): another thread
for line in open(sys.argv[1]):
    f = line.split(); k = int(f[1]); x = [float.fromhex(v) for v in f[2:]]
    if x[1] != 1.0 or not (prev <= x[0] <= 199) or x[2:] != [float(k * 8 + i) for i in range(2, 8)]:
        print(line.strip())
    prev = x[0]
if prev != 199: print("last packet of a seen:", prev)' "$T/mb.txt" | head -n3)
n=$(wc -l <"$T/mb.txt")
[ "$n" = 100 ] && [ -z "$bad" ] && ok "another rate thread reads whole packets of a, up to its last successful one (199)" ||
    fail "two rates: $n lines, bad: $bad"
show_ok m.a 199 -1 >/dev/null && ok "m.a holds a's last successful packet 199" || fail "m.a: $(show_ok m.a 199 -1)"

# -- as its own process: the same packets --
"$ARDRUN" --block "$P/tsink.so" --param file="$T/s.txt" --trigger in --ard in=s.b \
    --ard ack=s.ack 2>"$T/ssink.log" &
sink=$!
pids+=("$sink")
"$ARDRUN" --block "$P/twhole.so" --name b --trigger in --ard in=s.a --ard out=s.b 2>"$T/sb.log" &
pb=$!
pids+=("$pb")
for _ in $(seq 100); do
    "$ARD_TOOL" list 2>/dev/null | grep -Eq '^s\.a .* - +1 ' &&
        "$ARD_TOOL" list 2>/dev/null | grep -Eq '^s\.b .* +1 +1 ' && break
    sleep 0.05
done
"$ARDRUN" --block "$P/twhole.so" --name a --rate 50 --ard in=s.z --ard out=s.a 2>"$T/sa.log" &
pa=$!
pids+=("$pa")
for _ in $(seq 100); do
    [ "$(wc -l <"$T/s.txt" 2>/dev/null || echo 0)" -ge 50 ] && break
    sleep 0.05
done
kill "$pa" 2>/dev/null
wait "$pa" 2>/dev/null
sleep 0.2
kill "$pb" "$sink" 2>/dev/null
wait "$pb" "$sink" 2>/dev/null
# b as a process steps when a's packet arrives: b's packet k reads a's packet k, or a newer one
# when b was late (lines 1..n)
n=$(wc -l <"$T/s.txt")
r=$(check "$T/s.txt" "$(tail -n1 "$T/s.txt" | cut -d' ' -f2)" 40 newer) && ok "as processes (--block): $n packets, b's packet k read a's packet k or a newer one, each whole" ||
    fail "as processes: $n lines: $r"

# -- reload of a block with a whole port: the same ports and flags load, other flags are refused --
cp "$P/twhole.so" "$T/a.so"
cat >"$T/r.yaml" <<Y
name: wr
rate_hz: 500
blocks:
  - { name: a, plugin: $T/a.so, ard: { in: r.z, out: r.a } }
  - { name: b, plugin: $P/twhole.so, ard: { in: r.a, out: r.b } }
  - { name: s, plugin: $P/tsink.so, params: { file: $T/r.txt }, ard: { in: r.b, ack: r.ack } }
Y
"$ARDRUN" "$T/r.yaml" 2>"$T/r.log" &
grp=$!
pids+=("$grp")
for _ in $(seq 200); do "$ARDRUN" ctl wr status >/dev/null 2>&1 && break; sleep 0.05; done
sleep 0.2
out=$("$ARDRUN" ctl wr reload a) && ok "reload of a whole port's block: $out" || fail "reload: $out"
n1=$(wc -l <"$T/r.txt")
sleep 0.3
cp "$P/tkeep.so" "$T/a.so" # the same ports, without ARD_PORT_WHOLE
expect 104 "port 'out' differs: running flags 0x1, new build flags 0x0" -- "$ARDRUN" ctl wr reload a
sleep 0.2
kill -TERM "$grp"
wait "$grp" || fail "reload group: $(cat "$T/r.log")"
# b read whole packets of a before and after the reload (x[1] = 1), and kept getting new ones
bad=$(/usr/bin/python3 -c '
import sys
for line in open(sys.argv[1]):
    f = line.split(); k = int(f[1]); x = [float.fromhex(v) for v in f[2:]]
    if x[1] != 1.0 or x[2:] != [float(k * 8 + i) for i in range(2, 8)]:
        print(line.strip())' "$T/r.txt" | head -n3)
n2=$(wc -l <"$T/r.txt")
[ -z "$bad" ] && [ "$n2" -gt $((n1 + 100)) ] && [ "$(tail -n1 "$T/r.txt" | cut -d' ' -f3)" != -0x1p+0 ] &&
    ok "after the reload b still reads a's packets, whole ($n1 -> $n2 packets)" ||
    fail "after reload: $n1 -> $n2 packets, bad: $bad"

# -- API 1 plugins, unknown flags --
A1=$P/api1 # tests/ardrun/CMakeLists.txt
"$ARDRUN" --describe "$A1/tkeep.so" 2>&1 | grep -q "(block API 1)" &&
    ok "the plugins of api1/ are built against API 1" || fail "api1: $("$ARDRUN" --describe "$A1/tkeep.so" 2>&1)"
"$ARDRUN" --describe "$P/twhole.so" 2>&1 | grep -Eq "port +out +out +72 +u64 f64\[8\] +whole" &&
    ok "--describe shows the whole port" || fail "describe: $("$ARDRUN" --describe "$P/twhole.so" 2>&1)"
cat >"$T/bad.yaml" <<Y
name: wbad
rate_hz: 100
blocks:
  - { name: x, plugin: $P/twhole_badflag.so, ard: { in: b.z, out: b.x } }
Y
expect 101 "block 'x': plugin '$P/twhole_badflag.so': port 'out' has unknown flag bit 0x8" -- "$ARDRUN" "$T/bad.yaml"
expect 101 "port 'out' has unknown flag bit 0x8" -- "$ARDRUN" --block "$P/twhole_badflag.so" --rate 10
sed -i 's/twhole_badflag/twhole_inflag/' "$T/bad.yaml"
expect 101 "block 'x': plugin '$P/twhole_inflag.so': port 'in' is an IN port but declares ARD_PORT_WHOLE" -- "$ARDRUN" "$T/bad.yaml"
finish
