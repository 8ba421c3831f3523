#!/bin/bash
# packages_quick.sh OUT - ctest package_debs: the Debian packages built on this machine
# (debian/build.sh OUT, incremental after the first run) and checked without installing them:
#  - what goes in which package: every file of a package matches what that package is for,
#    and the files each must have are there (a man page for every program);
#  - their dependencies: -dev on the library of the same version, Python on numpy's ABI,
#    Octave on Octave's ABI; no RPATH in any ELF file;
#  - lintian: no error (its warnings are printed);
#  - built with the optional parts left out (build profiles): no package of a part left out,
#    and no dependency on its libraries.
# Exit 77 (skipped, with the reason) when the build dependencies are missing; under CI=true
# that is a failure.
set -euo pipefail
out=${1:?usage: packages_quick.sh OUT}
root=$(cd "$(dirname "$0")/../.." && pwd)
fail() {
    echo "packages_quick: FAILED: $*" >&2
    exit 1
}
skip() {
    echo "packages_quick: skipped: $*"
    [ "${CI:-}" = true ] && exit 1
    exit 77
}
command -v dpkg-buildpackage >/dev/null || skip "dpkg-buildpackage not installed (dpkg-dev)"
command -v lintian >/dev/null || skip "lintian not installed"
(cd "$root" && dpkg-checkbuilddeps 2>&1) || skip "build dependencies missing (above)"

ma=$(dpkg-architecture -qDEB_HOST_MULTIARCH)
version=$(dpkg-parsechangelog -l "$root/debian/changelog" -S Version)
project=$(sed -n 's/^project(ardnet VERSION \([0-9.]*\).*/\1/p' "$root/CMakeLists.txt")
[ "$version" = "$project" ] ||
    fail "debian/changelog says $version, CMakeLists.txt $project: add a changelog entry (dch -v $project)"
mkdir -p "$out"
out=$(cd "$out" && pwd)
"$root/debian/build.sh" "$out/all" >"$out/all.log" 2>&1 || {
    tail -n 40 "$out/all.log"
    fail "the packages did not build (log: $out/all.log)"
}

# What each package may hold (extended regular expressions over dpkg-deb's file list).
doc='/usr/share/doc/PKG/(changelog\.gz|copyright)'
declare -A allowed=(
    [libardnet0]="/usr/lib/$ma/libardnet(_[a-z]+)?\.so\.[0-9.]+"
    [libardnet-dev]="/usr/include/ardnet[_a-z]*\.h|/usr/lib/$ma/libardnet(_[a-z]+)?\.(so|a)|/usr/lib/$ma/pkgconfig/ardnet[_a-z]*\.pc|/usr/lib/$ma/cmake/ardnet/ardnet[A-Za-z_-]*\.cmake"
    [ardnet]="/usr/bin/(ard|ardnet|ardstart|ardkill|ardrun)|/usr/share/man/man1/[a-z]+\.1\.gz|/usr/share/bash-completion/completions/[a-z]+|/usr/libexec/ardnet/examples/.+|/usr/share/ardnet/examples/.+"
    [python3-ardnet]="/usr/lib/python3/dist-packages/ardnet/(__init__|log|_build_info)\.py|/usr/lib/python3/dist-packages/ardnet/_ardnet\.cpython-[0-9]+-$ma\.so"
    [octave-ardnet]="/usr/lib/$ma/octave/site/oct/api-v[0-9]+/[^/]+/(ard_[a-z]+\.m|ardnet_mex\.mex)"
)
# What each package must hold.
declare -A required=(
    [libardnet0]="/usr/lib/$ma/libardnet.so.0"
    [libardnet-dev]="/usr/include/ardnet.h /usr/lib/$ma/libardnet.so /usr/lib/$ma/libardnet.a /usr/lib/$ma/pkgconfig/ardnet.pc /usr/lib/$ma/cmake/ardnet/ardnetConfig.cmake"
    [ardnet]="/usr/bin/ard /usr/bin/ardnet /usr/bin/ardstart /usr/bin/ardkill /usr/bin/ardrun /usr/share/bash-completion/completions/ard /usr/share/ardnet/examples/arm/master.sh /usr/share/ardnet/examples/arm/master_group.sh /usr/libexec/ardnet/examples/arm_plant /usr/libexec/ardnet/examples/plugins/arm_ctrl_block.so"
    [python3-ardnet]="/usr/lib/python3/dist-packages/ardnet/__init__.py /usr/lib/python3/dist-packages/ardnet/log.py /usr/lib/python3/dist-packages/ardnet/_build_info.py"
    [octave-ardnet]=""
)
files() { dpkg-deb -c "$1" | awk '$1 !~ /^d/ { sub(/^\./, "", $6); print $6 }'; }
deb() { ls "$1/$2_${version}_"*.deb 2>/dev/null | grep -v dbgsym || true; }

