# common.sh - helpers for the ardstart shell tests (sourced). Needs ARDSTART, ARDKILL, TBLOCK.
set -euo pipefail

: "${ARDSTART:?set ARDSTART}" "${ARDKILL:?set ARDKILL}" "${TBLOCK:?set TBLOCK}"
T=$(mktemp -d /tmp/ardstart_test.XXXXXX)
export ARD_DOMAIN="t_${TEST_NAME:-as}_$$"
export ARD_BOOKS_DIR="$T/books"
# Scripts started by ardstart find the programs in PATH, like an installed system.
BIN="$T/bin"
mkdir -p "$BIN"
ln -s "$ARDSTART" "$BIN/ardstart"
ln -s "$ARDKILL" "$BIN/ardkill"
ln -s "$TBLOCK" "$BIN/tblock"
export PATH="$BIN:$PATH"

cleanup_common() {
    # Whatever a failed test left: stop it all, then remove the books and shm.
    "$ARDKILL" -q -g 0.2 >/dev/null 2>&1 || true
    rm -f /dev/shm/ard."$ARD_DOMAIN".* 2>/dev/null || true
    rm -rf "$T"
}
trap cleanup_common EXIT

fail() {
    echo "FAIL: $*" >&2
    echo "--- listing:" >&2
    "$ARDSTART" --list >&2 || true
    exit 1
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
