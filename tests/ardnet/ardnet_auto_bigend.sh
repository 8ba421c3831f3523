#!/bin/bash
# ardnet --auto with a big-endian peer: hostA (x86) and hostB (s390x under qemu-user: its
# ardnet --auto and its typed test block, cross-built as tests/ardnet/ardnet_bigend does) are
# network namespaces. No route configured, both ways:
#  1. x86 writer on A, s390x reader on B: every field of every packet right (ttyped sub checks
#     them, the order and the send-time stamp) after the s390x catalog converted it.
#  2. s390x writer on B, x86 reader on A: the same checks.
# Needs root and the s390x cross toolchain (skipped, exit 77, without them; failed under CI).
TEST_NAME=auto_bigend
A_=s390x
missing=()
command -v "$A_-linux-gnu-gcc" >/dev/null || missing+=("gcc-$A_-linux-gnu")
[ -e "/usr/$A_-linux-gnu/include/stdio.h" ] || missing+=("libc6-dev-$A_-cross")
command -v "qemu-$A_" >/dev/null || missing+=(qemu-user)
[ -e "/usr/lib/$A_-linux-gnu/libyaml.a" ] || missing+=("libyaml-dev:$A_")
if ((${#missing[@]})); then
    case ${CI:-} in
    "" | 0 | false)
        echo "ardnet_auto_bigend: SKIPPED: missing ${missing[*]}: the s390x catalog was not tested"
        exit 77
        ;;
    *)
        echo "ardnet_auto_bigend: FAIL: missing ${missing[*]} and CI=$CI"
        exit 1
        ;;
    esac
fi
PRIVATE_NET=0
source "$(dirname "$0")/common.sh"
source "$SRCDIR/tests/lib/netns.sh"
netns_require_root
: "${TTYPED:?}"
NETNS_NO_TRAP=1
trap 'cleanup_common; netns_destroy' EXIT
unset CC CFLAGS CPPFLAGS LDFLAGS
XB=${BIGEND_BUILD:-$T}/$A_
if ! { cmake -S "$SRCDIR/tests/ardnet/bigend" -B "$XB" \
    -DCMAKE_TOOLCHAIN_FILE="$SRCDIR/cmake/toolchain-$A_.cmake" -DCMAKE_BUILD_TYPE=RelWithDebInfo &&
    cmake --build "$XB" -j2 --target ardnet_bin ttyped; } >"$T/xbuild.log" 2>&1; then
    tail -n 40 "$T/xbuild.log" >&2
    fail "the $A_ cross build failed"
fi
XARDNET=$XB/ardnet/src/ardnet/ardnet
XTTYPED=$XB/ttyped
[ "$(od -An -tu1 -j5 -N1 "$XARDNET" | tr -d ' ')" = 2 ] || fail "$XARDNET is not big-endian"
[ "$(qemu-$A_ "$XTTYPED" type)" = "$("$TTYPED" type)" ] || fail "the two blocks' descriptors differ"
netns_create hostA hostB
A=$(netns_cmd hostA)
B=$(netns_cmd hostB)
bg_ready autoA $A "$ARDNET" --auto --auto-peers hostA,hostB --stats-file "$T/autoA.stats"
bg_ready autoB $B qemu-$A_ "$XARDNET" --auto --auto-peers hostA,hostB --stats-file "$T/autoB.stats"

# ---- 1. x86 -> s390x ------------------------------------------------------------------------------
bg pubA $A "$TTYPED" pub --ard data=typed.ab --rate 200
sleep 0.5
bg subB $B qemu-$A_ "$XTTYPED" sub --ard data=typed.ab --count 200 --first-ms 3000 --result "$T/subB.result"
wait "$(cat "$T/subB.pid")" || fail "s390x reader: $(cat "$T/subB.result" 2>/dev/null) $(cat "$T/subB.err")"
rm -f "$T/subB.pid"
echo "x86 -> s390x: $(cat "$T/subB.result")"
stop pubA

# ---- 2. s390x -> x86 ------------------------------------------------------------------------------
bg pubB $B qemu-$A_ "$XTTYPED" pub --ard data=typed.ba --rate 200
sleep 1
bg subA $A "$TTYPED" sub --ard data=typed.ba --count 200 --first-ms 3000 --result "$T/subA.result"
wait "$(cat "$T/subA.pid")" || fail "x86 reader: $(cat "$T/subA.result" 2>/dev/null) $(cat "$T/subA.err")"
rm -f "$T/subA.pid"
echo "s390x -> x86: $(cat "$T/subA.result")"
stop pubB
stop autoA || fail "x86 catalog exit $?"
stop autoB || fail "s390x catalog exit $?"
echo "A: $(grep '^catalog' "$T/autoA.stats")"
echo "B: $(grep '^catalog' "$T/autoB.stats")"
[ "$(grep '^catalog' "$T/autoA.stats" | tr ' ' '\n' | sed -n 's/^invalid=//p')" = 0 ] || fail "A refused announcements of the s390x catalog"
[ "$(grep '^catalog' "$T/autoB.stats" | tr ' ' '\n' | sed -n 's/^invalid=//p')" = 0 ] || fail "B refused announcements of the x86 catalog"
echo PASS
