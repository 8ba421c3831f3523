# sshd.sh - a real sshd on each host made by netns.sh, for tests that go through ssh
# (bash, sourced after netns.sh and netns_create).
#
#   sshd_start HOST...     on each HOST: a private tmpfs on /run (sshd's privilege-separation
#                          directory /run/sshd, and anything else a host keeps in /run, e.g.
#                          ardstart's books, stays per host), a host key, and sshd listening
#                          on the host's address only. Keys and configs live in
#                          $NETNS_DIR/ssh; nothing is written outside it.
#   SSHD_CONFIG            client config to use: ssh -F "$SSHD_CONFIG" HOST CMD
#                          (root, generated user key, no known_hosts, BatchMode, ConnectTimeout 3)
#   SSHD_PATH              PATH set for sessions (default: $PATH of the caller)
# sshd processes live in the hosts' namespaces, so netns_destroy ends them.

SSHD_CONFIG=

sshd_start() {
    local d="$NETNS_DIR/ssh"
    mkdir -p "$d"
    chmod 700 "$d"
    [ -f "$d/id_ed25519" ] || ssh-keygen -q -t ed25519 -N '' -C ardtest -f "$d/id_ed25519"
    cp "$d/id_ed25519.pub" "$d/authorized_keys"
    SSHD_CONFIG="$d/ssh_config"
    cat >"$SSHD_CONFIG" <<CFG
Host *
    User root
    IdentityFile $d/id_ed25519
    IdentitiesOnly yes
    UserKnownHostsFile /dev/null
    GlobalKnownHostsFile /dev/null
    StrictHostKeyChecking no
    BatchMode yes
    ConnectTimeout 3
    LogLevel ERROR
CFG
    local h
    for h in "$@"; do
        ssh-keygen -q -t ed25519 -N '' -C "$h" -f "$d/host_$h"
        cat >"$d/sshd_$h.conf" <<CFG
ListenAddress $(netns_addr "$h")
Port 22
HostKey $d/host_$h
PidFile $d/sshd_$h.pid
AuthorizedKeysFile $d/authorized_keys
PermitRootLogin prohibit-password
PasswordAuthentication no
KbdInteractiveAuthentication no
UsePAM no
StrictModes no
PrintMotd no
PrintLastLog no
X11Forwarding no
AllowTcpForwarding no
SetEnv PATH=${SSHD_PATH:-$PATH}
CFG
        nsenter --mount="$(netns_mnt "$h")" sh -c \
            'mount -t tmpfs -o mode=755 tmpfs /run && mkdir -p /run/sshd && chmod 755 /run/sshd'
        # Not on our stdout: a test runner waits for every holder of its pipe.
        netns_run "$h" /usr/sbin/sshd -D -e -f "$d/sshd_$h.conf" >/dev/null 2>>"$d/sshd_$h.log" &
    done
    # Ready when a login works (from the first host to every host).
    local i ok
    for h in "$@"; do
        ok=0
        for i in $(seq 100); do
            if netns_run "$1" ssh -F "$SSHD_CONFIG" "$h" true 2>/dev/null; then
                ok=1
                break
            fi
            sleep 0.1
        done
        if [ "$ok" != 1 ]; then
            echo "sshd: no login to $h; sshd log:" >&2
            cat "$d/sshd_$h.log" >&2
            return 1
        fi
    done
}
