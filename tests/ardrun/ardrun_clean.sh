#!/bin/bash
# ardrun_clean: a group that ends normally (--ticks, SIGTERM, SIGINT) removes its service
# objects (GROUP.ctl, .ctl-reply, .names, .stats), so `ard list` does not fill with orphans;
# its data connections stay. A group that crashes (kill -9) leaves them, listed as orphaned.
# One that another process still has open (ard show -f GROUP.stats) stays.
here=$(cd "$(dirname "$0")" && pwd)
. "$here/common.sh"
P=$PLUGINS
shm=/dev/shm/ard.$ARD_DOMAIN
: "${ARD_TOOL:?set ARD_TOOL}"
cat >"$T/g.yaml" <<Y
name: g
rate_hz: 1000
blocks:
  - { name: src, plugin: $P/tsrc.so, ard: { out: g.out, ack: g.ack } }
Y
service() { # the service objects that exist
    local s left=""
    for s in ctl ctl-reply names stats; do [ -e "$shm.g.$s" ] && left="$left g.$s"; done
    echo "${left# }"
}
start() { # start the group in the background, wait until it is running
    "$ARDRUN" "$T/g.yaml" 2>"$T/g.log" &
    grp=$!
    pids+=("$grp")
    for _ in $(seq 200); do grep -q running "$T/g.log" && return 0; sleep 0.05; done
    fail "group did not start: $(cat "$T/g.log")"
}

"$ARDRUN" --ticks 50 "$T/g.yaml" 2>"$T/t.log" || fail "--ticks: $(cat "$T/t.log")"
[ -z "$(service)" ] && ok "--ticks: the service objects are removed" || fail "--ticks left: $(service)"
[ -e "$shm.g.out" ] && ok "--ticks: the data connection g.out stays" || fail "g.out removed"

for sig in TERM INT; do
    start
    [ "$(service)" = "g.ctl g.ctl-reply g.names g.stats" ] || fail "running: $(service)"
    kill -$sig "$grp"
    wait "$grp"
    rc=$?
    [ -z "$(service)" ] && ok "SIG$sig (exit $rc): the service objects are removed" ||
        fail "SIG$sig left: $(service)"
    "$ARD_TOOL" list 2>/dev/null | grep -q '^g\.\(ctl\|names\|stats\)' &&
        fail "ard list still shows them: $("$ARD_TOOL" list)"
done

# A crash: the objects stay, orphaned.
start
kill -KILL "$grp"
wait "$grp" 2>/dev/null
[ "$(service)" = "g.ctl g.ctl-reply g.names g.stats" ] && ok "kill -9: the service objects stay" ||
    fail "kill -9 left: $(service)"
"$ARD_TOOL" list 'g.stats' | grep -q 'orphaned' && ok "kill -9: g.stats listed as orphaned" ||
    fail "not marked: $("$ARD_TOOL" list 'g.stats')"
# The next run takes them over, and removes them at its end.
"$ARDRUN" --ticks 20 "$T/g.yaml" 2>"$T/t2.log" || fail "after a crash: $(cat "$T/t2.log")"
[ -z "$(service)" ] && ok "the next normal end removes what a crash left" || fail "left: $(service)"

# A reader still attached to g.stats keeps that one object; the others go.
start
"$ARD_TOOL" show -f g.stats >/dev/null 2>&1 &
rd=$!
pids+=("$rd")
for _ in $(seq 100); do "$ARD_TOOL" list -l g.stats 2>/dev/null | grep -q 'reader' && break; sleep 0.05; done
kill -TERM "$grp"
wait "$grp"
[ "$(service)" = "g.stats" ] && ok "an object still open elsewhere stays: $(service)" ||
    fail "with a reader on g.stats: left '$(service)'"
kill "$rd"
finish
