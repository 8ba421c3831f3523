#!/bin/bash
# scale.sh - ardnet at scale: N connections at 1 kHz between two network-namespace hosts,
# bridged by one ardnet pair, next to a bare-UDP baseline, in one run (root). Usage:
#   sudo bench/ardnet/scale.sh [--quick] [BUILD_DIR]     (default BUILD_DIR: build; --help)
# For each N (NS, default "10 100 1000"), packet size (SIZES, default "64 1024") and tick
# (TICKS, default "common indep"), two cases, one after the other, on the same two hosts:
#   ardnet    hostA: `ardnet_scale pub` writes s0..s<N-1> -> ardnet (YAML, one route per
#             connection, conn-id 1..N) -> UDP -> hostB: ardnet -> s0..s<N-1> <- `ardnet_scale sub`
#   baseline  hostA: `ardnet_scale udp-tx` (one datagram per packet, each tick's packets in one
#             sendmmsg) -> UDP -> hostB: `ardnet_scale udp-rx` (recvmmsg, batches of 64)
# and measures over a window of WIN seconds (default 5; --quick: 1) after WARM seconds (default
# 2; --quick: 1): CPU of the sending and of the receiving side (ardnet processes, or the two
# baseline programs; utime+stime of /proc/PID/stat) in % of one core, UDP datagrams per second
# out of hostA and into hostB (/proc/net/snmp of each namespace), packets delivered per second
# on hostB (sequence numbers of the N connections; the baseline: datagrams received), and the
# latency of connection s0 (writer's stamp to the reader's receive, CLOCK_MONOTONIC); for the
# ardnet cases also the CPU of the writer and of the reader (not part of any ratio).
# Ticks: common = every connection written at the start of each 1 ms period; indep = each
# connection at its own random phase (50 us slots), see ardnet_scale.c.
# Prints one line per case as it goes, then the tables (markdown); CPU per packet is a side's
# CPU time divided by the packets delivered on hostB, for ardnet and baseline alike. A case is
# "carried" when at least 95% of N x 1000 packets/s were delivered.
#
# Ports: BENCH_SHARED_PORT=1 sends every route of the host pair to one port (7000), =0 one
# port per route (7000+i); auto (default): one port, and if the receiving ardnet refuses it
# (exit 111, "Address already in use": an ardnet with one socket per route), one per route.
# SEALED=1: the second case of each row is not the bare-UDP baseline but the same ardnet pair
# with --key (kind "sealed": every datagram sealed, docs/ardnet.md "Sealed links"), so the
# ratios are sealed / plain ardnet.
# Exit codes: 0 ok, 1 a case delivered nothing (or a program of it failed), 100 usage,
# 111 an ardnet or a program could not start; 77 not root or no network namespaces.
set -euo pipefail
SRC=$(cd "$(dirname "$0")/../.." && pwd)
QUICK=0
if [ "${1:-}" = "--quick" ]; then
    QUICK=1
    shift
fi
if [ "${1:-}" = "--help" ]; then
    sed -n '2,/^set -e/p' "$0" | sed '$d; s/^# \{0,1\}//'
    exit 0
fi
if [[ ${1:-} == -* ]] || [ "$#" -gt 1 ]; then
    echo "scale.sh: usage: scale.sh [--quick] [BUILD_DIR] (scale.sh --help)" >&2
    exit 100
fi
if ! BUILD=$(cd "${1:-$SRC/build}" 2>/dev/null && pwd); then
    echo "scale.sh: build directory '${1:-$SRC/build}' does not exist" >&2
    exit 100
fi
ARDNET=$BUILD/src/ardnet/ardnet
SCALE=$BUILD/bench/ardnet/ardnet_scale
NS=${NS:-10 100 1000}
SIZES=${SIZES:-64 1024}
TICKS=${TICKS:-common indep}
if [ "$QUICK" = 1 ]; then
    WIN=${WIN:-1}
    WARM=${WARM:-1}
else
    WIN=${WIN:-5}
    WARM=${WARM:-2}
