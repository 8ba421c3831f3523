#!/bin/bash
# log_select.sh - which connections `ard record` takes: without -o the file is named
# ard_YYYY-MM-DD-HH-MM-SS.mcap by the local time; --exclude GLOB (repeatable) leaves
# connections out, and one matching nothing is warned about; the service connections of an
# ardrun group (G.ctl, G.ctl-reply, G.names with both G.ctl and G.ctl-reply there) are left
# out unless named exactly, while a user's lone "x.ctl" is data.
TEST_NAME=select
. "$(dirname "$0")/common.sh"

for c in a.x a.y b.z solo.ctl; do "$ARD" set "$c" --type 'n:u32' n=1; done
for c in g.ctl g.ctl-reply g.names g.stats; do "$ARD" set "$c" --size 32; done
conns() { "$ARD" info --json "$1" | python3 -c "
import json, sys
print(' '.join(sorted(c['name'] for c in json.load(sys.stdin)['connections'])))"; }

mkdir "$T/d"
before=$(date +%s)
(cd "$T/d" && "$ARD" record --duration 0.3 --exclude 'b.*' --exclude 'nomatch.*' 2>"$T/err1") ||
    fail "record: $(cat "$T/err1")"
after=$(date +%s)
f=$(cd "$T/d" && ls)
[[ $f =~ ^ard_[0-9]{4}-[0-9]{2}-[0-9]{2}-[0-9]{2}-[0-9]{2}-[0-9]{2}\.mcap$ ]] || fail "default name: '$f'"
# The name is the local time at the start.
ok=0
for t in $(seq "$before" "$after"); do
    [ "$f" = "$(date -d "@$t" +ard_%Y-%m-%d-%H-%M-%S.mcap)" ] && ok=1
done
[ $ok = 1 ] || fail "default name '$f' is not the local time between $before and $after"
grep -qF "recording into $f" "$T/err1" || fail "the file name is not said: $(cat "$T/err1")"
grep -qF "warning: --exclude 'nomatch.*' matches no connection of domain '$ARD_DOMAIN' (yet)" \
    "$T/err1" || fail "unmatched --exclude at start: $(cat "$T/err1")"
[ "$(grep -c "warning: --exclude 'nomatch.\*' matches no connection" "$T/err1")" = 2 ] ||
    fail "unmatched --exclude at the end: $(cat "$T/err1")"
grep -q "exclude 'b\.\*'" "$T/err1" && fail "a matching --exclude warned about: $(cat "$T/err1")"
grep -qF "not recording the service connections of ardrun group 'g' (g.ctl g.ctl-reply g.names): name them to record them" \
    "$T/err1" || fail "service connections not said: $(cat "$T/err1")"
[ "$(grep -c "ardrun group 'g'" "$T/err1")" = 1 ] || fail "said more than once: $(cat "$T/err1")"
got=$(conns "$T/d/$f")
[ "$got" = "a.x a.y g.stats solo.ctl" ] || fail "recorded: $got"

# A glob does not take a service connection; an exact name does. --exclude wins.
"$ARD" record -o "$T/2.mcap" --duration 0.3 'g.*' g.names 'a.*' --exclude a.y 2>"$T/err2" ||
    fail "record 2: $(cat "$T/err2")"
got=$(conns "$T/2.mcap")
[ "$got" = "a.x g.names g.stats" ] || fail "recorded with names: $got; $(cat "$T/err2")"
grep -q warning "$T/err2" && fail "warned: $(cat "$T/err2")"

# Only service connections asked for by a glob: the glob is reported as matching nothing.
"$ARD" record -o "$T/3.mcap" --duration 0.3 'g.ctl*' 'a.x' 2>"$T/err3" || fail "record 3: $(cat "$T/err3")"
grep -qF "warning: no connection of domain '$ARD_DOMAIN' matches 'g.ctl*'" "$T/err3" ||
    fail "a glob of service connections only: $(cat "$T/err3")"

rc=0
"$ARD" record -o "$T/4.mcap" --exclude >/dev/null 2>"$T/err4" || rc=$?
[ $rc = 100 ] && grep -q -- "--exclude needs a value" "$T/err4" || fail "--exclude alone: $rc $(cat "$T/err4")"

# Completion knows --exclude.
ard() { "$ARD" "$@"; } # the completion asks ard for the options
. "$SRCDIR/src/tools/ard.bash"
COMP_WORDS=(ard record --exc) COMP_CWORD=2
_ard || true
[ "${COMPREPLY[*]}" = --exclude ] || fail "completion of --exc: ${COMPREPLY[*]}"
echo ok
