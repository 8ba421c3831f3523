#!/bin/bash
# ard_graph_arm.sh - `ard graph` of the running arm example (examples/arm/master.sh on this
# host): the three connections with their types, the four blocks as processes with writer ->
# connection -> reader edges, and ardstart's hierarchy as nested clusters (arm > sim,
# arm > control). Also `ard list` of it, JSON output and svg through dot when installed.
TEST_NAME=graph
. "$(dirname "$0")/common.sh"
: "${ARDSTART:?}" "${ARDKILL:?}" "${ARM_BIN:?}"
[ -x /usr/bin/python3 ] || exit 77
mkdir -p "$T/bin"
ln -s "$ARDSTART" "$T/bin/ardstart"
ln -s "$ARDKILL" "$T/bin/ardkill"
export PATH="$T/bin:$PATH" ARD_BOOKS_DIR="$T/books" ARM_BIN
stop() { "$ARDKILL" -q -g 0.5 >/dev/null 2>&1 || true; cleanup; }
trap stop EXIT

"$SRCDIR/examples/arm/master.sh" >"$T/master.out" 2>&1 || fail "arm did not start: $(cat "$T/master.out")"
wait_for "$ARD" show arm.cmd
sleep 1 # a few packets on every connection, for the rates

"$ARD" list >"$T/list"
for c in arm.cmd arm.ref arm.state; do
    grep -qE "^$c .* [0-9]+ arm_[a-z]+ " "$T/list" || fail "list: $c has no writer: $(cat "$T/list")"
done
grep -qE '^arm.state +112 +q:f64\[7\] qd:f64\[7\] +[0-9]+ arm_plant +2 ' "$T/list" ||
    fail "list: arm.state: $(cat "$T/list")"

"$ARD" graph >"$T/g.dot" || fail "graph"
pid() { sed -n 's/^pid=//p' "$ARD_BOOKS_DIR/$ARD_DOMAIN/e/$1.entry"; } # from ardstart's books
plant=$(pid arm+sim+plant) ctrl=$(pid arm+control+ctrl) traj=$(pid arm+control+traj)
mon=$(pid arm+control+monitor)
[ -n "$plant" ] && [ -n "$ctrl" ] && [ -n "$traj" ] && [ -n "$mon" ] || fail "blocks not found"
edge() { grep -qF "\"$1\" -> \"$2\"" "$T/g.dot" || fail "no edge $1 -> $2 in: $(cat "$T/g.dot")"; }
edge "p$plant" c:arm.state
edge c:arm.state "p$ctrl"
edge c:arm.state "p$mon"
edge "p$traj" c:arm.ref
edge c:arm.ref "p$ctrl"
edge c:arm.ref "p$mon"
edge "p$ctrl" c:arm.cmd
edge c:arm.cmd "p$plant"
[ "$(grep -c -- ' -> ' "$T/g.dot")" = 8 ] || fail "expected 8 edges: $(cat "$T/g.dot")"
# Edges carry the port's name in its process (the writer's also the rate).
grep -qE "\"p$ctrl\" -> \"c:arm.cmd\" \[label=\"cmd\\\\n[0-9]+ Hz\"\]" "$T/g.dot" ||
    fail "writer edge label: $(grep "p$ctrl\" ->" "$T/g.dot")"
grep -qF "\"c:arm.cmd\" -> \"p$plant\" [label=\"cmd\"]" "$T/g.dot" || fail "reader edge label"
grep -qF '"c:arm.state" [shape=ellipse label="arm.state\nq:f64[7] qd:f64[7]\n' "$T/g.dot" ||
    fail "connection node with its type"
# Clusters nest as the scripts do: arm { sim { plant } control { traj ctrl monitor } }.
/usr/bin/python3 - "$T/g.dot" "$plant" "$ctrl" "$traj" "$mon" <<'PY' || fail "clusters: $(cat "$T/g.dot")"
import re, sys
dot, plant, ctrl, traj, mon = sys.argv[1], *sys.argv[2:]
stack, where = [], {}
for line in open(dot):
    m = re.match(r'\s*subgraph "cluster_([^"]+)"', line)
    if m:
        stack.append(m.group(1)); continue
    if line.strip() == "}" and stack:
        stack.pop(); continue
    m = re.match(r'\s*"p(\d+)" \[shape=box', line)
    if m:
        where[m.group(1)] = "/".join(stack[-1:]) if stack else ""
assert where[plant] == "arm/sim", where
for p in (ctrl, traj, mon):
    assert where[p] == "arm/control", where
PY
"$ARD" graph --json >"$T/g.json"
/usr/bin/python3 - "$T/g.json" "$plant" <<'PY' || fail "graph json: $(cat "$T/g.json")"
import json, sys
g = json.load(open(sys.argv[1]))
c = {x["name"]: x for x in g["connections"]}
assert c["arm.state"]["writer"] == int(sys.argv[2])
peers = sorted((p["dir"], p["port"]) for p in c["arm.state"]["peers"])
assert peers == [("in", "state"), ("in", "state"), ("out", "state")], peers
assert sorted(p["port"] for p in c["arm.ref"]["peers"]) == ["ref", "ref", "ref"]
assert c["arm.state"]["rate_hz"] > 100
assert any(p["entry"] == "arm/sim/plant" for p in g["processes"])
PY
# An ardnet bridge to another host: its UDP endpoint is drawn as a node of its own.
if [ -n "${ARDNET:-}" ]; then
    port=$((20000 + $$ % 20000))
    "$ARDNET" --in arm.state --out "udp://127.0.0.1:$port" >/dev/null 2>&1 &
    B=$!
    PIDS+=($B)
    bridged() { "$ARD" graph | grep -qF "\"p$B\" -> \"u:$B:udp://127.0.0.1:$port\""; }
    wait_for bridged
    "$ARD" graph >"$T/g2.dot"
    grep -qF "\"u:$B:udp://127.0.0.1:$port\" [shape=diamond label=\"udp://127.0.0.1:$port\"]" \
        "$T/g2.dot" || fail "bridge endpoint node: $(cat "$T/g2.dot")"
    edge2() { grep -qF "\"$1\" -> \"$2\"" "$T/g2.dot" || fail "no edge $1 -> $2"; }
    edge2 c:arm.state "p$B"
fi
if command -v dot >/dev/null; then
    "$ARD" graph --format svg >"$T/g.svg" || fail "svg"
    grep -q '<svg' "$T/g.svg" || fail "no svg"
    grep -q 'arm.state' "$T/g.svg" || fail "svg lacks arm.state"
fi
echo ok
