#!/bin/bash
# Command line, YAML file and start-up errors: each misconfiguration is a clear message and a
# fixed exit code (100 usage/configuration, 111 system); a good file runs all its routes and
# SIGTERM exits 0 with the counters printed.
TEST_NAME=cli
source "$(dirname "$0")/common.sh"

# expect CODE PATTERN ARGS...: ardnet exits with CODE and stderr matches PATTERN.
expect() {
    local code=$1 pat=$2 rc=0
    shift 2
    timeout 20 "$ARDNET" "$@" >"$T/x.out" 2>"$T/x.err" || rc=$?
    [ "$rc" = "$code" ] || fail "ardnet $*: exit $rc, expected $code ($(cat "$T/x.err"))"
    grep -qE -- "$pat" "$T/x.err" || fail "ardnet $*: message '$(cat "$T/x.err")' lacks '$pat'"
}

"$ARDNET" --help >"$T/help" || fail "--help failed"
for o in --in --out --size --type --conn-id --from --every --max-rate --max-bandwidth --max-datagram --name --config --bind \
    --dev --dscp --sock-prio --prio --cpu --stats-file --ard-domain --help --version; do
    grep -q -- "$o" "$T/help" || fail "--help does not mention $o"
done
grep -q "Exit codes" "$T/help" || fail "--help does not list exit codes"
v=$("$ARDNET" --version) && [[ "$v" =~ ^ardnet\ \(ardnet\)\ [0-9]+\.[0-9]+\.[0-9]+$ ]] || fail "--version: '$v'"

expect 100 "unknown option '--bogus'" --bogus
expect 100 "no route" 
expect 100 "no input" --out udp://127.0.0.1:9
expect 100 "no output" --in x
expect 100 "--in needs a value" --in
expect 100 "connection 'nosuch' does not exist and its size is unknown" --in nosuch --out udp://127.0.0.1:9
expect 100 "unknown host 'no-such-host.invalid'" --in x --out udp://no-such-host.invalid:9
expect 100 "a port is required" --in x --out udp://127.0.0.1
expect 100 "port '99999' is not a number" --in x --out udp://127.0.0.1:99999
expect 100 "needs a host" --in x --out udp://:9
expect 100 "neither udp://HOST:PORT nor a connection name" --in 'bad name' --out x
expect 100 "only udp://" --in tcp://x:1 --out x
expect 100 "size '0' is not a number" --in x --out y --size 0
expect 100 "size '67108865' is not a number" --in x --out y --size 67108865
expect 100 "size '99999999999' is not a number 1..67108864" --in x --out y --size 99999999999
expect 100 "max-datagram '511' is not a number 512..65507" --in x --out y --max-datagram 511
expect 100 "max-datagram '65508'" --in x --out y --max-datagram 65508
expect 100 "is not a basic type" --in x --out y --size 8 --type f65
expect 100 "type 'f64' has size 8, the route says 16" --in udp://:$PORT --out udp://127.0.0.1:9 --size 16 --type f64
expect 100 "--dscp '64'" --dscp 64 --in x --out y
expect 100 "every '0'" --in x --out y --every 0
expect 100 "max-rate 'abc'" --in x --out y --max-rate abc
expect 100 "max-bandwidth '100X' is not a rate in bits a second" --in x --out y --max-bandwidth 100X
expect 100 "max-bandwidth '5k' is not a rate" --in x --out y --max-bandwidth 5k
expect 100 "max-bandwidth '' is not a rate" --in x --out y --max-bandwidth ''
expect 100 "max-bandwidth paces a route with a local input" --in udp://:7999 --out y --size 8 \
    --max-bandwidth 100M
expect 100 "from: only a udp:// input" --in x --out y --from 127.0.0.1
expect 100 "--cpu/--prio: CPU list 'x': bad CPU number" --cpu x --in udp://:$PORT --out udp://127.0.0.1:9 --size 8
expect 111 "--cpu/--prio: CPU list '1000': sched_setaffinity refused" --cpu 1000 --in udp://:$PORT --out udp://127.0.0.1:9 --size 8
expect 100 "unknown --ard option|--ard-bogus" --ard-bogus 1 --in x --out y

