#!/usr/bin/env bash
# Independent proof of the file format: files written by `ard record` are read by the MCAP
# library and the ROS 2 CDR decoder of the npm registry (mcap_check.js), which check channel
# names, schemas, counts, both timestamps and every decoded value against what the writers
# (tlogw.c: every basic type, arrays, an opaque connection) sent: an uncompressed file, a
# zstd file and a file cut short by SIGKILL. Skipped (77) when the npm packages cannot be
# installed, except under CI=true, where that is a failure.
TEST_NAME=npm
source "$(dirname "$0")/common.sh"
: "${TLOGW:?set TLOGW}"
NPM_DIR=${ARD_NPM_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/ardnet-mcap-check}
CHECK="$(dirname "$0")/mcap_check.js"

skip() {
    if [ "${CI:-}" = true ]; then fail "$* (CI=true: the format proof must run)"; fi
    echo "SKIP: $*" >&2
    exit 77
}
command -v node >/dev/null || skip "node is not installed"
if ! node -e "for (const m of ['@mcap/core','@foxglove/rosmsg','@foxglove/rosmsg2-serialization','fzstd']) require('$NPM_DIR/node_modules/' + m)" 2>/dev/null; then
    command -v npm >/dev/null || skip "npm is not installed"
    source "$(dirname "$0")/../lib/npm.sh"
    st=0
    npm_install "$NPM_DIR" "$T/npm.log" @mcap/core@2 @foxglove/rosmsg@5 \
        @foxglove/rosmsg2-serialization@3 fzstd@0 || st=$?
    [ "$st" = 0 ] || skip "npm packages could not be installed into $NPM_DIR: $(npm_error "$T/npm.log" "$st")"
fi

# run_case NAME [record options...]: record all<NAME> and opaque<NAME> from their start to
# their end, then check the file. The writers start after the recorder (picked up live).
run_case() {
    local name=$1
    shift
    "$ARD" record "all$name" "opaque$name" -o "$T/$name.mcap" "$@" 2>"$T/$name.err" &
    local rec=$!
    # its first look found neither: both are taken from their first packet on
    wait_for grep -q "matches 'opaque$name' (yet)" "$T/$name.err"
    "$TLOGW" all "all$name" 1000 1500 >"$T/w1" &
    PIDS+=($!)
    "$TLOGW" opaque "opaque$name" 500 600 >"$T/w2" &
    PIDS+=($!)
    wait_for grep -q sent "$T/w1"
    wait_for grep -q sent "$T/w2"
    sleep 0.3
    kill -INT $rec
    wait $rec || fail "ard record $* exited $?: $(cat "$T/$name.err")"
    node "$CHECK" "$NPM_DIR" "$T/$name.mcap" complete >"$T/$name.json" ||
        fail "$name: the independent reader refused the file"
    local c
    for c in "all$name" "opaque$name"; do
        local got rec_n
        got=$(node -e "const j=require('$T/$name.json').channels['$c']; console.log(j.count, j.firstSeq, j.lastSeq, j.messageEncoding, j.schemaEncoding)")
        rec_n=$(recorded "$c" "$T/$name.err")
        set -- $got
        [ "$1" = "$rec_n" ] || fail "$c: file holds $1 messages, the recorder says $rec_n"
        # A busy host may delay the recorder past a ring: gaps only as many as it counted.
        # missed counts the gaps and the packets before the first one taken (a recorder behind
        # on a busy host): the sequence runs from 1
        local lost
        lost=$(missed "$c" "$T/$name.err")
        [ "$1" = $(($3 - lost)) ] ||
            fail "$c: $1 messages for sequence $2..$3 with $lost counted missed"
        [ "$4 $5" = "cdr ros2msg" ] || fail "$c: encodings '$4 $5'"
    done
    [ "$(node -e "console.log(require('$T/$name.json').channels['all$name'].lastSeq)")" = 1500 ] ||
        fail "$name: the last packet of all$name is not in the file"
    grep -q '^float64\[3\] arr$' <(node -e "console.log(require('$T/$name.json').channels['all$name'].schema)") ||
        fail "$name: schema lacks 'float64[3] arr'"
    # Every key rosbag2's QoS reader takes (rosbag2_storage qos.cpp), with its integer values.
    local qos k
    qos=$(node -e "console.log(require('$T/$name.json').channels['all$name'].qos)")
    for k in "history: 1" "depth: 1" "reliability: 2" "durability: 2" deadline: lifespan: \
        "liveliness: 1" liveliness_lease_duration: "avoid_ros_namespace_conventions: false"; do
        grep -q "^[- ] $k" <<<"$qos" || fail "$name: offered_qos_profiles lacks '$k': $qos"
    done
    kill -9 "${PIDS[@]}" 2>/dev/null || true
    wait "${PIDS[@]}" 2>/dev/null || true
    PIDS=()
    rm -f /dev/shm/ard."$ARD_DOMAIN".*
}

run_case plain
run_case zstd --compress zstd
"$ARD" info "$T/zstd.mcap" | grep -q "compression zstd" || fail "ard info: not zstd"

# Killed recorder: small chunks, kill -9 after the writers are done and a flush happened.
"$ARD" record allcut opaquecut -o "$T/cut.mcap" --chunk-size 8 2>"$T/cut.err" &
rec=$!
wait_for grep -q "matches 'opaquecut' (yet)" "$T/cut.err"
"$TLOGW" all allcut 1000 1500 >"$T/w1" &
PIDS+=($!)
"$TLOGW" opaque opaquecut 500 600 >"$T/w2" &
PIDS+=($!)
wait_for grep -q sent "$T/w1"
wait_for grep -q sent "$T/w2"
sleep 1.5
kill -9 $rec
wait $rec 2>/dev/null || true
# Cut the last record in half too, as a kill in the middle of a write would.
size=$(stat -c %s "$T/cut.mcap")
truncate -s $((size - 100)) "$T/cut.mcap"
node "$CHECK" "$NPM_DIR" "$T/cut.mcap" cut >"$T/cut.json" || fail "cut: refused by the independent reader"
n=$(node -e "console.log(require('$T/cut.json').channels.allcut.count)")
[ "$n" -gt 500 ] || fail "cut: only $n messages readable"
"$ARD" info "$T/cut.mcap" >"$T/info" 2>"$T/info.err" || fail "ard info refused the cut file: $(cat "$T/info.err")"
grep -q "cut short" "$T/info.err" || fail "ard info: no warning for the cut file"
ours=$(awk '$1 == "allcut" { print $3 }' "$T/info")
[ "$ours" = "$n" ] || fail "cut: ard info reads $ours messages of allcut, the npm reader $n"
echo "ok: plain, zstd and cut files read by @mcap/core + @foxglove/rosmsg2-serialization"
