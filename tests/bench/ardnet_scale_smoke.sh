#!/bin/bash
# ardnet_scale_smoke.sh - bench/ardnet/scale.sh --quick, one case (10 connections, 64 B, common
# tick), on two network-namespace hosts: both the ardnet bridge and the bare-UDP baseline must
# deliver packets, and the tables must carry that case's CPU per packet and ratios. Needs root
# (exit 77, skipped, otherwise). Checks no figure against a limit.
set -euo pipefail
rc=0
out=$(NS=10 SIZES=64 TICKS=common bash "$SRCDIR/bench/ardnet/scale.sh" --quick "$BUILDDIR" 2>&1) ||
    rc=$?
echo "$out"
[ "$rc" != 77 ] || exit 77
fail() {
    echo "FAIL: $*" >&2
    exit 1
}
[ "$rc" = 0 ] || fail "scale.sh exited $rc"
for kind in ardnet baseline; do
    # kind N size tick tx% rx% out/s in/s drops/s published/s missed/s delivered/s med p99
    line=$(grep "^$kind 10 64 common " <<<"$out") || fail "no $kind line"
    read -r _ _ _ _ tx rx dout din _ pub _ del med _ <<<"$line"
    awk -v d="$del" -v p="$pub" 'BEGIN { exit !(d > 0 && p > 0 && d <= p * 1.1) }' ||
        fail "$kind: delivered '$del' packets/s of '$pub' published"
    awk -v o="$dout" -v i="$din" 'BEGIN { exit !(o > 0 && i > 0) }' ||
        fail "$kind: datagrams out '$dout', in '$din' per second"
    [[ $tx =~ ^[0-9.]+$ && $rx =~ ^[0-9.]+$ && $med =~ ^[0-9.]+$ ]] ||
        fail "$kind: CPU '$tx' '$rx' or latency '$med' not a number"
done
# A ratio is "-" when its baseline used no CPU tick in the 1 s window (a receive side of a
# few hundred microseconds); the ardnet side's figure is a number all the same.
grep -Eq '^\| 10 \| 64 B \| common \| [0-9.]+ / [0-9.]+ \| ([0-9.]+|-) \| [0-9.]+ / [0-9.]+ \| ([0-9.]+|-) \|' \
    <<<"$out" || fail "no ratio row for 10 x 64 B common"
grep -q '^ports of the ardnet cases: ' <<<"$out" || fail "no ports line"
echo "ardnet_scale_smoke: ok"
