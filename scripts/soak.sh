#!/bin/bash
# soak.sh DURATION [SEED] - the soak and chaos run (root): the arm example on three hosts
# under faults for DURATION (seconds, or Nm / Nh), with invariants checked all the time and
# resources sampled; exit 0 only if every invariant counter stayed 0, every restarted thing
# came back within its bound, every resource slope is flat and nothing is left at the end.
#
# Hosts (network namespaces with a real sshd each, tests/lib/netns.sh and sshd.sh):
#   station  runs ardstart: the arm system (examples/arm/arm.yaml with a restart policy and a
#            probe writer/reader pair) mapped to rt1 (sim) and rt2 (control), bridges
#            inserted; the arm's group variant (examples/arm/arm_group.yaml, renamed armg)
#   rt1      sim: plant, probe writer, bridges; the rt1 -> rt2 link goes through the
#            loss-and-reorder relay (nftables + tests/ardnet/relay.c)
#   rt2      control: traj, ctrl, monitor, probe reader, bridges; `ard record` of every
#            connection; `ard web` with two scripted WebSocket clients
# Chaos, one action every 1-5 s (seeded): kill -9 of a block, bridge, recorder, web server or
# the group (restarted by ardstart's restart policy); ardkill of a subsystem and its restart;
# a host's whole side stopped (ardkill there) and started again; a burst of hostile
# datagrams at a bridge port; a writer stopped for a while (SIGSTOP/SIGCONT).
#
# Everything goes to SOAK_DIR (default a new /tmp/soak.XXXXXX, kept): actions.log,
# samples.csv, the probe and client logs, the recordings, report.txt. Binaries: SOAK_BIN (a
# PATH-like list of directories), SOAK_RELAY, SOAK_PLUGINS; default: the build tree in
# SOAK_BUILD (default build/). Exit: 0 pass, 1 a check failed, 2 usage or missing programs,
# 77 not root or no network namespaces (skipped).
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)

usage() {
    echo "usage: scripts/soak.sh DURATION [SEED]   (DURATION: seconds, or Nm, Nh; root)" >&2
    exit 2
}
case ${1:-} in -h | --help)
    sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'
    exit 0
    ;;
esac
[ $# -ge 1 ] && [ $# -le 2 ] || usage
case $1 in
*h) DUR=$((${1%h} * 3600)) ;;
*m) DUR=$((${1%m} * 60)) ;;
*) DUR=$1 ;;
esac
[[ "$DUR" =~ ^[0-9]+$ ]] && [ "$DUR" -ge 20 ] || { echo "soak: DURATION '$1': at least 20 seconds" >&2; usage; }
SEED=${2:-$(((RANDOM << 15 | RANDOM) % 1000000))}
[[ "$SEED" =~ ^[0-9]+$ ]] || { echo "soak: SEED '$SEED': expected a number" >&2; usage; }
echo "soak: seed $SEED, duration $DUR s (replay: scripts/soak.sh $DUR $SEED)"

B=${SOAK_BUILD:-$ROOT/build}
SOAK_BIN=${SOAK_BIN:-$B/src/ardstart:$B/src/ardkill:$B/src/tools:$B/src/ardnet:$B/src/ardrun:$B/examples:$B/tests/soak}
SOAK_RELAY=${SOAK_RELAY:-$B/tests/ardnet/ardnet_relay}
SOAK_PLUGINS=${SOAK_PLUGINS:-$B/examples/plugins}
export PATH="$SOAK_BIN:$PATH"
for p in ardstart ardkill ard ardnet ardrun arm_plant arm_ctrl arm_traj arm_monitor soak_probe; do
    command -v "$p" >/dev/null || { echo "soak: no '$p' in SOAK_BIN ($SOAK_BIN): build first" >&2; exit 2; }
done
[ -x "$SOAK_RELAY" ] || { echo "soak: no relay '$SOAK_RELAY'" >&2; exit 2; }
[ -e "$SOAK_PLUGINS/arm_ctrl_block.so" ] || { echo "soak: no plugins in '$SOAK_PLUGINS'" >&2; exit 2; }
# The checks and clients run Debian's Python (never the first python3 on PATH, as the tests).
PY=/usr/bin/python3
for p in nft "$PY" setpriv bc; do
    command -v "$p" >/dev/null || { echo "soak: needs '$p'" >&2; exit 2; }
