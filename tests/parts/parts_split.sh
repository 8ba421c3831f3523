#!/bin/bash
# parts.split: the recording library is a library of its own, and libardnet links no
# compression or web library. In the build tree BUILD (built with ARD_LOG):
#  1. readelf -d: libardnet.so needs no zstd, zlib, lz4, civetweb or yaml; libardnet_log.so
#     needs libardnet.so.0 and zstd.
#  2. Installed into a temporary prefix: a block that never records, built with
#     `pkg-config --cflags --libs ardnet`, needs libardnet.so.0 and the C library only.
#  3. A program built with `pkg-config ardnet_log` writes a zstd recording of typed packets,
#     reads every one back, and, given a damaged file, gets ard_errdetail() naming the file
#     (the log library records its failures in libardnet's thread-local detail); the same
#     program built with find_package(ardnet COMPONENTS log) and ardnet::log, and with
#     ardnet::log_static (then it needs no libardnet at all).
# Environment: BUILD, CC, EXTRA_CFLAGS (the sanitizer builds' flags).
set -euo pipefail
: "${BUILD:?}" "${CC:?}"
EXTRA_CFLAGS=${EXTRA_CFLAGS:-}
T=$(mktemp -d /tmp/ardnet-parts.XXXXXX)
trap 'rm -rf "$T"' EXIT
fail() {
    echo "FAIL: $*" >&2
    exit 1
}
needed() { readelf -d "$1" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' | sort | paste -sd' '; }

# ---- 1. the libraries in the build tree -------------------------------------------------------
core=$(needed "$BUILD/src/lib/libardnet.so")
echo "libardnet.so needs: $core"
for lib in zstd libz lz4 civetweb yaml; do
    case " $core" in *" $lib"*) fail "libardnet.so links $lib: $core" ;; esac
done
logl=$(needed "$BUILD/src/log/libardnet_log.so")
echo "libardnet_log.so needs: $logl"
case " $logl " in *" libardnet.so.0 "*) ;; *) fail "libardnet_log.so does not link libardnet.so.0: $logl" ;; esac
case " $logl" in *" libzstd.so"*) ;; *) fail "libardnet_log.so does not link zstd: $logl" ;; esac

# ---- 2. install; a block that never records ------------------------------------------------------
P=$T/prefix
manifest=$BUILD/install_manifest.txt
[ -f "$manifest" ] && cp "$manifest" "$T/manifest.saved"
cmake --install "$BUILD" --prefix "$P" >"$T/install.log" 2>&1 || {
    cat "$T/install.log"
    fail "cmake --install"
}
if [ -f "$T/manifest.saved" ]; then cp "$T/manifest.saved" "$manifest"; else rm -f "$manifest"; fi
pcdir=$(dirname "$(find "$P" -name ardnet_log.pc -print -quit)")
[ -d "$pcdir" ] || fail "ardnet_log.pc not installed"
libdir=$(dirname "$pcdir")
[ -f "$P/include/ardnet_log.h" ] || fail "ardnet_log.h not installed"
[ -f "$libdir/libardnet_log.a" ] || fail "libardnet_log.a not installed"
export PKG_CONFIG_PATH=$pcdir
cat >"$T/block.c" <<'EOF'
#include <ardnet.h>
#include <stdio.h>
int main(void)
{
    ard_port *p = ard_create("parts.block", ARD_OUT, 8, "u64");
    if (!p)
        return 1;
    ard_close(p);
    printf("block ok\n");
    return 0;
}
EOF
# shellcheck disable=SC2046,SC2086 # words on purpose
"$CC" $EXTRA_CFLAGS -o "$T/block" "$T/block.c" $(pkg-config --cflags --libs ardnet) \
    -Wl,-rpath,"$libdir" || fail "build the block with pkg-config ardnet"
blk=$(needed "$T/block")
echo "a block that never records needs: $blk"
for lib in $blk; do
    case $lib in
    libardnet.so.0 | libc.so.6) ;;
    libasan.so* | libubsan.so* | libtsan.so* | libm.so.6 | libstdc++.so* | libgcc_s.so*)
        [ -n "$EXTRA_CFLAGS" ] || fail "the block needs $lib" ;; # the sanitizer runtime's
    *) fail "a block that never records needs $lib (all: $blk)" ;;
    esac
done
pkg-config --libs ardnet | grep -q -- '-lardnet' || fail "pkg-config --libs ardnet"
if pkg-config --libs ardnet | grep -Eq -- '-l(zstd|z|lz4|civetweb)\b'; then
    fail "pkg-config --libs ardnet names a compression library: $(pkg-config --libs ardnet)"
fi

