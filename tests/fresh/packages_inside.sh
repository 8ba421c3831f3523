#!/bin/bash
# packages_inside.sh - the Debian packages on a brand-new minimal Debian 12, as a team that
# installs them on its robot computers would see them. Runs as root inside the fresh root file
# system of scripts/fresh.sh, in its copy of the tree (tests/fresh/packages.sh starts it):
#
#  1. installs the build dependencies (apt-get build-dep from debian/control) and builds the
#     packages (debian/build.sh);
#  2. purges every package step 1 added, back to the fresh system, and installs the packages
#     there with `apt-get install ./*.deb`: every program and library of theirs must find all
#     the shared libraries it needs, and no build tool may come along;
#  3. runs the arm demo from the installed programs and examples only (PATH without the tree),
#     recording a second of it with `ard record`, and checks that nothing is left;
#  4. builds the README's block with pkg-config and with find_package(ardnet);
#  5. reads the recording in /usr/bin/python3 (import ardnet) and in Octave (ard_load);
#  6. purges the packages: no file or directory of theirs may be left.
# Prints the time of each step. Exit status 0 when everything held.
set -euo pipefail
export DEBIAN_FRONTEND=noninteractive
src=$(pwd)
W=/root/packages-test
rm -rf "$W"
mkdir -p "$W"
ours=(libardnet0 libardnet-dev ardnet python3-ardnet octave-ardnet)

fail() {
    echo "packages: FAILED: $*" >&2
    exit 1
}
t_step=$(date +%s)
name_step=""
times=()
step() {
    local now
    now=$(date +%s)
    [ -n "$name_step" ] && times+=("$(printf '%-58s %4d s' "$name_step" $((now - t_step)))")
    name_step=$1
    t_step=$now
    [ "$1" = end ] || printf '\n== %s\n' "$1"
}
installed() { dpkg-query -W -f='${db:Status-Abbrev} ${Package}\n' | awk '$1 == "ii" { print $2 }' | sort; }

step "build dependencies (apt-get build-dep)"
installed >"$W/fresh.list"
apt-get update -qq
apt-get install -y -qq --no-install-recommends dpkg-dev >/dev/null
apt-get build-dep -y -qq --no-install-recommends "$src" >/dev/null
echo "$(comm -13 "$W/fresh.list" <(installed) | wc -l) packages installed"

step "build the packages (debian/build.sh)"
"$src/debian/build.sh" "$W/debs" >"$W/build.log" 2>&1 || {
    tail -n 40 "$W/build.log"
    fail "the packages did not build (log above)"
}
debs=()
for p in "${ours[@]}"; do
    f=$(ls "$W"/debs/"${p}"_*.deb 2>/dev/null) || fail "no package $p"
    debs+=("$f")
    printf '%-16s %8d bytes  Depends: %s\n' "$p" "$(stat -c %s "$f")" "$(dpkg-deb -f "$f" Depends)"
done

step "back to the fresh system (purge the build dependencies)"
mapfile -t added < <(comm -13 "$W/fresh.list" <(installed))
apt-get purge -y -qq "${added[@]}" >/dev/null
[ -z "$(comm -3 "$W/fresh.list" <(installed))" ] ||
    fail "not back to the fresh system: $(comm -3 "$W/fresh.list" <(installed) | tr '\n' ' ')"
echo "ok: $(wc -l <"$W/fresh.list") packages, as debootstrap left them"

step "apt-get install ./*.deb"
cp "${debs[@]}" "$W/"
(cd "$W" && apt-get install -y -qq --no-install-recommends ./*.deb >/dev/null)
mapfile -t pulled < <(comm -13 "$W/fresh.list" <(installed))
echo "${#pulled[@]} packages installed (ours and what they depend on)"
for p in "${pulled[@]}"; do
    case $p in
    # (-dev packages come only with libardnet-dev, for its static libraries: checked below)
    gcc | gcc-12 | cpp | make | cmake | pkgconf | pkg-config | dpkg-dev | debhelper | dh-python | \
        python3-dev | octave-dev | libcivetweb-dev | build-essential)
        fail "a build tool came with the packages: $p" ;;
    esac
done
# The -dev packages that came are those libardnet-dev names (and what they need themselves).
devdeps=$(dpkg-query -W -f='${Depends}' libardnet-dev | tr ',' '\n' | sed 's/^ *//; s/[ :].*//')
for d in $devdeps; do
    case $d in *-dev) ;; *) continue ;; esac
    printf '%s\n' "${pulled[@]}" | grep -qx "$d" || fail "libardnet-dev's dependency $d did not come"
done
closure=$(apt-cache depends --recurse --installed --no-recommends --no-suggests --no-conflicts \
    --no-breaks --no-replaces --no-enhances libardnet-dev | sed -n 's/^\([a-z0-9][^ ]*\)$/\1/p')
for p in "${pulled[@]}"; do
    case $p in *-dev) grep -qx "$p" <<<"$closure" || fail "$p came, but not for libardnet-dev" ;; esac
done
echo "ok: the -dev packages are libardnet-dev's: $(echo $devdeps | tr ' ' ',') and what they need"
for p in "${ours[@]}"; do
    dpkg -L "$p" >"$W/files.$p"
    while read -r f; do
        [ -f "$f" ] && [ ! -L "$f" ] && [ "$(head -c 4 "$f" | od -An -c | tr -d ' ')" = '177ELF' ] || continue
        missing=$(ldd "$f" 2>&1 | grep 'not found' || true)
        [ -z "$missing" ] || fail "$p: $f needs a library no package brought: $missing"
    done <"$W/files.$p"
done
echo "ok: every program and library of ours finds its shared libraries"

