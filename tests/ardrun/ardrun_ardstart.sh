#!/bin/bash
# ardrun_ardstart: a group is an ordinary block for ardstart and ardkill: `ardstart --wait`
# returns once the scheme is checked and the first tick ran; a group whose check fails is
# reported as ended before ready; a plugin that crashes takes its group down and ardstart's
# books say so; ardkill stops a group and leaves no connection behind.
here=$(cd "$(dirname "$0")" && pwd)
. "$here/common.sh"
[ -n "${ARDSTART:-}" ] || { echo "no ardstart in this build"; exit 77; }
export ARD_BOOKS_DIR=$T/books
P=$PLUGINS
stop_all() { "$ARDKILL" -q -g 0.5 >/dev/null 2>&1 || true; }
trap 'stop_all; cleanup' EXIT

cat >"$T/ok.yaml" <<Y
name: okgrp
rate_hz: 1000
blocks:
  - { name: src, plugin: $P/tsrc.so, ard: { out: s.src, ack: s.none } }
  - { name: sink, plugin: $P/tsink.so, params: { file: $T/first.txt }, ard: { in: s.src, ack: s.ack } }
Y
out=$("$ARDSTART" --wait=20 -n grp -- "$ARDRUN" "$T/ok.yaml" 2>&1)
rc=$?
# the first tick ran before readiness: its packet is already in the sink's file
lines=$(wc -l <"$T/first.txt" 2>/dev/null || echo 0)
[ "$rc" = 0 ] && [[ "$out" == *"ready after"* ]] && ok "ardstart --wait: $out" || fail "ardstart: exit $rc: $out"
[ "$lines" -ge 1 ] && ok "ready only after the first tick ($lines packets already through)" ||
    fail "ready before the first tick"
"$ARDSTART" --list | grep -E '^ *grp .* running' >/dev/null && ok "listed as running" ||
    fail "listing: $("$ARDSTART" --list)"

# a scheme that fails: ended before ready, with ardrun's message in the log tail
cat >"$T/bad.yaml" <<Y
name: badgrp
rate_hz: 1000
blocks:
  - { name: w, plugin: $P/tsrc.so, ard: { out: s.src } }
Y
out=$("$ARDSTART" --wait=20 -n bad -- "$ARDRUN" "$T/bad.yaml" 2>&1)
rc=$?
[ "$rc" = 2 ] && [[ "$out" == *"exited 102 before it was ready"* ]] && [[ "$out" == *"connection 's.src'"* ]] &&
    ok "failed scheme check: ardstart exit 2, exited 102, reason in the log" || fail "bad group: exit $rc: $out"

# a crashing plugin takes the whole group down; the books show how it ended
cat >"$T/crash.yaml" <<Y
name: crashgrp
rate_hz: 1000
blocks:
  - { name: fine, plugin: $P/tsrc.so, ard: { out: s.c1, ack: s.c2 } }
  - { name: crash, plugin: $P/tbad_crash.so, params: { after: 1000 }, ard: { out: s.c3 } }
Y
# (the crash a second after the first tick: ardstart has seen it ready even on a busy host)
out=$("$ARDSTART" --wait=20 -n crash -- "$ARDRUN" "$T/crash.yaml" 2>&1) || fail "crash group did not start: $out"
st=
for _ in $(seq 300); do
    st=$("$ARDSTART" --list | awk '$1 == "crash"')
    [[ "$st" == *running* ]] || break
    sleep 0.05
done
if [[ "$st" == *"killed by SIGSEGV"* ]]; then
    ok "crash: the group went down, ardstart says: killed by SIGSEGV"
elif [[ "$st" == *"exited 1"* ]] && grep -Eq "SEGV|null pointer" "$("$ARDSTART" --log crash)"; then
    ok "crash: the group went down (sanitizer build: exited 1 after its report)"
else
    fail "crash: listing says '$st'"
fi

# Readiness reaches the starter's pipe whatever the length of $ARD_READY_FD: FD:DEV:INO may take
# 52 characters (written here with leading zeros, which the library reads as the same numbers)
mkfifo "$T/rfifo"
cat "$T/rfifo" >"$T/rready" &
relay=$!
long=$(stat -c %d:%i "$T/rfifo" | awk -F: '{ printf "9:%020d:%020d", $1, $2 }')
ARD_READY_FD=$long "$ARDRUN" --block "$P/tsrc.so" --name longready --rate 100 --ard out=s.lr \
    --ard ack=s.lrack 2>"$T/lr.err" 9>"$T/rfifo" &
lr=$!
for _ in $(seq 200); do grep -q ready "$T/rready" && break; sleep 0.05; done
kill "$lr" 2>/dev/null
wait "$lr" "$relay" 2>/dev/null
grep -q ready "$T/rready" && ok "ready through a ${#long}-character ARD_READY_FD" ||
    fail "no readiness through ARD_READY_FD=$long: $(cat "$T/lr.err")"

# ardkill stops the group; no connection of the domain is left
"$ARDKILL" grp >/dev/null 2>&1 || fail "ardkill grp"
"$ARDSTART" --list | grep -E '^ *grp .* running' >/dev/null && fail "grp still running after ardkill"
stop_all
left=$(ls /dev/shm | grep "^ard.$ARD_DOMAIN\." || true)
[ -z "$left" ] && ok "ardkill: nothing left" || fail "left behind: $left"
finish
