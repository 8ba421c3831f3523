#!/bin/bash
# options_doc.sh - every option a program's table declares is documented: the long options
# that `ard help --options SUB` (the completion's list, from each subcommand's table) and the
# --help of ardstart, ardkill, ardrun and ardnet (printed from their tables) name are each in
# the program's page, docs/PROG.md, from which its man page is made. Hidden rows (internal
# options) are in neither list. ENV: ARD ARDSTART ARDKILL ARDRUN ARDNET DOCS.
set -uo pipefail
bad=0
# check WHAT PAGE... -- OPTION...: each OPTION ("--long", or "-s|--long": either spelling)
# appears in one of the PAGEs as itself (not as part of a longer option).
check() {
    local what=$1 pages=() o alt found
    shift
    while [ "$1" != -- ]; do pages+=("$1"); shift; done
    shift
    for o in "$@"; do
        found=
        for alt in ${o//|/ }; do
            grep -qE -- "(^|[^a-zA-Z-])${alt}([^a-z-]|$)" "${pages[@]}" && found=1
        done
        if [ -z "$found" ]; then
            echo "FAIL: $what: $o is in none of ${pages[*]##*/}"
            bad=1
        fi
    done
}
# The options of a --help text, from its names column (the rows of "options:"): "--long" or
# "-s|--long", a line each.
names() {
    awk '/^options:/ { on = 1; next }
         on && /^  -/ {
             line = substr($0, 3); cut = index(line, "  "); if (cut) line = substr(line, 1, cut - 1)
             while (match(line, /(-[a-zA-Z0-9], )?--[a-z][a-z0-9-]*/)) {
                 t = substr(line, RSTART, RLENGTH); sub(/, /, "|", t); print t
                 line = substr(line, RSTART + RLENGTH)
             }
         }'
}

subs=$("$ARD" help | awk '/^subcommands:/ { on = 1; next } on && /^  [a-z]/ { print $1 } /^$/ { on = 0 }')
[ -n "$subs" ] || { echo "FAIL: no subcommands in 'ard help'"; exit 1; }
n=0
for s in $subs; do
    # (the recording subcommands and ard web have pages of their own besides ard's)
    pages=("$DOCS/ard.md")
    case $s in record | play | export | info) pages+=("$DOCS/recording.md") ;; web) pages+=("$DOCS/web.md") ;; esac
    mapfile -t opts < <("$ARD" help "$s" | names)
    # The completion's list comes from the same table: it must name the same long options.
    if [ "$(printf '%s\n' "${opts[@]}" | sed 's/.*|//' | sort)" != \
        "$("$ARD" help --options "$s" | cut -f1 | grep -E '^--' | sort)" ]; then
        echo "FAIL: ard $s: its help and its completion list name other options"
        bad=1
    fi
    check "ard $s" "${pages[@]}" -- "${opts[@]}"
    n=$((n + ${#opts[@]}))
done
mapfile -t opts < <("$ARD" --help | names)
check ard "$DOCS/ard.md" -- "${opts[@]}"
for p in ardstart ardkill ardrun ardnet; do
    bin=${p^^}
    mapfile -t opts < <("${!bin}" --help | names)
    ((${#opts[@]} > 2)) || { echo "FAIL: $p --help lists ${#opts[@]} options"; bad=1; }
    check "$p" "$DOCS/$p.md" -- "${opts[@]}"
    n=$((n + ${#opts[@]}))
done
((bad == 0)) && echo "ok: $n options of $(echo "$subs" | wc -w) ard subcommands and 4 programs, each in its page"
exit $bad
