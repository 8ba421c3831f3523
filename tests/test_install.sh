#!/bin/bash
# test_install.sh BUILD_DIR CC [EXTRA_CFLAGS]
#
# Installs the build, then builds a tiny external program against the installed tree and RUNS
# it, the way docs/install.md says:
#  1. a custom prefix (a temporary directory): with `pkg-config --cflags --libs ardnet` and an
#     RPATH (the program runs with no LD_LIBRARY_PATH; without the RPATH it does not start,
#     with LD_LIBRARY_PATH it does), and with a CMake project using find_package(ardnet) +
#     ardnet::ardnet (CMake's RPATH) and ardnet::ardnet_static; the installed example blocks
#     (their own RPATH) and the installed master.sh, which finds them; then the `uninstall`
#     target, which must leave no file of ardnet in the prefix;
#  2. the system prefix /usr/local (as root, in a private mount namespace where /usr/local and
#     /etc are throwaway overlays, so the machine is untouched): the install runs ldconfig, and
#     a program built with plain pkg-config runs as it is; uninstall removes it from the
#     linker's cache again.
# EXTRA_CFLAGS are for the sanitizer build, whose installed library needs the sanitizer
# runtime in the program too.
set -euo pipefail

build=${1:?usage: test_install.sh BUILD_DIR CC [EXTRA_CFLAGS]}
cc=${2:?usage: test_install.sh BUILD_DIR CC [EXTRA_CFLAGS]}
extra=${3:-}
domain="t_install_$$"
build=$(cd "$build" && pwd)

T=$(mktemp -d /tmp/ardnet-install.XXXXXX)
chmod 755 "$T"
manifest="$build/install_manifest.txt"
# This test's installs overwrite the build's install_manifest.txt: keep the user's.
[ -f "$manifest" ] && cp "$manifest" "$T/manifest.saved"
cleanup() {
    if [ -f "$T/manifest.saved" ]; then cp "$T/manifest.saved" "$manifest"; else rm -f "$manifest"; fi
    if [ -n "${ARD_BOOKS_DIR:-}" ] && [ -x "${prefix:-/nonexistent}/bin/ardkill" ]; then
        "$prefix/bin/ardkill" -q -d "$domain" >/dev/null 2>&1 || true
    fi
    rm -rf "$T"
    rm -f /dev/shm/ard."$domain".* 2>/dev/null || true
}
trap cleanup EXIT

fail() {
    echo "FAIL: $*" >&2
    exit 1
}

mkdir -p "$T/src"
cat >"$T/src/main.c" <<'EOF'
#include <ardnet.h>
#include <inttypes.h>
#include <stdio.h>

struct sample {
    uint64_t n;
    double x;
};

int main(int argc, char **argv)
{
    ard_port *out = ard_create("out", ARD_OUT, sizeof(struct sample), "u64 f64");
    ard_port *in = ard_create("in", ARD_IN, sizeof(struct sample), "u64 f64");
    if (out == NULL || in == NULL || ard_init(&argc, argv) != 0) {
        fprintf(stderr, "ardnet: %s\n", ard_errdetail());
        return 1;
    }
    struct sample s = {42, 2.5}, r = {0, 0};
    if (ard_send(out, &s) != 0 || ard_tryrec(in, &r) != 1) {
        fprintf(stderr, "ardnet: %s\n", ard_errdetail());
        return 1;
    }
    size_t size = 0;
    if (ard_type_parse("f64[7] u32", NULL, 0, NULL, &size) != 0)
        return 1;
    printf("ardnet %d.%d: got %" PRIu64 " %.1f seq %" PRIu64 " via %s; args left %d '%s'; "
           "type size %zu\n", ARD_VERSION_MAJOR, ARD_VERSION_MINOR, r.n, r.x,
           ard_port_info(in).seq, ard_port_connection(in), argc, argc > 1 ? argv[1] : "",
           size);
    /* Remove this run's one connection ("in" is wired to "out") while its domain is still
     * the one in force; attached objects are never removed, so close the ports first. */
    ard_close(in);
    ard_close(out);
    int removed = ard_domain_unlink(NULL);
    ard_fini();
    return removed == 1 ? 0 : 1;
}
EOF
version=$(sed -n 's/^#define ARD_VERSION_MAJOR \([0-9]*\)/\1/p;s/^#define ARD_VERSION_MINOR \([0-9]*\)/\1/p' \
    "$(dirname "$0")/../include/ardnet.h" | paste -sd.)
