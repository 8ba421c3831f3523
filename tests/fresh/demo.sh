#!/usr/bin/env bash
# demo.sh (test "fresh_demo", label "fresh") - the README's first command on a brand-new
# Debian 12: scripts/fresh.sh makes a minimal root file system (debootstrap --variant=minbase
# bookworm, cached) with the tree in /root/project, and runs there, as root:
#
#  1. scripts/demo.sh: it must exit 0, end with "demo ok", report nothing left (no process of
#     the system, no shared memory object, no entry in the books), and have installed only what
#     the core needs: none of the test tools or optional parts' packages may be there after it;
#  2. scripts/deps.sh, the dependency step of scripts/test.sh: it must exit 0, a second run
#     must find nothing missing (it prints nothing), and /usr/bin/python3 must have the modules
#     the tests import. (The suite itself is not run here: scripts/fresh.sh with no command
#     runs it.)
#
# Prints the time of each step. Exit 77 (skipped) with the reason without root, without a
# Debian mirror in apt's sources or when it is unreachable; other reasons fresh.sh gives for
# not running (no debootstrap that can be installed) are a failure under CI=true.
set -uo pipefail
src=$(cd "$(dirname "$0")/../.." && pwd)

if [ "$(id -u)" != 0 ]; then
    echo "SKIP: needs root (debootstrap, chroot, namespaces)" >&2
    exit 77
fi

inside=$(
    cat <<'INSIDE'
set -uo pipefail
fail() { echo "fresh_demo: FAILED: $*" >&2; exit 1; }
t=$SECONDS
scripts/demo.sh >/tmp/demo.out 2>&1
rc=$?
echo "fresh_demo: scripts/demo.sh: exit $rc, $((SECONDS - t)) s"
grep -E '^(installing|ok \(|processes of the system)' /tmp/demo.out | sed 's/^/  demo: /'
[ "$rc" = 0 ] || { tail -n 40 /tmp/demo.out >&2; fail "scripts/demo.sh exited with $rc"; }
tail -n 1 /tmp/demo.out | grep -qx 'demo ok' || { tail -n 20 /tmp/demo.out >&2; fail "scripts/demo.sh did not end with 'demo ok'"; }
grep -qx 'processes of the system: 0, shared memory objects: 0, entries in the books: 0' /tmp/demo.out ||
    fail "the demo left something: $(grep '^processes of the system' /tmp/demo.out)"
for p in gcc libc6-dev make cmake pkg-config libyaml-dev libsodium-dev; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' ||
        fail "scripts/demo.sh did not install $p, which the core's build needs"
done
extra=()
for p in libzstd-dev liblz4-dev libcivetweb-dev libcmocka-dev clang python3-dev python3-numpy \
    python3-pytest octave liboctave-dev chromium nodejs npm spin nftables openssh-server; do
    if dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed'; then
        extra+=("$p")
    fi
done
[ "${#extra[@]}" = 0 ] || fail "scripts/demo.sh installed what the demo does not need: ${extra[*]}"
echo "fresh_demo: the demo ran, left nothing, and installed only the core's build dependencies"

t=$SECONDS
bash scripts/deps.sh >/tmp/deps.out 2>&1
rc=$?
echo "fresh_demo: scripts/deps.sh: exit $rc, $((SECONDS - t)) s"
[ "$rc" = 0 ] || { tail -n 40 /tmp/deps.out >&2; fail "scripts/deps.sh exited with $rc"; }
again=$(bash scripts/deps.sh 2>&1) || fail "scripts/deps.sh, second run: $again"
[ -z "$again" ] || fail "scripts/deps.sh, second run, still finds something missing: $again"
/usr/bin/python3 -c 'import yaml, numpy, pytest' || fail "/usr/bin/python3 lacks a module the tests import"
echo "fresh_demo: scripts/deps.sh installed everything it lists"
INSIDE
)

out=$(mktemp /tmp/fresh_demo.XXXXXX)
trap 'rm -f "$out"' EXIT
t=$SECONDS
bash "$src/scripts/fresh.sh" -- "$inside" 2>&1 | tee "$out"
rc=${PIPESTATUS[0]}
echo "fresh_demo: total $((SECONDS - t)) s"
if [ "$rc" = 77 ]; then
    why=$(grep '^fresh.sh: cannot run:' "$out" | head -n 1)
    case $why in
    *"is unreachable"* | *"no Debian 12"* | *"needs root"*)
        echo "SKIP: $why" >&2
        exit 77
        ;;
    esac
    if [ "${CI:-}" = true ]; then
        echo "FAIL: root and the mirror are there, but the fresh root file system cannot be made: $why" >&2
        exit 1
    fi
    echo "SKIP: $why" >&2
    exit 77
fi
[ "$rc" = 0 ] || { echo "FAIL: exit $rc in the fresh root file system" >&2; exit 1; }
echo PASS
