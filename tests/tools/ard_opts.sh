#!/bin/bash
# ard_opts.sh - for every subcommand this ard has, its options agree in the three places that
# show them: the help text (ard help SUB), the bash completion (src/tools/ard.bash) and the parser.
#  - The completion of "-" offers exactly the spellings the help lists, and --help.
#  - An option the help shows with a value: given last, the parser says "OPT needs a value".
#    One shown without: the parser takes it and goes on to the unknown option after it.
#  - Each word the completion offers for an option's value is a value the parser takes, and a
#    word it does not offer for such an option is refused naming the option.
TEST_NAME=opts
. "$(dirname "$0")/common.sh"

ard() { "$ARD" "$@"; }
# shellcheck disable=SC1091
. "$SRCDIR/src/tools/ard.bash"
mkdir "$T/empty" # file completions find nothing here
cd "$T/empty"

subs=$("$ARD" --help | awk '/^subcommands:/ { f = 1; next } /^$/ { f = 0 } f && !/not built/ { print $1 }')
[ -n "$subs" ] || fail "ard --help lists no subcommand"
bad='--zz-no-such'

# The options of a help text: "SPELLING METAVAR" a line ("-" when it takes no value). An entry
# "-o, --output FILE" gives -o and --output, both with FILE; "--start S, --end S" both with S.
help_options() {
    awk '/^options:$/ { f = 1; next } /^[^ ]/ { f = 0 }
        f && /^  -/ {
            s = substr($0, 3); i = index(s, "  "); if (i) s = substr(s, 1, i - 1)
            n = split(s, item, ", "); meta = "-"
            for (k = n; k >= 1; k--) {
                j = index(item[k], " ")
                if (j) { meta = substr(item[k], j + 1); item[k] = substr(item[k], 1, j - 1) }
                out[k] = item[k] " " meta
            }
            for (k = 1; k <= n; k++) print out[k]
        }'
}

# Before the subcommand the completion offers ard's own options, as ard --help lists them.
"$ARD" --help | help_options >"$T/opts"
COMP_WORDS=(ard -) COMP_CWORD=1
COMPREPLY=()
_ard || true
got=$(printf '%s\n' "${COMPREPLY[@]}" | sort | paste -sd' ')
want=$(cut -d' ' -f1 "$T/opts" | sort | paste -sd' ')
[ -n "$want" ] && [ "$got" = "$want" ] || fail "ard: the completion offers '$got', the help lists '$want'"

checked=0
for sub in $subs; do
    "$ARD" help "$sub" >"$T/help" || fail "ard help $sub"
    help_options <"$T/help" >"$T/opts"
    COMP_WORDS=(ard "$sub" -) COMP_CWORD=2
    COMPREPLY=()
    _ard || true
    got=$(printf '%s\n' "${COMPREPLY[@]}" | sort | paste -sd' ')
    want=$({ cut -d' ' -f1 "$T/opts"; echo --help; } | sort | paste -sd' ')
    [ "$got" = "$want" ] || fail "ard $sub: the completion offers '$got', the help lists '$want'"
    while read -r opt meta; do
        if [ "$meta" = - ]; then
            expect 100 "'$bad'" "$ARD" "$sub" "$opt" "$bad"
            ! grep -qF -- "'$opt'" "$T/err" || fail "ard $sub: the parser refuses $opt: $(cat "$T/err")"
        else
            expect 100 "$opt needs a value" "$ARD" "$sub" "$opt"
            COMP_WORDS=(ard "$sub" "$opt" "") COMP_CWORD=3
            COMPREPLY=()
            _ard || true
            for word in ${COMPREPLY[@]+"${COMPREPLY[@]}"}; do
                expect 100 "'$bad'" "$ARD" "$sub" "$opt" "$word" "$bad"
            done
            if [ ${#COMPREPLY[@]} -gt 0 ]; then # a closed list: anything else is refused
                expect 100 "$opt 'zz-no-such-value'" "$ARD" "$sub" "$opt" zz-no-such-value "$bad"
            fi
        fi
        checked=$((checked + 1))
    done <"$T/opts"
done
[ "$checked" -ge 50 ] || fail "only $checked options checked"
# A few that the tables must hold, spelled as the docs spell them.
"$ARD" help --options record | grep -q "^--split-duration	-\$" || fail "record --split-duration"
"$ARD" help --options graph | grep -q "^--format	dot svg json\$" || fail "graph --format"
"$ARD" help --options show | grep -q "^--field	@field\$" || fail "show --field"
# Long options take their value after '=' too; a flag takes none.
expect 100 "--format 'xml': expected text, csv or json" "$ARD" show s --format=xml
expect 100 "--json takes no value" "$ARD" show s --json=1
# Without a subcommand, ard's own options (the completion offers them before the subcommand).
"$ARD" help --options >"$T/own" || fail "ard help --options"
for o in "-d	-" "--domain	-" "-h	" "--help	" "-V	" "--version	"; do
    grep -qx -- "$o" "$T/own" || fail "ard help --options: no '$o': $(cat "$T/own")"
done
# A bad option is said once, by the subcommand, as "ard SUB: DETAIL", with the help to see.
for sub in $subs; do
    expect 100 " '$bad' (see 'ard help $sub')" "$ARD" "$sub" "$bad"
    grep -q "^ard $sub: \(unknown option\|unexpected\) '" "$T/err" || fail "ard $sub $bad: $(cat "$T/err")"
    [ "$(wc -l <"$T/err")" = 1 ] || fail "ard $sub $bad: more than one line: $(cat "$T/err")"
done
expect 100 "ard graph: unexpected 'x' (see 'ard help graph')" "$ARD" graph x
expect 100 "ard set: --size 0: a connection holds at least 1 byte" "$ARD" set c -s 0
expect 100 "ard show: --filter given twice" "$ARD" show c --filter 1 --filter 1
# Short options take their value attached too; "--" ends the options.
expect 100 "ard hz: -n 'x': expected a whole number" "$ARD" hz -nx c
expect 100 "ard list: unknown option '-x'" "$ARD" list -x
"$ARD" list -- -x >"$T/out" || fail "ard list -- -x: '-x' is a pattern after --"
# graph's -o is --output too.
"$ARD" graph --output "$T/net.dot" || fail "ard graph --output"
grep -q '^digraph' "$T/net.dot" || fail "ard graph --output wrote no dot: $(head -c 200 "$T/net.dot")"
echo "ok: $checked options of $(wc -w <<<"$subs") subcommands"