want="ardnet $version: got 42 2.5 seq 1 via out; args left 2 'keep'; type size 64"


run() { # run NAME PROGRAM: run it (environment as given) and check its output
    local got
    got=$("$2" --ard in=out keep --ard-domain "$domain") || fail "$1: the program failed"
    [ "$got" = "$want" ] || fail "$1: printed '$got', want '$want'"
    echo "$1: ok ($got)"
}
installed_files() { # installed_files PREFIX: every file (not directory) under PREFIX
    (cd "$1" && find . ! -type d | sort)
}

# ---- 2. the system prefix, in a private mount namespace (re-executed here) ----------------
if [ "${ARD_INSTALL_TEST_SYSTEM:-}" = inner ]; then
    for d in usr-local etc; do mkdir -p "$T/$d.up" "$T/$d.work"; done
    mount -t overlay overlay -o "lowerdir=/usr/local,upperdir=$T/usr-local.up,workdir=$T/usr-local.work" /usr/local ||
        fail "overlay on /usr/local"
    mount -t overlay overlay -o "lowerdir=/etc,upperdir=$T/etc.up,workdir=$T/etc.work" /etc ||
        fail "overlay on /etc"
    # (ldconfig's output is kept first: grep -q ending a pipe early would fail it under pipefail.)
    cache=$(ldconfig -p)
    ! grep -q 'libardnet\.so\.0 ' <<<"$cache" || fail "libardnet.so.0 is already in the linker's cache"
    cmake --install "$build" --prefix /usr/local >"$T/install.log" 2>&1 ||
        { cat "$T/install.log"; fail "cmake --install --prefix /usr/local"; }
    grep -q 'ardnet: ran ldconfig' "$T/install.log" || fail "the install did not say it ran ldconfig"
    cache=$(ldconfig -p)
    grep -q 'libardnet\.so\.0 .*/usr/local/lib' <<<"$cache" ||
        fail "libardnet.so.0 is not in the linker's cache after the install"
    # Exactly the README's way: plain pkg-config (its default path has /usr/local), no
    # LD_LIBRARY_PATH, no RPATH.
    flags=$(env -u PKG_CONFIG_PATH pkg-config --cflags --libs ardnet) || fail "pkg-config finds no ardnet in /usr/local"
    # shellcheck disable=SC2086 # flags are words on purpose
    "$cc" $extra -o "$T/sys_block" "$T/src/main.c" $flags || fail "system prefix: build with pkg-config"
    dyn=$(readelf -d "$T/sys_block")
    ! grep -q 'RPATH\|RUNPATH' <<<"$dyn" || fail "sys_block has an RPATH"
    (unset LD_LIBRARY_PATH; run system-prefix "$T/sys_block")
    cmake --build "$build" --target uninstall >"$T/uninstall.log" 2>&1 ||
        { cat "$T/uninstall.log"; fail "uninstall from /usr/local"; }
    cache=$(ldconfig -p)
    ! grep -q 'libardnet\.so\.0 ' <<<"$cache" || fail "libardnet.so.0 still in the linker's cache after uninstall"
    [ ! -e /usr/local/lib/libardnet.so.0 ] && [ ! -e /usr/local/bin/ardstart ] &&
        [ ! -e /usr/local/share/ardnet ] || fail "uninstall left files in /usr/local"
    echo "system prefix: ok (ldconfig at install and uninstall)"
    exit 0