fi
SHARED=${BENCH_SHARED_PORT:-auto}
SEALED=${SEALED:-0}
K2=$([ "$SEALED" = 1 ] && echo sealed || echo baseline)
bad() {
    echo "scale.sh: $*" >&2
    exit 100
}
for n in $NS; do
    [[ $n =~ ^[1-9][0-9]{0,3}$ ]] && [ "$n" -le 4096 ] || bad "NS: '$n' is not a count 1..4096"
done
for size in $SIZES; do
    [[ $size =~ ^[1-9][0-9]{1,3}$ ]] && [ "$size" -ge 16 ] && [ "$size" -le 1024 ] ||
        bad "SIZES: '$size' is not a packet size 16..1024 (the baseline's limit)"
done
for tick in $TICKS; do
    [[ $tick == common || $tick == indep ]] || bad "TICKS: '$tick' is neither common nor indep"
done
for v in WIN WARM; do
    [[ ${!v} =~ ^[1-9][0-9]*$ ]] || bad "$v: '${!v}' is not a whole number of seconds >= 1"
done
case $SHARED in auto | 0 | 1) ;; *) bad "BENCH_SHARED_PORT: '$SHARED' is not auto, 0 or 1" ;; esac
for f in "$ARDNET" "$SCALE"; do
    [ -x "$f" ] || { echo "scale.sh: $f missing: build first" >&2; exit 100; }
done
PORT=7000
source "$SRC/tests/lib/netns.sh"
netns_require_root
W=$(mktemp -d /tmp/ardnet_scale.XXXXXX)
NETNS_NO_TRAP=1
trap 'netns_destroy; [ -n "${KEEP:-}" ] || rm -rf "$W"' EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
netns_create hostA hostB
A=$(netns_cmd hostA)
B=$(netns_cmd hostB)
TICK=$(getconf CLK_TCK)

# cpu_of PID: its CPU ticks (user + system, all threads); 0 once it is gone (reported apart).
cpu_of() { awk '{print $14 + $15}' "/proc/$1/stat" 2>/dev/null || echo 0; }
# udp_of HOSTCMD: "InDatagrams OutDatagrams RcvbufErrors" of that namespace.
udp_of() {
    $1 cat /proc/net/snmp | awk '$1 == "Udp:" && !h { for (i = 2; i <= NF; i++) c[$i] = i; h = 1; next }
        $1 == "Udp:" { print $c["InDatagrams"], $c["OutDatagrams"], $c["RcvbufErrors"] }'
}
killwait() { kill "$@" 2>/dev/null || true; wait "$@" 2>/dev/null || true; }
# Readiness goes to the starter's pipe (ARD_READY_FD=FD:DEV:INO): a FIFO relayed into FILE.
ready_fifo() {
    rm -f "$1" "$1.fifo" && mkfifo "$1.fifo" && : >"$1"
    cat "$1.fifo" >"$1" &
    READY_VAR="9:$(stat -c %d:%i "$1.fifo")"
}
# wait_ready FILE PID: 0 when ready, else the exit code of PID (or 1 after 60 s).
wait_ready() {
    local i rc
    for i in $(seq 1200); do
        grep -q ready "$1" 2>/dev/null && return 0
        if ! kill -0 "$2" 2>/dev/null; then
            rc=0
            wait "$2" || rc=$?
            return $((rc ? rc : 1))
        fi
        sleep 0.05
    done
    echo "scale.sh: not ready after 60 s: $1" >&2
    return 1
}
# yaml_tx/yaml_rx N SIZE SHARED: the route files of the sending and the receiving host.
# (KEYLINE: "key: FILE" in the sealed case)
yaml_tx() {
    local i
    echo "${KEYLINE:-}"
    echo "routes:"
    for ((i = 0; i < $1; i++)); do
        printf '  - in: s%d\n    out: udp://hostB:%d\n    size: %d\n    conn-id: %d\n' \
            $i $((PORT + ($3 ? 0 : i))) "$2" $((i + 1))
    done
}
yaml_rx() {
    local i
    echo "${KEYLINE:-}"
    echo "routes:"
    for ((i = 0; i < $1; i++)); do
        printf '  - in: udp://:%d\n    out: s%d\n    size: %d\n    conn-id: %d\n    from: hostA\n' \
            $((PORT + ($3 ? 0 : i))) $i "$2" $((i + 1))
    done
}
# start_ardnet HOSTCMD NAME YAML: starts it, sets PID; returns as wait_ready.
start_ardnet() {
    ready_fifo "$W/$2.ready"
    ARD_READY_FD=$READY_VAR $1 "$ARDNET" --config "$3" 2>"$W/$2.err" 9>"$W/$2.ready.fifo" &
    PID=$!
    wait_ready "$W/$2.ready" $PID
}

