#!/bin/bash
# parts.core: the core alone. A second tree (BUILD/parts-core) configured with every optional
# part OFF is built whole; then:
#  - the configure's summary lists each part as not built, "ARD_<PART>=OFF";
#  - `ard web` and `ard record/play/export/info` (with any arguments, and `ard help SUB`) print
#    "ard SUB: not built (configure with ...: apt-get install PKG)" and exit 5;
#  - `ard --help` marks them "(not built)"; the completion offers only what this ard has;
#    the looking subcommands still work (`ard list` on an empty domain);
#  - libardnet.so (readelf -d, ldd) links no zstd, zlib, lz4 or civetweb; no libardnet_log,
#    no Python or Octave binding is built; the installed tree has no ardnet_log.h.
# Environment: BUILD, SRCDIR, CC.
set -euo pipefail
: "${BUILD:?}" "${SRCDIR:?}" "${CC:?}"
B=$BUILD/parts-core
T=$(mktemp -d /tmp/ardnet-core.XXXXXX)
trap 'rm -rf "$T"' EXIT
fail() {
    echo "FAIL: $*" >&2
    exit 1
}
unset CFLAGS LDFLAGS
t0=$(date +%s%N)
cmake -S "$SRCDIR" -B "$B" -DCMAKE_C_COMPILER="$CC" -DARD_WERROR=ON -DARD_TESTS=OFF \
    -DARD_LOG=OFF -DARD_WEB=OFF -DARD_PYTHON=OFF -DARD_OCTAVE=OFF >"$T/configure.log" 2>&1 || {
    cat "$T/configure.log"
    fail "configure with every part OFF"
}
t1=$(date +%s%N)
cmake --build "$B" -j2 >"$T/build.log" 2>&1 || {
    tail -n 40 "$T/build.log"
    fail "build with every part OFF"
}
t2=$(date +%s%N)
echo "core only: configure $(((t1 - t0) / 1000000)) ms, build $(((t2 - t1) / 1000000)) ms"
for part in LOG WEB PYTHON OCTAVE; do
    grep -Eq "^  $part +no +.*ARD_$part=OFF\$" "$T/configure.log" || {
        cat "$T/configure.log"
        fail "the summary does not say $part is not built (ARD_$part=OFF)"
    }
done

ARD=$B/src/tools/ard
[ -x "$ARD" ] || fail "ard not built"
expect_notbuilt() { # SUB PACKAGE-TEXT ARGS...
    local sub=$1 what=$2 rc=0 out
    shift 2
    out=$("$ARD" "$@" 2>&1) || rc=$?
    [ $rc = 5 ] || fail "ard $*: exit $rc, want 5 ($out)"
    [ "$out" = "ard $sub: not built (configure with $what)" ] || fail "ard $*: '$out'"
}
web="civetweb: apt-get install libcivetweb-dev"
log="libzstd: apt-get install libzstd-dev zlib1g-dev liblz4-dev"
expect_notbuilt web "$web" web
expect_notbuilt web "$web" web --listen 127.0.0.1:8642
expect_notbuilt web "$web" web --help
expect_notbuilt web "$web" help web
expect_notbuilt web "$web" --domain x web
for sub in record play export info; do
    expect_notbuilt $sub "$log" $sub
    expect_notbuilt $sub "$log" $sub some.mcap -o x
    expect_notbuilt $sub "$log" help $sub
done
"$ARD" --help >"$T/help" || fail "ard --help"
for sub in record info export play web; do
    grep -Eq "^  $sub +.*\(not built\)\$" "$T/help" || fail "ard --help does not mark $sub: $(cat "$T/help")"
done
for sub in list show hz delay set pub graph siggen; do
    grep -Eq "^  $sub " "$T/help" && ! grep -Eq "^  $sub .*not built" "$T/help" ||
        fail "ard --help: $sub"
done
grep -q "5 subcommand not built" "$T/help" || fail "ard --help does not list exit code 5"
ARD_DOMAIN=parts_core_$$ "$ARD" list >"$T/list" 2>&1 || fail "ard list: $(cat "$T/list")"

