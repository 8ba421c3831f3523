#!/bin/bash
# A receiver given --size/--type that disagree with the sender's (typed block ttyped.c, 112
# bytes, over loopback UDP):
#  1. the same size, another type; 2. another size, opaque; 3. another size and type: each
#     receiver says once, in one message, what the sender sends and what it expects (both
#     types, both sizes), counts every datagram as drop_type or drop_size, and delivers
#     nothing (its counters, and the output connection's sequence number stays 0).
#  4. the sender's own descriptor, and 5. the same layout without field names, with and without
#     --size: the reader gets its packets, every field right.
TEST_NAME=disagree
source "$(dirname "$0")/common.sh"
: "${TTYPED:?} ${ARD:?}"
TYPE=$("$TTYPED" type)
LAYOUT='u64 i64 f64[3] f32[4] i32[3] u16[5] u8[7] i64[2] i16 i8'
P=$PORT
count_of() { # CONNECTION: its sequence number (ard list --json)
    "$ARD" list --json "$1" | sed -n 's/.*"count":\([0-9]*\).*/\1/p'
}

bg W "$TTYPED" pub --ard data=src --rate 500
# the sender learns size and type from the connection: start it once the writer has sent
for _ in $(seq 200); do
    [ "$(count_of src)" -gt 0 ] 2>/dev/null && break
    sleep 0.05
done
bg_ready S "$ARDNET" --in src --out "udp://127.0.0.1:$P" --conn-id 31

refused() { # CASE EXPECTED-MESSAGE DROP-COUNTER RECEIVER-OPTIONS...
    local case=$1 msg=$2 drop=$3 _ n
    shift 3
    bg_ready R "$ARDNET" --in "udp://127.0.0.1:$P" --out "dst$case" --conn-id 31 \
        --stats-file "$T/R$case.stats" "$@"
    for _ in $(seq 100); do
        n=$(counter "$T/R$case.stats" "dst$case" "$drop" 2>/dev/null)
        [ "${n:--1}" -ge 200 ] && break
        sleep 0.1
    done
    stop R || fail "$case: ardnet R exit $?"
    grep -qF -- "$msg" "$T/R.err" || fail "$case: the message does not name both: $(cat "$T/R.err")"
    n=$(grep -c "nothing from it can be delivered" "$T/R.err" || true)
    [ "$n" = 1 ] || fail "$case: the disagreement was reported $n times, not once"
    [ "$(counter "$T/R$case.stats" "dst$case" "$drop")" -ge 200 ] || fail "$case: $drop not counted"
    [ "$(counter "$T/R$case.stats" "dst$case" received)" = 0 ] || fail "$case: received a packet"
    [ "$(counter "$T/R$case.stats" "dst$case" sent)" = 0 ] || fail "$case: delivered a packet"
    [ "$(count_of "dst$case")" = 0 ] || fail "$case: dst$case has packets: $("$ARD" list "dst$case")"
    echo "$case: $(grep 'nothing from it' "$T/R.err")"
}
delivered() { # CASE RECEIVER-OPTIONS...
    local case=$1
    shift
    bg_ready R "$ARDNET" --in "udp://127.0.0.1:$P" --out "dst$case" --conn-id 31 "$@"
    "$TTYPED" sub --ard data="dst$case" --count 100 --first-ms 10000 --max-ms 20000 \
        >"$T/sub$case.out" 2>&1 || fail "$case: reader: $(cat "$T/sub$case.out")"
    stop R || fail "$case: ardnet R exit $?"
    grep -q "nothing from it" "$T/R.err" && fail "$case: a disagreement was reported: $(cat "$T/R.err")"
    echo "$case: $(cat "$T/sub$case.out")"
}

refused 1 "sends type '$TYPE' (112 bytes), this route expects type 'f64[14]' (112 bytes): nothing from it can be delivered (drop_type counts the datagrams); give this side --type '$TYPE'" \
    drop_type --type 'f64[14]'
refused 2 "sends type '$TYPE' (112 bytes), this route expects an opaque connection (no type) of 64 bytes: nothing from it can be delivered (drop_size counts the datagrams); give this side the sender's --size and --type" \
    drop_size --size 64
refused 3 "sends type '$TYPE' (112 bytes), this route expects type 'u64 u64 i64 u32[250]' (1024 bytes): nothing from it can be delivered (drop_size counts" \
    drop_size --type 'u64 u64 i64 u32[250]'
delivered 4 --type "$TYPE"
delivered 4s --size 112 --type "$TYPE"
delivered 5 --type "$LAYOUT"
delivered 5s --size 112 --type "$LAYOUT"
stop S || fail "ardnet S exit $?"
stop W
echo PASS
