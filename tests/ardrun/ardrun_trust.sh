#!/bin/bash
# ardrun_trust: a group's control connections (GROUP.ctl, .ctl-reply, .stats, .names) are
# never accepted from another user, whatever --ard-allow-foreign or ARD_ALLOW_FOREIGN say: the
# message names the owner and how the object is removed. `ardrun ctl` by a user who may not
# open them says "permission denied", not that the group is not running, and creates nothing.
# Runs as root and as nobody (setpriv).
here=$(cd "$(dirname "$0")" && pwd)
. "$here/common.sh"
if [ "$(id -u)" != 0 ] || ! command -v setpriv >/dev/null; then
    echo "skipped: needs root and setpriv (to run as nobody)"
    exit 77
fi
P=$PLUGINS
# What nobody runs and reads, in a directory of its own: the build tree may be under a
# directory only root may enter.
B=$(mktemp -d /tmp/ardrun-nobody.XXXXXX)
S=/dev/shm/ardrun-stash.$$
trap 'rm -rf "$B" "$S"; cleanup' EXIT
cp "$ARDRUN" "$P/tsrc.so" "$B/"
chmod 755 "$B" "$B"/*
NOBODY=(setpriv --reuid=nobody --regid=nogroup --clear-groups) # it execs: $! is the program
cat >"$B/tg.yaml" <<Y
name: tg
rate_hz: 200
blocks:
  - { name: src, plugin: $B/tsrc.so, ard: { out: tg.out, ack: tg.none } }
Y
chmod 644 "$B/tg.yaml"
shm=/dev/shm/ard.$ARD_DOMAIN

# Another user runs a group of the same name first and leaves its objects behind (it is
# killed: a group that ends normally removes them).
"${NOBODY[@]}" "$B/ardrun" "$B/tg.yaml" 2>"$T/nobody.log" &
pid=$!
pids+=("$pid")
for _ in $(seq 200); do [ -e "$shm.tg.names" ] && break; sleep 0.05; done
sleep 0.2
kill -KILL "$pid"
wait "$pid" 2>/dev/null
for s in ctl ctl-reply stats names; do
    [ "$(stat -c %u "$shm.tg.$s" 2>/dev/null)" = 65534 ] || fail "nobody's group left no $shm.tg.$s: $(cat "$T/nobody.log")"
done
mkdir -p "$S"
mv "$shm".tg.* "$S/"
rm -f "$shm".*

# Each of the four, left by nobody, keeps root's group from starting, whatever allow-foreign says.
for s in ctl ctl-reply stats names; do
    cp -a "$S/ard.$ARD_DOMAIN.tg.$s" "$shm.tg.$s"
    for how in plain option env; do
        case $how in
        plain) cmd=("$ARDRUN" --ticks 10 "$B/tg.yaml") ;;
        option) cmd=("$ARDRUN" --ticks 10 --ard-allow-foreign "$B/tg.yaml") ;;
        env) cmd=(env ARD_ALLOW_FOREIGN=1 "$ARDRUN" --ticks 10 "$B/tg.yaml") ;;
        esac
        out=$("${cmd[@]}" 2>&1)
        rc=$?
        want="connection 'tg.$s' is owned by uid 65534 with mode 0600, not by uid 0 who runs the group"
        if [ "$rc" = 102 ] && [[ "$out" == *"$want"* ]] && [[ "$out" == *"rm $shm.tg.$s"* ]] &&
            [[ "$out" != *ALLOW_FOREIGN=1* ]] && [[ "$out" != *running* ]]; then
            ok "tg.$s of another user refused ($how): exit 102, owner and removal named"
        else
            fail "tg.$s of nobody ($how): exit $rc: $out"
        fi
    done
    rm -f "$shm".*
done

# Root's own group: runs. nobody may not open its connections, and is told so.
"$ARDRUN" "$B/tg.yaml" 2>"$T/root.log" &
grp=$!
pids+=("$grp")
for _ in $(seq 200); do "$ARDRUN" ctl tg status >/dev/null 2>&1 && break; sleep 0.05; done
"$ARDRUN" ctl tg status >/dev/null || fail "root's group does not answer: $(cat "$T/root.log")"
expect 104 "ardrun ctl: permission denied: connection 'tg.ctl' is owned by uid 0 with mode 0600" -- \
    "${NOBODY[@]}" "$B/ardrun" ctl tg stop src
expect 104 "ardrun ctl: permission denied: connection 'tg.stats' is owned by uid 0 with mode 0600" -- \
    "${NOBODY[@]}" "$B/ardrun" ctl tg status
left=$(find /dev/shm -maxdepth 1 -name "ard.$ARD_DOMAIN.*" -uid 65534)
[ -z "$left" ] && ok "ardrun ctl as nobody created nothing" || fail "nobody left: $left"
out=$("$ARDRUN" ctl tg stop src) && [ "$out" = "block 'src' stopped" ] && ok "root's ctl works: $out" ||
    fail "root's ctl: $out"

# ardrun ctl of a group that is not running (nothing left): still "not running"
kill -TERM "$grp"
wait "$grp"
rm -f "$shm".*
expect 104 "group 'tg' is not running" -- "${NOBODY[@]}" "$B/ardrun" ctl tg stop src
left=$(find /dev/shm -maxdepth 1 -name "ard.$ARD_DOMAIN.*")
[ -z "$left" ] && ok "ardrun ctl of a group not running creates no object" || fail "left behind: $left"
finish
