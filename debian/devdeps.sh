#!/bin/sh
# devdeps.sh STAGING - the -dev packages libardnet-dev depends on: for each library named in
# the staged .pc files' Libs.private (-lX) and Requires.private, the Debian package that holds
# its link-time file, as a comma-separated list. C library parts (libc6-dev) are left out.
set -eu
staging=$1
multiarch=$(dpkg-architecture -qDEB_HOST_MULTIARCH)
pcs=$(ls "$staging"/usr/lib/"$multiarch"/pkgconfig/*.pc 2>/dev/null || true)
[ -n "$pcs" ] || exit 0
owner() { dpkg -S "$1" 2>/dev/null | sed -n '1s/:.*//p'; }
{
    for lib in $(sed -n 's/^Libs.private://p' $pcs | tr ' ' '\n' | sed -n 's/^-l//p'); do
        case $lib in ardnet*|pthread|rt|m|dl|c) continue ;; esac
        for f in /usr/lib/"$multiarch"/lib"$lib".so /usr/lib/"$multiarch"/lib"$lib".a \
                 /usr/lib/lib"$lib".so; do
            [ -e "$f" ] && { owner "$f"; break; }
        done
    done
    for mod in $(sed -n 's/^Requires.private://p' $pcs | tr ', ' '\n\n' | sed 's/[<>=].*//'); do
        case $mod in ardnet*|'') continue ;; esac
        f=$(pkg-config --variable=pcfiledir "$mod" 2>/dev/null)/$mod.pc
        [ -e "$f" ] && owner "$f"
    done
} | sed '/^$/d' | sort -u | paste -sd, | sed 's/,/, /g'
