#!/bin/bash
# Camera frames and point clouds between two hosts (network namespaces on one bridge, each with
# its own /dev/shm). Needs root.
#  1. 1 MiB at 30 Hz and 4 MiB at 10 Hz, with 0 %, 1 % and 5 % of the datagrams dropped by
#     nftables on B: every packet the reader on B gets is exact (tblock's checksummed pattern)
#     and newer than the one before, never torn or mixed; the share delivered is printed; with
#     loss, B counts the packets abandoned incomplete (drop_partial).
#  2. The sender (ardnet A) killed with -9 in the middle of 4 MiB frames and started again:
#     nothing torn is delivered, and the new run's frames are delivered.
#  3. A sealed route (--key) with 1 MiB packets.
#  4. --max-bandwidth: 1 MiB at 10 Hz paced at 400 Mbit/s all arrive; at 100 Mbit/s (less than
#     the 252 Mbit/s they need) A sends no faster than that and abandons each packet for
#     the newer one (drop_paced): none is delivered torn.
#  5. The catalog (ardnet --auto on both hosts, no route configured) forwards a 1 MiB
#     connection from A's writer to B's reader, exact.
#  6. Joint data at 1 kHz next to 4 MiB frames in one ardnet (a routes file): frames are
#     delivered while the joint route is idle; with both written, the joint data keeps flowing
#     (at least half delivered), exact, with the frames exact; with both routes to one
#     destination, joint datagrams go out between the rounds of a frame's fragments.
TEST_NAME=frames
PRIVATE_NET=0 # the hosts are namespaces of their own
source "$(dirname "$0")/common.sh"
source "$SRCDIR/tests/lib/netns.sh"
netns_require_root
NETNS_NO_TRAP=1
trap 'cleanup_common; netns_destroy' EXIT
netns_create hostA hostB
A=$(netns_cmd hostA)
B=$(netns_cmd hostB)
MIB=1048576
type_of() { echo "u64 u64 i64 u32[$((($1 - 24) / 4))]"; }

# Loss on B's input: the network's (a drop on A's output would fail A's send calls instead).
loss_on() { # PERCENT
    $B nft -f - <<NFT
table ip ardframes {
  chain in {
    type filter hook input priority 0;
    udp dport 7001 numgen random mod 100 < $1 drop
  }
}
NFT
}
loss_off() { $B nft delete table ip ardframes 2>/dev/null || true; }

