#!/usr/bin/env bash
# The reader accepts what MCAP allows and checks what MCAP lets it check, on files written
# from the specification by tmcapgen.c (not by ardnet's writer):
# - lz4 chunks (LZ4 frames) are read: `ard info` counts every message of another program's
#   file, `ard export` decodes an ardnet channel stored in an lz4 chunk;
# - log and publish times of 2^63 and more are kept (the export prints them unsigned);
# - a wrong data section CRC (Data End) or attachment CRC is refused (exit 3, naming it), and so
#   is an lz4 frame cut short or larger than recorded (several frames in a row are fine);
# - `ard export --csv` on a file without ardnet channels says so, lists them and exits 3;
#   on a file of several connections without --field it lists them.
# Skipped (77) when tmcapgen was not built (no liblz4).
TEST_NAME=foreign
source "$(dirname "$0")/common.sh"
[ -n "${TMCAPGEN:-}" ] || { echo "SKIP: tmcapgen not built (liblz4-dev missing)" >&2; exit 77; }
for k in foreign ardnet bad-data-crc bad-attachment-crc; do
    "$TMCAPGEN" "$T/$k.mcap" $k || fail "tmcapgen $k"
done

# Another program's file: 7 messages in two lz4 chunks, two channels named /pose.
"$ARD" info "$T/foreign.mcap" --json >"$T/info.json" 2>"$T/info.err" ||
    fail "ard info refused the foreign file: $(cat "$T/info.err")"
grep -q '"messages":7,' "$T/info.json" || fail "not 7 messages: $(cat "$T/info.json")"
grep -q '"compression":"lz4"' "$T/info.json" || fail "compression not lz4: $(cat "$T/info.json")"
[ "$(grep -o '"name":"/pose"' "$T/info.json" | wc -l)" = 2 ] ||
    fail "the two /pose channels are not both listed: $(cat "$T/info.json")"
grep -q '"end_ns":18446744073709551615' "$T/info.json" ||
    fail "the last log time (2^64 - 1) is not kept: $(cat "$T/info.json")"

rc=0
"$ARD" export "$T/foreign.mcap" --csv >"$T/f.csv" 2>"$T/f.err" || rc=$?
[ "$rc" = 3 ] || fail "export of a file without ardnet channels exited $rc: $(cat "$T/f.err")"
grep -q "no channel written by ardnet" "$T/f.err" || fail "no explanation: $(cat "$T/f.err")"
grep -q "/pose (not ardnet: json), /pose (not ardnet: json), /cam (not ardnet: protobuf)" \
    "$T/f.err" || fail "the channels are not listed: $(cat "$T/f.err")"
[ -s "$T/f.csv" ] && fail "an export that failed wrote CSV: $(head -3 "$T/f.csv")"

# An ardnet channel in an lz4 chunk, times up to 2^63 + 49 ms.
"$ARD" export "$T/ardnet.mcap" --csv >"$T/a.csv" 2>"$T/a.err" ||
    fail "export of the lz4 ardnet file failed: $(cat "$T/a.err")"
[ "$(wc -l <"$T/a.csv")" = 51 ] || fail "expected a header and 50 rows: $(wc -l <"$T/a.csv")"
head -1 "$T/a.csv" | grep -qx "time,real_time,seq,x,n" || fail "header: $(head -1 "$T/a.csv")"
grep -q "^[0-9.]*,9223372036.903775808,50,24.5,49$" "$T/a.csv" ||
    fail "row 50 (publish time 2^63 + 49 ms) wrong: $(tail -1 "$T/a.csv")"
grep -q ",1700000000.000000000,1,0,0$" "$T/a.csv" || fail "row 1 wrong: $(sed -n 2p "$T/a.csv")"

# Several connections without --field: listed.
"$TLOGW" live one 1000 3 >"$T/w1" &
PIDS+=($!)
"$TLOGW" live two 1000 3 >"$T/w2" &
PIDS+=($!)
wait_for grep -q sent "$T/w1"
wait_for grep -q sent "$T/w2"
"$ARD" record one two -o "$T/two.mcap" --duration 0.3 2>"$T/rec.err" || fail "record: $(cat "$T/rec.err")"
rc=0
"$ARD" export "$T/two.mcap" --csv -o "$T/x.csv" >/dev/null 2>"$T/two.err" || rc=$?
[ "$rc" = 100 ] || fail "export of two connections into one -o file without --field exited $rc"
grep -q "2 connections (one, two)" "$T/two.err" || fail "connections not listed: $(cat "$T/two.err")"

# lz4: several frames one after the other are one chunk; a frame cut short or holding more
# than the chunk's recorded size is refused.
"$TMCAPGEN" "$T/two.mcap" lz4-two-frames || fail "tmcapgen lz4-two-frames"
"$ARD" export "$T/two.mcap" --csv >"$T/two.csv" 2>"$T/two.err" || fail "two frames: $(cat "$T/two.err")"
cmp -s "$T/two.csv" "$T/a.csv" || fail "two frames: not the same rows as one frame"
for k in lz4-cut:"ends inside its frame" lz4-bigger:"more than its recorded size"; do
    f=${k%%:*} what=${k#*:}
    "$TMCAPGEN" "$T/$f.mcap" "$f" || fail "tmcapgen $f"
    rc=0
    "$ARD" info "$T/$f.mcap" >/dev/null 2>"$T/$f.err" || rc=$?
    [ "$rc" = 3 ] || fail "$f: ard info exited $rc: $(cat "$T/$f.err")"
    grep -q "$what" "$T/$f.err" || fail "$f: not '$what': $(cat "$T/$f.err")"
done

# CRCs that do not match are refused.
for k in bad-data-crc:"data section CRC" bad-attachment-crc:"attachment CRC"; do
    f=${k%%:*} what=${k#*:}
    rc=0
    "$ARD" info "$T/$f.mcap" >/dev/null 2>"$T/$f.err" || rc=$?
    [ "$rc" = 3 ] || fail "$f: ard info exited $rc: $(cat "$T/$f.err")"
    grep -q "$what" "$T/$f.err" || fail "$f: the message does not name the $what: $(cat "$T/$f.err")"
done
echo "ok: lz4 chunks, shared topics, times >= 2^63, CRCs, export refusals"