# measure KIND N SIZE TICK TXPID RXPID WRITERPID READERPID: the window; appends one line to
# results.
measure() {
    local kind=$1 n=$2 size=$3 tick=$4 tx=$5 rx=$6
    shift 6
    sleep "$WARM"
    local t0 ca0 cb0 ua0 ub0 t1 ca1 cb1 ua1 ub1 cw0 cr0 cw1 cr1
    ca0=$(cpu_of "$tx")
    cw0=$(cpu_of "$1")
    cr0=$(cpu_of "$2")
    cb0=$(cpu_of "$rx")
    ua0=$(udp_of "$A")
    ub0=$(udp_of "$B")
    t0=$(date +%s%N)
    kill -USR1 "$@"
    sleep "$WIN"
    t1=$(date +%s%N)
    ca1=$(cpu_of "$tx")
    cw1=$(cpu_of "$1")
    cr1=$(cpu_of "$2")
    cb1=$(cpu_of "$rx")
    ua1=$(udp_of "$A")
    ub1=$(udp_of "$B")
    kill -USR2 "$@"
    local p prc
    for p in "$@"; do
        prc=0
        wait "$p" || prc=$?
        if [ "$prc" != 0 ]; then
            echo "scale.sh: $kind N=$n $size B $tick: a program (pid $p) exited $prc:" >&2
            cat "$W/pub.err" "$W/sub.err" >&2
            FAILED=1
        fi
    done
    local pubf subf
    pubf=$(cat "$W/pub.out")
    subf=$(cat "$W/sub.out")
    val() { # key text
        local v
        v=$(tr ' ' '\n' <<<"$2" | sed -n "s/^$1=//p")
        echo "${v:--}"
    }
    awk -v kind="$kind" -v n="$n" -v size="$size" -v tick="$tick" -v hz="$TICK" \
        -v sec="$(((t1 - t0) / 1000000))" -v ca="$((ca1 - ca0))" -v cb="$((cb1 - cb0))" \
        -v cw="$((cw1 - cw0))" -v cr="$((cr1 - cr0))" \
        -v ua0="$ua0" -v ua1="$ua1" -v ub0="$ub0" -v ub1="$ub1" \
        -v pub="$(val published_per_s "$pubf")" -v miss="$(val missed_periods_per_s "$pubf")" \
        -v del="$(val delivered_per_s "$subf")" -v med="$(val lat_med_us "$subf")" \
        -v p99="$(val lat_p99_us "$subf")" 'BEGIN {
            s = sec / 1000; split(ua0, a0); split(ua1, a1); split(ub0, b0); split(ub1, b1)
            printf "%s %d %d %s %.1f %.1f %.0f %.0f %.0f %s %s %s %s %s %.1f %.1f\n", kind, n, size, tick,
                ca * 100 / hz / s, cb * 100 / hz / s, (a1[2] - a0[2]) / s, (b1[1] - b0[1]) / s,
                (b1[3] - b0[3]) / s, pub, miss, del, med, p99, cw * 100 / hz / s, cr * 100 / hz / s }' | tee -a "$W/results"
}