for p in libardnet0 libardnet-dev ardnet python3-ardnet octave-ardnet; do
    f=$(deb "$out/all" "$p")
    [ -n "$f" ] || fail "no package $p"
    files "$f" >"$out/$p.files"
    re="^(${allowed[$p]}|${doc//PKG/$p})\$"
    wrong=$(grep -Ev "$re" "$out/$p.files" || true)
    [ -z "$wrong" ] || fail "$p holds files that belong elsewhere: $(tr "\n" " " <<<"$wrong")"
    for r in ${required[$p]}; do
        grep -qx "$r" "$out/$p.files" || fail "$p lacks $r"
    done
    printf '%-16s %3d files, %7d bytes; Depends: %s\n' "$p" "$(wc -l <"$out/$p.files")" \
        "$(stat -c %s "$f")" "$(dpkg-deb -f "$f" Depends)"
done
# A man page for every program, the Python extension and the MEX file.
for prog in $(grep '^/usr/bin/' "$out/ardnet.files"); do
    grep -qx "/usr/share/man/man1/${prog##*/}.1.gz" "$out/ardnet.files" || fail "no man page for $prog"
done
grep -q '/_ardnet\.cpython-.*\.so$' "$out/python3-ardnet.files" || fail "python3-ardnet: no extension"
grep -q '/ardnet_mex\.mex$' "$out/octave-ardnet.files" || fail "octave-ardnet: no MEX file"
# A library of libardnet-dev's has its shared object in libardnet0 (libardnet_log with the log).
for so in $(grep -E '/libardnet[_a-z]*\.so$' "$out/libardnet-dev.files"); do
    grep -qx "$so.0" "$out/libardnet0.files" || fail "libardnet0 lacks $so.0"
done

dep() { dpkg-deb -f "$(deb "$out/$1" "$2")" Depends; }
dep all libardnet-dev | grep -q "libardnet0 (= $version)" || fail "libardnet-dev: not on libardnet0 (= $version)"
dep all python3-ardnet | grep -q 'python3-numpy-abi' || fail "python3-ardnet: no numpy ABI dependency"
dep all octave-ardnet | grep -q 'octave-abi-' || fail "octave-ardnet: no Octave ABI dependency"
dep all ardnet | grep -q -- '-dev' && fail "ardnet depends on a -dev package: $(dep all ardnet)"

# No RPATH: the programs find the library in the system directory.
x=$(mktemp -d)
trap 'rm -rf "$x"' EXIT
for f in "$out"/all/*.deb; do
    case $f in *dbgsym*) continue ;; esac
    dpkg-deb -x "$f" "$x"
done
while read -r f; do
    [ "$(head -c 4 "$f" | od -An -c | tr -d ' ')" = '177ELF' ] || continue
    ! readelf -d "$f" | grep -Eq 'RPATH|RUNPATH' || fail "${f#"$x"} has an RPATH: $(readelf -d "$f" | grep -E 'RPATH|RUNPATH')"
done < <(find "$x" -type f)
echo "ok: file lists, dependencies, no RPATH"

# lintian: errors fail, warnings are listed.
lintian -I --no-tag-display-limit "$out"/all/*.changes >"$out/lintian.out" 2>&1 || true
grep -E '^[EW]: ' "$out/lintian.out" || true
if grep -q '^E: ' "$out/lintian.out"; then fail "lintian reports errors (above)"; fi
echo "ok: lintian, $(grep -c '^W: ' "$out/lintian.out" || true) warnings," \
    "$(grep -c '^I: ' "$out/lintian.out" || true) infos"

# The parts left out: no package and no dependency of theirs.
"$root/debian/build.sh" "$out/core" nopython pkg.ardnet.nooctave pkg.ardnet.noweb \
    pkg.ardnet.nolog >"$out/core.log" 2>&1 || {
    tail -n 40 "$out/core.log"
    fail "the packages without the optional parts did not build (log: $out/core.log)"
}
[ -z "$(deb "$out/core" python3-ardnet)$(deb "$out/core" octave-ardnet)" ] ||
    fail "built without Python and Octave, yet their packages are there"
for p in libardnet0 libardnet-dev ardnet; do
    [ -n "$(deb "$out/core" "$p")" ] || fail "core: no package $p"
    printf 'core: %-14s Depends: %s\n' "$p" "$(dep core "$p")"
done
knows() { grep -rqsw --include=CMakeLists.txt --include="*.cmake" -- "$1" "$root/CMakeLists.txt" "$root/cmake" "$root/src"; }
if knows ARD_WEB; then
    dep core ardnet | grep -q civetweb && fail "built without ARD_WEB, ardnet depends on civetweb"
else
    echo "note: this tree has no ARD_WEB option: ard web is built into every ardnet package"
fi
dep core ardnet | grep -q libddsc && fail "built without ARD_LOG (so without ARD_ROS2), ardnet depends on Cyclone DDS"
if knows ARD_LOG; then
    for p in libardnet0 ardnet; do
        dep core "$p" | grep -Eq 'libzstd|liblz4' && fail "built without ARD_LOG, $p depends on $(dep core "$p")"
    done
    files "$(deb "$out/core" libardnet0)" | grep -q libardnet_log && fail "built without ARD_LOG, libardnet0 holds libardnet_log"
else
    echo "note: this tree has no ARD_LOG option: the recording code is always built"
fi
echo "packages_quick: ok"
