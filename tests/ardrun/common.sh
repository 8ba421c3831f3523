# common.sh - helpers of the ardrun tests (sourced).
set -uo pipefail
: "${ARDRUN:?} ${PLUGINS:?}"
export ARD_DOMAIN="ardrun$$"
T=$(mktemp -d /tmp/ardrun-test.XXXXXX)
pids=()
cleanup() {
    for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done
    wait 2>/dev/null
    rm -f /dev/shm/ard."$ARD_DOMAIN".*
    rm -rf "$T"
}
trap cleanup EXIT
failures=0
fail() {
    echo "FAIL: $*" >&2
    failures=$((failures + 1))
}
ok() { echo "ok: $*"; }

# expect CODE TEXT -- COMMAND...: the command exits with CODE and its stderr contains TEXT.
expect() {
    local code=$1 text=$2
    shift 3
    local out rc
    out=$("$@" 2>&1 >/dev/null)
    rc=$?
    if [ "$rc" != "$code" ]; then
        fail "'$*' exited $rc, expected $code; output: $out"
    elif [[ "$out" != *"$text"* ]]; then
        fail "'$*' says '$out', expected it to contain '$text'"
    else
        ok "exit $code: $text"
    fi
}

# the stderr summary line value: summary FILE BLOCK FIELD
summary() {
    sed -n "s/^ardrun: .*: block '$2': .*$3 \([0-9]*\).*/\1/p" "$1" | tail -n1
}

finish() {
    if [ "$failures" -gt 0 ]; then
        echo "$failures failure(s)" >&2
        exit 1
    fi
    echo "all passed"
    exit 0
}