case_ardnet() { # N SIZE TICK [KIND]
    local n=$1 size=$2 tick=$3 kind=${4:-ardnet} shared=0 pa pb=0 ps pp rc p
    export ARD_DOMAIN=n${n}s${size}$tick
    local tries=$SHARED
    if [ "$SHARED" = auto ]; then
        tries=$([ -n "${FALLBACK:-}" ] && echo 0 || echo 1 0)
    fi
    for shared in $tries; do
        yaml_tx "$n" "$size" $shared >"$W/tx.yaml"
        yaml_rx "$n" "$size" $shared >"$W/rx.yaml"
        rc=0
        start_ardnet "$B" rx "$W/rx.yaml" || rc=$?
        pb=$PID
        [ "$rc" = 0 ] && break
        if [ "$SHARED" = auto ] && [ "$shared" = 1 ] && [ "$rc" = 111 ] &&
            grep -q 'already in use' "$W/rx.err"; then
            FALLBACK=1
            echo "ports: this ardnet refuses several routes on one port ($(head -1 "$W/rx.err"));" \
                "one port per route from here on"
            continue
        fi
        echo "scale.sh: the receiving ardnet failed (exit $rc):" >&2
        cat "$W/rx.err" >&2
        exit 111
    done
    PORTS=$([ "$shared" = 1 ] && echo "one port" || echo "a port per route")
    start_ardnet "$A" tx "$W/tx.yaml" || {
        echo "scale.sh: the sending ardnet failed:" >&2
        cat "$W/tx.err" >&2
        exit 111
    }
    pa=$PID
    # The writer and the reader attach N connections each (seconds for 1000 on a busy machine):
    # the warm-up starts when both are ready.
    ready_fifo "$W/sub.ready"
    ARD_READY_FD=$READY_VAR $B "$SCALE" sub "$n" "$size" >"$W/sub.out" 2>"$W/sub.err" \
        9>"$W/sub.ready.fifo" &
    ps=$!
    ready_fifo "$W/pub.ready"
    ARD_READY_FD=$READY_VAR $A "$SCALE" pub "$n" "$size" "$tick" >"$W/pub.out" 2>"$W/pub.err" \
        9>"$W/pub.ready.fifo" &
    pp=$!
    for p in "sub $ps" "pub $pp"; do
        set -- $p
        wait_ready "$W/$1.ready" "$2" || {
            echo "scale.sh: ardnet_scale $1 failed:" >&2
            cat "$W/$1.err" >&2
            exit 111
        }
    done
    measure "$kind" "$n" "$size" "$tick" $pa $pb $pp $ps
    killwait $pp $ps $pa $pb
    $A sh -c 'rm -f /dev/shm/*'
    $B sh -c 'rm -f /dev/shm/*'
}

case_baseline() { # N SIZE TICK
    local n=$1 size=$2 tick=$3 pr pt
    $B "$SCALE" udp-rx "$n" "$size" $PORT >"$W/sub.out" 2>"$W/sub.err" &
    pr=$!
    sleep 0.2
    $A "$SCALE" udp-tx "$n" "$size" "$tick" hostB $PORT >"$W/pub.out" 2>"$W/pub.err" &
    pt=$!
    measure baseline "$n" "$size" "$tick" $pt $pr $pt $pr
    killwait $pt $pr
}

echo "== ardnet at scale, $(date -u +%Y-%m-%dT%H:%MZ), $(nproc) CPUs, load average" \
    "$(cut -d' ' -f1-3 /proc/loadavg), window ${WIN} s after ${WARM} s"
echo "# kind N size tick tx_cpu% rx_cpu% dgram_out/s dgram_in/s rcvbuf_err/s published/s" \
    "missed_periods/s delivered/s lat_med_us lat_p99_us writer_cpu% reader_cpu%"
: >"$W/results"
[ "$SEALED" = 1 ] && "$ARDNET" keygen "$W/robot.key"
for n in $NS; do
    for size in $SIZES; do
        for tick in $TICKS; do
            KEYLINE="" case_ardnet "$n" "$size" "$tick"
            if [ "$SEALED" = 1 ]; then
                KEYLINE="key: $W/robot.key" case_ardnet "$n" "$size" "$tick" sealed
            else
                case_baseline "$n" "$size" "$tick"
            fi
        done
    done
