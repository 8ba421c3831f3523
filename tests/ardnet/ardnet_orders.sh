#!/bin/bash
# Start order is free, on two hosts (network namespaces, tests/lib/netns.sh; needs root):
# writer W (ttyped pub) and sending ardnet S on hostA, receiving ardnet R (neither --size nor
# --type: it learns them from S's descriptor when no local connection tells it) and reader B
# (ttyped sub) on hostB.
#  1. All 24 orders of starting W, S, R and B, each from nothing (no connection on either
#     host): B receives 20 of W's packets, every field right, counters and sequence numbers
#     increasing. S is given --type: started before W it creates the connection W joins.
#  2. With everything running and one reader BL kept through it all, R, S, W and B are each
#     killed (kill -9) and restarted in turn: after each restart a new reader gets 20 fresh
#     packets, and BL, which ran through every restart but its own, ends on W's last packet
#     with nothing damaged, older or out of sequence.
TEST_NAME=orders
PRIVATE_NET=0 # the hosts are namespaces of their own
source "$(dirname "$0")/common.sh"
source "$SRCDIR/tests/lib/netns.sh"
: "${TTYPED:?}"
netns_require_root
NETNS_NO_TRAP=1
trap 'cleanup_common; netns_destroy' EXIT
netns_create hostA hostB
A=$(netns_cmd hostA)
B=$(netns_cmd hostB)
TYPE=$("$TTYPED" type)
K=20 # packets each reader checks (W sends 500 a second)

start() { # W|S|R|B [reader name]
    case $1 in
    W) bg_ready W $A "$TTYPED" pub --ard data=arm.typed --rate 500 ;;
    S) bg_ready S $A "$ARDNET" --in arm.typed --out udp://hostB:7001 --type "$TYPE" ;;
    R) bg_ready R $B "$ARDNET" --in udp://:7001 --out arm.typed --from hostA ;;
    B)
        bg_ready "${2:-B}" $B "$TTYPED" sub --ard data=arm.typed --count $K --first-ms 10000 \
            --max-ms 20000 --result "$T/${2:-B}.result"
        ;;
    esac
}
finish_sub() { # NAME WHAT: the reader got its packets, all good
    wait "$(cat "$T/$1.pid")" ||
        fail "$2: reader: $(cat "$T/$1.result" 2>/dev/null) $(cat "$T/$1.err")"
    rm -f "$T/$1.pid"
}
kill9() { # NAME: kill -9 it, which must still be running
    local pid rc=0
    pid=$(cat "$T/$1.pid")
    if ! kill -KILL "$pid" 2>/dev/null; then
        wait "$pid" || rc=$?
        fail "$1 had exited by itself (status $rc)"
    fi
    wait "$pid" 2>/dev/null || true
    rm -f "$T/$1.pid"
}
clean_hosts() {
    $A sh -c 'rm -f /dev/shm/ard.*'
    $B sh -c 'rm -f /dev/shm/ard.*'
}

# ---- 1. every start order ---------------------------------------------------------------------
perms() { # the permutations of the arguments, one a line
    local i rest
    [ $# -le 1 ] && { echo "$*"; return; }
    for i in "$@"; do
        rest=()
        for x in "$@"; do [ "$x" = "$i" ] || rest+=("$x"); done
        perms "${rest[@]}" | sed "s/^/$i /"
    done
}
n=0
t0=$(date +%s%N)
while read -r order; do
    for p in $order; do start "$p"; done
    finish_sub B "order $order"
    [ "$(kv "$T/B.result" received)" = $K ] || fail "order $order: $(cat "$T/B.result")"
    for p in W S R; do stop $p || fail "order $order: $p exit $?"; done
    clean_hosts
    n=$((n + 1))
done < <(perms W S R B)
[ $n = 24 ] || fail "ran $n orders, not 24"
echo "1: all $n start orders delivered, $((($(date +%s%N) - t0) / 1000000)) ms"

# ---- 2. restarts while the others run -----------------------------------------------------------
t0=$(date +%s%N)
start R
start W
start S
bg_ready BL $B "$TTYPED" sub --ard data=arm.typed --first-ms 10000 --idle-ms 3000 \
    --max-ms 60000 --result "$T/BL.result"
start B B0
finish_sub B0 "all running"
for p in R S W; do
    kill9 $p
    start $p
    start B "B$p"
    finish_sub "B$p" "after restarting $p"
done
# The reader itself (BL stands for one that stays): one killed while it reads, and a new one.
bg_ready BB $B "$TTYPED" sub --ard data=arm.typed --idle-ms 10000 --max-ms 30000
kill9 BB
start B BB
finish_sub BB "after restarting B"
stop W || fail "W exit $?"
finish_sub BL "the reader that ran through the restarts"
last=$(sed -n 's/.*last=//p' "$T/W.out")
[ "$(kv "$T/BL.result" last)" = "$last" ] || fail "BL did not end on W's last packet ($last): $(cat "$T/BL.result")"
stop S || fail "S exit $?"
stop R || fail "R exit $?"
echo "2: restarts of R, S, W and B: BL $(cat "$T/BL.result"), $((($(date +%s%N) - t0) / 1000000)) ms"
echo PASS
