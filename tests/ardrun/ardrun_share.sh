#!/bin/bash
# ardrun_share: the instances of a group loaded from the same plugin file share one loaded
# copy (its code and static data), as a process that loads a library once; `own_copy: true`
# gives a block a copy of its own; a reload loads a copy of its own; another file (even with
# the same contents) is another copy. Shown with tests/ardrun/tshare.c, which counts the
# inits of its copy in a static variable and publishes (its own number, the count now).
here=$(cd "$(dirname "$0")" && pwd)
. "$here/common.sh"
P=$PLUGINS
[ -n "${ARD_TOOL:-}" ] || {
    echo "skip: needs the ard tool"
    exit 77
}
cp "$P/tshare.so" "$T/other.so"

# numbers CONN: "x0 x1" of the connection's newest packet (f1 = the eight values)
numbers() { "$ARD_TOOL" show "$1" | sed -n 's/.*f1 = \([^ ]*\) \([^ ]*\) .*/\1 \2/p'; }
# the instances' own numbers, sorted, and the counts: "n1 n2 ... / c1 c2 ..."
summary_of() {
    local own="" count="" c n k
    for c in "$@"; do
        read -r n k <<<"$(numbers "$c")"
        own="$own $n" count="$count $k"
    done
    echo "$(tr ' ' '\n' <<<"$own" | sort -n | xargs) / $(xargs <<<"$count")"
}

# -- three instances of one file share a copy; a fourth of another file has its own --------
cat >"$T/s.yaml" <<Y
name: s
rate_hz: 1000
blocks:
  - { name: a, plugin: $P/tshare.so, ard: { out: s.a } }
  - { name: b, plugin: $P/tshare.so, ard: { out: s.b } }
  - { name: c, plugin: $P/tshare.so, ard: { out: s.c } }
  - { name: d, plugin: $T/other.so, ard: { out: s.d } }
Y
"$ARDRUN" --ticks 20 "$T/s.yaml" 2>"$T/s.log" || fail "group s: $(cat "$T/s.log")"
got=$(summary_of s.a s.b s.c)
[ "$got" = "1 2 3 / 3 3 3" ] && ok "a, b and c share one copy: $got" || fail "a, b, c: '$got', expected '1 2 3 / 3 3 3'"
[ "$(numbers s.d)" = "1 1" ] && ok "d (another file) has its own copy" || fail "d: '$(numbers s.d)'"

# -- own_copy: true gives b a copy of its own ------------------------------------------------
cat >"$T/o.yaml" <<Y
name: o
rate_hz: 1000
blocks:
  - { name: a, plugin: $P/tshare.so, ard: { out: o.a } }
  - { name: b, plugin: $P/tshare.so, own_copy: true, ard: { out: o.b } }
  - { name: c, plugin: $P/tshare.so, own_copy: false, ard: { out: o.c } }
Y
"$ARDRUN" --ticks 20 "$T/o.yaml" 2>"$T/o.log" || fail "group o: $(cat "$T/o.log")"
got=$(summary_of o.a o.c)
[ "$got" = "1 2 / 2 2" ] && ok "a and c share: $got" || fail "a, c: '$got', expected '1 2 / 2 2'"
[ "$(numbers o.b)" = "1 1" ] && ok "b (own_copy) has its own copy" || fail "b: '$(numbers o.b)'"

# -- a reload loads a copy of its own; the others keep theirs --------------------------------
sed 's/^name: s$/name: r/; s/ s\./ r./g' "$T/s.yaml" >"$T/r.yaml"
"$ARDRUN" "$T/r.yaml" 2>"$T/r.log" &
pids+=($!)
for _ in $(seq 200); do "$ARDRUN" ctl r status >/dev/null 2>&1 && break; sleep 0.05; done
out=$("$ARDRUN" ctl r reload b) || fail "reload: $out"
sleep 0.3
[ "$(numbers r.b)" = "1 1" ] && ok "the reloaded b has a fresh copy" || fail "b after reload: '$(numbers r.b)'"
got=$(summary_of r.a r.c)
[[ "$got" == *" / 3 3" ]] && ok "a and c keep their copy: $got" || fail "a, c after reload: '$got'"
"$ARDRUN" ctl r stop a >/dev/null && "$ARDRUN" ctl r stop c >/dev/null || fail "stop a, c"
sleep 0.1
[ "$(numbers r.b)" = "1 1" ] && ok "b runs on alone" || fail "b: '$(numbers r.b)'"

# -- a bad value names the file and line ---------------------------------------------------
printf 'name: x\nrate_hz: 10\nblocks:\n  - { name: a, plugin: %s, own_copy: maybe }\n' \
    "$P/tshare.so" >"$T/x.yaml"
expect 100 "x.yaml:4:" -- "$ARDRUN" --ticks 1 "$T/x.yaml"
expect 100 "own_copy" -- "$ARDRUN" --ticks 1 "$T/x.yaml"
finish