done
echo "ports of the ardnet cases: $PORTS"

# The tables: per case, each side's CPU per delivered packet (us), ardnet / baseline.
awk -v k2="$K2" '
function carried(del, n) { return del >= 0.95 * n * 1000 }
{ key = $2 " | " $3 " B | " $4; k[key] = 1; order[++m] = key
  cpu_tx[$1, key] = $5; cpu_rx[$1, key] = $6; dout[$1, key] = $7; din[$1, key] = $8
  drop[$1, key] = $9; pub[$1, key] = $10; del[$1, key] = $12; med[$1, key] = $13
  p99[$1, key] = $14; n[key] = $2; cw[$1, key] = $15; cr[$1, key] = $16 }
function us(cpu, d) { return d > 0 ? sprintf("%.2f", cpu / 100 / d * 1e6) : "-" }
function ratio(a, b) { return (a != "-" && b != "-" && b + 0 > 0) ? sprintf("%.2f", a / b) : "-" }
END {
    print ""
    print "| N | size | tick | kind | published/s | delivered/s | datagrams out/s | in/s | rcvbuf drops/s | CPU tx | CPU rx | CPU writer, reader | latency s0 median (p99) us |"
    print "|---|---|---|---|---|---|---|---|---|---|---|---|---|"
    for (i = 1; i <= m; i += 2) {
        key = order[i]
        for (j = 0; j < 2; j++) {
            t = j ? k2 : "ardnet"
            wr = (j && k2 == "baseline") ? "(in tx, rx)" : sprintf("%.0f%%, %.0f%%", cw[t, key], cr[t, key])
            printf "| %s | %s | %s | %s | %s | %s | %s | %.0f%% | %.0f%% | %s | %s (%s) |\n", key,
                t, pub[t, key], del[t, key], dout[t, key], din[t, key], drop[t, key],
                cpu_tx[t, key], cpu_rx[t, key], wr, med[t, key], p99[t, key]
        }
    }
    print ""
    rname = k2 == "sealed" ? "ratio sealed / ardnet" : "ratio"
    print "| N | size | tick | CPU per packet tx: ardnet / " k2 " (us) | " rname " | rx: ardnet / " k2 " (us) | " rname " | carried at N x 1 kHz? |"
    print "|---|---|---|---|---|---|---|---|"
    for (i = 1; i <= m; i += 2) {
        key = order[i]
        atx = us(cpu_tx["ardnet", key], del["ardnet", key])
        btx = us(cpu_tx[k2, key], del[k2, key])
        arx = us(cpu_rx["ardnet", key], del["ardnet", key])
        brx = us(cpu_rx[k2, key], del[k2, key])
        ca = carried(del["ardnet", key], n[key]); cb = carried(del[k2, key], n[key])
        c = (ca && cb) ? "both" : sprintf("%s; sustained: ardnet %s/s, %s %s/s",
            ca ? k2 " not" : (cb ? "ardnet not" : "neither"), del["ardnet", key], k2,
            del[k2, key])
        # (SEALED=1: sealed over plain; else ardnet over the bare baseline)
        rtx = k2 == "sealed" ? ratio(btx, atx) : ratio(atx, btx)
        rrx = k2 == "sealed" ? ratio(brx, arx) : ratio(arx, brx)
        printf "| %s | %s / %s | %s | %s / %s | %s | %s |\n", key, atx, btx, rtx, arx, brx, rrx, c
    }
}' "$W/results"

# A case that delivered nothing, or whose programs failed or printed no figures, fails the run.
if ! awk '$10 == "-" || $12 == "-" || $12 + 0 == 0 { print "scale.sh: " $1 " N=" $2 " " $3 \
        " B " $4 ": nothing delivered or no figures" > "/dev/stderr"; bad = 1 } END { exit bad }' \
    "$W/results" || [ -n "${FAILED:-}" ]; then
    exit 1
fi
