#!/bin/bash
# ard_shmfull.sh - a full /dev/shm (docs/reliability.md, "Resource exhausted"): in a private
# mount namespace with a 4 MiB tmpfs on /dev/shm, a writer, a reader, `ard show -f`,
# `ard record` and an ardnet route (with a second reader behind it) run while /dev/shm is
# filled to its last page. Then every new create (ard set, a block's ard_init, an ardnet
# output) fails naming the bytes needed and free, and leaves no object; every running process
# carries on delivering; a connection made sparse by hand is refused, named, by a view and by
# an attach, and kills nobody with SIGBUS. Freed, the same creates work. Root (mount); 77 else.
TEST_NAME=shmfull
[ "$(id -u)" = 0 ] || { echo "SKIP: needs root (a tmpfs in a mount namespace)" >&2; exit 77; }
: "${ARDNET:?set ARDNET}" "${TBLOCK:?set TBLOCK}"
if [ -z "${ARD_SHMFULL_NS:-}" ]; then
    exec unshare -m env ARD_SHMFULL_NS=1 bash "$0" "$@"
fi
mount -t tmpfs -o size=4m,mode=1777 tmpfs /dev/shm
. "$(dirname "$0")/common.sh"
TYPE="u64 u64 i64 u32[250]"
declare -A PID
PORT=$((20000 + (($$ + RANDOM) % 6000) * 2))

bg() { # bg NAME CMD...: in the background, its output in $T/NAME.out and .err
    local name=$1
    shift
    "$@" >"$T/$name.out" 2>"$T/$name.err" &
    PIDS+=($!)
    PID[$name]=$!
}
count() { "$ARD" list --json "$1" | python3 -c 'import json,sys; print(json.load(sys.stdin)[0]["count"])'; }
objects() { find /dev/shm -maxdepth 1 -name "ard.$ARD_DOMAIN.*" | sort; }
free_bytes() { python3 -c 'import os; s=os.statvfs("/dev/shm"); print(s.f_bavail*s.f_frsize)'; }
fill() { dd if=/dev/zero of="/dev/shm/filler$1" bs=4k 2>/dev/null || true; [ "$(free_bytes)" = 0 ] || fail "/dev/shm not full: $(free_bytes) bytes free"; }
# refused CMD...: CMD fails (not by a signal) naming the bytes needed and free, and leaves no object.
refused() {
    local before rc=0
    before=$(objects)
    "$@" >"$T/out" 2>"$T/err" || rc=$?
    [ "$rc" != 0 ] || fail "'$*' succeeded on a full /dev/shm"
    [ "$rc" -lt 128 ] || fail "'$*' was killed by signal $((rc - 128)): $(cat "$T/err")"
    grep -q "needs [0-9]* bytes of /dev/shm and [0-9]* bytes are free" "$T/err" ||
        fail "'$*' (exit $rc) does not name the bytes: $(cat "$T/err")"
    [ "$(objects)" = "$before" ] || fail "'$*' left objects behind: $(objects)"
    echo "refused as it should: $*: $(head -1 "$T/err")"
}

# The running net: writer -> src -> (reader, ard show -f, ard record, ardnet) -> dst -> reader.
"$ARD" set sp --size 65536 >/dev/null # made sparse later
bg pub "$TBLOCK" pub --ard data=src --rate 200 --count 1000000
for _ in $(seq 100); do [ -e "/dev/shm/ard.$ARD_DOMAIN.src" ] && break; sleep 0.05; done
bg B "$ARDNET" --in "udp://127.0.0.1:$PORT" --out dst --size 1024 --type "$TYPE" --conn-id 7 --from 127.0.0.1
bg A "$ARDNET" --in src --out "udp://127.0.0.1:$PORT" --conn-id 7
bg sub1 "$TBLOCK" sub --ard data=src --idle-ms 20000 --result "$T/sub1.result"
for _ in $(seq 100); do [ -e "/dev/shm/ard.$ARD_DOMAIN.dst" ] && break; sleep 0.05; done
bg sub2 "$TBLOCK" sub --ard data=dst --idle-ms 20000 --result "$T/sub2.result"
bg show "$ARD" show -f src
bg rec "$ARD" record -o "$T/rec.mcap" src dst
sleep 0.5

