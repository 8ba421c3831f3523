#!/bin/bash
# parts.missing: a missing dependency, configured in throwaway trees (configure only):
#  1. -DARD_WEB=ON without civetweb (its header and library hidden with CMAKE_IGNORE_PATH):
#     the configure fails naming libcivetweb-dev and ARD_WEB;
#  2. -DARD_LOG=ON without libzstd, zlib and liblz4 (pkg-config sees only the core's .pc
#     files, libyaml's and libsodium's):
#     fails naming libzstd-dev zlib1g-dev liblz4-dev and ARD_LOG;
#  3. the same two with AUTO: the configure succeeds and its summary says each part is not
#     built and which package brings it;
#  4. a toolchain file whose cross compiler is not on PATH: fails naming
#     gcc-aarch64-linux-gnu.
# Environment: BUILD, SRCDIR, CC.
set -euo pipefail
: "${BUILD:?}" "${SRCDIR:?}" "${CC:?}"
T=$(mktemp -d /tmp/ardnet-missing.XXXXXX)
trap 'rm -rf "$T"' EXIT
fail() {
    echo "FAIL: $*" >&2
    exit 1
}
unset CFLAGS LDFLAGS
hide_civetweb="-DCMAKE_IGNORE_PATH=/usr/include;/usr/lib/$(gcc -print-multiarch 2>/dev/null || echo x86_64-linux-gnu);/usr/lib;/lib"
mkdir -p "$T/pc"
yamlpc=$(pkg-config --variable=pcfiledir yaml-0.1)/yaml-0.1.pc
cp "$yamlpc" "$T/pc/"
sodiumpc=$(pkg-config --variable=pcfiledir libsodium)/libsodium.pc # ardnet's sealed links
cp "$sodiumpc" "$T/pc/"
off=(-DARD_TESTS=OFF -DARD_PYTHON=OFF -DARD_OCTAVE=OFF -DCMAKE_C_COMPILER="$CC")
flat() { tr '\n' ' ' <"$1" | tr -s ' '; } # CMake wraps its messages

# 1. and 3. civetweb
if cmake -S "$SRCDIR" -B "$T/web-on" "${off[@]}" -DARD_LOG=OFF -DARD_WEB=ON "$hide_civetweb" \
    >"$T/web-on.log" 2>&1; then
    fail "ARD_WEB=ON without civetweb configured"
fi
flat "$T/web-on.log" | grep -q "ARD_WEB=ON, but ard web cannot be built: not found: header civetweb.h.*apt-get install libcivetweb-dev" ||
    { cat "$T/web-on.log"; fail "ARD_WEB=ON: the error does not name libcivetweb-dev"; }
echo "$(flat "$T/web-on.log" | grep -o "ARD_WEB=ON, but[^;]*")"
cmake -S "$SRCDIR" -B "$T/web-auto" "${off[@]}" -DARD_LOG=OFF "$hide_civetweb" \
    >"$T/web-auto.log" 2>&1 || { cat "$T/web-auto.log"; fail "ARD_WEB=AUTO without civetweb"; }
grep -Eq "^  WEB +no +libcivetweb-dev +not found: .*\(apt-get install libcivetweb-dev\)" "$T/web-auto.log" ||
    { cat "$T/web-auto.log"; fail "the summary does not say why WEB is not built"; }

# 2. and 3. the recording libraries
if PKG_CONFIG_LIBDIR=$T/pc cmake -S "$SRCDIR" -B "$T/log-on" "${off[@]}" -DARD_WEB=OFF -DARD_LOG=ON \
    >"$T/log-on.log" 2>&1; then
    fail "ARD_LOG=ON without libzstd configured"
fi
flat "$T/log-on.log" | grep -q "ARD_LOG=ON, but .* cannot be built: not found: pkg-config libzstd, pkg-config zlib, pkg-config liblz4 (apt-get install libzstd-dev zlib1g-dev liblz4-dev)" ||
    { cat "$T/log-on.log"; fail "ARD_LOG=ON: the error does not name the packages"; }
PKG_CONFIG_LIBDIR=$T/pc cmake -S "$SRCDIR" -B "$T/log-auto" "${off[@]}" -DARD_WEB=OFF \
    >"$T/log-auto.log" 2>&1 || { cat "$T/log-auto.log"; fail "ARD_LOG=AUTO without libzstd"; }
grep -Eq "^  LOG +no +.*not found: .*\(apt-get install libzstd-dev zlib1g-dev liblz4-dev\)" "$T/log-auto.log" ||
    { cat "$T/log-auto.log"; fail "the summary does not say why LOG is not built"; }
grep -A6 "ardnet parts" "$T/log-auto.log"

# A bad value
if cmake -S "$SRCDIR" -B "$T/bad" "${off[@]}" -DARD_WEB=maybe >"$T/bad.log" 2>&1; then
    fail "ARD_WEB=maybe configured"
fi
grep -q "ARD_WEB='maybe': say AUTO, ON or OFF" "$T/bad.log" || { cat "$T/bad.log"; fail "ARD_WEB=maybe"; }

# 4. a toolchain file without its compiler (a PATH without it; cmake by its full path)
mkdir -p "$T/bin"
if env PATH="$T/bin" "$(command -v cmake)" -S "$SRCDIR" -B "$T/cross" \
    -DCMAKE_TOOLCHAIN_FILE="$SRCDIR/cmake/toolchain-aarch64.cmake" >"$T/cross.log" 2>&1; then
    fail "the aarch64 toolchain configured without aarch64-linux-gnu-gcc"
fi
flat "$T/cross.log" | grep -q "the aarch64 cross compiler aarch64-linux-gnu-gcc is not installed (apt-get install gcc-aarch64-linux-gnu libc6-dev-arm64-cross)" ||
    { cat "$T/cross.log"; fail "the toolchain error does not name gcc-aarch64-linux-gnu"; }
echo PASS
