#!/bin/bash
# ardnet_rxpath runs end to end on a scratch domain and publishes every packet it is fed
# (its exit status); no figure is checked. A port in use (exit 111) is retried elsewhere.
set -u
d=rxpath_smoke_$$
trap 'rm -f /dev/shm/ard.$d.*' EXIT
for try in 1 2 3 4 5; do
    rc=0
    ARD_DOMAIN=$d "$BUILDDIR/bench/ardnet/ardnet_rxpath" 10 1024 3 3000 $((40000 + RANDOM % 20000)) ||
        rc=$?
    [ "$rc" != 111 ] && exit "$rc"
done
exit 111
