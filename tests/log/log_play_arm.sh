#!/usr/bin/env bash
# ard play: record the running arm example (arm.state 1 kHz, arm.cmd 1 kHz, arm.ref 200 Hz)
# for 2 s, stop it, replay the file into another domain and record the replay there. The
# replayed stream must equal the recording: per connection the same packets (values and
# realtime stamps, in order, none lost) and the same relative timing: every packet arrives
# within 100 ms (the stated tolerance: a shared 2-CPU machine showed up to 30 ms) of its recorded offset from
# the first one. Also --rate 4 (four times faster), --remap, --connections, --start/--end.
TEST_NAME=play
source "$(dirname "$0")/common.sh"
: "${ARDSTART:?}" "${ARDKILL:?}" "${ARM_BIN:?}"
mkdir -p "$T/bin"
ln -s "$ARDSTART" "$T/bin/ardstart"
ln -s "$ARDKILL" "$T/bin/ardkill"
export PATH="$T/bin:$PATH" ARD_BOOKS_DIR="$T/books" ARM_BIN
D2="${ARD_DOMAIN}_r"
stop() {
    "$ARDKILL" -q -g 0.5 >/dev/null 2>&1 || true
    rm -f /dev/shm/ard."$D2".* 2>/dev/null || true
    cleanup
}
trap stop EXIT

"$SRCDIR/examples/arm/master.sh" >"$T/master.out" 2>&1 || fail "arm did not start: $(cat "$T/master.out")"
wait_for "$ARD" show arm.cmd
"$ARD" record 'arm.*' -o "$T/orig.mcap" --duration 2 2>"$T/rec.err" || fail "record: $(cat "$T/rec.err")"
"$ARDKILL" -q -g 0.5 >/dev/null 2>&1 || true
for c in arm.state arm.cmd arm.ref; do
    [ "$(missed $c "$T/rec.err")" = 0 ] || echo "note: the recorder missed packets of $c" >&2
done

# Create the connections in the other domain (first packets only), record, then replay.
"$ARD" --domain "$D2" play "$T/orig.mcap" --end 0 2>"$T/prime.err" || fail "prime: $(cat "$T/prime.err")"
"$ARD" --domain "$D2" record 'arm.*' -o "$T/replay.mcap" 2>"$T/rec2.err" &
rec=$!
sleep 0.5
"$ARD" --domain "$D2" play "$T/orig.mcap" 2>"$T/play.err" || fail "play: $(cat "$T/play.err")"
sleep 0.3
kill -INT $rec
wait $rec || fail "record of the replay: $(cat "$T/rec2.err")"

# compare CONN RATE: values and stamps equal, timing within 50 ms (scaled by RATE).
compare() {
    local c=$1 rate=$2 file=$3
    local f
    f=$("$ARD" info "$file" | awk -v c="$c" '$1 == c { for (i = 2; i <= NF; i++) if ($i ~ /:/) { split($i, a, ":"); print a[1]; exit } }')
    [ -n "$f" ] || fail "$c: not in $file"
    "$ARD" export "$T/orig.mcap" --csv --field "$c:$f" >"$T/a.csv"
    "$ARD" export "$file" --csv --field "$c:$f" >"$T/b.csv"
    # Replay seq s is recorded packet s-P, P the packets the priming run played (those of the
    # first log time). A packet the second recorder missed (it says how many) is absent; every
    # other one equal.
    local lost primed
    lost=$(missed "$c" "$T/rec2.err")
    primed=$(awk -v c="$c" '$1 == c { print $3 }' "$T/prime.err")
    awk -F, -v rate="$rate" -v c="$c" -v lost="$lost" -v P="$primed" '
        NR == FNR { if (FNR > 1) { n++; real[n] = $2; val[n] = substr($0, index($0, $4)) } next }
        FNR == 1 || $3 <= P { next }
        { m = $3 - P; got++
          if (!t0set) { t0 = $1 - (real[m] - real[1]) / rate; t0set = 1 }
          if ($2 != real[m]) { printf "%s packet %d: stamp %s, recorded %s\n", c, m, $2, real[m]; bad = 1; exit }
          v = substr($0, index($0, $4))
          if (v != val[m]) { printf "%s packet %d: values differ\n", c, m; bad = 1; exit }
          d = ($1 - t0) - (real[m] - real[1]) / rate
          if (d < 0) d = -d
          if (d > 0.1) { printf "%s packet %d: %.4f s off its recorded timing\n", c, m, d; bad = 1; exit }
          if (d > worst) worst = d }
        END { if (!bad && (m != n || got + lost != n)) {
                  printf "%s: %d of %d packets replayed (last %d), %d missed\n", c, got, n, m, lost; bad = 1 }
              if (!bad) printf "%s: %d packets equal (%d missed by the recorder), worst timing error %.2f ms\n", c, got, lost, worst * 1000
              exit bad }' "$T/a.csv" "$T/b.csv" || fail "replay of $c differs"
}
for c in arm.state arm.cmd arm.ref; do compare $c 1 "$T/replay.mcap"; done