# The completion offers the subcommands this ard has.
ard() { "$ARD" "$@"; }
# shellcheck disable=SC1091
. "$B/src/tools/ard.bash"
COMP_WORDS=(ard "") COMP_CWORD=1
_ard || true
got=" ${COMPREPLY[*]} "
for sub in record play export info web; do
    case $got in *" $sub "*) fail "the completion offers $sub: $got" ;; esac
done
for sub in list show siggen help; do
    case $got in *" $sub "*) ;; *) fail "the completion does not offer $sub: $got" ;; esac
done

# Libraries: the core links no compression or web library; no part was built.
so=$B/src/lib/libardnet.so
dyn=$(readelf -d "$so")
deps=$(ldd "$so")
echo "libardnet.so: $(sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' <<<"$dyn" | paste -sd' ')"
if grep -Eq 'zstd|libz\.|lz4|civetweb' <<<"$dyn$deps"; then
    fail "libardnet.so links a part's library: $deps"
fi
deps=$(ldd "$ARD")
if grep -Eq 'zstd|libz\.|lz4|civetweb' <<<"$deps"; then
    fail "ard links a part's library: $deps"
fi
[ ! -e "$B/src/log/libardnet_log.so" ] || fail "libardnet_log built with ARD_LOG=OFF"
[ -z "$(find "$B/python" "$B/octave" -name '_ardnet*.so' -o -name '*.mex' 2>/dev/null)" ] ||
    fail "a binding was built with its part OFF"
cmake --install "$B" --prefix "$T/p" >"$T/install.log" 2>&1 || {
    cat "$T/install.log"
    fail "cmake --install of the core"
}
[ -f "$T/p/include/ardnet.h" ] || fail "ardnet.h not installed"
[ -z "$(find "$T/p" -name 'ardnet_log*' -o -name 'libardnet_log*')" ] ||
    fail "the core install has the recording library: $(find "$T/p" -name '*ardnet_log*')"
grep -q 'local subs="list show hz bw delay set pub graph siggen help"' \
    "$T/p/share/bash-completion/completions/ard" || fail "the installed completion"

# The bindings without the recording library (a third tree: ARD_LOG off, the bindings on).
if [ -n "${PY:-}" ] || [ -n "${OCTAVE:-}" ]; then
    NB=$BUILD/parts-nolog
    targets=()
    args=(-DARD_PYTHON=OFF -DARD_OCTAVE=OFF)
    [ -n "${PY:-}" ] && args[0]=-DARD_PYTHON=ON && targets+=(ardnet_python) && args+=(-DPython3_EXECUTABLE="$PY")
    [ -n "${OCTAVE:-}" ] && args[1]=-DARD_OCTAVE=ON && targets+=(ardnet_octave)
    { cmake -S "$SRCDIR" -B "$NB" -DCMAKE_C_COMPILER="$CC" -DARD_WERROR=ON -DARD_TESTS=OFF \
        -DARD_LOG=OFF -DARD_WEB=OFF "${args[@]}" &&
        cmake --build "$NB" -j2 --target "${targets[@]}"; } >"$T/nolog.log" 2>&1 || {
        tail -n 40 "$T/nolog.log"
        fail "the bindings without ARD_LOG do not build"
    }
    want="not built (configure ardnet with libzstd: apt-get install libzstd-dev zlib1g-dev liblz4-dev)"
    if [ -n "${PY:-}" ]; then
        out=$(cd "$T" && PYTHONPATH=$NB/python "$PY" -c '
import ardnet
try:
    ardnet.log.read("x.mcap")
except RuntimeError as e:
    print(e)
' 2>&1) || fail "python: $out"
        [ "$out" = "ardnet.log: $want" ] || fail "ardnet.log.read without ARD_LOG: '$out'"
        echo "python: $out"
    fi
    if [ -n "${OCTAVE:-}" ]; then
        out=$(cd "$T" && "$OCTAVE" --no-gui --no-init-file --quiet --path "$NB/octave" \
            --eval "try, ard_load('x.mcap'); disp('loaded'), catch e, disp(e.message), end" 2>&1) ||
            fail "octave: $out"
        grep -qF "ard_load: $want" <<<"$out" || fail "ard_load without ARD_LOG: '$out'"
        echo "octave: $out"
    fi
fi
echo PASS
