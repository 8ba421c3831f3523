#!/usr/bin/env bash
# usage.sh (test "fresh_usage", label "fresh") - scripts/fresh.sh refuses what it cannot do,
# saying why, without making anything: an unknown option (2), not root (77), an unreachable
# mirror (77); --help prints the usage (0). Needs no network.
set -uo pipefail
src=$(cd "$(dirname "$0")/../.." && pwd)
fresh=$src/scripts/fresh.sh
fail() {
    echo "FAIL: $*" >&2
    exit 1
}
# expect CODE TEXT CMD...: CMD exits with CODE and its stderr contains TEXT.
expect() {
    local code=$1 text=$2 err rc=0
    shift 2
    err=$("$@" 2>&1 >/dev/null) || rc=$?
    [ "$rc" = "$code" ] || fail "exit $rc (expected $code) from: $* -- $err"
    [[ $err == *"$text"* ]] || fail "'$text' not in the error of: $* -- $err"
}

expect 2 "unknown option '--bogus'" bash "$fresh" --bogus true
bash "$fresh" --help | grep -q '^Exit status' || fail "--help does not describe the exit status"

if [ "$(id -u)" = 0 ]; then
    # nobody runs a copy: the checkout may be out of its reach (under /root).
    T=$(mktemp -d /tmp/fresh_usage.XXXXXX)
    trap 'rm -rf "$T"' EXIT
    chmod 755 "$T"
    install -m 755 "$fresh" "$T/fresh.sh"
    expect 77 "cannot run: needs root" setpriv --reuid=nobody --regid=nogroup --clear-groups \
        bash "$T/fresh.sh" true
    if command -v curl >/dev/null || command -v wget >/dev/null; then
        # Port 9 (discard) on loopback: nothing listens there.
        expect 77 "the mirror http://127.0.0.1:9/debian is unreachable" \
            env ARD_FRESH_MIRROR=http://127.0.0.1:9/debian ARD_FRESH_CACHE="$T/cache" \
            bash "$fresh" true
        [ ! -e "$T/cache" ] || fail "a cache was made although the mirror was unreachable"
    fi
else
    expect 77 "cannot run: needs root" bash "$fresh" true
fi
echo PASS
