#!/bin/bash
# doccheck.sh - check that the docs say what happens.
#
#   scripts/doccheck.sh [--lint] [FILE.md...]
#
# Reads every fenced block of README.md, docs/*.md and examples/*/README.md (or the files
# given) and checks its info string, the words after the opening ```:
#
#   ```sh run [exit=N]        run with bash -e; it must exit N (default 0); `netns`: under
#                             flock /tmp/ardnet-netns.lock (it makes network namespaces)
#   ```sh norun: REASON       not run here; the reason is required
#   ```c run [main] [exit=N]  compiled with `pkg-config --cflags --libs ardnet` against the
#                             installed tree, then run; `main`: the block is the body of main()
#   ```c compile [main]       compiled and linked only (a block that runs forever)
#   ```c norun: REASON
#   ```text output            the output (stdout and stderr) of the previous run block, line by
#                             line; `...` in a line matches anything, and a line that is
#                             only `...` any number of lines
#   ```LANG file=NAME         (any language) the block is written to NAME for the blocks after it
#   ```text, ```yaml, ...     anything else: not checked
#
# `bash`, `shell` and `console` count as `sh`. A fence without a language, a shell or C block
# without run/norun/compile, or an indented code block fails the check, so that no command
# in the docs goes unchecked by accident.
#
# How blocks run: as root, in a private mount namespace where /usr/local, /opt and /etc are
# throwaway overlays and /dev/shm a fresh tmpfs, so a block may `cmake --install` into
# /usr/local and run ldconfig without touching the machine. The source tree is mirrored (by
# symlinks) into a temporary directory, built there into build/ exactly as README.md says, and
# installed into /usr/local, before any block runs. Every block runs in that directory (the
# blocks of one file one after another, each in its own bash) with ARD_DOMAIN and
# ARD_BOOKS_DIR private; after each file `ardkill` stops whatever its blocks started.
# --lint (or not root): only the info strings are checked.
#
# Exit: 0 all good, 1 a check failed, 77 (not root) the lint passed but nothing was run.
set -uo pipefail

# Files that other work is still tagging: their blocks are neither checked nor run yet. This
# is the one place to shorten; the list must become empty.
PENDING="docs/ardnet.md docs/wire.md docs/ardstart.md docs/ardkill.md"

SRC=$(cd "$(dirname "$0")/.." && pwd)
lint_only=0
if [ "${1:-}" = --lint ]; then
    lint_only=1
    shift
fi
if [ "${1:-}" = --inside ]; then # re-executed in the private mount namespace
    inside=1
    T=$2
    shift 2
else
    inside=0
    T=$(mktemp -d /tmp/doccheck.XXXXXX)
    chmod 755 "$T"
    trap 'rm -rf "$T"' EXIT
fi

cd "$SRC" || exit 1
if [ $# -gt 0 ]; then
    files=("$@")
else
    files=(README.md docs/*.md examples/*/README.md)
fi

failures=0
fail() { # fail FILE:LINE MESSAGE
    echo "doccheck: $1: $2" >&2
    failures=$((failures + 1))
}

# --- 1. Parse: every block into $T/blocks/N, one manifest line per block. -------------------
# manifest: N <TAB> file <TAB> line <TAB> info string (after the ```)
parse() {
    local f=$1
    awk -v f="$f" -v dir="$T/blocks" -v start="$(wc -l <"$T/manifest")" '
    BEGIN { n = start; inb = 0; inlist = 0; prevblank = 1 }
    {
        if (!inb && match($0, /^ *```/)) {
            fence = substr($0, 1, RLENGTH)
            info = substr($0, RLENGTH + 1)
            indent = RLENGTH - 3
            inb = 1; n++; inlist = 0
            out = dir "/" n
            printf "" > out
            printf "%d\t%s\t%d\t%s\n", n, f, NR, info
            next
        }
        if (inb) {
            if ($0 ~ /^ *```[ \t]*$/) { inb = 0; close(out); prevblank = 0; inlist = 0; next }
            line = $0
            # strip the fence indentation (blocks inside list items)
            for (i = 0; i < indent && substr(line, 1, 1) == " "; i++) line = substr(line, 2)
            print line > out
            next
        }
        if ($0 ~ /^[ \t]*$/) { prevblank = 1; next }
        if ($0 ~ /^[ \t]*([-*+]|[0-9]+\.)[ \t]/) inlist = 1
        else if ($0 !~ /^[ \t]/) inlist = 0
        if (prevblank && !inlist && $0 ~ /^    /)
            printf "%d\t%s\t%d\t%s\n", 0, f, NR, "INDENTED"
        prevblank = 0
    }' "$f" >>"$T/manifest.new"
    cat "$T/manifest.new" >>"$T/manifest"
    : >"$T/manifest.new"
}

mkdir -p "$T/blocks"
: >"$T/manifest"
: >"$T/manifest.new"
pending_seen=()
for f in "${files[@]}"; do
    [ -f "$f" ] || {
        fail "$f" "no such file"
        continue
    }
    if [[ " $PENDING " == *" $f "* ]]; then
        pending_seen+=("$f")
        continue
    fi
    parse "$f"
done
# (The indented-block lines have N = 0 and do not count as blocks.)

# --- 2. Lint the info strings. -----------------------------------------------------------
# kind of a block: sh-run sh-norun c-run c-compile c-norun output file other
kind_of() { # kind_of INFO -> prints the kind, or "bad:REASON"
    local info=$1 lang rest
    lang=${info%% *}
    rest=${info#"$lang"}
    rest=${rest# }
    case "$lang" in
    '') echo "bad:a fence without a language (text, sh, c, yaml, ...)" ;;
    sh | bash | shell | console | c)
        [ "$lang" = c ] || lang="sh"
        case "$rest" in
        run | "run "*) echo "$lang-run" ;;
        compile | "compile "*)
            if [ "$lang" = c ]; then echo c-compile; else echo "bad:'compile' is for C blocks"; fi
            ;;
        norun:*)
            local why=${rest#norun:}
            if [ -n "${why// /}" ]; then echo "$lang-norun"; else echo "bad:norun: needs a reason"; fi
            ;;
        *)
            if [ "$lang" = c ]; then
                echo "bad:a C block needs 'run', 'compile' or 'norun: REASON'"
            else
                echo "bad:a shell block needs 'run' or 'norun: REASON'"
            fi
            ;;
        esac
        ;;
    *)
        case " $rest " in
        *" output "*) echo output ;;
        *) echo other ;;
        esac
        ;;
    esac
}
attr() { # attr INFO NAME DEFAULT: the value of NAME=VALUE in INFO
    local w
    for w in $1; do
        case "$w" in "$2="*)
            echo "${w#*=}"
            return
            ;;
        esac
    done
    echo "$3"
}
has_word() { [[ " $1 " == *" $2 "* ]]; }

