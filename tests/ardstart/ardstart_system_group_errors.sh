#!/bin/bash
# ardstart --system: bad block plugins and groups are refused before anything starts, with
# the file, the line and the cause (exit 100); values cannot break out of the generated
# group file; a group whose blocks are listed in two subsystems of one host starts once.
TEST_NAME=sysgrperr
source "$(dirname "$0")/common.sh"
local_books

bad() { # expected-message yaml
    printf '%s\n' "$2" >"$T/bad.yaml"
    set +e
    err=$("$ARDSTART" --system "$T/bad.yaml" 2>&1)
    rc=$?
    set -e
    [ "$rc" = 100 ] || fail "exit $rc for: $2 -- $err"
    grep -qF -- "$1" <<<"$err" || fail "expected '$1', got: $err"
    echo "  $err"
}
G=$'name: s\ngroups:\n  - {name: g, rate_hz: 1000}\nsubsystems:\n  - name: a\n    blocks:\n'

echo "== blocks"
bad "bad.yaml:7: unknown group 'h' (groups: g)" "$G"$'      - {name: x, plugin: p.so, group: h}'
bad "bad.yaml:3: unknown group 'h' (groups: none)" $'name: s\nsubsystems:\n  - {name: a, blocks: [{name: x, plugin: p.so, group: h}]}'
bad "bad.yaml:7: block 'x': 'group' is for a block plugin: give 'plugin' instead of 'cmd'" "$G"$'      - {name: x, cmd: tblock, group: g}'
bad "bad.yaml:7: a block needs 'name' and 'cmd' (a command) or 'plugin'" "$G"$'      - {name: x, group: g}'
bad "bad.yaml:7: block 'x': give 'cmd' (a command) or 'plugin' (a block plugin), not both" "$G"$'      - {name: x, cmd: tblock, plugin: p.so}'
bad "bad.yaml:7: block 'x': 'params' is for a block plugin" "$G"$'      - {name: x, cmd: tblock, params: {k: 1}}'
bad "bad.yaml:7: block 'x': group 'g' has no rate 'fast'" "$G"$'      - {name: x, plugin: p.so, group: g, rate: fast}'
bad "bad.yaml:7: block 'x' runs in group 'g' at one of its rates: give 'rate' (a rate of the group), not 'rate_hz'" "$G"$'      - {name: x, plugin: p.so, group: g, rate_hz: 10}'
bad "bad.yaml:7: block 'x': a plugin block of its own (no 'group') needs 'rate_hz: HZ' or 'trigger: PORT'" "$G"$'      - {name: x, plugin: p.so}'
bad "bad.yaml:7: block 'x': a plugin block of its own (no 'group') needs 'rate_hz' or 'trigger', not both" "$G"$'      - {name: x, plugin: p.so, rate_hz: 10, trigger: in}'
bad "bad.yaml:7: block 'x': 'rate' names a rate of a group, and the block has no 'group'" "$G"$'      - {name: x, plugin: p.so, rate: servo}'
bad "bad.yaml:7: rate_hz: expected a rate in Hz, 0.001..100000, got '0'" "$G"$'      - {name: x, plugin: p.so, rate_hz: 0}'
bad "bad.yaml:7: block plugin instance 'x.y': ardrun needs a name of [A-Za-z0-9_-]" "$G"$'      - {name: x.y, plugin: p.so, group: g}'
bad "bad.yaml:7: params: expected a mapping" "$G"$'      - {name: x, plugin: p.so, group: g, params: [1]}'
bad "bad.yaml:7: k: expected a plain value" "$G"$'      - {name: x, plugin: p.so, group: g, params: {k: [1]}}'
bad "bad.yaml:7: plugin: expected the file name of a block plugin" "$G"$'      - {name: x, plugin: "", group: g}'
bad "bad.yaml:7: unknown key 'grup' in a block (name, cmd, in, out) or a plugin block" "$G"$'      - {name: x, plugin: p.so, grup: g}'