fill 1
src0=$(count src) dst0=$(count dst) shown0=$(wc -l <"$T/show.out")

# Every new create fails, named, and leaves nothing.
refused "$ARD" set big --size 65536
refused "$TBLOCK" pub --ard data=newblock --count 1
refused "$ARDNET" --in "udp://127.0.0.1:$((PORT + 1))" --out newout --size 65536

# A connection made sparse by hand (its header kept, the rest a hole of the same length), on
# a /dev/shm filled again: a view and an attach refuse it, named; nobody gets SIGBUS.
python3 - "/dev/shm/ard.$ARD_DOMAIN.sp" <<'PY'
import os, sys
fd = os.open(sys.argv[1], os.O_RDWR)
size = os.fstat(fd).st_size
head = os.pread(fd, 8192, 0)
os.ftruncate(fd, 0)
os.pwrite(fd, head, 0)
os.ftruncate(fd, size)
PY
fill 2
for cmd in "show sp" "set sp --size 65536"; do
    rc=0
    # shellcheck disable=SC2086
    "$ARD" $cmd >"$T/out" 2>"$T/err" || rc=$?
    [ "$rc" != 0 ] || fail "ard $cmd on a sparse object succeeded on a full /dev/shm"
    [ "$rc" -lt 128 ] || fail "ard $cmd on a sparse object, /dev/shm full: exit $rc: $(cat "$T/err")"
    grep -q "sparse object needs [0-9]* bytes of /dev/shm and 0 bytes are free" "$T/err" ||
        fail "ard $cmd: the refusal does not name it: $(cat "$T/err")"
    echo "sparse object refused as it should: ard $cmd: $(cat "$T/err")"
done

# Meanwhile everything that ran carries on.
sleep 1
for p in pub A B sub1 sub2 show rec; do
    kill -0 "${PID[$p]}" 2>/dev/null || fail "$p died on a full /dev/shm: $(cat "$T/$p.err")"
done
[ "$(count src)" -gt "$src0" ] || fail "the writer stopped writing"
[ "$(count dst)" -gt "$dst0" ] || fail "the ardnet route stopped delivering"
[ "$(wc -l <"$T/show.out")" -gt "$shown0" ] || fail "ard show -f stopped showing"

# Space freed: the same creates work, the sparse object is reserved by its next attach.
rm -f /dev/shm/filler*
"$ARD" set big --size 65536 || fail "ard set after freeing space"
# (its slots were lost with the pages dropped by hand: it reads as damaged, and faults nowhere)
rc=0
"$ARD" list sp >/dev/null 2>"$T/err" || rc=$?
[ "$rc" -lt 128 ] || fail "ard list of the sparse object: killed by signal $((rc - 128))"
"$ARD" df | grep -q sparse && fail "still sparse after an attach: $("$ARD" df)"
kill -TERM "${PID[sub1]}" "${PID[sub2]}"
wait "${PID[sub1]}" || fail "reader 1: $(cat "$T/sub1.result" "$T/sub1.err")"
wait "${PID[sub2]}" || fail "reader 2 (behind the route): $(cat "$T/sub2.result" "$T/sub2.err")"
echo "reader 1: $(cat "$T/sub1.result"); reader 2: $(cat "$T/sub2.result")"
kill -INT "${PID[rec]}"
wait "${PID[rec]}" || fail "ard record: $(cat "$T/rec.err")"
# Recorded throughout: at least half of the writer's 200 Hz over the whole recording.
"$ARD" info "$T/rec.mcap" --json | python3 -c '
import json, sys
d = json.load(sys.stdin)
secs = (d["end_ns"] - d["start_ns"]) / 1e9
for c in d["connections"]:
    print(c["name"], c["messages"], secs)
    assert c["messages"] >= 100 * secs > 200, "%s: %d messages in %.1f s" % (c["name"], c["messages"], secs)
' || fail "ard record stopped recording: $("$ARD" info "$T/rec.mcap")"
echo "PASS: a full /dev/shm refuses new objects by name and kills nothing"