# run NAME SIZE RATE MS [ardnet options for both]: (and $A_OPTS for A only) a writer on A at RATE for MS, the reader on
# B; checks the reader's packets and prints the share delivered.
run() {
    local name=$1 size=$2 rate=$3 ms=$4 c
    shift 4
    c=f${name//[^a-zA-Z0-9]/_} # a connection per run (its size is its own)
    bg_ready ardB $B "$ARDNET" --in udp://:7001 --out $c --size "$size" --type "$(type_of "$size")" \
        --from hostA --stats-file "$T/$name.B.stats" "$@"
    bg sub $B "$TBLOCK" sub --size "$size" --ard data=$c --duration-ms $((ms + 800)) \
        --result "$T/$name.sub"
    bg_ready ardA $A "$ARDNET" --in $c --out udp://hostB:7001 --size "$size" \
        --type "$(type_of "$size")" --stats-file "$T/$name.A.stats" "$@" ${A_OPTS:-}
    $A "$TBLOCK" pub --size "$size" --ard data=$c --rate "$rate" --count $((rate * ms / 1000)) \
        >"$T/$name.pub"
    wait "$(cat "$T/sub.pid")" || fail "$name: reader got a damaged or older packet: $(cat "$T/$name.sub")"
    rm -f "$T/sub.pid"
    stop ardA
    stop ardB
    local sent got
    sent=$(kv "$T/$name.pub" sent)
    got=$(counter "$T/$name.B.stats" $c received)
    echo "$name: ardnet A sent $(counter "$T/$name.A.stats" $c sent) packets" \
        "($(counter "$T/$name.A.stats" $c fragments) fragments), B delivered $got" \
        "($(counter "$T/$name.B.stats" $c fragments) fragments kept," \
        "drop_partial=$(counter "$T/$name.B.stats" $c drop_partial));" \
        "reader: $(cat "$T/$name.sub"); share delivered $((100 * got / (sent > 0 ? sent : 1))) % of $sent"
    [ "$(kv "$T/$name.sub" bad)" = 0 ] || fail "$name: torn packets"
    [ "$(kv "$T/$name.sub" received)" -le "$got" ] || fail "$name: reader got more than B delivered"
}

# ---- 1. sizes and loss ------------------------------------------------------------------------
for loss in 0 1 5; do
    loss_off
    [ $loss = 0 ] || loss_on $loss
    run "1MiB-${loss}pct" $MIB 30 1000
    run "4MiB-${loss}pct" $((4 * MIB)) 10 1000
    if [ $loss = 0 ]; then
        # Without loss every packet A sent is delivered whole by B (how many A took of the
        # writer's depends on the load of the machine: loosely).
        for n in 1MiB 4MiB; do
            a=$(counter "$T/$n-0pct.A.stats" f${n}_0pct sent)
            b=$(counter "$T/$n-0pct.B.stats" f${n}_0pct received)
            [ "$b" -ge $((a - 1)) ] && [ "$b" -ge 3 ] || fail "$n without loss: A sent $a, B delivered $b"
        done
    else
        # Every lost datagram costs its whole packet: counted as abandoned incomplete.
        [ "$(counter "$T/4MiB-${loss}pct.B.stats" f4MiB_${loss}pct drop_partial)" -ge 3 ] ||
            fail "4 MiB with $loss % loss: no partial packets counted"
    fi
done
loss_off

# ---- 2. the sender killed mid-frame ---------------------------------------------------------
S=$((4 * MIB))
bg_ready ardB $B "$ARDNET" --in udp://:7001 --out fkill --size $S --type "$(type_of $S)" \
    --from hostA --stats-file "$T/kill.B.stats"
bg sub $B "$TBLOCK" sub --size $S --ard data=fkill --idle-ms 2000 --result "$T/kill.sub"
bg pub $A "$TBLOCK" pub --size $S --ard data=fkill --rate 10
bg_ready ardA $A "$ARDNET" --in fkill --out udp://hostB:7001
sleep 1.2
for k in 1 2 3; do # at a random point of a frame's burst each time
    sleep 0.$((RANDOM % 10))
    kill -KILL "$(cat "$T/ardA.pid")"
    wait "$(cat "$T/ardA.pid")" 2>/dev/null || true
    bg_ready ardA $A "$ARDNET" --in fkill --out udp://hostB:7001
    sleep 0.5
done
restarted=$(date +%s%6N) # (tblock's counter: the writer's realtime in microseconds)
sleep 1.5
stop pub # (the reader ends 2 s after its last frame)
wait "$(cat "$T/sub.pid")" || fail "sender restarts: reader got a damaged or older packet: $(cat "$T/kill.sub")"
rm -f "$T/sub.pid"
stop ardA
stop ardB
echo "sender killed 3 times: reader $(cat "$T/kill.sub"); B: drop_partial=$(counter "$T/kill.B.stats" fkill drop_partial) drop_epoch=$(counter "$T/kill.B.stats" fkill drop_epoch)"
[ "$(kv "$T/kill.sub" received)" -ge 15 ] || fail "too few frames across the sender's restarts"
# Frames written after the last restart were delivered.
[ "$(kv "$T/kill.sub" last)" -gt "$restarted" ] || fail "no frame delivered after the last restart"

# ---- 3. sealed, 1 MiB -------------------------------------------------------------------------
"$ARDNET" keygen "$T/frames.key" >/dev/null
run "1MiB-sealed" $MIB 30 1500 --key "$T/frames.key"
[ "$(counter "$T/1MiB-sealed.B.stats" f1MiB_sealed received)" -ge 22 ] || fail "sealed 1 MiB: too few frames"
[ "$(counter "$T/1MiB-sealed.B.stats" f1MiB_sealed drop_auth)" = 0 ] || fail "sealed fragments refused"
# ---- 4. pacing ----------------------------------------------------------------------------------
A_OPTS="--max-bandwidth 400M" run "1MiB-400M" $MIB 10 2000
# (22 ms of pacing per 100 ms frame: only a stall of the loaded machine abandons one)
[ "$(counter "$T/1MiB-400M.B.stats" f1MiB_400M received)" -ge 12 ] || fail "paced at 400M: too few frames"
[ "$(counter "$T/1MiB-400M.A.stats" f1MiB_400M drop_paced)" -le 6 ] || fail "paced at 400M: frames abandoned"
t0=$(date +%s%N)
A_OPTS="--max-bandwidth 100M" run "1MiB-100M" $MIB 30 2000
t1=$(date +%s%N)
frags=$(counter "$T/1MiB-100M.A.stats" f1MiB_100M fragments)
paced=$(counter "$T/1MiB-100M.A.stats" f1MiB_100M drop_paced)
# The writer ran 2 s; ardnet A ran longer than that (start and stop): its rate is at most
# the fragments' bits over 2 s.
mbit=$((frags * (1472 + 28) * 8 / 2000000))
echo "paced at 100M: $frags fragments (at most $mbit Mbit/s over the writer's 2 s), drop_paced=$paced"
[ "$mbit" -le 110 ] || fail "paced at 100M: sent $mbit Mbit/s"
[ "$paced" -ge 20 ] || fail "paced at 100M: too few packets abandoned for newer ones ($paced)"
# (a frame needs 90 ms at 100M, the next comes after 33: latest value, none completes but
# maybe the writer's last)
[ "$(counter "$T/1MiB-100M.B.stats" f1MiB_100M received)" -le 2 ] || fail "paced at 100M: frames completed"
# ---- 5. the catalog ------------------------------------------------------------------------------
for h in A B; do
    ns=$A
    [ $h = B ] && ns=$B
    # shellcheck disable=SC2016,SC2086
    bg_ready auto$h $ns unshare --uts sh -c 'hostname "$0" && exec "$@"' host$h \
        "$ARDNET" --auto --auto-peers hostA,hostB --stats-file "$T/auto$h.stats"
done
bg pub $A "$TBLOCK" pub --size $MIB --ard data=cam.rgb --rate 30
sleep 0.5
bg sub $B "$TBLOCK" sub --size $MIB --ard data=cam.rgb --first-ms 3000 --duration-ms 2000 \
    --result "$T/auto.sub"
wait "$(cat "$T/sub.pid")" || fail "catalog: reader got a damaged or older frame: $(cat "$T/auto.sub")"
rm -f "$T/sub.pid"
stop pub
stop autoA
stop autoB
echo "catalog, 1 MiB at 30 Hz: reader $(cat "$T/auto.sub")"
[ "$(kv "$T/auto.sub" received)" -ge 10 ] || fail "the catalog did not forward the 1 MiB connection"
# ---- 6. joint data next to frames in one ardnet ---------------------------------------------
# One ardnet on each host (a routes file) carries 112-byte joint data at 1 kHz and 4 MiB frames
# at 10 Hz, written at the same time for 3 s.
JS=112
F=$((4 * MIB))
# jroute IN OUT SIZE CONN_ID [from]: one route of a routes file
jroute() {
    printf '  - in: %s\n    out: %s\n    size: %s\n    type: "%s"\n    conn-id: %s\n' \
        "$1" "$2" "$3" "$(type_of "$3")" "$4"
    [ -z "${5:-}" ] || printf '    from: %s\n' "$5"
}
# joint_writers NAME: both writers on A (the frames in the background), then B's readers' end
joint_writers() {
    bg fpub $A "$TBLOCK" pub --size $F --ard data=jcam --rate 10 --count 30
    $A "$TBLOCK" pub --size $JS --ard data=jstate --rate 1000 --count 3000 >"$T/$1.jpub"
    wait "$(cat "$T/fpub.pid")" || fail "$1: frame writer failed"
    rm -f "$T/fpub.pid"
}
# 6a. Each route to its own port: the joint data keeps flowing next to the frames (B
# publishes at least half of what its writer sent), every joint packet and every frame the
# readers get is exact, and frames are delivered.
{
    echo "routes:"
    jroute udp://:7002 jstate $JS 11 hostA
    jroute udp://:7001 jcam $F 12 hostA
} >"$T/jointB.yaml"
{
    echo "routes:"
    jroute jstate udp://hostB:7002 $JS 11
    jroute jcam udp://hostB:7001 $F 12
} >"$T/jointA.yaml"
bg_ready ardB $B "$ARDNET" -c "$T/jointB.yaml" --stats-file "$T/joint.B.stats"
bg jsub $B "$TBLOCK" sub --size $JS --ard data=jstate --result "$T/joint.jsub"
bg sub $B "$TBLOCK" sub --size $F --ard data=jcam --result "$T/joint.fsub"
bg_ready ardA $A "$ARDNET" -c "$T/jointA.yaml" --stats-file "$T/joint.A.stats"
# First the frames alone, the joint route idle: a frame going out in rounds does not leave the
# sending thread asleep on the other, idle input.
$A "$TBLOCK" pub --size $F --ard data=jcam --rate 10 --count 10 >/dev/null
for _ in $(seq 100); do # (B rewrites its stats file every second)
    [ "$(counter "$T/joint.B.stats" jcam received 2>/dev/null)" -ge 3 ] && break
    sleep 0.2
done
[ "$(counter "$T/joint.B.stats" jcam received)" -ge 3 ] || fail "frames next to an idle route: not delivered"
joint_writers joint
# (each reader ends 2 s after its last packet)
wait "$(cat "$T/jsub.pid")" || fail "joint data: reader got a damaged or older packet: $(cat "$T/joint.jsub")"
wait "$(cat "$T/sub.pid")" || fail "frames next to joint data: reader got a damaged or older frame: $(cat "$T/joint.fsub")"
rm -f "$T/jsub.pid" "$T/sub.pid"
stop ardA
stop ardB
jsent=$(kv "$T/joint.jpub" sent)
jgot=$(counter "$T/joint.B.stats" jstate received)
echo "joint data next to 4 MiB frames, one ardnet: writer sent $jsent, A sent" \
    "$(counter "$T/joint.A.stats" jstate sent), B delivered $jgot, reader $(cat "$T/joint.jsub");" \
    "frames: A sent $(counter "$T/joint.A.stats" jcam sent), B delivered" \
    "$(counter "$T/joint.B.stats" jcam received), reader $(cat "$T/joint.fsub")"
[ "$jgot" -ge $((jsent / 2)) ] || fail "joint data starved next to frames: $jgot of $jsent delivered"
[ "$(kv "$T/joint.jsub" received)" -ge 1 ] || fail "joint data: the reader got nothing"
[ "$(counter "$T/joint.B.stats" jcam received)" -ge 3 ] || fail "frames next to joint data: too few delivered"
[ "$(kv "$T/joint.fsub" bad)" = 0 ] || fail "frames next to joint data: torn frames"
# 6b. Both routes to one destination (one queue in A's sending thread), its datagrams taken by
# tests/ardnet/wireorder.py in their order of arrival: a frame's fragments go out in rounds,
# and joint data taken in while a frame is being sent goes out between two rounds, not after
# the whole frame (some joint datagrams arrive between two fragments of one frame).
{
    echo "routes:"
    jroute jstate udp://hostB:7001 $JS 11
    jroute jcam udp://hostB:7001 $F 12
} >"$T/orderA.yaml"
bg wire $B python3 "$SRCDIR/tests/ardnet/wireorder.py" 7001 2 11 12
for _ in $(seq 200); do
    grep -q ready "$T/wire.out" && break
    sleep 0.05
done
bg_ready ardA $A "$ARDNET" -c "$T/orderA.yaml" --stats-file "$T/order.A.stats"
joint_writers order
stop ardA
wait "$(cat "$T/wire.pid")" || fail "wireorder.py failed" # (it ends 2 s after the last datagram)
rm -f "$T/wire.pid"
echo "one destination, datagrams in their order of arrival: $(tail -1 "$T/wire.out")"
[ "$(kv "$T/wire.out" packets)" -ge 3 ] || fail "one destination: too few frames seen"
[ "$(kv "$T/wire.out" inside)" -ge 1 ] ||
    fail "one destination: no joint datagram between two fragments of a frame: $(tail -1 "$T/wire.out")"
echo PASS
