#!/usr/bin/env bash
# The names a recording gives connections (docs/ros2.md#names): topic "/s/pose" for s.pose with
# the ardnet name in the channel metadata, schema name the ROS 2 type ardnet_msgs/msg/SPose;
# "s.pose", "s_pose" and "sPose" all have the CamelCase SPose: the first keeps it, the others
# (other layouts) get SPoseH<8 hex digits of their layout hash>, reported naming both, and the
# names stay the same from one run to the next; `ard info` and `ard play` show and replay the
# ardnet names; files written with the older names (topic = name; schema
# ardnet/msg/<Name>_<hash>) still read, show, export and play.
TEST_NAME=names
source "$(dirname "$0")/common.sh"
CORPUS="$(dirname "$0")/corpus"

# record_run N: record the three colliding names and two names of one layout into $T/N.mcap.
record_run() {
    local n=$1 c
    "$ARD" record s.pose s_pose sPose a.b a_b -o "$T/$n.mcap" 2>"$T/$n.err" &
    local rec=$!
    PIDS+=($rec)
    wait_for grep -q "matches 'a_b' (yet)" "$T/$n.err"
    "$ARD" pub s.pose --type "x:f64 y:f64" x=1.5 y=-2 -n 3 -r 100 >/dev/null
    "$ARD" pub s_pose --type "a:i32" a=7 -n 3 -r 100 >/dev/null
    "$ARD" pub sPose --type "q:f32[3]" q[0]=1 q[1]=2 q[2]=3 -n 3 -r 100 >/dev/null
    "$ARD" pub a.b --type "v:u16" v=9 -n 3 -r 100 >/dev/null
    "$ARD" pub a_b --type "v:u16" v=10 -n 3 -r 100 >/dev/null
    for c in s.pose s_pose sPose a.b a_b; do
        wait_for awk -v c="$c" '$1 == c && $3 >= 3 { ok = 1 } END { exit !ok }' <("$ARD" list)
    done
    sleep 0.3
    kill -INT $rec
    wait $rec || fail "ard record exited $?: $(cat "$T/$n.err")"
    PIDS=()
    rm -f /dev/shm/ard."$ARD_DOMAIN".*
}

# field FILE CONN KEY: a field of a connection in `ard info --json`.
field() {
    "$ARD" info --json "$1" | python3 -c '
import json, sys
for c in json.load(sys.stdin)["connections"]:
    if c["name"] == sys.argv[1]:
        print(c[sys.argv[2]])' "$2" "$3"
}

record_run one
record_run two
for c in s.pose s_pose sPose a.b a_b; do
    want="/${c//./\/}"
    [ "$(field "$T/one.mcap" "$c" topic)" = "$want" ] ||
        fail "$c: topic '$(field "$T/one.mcap" "$c" topic)', expected '$want'"
    [ "$(field "$T/one.mcap" "$c" messages)" = 3 ] || fail "$c: not 3 messages under its ardnet name"
    [ "$(field "$T/one.mcap" "$c" schema_name)" = "$(field "$T/two.mcap" "$c" schema_name)" ] ||
        fail "$c: schema name changed from one run to the next"
done
s1=$(field "$T/one.mcap" s.pose schema_name)
s2=$(field "$T/one.mcap" s_pose schema_name)
s3=$(field "$T/one.mcap" sPose schema_name)
echo "schema names: $s1 $s2 $s3"
[ "$s1" = ardnet_msgs/msg/SPose ] || fail "s.pose (met first): schema name '$s1'"
case $s2 in ardnet_msgs/msg/SPoseH[0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f]) ;;
*) fail "s_pose: schema name '$s2'" ;; esac
[ "$s1" != "$s2" ] && [ "$s2" != "$s3" ] && [ "$s1" != "$s3" ] ||
    fail "colliding schema names: $s1 $s2 $s3"
for c in s_pose sPose; do
    grep -q "connections 's.pose' and '$c' both have the ROS 2 message name SPose" "$T/one.err" ||
        fail "the clash of s.pose and $c was not reported: $(cat "$T/one.err")"
done
grep -q "'a.b' and 'a_b'" "$T/one.err" && fail "a.b and a_b (one layout) reported as a clash"
[ "$(field "$T/one.mcap" a.b schema_name)" = ardnet_msgs/msg/AB ] &&
    [ "$(field "$T/one.mcap" a_b schema_name)" = ardnet_msgs/msg/AB ] ||
    fail "a.b and a_b (one layout, one definition): $(field "$T/one.mcap" a_b schema_name)"
# The text listing names the ardnet names.
"$ARD" info "$T/one.mcap" | grep -q '^s\.pose ' || fail "ard info does not list s.pose"

# Replay: the connections come back under their ardnet names, with their types and values.
export ARD_DOMAIN="${ARD_DOMAIN}_p"
"$ARD" play -q "$T/one.mcap" || fail "ard play exited $?"
"$ARD" list >"$T/list"
for c in s.pose s_pose sPose a.b a_b; do
    grep -q "^$c " "$T/list" || fail "ard play did not create $c: $(cat "$T/list")"
done
"$ARD" show s.pose -n 1 | grep -q "x.*1.5" || fail "s.pose replayed without x=1.5: $("$ARD" show s.pose -n 1)"
[ -e "/dev/shm/ard.$ARD_DOMAIN./s/pose" ] && fail "a topic became a connection name"
rm -f /dev/shm/ard."$ARD_DOMAIN".*

# A file written before the mapping: topic = ardnet name, no ardnet.name.
[ "$(field "$CORPUS/small.mcap" a topic)" = a ] || fail "old file: topic of a"
"$ARD" play -q "$CORPUS/small.mcap" || fail "ard play of an old file exited $?"
"$ARD" list | grep -q "^a " || fail "old file: connection a not replayed"
rm -f /dev/shm/ard."$ARD_DOMAIN".*

# A file written by ard record with the schema names ardnet/msg/<Name>_<hash> (made by the
# recorder of that time, tests/log/corpus/old_names.mcap): read, shown, exported, replayed.
OLD=$CORPUS/old_names.mcap
[ "$(field "$OLD" arm.state schema_name)" = ardnet/msg/ArmState_376fac9494ba ] ||
    fail "old names: schema of arm.state '$(field "$OLD" arm.state schema_name)'"
[ "$(field "$OLD" s_pose topic)" = /s_pose ] && [ "$(field "$OLD" s_pose messages)" = 3 ] ||
    fail "old names: s_pose not read"
"$ARD" info "$OLD" | grep -q '^arm\.state ' || fail "old names: ard info does not list arm.state"
"$ARD" export "$OLD" --csv --field arm.state:q -o "$T/old.csv" || fail "old names: ard export exited $?"
grep -q '1.25' "$T/old.csv" || fail "old names: exported CSV lacks q[0]=1.25: $(head -3 "$T/old.csv")"
"$ARD" play -q "$OLD" || fail "old names: ard play exited $?"
"$ARD" show s.pose -n 1 | grep -q "x.*1.5" || fail "old names: s.pose replayed without x=1.5"
"$ARD" show arm.state -n 1 | grep -q "1.25" || fail "old names: arm.state replayed without q[0]=1.25"
rm -f /dev/shm/ard."$ARD_DOMAIN".*
echo "ok: topics, colliding schema names kept apart and reported, stable names, replay of new and old files"
