#!/usr/bin/env bash
# ard export and ard info on a recording of the known-value writers (tlogw.c): flattened
# columns named by the descriptor (arr[0], Big[1]), values exactly as sent, time columns in
# seconds; --resample HZ gives a grid of rows holding the latest values; --onto CONN the rows
# of CONN's messages; usage errors exit 100, unknown connections 1. ard info --json.
TEST_NAME=export
source "$(dirname "$0")/common.sh"
: "${TLOGW:?set TLOGW}"
"$ARD" record allx opaquex -o "$T/x.mcap" 2>"$T/rec.err" &
rec=$!
wait_for grep -q "matches 'opaquex' (yet)" "$T/rec.err"
"$TLOGW" all allx 200 200 >"$T/w1" &
PIDS+=($!)
"$TLOGW" opaque opaquex 100 100 >"$T/w2" &
PIDS+=($!)
wait_for grep -q sent "$T/w1"
wait_for grep -q sent "$T/w2"
sleep 0.2
kill -INT $rec
wait $rec || fail "record: $(cat "$T/rec.err")"

"$ARD" export "$T/x.mcap" --csv --field allx:arr,Big,g,h,x >"$T/a.csv" || fail "export"
head -1 "$T/a.csv" | grep -qx 'time,real_time,seq,arr\[0\],arr\[1\],arr\[2\],Big\[0\],Big\[1\],g,h,x' ||
    fail "header: $(head -1 "$T/a.csv")"
# Row of packet k: arr = (k, k+1, k+2) / 4, Big = (k, 65535), g = -k e10, h = k e15 + 1, x = k/2;
# real_time = 1.7e9 + k/1000 s.
awk -F, 'NR > 1 { k = $3; n++
    if ($4 != k * 0.25 || $5 != (k + 1) * 0.25 || $7 != k || $8 != 65535 || $11 != k * 0.5) { print "row " NR ": " $0; exit 1 }
    if ($9 != "-" k "0000000000" || $10 != sprintf("%d%015d", k, 1)) { print "64-bit values of row " NR ": " $9 " " $10; exit 1 }
    if ($2 != sprintf("1700000000.%03d000000", k) && k < 1000) { print "real_time " $2 " for k " k; exit 1 }
    if ($1 < prev) { print "time goes back at row " NR; exit 1 } prev = $1 }
    END { if (n < 150) { print n " rows"; exit 1 } }' "$T/a.csv" || fail "exported values differ from the sent ones"

# --resample 50: rows 20 ms apart, each with the latest x at or before its time.
"$ARD" export "$T/x.mcap" --csv --field allx:x,tick 2>/dev/null && fail "unknown field accepted"
"$ARD" export "$T/x.mcap" --csv --field allx:x --field allx:stamp --resample 50 >"$T/r.csv" || fail "resample"
head -1 "$T/r.csv" | grep -qx 'time,allx:x,allx:stamp' || fail "resample header: $(head -1 "$T/r.csv")"
awk -F, 'NR > 2 { d = $1 - prev; if (d < 0.0199999 || d > 0.0200001) { print "step " d " at row " NR; exit 1 } }
    NR > 1 { prev = $1; if ($2 != "" && $2 * 2 != substr($3, 11, 3) + 0) { print "row " NR " mixes packets"; exit 1 } }' \
    "$T/r.csv" || fail "--resample 50"
# as many rows as 20 ms steps fit between the first message and the last (about 1 s; longer
# when a busy host delayed the writer)
rows=$(($(wc -l <"$T/r.csv") - 1))
want=$(awk -F, 'NR == 2 { a = $1 } NR > 1 { b = $1 } END { printf "%d", (b - a) * 50 }' "$T/a.csv")
[ "$want" -ge 40 ] && [ "$rows" -ge $((want - 2)) ] && [ "$rows" -le $((want + 2)) ] ||
    fail "--resample 50 over $want steps of 20 ms between the first message and the last gave $rows rows"

# --onto: one row per allx message.
"$ARD" export "$T/x.mcap" --csv --field allx:b --onto allx >"$T/o.csv" || fail "onto"
[ $(($(wc -l <"$T/o.csv") - 1)) = "$(awk -F, 'NR > 1' "$T/a.csv" | wc -l)" ] || fail "--onto: row count"

code() { local rc=0; "$@" >/dev/null 2>"$T/u.err" || rc=$?; echo $rc; }
[ "$(code "$ARD" export "$T/x.mcap")" = 100 ] || fail "no --csv: not 100"
[ "$(code "$ARD" export "$T/x.mcap" --csv -o "$T/two.csv")" = 100 ] || fail "two connections, no field, one -o: not 100"
grep -q "choose with --field" "$T/u.err" || fail "message: $(cat "$T/u.err")"
[ "$(code "$ARD" export "$T/x.mcap" --csv --field nope:x)" = 1 ] || fail "unknown connection: not 1"
[ "$(code "$ARD" export "$T/x.mcap" --csv --field opaquex:data)" = 100 ] || fail "opaque: not 100"
[ "$(code "$ARD" export "$T/x.mcap" --csv --resample 10 --onto allx)" = 100 ] || fail "both: not 100"

"$ARD" info "$T/x.mcap" --json >"$T/i.json"
grep -q '"complete":true' "$T/i.json" || fail "info --json: $(cat "$T/i.json")"
grep -q '"name":"allx","type":"a:i8' "$T/i.json" || fail "info --json lacks allx"
echo "ok: export and info"
