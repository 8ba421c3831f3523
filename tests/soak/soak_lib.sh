# soak_lib.sh - the pieces of the soak and chaos run, as functions other tests can call
# (bash, sourced after tests/lib/netns.sh; scripts/soak.sh puts them together).
#
# Needs: D (domain), SOAK_DIR (a directory for logs and samples), `on HOST CMD...` (runs CMD
# on HOST with the domain, transport and PATH, as tests/ardstart/common.sh defines it).
#
#   soak_seed SEED                 seed the run's random choices (bash $RANDOM)
#   soak_pick N                    a seeded random number 0..N-1 (in $PICK)
#   soak_log TEXT                  a line "REALTIME_NS TEXT" in $SOAK_DIR/actions.log, shown too
#   relay_insert HOST DEST PORT RPORT SEED [ARGS]
#                                  datagrams from HOST to DEST:PORT go through the project's
#                                  relay (tests/ardnet/relay.c, $SOAK_RELAY) listening on
#                                  RPORT, with ARGS (default: 2% loss, 2% duplicates, 10%
#                                  reordered by up to 5 ms): an nftables rule on HOST (table
#                                  soak_relay) redirects them, except the relay's own (it runs
#                                  as user nobody). relay_remove HOST undoes it.
#   entry_pid HOST PATH            pid of the command of the local entry PATH in HOST's books
#   entry_state HOST PATH          its recorded state word ("" if no such entry)
#   wait_entry HOST PATH TIMEOUT   until PATH runs on HOST again (prints the seconds waited)
#   chaos_kill9 HOST PATH          kill -9 the entry's command
#   chaos_stall HOST PATH SECONDS  SIGSTOP the entry's whole process group, SIGCONT after
#   chaos_hostile FROM HOST PORT N N hostile datagrams from FROM to HOST:PORT: random bytes,
#                                  truncated and damaged ardnet headers
#   list_answers HOST              `ard list` answers on HOST within 2 s (0) or not (1)
#   sample_resources T             one line per long-lived process of every host into
#                                  $SOAK_DIR/samples.csv: t,host,what,pid,fds,rss_kb,threads;
#                                  and per host the domain's shm objects and books entries
#   hosts_nothing_left             0 when no host has shm, books entries or processes of $D

soak_seed() { RANDOM=$1; }
soak_pick() { PICK=$((RANDOM % $1)); }

soak_log() {
    local now
    now=$(date +%s%N)
    echo "$now $*" >>"$SOAK_DIR/actions.log"
    echo "[$(date -u +%H:%M:%S)] $*"
}

