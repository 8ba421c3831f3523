#!/bin/bash
# ardrun_scheme: bad YAML, bad plugins and every scheme-check error are refused before
# anything runs, each with its exit code and a message that names what is wrong.
here=$(cd "$(dirname "$0")" && pwd)
. "$here/common.sh"
P=$PLUGINS

# -- command line and YAML --
expect 100 "usage: ardrun" -- "$ARDRUN"
v=$("$ARDRUN" --version) && [[ "$v" =~ ^ardrun\ \(ardnet\)\ [0-9]+\.[0-9]+\.[0-9]+,\ block\ API\ 2$ ]] ||
    fail "--version: '$v'"
expect 100 "no group file" -- "$ARDRUN" --ticks 5
expect 100 "unknown argument '--bogus'" -- "$ARDRUN" --bogus x.yaml
expect 100 "group file '$T/none.yaml'" -- "$ARDRUN" "$T/none.yaml"
# The standard options are the library's: ardrun takes their number of words from it. Every
# value-less one (from the library's own list, printed by --ard-help) leaves the next word to
# ardrun: the group file after it is still the group file, --rate after it still ardrun's.
printf 'name: g\nrate_hz: 1000\nblocks:\n  - {name: s, plugin: %s}\n' "$P/tsrc.so" >"$T/src.yaml"
std=$("$ARDRUN" --block "$P/tsrc.so" --rate 10 --ard-help 2>&1)
std=${std##*standard options: }
flags=0
IFS=',' read -ra words <<<"$std"
for w in "${words[@]}"; do
    w=${w# }
    [[ "$w" == --ard-* && "$w" != *" "* ]] || continue
    flags=$((flags + 1))
    for mode in group block; do
        if [ $mode = group ]; then
            out=$("$ARDRUN" "$w" "$T/src.yaml" --ticks 2 2>&1 >/dev/null)
        else
            out=$("$ARDRUN" --block "$P/tsrc.so" "$w" --rate 1000 --ticks 2 2>&1 >/dev/null)
        fi
        rc=$?
        # 0, or 111 where the system refuses (--ard-lock without the right to lock memory)
        if [ $rc != 0 ] && [ $rc != 111 ]; then
            fail "$mode: '$w' before the next word: exit $rc: $out"
        else
            ok "$mode: value-less '$w' leaves the next word to ardrun"
        fi
    done
done
[ "$flags" -ge 3 ] || fail "--ard-help lists $flags value-less options: '$std'"
expect 100 "unknown option '--ard-bogus' (standard options:" -- "$ARDRUN" --ard-bogus "$T/src.yaml"
printf 'name: [unclosed\n' >"$T/syntax.yaml"
expect 100 "syntax.yaml:2: YAML error" -- "$ARDRUN" "$T/syntax.yaml"
printf 'name: g\nrate_hz: 1000\ncolour: red\nblocks: []\n' >"$T/key.yaml"
expect 100 "key.yaml:3: unknown key 'colour'" -- "$ARDRUN" "$T/key.yaml"
# through a pipe, the same file is read (not "empty") and named by the path given
expect 100 "/dev/stdin:3: unknown key 'colour'" -- bash -c 'cat "$1" | "$2" /dev/stdin' _ "$T/key.yaml" "$ARDRUN"
printf 'name: g\nrate_hz: fast\nblocks: []\n' >"$T/rate.yaml"
expect 100 "'rate_hz' must be a rate in Hz" -- "$ARDRUN" "$T/rate.yaml"
printf 'name: g\nrate_hz: 1000\nblocks:\n  - name: a\n' >"$T/noplugin.yaml"
expect 100 "block 'a' needs a 'plugin'" -- "$ARDRUN" "$T/noplugin.yaml"
printf 'name: g\nrate_hz: 1000\nblocks:\n  - name: a b\n    plugin: x.so\n' >"$T/name.yaml"
expect 100 "'a b' is not a name" -- "$ARDRUN" "$T/name.yaml"
printf 'name: g\nrate_hz: 1000\nblocks:\n  - name: a\n    plugin: %s\n    rate: slow\n' \
    "$P/tsrc.so" >"$T/norate.yaml"
expect 100 "block 'a': no rate named 'slow'" -- "$ARDRUN" "$T/norate.yaml"
printf 'name: g\nrate_hz: 1000\nblocks:\n  - {name: a, plugin: %s}\n  - {name: a, plugin: %s}\n' \
    "$P/tsrc.so" "$P/tsrc.so" >"$T/twice.yaml"
expect 100 "block 'a' is defined twice" -- "$ARDRUN" "$T/twice.yaml"
printf 'name: g\nrate_hz: 1000\nrates:\n  - {name: r, divide: 0}\nblocks: []\n' >"$T/div.yaml"
expect 100 "'divide' must be an integer 1..1000000" -- "$ARDRUN" "$T/div.yaml"
# deeply nested YAML is an error, not a crash
{ printf 'name: g\nrate_hz: 1000\nblocks: '; for i in $(seq 5000); do printf '['; done; echo; } >"$T/deep.yaml"
expect 100 "deep.yaml:3:16: nested deeper than 8 levels" -- "$ARDRUN" "$T/deep.yaml"

# -- bad plugins: refused with exit 101, nothing runs --
one() { printf 'name: g\nrate_hz: 1000\nblocks:\n  - name: b\n    plugin: %s\n%s\n' "$1" "${2:-}" >"$T/one.yaml"; echo "$T/one.yaml"; }
expect 101 "plugin '$P/tbad_nosym.so' does not export ard_block_descriptor()" -- "$ARDRUN" "$(one "$P/tbad_nosym.so")"
expect 101 "built against block API version 99, this ardrun has version 2 and loads 1..2" -- "$ARDRUN" "$(one "$P/tbad_api.so")"
expect 101 "port 'out' declares 48 bytes but its type 'f64[7]' has 56 bytes" -- "$ARDRUN" "$(one "$P/tbad_liar.so")"
expect 101 "cannot be loaded: undefined symbol: ardrun_test_nowhere" -- "$ARDRUN" "$(one "$P/tbad_undef.so")"
expect 101 "block 'tbad' has no step callback" -- "$ARDRUN" "$(one "$P/tbad_nostep.so")"
expect 101 "plugin '$T/missing.so': cannot open" -- "$ARDRUN" "$(one "$T/missing.so")"
expect 101 "plugin '$here/common.sh' cannot be loaded" -- "$ARDRUN" "$(one "$here/common.sh")"
expect 101 "built against block API version 99" -- "$ARDRUN" --block "$P/tbad_api.so" --rate 10
expect 101 "declares 48 bytes but its type 'f64[7]' has 56" -- "$ARDRUN" --describe "$P/tbad_liar.so"
expect 103 "init failed: this block never initialises" -- "$ARDRUN" "$(one "$P/tbad_initfail.so")"

# -- parameters --
expect 102 "block 'b' (tgain): no parameter 'gian' (the plugin has 3 parameters)" -- "$ARDRUN" "$(one "$P/tgain.so" "    params: { gian: 2 }")"
expect 102 "block 'b' (tsink): no parameter 'fiel' (the plugin has 1 parameter)" -- "$ARDRUN" "$(one "$P/tsink.so" "    params: { fiel: x }")"
expect 102 "parameter 'k': 'two' is not a finite number (f64)" -- "$ARDRUN" "$(one "$P/tgain.so" "    params: { k: two }")"
expect 102 "parameter 'file' (str) has no default and is not given" -- "$ARDRUN" "$(one "$P/tsink.so")"
expect 100 "--param 'k=two'" -- "$ARDRUN" --block "$P/tgain.so" --param k=x --param k=two --rate 10
expect 100 "parameter 'k': 'x' is not a finite number" -- "$ARDRUN" --block "$P/tgain.so" --param k=x --rate 10

# -- scheme check: all errors reported, nothing runs (exit 102) --
cat >"$T/scheme.yaml" <<Y
name: g
rate_hz: 1000
blocks:
  - { name: s1, plugin: $P/tsrc.so, ard: { out: c.x, ack: c.ack } }
  - { name: s2, plugin: $P/tsrc.so, ard: { out: c.x, ack: c.ack } }
  - { name: t, plugin: $SRCDIR/../$(basename "$TEMPLATE_SO"), ard: { in: c.x } }
  - { name: u, plugin: $P/tgain.so, ard: { nope: c.y } }
Y
sed -i "s|plugin: [^,]*template.so|plugin: $TEMPLATE_SO|" "$T/scheme.yaml"
out=$("$ARDRUN" "$T/scheme.yaml" 2>&1)
rc=$?
[ "$rc" = 102 ] && ok "scheme errors: exit 102" || fail "scheme errors: exit $rc: $out"
for text in "connection 'c.x' has two writers: block 's1' port 'out' and block 's2' port 'out'" \
    "connection 'c.x': block 's1' port 'out' (out, 72 bytes, type 'u64 f64[8]') and block 't' port 'in' (in, 56 bytes, type 'f64[7]') disagree" \
    "block 'u' (tgain): 'ard' wires port 'nope', which the plugin does not have" \
    "errors: nothing was started"; do
    [[ "$out" == *"$text"* ]] && ok "names: $text" || fail "scheme output lacks '$text': $out"
done
[ -z "$(ls /dev/shm | grep "ard.$ARD_DOMAIN.c.x" || true)" ] && ok "nothing attached" ||
    fail "the scheme check created connection c.x"

# outside the group: a live writer (writer lock) and a connection of another type
"$ARDRUN" --block "$P/tsrc.so" --rate 100 --ard out=ext.x 2>"$T/ext.log" &
ext=$!
pids+=("$ext")
for _ in $(seq 100); do [ -e "/dev/shm/ard.$ARD_DOMAIN.ext.x" ] && break; sleep 0.05; done
sleep 0.2
cat >"$T/outside.yaml" <<Y
name: g
rate_hz: 1000
blocks:
  - { name: w, plugin: $P/tsrc.so, ard: { out: ext.x } }
Y
out=$("$ARDRUN" "$T/outside.yaml" 2>&1)
rc=$?
[ "$rc" = 102 ] && ok "outside: exit 102" || fail "outside: exit $rc: $out"
[[ "$out" == *"block 'w' port 'out' (out, 72 bytes, type 'u64 f64[8]'), connection 'ext.x'"*"$ext"* ]] &&
    ok "outside writer named with its pid" || fail "outside writer not named: $out"
# a reader whose type differs from the connection's as it exists outside the group
cat >"$T/outside2.yaml" <<Y
name: g
rate_hz: 1000
blocks:
  - { name: r, plugin: $TEMPLATE_SO, ard: { in: ext.x, out: c.out } }
Y
out=$("$ARDRUN" "$T/outside2.yaml" 2>&1)
rc=$?
[ "$rc" = 102 ] && [[ "$out" == *"block 'r' port 'in' (in, 56 bytes, type 'f64[7]'), connection 'ext.x'"*"72 bytes, type 'u64 f64[8]'"* ]] &&
    ok "outside type mismatch names both types" || fail "outside type mismatch: exit $rc: $out"
kill "$ext"
wait "$ext" 2>/dev/null

# an input nothing writes: a warning, an error with --strict
cat >"$T/unwritten.yaml" <<Y
name: g
rate_hz: 1000
blocks:
  - { name: r, plugin: $TEMPLATE_SO, ard: { in: c.nobody, out: c.out2 } }
Y
out=$("$ARDRUN" --ticks 3 "$T/unwritten.yaml" 2>&1)
rc=$?
[ "$rc" = 0 ] && [[ "$out" == *"warning: block 'r' port 'in' (in, 56 bytes, type 'f64[7]'): nothing writes connection 'c.nobody'"* ]] &&
    ok "unwritten input: warning" || fail "unwritten input: exit $rc: $out"
expect 102 "nothing writes connection 'c.nobody'" -- "$ARDRUN" --strict --ticks 3 "$T/unwritten.yaml"
finish
