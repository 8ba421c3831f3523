#!/usr/bin/env bash
# fresh.sh - run a command in a brand-new minimal Debian 12 root file system, as a new user's
# machine would: `debootstrap --variant=minbase bookworm` from the mirror this machine's apt
# uses, the tree copied to /root/project, the command run there as root with bash -c, the
# root changed to it (pivot_root) inside a mount and pid namespace of its own.
#
#   scripts/fresh.sh [--keep] [--] [COMMAND [ARG...]]
#
# COMMAND and its ARGs are joined with spaces and run by `bash -c` in /root/project (as ssh
# does: `scripts/fresh.sh 'scripts/deps.sh && scripts/demo.sh'` works); the default is the
# README's test command, scripts/test.sh. The environment there is clean (HOME=/root, a
# standard PATH, LANG=C.UTF-8) except for CI, which is passed through.
#
# The root file system is cached as a tarball in /var/cache/ardnet-test (ARD_FRESH_CACHE), with
# the mirror it came from and its checksum next to it: later runs skip the download, and a
# cache from another mirror or a damaged tarball is made again. Each run unpacks it into a new
# directory under /var/tmp (ARD_FRESH_TMP) and removes it afterwards, unless --keep (or
# ARD_FRESH_KEEP=1) is given: then its path is printed, for chroot-ing into it by hand.
# Copied in: the checkout's tracked files and its untracked files that are not ignored, as they
# are in the working tree (all files but .git and build directories when it is not a git tree),
# the host's /etc/resolv.conf, and the machine's npm configuration /etc/npmrc if it exists, with
# the CA file it names and the machine's own CAs (/usr/local/share/ca-certificates), so that npm
# reaches its registry as it does here. Nothing from a user's home.
#
# ARD_FRESH_MIRROR=URL uses another Debian mirror than apt's.
#
# Exit status: COMMAND's; 77 when it cannot run here, with the reason (not root, no debootstrap
# and it cannot be installed, the mirror unreachable, no mirror in apt's sources); 1 when
# making the root file system failed; 2 for a bad option.
set -euo pipefail
self=fresh.sh
src=$(cd "$(dirname "$0")/.." && pwd)
cache_dir=${ARD_FRESH_CACHE:-/var/cache/ardnet-test}
tmp_base=${ARD_FRESH_TMP:-/var/tmp}
keep=${ARD_FRESH_KEEP:-0}

usage() {
    sed -n '2,/^set -euo/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//'
}

while (($#)); do
    case $1 in
    -h | --help) usage; exit 0 ;;
    --version) echo "$self (ardnet)"; exit 0 ;;
    --keep) keep=1; shift ;;
    --) shift; break ;;
    -*) echo "$self: unknown option '$1' (see --help)" >&2; exit 2 ;;
    *) break ;;
    esac
