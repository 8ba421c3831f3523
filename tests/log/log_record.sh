#!/usr/bin/env bash
# ard record's options: --every and --max-rate thin each connection; --split-size,
# --split-duration and SIGHUP start the next file (each one complete, together holding every
# packet once); SIGTERM closes the file cleanly, SIGINT after one last read of every connection; globs choose connections; --stats reports
# live; an existing file is never replaced without --overwrite; usage errors exit 100.
TEST_NAME=rec
source "$(dirname "$0")/common.sh"
: "${TLOGW:?set TLOGW}"
count() { "$ARD" info "$1" | awk -v c="$2" '$1 == c { print $3 }'; }

"$TLOGW" all all_a 1000 100000 >/dev/null &
PIDS+=($!)
"$TLOGW" opaque opaque_b 1000 100000 >/dev/null &
PIDS+=($!)
"$TLOGW" opaque other 1000 100000 >/dev/null &
PIDS+=($!)
wait_for "$ARD" show other

# --every 10 over 1000 packets: 100 of each connection, seq 1, 11, 21, ... apart by 10.
"$ARD" record 'all_*' opaque_b -o "$T/every.mcap" --every 10 -n 200 2>"$T/err" || fail "every: $(cat "$T/err")"
a=$(count "$T/every.mcap" all_a) b=$(count "$T/every.mcap" opaque_b)
[ $((a + b)) -ge 200 ] && [ $((a + b)) -le 202 ] || fail "--every 10 -n 200: $a + $b packets"
"$ARD" info "$T/every.mcap" | grep -q '^other ' && fail "glob: 'other' was recorded"
"$ARD" export "$T/every.mcap" --csv --field all_a:b >"$T/every.csv"
awk -F, 'NR > 1 && $3 % 10 != 0 { print "seq " $3; exit 1 }' "$T/every.csv" ||
    fail "--every 10 recorded a sequence number that 10 does not divide"

# --max-rate 50 on 1 kHz: about 50 per second (2 s: 80..101).
"$ARD" record all_a -o "$T/rate.mcap" --max-rate 50 --duration 2 2>"$T/err" || fail "max-rate"
n=$(count "$T/rate.mcap" all_a)
[ "$n" -ge 80 ] && [ "$n" -le 101 ] || fail "--max-rate 50 for 2 s recorded $n packets"

