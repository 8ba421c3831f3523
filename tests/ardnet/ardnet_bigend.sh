#!/bin/bash
# Peers of other architectures: libardnet, ardnet and the typed test block (ttyped.c, one
# field of each element kind: u64, i64, f64[3], f32[4], i32[3], u16[5], u8[7], i64[2], i16, i8)
# are cross-built with the project's own CMake (tests/ardnet/bigend/ configures the tree with
# cmake/toolchain-<arch>.cmake; programs static) for s390x (64-bit big-endian) and aarch64
# (64-bit little-endian ARM, as most robot controllers), and run under qemu-user, talking UDP
# over loopback to this host's ardnet. Each side uses an ARD domain of its own, so no
# shared-memory object is seen by two architectures. For each architecture:
#  1. peer writer -> peer ardnet -> UDP -> x86 ardnet -> x86 reader. The x86 receiver has
#     neither --size/--type nor a local connection: it creates its output from the peer
#     sender's descriptor datagram; the reader, which declares the type, attaches to it and
#     checks every field of every packet, the send-time stamp and the order.
#  2. The other way: x86 writer -> x86 ardnet -> UDP -> peer ardnet (learning its output the
#     same way) -> peer reader, same checks.
#  3. Fragments: 8 KiB packets of tblock (u64 u64 i64 u32[2042], 6 fragments each) both ways:
#     each receiver reassembles (and, on s390x, swaps) the packet; the readers check every word.
#     Sealed (--key on both ends): each side opens what the other architecture sealed.
#  4. s390x only: 256 KiB packets (about 190 fragments, the header for packets over 64 KiB)
#     both ways, sealed, each assembled packet swapped and checked word by word.
# Needs the cross toolchains (scripts/deps.sh installs them): without them the test is skipped
# (exit 77) with the reason, except under CI (CI set, not "0"/"false"), where it fails.
TEST_NAME=bigend
ARCHES=(s390x aarch64)
missing=()
for arch in "${ARCHES[@]}"; do
    triple=$arch-linux-gnu
    debarch=$arch
    [ "$arch" = aarch64 ] && debarch=arm64
    command -v "$triple-gcc" >/dev/null || missing+=("gcc-$triple")
    [ -e "/usr/$triple/include/stdio.h" ] || missing+=("libc6-dev-$debarch-cross")
    command -v "qemu-$arch" >/dev/null || missing+=(qemu-user)
    [ -e "/usr/lib/$triple/libyaml.a" ] || missing+=("libyaml-dev:$debarch")
