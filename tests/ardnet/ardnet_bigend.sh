#!/bin/bash
# A real big-endian peer: libardnet, ardnet and the typed test block (ttyped.c, one field of
# each element kind: u64, i64, f64[3], f32[4], i32[3], u16[5], u8[7], i64[2], i16, i8) are
# cross-built for s390x (tests/ardnet/bigend/, cmake/s390x.cmake, static) and run under
# qemu-s390x, talking UDP over loopback to this host's ardnet. The two sides use two ARD
# domains, so no shared-memory object is seen by both byte orders.
#  1. s390x writer -> s390x ardnet -> UDP -> x86 ardnet -> x86 reader. The x86 receiver has
#     neither --size/--type nor a local connection: it creates its output from the big-endian
#     sender's descriptor datagram; the reader, which declares the type, attaches to it and
#     checks every field of every packet, the send-time stamp and the order.
#  2. The other way: x86 writer -> x86 ardnet -> UDP -> s390x ardnet (learning its output the
#     same way) -> s390x reader, same checks.
#  3. Fragments: 8 KiB packets of tblock (u64 u64 i64 u32[2042], 6 fragments each) both ways:
#     each receiver swaps the reassembled packet; the readers check every word.
# Needs the cross toolchain (scripts/deps.sh installs it): without it the test is skipped
# (exit 77) with the reason, except under CI (CI set, not "0"/"false"), where it fails.
TEST_NAME=bigend
missing=()
command -v s390x-linux-gnu-gcc >/dev/null || missing+=(gcc-s390x-linux-gnu)
[ -e /usr/s390x-linux-gnu/include/stdio.h ] || missing+=(libc6-dev-s390x-cross)
command -v qemu-s390x >/dev/null || missing+=(qemu-user)
[ -e /usr/lib/s390x-linux-gnu/libyaml.a ] || missing+=(libyaml-dev:s390x)
command -v cmake >/dev/null || missing+=(cmake)
if ((${#missing[@]})); then
    case ${CI:-} in
    "" | 0 | false)
        echo "ardnet_bigend: SKIPPED: missing ${missing[*]} (scripts/deps.sh installs them); the big-endian peer was not tested"
        exit 77
        ;;
    *)
        echo "ardnet_bigend: FAIL: missing ${missing[*]} and CI=$CI: the big-endian peer cannot be tested (scripts/deps.sh installs them)"
        exit 1
        ;;
    esac
fi
source "$(dirname "$0")/common.sh"
: "${TTYPED:?}"
BE_DOMAIN="${ARD_DOMAIN}_be"
trap 'rm -f /dev/shm/ard."$BE_DOMAIN".* 2>/dev/null; cleanup_common' EXIT

# ---- the cross build (incremental: it lives in the build tree) ------------------------------
# (The host build's compiler flags from the environment are not the target's.)
unset CC CFLAGS CPPFLAGS LDFLAGS
XB=${BIGEND_BUILD:-$T/s390x}
t0=$(date +%s%N)
if ! { cmake -S "$SRCDIR/tests/ardnet/bigend" -B "$XB" \
    -DCMAKE_TOOLCHAIN_FILE="$SRCDIR/cmake/s390x.cmake" -DCMAKE_BUILD_TYPE=RelWithDebInfo &&
    cmake --build "$XB" -j2; } >"$T/xbuild.log" 2>&1; then
    tail -n 40 "$T/xbuild.log" >&2
    fail "the s390x cross build failed"
fi
ei_data=$(od -An -tx1 -j5 -N1 "$XB/ardnet" | tr -d ' ')
[ "$ei_data" = 02 ] || fail "$XB/ardnet is not a big-endian ELF (EI_DATA $ei_data)"
echo "cross build: $((($(date +%s%N) - t0) / 1000000)) ms"
XARDNET=$XB/ardnet
XTTYPED=$XB/ttyped
XTBLOCK=$XB/tblock
[ "$(qemu-s390x "$XTTYPED" type)" = "$("$TTYPED" type)" ] || fail "the two blocks' descriptors differ"
N=200 # packets each reader checks (at 200 a second)

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

# ---- 1. big-endian sender, x86 receiver learning the type --------------------------------------
P1=$PORT
bg_ready RX "$ARDNET" --in "udp://127.0.0.1:$P1" --out be.in --conn-id 21 --stats-file "$T/RX.stats"
[ -e "/dev/shm/ard.$ARD_DOMAIN.be.in" ] && fail "1: be.in exists before the sender told its type"
bg BEPUB env ARD_DOMAIN="$BE_DOMAIN" qemu-s390x "$XTTYPED" pub --ard data=be.out --rate 200
wait_shm "$BE_DOMAIN" be.out
bg_ready BETX env ARD_DOMAIN="$BE_DOMAIN" qemu-s390x "$XARDNET" --in be.out \
    --out "udp://127.0.0.1:$P1" --conn-id 21 --stats-file "$T/BETX.stats"
wait_shm "$ARD_DOMAIN" be.in
bg SUB1 "$TTYPED" sub --ard data=be.in --count $N --result "$T/SUB1.result"
finish_sub SUB1
stop BEPUB || fail "1: the s390x writer exit $?"
stop BETX || fail "1: the s390x ardnet exit $?"
stop RX || fail "1: the x86 ardnet exit $?"
echo "x86 RX: $(grep '^route' "$T/RX.stats")"
[ "$(counter "$T/RX.stats" be.in received)" -ge $N ] || fail "1: the x86 receiver counted too few"
for c in drop_size drop_type drop_magic drop_version; do
    [ "$(counter "$T/RX.stats" be.in $c)" = 0 ] || fail "1: the x86 receiver counted $c"
done

# ---- 2. x86 sender, big-endian receiver learning the type --------------------------------------
P2=$((PORT + 1))
bg_ready BERX env ARD_DOMAIN="$BE_DOMAIN" qemu-s390x "$XARDNET" --in "udp://127.0.0.1:$P2" \
    --out le.in --conn-id 22 --stats-file "$T/BERX.stats"
[ -e "/dev/shm/ard.$BE_DOMAIN.le.in" ] && fail "2: le.in exists before the sender told its type"
bg PUB2 "$TTYPED" pub --ard data=le.out --rate 200
wait_shm "$ARD_DOMAIN" le.out
bg_ready TX "$ARDNET" --in le.out --out "udp://127.0.0.1:$P2" --conn-id 22
wait_shm "$BE_DOMAIN" le.in
bg SUB2 env ARD_DOMAIN="$BE_DOMAIN" qemu-s390x "$XTTYPED" sub --ard data=le.in --count $N \
    --result "$T/SUB2.result"
finish_sub SUB2
stop PUB2 || fail "2: the x86 writer exit $?"
stop TX || fail "2: the x86 ardnet exit $?"
stop BERX || fail "2: the s390x ardnet exit $?"
echo "s390x RX: $(grep '^route' "$T/BERX.stats")"
[ "$(counter "$T/BERX.stats" le.in received)" -ge $N ] || fail "2: the s390x receiver counted too few"
for c in drop_size drop_type drop_magic drop_version; do
    [ "$(counter "$T/BERX.stats" le.in $c)" = 0 ] || fail "2: the s390x receiver counted $c"
done
# ---- 3. fragmented packets, both ways ----------------------------------------------------------
S8=8192
frag() { # CASE WRITER-PREFIX... -- READER-PREFIX... (each: how to run a program on that side)
    local case=$1 P=$((PORT + 1 + $1)) wr=() rd=()
    shift
    while [ "$1" != -- ]; do wr+=("$1"); shift; done
    shift
    rd=("$@")
    # each prefix is "env ARD_DOMAIN=D [qemu-s390x] DIR": DIR holds its side's ardnet and tblock
    local wdir=${wr[-1]} rdir=${rd[-1]}
    unset 'wr[-1]' 'rd[-1]'
    bg_ready FR$case "${rd[@]}" "$rdir/ardnet" --in "udp://127.0.0.1:$P" --out f.in --conn-id 4$case \
        --stats-file "$T/FR$case.stats"
    bg_ready FT$case "${wr[@]}" "$wdir/ardnet" --in f.out --out "udp://127.0.0.1:$P" --conn-id 4$case \
        --size $S8 --type "u64 u64 i64 u32[$(((S8 - 24) / 4))]" --stats-file "$T/FT$case.stats"
    bg FS$case "${rd[@]}" "$rdir/tblock" sub --size $S8 --ard data=f.in --idle-ms 2000 \
        --result "$T/FS$case.result"
    "${wr[@]}" "$wdir/tblock" pub --size $S8 --ard data=f.out --rate 200 --count 200 >"$T/FP$case.out"
    finish_sub FS$case
    stop FT$case || fail "3.$case: sending ardnet exit $?"
    stop FR$case || fail "3.$case: receiving ardnet exit $?"
    [ "$(kv "$T/FS$case.result" received)" -ge 100 ] || fail "3.$case: too few packets"
    [ "$(kv "$T/FS$case.result" last)" = "$(sed -n 's/.*last=//p' "$T/FP$case.out")" ] ||
        fail "3.$case: the reader did not get the last packet"
    [ "$(counter "$T/FT$case.stats" f.out fragments)" -ge 300 ] || fail "3.$case: no fragments sent"
}
HOSTDIR=$T/host
mkdir -p "$HOSTDIR"
ln -s "$ARDNET" "$HOSTDIR/ardnet"
ln -s "$TBLOCK" "$HOSTDIR/tblock"
frag 1 env ARD_DOMAIN="$BE_DOMAIN" qemu-s390x "$XB" -- env ARD_DOMAIN="$ARD_DOMAIN" "$HOSTDIR"
frag 2 env ARD_DOMAIN="$ARD_DOMAIN" "$HOSTDIR" -- env ARD_DOMAIN="$BE_DOMAIN" qemu-s390x "$XB"
echo PASS