done

source "$ROOT/tests/lib/netns.sh"
source "$ROOT/tests/lib/sshd.sh"
source "$ROOT/tests/soak/soak_lib.sh"
netns_require_root

SOAK_DIR=${SOAK_DIR:-$(mktemp -d /tmp/soak.XXXXXX)}
mkdir -p "$SOAK_DIR/rec"
chmod 755 "$SOAK_DIR"
echo "soak: output in $SOAK_DIR"
D=soak_$$
SOAK_HOSTS="station rt1 rt2"
SOAK_SAMPLE=${SOAK_SAMPLE:-$([ "$DUR" -lt 300 ] && echo 5 || echo 10)}
RESTART_DELAY=0.2
RATE=200
BG=()
RELAY_PIDS=()
NETNS_NO_TRAP=1
cleanup() {
    local p
    for p in ${BG[@]+"${BG[@]}"}; do kill "$p" 2>/dev/null || true; done
    relay_remove rt1 2>/dev/null || true
    if [ -n "${NETNS_DIR:-}" ] && [ -d "${NETNS_DIR:-/nonexistent}" ]; then
        on station ardkill -q -g 1 >/dev/null 2>&1 || true
        netns_destroy
    fi
}
trap cleanup EXIT
trap 'exit 129' HUP
trap 'exit 130' INT
trap 'exit 143' TERM

netns_create $SOAK_HOSTS
SSHD_PATH="$PATH"
sshd_start $SOAK_HOSTS
RSH="ssh -F $SSHD_CONFIG"
on() {
    local h=$1
    shift
    netns_run "$h" env -C "$SOAK_DIR" ARD_DOMAIN="$D" ARD_RSH="$RSH" ARD_HOST="$h" PATH="$PATH" \
        ARDRUN_PLUGIN_PATH="$SOAK_PLUGINS" "$@"
}
soak_seed "$SEED"

# ---- the system ------------------------------------------------------------------------
"$PY" - "$ROOT/examples/arm/arm.yaml" "$ROOT/examples/arm/arm_group.yaml" "$SOAK_DIR" \
    "$RESTART_DELAY" "$RATE" <<'PY'
import sys
arm, grp, out, delay, rate = sys.argv[1:6]
policy = f"restart: on-failure\nrestart_delay: {delay}\nrestart_limit: 30/60\n"
def edit(t, old, new):
    assert old in t, f"soak: '{old.strip()}' not in the example any more"
    return t.replace(old, new, 1)
t = open(arm).read()
t = edit(t, "name: arm\n", "name: arm\n" + policy)
t = edit(t, "connections:\n", "connections:\n  soak.probe: magic:u64 epoch:u64 seq:u64 t_ns:i64 v:f64[4] check:u64\n")
t = edit(t, "        out: { state: arm.state }\n", "        out: { state: arm.state }\n"
         f"      - name: probe_w\n        cmd: soak_probe pub --rate {rate}\n        out: {{ data: soak.probe }}\n")
t += "      - name: probe_r\n        cmd: soak_probe sub --name rt2 --gap-ms 100\n        in: { data: soak.probe }\n"
open(f"{out}/arm_soak.yaml", "w").write(t)
g = open(grp).read()
g = edit(g, "name: arm\n", "name: armg\n" + policy)
g = g.replace("arm.ref", "armg.ref").replace("arm.state", "armg.state").replace("arm.cmd", "armg.cmd")
open(f"{out}/armg_soak.yaml", "w").write(g)
PY