done
command -v cmake >/dev/null || missing+=(cmake)
if ((${#missing[@]})); then
    case ${CI:-} in
    "" | 0 | false)
        echo "ardnet_bigend: SKIPPED: missing ${missing[*]} (scripts/deps.sh installs them); the s390x and aarch64 peers were not tested"
        exit 77
        ;;
    *)
        echo "ardnet_bigend: FAIL: missing ${missing[*]} and CI=$CI: the s390x and aarch64 peers cannot be tested (scripts/deps.sh installs them)"
        exit 1
        ;;
    esac
fi
source "$(dirname "$0")/common.sh"
: "${TTYPED:?}"
N=200 # packets each reader checks (at 200 a second)
S8=8192
PEER_DOMAINS=()
trap 'for d in "${PEER_DOMAINS[@]}"; do rm -f /dev/shm/ard."$d".* 2>/dev/null; done; cleanup_common' EXIT
HOSTDIR=$T/host
mkdir -p "$HOSTDIR"
ln -s "$ARDNET" "$HOSTDIR/ardnet"
ln -s "$TBLOCK" "$HOSTDIR/tblock"
# (The host build's compiler flags from the environment are not the target's.)
unset CC CFLAGS CPPFLAGS LDFLAGS

finish_sub() {
    wait "$(cat "$T/$1.pid")" || fail "reader $1: $(cat "$T/$1.result" 2>/dev/null) $(cat "$T/$1.err")"
    rm -f "$T/$1.pid"
    echo "$1: $(cat "$T/$1.result")"
}
wait_shm() { # DOMAIN NAME: until the connection exists (10 s at most)
    local _
    for _ in $(seq 200); do
        [ -e "/dev/shm/ard.$1.$2" ] && return 0
        sleep 0.05
    done
    fail "connection '$2' (domain $1) was not created"
}
elf_byte() { od -An -tu1 -j"$2" -N1 "$1" | tr -d ' '; } # FILE OFFSET

# peer ARCH EI_DATA E_MACHINE PORT-BASE: the cross build and cases 1-3 with that peer.
peer() {
    local A=$1 want_data=$2 want_machine=$3 PB=$4
    local PD="${ARD_DOMAIN}_$A" Q=qemu-$A
    PEER_DOMAINS+=("$PD")
    # ---- the cross build (incremental: it lives in the build tree) --------------------------
    local XB=${BIGEND_BUILD:-$T}/$A t0
    t0=$(date +%s%N)
    if ! { cmake -S "$SRCDIR/tests/ardnet/bigend" -B "$XB" \
        -DCMAKE_TOOLCHAIN_FILE="$SRCDIR/cmake/toolchain-$A.cmake" -DCMAKE_BUILD_TYPE=RelWithDebInfo &&
        cmake --build "$XB" -j2 --target ardnet_bin ttyped tblock; } >"$T/xbuild-$A.log" 2>&1; then
        tail -n 40 "$T/xbuild-$A.log" >&2
        fail "the $A cross build failed"
    fi
    local XDIR=$T/$A
    mkdir -p "$XDIR"
    ln -sf "$XB/ardnet/src/ardnet/ardnet" "$XDIR/ardnet"
    ln -sf "$XB/tblock" "$XDIR/tblock"
    local XARDNET=$XDIR/ardnet XTTYPED=$XB/ttyped
    # EI_DATA (1 little-, 2 big-endian) and e_machine (s390x 22, aarch64 183) of the programs
    local f data machine
    for f in "$XB/ardnet/src/ardnet/ardnet" "$XTTYPED" "$XB/tblock"; do
        data=$(elf_byte "$f" 5)
        if [ "$data" = 2 ]; then machine=$(elf_byte "$f" 19); else machine=$(elf_byte "$f" 18); fi
        [ "$data" = "$want_data" ] && [ "$machine" = "$want_machine" ] ||
            fail "$f is not an $A ELF (EI_DATA $data, e_machine $machine)"
    done
    echo "$A cross build: $((($(date +%s%N) - t0) / 1000000)) ms"
    [ "$($Q "$XTTYPED" type)" = "$("$TTYPED" type)" ] || fail "$A: the two blocks' descriptors differ"

    # ---- 1. peer sender, x86 receiver learning the type -------------------------------------
    local P1=$PB
    bg_ready RX "$ARDNET" --in "udp://127.0.0.1:$P1" --out "$A.in" --conn-id 21 --stats-file "$T/RX$A.stats"
    [ -e "/dev/shm/ard.$ARD_DOMAIN.$A.in" ] && fail "$A.1: $A.in exists before the sender told its type"
    bg XPUB env ARD_DOMAIN="$PD" $Q "$XTTYPED" pub --ard data=x.out --rate 200
    wait_shm "$PD" x.out
    bg_ready XTX env ARD_DOMAIN="$PD" $Q "$XARDNET" --in x.out \
        --out "udp://127.0.0.1:$P1" --conn-id 21 --stats-file "$T/XTX$A.stats"
    wait_shm "$ARD_DOMAIN" "$A.in"
    bg SUB1 "$TTYPED" sub --ard data="$A.in" --count $N --result "$T/SUB1.result"
    finish_sub SUB1
    stop XPUB || fail "$A.1: the $A writer exit $?"
    stop XTX || fail "$A.1: the $A ardnet exit $?"
    stop RX || fail "$A.1: the x86 ardnet exit $?"
    echo "x86 RX from $A: $(grep '^route' "$T/RX$A.stats")"
    [ "$(counter "$T/RX$A.stats" "$A.in" received)" -ge $N ] || fail "$A.1: the x86 receiver counted too few"
    for c in drop_size drop_type drop_magic drop_version; do
        [ "$(counter "$T/RX$A.stats" "$A.in" $c)" = 0 ] || fail "$A.1: the x86 receiver counted $c"
    done

    # ---- 2. x86 sender, peer receiver learning the type -------------------------------------
    local P2=$((PB + 1))
    bg_ready XRX env ARD_DOMAIN="$PD" $Q "$XARDNET" --in "udp://127.0.0.1:$P2" \
        --out x.in --conn-id 22 --stats-file "$T/XRX$A.stats"
    [ -e "/dev/shm/ard.$PD.x.in" ] && fail "$A.2: x.in exists before the sender told its type"
    bg PUB2 "$TTYPED" pub --ard data="to$A.out" --rate 200
    wait_shm "$ARD_DOMAIN" "to$A.out"
    bg_ready TX "$ARDNET" --in "to$A.out" --out "udp://127.0.0.1:$P2" --conn-id 22
    wait_shm "$PD" x.in
    bg SUB2 env ARD_DOMAIN="$PD" $Q "$XTTYPED" sub --ard data=x.in --count $N \
        --result "$T/SUB2.result"
    finish_sub SUB2
    stop PUB2 || fail "$A.2: the x86 writer exit $?"
    stop TX || fail "$A.2: the x86 ardnet exit $?"
    stop XRX || fail "$A.2: the $A ardnet exit $?"
    echo "$A RX: $(grep '^route' "$T/XRX$A.stats")"
    [ "$(counter "$T/XRX$A.stats" x.in received)" -ge $N ] || fail "$A.2: the $A receiver counted too few"
    for c in drop_size drop_type drop_magic drop_version; do
        [ "$(counter "$T/XRX$A.stats" x.in $c)" = 0 ] || fail "$A.2: the $A receiver counted $c"
    done

    # ---- 3. fragmented packets, both ways ---------------------------------------------------
    frag "$A" 1 $((PB + 2)) env ARD_DOMAIN="$PD" $Q "$XDIR" -- env ARD_DOMAIN="$ARD_DOMAIN" "$HOSTDIR"
    frag "$A" 2 $((PB + 3)) env ARD_DOMAIN="$ARD_DOMAIN" "$HOSTDIR" -- env ARD_DOMAIN="$PD" $Q "$XDIR"
    # ---- 4. packets larger than 64 KiB (the fragment header with 32-bit offsets), both ways:
    # 256 KiB, about 190 fragments each; on s390x the assembled packet is swapped word by word.
    # At 5 Hz: the emulated receiver opens and assembles one within the interval even on a busy
    # host (at 20 Hz a newer packet abandons each one before it is whole: latest value).
    [ "$A" = s390x ] || return 0
    FRAG_SIZE=262144 FRAG_RATE=5 FRAG_COUNT=20 FRAG_MIN=5 \
        frag "$A" 3 $((PB + 2)) env ARD_DOMAIN="$PD" $Q "$XDIR" -- env ARD_DOMAIN="$ARD_DOMAIN" "$HOSTDIR"
    FRAG_SIZE=262144 FRAG_RATE=5 FRAG_COUNT=20 FRAG_MIN=5 \
        frag "$A" 4 $((PB + 3)) env ARD_DOMAIN="$ARD_DOMAIN" "$HOSTDIR" -- env ARD_DOMAIN="$PD" $Q "$XDIR"
}

frag() { # ARCH CASE PORT WRITER-PREFIX... -- READER-PREFIX... (each: how to run a program on that side)
    # (FRAG_SIZE, FRAG_RATE, FRAG_COUNT: the packets, 8 KiB at 200 Hz, 400 of them by default;
    # FRAG_MIN: the fewest the reader must get, 20 by default)
    local A=$1 case=$2 P=$3 wr=() rd=() S=${FRAG_SIZE:-$S8} rate=${FRAG_RATE:-200} count=${FRAG_COUNT:-400}
    local least=${FRAG_MIN:-20}
    shift 3
    while [ "$1" != -- ]; do wr+=("$1"); shift; done
    shift
    rd=("$@")
    # each prefix is "env ARD_DOMAIN=D [qemu-ARCH] DIR": DIR holds its side's ardnet and tblock
    local wdir=${wr[-1]} rdir=${rd[-1]} n=$A$case
    unset 'wr[-1]' 'rd[-1]'
    bg_ready FR$n "${rd[@]}" "$rdir/ardnet" --in "udp://127.0.0.1:$P" --out "f$n.in" \
        --conn-id 4$case --stats-file "$T/FR$n.stats" --key "$T/robot.key"
    bg_ready FT$n "${wr[@]}" "$wdir/ardnet" --in "f$n.out" --out "udp://127.0.0.1:$P" --conn-id 4$case \
        --size $S --type "u64 u64 i64 u32[$(((S - 24) / 4))]" --stats-file "$T/FT$n.stats" \
        --key "$T/robot.key"
    bg FS$n "${rd[@]}" "$rdir/tblock" sub --size $S --ard data="f$n.in" --idle-ms 4000 \
        --result "$T/FS$n.result"
    "${wr[@]}" "$wdir/tblock" pub --size $S --ard data="f$n.out" --rate $rate --count $count >"$T/FP$n.out"
    finish_sub FS$n
    stop FT$n || fail "$A.3.$case: sending ardnet exit $?"
    stop FR$n || fail "$A.3.$case: receiving ardnet exit $?"
    # The emulated side (qemu-user) opens or seals each fragment in emulation; on a loaded
    # machine it keeps up with a share of the 200 Hz stream and, latest value, publishes the
    # newest complete packet of each burst. What must hold is that packets arrive exact and
    # the last one is delivered (below), not a rate.
    [ "$(kv "$T/FS$n.result" received)" -ge "$least" ] || fail "$A.3.$case: too few packets"
    [ "$(kv "$T/FS$n.result" last)" = "$(sed -n 's/.*last=//p' "$T/FP$n.out")" ] ||
        fail "$A.3.$case: the reader did not get the last packet"
    [ "$(counter "$T/FT$n.stats" "f$n.out" fragments)" -ge $((count * (S / 1500) / 8)) ] ||
        fail "$A.3.$case: too few fragments sent"
    [ "$(counter "$T/FR$n.stats" "f$n.in" drop_auth)" = 0 ] || fail "$A.3.$case: sealed fragments refused"
    # a receiver that learnt a packet over 64 KiB from the descriptor grew its buffer for it
    if [ "$S" -gt 65536 ]; then
        grep -Eq "receive buffer ([0-9]+) bytes \(asked \1\) for the sender's $S-byte packets" "$T/FR$n.err" ||
            fail "$A.3.$case: the receiver's buffer was not grown for $S-byte packets: $(grep buffer "$T/FR$n.err")"
    fi
}

# (case 3 runs sealed: both ends with --key, so fragments, descriptors and the handshake are
# sealed and opened by both architectures)
"$ARDNET" keygen "$T/robot.key"
peer s390x 2 22 "$PORT"
peer aarch64 1 183 $((PORT + 4))
echo PASS
