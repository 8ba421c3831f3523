#!/bin/bash
# test_install.sh BUILD_DIR CC [EXTRA_CFLAGS]
#
# Installs the build into a temporary prefix, then builds a tiny external program against
# the installed tree twice: with `pkg-config --cflags --libs ardnet`, and with a CMake project
# using find_package(ardnet) + target_link_libraries(x ardnet::ardnet) (and ardnet_static).
# Runs each and checks what it prints. EXTRA_CFLAGS are for the sanitizer build, whose
# installed library needs the sanitizer runtime in the program too.
set -euo pipefail

build=${1:?usage: test_install.sh BUILD_DIR CC [EXTRA_CFLAGS]}
cc=${2:?usage: test_install.sh BUILD_DIR CC [EXTRA_CFLAGS]}
extra=${3:-}
domain="t_install_$$"

T=$(mktemp -d /tmp/ardnet-install.XXXXXX)
cleanup() {
    rm -rf "$T"
    rm -f /dev/shm/ard."$domain".* 2>/dev/null || true
}
trap cleanup EXIT

fail() {
    echo "FAIL: $*" >&2
    exit 1
}

prefix="$T/prefix"
cmake --install "$build" --prefix "$prefix" >"$T/install.log" 2>&1 ||
    { cat "$T/install.log"; fail "cmake --install"; }

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
    /* Remove this run's one connection ("in" is wired to "out"): detach first (attached
     * objects are never removed), keeping the name of the domain that was in force. */
    char dom[ARD_MAX_NAME + 1];
    snprintf(dom, sizeof dom, "%s", ard_domain());
    ard_fini();
    return ard_domain_unlink(dom) == 1 ? 0 : 1;
}
EOF
version=$(sed -n 's/^#define ARD_VERSION_MAJOR \([0-9]*\)/\1/p;s/^#define ARD_VERSION_MINOR \([0-9]*\)/\1/p' \
    "$prefix/include/ardnet.h" | paste -sd.)
want="ardnet $version: got 42 2.5 seq 1 via out; args left 2 'keep'; type size 64"

run() { # run NAME PROGRAM: run it against the installed library and check its output
    local got
    got=$(LD_LIBRARY_PATH="$libdir" "$2" --ard in=out keep --ard-domain "$domain") ||
        fail "$1: the program failed"
    [ "$got" = "$want" ] || fail "$1: printed '$got', want '$want'"
    echo "$1: ok ($got)"
}

# 1. pkg-config
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
"$cc" $extra -o "$T/by_pkgconfig" "$T/src/main.c" $flags || fail "build with pkg-config flags"
# (ldd's output is kept first: grep -q ending the pipe early would fail it under pipefail.)
deps=$(LD_LIBRARY_PATH="$libdir" ldd "$T/by_pkgconfig")
grep -q "$libdir/libardnet.so" <<<"$deps" ||
    fail "by_pkgconfig is not linked to the installed shared library"
run pkg-config "$T/by_pkgconfig"

# 2. CMake find_package, shared and static
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
echo "PASS"
