#!/bin/bash
# A YAML system whose hosts are given as user@host (examples/arm/arm.yaml with
# --set-host sim=root@rt1 --set-host ctrl=root@rt2): subsystems are started through the
# transport as root@rtN, the inserted bridges address rtN and accept only their peer (--from),
# the arm tracks across the hosts, and ardkill leaves nothing on any host.
: "${ARM_BIN:?}"
[ -n "${ARDNET:-}" ] && [ -x "$ARDNET" ] || { echo "no ardnet: skipping" >&2; exit 77; }
TEST_NAME=userhost
source "$(dirname "$0")/common.sh"
export PATH="$PATH:$ARM_BIN"
ON_ENV=(ARM_BIN="$ARM_BIN")
hosts_start station rt1 rt2

echo "== examples/arm/arm.yaml on root@rt1 and root@rt2"
on station ardstart --system "$SRCDIR/examples/arm/arm.yaml" --wait=20 \
    --set-host sim=root@rt1 --set-host ctrl=root@rt2 || fail "system did not start"
on station ardstart --list
raw=$(on station ardstart --list --raw)
for want in "arm/sim/plant root@rt1" "arm/sim/from_rt2 root@rt1" \
    "arm/sim/to_rt2 root@rt1" "arm/control/from_rt1 root@rt2" \
    "arm/control/to_rt1 root@rt2" "arm/control/monitor root@rt2"; do
    set -- $want
    awk -F'\t' -v p="$1" -v h="$2" '$1 == p && $2 == h && $4 == "running" { f = 1 } END { exit !f }' \
        <<<"$raw" || fail "$1 not running on $2"
done
awk -F'\t' '$1 == "arm/control/from_rt1" && $7 ~ /--from rt1 / { f = 1 } END { exit !f }' \
    <<<"$raw" || fail "the receiving bridge on rt2 does not accept only rt1: $(grep from_rt1 <<<"$raw")"
awk -F'\t' '$1 == "arm/sim/to_rt2" && $7 ~ /udp:\/\/rt2:/ { f = 1 } END { exit !f }' \
    <<<"$raw" || fail "the sending bridge on rt1 does not address rt2"

log="/run/ardnet/$D/log/arm+control+monitor.log"
for i in $(seq 100); do
    netns_run rt2 awk '/max\|err\|/ { if ($(NF-4) < 5 && $NF > 0) n++ } END { exit n < 4 }' \
        "$log" && break
    sleep 0.1
done
netns_run rt2 awk '/max\|err\|/ { if ($(NF-4) < 5 && $NF > 0) n++ } END { exit n < 4 }' "$log" ||
    fail "monitor never showed the arm tracking across the bridges"
netns_run rt2 tail -n 2 "$log"

echo "== ardkill: nothing left on any host"
on station ardkill || fail "ardkill failed"
hosts_clean "arm_|ardnet"
echo "PASS"
