#!/bin/sh
# debian/build.sh OUT [PROFILE...] - the Debian packages of this tree, built with
# dpkg-buildpackage -b in a copy of the tree under OUT (a source tree's parent directory is
# where dpkg-buildpackage writes, and debian/ gets its work files: neither in the checkout).
# The .deb files end up in OUT. The build directory OUT/obj is kept, so a second build is
# incremental. PROFILEs leave parts out: nopython pkg.ardnet.nooctave pkg.ardnet.nolog
# pkg.ardnet.noweb (debian/rules).
set -eu
out=${1:?usage: debian/build.sh OUT [PROFILE...]}
shift
root=$(cd "$(dirname "$0")/.." && pwd)
mkdir -p "$out"
out=$(cd "$out" && pwd)
version=$(dpkg-parsechangelog -l "$root/debian/changelog" -S Version)
src=$out/src/ardnet-$version

# The checkout's files (tracked and untracked-not-ignored; every file but build*/ when it is
# not a git tree), with their times, so that the kept build directory sees what changed.
rm -rf "$out/src"
mkdir -p "$src"
if git -C "$root" rev-parse --show-toplevel >/dev/null 2>&1; then
    (cd "$root" && git ls-files -z -co --exclude-standard | xargs -0 -r sh -c \
        'for f; do [ -e "$f" ] && printf "%s\0" "$f"; done' sh) |
        (cd "$root" && tar -c --null -T - -f -) | tar -x -C "$src" -f -
else
    (cd "$root" && tar -c --exclude='./build*' --exclude='./_install*' -f - .) |
        tar -x -C "$src" -f -
fi

profiles=$(echo "$*" | tr ' ' ',')
rm -f "$out"/*.deb "$out"/*.ddeb
(
    cd "$src"
    export ARD_DEB_BUILDDIR="$out/obj"
    export DEB_BUILD_OPTIONS="${DEB_BUILD_OPTIONS:-parallel=$(nproc)}"
    dpkg-buildpackage -b -us -uc -nc ${profiles:+--build-profiles="$profiles"}
)
mv "$out"/src/*.deb "$out"/src/*.changes "$out"/src/*.buildinfo "$out"/
ls "$out"/*.deb