# ---- 3. a recording program with ardnet_log ------------------------------------------------------
cat >"$T/rec.c" <<'EOF'
#include <ardnet.h>
#include <ardnet_log.h>
#include <stdio.h>
#include <string.h>
struct pkt {
    unsigned long long n;
    double x[3];
    short s;
};
int main(int argc, char **argv)
{
    const char *path = argv[1], *bad = argv[2];
    struct ard_logw_opts o = {.compression = "zstd"};
    ard_logw *w = ard_logw_open(path, &o);
    if (!w) {
        fprintf(stderr, "open: %s\n", ard_errdetail());
        return 1;
    }
    int ch = ard_logw_add(w, "parts.rec", "n:u64 x:f64[3] s:i16", sizeof(struct pkt));
    if (ch < 0)
        return 2;
    for (unsigned i = 0; i < 500; i++) {
        struct pkt p;
        memset(&p, 0, sizeof p);
        p.n = i;
        p.x[0] = i * 0.5, p.x[1] = -1.0 * i, p.x[2] = i * 1e6;
        p.s = (short)(-(int)i);
        if (ard_logw_write(w, ch, &p, i + 1, 1000000000LL + i * 1000, 2000000000LL + i) != 0)
            return 3;
    }
    if (ard_logw_close(w) != 0)
        return 4;
    ard_logr *r = ard_logr_open(path);
    if (!r) {
        fprintf(stderr, "read: %s\n", ard_errdetail());
        return 5;
    }
    struct ard_log_msg m;
    unsigned n = 0;
    int rc;
    while ((rc = ard_logr_next(r, &m)) == 1) {
        struct pkt p;
        memcpy(&p, m.packet, sizeof p);
        if (p.n != n || p.x[0] != n * 0.5 || p.x[1] != -1.0 * n || p.x[2] != n * 1e6 ||
            p.s != (short)(-(int)n) || m.seq != n + 1 || m.log_ns != 1000000000LL + n * 1000) {
            fprintf(stderr, "message %u differs\n", n);
            return 6;
        }
        n++;
    }
    ard_logr_close(r);
    if (rc != 0 || n != 500) {
        fprintf(stderr, "read %u messages, rc %d\n", n, rc);
        return 7;
    }
    /* A damaged file: the reader's detail, through libardnet's ard_errdetail(). */
    if (ard_logr_open(bad) != NULL)
        return 8;
    printf("recorded and read %u; damaged: %d %s\n", n, ard_lasterror(), ard_errdetail());
    return strstr(ard_errdetail(), bad) ? 0 : 9;
}
EOF
printf 'this is not an MCAP file, only text that is long enough' >"$T/bad.mcap"
check_rec() { # NAME PROGRAM
    local out
    out=$("$2" "$T/$1.mcap" "$T/bad.mcap" 2>&1) || fail "$1: exit $?: $out"
    echo "$1: $out"
    grep -q "^recorded and read 500; damaged: -[0-9]* .*$T/bad.mcap" <<<"$out" || fail "$1: $out"
}
# shellcheck disable=SC2046,SC2086
"$CC" $EXTRA_CFLAGS -o "$T/rec_pc" "$T/rec.c" $(pkg-config --cflags --libs ardnet_log) \
    -Wl,-rpath,"$libdir" || fail "build with pkg-config ardnet_log"
deps=$(needed "$T/rec_pc")
case " $deps " in *" libardnet_log.so.0 "*) ;; *) fail "rec_pc does not link libardnet_log: $deps" ;; esac
check_rec pkg-config "$T/rec_pc"

mkdir -p "$T/cm"
cp "$T/rec.c" "$T/cm/"
cat >"$T/cm/CMakeLists.txt" <<'EOF'
cmake_minimum_required(VERSION 3.18)
project(use_ardnet_log C)
find_package(ardnet REQUIRED COMPONENTS log)
add_executable(rec rec.c)
target_link_libraries(rec ardnet::log)
add_executable(rec_static rec.c)
target_link_libraries(rec_static ardnet::log_static)
EOF
cmake -S "$T/cm" -B "$T/cm/b" -DCMAKE_PREFIX_PATH="$P" -DCMAKE_C_COMPILER="$CC" \
    -DCMAKE_C_FLAGS="$EXTRA_CFLAGS" -DCMAKE_EXE_LINKER_FLAGS="$EXTRA_CFLAGS" >"$T/cm.log" 2>&1 &&
    cmake --build "$T/cm/b" >>"$T/cm.log" 2>&1 || {
    cat "$T/cm.log"
    fail "find_package(ardnet COMPONENTS log) with ardnet::log and ardnet::log_static"
}
check_rec find_package "$T/cm/b/rec"
deps=$(needed "$T/cm/b/rec_static")
case " $deps" in *libardnet*) fail "rec_static links a shared ardnet library: $deps" ;; esac
check_rec find_package_static "$T/cm/b/rec_static"
echo PASS