# The subsystems' start lines, to start one again after it was stopped: the master script of
# --dry-run, run with an `ardstart` function that writes each line it is called with.
subsystem_scripts() {
    local file=$1 prefix=$2
    on station ardstart --system "$file" --dry-run "${@:3}" | sed '${/^exec sleep infinity$/d}' >"$SOAK_DIR/$prefix.master"
    SUB_DIR=$SOAK_DIR SUB_PREFIX=$prefix bash -c 'ardstart() {
        local a=("$@") i n=""
        for ((i = 0; i < ${#a[@]}; i++)); do [ "${a[i]}" != -n ] || n=${a[i+1]}; done
        [ -z "$n" ] || { printf "%q " ardstart "$@"; echo; } >"$SUB_DIR/sub_${SUB_PREFIX}_$n.sh"
    }; '"$(cat "$SOAK_DIR/$prefix.master")"
}
subsystem_scripts "$SOAK_DIR/arm_soak.yaml" arm --set-host sim=rt1 --set-host ctrl=rt2
subsystem_scripts "$SOAK_DIR/armg_soak.yaml" armg
STATE_PORT=$(grep -o 'udp://:[0-9]* --from rt1' "$SOAK_DIR/arm.master" | head -n 1 | sed 's/udp:\/\/:\([0-9]*\).*/\1/')
[ -n "$STATE_PORT" ] || { echo "soak: no rt1 -> rt2 bridge in the arm system" >&2; exit 1; }

echo "== relay on the rt1 -> rt2 link (port $STATE_PORT): loss, duplicates, reordering"
relay_insert rt1 rt2 "$STATE_PORT" 7500 "$SEED"

echo "== starting the arm system (sim on rt1, control on rt2) and armg (an ardrun group) on the station"
on station ardstart --system "$SOAK_DIR/arm_soak.yaml" --wait=30 --set-host sim=rt1 --set-host ctrl=rt2
on station ardstart --system "$SOAK_DIR/armg_soak.yaml" --wait=30
# Started on rt2 itself (entries of rt2's books): the station's final ardkill reaches them
# with the rest of rt2's side.
on rt2 ardstart -q --restart=always --restart-delay=$RESTART_DELAY --restart-limit=none \
    -n rec -- sh -c "exec ard record -o '$SOAK_DIR/rec/rec_'\$\$.mcap"
on rt2 ardstart -q --restart=always --restart-delay=$RESTART_DELAY --restart-limit=none \
    -n web -- ard web --listen 127.0.0.1:8642
# two clients of the page's protocol plotting the probe, and a Foxglove client (c3)
for c in 1 2 3; do
    field=seq mode=
    [ $c = 1 ] || field=t_ns
    [ $c = 3 ] && mode=foxglove
    $(netns_cmd rt2) "$PY" "$ROOT/tests/soak/soak_web_client.py" "/run/ardnet/$D/log/web.log" "c$c" \
        soak.probe "$field" $mode </dev/null >"$SOAK_DIR/web_c$c.log" 2>&1 &
    BG+=("$!")
done
on station ardstart --list

# ---- invariants all the time: ard list answers, connections advance ----------------------
: >"$SOAK_DIR/checks.log"
# the data connections every block's work shows in, per host
declare -A WATCH=([station]=armg.state,armg.cmd,armg.ref [rt1]=arm.state,arm.cmd,soak.probe
    [rt2]=arm.state,arm.cmd,arm.ref,soak.probe)
checker() {
    set +e # a look that fails (a host in the middle of a restart) is retried, not fatal
    declare -A count since
    local h line name n now
    while :; do
        now=$(date +%s%N)
        for h in $SOAK_HOSTS; do
            if ! out=$(timeout 2 nsenter --mount="$(netns_mnt "$h")" --net="/var/run/netns/$(netns_netns "$h")" \
                env ARD_DOMAIN="$D" ard list --json 2>/dev/null); then
                echo "$now list_slow $h" >>"$SOAK_DIR/checks.log"
                continue
            fi
            while read -r name n; do
                [ -n "$name" ] || continue
                if [ "${count[$h/$name]:-}" != "$n" ]; then
                    count[$h/$name]=$n
                    since[$h/$name]=$now
                elif [ $((now - ${since[$h/$name]})) -gt 15000000000 ]; then
                    echo "$now stuck $h $name" >>"$SOAK_DIR/checks.log"
                    since[$h/$name]=$now
                fi
            done < <("$PY" -c '
import json, sys
watch = sys.argv[1].split(",")
for c in json.load(sys.stdin):
    if c["name"] in watch:
        print(c["name"], c.get("count", ""))' "${WATCH[$h]}" <<<"$out" 2>/dev/null || true)
        done
        sleep 2
    done
}
checker &
BG+=("$!")
sampler() {
    set +e # a look that fails (an entry removed meanwhile) is skipped, not fatal
    local t0=$1 t
    while :; do
        t=$(($(date +%s) - t0))
        sample_resources "$t"
        sleep "$SOAK_SAMPLE"
    done
}
: >"$SOAK_DIR/samples.csv"
sampler "$(date +%s)" &
BG+=("$!")

# ---- chaos ------------------------------------------------------------------------------
KILL_TARGETS=(rt1:arm/sim/plant rt1:arm/sim/probe_w rt1:arm/sim/to_rt2 rt1:arm/sim/from_rt2
    rt2:arm/control/traj rt2:arm/control/ctrl rt2:arm/control/monitor rt2:arm/control/probe_r
    rt2:arm/control/from_rt1 rt2:arm/control/to_rt1 rt2:rec rt2:web
    station:armg/control/arm_rt station:armg/control/traj station:armg/control/monitor)
STALL_TARGETS=(rt1:arm/sim/probe_w rt1:arm/sim/plant rt2:arm/control/traj)
: >"$SOAK_DIR/actions.log"
act() { # KIND TARGET T_START T_DONE BACK_S READY_NS
    echo "$3 act kind=$1 target=$2 done=$4 back=$5 ready=$6" >>"$SOAK_DIR/actions.log"
    echo "[$(date -u +%H:%M:%S)] $1 $2${5:+ back after $5 s}"
}
restart_sub() { # SYSTEM SUBSYSTEM
    on station env ARD_PATH="$1" bash "$SOAK_DIR/sub_$1_$2.sh" >/dev/null
}
END=$(($(date +%s) + DUR))
while [ "$(date +%s)" -lt "$END" ]; do
    soak_pick 3000
    sleep "$((1 + PICK / 1000)).$(printf %03d $((PICK % 1000)))"
    [ "$(date +%s)" -lt "$END" ] || break
    soak_pick 100
    t0=$(date +%s%N)
    if [ $PICK -lt 50 ]; then
        soak_pick ${#KILL_TARGETS[@]}
        tg=${KILL_TARGETS[$PICK]}
        h=${tg%%:*} path=${tg#*:}
        if chaos_kill9 "$h" "$path"; then
            t1=$(date +%s%N)
            if back=$(wait_entry "$h" "$path" 30); then
                act kill9 "$tg" "$t0" "$t1" "$back" "$(date +%s%N)"
            else
                act kill9 "$tg" "$t0" "$t1" - -
                echo "$t1 not_restarted $tg" >>"$SOAK_DIR/checks.log"
            fi
        else
            act kill9 "$tg" "$t0" "$t0" skipped -
        fi
    elif [ $PICK -lt 62 ]; then
        soak_pick 2
        if [ $PICK = 0 ]; then sys=arm sub=control; else sys=armg sub=control; fi
        on station ardkill -q "$sys/$sub" || echo "$(date +%s%N) ardkill_failed $sys/$sub" >>"$SOAK_DIR/checks.log"
        t1=$(date +%s%N)
        if restart_sub "$sys" "$sub"; then
            t2=$(date +%s%N)
            act ardkill_sub "$sys/$sub" "$t0" "$t1" "$(echo "scale=3; ($t2 - $t1) / 1000000000" | bc)" "$t2"
        else
            act ardkill_sub "$sys/$sub" "$t0" "$t1" - -
            echo "$t1 not_restarted $sys/$sub" >>"$SOAK_DIR/checks.log"
        fi
    elif [ $PICK -lt 70 ]; then
        on rt1 ardkill -q || echo "$(date +%s%N) ardkill_failed rt1" >>"$SOAK_DIR/checks.log"
        t1=$(date +%s%N)
        if restart_sub arm sim; then
            t2=$(date +%s%N)
            act host_restart rt1 "$t0" "$t1" "$(echo "scale=3; ($t2 - $t1) / 1000000000" | bc)" "$t2"
        else
            act host_restart rt1 "$t0" "$t1" - -
            echo "$t1 not_restarted rt1" >>"$SOAK_DIR/checks.log"
        fi
    elif [ $PICK -lt 85 ]; then
        soak_pick 2
        from=station
        [ $PICK = 0 ] || from=rt1
        chaos_hostile "$from" rt2 "$STATE_PORT" 1000 || true
        act hostile "$from->rt2:$STATE_PORT" "$t0" "$(date +%s%N)" - -
    else
        soak_pick ${#STALL_TARGETS[@]}
        tg=${STALL_TARGETS[$PICK]}
        soak_pick 2500
        secs="$((PICK / 1000 + 0)).$(printf %03d $((PICK % 1000 + 0)))"
        if chaos_stall "${tg%%:*}" "${tg#*:}" "$secs"; then
            t1=$(date +%s%N)
            act stall "$tg" "$t0" "$t1" - "$t1"
        else
            act stall "$tg" "$t0" "$t0" skipped -
        fi
    fi
done

# ---- the end: stop everything, check what is left, read the recordings -----------------
echo "== chaos over; final sample and ardkill"
# The last sample is taken once the system has settled (every entry running again, at most
# 15 s): the counts of shared-memory objects and books entries are judged there against the
# first sample, the same system in the same state.
for _ in $(seq 30); do
    on station ardstart --list 2>/dev/null | awk 'NR > 1 && $4 != "running" { bad = 1 } END { exit bad }' && break
    sleep 0.5
done
sample_resources "$(($(date +%s) - $(date +%s) + DUR))"
for p in ${BG[@]+"${BG[@]}"}; do kill "$p" 2>/dev/null || true; done
BG=()
sleep 0.5
on station ardstart --list >"$SOAK_DIR/list_end.txt" 2>&1 || true
if ! on station ardkill >"$SOAK_DIR/ardkill_end.txt" 2>&1; then
    echo "$(date +%s%N) ardkill_failed final" >>"$SOAK_DIR/checks.log"
    cat "$SOAK_DIR/ardkill_end.txt" >&2
fi
relay_remove rt1
sleep 0.3
# logs again: the last lines written at the stop
for h in $SOAK_HOSTS; do
    mkdir -p "$SOAK_DIR/logs_$h"
    netns_run "$h" sh -c "cp /run/ardnet/$D/log/*.log '$SOAK_DIR/logs_$h/' 2>/dev/null" || true
done
if ! hosts_nothing_left 2>>"$SOAK_DIR/left.log"; then
    cat "$SOAK_DIR/left.log" >&2
    echo "$(date +%s%N) left_behind" >>"$SOAK_DIR/checks.log"
fi
: >"$SOAK_DIR/recordings.txt"
for f in "$SOAK_DIR"/rec/*.mcap; do
    [ -e "$f" ] || continue
    echo "file $f" >>"$SOAK_DIR/recordings.txt"
    if ! ard info --json "$f" >"$f.info.json" 2>"$f.info.err"; then
        echo "bad $f $(head -c 300 "$f.info.err")" >>"$SOAK_DIR/recordings.txt"
        continue
    fi
    # one field of each: the rows carry the connection's sequence numbers (column seq)
    for c in soak.probe:magic arm.state:q[0] arm.cmd:tau[0] arm.ref:q[0]; do
        ard export "$f" --csv --field "$c" >"$f.${c%%:*}.csv" 2>"$f.${c%%:*}.err" || true
    done
done
# A sanitized build: its report does not judge RSS (ASan's quarantine holds freed memory).
SANITIZED=plain
! grep -q __asan_init "$(command -v ardstart)" || SANITIZED=sanitized
"$PY" "$ROOT/tests/soak/soak_report.py" "$SOAK_DIR" "$DUR" "$SEED" "$RESTART_DELAY" "$RATE" "$SANITIZED" |
    tee "$SOAK_DIR/report.txt"
