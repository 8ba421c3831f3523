# common.sh - helpers for the ardstart shell tests (sourced). Needs ARDSTART, ARDKILL; links
# them (and TBLOCK, ARDNET, ARD when set) into $T/bin, first in PATH, as an installed system has
# them. Then one of:
#   local_books          one host: books in $T/books, domain t_<TEST_NAME>_<pid>
#   hosts_start HOST...  network namespaces with private /dev/shm and /run and a real sshd
#                        each (needs root, else exit 77); `on HOST CMD...` runs CMD there
#                        as a user would: domain $D, transport, host label in the environment
set -euo pipefail

: "${ARDSTART:?set ARDSTART}" "${ARDKILL:?set ARDKILL}"
T=$(mktemp -d /tmp/ardstart_test.XXXXXX)
BIN="$T/bin"
mkdir -p "$BIN"
ln -s "$ARDSTART" "$BIN/ardstart"
ln -s "$ARDKILL" "$BIN/ardkill"
[ -z "${TBLOCK:-}" ] || ln -s "$TBLOCK" "$BIN/tblock"
[ -z "${ARD:-}" ] || ln -s "$ARD" "$BIN/ard"
HAVE_ARDNET=0
if [ -n "${ARDNET:-}" ] && [ -x "$ARDNET" ]; then
    ln -s "$ARDNET" "$BIN/ardnet"
    HAVE_ARDNET=1
fi
export PATH="$BIN:$PATH"

MODE=
TEST_PIDS=() # started by the test itself: ended at exit (they would hold ctest's pipe)
cleanup_common() {
    local p
    for p in ${TEST_PIDS[@]+"${TEST_PIDS[@]}"}; do kill "$p" 2>/dev/null || true; done
    if [ "$MODE" = local ]; then
        # Whatever a failed test left: stop it all, then remove the books and shm.
        "$ARDKILL" -q -g 0.2 >/dev/null 2>&1 || true
        rm -f /dev/shm/ard."$ARD_DOMAIN".* 2>/dev/null || true
    elif [ "$MODE" = hosts ]; then
        netns_destroy
    fi
    rm -rf "$T"
}
trap cleanup_common EXIT
trap 'exit 129' HUP
trap 'exit 130' INT
trap 'exit 143' TERM

fail() {
    echo "FAIL: $*" >&2
    if [ "$MODE" = hosts ]; then
        on "$FIRST_HOST" ardstart --list >&2 || true
        local h
        for h in $HOSTS; do
            echo "--- logs on $h" >&2
            netns_run "$h" sh -c "tail -n 5 /run/ardnet/$D/log/*.log" >&2 || true
        done
    else
        echo "--- listing:" >&2
        "$ARDSTART" --list >&2 || true
    fi
    exit 1
}

local_books() {
    MODE=local
    export ARD_DOMAIN="t_${TEST_NAME:-as}_$$"
    export ARD_BOOKS_DIR="$T/books"
}

# Extra NAME=VALUE words for `on` (e.g. where example programs are).
ON_ENV=()
hosts_start() {
    source "${SRCDIR:?set SRCDIR}/tests/lib/netns.sh"
    source "$SRCDIR/tests/lib/sshd.sh"
    netns_require_root
    NETNS_DIR="$T/ns"
    NETNS_NO_TRAP=1
    D="t_${TEST_NAME:-as}_$$"
    HOSTS="$*"
    FIRST_HOST=$1
    SSHD_PATH="$PATH"
    MODE=hosts
    netns_create "$@"
    sshd_start "$@"
    RSH="ssh -F $SSHD_CONFIG"
}

on() {
    local h=$1
    shift
    netns_run "$h" env -C "$T" ARD_DOMAIN="$D" ARD_RSH="$RSH" ARD_HOST="$h" PATH="$PATH" \
        ${ON_ENV[@]+"${ON_ENV[@]}"} "$@"
}

# Field of PATH in the raw listing: 2 host, 3 pid, 4 state, 5 code.
field() {
    "$ARDSTART" --list --raw "$1" | awk -F'\t' -v p="$1" -v f="$2" '$1 == p { print $f }'
}

# Wait (up to 10 s, against hangs only) until PATH's state is STATE [CODE].
wait_state() {
    local path=$1 want=$2 code=${3:-} i
    for i in $(seq 200); do
        if [ "$(field "$path" 4)" = "$want" ] && { [ -z "$code" ] || [ "$(field "$path" 5)" = "$code" ]; }; then
            return 0
        fi
        sleep 0.05
    done
    fail "$path: state '$(field "$path" 4) $(field "$path" 5)', expected '$want $code'"
}

alive() { kill -0 "$1" 2>/dev/null && ! grep -q '^State:.*Z' "/proc/$1/status" 2>/dev/null; }

shm_count() { ls /dev/shm 2>/dev/null | grep -c "^ard\.$ARD_DOMAIN\." || true; }

# Run CMD... expecting exit code WANT and stderr containing TEXT: expect_fail WANT TEXT CMD...
expect_fail() {
    local want=$1 text=$2 rc=0
    shift 2
    err=$("$@" 2>&1 >/dev/null) || rc=$?
    [ "$rc" = "$want" ] || fail "exit $rc (expected $want) from: $* -- $err"
    grep -qF -- "$text" <<<"$err" || fail "expected '$text' from: $* -- got: $err"
    echo "  $want: $err" | head -n 1
}

# PIDs of the processes whose command line matches PATTERN and whose environment has
# ARD_DOMAIN=DOMAIN (what a test started, whichever host): domain_pids PATTERN DOMAIN
domain_pids() {
    local p
    for p in $(pgrep -f "$1" || true); do
        if { tr '\0' '\n' <"/proc/$p/environ"; } 2>/dev/null | grep -qx "ARD_DOMAIN=$2"; then
            echo "$p"
        fi
    done
}

# Nothing of domain $D left on any host: no shared memory object, no entry in the books, no
# process matching PATTERN (the hosts share the pid namespace).
hosts_clean() {
    local h n
    for h in $HOSTS; do
        n=$(netns_run "$h" sh -c "ls /dev/shm | grep -c '^ard\.$D\.' || true")
        [ "$n" = 0 ] || fail "$n shared memory objects of $D left on $h"
        n=$(netns_run "$h" sh -c "ls /run/ardnet/$D/e 2>/dev/null | wc -l")
        [ "$n" = 0 ] || fail "$n entries left in $h's books"
    done
    n=$(domain_pids "$1" "$D")
    [ -z "$n" ] || fail "processes of $D still run: $n"
}
