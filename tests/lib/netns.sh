# netns.sh - "hosts" made of network + mount namespaces, for multi-host tests (bash, sourced).
#
# Each host gets its own network namespace with one interface eth0 (a veth) plugged into a
# bridge that lives in a separate "switch" namespace, so nothing is added to the caller's
# network namespace. Each host also gets a persistent mount namespace with a private tmpfs on
# /dev/shm (the hosts share nothing but the wire) and a private /etc/hosts that names every
# host, so "udp://hostB:7001" or "ssh hostB" resolve inside the hosts (the machine itself
# needs no /etc/hosts: see netns_hosts_file).
#
# Interface (stable; other tests rely on it):
#
#   source "$SRC/tests/lib/netns.sh"
#   netns_require_root            exit 77 (CTest skip) unless root and `ip netns` works
#   netns_create HOST...          create the hosts (names [A-Za-z0-9_-], max 8 chars);
#                                 host i (1-based, in the order given) gets address
#                                 $NETNS_SUBNET.$((i+10))/24 on eth0; lo is up.
#                                 Installs an EXIT trap calling netns_destroy unless
#                                 NETNS_NO_TRAP=1 (then call netns_destroy from your own trap).
#   netns_run HOST CMD [ARG...]   run CMD on HOST (in its network and mount namespaces).
#                                 It is a shell function: `netns_run H cmd &` works, but $! is
#                                 then a subshell, not cmd. When you need cmd's pid, use:
#   netns_cmd HOST                print the command prefix that runs a command on HOST
#                                 (nsenter execs, so `$(netns_cmd H) cmd args & pid=$!` gives
#                                 cmd's own pid)
#   netns_addr HOST               print HOST's IPv4 address
#   netns_netns HOST              print the `ip netns` name of HOST (e.g. for `ip -n`, nft)
#   netns_mnt HOST                print the path of HOST's persistent mount-namespace file
#   netns_destroy                 kill every process in the hosts (TERM, then KILL after 2 s),
#                                 delete the namespaces, unmount, remove the state dir.
#                                 Idempotent; safe to call from a trap after a partial create.
#
# Variables (set before netns_create to override):
#   NETNS_PREFIX   prefix of namespace names (default "ard<pid>r<random>"), unique per run
#   NETNS_SUBNET   first three octets (default: 10.X.Y, X and Y random per run); tests use
#                  netns_addr or $NETNS_SUBNET, never a literal address
#   NETNS_DIR      state directory (default: a new mktemp -d)
#
# Isolation: everything a run makes is named after its own prefix or lives inside its own
# namespaces (veths, bridge, addresses, /etc/hosts, /dev/shm), so runs in parallel (ctest -j,
# or two copies of the suite) share nothing and need no lock. Cleanup: netns_destroy from the
# EXIT trap (TERM, INT and HUP are turned into an exit so that the trap runs); a run killed
# with SIGKILL (a CTest timeout) is cleaned by the next netns_create on the machine, which
# removes what runs whose test process is gone left behind (registered in $NETNS_RUNDIR).
#
# Example:
#   netns_require_root
#   netns_create hostA hostB
#   netns_run hostB ardnet --in udp://:7001 --out arm.state &
#   netns_run hostA ardnet --in arm.state --out udp://hostB:7001 &

NETNS_PREFIX=${NETNS_PREFIX:-ard$$r$(printf %04x $RANDOM)}
NETNS_SUBNET=${NETNS_SUBNET:-10.$((64 + RANDOM % 128)).$((RANDOM % 256))}
NETNS_DIR=${NETNS_DIR:-}
NETNS_RUNDIR=${NETNS_RUNDIR:-/run/ard-netns}
NETNS_HOSTS=()