while IFS=$'\t' read -r n f line info; do
    if [ "$n" = 0 ]; then
        fail "$f:$line" "an indented code block: make it a fenced block with a tag"
        continue
    fi
    k=$(kind_of "$info")
    case "$k" in bad:*) fail "$f:$line" "\`\`\`$info: ${k#bad:}" ;; esac
done <"$T/manifest"

[ "$inside" = 1 ] || for p in "${pending_seen[@]}"; do
    echo "doccheck: $p: not checked yet (still to be tagged: PENDING in scripts/doccheck.sh)"
done
nblocks=$(awk -F'\t' '$1 > 0' "$T/manifest" | wc -l)
if [ "$failures" -gt 0 ]; then
    echo "doccheck: FAIL: $failures problem(s) in the info strings" >&2
    exit 1
fi
[ "$inside" = 1 ] || echo "doccheck: $nblocks blocks in ${#files[@]} files tagged"
[ "$lint_only" = 1 ] && exit 0
if [ "$(id -u)" != 0 ]; then
    echo "doccheck: not root: blocks not run (they need a private mount namespace)"
    exit 77
fi

# --- 3. Run, in a private mount namespace. ----------------------------------------------
if [ "$inside" = 0 ]; then
    unshare --mount --propagation private "$0" --inside "$T" "${files[@]}"
    exit
fi

for d in usr-local etc opt; do mkdir -p "$T/ov/$d.up" "$T/ov/$d.work"; done
mount -t overlay overlay -o "lowerdir=/usr/local,upperdir=$T/ov/usr-local.up,workdir=$T/ov/usr-local.work" /usr/local &&
    mount -t overlay overlay -o "lowerdir=/etc,upperdir=$T/ov/etc.up,workdir=$T/ov/etc.work" /etc &&
    mount -t overlay overlay -o "lowerdir=/opt,upperdir=$T/ov/opt.up,workdir=$T/ov/opt.work" /opt &&
    mount -t tmpfs -o mode=1777 tmpfs /dev/shm || {
    echo "doccheck: cannot set up the private mounts" >&2
    exit 1
}

# The tree: a copy of the sources (never a build directory of them), so that a script's
# `$here/../..` stays inside it; built as the README says, and installed.
W=$T/tree
mkdir -p "$W"
for e in "$SRC"/* "$SRC"/.clang-format; do
    case "${e##*/}" in build | build-*) continue ;; esac
    cp -r "$e" "$W/${e##*/}"
done
export ARD_DOMAIN=doc$$ ARD_BOOKS_DIR=$T/books
unset ARD_PATH ARD_READY_FD ARD_RSH ARD_REMOTE_BINDIR
echo "doccheck: building the tree in $W/build and installing it into /usr/local (private)"
(cd "$W" && cmake -S . -B build -DARD_TESTS=OFF && cmake --build build -j2 &&
    cmake --install build --prefix /usr/local) >"$T/build.log" 2>&1 || {
    tail -n 30 "$T/build.log"
    echo "doccheck: FAIL: the tree does not build or install" >&2
    exit 1
}
hash -r

