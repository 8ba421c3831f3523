#!/usr/bin/env bash
# A full disk while recording (a 1 MiB tmpfs): ard record says so (naming the file and the
# cause), exits 111, and what was written stays readable (ard info accepts it, with the
# warning of a file cut short, and reads its messages), and the recorder's final summary
# gives what the file holds (packets taken but lost with the write error counted apart).
# Needs root (mount); skipped otherwise.
TEST_NAME=full
source "$(dirname "$0")/common.sh"
: "${TWRITER:?set TWRITER}"
[ "$(id -u)" = 0 ] || { echo "SKIP: needs root to mount a tmpfs" >&2; exit 77; }
mkdir "$T/small"
mount -t tmpfs -o size=1m tmpfs "$T/small" || { echo "SKIP: cannot mount tmpfs" >&2; exit 77; }
trap 'umount "$T/small" 2>/dev/null || true; cleanup' EXIT
"$TWRITER" big opaque:4096 1000 30 >/dev/null &
PIDS+=($!)
wait_for "$ARD" show big
rc=0
timeout 60 "$ARD" record big -o "$T/small/full.mcap" --chunk-size 64 >"$T/out" 2>"$T/err" || rc=$?
[ "$rc" = 111 ] || fail "ard record on a full disk exited $rc, expected 111: $(cat "$T/err")"
grep -q "No space left on device" "$T/err" || fail "no 'No space left' message: $(cat "$T/err")"
grep -q "full.mcap" "$T/err" || fail "the message does not name the file: $(cat "$T/err")"
"$ARD" info "$T/small/full.mcap" >"$T/info" 2>"$T/info.err" ||
    fail "ard info refused the file of a full disk: $(cat "$T/info.err")"
grep -q "cut short" "$T/info.err" || fail "no cut-short warning: $(cat "$T/info.err")"
n=$(awk '$1 == "big" { print $3 }' "$T/info")
[ "$n" -gt 100 ] || fail "only $n messages readable after the disk filled"
said=$(recorded big "$T/err")
[ "$said" = "$n" ] || fail "the summary says recorded $said, the file holds $n: $(tail -3 "$T/err")"
echo "ok: full disk reported (exit 111), $n messages readable, as the summary says"