fi

# ---- 1. a custom prefix ---------------------------------------------------------------------
prefix="$T/prefix"
cmake --install "$build" --prefix "$prefix" >"$T/install.log" 2>&1 ||
    { cat "$T/install.log"; fail "cmake --install"; }
grep -q "ardnet: $prefix/lib is not searched by the dynamic linker: build blocks with -Wl,-rpath,$prefix/lib or run them with LD_LIBRARY_PATH=$prefix/lib" "$T/install.log" ||
    { cat "$T/install.log"; fail "the install did not say what a block needs for this prefix"; }
[ -f "$prefix/include/ardnet.h" ] || fail "header not installed"
pc=$(find "$prefix" -name ardnet.pc -print -quit)
[ -n "$pc" ] || fail "ardnet.pc not installed"
libdir=$(dirname "$(dirname "$pc")")
cfg=$(find "$prefix" -name ardnetConfig.cmake -print -quit)
[ -n "$cfg" ] || fail "ardnetConfig.cmake not installed"
[ -f "$libdir/libardnet.a" ] || fail "static library not in $libdir"
so=$(readlink -f "$libdir/libardnet.so")
soname=$(objdump -p "$so" | awk '/SONAME/ {print $2}')
case "$soname" in
libardnet.so.[0-9]*) ;;
*) fail "shared library has SONAME '$soname', want a versioned libardnet.so.N" ;;
esac
[ -e "$libdir/$soname" ] || fail "$libdir/$soname (the SONAME link) missing"
echo "installed: $(cd "$prefix" && find . -type f | sort | tr '\n' ' ')"

# pkg-config, with an RPATH as docs/install.md says
PKG_CONFIG_PATH=$(dirname "$pc")
export PKG_CONFIG_PATH
flags=$(pkg-config --cflags --libs ardnet) || fail "pkg-config --cflags --libs ardnet"
echo "pkg-config: $flags"
# The paths it gives must lead into the install prefix (a relocatable .pc may spell them
# relative to ${pcfiledir}).
inc=$(pkg-config --variable=includedir ardnet)
lib=$(pkg-config --variable=libdir ardnet)
[ "$(readlink -f "$inc")" = "$(readlink -f "$prefix/include")" ] ||
    fail "pkg-config includedir '$inc' is not the install prefix's ($prefix/include)"
[ "$(readlink -f "$lib")" = "$(readlink -f "$libdir")" ] ||
    fail "pkg-config libdir '$lib' is not the install prefix's ($libdir)"
# shellcheck disable=SC2086 # flags are words on purpose
"$cc" $extra -o "$T/by_pkgconfig" "$T/src/main.c" $flags -Wl,-rpath,"$lib" ||
    fail "build with pkg-config flags"
"$cc" $extra -o "$T/no_rpath" "$T/src/main.c" $flags || fail "build with pkg-config flags"
unset LD_LIBRARY_PATH
# (ldd's output is kept first: grep -q ending the pipe early would fail it under pipefail.)
deps=$(ldd "$T/by_pkgconfig")
found=$(awk '/libardnet\.so/ {print $3}' <<<"$deps")
[ -n "$found" ] && [ "$(readlink -f "$(dirname "$found")")" = "$(readlink -f "$libdir")" ] ||
    fail "by_pkgconfig is not linked to the installed shared library: $deps"
run pkg-config+rpath "$T/by_pkgconfig"
# Without the RPATH the program does not start (the issue this documents), with
# LD_LIBRARY_PATH it does.
if err=$("$T/no_rpath" 2>&1); then
    fail "a program without RPATH ran against a library in a custom prefix: $err"
fi
grep -q 'libardnet.so.0: cannot open shared object file' <<<"$err" ||
    fail "no_rpath failed with '$err', not for want of libardnet.so.0"