relay_insert() {
    local host=$1 dest=$2 port=$3 rport=$4 seed=$5
    shift 5
    local args=("$@")
    [ ${#args[@]} -gt 0 ] || args=(--drop 2 --dup 2 --reorder 10 --delay-ms 5)
    local daddr
    daddr=$(netns_addr "$dest")
    chmod 1777 "$SOAK_DIR"
    $(netns_cmd "$host") setpriv --reuid=nobody --regid=nogroup --clear-groups \
        "$SOAK_RELAY" --listen "$rport" --to "$daddr:$port" --seed "$seed" "${args[@]}" \
        --stats "$SOAK_DIR/relay_$host.stats" </dev/null >/dev/null 2>>"$SOAK_DIR/relay_$host.err" &
    RELAY_PIDS+=("$!")
    netns_run "$host" nft -f - <<NFT
table ip soak_relay {
  chain out {
    type nat hook output priority -100;
    meta skuid != "nobody" ip daddr $daddr udp dport $port dnat to $(netns_addr "$host"):$rport
  }
}
NFT
}

relay_remove() {
    netns_run "$1" nft delete table ip soak_relay 2>/dev/null || true
    local p
    for p in ${RELAY_PIDS[@]+"${RELAY_PIDS[@]}"}; do kill "$p" 2>/dev/null || true; done
}

# key=value of PATH's entry in HOST's books
entry_key() {
    netns_run "$1" sed -n "s/^$3=//p" "/run/ardnet/$D/e/${2//\//+}.entry" 2>/dev/null || true
}
entry_pid() { entry_key "$1" "$2" pid; }
entry_state() { entry_key "$1" "$2" state; }

wait_entry() {
    local host=$1 path=$2 limit=$3 t0 pid
    t0=$(date +%s%N)
    while :; do
        if [ "$(entry_state "$host" "$path")" = running ]; then
            pid=$(entry_pid "$host" "$path")
            if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; then
                echo "scale=3; ($(date +%s%N) - $t0) / 1000000000" | bc
                return 0
            fi
        fi
        [ $(($(date +%s%N) - t0)) -lt $((limit * 1000000000)) ] || return 1
        sleep 0.02
    done
}

chaos_kill9() {
    local pid
    pid=$(entry_pid "$1" "$2")
    [ -n "$pid" ] && [ "$pid" != 0 ] || return 1
    kill -9 "$pid" 2>/dev/null
}

chaos_stall() {
    local pid
    pid=$(entry_pid "$1" "$2")
    [ -n "$pid" ] && [ "$pid" != 0 ] || return 1
    kill -STOP -- "-$pid" 2>/dev/null || return 1
    sleep "$3"
    kill -CONT -- "-$pid" 2>/dev/null || true
}

chaos_hostile() {
    local from=$1 to=$2 port=$3 n=$4
    netns_run "$from" "${PY:-/usr/bin/python3}" - "$(netns_addr "$to")" "$port" "$n" "$RANDOM" <<'PY'
import random, socket, sys, struct
addr, port, n, seed = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
r = random.Random(seed)
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
for i in range(n):
    kind = i % 4
    if kind == 0:    # random bytes of random length
        d = bytes(r.getrandbits(8) for _ in range(r.randrange(0, 1500)))
    elif kind == 1:  # the magic, then garbage
        d = b"ARDN" + bytes(r.getrandbits(8) for _ in range(r.randrange(0, 200)))
    elif kind == 2:  # a header-sized datagram with plausible small fields
        d = b"ARDN" + struct.pack("<BBHIQQ", 1, r.randrange(4), r.randrange(64), r.getrandbits(32),
                                  r.getrandbits(64), r.getrandbits(64))
    else:            # truncated
        d = b"ARD"[: r.randrange(4)]
    try:
        s.sendto(d, (addr, port))
    except OSError:
        pass
PY
}

list_answers() {
    timeout 2 netns_run "$1" ard list >/dev/null 2>&1
}

sample_resources() {
    local t=$1 h path remote pid sup n
    for h in $SOAK_HOSTS; do
        # one look into the host per sample: path, remote, pid and supervisor of every entry
        while read -r path remote pid sup; do
            [ -n "$path" ] && [ "$remote" = 0 ] || continue
            sample_pid "$t" "$h" "$path" "$pid"
            sample_pid "$t" "$h" "$path#supervisor" "$sup"
        done < <(netns_run "$h" sh -c "cat /run/ardnet/$D/e/*.entry 2>/dev/null || true" |
            awk -F= '/^path=/ { p = $2 } /^remote=/ { r = $2 } /^pid=/ { i = $2 }
                     /^sup=/ { print p, r, i, $2 }')
        n=$(netns_run "$h" sh -c "ls /dev/shm | grep -c '^ard\.$D\.'; ls /run/ardnet/$D/e 2>/dev/null | grep -c '\.entry\$' || true" | tr '\n' ' ' || true)
        echo "$t,$h,shm_objects,0,${n%% *},0,0" >>"$SOAK_DIR/samples.csv"
        n=${n#* }
        echo "$t,$h,books_entries,0,${n%% *},0,0" >>"$SOAK_DIR/samples.csv"
    done
}

sample_pid() {
    local t=$1 h=$2 what=$3 pid=$4 fds rss thr
    [ -n "$pid" ] && [ "$pid" != 0 ] && [ -r "/proc/$pid/status" ] || return 0
    fds=$(ls "/proc/$pid/fd" 2>/dev/null | wc -l || true)
    rss=$(awk '/^VmRSS:/ { print $2 }' "/proc/$pid/status" 2>/dev/null || true)
    thr=$(awk '/^Threads:/ { print $2 }' "/proc/$pid/status" 2>/dev/null || true)
    [ -n "$rss" ] || return 0
    echo "$t,$h,$what,$pid,$fds,$rss,$thr" >>"$SOAK_DIR/samples.csv"
}

hosts_nothing_left() {
    local h n bad=0
    for h in $SOAK_HOSTS; do
        n=$(netns_run "$h" sh -c "ls /dev/shm | grep -c '^ard\.$D\.' || true")
        [ "$n" = 0 ] || { echo "left: $n shared memory objects of $D on $h" >&2; bad=1; }
        n=$(netns_run "$h" sh -c "ls /run/ardnet/$D/e 2>/dev/null | grep -c '\.entry$' || true")
        [ "$n" = 0 ] || { echo "left: $n books entries on $h: $(netns_run "$h" ls "/run/ardnet/$D/e")" >&2; bad=1; }
    done
    local p
    for p in $(pgrep -f 'ardstart|ardnet|ardrun|arm_|soak_probe|ard (web|record)' || true); do
        if { tr '\0' '\n' <"/proc/$p/environ"; } 2>/dev/null | grep -qx "ARD_DOMAIN=$D"; then
            echo "left: process $p: $(tr '\0' ' ' <"/proc/$p/cmdline" 2>/dev/null)" >&2
            bad=1
        fi
    done
    return $bad
}
