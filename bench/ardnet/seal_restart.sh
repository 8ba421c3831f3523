#!/bin/bash
# seal_restart.sh - a sealed link's first packet after a sender restart (root). Usage:
#   sudo bench/ardnet/seal_restart.sh [BUILD_DIR]        (default BUILD_DIR: build)
# hostA and hostB (network namespaces on one bridge) bridge a 1 kHz connection with --key.
# ROUNDS times (default 5), A's ardnet is stopped, left down for 0.5 s (longer than the
# receiver's hold-off, so that the new run is taken at once) and started again, while hostB
# records every datagram on its interface with its arrival time (tests/ardnet/attacker.py
# capture --stamp). For each restart it prints, from hostB's record: the first datagram of the
# new run (t0), B's challenge to it, A's answer (the held datagram is taken in when the answer
# is: the first packet after the restart), and the round trip (challenge to answer).
set -euo pipefail
SRC=$(cd "$(dirname "$0")/../.." && pwd)
BUILD=$(cd "${1:-$SRC/build}" && pwd)
ARDNET=$BUILD/src/ardnet/ardnet
TBLOCK=$BUILD/tests/ardnet/ardnet_tblock
ROUNDS=${ROUNDS:-5}
source "$SRC/tests/lib/netns.sh"
netns_require_root
W=$(mktemp -d /tmp/seal_restart.XXXXXX)
NETNS_NO_TRAP=1
trap 'kill $(jobs -p) 2>/dev/null; netns_destroy; [ -n "${KEEP:-}" ] || rm -rf "$W"' EXIT
netns_create hostA hostB
A=$(netns_cmd hostA)
B=$(netns_cmd hostB)
export ARD_DOMAIN=sealrestart
"$ARDNET" keygen "$W/k"
$B "$ARDNET" --key "$W/k" --in udp://:7001 --out arm.state 2>"$W/B.err" &
$A "$TBLOCK" pub --ard data=arm.state --rate 1000 >/dev/null &
sleep 0.3
echo "# round first_to_answer_us challenge_to_answer_us (arrival times stamped by the kernel, CLOCK_REALTIME; $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg))"
for r in $(seq "$ROUNDS"); do
    $A "$ARDNET" --key "$W/k" --in arm.state --out udp://hostB:7001 2>>"$W/A.err" &
    pa=$!
    sleep 0.5
    # (each side hears what comes in: B the data and the answer, A the challenge; one clock)
    $B /usr/bin/python3 "$SRC/tests/ardnet/attacker.py" capture 0 2.5 "$W/capB" --stamp >/dev/null &
    pc=$!
    $A /usr/bin/python3 "$SRC/tests/ardnet/attacker.py" capture 0 2.5 "$W/capA" --stamp >/dev/null &
    pd=$!
    sleep 0.2
    kill $pa
    wait $pa || true
    sleep 0.5
    $A "$ARDNET" --key "$W/k" --in arm.state --out udp://hostB:7001 2>>"$W/A.err" &
    pa=$!
    wait $pc $pd
    sort -n "$W/capA" "$W/capB" >"$W/cap"
    kill $pa
    wait $pa || true
    # the new run: the first datagram after the longest gap of A's datagrams to 7001
    awk -v r="$r" -v a="$(netns_addr hostA)" '
        $2 == a && $5 == 7001 { if (last && $1 - last > gap) { gap = $1 - last; t0 = $1; ep = substr($6, 33, 16) } last = $1 }
        { line[NR] = $0 }
        END {
            for (i = 1; i <= NR; i++) {
                split(line[i], f, " ")
                if (f[1] < t0) continue
                fl = substr(f[6], 11, 2)
                if (!tc && f[2] != a && fl == "08") tc = f[1]
                if (tc && !ta && f[2] == a && fl == "10") ta = f[1]
            }
            if (!t0 || !tc || !ta)
                printf "%d - - (no restart, challenge or answer in the record)\n", r
            else
                printf "%d %.0f %.0f\n", r, (ta - t0) * 1e6, (ta - tc) * 1e6
        }' "$W/cap"
done