echo "== groups"
bad "bad.yaml:3: group 'g' has no blocks (a block joins it with 'group: g')" $'name: s\ngroups:\n  - {name: g, rate_hz: 1000}\nsubsystems: []'
bad "bad.yaml:3: a group needs 'name' and 'rate_hz'" $'name: s\ngroups:\n  - {name: g}\nsubsystems: []'
bad "bad.yaml:4: group 'g' named twice" $'name: s\ngroups:\n  - {name: g, rate_hz: 1}\n  - {name: g, rate_hz: 2}\nsubsystems: []'
bad "bad.yaml:2: 'groups' must be a list" $'name: s\ngroups: {g: 1}\nsubsystems: []'
bad "bad.yaml:3: group 'g.h': ardrun needs a name of [A-Za-z0-9_-], at most 31 characters" $'name: s\ngroups:\n  - {name: g.h, rate_hz: 1}\nsubsystems: []'
bad "bad.yaml:3: rate_hz: expected a rate in Hz, 0.001..100000, got '1e6'" $'name: s\ngroups:\n  - {name: g, rate_hz: 1e6}\nsubsystems: []'
bad "bad.yaml:3: prio: expected an integer 0..99, got '100'" $'name: s\ngroups:\n  - {name: g, rate_hz: 1, prio: 100}\nsubsystems: []'
bad "bad.yaml:3: lock: expected true or false, got 'maybe'" $'name: s\ngroups:\n  - {name: g, rate_hz: 1, lock: maybe}\nsubsystems: []'
bad "bad.yaml:3: unknown key 'rate' in a group (name, host, rate_hz, prio, cpu, rates, lock, strict)" $'name: s\ngroups:\n  - {name: g, rate: 1}\nsubsystems: []'
bad "bad.yaml:3: group 'g': with 'rates', give 'prio' and 'cpu' per rate" $'name: s\ngroups:\n  - {name: g, rate_hz: 1, prio: 3, rates: [{name: r}]}\nsubsystems: []'
bad "bad.yaml:3: divide: expected an integer 1..1000000, got '0'" $'name: s\ngroups:\n  - {name: g, rate_hz: 1, rates: [{name: r, divide: 0}]}\nsubsystems: []'
bad "bad.yaml:3: rate 'r' named twice" $'name: s\ngroups:\n  - {name: g, rate_hz: 1, rates: [{name: r}, {name: r}]}\nsubsystems: []'
bad "bad.yaml:3: a rate needs a 'name'" $'name: s\ngroups:\n  - {name: g, rate_hz: 1, rates: [{divide: 2}]}\nsubsystems: []'
bad "bad.yaml:3: rates: expected a list of rates" $'name: s\ngroups:\n  - {name: g, rate_hz: 1, rates: []}\nsubsystems: []'
bad "bad.yaml:3: unknown key 'div' in a rate (name, divide, prio, cpu)" $'name: s\ngroups:\n  - {name: g, rate_hz: 1, rates: [{name: r, div: 2}]}\nsubsystems: []'
# ardrun's own limits (a CPU list ardrun would refuse is refused here, before the start).
cpus=$(printf '0,%.0s' $(seq 32))0
bad "bad.yaml:3: cpu: a CPU list of at most 63 characters" $'name: s\ngroups:\n  - {name: g, rate_hz: 1, cpu: "'"$cpus"$'"}\nsubsystems: []'
bad "bad.yaml:3: cpu: a CPU list of at most 63 characters" $'name: s\ngroups:\n  - {name: g, rate_hz: 1, rates: [{name: r, cpu: "'"$cpus"$'"}]}\nsubsystems: []'

echo "== a group is one process on one host, with a name of its own"
two=$'name: s\nlocal_host: here\nhosts: {far: rt9}\ngroups:\n  - {name: g, rate_hz: 100}\nsubsystems:\n  - name: a\n    blocks:\n      - {name: x, plugin: p.so, group: g}\n  - name: b\n    host: far\n    blocks:\n      - {name: y, plugin: p.so, group: g}'
bad "bad.yaml:13: group 'g' on two hosts: block 'x' (subsystem 'a') is on host 'here', block 'y' (subsystem 'b') on host 'rt9'" "$two"
# --set-host maps both roles to one host: then it is one group on one host.
printf '%s\n' "$two" >"$T/two.yaml"
"$ARDSTART" --system "$T/two.yaml" --dry-run --set-host far= >/dev/null ||
    fail "a group on one host after --set-host is refused"
bad "bad.yaml:8: group 'g' is on host 'rt9' (its 'host'), but block 'x' is in subsystem 'a' on host 'here'" \
    $'name: s\nlocal_host: here\ngroups:\n  - {name: g, rate_hz: 100, host: rt9}\nsubsystems:\n  - name: a\n    blocks:\n      - {name: x, plugin: p.so, group: g}'
bad "bad.yaml:8: block 'x' named twice in group 'g'" \
    $'name: s\ngroups:\n  - {name: g, rate_hz: 100}\nsubsystems:\n  - name: a\n    blocks: [{name: x, plugin: p.so, group: g}]\n  - name: b\n    blocks: [{name: x, plugin: p.so, group: g}]'
bad "bad.yaml:8: block 'g' has the name of group 'g', which runs in subsystem 'a' too" \
    "$G"$'      - {name: x, plugin: p.so, group: g}\n      - {name: g, cmd: tblock}'
[ -z "$("$ARDSTART" --list --raw)" ] || fail "a bad description started something"

echo "== a group listed in two subsystems of one host starts once, where its first block is"
cat >"$T/span.yaml" <<'EOF'
name: s
groups:
  - name: g
    rate_hz: 100
    host: ""
