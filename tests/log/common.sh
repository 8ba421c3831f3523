# common.sh - helpers for the recording tests (sourced): own domain, temp dir, clean-up.
set -euo pipefail
: "${ARD:?set ARD}"
export ARD_DOMAIN="t_log_${TEST_NAME:-x}_$$"
T=$(mktemp -d /tmp/ard_log_test.XXXXXX)
PIDS=()
cleanup() {
    local p
    for p in ${PIDS[@]+"${PIDS[@]}"}; do kill -9 "$p" 2>/dev/null || true; done
    wait 2>/dev/null || true
    rm -f /dev/shm/ard."$ARD_DOMAIN".* 2>/dev/null || true
    rm -rf "$T"
}
trap cleanup EXIT
fail() {
    echo "FAIL: $*" >&2
    exit 1
}
# wait_for CMD...: until CMD succeeds (30 s at most: a loaded host under ASan is slow).
wait_for() {
    local i
    for i in $(seq 600); do
        if "$@" >/dev/null 2>&1; then return 0; fi
        sleep 0.05
    done
    fail "timed out waiting for: $*"
}
# recorded NAME ERRFILE: the recorder's final "recorded" count of connection NAME.
recorded() { awk -v n="$1" '$1 == n { r = $3 } END { print r + 0 }' "$2"; }
missed() { awk -v n="$1" '$1 == n { r = $5 } END { print r + 0 }' "$2"; }