# Splits: by duration (0.5 s: the fourth file), SIGHUP (the fifth), then SIGTERM. All files
# complete; the sequence numbers of all_a run on without gap or repeat from file to file.
"$ARD" record all_a -o "$T/split.mcap" --split-duration 0.5 --stats 2>"$T/split.err" &
rec=$!
wait_for test -e "$T/split_3.mcap"
kill -HUP $rec
wait_for test -e "$T/split_4.mcap"
sleep 0.3
kill -TERM $rec
wait $rec || fail "record with splits exited $?: $(cat "$T/split.err")"
grep -q "recorded" "$T/split.err" || fail "--stats printed nothing"
files=("$T/split.mcap" $(ls -v "$T"/split_*.mcap))
[ ${#files[@]} -ge 5 ] || fail "only ${#files[@]} files after three 0.5 s splits and a SIGHUP"
: >"$T/all.csv"
for f in "${files[@]}"; do
    "$ARD" info "$f" >/dev/null 2>"$T/info.err" || fail "$f: $(cat "$T/info.err")"
    [ -s "$T/info.err" ] && fail "$f is not complete: $(cat "$T/info.err")"
    "$ARD" export "$f" --csv --field b | tail -n +2 >>"$T/all.csv"
done
# A busy host may delay the recorder past the ring (8 packets here): every gap must be one the
# recorder counted as missed.
lost=$(missed all_a "$T/split.err")
awk -F, -v lost="$lost" 'NR > 1 && $3 <= prev { print "seq " prev " then " $3; exit 1 }
    NR > 1 { gaps += $3 - prev - 1 } { prev = $3 }
    END { if (gaps != lost) { print gaps " packets absent, " lost " counted missed"; exit 1 } }' \
    "$T/all.csv" || fail "split files do not hold every packet exactly once"

# Size split: 1 MB files.
"$ARD" record opaque_b all_a -o "$T/size.mcap" --split-size 1 --chunk-size 64 --duration 3 2>/dev/null ||
    fail "split-size"
[ -f "$T/size_1.mcap" ] || true # 3 s of ~130 KB/s may stay below 1 MB: only check sizes
for f in "$T"/size*.mcap; do
    s=$(stat -c %s "$f")
    [ "$s" -lt 1300000 ] || fail "$f is $s bytes with --split-size 1"
done

# A writer restarting on a re-created object (its sequence starts again) is followed: the
# file holds the second writer's packets after the first's, up to its last one, and each of
# the 400 packets is in the file or counted missed, also those the first object still held
# unread when the second appeared: the recorder is stopped (SIGSTOP) from the middle of the
# first writer's run to the end of the second's. Its --stats say when it has seen them all.
"$ARD" record re -o "$T/re.mcap" --stats 2>"$T/re.err" &
rec=$!
sleep 0.3
"$TLOGW" all re 100 200 >"$T/w1" &
wpid=$!
wait_for awk '$1 == "re" && $2 == "recorded" && $3 > 0 { f = 1 } END { exit !f }' "$T/re.err"
kill -STOP $rec
wait_for grep -q sent "$T/w1"
kill -9 $wpid
wait $wpid 2>/dev/null || true
rm -f /dev/shm/ard."$ARD_DOMAIN".re
"$TLOGW" all re 500 200 >"$T/w2" &
PIDS+=($!)
wait_for grep -q sent "$T/w2"
kill -CONT $rec
for i in $(seq 200); do
    awk '$1 == "re" && $2 == "recorded" && $3 + $5 == 400 { f = 1 } END { exit !f }' \
        "$T/re.err" && break
    sleep 0.05
done
kill -INT $rec
wait $rec || fail "record across a re-created object: $(cat "$T/re.err")"
"$ARD" export "$T/re.mcap" --csv --field b >"$T/re.csv"
r=$(recorded re "$T/re.err") m=$(missed re "$T/re.err")
awk -F, -v r="$r" -v m="$m" 'NR > 2 && $3 <= prev { restarts++ } NR > 1 { prev = $3; n++ }
    END { if (restarts != 1 || prev != 200 || n != r || n + m != 400) {
        print restarts + 0 " restarts, " n " rows ending on " prev ", " m " missed of 400"
        exit 1 } }' "$T/re.csv" || fail "the re-created connection was not followed"
echo "re-created connection: $r recorded, $m missed"

code() { local rc=0; "$@" >/dev/null 2>"$T/u.err" || rc=$?; echo $rc; }

# A stop by signal reads every connection once more: a recorder polling once a second (its next
# round long after the signal) still holds a connection made and written after its last look,
# up to its last packet.
"$ARD" record lastp -o "$T/last.mcap" --poll-us 1000000 2>"$T/last.err" &
rec=$!
wait_for grep -q "matches 'lastp' (yet)" "$T/last.err"
"$TLOGW" live lastp 1000 20 >"$T/lastw" &
PIDS+=($!)
wait_for grep -q sent "$T/lastw"
kill -INT $rec
wait $rec || fail "record stopped before its next round: exit $?: $(cat "$T/last.err")"
"$TLOGW" check "$T/last.mcap" lastp >"$T/last.check" || fail "reading last.mcap: $(cat "$T/last.check")"
read -r _ _ _ _ _ last _ <"$T/last.check"
[ "$last" = 20 ] || fail "the last packet before the signal is not in the file: $(cat "$T/last.check")"

# A recording is never replaced without --overwrite: an existing -o FILE is refused (100,
# named, the file untouched); at a split an existing FILE_N.mcap is passed over, the next
# number taken; --overwrite replaces.
before=$(md5sum <"$T/every.mcap")
[ "$(code "$ARD" record all_a -o "$T/every.mcap" -n 5)" = 100 ] || fail "existing -o FILE: not 100"
grep -q "every.mcap' exists: not replaced" "$T/u.err" || fail "existing -o FILE not named: $(cat "$T/u.err")"
[ "$(md5sum <"$T/every.mcap")" = "$before" ] || fail "a refused recorder changed the existing file"
echo "an earlier recording" >"$T/keep_1.mcap"
"$ARD" record all_a -o "$T/keep.mcap" --stats 2>"$T/keep.err" &
rec=$!
wait_for awk '$1 == "all_a" && $2 == "recorded" && $3 > 0 { f = 1 } END { exit !f }' "$T/keep.err"
kill -HUP $rec
wait_for grep -q "keep_2.mcap" "$T/keep.err"
kill -TERM $rec
wait $rec || fail "record passing over an existing split name: $(cat "$T/keep.err")"
[ "$(cat "$T/keep_1.mcap")" = "an earlier recording" ] || fail "the split replaced an existing keep_1.mcap"
grep -q "keep_1.mcap' exists: not replaced" "$T/keep.err" || fail "the passed-over name was not said"
"$ARD" info "$T/keep_2.mcap" >/dev/null || fail "the split's file keep_2.mcap is not a whole recording"
"$ARD" record all_a -o "$T/every.mcap" -n 5 --overwrite 2>"$T/u.err" || fail "--overwrite: $(cat "$T/u.err")"
[ "$(count "$T/every.mcap" all_a)" -le 6 ] || fail "--overwrite did not replace the file"

# Usage.
[ "$(code "$ARD" record x --exclude)" = 100 ] || fail "--exclude without a value: not 100"
[ "$(code "$ARD" record -o "$T/u.mcap" --every 0)" = 100 ] || fail "--every 0: not 100"
[ "$(code "$ARD" record -o "$T/u.mcap" --compress lz4)" = 100 ] || fail "--compress lz4: not 100"
[ "$(code "$ARD" record -o /nonexistent/dir/x.mcap)" = 111 ] || fail "bad path: not 111"
grep -q "/nonexistent/dir/x.mcap" "$T/u.err" || fail "bad path not named: $(cat "$T/u.err")"
echo "ok: every, max-rate, splits, signals, no replacing, usage"
