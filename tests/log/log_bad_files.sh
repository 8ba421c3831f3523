#!/usr/bin/env bash
# Bad files given to ard info / export / play: a foreign file, a damaged chunk (bit flip in
# its records: CRC), a chunk length that runs past the end, a wrong index offset in the
# footer: refused with exit 3 and a message naming the file, the byte offset and the cause.
# A missing file: exit 1. Never a crash (the fuzzer covers the reader at large).
TEST_NAME=bad
source "$(dirname "$0")/common.sh"
: "${TLOGW:?set TLOGW}"
"$TLOGW" all allbad 1000 300 >"$T/w" &
PIDS+=($!)
wait_for grep -q sent "$T/w"
"$ARD" record allbad -o "$T/good.mcap" -n 1 2>/dev/null || fail "record"
"$ARD" record allbad -o "$T/good.mcap" --duration 0.2 --overwrite 2>/dev/null || fail "record"
"$ARD" info "$T/good.mcap" >/dev/null || fail "good file refused"

expect() { # CODE TEXT CMD...
    local code=$1 text=$2 rc=0
    shift 2
    "$@" >/dev/null 2>"$T/err" || rc=$?
    [ "$rc" = "$code" ] || fail "'$*' exited $rc, expected $code: $(cat "$T/err")"
    grep -qF -- "$text" "$T/err" || fail "'$*': message lacks '$text': $(cat "$T/err")"
}
printf 'PK\003\004 a zip, not a recording' >"$T/foreign.mcap"
for sub in info export play; do
    extra=()
    [ $sub = export ] && extra=(--csv)
    expect 3 "foreign.mcap: at offset 0: not an MCAP file" "$ARD" $sub "$T/foreign.mcap" "${extra[@]}"
done
expect 1 "nothere.mcap" "$ARD" info "$T/nothere.mcap"

# Offset of the first chunk record (opcode 0x06 after the metadata and channel records).
chunk=$(/usr/bin/python3 - "$T/good.mcap" <<'PY'
import struct, sys
b = open(sys.argv[1], 'rb').read()
i = 8
while i < len(b):
    op, n = b[i], struct.unpack_from('<Q', b, i + 1)[0]
    if op == 6:
        print(i); break
    i += 9 + n
PY
)
[ -n "$chunk" ] || fail "no chunk found in the good file"
flip() { # OFFSET: copy of good.mcap with the byte at OFFSET inverted
    cp "$T/good.mcap" "$T/bad.mcap"
    local v
    v=$(od -A n -t u1 -j "$1" -N 1 "$T/bad.mcap" | tr -d ' ')
    printf "$(printf '\\%03o' $((255 - v)))" | dd of="$T/bad.mcap" bs=1 seek="$1" conv=notrunc 2>/dev/null
}
flip $((chunk + 9 + 8 + 8 + 8 + 4 + 4 + 8 + 40)) # inside the chunk's records
expect 3 "at offset $chunk: chunk CRC does not match" "$ARD" info "$T/bad.mcap"
flip $((chunk + 8)) # high byte of the chunk's record length
expect 3 "at offset $chunk: record length runs past the end of the file" "$ARD" info "$T/bad.mcap"
flip $((chunk + 9 + 8 + 8 + 8 + 4 + 4 + 7)) # high byte of the records length
expect 3 "at offset $chunk: chunk records length disagrees" "$ARD" info "$T/bad.mcap"
size=$(stat -c %s "$T/good.mcap")
flip $((size - 8 - 4 - 8 - 1)) # footer's summary start
expect 3 "summary" "$ARD" info "$T/bad.mcap"
echo "ok: bad files refused with offset and cause"