LD_LIBRARY_PATH="$libdir" run pkg-config+LD_LIBRARY_PATH "$T/no_rpath"

# CMake find_package, shared (CMake's build RPATH) and static
cat >"$T/src/CMakeLists.txt" <<'EOF'
cmake_minimum_required(VERSION 3.18)
project(use_ardnet C)
find_package(ardnet REQUIRED)
add_executable(x main.c)
target_link_libraries(x ardnet::ardnet)
add_executable(x_static main.c)
target_link_libraries(x_static ardnet::ardnet_static)
EOF
cmake -S "$T/src" -B "$T/cmake-build" -DCMAKE_PREFIX_PATH="$prefix" \
    -DCMAKE_C_COMPILER="$cc" -DCMAKE_C_FLAGS="$extra" -DCMAKE_EXE_LINKER_FLAGS="$extra" \
    >"$T/cmake.log" 2>&1 || { cat "$T/cmake.log"; fail "configure with find_package(ardnet)"; }
cmake --build "$T/cmake-build" >"$T/build.log" 2>&1 ||
    { cat "$T/build.log"; fail "build with ardnet::ardnet"; }
grep -q "ardnet_DIR:PATH=$prefix" "$T/cmake-build/CMakeCache.txt" ||
    fail "find_package found ardnet outside the install prefix"
run find_package "$T/cmake-build/x"
deps=$(ldd "$T/cmake-build/x_static")
if grep -q libardnet <<<"$deps"; then
    fail "x_static is linked to the shared library"
fi
run find_package_static "$T/cmake-build/x_static"

# The installed example blocks run from the prefix (their RPATH), and the installed master.sh
# finds them and starts the arm with the installed ardstart.
ex="$prefix/libexec/ardnet/examples"
for b in arm_traj arm_ctrl arm_plant arm_monitor; do
    "$ex/$b" --ard-help >"$T/help.out" 2>&1 || { cat "$T/help.out"; fail "installed $b does not run"; }
done
export ARD_BOOKS_DIR="$T/books" ARD_DOMAIN="$domain"
unset ARD_PATH ARD_READY_FD
PATH="$prefix/bin:$PATH" "$prefix/share/ardnet/examples/arm/master.sh" >"$T/arm.out" 2>&1 ||
    { cat "$T/arm.out"; fail "the installed master.sh"; }
states=$("$prefix/bin/ardstart" --list --raw | cut -f1,4 | sort | paste -sd' ')
want_states="arm	running arm/control	running arm/control/ctrl	running arm/control/monitor	running arm/control/traj	running arm/sim	running arm/sim/plant	running"
[ "$states" = "$want_states" ] || fail "installed arm: '$states', want '$want_states'"
"$prefix/bin/ardkill" -q || fail "ardkill of the installed arm"
echo "installed examples: ok"

# Uninstall: nothing of ardnet is left in the prefix (the prefix is ours: nothing else in it).
[ -n "$(installed_files "$prefix")" ] || fail "nothing installed?"
cmake --build "$build" --target uninstall >"$T/uninstall.log" 2>&1 ||
    { cat "$T/uninstall.log"; fail "the uninstall target"; }
left=$(installed_files "$prefix")
[ -z "$left" ] || fail "uninstall left: $left"
[ ! -e "$prefix/share/ardnet" ] && [ ! -e "$prefix/libexec/ardnet" ] && [ ! -e "$prefix/lib/cmake/ardnet" ] ||
    fail "uninstall left ardnet's directories"
echo "uninstall: ok"

# ---- 2. the system prefix -------------------------------------------------------------------
if [ "$(id -u)" != 0 ] || ! command -v unshare >/dev/null; then
    echo "system prefix: not tested (needs root for a private mount namespace)"
else
    ARD_INSTALL_TEST_SYSTEM=inner unshare --mount --propagation private bash "$0" "$build" "$cc" "$extra" ||
        fail "system prefix"
fi
echo "PASS"