step "the arm demo from the installed programs"
(
    cd /
    export PATH=/usr/sbin:/usr/bin:/sbin:/bin ARD_DOMAIN=pkdemo
    unset ARM_BIN
    [ "$(command -v ardstart)" = /usr/bin/ardstart ] || fail "ardstart is not the installed one"
    ex=/usr/share/ardnet/examples/arm
    "$ex/master.sh"
    sleep 1
    ardstart --list
    ard list | tee "$W/list.out"
    grep -q '^arm.state ' "$W/list.out" || fail "ard list shows no arm.state"
    ard show -f arm.state --field q -n 3
    ard record arm.state arm.cmd -o /tmp/arm.mcap --duration 1
    ard info /tmp/arm.mcap
    ardkill
    "$ex/master_group.sh"
    sleep 1
    ardrun ctl arm_rt status
    ardkill
    left_procs=0
    for p in /proc/[0-9]*; do
        env=$({ tr '\0' '\n' <"$p/environ"; } 2>/dev/null || true)
        if grep -qx "ARD_DOMAIN=$ARD_DOMAIN" <<<"$env" && grep -q '^ARD_PATH=' <<<"$env"; then
            echo "still running: $(tr '\0' ' ' <"$p/cmdline")"
            left_procs=$((left_procs + 1))
        fi
    done
    left_shm=$(ls /dev/shm | grep -c "^ard\.$ARD_DOMAIN\." || true)
    left_entries=$(ardstart --list --raw | wc -l)
    echo "left: processes $left_procs, shared memory objects $left_shm, entries $left_entries"
    [ "$left_procs$left_shm$left_entries" = 000 ] || fail "the demo left something"
)

step "the README's block: pkg-config and find_package(ardnet)"
apt-get install -y -qq --no-install-recommends gcc libc6-dev pkg-config cmake make >/dev/null
mkdir -p "$W/block"
awk '/^```c compile file=controller.c/ { on = 1; next } on && /^```/ { exit } on' \
    "$src/README.md" >"$W/block/controller.c"
[ -s "$W/block/controller.c" ] || fail "no controller.c block in README.md"
(
    cd "$W/block"
    # shellcheck disable=SC2046
    cc -o controller controller.c $(pkg-config --cflags --libs ardnet)
    ./controller --ard-help | tee help.out
    grep -Eq '^ *cmd +in +56 ' help.out || fail "pkg-config block: no port cmd"
    cat >CMakeLists.txt <<'EOF'
cmake_minimum_required(VERSION 3.18)
project(block C)
find_package(ardnet REQUIRED)
add_executable(controller controller.c)
target_link_libraries(controller PRIVATE ardnet::ardnet)
add_executable(controller_static controller.c)
target_link_libraries(controller_static PRIVATE ardnet::ardnet_static)
EOF
    cmake -S . -B b >/dev/null
    cmake --build b >/dev/null
    for exe in b/controller b/controller_static; do
        help=$("$exe" --ard-help) # (a grep -q in a pipe could cut the writer: pipefail)
        grep -Eq '^ *state +out +112 ' <<<"$help" || fail "find_package block $exe: no port state"
    done
    libs=$(ldd b/controller)
    grep -Eq 'libardnet.so.0 => (/usr)?/lib/' <<<"$libs" ||
        fail "b/controller: not on the installed library: $(tr '\n' ' ' <<<"$libs")"
    libs=$(ldd b/controller_static)
    ! grep -q libardnet <<<"$libs" || fail "b/controller_static: linked the shared library"
    echo "ok: built with pkg-config, with find_package (ardnet::ardnet and ardnet::ardnet_static)"
)

step "import ardnet in /usr/bin/python3, ard_load in Octave"
/usr/bin/python3 - /tmp/arm.mcap <<'EOF'
import sys
import ardnet
assert ardnet.__file__.startswith("/usr/lib/python3/dist-packages/ardnet/"), ardnet.__file__
d = ardnet.log.read(sys.argv[1])
s = d["arm.state"]
assert s.count > 100, s.count
assert s["q"].shape == (s.count, 7), s["q"].shape
print("python3 %s: ardnet %s from %s, arm.state: %d packets, q %s"
      % (sys.version.split()[0], ardnet.__version__, ardnet.__file__, s.count, s["q"].shape))
EOF
octave-cli --norc --eval "r = ard_load('/tmp/arm.mcap'); n = size(r.arm_state.q, 1); \
    assert(n > 100 && size(r.arm_state.q, 2) == 7); \
    printf('octave: ard_load from %s, arm.state: %d packets\n', which('ard_load'), n);"

step "purge the packages"
apt-get purge -y -qq "${ours[@]}" >/dev/null
for p in "${ours[@]}"; do
    ! dpkg-query -W "$p" >/dev/null 2>&1 || [ -z "$(dpkg-query -W -f='${db:Status-Abbrev}' "$p")" ] ||
        fail "$p is still known to dpkg: $(dpkg-query -W -f='${db:Status-Abbrev}' "$p")"
done
left=()
n=0
while read -r f; do
    [ "$f" = /. ] && continue
    n=$((n + 1))
    [ -e "$f" ] || [ -L "$f" ] || continue
    # A directory another package owns (/usr/bin, /usr/share/doc) stays: it is not ours.
    [ -d "$f" ] && [ ! -L "$f" ] && dpkg -S "$f" >/dev/null 2>&1 && continue
    left+=("$f")
done < <(sort -u "$W"/files.*)
[ "${#left[@]}" = 0 ] || fail "left after purge: ${left[*]}"
echo "ok: none of the $n paths the packages listed is left"

step end
printf '\n== times\n'
printf '%s\n' "${times[@]}"
echo "packages: ok"