# Expected output: every line of the block matches the same line of the output, where `...`
# matches anything within a line, and a line that is only `...` any number of lines.
line_matches() { # line_matches PATTERN-LINE GOT-LINE
    local pat got=${2%"${2##*[! ]}"}
    # quote every glob character, then turn `...` into `*`
    pat=$(printf '%s' "$1" | sed 's/[][*?\\]/\\&/g; s/\.\.\./*/g')
    # shellcheck disable=SC2053 # a pattern on purpose
    [[ "$got" == $pat ]]
}
match_from() { # match_from I J: want[I..] matches got[J..]
    local i=$1 j=$2 k
    while [ "$i" -lt "${#want[@]}" ]; do
        if [ "${want[$i]}" = "..." ]; then
            for ((k = ${#got[@]}; k >= j; k--)); do
                match_from $((i + 1)) "$k" && return 0
            done
            return 1
        fi
        [ "$j" -lt "${#got[@]}" ] && line_matches "${want[$i]}" "${got[$j]}" || return 1
        i=$((i + 1)) j=$((j + 1))
    done
    [ "$j" = "${#got[@]}" ]
}
match_output() { # match_output EXPECTED-FILE GOT-FILE -> 0 if it matches
    mapfile -t want <"$1"
    mapfile -t got <"$2"
    match_from 0 0
}

compile_c() { # compile_c BLOCK INFO EXE
    local src
    src="$T/c/${1##*/}.c"
    mkdir -p "$T/c"
    if has_word "$2" main; then
        {
            printf '#include <ardnet.h>\n#include <stdint.h>\n#include <stdio.h>\n'
            printf '#include <stdlib.h>\n#include <string.h>\n\n'
            printf 'int main(int argc, char **argv)\n{\n    (void)argc, (void)argv;\n'
            cat "$1"
            printf '    return 0;\n}\n'
        } >"$src"
    else
        cp "$1" "$src"
    fi
    # shellcheck disable=SC2046 # the flags are words
    cc -std=c11 -Wall -Wextra -Werror -Wno-unused-variable -Wno-unused-parameter -o "$3" \
        "$src" $(pkg-config --cflags --libs ardnet) -lm
}

last_out=""
run_file=""
finish_file() { # stop whatever the blocks of a file started
    [ -n "$run_file" ] || return 0
    "$W/build/src/ardkill/ardkill" -q >"$T/ardkill.out" 2>&1 || {
        fail "$run_file" "ardkill after its blocks failed: $(cat "$T/ardkill.out")"
    }
}
nrun=0
while IFS=$'\t' read -r n f line info; do
    [ "$n" = 0 ] && continue
    if [ "$f" != "$run_file" ]; then
        finish_file
        run_file=$f
        last_out=""
        # every file starts from the tree installed in /usr/local (a file may uninstall it)
        (cd "$W" && cmake --install build --prefix /usr/local) >"$T/install.log" 2>&1 ||
            fail "$f" "cmake --install before its blocks failed"
    fi
    k=$(kind_of "$info")
    b=$T/blocks/$n
    name=$(attr "$info" file "")
    if [ -n "$name" ]; then
        mkdir -p "$(dirname "$W/$name")"
        cp "$b" "$W/$name"
    fi
    want_exit=$(attr "$info" exit 0)
    out=$T/out.$n
    case "$k" in
    sh-run)
        lock=()
        # blocks that make network namespaces take the lock the root tests share
        has_word "$info" netns && lock=(flock /tmp/ardnet-netns.lock)
        (cd "$W" && "${lock[@]}" timeout 300 bash -e "$b") >"$out" 2>&1 </dev/null
        rc=$?
        ;;
    c-run | c-compile)
        if ! compile_c "$b" "$info" "$T/c.$n" >"$out" 2>&1; then
            fail "$f:$line" "the C block does not compile against the installed tree:"
            sed 's/^/    | /' "$out" >&2
            last_out=""
            continue
        fi
        rc=0
        if [ "$k" = c-run ]; then
            (cd "$W" && timeout 300 "$T/c.$n") >"$out" 2>&1 </dev/null
            rc=$?
        fi
        ;;
    output)
        if [ -z "$last_out" ]; then
            fail "$f:$line" "an output block with no run block before it"
        elif ! match_output "$b" "$last_out"; then
            fail "$f:$line" "the output differs from the doc's; the block printed:"
            sed 's/^/    | /' "$last_out" >&2
        fi
        continue
        ;;
    *) continue ;;
    esac
    nrun=$((nrun + 1))
    last_out=$out
    if [ "$rc" != "$want_exit" ]; then
        fail "$f:$line" "exited $rc, the doc says $want_exit; it printed:"
        tail -n 20 "$out" | sed 's/^/    | /' >&2
    fi
done <"$T/manifest"
finish_file

if [ "$failures" -gt 0 ]; then
    echo "doccheck: FAIL: $failures problem(s)" >&2
    exit 1
fi
echo "doccheck: PASS: $nrun blocks run"