# Remove what earlier runs left when their test process died without cleaning up (SIGKILL).
# A run is registered as $NETNS_RUNDIR/PREFIX (PREFIX = ard<pid>r<token>) holding its state
# directory; it is stale when that pid no longer exists.
netns_sweep() {
    local f prefix pid dir ns m
    for f in "$NETNS_RUNDIR"/ard*r*; do
        [ -f "$f" ] || continue
        prefix=${f##*/}
        pid=${prefix#ard}
        pid=${pid%%r*}
        [[ $pid =~ ^[0-9]+$ ]] || continue
        [ "$prefix" != "$NETNS_PREFIX" ] || continue
        kill -0 "$pid" 2>/dev/null && continue
        dir=$(cat "$f" 2>/dev/null || true)
        [[ $dir == /tmp/?* && $dir != *..* ]] || dir="" # only ever a directory of ours
        for ns in $(ip netns list 2>/dev/null | awk -v p="$prefix-" 'index($1, p) == 1 { print $1 }'); do
            local pids
            pids=$(ip netns pids "$ns" 2>/dev/null || true)
            [ -z "$pids" ] || kill -KILL $pids 2>/dev/null || true
            ip netns del "$ns" 2>/dev/null || true
        done
        if [ -n "$dir" ] && [ -f "$dir/mounts" ]; then
            for m in $(tac "$dir/mounts"); do
                umount "$m" 2>/dev/null || umount -l "$m" 2>/dev/null || true
            done
        fi
        [ -z "$dir" ] || rm -rf "$dir"
        rm -f "$f"
        echo "netns: removed what the dead run $prefix left" >&2
    done
}

netns_require_root() {
    if [ "$(id -u)" != 0 ]; then
        echo "netns: needs root, skipping" >&2
        exit 77
    fi
    local probe="${NETNS_PREFIX}probe"
    if ! ip netns add "$probe" 2>/dev/null; then
        echo "netns: cannot create network namespaces, skipping" >&2
        exit 77
    fi
    ip netns del "$probe" 2>/dev/null || true
}

netns_netns() { echo "${NETNS_PREFIX}-$1"; }
netns_mnt() { echo "$NETNS_DIR/ns/$1.mnt"; }

netns_addr() {
    local i
    for i in "${!NETNS_HOSTS[@]}"; do
        if [ "${NETNS_HOSTS[$i]}" = "$1" ]; then
            echo "$NETNS_SUBNET.$((i + 11))"
            return 0
        fi
    done
    echo "netns: unknown host '$1'" >&2
    return 1
}

netns_cmd() {
    echo nsenter --mount="$NETNS_DIR/ns/$1.mnt" --net="/var/run/netns/$(netns_netns "$1")" --
}

netns_run() {
    local host=$1
    shift
    nsenter --mount="$NETNS_DIR/ns/$host.mnt" --net="/var/run/netns/$(netns_netns "$host")" -- "$@"
}

# netns_hosts_file HOST MNT: HOST's own /etc/hosts (naming every host), inside its mount
# namespace only. Bound over the machine's file when there is one; a machine without it (a
# minimal root file system) gets no file made in its /etc: the host sees an overlay of /etc
# whose upper layer holds the file, or, without overlayfs, a copy of /etc with it.
netns_hosts_file() {
    local h=$1 mnt=$2 d="$NETNS_DIR/etc/$1"
    if [ -f /etc/hosts ]; then
        nsenter --mount="$mnt" mount --bind "$NETNS_DIR/hosts" /etc/hosts
        return
    fi
    mkdir -p "$d/upper" "$d/work"
    install -m 644 "$NETNS_DIR/hosts" "$d/upper/hosts"
    if nsenter --mount="$mnt" mount -t overlay overlay \
        -o "lowerdir=/etc,upperdir=$d/upper,workdir=$d/work" /etc 2>"$d/overlay.err"; then
        return
    fi
    mkdir -p "$d/copy"
    cp -a /etc/. "$d/copy/"
    install -m 644 "$NETNS_DIR/hosts" "$d/copy/hosts"
    nsenter --mount="$mnt" mount --bind "$d/copy" /etc || {
        echo "netns: no /etc/hosts here, and neither an overlay of /etc ($(cat "$d/overlay.err")) nor a copy of it could be mounted for $h" >&2
        return 1
    }
}

netns_create() {
    [ "$#" -ge 1 ] || { echo "netns_create: no hosts given" >&2; return 1; }
    if [ -z "$NETNS_DIR" ]; then
        NETNS_DIR=$(mktemp -d /tmp/netns.XXXXXX)
    fi
    mkdir -p "$NETNS_DIR"
    if [ "${NETNS_NO_TRAP:-0}" != 1 ]; then
        trap netns_destroy EXIT
        trap 'exit 129' HUP
        trap 'exit 130' INT
        trap 'exit 143' TERM
    fi
    netns_sweep
    mkdir -p "$NETNS_RUNDIR"
    echo "$NETNS_DIR" >"$NETNS_RUNDIR/$NETNS_PREFIX"
    # A mount namespace is kept by bind-mounting its /proc/PID/ns/mnt onto a file, which the
    # kernel refuses (EINVAL) where the file's mount has shared propagation, as /tmp may have
    # (e.g. inside another private namespace): keep those files on a private mount of our own.
    mkdir -p "$NETNS_DIR/ns"
    mount --bind "$NETNS_DIR/ns" "$NETNS_DIR/ns"
    mount --make-private "$NETNS_DIR/ns"
    echo "$NETNS_DIR/ns" >"$NETNS_DIR/mounts"
    local sw
    sw=$(netns_netns sw)
    echo "$sw" >"$NETNS_DIR/namespaces"
    ip netns add "$sw"
    ip -n "$sw" link set lo up
    ip -n "$sw" link add br0 type bridge
    ip -n "$sw" link set br0 up

    local h i=0
    {
        echo "127.0.0.1 localhost"
        for h in "$@"; do
            echo "$NETNS_SUBNET.$((i + 11)) $h"
            i=$((i + 1))
        done
    } >"$NETNS_DIR/hosts"

    i=0
    for h in "$@"; do
        if ! [[ "$h" =~ ^[A-Za-z0-9_-]{1,8}$ ]]; then
            echo "netns_create: bad host name '$h'" >&2
            return 1
        fi
        local ns
        ns=$(netns_netns "$h")
        NETNS_HOSTS+=("$h")
        echo "$ns" >>"$NETNS_DIR/namespaces"
        ip netns add "$ns"
        # Made inside the switch namespace, so names cannot clash with other test runs.
        ip -n "$sw" link add "p$i" type veth peer name eth0 netns "$ns"
        ip -n "$sw" link set "p$i" master br0 up
        ip -n "$ns" link set lo up
        ip -n "$ns" addr add "$NETNS_SUBNET.$((i + 11))/24" dev eth0
        ip -n "$ns" link set eth0 up

        local mnt="$NETNS_DIR/ns/$h.mnt"
        touch "$mnt"
        echo "$mnt" >>"$NETNS_DIR/mounts"
        # Rarely (seen under load, inside another private mount namespace) the kernel refuses
        # the bind of the new namespace with EINVAL, as it does for a namespace bound into
        # itself, and keeps refusing it for that run; the cause was not found. Then the
        # namespace is kept by a process instead: a sleeper in the host's network namespace
        # (so that netns_destroy and the sweep end it with the host's other processes), whose
        # /proc/PID/ns/mnt the host's file points to.
        local try bound=""
        for try in 1 2 3; do
            [ -z "${NETNS_NO_BIND:-}" ] || break # tests of this fallback
            if unshare --mount="$mnt" --propagation private true 2>"$NETNS_DIR/bind.err"; then
                bound=1
                break
            fi
            sleep 0.2
        done
        if [ -z "$bound" ]; then
            [ -z "${NETNS_NO_BIND:-}" ] &&
                echo "netns: the kernel refused to keep the mount namespace of $h by a bind ($(cat "$NETNS_DIR/bind.err")); kept by a process instead" >&2
            nsenter --net="/var/run/netns/$ns" unshare --mount --propagation private \
                sleep infinity </dev/null >/dev/null 2>&1 &
            local keeper=$! self
            self=$(readlink /proc/self/ns/mnt)
            for try in $(seq 100); do
                [ "$(readlink "/proc/$keeper/ns/mnt" 2>/dev/null)" != "$self" ] &&
                    [ "$(readlink "/proc/$keeper/exe" 2>/dev/null)" = "$(readlink -f "$(command -v sleep)")" ] &&
                    break
                sleep 0.05
            done
            kill -0 "$keeper" 2>/dev/null || {
                echo "netns: cannot keep the mount namespace of $h" >&2
                return 1
            }
            rm -f "$mnt"
            ln -s "/proc/$keeper/ns/mnt" "$mnt"
        fi
        nsenter --mount="$mnt" mount -t tmpfs -o mode=1777 tmpfs /dev/shm
        netns_hosts_file "$h" "$mnt"
        i=$((i + 1))
    done
    # Wait for the links (bridge ports leave the listening/learning state quickly when STP
    # is off, but the carrier takes a moment).
    local n
    for n in $(seq 50); do
        if ip -n "$(netns_netns "$1")" link show eth0 | grep -q 'state UP'; then
            break
        fi
        sleep 0.1
    done
}

netns_destroy() {
    [ -n "$NETNS_DIR" ] && [ -d "$NETNS_DIR" ] || return 0
    local ns pids
    if [ -f "$NETNS_DIR/namespaces" ]; then
        for ns in $(cat "$NETNS_DIR/namespaces"); do
            pids=$(ip netns pids "$ns" 2>/dev/null || true)
            [ -n "$pids" ] && kill -TERM $pids 2>/dev/null || true
        done
        local t
        for t in $(seq 20); do
            pids=""
            for ns in $(cat "$NETNS_DIR/namespaces"); do
                pids+=$(ip netns pids "$ns" 2>/dev/null || true)
            done
            [ -z "$pids" ] && break
            sleep 0.1
        done
        for ns in $(cat "$NETNS_DIR/namespaces"); do
            pids=$(ip netns pids "$ns" 2>/dev/null || true)
            [ -n "$pids" ] && kill -KILL $pids 2>/dev/null || true
            ip netns del "$ns" 2>/dev/null || true
        done
    fi
    if [ -f "$NETNS_DIR/mounts" ]; then
        local m
        for m in $(tac "$NETNS_DIR/mounts"); do
            umount "$m" 2>/dev/null || umount -l "$m" 2>/dev/null || true
        done
    fi
    rm -rf "$NETNS_DIR"
    rm -f "$NETNS_RUNDIR/$NETNS_PREFIX"
    NETNS_DIR=""
    NETNS_HOSTS=()
}
