# shellcheck shell=bash
# npm.sh - sourced by the tests that fetch their independent checkers from the npm registry.
# npm_error LOG STATUS: one line saying why `npm install` failed, from npm's own error lines
# in LOG (its stdout and stderr): the error code and the message ("npm ERR!" in npm 9,
# "npm error" in npm 10 and later); when npm printed no error line, its exit status and the
# last line it printed, or that it printed nothing.
npm_error() {
    local log=$1 status=$2 code msg last
    code=$(sed -nE 's/^npm (ERR!|error) code (.*)/\2/p' "$log" 2>/dev/null | head -n 1)
    msg=$(sed -nE '/^npm (ERR!|error) (code|errno|syscall) /d; /^npm (ERR!|error) +$/d
        /^npm (ERR!|error) (A complete log|Log files were not written|If you are behind)/d
        s/^npm (ERR!|error) ([^ {}].*)/\2/p' "$log" 2>/dev/null | head -n 1)
    if [ -n "$code$msg" ]; then
        echo "npm: ${code:+$code: }$msg"
        return
    fi
    last=$(grep -v '^[[:space:]]*$' "$log" 2>/dev/null | tail -n 1)
    if [ -n "$last" ]; then
        echo "npm exited with status $status: $last"
    else
        echo "npm exited with status $status and printed nothing"
    fi
}

# npm_install DIR LOG PACKAGE...: install the packages into DIR (a package.json is made when
# there is none) under DIR/.lock, so that tests sharing DIR never install at once, trying up
# to three times (the registry is across the network). npm's output goes to LOG; the status
# of the last try is returned.
npm_install() {
    local dir=$1 log=$2 st=0 try
    shift 2
    mkdir -p "$dir"
    [ -f "$dir/package.json" ] || echo "{\"name\":\"$(basename "$dir")\",\"private\":true}" >"$dir/package.json"
    for try in 1 2 3; do
        st=0
        (cd "$dir" && flock "$dir/.lock" timeout 300 npm install --no-audit --no-fund --loglevel=error "$@") \
            >"$log" 2>&1 || st=$?
        [ "$st" = 0 ] && return 0
        [ "$try" = 3 ] || sleep $((try * 5))
    done
    return "$st"
}
