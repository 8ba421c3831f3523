# common.sh - helpers of the ard web tests (sourced after tests/tools/common.sh).
# start_web ARGS...: ard web on a free loopback port in the background; sets WEB_PID, URL
# (the address it printed, token included), BASE (without the token) and TOKEN.
start_web() {
    "$ARD" web --listen 127.0.0.1:0 "$@" >"$T/web.out" 2>"$T/web.err" &
    WEB_PID=$!
    PIDS+=($WEB_PID)
    wait_for grep -q 'http://' "$T/web.out"
    URL=$(grep -o 'http://[^ ]*' "$T/web.out" | head -1)
    BASE=${URL%%\?*}
    BASE=${BASE%/}
    TOKEN=""
    case $URL in *token=*) TOKEN=${URL##*token=} ;; esac
}
# need_playwright: playwright-core from the npm registry in a cache directory, installed once;
# sets NODE_PATH. Skips (77) when it cannot be had, except under CI=true where that fails.
need_playwright() {
    local cache=${ARD_WEB_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/ardnet-web-test}
    local why=""
    if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
        why="node and npm are needed (apt install nodejs npm)"
    elif [ ! -x "${CHROMIUM:=/usr/bin/chromium}" ]; then
        why="Debian's chromium is needed at $CHROMIUM (apt install chromium)"
    elif [ ! -d "$cache/node_modules/playwright-core" ]; then
        mkdir -p "$cache"
        local st=0
        # 1.61: the last that runs on Debian 12's Node.js 18 (1.62 and later need Node.js 20).
        (cd "$cache" && flock "$cache/.lock" npm install --no-audit --no-fund --loglevel=error \
            playwright-core@1.61 >"$cache/npm.log" 2>&1) || st=$?
        if [ "$st" != 0 ]; then
            . "$(dirname "${BASH_SOURCE[0]}")/../lib/npm.sh"
            why="cannot install playwright-core from npm: $(npm_error "$cache/npm.log" "$st")"
        fi
    fi
    if [ -n "$why" ]; then
        [ "${CI:-}" = true ] && fail "$why"
        echo "skipped: $why" >&2
        exit 77
    fi
    export NODE_PATH="$cache/node_modules" CHROMIUM
}
