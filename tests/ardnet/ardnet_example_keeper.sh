#!/bin/bash
# The bridge example (examples/bridge/run.sh) ends and tears its two hosts down also when
# tests/lib/netns.sh keeps a host's mount namespace by a process instead of a bind mount (the
# kernel sometimes forces this under load; NETNS_NO_BIND=1 forces it here). Its exit path
# once waited for every child of the script, that keeping process too, and hung until killed.
# Needs root (network namespaces).
set -u
[ "$(id -u)" = 0 ] || {
    echo "skip: needs root (network namespaces)"
    exit 77
}
: "${SRCDIR:?} ${BUILDDIR:?}"
for b in examples/arm_plant examples/arm_monitor src/ardnet/ardnet; do
    [ -x "$BUILDDIR/$b" ] || {
        echo "skip: $b is not built"
        exit 77
    }
done
out=$(NETNS_NO_BIND=1 timeout 60 bash "$SRCDIR/examples/bridge/run.sh" "$BUILDDIR" 2 2>&1)
rc=$?
echo "$out" | tail -8
fail=0
[ "$rc" = 0 ] || { echo "FAIL: run.sh exited $rc (124: it hung)"; fail=1; }
grep -q "^== ardnet counters" <<<"$out" || { echo "FAIL: no counters at the end"; fail=1; }
n=$(grep -cE '^(ctrl|sim)\.[a-z_]+ route ' <<<"$out")
[ "$n" = 4 ] || { echo "FAIL: $n ardnet counter lines, expected 4"; fail=1; }
[ "$fail" = 0 ] && echo "PASS"
exit "$fail"