subsystems:
  - name: a
    blocks:
      - { name: x, plugin: p.so, group: g, out: { out: c } }
  - name: b
    blocks:
      - { name: y, plugin: p.so, group: g, in: { in: c } }
      - { name: z, plugin: sub/q.so, trigger: in, params: { k: 2 } }
EOF
out=$("$ARDSTART" --system "$T/span.yaml" --dry-run) || fail "span.yaml refused"
[ "$(grep -c -- '-n g -- ' <<<"$out")" = 1 ] || fail "group g not started exactly once: $out"
grep -q -- "-n g -- " <<<"$(sed -n '/subsystem a /,/subsystem b /p' <<<"$out")" ||
    fail "group g not started in subsystem a: $out"
# a relative plugin path is taken from the description's directory
grep -qF -- "-n z -- ardrun --block $T/sub/q.so --name z --param k=2 --trigger in" <<<"$out" ||
    fail "z's command: $out"

echo "== a connection from a group to another host gets its bridge pair, the sender after the group"
cat >"$T/br.yaml" <<'EOF'
name: s
local_host: here
hosts: { far: rt9 }
connections: { c: "f64[7]" }
groups:
  - { name: g, rate_hz: 100 }
subsystems:
  - name: a
    blocks:
      - { name: x, plugin: p.so, group: g, out: { out: c } }
      - { name: w, cmd: tblock }
  - name: b
    host: far
    blocks:
      - { name: y, cmd: tblock, in: { in: c } }
EOF
out=$("$ARDSTART" --system "$T/br.yaml" --dry-run | grep -o -- '-n [a-z_0-9]* -- [a-z]*' | tr '\n' ' ') ||
    fail "br.yaml refused"
[ "$out" = "-n a -- bash -n g -- bash -n to_rt9 -- ardnet -n w -- tblock -n b -- bash -n from_here -- ardnet -n y -- tblock " ] ||
    fail "entries and bridges: $out"

echo "== values cannot end the group file or reach the shell"
cat >"$T/inject.yaml" <<EOF
name: s
groups:
  - { name: g, rate_hz: 100, rates: [ { name: r, cpu: "1'\$(touch pwned1)" } ] }
subsystems:
  - name: a
    blocks:
      - name: x
        plugin: "p'\$(touch pwned2).so"
        group: g
        params: { k: "a\nARDRUN_GROUP\ntouch $T/pwned3\n\"'\\\\" }
EOF
mkdir -p "$T/fake" "$T/out" "$T/out2"
cat >"$T/fake/ardstart" <<'EOF'
#!/bin/bash
while [ $# -gt 0 ] && [ "$1" != -- ]; do [ "$1" = --ready ] && exit 0; shift; done
shift
if [ "$1" = bash ]; then "$@"; fi
EOF
printf '#!/bin/bash\nexec cat /dev/stdin >"$OUT/group.yaml"\n' >"$T/fake/ardrun"
printf '#!/bin/sh\nexit 0\n' >"$T/fake/sleep"
chmod +x "$T/fake/"*
"$ARDSTART" --system "$T/inject.yaml" --dry-run >"$T/master.sh" || fail "inject.yaml refused"
(cd "$T" && OUT="$T/out" TMPDIR="$T" PATH="$T/fake:$PATH" bash -c "$(cat "$T/master.sh")" s) ||
    fail "generated script failed"
# The description's file name is written into comments of the scripts and the group file.
nl="$T/"$'x\ntouch pwned4\nARDRUN_GROUP\ntouch pwned5\n.yaml'
cp "$T/inject.yaml" "$nl"
"$ARDSTART" --system "$nl" --dry-run >"$T/master2.sh" || fail "a file name with line breaks refused"
(cd "$T" && OUT="$T/out2" TMPDIR="$T" PATH="$T/fake:$PATH" bash -c "$(cat "$T/master2.sh")" s) ||
    fail "generated script failed"
for i in 1 2 3 4 5; do [ ! -e "$T/pwned$i" ] || fail "a value ran as a command ($i)"; done
cmp -s "$T/out/group.yaml" <(sed 's/x?touch pwned4?ARDRUN_GROUP?touch pwned5?.yaml/inject.yaml/' "$T/out2/group.yaml") ||
    fail "the group file differs: $(diff "$T/out/group.yaml" "$T/out2/group.yaml")"
/usr/bin/python3 - "$T/out/group.yaml" "$T" <<'EOF' || fail "group file: $(cat "$T/out/group.yaml")"
import sys, yaml
g = yaml.safe_load(open(sys.argv[1]))
t = sys.argv[2]
b = g["blocks"][0]
assert b["params"]["k"] == "a\nARDRUN_GROUP\ntouch %s/pwned3\n\"'\\" % t, repr(b["params"])
assert b["plugin"] == "p'$(touch pwned2).so", b["plugin"]
assert g["rates"][0]["cpu"] == "1'$(touch pwned1)", g["rates"]
print("ok: values arrive unchanged")
EOF
echo "PASS"
