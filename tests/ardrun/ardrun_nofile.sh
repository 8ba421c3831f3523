#!/bin/bash
# ardrun_nofile: every port of a group keeps a descriptor. ardrun raises its soft
# RLIMIT_NOFILE to the hard limit at start: a group of 40 blocks with 80 ports runs under a
# soft limit of 40 (hard 4096). With the hard limit at 40 as well, the group does not start
# and one line names the limit and about how many descriptors it needs, not a line per port.
here=$(cd "$(dirname "$0")" && pwd)
. "$here/common.sh"
P=$PLUGINS
N=40
{
    echo "name: many"
    echo "rate_hz: 1000"
    echo "blocks:"
    for i in $(seq $N); do
        echo "  - { name: s$i, plugin: $P/tsrc.so, ard: { out: m.s$i, ack: m.a$i } }"
    done
} >"$T/many.yaml"

prlimit --nofile=40:4096 "$ARDRUN" --ticks 100 "$T/many.yaml" 2>"$T/raised.log"
rc=$?
stepped=$(grep -c "block 's[0-9]*': steps 100 fails 0" "$T/raised.log")
[ "$rc" = 0 ] && [ "$stepped" = $N ] && ok "soft limit 40 raised: $N blocks, $((2 * N)) ports, 100 steps each" ||
    fail "under prlimit 40:4096: exit $rc, $stepped of $N blocks stepped 100 times: $(grep -v warning "$T/raised.log" | head -n5)"
! grep -q 'out of descriptors\|Too many open files' "$T/raised.log" ||
    fail "complained under a soft limit of 40: $(grep -v warning "$T/raised.log" | head -n5)"

prlimit --nofile=40:40 "$ARDRUN" --ticks 100 "$T/many.yaml" 2>"$T/low.log"
rc=$?
[ "$rc" = 102 ] && ok "hard limit 40: exit 102 (the scheme check)" || fail "under prlimit 40:40: exit $rc"
n=$(grep -c "ardrun: many: out of descriptors: RLIMIT_NOFILE is 40 (hard limit 40) and [0-9]* more are needed, about [0-9]* in all: [0-9]* ports of the group cannot be attached" "$T/low.log")
[ "$n" = 1 ] && ok "one line names the limit and the need" ||
    fail "expected one line naming the limit, got $n: $(grep -v warning "$T/low.log" | head -n5)"
! grep -q 'Too many open files' "$T/low.log" && ok "no line per port" ||
    fail "a line per port: $(grep 'Too many' "$T/low.log" | head -n3)"
grep -q "ardrun: many: 1 error: nothing was started" "$T/low.log" && ok "nothing was started" ||
    fail "no summary: $(tail -n2 "$T/low.log")"
finish