# A connection that exists: its size and type are used, and a contradiction is an error.
"$TBLOCK" pub --ard data=exists --size 64 --count 1 >/dev/null
expect 100 "connection 'exists' has size 64, the route says 32" --in exists --out udp://127.0.0.1:9 --size 32
expect 100 "connection 'exists' has type 'u64 u64 i64 u32\[10\]', the route says 'u8\[64\]'" \
    --in exists --out udp://127.0.0.1:9 --type 'u8[64]'

# Port in use: a system error.
bg_ready first "$ARDNET" --in "udp://127.0.0.1:$PORT" --out y --size 8
expect 111 "cannot listen on 127.0.0.1:$PORT" --in "udp://127.0.0.1:$PORT" --out z --size 8
stop first || fail "first ardnet exit $?"

# YAML errors point at file:line:column.
yaml() { cat >"$T/c.yaml"; }
yaml <<'Y'
routes:
  - in: x
    out: [y
Y
expect 100 "c.yaml:[0-9]+:[0-9]+: " --config "$T/c.yaml"
yaml <<'Y'
routes:
  - in: exists
    out: udp://127.0.0.1:9
    colour: red
Y
expect 100 "c.yaml:4:5: unknown route key 'colour'" --config "$T/c.yaml"
yaml <<'Y'
dscp: 46
routes:
  - in: exists
    out: udp://127.0.0.1:9
    every: many
Y
expect 100 "c.yaml:5:12: every 'many' is not a number" --config "$T/c.yaml"
yaml <<'Y'
routes:
  - out: udp://127.0.0.1:9
Y
expect 100 "c.yaml:2:5: the route has no input" --config "$T/c.yaml"
yaml <<'Y'
bogus: 1
Y
expect 100 "c.yaml:1:1: unknown key 'bogus'" --config "$T/c.yaml"
yaml <<'Y'
routes: 3
Y
expect 100 "c.yaml:1:9: 'routes' must be a list" --config "$T/c.yaml"
expect 100 "cannot open" --config "$T/none.yaml"

yaml <<'Y'
routes:
  - in: exists
    out: dup
  - name: again
    in: exists2
    out: dup
Y
expect 100 "connection 'dup' is written twice \(routes 'exists' and 'again'\)" --config "$T/c.yaml"
expect 100 "connection 'y' is written twice" --in exists --out y --out y
expect 100 "connection 'exists' is both input and output" --in exists --out exists

yaml <<'Y'
routes:
  - in: x
    out: y
    max-datagram: 100
Y
expect 100 "c.yaml:4:19: max-datagram '100' is not a number 512..65507" --config "$T/c.yaml"

# A good file: two routes, both counted; SIGTERM exits 0 and prints the counters.
yaml <<Y
# a bridge's sender side plus a local multiplier
dscp: 46
routes:
  - in: exists
    out: udp://127.0.0.1:$PORT
    max-datagram: 9000
  - name: copy
    in: exists2
    out: [copy1, copy2]
    every: 2
  - name: slow
    in: exists
    out: slowcopy
    max-rate: 50
Y
"$TBLOCK" pub --ard data=exists2 --size 64 --count 1 >/dev/null
bg_ready good "$ARDNET" --config "$T/c.yaml"
"$TBLOCK" pub --ard data=exists --size 64 --rate 1000 --count 200 >/dev/null &
p1=$!
"$TBLOCK" pub --ard data=exists2 --size 64 --rate 1000 --count 200 >/dev/null
wait $p1
sleep 0.3
stop good || fail "SIGTERM: exit $?"
grep -q "^route exists: received=" "$T/good.err" || fail "no counters for route exists"
grep -q "^route copy: received=" "$T/good.err" || fail "no counters for route copy"
# Two routes read one connection, each with its own state.
grep -qE "^route slow: received=[1-9]" "$T/good.err" || fail "route slow received nothing"
grep -qE "^route exists: received=[1-9]" "$T/good.err" || fail "route exists received nothing"
n=$(grep "^route copy:" "$T/good.err" | tail -1 | sed 's/.* sent=\([0-9]*\).*/\1/')
[ "$n" -ge 100 ] || fail "route copy sent only $n"
echo PASS
