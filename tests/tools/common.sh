# common.sh - helpers for the ard tests (sourced). Needs ARD (the ard program); TWRITER for
# the known-rate writer. Each test uses its own domain and removes its objects at exit.
set -euo pipefail
: "${ARD:?set ARD}"
# The tests read ard's JSON with /usr/bin/python3 (scripts/deps.sh installs it).
[ -x /usr/bin/python3 ] || { echo "SKIP: /usr/bin/python3 is not installed" >&2; exit 77; }
export ARD_DOMAIN="t_ard_${TEST_NAME:-x}_$$"
T=$(mktemp -d /tmp/ard_test.XXXXXX)
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
# expect CODE TEXT CMD...: CMD exits with CODE and its stderr contains TEXT.
expect() {
    local code=$1 text=$2 rc=0
    shift 2
    "$@" >"$T/out" 2>"$T/err" || rc=$?
    [ "$rc" = "$code" ] || fail "'$*' exited $rc, expected $code; stderr: $(cat "$T/err")"
    [ -z "$text" ] || grep -qF -- "$text" "$T/err" ||
        fail "'$*': stderr lacks '$text': $(cat "$T/err")"
}
# wait_for CMD...: until CMD succeeds (5 s at most).
wait_for() {
    local i
    for i in $(seq 100); do
        if "$@" >/dev/null 2>&1; then return 0; fi
        sleep 0.05
    done
    fail "timed out waiting for: $*"
}
