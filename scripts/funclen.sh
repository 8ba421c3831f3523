#!/usr/bin/env bash
# Lists the C functions that are too long: a function may have at most 100 lines, a command body
# (cmd_*, *_cmd_*, main, option parsing: parse_args, parse_*_args, parse_opts, *_option) at
# most 80. A function runs from the first line of its signature at column 0 to its closing '}'
# at column 0 (the Linux brace style of .clang-format puts a function's '{' alone at column 0).
set -euo pipefail
usage() {
    echo "usage: scripts/funclen.sh [-m MAX] [-c CMDMAX] [DIR|FILE.c]..." >&2
    echo "  prints file:function:lines for each function over its limit; exits 1 if any" >&2
    echo "  default DIRs: src/tools src/ardstart src/ardkill src/ardrun src/ardnet" >&2
}
max=100
cmdmax=80
while getopts "m:c:h" o; do
    case $o in
    m) max=$OPTARG ;;
    c) cmdmax=$OPTARG ;;
    h) usage; exit 0 ;;
    *) usage; exit 2 ;;
    esac
done
shift $((OPTIND - 1))
cd "$(dirname "$0")/.."
[ $# -gt 0 ] || set -- src/tools src/ardstart src/ardkill src/ardrun src/ardnet
mapfile -t files < <(find "$@" -name '*.c' | sort)
[ ${#files[@]} -gt 0 ] || { echo "funclen: no .c files under $*" >&2; exit 2; }
awk -v max="$max" -v cmdmax="$cmdmax" '
FNR == 1 { sig = ""; start = 0; infn = 0 }
# a line at column 0 that may begin a signature (not a brace, directive, comment or label)
!infn && /^[A-Za-z_]/ {
    sig = $0; start = FNR
    if ($0 ~ /;[ \t]*$/ || $0 ~ /[{}]/) sig = ""
    next
}
!infn && /^[ \t]/ && sig != "" { sig = sig " " $0; next }
!infn && /^\{[ \t]*$/ && sig != "" {
    name = sig
    sub(/\(.*/, "", name)
    sub(/.*[ *]/, "", name)
    infn = 1
    next
}
!infn { sig = "" }
infn && /^\}/ {
    n = FNR - start + 1
    lim = (name ~ /^(.*cmd_.*|main|parse_args|parse_.*_args|parse_opts|.*_option)$/) ? cmdmax : max
    if (n > lim) { printf "%s:%s:%d\n", FILENAME, name, n; bad = 1 }
    infn = 0; sig = ""
}
END { exit bad }
' "${files[@]}"
