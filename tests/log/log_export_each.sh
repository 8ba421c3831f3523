#!/bin/bash
# log_export_each.sh - `ard export FILE --csv` of a file with several connections and no
# --field writes one NAME.csv per connection into --dir DIR (or the current directory), each
# holding exactly the rows `--field CONN:...` gives for that connection; -o or --resample
# without --field is still refused, naming the connections, and --dir with -o/--field too.
TEST_NAME=each
. "$(dirname "$0")/common.sh"
expect() { # CODE TEXT CMD...
    local code=$1 text=$2 rc=0
    shift 2
    "$@" >"$T/out" 2>"$T/err" || rc=$?
    [ "$rc" = "$code" ] || fail "'$*' exited $rc, expected $code; stderr: $(cat "$T/err")"
    grep -qF -- "$text" "$T/err" || fail "'$*': stderr lacks '$text': $(cat "$T/err")"
}

timeout 20 "$ARD" record 'e.*' -o "$T/e.mcap" --duration 1.2 2>"$T/rec.err" &
rp=$!
wait_for grep -q "matches 'e\.\*' (yet)" "$T/rec.err"
"$ARD" pub e.pose --type 'x:f64 y:f64' x=1.5 y=-2 --rate 50 -n 20 &
"$ARD" pub e.cnt --type 'n:u32 q:f32[2]' n=7 q=0.5,1 --rate 100 -n 30
wait
"$ARD" info "$T/e.mcap" >/dev/null || fail "info"

mkdir "$T/out.d"
"$ARD" export "$T/e.mcap" --csv --dir "$T/out.d" 2>"$T/each.err" || fail "export --dir: $(cat "$T/each.err")"
[ "$(cd "$T/out.d" && ls | sort | tr '\n' ' ')" = "e.cnt.csv e.pose.csv " ] ||
    fail "files: $(ls "$T/out.d")"
for c in e.pose e.cnt; do
    "$ARD" export "$T/e.mcap" --csv --field "$c:$( [ $c = e.pose ] && echo x,y || echo n,q)" >"$T/$c.want"
    cmp -s "$T/$c.want" "$T/out.d/$c.csv" || fail "$c.csv differs from --field $c: $(diff "$T/$c.want" "$T/out.d/$c.csv" | head)"
    grep -qF "$T/out.d/$c.csv: $(($(wc -l <"$T/$c.want") - 1)) rows" "$T/each.err" ||
        fail "$c not named with its rows: $(cat "$T/each.err")"
done
head -1 "$T/out.d/e.cnt.csv" | grep -qx 'time,real_time,seq,n,q\[0\],q\[1\]' || fail "header: $(head -1 "$T/out.d/e.cnt.csv")"
[ "$(wc -l <"$T/out.d/e.pose.csv")" = 21 ] || fail "e.pose rows: $(wc -l <"$T/out.d/e.pose.csv")"
tail -1 "$T/out.d/e.cnt.csv" | grep -q ',7,0.5,1$' || fail "e.cnt row: $(tail -1 "$T/out.d/e.cnt.csv")"

# Without --dir: the current directory.
mkdir "$T/cwd"
(cd "$T/cwd" && "$ARD" export "$T/e.mcap" --csv 2>/dev/null) || fail "export into the current directory"
[ -s "$T/cwd/e.pose.csv" ] && [ -s "$T/cwd/e.cnt.csv" ] || fail "cwd: $(ls "$T/cwd")"

expect 100 "2 connections (" "$ARD" export "$T/e.mcap" --csv -o "$T/x.csv"
expect 100 "choose with --field CONN:PATH, or leave -o out" "$ARD" export "$T/e.mcap" --csv --resample 10
expect 100 "--dir is for one file per connection" "$ARD" export "$T/e.mcap" --csv --dir "$T/out.d" --field e.cnt:n
expect 111 "cannot create '$T/nodir/e." "$ARD" export "$T/e.mcap" --csv --dir "$T/nodir"
expect 100 "--dir needs a value" "$ARD" export "$T/e.mcap" --csv --dir

ard() { "$ARD" "$@"; } # the completion asks ard for the options
. "$SRCDIR/src/tools/ard.bash"
COMP_WORDS=(ard export f --di) COMP_CWORD=3
_ard || true
[ "${COMPREPLY[*]}" = --dir ] || fail "completion of --di: ${COMPREPLY[*]}"
echo ok
