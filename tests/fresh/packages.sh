#!/bin/bash
# packages.sh - ctest fresh_packages: the Debian packages built, installed, used and purged in a
# brand-new minimal Debian 12 (tests/fresh/packages_inside.sh, run by scripts/fresh.sh in its
# copy of this tree). Exit 77 (skipped, with the reason) when fresh.sh cannot run here (no
# root, no mirror); under CI=true fresh.sh turns that into a failure when root and the mirror
# are there. About 5 minutes, most of it apt-get.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
fresh=$root/scripts/fresh.sh
if [ ! -f "$fresh" ]; then
    echo "packages: scripts/fresh.sh is not in this tree"
    [ "${CI:-}" = true ] && exit 1
    exit 77
fi
exec bash "$fresh" -- bash tests/fresh/packages_inside.sh