# Faster, remapped, one connection, a window.
rm -f /dev/shm/ard."$D2".*
"$ARD" --domain "$D2" play "$T/orig.mcap" --connections arm.ref --remap arm.ref=ref2 --end 0 \
    2>"$T/prime4.err"
P4=$(awk '$1 == "arm.ref" { print $3 }' "$T/prime4.err")
"$ARD" --domain "$D2" record ref2 -o "$T/fast.mcap" 2>"$T/rec3.err" &
rec=$!
sleep 0.5
"$ARD" --domain "$D2" play "$T/orig.mcap" --rate 4 --connections arm.ref --remap arm.ref=ref2 \
    2>"$T/play3.err" || fail "play --rate 4: $(cat "$T/play3.err")"
sleep 0.3
kill -INT $rec
wait $rec || fail "record of the fast replay"
"$ARD" info "$T/fast.mcap" | grep -q '^ref2 ' || fail "--remap: no ref2 in the replay"
"$ARD" info "$T/fast.mcap" | grep -q '^arm' && fail "--connections: other connections were played"
# Same packets, at four times the speed.
"$ARD" export "$T/fast.mcap" --csv --field ref2:q >"$T/b4.csv"
"$ARD" export "$T/orig.mcap" --csv --field arm.ref:q >"$T/a4.csv"
awk -F, -v P="$P4" 'NR == FNR { if (FNR > 1) { n++; real[n] = $2 } next }
    FNR == 1 || $3 <= P { next }
    { m = $3 - P; if (!t0set) { t0 = $1 - (real[m] - real[1]) / 4; t0set = 1 }
      d = ($1 - t0) - (real[m] - real[1]) / 4; if (d < 0) d = -d
      if ($2 != real[m] || d > 0.1) { print "packet " m " differs or is off by " d; exit 1 } }
    END { if (m != n) { print "last packet " m " of " n; exit 1 } }' "$T/a4.csv" "$T/b4.csv" ||
    fail "--rate 4 replay differs"
# --start/--end: a one-second window holds about a second of arm.state.
rm -f /dev/shm/ard."$D2".*
"$ARD" --domain "$D2" play "$T/orig.mcap" --start 0.5 --end 1.5 --connections arm.state 2>"$T/win.err"
n=$(awk '$1 == "arm.state" { print $3 }' "$T/win.err")
[ "$n" -gt 800 ] && [ "$n" -le 1001 ] || fail "--start 0.5 --end 1.5 played $n packets of arm.state"
# --loop: the first 0.2 s of arm.ref (about 40 packets) again and again until SIGINT.
rm -f /dev/shm/ard."$D2".*
rc=0
timeout --preserve-status -s INT 1.5 "$ARD" --domain "$D2" play "$T/orig.mcap" --loop --end 0.2 --connections arm.ref \
    2>"$T/loop.err" || rc=$?
[ "$rc" = 0 ] || fail "play --loop ended with $rc on SIGINT: $(cat "$T/loop.err")"
n=$(awk '$1 == "arm.ref" { print $3 }' "$T/loop.err")
one=$("$ARD" export "$T/orig.mcap" --csv --field arm.ref:q | awk -F, 'NR == 2 { t0 = $1 } NR > 1 && $1 - t0 <= 0.2 { n++ } END { print n }')
[ "$n" -gt $((2 * one)) ] || fail "--loop played $n packets in 1.5 s of a $one-packet window"
echo "ok: replay equals the recording"