done
if (($#)); then cmd="$*"; else cmd=scripts/test.sh; fi

skip() {
    echo "$self: cannot run: $*" >&2
    exit 77
}
t0=$SECONDS
stamp() { printf '%s: %-28s %4d s\n' "$self" "$1" $((SECONDS - $2)); }

[[ $(id -u) -eq 0 ]] || skip "needs root (debootstrap, chroot, mount and pid namespaces)"
for t in unshare chroot mount tar gzip sha256sum; do
    command -v "$t" >/dev/null || skip "'$t' is not installed"
done

# The Debian mirror of the machine's apt: the first source of 'bookworm' with 'main', in the
# deb822 files of sources.list.d or in the one-line format.
find_mirror() {
    local f
    for f in /etc/apt/sources.list.d/*.sources; do
        [[ -r $f ]] || continue
        awk '
            function flush() { if (uri != "" && suites ~ /(^| )bookworm( |$)/ && comps ~ /(^| )main( |$)/ && types ~ /(^| )deb( |$)/) { print uri; found = 1; exit } uri = suites = comps = types = "" }
            /^[ \t]*#/ { next }
            /^[ \t]*$/ { flush(); next }
            { key = tolower($1); sub(/:$/, "", key); $1 = ""; sub(/^ +/, "") }
            key == "uris" { uri = $1 } key == "suites" { suites = $0 } key == "components" { comps = $0 } key == "types" { types = $0 }
            END { if (!found) flush() }' "$f"
    done
    for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
        [[ -r $f ]] || continue
        awk '$1 == "deb" { i = 2; if ($2 ~ /^\[/) { while (i <= NF && $i !~ /\]$/) i++; i++ }
             if ($(i + 1) == "bookworm") { for (j = i + 2; j <= NF; j++) if ($j == "main") { print $i; exit } } }' "$f"
    done
}
mirror=$(find_mirror | head -n 1)
mirror=${ARD_FRESH_MIRROR:-$mirror}
[[ -n $mirror ]] || skip "no Debian 12 (bookworm main) mirror in /etc/apt/sources.list or /etc/apt/sources.list.d/"
mirror=${mirror%/}

reachable() {
    local url=$mirror/dists/bookworm/Release
    if command -v curl >/dev/null; then
        curl -fsS --max-time 30 -o /dev/null "$url"
    elif command -v wget >/dev/null; then
        wget -q -T 30 -O /dev/null "$url"
    else
        return 0 # nothing to ask with: debootstrap will say
    fi
}
reachable 2>/dev/null || skip "the mirror $mirror is unreachable ($mirror/dists/bookworm/Release)"

if ! command -v debootstrap >/dev/null; then
    echo "$self: installing debootstrap"
    { DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends debootstrap ||
        { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends debootstrap; }; } >/dev/null 2>&1 ||
        skip "debootstrap is not installed and apt-get cannot install it"
fi

arch=$(dpkg --print-architecture 2>/dev/null || echo amd64)
tarball=$cache_dir/debian12-minbase-$arch.tar.gz
info=$cache_dir/debian12-minbase-$arch.info
root=
cleanup() {
    local rc=$?
    if [[ -n $root && -d $root ]]; then
        if [[ $keep == 1 ]]; then
            rm -f "$root/pid" # kept: no later run removes it
            echo "$self: kept the root file system: $root (chroot $root/root bash)" >&2
        else
            rm -rf --one-file-system "$root"
        fi
    fi
    [[ -z ${boot:-} ]] || rm -rf --one-file-system "$boot"
    exit $rc
}
trap cleanup EXIT
trap 'exit 130' INT TERM

cache_ok() {
    [[ -f $tarball && -f $info ]] || return 1
    grep -qxF "mirror=$mirror" "$info" || { echo "$self: the cache was made from another mirror: making it again"; return 1; }
    local want
    want=$(sed -n 's/^sha256=//p' "$info")
    [[ -n $want && $(sha256sum <"$tarball" | cut -d' ' -f1) == "$want" ]] ||
        { echo "$self: the cached tarball is damaged: making it again"; return 1; }
}

t=$SECONDS
# One run at a time makes or checks the cache (the tests fresh_demo and fresh_packages may
# start together on a machine without it).
mkdir -p "$cache_dir"
exec 9>"$cache_dir/.lock"
flock 9
if cache_ok; then
    stamp "cache ($tarball)" $t
else
    mkdir -p "$cache_dir"
    boot=$(mktemp -d "$tmp_base/ardnet-debootstrap.XXXXXX")
    echo "$self: debootstrap --variant=minbase bookworm from $mirror"
    if ! debootstrap --variant=minbase --arch="$arch" bookworm "$boot/root" "$mirror" >"$boot/log" 2>&1; then
        tail -n 20 "$boot/log" >&2
        echo "$self: debootstrap failed (above: the end of its log)" >&2
        exit 1
    fi
    rm -rf "$boot/root/var/cache/apt/archives/"*.deb
    tar -C "$boot/root" --numeric-owner -czf "$tarball.tmp" .
    sum=$(sha256sum <"$tarball.tmp" | cut -d' ' -f1)
    mv -f "$tarball.tmp" "$tarball"
    printf 'mirror=%s\nsha256=%s\n' "$mirror" "$sum" >"$info.tmp"
    mv -f "$info.tmp" "$info"
    rm -rf --one-file-system "$boot"
    boot=
    stamp "debootstrap (now cached)" $t
fi
exec 9>&-

# Root file systems that runs killed without clean-up (a CTest timeout's SIGKILL) left: their
# namespaces died with them, so only files are left.
for old in "$tmp_base"/ardnet-fresh.*; do
    [[ -f $old/pid ]] || continue
    kill -0 "$(cat "$old/pid")" 2>/dev/null && continue
    echo "$self: removing $old, left by a run that is gone"
    rm -rf --one-file-system "$old"
done

t=$SECONDS
root=$(mktemp -d "$tmp_base/ardnet-fresh.XXXXXX")
chmod 755 "$root"
echo $$ >"$root/pid"
R=$root/root
mkdir "$R"
tar -C "$R" --numeric-owner -xzf "$tarball"
stamp "unpack" $t

t=$SECONDS
mkdir -p "$R/root/project"
chmod 700 "$R/root"
if git -C "$src" rev-parse --show-toplevel >/dev/null 2>&1; then
    git -C "$src" ls-files -z -co --exclude-standard |
        while IFS= read -r -d '' f; do
            [[ -e $src/$f || -L $src/$f ]] && printf '%s\0' "$f"
        done | tar -C "$src" --null -T - -cf - | tar -C "$R/root/project" -xf -
else
    (cd "$src" && find . -mindepth 1 \( -name .git -o -name build -o -name 'build-*' \) -prune -o \
        ! -type d -print0 | tar --null -T - -cf -) | tar -C "$R/root/project" -xf -
fi
rm -f "$R/etc/resolv.conf"
cp -L /etc/resolv.conf "$R/etc/resolv.conf"
if [[ -f /etc/npmrc ]]; then
    cp /etc/npmrc "$R/etc/npmrc"
    cafile=$(sed -n 's/^[[:space:]]*cafile[[:space:]]*=[[:space:]]*//p' /etc/npmrc | tail -n 1)
    if [[ -n $cafile && -f $cafile && ! -e $R$cafile ]]; then
        mkdir -p "$(dirname "$R$cafile")"
        cp -L "$cafile" "$R$cafile"
    fi
    if [[ -d /usr/local/share/ca-certificates ]]; then
        mkdir -p "$R/usr/local/share/ca-certificates"
        cp -a /usr/local/share/ca-certificates/. "$R/usr/local/share/ca-certificates/"
    fi
fi
stamp "copy the tree ($(du -sh "$R/root/project" | cut -f1))" $t

# In the namespaces: the root bound onto itself (a mount point, so that `ip netns exec` can
# change its propagation), proc of the new pid namespace, sysfs, /dev bound recursively, and
# tmpfs on /dev/shm, /run (where `ip netns add` keeps its bind mounts) and /tmp. Everything is
# private to the namespace and goes away with it. The root is changed with pivot_root, the
# machine's own root unmounted: a chroot alone would be left by every `nsenter --mount`
# (entering a mount namespace sets the root to the namespace's), as the multi-host tests do.
t=$SECONDS
shown=${cmd%%$'\n'*}
[[ $shown == "$cmd" ]] || shown="$shown ..."
echo "$self: running in $R/root/project: $shown"
set +e
unshare -m -p -f --propagation private env R="$R" CMD="$cmd" CI_SET="${CI+1}" CI_VAL="${CI-}" bash -c '
    set -e
    mount --bind "$R" "$R"
    mount -t proc proc "$R/proc"
    mount -t sysfs sysfs "$R/sys"
    mount --rbind /dev "$R/dev"
    mount --make-rslave "$R/dev"
    mount -t tmpfs -o mode=1777,nosuid,nodev tmpfs "$R/dev/shm"
    mount -t tmpfs -o mode=755,nosuid,nodev tmpfs "$R/run"
    mount -t tmpfs -o mode=1777,nosuid,nodev tmpfs "$R/tmp"
    envs=(HOME=/root USER=root LOGNAME=root LANG=C.UTF-8 TERM="${TERM:-dumb}"
          PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin)
    [[ -z $CI_SET ]] || envs+=(CI="$CI_VAL")
    mkdir -p "$R/.fresh-oldroot"
    cd "$R"
    pivot_root . .fresh-oldroot
    cd /
    umount -l /.fresh-oldroot
    rmdir /.fresh-oldroot
    set +e
    /usr/bin/env -i "${envs[@]}" /bin/bash -c "cd /root/project && $CMD"
'
rc=$?
set -e
stamp "command (exit status $rc)" $t
stamp "total" $t0
exit $rc
